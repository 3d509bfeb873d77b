"""What counting a suite's benchmarks costs, per harness (docs/suites.md, "What counting
costs").

    python -m benchmarks.countcost [--harness go,google-benchmark,pytest-benchmark,pyperf]
                                   [--out countcost]
    python -m benchmarks.countcost --suites go,gbench [--reps 1] [--src PATH]
                                   [--out countcost-suites]

For each harness, the generated project of the suite tests (tests/suites/harnesses.py:
three benchmarks, one of which does 1.5 times the work at the head), compared once through
the engine with ``counts: valgrind`` (the Python harnesses are counted only when asked) and
10 fixed pairs. Recorded per harness: the counted runs and their seconds (base's and
head's made at once, in their own workers), the seconds of one benchmark's six counted
runs, the whole comparison's wall, what each benchmark's counts read (so that a harness
whose counted runs fail shows it), and the load average before and after. The results go
to ``results/<out>.json`` after each harness (atomically) and a table to stdout.

``--suites``: counting alone, on the generated suites of ``benchmarks/suitegen.py`` (25
benchmarks, the ``changed`` scenario), through the engine with the default settings: the
comparison is stopped once the suite is counted (no timed round). Recorded per benchmark:
its counted runs by kind (the six of the plan's small and large runs, the confirmation
runs, the sampled processes) with their seconds and what its counts read against what the
head did to it; per suite, the counting's wall and the load. ``--src`` counts with another
checkout's ``src`` (the code before a change, in the same window of load).
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
if "--src" in sys.argv[:-1]:  # another checkout's benchbot, imported before this one's
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--src") + 1]).resolve()))

from benchbot.config.settings import Overrides
from benchbot.core import files
from benchbot.measure import engine
from benchbot.results.resultsdir import to_json
from benchbot.suites import fixedwork, suitecount
from benchbot.verdict import signals
from benchmarks import suitegen
from benchmarks.suites import loadavg

# The suite tests' generated projects; imported by name, so that mypy (run on benchmarks/)
# does not follow them into the test tree's own fixtures.
harnesses = importlib.import_module("tests.suites.harnesses")
conftest = importlib.import_module("tests.conftest")

RESULTS = Path(__file__).resolve().parent / "results"
HARNESSES = ("go", "google-benchmark", "pytest-benchmark", "pyperf")


def _make_repo(root: Path) -> Any:
    def make(base: Mapping[str, str], head: Mapping[str, str | None] | None = None,
             name: str = "repo") -> Path:
        repo = root / name
        repo.mkdir()
        conftest.git(repo, "init", "-q")
        conftest.write_files(repo, base)
        conftest.git(repo, "add", "-A")
        conftest.git(repo, "commit", "-q", "-m", "base")
        conftest.git(repo, "tag", "base")
        if head:
            conftest.write_files(repo, head)
            conftest.git(repo, "add", "-A")
            conftest.git(repo, "commit", "-q", "-m", "head")
        return repo

    return make


def one(fmt: str) -> dict[str, Any]:
    why = harnesses.missing(fmt)
    if why:
        return {"harness": fmt, "skipped": why}
    root = Path(tempfile.mkdtemp(prefix="benchbot-countcost-"))
    try:
        project = harnesses.GENERATORS[fmt](_make_repo(root), top={"counts": "valgrind"})
        before, start = loadavg(), time.monotonic()
        doc = to_json(engine.compare(engine.Request(repo=project.repo, base="base", head="HEAD",
                                                    overrides=Overrides(seed=29))))
        wall = time.monotonic() - start
        [suite] = doc["suites"]
        rows = []
        for bench in doc["benchmarks"]:
            c = bench.get("counts") or {}
            rows.append({"name": bench["name"], "method": c.get("method"), "unit": c.get("unit"),
                         "units": c.get("units"), "ratio": c.get("ratio"),
                         "reading": c.get("reading"), "why": c.get("why"),
                         "counted_s": c.get("counted_s"),
                         "outcome": bench["verdict"]["outcome"]})
        return {"harness": fmt, "wall_s": round(wall, 1), "counted_runs": suite.get("counted_runs"),
                "counting_s": suite.get("counting_s"), "load_before": before,
                "load_after": loadavg(), "benchmarks": rows}
    finally:
        shutil.rmtree(root, ignore_errors=True)


class _Counted(Exception):
    """Raised once a comparison's suites are counted: the timed rounds are not wanted."""


def suite(harness: str) -> dict[str, Any]:
    """Counting alone of one generated suite (module docstring, ``--suites``)."""
    root = Path(tempfile.mkdtemp(prefix="benchbot-countcost-"))
    real = suitecount.count_all
    got: dict[str, Any] = {}

    def counted(setting: Any, names: Sequence[str], *, deadline: float | None) -> Any:
        start = time.monotonic()
        out = real(setting, names, deadline=deadline)
        got.update(wall=time.monotonic() - start, out=out, setting=setting)
        raise _Counted

    try:
        repo = suitegen.make(root, harness, "changed")
        before = loadavg()
        suitecount.count_all = counted
        try:
            engine.compare(engine.Request(repo=repo.path, base="base", head="HEAD",
                                          overrides=Overrides(seed=29)))
        except _Counted:
            pass
        finally:
            suitecount.count_all = real
        if "out" not in got:
            return {"harness": harness, "skipped": "the comparison counted nothing"}
        parity = {w.name: w.parity for w in got["setting"].config.workloads}
        rows = []
        counts = got["out"].counts
        steady = getattr(suitecount, "steady", lambda first: False)(
            [counts[n] for n in list(counts)[:suitecount.POOL_MIN]])
        for i, (name, c) in enumerate(counts.items()):
            read = signals.read_counts(c, {}, parity=parity[name])
            runs = list(c.runs or ())
            kinds = _kinds(runs, full=not steady or i < suitecount.POOL_MIN,
                           split=(c.why or "").startswith(SPLIT_WHY))
            short = name.split("/", 1)[-1].removeprefix("Benchmark").removeprefix("BM_")
            rows.append({"name": name, "expected": suitegen.expected(short, "changed"),
                         "units": c.units, "runs": len(runs), "counted_s": c.counted_s,
                         **{f"{k}_runs": len(v) for k, v in kinds.items()},
                         **{f"{k}_s": round(sum(r.seconds for r in v), 3)
                            for k, v in kinds.items()},
                         "ratio": read.ratio, "reading": read.reading, "why": c.why,
                         "samples": c.samples, "aa": _aa(c),
                         "made": [(r.arm, r.units, r.instructions, r.seconds)
                                  for r in c.runs or ()]})
        [(how, made, seconds)] = got["out"].suites.values()
        return {"harness": harness, "how": how, "counted_runs": made, "steady": steady,
                "counting_s": round(seconds, 1), "wall_s": round(got["wall"], 1),
                "benchmarks": rows, "load_before": before, "load_after": loadavg()}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _aa(c: Any) -> list[float] | None:
    """A benchmark's first A/A: base again's count less base's, instructions a run (n
    times per unit) and as a share of base's."""
    if not (c.base and c.base_again and c.units):
        return None
    return [round((c.base_again[0] - c.base[0]) * c.units, 1), c.base_again[0] / c.base[0] - 1]


# How a benchmark counted in one process per build says so (suitecount, gbsplit.HOW).
SPLIT_WHY = "valgrind: one callgrind process per build"
KINDS = ("small", "large", "confirm", "sampled", "split")


def _kinds(runs: Sequence[Any], *, full: bool, split: bool = False) -> dict[str, list[Any]]:
    """A benchmark's counted runs by kind, in the order made, for the code counted with
    (``--src``): its plan's small and larger runs (the plan: suitecount.PLAN, less base
    again where a steady suite left it out), the confirmation's (a run of base again after
    the plan; each arm at both sizes before issue 39, the larger alone since), and the
    sampled processes (base's and head's larger runs, never base again's). ``full``: the
    whole plan (False: a steady suite's benchmark after its first POOL_MIN). ``split``: a
    benchmark counted in one process per build (its share of the three processes)."""
    if split:
        return {"small": [], "large": [], "confirm": [], "sampled": [], "split": list(runs)}
    k = len(suitecount.PLAN) if full else 4
    plan, rest = runs[:k], runs[k:]
    again = 0
    while again < len(rest) and rest[again].arm == "base_again":
        again += 1
    confirm = rest[:2 * again]
    return {"small": [r for r in plan if r.units == fixedwork.SMALL],
            "large": [r for r in plan if r.units != fixedwork.SMALL],
            "confirm": list(confirm), "sampled": list(rest[2 * again:]), "split": []}


CALLED = {"more": ("up",), "less": ("down",), "same": ("same",), "layout": ("same",)}


def suite_table(runs: Sequence[Mapping[str, Any]]) -> str:
    lines = ["| suite | code | counting wall, s | per benchmark, s | counted runs (plan/confirm/"
             "sampled) | run seconds (small/large/confirm/sampled/split) | counts read right | "
             "load |", "|---|---|--:|--:|---|---|--:|--:|"]
    for r in runs:
        if "skipped" in r:
            lines.append(f"| {r['harness']} | skipped: {r['skipped']} | | | | | | |")
            continue
        bs = r["benchmarks"]
        kinds = KINDS
        total = {k: sum(b.get(f"{k}_s", 0.0) for b in bs) for k in kinds}
        right = sum(b["reading"] in CALLED[b["expected"]] for b in bs)
        runs_by = "/".join(str(sum(b.get(f"{k}_runs", 0) for b in bs)) for k in
                           ("small", "confirm", "sampled"))
        split = sum(b.get("split_runs", 0) > 0 for b in bs)
        plan = sum(b["small_runs"] + b["large_runs"] for b in bs)
        runs_by = f"{plan}/" + runs_by.split("/", 1)[1] + (
            f" + {split} split ({r.get('counted_runs')} processes in all)" if split else "")
        lines.append(f"| {r['harness']} | {r.get('code', '')} | {r['wall_s']:.0f} | "
                     f"{r['wall_s'] / len(bs):.1f} | {runs_by} | "
                     + "/".join(f"{total[k]:.0f}" for k in kinds)
                     + f" | {right} of {len(bs)} | {r['load_before'][0]:.1f}→"
                     f"{r['load_after'][0]:.1f} |")
    return "\n".join(lines) + "\n"


def table(runs: Sequence[Mapping[str, Any]]) -> str:
    lines = ["| harness | counted runs | counting, s | per benchmark (six runs), s | share of "
             "the comparison's wall | counts read (planted +50%; others the same) | load |",
             "|---|--:|--:|--:|--:|---|--:|"]
    for r in runs:
        if "skipped" in r:
            lines.append(f"| {r['harness']} | skipped: {r['skipped']} | | | | | |")
            continue
        per = [b["counted_s"] for b in r["benchmarks"] if b.get("counted_s")]
        reads = ", ".join(
            f"{b['name'].split('/', 1)[-1]} {(b['ratio'] - 1) * 100:+.1f}%" if b.get("ratio")
            else f"{b['name'].split('/', 1)[-1]} not counted ({b.get('why')})"
            for b in r["benchmarks"])
        counting = r.get("counting_s") or 0.0
        lines.append(f"| {r['harness']} | {r.get('counted_runs')} | {counting:.0f} | "
                     f"{statistics.median(per) if per else 0:.1f} | "
                     f"{100 * counting / r['wall_s']:.0f}% of {r['wall_s']:.0f} s | {reads} | "
                     f"{r['load_before'][0]:.1f}→{r['load_after'][0]:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--harness", default=",".join(HARNESSES))
    parser.add_argument("--out", default="countcost")
    parser.add_argument("--summary", action="store_true", help="print the table and stop")
    parser.add_argument("--suites", default="", help="count the generated suites alone")
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--src", default="", help="another checkout's src to count with")
    parser.add_argument("--code", default="", help="what to call the code counted with")
    args = parser.parse_args(argv)
    if args.suites:
        path = RESULTS / f"{args.out}.json"
        done: list[dict[str, Any]] = json.loads(path.read_text())["runs"] if path.exists() else []
        for _ in range(0 if args.summary else args.reps):
            for harness in args.suites.split(","):
                print(f"{time.strftime('%H:%M:%S')} {harness} (load {loadavg()})", flush=True)
                done.append({"code": args.code or args.src or "this", **suite(harness)})
                files.write_text(path, json.dumps({"runs": done}, indent=1) + "\n")
        print(suite_table(done))
        return 0
    path = RESULTS / f"{args.out}.json"
    runs: list[dict[str, Any]] = json.loads(path.read_text())["runs"] if path.exists() else []
    if not args.summary:
        for fmt in args.harness.split(","):
            print(f"{time.strftime('%H:%M:%S')} {fmt} (load {loadavg()})", flush=True)
            runs = [r for r in runs if r["harness"] != fmt] + [one(fmt)]
            files.write_text(path, json.dumps({"runs": runs}, indent=1) + "\n")
    print(table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
