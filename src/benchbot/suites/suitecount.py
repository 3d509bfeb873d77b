"""The counted runs of a suite's benchmarks, made before their timed rounds.

For every benchmark of a suite whose harness can run a fixed amount of work
(``fixedwork.recipe``), five counted runs apart from the timed rounds: base and head, each at
``fixedwork.SMALL`` and at SMALL + n units of work (n from its discovery run,
``fixedwork.units_for``), and base again at SMALL + n. Each arm's count per unit is
(C(SMALL + n) - C(SMALL)) / n, base again's against base's small run; base against base
again is the counts' own A/A check. Where the first POOL_MIN benchmarks' A/A show a suite
whose counts do not move from one process to the next (``STEADY``: google-benchmark's), its
other benchmarks are counted without base again (four runs), their noise the suite's. The result is the benchmark's ``Counts``
(docs/verdict.md, "Counts per benchmark"), with every counted run and the seconds they
took. A counted run that fails, reports something else or did other work leaves the
benchmark uncounted, with the reason, and it is judged on time alone.

How a counted run is made is ``fixedwork``'s; this module decides which benchmarks are
counted, with which method, and in which order, and keeps the time it took.

Why one module of about 630 lines: one sequence, read top to bottom (the plan of a suite's
counted runs, the probe, fail-fast, reading the runs, the pooled A/A), whose steps share
the plan's records; apart, each step would import the others' private shapes.
"""

from __future__ import annotations

import itertools
import math
import random
import re
import statistics
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from benchbot.config.config import Config, WorkloadConfig
from benchbot.core.model import CountedRun, CountMethod, Counts, Misses, SuiteRecord
from benchbot.run.rounds import spawn_group
from benchbot.run.runner import Harness, Spawner, Target
from benchbot.sandbox import counting
from benchbot.sandbox.spawn import RawRun, SpawnRequest
from benchbot.suites import fixedwork, gbsplit
from benchbot.suites.listing import Figures
from benchbot.verdict import benchsignals, signals

# The counted runs of one benchmark, in the order made: (arm, 0 for the small run, 1 for
# the large). Base again has no small run of its own: its count per unit is taken against
# base's (the same build's start and setup; docs/suites.md, "What counting costs").
PLAN: tuple[tuple[str, int], ...] = (("base", 0), ("base", 1), ("head", 0), ("head", 1),
                                     ("base_again", 1))
# The plan of a steady suite's benchmarks after its first POOL_MIN: no base again.
PLAN_STEADY: tuple[tuple[str, int], ...] = PLAN[:4]
# Whose small run each arm's larger runs are taken against.
SMALL_OF = {"base": "base", "base_again": "base", "head": "head"}
# The arms counted a second time where the counts read a move (``_to_confirm``): a larger
# run each, against the small runs made.
CONFIRM = ("base_again", "head")
# A suite is steady where each of its first POOL_MIN benchmarks' A/A (base again's larger
# run less base's) differed by at most STEADY_RUN instructions, and by at most STEADY of the
# work (a third of signals.SAME_FLOOR: a noise that small never decides a reading). On the
# generated suites (benchmarks/README.md, section 17) google-benchmark's first five differed
# by 38-1,058 instructions (its timer, and base again's place, a copy at another path), Go's
# by 10,000-17,000 (its runtime), and a seeded map's by a percent of the work. Which side
# of it a suite falls on decides its cost only: a benchmark that varies by itself among a
# steady suite's reads a move from one pair, at the rate its spread gives, and is counted
# again as any other (docs/verdict.md, "Counts per benchmark").
STEADY_RUN = 2000
STEADY = 3e-4
# The processes counted per build where a benchmark's counts vary from one process to the
# next by themselves (``_to_sample``): enough that, for Go's map lookups (about 1% a
# process), the standard error of the difference of two builds' means stays near 0.3 points
# and an identical head's band (signals.SAMPLED_TIMES errors about its reading) mostly lies
# within a 2% parity (docs/verdict.md has the rates). Each further process is one larger run.
SAMPLES = 24
# Where the first sample straddles parity but twice as many processes would bring its band
# within it (its error over sqrt 2, its reading as it is), a second stage of this many:
# Go's map lookups at 1.5% a process then read the same in about 98 of 100.
SAMPLES_MORE = 48
PROBE_TIMEOUT_S = 30.0
# The benchmarks counted first; where every one of them fails the same way, no others are.
FAIL_FAST = 3
# The fewest counted benchmarks whose A/A the suite's pooled noise is taken from.
POOL_MIN = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class Setting:
    """What counting the suites' benchmarks needs from the comparison."""

    config: Config
    base: Mapping[str, Target]  # each suite's target under its name, each benchmark's too
    head: Mapping[str, Target]
    harnesses: Mapping[str, Harness]
    figures: Mapping[str, Figures]
    spawner: Spawner
    env: Mapping[str, str]
    means: counting.Means
    clock: Callable[[], float]
    progress: Callable[[str, int, int], None] | None = None  # (benchmark, runs done, planned)
    # The seam for whatever places a run elsewhere (another worktree, padding of its
    # environment): every counted run's request passes through it before it is made.
    place: Callable[[SpawnRequest], SpawnRequest] | None = None
    # Told before each batch of counted runs is made: (benchmarks, runs planned). Nothing is
    # told where none are made (counting off, a harness refused, the budget spent).
    phase: Callable[[int, int], None] | None = None
    # Where base again runs from, each suite's under its name (base's build in a place of
    # its own, which has a worker of its own in the sandbox); None: from base's place.
    again: Mapping[str, Target] | None = None
    seed: int = 0  # draws the benchmark a split suite also counts one by one (gbsplit)
    split: bool = True  # False: no split (gbsplit), each benchmark counted in its own runs


@dataclass(slots=True)
class Counted:
    """What counting made: each benchmark's Counts and each suite's record of it."""

    counts: dict[str, Counts]
    suites: dict[str, tuple[str, int, float]]  # suite: (how, counted runs, seconds)


def method(mode: str, recipe: fixedwork.Recipe, means: counting.Means) -> tuple[CountMethod | None, str]:
    """The counting method of a suite's benchmarks (their ``counts`` setting), and why."""
    perf, valgrind = means.perf_problem, means.valgrind_problem
    if mode == "off":
        return None, "off in the config"
    if mode in ("auto", "perf") and perf is None:
        return "perf", f"perf: the CPU's counters around counted runs ({recipe.how})"
    if mode == "perf":
        return None, f"perf was asked for, but {perf}"
    if valgrind is not None:
        return None, f"not counted: {perf}, and {valgrind}" if mode == "auto" else \
            f"valgrind was asked for, but {valgrind}"
    if mode == "auto" and not recipe.auto:
        return None, (f"not counted: {perf}, and a counted run of {recipe.fmt} starts slowly "
                      "under valgrind (tens of seconds: counts: valgrind asks for it anyway)")
    return "valgrind", f"valgrind: counted runs of {recipe.how}"


def count_all(setting: Setting, names: Sequence[str], *, deadline: float | None) -> Counted:
    """Count the suites' benchmarks named (module docstring), in the config's order."""
    by_name = {w.name: w for w in setting.config.workloads}
    members = [by_name[n] for n in names if by_name[n].suite is not None]
    out = Counted(counts={}, suites={})
    for suite in dict.fromkeys(w.suite for w in members if w.suite is not None):
        own = [w for w in members if w.suite == suite]
        out.suites[suite] = _suite(setting, suite, own, out.counts, deadline)
    return out


def _suite(setting: Setting, suite: str, own: Sequence[WorkloadConfig], into: dict[str, Counts],
           deadline: float | None) -> tuple[str, int, float]:
    """Count one suite's benchmarks; (the recipe in words, counted runs, seconds)."""
    how = setting.harnesses[suite]
    base, head = setting.base[suite], setting.head[suite]
    again = (setting.again or {}).get(suite, base)
    started = setting.clock()
    chosen = fixedwork.recipe(how.format, argv=base.argv, filter_=how.filter,
                              nx=how.format == "google-benchmark")
    if isinstance(chosen, fixedwork.Recipe) and any(
            method(w.counts, chosen, setting.means)[0] is not None for w in own):
        chosen = _probed(setting, chosen, own[0], base, head)
    if isinstance(chosen, str):
        for w in own:
            into[w.name] = Counts(method=None, why=f"not counted: {chosen}")
        return f"none: {chosen}", 0, setting.clock() - started
    made = [0]  # counted runs made, those that failed too

    def make(batch: Mapping[str, _Plan]) -> dict[str, dict[int, RawRun]]:
        if batch and setting.phase is not None and (deadline is None
                                                     or setting.clock() < deadline):
            setting.phase(sum(p.covers for p in batch.values()),
                          sum(len(p.requests) for p in batch.values()))
        raws = _made(setting, batch, deadline)
        made[0] += sum(len(r) for r in raws.values())
        return raws

    plans: dict[str, _Plan] = {}
    for w in own:
        planned = _plan(setting, w, chosen, base, head, again)
        if isinstance(planned, Counts):
            into[w.name] = planned
        else:
            plans[w.name] = planned
    split_note = None
    if chosen.fmt == "google-benchmark" and setting.split:
        split_note = _split_suite(setting, plans, chosen, into, make, deadline,
                                  {"base": base, "head": head, "base_again": again})
    # The first FAIL_FAST benchmarks first: where each of their counted runs failed the same
    # way (a harness that does not do what is asked of it), the others are not tried and
    # the budget goes to the timed rounds. Then up to POOL_MIN: where their A/A show a
    # steady suite, the others are counted without base again.
    names = [n for n in plans if n not in into]  # the split's check counted one already
    stopped = None
    bounds = (0, FAIL_FAST, max(FAIL_FAST, POOL_MIN), len(names))
    for i, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        stage = names[lo:hi]
        if not stage:
            continue
        if stopped is not None:
            for name in stage:
                into[name] = Counts(method=None, why=f"not counted: {stopped}")
            continue
        if i == 2 and steady([into[n] for n in names[:lo]]):
            for name in stage:  # a steady suite's: no base again (module docstring)
                plans[name] = replace(plans[name], requests=tuple(
                    r for r in plans[name].requests if r[:2] in PLAN_STEADY))
        staged = {name: plans[name] for name in stage}
        raws = make(staged)
        for name, plan in staged.items():
            into[name] = _counts(plan, raws.get(name, {}), chosen)
        if i == 0 and len(names) > FAIL_FAST:
            stopped = _failing_alike([(plans[n].bench, into[n]) for n in stage])
    if stopped is not None:
        plans = {name: plan for name, plan in plans.items() if name not in names[FAIL_FAST:]}
    _pool_noise(into, list(plans))
    parity = {w.name: w.parity for w in own}
    confirm = _to_confirm(into, plans, parity)
    if confirm:
        more = make(confirm)
        for name, plan in confirm.items():
            into[name] = _confirmed(into[name], plan, more.get(name, {}), chosen)
    for size in (SAMPLES, SAMPLES_MORE):
        sample = _to_sample(into, plans, parity, size)
        more = make(sample) if sample else {}
        for name, plan in sample.items():
            into[name] = _sampled(into[name], plan, more.get(name, {}), chosen, size)
    how_ = chosen.how if stopped is None else f"stopped: {stopped}"
    if split_note is not None:
        how_ = split_note if not plans else f"{split_note}; one by one: {how_}"
    return how_, made[0], setting.clock() - started


def _split_suite(setting: Setting, plans: dict[str, _Plan], recipe: fixedwork.Recipe,
                 into: dict[str, Counts],
                 make: Callable[[Mapping[str, _Plan]], dict[str, dict[int, RawRun]]],
                 deadline: float | None, places: Mapping[str, Target]) -> str | None:
    """Count a google-benchmark suite's benchmarks in one process per build
    (``gbsplit``; docs/suites.md, "One process per build"), with one benchmark, drawn by
    the seed, also counted as before as a check. Each benchmark split is taken out of
    ``plans`` with its Counts in ``into``; the others (their loops did not agree, or the
    split or its check failed for the suite) are left to be counted one by one, the
    check's benchmark among them with its Counts made already (and so confirmed like the
    others where they read a move). What was done, in words for the suite's line (None:
    not tried)."""
    names = [n for n, p in plans.items() if p.method == "valgrind"]
    if len(names) < gbsplit.SPLIT_MIN:
        return None
    first = next(w for w in setting.config.workloads if w.name == names[0])
    timeout = max(w.timeout_s for w in setting.config.workloads if w.name in names)
    runs: list[tuple[str, int, SpawnRequest]] = []
    chunks = [names[at:at + gbsplit.CHUNK] for at in range(0, len(names), gbsplit.CHUNK)]
    for arm in ("base", "head", "base_again"):
        where = places[arm]
        for chunk in chunks:
            asked = gbsplit.request(where.argv, str(where.cwd),
                                    {**setting.env, **dict(first.env)},
                                    selects=[plans[n].bench for n in chunk], timeout_s=timeout,
                                    pin=first.pin)
            runs.append((arm, 1, asked if setting.place is None else setting.place(asked)))
    drawn = random.Random(setting.seed).choice(sorted(names))
    key = "(all benchmarks, split)"  # no workload's name (a suite's have a "/")
    made = make({key: _Plan(method="valgrind", why="", n=gbsplit.REPETITIONS - 1,
                            bench=key, requests=tuple(runs), covers=len(names) - 1),
                 drawn: plans[drawn]})
    raws = made.get(key, {})
    seconds = sum(r.wall_ns for r in raws.values()) / 1e9
    into[drawn] = _counts(plans[drawn], made.get(drawn, {}), recipe)
    split_by: dict[str, dict[str, gbsplit.Span]] = {}
    problem = None
    for i, (arm, _, _) in enumerate(runs):
        raw = raws.get(i)
        got = "was not made: the budget was spent" if raw is None else gbsplit.split(raw)
        if isinstance(got, str):
            problem = f"the {arm.replace('_', ' ')} build's run {got}"
            break
        split_by.setdefault(arm, {}).update(got)
    if problem is None:
        missing = [n for n in names if any(plans[n].bench not in split_by[a] for a in split_by)]
        if missing:
            problem = f"its runs did not report {plans[missing[0]].bench}"
    if problem is not None:
        return f"not split ({problem})"
    spans = {n: {arm: split_by[arm][_bench_of(setting, n)] for arm in split_by} for n in names}
    agreed = [n for n in names if all(s.agree for s in spans[n].values())]
    if drawn not in agreed:  # the check needs another benchmark, counted as before
        others = sorted(agreed)
        if not others:
            return "not split (no benchmark's loops did the same work each repetition)"
        drawn = random.Random(setting.seed + 1).choice(others)
        more = make({drawn: plans[drawn]})
        into[drawn] = _counts(plans[drawn], more.get(drawn, {}), recipe)
    checked = into[drawn]
    if checked.method is None or not checked.base or not checked.base_again or not checked.head:
        return (f"not split ({_bench_of(setting, drawn)}, counted one by one as a check, "
                f"has no count: {checked.why})")
    disagree = gbsplit.check({a: s.per_call for a, s in spans[drawn].items()},
                             {"base": checked.base[0], "base_again": checked.base_again[0],
                              "head": checked.head[0]})
    if disagree is not None:
        return (f"not split ({_bench_of(setting, drawn)}: its split and its own runs "
                f"disagree, {disagree})")
    share = round(seconds / max(1, len(agreed)), 3)
    for n in agreed:  # the check's benchmark too: counted as the others are
        per = spans[n]
        lls = {a: s.ll_per_call for a, s in per.items()}
        into[n] = Counts(
            method="valgrind", why=f"valgrind: {gbsplit.HOW}", unit="call", exact=False, units=gbsplit.REPETITIONS - 1, base=(per["base"].per_call,),
            base_again=(per["base_again"].per_call,), head=(per["head"].per_call,),
            runs=tuple(CountedRun(arm=a, units=gbsplit.REPETITIONS - 1,
                                  instructions=round(per[a].per_call * (gbsplit.REPETITIONS - 1)),
                                  seconds=share,
                                  ll_misses=None if lls[a] is None
                                  else round((lls[a] or 0) * (gbsplit.REPETITIONS - 1)))
                       for a in ("base", "head", "base_again")),
            counted_s=share,
            misses=None if None in lls.values() else signals.new_misses(
                counting.CACHE_WORDS, base=(lls["base"] or 0.0,),
                base_again=(lls["base_again"] or 0.0,), head=(lls["head"] or 0.0,)))
        plans.pop(n, None)
    _pool_noise(into, agreed)
    rest = len(names) - len(agreed)
    return (f"split: {len(agreed)} of {len(names)} benchmarks counted in "
            f"{gbsplit.HOW}, {len(runs)} processes ({seconds:.1f} s of runs); "
            f"{_bench_of(setting, drawn)} "
            "also counted one by one as a check, and agreed"
            + (f"; {rest} whose loops did not do the same work each repetition counted one "
               "by one" if rest else ""))


def _bench_of(setting: Setting, name: str) -> str:
    w = next(w for w in setting.config.workloads if w.name == name)
    return w.bench or w.name


def steady(first: Sequence[Counts]) -> bool:
    """Whether a suite's counts do not move from one process to the next by themselves:
    POOL_MIN of its benchmarks counted, each one's base again within STEADY_RUN
    instructions and STEADY of its base."""
    return len(first) >= POOL_MIN and all(
        c.method is not None and c.base and c.base_again and c.units
        and abs(c.base_again[0] - c.base[0]) * c.units <= STEADY_RUN
        and abs(c.base_again[0] / c.base[0] - 1.0) <= STEADY for c in first)


def _failing_alike(first: Sequence[tuple[str, Counts]]) -> str | None:
    """Why counting a suite stops after its first benchmarks, or None: each of them was left
    uncounted by a counted run that failed, and for the same reason (told apart by its
    words, with the benchmark's name and every number left out)."""
    prefix = "not counted: the counted "
    shapes = set()
    for bench, c in first:
        if c.method is not None or not (c.why or "").startswith(prefix):
            return None
        shapes.add(re.sub(r"\d+", "#", (c.why or "").replace(bench, "<bench>")))
    if len(shapes) != 1:
        return None
    # Their names, not their failure: each of them says that (its own note), and a report
    # that quoted it here too would show the same line of the harness's stderr twice.
    return (f"the counted runs of the first {len(first)} benchmarks "
            f"({', '.join(bench for bench, _ in first)}) all failed the same way, so no "
            "others were counted")


@dataclass(frozen=True, slots=True)
class _Plan:
    """One benchmark's counted runs, planned: its method, n, and each run's request."""

    method: CountMethod
    why: str
    n: int
    bench: str
    requests: tuple[tuple[str, int, SpawnRequest], ...]  # (arm, size, request) in PLAN order
    # The larger runs of CONFIRM's arms: what counts them a second time (``_to_confirm``).
    confirm: tuple[tuple[str, int, SpawnRequest], ...] = ()
    covers: int = 1  # the benchmarks its runs count (a split's: the suite's, gbsplit)


def _plan(setting: Setting, w: WorkloadConfig, recipe: fixedwork.Recipe, base: Target,
          head: Target, again: Target) -> _Plan | Counts:
    chosen, why = method(w.counts, recipe, setting.means)
    if chosen is None:
        return Counts(method=None, why=why)
    figures = setting.figures.get(w.name)
    if figures is None or figures.ns is None:
        return Counts(method=None, why="not counted: its discovery run reported no time per "
                                       "iteration to plan the counted runs from")
    n = fixedwork.units_for(figures.ns, chosen, bytes_per_unit=figures.bytes_op, fmt=recipe.fmt)
    places = {"base": base, "head": head, "base_again": again}
    requests = tuple((arm, size, _request(setting, w, recipe, places[arm], _units(size, n),
                                          figures.index, chosen)) for arm, size in PLAN)
    return _Plan(method=chosen, why=why, n=n, bench=w.bench or w.name, requests=requests,
                 confirm=tuple(next(r for r in requests if r[:2] == (arm, 1)) for arm in CONFIRM))


def _units(size: int, n: int) -> int:
    """The units of a PLAN run: the small size, or the small size and n more."""
    return fixedwork.SMALL + size * n


def _made(setting: Setting, plans: Mapping[str, _Plan], deadline: float | None
          ) -> dict[str, dict[int, RawRun]]:
    """Every planned counted run made, by benchmark and its place in the plan's requests
    (``_keyed``: by arm and size, where each is made once). The runs of each place (base's
    worktree, head's, and base again's copy where it has one) are made by that place's
    worker, all places at once, where the spawner has one worker per place (a counted run's
    time is no measurement, so they may share the machine); elsewhere one after the other.
    A benchmark not started before ``deadline`` gets none."""
    places = list(dict.fromkeys(r.cwd for plan in plans.values() for _, _, r in plan.requests))
    streams = {cwd: [(name, [(i, r) for i, (_, _, r) in enumerate(plan.requests) if r.cwd == cwd])
                     for name, plan in plans.items()] for cwd in places}
    out: dict[str, dict[int, RawRun]] = {name: {} for name in plans}
    planned = sum(len(plan.requests) for plan in plans.values())
    done = [0]
    lock = threading.Lock()

    def run(stream: Sequence[tuple[str, list[tuple[int, SpawnRequest]]]]) -> None:
        for name, runs in stream:
            if deadline is not None and setting.clock() >= deadline:
                return
            raws = spawn_group(setting.spawner, [r for _, r in runs], name)
            with lock:
                out[name].update({i: raw for (i, _), raw in zip(runs, raws, strict=False)})
                done[0] += len(raws)
                if setting.progress is not None:
                    setting.progress(name, done[0], planned)

    if in_parallel(setting.spawner):
        threads = [threading.Thread(target=run, args=([s for s in stream if s[1]],),
                                    name=f"benchbot-count-{k}")
                   for k, stream in enumerate(streams.values())]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    else:
        run([(name, [(i, r) for i, (_, _, r) in enumerate(plan.requests)])
             for name, plan in plans.items()])
    return out


def _keyed(plan: _Plan, raws: Mapping[int, RawRun]) -> dict[tuple[str, int], RawRun]:
    """A plan's runs made, by (arm, size): for plans that make each of those once."""
    return {(arm, size): raws[i] for i, (arm, size, _) in enumerate(plan.requests) if i in raws}


def in_parallel(spawner: Spawner) -> bool:
    """Whether the spawner makes base's runs and head's in workers of their own, which two
    threads may drive at once (the sandbox's: one worker per worktree, each its own pipes)."""
    from benchbot.sandbox import bwrap

    return isinstance(spawner, bwrap.WorkerSpawner)


def _counts(plan: _Plan, made: Mapping[int, RawRun], recipe: fixedwork.Recipe) -> Counts:
    """One benchmark's Counts from its counted runs (or why it has none)."""
    n = plan.n
    raws = _keyed(plan, made)
    seconds = round(sum(r.wall_ns for r in raws.values()) / 1e9, 3)
    runs: list[CountedRun] = []
    for arm, size, _request in plan.requests:
        raw = raws.get((arm, size))
        if raw is None:
            why = ("the budget was spent before its counted runs" if not raws
                   else "its counted runs stopped short")
            return Counts(method=None, counted_s=seconds or None, why=f"not counted: {why}")
        instructions, problem = fixedwork.check(raw, recipe=recipe, bench=plan.bench,
                                                n=_units(size, n))
        if instructions is None:
            side = "head" if arm == "head" else "base"
            return Counts(method=None, counted_s=seconds,
                          why=f"not counted: the counted {side} run ({_units(size, n)} {recipe.unit}s) "
                              f"{problem}")
        runs.append(CountedRun(arm=arm, units=_units(size, n), instructions=instructions,  # type: ignore[arg-type]
                               seconds=round(raw.wall_ns / 1e9, 3), ll_misses=raw.ll_misses))
    at: dict[tuple[str, int], CountedRun] = {(r.arm, r.units): r for r in runs}
    small = fixedwork.SMALL
    per = {arm: fixedwork.per_unit(at[SMALL_OF[arm], small].instructions,
                                   at[arm, _units(1, n)].instructions, n)
           for arm, size, _ in plan.requests if size == 1}
    if any(v is None for v in per.values()):
        return Counts(method=None, counted_s=seconds, runs=tuple(runs),
                      why=f"not counted: a run of {_units(1, n)} {recipe.unit}s counted no "
                          f"more instructions than one of {fixedwork.SMALL}")
    again = (per["base_again"],) if "base_again" in per else ()
    return Counts(method=plan.method, why=plan.why, unit=recipe.unit, exact=recipe.exact,  # type: ignore[arg-type]
                  units=n, base=(per["base"],), base_again=again,  # type: ignore[arg-type]
                  head=(per["head"],), runs=tuple(runs), counted_s=seconds,  # type: ignore[arg-type]
                  misses=_misses_per_unit(plan.method, runs, n))


def _misses_per_unit(method: CountMethod, runs: Sequence[CountedRun], n: int) -> Misses | None:
    """The last-level misses per unit of each arm, (M(SMALL + n) - M(SMALL)) / n from the
    plan's runs, each larger run's against its build's small run (any sign: a benchmark
    whose data stays in the cache misses no more in the larger run, and the difference is
    then noise about 0); None where a run has none."""
    if any(r.ll_misses is None for r in runs):
        return None
    at: dict[tuple[str, int], int] = {(r.arm, r.units): r.ll_misses or 0 for r in runs}
    per = {r.arm: (at[r.arm, r.units] - at[SMALL_OF[r.arm], fixedwork.SMALL]) / n
           for r in runs if r.units == _units(1, n)}
    return signals.new_misses(
        counting.CACHE_WORDS if method == "valgrind" else counting.PERF_MISSES_WORDS,
        base=(per["base"],), base_again=(per["base_again"],) if "base_again" in per else (),
        head=(per["head"],))


def _to_confirm(counts: Mapping[str, Counts], plans: Mapping[str, _Plan],
                parity: Mapping[str, float]) -> dict[str, _Plan]:
    """The benchmarks whose counts read a move (by parity or less; the instructions, or the
    work with the misses in it), each with the runs that count base again and head again: a move read from one process of each build is not
    yet the work's, where a benchmark's count varies from process to process by itself
    (Go's maps, seeded at each start, move 1-3%; docs/verdict.md). A second pair shows it."""
    out = {}
    for name, plan in plans.items():
        c = counts[name]
        if c.method is None:
            continue
        read = signals.read_counts(c, {}, parity=parity[name])
        moved = ("up", "down", "small")
        if read.reading in moved or signals.misses_to_confirm(read.misses, parity[name]):
            # (or the work with the misses in it moved: a move of one process pair's misses
            # is not yet the work's either, and it would keep the benchmark from a level)
            out[name] = replace(plan, requests=plan.confirm)
    return out


def _confirmed(c: Counts, plan: _Plan, made: Mapping[int, RawRun],
               recipe: fixedwork.Recipe) -> Counts:
    """``c`` with the second count of base again and of head (a larger run each, against
    its build's small run made already); without them (failed, or the budget ran out),
    uncounted: a move read once is not one to judge by."""
    runs = list(c.runs or ())
    small: dict[tuple[str, int], CountedRun] = {(r.arm, r.units): r for r in runs
                                                if r.units == fixedwork.SMALL}
    raws = _keyed(plan, made)
    per: dict[str, float] = {}
    misses: dict[str, float | None] = {}
    for arm in CONFIRM:
        raw = raws.get((arm, 1))
        instructions, problem = (None, "was not made: the budget was spent") \
            if raw is None else fixedwork.check(raw, recipe=recipe, bench=plan.bench,
                                                n=_units(1, plan.n))
        if instructions is None or raw is None:
            return replace(c, method=None, runs=tuple(runs),
                           why=f"not counted: its counts read a move, and the run that "
                               f"counts {arm.replace('_', ' ')} a second time {problem}")
        first = small[SMALL_OF[arm], fixedwork.SMALL]
        got = [first.instructions, instructions]
        lls = [first.ll_misses, raw.ll_misses]
        runs.append(CountedRun(arm=arm, units=_units(1, plan.n),  # type: ignore[arg-type]
                               instructions=instructions, seconds=round(raw.wall_ns / 1e9, 3),
                               ll_misses=raw.ll_misses))
        unit = fixedwork.per_unit(got[0], got[1], plan.n)
        if unit is None:
            return replace(c, method=None, runs=tuple(runs),
                           why="not counted: a second count read no more instructions for "
                               f"{_units(1, plan.n)} {recipe.unit}s than for {fixedwork.SMALL}")
        per[arm] = unit
        misses[arm] = None if None in lls else ((lls[1] or 0) - (lls[0] or 0)) / plan.n
    seconds = round(sum(r.wall_ns for r in raws.values()) / 1e9, 3)
    m = c.misses
    if m is not None:  # the misses counted again with them, or none where these runs had none
        m = None if None in misses.values() else replace(
            m, base_again=(*m.base_again, misses["base_again"] or 0.0),
            head=(*m.head, misses["head"] or 0.0))
    return replace(c, base_again=(*c.base_again, per["base_again"]), head=(*c.head, per["head"]),
                   runs=tuple(runs), counted_s=round((c.counted_s or 0.0) + seconds, 3),
                   misses=m)


def _to_sample(counts: Mapping[str, Counts], plans: Mapping[str, _Plan],
               parity: Mapping[str, float], size: int) -> dict[str, _Plan]:
    """The benchmarks whose counts vary from one process to the next by themselves (they
    read ``unsteady``, or the same with a band too wide to settle anything:
    ``benchsignals.too_wide``), each with the larger runs that bring each build to ``size``
    processes: their counts are then two samples, compared by their means
    (``signals.read_counts``; docs/verdict.md, "Counts that vary by themselves"). A
    benchmark sampled already is sampled further only where the larger sample could read
    the same: its reading within parity by SAMPLED_TIMES of the errors it would have."""
    out = {}
    for name, plan in plans.items():
        c = counts[name]
        if c.method is None:
            continue
        read = signals.read_counts(c, {}, parity=parity[name])
        if not (read.reading == "unsteady" or benchsignals.too_wide(read, parity[name])) or (
                (c.samples or 0) >= size) or (
                size > SAMPLES and c.samples is None):  # the first stage was not made
            continue
        if c.samples is not None and read.ratio is not None and (
                abs(math.log(read.ratio)) + signals.SAMPLED_TIMES * (read.noise or 0.0)
                * math.sqrt(c.samples / size) > math.log1p(parity[name])):
            continue
        large = {arm: next(r for a, z, r in plan.requests if a == arm and z == 1)
                 for arm in ("base", "head")}
        more = {"base": size - len(c.base) - len(c.base_again), "head": size - len(c.head)}
        out[name] = replace(plan, requests=tuple((arm, 1, large[arm]) for arm in ("base", "head")
                                                 for _ in range(max(0, more[arm]))))
    return out


def _sampled(c: Counts, plan: _Plan, made: Mapping[int, RawRun],
             recipe: fixedwork.Recipe, samples: int) -> Counts:
    """``c`` with each further process's count per unit: its larger run less the mean of
    its build's smaller runs already made (the small run's count is the harness's start and
    the benchmark's setup, which vary far less than the loop). Runs that were not made (the
    budget) leave the benchmark as it was; it is judged on time alone, and says so."""
    runs = list(c.runs or ())
    small = {side: statistics.fmean(r.instructions for r in runs if r.units == fixedwork.SMALL
                                    and (r.arm == "head") == (side == "head"))
             for side in ("base", "head")}
    small_ll = {side: [r.ll_misses for r in runs if r.units == fixedwork.SMALL
                       and (r.arm == "head") == (side == "head")] for side in ("base", "head")}
    per: dict[str, list[float]] = {"base": [], "head": []}
    per_ll: dict[str, list[float]] = {"base": [], "head": []}
    for i, (arm, size, _) in enumerate(plan.requests):
        raw = made.get(i)
        units = _units(size, plan.n)
        instructions = None if raw is None else \
            fixedwork.check(raw, recipe=recipe, bench=plan.bench, n=units)[0]
        if instructions is None or raw is None:  # unsteady still: judged on time alone
            return replace(c, runs=tuple(runs))
        runs.append(CountedRun(arm=arm, units=units, instructions=instructions,  # type: ignore[arg-type]
                               seconds=round(raw.wall_ns / 1e9, 3), ll_misses=raw.ll_misses))
        unit = (instructions - small[arm]) / plan.n
        if unit <= 0:
            return replace(c, runs=tuple(runs))
        per[arm].append(unit)
        lls = small_ll[arm]
        if raw.ll_misses is not None and lls and None not in lls:
            per_ll[arm].append((raw.ll_misses - statistics.fmean(v or 0 for v in lls)) / plan.n)
    seconds = round(sum(r.wall_ns for r in made.values()) / 1e9, 3)
    m = c.misses
    if m is not None:  # each process's misses per unit as its instructions', else none
        whole = all(len(per_ll[a]) == len(per[a]) for a in per)
        m = replace(m, base=(*m.base, *per_ll["base"]), head=(*m.head, *per_ll["head"])) \
            if whole else None
    return replace(c, base=(*c.base, *per["base"]), head=(*c.head, *per["head"]),
                   runs=tuple(runs), counted_s=round((c.counted_s or 0.0) + seconds, 3),
                   samples=samples, misses=m)


def _pool_noise(counts: dict[str, Counts], names: Sequence[str]) -> None:
    """Each counted benchmark's pooled noise (Counts.pooled_noise): how far one per-unit
    count varies, from the A/A of all the suite's benchmarks together. A counted run's
    count moves by the harness's own noise (a runtime's timers and collector, the clock),
    about the same number of instructions in every benchmark's runs; one benchmark's own
    A/A is one difference, too few to tell that spread, while the suite's are many.
    With d = n (base again - base) per benchmark (base again's larger run less base's, both
    against base's small run: the difference of two runs, 2 sigma^2), sigma = median |d| /
    (sqrt(2) x 0.6745), and a per-unit count's relative spread (two runs) is
    sqrt(2) sigma / (n x its count)."""
    spreads = []
    for name in names:
        c = counts[name]
        if c.method is not None and c.units and c.base and c.base_again:
            spreads.append(abs(c.base_again[0] - c.base[0]) * c.units)
    if len(spreads) < POOL_MIN:
        return
    sigma = statistics.median(spreads) / (math.sqrt(2) * 0.6745)
    for name in names:
        c = counts[name]
        if c.method is not None and c.units and c.base and c.base[0] > 0:
            counts[name] = replace(c, pooled_noise=math.sqrt(2) * sigma / (c.units * c.base[0]))
    _pool_work_noise(counts, names)


def _pool_work_noise(counts: dict[str, Counts], names: Sequence[str]) -> None:
    """The pooled noise of the work with the misses in it (Misses.pooled_noise at the high
    weight, Misses.low's at the low one), as ``_pool_noise`` takes the instructions': the
    misses of a counted run move by the harness's own noise too (its collector touching
    memory), and one benchmark's A/A is one difference. Only where the suite's benchmarks
    counted misses, POOL_MIN of them."""
    counted = {n: (c, c.misses) for n in names
               if (c := counts[n]).method is not None and c.units and c.misses is not None
               and c.base and c.misses.base}

    def pooled(low: bool) -> dict[str, float]:
        def work(c: Counts, m: Misses, again: bool) -> float:
            weight = m.low.weight if low and m.low is not None else m.weight
            return (c.base_again if again else c.base)[0] + weight * (
                m.base_again if again else m.base)[0]
        spreads = [abs(work(c, m, True) - work(c, m, False)) * (c.units or 0)
                   for c, m in counted.values() if c.base_again and m.base_again]
        if len(spreads) < POOL_MIN:
            return {}
        sigma = statistics.median(spreads) / (math.sqrt(2) * 0.6745)
        return {n: math.sqrt(2) * sigma / ((c.units or 1) * work(c, m, False))
                for n, (c, m) in counted.items() if work(c, m, False) > 0}

    high, low = pooled(False), pooled(True)
    for name, (c, m) in counted.items():
        if name in high:
            counts[name] = replace(c, misses=replace(
                m, pooled_noise=high[name],
                low=replace(m.low, pooled_noise=low[name]) if m.low is not None
                and name in low else m.low))


def _probed(setting: Setting, recipe: fixedwork.Recipe, w: WorkloadConfig, base: Target,
            head: Target) -> fixedwork.Recipe | str:
    """The recipe both builds' harnesses follow, told by what a probe run of one benchmark
    did (``fixedwork.probe``: ``SMALL`` units asked for, not counted, seconds), or why the
    suite cannot be counted, in one sentence. google-benchmark: an iteration count (1.8 and
    later), else ``SMALL`` calls of one iteration (1.7, which both take); where only one
    build takes the count (a change of the library), both are counted by calls."""
    candidates = (fixedwork.GB_NX, fixedwork.GB_CALLS) if recipe.fmt == "google-benchmark" \
        else (recipe,)
    how = setting.harnesses[w.suite or ""]
    figures = setting.figures.get(w.name)
    bench = w.bench or w.name
    refused: list[str] = []
    for candidate in candidates:
        problem = None
        for side, tgt in (("base", base), ("head", head)):
            made = fixedwork.probe(tgt.argv, str(tgt.cwd), {**setting.env, **dict(w.env)},
                                   recipe=candidate, bench=bench,
                                   select=w.select or bench, task=figures.index if figures else 0,
                                   filter_=how.filter, timeout_s=PROBE_TIMEOUT_S)
            raw = setting.spawner.spawn(made if setting.place is None else setting.place(made))
            problem = fixedwork.did_as_asked(raw, recipe=candidate, bench=bench,
                                             n=fixedwork.SMALL)
            if problem is not None:
                refused.append(f"asked for {fixedwork.SMALL} {candidate.unit}s of {bench} "
                               f"({candidate.how}), the {side} build's run {problem}")
                break
        if problem is None:
            return candidate
    return ("the harness does not run a fixed amount of work when asked: "
            + "; and ".join(refused))


def _request(setting: Setting, w: WorkloadConfig, recipe: fixedwork.Recipe, tgt: Target,
             units: int, index: int, chosen: str) -> SpawnRequest:
    how = setting.harnesses[w.suite or ""]
    made = fixedwork.request(tgt.argv, str(tgt.cwd), {**setting.env, **dict(w.env)},
                             recipe=recipe, bench=w.bench or w.name,
                             select=w.select or w.bench or w.name, n=units, task=index,
                             filter_=how.filter, timeout_s=w.timeout_s, method=chosen,
                             pin=w.pin)
    return made if setting.place is None else setting.place(made)


def recorded(records: Sequence[SuiteRecord], counted: Counted) -> tuple[SuiteRecord, ...]:
    """The suites' records with what counting their benchmarks took."""
    return tuple(replace(r, counting=counted.suites[r.name][0],
                         counted_runs=counted.suites[r.name][1],
                         counting_s=round(counted.suites[r.name][2], 3))
                 if r.name in counted.suites else r for r in records)
