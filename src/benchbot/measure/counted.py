"""What measuring asks of the counts and the profiles: each workload's instructions counted
apart from its timed runs (valgrind) or beside them (perf), a suite's benchmarks counted
before the first timed round (suites.suitecount), and, after the verdicts, the called
workloads profiled (profiles.profiling) within what is left of the budget
(docs/verdict.md, "A second signal" and "Where the change is").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchbot.config.config import WorkloadConfig
from benchbot.core.model import (
    CountMethod,
    Counts,
    Measuring,
    Misses,
    PhaseRuns,
)
from benchbot.measure.context import (
    Context,
    Measured,
)
from benchbot.run.rounds import (
    PERF_METRIC_PLAN,
    VALGRIND_METRIC_PLAN,
    VALGRIND_PLAN,
    Counted,
    Tracked,
    counted_runs,
)
from benchbot.run.runner import Target, request
from benchbot.sandbox import bwrap, counting
from benchbot.sandbox.spawn import SpawnRequest
from benchbot.verdict import signals


def means_of(ctx: Context) -> counting.Means:
    if ctx.means is None:
        ctx.means = counting.means(ctx.env)
    return ctx.means


def _method(ctx: Context, w: WorkloadConfig, run_s: float | None) -> tuple[CountMethod | None, str]:
    """The workload's counting method (its ``counts`` resolved here), and why."""
    method, why = counting.choose(w.counts, means_of(ctx), run_s=run_s)
    return method, why  # type: ignore[return-value]


def perf_counted(ctx: Context, workloads: Sequence[WorkloadConfig]) -> set[str]:
    """The workloads whose measured runs perf counts (decided before any run); never a
    suite's benchmarks, whose counts come from counted runs of their own (suitecount)."""
    return {w.name for w in workloads if w.suite is None and _method(ctx, w, None)[0] == "perf"}


def count_apart(ctx: Context, w: WorkloadConfig, run_s: float | None, measured: Measured,
                *, deadline: float | None = None) -> None:
    """For a workload not counted by perf: its ``counts`` resolved with the warm-up's time,
    and valgrind's counted runs made where that is the method (base, head, base again,
    head, each in its arm's worker), into ``measured.counts``. A counted run that fails
    leaves the workload uncounted, with the reason, and its time verdict as it is."""
    method, why = _method(ctx, w, run_s)
    if method == "perf":
        return
    if method is None:
        measured.counts[w.name] = Counts(method=None, why=why)
        return
    if deadline is not None and ctx.clock() >= deadline:
        measured.counts[w.name] = Counts(method=None, why="not counted: the budget was spent "
                                                          "before the counted runs")
        return
    made = counted_runs(ctx.spawner, w, ctx.base[w.name], ctx.head[w.name], ctx.env,
                        method=method, plan=VALGRIND_PLAN, again=ctx.again_of(w.name))
    measured.counting_s += made.seconds
    if made.failure is not None:
        measured.counts[w.name] = Counts(method=None, why=f"not counted: {made.failure}")
        return
    measured.counts[w.name] = Counts(
        method="valgrind", why=why, base=tuple(made.instructions["base"]),
        base_again=tuple(made.instructions["base_again"]), head=tuple(made.instructions["head"]),
        counted_s=round(made.seconds, 3), misses=counted_misses(made, "valgrind"))


def perf_counts(ctx: Context, w: WorkloadConfig, result: Tracked,
                phases: Mapping[str, PhaseRuns] | None = None) -> Counts:
    """A perf-counted workload's Counts (the counts themselves are its runs'; so are the
    last-level misses, arms[].ll_misses, where the CPU counted them in ``phases``)."""
    if result.count_error is not None:
        return Counts(method=None, why=f"not counted: {result.count_error}")
    misses = any(arm.ll_misses for phase in (phases or {}).values() for arm in phase.arms.values())
    return Counts(method="perf", why=_method(ctx, w, None)[1], every_run=True,
                  scaled=result.counts_scaled,
                  misses=signals.new_misses(counting.PERF_MISSES_WORDS) if misses else None)


def measure_instructions(ctx: Context, names: Sequence[str], measured: Measured) -> None:
    """metric: instructions: counted runs only, no timed loop. Valgrind: three runs of each
    arm and two of base again; perf: ten rounds of base, base again and head."""
    by_name = {w.name: w for w in ctx.config.workloads}
    for name in names:
        w = by_name[name]
        start = ctx.clock()
        warm = [ctx.spawner.spawn(request(tgt, w, ctx.env))
                for _ in range(max(1, w.warmup)) for tgt in (ctx.base[name], ctx.head[name])]
        run_s = (ctx.clock() - start) / max(1, len(warm))
        method, why = _method(ctx, w, run_s)
        counts = Counts(method=None, why=why)
        if method is not None:
            plan = PERF_METRIC_PLAN if method == "perf" else VALGRIND_METRIC_PLAN
            made = counted_runs(ctx.spawner, w, ctx.base[name], ctx.head[name], ctx.env,
                                method=method, plan=plan, again=ctx.again_of(name))
            if made.failure is not None:
                counts = Counts(method=None, why=f"not counted: {made.failure}")
            else:
                counts = Counts(method=method, why=why, every_run=method == "perf",
                                scaled=made.scaled, base=tuple(made.instructions["base"]),
                                base_again=tuple(made.instructions["base_again"]),
                                head=tuple(made.instructions["head"]),
                                misses=counted_misses(made, method))
        measured.counts[name] = counts
        measured.measuring[name] = Measuring(
            design="pairs", pairs=len(counts.head), stopped="fixed",
            why="metric: instructions: a fixed number of counted runs, no timed runs")


def counted_misses(made: Counted, method: str) -> Misses | None:
    """The last-level misses of counted runs, where every run that counted instructions
    counted them too (valgrind's cache simulation; perf where the CPU has the event)."""
    arms = ("base", "base_again", "head")
    if not made.ll_misses["base"] or any(
            len(made.ll_misses[a]) != len(made.instructions[a]) for a in arms):
        return None
    return signals.new_misses(
        counting.CACHE_WORDS if method == "valgrind" else counting.PERF_MISSES_WORDS,
        base=tuple(map(float, made.ll_misses["base"])),
        base_again=tuple(map(float, made.ll_misses["base_again"])),
        head=tuple(map(float, made.ll_misses["head"])))


def profile_called(ctx: Context, measured: Measured, *, deadline: float | None) -> None:
    """After the verdicts: the workloads called slower or faster (every one, where the
    config's ``profile`` is "all") profiled (benchbot.profiles.profiling), into ``measured.profiles``.
    Nothing is judged again and nothing runs where nothing is called."""
    from benchbot.profiles import profiling

    mode = ctx.config.profile
    if mode == "off":
        return
    judgement = ctx.judged(measured)
    outcomes = {name: (j.final.outcome if j.final is not None else None)
                for name, j in judgement.workloads.items()}
    names = profiling.chosen(outcomes, mode)
    if not names:
        return
    problem = means_of(ctx).valgrind_problem
    by_name = {w.name: w for w in ctx.config.workloads}
    planned: dict[str, tuple[SpawnRequest, ...] | str] = {}
    plain: dict[str, tuple[SpawnRequest, ...] | str] = {}  # the same runs, not under callgrind
    places: list[str] = []
    for name in names:
        w = by_name[name]
        if problem is not None:
            planned[name] = problem  # the note says "Not profiled: " before it
            continue
        # base again's place: a suite's, for its benchmarks (suitecount's runs too)
        again = ctx.again_of(w.suite) if w.suite is not None else ctx.again_of(name)
        arms = {"base": ctx.base[name], "base_again": again, "head": ctx.head[name]}
        places += [str(_root_of(t, w)) for t in arms.values()]
        how = ctx.harnesses.get(w.suite) if w.suite is not None else None
        figures = ctx.figures.get(name)
        kwargs: dict[str, Any] = {"fmt": how.format if how is not None else None,
                                  "filter_": how.filter if how is not None else None,
                                  "index": getattr(figures, "index", 0)}
        planned[name] = profiling.requests(w, arms, ctx.env, measured.counts.get(name), **kwargs)
        plain[name] = profiling.arm_requests(w, arms, ctx.env, measured.counts.get(name),
                                             **kwargs)
    runnable = sum(1 for p in planned.values() if not isinstance(p, str))
    if runnable:
        ctx.reporter.phase("profiling", runnable, 3 * runnable)
    from benchbot.suites.suitecount import in_parallel

    parallel = in_parallel(ctx.spawner)
    started = ctx.clock()
    measured.profiles.update(profiling.run(
        ctx.spawner, planned, places=places, clock=ctx.clock, deadline=deadline,
        parallel=parallel,
        estimates={n: e for n in planned
                   if (e := _profile_s(measured, by_name[n], parallel=parallel)) is not None}))
    measured.profiling_s += ctx.clock() - started
    profile_time(ctx, measured, plain, outcomes, deadline=deadline)


def profile_time(ctx: Context, measured: Measured,
                 plain: Mapping[str, tuple[SpawnRequest, ...] | str],
                 outcomes: Mapping[str, str | None], *, deadline: float | None) -> None:
    """The rows called whose work profile named nothing (``timing.wanted``: the change
    called is in time, not in work) profiled for time (benchbot.profiles.timing), in the
    sandbox the runs are made in; each row's ``measured.profiles`` entry gets its
    ``time``. Nothing runs where no row is wanted, or where the context has no sandbox
    (``ctx.sandbox``)."""
    from benchbot.profiles import timing

    if ctx.sandbox is None:
        return
    wanted = {name: made for name, made in plain.items()
              if name in measured.profiles and not isinstance(made, str)
              and timing.wanted(measured.profiles[name], outcomes.get(name))}
    if not wanted:
        return
    box, spawner = ctx.sandbox, ctx.spawner
    by_name = {w.name: w for w in ctx.config.workloads}

    def confinement(cwd: str) -> bwrap.Confinement:
        # The measuring worker's, as its runs are confined; a spawner of another kind
        # (tests' own) in the sandbox: the run's directory alone writable.
        if isinstance(spawner, bwrap.WorkerSpawner):
            return spawner.confinement(cwd)
        return bwrap.Confinement(writable=(Path(cwd),)) if box.active else bwrap.Confinement()

    ctx.reporter.phase("profiling time", len(wanted), 3 * timing.RUNS * len(wanted))
    started = ctx.clock()
    tables = timing.run(
        {name: made for name, made in wanted.items() if not isinstance(made, str)},
        sandbox=box, confinement=confinement, clock=ctx.clock, deadline=deadline,
        estimates={n: timing.estimate_s(r) for n in wanted
                   if (r := _run_s(measured, by_name[n])) is not None})
    measured.profiling_s += ctx.clock() - started
    for name, table in tables.items():
        measured.profiles[name] = dataclasses.replace(measured.profiles[name], time=table)


def _run_s(measured: Measured, w: WorkloadConfig) -> float | None:
    """About how long one run of a workload takes, from its timed runs; None: unknown."""
    m = measured.measuring.get(w.name)
    if m is not None and m.timed_s and m.pairs:
        return m.timed_s / (m.pairs * (3 if m.design == "triplets" else 2))
    return None


# valgrind starting a harness (Go's test binary, a google-benchmark program) and running
# nothing: 0.34-0.38 s of CPU on the 2-core VM (benchmarks/README.md, section 18).
VALGRIND_START_S = 0.4


def _profile_s(measured: Measured, w: WorkloadConfig, *, parallel: bool) -> float | None:
    """About how long a workload's three profiled runs will take, from its runs so far: a
    counted run's seconds (valgrind's, as callgrind's) or a timed run's times the profiler's
    slowdown; None where neither is known."""
    from benchbot.profiles import profiling

    counts = measured.counts.get(w.name)
    made = len(counts.base) + len(counts.base_again) + len(counts.head) if counts else 0
    if counts is not None and counts.method == "valgrind" and counts.counted_s and made:
        per_run = counts.counted_s / (len(counts.runs) if counts.runs else made)
        # A benchmark counted in one process with the rest of its suite (suites.gbsplit)
        # holds a share of those processes, not a run of its own: its profiled run pays
        # valgrind's start of the harness, which the share does not.
        per_run = max(per_run, VALGRIND_START_S)
    elif (timed := _run_s(measured, w)) is not None:
        per_run = timed * profiling.SLOWDOWN
    else:
        return None
    return per_run * (1 if parallel else 3)


def _root_of(target: Target, w: WorkloadConfig) -> Path:
    """The arm's place (its worktree) that a workload's target runs in."""
    cwd = Path(target.cwd)
    depth = len(Path(w.cwd).parts) if w.cwd else 0
    return cwd.parents[depth - 1] if depth and depth <= len(cwd.parents) else cwd


def count_suites(ctx: Context, names: Sequence[str], figures: Mapping[str, Any],
                  measured: Measured, deadline: float) -> None:
    """The counted runs of the suites' benchmarks (suitecount), before any timed round."""
    from benchbot.suites import suitecount

    if not names:
        return

    def tick(name: str, done: int, planned: int) -> None:
        ctx.reporter.progress("counting", name, done, planned)

    setting = suitecount.Setting(
        config=ctx.config, base=ctx.base, head=ctx.head, harnesses=ctx.harnesses,
        figures=figures, spawner=ctx.spawner, env=ctx.env, means=means_of(ctx), clock=ctx.clock,
        progress=tick, again=ctx.again, seed=ctx.seed,  # the phase's line is said as runs are made
        phase=lambda benchmarks, runs: ctx.reporter.phase("counting", benchmarks, runs))
    counted = suitecount.count_all(setting, names, deadline=deadline)
    measured.counts.update(counted.counts)
    measured.suites = suitecount.recorded(measured.suites, counted)
    measured.counting_s += sum(s for _how, _runs, s in counted.suites.values())
