"""The methods users pick instead of benchbot, applied to runs collected in blocks.

Pure Python and numpy (no scipy): a flat threshold on the median ratio
(github-action-benchmark, CodSpeed style), a Mann-Whitney U test (benchstat, asv
style), and Welch's t-test (pyperf style; hyperfine ships a script that runs it on its
own JSON export). Each returns a ``Call``: the direction it reports, and its estimate
of the ratio head / base (below 1: head faster).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

Direction = Literal["slower", "faster", "none"]
ALPHA = 0.05


@dataclass(frozen=True, slots=True)
class Call:
    """What one method said about one comparison: a direction and a ratio estimate."""

    direction: Direction
    ratio: float | None
    outcome: str  # the method's own word (benchbot: level, inconclusive, ...)
    detail: str = ""
    figures: dict[str, Any] | None = None  # benchbot: the verdict's figures


def _arrays(base: Sequence[float], head: Sequence[float]) -> tuple[npt.NDArray[np.float64], ...]:
    return np.asarray(base, dtype=np.float64), np.asarray(head, dtype=np.float64)


def flat_threshold(base: Sequence[float], head: Sequence[float], threshold: float) -> Call:
    """Slower when median(head) / median(base) > 1 + t, faster when below 1 / (1 + t)."""
    x, y = _arrays(base, head)
    ratio = float(np.median(y) / np.median(x))
    if ratio > 1 + threshold:
        return Call("slower", ratio, "slower")
    if ratio < 1 / (1 + threshold):
        return Call("faster", ratio, "faster")
    return Call("none", ratio, "within threshold")


def _significant(p: float, ratio: float, alpha: float = ALPHA) -> Direction:
    if p >= alpha or ratio == 1.0:
        return "none"
    return "slower" if ratio > 1 else "faster"


def mann_whitney(base: Sequence[float], head: Sequence[float], alpha: float = ALPHA) -> Call:
    """Two-sided Mann-Whitney U, normal approximation with tie and continuity correction.

    The direction of a significant result is the median ratio's, as benchstat reports.
    """
    x, y = _arrays(base, head)
    p = mann_whitney_p(x, y)
    ratio = float(np.median(y) / np.median(x))
    direction = _significant(p, ratio, alpha)
    return Call(direction, ratio, direction if direction != "none" else "no difference",
                f"p={p:.3g}")


def mann_whitney_p(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> float:
    """The two-sided p-value of the Mann-Whitney U test (as scipy's asymptotic method)."""
    n1, n2 = x.size, y.size
    ranks = _average_ranks(np.concatenate([x, y]))
    u1 = float(ranks[:n1].sum()) - n1 * (n1 + 1) / 2
    n = n1 + n2
    _, counts = np.unique(np.concatenate([x, y]), return_counts=True)
    ties = float((counts**3 - counts).sum())
    var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return 1.0
    mean = n1 * n2 / 2
    z = (abs(u1 - mean) - 0.5) / math.sqrt(var)
    return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))


def _average_ranks(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Ranks from 1, ties sharing their average rank (scipy.stats.rankdata 'average')."""
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    starts = np.r_[True, sorted_values[1:] != sorted_values[:-1]]
    group = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    ends = np.r_[first[1:], values.size]
    average = (first + ends + 1) / 2.0  # mean of ranks first+1 .. end
    ranks = np.empty(values.size)
    ranks[order] = average[group]
    return ranks


def welch(base: Sequence[float], head: Sequence[float], alpha: float = ALPHA) -> Call:
    """Welch's two-sided t-test at 1 - alpha; the direction and estimate from the means."""
    x, y = _arrays(base, head)
    p = welch_p(x, y)
    ratio = float(y.mean() / x.mean())
    direction = _significant(p, ratio, alpha)
    return Call(direction, ratio, direction if direction != "none" else "no difference",
                f"p={p:.3g}")


def welch_p(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> float:
    """The two-sided p-value of Welch's unequal-variances t-test."""
    vx, vy = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    se2 = vx + vy
    if se2 <= 0:
        return 0.0 if x.mean() != y.mean() else 1.0
    t = (y.mean() - x.mean()) / math.sqrt(se2)
    df = se2**2 / (vx**2 / (x.size - 1) + vy**2 / (y.size - 1))
    return _betainc(df / 2, 0.5, df / (df + t * t))


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (Numerical Recipes' betai)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 3e-16
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


BLOCK_METHODS = ("flat 5%", "flat 10%", "Mann-Whitney", "Welch t")


def judge_blocks(base: Sequence[float], head: Sequence[float]) -> dict[str, Call]:
    """Every block method's call on one pair of blocks."""
    return {
        "flat 5%": flat_threshold(base, head, 0.05),
        "flat 10%": flat_threshold(base, head, 0.10),
        "Mann-Whitney": mann_whitney(base, head),
        "Welch t": welch(base, head),
    }
