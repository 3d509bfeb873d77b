"""The statistics of counts per benchmark, on synthetic suites judged by the real judge.

    python -m benchmarks.suitestats [--sequences 200] [--seed 1] [--out suitestats]

A suite's benchmark on a shared runner: single runs log-normal with spread s (0.12: the
10th-90th percentile of a round's ratio head over base about ±20%; 0.20: about ±35%), a
fifth of them in a slow mode 15% slower; its counts per unit of work (iteration)
exactly the work, times 1 + N(0, c) per counted pair (c = 0.05%: a compute loop; 0.3%: one
that allocates, Go's runtime noise), with the suite's pooled noise known within ±30%.
Every sequence is judged by ``judge.judge`` at the real looks (10, 15, 22, 34 … pairs,
``family`` 25 workloads, alpha 0.05) until it settles or stops, at most ``--max-pairs``
(what ten minutes give a 25-benchmark suite of 1 s harness runs here after counting).

Cases: identical; +5% and -5% of work (time moves with it); +2.5% (just above the 2%
parity); +1% (below it); layout only (time +3%, the same instructions); memory-bound
(time +8% and +30%, the same instructions); the counts moved but time did not (+5% of
instructions that cost no time: a loop that waits, say).

Designs (``benchsignals`` constants): the shipped one (level: the same work and time's
interval at alpha / m holding 1 within ±50%; call: the work moved by parity, time on the
same side and its look's interval reaching the counts' ratio); level within ±10%, ±25%,
or with no limit; a call that needs time to have moved half as far as the counts; and
time alone (no counts). Writes ``results/<out>.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import numpy as np

from benchbot.core import files
from benchbot.core.model import ArmRuns, Counts, Family, PhaseRuns, Verdict
from benchbot.verdict import benchsignals, sequential
from benchbot.verdict.judge import Policy, Workload, judge

RESULTS = Path(__file__).resolve().parent / "results"
FAMILY = 25
PARITY = 0.02
SLOW_SHARE, SLOW = 0.2, 0.15


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    work: float  # the counts' true ratio
    time: float  # time's true ratio
    truth: str  # what a right verdict is: slower, faster, level, or "none" (no call allowed)


CASES = (
    Case("identical", 1.0, 1.0, "level"),
    Case("+5%", 1.05, 1.05, "slower"),
    Case("-5%", 0.95, 0.95, "faster"),
    Case("+2.5%", 1.025, 1.025, "slower"),
    Case("+1% (below parity)", 1.01, 1.01, "none"),
    Case("layout only: time +3%", 1.0, 1.03, "none"),
    Case("memory-bound: time +8%", 1.0, 1.08, "none"),
    Case("memory-bound: time +30%", 1.0, 1.30, "none"),
    Case("counts +5%, time unmoved", 1.05, 1.0, "none"),
    # time moves the work's way by less than the work (caches, instructions that overlap)
    Case("work +10%, time +5%", 1.10, 1.05, "slower"),
    Case("work +49%, time +35%", 1.49, 1.35, "slower"),
    Case("work -10%, time -6%", 0.90, 0.94, "faster"),
    Case("counts +5%, time +1%", 1.05, 1.01, "none"),
)
DESIGNS: dict[str, dict[str, Any]] = {
    "shipped": {},
    "level within ±10%": {"LEVEL_TIME_LIMIT": 0.10},
    "level within ±25%": {"LEVEL_TIME_LIMIT": 0.25},
    "level, no limit": {"LEVEL_TIME_LIMIT": math.inf},
    "call: time half as far": {"TIME_SHARE": 0.5},
    "time alone": {"counts": False},
    "short of the work: inconclusive (before)": {"TIME_CALLS_SHORT": False},
}


@contextmanager
def design(changes: Mapping[str, Any]) -> Iterator[bool]:
    saved = {k: getattr(benchsignals, k) for k in changes if k != "counts"}
    for key, value in changes.items():
        if key != "counts":
            setattr(benchsignals, key, value)
    try:
        yield bool(changes.get("counts", True))
    finally:
        for key, value in saved.items():
            setattr(benchsignals, key, value)


def runs(rng: np.random.Generator, n: int, spread: float, ratio: float) -> np.ndarray:
    slow = rng.random(n) < SLOW_SHARE
    return 1e5 * ratio * np.exp(rng.normal(0.0, spread, n) + np.where(slow, SLOW, 0.0))


def counts(rng: np.random.Generator, case: Case, noise: float) -> Counts:
    i0 = 50_000.0
    def one(ratio: float) -> float:
        return i0 * ratio * (1 + rng.normal(0.0, noise))
    return Counts(method="valgrind", why="simulated", unit="iteration", exact=True, units=100,
                  base=(one(1.0),), base_again=(one(1.0),), head=(one(case.work),),
                  pooled_noise=noise * rng.uniform(0.7, 1.3))


def workload(base: np.ndarray, again: np.ndarray, head: np.ndarray, n: int, look: int,
             counted: Counts | None) -> Workload:
    def arm(values: np.ndarray) -> ArmRuns:
        return ArmRuns(samples_ns=tuple(float(v) for v in values[:n]))
    phases = {"aa": PhaseRuns(arms={"base": arm(base), "base_again": arm(again)}, order="AB" * n),
              "ab": PhaseRuns(arms={"base": arm(base), "head": arm(head)}, order="AB" * n)}
    return Workload(name="b", parity=PARITY, floor_ns=0.001, phases=phases, design="triplets",
                    looks=look, counts=counted, metric="reported", judge_memory=False)


def sequence(rng: np.random.Generator, case: Case, spread: float, noise: float,
             max_pairs: int, use_counts: bool) -> tuple[Verdict, int]:
    """One benchmark measured look by look until it stops: its verdict and pairs."""
    base, again = runs(rng, max_pairs, spread, 1.0), runs(rng, max_pairs, spread, 1.0)
    head = runs(rng, max_pairs, spread, case.time)
    counted = counts(rng, case, noise) if use_counts else None
    return looked(base, again, head, counted, max_pairs)


def looked(base: np.ndarray, again: np.ndarray, head: np.ndarray, counted: Counts | None,
           max_pairs: int) -> tuple[Verdict, int]:
    """The runs judged look by look until the verdict stops: the verdict and its pairs."""
    policy = Policy(alpha=0.05, family=Family(sequential=FAMILY, fixed=0))
    verdict: Verdict | None = None
    for look, n in enumerate(sequential.looks(max_pairs), start=1):
        judged = judge([workload(base, again, head, n, look, counted)], policy).workloads["b"]
        verdict = judged.ab
        assert verdict is not None
        if sequential.stop_reason(verdict, judged.aa, pairs=n, max_pairs=max_pairs,
                                  parity=PARITY) is not None:
            return verdict, n
    assert verdict is not None
    return verdict, max_pairs


def right(case: Case, outcome: str) -> bool:
    return outcome == case.truth


def wrong(case: Case, outcome: str) -> bool:
    """A false verdict: a call that is not the truth, or level on a change of parity or more."""
    if outcome in ("slower", "faster"):
        return outcome != case.truth
    return outcome == "level" and case.truth in ("slower", "faster")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-pairs", type=int, default=140)
    parser.add_argument("--out", default="suitestats")
    parser.add_argument("--cases", default="", help="the cases to run, by name, separated by semicolons")
    parser.add_argument("--designs", default="", help="the designs to run, separated by semicolons")
    parser.add_argument("--spreads", default="0.12,0.20",
                        help="the single runs' spreads (log-normal sigma), comma-separated")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if not args.cases or c.name in args.cases.split(";")]
    designs = {k: v for k, v in DESIGNS.items() if not args.designs or k in args.designs.split(";")}
    started = time.monotonic()
    table: list[dict[str, Any]] = []
    for spread in (float(v) for v in args.spreads.split(",")):
        for noise in (0.0005, 0.003):
            for case in cases:
                for name, changes in designs.items():
                    rng = np.random.default_rng(args.seed)
                    got: list[tuple[str, int]] = []
                    with design(changes) as use_counts:
                        for _ in range(args.sequences):
                            v, n = sequence(rng, case, spread, noise, args.max_pairs, use_counts)
                            got.append((v.outcome, n))
                    table.append(_row(case, name, spread, noise, got))
                    print(_line(table[-1]), flush=True)
                    _save(args, table, started)  # after every cell: a long run keeps its part
    _save(args, table, started)
    print(report(table, args))
    return 0


def _save(args: argparse.Namespace, table: Sequence[Mapping[str, Any]], started: float) -> None:
    files.write_text(RESULTS / f"{args.out}.json", json.dumps(
        {"sequences": args.sequences, "seed": args.seed, "max_pairs": args.max_pairs,
         "family": FAMILY, "seconds": round(time.monotonic() - started), "rows": table},
        indent=1) + "\n")
    files.write_text(RESULTS / f"{args.out}.md", report(table, args) + "\n")


def _row(case: Case, design_name: str, spread: float, noise: float,
         got: Sequence[tuple[str, int]]) -> dict[str, Any]:
    outcomes = [o for o, _ in got]
    settled = [n for o, n in got if o in ("slower", "faster", "level")]
    return {"case": case.name, "design": design_name, "spread": spread, "noise": noise,
            "n": len(got), "right": sum(right(case, o) for o in outcomes),
            "wrong": sum(wrong(case, o) for o in outcomes),
            "calls": sum(o in ("slower", "faster") for o in outcomes),
            "level": outcomes.count("level"),
            "pairs_settled": statistics.median(settled) if settled else None}


def case_truth(name: str) -> str:
    return next(c.truth for c in CASES if c.name == name)


def _line(row: Mapping[str, Any]) -> str:
    return (f"s={row['spread']} c={row['noise']} {row['case']:28} {row['design']:24} "
            f"right {row['right']}/{row['n']} wrong {row['wrong']} calls {row['calls']} "
            f"level {row['level']} pairs {row['pairs_settled']}")


def report(table: Sequence[Mapping[str, Any]], args: argparse.Namespace) -> str:
    out = [f"Synthetic suites' benchmarks, {args.sequences} sequences a cell, seed {args.seed}, "
           f"at most {args.max_pairs} pairs, family {FAMILY}, parity {PARITY:g}. A cell: "
           "right / wrong verdicts (right: the call, or level, the truth asks; where no call is "
           "right — below parity, the same instructions — right is not called; wrong: a call "
           "that is not the truth, level on a change of parity or more), then how many were "
           "level, and the median pairs at a settled verdict."]
    for spread in dict.fromkeys(r["spread"] for r in table):
        for noise in dict.fromkeys(r["noise"] for r in table):
            rows = [r for r in table if r["spread"] == spread and r["noise"] == noise]
            designs = list(dict.fromkeys(r["design"] for r in rows))
            out += ["", f"### single-run spread {spread}, counts noise {noise * 100:g}%", "",
                    "| case | " + " | ".join(designs) + " |",
                    "|---|" + "---|" * len(designs)]
            for case in dict.fromkeys(r["case"] for r in rows):
                cells = []
                for d in designs:
                    r = next((x for x in rows if x["case"] == case and x["design"] == d), None)
                    if r is None:  # not judged yet (a run saved part way)
                        cells.append("…")
                        continue
                    right = r["n"] - r["calls"] if case_truth(case) == "none" else r["right"]
                    cells.append(f"{right}/{r['wrong']}, L{r['level']}, "
                                  f"{r['pairs_settled'] if r['pairs_settled'] is not None else '–'}")
                out.append(f"| {case} | " + " | ".join(cells) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
