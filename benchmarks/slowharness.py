"""Where a slow harness's budget goes (issue 39): the engine's planning before and now, on a
simulated pytest-benchmark suite run through the real engine on a fake clock.

    python -m benchmarks.slowharness [--reps 40] [--out slowharness]

The suite is the live one's shape (``benchmarks/suitegen.py``'s pybench: 11 benchmarks,
−40% ``sort_ints``, −12% ``json``, +25% ``matmul``, the rest unchanged): a harness run takes
a start of 2 s and 0.45 s a benchmark it serves (7 s for all 11, 3.35 s for 3; measured
here: about 7 s and 3 s), each benchmark's figure varies by 2% run to run, and a busy host
makes some harness runs slow: with probability q a run falls in a neighbour's burst, and then
each benchmark in it reads 1.25–2.5 times its time with probability 0.45 (the live runs:
"5 of 11 benchmarks slow in one of base's harness runs"). The slow share of runs is 0.45·q.
Each comparison has the 10-minute budget, as a pull request's.

Three plannings of the same runs (the same seeds):

- **before**: a suite's triplet priced as its runs' median wall shared among the benchmarks
  its last run served, and every workload goes on while the budget carries it to its next
  look (code before ``fa51367``, restored here for the comparison, less its cache of the
  medians);
- **pace**: a round priced by ``rounds.HarnessPace`` (a harness run by the benchmarks it
  serves), the admission as before;
- **now**: the pace, and while a change is pending, a benchmark whose median is within
  parity and that the rest of the budget could not settle even alone waits
  (``Sequential._out_of_reach``);
- **tiers** (``--plannings``): now, judged by the rule before a faster call rested on both
  base arms' runs pooled (``fewpairs.rule_tiers``: head's runs across spared instead);
- **pooled** (``--plannings``): now, judged by the rule before a slower call spared base's
  runs that lie above nearly all of head's (``fewpairs.rule_pooled``).

For each slow share and planning: the changes called the right way (of 3 a comparison, and
each), false calls, and the budget left unused; with ``identical`` (head = base) false calls
only. Written to ``results/<out>.json`` and printed as benchmarks/README.md's table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from benchbot.config.settings import Overrides
from benchbot.harness import formats
from benchbot.measure import engine, measuring
from benchbot.measure.context import PER_RUN_OVERHEAD_S
from benchbot.run.runner import RawRun, SpawnRequest
from benchmarks import countcost, fewpairs
from tests.clock import FakeClock

RESULTS = Path(__file__).resolve().parent / "results"
START_S, PER_S = 2.0, 0.45  # a harness run: its start, and each benchmark's share
NOISE = 0.02  # run-to-run, lognormal sigma
HIT = 0.45  # in a burst, the chance a benchmark of the run is slowed
SLOW = (1.25, 2.5)  # and by how much
BUDGET_S = 600.0
NAMES = ("fnv", "crc", "sort_ints", "sort_strings", "parse_ints", "format_ints", "json",
         "split_csv", "dict_insert", "matmul", "base64")
CHANGED = {"sort_ints": 0.60, "json": 0.88, "matmul": 1.25}
GO = {n: "Benchmark" + "".join(p.title() for p in n.split("_")) for n in NAMES}  # as Go names them
FROM_GO = {g: n for n, g in GO.items()}
BURSTS = (0.0, 0.07, 0.13, 0.22, 0.38)  # q: slow shares 0%, 3%, 6%, 10%, 17%
PLANNINGS = ("before", "pace", "now")  # and "tiers": now, judged by the rule before pooling
CONFIG = """version: 1
suites:
  - name: py
    run: [./bench, -test.bench, .]
    format: go
    filter: ['-test.bench={regex}']
counts: off
profile: off
"""


class Harness:
    """The suite's harness as the engine sees it through its spawner (Go's report format,
    which carries one figure per benchmark as pytest-benchmark's does)."""

    def __init__(self, clock: FakeClock, *, seed: int, burst: float, changed: bool) -> None:
        self.clock, self.burst = clock, burst
        self.factors = CHANGED if changed else {}
        self.rng = np.random.default_rng(seed)
        self.slow = self.runs = 0

    def spawn(self, request: SpawnRequest) -> RawRun:
        head = Path(request.cwd).name == "head"
        pattern = next((a.split("=", 1)[1] for a in reversed(request.argv)
                        if a.startswith("-test.bench=")), ".")
        names = [n for n in NAMES if re.search(pattern, GO[n])]
        in_burst = self.rng.random() < self.burst
        lines = []
        for name in names:
            factor = self.factors.get(name, 1.0) if head else 1.0
            slow = self.rng.uniform(*SLOW) if in_burst and self.rng.random() < HIT else 1.0
            self.slow += slow > 1.0
            self.runs += 1
            ns = 1e6 * factor * slow * self.rng.lognormal(0.0, NOISE)
            lines.append(f"{GO[name]}-2 \t 10 \t {ns:.1f} ns/op")
        wall = START_S + PER_S * len(names)
        self.clock.advance(wall)
        return RawRun(wall_ns=int(wall * 1e9), cpu_ns=int(wall * 1e9), maxrss_kib=1,
                      returncode=0, report=formats.parse("go", "\n".join(lines) + "\nPASS\n"))


# --- the planning before fa51367, restored for the comparison ------------------------------

def _triplet_s_before(self: measuring.Sequential, name: str) -> float:
    result = self.triplets.results[name]
    walls = [statistics.median(s.wall_ns) for s in (result.base, result.again, result.head)
             if s.wall_ns]
    if len(walls) < 3:
        return 3 * (self.warmup_s.get(name, 0.01) + PER_RUN_OVERHEAD_S)
    share = self.triplets.served.get(name, 1)
    return (sum(walls) / 1e9 + 3 * PER_RUN_OVERHEAD_S) / share


def _round_s_before(self: measuring.Sequential, names: Any) -> float:
    return sum(self._triplet_s(n) for n in names)


@contextlib.contextmanager
def _planning(which: str) -> Iterator[None]:
    saved = {k: getattr(measuring.Sequential, k)
             for k in ("_triplet_s", "_round_s", "_out_of_reach")}
    try:
        if which == "before":
            measuring.Sequential._triplet_s = _triplet_s_before  # type: ignore[method-assign]
            measuring.Sequential._round_s = _round_s_before  # type: ignore[method-assign]
        if which in ("before", "pace"):
            measuring.Sequential._out_of_reach = (  # type: ignore[method-assign]
                lambda self, name, left: False)
        rule = {"tiers": fewpairs.rule_tiers, "pooled": fewpairs.rule_pooled}.get(
            which, contextlib.nullcontext)
        with rule():
            yield
    finally:
        for k, v in saved.items():
            setattr(measuring.Sequential, k, v)


def compare(repo: Path, *, seed: int, burst: float, changed: bool, planning: str) -> dict[str, Any]:
    clock = FakeClock()
    harness = Harness(clock, seed=seed, burst=burst, changed=changed)
    with _planning(planning):
        doc = engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                            overrides=Overrides(budget=BUDGET_S, seed=seed)),
                             spawner_factory=lambda _: harness, clock=clock,
                             reporter=engine.Reporter())
    out: dict[str, Any] = {"benchmarks": {}, "slow_share": harness.slow / max(harness.runs, 1)}
    for b in doc.benchmarks:
        name = FROM_GO[b.name.removeprefix("py/")]
        truth = CHANGED.get(name, 1.0) if changed else 1.0
        outcome = b.verdict.outcome
        right = ((truth < 1 and outcome == "faster") or (truth > 1 and outcome == "slower"))
        false = outcome in ("faster", "slower") and not right
        out["benchmarks"][name] = {"outcome": outcome, "right": right, "false": false,
                                   "pairs": b.measuring.pairs if b.measuring else 0}
    out["left_s"] = round(BUDGET_S - (doc.spent.wall_s if doc.spent else 0.0), 2)
    return out


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    changed = [r for r in rows if r["changed"]]
    identical = [r for r in rows if not r["changed"]]

    def called(rs: list[dict[str, Any]], name: str) -> int:
        return sum(r["benchmarks"][name]["right"] for r in rs)

    return {
        "comparisons": len(changed),
        "called": sum(called(changed, n) for n in CHANGED),
        "of": 3 * len(changed),
        "each": {n: called(changed, n) for n in CHANGED},
        "all_three": sum(all(r["benchmarks"][n]["right"] for n in CHANGED) for r in changed),
        "false_changed": sum(b["false"] for r in changed for b in r["benchmarks"].values()),
        "false_identical": sum(b["false"] for r in identical for b in r["benchmarks"].values()),
        "identical": len(identical),
        "left_s_median": statistics.median(r["left_s"] for r in rows) if rows else None,
        "slow_share": statistics.mean(r["slow_share"] for r in rows) if rows else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--identical-reps", type=int, default=None,
                        help="identical comparisons a cell (default: --reps)")
    parser.add_argument("--bursts", default=",".join(map(str, BURSTS)))
    parser.add_argument("--plannings", default=",".join(PLANNINGS),
                        help="comma-separated, of before, pace, now, tiers (now, with a "
                             "faster call's runs across spared as before the pooled reference) "
                             "and pooled (now, with no run of base's spared for lying above "
                             "nearly all of head's)")
    parser.add_argument("--out", default="slowharness")
    args = parser.parse_args(argv)
    bursts = [float(b) for b in args.bursts.split(",")]
    identical_reps = args.reps if args.identical_reps is None else args.identical_reps
    # base tagged, and a head that changes a README only (the harness decides what differs)
    repo = countcost._make_repo(Path(tempfile.mkdtemp(prefix="slowharness-")))(
        {"benchbot.yml": CONFIG}, {"README": "head\n"})
    started = time.monotonic()
    table: dict[str, Any] = {}
    for burst in bursts:
        for planning in args.plannings.split(","):
            rows = []
            for seed in range(args.reps):
                rows.append({"changed": True, "seed": seed,
                             **compare(repo, seed=seed, burst=burst, changed=True, planning=planning)})
            for seed in range(identical_reps):
                rows.append({"changed": False, "seed": seed,
                             **compare(repo, seed=seed, burst=burst, changed=False,
                                       planning=planning)})
            s = table.setdefault(str(burst), {})[planning] = summarize(rows)
            print(f"burst {burst:.2f} (slow {100 * s['slow_share']:.1f}%) {planning:6}: called "
                  f"{s['called']}/{s['of']} (all three {s['all_three']}/{s['comparisons']}; "
                  f"{s['each']}), false {s['false_changed']} + {s['false_identical']} identical, "
                  f"left {s['left_s_median']} s", flush=True)
    doc = {"what": __doc__.splitlines()[0], "reps": args.reps, "identical_reps": identical_reps,
           "budget_s": BUDGET_S, "harness": {"start_s": START_S, "per_benchmark_s": PER_S,
                                             "noise": NOISE, "hit": HIT, "slow": SLOW},
           "seconds": round(time.monotonic() - started, 1), "table": table}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.out}.json").write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
