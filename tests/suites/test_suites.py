"""Suites end to end: a real harness in a generated project (tests/suites/harnesses.py),
built and measured at two revisions by the engine, in the sandbox where bubblewrap works.

The head makes one benchmark of three do 1.5 times the work: that one must be called
slower, and the two others neither slower nor faster (level, or inconclusive where the
budget ran out on a loaded machine). A test skips, saying why, where the harness's
toolchain is not installed.

libtest's bencher lines have a generated project too (``harnesses.bencher``) but no test
here: libtest times each bench until its estimate settles, at least 0.3 s a bench and up
to 3 s on a loaded machine, so the sixty-odd runs of a comparison take minutes. Its
output is parsed in tests/harness/test_formats.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from benchbot.config.settings import Overrides
from benchbot.measure import engine
from benchbot.report import render_results
from benchbot.results.resultsdir import to_json as as_json
from tests import figurecheck
from tests.conftest import MakeRepo
from tests.suites import harnesses
from tests.suites.harnesses import Project

NOT_CALLED = ("level", "inconclusive")


def _needs(fmt: str) -> None:
    why = harnesses.missing(fmt)
    if why:
        pytest.skip(why)


def _compare(project: Project, validate: Callable[[Any], None],
             overrides: Overrides | None = None) -> dict[str, dict[str, Any]]:
    """Compare the project's two revisions; its suite's benchmarks by their own names."""
    results = engine.compare(engine.Request(repo=project.repo, base="base", head="HEAD",
                                            overrides=overrides or Overrides(seed=7)))
    for fmt in ("markdown", "html"):  # a real suite's report: no figure against its verdict
        assert figurecheck.problems(render_results(results, fmt)) == []
    doc = as_json(results)
    validate(doc)
    prefix = project.suite + "/"
    return {b["name"].removeprefix(prefix): b for b in doc["benchmarks"]}


def _summary(got: Mapping[str, Mapping[str, Any]]) -> str:
    return "; ".join(f"{name}: {b['verdict']['outcome']} ({b['verdict'].get('reason', '')})"
                     for name, b in got.items())


def _check(project: Project, got: Mapping[str, Mapping[str, Any]]) -> None:
    """The planted benchmark slower, the others not called, and no other benchmark.

    With fixed runs a call is confirmed in a phase of its own, which runs the harness for
    the planted benchmark alone: through the suite's filter where it has one, so a filter
    that selected nothing (or the wrong benchmark) would leave it invalid."""
    assert set(got) == set(project.expected), _summary(got)
    for name, want in project.expected.items():
        outcome = got[name]["verdict"]["outcome"]
        if want == "slower":
            assert outcome == "slower", _summary(got)
            assert "confirm" in got[name]["phases"]
        else:
            assert outcome in NOT_CALLED, _summary(got)
            assert "confirm" not in got[name]["phases"]


@pytest.mark.slow  # two g++ builds and about 190 runs of 0.05-0.1 s: 6-15 s at load 4-7
def test_google_benchmark_finds_the_planted_slowdown(make_repo: MakeRepo, validate) -> None:
    _needs("google-benchmark")
    project = harnesses.google_benchmark(make_repo)
    _check(project, _compare(project, validate))


@pytest.mark.slow  # two go builds (cold caches: 2-4 s) and about 190 runs of 0.03 s: 6-10 s at load 4-7
def test_go_finds_the_planted_slowdown(make_repo: MakeRepo, validate) -> None:
    _needs("go")
    project = harnesses.go(make_repo)
    _check(project, _compare(project, validate))


@pytest.mark.slow  # about 65 runs; pytest starting takes most of each one: 25-40 s at load 4-6
def test_pytest_benchmark_finds_the_planted_slowdown(make_repo: MakeRepo, validate) -> None:
    _needs("pytest-benchmark")
    project = harnesses.pytest_benchmark(make_repo)
    _check(project, _compare(project, validate))


@pytest.mark.slow  # about 65 runs of one worker process, 0.4-1 s each: 25-42 s at load 4-6
def test_pyperf_finds_the_planted_slowdown(make_repo: MakeRepo, validate) -> None:
    _needs("pyperf")
    project = harnesses.pyperf(make_repo)
    _check(project, _compare(project, validate))



def _needs_valgrind() -> None:
    import shutil

    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed (the counted runs need it)")


def _counted(project: Project, validate: Callable[[Any], None],
             overrides: Overrides | None = None) -> dict[str, dict[str, Any]]:
    got = _compare(project, validate, overrides)
    for name, want in project.expected.items():
        counts = got[name]["counts"]
        assert counts["method"] == "valgrind", (name, counts["why"])
        if want == "slower":  # 1.5 times the work per iteration (the harness's own call)
            assert counts["reading"] == "up" and 1.4 < counts["ratio"] < 1.6, counts
            verdict = got[name]["verdict"]
            if verdict["outcome"] != "slower":
                # Time moved the same way by surely less than the work (+31% to +35% of time
                # for +49% of instructions at load 1-3: caches). Where time did not call
                # it by its own rule, in a phase or in its confirmation, the rule calls
                # neither and says so; the counts above are this test's point.
                assert verdict["outcome"] == "inconclusive", _summary(got)
                assert verdict["reason_code"] in ("counts_disagree", "counts_ahead",
                                                  "not_confirmed"), _summary(got)
            else:  # time and the work; or time's own call, by less than the work moved
                assert verdict["settled_by"] in ("time", "time and instructions",
                                                 "instructions and time"), verdict
        else:
            assert counts["reading"] == "same" and abs(counts["ratio"] - 1) < 0.005, counts
            assert got[name]["verdict"]["outcome"] in NOT_CALLED, _summary(got)
    return got


@pytest.mark.slow  # two go builds, 18 counted runs under valgrind (about 1 s each) and 190 runs: 40-90 s at load 4-9
def test_go_counts_each_benchmark_per_iteration(make_repo: MakeRepo, validate) -> None:
    _needs("go")
    _needs_valgrind()
    project = harnesses.go(make_repo, top={"counts": "auto"}, name="gocount")
    got = _counted(project, validate)
    assert {got[n]["counts"]["unit"] for n in got} == {"iteration"}
    assert all(got[n]["memory"]["outcome"] == "level" for n in got)  # B/op the same


@pytest.mark.slow  # two g++ builds, 2 probes and 18 counted runs under valgrind and 190 runs: 40-90 s at load 4-9
def test_google_benchmark_counts_each_benchmark(make_repo: MakeRepo, validate) -> None:
    _needs("google-benchmark")
    _needs_valgrind()
    project = harnesses.google_benchmark(make_repo, top={"counts": "auto"}, name="gbcount")
    got = _counted(project, validate)
    # Debian's 1.7 takes no iteration count: a unit is a call (1.8 and later: an iteration)
    assert {got[n]["counts"]["unit"] for n in got} <= {"call", "iteration"}


@pytest.mark.slow  # two g++ builds, 2-4 probes and 18 counted runs under valgrind and 190 runs: 40-90 s at load 4-9
def test_google_benchmark_with_its_own_main_is_probed_by_what_it_did(make_repo: MakeRepo,
                                                                    validate) -> None:
    """A main that does not report unknown flags: 1.7 exits 0 on --benchmark_min_time=2x and
    runs by time, so an exit status says nothing. The probe reads the iterations its report
    says it ran, and the benchmarks are counted by calls (1.7) or iterations (1.8+)."""
    _needs("google-benchmark")
    _needs_valgrind()
    project = harnesses.google_benchmark(make_repo, top={"counts": "auto"}, name="gbmain",
                                         own_main=True)
    got = _counted(project, validate)
    assert {got[n]["counts"]["unit"] for n in got} <= {"call", "iteration"}


@pytest.mark.slow  # two g++ builds, counted runs and 3 profiled runs under valgrind, 190 runs: 40-90 s at load 4-9
def test_a_called_benchmark_is_profiled_as_its_counted_runs_ran(make_repo: MakeRepo,
                                                                 validate) -> None:
    """Every benchmark profiled on request (--profile), by the fixed-work run its counting
    used (benchbot.profiles.profiling): the planted one's profile names the planted kernel
    (its one function, mix, or BM_Hash where g++ inlined it) as carrying the change; the
    unchanged ones name no function. (A call is profiled without the request; whether time
    calls it under load is test_google_benchmark_counts_each_benchmark's question.)"""
    _needs("google-benchmark")
    _needs_valgrind()
    project = harnesses.google_benchmark(make_repo, top={"counts": "auto"}, name="gbprofile")
    got = _counted(project, validate, Overrides(seed=7, profile="all"))
    profile = got["BM_Hash"]["profile"]
    assert "error" not in profile, profile
    first = profile["functions"][0]
    assert "mix" in first["name"] or "BM_Hash" in first["name"], first
    assert first["share"] > 0.9 and first["delta"] > 0, first
    assert profile["runs"] == 3 and profile["stacks"]["head"]
    for name in ("BM_Sum", "BM_Fill/64"):
        assert "error" not in got[name]["profile"], got[name]["profile"]
        assert got[name]["profile"]["functions"] == [], got[name]["profile"]
