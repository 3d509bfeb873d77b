"""Counted runs of one benchmark (benchbot.suites.fixedwork): which harnesses can run a fixed
amount of work and how they are asked, what a counted run's report must say, the
arithmetic. Real harnesses are run in tests/suites/test_suites.py (slow tier)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchbot.harness import formats
from benchbot.sandbox.spawn import RawRun
from benchbot.suites import fixedwork

ENV = {"PATH": "/usr/bin", "GODEBUG": "madvdontneed=1"}


def _request(recipe: fixedwork.Recipe, *, bench: str = "BenchmarkSort/n=10", n: int = 40,
             filter_: tuple[str, ...] | None = ("-test.bench={regex}",),
             select: str | None = None) -> dict[str, object]:
    made = fixedwork.request(("./pkg.test", "-test.bench", ".", "-test.benchtime", "100ms"), "/w",
                             ENV, recipe=recipe, bench=bench, select=select or bench, n=n,
                             task=3, filter_=filter_, timeout_s=10.0, method="valgrind")
    return {"argv": made.argv, "env": dict(made.env), "timeout": made.timeout_s,
            "harness": made.harness, "count": made.count}


def test_which_harnesses_can_run_a_fixed_amount_of_work() -> None:
    argv = ("./b",)
    assert fixedwork.recipe("go", argv=argv, filter_=None) is fixedwork.GO
    assert fixedwork.recipe("google-benchmark", argv=argv, filter_=None, nx=True) is fixedwork.GB_NX
    assert fixedwork.recipe("google-benchmark", argv=argv, filter_=None) is fixedwork.GB_CALLS
    assert fixedwork.recipe("pyperf", argv=argv, filter_=None) is fixedwork.PYPERF
    assert fixedwork.recipe("pytest-benchmark", argv=argv, filter_=("{name}",)) is fixedwork.PYTEST
    assert "filter" in str(fixedwork.recipe("pytest-benchmark", argv=argv, filter_=None))
    assert "timing" in str(fixedwork.recipe("bencher", argv=argv, filter_=None))
    assert "protocol" in str(fixedwork.recipe("jsonl", argv=argv, filter_=None))
    # the go command would build (and count) the go tool itself
    assert "go test -c" in str(fixedwork.recipe("go", argv=("/usr/bin/go", "test"), filter_=None))
    # the units a report can say of a benchmark, and whether its setup cancels
    assert (fixedwork.GO.unit, fixedwork.GO.exact) == ("iteration", True)
    assert (fixedwork.GB_CALLS.unit, fixedwork.GB_CALLS.exact) == ("call", False)
    assert not fixedwork.PYTEST.auto and not fixedwork.PYPERF.auto  # Python starts slowly


def test_a_go_counted_run_selects_one_sub_benchmark_level_by_level() -> None:
    got = _request(fixedwork.GO)
    argv = got["argv"]
    assert argv[:5] == ("./pkg.test", "-test.bench", ".", "-test.benchtime", "100ms")
    # appended: the last of each flag wins, the user's own are kept before them
    assert argv[5:] == ("-test.run=^$", "-test.bench=^BenchmarkSort$/^n\\x{3D}10$",
                        "-test.benchtime=40x", "-test.count=1", "-test.cpu=1", "-test.benchmem",
                        "-test.memprofilerate=1073741824")
    env = got["env"]
    assert (env["GOMAXPROCS"], env["GOGC"]) == ("1", "off")
    assert env["GODEBUG"] == "madvdontneed=1,asyncpreemptoff=1"  # the user's kept
    assert got["harness"] == "go" and got["count"] == "valgrind"
    assert got["timeout"] == 400.0  # valgrind's slowdown


def test_google_benchmark_counted_runs_before_and_after_1_8() -> None:
    nx = _request(fixedwork.GB_NX, bench="BM_Sort/64", n=500)["argv"]
    assert "--benchmark_filter=^(BM_Sort[/]64)$" in nx
    assert "--benchmark_min_time=500x" in nx and "--benchmark_repetitions=1" in nx
    calls = _request(fixedwork.GB_CALLS, bench="BM_Sort/64", n=500)["argv"]
    assert "--benchmark_min_time=0" in calls and "--benchmark_repetitions=500" in calls
    assert "--benchmark_report_aggregates_only=true" in calls
    probe = fixedwork.probe(("./b", "--benchmark_out={output}", "--benchmark_format=json"), "/w",
                            ENV, recipe=fixedwork.GB_NX, bench="BM_Sort/64", select="BM_Sort/64",
                            task=0, filter_=None, timeout_s=30.0)
    # the work of a counted run's small size, read from its report, not counted
    assert "--benchmark_min_time=2x" in probe.argv and "--benchmark_list_tests=true" not in probe.argv
    assert probe.argv[:3] == ("./b", "--benchmark_out={output}", "--benchmark_format=json")
    assert probe.timeout_s == 30.0
    assert probe.count is None and probe.harness == "google-benchmark"  # read, not counted


def test_python_harnesses_are_asked_for_rounds_and_loops() -> None:
    pytest_argv = _request(fixedwork.PYTEST, bench="tests/b.py::test_x", filter_=("{name}",),
                           n=30)["argv"]
    assert "tests/b.py::test_x" in pytest_argv and "--benchmark-min-rounds=30" in pytest_argv
    assert "--benchmark-max-time=0" in pytest_argv
    pyperf = _request(fixedwork.PYPERF, bench="sum", n=30)
    assert pyperf["argv"][-5:] == ("--worker", "--worker-task=3", "--loops=30", "--values=1",
                                   "--warmups=0")
    assert pyperf["env"]["PYTHONHASHSEED"] == "0"


def _run(text: str, fmt: str = "go", *, instructions: int | None = 5_000_000,
         returncode: int = 0) -> RawRun:
    return RawRun(wall_ns=10, cpu_ns=10, maxrss_kib=1, returncode=returncode,
                  report=formats.parse(fmt, text), instructions=instructions,
                  stderr_tail="panic: boom\n" if returncode else "")


GO_LINE = "BenchmarkSort/n=10 \t 42 \t 100.0 ns/op\nPASS\n"


@pytest.mark.parametrize(("run", "n", "said"), [
    (_run(GO_LINE), 42, None),
    (_run(GO_LINE), 40, "ran 42 iterations, not 40"),
    (_run(GO_LINE, returncode=2), 42, "exited with status 2: panic: boom"),
    (_run(GO_LINE, instructions=None), 42, "was not counted"),
    (_run("BenchmarkA \t 42 \t 1 ns/op\n" + GO_LINE), 42, "reported BenchmarkA, BenchmarkSort/n=10, not"),
    (_run("hello\n"), 42, "left a report benchbot cannot read"),
])
def test_a_counted_run_counts_only_when_it_did_what_was_asked(run: RawRun, n: int,
                                                              said: str | None) -> None:
    got, problem = fixedwork.check(run, recipe=fixedwork.GO, bench="BenchmarkSort/n=10", n=n)
    if said is None:
        assert (got, problem) == (5_000_000, None)
    else:
        assert got is None and problem is not None and said in problem


def test_google_benchmark_calls_are_checked_by_the_aggregate_iterations() -> None:
    doc = ('{"benchmarks": [{"name": "BM_A_median", "run_name": "BM_A", "run_type": "aggregate", '
           '"aggregate_name": "median", "iterations": 12, "real_time": 5.0, "time_unit": "ns"}]}')
    run = _run(doc, "google-benchmark")
    assert fixedwork.check(run, recipe=fixedwork.GB_CALLS, bench="BM_A", n=12) == (5_000_000, None)
    assert fixedwork.check(run, recipe=fixedwork.GB_CALLS, bench="BM_A", n=13)[0] is None


def test_the_count_per_unit_is_the_difference_over_n() -> None:
    assert fixedwork.per_unit(1_000_000, 1_000_000 + 40 * 2_500, 40) == 2_500.0
    assert fixedwork.per_unit(1_000_000, 1_000_000, 40) is None  # no more work: not what was asked
    assert fixedwork.per_unit(1_000_000, 900_000, 40) is None


@settings(max_examples=60, deadline=None)
@given(start=st.integers(0, 10**9), per=st.floats(1, 10**7), n=st.integers(1, 10**6))
def test_start_and_setup_cancel_whatever_they_cost(start: int, per: float, n: int) -> None:
    small = start + round(fixedwork.SMALL * per)
    large = start + round((fixedwork.SMALL + n) * per)
    got = fixedwork.per_unit(small, large, n)
    assert got is not None and got == pytest.approx(per, rel=1e-9, abs=1 / n)


@settings(max_examples=60, deadline=None)
@given(ns=st.floats(0.5, 1e9), more=st.floats(1.0, 100.0))
def test_a_slower_benchmark_never_gets_more_units(ns: float, more: float) -> None:
    assert fixedwork.units_for(ns * more, "valgrind") <= fixedwork.units_for(ns, "valgrind")
    assert 1 <= fixedwork.units_for(ns, "valgrind") <= fixedwork.MAX_UNITS
    assert fixedwork.units_for(ns, "perf") >= fixedwork.units_for(ns, "valgrind")


@settings(max_examples=80, deadline=None)
@given(levels=st.lists(st.text(st.characters(min_codepoint=33, max_codepoint=0x2FF,
                                             blacklist_characters="/",
                                             blacklist_categories=("Cc", "Cf", "Cs")),
                               min_size=1, max_size=8),
                       min_size=1, max_size=3))
def test_a_go_pattern_has_one_anchored_level_per_level_of_the_name(levels: list[str]) -> None:
    name = "/".join(levels)
    got = formats.go_exact(name)
    parts = got.split("/")  # go test splits the pattern at each / (the escapes hold none)
    assert len(parts) == len(levels)
    assert all(p.startswith("^") and p.endswith("$") for p in parts)
