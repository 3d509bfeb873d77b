"""Distribution-free intervals the rule stands on: from order statistics (the best runs'
side, a median's), from ranks (the spread of a triplet of arms), and the Hodges-Lehmann
pseudo-median of per-pair log ratios. Pure functions of sorted samples and a level; the
decisions that use them are stats'.
"""

from __future__ import annotations

import functools
import math
import statistics

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.intp]

# Error of the 10th percentile's interval at every look: sets the fewest runs for a call
# (docs/verdict.md, "Constants of the rule and the evidence for them").
LOW_ALPHA = 0.01


def triplet_logs(base: FloatArray, again: FloatArray, head: FloatArray
                 ) -> tuple[FloatArray, float]:
    """From the ln times of n rounds: head's 2n sorted log ratios to each base run of its
    round, and their counts' spread at the median (``rank_spread``), for
    ``triplet_interval``."""
    pooled = np.sort(np.concatenate([head - base, head - again]))
    return pooled, rank_spread(base, again, head, float(np.median(pooled)))


def triplet_interval(pooled: FloatArray, alpha: float, *,
                     spread: float = 2.0 / 3.0) -> tuple[float, float]:
    """A distribution-free interval for the shift of head in rounds of three runs (base,
    base again, head), from the 2n sorted log ratios of head to each base run of its round:
    [V(j), V(m)], each side missing with probability at most alpha / 2.

    Where head's runs less the shift and the two base runs of a round are exchangeable
    (the rotation of orders puts each arm in each position alike), the number of a round's
    two ratios below the true shift is 0, 1 or 2 with probability 1/3 each (head's rank
    among the three), so
    the count over n rounds is the sum of n such draws, whatever the distribution of a run;
    the order statistics follow from that count as the sign test's follow from the
    binomial (``order_interval``). Ties only make it wider.

    ``spread``: the variance of a round's count as observed at the centre (``rank_spread``;
    2/3 where the rounds are exchangeable). Where head's runs spread otherwise than base's,
    the count varies more than that, and the interval is never narrower than the normal
    approximation at the observed variance gives. docs/verdict.md, "Sequential measuring",
    has why head is not judged against the mean of the two base runs."""
    n = pooled.size // 2
    cdf = _rank_sum_cdf(n)
    j = sum(1 for c in cdf[: 2 * n] if c <= alpha / 2)
    if spread > 2.0 / 3.0 and 0.0 < alpha < 1.0:
        z = statistics.NormalDist().inv_cdf(1 - alpha / 2)
        j = min(j, max(0, math.floor(n - z * math.sqrt(n * spread))))
    m = 2 * n + 1 - j  # the count's distribution is symmetric around n
    lo = float(pooled[j - 1]) if j >= 1 else -math.inf
    hi = float(pooled[m - 1]) if j >= 1 else math.inf
    return lo, hi


def rank_spread(base: FloatArray, again: FloatArray, head: FloatArray, centre: float) -> float:
    """The observed variance of a round's count of head's two log ratios below ``centre``
    (ties at it counted half): 2/3 where the three runs of a round are exchangeable."""
    below = ((head - base < centre).astype(float) + (head - again < centre)
             + 0.5 * ((head - base == centre).astype(float) + (head - again == centre)))
    return float(np.mean((below - 1.0) ** 2))


@functools.lru_cache(maxsize=1024)
def _rank_sum_cdf(n: int) -> tuple[float, ...]:
    """P(S <= k) for k = 0 .. 2n, S the sum of n draws uniform on {0, 1, 2}."""
    p = np.ones(1)
    for _ in range(n):
        p = np.convolve(p, np.full(3, 1.0 / 3.0))
    return tuple(float(c) for c in np.minimum(np.cumsum(p), 1.0))


def apart_bound(n: int, r: int, q: float, k: int = 0, *, slower: bool = True) -> float:
    """How often timing modes that are no change put n runs of head wholly above (or below)
    r runs of the reference, but for at most k runs of the side a slow run spoils, at most,
    where each build lands in each mode in at least a share q of its runs (the premise the
    10th percentile rests on, q = 0.1, taken both ways). For a slower call head's runs must
    all have landed in the slow mode and at most k of the reference's in it, (1 - q)^n
    P(Bin(r, q) <= k); for a faster call the mirror image, head's slowest k spared, P(Bin(n,
    q) <= k) (1 - q)^r. With k = 0 both are (1 - q)^(n + r) (docs/verdict.md, "Calls from
    few pairs")."""
    if not 0.0 < q < 1.0:
        return 1.0
    spared, whole = (r, n) if slower else (n, r)
    return (1.0 - q) ** whole * sum(math.comb(spared, j) * q ** j * (1.0 - q) ** (spared - j)
                                    for j in range(k + 1))


@functools.lru_cache(maxsize=64)
def apart_from(q: float, arms: int) -> int:
    """The fewest pairs from which a call may rest on the builds' runs not overlapping (n
    runs of head, ``arms`` times n of the reference): where ``apart_bound`` is LOW_ALPHA at
    most, 15 for triplets and 22 for pairs at q = 0.1."""
    return next(n for n in range(1, 100_000) if apart_bound(n, arms * n, q) <= LOW_ALPHA)


# The most runs across the runs lying apart may spare (``apart_tiers``).
APART_SPARED = 4


@functools.lru_cache(maxsize=64)
def apart_tiers(q: float, arms: int, slower: bool) -> tuple[int, ...]:
    """The fewest pairs from which the runs may lie apart but for k runs of the side a slow
    run spoils, for k = 0 .. APART_SPARED (k = 0: ``apart_from``). What LOW_ALPHA leaves
    beyond k = 0's bound at its first pairs is spent half on k = 1, a quarter on k = 2, and
    so on: each k's event at more pairs lies within its event at its first pairs (more runs
    can only add runs across), so the chance summed over every k and every look stays within
    LOW_ALPHA. A faster call spares none (k = 0 from 15 triplets alone), for what LOW_ALPHA
    leaves goes to the reference's runs pooled (``pooled_from``) where there are arms enough
    to pool; a slower call shares it, half each, with base's runs that lie above nearly all
    of head's (``above_tiers``): for triplets at q = 0.1 it spares runs from 15, 33, 40, 48,
    55 pairs (before that share, 15, 30, 38, 45, 52)."""
    if not slower and pooled_from(q, arms) is not None:
        return (apart_from(q, arms),)
    return spared_from(q, arms, slower, apart_from(q, arms),
                       share=0.5 if slower and above_tiers(q, arms) else 1.0)


def above_bound(n: int, r: int, q: float, t: int) -> float:
    """How often timing modes that are no change put n runs of head above each of r runs of
    the reference but those that lie above all but t of head's runs, at most, under the
    premise of ``apart_bound``. Head's runs must all have landed in the slow mode, (1 - q)^n.
    The reference's runs in that mode, m of them, are then exchangeable with head's n: of the
    C(n + m, m) ways their ranks interleave, C(m + t + 1, m) put each of the m below head's
    fastest or above all but t of head's runs. Its runs in the fast mode only add to what
    must hold, and are left out; m is Bin(r, q') with q' at least q, and the sum falls as q'
    grows (more runs that must all stay out of head's midst), so q' = q bounds it. Where
    head's runs spread over two slow modes, j of them in the higher, the reference's runs in
    the lower must stay out of the midst of head's n - j there with t - j to spare: the same
    count at n - j and t - j, no larger while t < n (docs/verdict.md, "A slower call past
    base's slow runs")."""
    if not 0.0 < q < 1.0:
        return 1.0
    return (1.0 - q) ** n * sum(
        math.comb(r, m) * q ** m * (1.0 - q) ** (r - m) * math.comb(m + t + 1, m)
        / math.comb(n + m, m) for m in range(r + 1))


# How many of head's runs a run of base's across may lie below and be spared all the same:
# none from above_tiers' first pairs, ABOVE_SPARED from its second (``above_tiers``).
ABOVE_SPARED = 12
# The shares of its half of what LOW_ALPHA leaves that the two tiers spend (they put
# ABOVE_SPARED at the look at 34 triplets).
ABOVE_SHARES = (0.2, 0.8)


@functools.lru_cache(maxsize=64)
def above_tiers(q: float, arms: int) -> tuple[tuple[int, int], ...]:
    """The tiers (first pairs, t) from which a slower call may spare every run of the
    reference's across head's fastest that lies above all but t of head's runs: t = 0 and
    t = ABOVE_SPARED, spending ABOVE_SHARES of half of what LOW_ALPHA leaves beyond
    ``apart_from``'s bound at its first pairs (the other half is ``apart_tiers``'). Each
    tier's event at more pairs lies within its event at its first pairs (head's fastest only
    falls, and its runs above a reference run only add up), so every look of both tiers
    together stays within that half. For triplets at q = 0.1: (30, 0), (34, 12). Empty where
    LOW_ALPHA leaves nothing, or where t = 0 would come no sooner than ``low_bounded_from``
    (one base arm, the A/A comparison); ``apart_tiers`` then keeps all of it."""
    first = apart_from(q, arms)
    rest = LOW_ALPHA - apart_bound(first, arms * first, q)
    if rest <= 0.0:
        return ()
    tiers = tuple((next(n for n in range(first, 100_000)
                        if above_bound(n, arms * n, q, t) <= share * rest / 2), t)
                  for t, share in zip((0, ABOVE_SPARED), ABOVE_SHARES, strict=True))
    return tiers if tiers[0][0] < low_bounded_from(q) else ()


def above_spared(n: int, q: float, arms: int) -> int | None:
    """How many of head's runs a reference run across n pairs may lie below and still be
    spared (``above_tiers``), None: too few pairs for any."""
    allowed = [t for first, t in above_tiers(q, arms) if n >= first]
    return max(allowed) if allowed else None


@functools.lru_cache(maxsize=64)
def pooled_from(q: float, arms: int) -> int | None:
    """The fewest pairs from which a faster call's fast runs are judged against the
    reference's runs pooled (``arms`` times n of them), short of ``low_bounded_from``'s runs
    an arm: what makes head read faster at its fast runs by timing modes alone is a
    reference whose runs all landed in its slow mode, at most (1 - q)^(arms n) under the
    premise, and that is held within what LOW_ALPHA leaves beyond ``apart_from``'s bound
    (32 pairs for triplets at q = 0.1: 0.9^64 = 0.12% of the 0.13% left). Once so, it
    stays so at more pairs (more runs only make all of them slow less likely), so it costs
    its bound once. None where that comes no sooner than ``low_bounded_from`` (one arm)."""
    first = apart_from(q, arms)
    rest = LOW_ALPHA - apart_bound(first, arms * first, q)
    if not 0.0 < q < 1.0 or rest <= 0.0:
        return None
    n = math.ceil(math.log(rest) / (arms * math.log1p(-q)))
    return n if n < low_bounded_from(q) else None


@functools.lru_cache(maxsize=64)
def spared_from(q: float, arms: int, slower: bool, first: int, share: float = 1.0
                ) -> tuple[int, ...]:
    """``apart_tiers`` with k = 0 from ``first`` pairs: ``share`` of what LOW_ALPHA leaves
    beyond its bound there, halved for each further k."""
    rest = share * (LOW_ALPHA - apart_bound(first, arms * first, q))
    out = [first]
    for k in range(1, APART_SPARED + 1):
        out.append(next(n for n in range(first, 100_000)
                        if apart_bound(n, arms * n, q, k, slower=slower) <= rest / 2 ** k))
    return tuple(out)


def apart_spared(n: int, q: float, arms: int, slower: bool) -> int | None:
    """How many runs across n pairs may spare (``apart_tiers``), None: too few pairs for
    the runs lying apart to call anything."""
    tiers = apart_tiers(q, arms, slower)
    allowed = [k for k, first in enumerate(tiers) if n >= first]
    return max(allowed) if allowed else None


def low_bounded_from(q: float) -> int:
    """The fewest runs whose q-quantile has a lower bound at LOW_ALPHA (51 for the 10th
    percentile): below that, the fastest run is the nearest bound, and a build that lands
    in a slow mode in all of a few runs by chance would look slower at its fast runs too."""
    return math.ceil(math.log(LOW_ALPHA / 2) / math.log1p(-q)) if 0.0 < q < 1.0 else 1


def order_interval(ordered: FloatArray, q: float, alpha: float, *,
                   clip: bool = False) -> tuple[float, float]:
    """A distribution-free interval for the q-quantile of what ``ordered`` (sorted) samples:
    [X(j), X(m)] with the order statistics chosen so that each side misses with
    probability at most alpha / 2, by the binomial count of samples below the quantile.
    Exact for any continuous distribution (ties only make it wider). A side that no order
    statistic can hold at this error is infinite (too few samples to decide), or with
    ``clip`` the smallest or largest sample."""
    n = ordered.size
    cdf = _binomial_cdf(n, q)
    j = sum(1 for c in cdf[:n] if c <= alpha / 2)  # X(j) lies above the quantile w.p. <= alpha/2
    m = next((i + 1 for i in range(n) if 1.0 - cdf[i] <= alpha / 2), None)
    if clip:
        j, m = max(j, 1), m or n
    lo = float(ordered[j - 1]) if j >= 1 else -math.inf
    hi = float(ordered[m - 1]) if m is not None else math.inf
    return lo, hi


def pseudo_median(logs: npt.ArrayLike, alpha: float) -> tuple[float, float, float]:
    """The Hodges-Lehmann estimate of where the log ratios centre (the median of all
    pairwise means, i <= j) and its interval at ``alpha``: the Walsh averages at the ranks
    the signed-rank statistic bounds (normal approximation, n >= 10). For symmetric noise
    it is as steady as the mean at 95% of its efficiency, against 64% for the median, and
    it resists outliers nearly as well (docs/verdict.md, "An estimate the stopping rule
    does not inflate")."""
    d = np.asarray(logs, dtype=float)
    n = d.size
    i, j = np.triu_indices(n)
    walsh = np.sort((d[i] + d[j]) / 2)
    centre = float(np.median(walsh))
    z = statistics.NormalDist().inv_cdf(1 - alpha / 2)
    k = math.floor(n * (n + 1) / 4 - z * math.sqrt(n * (n + 1) * (2 * n + 1) / 24))
    k = min(max(k, 0), walsh.size - 1)
    return centre, float(walsh[k]), float(walsh[walsh.size - 1 - k])


@functools.lru_cache(maxsize=4096)
def _binomial_cdf(n: int, q: float) -> tuple[float, ...]:
    """P(Binomial(n, q) <= i) for i = 0 .. n, summed in log space (n up to thousands)."""
    if q <= 0.0 or q >= 1.0:
        return tuple(1.0 for _ in range(n + 1))
    log_q, log_p = math.log(q), math.log1p(-q)
    terms = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
             + i * log_q + (n - i) * log_p for i in range(n + 1)]
    out, total = [], 0.0
    for t in terms:
        total += math.exp(t)
        out.append(min(total, 1.0))
    return tuple(out)
