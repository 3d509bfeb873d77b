"""A budget shared by hundreds of workloads (a suite's): sequential measuring with a fake
spawner whose runs pass on a fake clock (``tests/clock.py``), so that ten minutes of runs
are spent in a second or two of real time.

Sensible means: every workload the budget can carry to its first look gets there; the
budget goes to planted changes first; a workload that got no runs, or too few, says so
(stopped: the budget), never a verdict it has not earned; and judging, which looks at
every workload, happens at the looks only, not after every round.
"""

from __future__ import annotations

import io
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from benchbot.config.config import Config
from benchbot.config.load import parse_config
from benchbot.core.model import Environment, Results, Revision
from benchbot.github.post import REPORT_ROOM
from benchbot.measure import context as measure_context
from benchbot.measure import measuring
from benchbot.measure.context import Context, Measured, Progress, policy
from benchbot.measure.progress import TerminalReporter
from benchbot.report import render_comment
from benchbot.results import resultsdir
from benchbot.run.runner import RawRun, SpawnRequest, Target
from benchbot.sandbox import counting
from benchbot.verdict import sequential
from benchbot.verdict.judge import Judgement, Policy, judge
from tests.clock import FakeClock

BUDGET = "10m"


class SuiteSpawner:
    """Runs of ``run_s`` seconds: every 100th workload from the 7th is 8% slower in head
    with little noise; every 50th from the 3rd is very noisy; the rest vary by 2%."""

    def __init__(self, clock: FakeClock, run_s: float, seed: int = 3, untimed_s: float = 0.0) -> None:
        self.clock, self.run_s, self.untimed_s = clock, run_s, untimed_s
        self.rng = np.random.default_rng(seed)

    def spawn(self, request: SpawnRequest) -> RawRun:
        i = int(request.argv[1][1:])
        head = Path(request.cwd).name == "head"
        factor = 1.08 if head and i % 100 == 7 else 1.0
        wall = self.run_s * factor * self.rng.lognormal(0.0, 0.3 if i % 50 == 3 else 0.02)
        self.clock.advance(wall + self.untimed_s)  # untimed: a process's start, say
        ns = int(wall * 1e9)
        return RawRun(wall_ns=ns, cpu_ns=ns, maxrss_kib=1, returncode=0)


class Quiet:
    def phase(self, name: str, workloads: int, runs: int) -> None: ...
    def progress(self, phase: str, workload: str, done: int, planned: int,
                 left_s: float | None = None) -> None: ...
    def note(self, message: str) -> None: ...


def suite_config(count: int) -> Config:
    return parse_config(f"version: 1\nbudget: {BUDGET}\nworkloads:\n" + "".join(
        f"  - {{name: w{i:03d}, run: [bench, w{i:03d}]}}\n" for i in range(count)))


def context(config: Config, clock: FakeClock, spawner: SuiteSpawner,
            reporter: Progress) -> Context:
    """Measuring ``config``'s workloads with ``spawner`` on ``clock``, nothing counted."""
    names = [w.name for w in config.workloads]
    return Context(
        config=config, spawner=spawner, env={}, seed=1, reporter=reporter,
        base={n: Target(argv=("bench", n), cwd=Path("/w/base")) for n in names},
        head={n: Target(argv=("bench", n), cwd=Path("/w/head")) for n in names},
        policy=policy(config, 1), clock=clock,
        means=counting.Means(perf_problem="not here", valgrind_problem="not here"))


def measure(count: int, run_s: float, monkeypatch: pytest.MonkeyPatch
            ) -> tuple[Config, Measured, list[int]]:
    """Measure ``count`` workloads within the budget; also the workloads each judgement
    looked at, one entry per judgement made while measuring."""
    config = suite_config(count)
    clock = FakeClock()
    judged: list[int] = []
    real = measure_context.judge

    def counted(workloads: list, policy: Policy) -> Judgement:
        judged.append(len(workloads))
        return real(workloads, policy)

    monkeypatch.setattr(measure_context, "judge", counted)
    ctx = context(config, clock, SuiteSpawner(clock, run_s), Quiet())
    start = clock()
    measured = measuring.measure(ctx, deadline=start + config.budget_s)
    assert clock() - start <= config.budget_s + 3 * 2 * run_s  # at most a triplet over
    return config, measured, judged


@pytest.mark.slow  # judging 500 workloads at each look: 2 s, though on a fake clock
def test_a_budget_too_small_for_all_first_looks_measures_some_to_it_and_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # 500 workloads of 100 ms runs: a first look (10 triplets) costs 3 s each, the warm-ups
    # 0.2 s: ten minutes carry about 160 of them there. Those measured are measured to
    # the look that judges them, not spread over all at 4 pairs each, judged by none.
    config, measured, judged = measure(500, 0.1, monkeypatch)
    pairs = Counter(m.pairs for m in measured.measuring.values())
    assert sum(n for p, n in pairs.items() if p >= sequential.FIRST_LOOK) >= 150
    # Short of a look: only the one the budget's last seconds went to (one is always given
    # the next rounds), never a handful of pairs each.
    assert sum(n for p, n in pairs.items() if 0 < p < sequential.FIRST_LOOK) <= 1
    for m in measured.measuring.values():
        assert m.stopped == "budget" and m.why == "the time budget was spent"
        assert m.settle_pairs is not None  # the report says what would settle it
    assert len(judged) <= 3  # judged at the one look, and at the end
    # The comment says it in a line of its own, under the table of changed workloads.
    body = render_comment(document(config, measured), REPORT_ROOM)
    assert len(body) <= REPORT_ROOM
    unlooked = sum(n for p, n in pairs.items() if p < sequential.FIRST_LOOK)
    assert (f"⏱️ The time budget (10m) was spent before 500 workloads settled, {unlooked} of them "
            f"before their first look (10 pairs)") in body


def document(config: Config, measured: Measured) -> Results:
    judgement = judge(measured.workloads(config), policy(config, 1))
    env = Environment(cpu="test", cores=2, kernel="Linux", python="3", governor=None,
                      load_before=(0.0, 0.0, 0.0), load_after=(0.0, 0.0, 0.0))
    return resultsdir.build(
        config=config, seed=1, environment=env, repository=None, aa=judgement.aa,
        workloads=[resultsdir.WorkloadResult(config=w, phases=measured.phases[w.name],
                                          judged=judgement.workloads[w.name],
                                          measuring=measured.measuring.get(w.name))
                   for w in config.workloads],
        base=Revision(ref="main", sha="a" * 40), head=Revision(ref="topic", sha="b" * 40))


@pytest.mark.slow
def test_a_ten_minute_budget_over_500_workloads_reaches_every_first_look(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # 500 workloads of 10 ms runs: a round of all of them takes 15 s, ten minutes about
    # 35 rounds. Every workload gets to its first looks, but for those set aside while a
    # change was pending: their medians read no change and no budget could settle them
    # (past max_runs: here five of the ten very noisy ones, and three at about 1,030
    # pairs); the planted changes are called.
    config, measured, judged = measure(500, 0.01, monkeypatch)
    stopped = Counter(m.stopped for m in measured.measuring.values())
    assert set(stopped) <= {"settled", "budget", "cannot_help"}
    final = judge(measured.workloads(config), policy(config, 1)).workloads
    short = {n: m for n, m in measured.measuring.items() if m.pairs < 22}  # the third look
    assert 0 < len(short) <= 12 and min(m.pairs for m in short.values()) >= 10
    assert any(int(n[1:]) % 50 == 3 for n in short)  # a very noisy one among them
    for name, m in short.items():
        v = final[name].ab
        assert v is not None and v.outcome == "inconclusive" and v.ratio is not None
        assert abs(math.log(v.ratio)) <= math.log1p(config.workloads[0].parity)
        assert m.stopped == "budget" and m.settle_pairs is not None
        assert m.settle_pairs > config.workloads[0].max_runs
    for name, m in measured.measuring.items():
        verdict = final[name].ab
        if m.stopped == "budget" and verdict is not None and verdict.outcome == "inconclusive":
            assert m.settle_pairs is not None  # the report says what would settle it
        if m.stopped == "budget" and m.settle_pairs is None:  # its last pairs settled it
            assert verdict is not None and verdict.outcome != "inconclusive"
        if int(name[1:]) % 100 == 7:
            assert m.stopped == "settled" and name in measured.called
    # Every judgement looks at all 500; they are made at the looks (9 up to 200 pairs),
    # not after each of the 35 rounds.
    assert len(judged) <= len(sequential.looks(config.workloads[0].max_runs)) and set(judged) == {500}


def test_the_progress_never_promises_more_than_the_budget_leaves() -> None:
    """55 workloads whose runs take four times what they report (the rest is a process's
    start, which the runs' times leave out): the runs the budget has room for, reckoned
    from the reported times, are four times too many, and at the rate the progress line
    sees they would end far beyond the budget (it once said ETA 475m20s under ten
    minutes). The line says what the budget leaves instead."""
    config, clock, stream = suite_config(55), FakeClock(), io.StringIO()
    spawner = SuiteSpawner(clock, 0.2, untimed_s=0.6)
    ctx = context(config, clock, spawner, TerminalReporter(stream, tty=False, clock=clock))
    deadline = clock() + config.budget_s
    measuring.measure(ctx, deadline=deadline)
    lines = [line for line in stream.getvalue().splitlines() if ": run " in line]
    assert len(lines) > 10
    said = [re.search(r", (ETA|budget:) (?:(\d+)m)?(\d+)s( left)?$", line) for line in lines[1:]]
    assert all(said), lines
    seconds = [int(m[2] or 0) * 60 + int(m[3]) for m in said if m]
    assert max(seconds) <= config.budget_s
    assert sum(m[1] == "budget:" for m in said if m) > len(lines) / 2
