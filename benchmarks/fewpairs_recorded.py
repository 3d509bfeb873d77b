"""Calls from few pairs on the live pytest-benchmark recordings (issue 39): every kept
comparison's benchmarks judged again, at the looks the recording took, by the rule before
a slower call spared base's runs above nearly all of head's (``pooled``) and by the rule
now, on the same runs.

    python -m benchmarks.fewpairs_recorded [--out fewpairs-recorded]

The recordings are the ``live-pybench-*-raw`` folders in ``results/`` (section 17 on):
each a 10-minute comparison of the generated suite (``suitegen``'s pybench: -40%
``sort_ints``, -12% ``json``, +25% ``matmul``, eight unchanged), ``changed`` or
``identical``. A benchmark's outcome under a rule is the first look at which it is called
or settles level, else its last. What a re-judging cannot show: the rounds a call sooner
frees for the other benchmarks (a live run would give them to those still pending), so
the later looks are only the ones the recording took.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from benchbot.core.model import Family
from benchbot.results import resultsdir
from benchbot.verdict import sequential
from benchbot.verdict.judge import Policy, Workload, judge
from benchmarks import fewpairs
from benchmarks.suites import _cut_phase

RESULTS = Path(__file__).resolve().parent / "results"
CHANGES = {"py/test_sort_ints": "faster", "py/test_json": "faster", "py/test_matmul": "slower"}
RULES: dict[str, Callable[[], contextlib.AbstractContextManager[None]]] = {
    "pooled": fewpairs.rule_pooled, "now": contextlib.nullcontext}


def first_settled(bench: Any, family: int) -> tuple[str, int]:
    """The outcome at the first look the recording took at which the benchmark is called or
    level (or its last), and the pairs there."""
    assert bench.measuring is not None
    looks = [*bench.measuring.looks, bench.measuring.pairs]
    policy = Policy(alpha=0.05, family=Family(sequential=family, fixed=0))
    outcome, pairs = "inconclusive", 0
    for k, n in enumerate(looks, start=1):
        w = Workload(name=bench.name, parity=bench.parity, floor_ns=bench.floor_ns,
                     phases={name: _cut_phase(p, n) for name, p in bench.phases.items()},
                     design="triplets", looks=min(k, len(looks) - 1), metric="reported",
                     judge_memory=False)
        ab = judge([w], policy).workloads[bench.name].ab
        assert ab is not None
        outcome, pairs = ab.outcome, n
        if outcome in ("slower", "faster", "level"):
            break
    return outcome, pairs


def study(paths: list[Path]) -> list[dict[str, Any]]:
    rows = []
    for path in paths:
        with gzip.open(path, "rt") as fh:
            doc = resultsdir.parse(json.load(fh), where=str(path))
        scenario = "identical" if "identical" in path.name else "changed"
        benches = [b for b in doc.benchmarks if b.measuring is not None and b.measuring.looks]
        for bench in benches:
            truth = CHANGES.get(bench.name, "same") if scenario == "changed" else "same"
            row: dict[str, Any] = {"file": f"{path.parent.name}/{path.name}", "name": bench.name,
                                   "truth": truth, "pairs": bench.measuring.pairs}  # type: ignore[union-attr]
            for rule, ctx in RULES.items():
                with ctx():
                    row[rule] = first_settled(bench, len(doc.benchmarks))
            rows.append(row)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| recording | benchmark | truth | pooled | now |", "|---|---|---|---|---|"]
    for r in rows:
        if r["truth"] == "same" and r["pooled"] == r["now"]:
            continue
        cells = [f"{o} at {n}" for o, n in (r["pooled"], r["now"])]
        lines.append(f"| {r['file']} | {r['name']} | {r['truth']} | {cells[0]} | {cells[1]} |")
    for rule in RULES:
        changes = [r for r in rows if r["truth"] != "same"]
        right = sum(r[rule][0] == r["truth"] for r in changes)
        by34 = sum(r[rule][0] == r["truth"] and r[rule][1] <= 34 for r in changes)
        false = sum(r[rule][0] in ("slower", "faster") and r[rule][0] != r["truth"] for r in rows)
        lines.append(f"\n{rule}: changes called {right} of {len(changes)} ({by34} by 34 pairs); "
                     f"false calls {false} of {len(rows)} benchmarks judged")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="fewpairs-recorded")
    args = parser.parse_args(argv)
    paths = sorted(RESULTS.glob("live-pybench-*-raw/pybench-*.json.gz"))
    rows = study(paths)
    (RESULTS / f"{args.out}.json").write_text(json.dumps(
        {"recordings": len(paths), "looks": list(sequential.looks(76)), "rows": rows},
        indent=1) + "\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
