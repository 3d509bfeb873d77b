"""Real suites settle: counts per benchmark beside time (issue "Real suites settle").

    python -m benchmarks.suites [--reps 10] [--harness go,gbench]
                                 [--scenarios changed,identical,memory] [--out suites]
                                 [--budget-changed 600] [--budget-identical 300]

For each repetition, harness and scenario, a fresh repository from
``benchmarks/suitegen.py`` (25 benchmarks; ``changed``: 10 do 5% more work, 3 do 5% less,
12 are unchanged, one of them layout-only; ``identical``: the head changes a README;
``memory``: four more benchmarks whose head does the same instructions and misses the last
level more, the 25 unchanged), and one live ``engine.compare`` with the default settings
and the scenario's budget (10 minutes for changed and memory, 5 for identical). What each benchmark came out as, what settled it, what its
counts read, the seconds its counted and timed runs took, and the spread of its single
runs (the 10th to 90th percentile of the per-round ratio head over base) are appended to
``results/<out>.json`` after every comparison (atomically), with the load average before
and after; ``--summary`` prints the tables of benchmarks/README.md from that file.
``--neighbours N`` starts N processes beside each comparison that keep a CPU busy in
random bursts (a shared runner's neighbours), for single runs that spread as on one.

The comparisons run repetition by repetition (every harness and scenario of repetition 1,
then of 2, ...), so that a run stopped early leaves each cell with as many repetitions;
one started again with the same ``--out`` skips the comparisons the file already holds
(by harness, scenario and seed), and ``--deadline`` starts no repetition that might not
end in time.
"""

from __future__ import annotations

import argparse
import calendar
import gzip
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from benchbot.config.settings import Overrides
from benchbot.core import files
from benchbot.measure import engine
from benchbot.results.resultsdir import to_json
from benchmarks import suitegen

RESULTS = Path(__file__).resolve().parent / "results"
CALLS = ("slower", "faster")


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def _ratios(bench: Mapping[str, Any]) -> list[float]:
    """Per-round ratio head over base (base's first run of each triplet, or the pair's)."""
    ab = (bench.get("phases") or {}).get("ab")
    if not ab:
        return []
    base, head = ab["arms"]["base"]["samples_ns"], ab["arms"]["head"]["samples_ns"]
    return [h / b for b, h in zip(base, head, strict=False) if b > 0 and h > 0]


def _spread(ratios: Sequence[float]) -> tuple[float, float] | None:
    if len(ratios) < 10:
        return None
    q = statistics.quantiles(ratios, n=10, method="inclusive")
    return q[0], q[-1]


def _overlap(bench: Mapping[str, Any]) -> dict[str, Any] | None:
    """How far head's single runs reach into the reference's (base and base again), the way
    head's median moved: the few-pairs rule calls a change below 51 pairs only where none
    does (docs/verdict.md, "Calls from few pairs"). ``across``: head's runs that reach
    the reference's slowest (head slower) or fastest (head faster); the ranges in ms."""
    phases = bench.get("phases") or {}
    ab, aa = phases.get("ab"), phases.get("aa")
    if not ab:
        return None
    head = [x for x in ab["arms"]["head"]["samples_ns"] if x > 0]
    ref = [x for x in ab["arms"]["base"]["samples_ns"] if x > 0]
    if aa and "base_again" in aa["arms"]:
        ref += [x for x in aa["arms"]["base_again"]["samples_ns"] if x > 0]
    if not head or not ref:
        return None
    slower = statistics.median(head) > statistics.median(ref)
    across = sum(1 for y in head if (y <= max(ref) if slower else y >= min(ref)))
    return {"head_runs": len(head), "ref_runs": len(ref), "across": across,
            "way": "slower" if slower else "faster",
            "ref_ms": [round(min(ref) / 1e6, 2), round(statistics.median(ref) / 1e6, 2),
                       round(max(ref) / 1e6, 2)],
            "head_ms": [round(min(head) / 1e6, 2), round(statistics.median(head) / 1e6, 2),
                        round(max(head) / 1e6, 2)]}


def summarize(doc: Mapping[str, Any], harness: str, scenario: str) -> dict[str, Any]:
    """What a results document says of each benchmark, compactly."""
    rows = []
    for name in suitegen.names(harness, scenario):
        full = suitegen.bench_name(harness, name)
        bench = next((b for b in doc["benchmarks"] if b["name"] == full), None)
        if bench is None:
            rows.append({"name": name, "missing": True})
            continue
        v, c, m = bench["verdict"], bench.get("counts") or {}, bench.get("measuring") or {}
        mem = bench.get("memory") or {}
        rows.append({
            "name": name, "truth": suitegen.truth(harness, name, scenario),
            "outcome": v["outcome"], "reason_code": v.get("reason_code"),
            "reason": v.get("reason"), "settled_by": v.get("settled_by"),
            "ratio": v.get("ratio"), "ci": v.get("ci"), "estimate": v.get("estimate"),
            "pairs": m.get("pairs"), "stopped": m.get("stopped"), "looks": m.get("looks"),
            "timed_s": m.get("timed_s"), "counted_s": c.get("counted_s"),
            "counts": {k: c.get(k) for k in ("method", "unit", "units", "ratio", "aa_ratio",
                                              "noise", "reading", "why")},
            "misses": {k: (c.get("misses") or {}).get(k)
                       for k in ("ratio", "work_ratio", "noise", "reading")},
            "memory": {"outcome": mem.get("outcome"), "ratio": mem.get("ratio"),
                       "reason": mem.get("reason")},
            "spread": _spread(_ratios(bench)),
            "overlap": _overlap(bench),
        })
    return {"rows": rows, "spent": doc.get("spent"), "suites": doc.get("suites"),
            "summary": doc.get("summary")}


# A shared runner's neighbour: one CPU busy in bursts of random length (50-500 ms) with
# idle gaps as long, in a process of its own; started beside a comparison with
# ``--neighbours N`` (N of them), so that single runs spread as on a busy runner.
NEIGHBOUR = """
import os, random, time
rng = random.Random(int.from_bytes(os.urandom(8), "little"))
parent = os.getppid()
while os.getppid() == parent:  # gone with the study, however it ends
    end = time.monotonic() + rng.uniform(0.05, 0.5)
    while time.monotonic() < end:
        pass
    time.sleep(rng.uniform(0.05, 0.5))
"""


def neighbours(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", NEIGHBOUR], stdin=subprocess.DEVNULL)
            for _ in range(count)]


def stop(busy: list[subprocess.Popen[bytes]]) -> None:
    """The neighbours stopped and reaped (the list emptied: a second call does nothing)."""
    while busy:
        proc = busy.pop()
        proc.kill()
        proc.wait()


def one(harness: str, scenario: str, budget: float, seed: int,
        raw: Path | None = None, *, neighbour_count: int = 0,
        only_kind: str | None = None) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="benchbot-suites-"))
    busy: list[subprocess.Popen[bytes]] = []
    try:
        repo = suitegen.make(root, harness, scenario)
        busy = neighbours(neighbour_count)
        before, start = loadavg(), time.monotonic()
        only = None if only_kind is None else tuple(
            suitegen.bench_name(harness, n) for n in suitegen.names(harness, scenario)
            if suitegen.expected(n, scenario) == only_kind)
        results = engine.compare(engine.Request(
            repo=repo.path, base="base", head="HEAD",
            overrides=Overrides(budget=budget, seed=seed, only=only)))
        wall = time.monotonic() - start
        stop(busy)  # before the load average after is read
        doc = to_json(results)
        if raw is not None:
            raw.mkdir(parents=True, exist_ok=True)
            with gzip.open(raw / f"{harness}-{scenario}-{seed}.json.gz", "wt") as fh:
                json.dump(doc, fh)
        return {"harness": harness, "scenario": scenario, "seed": seed, "budget_s": budget,
                "wall_s": round(wall, 1), "load_before": before, "load_after": loadavg(),
                "neighbours": neighbour_count, "only_kind": only_kind,
                **({"py_rounds": suitegen.PY_ROUNDS} if harness == "pybench" else {}),
                **summarize(doc, harness, scenario)}
    finally:
        stop(busy)
        shutil.rmtree(root, ignore_errors=True)


def rejudged(runs: Sequence[Mapping[str, Any]], raw: Path, limit: float) -> list[dict[str, Any]]:
    """The runs with each counted benchmark's outcome judged again at its recorded looks
    under another level limit: the first look at which it settles or stops, else its
    last. A looser limit than the recording's can only settle earlier, at looks that
    were taken; a stricter one may want pairs the recording does not have (then the
    outcome is the last look's)."""
    from benchbot.core.model import Family
    from benchbot.results import resultsdir
    from benchbot.verdict import benchsignals, sequential
    from benchbot.verdict.judge import Policy, Workload, judge

    saved = benchsignals.LEVEL_TIME_LIMIT
    benchsignals.LEVEL_TIME_LIMIT = limit
    out = []
    try:
        for run in runs:
            policy = Policy(alpha=0.05, family=Family(sequential=len(run["rows"]), fixed=0))
            path = raw / f"{run['harness']}-{run['scenario']}-{run['seed']}.json.gz"
            with gzip.open(path, "rt") as fh:
                doc = resultsdir.parse(json.load(fh), where=str(path))
            by_name = {b.name: b for b in doc.benchmarks}
            rows = []
            for row in run["rows"]:
                bench = by_name.get(suitegen.bench_name(run["harness"], row["name"]))
                if bench is None or bench.measuring is None or not bench.measuring.looks:
                    rows.append(row)
                    continue
                looks = [*bench.measuring.looks, bench.measuring.pairs]
                outcome = row["outcome"]
                for k, n in enumerate(looks, start=1):
                    w = Workload(name=bench.name, parity=bench.parity, floor_ns=bench.floor_ns,
                                 phases={name: _cut_phase(p, n) for name, p in bench.phases.items()},
                                 design="triplets", looks=min(k, len(looks) - 1),
                                 counts=bench.counts, metric="reported", judge_memory=False)
                    judged = judge([w], policy).workloads[bench.name]
                    assert judged.ab is not None
                    outcome = judged.ab.outcome
                    if sequential.stop_reason(judged.ab, judged.aa, pairs=n, max_pairs=1000,
                                              parity=bench.parity) is not None:
                        break
                rows.append({**row, "outcome": outcome})
            out.append({**run, "rows": rows})
    finally:
        benchsignals.LEVEL_TIME_LIMIT = saved
    return out


def resummarized(runs: Sequence[Mapping[str, Any]], raw: Path) -> list[dict[str, Any]]:
    """The runs with their rows read again from the kept results files (a run without
    one kept as it was)."""
    out = []
    for run in runs:
        path = raw / f"{run['harness']}-{run['scenario']}-{run['seed']}.json.gz"
        if not path.exists():
            out.append(dict(run))
            continue
        with gzip.open(path, "rt") as fh:
            doc = json.load(fh)
        out.append({**run, **summarize(doc, run["harness"], run["scenario"])})
    return out


def _cut_phase(phase: Any, n: int) -> Any:
    """A recorded phase's first ``n`` pairs."""
    from dataclasses import replace

    from benchbot.core.model import ArmRuns

    return replace(phase, order=phase.order[: 2 * n], arms={
        arm: ArmRuns(samples_ns=runs.samples_ns[:n]) for arm, runs in phase.arms.items()})


def save(path: Path, runs: list[dict[str, Any]]) -> None:
    files.write_text(path, json.dumps({"runs": runs}, indent=1) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--harness", default="go,gbench")
    parser.add_argument("--scenarios", default="changed,identical")
    parser.add_argument("--budget-changed", type=float, default=600.0)
    parser.add_argument("--budget-identical", type=float, default=300.0)
    parser.add_argument("--out", default="suites")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--deadline", type=_deadline, default=None, metavar="HH:MM",
                        help="start a repetition only if all its comparisons, each at its "
                             "budget, end by then (UTC), so that the table stays balanced")
    parser.add_argument("--neighbours", type=int, default=0, metavar="N",
                        help="N processes busy in random bursts beside each comparison (a "
                             "shared runner's neighbours; recorded with each run)")
    parser.add_argument("--only-kind", default=None, metavar="KIND",
                        help="compare only the benchmarks suitegen.expected calls KIND (e.g. "
                             "memory: the memory-bound ones, whose counting then fits the budget)")
    parser.add_argument("--py-rounds", type=int, default=None, metavar="N",
                        help="pybench: N rounds of each benchmark a harness run (default "
                             f"{suitegen.PY_ROUNDS}; recorded with each run)")
    parser.add_argument("--summary", action="store_true", help="print the tables and stop")
    parser.add_argument("--resummarize", action="store_true",
                        help="with --raw: read each run's rows again from its kept results "
                             "file (what this script reads of them now), save, and print")
    parser.add_argument("--raw", type=Path, default=None,
                        help="keep each comparison's results file here, gzipped")
    parser.add_argument("--rejudge", type=float, default=None, metavar="LIMIT",
                        help="with --raw: judge the kept recordings again, look by look, with "
                             "benchsignals.LEVEL_TIME_LIMIT = LIMIT (inf: none), and print the "
                             "tables")
    args = parser.parse_args(argv)
    path = RESULTS / f"{args.out}.json"
    runs: list[dict[str, Any]] = json.loads(path.read_text())["runs"] if path.exists() else []
    if args.summary:
        print(report(runs))
        return 0
    if args.resummarize:
        runs = resummarized(runs, args.raw or RESULTS / f"{args.out}-raw")
        save(path, runs)
        print(report(runs))
        return 0
    if args.rejudge is not None:
        print(report(rejudged(runs, args.raw or RESULTS / f"{args.out}-raw", args.rejudge)))
        return 0
    if args.py_rounds is not None:
        suitegen.set_py_rounds(args.py_rounds)
    cells = [(h, s) for h in args.harness.split(",") for s in args.scenarios.split(",")]
    done = {(r["harness"], r["scenario"], r["seed"]) for r in runs}
    for rep in range(args.reps):
        seed = args.first_seed + rep
        todo = [(h, s) for h, s in cells if (h, s, seed) not in done]
        need = sum(_budget(args, s) + SLACK_S for _, s in todo)
        if todo and args.deadline is not None and time.time() + need > args.deadline:
            print(f"{time.strftime('%H:%M:%S')} rep {rep + 1} not started: its {len(todo)} "
                  f"comparisons may take {need:.0f} s, past the deadline", flush=True)
            break
        for harness, scenario in todo:
            print(f"{time.strftime('%H:%M:%S')} rep {rep + 1}/{args.reps} {harness} "
                  f"{scenario} (load {loadavg()})", flush=True)
            got = one(harness, scenario, _budget(args, scenario), seed, args.raw,
                      neighbour_count=args.neighbours, only_kind=args.only_kind)
            runs.append(got)
            save(path, runs)
            print("   ", line(got), flush=True)
    print(report(runs))
    return 0


SLACK_S = 15.0  # a comparison's wall beyond its budget (at most 2 s in the first repetitions)


def _budget(args: argparse.Namespace, scenario: str) -> float:
    """A comparison's budget: the changed one for every scenario that changes something."""
    return float(args.budget_identical if scenario == "identical" else args.budget_changed)


def _deadline(text: str) -> float:
    """``HH:MM`` (UTC) as seconds since the epoch: the next such time, today's if it is still
    to come, else tomorrow's (a run started before midnight that should end after it)."""
    hours, minutes = (int(x) for x in text.split(":"))
    now = time.time()
    day = time.gmtime(now)
    at = calendar.timegm((day.tm_year, day.tm_mon, day.tm_mday, hours, minutes, 0, 0, 0, 0))
    return at if at > now else at + 86400


def _wrong(row: Mapping[str, Any]) -> bool:
    """A false verdict: a call on an unchanged benchmark, a call the wrong way, or level on
    a changed one (a memory-bound one included: its time moved, its instructions did not)."""
    truth: str = row["truth"]
    outcome: str = row["outcome"]
    if truth in ("same", "layout"):
        return outcome in CALLS
    if truth == "memory":
        return outcome in ("level", "faster")
    right = "slower" if truth == "more" else "faster"
    return (outcome in CALLS and outcome != right) or outcome == "level"


def _counts(run: Mapping[str, Any]) -> dict[str, int]:
    rows = [r for r in run["rows"] if not r.get("missing")]
    changed = [r for r in rows if r["truth"] in ("more", "less")]
    same = [r for r in rows if r["truth"] in ("same", "layout")]
    called = sum(1 for r in changed if r["outcome"] == ("slower" if r["truth"] == "more" else "faster"))
    memory = [r for r in rows if r["truth"] == "memory"]
    return {"changed": len(changed), "called": called, "unchanged": len(same),
            "level": sum(1 for r in same if r["outcome"] == "level"),
            "false": sum(1 for r in rows if _wrong(r)),
            "memory": len(memory),  # memory-bound: success is never level (nor faster)
            "memory_not_level": sum(1 for r in memory if r["outcome"] not in ("level", "faster")),
            "memory_slower": sum(1 for r in memory if r["outcome"] == "slower")}


def line(run: Mapping[str, Any]) -> str:
    c = _counts(run)
    spent = run.get("spent") or {}
    memory = (f"memory-bound not level {c['memory_not_level']}/{c['memory']} (slower "
              f"{c['memory_slower']}), " if c["memory"] else "")
    return (f"{run['harness']} {run['scenario']}: changed called {c['called']}/{c['changed']}, "
            f"{memory}unchanged level {c['level']}/{c['unchanged']}, false {c['false']}; wall "
            f"{run['wall_s']} s, counting {spent.get('counting_s')} s; load "
            f"{run['load_before'][0]}->{run['load_after'][0]}")


def report(runs: Sequence[Mapping[str, Any]]) -> str:
    out = []
    for harness in dict.fromkeys(r["harness"] for r in runs):
        for scenario in suitegen.SCENARIOS:
            mine = [r for r in runs if r["harness"] == harness and r["scenario"] == scenario]
            if not mine:
                continue
            totals = [_counts(r) for r in mine]
            walls = [r["wall_s"] for r in mine]
            counting = [(r.get("spent") or {}).get("counting_s") or 0.0 for r in mine]
            loads = [x for r in mine for x in (r["load_before"][0], r["load_after"][0])]
            spreads = [s for r in mine for row in r["rows"] if (s := row.get("spread"))]
            out.append(f"## {harness}, {scenario} ({len(mine)} repetitions)")
            if scenario != "memory":
                out.append(f"- changed called the right way: {sum(t['called'] for t in totals)} of "
                           f"{sum(t['changed'] for t in totals)}")
            else:
                out.append(f"- memory-bound (same instructions, more misses) never level: "
                           f"{sum(t['memory_not_level'] for t in totals)} of "
                           f"{sum(t['memory'] for t in totals)} (slower "
                           f"{sum(t['memory_slower'] for t in totals)})")
            out.append(f"- unchanged level: {sum(t['level'] for t in totals)} of "
                       f"{sum(t['unchanged'] for t in totals)}")
            out.append(f"- false verdicts: {sum(t['false'] for t in totals)}")
            if scenario == "identical":
                allv = sum(1 for t in totals if t["level"] == t["unchanged"])
                out.append(f"- every benchmark level: {allv} of {len(mine)} repetitions")
            out.append(f"- wall: median {statistics.median(walls):.0f} s (max {max(walls):.0f}); "
                       f"counting: median {statistics.median(counting):.0f} s "
                       f"({100 * statistics.median(c / w for c, w in zip(counting, walls, strict=True)):.0f}% of the wall)")
            if spreads:
                lows, highs = [s[0] for s in spreads], [s[1] for s in spreads]
                out.append(f"- single runs, ratio head/base 10th-90th percentile: median "
                           f"{statistics.median(lows):.2f} to {statistics.median(highs):.2f}")
            out.append(f"- load average: {min(loads):.1f} to {max(loads):.1f}")
            kinds = sorted({r["only_kind"] for r in mine if r.get("only_kind")})
            if kinds:
                out.append(f"- only the benchmarks of kind {', '.join(kinds)} compared (--only)")
            busy = sorted({r.get("neighbours", 0) for r in mine})
            if busy != [0]:
                out.append(f"- busy neighbours beside each comparison: {', '.join(map(str, busy))}")
            aas = sorted(abs(row["counts"]["aa_ratio"] - 1) for r in mine for row in r["rows"]
                         if row.get("counts", {}).get("aa_ratio"))
            if aas:
                out.append(f"- counts' A/A (|base again / base - 1| per benchmark): median "
                           f"{100 * statistics.median(aas):.3f}%, 95th percentile "
                           f"{100 * aas[int(0.95 * (len(aas) - 1))]:.3f}%, largest {100 * aas[-1]:.3f}% "
                           f"({len(aas)} benchmarks)")
            per_bench = [row["counted_s"] for r in mine for row in r["rows"] if row.get("counted_s")]
            if per_bench:
                out.append(f"- counted runs per benchmark: median {statistics.median(per_bench):.1f} s "
                           "of wall (five runs one by one, four in a steady suite after its first five, "
                           "two more where the counts read a move; or its share of a google-benchmark "
                           "suite's three split processes; base's, head's and base again's workers at "
                           "once)")
            out.append(_per_benchmark(mine))
    return "\n".join(out)


def _median_move(ratios: Sequence[float | None], digits: int = 2) -> str:
    """The median of the ratios given, as a move in percent ("–" where none was)."""
    got = [r for r in ratios if r]
    return f"{(statistics.median(got) - 1) * 100:+.{digits}f}%" if got else "–"


def _per_benchmark(runs: Sequence[Mapping[str, Any]]) -> str:
    lines = ["", "| benchmark | truth | outcomes | counts ratio (median) | work with the misses "
             "(median) | time estimate (median) | pairs (median) |", "|---|---|---|--:|--:|--:|--:|"]
    for name in dict.fromkeys(n for r in runs for n in suitegen.names(r["harness"], r["scenario"])):
        rows = [row for r in runs for row in r["rows"] if row["name"] == name and not row.get("missing")]
        if not rows:
            continue
        tally: dict[str, int] = {}
        for row in rows:
            tally[row["outcome"]] = tally.get(row["outcome"], 0) + 1
        pairs = [row["pairs"] for row in rows if row.get("pairs") is not None]
        ratio = _median_move([row["counts"].get("ratio") for row in rows])
        work = _median_move([(row.get("misses") or {}).get("work_ratio") for row in rows])
        time_ = _median_move([row.get("estimate") or row.get("ratio") for row in rows], 1)
        lines.append(f"| {name} | {rows[0]['truth']} | "
                     + ", ".join(f"{k} {v}" for k, v in sorted(tally.items()))
                     + f" | {ratio} | {work} | {time_} | {statistics.median(pairs) if pairs else '–'} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
