"""The centre of triplets: head against the mean of its round's two base runs, or against each.

Issue 30 found the identical head reading a median −0.4 to −0.7% below base, and both
planted changes' estimates as far below their truths, while base again from its own place
read around zero. This study asks whether the estimator itself is the cause, on real runs
and on synthetic ones:

- **Real triplets**: the rounds `benchmarks/placement.py` recorded in benchbot's own
  arrangement (three workers, the engine's rotation; `results/placement-workers.json`,
  1,000 rounds of the signals study's sort, and `results/placement.json`, 400 rounds each
  of three programs), wall and CPU time. Each draw takes n rounds at random and gives the
  three runs of each round the roles base, base again and head in a random order, so the
  truth is exactly no change; a planted change multiplies head's runs.
- **Synthetic runs**: a run's time is its program's times 1 + noise, with noise normal
  (symmetric), exponential (every run a little slow, 3% on average), a mixture (15% of
  runs slowed by 10% on average) and two modes (30% of runs 8% slower).

Estimators: the median of head over the geometric mean of the two base runs (the call's
centre until this study), the Hodges-Lehmann centre of the same (the estimate's), and the
median of head's 2n log ratios to each base run (what benchbot ships now,
``intervals.triplet_interval``). Per case: the mean error (a shift common to every
comparison: what no number of repetitions averages away), the median absolute error, and
how often each interval at 95% missed the truth (the old one: the sign-test interval of
the median of head over the mean; the new one: the ranks').

Run: ``python -m benchmarks.centre [--draws 400] [--seed 1]`` (1-3 minutes on a 2-core VM).
Writes results/centre.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchbot.core import files
from benchbot.verdict import intervals
from benchmarks.report import markdown_table

RESULTS = Path(__file__).parent / "results"
Array = npt.NDArray[np.float64]
ALPHA = 0.05
SHIFTS = (0.0, math.log(1.03), math.log(0.96))


def against_mean(b: Array, a: Array, h: Array) -> tuple[float, float, float]:
    d = np.sort(h - (a + b) / 2)
    lo, hi = intervals.order_interval(d, 0.5, ALPHA)
    return float(np.median(d)), lo, hi


def hodges_lehmann(b: Array, a: Array, h: Array) -> float:
    return intervals.pseudo_median(h - (a + b) / 2, ALPHA)[0]


def against_each(b: Array, a: Array, h: Array) -> tuple[float, float, float]:
    pooled = np.sort(np.concatenate([h - b, h - a]))
    centre = float(np.median(pooled))
    lo, hi = intervals.triplet_interval(pooled, ALPHA, spread=intervals.rank_spread(b, a, h, centre))
    return centre, lo, hi


def study(draw: Callable[[np.random.Generator, int], Array], rng: np.random.Generator, *,
          n: int, draws: int, shift: float) -> dict[str, Any]:
    """``draws`` comparisons of n rounds: each a (n, 3) array of ln times, roles in order
    base, base again, head; head's runs moved by ``shift``."""
    rows: dict[str, list[float]] = {"mean": [], "hl": [], "each": []}
    missed = {"mean": 0, "each": 0}
    width: dict[str, list[float]] = {"mean": [], "each": []}
    for _ in range(draws):
        t = draw(rng, n)
        b, a, h = t[:, 0], t[:, 1], t[:, 2] + shift
        for name, fn in (("mean", against_mean), ("each", against_each)):
            centre, lo, hi = fn(b, a, h)
            rows[name].append(centre - shift)
            missed[name] += not (lo <= shift <= hi)
            width[name].append((hi - lo) / 2)
        rows["hl"].append(hodges_lehmann(b, a, h) - shift)
    out: dict[str, Any] = {"n": n, "draws": draws, "shift_pct": math.expm1(shift) * 100}
    for name, errors in rows.items():
        e = np.asarray(errors) * 100
        out[name] = {"shift": float(np.mean(e)), "mae": float(np.median(np.abs(e)))}
        if name in missed:
            out[name]["missed"] = missed[name] / draws
            out[name]["half_width"] = float(np.median(width[name])) * 100
    return out


def recorded(path: Path, factor: str = "workers") -> list[tuple[str, Array]]:
    """The rounds of ``factor`` in a placement results file: (program and clock, ln times)."""
    doc = json.loads(path.read_text())
    out = []
    for res in doc["results"]:
        if res["factor"] != factor:
            continue
        for clock in ("wall_ns", "cpu_ns"):
            t = np.log(np.asarray(res["runs"][clock], dtype=float))
            out.append((f"{res['program']} ({clock[:-3]}; {path.stem})", t.T if t.shape[0] == 3 else t))
    return out


def resampled(rounds: Array) -> Callable[[np.random.Generator, int], Array]:
    def draw(rng: np.random.Generator, n: int) -> Array:
        pick = rounds[rng.integers(0, len(rounds), n)]
        roles = np.argsort(rng.random((n, 3)), axis=1)  # each round's runs in a random role
        return np.take_along_axis(pick, roles, axis=1)
    return draw


def synthetic(noise: Callable[[np.random.Generator, tuple[int, int]], Array]
              ) -> Callable[[np.random.Generator, int], Array]:
    def draw(rng: np.random.Generator, n: int) -> Array:
        return noise(rng, (n, 3))
    return draw


SYNTHETIC: dict[str, Callable[[np.random.Generator, tuple[int, int]], Array]] = {
    "normal, 3%": lambda rng, s: rng.normal(0, 0.03, s),
    "exponential, 3% on average": lambda rng, s: np.log1p(rng.exponential(0.03, s)),
    "15% of runs 10% slower on average": lambda rng, s: np.log1p(
        np.where(rng.random(s) < 0.15, rng.exponential(0.10, s), 0) + np.abs(rng.normal(0, 0.01, s))),
    "two modes: 30% of runs 8% slower": lambda rng, s: np.where(rng.random(s) < 0.3, 0.08, 0)
    + rng.normal(0, 0.01, s),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--name", default="centre")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    start = time.monotonic()
    cases: list[dict[str, Any]] = []
    sources: list[tuple[str, Callable[[np.random.Generator, int], Array], tuple[int, ...]]] = []
    for path in (RESULTS / "placement-workers.json", RESULTS / "placement.json"):
        for name, rounds in recorded(path):
            sources.append((name, resampled(rounds), (100, 300)))
    for name, noise in SYNTHETIC.items():
        sources.append((f"synthetic: {name}", synthetic(noise), (100, 300)))
    for name, draw, sizes in sources:
        for n in sizes:
            for shift in SHIFTS:
                got = study(draw, rng, n=n, draws=args.draws, shift=shift)
                cases.append({"source": name, **got})
                print(f"{name} n={n} {got['shift_pct']:+.0f}%: mean {got['mean']['shift']:+.2f} "
                      f"(missed {got['mean']['missed']:.3f}), hl {got['hl']['shift']:+.2f}, "
                      f"each {got['each']['shift']:+.2f} (missed {got['each']['missed']:.3f})",
                      flush=True)
    meta = {"command": f"python -m benchmarks.centre --draws {args.draws} --seed {args.seed}",
            "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "seconds": round(time.monotonic() - start, 1)}
    files.write_text(RESULTS / f"{args.name}.json", json.dumps({"meta": meta, "cases": cases}, indent=1) + "\n")
    files.write_text(RESULTS / f"{args.name}.md", report(meta, cases))
    return 0


def report(meta: dict[str, Any], cases: list[dict[str, Any]]) -> str:
    rows = []
    for c in cases:
        rows.append([c["source"], str(c["n"]), f"{c['shift_pct']:+.0f}%",
                     f"{c['mean']['shift']:+.2f} / {c['mean']['mae']:.2f}",
                     f"{c['hl']['shift']:+.2f} / {c['hl']['mae']:.2f}",
                     f"{c['each']['shift']:+.2f} / {c['each']['mae']:.2f}",
                     f"{c['mean']['missed']:.3f}", f"{c['each']['missed']:.3f}",
                     f"{c['each']['half_width'] / c['mean']['half_width']:.2f}"])
    head = ["runs", "rounds", "change", "median over the mean: shift / median abs error (points)",
            "Hodges-Lehmann over the mean", "median against each (shipped)",
            "old interval missed (95%)", "new interval missed", "new width / old"]
    return (f"# The centre of triplets\n\n`{meta['command']}`, {meta['started']}, "
            f"{meta['seconds']:.0f} s.\n\n" + markdown_table(head, rows) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
