"""The sampled time profile of a profiled row whose change is in time, not in work.

After the work profiles (``profiling``: callgrind, base, base again and head), a row
called slower or faster whose work profile was made and named no function (``wanted``: no
function's own instructions moved beyond its noise and floor, so the change the verdict
called is in time alone: memory, layout, locks, system calls) is profiled for time: base, head and base again run
``RUNS`` times each (more while an arm's samples hold less than ``MIN_CPU_S`` of CPU time,
at most ``MAX_RUNS``) under ``perf record -e cpu-clock`` (``timeprofile.record``), as its
measured runs are made: the same command, directory and environment, in a fresh sandbox
of the same view, writable places and hidden files as the arm's worker (``Confinement``),
started by perf, whose file lies where no run can reach it (docs/security.md, "Time
profiles"). ``timeprofile.compare`` reads the three; ``table`` keeps what the results file
and the report show.

Where perf cannot sample here (``timeprofile.probe``), a run fails to be profiled, or the
budget has no room left, the table says why (``TimeTable.error``) and the report says
that only the work was profiled, and why. Its time is counted in the budget (the
comparison's ``profiling_s``) and the table says what it cost.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from benchbot.core.model import FoldedStacks, ProfileTable, TimedFunction, TimeTable
from benchbot.profiles import timeprofile
from benchbot.profiles.profile import MAX_ROWS, MAX_STACKS, trimmed
from benchbot.profiles.profiling import CALLED
from benchbot.sandbox import bwrap
from benchbot.sandbox.spawn import OUTPUT_MARK, SpawnRequest

RUNS = 3  # profiled runs of each arm at least
MAX_RUNS = 6  # ... and at most, where the samples are still too few
MIN_CPU_S = 0.3  # an arm's samples should hold this much CPU time (300 samples)
# perf's own cost a profiled run (its start and end, the sandbox, perf script): 0.88-0.95 s
# at load 6-9 (benchmarks/README.md, section 19); for the estimate of what it will take.
PERF_RUN_S = 1.0
TIME_ORDER = (0, 2, 1)  # profiling.ARMS (base, base again, head) -> base, head, base again


Confinement = bwrap.Confinement


def wanted(table: ProfileTable, outcome: str | None) -> bool:
    """Whether a row's time is profiled: it was called (``outcome`` slower or faster: a
    row profiled only on request, level or inconclusive, has no change of time to place)
    and its work profile was made and names no function (none moved beyond its noise and
    floor), so what the verdict called is not in the work."""
    return outcome in CALLED and table.error is None and not table.functions


def estimate_s(run_s: float) -> float:
    """About what a row's time profile takes: ``RUNS`` runs of each of three arms, each
    its own time (``run_s``) and perf's."""
    return 3 * RUNS * (run_s + PERF_RUN_S)


Recorder = Callable[..., timeprofile.TimeProfile]  # timeprofile.record's signature


def run(planned: Mapping[str, Sequence[SpawnRequest]], *, sandbox: bwrap.Sandbox,
        confinement: Callable[[str], Confinement], clock: Callable[[], float],
        deadline: float | None = None, estimates: Mapping[str, float] | None = None,
        probe: Callable[[], timeprofile.TimeProbe] = timeprofile.probe,
        record: Recorder = timeprofile.record) -> dict[str, TimeTable]:
    """Each row's time profile (``planned``: its runs as ``profiling.requests`` makes them
    before callgrind, base, base again and head), or a table that says why there is none.
    ``confinement``: an arm's, by its run's directory. A row whose profile would end after
    ``deadline`` (``estimates``: about how long it takes) is not profiled."""
    if not planned:
        return {}
    found = probe()
    if not found.works:
        why = found.reason or "perf cannot sample here"
        return {name: TimeTable(error=why) for name in planned}
    out: dict[str, TimeTable] = {}
    for name, made in planned.items():
        left = None if deadline is None else deadline - clock()
        needs = (estimates or {}).get(name)
        if left is not None and (left <= 0 or (needs is not None and needs > left)):
            out[name] = TimeTable(error="the budget had no room left for its time profile"
                                  + (f" (about {needs:.0f} s)" if needs is not None else ""))
            continue
        started = clock()
        try:
            arms = [_record(made[i], sandbox=sandbox, confined=confinement(made[i].cwd),
                            budget_s=max(1.0, (left or 60.0) / 3), record=record)
                    for i in TIME_ORDER]
        except timeprofile.TimeProfileError as exc:
            out[name] = TimeTable(error=str(exc), seconds=round(clock() - started, 3))
            continue
        base, head, again = arms
        out[name] = table(base, head, again, seconds=clock() - started)
    return out


def _record(r: SpawnRequest, *, sandbox: bwrap.Sandbox, confined: Confinement,
            budget_s: float, record: Recorder) -> timeprofile.TimeProfile:
    """One arm's profiled runs. A harness's report file (``OUTPUT_MARK``) goes to a
    private place: the sandbox's own ``/tmp``, or a directory of benchbot's without it."""
    with tempfile.TemporaryDirectory(prefix="benchbot-timereport-") as spare:
        where = "/tmp/report" if sandbox.active else str(Path(spare) / "report")
        argv = [arg.replace(OUTPUT_MARK, where) for arg in r.argv]
        return record(argv, cwd=Path(r.cwd), env=dict(r.env), sandbox=sandbox,
                      writable=[*confined.writable, *([] if sandbox.active else [Path(spare)])],
                      runs=RUNS, min_cpu_s=MIN_CPU_S, max_runs=MAX_RUNS, budget_s=budget_s,
                      timeout_s=r.timeout_s, git_dir=confined.git_dir,
                      git_config=confined.git_config, masked=confined.masked)


def table(base: timeprofile.TimeProfile, head: timeprofile.TimeProfile,
          again: timeprofile.TimeProfile | None, *, seconds: float) -> TimeTable:
    """The three profiles compared (``timeprofile.compare``), as the results file keeps
    them: the functions named (at most ``MAX_ROWS``), each arm's CPU time per run, and
    base's and head's stacks per run for the flame graph."""
    cmp = timeprofile.compare(base, head, again)
    named = [TimedFunction(name=f.name, base_ns=round(f.base_ns, 1), head_ns=round(f.head_ns, 1),
                           base_again_ns=None if f.base_again_ns is None
                           else round(f.base_again_ns, 1),
                           delta_ns=round(f.delta_ns, 1),
                           share=None if f.share is None else round(f.share, 4),
                           noise_ns=round(f.noise_ns, 1))
             for f in cmp.named]
    arms = [p for p in (base, head, again) if p is not None]
    return TimeTable(
        period_ns=base.period_ns, runs=sum(p.runs for p in arms),
        runs_per_arm=tuple(p.runs for p in arms), seconds=round(seconds, 3),
        base_ns=round(cmp.base_ns, 1), head_ns=round(cmp.head_ns, 1),
        base_again_ns=round(again.total_ns_per_run(), 1) if again is not None else 0.0,
        samples=tuple(p.samples for p in arms), confined=all(p.confined for p in arms),
        functions=tuple(named[:MAX_ROWS]), more=max(0, len(named) - MAX_ROWS),
        failures=tuple(f"{arm}: {f}" for arm, p in zip(("base", "head", "base again"), arms,
                                                        strict=False) for f in p.failures),
        stacks=FoldedStacks(base=_stacks(base), head=_stacks(head)))


def _stacks(p: timeprofile.TimeProfile) -> dict[str, int]:
    """An arm's folded stacks per run (ns), at most ``MAX_STACKS`` (the smallest folded
    into their parents)."""
    return trimmed({s: v for s, v in p.folded_per_run().items() if v > 0}, MAX_STACKS)
