"""Counted runs of a suite's benchmark with perf around them (where the machine has
hardware counters), proved on any machine with the software event that stands in for
them in tests (``counting.SOFTWARE_TEST``: the run's page faults).

The harness is a Python script that speaks ``go test -bench``'s flags and output and,
for each iteration asked for, touches one fresh page of memory: one page fault an
iteration, on top of however many the interpreter's start takes. The counted runs at 2
and 2 + n iterations must find about one page fault per iteration. Every counted run passes through
``Setting.place``, the seam for work that places runs elsewhere: here it adds a variable
the harness insists on."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from benchbot.config.load import parse_config
from benchbot.core.model import Counts
from benchbot.harness import formats as harness_mod
from benchbot.run.runner import Harness, Target
from benchbot.sandbox import counting
from benchbot.sandbox.spawn import ProcessSpawner
from benchbot.suites import suitecount
from benchbot.suites.listing import Figures, _member

FAKE_GO = r"""
import mmap, os, sys
if os.environ.get("PLACED") != "yes":  # the request passed through Setting.place
    sys.exit(3)
args = dict(a.split("=", 1) for a in sys.argv[1:] if a.startswith("-test.") and "=" in a)
n = int(args["-test.benchtime"].rstrip("x"))
name = args["-test.bench"].strip("^$")
pages = mmap.mmap(-1, max(n, 1) * 4096)
for i in range(n):
    pages[i * 4096] = 1
print(f"{name} \t {n} \t 1000.0 ns/op")
print("PASS")
"""


@pytest.mark.real_runs("page faults counted per iteration, and the units asked: not their times")
def test_perf_counts_a_benchmarks_units_around_its_counted_runs(tmp_path: Path) -> None:
    problem = counting.perf_probe(counting.SOFTWARE_TEST)
    if problem is not None:
        pytest.skip(f"perf_event_open cannot count a software event here: {problem}")
    targets = {}
    for side in ("base", "head"):
        place = tmp_path / side
        place.mkdir()
        (place / "fake_go.py").write_text(FAKE_GO)
        targets[side] = Target(argv=(sys.executable, str(place / "fake_go.py")), cwd=place)
    config = parse_config("version: 1\nsuites:\n  - name: go\n    run: [x]\n    format: go\n")
    member = _member(config.suites[0], harness_mod.Entry(
        name="BenchmarkTouch", value=1e6, unit="ns", better="lower", select="BenchmarkTouch"))
    setting = suitecount.Setting(
        config=dataclasses.replace(config, workloads=(member,)),
        base={"go": targets["base"]}, head={"go": targets["head"]},
        harnesses={"go": Harness(format="go", benchmarks=(member.name,))},
        figures={member.name: Figures(ns=1e6, bytes_op=None, index=0)},
        spawner=ProcessSpawner(tmp_path, perf_events=counting.SOFTWARE_TEST),
        env={"PATH": "/usr/bin:/bin"},
        means=counting.Means(perf_problem=None, valgrind_problem="not wanted here"),
        clock=lambda: 0.0,
        place=lambda request: dataclasses.replace(request, env=(*request.env, ("PLACED", "yes"))))
    got = suitecount.count_all(setting, [member.name], deadline=None)
    counts: Counts = got.counts[member.name]
    assert counts.method == "perf", counts.why
    assert counts.unit == "iteration" and counts.units == 200  # 0.2 s of 1 ms iterations
    # five counted runs (base's and head's at both sizes, base again's larger), and two
    # more where the page faults happened to read a move (they vary by a few a run: base
    # again and head are then counted once more, the larger run each); where they vary too
    # much to read as they are, larger runs alone bring each build to a sample
    units = [r.units for r in counts.runs or ()]
    arms = [r.arm for r in counts.runs or ()]
    first = 7 if arms[5:7] == ["base_again", "head"] else 5
    assert units[:first] == [2, 202, 2, 202] + [202] * (first - 4)
    if counts.samples is None:
        assert len(units) == first
    else:
        assert counts.samples in (suitecount.SAMPLES, suitecount.SAMPLES_MORE)
        assert units[first:] == [202] * (2 * counts.samples - (first - 2))
    for per in (*counts.base, *counts.base_again, *counts.head):
        assert per == pytest.approx(1.0, abs=0.15)  # one page fault an iteration
    how, runs, _seconds = got.suites["go"]
    assert runs == len(units) and "Nx" in how
