"""A change of time with the same instructions, placed by a real comparison: the
section-19 kernel (benchmarks/timeprofile.py: head walks a 64 MiB array out of order, the
same instructions to the one) in a repository, compared by ``engine.compare`` in
bubblewrap; the call is profiled by callgrind, which names nothing, and then for time by
perf (benchbot.profiles.timing), which names ``walk``. Through the results file and the
report's note."""

from __future__ import annotations

import shutil

import pytest

from benchbot.measure import engine
from benchbot.profiles import timeprofile
from benchbot.report.build import build_view
from benchbot.report.render import render
from benchbot.results.resultsdir import parse, to_json
from benchbot.sandbox import bwrap
from benchmarks.timeprofile import KERNEL
from tests.conftest import MakeRepo

pytestmark = [
    pytest.mark.slow,  # builds, timed rounds, three callgrind runs and nine perf runs
    pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler"),
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed"),
    pytest.mark.skipif(not bwrap.probe().works, reason="bubblewrap cannot make a sandbox here"),
    pytest.mark.skipif(not timeprofile.probe().works,
                       reason=f"time profiling does not work here: {timeprofile.probe().reason}"),
]

# The kernel as benchmarks/timeprofile.py has it: gcc -O2 calls each of its pure functions
# once, not once a pass (369 M instructions, a run of 0.1 s in base, about three times it
# in head), so callgrind's runs stay a few seconds.
SOURCE = KERNEL
CONFIG = ("version: 1\nbuild: make\naa: off\nbudget: 10m\n"
          "workloads:\n  - {name: walk, run: ./k, counts: off}\n")
MAKE = "k: k.c\n\tcc -O2 -g -DMUL={mul} -o k k.c\n"


def test_a_call_with_the_same_work_names_the_function_whose_time_moved(
        make_repo: MakeRepo) -> None:
    repo = make_repo({"benchbot.yml": CONFIG, "k.c": SOURCE, "Makefile": MAKE.format(mul="1UL")},
                     {"Makefile": MAKE.format(mul="1664525UL")})
    results = engine.compare(engine.Request(repo=repo, base="base", head="HEAD"))
    (bench,) = results.benchmarks
    assert bench.verdict.outcome == "slower", bench.verdict
    table = bench.profile
    assert table is not None and table.error is None, table
    assert table.functions == () and table.base_total == table.head_total  # the same work
    time = table.time
    assert time is not None and time.error is None, time
    assert time.functions and time.functions[0].name == "walk", time.functions
    assert "spin" not in [f.name for f in time.functions]
    walk = time.functions[0]
    assert walk.head_ns > 2 * walk.base_ns and (walk.share or 0) > 0.7, walk
    assert time.runs_per_arm[0] >= 3 and len(time.runs_per_arm) == 3 and time.confined
    assert time.stacks is not None and any(s.endswith("walk") for s in time.stacks.head)
    assert results.spent is not None and results.spent.profiling_s is not None
    assert results.spent.profiling_s >= table.seconds + time.seconds * 0.9
    assert parse(to_json(results)).benchmarks[0].profile == table
    note = render(build_view(results), "markdown")
    assert "Where the time went (CPU time by function, perf): `walk` +" in note, note
