"""The profiled runs: after the verdicts, base, base again and head once each under callgrind.

For each workload or suite benchmark called ``slower`` or ``faster`` (every one where
asked: ``Config.profile`` "all", from ``--profile`` or ``/bench profile``; none with
"off"), each arm runs once more under valgrind's callgrind (``spawn``'s "callgrind"
count): in the same protected place and with the same audit as a counted run
(``counting.ValgrindPlace``, ``counting.audit_valgrind``; docs/security.md, "Counts"),
each arm in its own worker where the sandbox has one per place. A workload's runs are its
own ``run``; a suite's benchmark's are the fixed-work run its counting made
(``fixedwork.request``: SMALL + n units), with the same n. A run that failed or whose
record was refused gives no profile (never a part of one), and the report says why.
``profile.compare`` reads the three.

Their time is counted in the budget (``Measured.profiling_s``, ``Spent.profiling_s``)
and each profile says what it cost; a workload whose profile would start after the
deadline gets none ("the budget was spent").
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from benchbot.config.config import WorkloadConfig
from benchbot.core.model import Counts, ProfileTable
from benchbot.profiles import profile
from benchbot.run.rounds import spawn_group
from benchbot.run.runner import Spawner, Target, request
from benchbot.sandbox import counting
from benchbot.sandbox.spawn import RawRun, SpawnRequest
from benchbot.suites import fixedwork

ARMS = ("base", "base_again", "head")
CALLED = ("slower", "faster")
# callgrind's slowdown of a program's own run (native -> profiled), for the estimate of
# what a workload's profiled runs will take (a counted run under cachegrind with its cache
# simulation takes about as long as one under callgrind without).
SLOWDOWN = 50.0


def chosen(outcomes: Mapping[str, str | None], mode: str) -> list[str]:
    """The workloads to profile, in the order given: those called (``CALLED``), every one
    with ``mode`` "all", none with "off"."""
    if mode == "off":
        return []
    return [name for name, outcome in outcomes.items()
            if mode == "all" or outcome in CALLED]


def requests(w: WorkloadConfig, places: Mapping[str, Target], env: Mapping[str, str],
             counts: Counts | None = None, *, fmt: str | None = None,
             filter_: Sequence[str] | None = None, index: int = 0
             ) -> tuple[SpawnRequest, ...] | str:
    """The profiled runs of one workload, base, base again and head (``places``: each
    arm's target), or why it cannot be profiled. A suite's benchmark (``fmt``: its
    harness's format) runs as its counted runs did, ``counts.units`` more units than the
    small size: without counted runs it is not profiled."""
    made = arm_requests(w, places, env, counts, fmt=fmt, filter_=filter_, index=index)
    if isinstance(made, str):
        return made
    return tuple(dataclasses.replace(r, count="callgrind", whole=True, keep_stdout=False,
                                     patterns=(), timeout_s=counting.valgrind_timeout(w.timeout_s))
                 for r in made)


def arm_requests(w: WorkloadConfig, places: Mapping[str, Target], env: Mapping[str, str],
                 counts: Counts | None = None, *, fmt: str | None = None,
                 filter_: Sequence[str] | None = None, index: int = 0
                 ) -> tuple[SpawnRequest, ...] | str:
    """``requests``' runs as they are before callgrind (base, base again, head): a
    workload's own run, a suite benchmark's fixed-work run (what the time profile runs:
    benchbot.profiles.timing), or why there is none."""
    if w.suite is None:
        made = [request(places[arm], w, env) for arm in ARMS]
    else:
        recipe = _recipe(fmt, counts)
        if isinstance(recipe, str):
            return recipe
        assert counts is not None and counts.units is not None  # _recipe checked
        made = [fixedwork.request(places[arm].argv, str(places[arm].cwd), {**env, **dict(w.env)},
                                  recipe=recipe, bench=w.bench or w.name,
                                  select=w.select or w.bench or w.name,
                                  n=fixedwork.SMALL + counts.units, task=index,
                                  filter_=filter_, timeout_s=w.timeout_s, method=None,
                                  pin=w.pin) for arm in ARMS]
    return tuple(made)


def why_not(w: WorkloadConfig, counts: Counts | None, *, fmt: str | None) -> str | None:
    """Why a call of this workload could not be profiled, valgrind aside (None: it could):
    a suite's benchmark is profiled as its counted runs ran, so one with none is not. What
    the budget asks before it keeps time for profiles (``Sequential.deadline``)."""
    if w.suite is None:
        return None
    recipe = _recipe(fmt, counts)
    return recipe if isinstance(recipe, str) else None


def _recipe(fmt: str | None, counts: Counts | None) -> fixedwork.Recipe | str:
    """The fixed-work recipe a suite's benchmark's counted runs used, or why there is none."""
    if counts is None or counts.method is None or counts.units is None:
        why = counts.why if counts is not None else "not counted"
        return f"a suite's benchmark is profiled as its counted runs ran, and it had none ({why})"
    if fmt == "go":
        return fixedwork.GO
    if fmt == "google-benchmark":
        return fixedwork.GB_NX if counts.unit == fixedwork.ITERATION else fixedwork.GB_CALLS
    if fmt == "pytest-benchmark":
        return fixedwork.PYTEST
    if fmt == "pyperf":
        return fixedwork.PYPERF
    return f"no fixed-work run for the {fmt} format"


def run(spawner: Spawner, planned: Mapping[str, tuple[SpawnRequest, ...] | str], *,
        places: Sequence[str | Path] = (), clock: Callable[[], float],
        deadline: float | None = None, parallel: bool = False,
        estimates: Mapping[str, float] | None = None) -> dict[str, ProfileTable]:
    """Each workload's three profiled runs (``requests``), compared (``profile.compare``);
    where it cannot be, a table that says why. ``parallel``: each arm's runs in a thread of
    its own (one worker per place: a profiled run's time is no measurement). A workload
    whose runs would end after ``deadline`` (``estimates``: about how long they take) is
    not profiled."""
    out: dict[str, ProfileTable] = {}
    shown = profile.places_of(*places)
    for name, made in planned.items():
        if isinstance(made, str):
            out[name] = profile.missing(made, seconds=0.0, runs=0)
            continue
        if deadline is not None and clock() >= deadline:
            out[name] = profile.missing("the budget was spent before its profiled runs",
                                        seconds=0.0, runs=0)
            continue
        needs = (estimates or {}).get(name)
        if deadline is not None and needs is not None and clock() + needs > deadline:
            out[name] = profile.missing(
                f"its profiled runs would take about {_seconds(needs)}, more than the "
                f"{_seconds(max(0.0, deadline - clock()))} the budget has left",
                seconds=0.0, runs=0)
            continue
        started = clock()
        raws = _made(spawner, name, made, parallel=parallel)
        seconds = clock() - started
        out[name] = _compared(raws, seconds=seconds, places=shown)
    return out


def _made(spawner: Spawner, name: str, made: Sequence[SpawnRequest], *,
          parallel: bool) -> list[RawRun | None]:
    """The runs, in order (None: not made, after one failed); ``parallel``: the runs of
    each place (a worker of its own) in a thread of their own, places at once."""
    if not parallel:
        got: list[RawRun | None] = list(spawn_group(spawner, made, name))
        return got + [None] * (len(made) - len(got))
    results: list[RawRun | None] = [None] * len(made)
    places: dict[str, list[int]] = {}
    for i, r in enumerate(made):
        places.setdefault(r.cwd, []).append(i)
    problems: list[BaseException] = []

    def place(indexes: list[int]) -> None:
        try:
            runs = spawn_group(spawner, [made[i] for i in indexes], name)
            for i, raw in zip(indexes, runs, strict=False):
                results[i] = raw
        except BaseException as exc:  # raised again below, in the caller's thread
            problems.append(exc)

    threads = [threading.Thread(target=place, args=(indexes,), name=f"benchbot-profile-{k}")
               for k, indexes in enumerate(places.values())]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if problems:
        raise problems[0]
    return results


def _compared(raws: Sequence[RawRun | None], *, seconds: float,
              places: Sequence[str]) -> ProfileTable:
    """The three runs' profiles compared, or why there is none (the first arm's problem)."""
    runs = sum(1 for r in raws if r is not None)
    for arm, raw in zip(ARMS, raws, strict=True):
        side = arm.replace("_", " ")
        if raw is None:
            return profile.missing(f"the profiled {side} run was not made (an earlier one "
                                   "failed)", seconds=seconds, runs=runs)
        if raw.failed:
            what = (raw.not_started or ("timed out" if raw.timed_out
                                        else f"exited with status {raw.returncode}"))
            return profile.missing(f"the profiled {side} run {what}", seconds=seconds, runs=runs)
        if raw.profile is None:
            return profile.missing(f"the {side} run: {raw.count_error or 'no profile'}",
                                   seconds=seconds, runs=runs)
    base, again, head = (r.profile for r in raws if r is not None and r.profile is not None)
    return profile.compare(base, again, head, seconds=seconds, places=places, runs=runs)


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"
