"""Memory beside the instructions (issue 37, item 3): what counting the last-level cache
misses changes in a suite's verdicts, and what the cache simulation costs.

    python -m benchmarks.memorybound sim [--sequences 50] [--seed 1] [--out memorybound-sim]
    python -m benchmarks.memorybound replay RAW... [--out memorybound-replay]
    python -m benchmarks.memorybound cost [--reps 3] [--out memorybound-cost]

``sim``: synthetic benchmarks of a suite judged by the real judge at the real looks, as
``suitestats.py`` judges them (m = 25, at most 140 pairs; single runs log-normal with spread
0.12 or 0.20, a fifth in a slow mode), their counts per iteration now with last-level misses
beside the instructions: 50,000 instructions and 50 misses an iteration in base (a tenth of
the work at 100 instructions a miss, two thirds of it at 2,000), the instructions with a
noise of 0.05% per counted pair, the misses with 1% or 3%, the suite's pooled noises known
within ±30%. Cases: identical; +5% and -5% of work (the misses move with it); +5% of
instructions with the misses unmoved; memory-bound changes, the same instructions and time
+8% or +30%, whose misses moved by what that time costs at a true price per miss of 25,
100, 400, 1,000 or 3,600 instructions (a prefetched stream, the low weight, a miss nothing
hides on a bare machine, a dependent chain here: benchmarks/missprice.py, the most the live
suites read); and 5% fewer instructions with more misses, time +3% (a change that saves work
and thrashes the cache). Designs: the shipped rule (two weights, signals.MISS_WEIGHT and
MISS_WEIGHT_LOW), the rule before (one weight of 100) and the instructions alone. Writes
``results/<out>.json`` and ``.md``.

``replay``: the kept results files of live comparisons (``benchmarks/suites.py --raw``),
each benchmark's counted instructions and misses read again with two weights and with one:
whether the work with the misses is the same (a level on the counts can follow), by what
the head did to the benchmark (suitegen.expected).

``cost``: the counted runs' wall time with the cache simulation over without, interleaved
(with, without, without, with, ...): the bundled C kernels' counted runs (kernels/, their
benchbot.yml argv), made as counting.valgrind_argv makes them and with the options of
before (``--cache-sim=no``, no cache geometry), ``--reps`` of each; and the suite tests'
generated Go and google-benchmark projects (tests/suites/harnesses.py) compared
through the engine with ``counts: valgrind`` and the sandbox off (so that the options of
before can be put in place in this process), once each way: every counted run's seconds,
and the A/A of the work with the misses (base again against base per benchmark) that the
simulation's misses noise stands for. Records the load average before and after.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import numpy as np

from benchbot.core import files
from benchbot.core.model import Counts, Misses, Verdict
from benchbot.sandbox import counting
from benchbot.verdict import signals
from benchmarks.suitestats import FAMILY, PARITY, looked, runs

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parent.parent
I0, M0 = 50_000.0, 50.0  # instructions and last-level misses an iteration, base
# True prices of a miss, in instructions: a prefetched stream, the low weight, a miss nothing
# hides on a bare machine, a dependent chain here (benchmarks/missprice.py), and the most the
# live suites' time moves read under load (benchmarks/README.md, section 16).
PRICES = (25.0, 100.0, 400.0, 1000.0, 3600.0)


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    work: float  # the instructions' true ratio
    misses: float  # the misses' true ratio
    time: float  # time's true ratio
    truth: str  # slower / faster / level; "not level": anything but level or faster


def _memory(name: str, time_ratio: float, price: float) -> Case:
    """The same instructions, time ``time_ratio``: the misses moved by what that costs at
    ``price`` instructions a miss."""
    extra = (time_ratio - 1) * (I0 + price * M0) / price
    return Case(name, 1.0, (M0 + extra) / M0, time_ratio, "not level")


CASES = (
    Case("identical", 1.0, 1.0, 1.0, "level"),
    Case("+5% of work", 1.05, 1.05, 1.05, "slower"),
    Case("-5% of work", 0.95, 0.95, 0.95, "faster"),
    Case("+5% of instructions, misses unmoved", 1.05, 1.0, 1.045, "slower"),
    *(_memory(f"memory-bound: time +{round((t - 1) * 100)}%, a miss {p:g}", t, p)
      for t in (1.08, 1.30) for p in PRICES),
    # 5% fewer instructions, misses that cost 8% more at the weight: time +3%
    Case("-5% of instructions, more misses: time +3%", 0.95,
         (1.03 * (I0 + 100 * M0) - 0.95 * I0) / (100 * M0), 1.03, "not faster"),
)
DESIGNS = ("two weights", "one weight (100)", "instructions alone")


def counts(rng: np.random.Generator, case: Case, noise: float, miss_noise: float,
           design: str) -> Counts:
    def one(ratio: float, base: float, spread: float) -> float:
        return base * ratio * (1 + rng.normal(0.0, spread))
    ib, ia, ih = one(1.0, I0, noise), one(1.0, I0, noise), one(case.work, I0, noise)
    mb, ma, mh = (one(1.0, M0, miss_noise), one(1.0, M0, miss_noise),
                  one(case.misses, M0, miss_noise))
    def work_noise(weight: float) -> float:  # the suite's pooled noise, known within ±30%
        return math.hypot(noise * I0, miss_noise * M0 * weight) / (
            I0 + weight * M0) * rng.uniform(0.7, 1.3)
    misses: Misses | None = None
    if design == DESIGNS[0]:  # as shipped: held at MISS_WEIGHT, let through at the low one
        made = signals.new_misses("simulated", base=(mb,), base_again=(ma,), head=(mh,))
        assert made.low is not None
        misses = replace(made, pooled_noise=work_noise(made.weight), low=replace(
            made.low, pooled_noise=work_noise(made.low.weight)))
    elif design == DESIGNS[1]:  # the rule before: one weight of 100 (a file from before)
        misses = Misses(how="simulated", weight=100.0, base=(mb,), base_again=(ma,),
                        head=(mh,), pooled_noise=work_noise(100.0))
    return Counts(method="valgrind", why="simulated", unit="iteration", exact=True, units=100,
                  base=(ib,), base_again=(ia,), head=(ih,),
                  pooled_noise=noise * rng.uniform(0.7, 1.3), misses=misses)


def sequence(rng: np.random.Generator, case: Case, spread: float, noise: float,
             miss_noise: float, max_pairs: int, design: str) -> tuple[Verdict, int]:
    """One benchmark measured look by look until it stops: its verdict and pairs."""
    base, again = runs(rng, max_pairs, spread, 1.0), runs(rng, max_pairs, spread, 1.0)
    head = runs(rng, max_pairs, spread, case.time)
    counted = counts(rng, case, noise, miss_noise, design)
    return looked(base, again, head, counted, max_pairs)


def right(case: Case, outcome: str) -> bool:
    if case.truth == "not level":
        return outcome not in ("level", "faster")
    if case.truth == "not faster":
        return outcome not in ("level", "faster")
    return outcome == case.truth


def wrong(case: Case, outcome: str) -> bool:
    """A false verdict: a call against the truth, level where the work or the time moved
    (every case but the identical one)."""
    if case.truth in ("not level", "not faster"):
        return outcome in ("level", "faster")
    if outcome in ("slower", "faster"):
        return outcome != case.truth
    return outcome == "level" and case.truth != "level"


def simulate(args: argparse.Namespace) -> int:
    started = time.monotonic()
    table: list[dict[str, Any]] = []
    for spread in (0.12, 0.20):
        for miss_noise in (0.01, 0.03):
            for case in CASES:
                for design in DESIGNS:
                    rng = np.random.default_rng(args.seed)
                    got = [sequence(rng, case, spread, 0.0005, miss_noise, args.max_pairs,
                                    design) for _ in range(args.sequences)]
                    table.append(_row(case, design, spread, miss_noise, got))
                    print(_line(table[-1]), flush=True)
                    _save(args, table, started)
    print(report(table, args))
    return 0


def _row(case: Case, design: str, spread: float, miss_noise: float,
         got: Sequence[tuple[Verdict, int]]) -> dict[str, Any]:
    outcomes = [v.outcome for v, _ in got]
    settled = [n for v, n in got if v.outcome in ("slower", "faster", "level")]
    return {"case": case.name, "design": design, "spread": spread, "miss_noise": miss_noise,
            "n": len(got), "right": sum(right(case, o) for o in outcomes),
            "wrong": sum(wrong(case, o) for o in outcomes),
            "slower": outcomes.count("slower"), "faster": outcomes.count("faster"),
            "level": outcomes.count("level"),
            "codes": dict(sorted({c: sum(v.reason_code == c for v, _ in got)
                                  for c in {v.reason_code for v, _ in got if v.reason_code}}.items())),
            "pairs_settled": statistics.median(settled) if settled else None}


def _line(row: Mapping[str, Any]) -> str:
    return (f"s={row['spread']} m={row['miss_noise']} {row['case']:46} {row['design']:20} "
            f"right {row['right']}/{row['n']} wrong {row['wrong']} slower {row['slower']} "
            f"faster {row['faster']} level {row['level']} pairs {row['pairs_settled']} "
            f"{row['codes']}")


def _save(args: argparse.Namespace, table: Sequence[Mapping[str, Any]], started: float) -> None:
    files.write_text(RESULTS / f"{args.out}.json", json.dumps(
        {"sequences": args.sequences, "seed": args.seed, "max_pairs": args.max_pairs,
         "family": FAMILY, "load": _load(), "seconds": round(time.monotonic() - started),
         "rows": table}, indent=1) + "\n")
    files.write_text(RESULTS / f"{args.out}.md", report(table, args) + "\n")


def report(table: Sequence[Mapping[str, Any]], args: argparse.Namespace) -> str:
    out = [f"Synthetic suites' benchmarks with last-level misses, {args.sequences} sequences "
           f"a cell, seed {args.seed}, at most {args.max_pairs} pairs, family {FAMILY}, parity "
           f"{PARITY:g}. A cell: right / wrong (wrong: a call against the truth, level where "
           "the work or time moved; for the memory-bound rows and the last, level or faster), "
           "then slower S, faster F, level L, and the median pairs at a settled verdict."]
    for spread in dict.fromkeys(r["spread"] for r in table):
        for miss_noise in dict.fromkeys(r["miss_noise"] for r in table):
            rows = [r for r in table if r["spread"] == spread and r["miss_noise"] == miss_noise]
            if not rows:
                continue
            out += ["", f"### single-run spread {spread}, misses noise {miss_noise * 100:g}% a "
                    "counted pair", "", "| case | " + " | ".join(DESIGNS) + " |",
                    "|---|" + "---|" * len(DESIGNS)]
            for case in dict.fromkeys(r["case"] for r in rows):
                cells = []
                for d in DESIGNS:
                    r = next((x for x in rows if x["case"] == case and x["design"] == d), None)
                    cells.append("…" if r is None else
                                 f"{r['right']}/{r['wrong']}, S{r['slower']} F{r['faster']} "
                                 f"L{r['level']}, {r['pairs_settled'] or '–'}")
                out.append(f"| {case} | " + " | ".join(cells) + " |")
    return "\n".join(out)


# --- the live suites' counts read again ---------------------------------------------------------

def replay(args: argparse.Namespace) -> int:
    """Each kept live comparison's counts (``--raw`` files of benchmarks/suites.py) read
    again as the shipped code reads them (two weights) and as before (one weight, 100): per
    benchmark whether the work with the misses is the same (a level on the counts can
    follow) or held back, by what the head did to it (suitegen.expected)."""
    from benchbot.results import resultsdir
    from benchbot.suites import suitecount
    from benchmarks import suitegen

    rows: list[dict[str, Any]] = []
    for path in sorted(p for d in args.raw for p in Path(d).glob("*.json.gz")):
        harness, scenario = path.name.split("-")[:2]
        with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
            tmp.write(__import__("gzip").decompress(path.read_bytes()))
            tmp.flush()
            doc = resultsdir.load(Path(tmp.name))
        for design in DESIGNS[:2]:
            made: dict[str, Counts] = {}
            for b in doc.benchmarks:
                c = b.counts
                if c is None or c.method is None or c.misses is None or not c.misses.base:
                    continue
                m = c.misses
                again = (signals.new_misses(m.how, base=m.base, base_again=m.base_again,
                                            head=m.head) if design == DESIGNS[0]
                         else Misses(how=m.how, weight=100.0, base=m.base,
                                     base_again=m.base_again, head=m.head))
                made[b.name] = replace(c, misses=again)
            suitecount._pool_work_noise(made, list(made))
            for name, c in made.items():
                read = signals.read_counts(c, {}, parity=PARITY)
                short = name.split("/", 1)[1].removeprefix("BM_").removeprefix("Benchmark")
                rows.append({"file": f"{path.parent.name}/{path.name}", "harness": harness, "scenario": scenario,
                             "design": design, "name": name,
                             "expected": suitegen.expected(short, scenario),
                             "instructions": read.reading,
                             "same_work": read.reading in ("same", "small")
                             and signals.memory_same(read, PARITY),
                             "misses_ratio": read.misses.ratio if read.misses else None,
                             "work_ratio": read.misses.work_ratio if read.misses else None,
                             "low_work_ratio": read.misses.low.work_ratio
                             if read.misses and read.misses.low else None})
    files.write_text(RESULTS / f"{args.out}.json", json.dumps(rows, indent=1) + "\n")
    print(replay_table(rows))
    return 0


def replay_table(rows: Sequence[Mapping[str, Any]]) -> str:
    lines = ["| kept comparison | head's change | benchmarks | the same work: one weight (100) | "
             "two weights (2,000 / 100) |", "|---|---|--:|--:|--:|"]
    keys = dict.fromkeys((r["file"], r["expected"]) for r in rows)
    for file, expected in keys:
        mine = [r for r in rows if r["file"] == file and r["expected"] == expected]
        one = [r for r in mine if r["design"] == DESIGNS[1]]
        two = [r for r in mine if r["design"] == DESIGNS[0]]
        lines.append(f"| {file} | {expected} | {len(one)} | {sum(r['same_work'] for r in one)} | "
                     f"{sum(r['same_work'] for r in two)} |")
    return "\n".join(lines)


# --- what the cache simulation costs ------------------------------------------------------------

SHIPPED_ARGV = counting.valgrind_argv
KERNELS = (("sort", ["sort", "500000"]), ("sum", ["sum", "10"]),
           ("edit_distance", ["edit_distance", "3500"]), ("copy", ["copy", "16", "8"]),
           ("bfs", ["bfs", "125000"]))


def before_argv(valgrind: str, argv: Sequence[str], scratch: Path) -> list[str]:
    """counting.valgrind_argv as it was before the misses: no cache simulation."""
    made = SHIPPED_ARGV(valgrind, argv, scratch)
    kept = [a for a in made if not a.startswith(("--I1=", "--D1=", "--LL=", "--cache-sim="))]
    return [*kept[:2], "--cache-sim=no", *kept[2:]]


@contextmanager
def options(with_sim: bool) -> Iterator[None]:
    saved = counting.valgrind_argv
    if not with_sim:
        counting.valgrind_argv = before_argv
    try:
        yield
    finally:
        counting.valgrind_argv = saved


def kernel_costs(reps: int) -> list[dict[str, Any]]:
    valgrind = shutil.which("valgrind")
    assert valgrind is not None, "valgrind is not installed"
    subprocess.run(["make", "-s", "-C", str(ROOT / "kernels")], check=True)
    rows = []
    for name, argv in KERNELS:
        program = [str(ROOT / "kernels" / "build" / argv[0]), *argv[1:]]
        seconds: dict[bool, list[float]] = {True: [], False: []}
        counted: dict[bool, tuple[int, int | None] | None] = {}
        for i in range(reps):
            for with_sim in ((True, False) if i % 2 == 0 else (False, True)):
                with tempfile.TemporaryDirectory(prefix="benchbot-memcost-") as scratch:
                    with options(with_sim):
                        made = counting.valgrind_argv(valgrind, program, Path(scratch))
                    start = time.monotonic()
                    subprocess.run(made, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   check=True)
                    seconds[with_sim].append(time.monotonic() - start)
                    got = counting.read_valgrind(Path(scratch))
                    counted[with_sim] = None if got is None else (got.instructions, got.ll_misses)
        simulated, plain = counted.get(True), counted.get(False)
        rows.append({"kernel": name, "argv": argv, "with_s": seconds[True],
                     "without_s": seconds[False],
                     "ratio": statistics.median(seconds[True]) / statistics.median(seconds[False]),
                     "instructions": simulated[0] if simulated else None,
                     "instructions_without": plain[0] if plain else None,
                     "ll_misses": simulated[1] if simulated else None})
        print(f"{name}: with {statistics.median(seconds[True]):.2f} s, without "
              f"{statistics.median(seconds[False]):.2f} s, x{rows[-1]['ratio']:.2f}", flush=True)
    return rows


def suite_costs(fmt: str) -> list[dict[str, Any]]:
    """The suite tests' generated project of ``fmt`` compared through the engine with
    ``counts: valgrind``, once with the cache simulation and once without: every counted
    run's seconds, and each benchmark's counts."""
    from benchbot.config.settings import Overrides
    from benchbot.measure import engine
    from benchbot.results.resultsdir import to_json
    from benchmarks.countcost import _make_repo

    harnesses = importlib.import_module("tests.suites.harnesses")
    why = harnesses.missing(fmt)
    if why:
        return [{"harness": fmt, "skipped": why}]
    out = []
    for with_sim in (True, False):
        root = Path(tempfile.mkdtemp(prefix="benchbot-memcost-"))
        try:
            project = harnesses.GENERATORS[fmt](_make_repo(root),
                                                top={"counts": "valgrind", "sandbox": "off"})
            before, start = _load(), time.monotonic()
            with options(with_sim):
                doc = to_json(engine.compare(engine.Request(
                    repo=project.repo, base="base", head="HEAD", overrides=Overrides(seed=29))))
            benches = []
            for bench in doc["benchmarks"]:
                c = bench.get("counts") or {}
                m = c.get("misses") or {}
                benches.append({
                    "name": bench["name"], "ratio": c.get("ratio"), "reading": c.get("reading"),
                    "why": c.get("why"), "aa_ratio": c.get("aa_ratio"),
                    "misses_ratio": m.get("ratio"), "work_ratio": m.get("work_ratio"),
                    "work_noise": m.get("noise"), "misses_reading": m.get("reading"),
                    "misses_base": m.get("base"), "misses_base_again": m.get("base_again"),
                    "run_s": [r["seconds"] for r in c.get("runs") or ()],
                    "outcome": bench["verdict"]["outcome"]})
            out.append({"harness": fmt, "with_sim": with_sim,
                        "wall_s": round(time.monotonic() - start, 1),
                        "load_before": before, "load_after": _load(), "benchmarks": benches})
            print(f"{fmt} {'with' if with_sim else 'without'}: "
                  f"{[round(statistics.median(b['run_s']), 2) for b in benches if b['run_s']]}",
                  flush=True)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return out


def cost(args: argparse.Namespace) -> int:
    started = time.monotonic()
    result: dict[str, Any] = {"load_before": _load(), "reps": args.reps}
    result["kernels"] = kernel_costs(args.reps)
    result["suites"] = [row for fmt in args.harness.split(",") for row in suite_costs(fmt)]
    result["load_after"], result["seconds"] = _load(), round(time.monotonic() - started)
    files.write_text(RESULTS / f"{args.out}.json", json.dumps(result, indent=1) + "\n")
    print(cost_table(result))
    return 0


def cost_table(result: Mapping[str, Any]) -> str:
    lines = ["| counted runs of | with the simulation, s | without, s | with / without |",
             "|---|--:|--:|--:|"]
    for k in result["kernels"]:
        lines.append(f"| kernel `{k['kernel']}` ({len(k['with_s'])} each) | "
                     f"{statistics.median(k['with_s']):.2f} | "
                     f"{statistics.median(k['without_s']):.2f} | {k['ratio']:.2f}× |")
    for fmt in dict.fromkeys(r["harness"] for r in result["suites"]):
        rows = {r.get("with_sim"): r for r in result["suites"] if r["harness"] == fmt}
        if True not in rows or False not in rows:
            continue
        each = {w: [s for b in rows[w]["benchmarks"] for s in b["run_s"]] for w in (True, False)}
        if each[True] and each[False]:
            lines.append(f"| {fmt} suite, every counted run ({len(each[True])}, "
                         f"{len(each[False])}) | {sum(each[True]):.1f} in all | "
                         f"{sum(each[False]):.1f} in all | "
                         f"{sum(each[True]) / sum(each[False]):.2f}× |")
    return "\n".join(lines)


def _load() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="part", required=True)
    sim = sub.add_parser("sim")
    sim.add_argument("--sequences", type=int, default=50)
    sim.add_argument("--seed", type=int, default=1)
    sim.add_argument("--max-pairs", type=int, default=140)
    sim.add_argument("--out", default="memorybound-sim")
    c = sub.add_parser("cost")
    c.add_argument("--reps", type=int, default=3)
    c.add_argument("--harness", default="go,google-benchmark")
    c.add_argument("--out", default="memorybound-cost")
    r = sub.add_parser("replay")
    r.add_argument("raw", nargs="+", help="folders of kept results files (suites.py --raw)")
    r.add_argument("--out", default="memorybound-replay")
    args = parser.parse_args(argv)
    return (simulate(args) if args.part == "sim" else replay(args) if args.part == "replay"
            else cost(args))


if __name__ == "__main__":
    sys.exit(main())
