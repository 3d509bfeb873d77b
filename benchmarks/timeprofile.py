"""A change of time with the same instructions: does the sampled time profile name it?
(benchmarks/README.md, section 19)

    python -m benchmarks.timeprofile [--reps 5] [--runs 3] [--out timeprofile]
                                     [--folded DIR] [--call-graph fp|dwarf] [--control]
    python -m benchmarks.timeprofile --compare [--reps 3] [--out timeprofile-compare]

A small C program (``KERNEL``) with two functions: ``walk`` follows a chain of dependent
loads through a 64 MiB array, ``spin`` does arithmetic on registers. Base walks the array
in order (``j = j + 1``); head in the order of a full-period linear congruential
generator (``j = j * 1664525 + 1``): the same instructions to the one (valgrind says so,
and the run checks it), about three times the time in ``walk`` (cache and TLB misses),
the same in ``spin``. Each repetition profiles base, head and base again with
``benchbot.profiles.timeprofile.record`` (in the sandbox where bubblewrap works, as a comparison
would) and compares them (``timeprofile.compare``): recorded per repetition are the
functions named, ``walk``'s share of the change, whether ``spin`` was named (it must not
be), and what the three profiles cost in wall seconds against the plain runs' own time.
Results go to ``results/<out>.json`` after each repetition and a table to stdout.
Before them, perf's own cost a profiled run: ``record`` of ``/bin/true`` (perf's start
and end, the sandbox, ``perf script``). ``--control`` profiles base's program as head
too: nothing may be named. ``--folded DIR`` keeps the last repetition's base and head
folded stacks (the flame graph's input: ``tests/fixtures/flame/``). ``--compare`` runs
whole comparisons (``engine.compare``) of a repository whose head is the kernel walking out
of order, as a user would: the verdict, the work
profile (callgrind: the same instructions, nothing named) and the time profile
(``benchbot.profiles.timing``) it leads to, and what they cost.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from benchbot.profiles import timeprofile
from benchbot.sandbox import bwrap

KERNEL = r"""
#include <stdio.h>
#include <stdlib.h>
#define N (1UL << 24)
/* Each load's index depends on the load before it: base's order is sequential (the
   prefetcher keeps up), head's jumps through the whole array. Same instructions. */
__attribute__((noinline)) long walk(const int *a, unsigned long mul) {
  long s = 0; unsigned long j = 0;
  for (unsigned long i = 0; i < N; i++) { j = (j * mul + 1UL + (unsigned long)a[j]) & (N - 1); s += a[j] + (long)j; }
  return s;
}
__attribute__((noinline)) long spin(long n) {
  unsigned long x = 88172645463325252UL; long s = 0;
  for (long i = 0; i < n; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; s += (long)(x & 7); }
  return s;
}
int main(void) {
  int *a = malloc(N * sizeof *a);
  if (!a) return 1;
  for (unsigned long i = 0; i < N; i++) a[i] = (int)(i >> 30);
  long s = 0;
  for (int r = 0; r < 8; r++) { s += walk(a, MUL); s += spin(1L << 24); }
  printf("%ld\n", s);
  return 0;
}
"""
MULS = {"base": "1UL", "head": "1664525UL"}


def build(into: Path) -> dict[str, Path]:
    """The two programs, compiled with -O2 -g (frame pointers as the compiler leaves them)."""
    (into / "kernel.c").write_text(KERNEL)
    out = {}
    for side, mul in MULS.items():
        out[side] = into / side
        subprocess.run(["cc", "-O2", "-g", f"-DMUL={mul}", "-o", str(out[side]), str(into / "kernel.c")],
                       check=True)
    return out


def instructions(program: Path) -> int | None:
    """The program's instructions by cachegrind (None without valgrind)."""
    if shutil.which("valgrind") is None:
        return None
    proc = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                           "--cachegrind-out-file=/dev/null", str(program)],
                          capture_output=True, text=True, check=True)
    line = next(x for x in proc.stderr.splitlines() if "I   refs" in x or "I refs" in x)
    return int(line.split(":")[1].replace(",", "").strip())


def plain_s(program: Path, runs: int) -> float:
    """The mean wall seconds of ``runs`` plain runs (no perf, no sandbox)."""
    started = time.monotonic()
    for _ in range(runs):
        subprocess.run([str(program)], stdout=subprocess.DEVNULL, check=True)
    return (time.monotonic() - started) / runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3, help="profiled runs per arm")
    parser.add_argument("--out", default="timeprofile")
    parser.add_argument("--folded", type=Path, default=None)
    parser.add_argument("--call-graph", choices=timeprofile.CALL_GRAPHS, default="fp")
    parser.add_argument("--control", action="store_true",
                        help="head is base's program: nothing may be named")
    parser.add_argument("--compare", action="store_true",
                        help="whole comparisons (engine.compare) of a repository of the kernel: "
                             "the time profile as a comparison makes it")
    args = parser.parse_args(argv)
    if args.compare:
        return compare_main(args.reps, args.out)
    found = timeprofile.probe()
    if not found.works:
        print(timeprofile.only_work_note(found))
        return 1
    box = bwrap.choose("auto")
    env = bwrap.clean_env(os.environ)
    results = Path(__file__).parent / "results" / f"{args.out}.json"
    doc: dict[str, Any] = {"sandbox": box.description, "perf": found.version, "runs": args.runs,
                           "call_graph": args.call_graph,
                           "period_ns": timeprofile.PERIOD_NS, "reps": []}
    with tempfile.TemporaryDirectory(prefix="benchbot-tp-") as tmp:
        where = Path(tmp)
        programs = build(where)
        if args.control:
            programs["head"] = programs["base"]
        counts = {side: instructions(p) for side, p in programs.items()}
        doc["instructions"] = counts
        doc["plain_s"] = {side: plain_s(p, 3) for side, p in programs.items()}
        doc["control"] = args.control
        # perf's own cost a profiled run: perf record around the sandbox around /bin/true.
        true = timeprofile.record(["/bin/true"], cwd=where, env=env, sandbox=box,
                                  writable=[where], runs=5, min_cpu_s=0.0)
        doc["fixed_s"] = true.wall_s / true.runs
        print(f"perf record, the sandbox and perf script around /bin/true: {doc['fixed_s']:.2f} s a run")
        print(f"instructions: {counts}; plain run: "
              + ", ".join(f"{s} {v:.3f} s" for s, v in doc["plain_s"].items()))
        for rep in range(args.reps):
            load = os.getloadavg()[0]
            profiles = {}
            for arm, side in (("base", "base"), ("head", "head"), ("base_again", "base")):
                profiles[arm] = timeprofile.record([str(programs[side])], cwd=where, env=env,
                                                   sandbox=box, writable=[where], runs=args.runs,
                                                   min_cpu_s=0.0, call_graph=args.call_graph)
            cmp = timeprofile.compare(profiles["base"], profiles["head"], profiles["base_again"])
            walk = next(f for f in cmp.functions if f.name == "walk")
            row: dict[str, Any] = {"rep": rep + 1, "load_before": load, "load_after": os.getloadavg()[0],
                   "named": [f.name for f in cmp.named], "first": cmp.named[0].name if cmp.named else None,
                   "walk_share": walk.share, "walk_ms": [walk.base_ns / 1e6, walk.head_ns / 1e6],
                   "base_ms": cmp.base_ns / 1e6, "head_ms": cmp.head_ns / 1e6,
                   "spin_named": any(f.name == "spin" for f in cmp.named),
                   "cost_s": {arm: p.wall_s for arm, p in profiles.items()},
                   "samples": {arm: p.samples for arm, p in profiles.items()}}
            doc["reps"].append(row)
            print(f"rep {rep + 1}: named {row['named']}, walk {row['walk_ms'][0]:.0f} -> "
                  f"{row['walk_ms'][1]:.0f} ms/run ({(walk.share or 0) * 100:.1f}% of the change), "
                  f"cost {sum(row['cost_s'].values()):.1f} s for 3 x {args.runs} runs, load {load:.2f}")
            results.parent.mkdir(exist_ok=True)
            tmp_out = results.with_suffix(".tmp")
            tmp_out.write_text(json.dumps(doc, indent=1) + "\n")
            tmp_out.replace(results)
            if args.folded is not None and rep == args.reps - 1:
                args.folded.mkdir(parents=True, exist_ok=True)
                for arm in ("base", "head"):
                    lines = sorted(f"{k} {v}" for k, v in profiles[arm].folded.items())
                    (args.folded / f"memory-walk.{arm}.folded").write_text("\n".join(lines) + "\n")
    first = sum(r["first"] == "walk" for r in doc["reps"])
    spin = sum(r["spin_named"] for r in doc["reps"])
    print(f"walk named first in {first} of {len(doc['reps'])}; spin named in {spin}")
    return 0


# --compare: the kernel in a repository, timed without counts (the work profile is
# callgrind's in any case). gcc -O2 calls walk and spin once each, not once a pass (they are
# pure, and a[] is calloc's zeros), so a run is 369 M instructions and callgrind's runs a
# few seconds.
COMPARE_CONFIG = ("version: 1\nbuild: make\naa: off\nbudget: 10m\n"
                  "workloads:\n  - {name: walk, run: ./k, counts: off}\n")
COMPARE_MAKE = "k: k.c\n\tcc -O2 -g -DMUL={mul} -o k k.c\n"


def _repository(into: Path) -> Path:
    """A git repository: base's commit (tag ``base``) walks in order, head's out of order."""
    repo = into / "repo"
    repo.mkdir()

    def git(*words: str) -> None:
        subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@example.invalid", *words],
                       cwd=repo, check=True, capture_output=True)

    git("init", "-q")
    (repo / "benchbot.yml").write_text(COMPARE_CONFIG)
    (repo / "k.c").write_text(KERNEL)
    (repo / "Makefile").write_text(COMPARE_MAKE.format(mul=MULS["base"]))
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    git("tag", "base")
    (repo / "Makefile").write_text(COMPARE_MAKE.format(mul=MULS["head"]))
    git("commit", "-q", "-am", "head: walk out of order")
    return repo


def compare_main(reps: int, out: str) -> int:
    """``reps`` comparisons of the repository, each recorded: the verdict, what the work
    profile named, what the time profile named, and what each cost."""
    from benchbot.measure import engine

    found = timeprofile.probe()
    results = Path(__file__).parent / "results" / f"{out}.json"
    doc: dict[str, Any] = {"perf": found.version, "works": found.works, "reps": []}
    with tempfile.TemporaryDirectory(prefix="benchbot-tpc-") as tmp:
        repo = _repository(Path(tmp))
        for rep in range(reps):
            load = os.getloadavg()[0]
            started = time.monotonic()
            got = engine.compare(engine.Request(repo=repo, base="base", head="HEAD"))
            wall = time.monotonic() - started
            (bench,) = got.benchmarks
            work = bench.profile
            t = work.time if work is not None else None
            row: dict[str, Any] = {
                "rep": rep + 1, "load_before": load, "load_after": os.getloadavg()[0],
                "outcome": bench.verdict.outcome, "ratio": bench.verdict.ratio, "wall_s": wall,
                "work_named": [f.name for f in work.functions] if work is not None else None,
                "work_error": work.error if work is not None else None,
                "instructions": [work.base_total, work.head_total] if work is not None else None,
                "work_s": work.seconds if work is not None else None,
                "time_error": t.error if t is not None else None,
                "time_named": [[f.name, f.delta_ns / 1e6, f.share] for f in t.functions]
                if t is not None else None,
                "time_ms_per_run": [t.base_ns / 1e6, t.head_ns / 1e6] if t is not None else None,
                "time_runs_per_arm": list(t.runs_per_arm) if t is not None else None,
                "time_s": t.seconds if t is not None else None,
                "profiling_s": got.spent.profiling_s if got.spent is not None else None}
            doc["reps"].append(row)
            print(json.dumps(row))
            results.parent.mkdir(exist_ok=True)
            results.write_text(json.dumps(doc, indent=1) + "\n")
    named = sum(1 for r in doc["reps"] if r["time_named"] and r["time_named"][0][0] == "walk")
    print(f"walk named first by the time profile in {named} of {len(doc['reps'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
