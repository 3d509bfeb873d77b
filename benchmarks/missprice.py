"""What a last-level cache miss costs on this machine, in instructions (issue 37: the
misses' weight, signals.MISS_WEIGHT and MISS_WEIGHT_LOW).

    python -m benchmarks.missprice [--reps 5] [--accesses 20000000] [--out missprice]

A C program walks a 32 MiB array (four times cachegrind's simulated 8 MiB last level,
counting.SIMULATED_CACHE) as the memory scenario of benchmarks/suitegen.py does: each
load's index (position x mul + sum) mod 2^22 depends on the load before. ``mul`` 1 walks it
in order (the index moves two words a load, so a line of 64 bytes serves four loads;
the prefetcher streams them), ``mul``
0x9E3779B1 scatters it (nearly every load a line of its own, and a page of its own: a TLB
miss too, which the simulation does not count but the price includes). After the walk, a
xorshift loop of known instructions gives the instructions this CPU retires a nanosecond.

cachegrind (the simulated cache, as counted runs make it) counts the instructions and the
last-level misses of each walk per access; the program's own clock times each walk and the
xorshift loop, the two walks interleaved, ``--reps`` times. The price of a miss is

    (ns per access scattered - ns per access in order)
    / (misses per access scattered - misses per access in order)
    x instructions per ns (the xorshift loop's)

that is, what one more simulated miss of a dependent chain costs in the time of the
instructions this CPU would have run instead. Writes ``results/<out>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from benchbot.core import files
from benchbot.sandbox import counting

RESULTS = Path(__file__).resolve().parent / "results"
IN_ORDER, SCATTERED = 1, 0x9E3779B1
ROUNDS = 50_000_000  # xorshift rounds timed after each walk

SOURCE = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define WORDS (1u << 22)
static uint64_t a[WORDS];
static double ns(struct timespec x, struct timespec y) {
  return (y.tv_sec - x.tv_sec) * 1e9 + (y.tv_nsec - x.tv_nsec);
}
int main(int argc, char **argv) {
  uint64_t mul = strtoull(argv[1], 0, 0), n = strtoull(argv[2], 0, 0);
  uint64_t rounds = strtoull(argv[3], 0, 0);
  for (uint64_t i = 0; i < WORDS; i++) a[i] = 1;
  struct timespec t0, t1, t2;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; i++) sum += a[(i * mul + sum) & (WORDS - 1)];
  clock_gettime(CLOCK_MONOTONIC, &t1);
  uint64_t x = sum | 1;
  for (uint64_t r = 0; r < rounds; r++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; }
  clock_gettime(CLOCK_MONOTONIC, &t2);
  printf("%.0f %.0f %llu\n", ns(t0, t1), ns(t1, t2), (unsigned long long)(x + sum));
  return 0;
}
"""


def counted(valgrind: str, program: Path, mul: int, accesses: int, rounds: int) -> tuple[int, int]:
    """(instructions, last-level misses) of one run under cachegrind's simulated cache."""
    with tempfile.TemporaryDirectory(prefix="benchbot-missprice-") as scratch:
        argv = counting.valgrind_argv(valgrind, [str(program), hex(mul), str(accesses),
                                                 str(rounds)], Path(scratch))
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        got = counting.read_valgrind(Path(scratch))
    assert got is not None and got.ll_misses is not None
    return got.instructions, got.ll_misses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--accesses", type=int, default=20_000_000)
    parser.add_argument("--out", default="missprice")
    args = parser.parse_args(argv)
    valgrind, cc = shutil.which("valgrind"), shutil.which("gcc") or shutil.which("cc")
    assert valgrind and cc, "needs valgrind and a C compiler"
    load_before = [round(v, 2) for v in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="benchbot-missprice-") as build:
        program = Path(build) / "chase"
        (Path(build) / "chase.c").write_text(SOURCE)
        subprocess.run([cc, "-O2", "-o", str(program), str(Path(build) / "chase.c")], check=True)
        # per access: the counts of a walk of k accesses less those of none, k = 2 M
        k = 2_000_000
        per: dict[int, dict[str, float]] = {}
        for mul in (IN_ORDER, SCATTERED):
            i0, m0 = counted(valgrind, program, mul, 0, 0)
            ik, mk = counted(valgrind, program, mul, k, 0)
            per[mul] = {"instructions": (ik - i0) / k, "misses": (mk - m0) / k}
        i0, _ = counted(valgrind, program, IN_ORDER, 0, 0)
        ir, _ = counted(valgrind, program, IN_ORDER, 0, 1_000_000)
        per_round = (ir - i0) / 1_000_000
        timed: dict[int, list[tuple[float, float]]] = {IN_ORDER: [], SCATTERED: []}
        for rep in range(args.reps):
            for mul in ((IN_ORDER, SCATTERED) if rep % 2 == 0 else (SCATTERED, IN_ORDER)):
                out = subprocess.run([str(program), hex(mul), str(args.accesses), str(ROUNDS)],
                                     capture_output=True, text=True, check=True).stdout.split()
                timed[mul].append((float(out[0]) / args.accesses, float(out[1]) / ROUNDS))
    ns_access = {mul: statistics.median(a for a, _ in timed[mul]) for mul in timed}
    ns_round = statistics.median(r for mul in timed for _, r in timed[mul])
    per_ns = per_round / ns_round
    extra_misses = per[SCATTERED]["misses"] - per[IN_ORDER]["misses"]
    price_ns = (ns_access[SCATTERED] - ns_access[IN_ORDER]) / extra_misses
    result: dict[str, Any] = {
        "load_before": load_before, "load_after": [round(v, 2) for v in os.getloadavg()],
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "reps": args.reps,
        "accesses": args.accesses, "counted_per_access": {str(m): per[m] for m in per},
        "instructions_per_xorshift_round": per_round, "ns_per_xorshift_round": ns_round,
        "instructions_per_ns": per_ns,
        "ns_per_access": {str(m): ns_access[m] for m in ns_access},
        "timed": {str(m): timed[m] for m in timed},
        "price_ns": price_ns, "price_instructions": price_ns * per_ns}
    files.write_text(RESULTS / f"{args.out}.json", json.dumps(result, indent=1) + "\n")
    print(f"per access: in order {per[IN_ORDER]['misses']:.3f} misses, {ns_access[IN_ORDER]:.1f} ns; "
          f"scattered {per[SCATTERED]['misses']:.3f} misses, {ns_access[SCATTERED]:.1f} ns; "
          f"{per_ns:.2f} instructions a ns ({per_round:.0f} a xorshift round in "
          f"{ns_round:.2f} ns): a miss costs {price_ns:.0f} ns, "
          f"{price_ns * per_ns:,.0f} instructions (load {load_before} -> {result['load_after']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
