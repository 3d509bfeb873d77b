"""Base again runs from a place of its own (docs/verdict.md, "Placement"): a copy of base's
built tree, on its own inodes, at a path as long as head's, in both designs; where a run
from the copy fails and base's does not, from base's own place, with a warning. Fakes
time the runs (no real timing): what is checked is where each run was started from."""

from __future__ import annotations

import os
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from benchbot.measure import engine
from benchbot.results.resultsdir import to_json as as_json
from benchbot.run.runner import RawRun, SpawnRequest
from tests.clock import FakeClock
from tests.conftest import MakeRepo

CONFIG = """version: 1
{design}
workloads:
  - {{name: one, run: [sh, prog.sh]}}
"""


class PlaceSpawner:
    """Times every run 10 ms on a fake clock and notes where it was started from: its
    directory, and the inode of the program it would run there; runs from ``failing``
    (a directory name) exit 1."""

    def __init__(self, clock: FakeClock, failing: str | None = None) -> None:
        self.clock, self.failing = clock, failing
        self.seen: dict[str, set[tuple[str, int, str]]] = defaultdict(set)

    def spawn(self, request: SpawnRequest) -> RawRun:
        cwd = Path(request.cwd)
        prog = cwd / "prog.sh"
        self.seen[cwd.name].add((str(cwd), prog.stat().st_ino, prog.read_text()))
        self.clock.advance(0.01)
        failed = cwd.name == self.failing
        return RawRun(wall_ns=10_000_000 + len(self.seen) * 1000, cpu_ns=10_000_000,
                      maxrss_kib=1000, returncode=1 if failed else 0)


def _compare(repo: Path, spawner: PlaceSpawner, clock: FakeClock) -> dict:
    return as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD"),
                                  spawner_factory=lambda _: spawner, clock=clock))


@pytest.mark.parametrize("design", ["defaults: {runs: 10}", "budget: 30s\ndefaults: {max_runs: 30}"])
def test_base_again_runs_from_a_copy_of_base_at_a_path_as_long_as_head_s(
        make_repo: MakeRepo, design: str) -> None:
    clock = FakeClock()
    spawner = PlaceSpawner(clock)
    repo = make_repo({"benchbot.yml": CONFIG.format(design=design), "prog.sh": "echo base\n"},
                     {"prog.sh": "echo head\n"})
    doc = _compare(repo, spawner, clock)
    places = {name: seen for name, seen in spawner.seen.items()}
    assert set(places) == {"base", "head", "again"[:4]}, places
    (base,), (head,), (again,) = places["base"], places["head"], places["agai"]
    assert again[2] == base[2] == "echo base\n" and head[2] == "echo head\n"  # base's build
    assert len(again[0]) == len(head[0]) and again[0] != base[0]  # a path as long as head's
    assert len({base[1], again[1]}) == 2  # its own file, not base's (own pages)
    assert not Path(again[0]).exists()  # removed with the worktrees
    runs = doc["benchmarks"][0]["phases"]["aa"]["arms"]
    assert len(runs["base_again"]["samples_ns"]) == len(runs["base"]["samples_ns"]) > 0
    assert not any("base again" in w for w in doc["environment"]["warnings"])


@pytest.mark.parametrize("design", ["defaults: {runs: 10}", "budget: 30s\ndefaults: {max_runs: 30}"])
def test_a_copy_that_does_not_run_leaves_base_again_in_base_s_place_and_says_so(
        make_repo: MakeRepo, design: str) -> None:
    clock = FakeClock()
    spawner = PlaceSpawner(clock, failing="agai")
    repo = make_repo({"benchbot.yml": CONFIG.format(design=design), "prog.sh": "echo base\n"},
                     {"prog.sh": "echo head\n"})
    doc = _compare(repo, spawner, clock)
    bench = doc["benchmarks"][0]
    assert bench["verdict"]["reason_code"] not in ("run_failed", "aa_failed")
    assert len(bench["phases"]["aa"]["arms"]["base_again"]["samples_ns"]) > 0
    assert [w for w in doc["environment"]["warnings"] if "base again" in w] == [
        "one: a run of base's build from its copy exited with status 1; base again ran "
        "from base's own place"]


def test_the_place_is_beside_head_s_named_as_long_and_removed(tmp_path: Path) -> None:
    (tmp_path / "base").mkdir()
    (tmp_path / "head").mkdir()
    (tmp_path / "base" / "f").write_text("x")
    os.symlink("f", tmp_path / "base" / "link")
    with engine.again_place(tmp_path / "base", tmp_path / "head") as again:
        assert again.parent == tmp_path and len(again.name) == 4 and again.is_dir()
        engine.copy_built(tmp_path / "base", again)
        assert (again / "f").read_text() == "x" and os.readlink(again / "link") == "f"
        assert (again / "f").stat().st_ino != (tmp_path / "base" / "f").stat().st_ino
    assert not again.exists()
    # names of any length, never one of the worktrees'
    for head in ("h", "again", "agai_"):
        (tmp_path / head).mkdir(exist_ok=True)
        with engine.again_place(tmp_path / "base", tmp_path / head) as again:
            assert len(again.name) == len(head) and again.name not in ("base", head)


def test_a_build_s_fifos_are_left_out_and_a_copy_that_fails_is_removed_and_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path / "base"
    (base / "sub").mkdir(parents=True)
    (base / "sub" / "prog").write_text("x")
    os.mkfifo(base / "fifo")  # a copy would block on it, or stop
    (tmp_path / "head").mkdir()
    with engine.again_place(base, tmp_path / "head") as again:
        assert engine.copy_built(base, again) is None
        assert (again / "sub" / "prog").read_text() == "x" and not (again / "fifo").exists()
    real = shutil.copyfile

    def unreadable(src: str, dst: str, **kwargs: bool) -> str:
        if os.fspath(src).endswith("prog"):  # as a file of mode 000 is to a user without root
            raise PermissionError(13, "Permission denied", src)
        return real(src, dst, **kwargs)

    monkeypatch.setattr(shutil, "copyfile", unreadable)
    with engine.again_place(base, tmp_path / "head") as again:
        why = engine.copy_built(base, again)
        assert why is not None and why.startswith("base again ran from base's own place: "
                                                  "base's build could not be copied (")
        assert "Permission denied" in why and list(again.iterdir()) == []
