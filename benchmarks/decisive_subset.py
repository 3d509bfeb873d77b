"""The decisive section's sequential design alone, on chosen scenarios: a live check of a
change to the rule where the whole section (both designs, seven scenarios, about an hour
on a 2-core VM) does not fit.

    python benchmarks/decisive_subset.py --scenarios p3,m4,biasedmodes --reps 20 \\
        --out benchmarks/results/decisive-agree.json [--keep DIR]

Each comparison is made by the real engine on the section's builds (same programs, same
iterations, seeds of their own), as ``decisive.run_section`` makes its sequential ones;
``--keep`` writes every comparison's results document there, so that the recordings can
be judged again offline at every look. The output is the records and a count per scenario.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchbot.results import resultsdir
from benchbot.verdict import stats
from benchmarks import decisive, scenarios
from benchmarks.run import FULL


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scenarios", default="p3,m4,biasedmodes",
                   help="keys of decisive.SCENARIOS, comma-separated")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--seed", type=int, default=20240601 + 71)
    p.add_argument("--out", type=Path, required=True, help="the records, as JSON")
    p.add_argument("--keep", type=Path, help="a folder for every comparison's document")
    args = p.parse_args(argv)
    keys = args.scenarios.split(",")
    chosen = [s for s in decisive.SCENARIOS if s.key in keys]
    if len(chosen) != len(keys):
        p.error(f"scenarios are {', '.join(s.key for s in decisive.SCENARIOS)}")
    root = Path(tempfile.mkdtemp(prefix="benchbot-subset-"))
    built = {s.key: scenarios.make(s, root, iterations=FULL.iterations, runs=None) for s in chosen}
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    print(f"rule: 10th and {round(stats.TAIL_QUANTILE * 100)}th percentiles at {stats.LOW_AGREEMENT} of the "
          f"median's move, the fastest runs at {stats.AGREEMENT}", flush=True)
    records: list[dict[str, Any]] = []
    start = time.monotonic()
    for rep in range(args.reps):
        for index, s in enumerate(chosen):
            doc, wall = decisive.compare(built[s.key], decisive.SEQUENTIAL,
                                         seed=args.seed + 1000 * rep + 10 * index)
            if args.keep:
                (args.keep / f"{s.key}-sequential-{rep + 1:02d}.json").write_text(resultsdir.dumps(doc))
            r = decisive.record(s, rep, decisive.SEQUENTIAL, doc, wall)
            records.append(asdict(r))
            print(f"rep {rep + 1}/{args.reps} {s.label:>14}: {r.outcome} ({r.reason or r.stopped}, "
                  f"{r.pairs} pairs, {r.wall_s:.0f} s) [{time.monotonic() - start:.0f} s]", flush=True)
    summary = {}
    for s in chosen:
        mine = [r for r in records if r["scenario"] == s.key]
        calls = sorted(r["pairs"] for r in mine if r["outcome"] in ("slower", "faster"))
        summary[s.key] = {"outcomes": dict(collections.Counter(r["outcome"] for r in mine)),
                          "median_pairs_of_calls": calls[len(calls) // 2] if calls else None}
        print(f"{s.label}: {summary[s.key]}")
    args.out.write_text(json.dumps({"reps": args.reps, "summary": summary, "records": records},
                                   indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
