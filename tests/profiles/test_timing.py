"""Which rows a comparison profiles for time, and what it keeps (benchbot.profiles.timing),
with perf's side replaced at its boundary: ``record`` returns the profiles perf made of
the section-19 kernel (tests/fixtures/flame/memory-walk.*.folded, recorded here), and
``probe`` answers as a machine without perf would. The real sampling, in a comparison, is
tests/profiles/test_timing_measured.py."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from benchbot.core.model import ProfiledFunction, ProfileTable
from benchbot.profiles import timeprofile as tp
from benchbot.profiles import timing
from benchbot.sandbox import bwrap
from benchbot.sandbox.spawn import OUTPUT_MARK, SpawnRequest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "flame"
MS = 1_000_000
BOX = bwrap.Sandbox(kind="none", description="off")
WORKS = tp.TimeProbe(True, "/usr/bin/perf", "perf version 6.1")


def _folded(side: str) -> dict[str, int]:
    out = {}
    for line in (FIXTURES / f"memory-walk.{side}.folded").read_text().splitlines():
        stack, value = line.rsplit(" ", 1)
        out[stack] = int(value)
    return out


def _profile(side: str, runs: int = 1) -> tp.TimeProfile:
    folded = {s: v * runs for s, v in _folded(side).items()}
    return tp.TimeProfile(folded=folded, runs=runs, samples=sum(folded.values()) // MS,
                          period_ns=MS, wall_s=1.5, confined=False)


def _requests(*args: str) -> tuple[SpawnRequest, ...]:
    """base, base again, head: as profiling.arm_requests orders them."""
    return tuple(SpawnRequest(argv=("./k", *args), cwd=f"/w/{arm}", env=(("A", arm),),
                              timeout_s=30.0) for arm in ("base", "again", "head"))


class Recorder:
    """``timeprofile.record`` at its boundary: what each arm's run was asked for, and the
    profile perf made of it (base's program in /w/base and /w/again, head's in /w/head)."""

    def __init__(self, fail: str | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.fail = fail

    def __call__(self, argv: Sequence[str], **kwargs: Any) -> tp.TimeProfile:
        self.calls.append({"argv": list(argv), **kwargs})
        if self.fail:
            raise tp.TimeProfileError(self.fail)
        return _profile("head" if kwargs["cwd"] == Path("/w/head") else "base", runs=3)


def _table(*functions: ProfiledFunction, error: str | None = None) -> ProfileTable:
    return ProfileTable(base_total=10, head_total=10, functions=functions, error=error)


def test_only_a_call_whose_work_profile_named_nothing_is_profiled_for_time() -> None:
    named = ProfiledFunction(name="f", object="p", file="f.c", base_self=1, head_self=2,
                             base_inclusive=1, head_inclusive=2, delta=1, share=1.0, noise=0,
                             noise_inclusive=0)
    assert timing.wanted(_table(), "slower") and timing.wanted(_table(), "faster")
    assert not timing.wanted(_table(named), "slower")  # the work carries it
    assert not timing.wanted(_table(error="the head run timed out"), "slower")
    for outcome in ("level", "inconclusive", "invalid", None):  # profiled on request only
        assert not timing.wanted(_table(), outcome)


def test_the_time_profile_names_walk_and_keeps_its_stacks() -> None:
    record = Recorder()
    ticks = iter(range(0, 1000, 5))
    made = timing.run({"walk": _requests(f"--out={OUTPUT_MARK}")}, sandbox=BOX,
                      confinement=lambda cwd: bwrap.Confinement(writable=(Path(cwd),)),
                      clock=lambda: float(next(ticks)), probe=lambda: WORKS, record=record)
    table = made["walk"]
    assert table.error is None
    assert [f.name for f in table.functions] == ["walk"]
    walk = table.functions[0]
    assert walk.base_ns == tp.self_costs(_folded("base"))["walk"] and walk.head_ns > 3 * walk.base_ns
    assert walk.share is not None and 0.9 < walk.share < 1.1
    assert table.runs == 9 and table.runs_per_arm == (3, 3, 3) and table.seconds == 5.0
    assert table.samples[0] == 3 * sum(_folded("base").values()) // MS
    assert not table.confined  # made without the sandbox, and it says so
    assert table.stacks is not None
    assert table.stacks.base == _folded("base") and table.stacks.head == _folded("head")
    # base, head, base again: each run as its measured runs are made, in its own place
    assert [c["cwd"] for c in record.calls] == [Path("/w/base"), Path("/w/head"), Path("/w/again")]
    assert [c["env"] for c in record.calls] == [{"A": "base"}, {"A": "head"}, {"A": "again"}]
    for call in record.calls:
        assert call["writable"][0] == call["cwd"]
        assert call["runs"] == timing.RUNS and call["max_runs"] == timing.MAX_RUNS
        assert call["timeout_s"] == 30.0
        # a harness's report goes to a private directory of benchbot's, never to a mark
        out = call["argv"][1].removeprefix("--out=")
        assert OUTPUT_MARK not in out and Path(out).parent in call["writable"]


def test_in_the_sandbox_a_harness_report_goes_to_its_own_tmp() -> None:
    record = Recorder()
    box = bwrap.Sandbox(kind="bubblewrap", description="test", bwrap="/usr/bin/bwrap")
    confined = bwrap.Confinement(writable=(Path("/w/x"),), git_dir=Path("/r/.git"),
                                 git_config=Path("/s/gitconfig"), masked=("/w/x/secret",))
    timing.run({"b": _requests(f"--out={OUTPUT_MARK}")}, sandbox=box,
               confinement=lambda cwd: confined, clock=lambda: 0.0, probe=lambda: WORKS,
               record=record)
    for call in record.calls:
        assert call["argv"][1] == "--out=/tmp/report"
        assert call["writable"] == [Path("/w/x")]  # the worker's, and nothing of benchbot's
        assert (call["git_dir"], call["git_config"], call["masked"]) == (
            Path("/r/.git"), Path("/s/gitconfig"), ("/w/x/secret",))


def test_without_perf_every_row_says_why_and_nothing_runs() -> None:
    record = Recorder()
    missing = tp.probe_with(None)
    made = timing.run({"a": _requests(), "b": _requests()}, sandbox=BOX,
                      confinement=lambda cwd: bwrap.Confinement(), clock=lambda: 0.0,
                      probe=lambda: missing, record=record)
    assert {n: t.error for n, t in made.items()} == {"a": "perf is not installed",
                                                    "b": "perf is not installed"}
    assert record.calls == [] and all(t.runs == 0 for t in made.values())


@pytest.mark.parametrize(("deadline", "estimate", "why"), [
    (10.0, 11.0, "the budget had no room left for its time profile (about 11 s)"),
    (0.0, None, "the budget had no room left for its time profile"),
])
def test_a_time_profile_that_would_pass_the_deadline_is_not_made(
        deadline: float, estimate: float | None, why: str) -> None:
    record = Recorder()
    made = timing.run({"a": _requests()}, sandbox=BOX, confinement=lambda cwd: bwrap.Confinement(),
                      clock=lambda: 0.0, deadline=deadline,
                      estimates={"a": estimate} if estimate is not None else {},
                      probe=lambda: WORKS, record=record)
    assert made["a"].error == why and record.calls == []


def test_perf_failing_is_said_and_the_next_row_still_profiled() -> None:
    failing = Recorder(fail="perf record wrote no profile: perf record -e cpu-clock cannot sample here")
    made = timing.run({"a": _requests()}, sandbox=BOX, confinement=lambda cwd: bwrap.Confinement(),
                      clock=lambda: 0.0, probe=lambda: WORKS, record=failing)
    assert made["a"].error == "perf record wrote no profile: perf record -e cpu-clock cannot sample here"
    assert made["a"].functions == ()


def test_the_estimate_counts_perfs_own_cost_a_run() -> None:
    assert timing.estimate_s(0.1) == pytest.approx(3 * timing.RUNS * (0.1 + timing.PERF_RUN_S))
