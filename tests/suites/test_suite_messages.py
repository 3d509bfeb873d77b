"""What the report and the log say of a suite's counting and failures is true (issue 39,
item 6), through the real engine on a fake clock (``FakeGo`` of test_suite_counts): no
line announces counted runs where none are made, the suite line says what counting cost
(runs made, seconds, the share of the comparison's time) and names a recipe only where
runs followed it, each "Instructions not counted" note names its benchmarks, a benchmark
too fast to time is not "stopped: a run failed", and no line of a harness's stderr is
shown twice."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from benchbot.config.settings import Overrides
from benchbot.core.model import Results
from benchbot.harness import formats
from benchbot.measure import engine
from benchbot.report import render_comment, render_results
from benchbot.results.resultsdir import to_json
from benchbot.run.runner import RawRun, SpawnRequest
from benchbot.sandbox import counting
from tests.clock import FakeClock
from tests.conftest import MakeRepo
from tests.suites.test_suite_counts import CONFIG, SPECS, FakeGo, Spec


@pytest.fixture(autouse=True)
def valgrind_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """valgrind "installed" and no hardware counters, on any machine (a bare one too): the
    fake counts its runs."""
    monkeypatch.setattr(counting, "means", lambda env, shown=None: counting.Means(
        perf_problem="no hardware counters (a test)", valgrind_problem=None))


RECIPE = "-test.benchtime Nx"  # the Go recipe's words, as the suite line would name it


class Log(engine.Reporter):
    """The phases the engine announces: (name, workloads, runs)."""

    def __init__(self) -> None:
        self.phases: list[tuple[str, int, int]] = []

    def phase(self, name: str, workloads: int, runs: int) -> None:
        self.phases.append((name, workloads, runs))


class TooFast(FakeGo):
    """A Go suite whose BenchmarkNop reports 0 ns/op in every timed run (Go rounds a loop
    the compiler emptied down to 0): too fast to time, though no run failed."""

    def spawn(self, request: SpawnRequest) -> RawRun:
        raw = super().spawn(request)
        if request.count is not None or raw.report is None or self._fixed(request.argv) is not None:
            return raw
        lines = [f"{e.name}-2 \t 1000 \t {0.0 if e.name == 'BenchmarkNop' else e.value:.1f} ns/op"
                 for e in raw.report.entries]
        return replace(raw, report=formats.parse("go", "\n".join(lines) + "\nPASS\n"))


class Broken(FakeGo):
    """A harness that cannot start its benchmarks: every run exits 2 with a panic."""

    def spawn(self, request: SpawnRequest) -> RawRun:
        self.clock.advance(0.1)
        return RawRun(wall_ns=10**8, cpu_ns=0, maxrss_kib=1, returncode=2,
                      stderr_tail="panic: cannot open fixture data.bin\nexit status 2")


def _compare(repo: Path, fake: FakeGo, clock: FakeClock, log: Log | None = None,
             budget_s: float = 120.0) -> Results:
    # profile off: these messages are the counts' (no share of the budget kept for
    # profiled runs, which would move where the budget stops the planted benchmarks)
    return engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                         overrides=Overrides(budget=budget_s, seed=5,
                                                             profile="off")),
                          spawner_factory=lambda _: fake, clock=clock, reporter=log)


def _suite_line(md: str) -> str:
    [line] = [ln for ln in md.splitlines() if ln.startswith("Suite `go`")]
    return line


def _uncounted(md: str) -> list[str]:
    return [ln for ln in md.splitlines() if "Instructions not counted" in ln]


@pytest.mark.parametrize("how", ["off", "refused"])
def test_no_counted_runs_are_announced_or_claimed_where_none_are_made(
        make_repo: MakeRepo, how: str) -> None:
    """Counting off (or a pytest-benchmark suite where valgrind is too slow: the same, no
    plan), or a harness the probe refuses: the log announces no counting phase ("counted
    runs …: 5 workloads, 30 runs" was printed before), and the suite line names no recipe
    no run followed."""
    clock = FakeClock()
    config = CONFIG.replace("counts: auto", "counts: off") if how == "off" else CONFIG
    fake = FakeGo(SPECS, clock, by_time=how == "refused")
    log = Log()
    doc = _compare(make_repo({"benchbot.yml": config}, {"README": "head\n"}), fake, clock, log)
    assert fake.counted == []
    assert [p for p in log.phases if p[0] == "counting"] == []
    md = render_results(doc, "markdown")
    line = _suite_line(md)
    assert RECIPE not in line, line
    assert "none counted, no counted run made" in line, line
    # the reason is said once, in the note, which names the benchmarks
    [note] = _uncounted(md)
    # three named in the rows' order (a call first), and the rest counted
    named = re.match(r"Instructions not counted for `([^`]+)`, `([^`]+)`, `([^`]+)` and 2 more:",
                     note)
    assert named is not None, note
    rows = [b.name for b in doc.benchmarks]
    assert set(named.groups()) < set(rows), note
    assert ("off in the config" if how == "off" else "ran 1000 iterations, not 2") in note


def test_the_counting_phases_announced_are_the_runs_made(make_repo: MakeRepo) -> None:
    clock = FakeClock()
    fake = FakeGo(SPECS, clock)
    log = Log()
    doc = _compare(make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"}), fake, clock, log)
    counting = [p for p in log.phases if p[0] == "counting"]
    assert counting and sum(runs for _, _, runs in counting) == len(fake.counted)
    # the suite line: its benchmarks counted, the runs, their seconds and share, the recipe
    [suite] = doc.suites
    assert doc.spent is not None and suite.counting_s
    share = f"{100 * suite.counting_s / doc.spent.wall_s:.1f}%"
    for report in (render_results(doc, "markdown"), render_results(doc, "html")):
        assert (f"Instructions of each benchmark: 5 of 5 counted; {len(fake.counted)} counted "
                f"runs in {suite.counting_s:.0f} s, {share} of the comparison's time (") in report
        assert RECIPE in report


def test_counting_that_stopped_says_what_it_cost_and_each_stderr_line_once(
        make_repo: MakeRepo) -> None:
    """The first three benchmarks' counted runs all fail alike: their note names them and
    quotes the failure; the others' names them and says counting stopped, without quoting
    it again; the suite line counts the runs made (failed ones too) and their seconds."""
    clock = FakeClock()
    fake = FakeGo(SPECS, clock, all_fail=True)
    doc = _compare(make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"}), fake, clock)
    for report in (render_results(doc, "markdown"), render_comment(doc, 60_000)):
        assert report.count("panic: runtime error") == 1, report
        notes = _uncounted(report)
        assert len(notes) == 2
        assert all(re.search(r"Instructions not counted for `go/Benchmark\w+`", n) for n in notes)
        named = {n for note in notes for n in re.findall(r"`go/(Benchmark\w+)`", note)}
        assert named == set(SPECS)
        line = _suite_line(report)
        assert (f"0 of 5 counted; {len(fake.counted)} counted run"
                f"{'' if len(fake.counted) == 1 else 's'} in ") in line, line
        assert "then counting stopped" in line and RECIPE not in line


def test_a_benchmark_too_fast_to_time_is_not_said_to_have_failed(make_repo: MakeRepo,
                                                                  validate: Any) -> None:
    clock = FakeClock()
    fake = TooFast({**SPECS, "BenchmarkNop": Spec(ns=1.0, instructions=3)}, clock)
    doc = _compare(make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"}), fake, clock)
    validate(to_json(doc))
    [nop] = [b for b in doc.benchmarks if b.name == "go/BenchmarkNop"]
    assert nop.verdict.outcome == "invalid" and nop.verdict.reason_code == "too_fast"
    assert nop.measuring is not None and nop.measuring.why == "too fast to time"
    # and a file written before says "a run failed": the report reads the verdict
    old = replace(doc, benchmarks=tuple(
        replace(b, measuring=replace(b.measuring, why="a run failed"))
        if b is nop and b.measuring is not None else b for b in doc.benchmarks))
    for d in (doc, old):
        md = render_results(d, "markdown")
        [note] = [ln for ln in md.splitlines() if "`go/BenchmarkNop` (invalid)" in ln]
        assert "stopped: too fast to time" in note and "a run failed" not in md, note
        assert "a run failed" not in render_results(d, "html")


def test_a_failed_harness_s_stderr_is_shown_once(make_repo: MakeRepo) -> None:
    clock = FakeClock()
    doc = _compare(make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"}),
                   Broken(SPECS, clock), clock)
    [suite] = doc.suites
    assert suite.failure and "panic: cannot open fixture data.bin" in suite.failure
    for report in (render_results(doc, "markdown"), render_comment(doc, 60_000),
                   render_results(doc, "html")):
        assert report.count("panic: cannot open fixture data.bin") == 1, report
        assert "stopped: a run failed" not in report  # nothing was measured to stop
    md = render_results(doc, "markdown")
    assert "Suite `go` (go): nothing compared: its harness failed (note 1)." in md
    assert "1. `go` (invalid): the base run of the harness exited with status 2: panic: " in md
