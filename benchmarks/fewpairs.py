"""Calls from few pairs (issue 39): the rule before and the rule now, on simulated triplets.

    python -m benchmarks.fewpairs [--reps 400] [--out fewpairs-sim]

Before issue 39 a change was called from 51 pairs on only (the 10th percentile's lower
bound); now, below 51, also where the two builds' runs do not overlap (``intervals.apart_bound``:
from 15 pairs in triplets), and from more pairs where only a few runs do. Each repetition draws rounds of base, base again and head and
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

Each repetition is also judged by issue 39's first rule (``unspared``: apart with no run
across, from 15 pairs) against the rule now, which from more pairs spares a few runs across
of the side a slow run spoils (``intervals.apart_tiers``); and with ``--variant-share0`` by
a variant weighed and not adopted (no run across from 16 pairs, the rest of LOW_ALPHA to the
spared). Scenarios with rare slow runs (``slow_runs``: a busy host's) show what sparing
buys; ``--scenarios`` picks a subset.
"""

from __future__ import annotations

import argparse
import contextlib
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
from benchbot.verdict import intervals, sequential, stats
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
          factor: float = 1.0, bursts: float = 0.0) -> Draw:
    """Two modes ``gap`` apart, each spread by noise that only adds time (``width`` on
    average); head lands in the slow one with probability ``slow_head``, base
    ``slow_base``; and with ``bursts`` a share of runs (every arm alike) is slowed 1.3 to
    2.5 times besides, as in ``slow_runs``."""
    def draw(rng: np.random.Generator, n: int, arm: str) -> np.ndarray:
        share = slow_head if arm == "head" else slow_base
        slow = rng.random(n) < share
        f = factor if arm == "head" else 1.0
        out = RUN_NS * f * np.where(slow, gap, 1.0) * (1.0 + rng.exponential(width, n))
        if bursts:
            out *= np.where(rng.random(n) < bursts, rng.uniform(1.3, 2.5, n), 1.0)
        return out
    return draw


def slow_runs(share: float, factor: float = 1.0, sd: float = 0.03) -> Draw:
    """Runs at noise ``sd``, a share of them (every arm alike) slowed 1.3 to 2.5 times at
    random: a busy host's neighbour, as this VM's harness runs read on 2026-12-06 (2.5% to
    30% of runs past 1.25 times their median, at most 2.5 times; benchmarks/README.md,
    section 17)."""
    def draw(rng: np.random.Generator, n: int, arm: str) -> np.ndarray:
        f = factor if arm == "head" else 1.0
        slow = np.where(rng.random(n) < share, rng.uniform(1.3, 2.5, n), 1.0)
        return RUN_NS * f * slow * np.exp(rng.normal(0.0, sd, n))
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
    Scenario("aa-slow5", "identical, 5% of runs 1.3-2.5x slow", slow_runs(0.05), "same"),
    Scenario("aa-slow10", "identical, 10% of runs 1.3-2.5x slow", slow_runs(0.10), "same"),
    Scenario("m40-slow5", "-40%, 5% of runs slow", slow_runs(0.05, 0.60), "faster"),
    Scenario("m12-slow5", "-12%, 5% of runs slow", slow_runs(0.05, 0.88), "faster"),
    Scenario("p25-slow5", "+25%, 5% of runs slow", slow_runs(0.05, 1.25), "slower"),
    Scenario("m40-slow10", "-40%, 10% of runs slow", slow_runs(0.10, 0.60), "faster"),
    Scenario("p25-slow10", "+25%, 10% of runs slow", slow_runs(0.10, 1.25), "slower"),
    Scenario("corner-faster", "biased modes: head 10% slow, base 90% (the corner mirrored)",
             modes(0.1, 0.9), "same"),
    Scenario("corner-faster-narrow", "the corner mirrored, modes ±1% wide",
             modes(0.1, 0.9, width=0.005), "same"),
    Scenario("aa-slow20", "identical, 20% of runs 1.3-2.5x slow", slow_runs(0.20), "same"),
    Scenario("m12-slow10", "-12%, 10% of runs slow", slow_runs(0.10, 0.88), "faster"),
    Scenario("m40-slow20", "-40%, 20% of runs slow", slow_runs(0.20, 0.60), "faster"),
    Scenario("m12-slow20", "-12%, 20% of runs slow", slow_runs(0.20, 0.88), "faster"),
    Scenario("p25-slow20", "+25%, 20% of runs slow", slow_runs(0.20, 1.25), "slower"),
    Scenario("corner-slow10", "the corner, and 10% of runs 1.3-2.5x slow besides",
             modes(0.9, 0.1, bursts=0.10), "same"),
    Scenario("corner-narrow-slow10", "the corner, modes ±1% wide, 10% of runs slow besides",
             modes(0.9, 0.1, width=0.005, bursts=0.10), "same"),
    Scenario("biased-slow10", "biased modes (70% / 50%), 10% of runs slow besides",
             modes(0.7, 0.5, bursts=0.10), "same"),
    Scenario("p12-slow5", "+12%, 5% of runs slow", slow_runs(0.05, 1.12), "slower"),
    Scenario("p12-slow10", "+12%, 10% of runs slow", slow_runs(0.10, 1.12), "slower"),
)
# A variant weighed (--variant-share0): no run across from the pairs where it takes this
# share of LOW_ALPHA (0.64: 16 triplets), the rest halved over k = 1 .. APART_SPARED.
VARIANT_SHARE0 = 0.64


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


@contextmanager
def spared_by(spared: Callable[[int, float, int, bool], int | None]) -> Iterator[None]:
    """Judge with ``stats.apart_spared`` replaced: how many runs across n pairs may spare."""
    names = vars(stats)  # the name stats imported from intervals, which _apart looks up
    saved = names["apart_spared"]
    names["apart_spared"] = spared
    try:
        yield
    finally:
        names["apart_spared"] = saved


def unspared(n: int, q: float, arms: int, slower: bool) -> int | None:
    """Issue 39's first rule: no run across, from ``apart_from``'s pairs, whatever more."""
    return 0 if n >= intervals.apart_from(q, arms) else None


def spared_both_ways(n: int, q: float, arms: int, slower: bool) -> int | None:
    """The rule before the pooled reference: runs across spared for a faster call too
    (15, 28, 34, 38, 43 pairs in triplets)."""
    tiers = intervals.spared_from(q, arms, slower, intervals.apart_from(q, arms))
    allowed = [k for k, first in enumerate(tiers) if n >= first]
    return max(allowed) if allowed else None


@contextmanager
def rule_tiers() -> Iterator[None]:
    """Judge as before the pooled reference (``tiers``): a faster call spares head's runs
    across, and never rests on base's runs pooled."""
    names = vars(stats)
    saved = names["pooled_from"], names["apart_spared"]
    names["pooled_from"] = lambda q, arms: None
    names["apart_spared"] = spared_both_ways
    try:
        yield
    finally:
        names["pooled_from"], names["apart_spared"] = saved


def spared_whole(n: int, q: float, arms: int, slower: bool) -> int | None:
    """The rule before base's runs above nearly all of head's were spared: a slower call
    spares k runs across wherever they lie, with all of what LOW_ALPHA leaves (15, 30, 38,
    45, 52 pairs in triplets); a faster one none, as now."""
    if not slower and intervals.pooled_from(q, arms) is not None:
        return 0 if n >= intervals.apart_from(q, arms) else None
    return spared_both_ways(n, q, arms, slower)


@contextmanager
def rule_pooled() -> Iterator[None]:
    """Judge as before a slower call spared base's runs that lie above all but a few of
    head's (``pooled``: the rule of benchmarks/README.md, section 22)."""
    names = vars(stats)
    saved = names["above_spared"], names["apart_spared"]
    names["above_spared"] = lambda n, q, arms: None
    names["apart_spared"] = spared_whole
    try:
        yield
    finally:
        names["above_spared"], names["apart_spared"] = saved


def variant_tiers(q: float, arms: int, slower: bool, share0: float) -> tuple[int, ...]:
    """``intervals.apart_tiers`` with k = 0 at ``share0`` of LOW_ALPHA, not all of it."""
    first = next(n for n in range(1, 10_000)
                 if intervals.apart_bound(n, arms * n, q) <= share0 * intervals.LOW_ALPHA)
    return intervals.spared_from(q, arms, slower, first)


def variant(share0: float) -> Callable[[int, float, int, bool], int | None]:
    def spared(n: int, q: float, arms: int, slower: bool) -> int | None:
        allowed = [k for k, first in enumerate(variant_tiers(q, arms, slower, share0)) if n >= first]
        return max(allowed) if allowed else None
    return spared


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


def study(reps: int, keys: set[str] | None = None, share0: float | None = None,
          only: set[str] | None = None) -> dict[str, dict[str, object]]:
    """Each scenario's repetitions judged by every rule on the same runs (or those in
    ``only``): ``before`` (no call below 51 pairs), ``unspared`` (issue 39's first rule:
    apart with no run across), ``tiers`` (runs across spared both ways, no pooled
    reference), ``pooled`` (the pooled reference, and a slower call's runs across spared
    wherever they lie), ``now`` (the rule as shipped) and, with ``share0``, the variant."""
    out: dict[str, dict[str, object]] = {}
    for s in SCENARIOS:
        if keys is not None and s.key not in keys:
            continue
        rng = np.random.default_rng(zlib.crc32(s.key.encode()))
        rules: dict[str, Callable[[], contextlib.AbstractContextManager[None]]] = {
            "before": rule_before, "unspared": lambda: spared_by(unspared),
            "tiers": rule_tiers, "pooled": rule_pooled, "now": contextlib.nullcontext}
        if share0 is not None:
            rules["variant"] = lambda: spared_by(variant(share0))
        if only is not None:
            rules = {name: rule for name, rule in rules.items() if name in only}
        rows: dict[str, list[tuple[str, int]]] = {name: [] for name in rules}
        for rep in range(reps):
            base, again, head = (s.draw(rng, MOST, arm) for arm in ("base", "again", "head"))
            for name, rule in rules.items():
                with rule():
                    rows[name].append(sequence(base, again, head, rep))
        out[s.key] = {"what": s.what, "truth": s.truth, "reps": reps,
                      **{rule: _tally(r, s.truth) for rule, r in rows.items()}}
        print(f"{time.strftime('%H:%M:%S')} {s.what}: "
              + ", ".join(f"{rule} {out[s.key][rule]}" for rule in rows), flush=True)
    return out


def _tally(rows: list[tuple[str, int]], truth: str) -> dict[str, object]:
    calls = [(o, n) for o, n in rows if o in ("slower", "faster")]
    right = [n for o, n in calls if o == truth]
    return {"calls": len(calls), "right": len(right), "level": sum(o == "level" for o, _ in rows),
            "by15": sum(n <= 15 for n in right), "by22": sum(n <= 22 for n in right),
            "by34": sum(n <= 34 for n in right),
            "pairs_median": statistics.median(right) if right else None}


def _cell(t: dict[str, object], reps: object, truth: object) -> str:
    if truth == "same":
        return "–"
    return f"{t['right']}/{reps} ({t['by15']} / {t['by22']}), {t['pairs_median']}"


def _false(t: dict[str, object], truth: object) -> int:
    calls, right = t["calls"], t["right"]
    assert isinstance(calls, int) and isinstance(right, int)
    return calls if truth == "same" else calls - right


def _cell34(t: dict[str, object], reps: object, truth: object) -> str:
    if truth == "same":
        return "–"
    return f"{t['right']}/{reps} ({t['by15']} / {t['by22']} / {t.get('by34')}), {t['pairs_median']}"


def spared_table(doc: dict[str, dict[str, object]],
                 names: tuple[str, ...] = ("unspared", "now", "variant")) -> str:
    """The runs across spared (now) against none spared, and the variant where it ran; or
    the rules ``names``."""
    rules = [r for r in names if any(r in row for row in doc.values())]
    lines = ["| scenario | truth | " + " | ".join(
        f"{r}: called (by 15 / 22 / 34 pairs), median pairs" for r in rules)
        + " | false " + " / ".join(rules) + " |", "|---|---|" + "---|" * (len(rules) + 1)]
    for row in doc.values():
        tallies = [row.get(r) for r in rules]
        if not all(isinstance(t, dict) for t in tallies):
            continue
        cells = [_cell34(t, row["reps"], row["truth"]) for t in tallies]  # type: ignore[arg-type]
        false = " / ".join(str(_false(t, row["truth"])) for t in tallies)  # type: ignore[arg-type]
        lines.append(f"| {row['what']} | {row['truth']} | " + " | ".join(cells) + f" | {false} |")
    return "\n".join(lines)


def table(doc: dict[str, dict[str, object]]) -> str:
    lines = ["| scenario | truth | before: called (by 15 / 22 pairs), median pairs | "
             "now: called (by 15 / 22 pairs), median pairs | false before / now |",
             "|---|---|---|---|---|"]
    for row in doc.values():
        if "before" not in row:
            continue
        b, n, truth = row["before"], row["now"], row["truth"]
        assert isinstance(b, dict) and isinstance(n, dict)
        lines.append(f"| {row['what']} | {truth} | {_cell(b, row['reps'], truth)} | "
                     f"{_cell(n, row['reps'], truth)} | {_false(b, truth)} / {_false(n, truth)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--out", default="fewpairs-sim")
    parser.add_argument("--summary", action="store_true", help="print the tables and stop")
    parser.add_argument("--scenarios", default=None, metavar="KEYS",
                        help="comma-separated scenario keys (default: all)")
    parser.add_argument("--rules", default=None, metavar="NAMES",
                        help="comma-separated rules to judge by (default: before, unspared, "
                             "tiers, pooled, now)")
    parser.add_argument("--variant-share0", type=float, default=None, metavar="S",
                        help=f"judge by the variant too: k = 0 at S of LOW_ALPHA (weighed: "
                             f"{VARIANT_SHARE0})")
    args = parser.parse_args(argv)
    path = RESULTS / f"{args.out}.json"
    if args.summary:
        scenarios = json.loads(path.read_text())["scenarios"]
        _print_tables(scenarios)
        return 0
    start = time.monotonic()
    keys = set(args.scenarios.split(",")) if args.scenarios else None
    only = set(args.rules.split(",")) if args.rules else None
    doc = study(args.reps, keys, args.variant_share0, only)
    meta: dict[str, object] = {
        "reps": args.reps, "family": FAMILY, "looks": list(sequential.looks(MOST)),
        "seconds": round(time.monotonic() - start),
        "spared": {"faster": list(intervals.apart_tiers(0.1, 2, False)),
                   "slower": list(intervals.apart_tiers(0.1, 2, True))},
        "pooled_from": intervals.pooled_from(0.1, 2),
        "above": list(intervals.above_tiers(0.1, 2))}
    if args.variant_share0 is not None:
        meta["variant"] = {"share0": args.variant_share0,
                           "faster": list(variant_tiers(0.1, 2, False, args.variant_share0)),
                           "slower": list(variant_tiers(0.1, 2, True, args.variant_share0))}
    path.write_text(json.dumps({"meta": meta, "scenarios": doc}, indent=1) + "\n")
    _print_tables(doc)
    return 0


def _print_tables(doc: dict[str, dict[str, object]]) -> None:
    if any("before" in row and "now" in row for row in doc.values()):
        print(table(doc))
        print()
    if any("unspared" in row for row in doc.values()):
        print(spared_table(doc))
        print()
    if any("tiers" in row for row in doc.values()):
        print(spared_table(doc, ("tiers", "now")))
        print()
    if any("pooled" in row for row in doc.values()):
        print(spared_table(doc, ("pooled", "now")))


if __name__ == "__main__":
    sys.exit(main())
