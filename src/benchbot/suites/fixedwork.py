"""Counted runs of one benchmark of a suite doing a fixed amount of work.

docs/suites.md, "Counted runs of one benchmark", is the design; docs/verdict.md, "Counts
per benchmark", how the counts are judged. A suite's timed runs run many benchmarks in one
process for as many iterations as the harness decides, so their instructions are no one
benchmark's. A counted run is a run of its own, apart from the timed rounds: the suite's
``run`` with arguments appended that select one benchmark and fix its work to n units
(later arguments win in every harness read here), counted by valgrind (or perf where the
machine has counters). Each arm is counted at a small size (``SMALL`` units) and at SMALL + n
units, and the count per unit is (C(SMALL + n) - C(SMALL)) / n: the harness starting,
listing its benchmarks and setup that runs once per call cancel. (Two sizes n and 2n
would cancel the same; the small run costs a third of the work for the same span.)

This module is the seam between a benchmark and its counted run: ``recipe`` says whether
and how a harness can run a fixed amount of work, ``request`` makes the run's
``SpawnRequest`` (whatever places a run elsewhere wraps that request), ``check`` reads
what the run's report says it did, and ``per_unit`` is the arithmetic. No I/O.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchbot.harness import formats
from benchbot.sandbox import counting
from benchbot.sandbox.spawn import RawRun, SpawnRequest

# What one unit of work is (Counts.unit): one iteration of the benchmark's loop; one call
# of a google-benchmark 1.7 benchmark function running one iteration; one round of
# pytest-benchmark (one call, timed by the plugin); one loop of pyperf (one call).
Unit = str
ITERATION, CALL, ROUND, LOOP = "iteration", "call", "round", "loop"

# Cachegrind's slowdown of a benchmark's own work (native time -> counted time), from the
# measurements in docs/suites.md ("What counting costs"): 20-30x for Go and C++ loops on
# this kind of VM, taken at 40 to stay under the target on a loaded machine.
VALGRIND_SLOWDOWN = 40.0
# Seconds of the benchmark's own work in the larger counted run (SMALL + n units), beside
# the harness starting under valgrind (0.3-0.5 s of CPU, the same in every run). n is what
# sets the counts' precision: a counted run's own noise (Go's runtime: thousands of
# instructions a run; google-benchmark's timer: hundreds) spread over n units. At 0.5 s
# (until issue 39) the larger run cost 1.7 times the smaller one; at 0.2 s, 1.1-1.2 times,
# and the generated suites' A/A stayed well under signals.SAME_FLOOR: a median of 3.8e-4
# of the work for Go (5.0e-4 before), 6.7e-5 for google-benchmark (2.3e-5 before), at load
# 10-13 (docs/suites.md, "What counting costs"; benchmarks/README.md, section 17).
TARGET_WORK_S = {"valgrind": 0.2, "perf": 0.2}
MAX_UNITS = 10_000_000
# The smaller counted run's units. Not 1: with -test.benchtime 1x, Go runs the benchmark
# once and skips the b.N round that any larger count makes (with its collection of
# garbage), and google-benchmark before 1.8 reports a single repetition without the
# aggregates more make; from 2 on, both runs take the same path.
SMALL = 2
# Go's counted runs do not collect garbage (GOGC=off, steadier counts); their heap grows
# by what n iterations allocate, at most this much.
GO_HEAP_LIMIT_BYTES = 256 << 20
# The environment of a Go counted run: one processor, no garbage collection, no
# asynchronous preemption (its signals come at times valgrind's slowdown sets, each one a
# traceback of a few thousand instructions). docs/suites.md.
GO_ENV = {"GOMAXPROCS": "1", "GOGC": "off"}
GO_DEBUG = "asyncpreemptoff=1"
# The memory profiler samples an allocation every 512 KiB on average, at random, each
# sample a traceback of tens of thousands of instructions: a counted run sets the rate
# to 1 GiB (Go 1.19 reads neither GODEBUG's memprofilerate nor 0 here), which took the
# count per iteration's range over four runs from 0.79% to 0.28% for a benchmark that
# fills a map of strings, and from 0.48% to 0.18% for one that splits text.
GO_MEMPROFILERATE = 1 << 30
# Python harnesses: hash randomisation off, so that dictionaries do the same work.
PY_ENV = {"PYTHONHASHSEED": "0"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Recipe:
    """How one harness runs a fixed amount of work of one benchmark."""

    fmt: str
    unit: Unit
    # True: the unit is the benchmark's own work alone (its setup and the harness's work
    # per call cancel between the two sizes); False: they are counted with it.
    exact: bool
    how: str  # the arguments, in words, for the report
    # counts: auto counts it (False: its counted runs start slowly under valgrind; ask for
    # it with counts: valgrind).
    auto: bool = True


GO = Recipe(fmt="go", unit=ITERATION, exact=True, how="-test.bench '^NAME$' -test.benchtime Nx")
GB_NX = Recipe(fmt="google-benchmark", unit=ITERATION, exact=True,
               how="--benchmark_filter=^NAME$ --benchmark_min_time=Nx")
GB_CALLS = Recipe(fmt="google-benchmark", unit=CALL, exact=False,
                  how="--benchmark_min_time=0 --benchmark_repetitions=N (before 1.8: N "
                      "calls of one iteration, setup included)")
PYTEST = Recipe(fmt="pytest-benchmark", unit=ROUND, exact=False, auto=False,
                how="--benchmark-min-rounds=N --benchmark-max-time=0 --benchmark-min-time=0 "
                    "(N rounds of one call)")
PYPERF = Recipe(fmt="pyperf", unit=LOOP, exact=True, auto=False,
                how="--worker --worker-task=K --loops=N -n 1 -w 0")

# Why a harness cannot run a fixed amount of work (docs/suites.md).
CANNOT = {
    "bencher": "libtest and Criterion choose their iteration counts from timing, and no "
               "option fixes them",
    "jsonl": "the JSON-lines protocol has no way to ask a program for a fixed amount of work",
}


def recipe(fmt: str, *, argv: Sequence[str], filter_: Sequence[str] | None,
           nx: bool = False) -> Recipe | str:
    """The harness's recipe, or why its benchmarks cannot be counted one by one (``nx``:
    the google-benchmark binaries take ``--benchmark_min_time=Nx``, 1.8 and later)."""
    if fmt in CANNOT:
        return CANNOT[fmt]
    if fmt == "go":
        if os.path.basename(argv[0]) == "go":
            return ("counted runs need the compiled test binary (go test -c), not the go "
                    "command, which would build and count the go tool too")
        return GO
    if fmt == "google-benchmark":
        return GB_NX if nx else GB_CALLS
    if fmt == "pytest-benchmark":
        if not filter_:
            return "a counted run selects one benchmark with the suite's filter, and it has none"
        return PYTEST
    if fmt == "pyperf":
        return PYPERF
    return f"no counted runs for the {fmt} format"


def units_for(ns_per_unit: float, method: str, *, bytes_per_unit: float | None = None,
              fmt: str = "") -> int:
    """n: how many units more the larger counted run does than the smaller, from the time
    one took in the discovery run, so that it takes about a second (module docstring)."""
    seconds = TARGET_WORK_S.get(method, TARGET_WORK_S["valgrind"])
    slowdown = VALGRIND_SLOWDOWN if method == "valgrind" else 1.0
    per_unit_s = max(ns_per_unit, 1.0) * 1e-9 * slowdown
    n = int(seconds / per_unit_s)
    if fmt == "go" and bytes_per_unit and bytes_per_unit > 0:
        n = min(n, int(GO_HEAP_LIMIT_BYTES / bytes_per_unit))
    return max(1, min(n, MAX_UNITS))


def request(argv: Sequence[str], cwd: str, env: Mapping[str, str], *, recipe: Recipe,
            bench: str, select: str, n: int, task: int, filter_: Sequence[str] | None,
            timeout_s: float, method: str | None, pin: tuple[int, ...] | None = None
            ) -> SpawnRequest:
    """The counted run of ``n`` units of the benchmark ``bench`` (``select``: what selects it
    in the harness's filter; ``task``: its place in the harness's report, for pyperf);
    ``method`` None: the same run, not counted (a probe)."""
    more, extra_env = _arguments(recipe, bench=bench, select=select, n=n, task=task,
                                 filter_=filter_)
    merged = {**env, **extra_env}
    if recipe.fmt == "go":
        merged["GODEBUG"] = ",".join(p for p in (env.get("GODEBUG", ""), GO_DEBUG) if p)
    return SpawnRequest(
        argv=(*argv, *more), cwd=cwd, env=tuple(merged.items()),
        timeout_s=counting.valgrind_timeout(timeout_s) if method == "valgrind" else timeout_s,
        pin=pin, harness=recipe.fmt, count=method, whole=method == "valgrind")


def _arguments(recipe: Recipe, *, bench: str, select: str, n: int, task: int,
               filter_: Sequence[str] | None) -> tuple[list[str], dict[str, str]]:
    if recipe is GO:
        return ["-test.run=^$", f"-test.bench={formats.go_exact(bench)}",
                f"-test.benchtime={n}x", "-test.count=1", "-test.cpu=1", "-test.benchmem",
                f"-test.memprofilerate={GO_MEMPROFILERATE}"], dict(GO_ENV)
    if recipe.fmt == "google-benchmark":
        chosen = [f"--benchmark_filter={formats.filter_regex('google-benchmark', [select])}",
                  "--benchmark_min_warmup_time=0",
                  "--benchmark_enable_random_interleaving=false"]
        if recipe.unit == ITERATION:
            return [*chosen, f"--benchmark_min_time={n}x", "--benchmark_repetitions=1"], {}
        return [*chosen, "--benchmark_min_time=0", f"--benchmark_repetitions={n}",
                "--benchmark_report_aggregates_only=true"], {}
    if recipe is PYTEST:
        from benchbot.run.runner import filter_argv

        return [*filter_argv(filter_ or (), recipe.fmt, [select]),
                f"--benchmark-min-rounds={n}", "--benchmark-max-time=0",
                "--benchmark-min-time=0", "--benchmark-warmup=off",
                "--benchmark-calibration-precision=1"], dict(PY_ENV)
    if recipe is PYPERF:
        return ["--worker", f"--worker-task={task}", f"--loops={n}", "--values=1",
                "--warmups=0"], dict(PY_ENV)
    raise ValueError(f"no counted runs for {recipe.fmt}")  # recipe() said so first


def probe(argv: Sequence[str], cwd: str, env: Mapping[str, str], *, recipe: Recipe,
          bench: str, select: str, task: int, filter_: Sequence[str] | None,
          timeout_s: float) -> SpawnRequest:
    """A run that asks the harness for ``SMALL`` units of one benchmark's work, not counted:
    whether the harness takes the recipe is told by what its report says it did
    (``did_as_asked``), never by its exit status. A google-benchmark main that does not
    call ``ReportUnrecognizedArguments`` exits 0 on a flag its version cannot parse and runs
    by time instead (1.7 and ``--benchmark_min_time=2x``: tens of thousands of iterations)."""
    return request(argv, cwd, env, recipe=recipe, bench=bench, select=select, n=SMALL,
                   task=task, filter_=filter_, timeout_s=timeout_s, method=None)


def did_as_asked(raw: RawRun, *, recipe: Recipe, bench: str, n: int) -> str | None:
    """None where the run did what was asked (``n`` units of ``bench`` alone, read from its
    report); else what it did instead, in words: it failed, its report cannot be read, it
    reported other benchmarks, or it ran another amount of work."""
    if raw.not_started is not None:
        return raw.not_started
    if raw.timed_out:
        return "timed out"
    if raw.returncode != 0:
        tail = raw.stderr_tail.strip().splitlines()[-1:] or [""]
        return f"exited with status {raw.returncode}" + (f": {tail[0][:160]}" if tail[0] else "")
    report = raw.report
    if report is None or report.error is not None:
        return ("left a report benchbot cannot read: "
                + (report.error or "" if report is not None else "none"))
    names = [e.name for e in report.entries]
    entry = next((e for e in report.entries if e.name == bench), None)
    if entry is None or len(names) != 1:
        shown = ", ".join(names[:3]) + ("…" if len(names) > 3 else "")
        return f"reported {shown or 'nothing'}, not {bench} alone"
    ran = dict(entry.extras).get(formats.ITERATIONS)
    expected = 1 if recipe is PYTEST else n  # pytest-benchmark: calls per round
    if recipe is PYTEST:
        rounds = dict(entry.extras).get("rounds")
        if rounds is None or round(rounds) != n:
            return f"ran {rounds if rounds is not None else 'an unknown number of'} rounds, not {n}"
    if ran is None or not math.isfinite(ran) or round(ran) != expected:
        said = "an unknown number of" if ran is None else f"{ran:g}"
        return f"ran {said} {recipe.unit}s, not {expected}"
    return None


def check(raw: RawRun, *, recipe: Recipe, bench: str, n: int) -> tuple[int | None, str | None]:
    """The counted run's instructions, or why it does not count: it did not do what was
    asked (``did_as_asked``), or it was not counted."""
    problem = did_as_asked(raw, recipe=recipe, bench=bench, n=n)
    if problem is not None:
        return None, problem
    if raw.instructions is None:
        return None, raw.count_error or "was not counted"
    return raw.instructions, None


def per_unit(small: int, large: int, n: int) -> float | None:
    """(C(SMALL + n) - C(SMALL)) / n: the instructions of one unit; None where the larger run
    counted no more than the smaller (the two runs did not do what was asked)."""
    if n <= 0 or large <= small:
        return None
    return (large - small) / n
