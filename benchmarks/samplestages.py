"""Sampled counts: would an earlier look at fewer processes pay? (issue 39, counting's cost)

A benchmark whose counts vary from one process to the next (Go's map lookups: each process
seeds its own hash) is counted in SAMPLES processes a build, then SAMPLES_MORE where the
larger sample could settle it (``suitecount._to_sample``; docs/verdict.md, "Counts that vary
by themselves"). Each process is a counted run: about 0.45 s of CPU for the Go test binary
under valgrind. This simulates the shipped stages against the same with one look before
them, each build's processes drawn log-normal with a given spread a process, every reading
made by the real ``signals.read_counts``, and counts per cell: how often the counts read
``same`` and ``up``/``down``, and the mean processes a build used.

    python -m benchmarks.samplestages --reps 12000

Writes ``results/samplestages.json`` and prints the table (benchmarks/README.md, section 18).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchbot.core.model import Counts
from benchbot.suites import suitecount
from benchbot.verdict import signals

RESULTS = Path(__file__).resolve().parent / "results"
PARITY = 0.02
SPREADS = (0.01, 0.012, 0.015, 0.017)  # Go's map benchmarks read 1.1-1.7% a process here
TRUTHS = (1.0, 1 + PARITY, 1 / (1 + PARITY))
# name: (processes a build at each look, the first look whose going on is conditional on
# the larger sample being able to settle it; earlier looks go on whenever unsteady)
DESIGNS: dict[str, tuple[tuple[int, ...], int]] = {
    "shipped": ((suitecount.SAMPLES, suitecount.SAMPLES_MORE), 1),
    "16 first": ((16, suitecount.SAMPLES, suitecount.SAMPLES_MORE), 2),
    "18 first": ((18, suitecount.SAMPLES, suitecount.SAMPLES_MORE), 2),
}


def read(base: list[float], head: list[float]) -> Counts:
    """The counts as ``suitecount._sampled`` leaves them: base's first larger run, base
    again's, then base's further processes; head's; judged as a sample."""
    raw = Counts(method="valgrind", why="simulated", unit="iteration", units=200,
                 samples=len(head), base=(base[0], *base[2:]), base_again=(base[1],),
                 head=tuple(head), pooled_noise=2e-4)
    return signals.read_counts(raw, {}, parity=PARITY)


def one(truth: float, spread: float, stages: tuple[int, ...], conditional_from: int,
        rng: np.random.Generator) -> tuple[str, int]:
    """One benchmark's sampling: (its last reading, the processes a build it used)."""
    most = stages[-1]
    base = list(50_000 * rng.lognormal(0.0, spread, most))
    head = list(50_000 * truth * rng.lognormal(0.0, spread, most))
    for k, n in enumerate(stages):
        c = read(base[:n], head[:n])
        if c.reading != "unsteady":
            return str(c.reading), n
        if k + 1 < len(stages) and k + 1 >= conditional_from:
            reach = math.sqrt(n / stages[k + 1])
            if abs(math.log(c.ratio or 1.0)) + signals.SAMPLED_TIMES * (c.noise or 0.0) * reach \
                    > math.log1p(PARITY):
                return "unsteady", n
    return "unsteady", most


def cells(reps: int) -> list[dict[str, Any]]:
    out = []
    for spread in SPREADS:
        for truth in TRUTHS:
            for name, (stages, conditional_from) in DESIGNS.items():
                rng = np.random.default_rng(7)  # the same draws for every design
                got = [one(truth, spread, stages, conditional_from, rng) for _ in range(reps)]
                readings = [g[0] for g in got]
                out.append({"spread": spread, "truth": truth, "design": name,
                            "stages": list(stages), "reps": reps,
                            "same": readings.count("same"), "up": readings.count("up"),
                            "down": readings.count("down"),
                            "processes": statistics.fmean(g[1] for g in got)})
    return out


def table(rows: list[dict[str, Any]]) -> str:
    names = list(DESIGNS)
    lines = ["| spread a process | truth | " + " | ".join(
        f"{n}: same / up / down, processes a build" for n in names) + " |",
        "|---|---|" + "---|" * len(names)]
    keyed = {(r["spread"], r["truth"], r["design"]): r for r in rows}
    for spread in SPREADS:
        for truth in TRUTHS:
            cell = []
            for n in names:
                r = keyed.get((spread, truth, n))
                if r is None:
                    continue
                pct = [100 * r[k] / r["reps"] for k in ("same", "up", "down")]
                cell.append(f"{pct[0]:.2f}% / {pct[1]:.2f}% / {pct[2]:.2f}%, {r['processes']:.1f}")
            lines.append(f"| {spread * 100:g}% | {(truth - 1) * 100:+.1f}% | " + " | ".join(cell) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=12_000)
    parser.add_argument("--out", default="samplestages")
    parser.add_argument("--summary", action="store_true", help="print the table and stop")
    args = parser.parse_args(argv)
    path = RESULTS / f"{args.out}.json"
    if args.summary:
        print(table(json.loads(path.read_text())["cells"]))
        return 0
    started = time.time()
    rows = cells(args.reps)
    path.write_text(json.dumps({"reps": args.reps, "parity": PARITY,
                                "seconds": round(time.time() - started, 1),
                                "cells": rows}, indent=1) + "\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
