"""Judging apart from measuring: recorded phases in, verdicts out. A pure function.

The engine measures a phase and asks ``judge`` what everything recorded so far says; the
answer also says what to measure next (the workloads still comparable after the A/A
check, the standouts to confirm). ``benchmarks/`` re-judges stored runs with the same
function, so the flow (docs/verdict.md: A/A first, then A/B, then confirmation of
standouts) is written once.

Seeds: the A/A phase is judged with ``seed``, the A/B phase with ``seed + 1``, the
confirmation with ``seed + 2``, the same offsets the engine's order seeds use. A merged
comparison keeps each workload's own (its shard's) seed, so judging it again gives the
verdicts its shard gave.

The error control spans the whole comparison, also when a machine measures a share of it
(``shards``): ``Policy.family`` then says how many workloads the whole has, so that a
sequential look spends alpha / (family · k (k + 1)) and the fixed design's Bonferroni
divides by the whole's count, not by the share judged here.

Two designs: ``pairs`` (the fixed design: an A/A phase, an A/B phase, a confirmation of
standouts) and ``triplets`` (sequential: rounds of base, base again and head; the A/A
ratio is base again over base, the A/B ratio the median of head over each base run of its
round (``intervals.triplet_interval``), both judged at the look the workload reached, with the
error that look may spend; the best-run side is the 10th percentile of single runs, and standouts are guarded by
family-wise error control instead of a confirmation phase).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from benchbot.core.model import (
    AASummary,
    ArmRuns,
    Better,
    Counts,
    Design,
    Family,
    Metric,
    PhaseRuns,
    Rule,
    Verdict,
)
from benchbot.verdict import benchsignals, intervals, sequential, signals, stats

CALLS = ("slower", "faster")


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """What judging needs to know of one workload: its rule's settings and its runs."""

    name: str
    parity: float
    floor_ns: float
    better: Better = "lower"
    phases: Mapping[str, PhaseRuns] = field(default_factory=dict)
    design: Design = "pairs"
    looks: int = 1  # triplets: the looks taken (the error spent depends on it)
    seed: int | None = None  # its own seed (a merged comparison's shard's); None: the policy's
    # How its instructions were counted, as measuring made them (method, why, valgrind's
    # counted runs); judging fills in how they read. None: not counted.
    counts: Counts | None = None
    memory_parity: float = signals.MEMORY_PARITY  # the peak-RSS verdict's parity
    maxrss_floor_kib: int | None = None  # no run's peak RSS reads below this (None: unknown)
    metric: Metric = "wall"  # instructions: judged on the counts alone (no timed runs)
    # triplets: its change was called at this many pairs and measured on for the estimate
    # alone; the verdict is judged on these first pairs, the estimate on all of them.
    called_at: int | None = None
    # False: peak RSS is not this workload's own (a suite's benchmark: the harness process
    # runs them all), so no memory verdict.
    judge_memory: bool = True

    def values(self, phase: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """The judged values of a phase's reference and candidate arms."""
        ref, cand = self.phases[phase].arms.values()
        if self.better == "higher":
            return ref.values or (), cand.values or ()
        return ref.samples_ns, cand.samples_ns


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """The comparison-wide settings of the rule (the config's top level)."""

    alpha: float = 0.05
    confirm: bool = True
    aa: bool = True
    abort_fraction: float = 0.25
    seed: int = 0
    # Rule fields to change for every comparison (benchmarks/ try variants of the rule).
    rule_changes: Mapping[str, object] = field(default_factory=dict)
    low_quantile: float = sequential.LOW_QUANTILE  # triplets' best-run side
    # The whole comparison's workloads (None: those judged here are the whole).
    family: Family | None = None
    # False: apply no A/A abort here (a shard measures on: merge applies the rule to all).
    abort: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class Judged:
    """One workload's verdicts from what has been recorded (None: that phase did not run)."""

    aa: Verdict | None = None
    ab: Verdict | None = None
    confirmation: Verdict | None = None
    final: Verdict | None = None
    counts: Counts | None = None  # the instruction counts, read (None: not counted)
    memory: Verdict | None = None  # peak RSS, judged on its own


@dataclass(frozen=True, slots=True, kw_only=True)
class Judgement:
    """All workloads' verdicts, the A/A check's summary, and what may be measured next."""

    workloads: dict[str, Judged]
    aa: AASummary
    comparable: tuple[str, ...]  # not invalid in the A/A phase: these go on to A/B
    standouts: tuple[str, ...]  # slower or faster in the A/B phase: to be confirmed

    @property
    def aborted(self) -> bool:
        """The A/A check failed for too many workloads: nothing is compared."""
        return self.aa.aborted


def rule_for(w: Workload, policy: Policy, *, seed: int, comparisons: int = 1) -> Rule:
    """The verdict rule's settings for one workload and phase."""
    rule = Rule(parity=w.parity, alpha=policy.alpha, floor_ns=w.floor_ns, seed=seed,
                better=w.better, comparisons=comparisons)
    return replace(rule, **policy.rule_changes) if policy.rule_changes else rule  # type: ignore[arg-type]


def judge(workloads: Sequence[Workload], policy: Policy) -> Judgement:
    """The verdicts of docs/verdict.md for the phases recorded so far."""
    whole_of = {w.name: w for w in workloads}
    workloads = [_first(w) for w in workloads]
    whole = policy.family or Family(
        sequential=sum(1 for w in workloads if w.design == "triplets"),
        fixed=sum(1 for w in workloads if w.design == "pairs"))
    comparisons = 1 if policy.confirm else max(1, whole.fixed)
    seq = {w.name: _triplets(w, policy, whole.sequential) for w in workloads
           if w.design == "triplets"}
    aa = {w.name: seq[w.name][0] if w.name in seq else
          _phase(w, "aa", policy, 0, comparisons, None) for w in workloads}
    comparable = tuple(w.name for w in workloads if not _invalid(aa[w.name]))
    failed = tuple(n for n in comparable if aa[n] is not None and aa[n].outcome in CALLS)  # type: ignore[union-attr]
    aborted = (policy.aa and policy.abort and bool(comparable)
               and len(failed) > policy.abort_fraction * len(comparable))
    summary = _aa_summary(policy, failed, aborted, any(v is not None for v in aa.values()))
    out: dict[str, Judged] = {}
    standouts: list[str] = []
    for w in workloads:
        a = aa[w.name]
        if w.metric == "instructions":
            out[w.name] = _instructions(w)
            continue
        if aborted and w.name in comparable:
            out[w.name] = Judged(aa=a, final=_aborted(a, failed=len(failed), total=len(comparable)))
            continue
        counts = _read(w)
        if w.name in seq:
            ab = seq[w.name][1]
            if ab is not None and ab.outcome != "invalid":
                ab = _joint(ab, counts, w.parity, _whole(w, policy, whole.sequential, ab))
            measured_on = whole_of[w.name].called_at is not None  # a level too, for its estimate
            if ab is not None and (ab.outcome in CALLS or (measured_on and ab.outcome == "level")):
                ab = _with_estimate(ab, whole_of[w.name], policy, whole.sequential)
            out[w.name] = Judged(aa=a, ab=ab, final=ab if ab is not None else a, counts=counts,
                                 memory=_memory(w, policy, whole.sequential, comparisons))
            continue
        ab = _phase(w, "ab", policy, 1, comparisons, a)
        if ab is not None and ab.outcome != "invalid":
            ab = _joint(ab, counts, w.parity, None)
        final = ab if ab is not None else a
        confirmation = None
        if ab is not None and ab.outcome in CALLS:
            standouts.append(w.name)
            confirmation = _phase(w, "confirm", policy, 2, 1, a)
            if confirmation is not None and confirmation.outcome != "invalid":
                confirmation = _joint(confirmation, counts, w.parity, None, per_unit_only=True)
            if confirmation is not None:
                pooled = _pooled(w, policy, a)
                if pooled.outcome != "invalid":
                    pooled = _joint(pooled, counts, w.parity, None)
                final = stats.confirm_pooled(ab, confirmation, pooled)
        out[w.name] = Judged(aa=a, ab=ab, confirmation=confirmation, final=final, counts=counts,
                             memory=_memory(w, policy, whole.sequential, comparisons))
    return Judgement(workloads=out, aa=summary, comparable=comparable,
                     standouts=tuple(standouts) if policy.confirm else ())


def _joint(time: Verdict, counts: Counts | None, parity: float, whole: Verdict | None, *,
           per_unit_only: bool = False) -> Verdict:
    """Time's verdict with the counts beside it: per unit of work for a suite's benchmark
    (benchsignals), else the whole runs' (signals; ``per_unit_only``: left as time's)."""
    if counts is not None and counts.unit is not None:
        return benchsignals.joint(time, counts, parity=parity, whole=whole)
    if per_unit_only:
        return time
    return signals.joint(time, counts, parity=parity, whole=whole)


def _first(w: Workload) -> Workload:
    """A workload measured on after its call, as it stood at the call (its first
    ``called_at`` pairs): what the call is judged on."""
    if w.called_at is None or w.design != "triplets":
        return w
    n = w.called_at
    return replace(w, phases={name: replace(
        p, order=p.order[: 2 * n],
        arms={arm: _cut(runs, n) for arm, runs in p.arms.items()}) for name, p in w.phases.items()})


def _cut(runs: ArmRuns, n: int) -> ArmRuns:
    return ArmRuns(samples_ns=runs.samples_ns[:n], wall_ns=runs.wall_ns[:n],
                   cpu_ns=runs.cpu_ns[:n], maxrss_kib=runs.maxrss_kib[:n],
                   values=None if runs.values is None else runs.values[:n],
                   instructions=None if runs.instructions is None else runs.instructions[:n],
                   cycles=None if runs.cycles is None else runs.cycles[:n],
                   bytes_op=None if runs.bytes_op is None else runs.bytes_op[:n],
                   allocs_op=None if runs.allocs_op is None else runs.allocs_op[:n])


def _with_estimate(ab: Verdict, w: Workload, policy: Policy, family: int) -> Verdict:
    """The call, with the estimate of the change over every pair measured (those after
    the call too): the median of head's log ratios to both base runs of its round and the
    interval their ranks give, at the workload's whole alpha (docs/verdict.md, "An
    estimate the stopping rule does not inflate")."""
    base, again = w.values("aa")
    _, head = w.values("ab")
    n = min(len(base), len(again), len(head))
    if n < sequential.FIRST_LOOK:
        return ab
    sign = -1.0 if w.better == "higher" else 1.0  # a throughput v is judged as 1/v
    logs, spread = intervals.triplet_logs(
        *(sign * np.log(np.asarray(v[:n], dtype=float)) for v in (base, again, head)))
    lo, hi = intervals.triplet_interval(logs, policy.alpha / max(family, 1), spread=spread)
    if not (math.isfinite(lo) and math.isfinite(hi)):  # a family too large for 10 rounds
        return ab
    centre = float(np.median(logs))
    return replace(ab, estimate=math.exp(centre), estimate_ci=(math.exp(lo), math.exp(hi)),
                   estimate_n=n)


def _read(w: Workload) -> Counts | None:
    """The workload's counts as they read (None: not counted)."""
    if w.counts is None:
        return None
    return signals.read_counts(w.counts, w.phases, parity=w.parity)


def _instructions(w: Workload) -> Judged:
    """metric: instructions: the counts alone, no timed runs."""
    counts = _read(w)
    verdict = signals.metric_instructions(counts, parity=w.parity)
    return Judged(ab=verdict, final=verdict, counts=counts)


def _whole(w: Workload, policy: Policy, family: int, ab: Verdict) -> Verdict | None:
    """Time's A/B comparison of triplets again, its interval at the workload's whole alpha
    (alpha / family, not split over looks): what a level settled with the counts needs.
    Only where the counts read the same and time is inconclusive (else unused)."""
    if ab.outcome != "inconclusive" or w.counts is None or w.counts.method is None:
        return None
    base, again = w.values("aa")
    _, head = w.values("ab")
    rule = replace(rule_for(w, policy, seed=_seed(w, policy) + 1),
                   look_alpha=policy.alpha / max(family, 1), low_quantile=policy.low_quantile)
    return stats.compare(base, head, rule=rule, aa_noise=ab.aa_noise, again=again)


def _memory(w: Workload, policy: Policy, family: int, comparisons: int) -> Verdict | None:
    """Peak RSS judged on its own: the same looks' alpha (triplets) or the fixed design's
    interval (pairs); for a suite's benchmark, the memory its harness reports, if any."""
    triplets = w.design == "triplets"
    look_alpha = (sequential.alpha_at(max(1, w.looks), policy.alpha, family)
                  if triplets else None)
    if not w.judge_memory:
        return benchsignals.memory(w.phases, parity=w.memory_parity,
                                   alpha=policy.alpha / (1 if triplets else comparisons),
                                   look_alpha=look_alpha, seed=_seed(w, policy) + 1,
                                   triplets=triplets)
    return signals.memory(w.phases, parity=w.memory_parity,
                          alpha=policy.alpha / (1 if triplets else comparisons),
                          look_alpha=look_alpha, seed=_seed(w, policy) + 1, triplets=triplets,
                          floor_kib=w.maxrss_floor_kib)


def _seed(w: Workload, policy: Policy) -> int:
    return policy.seed if w.seed is None else w.seed


def _phase(w: Workload, name: str, policy: Policy, offset: int, comparisons: int,
           aa: Verdict | None) -> Verdict | None:
    """A phase judged with the workload's seed plus ``offset`` (the phase's own)."""
    if name not in w.phases:
        return None
    phase = w.phases[name]
    if phase.failure_code:
        return stats.invalid(phase.failure_code, phase.failure or phase.failure_code)
    x, y = w.values(name)
    seed = _seed(w, policy) + offset
    verdict = stats.compare(x, y, rule=rule_for(w, policy, seed=seed, comparisons=comparisons),
                            aa_noise=stats.aa_noise_of(aa))
    if aa is not None and aa.outcome in CALLS and name != "aa":
        verdict = stats.force_aa_failed(verdict, aa)
    return verdict


def _triplets(w: Workload, policy: Policy, family: int) -> tuple[Verdict | None, Verdict | None]:
    """The A/A and A/B verdicts of a workload measured in triplets, at its last look."""
    if "aa" not in w.phases or "ab" not in w.phases:
        return None, None
    failed = {name: stats.invalid(w.phases[name].failure_code or "run_failed",
                                  w.phases[name].failure or "a run failed")
              for name in ("aa", "ab") if w.phases[name].failure_code}
    if "aa" in failed:  # a base run failed: neither comparison can be made
        return failed["aa"], failed["aa"]
    base, again = w.values("aa")
    look_alpha = sequential.alpha_at(max(1, w.looks), policy.alpha, family)
    aa_rule = replace(rule_for(w, policy, seed=_seed(w, policy)), look_alpha=look_alpha,
                      low_quantile=policy.low_quantile)
    aa = stats.compare(base, again, rule=aa_rule)
    if "ab" in failed:  # only a head run failed: the A/A check still stands
        return aa, failed["ab"]
    _, head = w.values("ab")
    ab_rule = replace(aa_rule, seed=_seed(w, policy) + 1)
    ab = stats.compare(base, head, rule=ab_rule, aa_noise=stats.aa_noise_of(aa), again=again)
    if aa.outcome in CALLS:
        ab = stats.force_aa_failed(ab, aa)
    return aa, ab


def _pooled(w: Workload, policy: Policy, aa: Verdict | None) -> Verdict:
    """Both phases' runs judged together: the figures reported after confirmation."""
    confirm = w.phases["confirm"]
    if confirm.failure_code:
        return stats.invalid(confirm.failure_code, confirm.failure or confirm.failure_code)
    ab_x, ab_y = w.values("ab")
    c_x, c_y = w.values("confirm")
    rule = rule_for(w, policy, seed=_seed(w, policy) + 2)
    return stats.compare(ab_x + c_x, ab_y + c_y, rule=rule, aa_noise=stats.aa_noise_of(aa))


def _invalid(verdict: Verdict | None) -> bool:
    return verdict is not None and verdict.outcome == "invalid"


def _aa_summary(policy: Policy, failed: tuple[str, ...], aborted: bool, ran: bool) -> AASummary:
    if not policy.aa or not ran:
        return AASummary(status="skipped", abort_fraction=policy.abort_fraction)
    return AASummary(status="failed" if failed else "passed", failed=failed, aborted=aborted,
                     abort_fraction=policy.abort_fraction)


def _aborted(aa: Verdict | None, *, failed: int, total: int) -> Verdict:
    """The A/A check failed for too many workloads: nothing is concluded (verdict.md, A/A 3)."""
    seen = f"; it read base against itself as {(aa.ratio - 1) * 100:+.1f}%" if (
        aa is not None and aa.ratio is not None) else ""
    return Verdict(
        outcome="inconclusive", reason_code="aa_aborted",
        reason=f"the A/A check failed for {failed} of {total} workloads, so this runner is "
        f"too noisy now to compare anything{seen}",
        n=aa.n if aa else 0, ratio=aa.ratio if aa else None, ci=aa.ci if aa else None,
        best_ratio=aa.best_ratio if aa else None, spread=aa.spread if aa else None,
    )
