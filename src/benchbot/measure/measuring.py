"""The two ways a workload is measured, as the engine runs them; ``judge`` decides.

- **Fixed** (``runs`` given, in the config or as ``--runs`` / ``/bench runs=N``): the A/A
  phase, the A/B phase for the workloads still comparable, and a confirmation phase for
  the standouts, ``runs`` pairs each (docs/verdict.md).
- **Sequential** (the default): rounds of triplets (base, base again, head) for every
  workload still measuring, judged at a fixed schedule of looks until each is settled,
  cannot be helped by more runs, reaches ``max_runs``, or the budget is spent
  (``sequential``). While the budget cannot carry every workload to a decision, the
  rounds go to a change not yet confirmed first, then to the workloads nearest to one;
  while a change waits, a workload whose median reads no change and that the budget could
  not settle anyway waits too. A round is priced at the pace its runs take (a suite's
  harness by the benchmarks a run serves: ``rounds.HarnessPace``).
  A change called at n pairs, and a program's level settled at n, is measured on to
  ``sequential.estimate_pairs(n)``, then as ``sequential.estimate_until`` says, for its
  estimate alone (its verdict judged on the first n: ``Measured.called``), after every
  workload not yet settled.

Why one module of about 650 lines: both designs and the sequential loop's budget share the
same records (``Measured``) and are read in the order a comparison runs them; the budget's
pricing and admission are the loop's own state, split off they would reach back into it.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Mapping, Sequence, Set
from typing import Any

from benchbot.config.config import WorkloadConfig
from benchbot.core.model import (
    Counts,
    Measuring,
    Verdict,
)
from benchbot.measure.context import (
    ETA_INTERVAL_S,
    PENDING_LOOKS_AHEAD,
    PER_RUN_OVERHEAD_S,
    PROFILE_RESERVE,
    Context,
    Measured,
)
from benchbot.measure.counted import (
    count_apart,
    count_suites,
    means_of,
    measure_instructions,
    perf_counted,
    perf_counts,
    profile_called,
)
from benchbot.profiles import profiling
from benchbot.run.rounds import (
    Tracked,
    Triplets,
    fallback_reason,
    planned_runs,
    run_phase,
)
from benchbot.run.runner import BATCH_S, Target, request
from benchbot.sandbox.spawn import SpawnRequest
from benchbot.verdict import sequential
from benchbot.verdict.judge import CALLS, Judgement

# --- instruction counts (docs/verdict.md, "A second signal") -----------------------------


def _warmup(ctx: Context, w: WorkloadConfig, tgt: Target) -> SpawnRequest:
    return request(tgt, w, ctx.env)


def measure_fixed(ctx: Context, names: Sequence[str], measured: Measured) -> None:
    """A/A, then A/B for the workloads still comparable, then the standouts confirmed."""
    config, by_name = ctx.config, {w.name: w for w in ctx.config.workloads}
    expected: dict[str, str] = {}
    warm: set[tuple[str, str]] = set()
    perf = perf_counted(ctx, [by_name[n] for n in names])
    perf_state = {n: Tracked() for n in perf}  # what the phases' runs said of their counts
    # Before the A/A phase: each build's warm-ups (timed, for counts: auto), then the
    # counted runs apart where valgrind counts.
    for name in names:
        if by_name[name].suite is not None:  # counted as a suite: not at all
            continue
        _warm_again(ctx, by_name[name], measured, warm, config.aa.enabled)
        if name in perf or by_name[name].counts == "off":
            if name not in perf:
                count_apart(ctx, by_name[name], None, measured)
            continue
        w = by_name[name]
        start = ctx.clock()
        runs = [ctx.spawner.spawn(_warmup(ctx, w, tgt))
                for _ in range(max(1, w.warmup)) for tgt in (ctx.base[name], ctx.head[name])]
        warm.update((("base", name), ("head", name)))
        if any(run.failed for run in runs):  # the measured runs will say what it did
            measured.counts[name] = Counts(method=None, why="not counted: a warm-up run failed")
            continue
        count_apart(ctx, w, (ctx.clock() - start) / max(1, len(runs)), measured)

    def phase(name: str, among: Sequence[str], cand: Mapping[str, Target], keys: tuple[str, str],
              phase_seed: int, runs: int | None = None) -> Judgement:
        configs = [dataclasses.replace(by_name[n], runs=runs or by_name[n].runs) for n in among]
        ctx.reporter.phase(name, len(configs), planned_runs(configs, warm=warm, arm_keys=keys))
        results = run_phase(
            configs, ctx.base, cand, spawner=ctx.spawner, env=ctx.env, seed=phase_seed,
            warm=warm, arm_keys=keys, expected=expected,
            progress=lambda wl, done, total: ctx.reporter.progress(name, wl, done, total),
            perf=perf, harnesses=ctx.harnesses,
        )
        for w in configs:
            measured.phases[w.name][name] = results[w.name].recorded(name, w)
            measured.timed_s[w.name] = measured.timed_s.get(w.name, 0.0) + results[w.name].timed_s
            if w.name in perf:
                state, made = perf_state[w.name], results[w.name]
                state.count_error = state.count_error or made.count_error
                state.counts_scaled |= made.counts_scaled
                measured.counts[w.name] = perf_counts(ctx, w, state, measured.phases[w.name])
            if results[w.name].expected is not None:
                expected.setdefault(w.name, results[w.name].expected)  # type: ignore[arg-type]
        return _among(ctx.judged(measured), names, abort=ctx.policy.abort)

    judgement = _among(ctx.judged(measured), names, abort=ctx.policy.abort)
    if config.aa.enabled:
        again = {n: ctx.again_of(n) for n in names}
        judgement = phase("aa", names, again, ("base", "again"), ctx.seed, runs=config.aa.runs)
    if not judgement.aborted:
        judgement = phase("ab", judgement.comparable, ctx.head, ("base", "head"), ctx.seed + 1)
        if judgement.standouts:
            phase("confirm", judgement.standouts, ctx.head, ("base", "head"), ctx.seed + 2)
    for name in names:
        phases = measured.phases[name]
        pairs = sum(len(phases[p].order) // 2 for p in ("ab", "confirm") if p in phases)
        measured.measuring[name] = Measuring(design="pairs", pairs=pairs, stopped="fixed",
                                             why=sequential.WHY["fixed"],
                                             **_seconds(measured, name))


def _warm_again(ctx: Context, w: WorkloadConfig, measured: Measured,
                warm: set[tuple[str, str]], aa: bool) -> None:
    """Base again's own place warmed up before the A/A phase (a fresh copy's first run is
    never kept); where a run from it fails and base's does not, base again runs from
    base's place (``Context.fall_back``)."""
    if not aa or ctx.again_of(w.name) == ctx.base[w.name]:
        warm.add(("again", w.name))  # base's place: base's warm-ups warm it
        return
    for _ in range(max(1, w.warmup)):
        raw = ctx.spawner.spawn(_warmup(ctx, w, ctx.again_of(w.name)))
        if raw.failed:
            if not ctx.spawner.spawn(_warmup(ctx, w, ctx.base[w.name])).failed:
                ctx.fall_back(w.name, fallback_reason(raw), measured)
            break
    warm.add(("again", w.name))


def _among(judgement: Judgement, names: Sequence[str], *, abort: bool) -> Judgement:
    """The judgement as far as it concerns ``names`` (the fixed group's own A/A rule)."""
    keep = set(names)
    failed = tuple(n for n in judgement.aa.failed if n in keep)
    comparable = tuple(n for n in judgement.comparable if n in keep)
    aborted = (abort and bool(comparable)
               and len(failed) > judgement.aa.abort_fraction * len(comparable))
    return dataclasses.replace(
        judgement, comparable=comparable,
        standouts=tuple(n for n in judgement.standouts if n in keep),
        aa=dataclasses.replace(judgement.aa, failed=failed, aborted=aborted),
    )


class Sequential:
    """Rounds of triplets until every workload stops (module docstring)."""

    def __init__(self, ctx: Context, names: Sequence[str], measured: Measured, *,
                 deadline: float, reserve_s: float = 0.0) -> None:
        self.ctx, self.names, self.measured = ctx, list(names), measured
        self._deadline, self._reserve_s = deadline, reserve_s
        self.by_name = {w.name: w for w in ctx.config.workloads}
        self._profilable = {n for n in names if self._could_profile(n)}
        self.perf = perf_counted(ctx, [self.by_name[n] for n in names])
        self.triplets = Triplets([self.by_name[n] for n in names], ctx.base, ctx.head,
                                 spawner=ctx.spawner, env=ctx.env, seed=ctx.seed + 3,
                                 perf=self.perf, harnesses=ctx.harnesses,
                                 again={n: ctx.again_of(n) for n in names})
        self.schedule = {n: sequential.looks(self.by_name[n].max_runs) for n in names}
        self.done_looks = dict.fromkeys(names, 0)
        self.stopped: dict[str, sequential.StopReason] = {}
        # A change called: measured on to this many pairs for the estimate alone, after the
        # workloads not yet settled (sequential.estimate_pairs).
        self.estimating: dict[str, int] = {}
        self.verdicts: dict[str, Verdict | None] = dict.fromkeys(names)
        self.warmup_s: dict[str, float] = {}
        self._triplet_cache: dict[str, tuple[int, float]] = {}  # name: (pairs, seconds)
        self._per_run = (float("-inf"), 0.0)  # (when, seconds a run) for the progress
        self._reach_noted = False  # the note on the pairs the budget reaches, said once
        self._aside_noted: set[str] = set()  # workloads set aside for a pending change, said

    @property
    def deadline(self) -> float:
        """When measuring ends: ``reserve_s`` before the budget's deadline once a change is
        called (or every workload is to be profiled), so that the profiled runs have that
        time; the whole budget while nothing is called, or nothing called could be profiled
        (a suite's benchmark without counted runs, as pytest-benchmark's are by default:
        the live suite's budget lost a tenth, 62 s of 600, to profiles never made)."""
        if self._reserve_s and not self._profilable.isdisjoint(
                self.names if self.ctx.config.profile == "all" else self.measured.called):
            return self._deadline - self._reserve_s
        return self._deadline

    def _could_profile(self, name: str) -> bool:
        """A call of it could be profiled (``profiling.why_not``; a suite's counts are
        known before its rounds start)."""
        w = self.by_name[name]
        how = self.ctx.harnesses.get(w.suite) if w.suite is not None else None
        return profiling.why_not(w, self.measured.counts.get(name),
                                 fmt=how.format if how is not None else None) is None

    def run(self) -> None:
        """Measure until every workload has stopped; leave the records in ``measured``."""
        self.ctx.reporter.phase("sequential", len(self.names), self._planned())
        self._warm_up()
        for name in self.names:  # after the warm-ups, before the first measured triplet
            if name in self.triplets.warmup_failed:  # the measured runs will say what it did
                self.measured.counts[name] = Counts(method=None,
                                                    why="not counted: a warm-up run failed")
            elif name not in self.perf and self.by_name[name].suite is None:
                count_apart(self.ctx, self.by_name[name], self.warmup_s.get(name),
                            self.measured, deadline=self.deadline)
        index = 0
        active = list(self.names)
        admitted = self._admit(active)
        while active:
            count = self._rounds(admitted)
            if count < 1:
                for name in active:  # a call stays settled; its estimate has fewer pairs
                    self.stopped[name] = "settled" if name in self.estimating else "budget"
                break
            self.triplets.rounds(admitted, index, count, self._tick)
            index += count
            due = [n for n in admitted if self._due(n)]
            if due:
                self._look(due)
                active = [n for n in active if n not in self.stopped]
                admitted = self._admit(active)
        self._record(final=True)

    def _rounds(self, admitted: Sequence[str]) -> int:
        """How many rounds the next batch holds (0: the budget cannot pay for one): as many
        as fit in ``BATCH_S``, never past the budget, nor past any admitted workload's
        next look (the looks fall where they always did)."""
        if not admitted:
            return 0
        round_s = self._round_s(admitted)
        fit = int(max(0.0, self.deadline - self.ctx.clock()) / round_s)
        to_look = min(self._next_look(n) - self.triplets.results[n].pairs for n in admitted)
        return min(fit, max(1, to_look), max(1, int(BATCH_S / round_s)))

    def _next_look(self, name: str) -> int:
        if name in self.estimating:
            return self.estimating[name]
        looks = self.schedule[name]
        return looks[min(self.done_looks[name], len(looks) - 1)]

    # --- looks ----------------------------------------------------------------------------

    def _due(self, name: str) -> bool:
        result = self.triplets.results[name]
        return bool(result.failure) or result.pairs >= self._next_look(name)

    def _look(self, due: Sequence[str]) -> None:
        estimating = [n for n in due if n in self.estimating]
        due = [n for n in due if n not in self.estimating]
        for name in due:
            self.done_looks[name] += 1
        judgement = self._record(final=False)
        self._note_reach()
        for name in estimating:  # no look: its call stands on its first pairs
            more = self._measure_on_to(name, judgement)
            if more is None:
                self.stopped[name] = "settled"
            else:
                self.estimating[name] = more
        for name in due:
            judged = judgement.workloads[name]
            self.verdicts[name] = judged.ab
            reason = sequential.stop_reason(
                judged.ab, judged.aa, pairs=self.triplets.results[name].pairs,
                max_pairs=self.by_name[name].max_runs, parity=self.by_name[name].parity,
            )
            pairs = self.triplets.results[name].pairs
            if reason == "settled" and not judgement.aborted:
                until = self._estimate_from(judged.ab, pairs, self.by_name[name])
                if until > pairs:
                    self.measured.called[name] = pairs
                    self.estimating[name] = until
                    continue
            if reason is not None:
                self.stopped[name] = reason
        if judgement.aborted:
            for name in self.names:
                self.stopped.setdefault(name, "aborted")

    def _estimate_from(self, ab: Verdict | None, pairs: int, w: WorkloadConfig) -> int:
        """Where a workload settled at ``pairs`` is measured on to for its estimate first:
        a call, and a program's level, to ``sequential.estimate_pairs``; with a precision
        asked, a level for one more look's worth of pairs (then ``estimate_until``).
        ``pairs``: not at all. A suite's benchmark settled level is not measured on: its
        level rests on the work per unit, and time's estimate of a benchmark would take
        many times its pairs to narrow (docs/verdict.md, "A level's estimate")."""
        if ab is None or not self.ctx.estimate:
            return pairs
        if ab.outcome in CALLS:
            return sequential.estimate_pairs(pairs, w.max_runs)
        if ab.outcome == "level" and self.ctx.precision is not None:
            return min(pairs + sequential.FIRST_LOOK, w.max_runs)
        if ab.outcome == "level" and w.suite is None:
            return sequential.estimate_pairs(pairs, w.max_runs)
        return pairs

    def _measure_on_to(self, name: str, judgement: Judgement) -> int | None:
        """How many pairs in all a settled workload measured on for its estimate goes to
        next, or None when it is done: the verdict's estimate within ESTIMATE_HALF
        (``sequential.estimate_until``); with a precision asked (a history's step), the
        trend's estimate of the step within it (``trend.half_width``), from how its
        interval shrinks, 1/sqrt n."""
        pairs, most = self.triplets.results[name].pairs, self.by_name[name].max_runs
        ab = judgement.workloads[name].ab
        if self.ctx.precision is None:
            # A call the counts per unit carried: time's estimate of a suite's benchmark
            # would take thousands of pairs to narrow to the width asked, so it is measured
            # on the first extra pairs only (docs/verdict.md, "Counts per benchmark").
            if _by_counts(ab):
                return None
            if ab is not None and ab.outcome == "level":  # no more than doubled
                most = sequential.level_estimate_cap(self.measured.called[name], most)
            return sequential.estimate_until(ab, pairs, most)
        from benchbot.verdict import trend

        w = self.by_name[name]
        width = trend.half_width(trend.phases_estimate(
            self.measured.phases[name], triplets=True, higher_is_better=w.better == "higher",
            seed=self.ctx.seed))
        if pairs >= most or (width is not None and width <= self.ctx.precision):
            return None
        grow = 2.0 if width is None else (width / self.ctx.precision) ** 2
        return min(max(math.ceil(pairs * grow), pairs + sequential.FIRST_LOOK), most)

    def _record(self, *, final: bool) -> Judgement:
        for name in self.names:
            w = self.by_name[name]
            self.measured.phases[name] = self.triplets.results[name].recorded(w)
            self.measured.looks[name] = max(1, self.done_looks[name])
            if name in self.perf:
                self.measured.counts[name] = perf_counts(self.ctx, w, self.triplets.results[name],
                                                         self.measured.phases.get(name))
        judgement = self.ctx.judged(self.measured)
        if final:  # what would settle it, from the verdict the report shows
            for name in self.names:
                self.measured.measuring[name] = self._measuring(name, judgement.workloads[name].ab)
            self.measured.budget_note = self._budget_note(judgement)
        return judgement

    # --- the pairs the budget reaches -----------------------------------------------------

    def _reach(self) -> tuple[float, int]:
        """Seconds a round of every workload takes, and the pairs the whole budget reaches at
        that pace (from the first rounds' timing)."""
        round_s = self._round_s(self.names)
        pairs = max(self.triplets.results[n].pairs for n in self.names)
        left = max(0.0, self.deadline - self.ctx.clock())
        return round_s, pairs + int(left / round_s) if round_s > 0 else pairs

    def _note_reach(self) -> None:
        """Once, at the first look: where the budget will stop short of the pairs from which
        a change is called, say so (the progress), from the first rounds' pace."""
        if self._reach_noted:
            return
        self._reach_noted = True
        round_s, reach = self._reach()
        if reach < sequential.CALL_PAIRS:
            self.ctx.reporter.note(
                f"at about {_seconds_text(round_s)} a round the budget reaches about {reach} "
                f"pairs; {sequential.CALL_PAIRS} pairs would take about "
                f"{_seconds_text(sequential.CALL_PAIRS * round_s)}: {_CALLED_FROM}")

    def _budget_note(self, judgement: Judgement) -> str | None:
        """The report's warning where the budget stopped workloads whose runs read a change
        and that wait for the pairs a call needs (``few_runs``): how far the budget reached,
        at what pace, and how far a call needs."""
        waiting = [n for n in self.names if self.stopped.get(n) == "budget"
                   and sequential.pending_change(ab := judgement.workloads[n].ab)
                   and ab is not None and ab.reason_code == "few_runs"]
        if not waiting:
            return None
        round_s = self._round_s(self.names)
        pairs = max(self.triplets.results[n].pairs for n in self.names)
        which = ", ".join(waiting[:3]) + (f" and {len(waiting) - 3} more" if len(waiting) > 3 else "")
        return (f"the budget reached {pairs} pairs at about {_seconds_text(round_s)} a round, "
                f"and {len(waiting)} workload{'s' if len(waiting) > 1 else ''} ({which}) read a "
                f"change that waits for more: {_CALLED_FROM}; {sequential.CALL_PAIRS} pairs "
                f"would take about {_seconds_text(sequential.CALL_PAIRS * round_s)} of rounds")

    def _measuring(self, name: str, verdict: Verdict | None) -> Measuring:
        result = self.triplets.results[name]
        reason = self.stopped.get(name, "budget")
        looks = self.schedule[name][: self.done_looks[name]]
        settle = None
        if reason in ("budget", "max_runs") and (verdict is None
                                                  or verdict.outcome == "inconclusive"):
            settle = sequential.pairs_to_settle_uncapped(verdict, self.by_name[name].parity)
        self.measured.timed_s[name] = result.timed_s
        return Measuring(design="triplets", pairs=result.pairs, stopped=reason,
                         why=sequential.why(reason, verdict), looks=looks, orders="".join(result.orders),
                         settle_pairs=settle, called_at=self.measured.called.get(name),
                         **_seconds(self.measured, name))

    # --- the budget -----------------------------------------------------------------------

    def _admit(self, active: Sequence[str]) -> list[str]:
        """The workloads that get the next rounds, as many as the remaining budget can carry
        (at least one). First those with a change pending (``sequential.pending_change``:
        the median has left its tolerance, the best-run side or the 51-pair start has not
        followed yet), each with enough budget set aside for its next two looks, as the
        best runs' interval narrows by jumps rather than steadily; then the others, nearest
        to a decision first, each to its next look. While the budget lasts every workload
        goes on; when it runs short, a pending change keeps its rounds and a workload whose
        next look it cannot pay for waits. While a change is pending, a workload whose
        median reads no change and that the rest of the budget could not settle even were
        it measured alone (``_out_of_reach``) waits too: its rounds would change nothing
        the report says, and the pending change needs them (a slow harness's few pending
        benchmarks run alone, at a third of the time of a run of them all)."""
        left = self.deadline - self.ctx.clock()
        pending = {n for n in active if sequential.pending_change(self.verdicts[n])}
        if pending:
            aside = [n for n in active if n not in pending and self._out_of_reach(n, left)]
            if aside:
                self._note_aside(aside, pending)
                active = [n for n in active if n not in aside]
        order = sorted(active, key=lambda n: (n in self.estimating, n not in pending,
                                              self._cost_to_settle(n)))
        chosen: list[str] = []
        spent = 0.0
        for name in order:
            cost = self._cost_to_look(name, ahead=PENDING_LOOKS_AHEAD if name in pending else 1)
            if chosen and spent + cost > left:
                continue
            chosen.append(name)
            spent += cost
        return [n for n in self.names if n in chosen]  # rounds keep the config's order

    def _out_of_reach(self, name: str, left: float) -> bool:
        """Judged inconclusive with a median within its parity, and needing more pairs
        to settle than ``left`` seconds would give it were it the only workload measured
        (or than max_runs), at the interval's own pace of narrowing
        (``sequential.pairs_to_settle_uncapped``, the report's figure). Never a median
        past parity, however wide its interval: at the first looks a few slow runs make a
        change's interval as wide as ±100% (the alpha spent there is small, and the
        tolerance widens with the noise), and set aside on that verdict it would have no
        pairs to be judged again by (the live +25% `matmul` was so held at 14 pairs, and
        a simulated −40% at 15); never a called change measured on for its estimate."""
        verdict = self.verdicts[name]
        w, pairs = self.by_name[name], self.triplets.results[name].pairs
        if (name in self.estimating or verdict is None or verdict.outcome != "inconclusive"
                or verdict.ratio is None or abs(math.log(verdict.ratio)) > math.log1p(w.parity)):
            return False
        need = sequential.pairs_to_settle_uncapped(verdict, w.parity)
        reach = min(w.max_runs, pairs + int(max(0.0, left) / max(self._alone_s(name), 1e-9)))
        return need > reach

    def _note_aside(self, aside: Sequence[str], pending: Set[str]) -> None:
        """The progress's line, once for each workload set aside."""
        new = [n for n in aside if n not in self._aside_noted]
        if not new:
            return
        self._aside_noted.update(new)
        which = ", ".join(new[:3]) + (f" and {len(new) - 3} more" if len(new) > 3 else "")
        waiting = ", ".join(n for n in self.names if n in pending)
        self.ctx.reporter.note(
            f"{len(new)} workload{'s' if len(new) > 1 else ''} ({which}) would need more pairs "
            f"than the budget left could give {'them' if len(new) > 1 else 'it'}: the rounds "
            f"go to the change{'s' if len(pending) > 1 else ''} pending in {waiting}")

    def _cost_to_look(self, name: str, *, ahead: int = 1) -> float:
        """Seconds until this workload's ``ahead``-th look from now (a call measured on for
        its estimate: until the estimate's pairs)."""
        result = self.triplets.results[name]
        if name in self.estimating:
            return max(self.estimating[name] - result.pairs, 1) * self._triplet_s(name)
        looks = self.schedule[name]
        due = looks[min(self.done_looks[name] + ahead - 1, len(looks) - 1)]
        return max(due - result.pairs, 1) * self._triplet_s(name)

    def _cost_to_settle(self, name: str) -> float:
        result = self.triplets.results[name]
        if name in self.estimating:
            return max(self.estimating[name] - result.pairs, 1) * self._triplet_s(name)
        looks = self.schedule[name]
        if self.verdicts[name] is None:
            need = looks[0] - result.pairs
        else:
            target = sequential.pairs_to_settle(self.verdicts[name], self.by_name[name].parity,
                                                max_pairs=self.by_name[name].max_runs)
            need = max(target, looks[min(self.done_looks[name], len(looks) - 1)]) - result.pairs
        return max(need, 1) * self._triplet_s(name)

    def _triplet_s(self, name: str) -> float:
        """Seconds one more triplet of this workload takes, from its runs so far.

        Asked after every run (for the progress estimate) and every round (for the
        budget): the medians are taken again only once the triplets have grown by an
        eighth since the last time, as sorting every arm's runs after every run cost up
        to 8 ms between runs (20 workloads at 1,000 pairs)."""
        result = self.triplets.results[name]
        suite = self.by_name[name].suite
        if suite is not None and suite in self.triplets.pace:
            # A suite's benchmark: its share of a run of the benchmarks its last run served.
            share = self.triplets.served.get(name, 1)
            return 3 * (self._harness_s(suite, share) + PER_RUN_OVERHEAD_S) / share
        pairs = result.pairs
        cached = self._triplet_cache.get(name)
        if cached is not None and pairs < cached[0] + max(1, cached[0] // 8):
            return cached[1]
        walls = [_median(s.wall_ns) for s in (result.base, result.again, result.head) if s.wall_ns]
        if len(walls) < 3:
            return 3 * (self.warmup_s.get(name, 0.01) + PER_RUN_OVERHEAD_S)
        seconds = sum(walls) / 1e9 + 3 * PER_RUN_OVERHEAD_S
        self._triplet_cache[name] = (pairs, seconds)
        return seconds

    def _harness_s(self, suite: str, served: int) -> float:
        seconds = self.triplets.pace[suite].seconds(served)
        return 0.0 if seconds is None else seconds

    def _round_s(self, names: Sequence[str]) -> float:
        """Seconds a round of these workloads takes: a suite's benchmarks among them at the
        pace of one harness run per arm serving them all (``HarnessPace``)."""
        seconds, suites = 0.0, Counter[str]()
        for name in names:
            suite = self.by_name[name].suite
            if suite is not None and suite in self.triplets.pace:
                suites[suite] += 1
            else:
                seconds += self._triplet_s(name)
        for suite, served in suites.items():
            seconds += 3 * (self._harness_s(suite, served) + PER_RUN_OVERHEAD_S)
        return seconds

    def _alone_s(self, name: str) -> float:
        """Seconds a triplet of this workload would take were it the only one measured (a
        suite's benchmark: a harness run serving it alone)."""
        suite = self.by_name[name].suite
        if suite is not None and suite in self.triplets.pace:
            return 3 * (self._harness_s(suite, 1) + PER_RUN_OVERHEAD_S)
        return self._triplet_s(name)

    def _warm_up(self) -> None:
        for name in self.names:
            if self.by_name[name].suite is not None:  # its suite's discovery warmed it
                self.warmup_s[name] = self.ctx.warmup_s.get(name, 0.01)
                continue
            if self.ctx.clock() >= self.deadline:
                break  # the budget is spent (builds, slow warm-ups): nothing more is run
            start = self.ctx.clock()
            runs_before = self.triplets.runs
            self.triplets.warm_up([name])
            self.warmup_s[name] = ((self.ctx.clock() - start)
                                   / max(1, self.triplets.runs - runs_before))
            if name in self.triplets.again_fallback:
                self.ctx.fall_back(name, self.triplets.again_fallback[name], self.measured)

    # --- progress -------------------------------------------------------------------------

    def _planned(self) -> int:
        return sum(3 * sequential.FIRST_LOOK for _ in self.names)

    def _tick(self, name: str) -> None:
        """Progress after each run: the runs the budget has room for, at the time per run
        of the workloads still measuring (taken again at most every ETA_INTERVAL_S)."""
        done = self.triplets.runs
        now = self.ctx.clock()
        if now - self._per_run[0] >= ETA_INTERVAL_S:
            active = [n for n in self.names if n not in self.stopped]
            self._per_run = (now, self._round_s(active) / max(3 * len(active), 1))
        left = max(0.0, self.deadline - now)
        planned = done + int(left / max(self._per_run[1], 1e-3))
        self.ctx.reporter.progress("sequential", name, done, planned, left_s=left)


_CALLED_FROM = (f"a change is called from {sequential.CALL_PAIRS} pairs on (a faster one from "
                f"{sequential.POOLED_PAIRS}), or from {sequential.APART_PAIRS} where base's and "
                "head's runs do not overlap")


def _seconds_text(seconds: float) -> str:
    """A duration for a sentence: '80 ms', '31 s', '26 min'."""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def _by_counts(verdict: Verdict | None) -> bool:
    """A call the counts per unit of a suite's benchmark carried (time did not call it)."""
    return verdict is not None and verdict.settled_by == "instructions and time"


def _seconds(measured: Measured, name: str) -> dict[str, Any]:
    """A workload's timed and counted seconds, as Measuring records them."""
    counts = measured.counts.get(name)
    timed = measured.timed_s.get(name)
    return {"timed_s": None if timed is None else round(timed, 3),
            "counted_s": counts.counted_s if counts is not None else None}


def _median(values: Sequence[int]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return float(ordered[mid]) if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def measure(ctx: Context, *, deadline: float) -> Measured:
    """Measure every workload of the config: each suite's benchmarks found first
    (``suites.discover``), then the fixed workloads, then the sequential ones."""
    measured = Measured(phases={})
    whole = deadline
    reserve_s = 0.0
    if ctx.config.profile != "off" and means_of(ctx).valgrind_problem is None:
        reserve_s = PROFILE_RESERVE * max(0.0, deadline - ctx.clock())
    if ctx.config.suites:
        from benchbot.suites import listing

        found = listing.discover(ctx.config, ctx.base, ctx.head, spawner=ctx.spawner,
                                env=ctx.env, shard=ctx.shard)
        if ctx.shard is not None and ctx.policy.family is not None:
            from benchbot.results import shards  # the whole's family: every shard's benchmarks

            ctx.policy = dataclasses.replace(ctx.policy, family=shards.with_suites(
                ctx.policy.family, ctx.config.suites, found.records))
        suite_of = {w.name: w.suite for w in found.config.workloads if w.suite is not None}
        ctx.config = found.config
        ctx.harnesses = found.harnesses
        ctx.base = {**ctx.base, **{n: ctx.base[s] for n, s in suite_of.items()}}
        ctx.head = {**ctx.head, **{n: ctx.head[s] for n, s in suite_of.items()}}
        ctx.warmup_s = found.warmup_s
        ctx.figures = dict(found.figures)
        measured.config, measured.suites = found.config, found.records
        for name, phases in found.failed.items():
            measured.phases[name] = phases
            measured.looks[name] = 1
            measured.measuring[name] = Measuring(design="triplets", pairs=0, stopped="failed",
                                                 why=sequential.WHY["failed"])
        measured.discovery_s = found.discovery_s
        count_suites(ctx, [n for n in suite_of if n not in measured.phases], found.figures,
                      measured, deadline - reserve_s)
    failed = set(measured.phases)
    todo = [w for w in ctx.config.workloads if w.name not in failed]
    measured.phases.update({w.name: {} for w in todo})
    counted = [w.name for w in todo if w.metric == "instructions"]
    fixed = [w.name for w in todo if w.runs is not None and w.name not in counted]
    rest = [w.name for w in todo if w.runs is None and w.name not in counted]
    if counted:
        measure_instructions(ctx, counted, measured)
    if fixed:
        measure_fixed(ctx, fixed, measured)
    if rest:
        Sequential(ctx, rest, measured, deadline=deadline, reserve_s=reserve_s).run()
    profile_called(ctx, measured, deadline=whole)
    return measured


