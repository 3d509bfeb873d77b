"""Where the change is: profiles of called workloads name the function that carries it
(issue 41, benchbot.profiles.profiling).

    python -m benchmarks.profile [--reps 3] [--parts demo,gbench,go,cost] [--out profile]
    python -m benchmarks.profile --summary [--out profile]

- ``demo``: ``benchbot demo`` as it is (its 90 s budget); where ``sort`` is called, the
  share of the instruction change its profile gives the sort kernel's own function
  (``merge_sort``); target >= 90%. ``sort``: the demo's sort alone, profiled whatever its
  verdict (``--profile``), for the same figure where the demo's 90 s did not call it.
- ``gbench`` and ``go``: a generated suite's ``helper`` scenario (benchmarks/suitegen.py:
  ``Mix``, called once per operation by four benchmarks, 10% slower at the head), six of
  its benchmarks (the four that call Mix and two that do not) compared with a 5-minute
  budget; each benchmark called must name Mix first, and no benchmark may name another
  function.
- ``cost``: the share of each comparison's wall time its profiled runs took (target
  <= 20% where something is called), and the gbench suite's ``identical`` scenario (its
  head changes a README), where nothing is called and nothing may be profiled.

Every comparison is a live ``engine.compare`` in the sandbox. What each one found is
appended to ``results/<out>.json`` (atomically) with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from benchbot import demo
from benchbot.config.settings import Overrides
from benchbot.core.model import Results
from benchbot.measure import engine
from benchbot.results.resultsdir import write_atomic
from benchmarks import suitegen

RESULTS = Path(__file__).resolve().parent / "results"
SUITE_NAMES = (*suitegen.HELPED, "Crc", "Sha")  # the four that call Mix, two that do not
SUITE_BUDGET_S = 300.0
SORT_FUNCTION = "merge_sort"


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def _rows(results: Results) -> list[dict[str, Any]]:
    rows = []
    for b in results.benchmarks:
        p = b.profile
        rows.append({
            "name": b.name, "outcome": b.verdict.outcome,
            "counts_ratio": b.counts.ratio if b.counts is not None else None,
            "profiled": p is not None,
            "error": p.error if p is not None else None,
            "named": [[f.name, f.delta, f.share] for f in p.functions] if p is not None else [],
            # each named function's inclusive change (with its callees) over the run's
            "inclusive_share": [
                (f.head_inclusive - f.base_inclusive) / (p.head_total - p.base_total)
                if p.head_total != p.base_total else None for f in p.functions]
            if p is not None else [],
            "total_change": (p.head_total / p.base_total - 1) if p and p.base_total else None,
            "profile_s": p.seconds if p is not None else None,
        })
    return rows


def _record(kind: str, results: Results, wall_s: float, load: list[float]) -> dict[str, Any]:
    spent = results.spent
    return {"kind": kind, "wall_s": round(wall_s, 1), "load_before": load,
            "load_after": loadavg(),
            "profiling_s": spent.profiling_s if spent is not None else None,
            "spent_wall_s": spent.wall_s if spent is not None else None,
            "benchmarks": _rows(results)}


def one_demo(*, sort_only: bool = False) -> dict[str, Any]:
    """``benchbot demo`` as it is; ``sort_only``: its sort alone, profiled whatever its
    verdict (``--profile``): what its profile names where the 90 s did not call it."""
    load, started = loadavg(), time.monotonic()
    results = demo.run(overrides=Overrides(only=("sort",), profile="all") if sort_only
                       else None)
    return _record("demo-sort" if sort_only else "demo", results,
                   time.monotonic() - started, load)


def one_suite(harness: str, scenario: str = "helper") -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="benchbot-profile-") as tmp:
        repo = suitegen.make(Path(tmp), harness, scenario)
        only = tuple(suitegen.bench_name(harness, n) for n in SUITE_NAMES)
        load, started = loadavg(), time.monotonic()
        results = engine.compare(engine.Request(
            repo=repo.path, base="base", head="HEAD",
            overrides=Overrides(only=only, budget=SUITE_BUDGET_S)))
        kind = harness if scenario == "helper" else f"{harness}-{scenario}"
        return _record(kind, results, time.monotonic() - started, load)


def save(path: Path, runs: list[dict[str, Any]]) -> None:
    write_atomic(path, json.dumps({"runs": runs}, indent=1) + "\n")


# --- the summary (benchmarks/README.md) ------------------------------------------------


def _demo_line(run: Mapping[str, Any]) -> str:
    sort = next(b for b in run["benchmarks"] if b["name"] == "sort")
    if not sort["named"]:
        why = sort["error"] or ("not called" if not sort["profiled"] else "nothing named")
        return f"sort {sort['outcome']}: {why}"
    first = sort["named"][0]
    inclusive = (sort.get("inclusive_share") or [None])[0]
    with_callees = f", {100 * inclusive:.1f}% with its callees" if inclusive is not None else ""
    return (f"sort {sort['outcome']}, counts {_pct(sort['counts_ratio'])}: "
            f"{first[0]} {100 * (first[2] or 0):.1f}% of the change{with_callees} "
            f"({len(sort['named'])} named); profiled {run['profiling_s']} s "
            f"of {run['spent_wall_s']} s")


def _pct(ratio: float | None) -> str:
    return "–" if ratio is None else f"{100 * (ratio - 1):+.2f}%"


def _suite_check(run: Mapping[str, Any]) -> tuple[int, int, int, list[str]]:
    """(called through Mix, named Mix first, profiled, problems)."""
    through = first = profiled = 0
    problems = []
    for b in run["benchmarks"]:
        short = b["name"].split("/", 1)[1].removeprefix("Benchmark").removeprefix("BM_")
        helped = short in suitegen.HELPED
        if b["profiled"]:
            profiled += 1
        if b["outcome"] in ("slower", "faster") and helped:
            through += 1
            if b["named"] and suitegen.HELPER in b["named"][0][0]:
                first += 1
            else:
                problems.append(f"{b['name']}: first named {b['named'][:1]} ({b['error']})")
        elif b["outcome"] in ("slower", "faster"):
            problems.append(f"{b['name']}: called {b['outcome']} without calling Mix")
        others = [n for n, _d, _s in b["named"] if suitegen.HELPER not in n]
        if others:
            problems.append(f"{b['name']}: named unchanged functions {others}")
    return through, first, profiled, problems


def report(runs: Sequence[Mapping[str, Any]]) -> str:
    lines = []
    for run in runs:
        load = f"load {run['load_before'][0]:.1f} → {run['load_after'][0]:.1f}"
        spent = run["profiling_s"] or 0.0
        # what profiling added to the comparison without it
        added = spent / (run["spent_wall_s"] - spent) if run["spent_wall_s"] else 0.0
        cost = f"profiling {spent:.1f} s of {run['spent_wall_s']:.0f} s (+{100 * added:.1f}%)"
        if run["kind"] in ("demo", "demo-sort"):
            lines.append(f"{run['kind']}: {_demo_line(run)}; {cost}; {load}")
            continue
        through, first, profiled, problems = _suite_check(run)
        verdicts = ", ".join(f"{b['name'].split('/', 1)[1]} {b['outcome']}"
                             for b in run["benchmarks"])
        lines.append(f"{run['kind']}: {through} called through Mix, {first} named Mix first, "
                     f"{profiled} profiled; {cost}; {load}; {verdicts}"
                     + (f"; PROBLEMS: {'; '.join(problems)}" if problems else ""))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--parts", default="demo,gbench,go,cost")
    parser.add_argument("--out", default="profile")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args(argv)
    path = RESULTS / f"{args.out}.json"
    runs: list[dict[str, Any]] = json.loads(path.read_text())["runs"] if path.exists() else []
    if args.summary:
        print(report(runs))
        return 0
    parts = args.parts.split(",")
    for _rep in range(args.reps):
        for part in parts:
            if part == "demo":
                runs.append(one_demo())
            elif part == "sort":
                runs.append(one_demo(sort_only=True))
            elif part in ("gbench", "go"):
                runs.append(one_suite(part))
            elif part == "cost":
                runs.append(one_suite("gbench", "identical"))
            else:
                raise SystemExit(f"unknown part {part!r}")
            save(path, runs)
            print(report(runs[-1:]), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
