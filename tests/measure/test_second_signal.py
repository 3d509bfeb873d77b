"""The engine measuring sequentially with real C programs: a change called is measured on
for its estimate alone, the call judged on the pairs it was made at, and peak memory
judged beside time (docs/verdict.md, "A second signal", "An estimate the stopping rule
does not inflate")."""

from __future__ import annotations

import pytest

from benchbot.config.settings import Overrides
from benchbot.measure import engine
from benchbot.verdict import sequential
from tests.conftest import MakeRepo

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    size_t bytes = (size_t)MB << 20;
    volatile char *p = malloc(bytes);
    for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;  /* peak memory: MB mebibytes touched */
    volatile unsigned long long acc = p[bytes - 1];
    unsigned long long x = 88172645463325252ULL;
    for (long i = 0; i < 20000L * WORK; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; acc += x; }
    printf("%llu\n", (unsigned long long)acc % 10);
    return 0;
}
"""
CONFIG = """version: 1
build: cc -O2 $(cat flags.txt) -o prog prog.c
workloads:
  - name: grows
    run: ['./prog']
"""


@pytest.mark.slow  # about 300 runs of 10 ms and two builds: 10-20 s on a loaded machine
def test_a_call_is_measured_on_for_its_estimate_and_memory_is_judged(make_repo: MakeRepo) -> None:
    # Twice the work and a quarter more memory: large enough to be certain on a loaded
    # 2-core machine.
    repo = make_repo({"benchbot.yml": CONFIG, "prog.c": PROGRAM,
                      "flags.txt": "-DMB=24 -DWORK=100\n"},
                     {"flags.txt": "-DMB=30 -DWORK=200\n"})
    doc = engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                        overrides=Overrides(seed=7, budget=600)))
    bench = doc.benchmarks[0]
    verdict, measuring = bench.verdict, bench.measuring
    assert verdict.outcome == "slower", verdict.reason
    assert measuring is not None and measuring.called_at is not None
    assert measuring.stopped == "settled"
    # at least 50 pairs past the call, then on until the estimate's interval is within
    # ±1.4%, or no further where it already was
    assert measuring.pairs >= sequential.estimate_pairs(measuring.called_at, 1000)
    assert verdict.estimate is not None and verdict.estimate_ci is not None
    half = max(verdict.estimate_ci[1] / verdict.estimate, verdict.estimate / verdict.estimate_ci[0])
    assert half - 1 <= sequential.ESTIMATE_HALF or measuring.pairs == sequential.estimate_pairs(
        measuring.called_at, 1000)
    assert verdict.n == measuring.called_at  # the call rests on the pairs it was made at
    assert verdict.estimate_n == measuring.pairs
    assert verdict.estimate is not None and 1.15 < verdict.estimate < 2.6
    assert bench.memory is not None and bench.memory.outcome == "slower", bench.memory.reason
    assert bench.memory.ratio is not None and 1.1 < bench.memory.ratio < 1.4
    assert bench.counts is not None and bench.counts.method is None  # counts: off (conftest)
