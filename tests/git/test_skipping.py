"""Which workloads a change cannot affect, from their ``paths:`` (benchbot.git.skipping; the
globs themselves are tests/core/test_globs.py's)."""

from __future__ import annotations

from benchbot.config.config import WorkloadConfig
from benchbot.core.model import Skipped
from benchbot.git.skipping import unaffected


def _w(name: str, paths: tuple[str, ...] | None) -> WorkloadConfig:
    return WorkloadConfig(name=name, run=("true",), paths=paths)


def test_unaffected_lists_the_workloads_whose_paths_the_change_misses() -> None:
    workloads = [_w("a", ("src/a/**",)), _w("b", ("src/b/**", "Makefile")), _w("c", None),
                 _w("d", ("*.md",))]
    assert unaffected(workloads, ["src/b/x.c"]) == (
        Skipped(name="a", why="not affected", paths=("src/a/**",)),
        Skipped(name="d", why="not affected", paths=("*.md",)))
    assert unaffected(workloads, ["sub/Makefile", "README.md", "src/a/y.c"]) == ()


def test_a_workload_without_paths_is_never_skipped_even_by_an_empty_change() -> None:
    assert unaffected([_w("c", None)], []) == ()
    assert [s.name for s in unaffected([_w("c", None), _w("a", ("a/**",))], [])] == ["a"]
