"""The last-level cache misses of real counted runs (docs/verdict.md, "Memory beside the
instructions"): a C program built twice with the same instructions and another order of
memory accesses, counted by real valgrind with its cache simulation in each arm's
sandboxed worker. On the instructions alone it was ``level``; with the misses it is not."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from benchbot.sandbox import bwrap
from benchbot.verdict import signals
from benchbot.verdict.judge import Policy, Workload, judge
from tests.measure.test_counts import measure

pytestmark = [
    pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler"),
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed"),
    pytest.mark.skipif(not bwrap.probe().works, reason="bubblewrap cannot make a sandbox here"),
]

# Sums a 16 MiB array (twice the simulated last level) in the order (i * K) mod N: K = 1
# walks it in order, one miss a cache line; an odd K like Knuth's 2654435761 jumps to
# another line at every step, one miss an element. K is read at run time from a volatile,
# so both builds run the same instructions.
PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#define N (1L << 22)
static volatile long K = KVAL;
int main(void) {
    int *a = malloc(N * sizeof *a);
    long k = K, s = 0;
    for (long i = 0; i < N; i++) a[i] = (int)(i & 7);
    for (long i = 0; i < N; i++) s += a[(i * k) & (N - 1)];
    printf("%ld\n", s);
    return 0;
}
"""


def build(where: Path, k: str) -> None:
    where.mkdir(parents=True)
    (where / "m.c").write_text(PROGRAM)
    subprocess.run(["cc", "-O1", f"-DKVAL={k}", "-o", str(where / "p"), str(where / "m.c")],
                   check=True)


@pytest.mark.slow  # valgrind with its cache simulation: 1-2 s a counted run, 8 of them
def test_the_same_instructions_with_scattered_accesses_are_not_level(tmp_path: Path) -> None:
    build(tmp_path / "base", "1L")
    build(tmp_path / "head", "2654435761L")
    measured = measure(tmp_path, "version: 1\nworkloads:\n"
                                 "  - {name: p, run: ./p, metric: instructions, counts: valgrind}\n",
                       budget_s=120.0)
    counts = measured.counts["p"]
    assert counts.method == "valgrind", counts.why
    assert len(set(counts.base + counts.base_again + counts.head)) == 1  # the same instructions
    m = counts.misses
    assert m is not None and len(m.head) == len(counts.head)
    assert len(set(m.base + m.base_again)) == 1  # deterministic: no noise of their own
    assert m.head[0] > 5 * m.base[0]  # a miss an element against one a line
    w = Workload(name="p", parity=0.02, floor_ns=25_000.0, metric="instructions", counts=counts)
    verdict = judge([w], Policy()).workloads["p"].final
    assert verdict is not None and verdict.outcome == "inconclusive", verdict
    assert verdict.reason_code == "misses_moved" and "last-level misses +" in (verdict.reason or "")
    # on the instructions alone, as before the misses were counted: level
    alone = judge([Workload(name="p", parity=0.02, floor_ns=25_000.0, metric="instructions",
                            counts=replace(counts, misses=None))],
                  Policy()).workloads["p"].final
    assert alone is not None and alone.outcome == "level"
    read = signals.read_counts(counts, {}, parity=0.02).misses
    assert read is not None and read.reading == "up" and read.weight == signals.MISS_WEIGHT
