"""Section 4: a published paired experiment, judged with benchbot's statistics.

Twelve interleaved blocks of a throughput benchmark (millions of ops/s, higher is
better): ``chains=1`` against ``chains=2``, and ``chains=1`` run twice per block (A, B).
The publication's paired block bootstrap gave a throughput ratio of [1.83x, 1.88x] for
chains and [0.998x, 1.005x] for A against B, and a paired effect size dz of about 30.
Here the same figures are recomputed with the publication's method, beside benchbot's
verdict with ``Rule(better="higher")``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from benchbot.core.model import Rule, Verdict
from benchbot.verdict import stats

CHAINS_1 = (725.4, 720.8, 726.0, 671.8, 719.2, 722.7, 723.6, 721.3, 713.5, 716.5, 718.9, 716.2)
CHAINS_2 = (1356.3, 1338.7, 1314.4, 1329.9, 1328.3, 1332.6, 1327.8, 1327.7, 1318.9, 1319.3,
            1300.0, 1313.0)  # fmt: skip
RUN_A = (719.2, 717.0, 712.6, 719.7, 717.8, 710.6, 702.9, 713.3, 713.1, 715.5, 717.4, 714.0)
RUN_B = (719.6, 708.1, 721.4, 721.0, 713.9, 715.8, 700.6, 718.4, 712.0, 717.9, 716.5, 720.1)

PUBLISHED = {
    "chains": {"ratio_ci": (1.83, 1.88), "diff_ci": (599.1, 621.4), "dz": 30.0},
    "A/B": {"ratio_ci": (0.998, 1.005), "diff_ci": (-1.6, 3.5), "dz": None},
}


def paired_bootstrap(
    x: npt.ArrayLike, y: npt.ArrayLike, resamples: int = 2000, seed: int = 0
) -> dict[str, tuple[float, float]]:
    """The publication's method: resample whole blocks; mean difference and ratio of means."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, xa.size, size=(resamples, xa.size))
    diff = (ya[idx] - xa[idx]).mean(axis=1)
    ratio = ya[idx].mean(axis=1) / xa[idx].mean(axis=1)
    return {"diff_ci": _interval(diff), "ratio_ci": _interval(ratio)}


def _interval(values: npt.NDArray[np.float64]) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles."""
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)


def dz(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Paired Cohen's dz: mean of the per-block differences over their standard deviation."""
    d = np.asarray(y, dtype=float) - np.asarray(x, dtype=float)
    return float(d.mean() / d.std(ddof=1))


def throughput_view(v: Verdict) -> dict[str, Any]:
    """benchbot's verdict on a throughput, as throughput ratios (candidate / reference).

    benchbot judges 1 / throughput, so its ``ratio`` is reference / candidate throughput:
    invert it, and its interval, to read "how many times the throughput".
    """
    assert v.ratio is not None and v.ci is not None
    return {
        "outcome": v.outcome,
        "reason_code": v.reason_code,
        "throughput_ratio": 1 / v.ratio,
        "throughput_ci": (1 / v.ci[1], 1 / v.ci[0]),
        "best_throughput_ratio": 1 / v.best_ratio if v.best_ratio else None,
        "tolerance": v.tolerance,
    }


def judge(x: npt.ArrayLike, y: npt.ArrayLike) -> dict[str, Any]:
    """Everything for one comparison: benchbot both ways round, the published method, dz."""
    rule = Rule(better="higher", floor_ns=0.0, seed=0)
    return {
        "benchbot": throughput_view(stats.compare(x, y, rule=rule)),
        "benchbot_swapped": throughput_view(stats.compare(y, x, rule=rule)),
        "recomputed": {**paired_bootstrap(x, y), "dz": dz(x, y)},
    }


def run_published() -> dict[str, Any]:
    """Section 4: chains=2 against chains=1, and run B against run A."""
    return {
        "chains": {**judge(CHAINS_1, CHAINS_2), "published": PUBLISHED["chains"]},
        "A/B": {**judge(RUN_A, RUN_B), "published": PUBLISHED["A/B"]},
    }
