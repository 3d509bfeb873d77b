"""``benchbot demo`` made by two builds of benchbot in alternation, on the same machine.

    python benchmarks/demo_ab.py --old OLD_SRC --new NEW_SRC [--pairs 6] [--out FILE.json]

OLD_SRC and NEW_SRC are ``src`` directories of two checkouts (for example a
``git worktree add /tmp/old HEAD~1`` and this one's ``src``). Each pair runs the demo once
with each, in alternating order, so that the machine's drift (on a shared VM the same
kernel's median moved by half within the hour) falls on both alike. Prints each run's
outcomes and a summary; ``--out`` keeps the summary as JSON (``results/demo-ab.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchbot.core.model import Results
from benchbot.results import resultsdir

CHANGED = "sort"  # the one kernel the demo's head commit changes


def demo_results(src: Path, scratch: Path, tag: str) -> tuple[Results, float]:
    """One ``benchbot demo`` (its own default budget) with the benchbot in ``src``: its
    results file and its wall time in seconds."""
    out = scratch / f"{tag}.json"
    env = {**os.environ, "PYTHONPATH": str(src)}
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "benchbot", "demo", "--json", str(out), "--quiet"],
                   check=True, capture_output=True, env=env)
    wall = time.monotonic() - start
    return resultsdir.load(out), wall


def run_demo(src: Path, scratch: Path, tag: str) -> dict[str, Any]:
    """One ``benchbot demo`` with the benchbot in ``src``; its outcomes per kernel."""
    doc, wall = demo_results(src, scratch, tag)
    kernels = {}
    for b in doc.benchmarks:
        base = b.phases["ab"].arms["base"].wall_ns if "ab" in b.phases else ()
        kernels[b.name] = {
            "outcome": b.verdict.outcome, "reason": b.verdict.reason_code,
            "ratio": b.verdict.ratio, "pairs": b.measuring.pairs if b.measuring else b.verdict.n,
            "stopped": b.measuring.stopped if b.measuring else None,
            "median_ms": statistics.median(base) / 1e6 if base else None,
        }  # fmt: skip
    return {"wall_s": wall, "kernels": kernels}


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    changed = [r["kernels"][CHANGED] for r in runs]
    others = [k for r in runs for name, k in r["kernels"].items() if name != CHANGED]
    return {
        "runs": len(runs),
        "sort_slower": sum(k["outcome"] == "slower" for k in changed),
        "sort_pairs": [k["pairs"] for k in changed],
        "unchanged_level": sum(k["outcome"] == "level" for k in others),
        "unchanged": len(others),
        "false_calls": sum(k["outcome"] in ("slower", "faster") for k in others)
        + sum(k["outcome"] == "faster" for k in changed),
        "wall_s": [round(r["wall_s"], 1) for r in runs],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="src/ of the first benchbot")
    parser.add_argument("--new", type=Path, required=True, help="src/ of the second benchbot")
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory(prefix="demo-ab-") as tmp:
        for i in range(args.pairs):
            for name in ("old", "new") if i % 2 == 0 else ("new", "old"):
                run = run_demo(getattr(args, name), Path(tmp), f"{name}-{i}")
                runs[name].append(run)
                line = " | ".join(f"{k} {v['outcome']} {v['pairs']}"
                                  for k, v in run["kernels"].items())
                print(f"{name} {i + 1}: {run['wall_s']:.0f} s: {line}", flush=True)
    doc: dict[str, dict[str, Any]] = {name: {"summary": summary(r), "runs": r}
                                      for name, r in runs.items()}
    for name in ("old", "new"):
        s = doc[name]["summary"]
        print(f"{name}: sort slower {s['sort_slower']}/{s['runs']} (pairs {s['sort_pairs']}), "
              f"unchanged level {s['unchanged_level']}/{s['unchanged']}, "
              f"false calls {s['false_calls']}")
    if args.out is not None:
        args.out.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
