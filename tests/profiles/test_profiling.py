"""Which workloads are profiled and how their runs are asked for (benchbot.profiles.profiling), with
spawners that stand in for the machine: the profiles themselves are real in
tests/profiles/test_profiling_measured.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchbot.config.load import parse_config_bytes
from benchbot.core.model import Counts
from benchbot.profiles import profiling
from benchbot.run.runner import Target
from benchbot.sandbox.callgrind import Function, Profile
from benchbot.sandbox.spawn import RawRun, SpawnRequest
from benchbot.suites import fixedwork


def _workloads() -> dict[str, object]:
    doc = parse_config_bytes(b"version: 1\nworkloads:\n  - {name: a, run: ./a, timeout: 10s}\n",
                             "x.yml")
    return {w.name: w for w in doc.workloads}


PLACES = {"base": Target(argv=("/b/a",), cwd=Path("/b")),
          "base_again": Target(argv=("/c/a",), cwd=Path("/c")),
          "head": Target(argv=("/h/a",), cwd=Path("/h"))}


def test_the_called_are_profiled_all_on_request_none_when_off() -> None:
    outcomes = {"a": "slower", "b": "level", "c": "faster", "d": None, "e": "invalid"}
    assert profiling.chosen(outcomes, "called") == ["a", "c"]
    assert profiling.chosen(outcomes, "all") == list(outcomes)
    assert profiling.chosen(outcomes, "off") == []


def test_a_workload_s_profiled_runs_are_its_own_run_under_callgrind_whole() -> None:
    w = _workloads()["a"]
    made = profiling.requests(w, PLACES, {"PATH": "/bin"})  # type: ignore[arg-type]
    assert isinstance(made, tuple) and [r.cwd for r in made] == ["/b", "/c", "/h"]
    assert all(r.count == "callgrind" and r.whole and r.timeout_s == 400.0 for r in made)
    assert made[2].argv == ("/h/a",)
    assert SpawnRequest.from_json(made[0].to_json()) == made[0]


def test_a_suite_benchmark_runs_as_its_counted_runs_did_or_not_at_all() -> None:
    doc = parse_config_bytes(b"version: 1\nworkloads:\n  - {name: a, run: ./a}\n", "x.yml")
    import dataclasses

    w = dataclasses.replace(doc.workloads[0], name="go/BenchmarkX", suite="go",
                            bench="BenchmarkX")
    counted = Counts(method="valgrind", why="valgrind", unit="iteration", units=300)
    made = profiling.requests(w, PLACES, {}, counted, fmt="go")
    assert isinstance(made, tuple)
    assert f"-test.benchtime={fixedwork.SMALL + 300}x" in made[0].argv
    assert all(r.count == "callgrind" and r.whole and r.harness == "go" for r in made)
    why = profiling.requests(w, PLACES, {}, Counts(method=None, why="not counted: off"), fmt="go")
    assert isinstance(why, str) and "it had none (not counted: off)" in why


class Refusing:
    """A spawner no run may reach."""

    def spawn(self, request: SpawnRequest) -> RawRun:
        raise AssertionError("no profiled run should have been started")


def test_no_profiled_run_starts_past_the_budget_or_that_would_end_past_it() -> None:
    w = _workloads()["a"]
    made = profiling.requests(w, PLACES, {})  # type: ignore[arg-type]
    got = profiling.run(Refusing(), {"a": made, "b": made, "c": "a suite's benchmark …"},  # type: ignore[arg-type]
                        clock=lambda: 100.0, deadline=130.0, estimates={"a": 45.0, "b": 31.0})
    assert got["a"].error == ("its profiled runs would take about 45 s, more than the 30 s "
                              "the budget has left")
    assert got["b"].error is not None and "about 31 s" in got["b"].error
    short = profiling.run(Refusing(), {"a": made}, clock=lambda: 129.1, deadline=130.0,  # type: ignore[arg-type]
                          estimates={"a": 1.5})
    assert short["a"].error == ("its profiled runs would take about 1.5 s, more than the "
                                "0.9 s the budget has left")
    assert got["c"].error == "a suite's benchmark …"
    late = profiling.run(Refusing(), {"a": made}, clock=lambda: 200.0, deadline=130.0)  # type: ignore[arg-type]
    assert late["a"].error == "the budget was spent before its profiled runs"


class Failing:
    """Base's run and head's are profiled; base again's fails."""

    def __init__(self) -> None:
        self.made: list[str] = []

    def spawn(self, request: SpawnRequest) -> RawRun:
        self.made.append(request.cwd)
        if request.cwd == "/c":
            return RawRun(wall_ns=1, cpu_ns=1, maxrss_kib=1, returncode=3)
        made = Profile(functions={("main", "a"): Function("main", "a", "a.c", 10)}, calls={},
                       total_ir=10)
        return RawRun(wall_ns=1, cpu_ns=1, maxrss_kib=1, returncode=0, profile=made,
                      instructions=10)


@pytest.mark.parametrize("parallel", [False, True])
def test_a_failed_run_gives_no_profile_and_says_which(parallel: bool) -> None:
    w = _workloads()["a"]
    made = profiling.requests(w, PLACES, {})  # type: ignore[arg-type]
    spawner = Failing()
    got = profiling.run(spawner, {"a": made}, clock=lambda: 0.0, parallel=parallel)  # type: ignore[arg-type]
    assert got["a"].error is not None and got["a"].functions == ()
    assert got["a"].error == "the profiled base again run exited with status 3"
    if parallel:  # each place in a thread: every run made
        assert sorted(spawner.made) == ["/b", "/c", "/h"]
    else:  # one after another, up to the first that failed
        assert spawner.made == ["/b", "/c"]
    spawner.made.clear()
    fine = profiling.run(spawner, {"a": (made[0], made[0], made[2])}, clock=lambda: 0.0,
                         parallel=parallel)
    assert fine["a"].error is None and fine["a"].runs == 3 and fine["a"].head_total == 10
