"""Time stats.compare_many on 100 workloads x 1,000 pairs: prints the best of 5, in seconds.

Each repeat uses a new bootstrap seed, so the bootstrap index matrix is built every time
(as in a real run, which judges each phase once) rather than read from the cache.

    python benchmarks/judge_speed.py
"""

from __future__ import annotations

import time

import numpy as np

from benchbot.model import Rule
from benchbot.stats import compare_many

WORKLOADS, PAIRS, REPEATS = 100, 1000, 5


def main() -> None:
    rng = np.random.default_rng(20240601)
    state = rng.lognormal(np.log(5e6), 0.1, (WORKLOADS, PAIRS))
    xs = list(state * rng.lognormal(0.0, 0.02, (WORKLOADS, PAIRS)))
    ys = list(state * rng.lognormal(0.01, 0.02, (WORKLOADS, PAIRS)))
    best = float("inf")
    for repeat in range(REPEATS):
        start = time.perf_counter()
        compare_many(xs, ys, rules=Rule(seed=repeat))
        best = min(best, time.perf_counter() - start)
    print(f"compare_many, {WORKLOADS} workloads x {PAIRS} pairs: {best:.3f} s (best of {REPEATS})")


if __name__ == "__main__":
    main()
