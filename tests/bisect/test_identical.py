"""What bisect and history may skip as identical (docs/cli.md, "Bisect"): nothing a run can
read from the worktree after the build may differ. One generated history per kind of
file a run reads besides its program (tests/bisectrepo.py, ``make_kind_history``): a
Python script's imported module, a data file, a shared library built in the tree. Commit
1 doubles the work through that file alone, with the program file byte-identical, and
commit 2 is empty. In the fast tier the runs are planted (``PlantedKind`` on a fake
clock); in the slow tier the programs are built and measured."""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchbot import cli
from benchbot.bisect import search
from benchbot.history import historydoc
from benchbot.measure import engine
from benchbot.sandbox import bwrap
from tests.bisectrepo import PlantedKind, make_kind_history
from tests.clock import FakeClock
from tests.conftest import git

READS = ["module", "data", "library"]


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """bisect and history record as the CLI runs them, with ``PlantedKind`` for the runs
    on a fake clock (``state["kind"]`` says which); ``calls`` lists the comparisons."""
    from benchbot.history import walk

    clock = FakeClock()
    state: dict[str, Any] = {"calls": [], "kind": None}
    real_record, real_bisect, real_compare = walk.record, search.bisect, engine.compare_built

    def spawner(_: Path) -> PlantedKind:
        if "spawner" not in state:
            state["spawner"] = PlantedKind(clock, state["kind"])
        return state["spawner"]

    def record(request: Any, **kwargs: Any) -> Any:
        return real_record(request, **kwargs, clock=clock, spawner_factory=spawner)

    def run_bisect(request: Any, **kwargs: Any) -> Any:
        return real_bisect(request, **kwargs, clock=clock)

    def compare_built(where: Any, config: Any, base: Any, head: Any, **kwargs: Any) -> Any:
        state["calls"].append((base.sha, head.sha))
        return real_compare(where, config, base, head, **kwargs)

    monkeypatch.setattr(walk, "record", record)
    monkeypatch.setattr(search, "bisect", run_bisect)
    monkeypatch.setattr(search, "RepoLab", functools.partial(search.RepoLab,
                                                             spawner_factory=spawner))
    monkeypatch.setattr(engine, "compare_built", compare_built)
    yield state


def _shas(repo: Path) -> list[str]:
    return git(repo, "log", "--first-parent", "--reverse", "--format=%H").splitlines()


def _record(repo: Path, store: Path, *extra: str) -> tuple[int, dict[str, historydoc.CommitRecord], str]:
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(["history", "record", "--repo", str(repo), "--range", "good..HEAD",
                       "--store", str(store), "--seed", "3", "--quiet", *extra], out=out, err=err)
    read = historydoc.Store(store).read()
    assert read.problems == ()
    return status, read.records, err.getvalue()


def _bisect(repo: Path, tmp_path: Path) -> tuple[int, dict[str, Any], str]:
    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "bisect.json"
    status = cli.main(["bisect", "--repo", str(repo), "--good", "good", "--bad", "HEAD",
                       "--only", "work", "--json", str(path), "--seed", "5", "--quiet"],
                      out=out, err=err)
    return status, json.loads(path.read_text()) if path.exists() else {}, out.getvalue() + err.getvalue()


def _no_worktrees_left(repo: Path) -> None:
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def _check_history(repo: Path, store: Path, records: dict[str, historydoc.CommitRecord]) -> None:
    shas = _shas(repo)
    assert sorted(records) == sorted(shas[1:])
    assert records[shas[1]].state == "measured", records[shas[1]]
    assert records[shas[1]].workloads[0].outcome == "slower"
    assert records[shas[2]].state == "identical"  # an empty commit: nothing can differ
    _no_worktrees_left(repo)


def _check_bisect(repo: Path, data: dict[str, Any], said: str) -> None:
    shas = _shas(repo)
    assert data["answer"]["kind"] == "culprits", said
    assert [c["sha"] for c in data["answer"]["culprits"]] == [shas[1]], said
    hashes = [c["output_hash"] for c in data["commits"]]
    assert hashes[0] != hashes[1] and hashes[1] == hashes[2]
    assert [(s["left"], s["right"]) for s in data["steps"] if not s["measured"]] == [
        (shas[1], shas[2])]
    _no_worktrees_left(repo)


# --- fast: planted runs ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", READS)
def test_history_measures_a_commit_that_changes_only_what_the_program_reads(
        tmp_path: Path, planted: dict[str, Any], kind: str) -> None:
    planted["kind"] = kind
    repo = make_kind_history(tmp_path / "repo", kind, sandbox="off")
    status, records, err = _record(repo, tmp_path / "store")
    assert status == 0, err
    _check_history(repo, tmp_path / "store", records)
    assert [head for _, head in planted["calls"]] == [_shas(repo)[1]]


@pytest.mark.parametrize("kind", READS)
def test_bisect_names_a_commit_that_changes_only_what_the_program_reads(
        tmp_path: Path, planted: dict[str, Any], kind: str) -> None:
    planted["kind"] = kind
    repo = make_kind_history(tmp_path / "repo", kind, sandbox="off")
    status, data, said = _bisect(repo, tmp_path)
    assert status == 0, said
    _check_bisect(repo, data, said)


# --- a comment-only change to a C file: skipped only where no run can read the file ---------

BUILD_ONLY = "{mode: on, build_only: ['*.c', '*.h']}"
needs_bwrap = pytest.mark.skipif(
    not bwrap.probe().works,
    reason=f"bubblewrap cannot make a sandbox here: {bwrap.probe().problem} "
    "(.ci/run installs the bubblewrap package)")


@needs_bwrap
def test_a_comment_only_change_to_a_build_only_c_file_is_identical(
        tmp_path: Path, planted: dict[str, Any]) -> None:
    """Its program is byte-identical and bubblewrap keeps every run from opening the C
    file (tests/security/test_build_only.py): nothing a run can read differs."""
    planted["kind"] = "comment"
    repo = make_kind_history(tmp_path / "repo", "comment", sandbox=BUILD_ONLY)
    status, records, err = _record(repo, tmp_path / "store")
    assert status == 0, err
    assert [records[s].state for s in _shas(repo)[1:]] == ["identical", "identical"]
    status, data, said = _bisect(repo, tmp_path)
    assert status == 0 and data["answer"]["kind"] == "no_change", said
    assert "identical build output" in data["answer"]["sentence"]
    assert [s["measured"] for s in data["steps"]] == [False]
    assert planted["calls"] == []
    _no_worktrees_left(repo)


@pytest.mark.parametrize("how", [pytest.param("on", marks=needs_bwrap),
                                 "{mode: off, build_only: ['*.c']}"])
def test_a_comment_only_change_is_measured_where_a_run_could_read_the_file(
        tmp_path: Path, planted: dict[str, Any], how: str) -> None:
    """The same commit without ``build_only``, or without the sandbox that enforces it."""
    planted["kind"] = "comment"
    repo = make_kind_history(tmp_path / "repo", "comment", sandbox=how)
    status, records, err = _record(repo, tmp_path / "store")
    assert status == 0, err
    shas = _shas(repo)
    assert records[shas[1]].state == "measured" and records[shas[2]].state == "identical"
    assert records[shas[1]].workloads[0].outcome == "level"
    assert [head for _, head in planted["calls"]] == [shas[1]]


# --- slow: built and measured ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "how"), [
    *((kind, None) for kind in READS),
    # The library's sources hidden from the runs: the library built from them still counts.
    pytest.param("library", BUILD_ONLY, marks=needs_bwrap, id="library-build-only")])
def test_a_real_change_through_what_the_program_reads_is_recorded_and_named(
        tmp_path: Path, kind: str, how: str | None) -> None:
    repo = make_kind_history(tmp_path / "repo", kind, sandbox=how)
    status, data, said = _bisect(repo, tmp_path)
    assert status == 0, said
    _check_bisect(repo, data, said)
    # The step is measured on only to ±5%, not the trend's ±0.5%: what matters here is that
    # it is measured at all, and a doubling is far outside either.
    status, records, err = _record(repo, tmp_path / "store", "--precision", "0.05")
    assert status == 0, err
    _check_history(repo, tmp_path / "store", records)
