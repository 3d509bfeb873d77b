"""Bisect: how many comparisons and how much wall time a bisect takes, against comparing
every commit with its parent once.

Generated linear histories (tests/bisectrepo.py: a small C program that reports the
fastest of 15 calls of a loop; every commit changes the program, none is faster) of 16
and of 64 commits, one of them +10% slower, at a place drawn from a seeded generator per
repetition. Two ways to find it, on this machine, with the same rule and the same error
for the whole search (alpha = 0.05):

- **bisect**: ``benchbot.bisect.search`` as ``benchbot bisect`` runs it (step k at
  alpha · 6/(π² k²); builds kept per tree);
- **linear**: every commit built, and compared with its parent once: n - 1 comparisons,
  each at alpha / (n - 1) (Bonferroni: the same family-wise error), the culprits being
  the commits whose comparison calls a change.

Recorded per run: comparisons measured, builds, wall time (builds included), and what was
named. ``python benchmarks/bisect.py [--reps 3] [--sizes 16,64] [--linear-reps 1]
[--name bisect]`` writes results/NAME.json and results/NAME.md.
"""

from __future__ import annotations

import sys

# Run as a script, this file's folder comes first on sys.path, and its name would hide the
# standard library's bisect (which random and statistics import): drop the folder.
if __package__ in (None, ""):
    sys.path[:] = [p for p in sys.path if p != __file__.rpartition("/")[0]]

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` and `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
SRC = str(Path(__file__).resolve().parent.parent / "src")
sys.path.insert(0, SRC)

from benchbot.bisect import search  # noqa: E402
from benchbot.git import gitops  # noqa: E402
from benchbot.measure import engine  # noqa: E402
from benchbot.run import machine  # noqa: E402
from tests.bisectrepo import make_history  # noqa: E402

FACTOR = 1.10
ALPHA = 0.05
OUT = Path(__file__).resolve().parent / "results"


def run_bisect(repo: Path, culprit: int) -> dict[str, Any]:
    """One bisect of ``repo``; its figures."""
    started = time.monotonic()
    built: list[str] = []
    real = engine.build_checkout

    def counted(where: engine.Bench, config: Any, co: gitops.Checkout) -> None:
        built.append(co.sha)
        real(where, config, co)

    engine.build_checkout = counted  # type: ignore[assignment]
    try:
        doc = search.bisect(search.Request(repo=repo, good="good", bad="HEAD", workload="work"))
    finally:
        engine.build_checkout = real
    shas = [c.sha for c in doc.commits]
    return {
        "method": "bisect", "culprit": culprit,
        "named": [shas.index(c.sha) for c in doc.answer.culprits],
        "ranges": [[shas.index(r.left), shas.index(r.right)] for r in doc.answer.ranges],
        "comparisons": sum(1 for s in doc.steps if s.measured),
        "steps": len(doc.steps), "builds": len(built),
        "wall_s": round(time.monotonic() - started, 2),
        "alpha_spent": sum(s.alpha for s in doc.steps),
    }


def run_linear(repo: Path, culprit: int) -> dict[str, Any]:
    """Every commit built and compared with its parent once, each at alpha / (n - 1)."""
    started = time.monotonic()
    commits = gitops.first_parent_commits(repo, gitops.resolve(repo, "good"),
                                          gitops.resolve(repo, "HEAD"))
    config = search._config(search.Request(repo=repo, good="good", bad="HEAD",
                                           workload="work"), repo, commits[0][0])
    n = len(commits) - 1
    named: list[int] = []
    undecided: list[int] = []
    with engine.bench(repo, config) as where, gitops.WorktreePool(repo) as pool:
        lab = search.RepoLab(commits, config, where=where, pool=pool, seed=11,
                             reporter=engine.Reporter(), clock=time.monotonic)
        lab.prepare(0)
        for i in range(1, n + 1):
            lab.prepare(i)
            got = lab.compare(i - 1, i, alpha=ALPHA / n, budget_s=config.budget_s, number=i)
            if got.outcome in search.CALLS:
                named.append(i)
            elif got.outcome != "level":
                undecided.append(i)
    return {"method": "linear", "culprit": culprit, "named": named, "undecided": undecided,
            "comparisons": n, "steps": n, "builds": n + 1,
            "wall_s": round(time.monotonic() - started, 2), "alpha_spent": ALPHA}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="16,64")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--linear-reps", type=int, default=1)
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--name", default="bisect", help="results/NAME.json and NAME.md")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    runs: list[dict[str, Any]] = []
    load_before = os.getloadavg()
    for size in (int(s) for s in args.sizes.split(",")):
        for rep in range(max(args.reps, args.linear_reps)):
            culprit = rng.randrange(1, size)
            with tempfile.TemporaryDirectory(prefix="bench-bisect-") as tmp:
                repo = make_history(Path(tmp) / "repo", commits=size, factors={culprit: FACTOR})
                todo = ([run_bisect] if rep < args.reps else []) + \
                    ([run_linear] if rep < args.linear_reps else [])
                for method in todo:
                    got = method(repo, culprit) | {"commits": size, "rep": rep}
                    runs.append(got)
                    print(json.dumps(got), file=sys.stderr, flush=True)
    document = {"benchmark": "bisect", "factor": FACTOR, "alpha": ALPHA, "runs": runs,
                "summary": summarize(runs),
                "environment": {"cpu": machine.cpu_model(), "cores": machine.usable_cores(),
                                "load_before": load_before, "load_after": os.getloadavg()}}
    OUT.mkdir(exist_ok=True)
    (OUT / f"{args.name}.json").write_text(json.dumps(document, indent=2) + "\n")
    (OUT / f"{args.name}.md").write_text(markdown(document))
    print(markdown(document))
    return 0


def summarize(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for size in sorted({r["commits"] for r in runs}):
        for method in ("bisect", "linear"):
            mine = [r for r in runs if r["commits"] == size and r["method"] == method]
            if not mine:
                continue
            out.append({
                "commits": size, "method": method, "runs": len(mine),
                "comparisons_median": statistics.median(r["comparisons"] for r in mine),
                "builds_median": statistics.median(r["builds"] for r in mine),
                "wall_s_median": round(statistics.median(r["wall_s"] for r in mine), 2),
                "wall_s_range": [min(r["wall_s"] for r in mine), max(r["wall_s"] for r in mine)],
                "found": sum(r["named"] == [r["culprit"]] for r in mine),
                "innocent_named": sum(len(set(r["named"]) - {r["culprit"]}) for r in mine),
            })
    return out


def markdown(document: dict[str, Any]) -> str:
    env = document["environment"]
    lines = [
        "# Bisect: comparisons and wall time", "",
        f"One commit +{(document['factor'] - 1) * 100:.0f}% in a generated linear history; "
        f"alpha {document['alpha']} for the whole search either way. {env['cpu']}, "
        f"{env['cores']} cores, load {env['load_before'][0]:.2f} before, "
        f"{env['load_after'][0]:.2f} after.", "",
        "| commits | method | runs | comparisons (median) | builds (median) | wall time (median, range) | culprit found | innocents named |",
        "|--:|---|--:|--:|--:|--:|--:|--:|",
    ]
    for s in document["summary"]:
        lo, hi = s["wall_s_range"]
        lines.append(f"| {s['commits']} | {s['method']} | {s['runs']} | {s['comparisons_median']:g} | "
                     f"{s['builds_median']:g} | {s['wall_s_median']:.0f} s ({lo:.0f}–{hi:.0f}) | "
                     f"{s['found']} of {s['runs']} | {s['innocent_named']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
