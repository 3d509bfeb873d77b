"""Calls from few pairs (issue 39): the rule before and the rule now, on simulated triplets.

    python -m benchmarks.fewpairs [--reps 400] [--out fewpairs-sim]

Before issue 39 a change was called from 51 pairs on only (the 10th percentile's lower
bound); now, below 51, also where the two builds' runs do not overlap (``intervals.apart_bound``:
from 15 pairs in triplets). Each repetition draws rounds of base, base again and head and
judges them with ``judge`` at the looks of the schedule (10, 15, 22, 34, 51, 76 pairs) as
one benchmark of a family of 11 (a pytest-benchmark suite's, alpha spent over looks and
family), stopping at the first call or level, once with the rule before (``stats._apart``
made to say "too few runs") and once with the rule now, on the same runs.

Null scenarios (no change: every call is false): identical runs with symmetric or skewed
noise (noise only adds time); timing modes (a slow mode 25% above the fast one) in both
builds alike; biased modes (head in the slow mode more often than base: 70% against 50%,
as benchmarks/scenarios.py, and the premise's corner, 90% against 10%); the same corner
with modes ±1% wide (nothing inside a mode to overlap); and past the premise (head always
slow, base always fast: a difference the rule cannot tell from a change, shown for what
it costs). Changes: -40%, -12%, +25% (the issue's), +5% and -4%, at run-to-run noise of
1%, 3% and 6%, and -40% under timing modes in both builds.

For each scenario and rule: the share of repetitions called (the right way for a change,
any way for a null), and for calls the pairs they came at; written to
``results/<out>.json`` and printed as the table of benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from benchbot.core.model import ArmRuns, Family, PhaseRuns
from benchbot.verdict import sequential, stats
from benchbot.verdict.judge import Policy, Workload, judge

RESULTS = Path(__file__).resolve().parent / "results"
FAMILY = 11  # the generated pytest-benchmark suite's benchmarks
MOST = 76  # the looks judged: 10, 15, 22, 34, 51, 76
RUN_NS = 5e6

Draw = Callable[[np.random.Generator, int, str], np.ndarray]  # (rng, n, arm) -> times


@dataclass(frozen=True)
class Scenario:
    key: str
    what: str
    draw: Draw
    truth: str  # "same", "faster", "slower"


def _noise(rng: np.random.Generator, n: int, sd: float, skew: bool) -> np.ndarray:
    if skew:  # noise only adds time
        return 1.0 + rng.exponential(sd, n)
    return np.exp(rng.normal(0.0, sd, n))


def plain(factor: float, sd: float, skew: bool = False) -> Draw:
    def draw(rng: np.random.Generator, n: int, arm: str) -> np.ndarray:
        f = factor if arm == "head" else 1.0
        return RUN_NS * f * _noise(rng, n, sd, skew)
    return draw


def modes(slow_head: float, slow_base: float, *, width: float = 0.04, gap: float = 1.25,
          factor: float = 1.0) -> Draw:
    """Two modes ``gap`` apart, each spread by noise that only adds time (``width`` on
    average); head lands in the slow one with probability ``slow_head``, base
    ``slow_base``."""
    def draw(rng: np.random.Generator, n: int, arm: str) -> np.ndarray:
        share = slow_head if arm == "head" else slow_base
        slow = rng.random(n) < share
        f = factor if arm == "head" else 1.0
        return RUN_NS * f * np.where(slow, gap, 1.0) * (1.0 + rng.exponential(width, n))
    return draw


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("aa3", "identical, noise 3%", plain(1.0, 0.03), "same"),
    Scenario("aa-skew", "identical, noise only adds time (5% on average)",
             plain(1.0, 0.05, skew=True), "same"),
    Scenario("modes", "identical, timing modes alike (50% slow, +25%)", modes(0.5, 0.5), "same"),
    Scenario("biased", "biased modes: head 70% slow, base 50%", modes(0.7, 0.5), "same"),
    Scenario("corner", "biased modes: head 90% slow, base 10% (the premise's corner)",
             modes(0.9, 0.1), "same"),
    Scenario("corner-narrow", "the corner, modes ±1% wide", modes(0.9, 0.1, width=0.005), "same"),
    Scenario("past", "past the premise: head 99% slow, base 1%", modes(0.99, 0.01), "same"),
    Scenario("m40", "-40%, noise 3%", plain(0.60, 0.03), "faster"),
    Scenario("m12", "-12%, noise 3%", plain(0.88, 0.03), "faster"),
    Scenario("p25", "+25%, noise 3%", plain(1.25, 0.03), "slower"),
    Scenario("m12-quiet", "-12%, noise 1%", plain(0.88, 0.01), "faster"),
    Scenario("m12-noisy", "-12%, noise 6%", plain(0.88, 0.06), "faster"),
    Scenario("p5", "+5%, noise 1%", plain(1.05, 0.01), "slower"),
    Scenario("m4", "-4%, noise 1%", plain(0.96, 0.01), "faster"),
    Scenario("m40-modes", "-40%, timing modes alike (50% slow, +25%)",
             modes(0.5, 0.5, factor=0.60), "faster"),
)


def _arm(values: np.ndarray) -> ArmRuns:
    ns = tuple(float(v) for v in values)
    return ArmRuns(samples_ns=ns, wall_ns=tuple(int(v) for v in ns), cpu_ns=tuple(int(v) for v in ns),
                   maxrss_kib=(1,) * len(ns))


@contextmanager
def rule_before() -> Iterator[None]:
    """The rule before issue 39: no call below 51 pairs however the runs lie."""
    saved = stats._apart
    stats._apart = lambda arms, ys, q, slower: (None, 0)
    try:
        yield
    finally:
        stats._apart = saved


def sequence(base: np.ndarray, again: np.ndarray, head: np.ndarray, seed: int
             ) -> tuple[str, int]:
    """The first settled outcome over the looks (or the last look's), and its pairs."""
    policy = Policy(alpha=0.05, seed=seed, family=Family(sequential=FAMILY, fixed=0))
    outcome, pairs = "inconclusive", 0
    for k, n in enumerate(sequential.looks(MOST), start=1):
        w = Workload(name="w", parity=0.02, floor_ns=25_000.0, design="triplets", looks=k,
                     phases={"aa": PhaseRuns(arms={"base": _arm(base[:n]),
                                                   "base_again": _arm(again[:n])},
                                             order="AB" * n),
                             "ab": PhaseRuns(arms={"base": _arm(base[:n]), "head": _arm(head[:n])},
                                             order="AB" * n)})
        final = judge([w], policy).workloads["w"].final
        assert final is not None
        outcome, pairs = final.outcome, n
        if outcome in ("slower", "faster", "level"):
            break
    return outcome, pairs


def study(reps: int) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for s in SCENARIOS:
        rng = np.random.default_rng(zlib.crc32(s.key.encode()))
        rows: dict[str, list[tuple[str, int]]] = {"before": [], "now": []}
        for rep in range(reps):
            base, again, head = (s.draw(rng, MOST, arm) for arm in ("base", "again", "head"))
            with rule_before():
                rows["before"].append(sequence(base, again, head, rep))
            rows["now"].append(sequence(base, again, head, rep))
        out[s.key] = {"what": s.what, "truth": s.truth, "reps": reps,
                      **{rule: _tally(r, s.truth) for rule, r in rows.items()}}
        print(f"{time.strftime('%H:%M:%S')} {s.what}: before {out[s.key]['before']}, "
              f"now {out[s.key]['now']}", flush=True)
    return out


def _tally(rows: list[tuple[str, int]], truth: str) -> dict[str, object]:
    calls = [(o, n) for o, n in rows if o in ("slower", "faster")]
    right = [n for o, n in calls if o == truth]
    return {"calls": len(calls), "right": len(right), "level": sum(o == "level" for o, _ in rows),
            "by15": sum(n <= 15 for n in right), "by22": sum(n <= 22 for n in right),
            "pairs_median": statistics.median(right) if right else None}


def _cell(t: dict[str, object], reps: object, truth: object) -> str:
    if truth == "same":
        return "–"
    return f"{t['right']}/{reps} ({t['by15']} / {t['by22']}), {t['pairs_median']}"


def _false(t: dict[str, object], truth: object) -> int:
    calls, right = t["calls"], t["right"]
    assert isinstance(calls, int) and isinstance(right, int)
    return calls if truth == "same" else calls - right


def table(doc: dict[str, dict[str, object]]) -> str:
    lines = ["| scenario | truth | before: called (by 15 / 22 pairs), median pairs | "
             "now: called (by 15 / 22 pairs), median pairs | false before / now |",
             "|---|---|---|---|---|"]
    for row in doc.values():
        b, n, truth = row["before"], row["now"], row["truth"]
        assert isinstance(b, dict) and isinstance(n, dict)
        lines.append(f"| {row['what']} | {truth} | {_cell(b, row['reps'], truth)} | "
                     f"{_cell(n, row['reps'], truth)} | {_false(b, truth)} / {_false(n, truth)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--out", default="fewpairs-sim")
    parser.add_argument("--summary", action="store_true", help="print the table and stop")
    args = parser.parse_args(argv)
    path = RESULTS / f"{args.out}.json"
    if args.summary:
        print(table(json.loads(path.read_text())["scenarios"]))
        return 0
    start = time.monotonic()
    doc = study(args.reps)
    path.write_text(json.dumps({"meta": {"reps": args.reps, "family": FAMILY, "looks":
                                         list(sequential.looks(MOST)),
                                         "seconds": round(time.monotonic() - start)},
                                "scenarios": doc}, indent=1) + "\n")
    print(table(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
