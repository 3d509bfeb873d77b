"""The verdict rule: paired samples -> figures -> outcome, as docs/verdict.md states it.

Pure numpy: no I/O, no printing, and no exception for thin data. A comparison that
cannot be judged comes back as a ``Verdict`` whose outcome is ``inconclusive`` or
``invalid``, with a reason code and one short sentence saying why.

Choices the spec leaves open, made here:

- Pairs are matched by index; samples of unequal length are cut to the shorter one.
- For ``better: higher`` (a throughput) each value v is judged as 1/v, so that a ratio
  below 1 still means "candidate faster". The floor is a time, so it does not apply.
- The floor is checked against the median of *both* arms: a candidate that reads below
  it has most likely had its work deleted by the optimiser (verdict.md, last fact).
- ``ci_half`` is the interval's larger half-width h around ln(ratio), reported as the
  fraction exp(h) - 1, so that ``1 + ci_half`` is a ratio like ``1 + parity`` and
  "ratio leaves its tolerance" still implies "the interval excludes 1".
- Every comparison with a tolerance is made on the log scale (ln r > ln(1 + t) for
  "leaves upward", ln r < -ln(1 + t) for "downward"). That is the spec's rule; written
  this way, swapping the arms mirrors every decision exactly, not up to rounding.
- Half of the bootstrap resamples are the mirror images of the other half (position j
  of the sorted per-pair log ratios read as n - 1 - j), so the resamples of swapped
  arms are exactly the negated resamples; B is rounded up to an even number for that.
  Each resample is still a uniform draw of n pairs with replacement.
- Timing modes: an inconclusive result whose paired ratio left its tolerance while the
  best runs did not is ``best_disagree``; it is ``timing_modes`` when the single-run
  spread (IQR / median of the noisier arm) is more than ``TIMING_MODES_FACTOR`` (2)
  times the tolerance: single runs vary far more than the estimate does, which is what
  runs split between a fast and a slow mode look like. Where the best runs moved and the
  ratio did not, the term that held the ratio back is named, as more runs resolve it.
- Sequential looks below ``low_bounded_from(low_quantile)`` runs a side (51): a change is
  called only where the builds' runs lie apart (``_apart``), from the runs at which
  ``apart_bound`` is LOW_ALPHA at most (15 triplets), a slower one from more pairs but for
  a few slow runs of base's across (``apart_spared``) or any that lie above nearly all of
  head's runs (``above_spared``, ``_amid``), and a faster one from
  ``pooled_from`` (32 triplets) where head's fast runs move with the median against both
  base arms' runs pooled (``_pooled_logs``; docs/verdict.md, "Calls from few pairs").

Why one module of about 800 lines: the rule's decisions read top to bottom in the order
docs/verdict.md states them (the figures, the decision, the judgement, the reasons in
words); the intervals they stand on are ``intervals``'.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from benchbot.core.model import REASON_CODES, Rule, Verdict
from benchbot.verdict.intervals import (
    LOW_ALPHA,
    FloatArray,
    IndexArray,
    above_spared,
    apart_from,
    apart_spared,
    low_bounded_from,
    order_interval,
    pooled_from,
    triplet_interval,
    triplet_logs,
)

# Each constant is one line of the rule; docs/verdict.md, "Constants of the rule and
# the evidence for them", gives the measurements behind each value.
# An inconclusive best_disagree becomes timing_modes when spread > factor * tolerance.
TIMING_MODES_FACTOR = 2.0
# Never suggest more runs than this (docs/verdict.md, "Suggested run count").
MAX_SUGGESTED_RUNS = 1000
# Sequential: the fastest runs must move at least this share of the median's move (log).
AGREEMENT = 0.5
# The same share for the two low quantiles (the 10th percentile and TAIL_QUANTILE).
LOW_AGREEMENT = 0.6
# A third depth of the fast runs, between the 10th percentile and the fastest.
TAIL_QUANTILE = 0.05


# The single runs whose low quantiles stand for the best runs: the reference's arms (one
# or more, each as many runs as the candidate's) and the candidate's.
Low = tuple[Sequence[npt.ArrayLike], npt.ArrayLike]


def compare(x: npt.ArrayLike, y: npt.ArrayLike, *, rule: Rule, aa_noise: float = 0.0,
            low: Low | None = None, again: npt.ArrayLike | None = None) -> Verdict:
    """Judge candidate y against reference x, paired by index (docs/verdict.md).

    ``again``: triplets, a second reference run of each round (base again). The central
    estimate is then the median of y's log ratios to both references and its interval
    the one their ranks give (``triplet_interval``); the figures of single runs (spread,
    medians, floor) read the geometric mean of the two references, and the best runs
    both reference arms, unless ``low`` names others.

    ``low``: the single runs whose low quantiles stand for the best runs (with
    ``rule.low_quantile``), when they are not x and y themselves.
    """
    return compare_many([x], [y], rules=[rule], aa_noise=[aa_noise], lows=[low],
                        agains=[again])[0]


def compare_many(
    xs: Sequence[npt.ArrayLike],
    ys: Sequence[npt.ArrayLike],
    *,
    rules: Rule | Sequence[Rule],
    aa_noise: float | Sequence[float] = 0.0,
    lows: Sequence[Low | None] | None = None,
    agains: Sequence[npt.ArrayLike | None] | None = None,
) -> list[Verdict]:
    """Judge many comparisons at once: the same verdicts as ``compare`` on each, but fast.

    Comparisons with the same number of pairs, resamples and seed share one bootstrap
    index matrix, so each costs a gather of 2 x B values. A single rule or A/A noise
    applies to every comparison. Sequences of different lengths are a programming
    error (ValueError), not thin data.
    """
    count = len(xs)
    rule_list = [rules] * count if isinstance(rules, Rule) else list(rules)
    aa_list = (
        [float(aa_noise)] * count
        if isinstance(aa_noise, (int, float))
        else [float(a) for a in aa_noise]
    )
    low_list: list[Low | None] = list(lows) if lows is not None else [None] * count
    again_list = list(agains) if agains is not None else [None] * count
    if not len(ys) == len(rule_list) == len(aa_list) == len(low_list) == len(again_list) == count:
        raise ValueError("compare_many needs as many ys, rules, aa_noise, lows and agains as xs")

    verdicts: list[Verdict | None] = [None] * count
    groups: dict[tuple[int, int, int], list[tuple[int, FloatArray, FloatArray]]] = {}
    # triplets: y's sorted log ratios to both references, and their counts' spread
    pooled: dict[int, tuple[FloatArray, float]] = {}
    for i, (x, y, rule) in enumerate(zip(xs, ys, rule_list, strict=True)):
        judged = _judged_samples(x, y, rule)
        again = again_list[i]
        if not isinstance(judged, Verdict) and again is not None:
            tripled = _with_again(judged, again, rule)
            if isinstance(tripled, Verdict):
                judged = tripled
            else:
                judged, pooled[i] = tripled
                if low_list[i] is None:
                    low_list[i] = ((x, again), y)
        if isinstance(judged, Verdict):
            verdicts[i] = judged
            continue
        key = (judged[0].size, _resample_count(rule.bootstrap), rule.seed)
        groups.setdefault(key, []).append((i, judged[0], judged[1]))

    for (_, resamples, seed), members in groups.items():
        levels = np.array([_lower_level(rule_list[i]) for i, _, _ in members])
        figures = _group_figures(
            np.stack([m[1] for m in members]),
            np.stack([m[2] for m in members]),
            levels,
            resamples=resamples,
            seed=seed,
        )
        for (i, x, y), fig in zip(members, figures, strict=True):
            rule = rule_list[i]
            if i in pooled:
                d, spread = pooled[i]
                alpha = rule.look_alpha if rule.look_alpha is not None else 2 * _lower_level(rule)
                lo, hi = triplet_interval(d, alpha, spread=spread)
                fig = replace(fig, log_ratio=float(np.median(d)), log_lo=lo, log_hi=hi)
            elif rule.look_alpha is not None:
                d = np.sort(np.log(y) - np.log(x))
                lo, hi = order_interval(d, 0.5, rule.look_alpha)
                fig = replace(fig, log_lo=lo, log_hi=hi)
            if rule.low_quantile is not None:
                fig = _with_low(fig, rule, low_list[i] or ((x,), y))
            verdicts[i] = _decide(fig, rule, aa_list[i])
    return [v for v in verdicts if v is not None]


def _with_again(judged: tuple[FloatArray, FloatArray], again: npt.ArrayLike, rule: Rule
                ) -> tuple[tuple[FloatArray, FloatArray], tuple[FloatArray, float]] | Verdict:
    """Triplets: the geometric mean of the two references (for the figures of single runs)
    and y; y's sorted log ratios to each reference (2n values) and their counts' spread
    (``rank_spread``); all cut to the shortest."""
    x, y = judged
    second = _judged_samples(again, y, rule)
    if isinstance(second, Verdict):
        return second
    a = second[0]
    n = min(x.size, a.size)
    x, a, y = x[:n], a[:n], y[:n]
    return (np.sqrt(x * a), y), triplet_logs(np.log(x), np.log(a), np.log(y))


def warm_up() -> None:
    """Judge a made-up comparison once, so that numpy's first-use costs (its lazily
    imported random module, about 40 ms) are paid before measuring, not between runs."""
    base = [1e6 + 1e3 * i for i in range(12)]
    compare(base, [1.01 * t for t in base], rule=Rule(seed=0))


def invalid(reason_code: str, reason: str, *, n: int = 0) -> Verdict:
    """A verdict of ``invalid``: the workload was not compared at all."""
    if reason_code not in REASON_CODES:
        raise ValueError(f"unknown reason code {reason_code!r}")
    return Verdict(outcome="invalid", reason=reason, reason_code=reason_code, n=n)


def aa_noise_of(aa_verdict: Verdict | None) -> float:
    """The A/A noise an A/B comparison must clear: max(r, 1/r) - 1 of the A/A ratio r."""
    if aa_verdict is None or aa_verdict.ratio is None:
        return 0.0
    r = aa_verdict.ratio
    return max(r, 1.0 / r) - 1.0


def suggested_runs(n: int, ci_half: float, ratio: float, parity: float) -> int:
    """How many pairs would likely settle an interval this wide (verdict.md).

    With h = ln(1 + ci_half) and target = max(|ln ratio|, ln(1 + parity)) / 2, the
    half-width shrinks as 1/sqrt(n): n' = ceil(n (h / target)^2), at least n + 10. Not
    clamped: above MAX_SUGGESTED_RUNS it says that no run count benchbot takes would do.
    """
    return max(_runs_for(n, ci_half, ratio, parity), n + 10)


def confirm(first: Verdict, second: Verdict) -> Verdict:
    """The first verdict if an independent re-run gives the same outcome, else inconclusive."""
    if second.outcome == first.outcome:
        return first
    return replace(
        first,
        outcome="inconclusive",
        reason_code="not_confirmed",
        reason=_not_confirmed_reason(second),
        suggested_runs=None,
    )


def confirm_pooled(first: Verdict, second: Verdict, pooled: Verdict) -> Verdict:
    """The verdict to report after confirmation: figures of both phases, outcome of the rule.

    ``pooled`` judges both phases' samples together; its figures are kept. The outcome
    and reason come from ``confirm(first, second)``: the first phase's outcome if the
    confirmation agrees, else ``inconclusive`` (not_confirmed, whatever else the pooled
    data would say: the disagreement is the reason). Where the pooled data reach the
    confirmed outcome on their own, ``pooled`` is returned unchanged.
    """
    decided = confirm(first, second)
    if pooled.outcome == decided.outcome and decided.reason_code != "not_confirmed":
        return pooled
    return replace(
        pooled,
        outcome=decided.outcome,
        reason=decided.reason,
        reason_code=decided.reason_code,
        suggested_runs=pooled.suggested_runs if decided.outcome == "inconclusive" else None,
    )


def force_aa_failed(verdict: Verdict, aa_verdict: Verdict) -> Verdict:
    """An A/B verdict overruled because the A/A check called base different from itself.

    An ``invalid`` verdict stays as it is: it says more (the workload was not compared).
    """
    if verdict.outcome == "invalid":
        return verdict
    read = aa_verdict.outcome if aa_verdict.ratio is None else _signed_pct(aa_verdict.ratio)
    return replace(
        verdict,
        outcome="inconclusive",
        reason_code="aa_failed",
        reason=f"A/A check read base against itself as {read}",
        suggested_runs=None,
    )


@dataclass(frozen=True, slots=True)
class _Figures:
    """One comparison's figures before the rule is applied; logs are of ratios y/x."""

    n: int
    log_ratio: float
    log_lo: float
    log_hi: float
    log_best: float
    best_ratio: float
    median_ratio: float
    spread: float
    median_x: float
    median_y: float
    min_x: float
    boot_sd: float = 0.0  # standard deviation of the bootstrap medians (log scale)
    low_ratio: float | None = None  # with rule.low_quantile: that quantile's ratio
    low_x: float | None = None  # and the reference's quantile (for the floor)
    low_half: float = 0.0  # the low ratio's interval on the side toward no change (log scale)
    low_far: float = 0.0  # and on the side away from it: how far the fast runs may have moved
    low_bounded: bool = True  # False: too few runs for the interval's lower bound (clipped)
    log_tail: float | None = None  # with rule.low_quantile: the TAIL_QUANTILE ratio (log)
    # Not low_bounded: the two builds' runs lie apart the way the median moved (None: too
    # few runs for even that), and how many of head's runs reach across (``_apart``)
    apart: bool | None = None
    across: int = 0
    apart_from: int = 0  # the fewest pairs from which the runs lying apart may call a change
    spared: int = 0  # how many runs across these pairs may spare (intervals.apart_spared)
    # Reading slower: how many of head's runs a run of base's across may lie below and be
    # spared all the same (intervals.above_spared; None: too few pairs), and how many of
    # base's runs across lie lower than that, in head's midst (``_amid``)
    above: int | None = None
    amid: int = 0
    ref_runs: int = 0  # the reference's runs (both base arms' in triplets)
    # Not low_bounded, reading faster: the pairs from which the reference's runs pooled may
    # confirm it (``intervals.pooled_from``; 0: never below low_bounded), and from there
    # head's three depths against the pooled reference's (log ratios: the low quantile, the
    # TAIL_QUANTILE, the fastest runs)
    pooled_from: int = 0
    pooled_logs: tuple[float, float, float] | None = None


def _judged_samples(
    x: npt.ArrayLike, y: npt.ArrayLike, rule: Rule
) -> tuple[FloatArray, FloatArray] | Verdict:
    """The values the rule judges (times; throughputs inverted), or why there are none."""
    xa = np.asarray(x, dtype=np.float64).ravel()
    ya = np.asarray(y, dtype=np.float64).ravel()
    n = min(xa.size, ya.size)
    xa, ya = xa[:n], ya[:n]
    if n == 0:
        return Verdict(
            outcome="inconclusive",
            reason_code="few_runs",
            reason=_few_runs_reason(rule, 0),
            suggested_runs=rule.min_runs,
        )
    if not (np.isfinite(xa).all() and np.isfinite(ya).all()):
        return invalid("run_failed", "a run gave no finite value", n=n)
    if (xa <= 0).any() or (ya <= 0).any():
        return invalid(
            "too_fast", "a reported value of 0: too fast to measure, or the result is unused", n=n
        )
    if rule.better == "higher":
        return 1.0 / xa, 1.0 / ya
    return xa, ya


def _resample_count(bootstrap: int) -> int:
    """B rounded up to an even number (half the resamples mirror the other half)."""
    return max(2, bootstrap + bootstrap % 2)


def _lower_level(rule: Rule) -> float:
    """The lower percentile of the two-sided interval at level 1 - alpha/k."""
    return min(max(rule.alpha / (2 * max(rule.comparisons, 1)), 0.0), 0.5)


@functools.lru_cache(maxsize=16)
def _median_positions(n: int, resamples: int, seed: int) -> tuple[IndexArray, IndexArray]:
    """For each resample, the positions of its two middle order statistics (equal for odd n).

    Resampling positions of the *sorted* per-pair log ratios d: because sorting commutes
    with a monotone lookup, the median of d[idx] is the mean of d at the two middle
    order statistics of idx. One partition of the index matrix therefore serves every
    comparison with the same n, B and seed.
    """
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples // 2, n))
    k_lo, k_hi = (n - 1) // 2, n // 2
    part = np.partition(idx, sorted({k_lo, k_hi}), axis=1)
    lo, hi = part[:, k_lo], part[:, k_hi]
    # The mirror image of a resample (j -> n - 1 - j) swaps which middle is lower.
    lo_all = np.concatenate([lo, n - 1 - hi]).astype(np.intp)
    hi_all = np.concatenate([hi, n - 1 - lo]).astype(np.intp)
    lo_all.setflags(write=False)
    hi_all.setflags(write=False)
    return lo_all, hi_all


def _group_figures(
    xv: FloatArray, yv: FloatArray, levels: FloatArray, *, resamples: int, seed: int
) -> list[_Figures]:
    """The figures of W comparisons of n pairs each: xv, yv have shape (W, n)."""
    n = xv.shape[1]
    lx, ly = np.log(xv), np.log(yv)
    d = np.sort(ly - lx, axis=1)
    log_ratio = (d[:, (n - 1) // 2] + d[:, n // 2]) * 0.5
    lo_pos, hi_pos = _median_positions(n, resamples, seed)
    boot = np.sort((d[:, lo_pos] + d[:, hi_pos]) * 0.5, axis=1)
    log_lo, log_hi = _percentiles(boot, levels)
    log_best = ly.min(axis=1) - lx.min(axis=1)
    boot_sd = boot.std(axis=1)
    min_x, min_y = xv.min(axis=1), yv.min(axis=1)
    med_x, med_y = np.median(xv, axis=1), np.median(yv, axis=1)
    spread = np.maximum(_relative_iqr(xv, med_x), _relative_iqr(yv, med_y))
    return [
        _Figures(
            n=n,
            log_ratio=float(log_ratio[r]),
            log_lo=float(log_lo[r]),
            log_hi=float(log_hi[r]),
            log_best=float(log_best[r]),
            best_ratio=float(min_y[r] / min_x[r]),
            median_ratio=float(med_y[r] / med_x[r]),
            spread=float(spread[r]),
            median_x=float(med_x[r]),
            median_y=float(med_y[r]),
            min_x=float(min_x[r]),
            boot_sd=float(boot_sd[r]),
        )
        for r in range(xv.shape[0])
    ]


def _with_low(fig: _Figures, rule: Rule, low: Low) -> _Figures:
    """The best-run side judged on a low quantile of single runs instead of the fastest.

    The reference's quantile is the geometric mean of its arms' (each as many runs as the
    candidate's: the minimum of more runs would be lower by count alone). With
    ``rule.look_alpha`` (sequential looks) the ratio of quantiles gets an interval too,
    from the order statistics around each quantile (``order_interval``): shown, and read
    by "more runs cannot help"; a call rests on the central interval and on how far the
    fast runs moved with it (_judge), not on this interval (benchmarks/README.md,
    "Decisive verdicts").

    Note: the fastest run alone moved by +-3% between identical builds on a 2-core VM, so a
    true +3% change was withheld by it in 3 of 10 repetitions (benchmarks/README.md); the
    10th percentile moves far less, and timing modes leave it alone while the fast mode
    holds more than a tenth of the runs.
    """
    assert rule.low_quantile is not None
    arms = [np.asarray(a, dtype=np.float64).ravel() for a in low[0]]
    ys = np.asarray(low[1], dtype=np.float64).ravel()
    if rule.better == "higher":
        arms, ys = [1.0 / a for a in arms], 1.0 / ys
    if any(a.size == 0 or np.any(a <= 0) for a in arms) or ys.size == 0 or np.any(ys <= 0):
        return fig
    at_look = rule.look_alpha is not None
    x_logs = [_low_log(a, rule.low_quantile, at_look) for a in arms]
    log_qx = sum(q for q, _, _ in x_logs) / len(x_logs)
    log_qy, y_below, y_above = _low_log(ys, rule.low_quantile, at_look)
    # The ratio's interval side by side (the arms' sides in quadrature): it reaches down by
    # head's lower side and the reference's upper sides, up by the others. A slower call
    # rests on the lower edge, a faster one on the upper; the far side says only how far
    # the fast runs may yet move (sequential._modes_only). A 10th percentile's interval is
    # lopsided where the fast runs trail off (the demo's sort: often 2-4x as long below).
    x_above = math.sqrt(sum(h * h for _, _, h in x_logs)) / len(x_logs)
    x_below = math.sqrt(sum(lo * lo for _, lo, _ in x_logs)) / len(x_logs)
    down, up = math.hypot(y_below, x_above), math.hypot(y_above, x_below)
    near, far = (down, up) if fig.log_ratio >= 0 else (up, down)
    qx = math.exp(log_qx)
    # The fastest runs the same way: head's against the geometric mean of the arms' (the
    # fastest of the per-triplet means would be higher than any arm's: a mean of two runs
    # spreads less, and its minimum sits higher by that alone).
    log_fastest = float(np.log(ys.min())) - sum(float(np.log(a.min())) for a in arms) / len(arms)
    log_ty = _low_log(ys, TAIL_QUANTILE, False)[0]
    log_tail = log_ty - sum(
        _low_log(a, TAIL_QUANTILE, False)[0] for a in arms) / len(arms)
    bounded = not at_look or min(a.size for a in (*arms, ys)) >= low_bounded_from(rule.low_quantile)
    apart, across = (None, 0) if bounded else _apart(arms, ys, rule.low_quantile, fig.log_ratio > 0)
    first = 0 if bounded else apart_from(rule.low_quantile, len(arms))
    spared = 0 if bounded else apart_spared(ys.size, rule.low_quantile, len(arms),
                                            fig.log_ratio > 0) or 0
    above = (None if bounded or fig.log_ratio <= 0
             else above_spared(ys.size, rule.low_quantile, len(arms)))
    amid = 0 if above is None else _amid(np.concatenate(arms), ys, above)
    pooled = None if bounded or fig.log_ratio >= 0 else pooled_from(rule.low_quantile, len(arms))
    pooled_logs = (_pooled_logs(arms, ys, rule.low_quantile, log_qy, log_ty)
                   if pooled is not None and ys.size >= pooled else None)
    return replace(fig, log_best=log_qy - log_qx, low_ratio=math.exp(log_qy - log_qx), low_x=qx,
                   low_half=near, low_far=far, low_bounded=bounded,
                   best_ratio=math.exp(log_fastest), log_tail=log_tail, apart=apart, across=across,
                   apart_from=first, spared=spared, above=above, amid=amid,
                   ref_runs=sum(a.size for a in arms),
                   pooled_from=pooled or 0, pooled_logs=pooled_logs)


def _pooled_logs(arms: Sequence[FloatArray], ys: FloatArray, q: float, log_qy: float,
                 log_ty: float) -> tuple[float, float, float]:
    """Head's three depths of the fast runs (the q-quantile, the TAIL_QUANTILE, the
    fastest) against the reference's runs pooled, as log ratios: where the reference's
    fastest run of all landed in its fast mode, head cannot read faster there by timing
    modes alone (docs/verdict.md, "A faster call from the reference's runs"). The fastest of
    the pooled runs is the minimum of more runs than head's, lower by count alone: that
    only holds a faster call back. ``log_qy``, ``log_ty``: head's q- and TAIL_QUANTILE, ln."""
    ref = np.concatenate(arms)
    return (log_qy - _low_log(ref, q, False)[0], log_ty - _low_log(ref, TAIL_QUANTILE, False)[0],
            float(np.log(ys.min()) - np.log(ref.min())))


def _apart(arms: Sequence[FloatArray], ys: FloatArray, q: float, slower: bool
           ) -> tuple[bool | None, int]:
    """Whether the builds' runs lie apart the way ``slower`` says but for the runs across
    that their pairs may spare, and how many are across: for a slower call, the reference's
    runs at or above head's fastest (a slow run of base's spoils it); for a faster one,
    head's runs at or above the reference's fastest (a slow run of head's). Spared: up to
    ``apart_spared`` runs across wherever they lie, or for a slower call from
    ``above_tiers``' pairs, any number where none lies in head's midst (``_amid``). None
    where the pairs are too few for even none across."""
    ref = np.concatenate(arms)
    across = int(np.count_nonzero(ref >= ys.min()) if slower
                 else np.count_nonzero(ys >= ref.min()))
    spared = apart_spared(ys.size, q, len(arms), slower)
    if spared is None:
        return None, across
    if across <= spared:
        return True, across
    above = above_spared(ys.size, q, len(arms)) if slower else None
    return above is not None and _amid(ref, ys, above) == 0, across


def _amid(ref: FloatArray, ys: FloatArray, above: int) -> int:
    """How many of the reference's runs at or above head's fastest lie below more than
    ``above`` of head's runs: in head's midst, where a slow run of base's would lie were
    head's runs all in a slow mode of the same build (docs/verdict.md, "A slower call past
    base's slow runs"). A run as slow as one of head's counts that one as above it."""
    ordered = np.sort(ys)
    at_or_above = ys.size - np.searchsorted(ordered, ref, side="left")
    return int(np.count_nonzero((ref >= ordered[0]) & (at_or_above > above)))


def _exp(log_value: float | None) -> float | None:
    return None if log_value is None else math.exp(log_value)


def _low_log(values: FloatArray, q: float, with_interval: bool) -> tuple[float, float, float]:
    """ln of the q-quantile of ``values``, and (``with_interval``) how far its LOW_ALPHA
    interval reaches below and above it on the log scale (``order_interval``; 0 otherwise)."""
    logs = np.sort(np.log(values))
    point = float(np.quantile(logs, q))
    if not with_interval:
        return point, 0.0, 0.0
    # Below low_bounded_from(q) runs the interval is cut to the runs there are, so that
    # the report can show a width; no change is called on it (_judge).
    lo, hi = order_interval(logs, q, LOW_ALPHA, clip=True)
    return point, point - lo, hi - point


def _percentiles(boot: FloatArray, levels: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Row-wise percentiles q and 1 - q of sorted rows, interpolated linearly like numpy.

    The upper one is read at the mirrored position with the same weights, so that
    negated rows give exactly negated, swapped percentiles.
    """
    b = boot.shape[1]
    pos = (b - 1) * levels
    i = np.floor(pos).astype(np.intp)
    f = pos - i
    i1 = np.minimum(i + 1, b - 1)
    rows = np.arange(boot.shape[0])
    lo = (1.0 - f) * boot[rows, i] + f * boot[rows, i1]
    hi = f * boot[rows, b - 1 - i1] + (1.0 - f) * boot[rows, b - 1 - i]
    return lo, hi


def _relative_iqr(values: FloatArray, median: FloatArray) -> FloatArray:
    """(q3 - q1) / median of each row, with numpy's default quantiles."""
    q1, q3 = np.quantile(values, [0.25, 0.75], axis=1)
    result: FloatArray = (q3 - q1) / median
    return result


def _decide(fig: _Figures, rule: Rule, aa_noise: float) -> Verdict:
    """Apply the rule of verdict.md ("Outcomes") to one comparison's figures."""
    floor = 0.0 if rule.better == "higher" else rule.floor_ns
    for arm, median in (("reference", fig.median_x), ("candidate", fig.median_y)):
        if median < floor:
            return invalid(
                "too_fast",
                f"the {arm}'s median {_duration(median)} is below the {_duration(floor)} "
                "floor: too fast to measure",
                n=fig.n,
            )
    m = fig.log_ratio
    if not (math.isfinite(fig.log_lo) and math.isfinite(fig.log_hi)):
        return Verdict(
            outcome="inconclusive", reason_code="few_runs", n=fig.n, ratio=math.exp(m),
            best_ratio=fig.best_ratio, low_ratio=fig.low_ratio, tail_ratio=_exp(fig.log_tail),
            median_ratio=fig.median_ratio,
            spread=fig.spread, aa_noise=aa_noise,
            reason=f"{fig.n} pairs are too few to bound the ratio at the error this look may "
            "spend: more pairs will",
        )
    ci_half = math.expm1(max(abs(fig.log_hi - m), abs(m - fig.log_lo)))
    low_interval = fig.low_ratio is not None and rule.look_alpha is not None
    floor_med, floor_best = floor / fig.median_x, floor / (fig.low_x or fig.min_x)
    noise = max(ci_half, aa_noise, floor_med)
    verdict = Verdict(
        outcome="inconclusive",
        n=fig.n,
        ratio=math.exp(m),
        ci=(math.exp(fig.log_lo), math.exp(fig.log_hi)),
        best_ratio=fig.best_ratio,
        low_ratio=fig.low_ratio,
        tail_ratio=_exp(fig.log_tail),
        low_ci_half=math.expm1(fig.low_half) if low_interval else None,
        low_ci_far=math.expm1(fig.low_far) if low_interval else None,
        median_ratio=fig.median_ratio,
        spread=fig.spread,
        ci_half=ci_half,
        aa_noise=aa_noise,
        floor_med=floor_med,
        floor_best=floor_best,
        noise=noise,
        tolerance=max(rule.parity, noise),
        best_tolerance=max(rule.parity, floor_best),
    )
    if fig.n < rule.min_runs:
        runs = min(_runs_for(fig.n, ci_half, math.exp(m), rule.parity), MAX_SUGGESTED_RUNS)
        return replace(
            verdict,
            reason_code="few_runs",
            reason=_few_runs_reason(rule, fig.n),
            suggested_runs=max(rule.min_runs, runs),
        )
    return _judge(verdict, fig, rule)


def _judge(verdict: Verdict, fig: _Figures, rule: Rule) -> Verdict:
    """The outcome of a verdict whose figures are all known; decisions on the log scale."""
    assert verdict.tolerance is not None and verdict.best_tolerance is not None
    assert verdict.noise is not None and verdict.ci_half is not None
    assert verdict.floor_med is not None
    parity, m = rule.parity, fig.log_ratio
    t_log, bt_log = math.log1p(verdict.tolerance), math.log1p(verdict.best_tolerance)
    p_log = math.log1p(parity)
    up = fig.log_best > bt_log or not rule.best_check
    down = fig.log_best < -bt_log or not rule.best_check
    if rule.low_quantile is not None and rule.best_check:
        # Three depths of the fast runs, each leaving best_tolerance (max(parity, floor))
        # and moving with the median nearly as far (the two quantiles LOW_AGREEMENT as
        # far, the fastest runs AGREEMENT): the low quantile (steady at few runs), the
        # TAIL_QUANTILE and the fastest runs. Where the builds land in a slow mode in
        # different shares of their runs, their 10th percentiles sit at different depths
        # of the fast mode and can move by themselves, with the median; the lower the
        # depth, the less (TAIL_QUANTILE says more). benchmarks/README.md, "Decisive
        # verdicts".
        all_three = _depths_move((fig.log_best, fig.log_tail, math.log(fig.best_ratio)),
                                 bt_log, m)
        up, down = all_three and m > 0, all_three and m < 0
        # A faster reading short of the runs an arm needs may rest on both base arms' runs
        # pooled instead (``pooled_from``): all three depths again, against them.
        pooled = m < 0 and fig.pooled_logs is not None and _depths_move(fig.pooled_logs, bt_log, m)
        if (((m > t_log and up) or (m < -t_log and down)) and not fig.low_bounded
                and not fig.apart and not pooled):
            return _waits_for_pairs(verdict, fig, rule)
    if m > t_log and up:
        return replace(verdict, outcome="slower")
    if m < -t_log and down:
        return replace(verdict, outcome="faster")
    if verdict.noise <= parity and fig.log_lo >= -p_log and fig.log_hi <= p_log:
        if fig.log_lo > 0 or fig.log_hi < 0:
            return replace(
                verdict,
                outcome="level",
                reason_code="below_parity",
                reason=f"real, but below the {_setting_pct(parity)} that matters",
            )
        return replace(verdict, outcome="level")
    if abs(m) > t_log:  # the ratio left its tolerance; the best runs did not follow
        return _best_disagree(verdict)
    held_back = verdict.noise > parity  # else the interval merely pokes out of the band
    if held_back and verdict.floor_med >= max(verdict.ci_half, verdict.aa_noise):
        return replace(
            verdict,
            reason_code="floor",
            reason=f"the {_duration(rule.floor_ns)} floor of process timing is "
            f"{_pct(verdict.floor_med)} of this workload's median: more runs will not help, "
            "a metric the program reports itself would",
        )
    if held_back and verdict.aa_noise >= verdict.ci_half:
        return replace(
            verdict,
            reason_code="aa_noise",
            reason=f"the A/A check's own error of {_pct(verdict.aa_noise)} is larger than "
            "parity: the runner is noisier than the difference that matters",
        )
    return _too_few_for_spread(verdict, rule)


def _waits_for_pairs(verdict: Verdict, fig: _Figures, rule: Rule) -> Verdict:
    """A change the median and the fast runs read, short of the pairs from which the fast
    runs may confirm it: how many a call needs, and why these do not do."""
    assert rule.low_quantile is not None
    need = low_bounded_from(rule.low_quantile)
    faster = fig.log_ratio < 0
    sooner = fig.pooled_from if faster and fig.pooled_from else 0
    read = (f"it reads {_signed_pct(math.exp(fig.log_ratio))}, but {fig.n} pairs are too few "
            "for the fast runs to confirm it: a change is called from "
            + (f"{need} pairs on (a faster one from {sooner})" if sooner else f"{need} pairs on"))
    if fig.apart is None:
        reason = f"{read}, or from {fig.apart_from} where the builds' runs do not overlap"
    else:
        whose = (f"of head's {fig.n} reach base's fastest" if faster
                 else f"of base's {fig.ref_runs} reach head's fastest")
        spared = "" if sooner else f"; {fig.spared} may at {fig.n} pairs"
        if not faster and fig.above is not None:
            spared += (f", or any number lying above all but {fig.above} of head's runs: "
                       f"{fig.amid} do not")
        reason = (f"{read}, or before where the builds' runs do not overlap ({fig.across} "
                  f"{whose}{spared})")
    if sooner and fig.n >= sooner and fig.pooled_logs is not None:
        reason += (f"; against both base arms' runs together, head's fastest reads "
                   f"{_signed_pct(math.exp(fig.pooled_logs[2]))} and its "
                   f"{round(rule.low_quantile * 100)}th percentile "
                   f"{_signed_pct(math.exp(fig.pooled_logs[0]))}: not as far as a call needs")
    runs = sooner if sooner and fig.n < sooner else need
    return replace(verdict, reason_code="few_runs", suggested_runs=runs, reason=reason)


def _depths_move(depths: tuple[float, float | None, float], tolerance_log: float,
                 central_log: float) -> bool:
    """The three depths of the fast runs (log ratios: the low quantile, the TAIL_QUANTILE
    where there is one, the fastest runs) each move with the median (``_moves_with``): the
    quantiles LOW_AGREEMENT as far, the fastest AGREEMENT."""
    low, tail, fastest = depths
    return (_moves_with(low, tolerance_log, central_log, LOW_AGREEMENT)
            and _moves_with(fastest, tolerance_log, central_log, AGREEMENT)
            and (tail is None or _moves_with(tail, tolerance_log, central_log, LOW_AGREEMENT)))


def _moves_with(log_est: float, tolerance_log: float, central_log: float, share: float) -> bool:
    """A best-run estimate (log ratio) leaves its tolerance the way the central estimate
    moved, and at least ``share`` of as far (AGREEMENT, LOW_AGREEMENT)."""
    return ((log_est > 0) == (central_log > 0)
            and abs(log_est) > max(tolerance_log, share * abs(central_log)))


def _best_disagree(verdict: Verdict) -> Verdict:
    """Inconclusive: the paired ratio moved, the best runs did not (perhaps timing modes).
    Each best-run estimate had to leave best_tolerance (_judge)."""
    assert verdict.ratio is not None and verdict.best_ratio is not None
    assert verdict.spread is not None and verdict.tolerance is not None
    read = f"the runs read {_signed_pct(verdict.ratio)}"
    if verdict.low_ratio is None:
        moved = f"{read} but the best runs {_signed_pct(verdict.best_ratio)}"
    else:  # sequential: a low quantile, and lower depths must point the same way
        low = f"the fast runs (10th percentile) {_signed_pct(verdict.low_ratio)}"
        fastest = f"the fastest {_signed_pct(verdict.best_ratio)}"
        tail = (None if verdict.tail_ratio is None
                else f"the {round(TAIL_QUANTILE * 100)}th percentile {_signed_pct(verdict.tail_ratio)}")
        points = f"{tail}, {fastest}" if tail else fastest
        central, low_log = math.log(verdict.ratio), math.log(verdict.low_ratio)
        bt_log = math.log1p(verdict.best_tolerance or 0.0)
        if _moves_with(low_log, bt_log, central, LOW_AGREEMENT):
            if verdict.tail_ratio is None or _moves_with(
                    math.log(verdict.tail_ratio), bt_log, central, LOW_AGREEMENT):
                # the fastest runs did not follow
                moved = f"{read} and {low}, but {fastest}" + (f" ({tail})" if tail else "")
            elif _moves_with(math.log(verdict.best_ratio), bt_log, central, AGREEMENT):
                moved = f"{read} and {low}, but {tail} ({fastest})"
            else:
                moved = f"{read} and {low}, but {tail} and {fastest}"
        elif (low_log > 0) == (central > 0):  # the same way, but not far enough
            need = math.exp(math.copysign(max(bt_log, LOW_AGREEMENT * abs(central)), central))
            moved = f"{read}, but {low} is short of the {_signed_pct(need)} a call needs ({points})"
        else:
            moved = f"{read} but {low} ({points})"
    if verdict.spread > TIMING_MODES_FACTOR * verdict.tolerance:
        return replace(
            verdict,
            reason_code="timing_modes",
            reason=f"timing modes: single runs vary by {_pct(verdict.spread)} and {moved}",
        )
    return replace(
        verdict,
        reason_code="best_disagree",
        reason=f"{moved}: a real difference moves both alike",
    )


def _too_few_for_spread(verdict: Verdict, rule: Rule) -> Verdict:
    """Inconclusive: the interval is too wide for this spread; more runs would settle it."""
    assert verdict.ci_half is not None and verdict.ratio is not None and verdict.ci is not None
    need = suggested_runs(verdict.n, verdict.ci_half, verdict.ratio, rule.parity)
    runs = need if need <= MAX_SUGGESTED_RUNS else None
    # Fixed runs count "runs" per phase (--runs N); sequential measuring counts pairs.
    counted = "pairs" if rule.look_alpha is not None else "runs"
    parity = _setting_pct(rule.parity)
    lo, hi = verdict.ci
    near, far = sorted(abs(math.log(edge / verdict.ratio)) for edge in (lo, hi))
    if verdict.ci_half > rule.parity and far > 1.5 * near:  # lopsided: "±" would mislead
        wide = (f"the interval {_signed_pct(lo)}..{_signed_pct(hi)} is too wide for the "
                f"{parity} parity (one side {_pct(verdict.ci_half)} from the median)")
    elif verdict.ci_half > rule.parity:
        wide = f"the interval ±{_pct(verdict.ci_half)} is wider than the {parity} parity"
    else:
        wide = f"the interval {_signed_pct(lo)}..{_signed_pct(hi)} reaches past the {parity} parity"
    return replace(
        verdict,
        reason_code="spread",
        reason=(f"{wide}: about {need} {counted} would settle it" if runs is not None else
                f"{wide}: about {need} {counted} would settle it, more than the "
                f"{MAX_SUGGESTED_RUNS} benchbot takes (quiet the runner, or judge at a wider parity)"),
        suggested_runs=runs,
    )


def _runs_for(n: int, ci_half: float, ratio: float, parity: float) -> int:
    """ceil(n (h / target)^2) of verdict.md, unclamped (MAX_SUGGESTED_RUNS if no target)."""
    target = max(abs(math.log(ratio)), math.log1p(parity)) / 2
    if target <= 0:
        return MAX_SUGGESTED_RUNS
    return math.ceil(n * (math.log1p(ci_half) / target) ** 2)


def _few_runs_reason(rule: Rule, n: int) -> str:
    return f"needs at least {rule.min_runs} runs a side (got {n})"


def _not_confirmed_reason(second: Verdict) -> str:
    read = second.outcome if second.ratio is None else _signed_pct(second.ratio)
    return f"not confirmed by an independent re-run (it read {read})"


def _pct(fraction: float) -> str:
    """A measured fraction as a percentage: 0.031 -> '3.1%'."""
    return f"{fraction * 100:.1f}%"


def _setting_pct(fraction: float) -> str:
    """A configured fraction as a percentage without noise digits: 0.02 -> '2%'."""
    return f"{fraction * 100:g}%"


def _signed_pct(ratio: float) -> str:
    """A ratio as a signed change: 1.263 -> '+26.3%'."""
    return f"{(ratio - 1) * 100:+.1f}%"


def _duration(ns: float) -> str:
    """A time in the largest unit that keeps it above 1: 25000 -> '25 µs'."""
    for unit, size in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= size:
            return f"{ns / size:.3g} {unit}"
    return f"{ns:.3g} ns"
