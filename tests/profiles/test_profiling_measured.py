"""Where a called change is, end to end: a real comparison of C programs built with cc,
each arm's runs made by its own worker in bubblewrap, the called workload profiled by real
callgrind (benchbot.profiles.profiling), and the planted slower function named first."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchbot.config.settings import Overrides
from benchbot.measure import engine
from benchbot.results.resultsdir import parse, to_json
from benchbot.sandbox import bwrap
from tests.conftest import MakeRepo

pytestmark = [
    pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler"),
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed"),
    pytest.mark.skipif(not bwrap.probe().works, reason="bubblewrap cannot make a sandbox here"),
]

# Two functions of fixed work: the head makes planted() SLOW times dearer; steady() is the
# same in both. -fno-inline keeps each its own function in callgrind's record.
PROGRAM = r"""
#include <stdio.h>
static volatile unsigned long sink;
__attribute__((noinline)) void steady(long n) {
    for (long i = 0; i < n; i++) sink = sink * 33 + (unsigned long)i;
}
__attribute__((noinline)) void planted(long n) {
    for (long i = 0; i < n * SLOW; i++) sink = sink * 31 + (unsigned long)i;
}
int main(void) {
    for (int k = 0; k < 20; k++) { steady(200000); planted(100000); }
    printf("%lu\n", sink);
    return 0;
}
"""
# On the counts alone (metric: instructions), so that the verdict does not rest on this
# machine's timing: valgrind's counts of the planted change are certain.
CONFIG = ("version: 1\nbuild: make\naa: off\n"
          "workloads:\n  - {name: t, run: ./t, metric: instructions, counts: valgrind}\n")
MAKE = "t: t.c\n\tcc -O1 -g -fno-inline -DSLOW={slow} -o t t.c\n"


def _repo(make_repo: MakeRepo, head_slow: int) -> Path:
    return make_repo({"benchbot.yml": CONFIG, "t.c": PROGRAM, "Makefile": MAKE.format(slow=1)},
                     {"Makefile": MAKE.format(slow=head_slow), "t.c": f"/* head */\n{PROGRAM}"})


@pytest.mark.real_runs("the verdict rests on valgrind's counts, not on timing")
def test_a_called_change_names_the_function_that_carries_it(make_repo: MakeRepo) -> None:
    repo = _repo(make_repo, 4)
    results = engine.compare(engine.Request(repo=repo, base="base", head="HEAD"))
    (bench,) = results.benchmarks
    assert bench.verdict.outcome == "slower", bench.verdict
    table = bench.profile
    assert table is not None and table.error is None, table
    assert table.runs == 3 and table.seconds > 0
    first = table.functions[0]
    assert first.name == "planted" and first.object == "t" and first.file == "t.c", first
    assert first.share is not None and first.share >= 0.9, first
    assert first.delta > 0 and first.head_self > 3 * first.base_self
    assert "steady" not in [f.name for f in table.functions]
    # the folded stacks hold the planted function under main, in both arms
    assert table.stacks is not None
    assert any(s.endswith(";main;planted") for s in table.stacks.head)
    assert results.spent is not None and results.spent.profiling_s is not None
    assert results.spent.profiling_s >= table.seconds * 0.9
    # and it goes through the results file and back
    again = parse(to_json(results))
    assert again.benchmarks[0].profile == table


@pytest.mark.real_runs("the verdict rests on valgrind's counts, not on timing")
def test_nothing_is_profiled_where_nothing_is_called_unless_asked(make_repo: MakeRepo) -> None:
    repo = _repo(make_repo, 1)
    plain = engine.compare(engine.Request(repo=repo, base="base", head="HEAD"))
    assert plain.benchmarks[0].verdict.outcome != "slower"
    assert plain.benchmarks[0].profile is None
    assert plain.spent is not None and plain.spent.profiling_s is None
    asked = engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                          overrides=Overrides(profile="all")))
    table = asked.benchmarks[0].profile
    assert table is not None and table.error is None, table
    assert table.functions == ()  # the same program: nothing moved beyond its noise
    assert table.head_total > 0
