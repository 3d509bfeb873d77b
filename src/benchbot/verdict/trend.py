"""The history's statistics (docs/verdict.md, "History: steps and drifts"): each step's
change from its runs, the steps composed into a trend, and the scan for drifts. Pure:
numpy and the standard library; thin data gives no estimate, never an exception.

**A step's estimate.** A step compares a commit (the candidate) with its parent (the
reference). Its change is the median of the per-round log differences of the candidate's
run against each reference run of the round (with triplets both base runs: ln h − ln b₁
and ln h − ln b₂). Each such difference is of two runs alike but for the code, so under no
change it is symmetric about 0 whatever the noise: its median is unbiased. The verdict's
own median of ln h − (ln b₁ + ln b₂)/2 is not: one run against the mean of two is skewed
when the noise is (it only adds time), and read −0.6% on identical builds of the
generated program here; summed over thirty steps that would be a drift of −17% that no
commit made. Its standard error comes from resampling whole rounds (the unit that is
independent), with a floor for the discreteness of timer readings.

**Composition.** Steps are measured at different times on different runs, so their
errors are independent: the change over a range is the sum of its steps' log changes,
with the sum of their variances, and is close to normal however the single runs are
distributed (each step's median already is, over its rounds). A commit whose built
worktree is identical to its parent's is a step of exactly 0 with no error.

**Drifts.** A report scans every range of at least two measured steps that no called step
and no gap interrupts, in every workload: K ranges in all. A range is a drift when its
interval at z = Φ⁻¹(1 − α / 2K) lies wholly beyond the parity band, the same test a
verdict makes of its own interval; by the union bound the chance that any range of the
report is called when its change is within parity is at most α. Overlapping candidates
are reduced to the strongest (the largest |sum| / its standard error) and those apart
from it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from benchbot.core.model import PhaseRuns

RESAMPLES = 400  # bootstrap resamples of whole rounds for a step's standard error
MIN_ROUNDS = 10  # fewer rounds than a comparison's first look give no estimate
# The smallest standard error a step is given (log scale): timer readings are discrete,
# and the median of many tied differences can resample to the same value every time.
SE_FLOOR = 0.0005
# A step's error beyond its own rounds: the same two builds measured in another session
# (other workers, another moment of the machine) move by about this much more (log scale,
# one standard deviation; benchmarks/README.md, "History").
SESSION_SE = 0.0
Z95 = 1.959964  # the normal quantile of a two-sided 95% interval


@dataclass(frozen=True, slots=True, kw_only=True)
class StepEstimate:
    """One step's change on the log scale (candidate over reference, as time: above 0 is
    slower) and its standard error."""

    n: int  # rounds (triplets or pairs) it rests on
    centre: float
    se: float

    @property
    def ratio(self) -> float:
        return math.exp(self.centre)


IDENTICAL = StepEstimate(n=0, centre=0.0, se=0.0)


def step_estimate(refs: Sequence[Sequence[float]], head: Sequence[float], *, seed: int,
                  higher_is_better: bool = False) -> StepEstimate | None:
    """The step's estimate from its rounds: ``refs`` holds one reference arm (pairs) or two
    (triplets: base and base again), each a value per round, ``head`` the candidate's; None
    with fewer than MIN_ROUNDS usable rounds."""
    n = min(len(head), *(len(r) for r in refs)) if refs else 0
    if n == 0:
        return None
    h = np.asarray(head[:n], dtype=float)
    b = np.stack([np.asarray(r[:n], dtype=float) for r in refs], axis=1)
    ok = (h > 0) & np.all(b > 0, axis=1) & np.isfinite(h) & np.all(np.isfinite(b), axis=1)
    h, b = h[ok], b[ok]
    if h.size < MIN_ROUNDS:
        return None
    diffs = np.log(h)[:, None] - np.log(b)  # (rounds, references)
    if higher_is_better:  # a value v is judged as 1/v
        diffs = -diffs
    centre = float(np.median(diffs))
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, diffs.shape[0], size=(RESAMPLES, diffs.shape[0]))
    medians = np.median(diffs[picks].reshape(RESAMPLES, -1), axis=1)
    se = math.hypot(max(float(np.std(medians)), SE_FLOOR), SESSION_SE)
    return StepEstimate(n=int(h.size), centre=centre, se=se)


def phases_estimate(phases: Mapping[str, PhaseRuns], *, triplets: bool, higher_is_better: bool,
                    seed: int) -> StepEstimate | None:
    """The step's estimate from a workload's recorded phases: with triplets both base runs
    of each round (the A/A phase's arms) against head's, with pairs the A/B and
    confirmation phases' base against head; a throughput's values, else its times."""

    def values(phase: str, arm: str) -> tuple[float, ...]:
        runs = phases[phase].arms.get(arm) if phase in phases else None
        if runs is None:
            return ()
        return (runs.values or ()) if higher_is_better else runs.samples_ns

    if triplets:
        refs = [values("aa", "base"), values("aa", "base_again")]
        head = values("ab", "head")
    else:
        refs = [values("ab", "base") + values("confirm", "base")]
        head = values("ab", "head") + values("confirm", "head")
    return step_estimate(refs, head, seed=seed, higher_is_better=higher_is_better)


def half_width(estimate: StepEstimate | None) -> float | None:
    """The estimate's 95% interval's half-width as a fraction (exp(1.96 se) − 1), the
    measure of ``history record --precision``; None without an estimate."""
    return None if estimate is None else math.expm1(Z95 * estimate.se)


# --- the trend of one workload along a chain of commits -----------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """A workload's step into one commit of the chain: its estimate (None: none could be
    made, which breaks the chain for ranges) and whether its own verdict called it."""

    index: int  # the commit's position in the chain (its reference is index - 1)
    estimate: StepEstimate | None
    called: bool = False  # its own verdict is slower or faster

    @property
    def measured(self) -> bool:
        return self.estimate is not None and self.estimate.se > 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Level:
    """The cumulative change at a commit since the chain's start (log scale), and its
    standard error; None where a gap before it leaves the chain without a figure."""

    log: float | None
    se: float | None


def cumulative(steps: Sequence[Step]) -> list[Level]:
    """The cumulative change at the chain's start (0) and after every step; from a gap on,
    again from 0 with a new start (``Level.log`` None at the gap itself)."""
    out = [Level(log=0.0, se=0.0)]
    total, var = 0.0, 0.0
    for s in steps:
        if s.estimate is None:
            out.append(Level(log=None, se=None))
            total, var = 0.0, 0.0
            continue
        total += s.estimate.centre
        var += s.estimate.se ** 2
        out.append(Level(log=total, se=math.sqrt(var)))
    return out


def segments(steps: Sequence[Step]) -> list[list[Step]]:
    """Runs of consecutive steps that a drift may span: no called step, no gap."""
    out: list[list[Step]] = [[]]
    for s in steps:
        if s.called or s.estimate is None:
            out.append([])
        else:
            out[-1].append(s)
    return [seg for seg in out if sum(1 for s in seg if s.measured) >= 2]


def ranges_in(steps: Sequence[Step]) -> int:
    """How many ranges of at least two measured steps the scan tests in these steps."""
    total = 0
    for seg in segments(steps):
        m = sum(1 for s in seg if s.measured)
        total += m * (m - 1) // 2
    return total


def critical_z(alpha: float, ranges: int) -> float:
    """z of each range's interval when ``ranges`` are tested at once with error ``alpha``."""
    return statistics.NormalDist().inv_cdf(1 - alpha / (2 * max(ranges, 1)))


@dataclass(frozen=True, slots=True, kw_only=True)
class Drift:
    """A range of steps (``first`` to ``last`` inclusive: the change after commit
    ``first - 1`` up to commit ``last``) whose sum leaves the parity band at the scan's z."""

    first: int
    last: int
    log: float
    se: float
    z: float
    contributors: tuple[int, ...]  # the steps that moved most in the drift's direction

    @property
    def interval(self) -> tuple[float, float]:
        return (math.exp(self.log - self.z * self.se), math.exp(self.log + self.z * self.se))

    @property
    def ratio(self) -> float:
        return math.exp(self.log)


def drifts(steps: Sequence[Step], *, z: float, parity: float, top: int = 3) -> list[Drift]:
    """The drifts among ``steps`` (module docstring): every range of two or more measured
    steps in a segment whose interval at ``z`` lies beyond ±ln(1 + parity); overlapping
    ones reduced to the strongest."""
    band = math.log1p(parity)
    found: list[tuple[float, Drift]] = []
    for seg in segments(steps):
        logs = np.array([s.estimate.centre if s.estimate else 0.0 for s in seg])
        var = np.array([s.estimate.se ** 2 if s.estimate else 0.0 for s in seg])
        measured = np.array([i for i, s in enumerate(seg) if s.measured])
        sums = np.concatenate([[0.0], np.cumsum(logs)])
        var_sums = np.concatenate([[0.0], np.cumsum(var)])
        for k, a in enumerate(measured[:-1]):
            ends = measured[k + 1:]  # every range from step a to a later measured step
            totals = sums[ends + 1] - sums[a]
            ses = np.sqrt(var_sums[ends + 1] - var_sums[a])
            out = (totals - z * ses > band) | (totals + z * ses < -band)
            for b, total, se in zip(ends[out], totals[out], ses[out], strict=True):
                found.append((abs(total) / se,
                              _drift(seg[a:b + 1], float(total), float(se), z, top)))
    chosen: list[Drift] = []
    for _, d in sorted(found, key=lambda t: -t[0]):
        if all(d.last < c.first or d.first > c.last for c in chosen):
            chosen.append(d)
    return sorted(chosen, key=lambda d: d.first)


def _drift(span: Sequence[Step], total: float, se: float, z: float, top: int) -> Drift:
    sign = 1.0 if total > 0 else -1.0
    moved = sorted((s for s in span if s.estimate and s.estimate.centre * sign > 0),
                   key=lambda s: -sign * (s.estimate.centre if s.estimate else 0.0))
    return Drift(first=span[0].index, last=span[-1].index, log=total, se=se, z=z,
                 contributors=tuple(s.index for s in moved[:top]))


def scan(series: Mapping[str, Sequence[Step]], parities: Mapping[str, float], *,
         alpha: float) -> tuple[float, int, dict[str, list[Drift]]]:
    """Every workload's drifts with the error ``alpha`` for the whole report: the z every
    range is tested at, how many ranges that is, and the drifts per workload."""
    ranges = sum(ranges_in(steps) for steps in series.values())
    z = critical_z(alpha, ranges)
    return z, ranges, {name: drifts(steps, z=z, parity=parities[name])
                       for name, steps in series.items()}
