"""Placement: how much what should not matter moves a program's time (issue 30, items 1-2).

    python -m benchmarks.placement [--rounds 1000] [--programs NAME,...] [--factors NAME,...]
                                   [--name placement] [--seed N]

Head differs from base in more than its code: it is its own build in its own worktree,
at another path, on its own pages of the page cache. benchbot's A/A check ("base again")
sees none of that. Each factor here is measured as an A/A with only that factor
differing: K variants of the same program, run in rounds (each round runs every variant
once, in an order drawn per round from a seeded generator, one round of warm-up), through
benchbot's own spawner (``ProcessSpawner``: the fork server, outside the sandbox), with
the environment benchbot gives a run (``sandbox.clean_env``):

- ``same``: the same file, path and environment twice: the method's own A/A, and the
  order effect (the second run of a round against the first);
- ``copy``: copies of the built program (``cp``: their own inodes, their own pages of the
  page cache) in directories whose paths have the same length;
- ``path``: hard links of one program (the same inode, the same pages) in directories whose
  names are 1, 9, 40 and 120 characters long, each run from its own directory: what the
  path changes is argv[0], the exec path the kernel puts at the top of the stack, and cwd;
- ``env``: one program, with an extra environment variable of 0, 60, 1,000 and 3,900
  bytes: what the environment's size moves (the stack's start);
- ``worktree``: separate trees of the same sources, each built by itself (as base and an
  identical head in their own worktrees are), at paths of the same length;
- ``layout`` (the signals sort only): the hot functions moved by 0, 16, 32 and 48 bytes
  (an unused function before them, as the signals study's layout-only head): not
  placement but the code's own layout, for scale;
- ``workers``: benchbot's own arrangement in the sandbox. Two copies of the program in
  two places of one length, each with its own sandboxed worker (``sandbox.WorkerSpawner``);
  rounds of triplets "base" (place A), "base again" (place A) and "head" (place B) in the
  engine's six rotating orders (``rounds.TRIPLET_ORDERS``), one batch a round: what an
  identical head in its own worktree reads against the A/A check's base again;
- ``workers-pairs``: the same two places and workers, in pairs (base, head; the order
  alternating): every run follows the other worker's, where in triplets head always
  does and a base run often follows its own worker's.

Programs: the signals study's sort (``signals.PROG_C``, about 110 ms) and the demo's
kernels (``kernels/``: sort, edit_distance, copy, bfs; ``sum`` reports its own time and
is judged on that, so its process time is left out).

Per factor and program: each variant against variant 0, the Hodges-Lehmann centre of
the per-round log ratios and its 95% interval (``intervals.pseudo_median``), on wall time
and on CPU time (user + system); the spread of the variants' offsets beyond what their
intervals explain (``between_sd``); and the per-round ratios' standard deviation, which
sets how many rounds a given resolution takes. Writes ``results/NAME.json`` and
``results/NAME.md`` after every factor.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import numpy as np

from benchbot.run import machine
from benchbot.run.rounds import TRIPLET_ORDERS
from benchbot.sandbox import bwrap
from benchbot.sandbox.spawn import ProcessSpawner, SpawnRequest
from benchbot.verdict import intervals
from benchmarks import signals

RESULTS = Path(__file__).resolve().parent / "results"
FACTORS = ("same", "copy", "path", "env", "worktree", "layout", "workers", "workers-pairs")
KERNELS = {"sort": ("500000",), "edit_distance": ("3500",), "copy": ("16", "8"),
           "bfs": ("125000",)}
PROGRAMS = ("signals-sort", *(f"kernel-{k}" for k in KERNELS))
PATH_NAMES = (1, 9, 40, 120)  # characters in the directory's name (path factor)
ENV_PAD = (0, 60, 1000, 3900)  # bytes of an extra variable (env factor)
LAYOUT_PAD = (0, 16, 32, 48)  # bytes before the hot functions (layout factor)
COPIES = 4
WORKTREES = 3


@dataclass(frozen=True, slots=True)
class Variant:
    """One way of running the program: what differs is in its label."""

    label: str
    argv: tuple[str, ...]
    cwd: str
    env: tuple[tuple[str, str], ...]


# --- trees: a program's sources and its build -------------------------------------------


def _tree(where: Path, program: str, *, pad: int = 0) -> Path:
    """A directory with the program's sources, built; returns the program's path."""
    where.mkdir(parents=True)
    if program == "signals-sort":
        (where / "prog.c").write_text(signals.PROG_C)
        (where / "work.h").write_text(signals.work_h(1000, False, 500, signals.MEMORY_KIB, pad))
        subprocess.run(signals.BUILD.split(), cwd=where, check=True, capture_output=True)
        return where / "prog"
    kernels = where / "kernels"
    kernels.mkdir()
    for entry in resources.files("benchbot.kernels").iterdir():
        if entry.is_file() and (entry.name.endswith((".c", ".h")) or entry.name == "Makefile"):
            (kernels / entry.name).write_bytes(entry.read_bytes())
    subprocess.run(["make", "-s", "-C", "kernels"], cwd=where, check=True, capture_output=True)
    return kernels / "build" / program.removeprefix("kernel-")


def _args(program: str) -> tuple[str, ...]:
    if program == "signals-sort":
        return (str(signals.ITERATIONS),)
    return KERNELS[program.removeprefix("kernel-")]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def variants(factor: str, program: str, root: Path, base_env: dict[str, str]) -> list[Variant]:
    """The factor's variants of the program, built under ``root``."""
    env = tuple(base_env.items())
    args = _args(program)
    top = root / factor / program
    if factor == "worktree":
        progs = [_tree(top / f"w{i}", program) for i in range(WORKTREES)]
        return [Variant(f"tree {i} ({_digest(p)})", (str(p), *args), str(p.parent), env)
                for i, p in enumerate(progs)]
    if factor == "layout":
        progs = [_tree(top / f"l{pad:02d}", program, pad=pad) for pad in LAYOUT_PAD]
        return [Variant(f"+{pad} bytes", (str(p), *args), str(p.parent), env)
                for pad, p in zip(LAYOUT_PAD, progs, strict=True)]
    built = _tree(top / "src", program)
    if factor in ("workers", "workers-pairs"):
        out = []
        for label, place in (("base", "a"), ("base again", "a"), ("head", "b")):
            (top / place).mkdir(exist_ok=True)
            copy = top / place / built.name
            if not copy.exists():
                shutil.copy2(built, copy)
            out.append(Variant(label, (str(copy), *args), str(copy.parent), env))
        return out if factor == "workers" else out[::2]  # pairs: base and head
    if factor == "same":
        one = Variant("the same", (str(built), *args), str(built.parent), env)
        return [one, one]
    if factor == "copy":
        out = []
        for i in range(COPIES):
            (top / f"c{i}").mkdir()
            copy = top / f"c{i}" / built.name
            shutil.copy2(built, copy)
            out.append(Variant(f"copy {i}", (str(copy), *args), str(copy.parent), env))
        return out
    if factor == "path":
        out = []
        for length in PATH_NAMES:
            where = top / ("p" * length)
            where.mkdir()
            os.link(built, where / built.name)
            out.append(Variant(f"name of {length}", (str(where / built.name), *args), str(where),
                               env))
        return out
    if factor == "env":
        return [Variant(f"+{pad} bytes of environment", (str(built), *args), str(built.parent),
                        env + ((("PLACEMENT_PAD", "x" * (pad - 14)),) if pad else ()))
                for pad in ENV_PAD]
    raise ValueError(f"unknown factor {factor}")


# --- measuring ----------------------------------------------------------------------------


def measure(spawner: ProcessSpawner, vs: Sequence[Variant], rounds: int, rng: random.Random,
            label: str) -> dict[str, Any]:
    """``rounds`` rounds (plus one of warm-up) of every variant in a drawn order: per
    variant its wall and CPU times, and per round the order."""
    wall: list[list[int]] = [[] for _ in vs]
    cpu: list[list[int]] = [[] for _ in vs]
    orders: list[list[int]] = []
    for r in range(rounds + 1):
        order = list(range(len(vs)))
        rng.shuffle(order)
        for k in order:
            v = vs[k]
            run = spawner.spawn(SpawnRequest(argv=v.argv, cwd=v.cwd, env=v.env, timeout_s=120))
            if run.failed:
                raise SystemExit(f"{v.label}: {run.not_started or run.stderr_tail or run.returncode}")
            if r:
                wall[k].append(run.wall_ns)
                cpu[k].append(run.cpu_ns)
        if r:
            orders.append(order)
            if r % 100 == 0:
                print(f"  {label}: round {r}", flush=True)
    return {"wall_ns": wall, "cpu_ns": cpu, "orders": orders}


def measure_workers(box: bwrap.Sandbox, scratch: Path, env: dict[str, str],
                    vs: Sequence[Variant], rounds: int, label: str) -> dict[str, Any]:
    """``measure`` through the sandbox's workers, one per place, as the engine measures:
    a triplet a round (base, base again, head), in ``rounds.TRIPLET_ORDERS`` in turn; or
    with two variants a pair a round (base, head), the order alternating."""
    places = sorted({Path(v.cwd) for v in vs})
    spawner = bwrap.WorkerSpawner(box, scratch, env, places=places)
    keys = {"1": 0, "2": 1, "H": 2} if len(vs) == 3 else {"1": 0, "H": 1}
    rotation = TRIPLET_ORDERS if len(vs) == 3 else ("1H", "H1")
    wall: list[list[int]] = [[] for _ in vs]
    cpu: list[list[int]] = [[] for _ in vs]
    orders: list[list[int]] = []
    try:
        for r in range(rounds + 1):
            order = [keys[k] for k in rotation[r % len(rotation)]]
            group = [SpawnRequest(argv=vs[k].argv, cwd=vs[k].cwd, env=vs[k].env, timeout_s=120)
                     for k in order]
            [runs] = spawner.spawn_groups([group], [label])
            if len(runs) != len(vs) or any(run.failed for run in runs):
                raise SystemExit(f"{label}: a run failed: {runs}")
            if r:
                for k, run in zip(order, runs, strict=True):
                    wall[k].append(run.wall_ns)
                    cpu[k].append(run.cpu_ns)
                orders.append(order)
                if r % 100 == 0:
                    print(f"  {label}: round {r}", flush=True)
    finally:
        spawner.close()
    return {"wall_ns": wall, "cpu_ns": cpu, "orders": orders}


def _against(x: Sequence[int], y: Sequence[int]) -> dict[str, float]:
    """y over x, paired by round: the HL centre and 95% interval (in %), and the per-round
    log ratios' standard deviation."""
    d = [math.log(b / a) for a, b in zip(x, y, strict=True) if a > 0 and b > 0]
    centre, lo, hi = intervals.pseudo_median(d, 0.05)
    return {"pct": (math.exp(centre) - 1) * 100, "lo": (math.exp(lo) - 1) * 100,
            "hi": (math.exp(hi) - 1) * 100, "sd": statistics.stdev(d)}


def spread(times: Sequence[Sequence[int]], *, shuffles: int = 1000,
           seed: int = 1) -> dict[str, Any]:
    """Whether the variants differ at all, with no variant as the reference: each run's log
    time less its round's mean, each variant's offset the median of those; the offsets'
    variance against its distribution when the variants' labels are shuffled within each
    round (``p``: the share of shuffles at least as spread), and the spread beyond it
    (``between_sd_pct``: the standard deviation of the variants' true offsets, estimated)."""
    logs = np.log(np.asarray(times, dtype=float)).T  # rounds x variants
    centred = logs - logs.mean(axis=1, keepdims=True)
    observed = float(np.var(np.median(centred, axis=0)))
    rng = np.random.default_rng(seed)
    shuffled = np.empty(shuffles)
    for i in range(shuffles):
        mixed = rng.permuted(centred, axis=1)
        shuffled[i] = np.var(np.median(mixed, axis=0))
    beyond = max(0.0, observed - float(shuffled.mean()))
    return {"offsets_pct": [float(x) * 100 for x in np.median(centred, axis=0)],
            "p": float((shuffled >= observed).mean()),
            "between_sd_pct": math.sqrt(beyond * len(times) / max(1, len(times) - 1)) * 100}


def analyse(labels: Sequence[str], factor: str, got: dict[str, Any]) -> dict[str, Any]:
    """Each variant against the first, the variants' spread (``spread``), the order effect
    (``same``) and the engine's estimate (``workers``), on wall and on CPU time."""
    out: dict[str, Any] = {"variants": list(labels)}
    for clock in ("wall_ns", "cpu_ns"):
        times = got[clock]
        against = [_against(times[0], times[k]) for k in range(1, len(labels))]
        offsets = [0.0] + [a["pct"] for a in against]
        out[clock] = {
            "against_first": against, "offsets_pct": offsets,
            "range_pct": max(offsets) - min(offsets), "spread": spread(times),
            "median_ms": [statistics.median(t) / 1e6 for t in times],
        }
        if factor == "workers":  # as the engine estimates: head over both base runs
            both = [round(math.sqrt(b * a)) for b, a in zip(times[0], times[1], strict=True)]
            out[clock]["head_over_both"] = _against(both, times[2])
        if factor in ("same", "workers-pairs"):  # the order effect (later over earlier)
            first = [times[o[0]][r] for r, o in enumerate(got["orders"])]
            second = [times[o[1]][r] for r, o in enumerate(got["orders"])]
            out[clock]["order"] = _against(first, second)
    return out


# --- report -------------------------------------------------------------------------------


def _pct(a: dict[str, float]) -> str:
    return f"{a['pct']:+.2f}% [{a['lo']:+.2f}, {a['hi']:+.2f}]"


def markdown(doc: dict[str, Any]) -> list[str]:
    from benchmarks.report import markdown_table

    meta = doc["meta"]
    lines = ["### Placement: what moves a program's time when only its placement changes "
             "(`placement.py`)", ""]
    for run in meta.get("runs") or [meta]:
        lines.append(f"- `{run['command']}`, started {run['started']}")
    lines += ["", f"The last run: {meta.get('minutes', 0):.0f} min, load {meta['load_before']} "
              f"before, {meta.get('load_after')} after. Each variant runs once a round, in an "
              "order drawn per round (workers: the engine's rotation); the load after each "
              "factor is in its row.", ""]
    rows = []
    for r in doc["results"]:
        for clock, label in (("wall_ns", "wall"), ("cpu_ns", "CPU")):
            a = r["analysis"][clock]
            cells = "; ".join(f"{name}: {_pct(x)}" for name, x in
                              zip(r["analysis"]["variants"][1:], a["against_first"], strict=True))
            if "order" in a:
                cells = f"second run of a round over the first: {_pct(a['order'])}; " + cells
            if "head_over_both" in a:
                cells += f"; head over both base runs (the engine's estimate): {_pct(a['head_over_both'])}"
            rows.append([r["program"], r["factor"], label, str(r["rounds"]),
                         f"{statistics.mean(a['median_ms']):.1f}",
                         f"{statistics.mean(x['sd'] for x in a['against_first']) * 100:.1f}%",
                         f"{a['spread']['between_sd_pct']:.2f} (p {a['spread']['p']:.2f})",
                         cells, " ".join(f"{x:.1f}" for x in r["load"])])
    lines += [markdown_table(["program", "factor", "clock", "rounds", "median ms",
                              "sd of a round's ratio", "spread of the variants beyond noise "
                              "(points; p)", "each variant over the first (95%)",
                              "load after"], rows), ""]
    return lines


def reanalyse(name: str) -> int:
    """Analyse a results file's runs again and write its tables."""
    doc = json.loads((RESULTS / f"{name}.json").read_text())
    for r in doc["results"]:
        r["analysis"] = analyse(r["analysis"]["variants"], r["factor"], r["runs"])
    (RESULTS / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
    (RESULTS / f"{name}.md").write_text("\n".join(markdown(doc)) + "\n")
    print("\n".join(markdown(doc)))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=1000)
    p.add_argument("--programs", default=",".join(PROGRAMS))
    p.add_argument("--factors", default=",".join(FACTORS))
    p.add_argument("--name", default="placement")
    p.add_argument("--seed", type=int, default=20261203)
    p.add_argument("--reanalyse", action="store_true",
                   help="analyse results/NAME.json's runs again and rewrite its tables")
    p.add_argument("--resume", action="store_true",
                   help="keep results/NAME.json's factors and programs, measure the others")
    args = p.parse_args(argv)
    if args.reanalyse:
        return reanalyse(args.name)
    programs = [x for x in args.programs.split(",") if x]
    factors = [x for x in args.factors.split(",") if x]
    if set(programs) - set(PROGRAMS) or set(factors) - set(FACTORS):
        raise SystemExit(f"programs: {', '.join(PROGRAMS)}; factors: {', '.join(FACTORS)}")
    started = time.monotonic()
    meta: dict[str, Any] = {
        "command": "python -m benchmarks.placement " + " ".join(argv if argv is not None
                                                               else sys.argv[1:]),
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rounds": args.rounds,
        "seed": args.seed, "load_before": machine.load_average(),
        "aslr": Path("/proc/sys/kernel/randomize_va_space").read_text().strip(),
    }
    doc: dict[str, Any] = {"meta": meta, "results": []}
    if args.resume and (RESULTS / f"{args.name}.json").exists():
        kept = json.loads((RESULTS / f"{args.name}.json").read_text())
        doc["results"] = kept["results"]
        meta["runs"] = [*kept["meta"].get("runs", [{k: kept["meta"][k] for k in (
            "command", "started", "minutes", "load_before", "load_after") if k in kept["meta"]}]),
            {"command": meta["command"], "started": meta["started"]}]
    done = {(r["factor"], r["program"]) for r in doc["results"]}
    rng = random.Random(args.seed + len(done))
    env = bwrap.clean_env(os.environ)
    RESULTS.mkdir(exist_ok=True)

    def save() -> None:
        meta.update(minutes=(time.monotonic() - started) / 60, load_after=machine.load_average())
        (RESULTS / f"{args.name}.json").write_text(json.dumps(doc, indent=1) + "\n")
        (RESULTS / f"{args.name}.md").write_text("\n".join(markdown(doc)) + "\n")

    with tempfile.TemporaryDirectory(prefix="benchbot-placement-") as tmp:
        spawner = ProcessSpawner(Path(tmp))
        try:
            for factor in factors:
                for program in programs:
                    if (factor == "layout" and program != "signals-sort") or (
                            (factor, program) in done):
                        continue
                    vs = variants(factor, program, Path(tmp), env)
                    t0 = time.monotonic()
                    if factor.startswith("workers"):
                        box = bwrap.choose("auto")
                        if not box.active:
                            print(f"workers: skipped, no sandbox here ({box.description})")
                            continue
                        got = measure_workers(box, Path(tmp), env, vs, args.rounds,
                                              f"{factor} {program}")
                    else:
                        got = measure(spawner, vs, args.rounds, rng, f"{factor} {program}")
                    result = {"factor": factor, "program": program, "rounds": args.rounds,
                              "seconds": time.monotonic() - t0, "load": machine.load_average(),
                              "analysis": analyse([v.label for v in vs], factor, got),
                              "runs": got}
                    doc["results"].append(result)
                    save()
                    a = result["analysis"]["cpu_ns"]
                    print(f"{factor} {program}: CPU offsets "
                          f"{[round(x, 2) for x in a['offsets_pct']]} (spread p "
                          f"{a['spread']['p']:.2f}, beyond noise "
                          f"{a['spread']['between_sd_pct']:.2f}), {result['seconds']:.0f} s",
                          flush=True)
        finally:
            spawner.close()
    save()
    print("\n".join(markdown(doc)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
