"""Where the budget goes in a suite whose harness is slow to start (pytest-benchmark's
collection, a big binary's loading): the real engine on a fake clock, with a Go-format
harness whose every run takes a start of its own and a share for each benchmark it serves
(issue 39: a harness run of 3 pending benchmarks took about 3 s, one of all 11 about 7 s).

- The budget plans a round of the benchmarks it admits at the pace their own runs took
  (``rounds.HarnessPace``), not at a run of all of them shared out.
- While a change is pending, a benchmark whose median reads no change and that the rest
  of the budget could not settle even alone waits, and its rounds go to the change
  (``Sequential._admit``); one whose median reads a change does not, however wide its
  interval."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest

from benchbot.config.settings import Overrides
from benchbot.core.model import Results
from benchbot.harness import formats
from benchbot.measure import engine
from benchbot.measure.progress import TerminalReporter
from benchbot.run.rounds import HarnessPace
from benchbot.run.runner import RawRun, SpawnRequest
from benchbot.sandbox import counting
from tests.clock import FakeClock
from tests.conftest import MakeRepo

START_S = 2.0  # a harness run's own start, seconds
PER_S = 0.5  # and each benchmark's share
CHANGE = "BenchmarkChange"
SAME = [f"BenchmarkSame{i}" for i in range(10)]
CONFIG = """version: 1
suites:
  - name: go
    run: [./suite.test, -test.run, '^$', -test.bench, .]
    format: go
    filter: ['-test.bench={regex}']
counts: off
profile: off
"""


class SlowStart:
    """A Go test binary as the engine sees it through its spawner: every run takes
    START_S plus PER_S for each benchmark it runs. ``BenchmarkChange`` is 25% slower in
    head, and every tenth run of base's reads 1.25 times as long, in the midst of head's
    runs, so that base's runs reach head's and a call waits for the 51 pairs from which the
    fast runs' side is bounded;
    the ten others are the same in both builds, and a third of their runs read 1.3-2.5
    times as long, so that their medians read no change and hundreds of pairs would not
    settle them."""

    def __init__(self, clock: FakeClock, hidden: float = 1.0, change: float = 1.25) -> None:
        self.clock = clock
        self.hidden = hidden  # head's factor for BenchmarkSame0 (1: the same as base)
        self.change = change  # and for BenchmarkChange
        self.rng = np.random.default_rng(17)
        self.base_runs = 0
        self.served: list[int] = []  # the benchmarks each run served

    def spawn(self, request: SpawnRequest) -> RawRun:
        head = Path(request.cwd).name == "head"
        pattern = next((a.split("=", 1)[1] for a in reversed(request.argv)
                        if a.startswith("-test.bench=")), ".")
        names = [n for n in (CHANGE, *SAME) if re.search(pattern, n)]
        self.served.append(len(names))
        lines = []
        for name in names:
            if name == CHANGE:
                self.base_runs += not head
                slow = 1.25 if not head and self.base_runs % 10 == 0 else 1.0
                ns = 10_000 * (self.change if head else slow) * self.rng.lognormal(0.0, 0.01)
            else:  # a third of runs slowed by 1.3-2.5 times, in either build alike
                slowed = self.rng.uniform(1.3, 2.5) if self.rng.random() < 1 / 3 else 1.0
                ns = 10_000 * slowed * self.rng.lognormal(0.0, 0.003)
                ns *= self.hidden if head and name == SAME[0] else 1.0
            lines.append(f"{name}-2 \t 1000 \t {ns:.1f} ns/op")
        wall = START_S + PER_S * len(names)
        self.clock.advance(wall)
        return RawRun(wall_ns=int(wall * 1e9), cpu_ns=int(wall * 1e9), maxrss_kib=1,
                      returncode=0, report=formats.parse("go", "\n".join(lines) + "\nPASS\n"))


def _compare(repo: Path, budget_s: float, log: io.StringIO,
             hidden: float = 1.0, change: float = 1.25) -> tuple[Results, SlowStart]:
    clock = FakeClock()
    fake = SlowStart(clock, hidden, change)
    doc = engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                        overrides=Overrides(budget=budget_s, seed=3)),
                         spawner_factory=lambda _: fake, clock=clock,
                         reporter=TerminalReporter(log, tty=False))
    return doc, fake


def test_a_pending_change_in_a_slow_harness_gets_the_rounds_the_others_could_not_use(
        make_repo: MakeRepo) -> None:
    # A round of all 11 takes 3 × 7.5 s: 800 s reach about 34 pairs of each, short of the
    # 51 the change needs. While the change is pending the ten others, whose medians read
    # no change and which would need thousands of pairs, wait (from the look at 10 or 15);
    # the change runs alone at 3 × 2.5 s a round, and is called. The others have what is
    # left after the call.
    repo = make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"})
    log = io.StringIO()
    doc, fake = _compare(repo, 800.0, log)
    by_name = {b.name.removeprefix("go/"): b for b in doc.benchmarks}
    change = by_name[CHANGE]
    assert change.verdict.outcome == "slower", change.verdict.reason
    assert change.measuring is not None and change.measuring.pairs >= 51
    for name in SAME:
        b = by_name[name]
        assert b.verdict.outcome == "inconclusive"  # never a call on unchanged builds
        assert b.measuring is not None and b.measuring.pairs < change.measuring.pairs
        assert b.measuring.settle_pairs is not None and b.measuring.settle_pairs > 200
    assert 1 in fake.served  # the change ran alone
    # the progress names each workload that waits, once, and for which change
    said = re.findall(r"benchbot: (\d+) workloads? \((.*?)\) would need more pairs than the "
                      r"budget left could give (?:them|it): the rounds go to the change pending "
                      r"in go/BenchmarkChange", log.getvalue())
    assert said and sum(int(n) for n, _ in said) == len(SAME), log.getvalue()
    assert not any("BenchmarkChange" in names for _, names in said)


def test_a_change_whose_runs_spread_wide_is_not_set_aside(make_repo: MakeRepo) -> None:
    # BenchmarkSame0 made 40% faster in head: a third of its runs slowed in either build
    # make its interval as wide as the unchanged ones', and the pairs it would need as many;
    # but its median reads -40%, past parity, so it keeps its rounds beside the pending change
    # and is called (set aside on its interval alone, it stopped at 29 pairs, checked)
    repo = make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"})
    log = io.StringIO()
    doc, _ = _compare(repo, 800.0, log, hidden=0.6)
    by_name = {b.name.removeprefix("go/"): b for b in doc.benchmarks}
    hidden = by_name[SAME[0]]
    assert hidden.verdict.outcome == "faster", hidden.verdict.reason
    assert SAME[0] not in log.getvalue()


def test_the_budget_is_spent_at_the_pace_of_the_runs_it_plans(make_repo: MakeRepo) -> None:
    # Planned at a run of all 11 shared out (7.5 s / 11 a benchmark), a round of the change
    # alone would read 3 × 0.7 s when it takes 3 × 2.5 s; planned at a median of runs serving
    # 11 (3 × 7.5 s), it would stop a round or more short (583.5 s of 600, checked). The pace
    # of runs by the benchmarks they serve ends measuring within a round of the budget.
    repo = make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"})
    doc, _ = _compare(repo, 600.0, io.StringIO())
    assert doc.spent is not None
    assert 600.0 - 3 * (START_S + PER_S) <= doc.spent.wall_s <= 600.0 + 1.0, doc.spent


def test_no_time_is_kept_for_profiles_that_no_call_could_have(
        make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    # Profiles asked (the default, "called") and valgrind present: a tenth of the budget is
    # kept for the profiled runs once a change is called. But a suite's benchmark is
    # profiled as its counted runs ran, and with counts off it has none: the time kept
    # would go unused (the live pytest-benchmark suite ended 62 s before its 600, measuring
    # nothing, and its +25% change stopped short of its pairs). With nothing called that
    # could be profiled, measuring ends within a round of the whole budget (before: at
    # 538.5 s of 600, checked, as live), and the report says why nothing was profiled.
    monkeypatch.setattr(counting, "means", lambda env, shown=None: counting.Means(
        perf_problem="no hardware counters (a test)", valgrind_problem=None))
    repo = make_repo({"benchbot.yml": CONFIG.replace("profile: off\n", "")},
                     {"README": "head\n"})
    doc, _ = _compare(repo, 600.0, io.StringIO(), change=0.6)
    assert doc.spent is not None
    change = next(b for b in doc.benchmarks if b.name == f"go/{CHANGE}")
    assert change.verdict.outcome == "faster"  # at 15 pairs: no run of head reaches base's
    assert change.measuring is not None and change.measuring.called_at == 15
    assert 600.0 - 3 * (START_S + PER_S) <= doc.spent.wall_s <= 600.0 + 1.0, doc.spent
    assert not doc.spent.profiling_s
    assert change.profile is not None and change.profile.runs == 0
    assert "profiled as its counted runs ran, and it had none" in (change.profile.error or "")


def test_a_harness_s_pace_is_read_by_the_benchmarks_a_run_serves() -> None:
    pace = HarnessPace()
    assert pace.seconds(3) is None
    for wall in (7.4, 7.5, 7.6):
        pace.add(11, wall)
    assert pace.seconds(11) == 7.5
    assert pace.seconds(1) == pytest.approx(7.5 / 11)  # one count run: in proportion
    for wall in (2.4, 2.5, 2.6):
        pace.add(1, wall)
    assert pace.seconds(1) == 2.5
    assert pace.seconds(3) == pytest.approx(2.0 + 0.5 * 3)  # a line through 1 and 11
    # neither a start nor a cost a benchmark below 0
    odd = HarnessPace()
    odd.add(1, 5.0)
    odd.add(10, 1.0)
    assert odd.seconds(5) == pytest.approx(3.0)  # no cost a benchmark: the mean
    # the latest runs count: the pace follows the machine
    for _ in range(HarnessPace.KEEP):
        pace.add(11, 9.0)
    assert pace.seconds(11) == 9.0
