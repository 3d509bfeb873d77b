"""Time stats.compare_many on 100 workloads x 1,000 pairs: prints the best of 5, in seconds.

Each repeat uses a new bootstrap seed, so the bootstrap index matrix is built every time
(as in a real run, which judges each phase once) rather than read from the cache. The
timing itself is section 3 (c) of the benchmark suite (benchmarks/overhead.py).

    python benchmarks/judge_speed.py
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` and src/ importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from benchmarks.overhead import judging


def main() -> None:
    result = judging(workloads=100, pairs=1000, repeats=5)
    print(f"compare_many, {result['workloads']} workloads x {result['pairs']} pairs: "
          f"{result['best_s']:.3f} s (best of {result['repeats']})")


if __name__ == "__main__":
    main()
