"""An estimate the stopping rule does not inflate: a synthetic study (issue 20, item 5).

Stopping as soon as a change is clear picks the moments when noise made it look large, so
the ratio read at the call overstates the change. This study measures by how much, and
what measuring on after the call buys back, with the real judge at the real looks:

- synthetic triplets (base, base again, head) per round, each run's time log-normal with
  a spread like this VM's (13% IQR/median for single runs of a 128 ms sort), optionally
  with a slow mode (a fifth of the runs 25% slower, in every arm alike);
- true changes of +3% and -4% of work, judged on time alone and with exact instruction
  counts beside it (valgrind's, one counted run per arm: ``signals.joint``);
- ``judge.judge`` at every look of ``sequential.looks(1000)`` until ``stop_reason`` says
  stop; a sequence whose change is called at n pairs is then read by each candidate rule
  for the estimate: stop at the call (today), measure on to 2n, to max(2n, 100), to n + 50,
  to 3n, with the estimate from all pairs or from the pairs after the call alone, and
  either the median of the per-triplet log ratios or their Hodges-Lehmann centre (the
  median of all pairwise means: as steady as a mean for symmetric noise, nearly as
  robust as the median).

The figure per rule: the median absolute error of called changes, in points of percent,
and the median extra pairs the rule costs. The cheapest rule with an error of at most 0.5
points is the one benchbot ships: n + 50 pairs (``sequential.estimate_pairs``), then on
until the estimate's interval is within ±1.4% (``sequential.estimate_until``), with the
Hodges-Lehmann centre of the per-triplet log ratios (``intervals.pseudo_median``).

Run: ``python -m benchmarks.estimate [--reps 150] [--seed 1]`` (40-80 s on a 2-core VM).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from benchbot.core.model import ArmRuns, Counts, PhaseRuns, Verdict
from benchbot.verdict import intervals, sequential
from benchbot.verdict.judge import Policy, Workload, judge

SIGMA = math.asinh(0.13 / 2) / 0.6745  # log-normal whose IQR/median is 13%
RUN_NS = 110e6  # a run of about 110 ms (the sort)
SLOW_SHARE, SLOW_BY = 0.2, 1.25  # the optional slow mode
MAX_PAIRS = 1000
INSTRUCTIONS = 585_821_633  # the contract's cachegrind summary of the sort

# A rule: (the pairs measured in all after a call at n, the first pair the estimate uses,
# the estimator: the median of per-triplet log ratios, or their Hodges-Lehmann centre).
Rule = tuple[Callable[[int], int], Callable[[int], int], str]
RULES: dict[str, Rule] = {
    "median, stop at the call (before)": (lambda n: n, lambda n: 0, "median"),
    "median, to n + 50": (lambda n: n + 50, lambda n: 0, "median"),
    "median, to 1.5n (the next look)": (lambda n: round(1.5 * n), lambda n: 0, "median"),
    "median, to 2n": (lambda n: 2 * n, lambda n: 0, "median"),
    "median, to max(2n, 100)": (lambda n: max(2 * n, 100), lambda n: 0, "median"),
    "median, to 3n": (lambda n: 3 * n, lambda n: 0, "median"),
    "median, to 2n, after the call only": (lambda n: 2 * n, lambda n: n, "median"),
    "HL, stop at the call": (lambda n: n, lambda n: 0, "hl"),
    "HL, to n + 50": (lambda n: n + 50, lambda n: 0, "hl"),
    # the shipped rule: n + 50, then on until the interval is within ±1.4% (``adaptive``)
    "HL, n + 50 then to ±1.4% (shipped)": (lambda n: n + 50, lambda n: 0, "adaptive"),
    "HL, to 1.5n": (lambda n: round(1.5 * n), lambda n: 0, "hl"),
    "HL, to 2n": (lambda n: 2 * n, lambda n: 0, "hl"),
}


@dataclass(frozen=True, slots=True)
class Case:
    label: str
    change: float
    counted: bool
    modes: bool = False


CASES = (
    Case("+3%, time only", 0.03, False),
    Case("-4%, time only", -0.04, False),
    Case("+3%, with counts", 0.03, True),
    Case("-4%, with counts", -0.04, True),
    Case("+3%, slow mode, with counts", 0.03, True, modes=True),
)


def runs(rng: np.random.Generator, n: int, factor: float, modes: bool) -> np.ndarray:
    """``n`` single runs' times (ns): log-normal noise around RUN_NS · factor."""
    t = RUN_NS * factor * np.exp(rng.normal(0.0, SIGMA, n))
    if modes:
        t = t * np.where(rng.random(n) < SLOW_SHARE, SLOW_BY, 1.0)
    return t


def phases(base: np.ndarray, again: np.ndarray, head: np.ndarray, n: int) -> dict[str, PhaseRuns]:
    """The first ``n`` triplets as the two phases judging reads."""
    def arm(v: np.ndarray) -> ArmRuns:
        return ArmRuns(samples_ns=tuple(float(x) for x in v[:n]))

    b = arm(base)
    return {"aa": PhaseRuns(arms={"base": b, "base_again": arm(again)}, order="AB" * (n // 2)),
            "ab": PhaseRuns(arms={"base": b, "head": arm(head)}, order="AB" * (n // 2))}


def counts_of(change: float) -> Counts:
    """Exact counts: valgrind's, one counted run of each arm and one of base again."""
    head = round(INSTRUCTIONS * (1 + change))
    return Counts(method="valgrind", why="synthetic", base=(INSTRUCTIONS,),
                  base_again=(INSTRUCTIONS,), head=(head, head))


def called_at(case: Case, base: np.ndarray, again: np.ndarray, head: np.ndarray,
              seed: int) -> int | None:
    """The pairs at which the real judge calls the change the right way (None: it did not)."""
    counts = counts_of(case.change) if case.counted else None
    want = "slower" if case.change > 0 else "faster"
    for k, n in enumerate(sequential.looks(MAX_PAIRS), start=1):
        w = Workload(name="w", parity=0.02, floor_ns=25_000.0, design="triplets", looks=k,
                     phases=phases(base, again, head, n), counts=counts)
        judged = judge([w], Policy(seed=seed)).workloads["w"]
        stop = sequential.stop_reason(judged.ab, judged.aa, pairs=n, max_pairs=MAX_PAIRS,
                                      parity=0.02)
        if stop is not None:
            return n if judged.ab is not None and judged.ab.outcome == want else None
    return None


def outcome_of(change: float, counted_change: float | None, base: np.ndarray,
               again: np.ndarray, head: np.ndarray, seed: int) -> tuple[str, str | None, int]:
    """The verdict where measuring stops (outcome, reason code, pairs): for the nulls."""
    counts = counts_of(counted_change) if counted_change is not None else None
    outcome, code, n = "inconclusive", None, MAX_PAIRS
    for k, n in enumerate(sequential.looks(MAX_PAIRS), start=1):
        w = Workload(name="w", parity=0.02, floor_ns=25_000.0, design="triplets", looks=k,
                     phases=phases(base, again, head, n), counts=counts)
        judged = judge([w], Policy(seed=seed)).workloads["w"]
        assert judged.ab is not None
        outcome, code = judged.ab.outcome, judged.ab.reason_code
        if sequential.stop_reason(judged.ab, judged.aa, pairs=n, max_pairs=MAX_PAIRS,
                                  parity=0.02) is not None:
            break
    return outcome, code, n


# (label, the change in time, the change in instructions (None: not counted))
NULLS = (
    ("identical, time only", 0.0, None),
    ("identical, with counts", 0.0, 0.0),
    ("layout only: time +3%, same instructions", 0.03, 0.0),
)


def nulls(reps: int, seed: int) -> str:
    """Where measuring stops on the nulls, with and without counts: no call may be made."""
    lines = ["| case | level | slower / faster | inconclusive (why) | pairs at the stop (median) |",
             "|---|---|---|---|---|"]
    for c_index, (label, change, counted) in enumerate(NULLS):
        got = []
        for rep in range(reps):
            rng = np.random.default_rng([seed, 100 + c_index, rep])
            base, again = (runs(rng, MAX_PAIRS, 1.0, False) for _ in range(2))
            head = runs(rng, MAX_PAIRS, 1 + change, False)
            got.append(outcome_of(change, counted, base, again, head, seed + rep))
        codes = sorted({str(c) for o, c, _ in got if o == "inconclusive"})
        calls = sum(o in ("slower", "faster") for o, _, _ in got)
        lines.append(f"| {label} | {sum(o == 'level' for o, _, _ in got)}/{reps} | {calls} | "
                     f"{sum(o == 'inconclusive' for o, _, _ in got)} ({', '.join(codes)}) | "
                     f"{statistics.median(n for _, _, n in got):.0f} |")
    return "\n".join(lines)


def adaptive_end(base: np.ndarray, again: np.ndarray, head: np.ndarray, end: int) -> int:
    """Where the shipped rule stops measuring: from ``end`` pairs on, as
    ``sequential.estimate_until`` says on the estimate's interval."""
    while True:
        d = np.log(head[:end]) - 0.5 * (np.log(base[:end]) + np.log(again[:end]))
        centre, lo, hi = intervals.pseudo_median(d, 0.05)
        verdict = Verdict(outcome="slower", estimate=math.exp(centre),
                          estimate_ci=(math.exp(lo), math.exp(hi)))
        more = sequential.estimate_until(verdict, end, MAX_PAIRS)
        if more is None:
            return end
        end = more


def estimate(base: np.ndarray, again: np.ndarray, head: np.ndarray, start: int, end: int,
             how: str) -> float:
    """The ratio from pairs start..end: the median per-triplet log ratio (the judge's
    ``ratio``), or their Hodges-Lehmann centre (the judge's ``estimate``)."""
    d = np.log(head[start:end]) - 0.5 * (np.log(base[start:end]) + np.log(again[start:end]))
    if how in ("hl", "adaptive"):
        return float(np.exp(intervals.pseudo_median(d, 0.05)[0]))
    return float(np.exp(np.median(d)))


def study(reps: int, seed: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for c_index, case in enumerate(CASES):
        errors: dict[str, list[float]] = {r: [] for r in RULES}
        extra: dict[str, list[int]] = {r: [] for r in RULES}
        calls: list[int] = []
        for rep in range(reps):
            rng = np.random.default_rng([seed, c_index, rep])
            base, again = (runs(rng, MAX_PAIRS, 1.0, case.modes) for _ in range(2))
            head = runs(rng, MAX_PAIRS, 1 + case.change, case.modes)
            n = called_at(case, base, again, head, seed + rep)
            if n is None:
                continue
            calls.append(n)
            for name, (end_of, start_of, how) in RULES.items():
                end = min(end_of(n), MAX_PAIRS)
                if how == "adaptive":
                    end = adaptive_end(base, again, head, end)
                got = estimate(base, again, head, start_of(n) if end > n else 0, end, how)
                errors[name].append(abs(got - 1 - case.change) * 100)
                extra[name].append(end - n)
        for name in RULES:
            rows.append({
                "case": case.label, "rule": name, "called": f"{len(calls)}/{reps}",
                "call_pairs": round(statistics.median(calls)) if calls else None,
                "error": statistics.median(errors[name]) if errors[name] else None,
                "p90": float(np.quantile(errors[name], 0.9)) if errors[name] else None,
                "extra": round(statistics.median(extra[name])) if extra[name] else None,
            })
    return rows


def table(rows: list[dict[str, object]]) -> str:
    lines = ["| case | called | pairs at the call (median) | rule | median abs. error (points) "
             "| 90th pct error | extra pairs (median) |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        err = "–" if r["error"] is None else f"{r['error']:.2f}"
        p90 = "–" if r["p90"] is None else f"{r['p90']:.2f}"
        lines.append(f"| {r['case']} | {r['called']} | {r['call_pairs']} | {r['rule']} | {err} "
                     f"| {p90} | {r['extra']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=150)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.monotonic()
    rows = study(args.reps, args.seed)
    print(table(rows))
    print()
    print(nulls(max(1, args.reps // 3), args.seed))
    print(f"\n{args.reps} sequences a case, seed {args.seed}, "
          f"{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
