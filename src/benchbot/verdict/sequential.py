"""Sequential measuring: when to look at a workload's runs, how much error each look may
spend, and when to stop. Pure: no I/O.

A workload that is not settled gets more rounds of interleaved runs, and is judged again
at a fixed schedule of looks (10, 15, 22, 34 … pairs, growing by half each time, up to
``max_runs``). Looking many times at growing data would make a wrong call more likely
each time, so each look spends part of the error budget (alpha spending over a fixed
schedule): look k may err with probability ``alpha / family / (k (k + 1))``, where
``family`` is the number of workloads measured this way. These sum to ``alpha / family``
over all looks, and to ``alpha`` over all workloads, by the union bound, whatever is
called at which look (docs/verdict.md says why this and not a confidence sequence).
The interval at look k is distribution-free: the order statistics of the per-pair ratios
that hold the median with that error, by the binomial count of pairs below it
(``intervals.order_interval``); a bootstrap's standard error of a median of ten pairs is too
small by a third, and looking often finds that out.

Stopping: a workload stops when it is settled (``slower``, ``faster`` or ``level``),
when more runs cannot help (its median is too close to the floor of timing; or the
medians differ while even the far edge of the fast runs' interval falls short of what
a call needs of them: timing modes one build lands in more often), when the A/A check
called base different from itself, when it reaches ``max_runs`` pairs, when a run
failed, or when the budget is spent.
"""

from __future__ import annotations

import math
from typing import Literal

from benchbot.core.model import Verdict
from benchbot.verdict import intervals, stats

FIRST_LOOK = 10  # pairs at the first look: fewer than 10 a side are refused
GROWTH = 1.5  # each look has half as many pairs again as the one before
LOW_QUANTILE = 0.1  # the best-run side: the 10th percentile of single runs
CALL_PAIRS = intervals.low_bounded_from(LOW_QUANTILE)  # 51: a change is called from here on
# ... and from here on where base's and head's runs do not overlap (15: docs/verdict.md,
# "Calls from few pairs")
APART_PAIRS = intervals.apart_from(LOW_QUANTILE, 2)
# ... and a faster one from here on against both base arms' runs pooled (32: the same)
POOLED_PAIRS = intervals.pooled_from(LOW_QUANTILE, 2) or CALL_PAIRS
# After a call at n pairs, measure on for the estimate alone (the median of head over each
# base run, over all pairs): at least ESTIMATE_EXTRA_PAIRS more, then until the estimate's interval
# is within ESTIMATE_HALF each way (its standard error about 0.7%, a median error of about
# half a point), at most max_runs. benchmarks/estimate.py and benchmarks/signals.py
# measured the rule.
ESTIMATE_EXTRA_PAIRS = 50
ESTIMATE_HALF = 0.014
# A level is measured on the same way, to ESTIMATE_EXTRA_PAIRS more and then until its
# estimate's interval is within LEVEL_ESTIMATE_SHARE of its tolerance each way (±1% at the
# 2% parity): a level says the change is small, and its estimate says how small, so it needs
# to be finer than the band it was judged in (docs/verdict.md, "A level's estimate").
LEVEL_ESTIMATE_SHARE = 0.5
# ... but to at most LEVEL_ESTIMATE_GROWTH times the pairs it settled at (or n + 50, where
# that is more): a noisy workload settled level at 256 pairs would need thousands to reach
# ±1%, and its estimate is not worth them (benchbot demo's bfs went to max_runs).
LEVEL_ESTIMATE_GROWTH = 2

StopReason = Literal["settled", "budget", "max_runs", "cannot_help", "failed", "aa_failed",
                     "aborted", "fixed"]

CALLS = ("slower", "faster")


def looks(max_pairs: int, first: int = FIRST_LOOK) -> tuple[int, ...]:
    """The pair counts at which a workload is judged, ending at ``max_pairs``."""
    out: list[int] = []
    n = float(first)
    while round(n) < max_pairs:
        if not out or round(n) > out[-1]:
            out.append(round(n))
        n *= GROWTH
    out.append(max_pairs)
    return tuple(out)


def estimate_pairs(called_at: int, max_pairs: int) -> int:
    """How many pairs in all a workload whose change was called at ``called_at`` pairs is
    measured to, at least, for the estimate alone (docs/verdict.md, "An estimate the
    stopping rule does not inflate")."""
    return min(called_at + ESTIMATE_EXTRA_PAIRS, max_pairs)


def level_estimate_cap(settled_at: int, max_pairs: int) -> int:
    """The most pairs a level settled at ``settled_at`` is measured on to for its estimate."""
    return min(max(settled_at + ESTIMATE_EXTRA_PAIRS, LEVEL_ESTIMATE_GROWTH * settled_at),
               max_pairs)


def estimate_half(verdict: Verdict) -> float:
    """How near its estimate a settled verdict's interval must come, each way, before
    measuring on for the estimate stops: ESTIMATE_HALF for a call, LEVEL_ESTIMATE_SHARE of
    the tolerance for a level (never more than ESTIMATE_HALF)."""
    if verdict.outcome == "level" and verdict.tolerance:
        return min(ESTIMATE_HALF, LEVEL_ESTIMATE_SHARE * verdict.tolerance)
    return ESTIMATE_HALF


def estimate_until(verdict: Verdict | None, pairs: int, max_pairs: int) -> int | None:
    """After the estimate's first pairs: how many pairs in all to measure to before its
    interval is within ``estimate_half`` each way (from how it shrinks, 1/sqrt n), or None
    where it is already, or max_pairs is reached. Stopping on the interval's width, not on
    where it lies, adds no bias of its own."""
    if verdict is None or verdict.estimate is None or verdict.estimate_ci is None:
        return None
    if pairs >= max_pairs:
        return None
    lo, hi = verdict.estimate_ci
    half = max(math.log(hi / verdict.estimate), math.log(verdict.estimate / lo))
    target = math.log1p(estimate_half(verdict))
    if half <= target:
        return None
    need = math.ceil(pairs * (half / target) ** 2)
    return min(max(need, pairs + FIRST_LOOK), max_pairs)


def alpha_at(look: int, alpha: float, family: int) -> float:
    """The error look ``look`` (1, 2, …) may spend: alpha / family / (k (k + 1))."""
    return alpha / max(family, 1) / (look * (look + 1))


def stop_reason(ab: Verdict | None, aa: Verdict | None, *, pairs: int, max_pairs: int,
                parity: float) -> StopReason | None:
    """Why a workload stops after a look, or None when more pairs may settle it."""
    if (ab is not None and ab.outcome == "invalid") or (aa is not None and aa.outcome == "invalid"):
        return "failed"
    if aa is not None and aa.outcome in CALLS:
        return "aa_failed"
    if ab is None:
        return None
    if ab.outcome in ("slower", "faster", "level"):
        return "settled"
    if ab.reason_code in ("floor", "same_counts", "counts_disagree") or _modes_only(ab, parity):
        return "cannot_help"
    if ab.reason_code == "layout" and _left_tolerance(ab):  # a call held back, as same_counts
        return "cannot_help"
    if pairs >= max_pairs:
        return "max_runs"
    return None


def _left_tolerance(ab: Verdict) -> bool:
    """The ratio lies beyond its tolerance (time called a change, which something held back)."""
    return (ab.ratio is not None and ab.tolerance is not None
            and abs(math.log(ab.ratio)) > math.log1p(ab.tolerance))


def _modes_only(ab: Verdict, parity: float) -> bool:
    """The medians differ but the best runs do not follow, with intervals that say they
    will not: timing modes that one build lands in more often. More runs only confirm it."""
    if ab.reason_code not in ("best_disagree", "timing_modes"):
        return False
    if ab.low_ratio is None or ab.low_ci_half is None or ab.ratio is None or ab.ci_half is None:
        return False
    central = math.log(ab.ratio)
    nearest = max(abs(central) - math.log1p(ab.ci_half), 0.0)  # the central move, at least
    needed = max(math.log1p(max(parity, ab.floor_best or 0.0)), stats.LOW_AGREEMENT * nearest)
    far = ab.low_ci_far if ab.low_ci_far is not None else ab.low_ci_half  # older files: one width
    low = math.log(ab.low_ratio) * math.copysign(1.0, central) + math.log1p(far)
    return low < needed  # even the best runs' interval's far edge falls short


PENDING_CODES = ("best_disagree", "timing_modes", "few_runs")


def pending_change(ab: Verdict | None) -> bool:
    """The median has left its tolerance (the central side calls a change) and the verdict
    waits on the best-run side or on the pairs a call needs: the kind of workload the budget
    goes to first when it runs short, since a change found and not yet called is what a
    user most needs settled."""
    if ab is not None and ab.outcome == "inconclusive" and ab.reason_code == "counts_ahead":
        return True  # a suite's benchmark whose work moved: time has yet to follow
    if ab is None or ab.outcome != "inconclusive" or ab.reason_code not in PENDING_CODES:
        return False
    if ab.ratio is None or ab.tolerance is None:
        return False
    return abs(math.log(ab.ratio)) > math.log1p(ab.tolerance)


def pairs_to_settle(ab: Verdict | None, parity: float, *, max_pairs: int) -> int:
    """About how many pairs in all would settle it, from how the interval shrinks (1/sqrt n),
    at most ``max_pairs`` (what the budget plans with)."""
    return min(_settle_estimate(ab, parity, default=max_pairs), max_pairs)


def pairs_to_settle_uncapped(ab: Verdict | None, parity: float) -> int:
    """The same estimate, not capped (what the report suggests, or says is out of reach),
    and at least the pairs a call needs where the verdict waits for them; with no look
    taken, the pairs of the first look that may call a change."""
    need = _settle_estimate(ab, parity, default=CALL_PAIRS)
    if ab is not None and ab.reason_code == "few_runs" and ab.suggested_runs:
        need = max(need, ab.suggested_runs)
    if ab is not None and ab.reason_code == "spread" and ab.suggested_runs:
        need = ab.suggested_runs  # what the verdict's own rule says (a suite's benchmark's
        # level on the same work needs its interval within a reach, not within parity)
    return need


def _settle_estimate(ab: Verdict | None, parity: float, *, default: int) -> int:
    if ab is None or ab.ratio is None or ab.ci_half is None or ab.n <= 0:
        return default
    target = max(abs(math.log(ab.ratio)), math.log1p(parity)) / 2
    if target <= 0:
        return default
    need = math.ceil(ab.n * (math.log1p(ab.ci_half) / target) ** 2)
    return max(need, ab.n + 1)


WHY: dict[StopReason, str] = {
    "settled": "settled",
    "budget": "the time budget was spent",
    "max_runs": "it reached max_runs",
    "cannot_help": "more runs cannot help",
    "failed": "a run failed",
    "aa_failed": "the A/A check called base different from itself",
    "aborted": "the A/A check failed for too many workloads",
    "fixed": "a fixed number of pairs was asked for",
}
# Why a workload whose verdict is invalid stopped, by the verdict's reason code: not every
# invalid verdict is a run that failed (a benchmark too fast to time ran as it should).
INVALID_WHY: dict[str, str] = {
    "too_fast": "too fast to time",
    "no_metric": "a run reported no value",
    "expect_mismatch": "the runs' outputs differed",
}


def why(reason: StopReason, verdict: Verdict | None = None) -> str:
    """Why measuring stopped, in words; a stop on an invalid verdict says what made it so."""
    if reason == "failed" and verdict is not None and verdict.outcome == "invalid":
        return INVALID_WHY.get(verdict.reason_code or "", WHY["failed"])
    return WHY[reason]
