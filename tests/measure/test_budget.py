"""Where the budget goes when it cannot carry every workload to a decision: a real
repository and the real engine, with a spawner that reports the times planted here and
lets them pass on a fake clock (``tests/clock.py``), so that a budget of seconds runs
short without being waited for."""

from __future__ import annotations

import io
import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from benchbot.config.settings import Overrides
from benchbot.core.model import ProfileMode, Results
from benchbot.measure import context, engine, measuring
from benchbot.measure.progress import TerminalReporter
from benchbot.run.runner import RawRun, SpawnRequest
from benchbot.sandbox.spawn import in_groups
from benchbot.verdict import sequential
from tests.clock import FakeClock
from tests.conftest import MakeRepo

BASE_S = 0.008  # each run takes about this long


class PlantedSpawner:
    """``change``'s head runs take 8% longer than its base runs, with little noise, and
    every 7th base run is slow (+8%, as noise only adds time: in the midst of head's runs),
    so that the builds' runs overlap and a call waits for the 51 pairs the fast runs' side
    needs; the other
    workloads' runs are the same in both builds and vary by about 30%, so that they need
    hundreds of pairs to be called level."""

    def __init__(self, change: str, clock: FakeClock, seed: int = 5) -> None:
        self.change, self.clock = change, clock
        self.rng = np.random.default_rng(seed)
        self.base_runs = 0

    def spawn(self, request: SpawnRequest) -> RawRun:
        name = request.argv[1]
        head = Path(request.cwd).name == "head"
        if name == self.change:
            self.base_runs += not head
            slow = 1.08 if not head and self.base_runs % 7 == 0 else 1.0
            wall = BASE_S * (1.08 if head else slow) * self.rng.lognormal(0.0, 0.01)
        else:
            wall = BASE_S * self.rng.lognormal(0.0, 0.3)
        self.clock.advance(wall)
        ns = int(wall * 1e9)
        return RawRun(wall_ns=ns, cpu_ns=ns, maxrss_kib=1, returncode=0)


CONFIG = "version: 1\nworkloads:\n" + "".join(
    f"  - {{name: {n}, run: [echo, {n}]}}\n" for n in ("noisy1", "change", "noisy2"))


def _compare(repo: Path, budget_s: float, log: io.StringIO | None = None,
             profile: ProfileMode | None = None) -> Results:
    clock = FakeClock()
    spawner = PlantedSpawner("change", clock)
    return engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                         overrides=Overrides(budget=budget_s, seed=11,
                                                             profile=profile)),
                          spawner_factory=lambda _: spawner, clock=clock,
                          **({"reporter": TerminalReporter(log, tty=False)} if log else {}))


def test_a_pending_change_keeps_its_rounds_when_the_budget_runs_short(make_repo: MakeRepo) -> None:
    # In rounds that take every workload in turn, 3 s buy about 35 triplets each, short
    # of the 51 pairs from which a change is called; given the budget first, the change
    # reaches them while the noisy workloads, far from settling, wait (and have what is
    # left once it is called: how much depends on whether profiles keep a share of the
    # budget, that is on valgrind being installed).
    repo = make_repo({"benchbot.yml": CONFIG})
    log = io.StringIO()
    doc = _compare(repo, budget_s=3.0, log=log)
    by_name = {b.name: b for b in doc.benchmarks}
    change = by_name["change"]
    assert change.measuring is not None
    assert change.verdict.outcome == "slower", change.verdict.reason
    assert change.measuring.pairs >= 51
    for name in ("noisy1", "noisy2"):
        b = by_name[name]
        assert b.measuring is not None and b.measuring.stopped == "budget"
        assert b.verdict.outcome == "inconclusive"  # never a call on unchanged builds
    # the progress says which waited for it (those whose medians read no change)
    said = re.findall(r"benchbot: \d+ workloads? \((.*?)\) would need more pairs than the budget "
                      r"left could give (?:them|it): the rounds go to the change pending in "
                      r"change\n", log.getvalue())
    assert said, log.getvalue()
    assert set(", ".join(said).split(", ")) <= {"noisy1", "noisy2"}


def test_with_budget_enough_every_workload_goes_on(make_repo: MakeRepo) -> None:
    # The same planted times with a budget that is not short at the first looks: the
    # noisy workloads get rounds beside the change until it is called.
    repo = make_repo({"benchbot.yml": CONFIG})
    doc = _compare(repo, budget_s=6.0)
    by_name = {b.name: b for b in doc.benchmarks}
    assert by_name["change"].verdict.outcome == "slower"
    for name in ("noisy1", "noisy2"):
        b = by_name[name]
        assert b.measuring is not None and b.measuring.pairs >= 34
        assert b.verdict.outcome in ("level", "inconclusive")


class InstantSpawner:
    """Runs that take no time, the same noisy times for both builds: far from settling."""

    def __init__(self, seed: int = 2) -> None:
        self.rng = np.random.default_rng(seed)
        self.runs = 0

    def spawn(self, request: SpawnRequest) -> RawRun:
        self.runs += 1
        ns = int(BASE_S * 1e9 * self.rng.lognormal(0.0, 0.3))
        return RawRun(wall_ns=ns, cpu_ns=ns, maxrss_kib=1, returncode=0)


def test_the_runs_so_far_are_not_sorted_again_after_every_run(
        make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    # The budget and the progress estimate ask every workload's time per triplet after
    # every run; taking its medians each time cost up to 8 ms between runs at 1,000
    # pairs. They are taken again once the runs have grown by an eighth.
    names = [f"w{i}" for i in range(4)]
    repo = make_repo({"benchbot.yml": "version: 1\ndefaults: {max_runs: 400}\nworkloads:\n"
                      + "".join(f"  - {{name: {n}, run: [echo, {n}]}}\n" for n in names)})
    medians = 0
    real = measuring._median

    def counted(values: Sequence[int]) -> float:
        nonlocal medians
        medians += 1
        return real(values)

    monkeypatch.setattr(measuring, "_median", counted)
    spawner = InstantSpawner()
    doc = engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                        overrides=Overrides(budget=600.0, seed=3)),
                         reporter=TerminalReporter(io.StringIO(), tty=False),
                         spawner_factory=lambda _: spawner)
    assert [b.measuring.pairs for b in doc.benchmarks if b.measuring] == [400] * 4
    assert all(b.verdict.outcome in ("inconclusive", "level") for b in doc.benchmarks)
    # Each workload's three arms, about 8 ln(400) + 8 times: some hundreds in all, where
    # once after every run it was 3 x 4 x 4,800 runs.
    assert spawner.runs > 4 * 3 * 400
    assert medians < 1000


class BatchingInstantSpawner(InstantSpawner):
    """InstantSpawner taking batches as the sandbox's worker does; counts the exchanges."""

    def __init__(self, seed: int = 2) -> None:
        super().__init__(seed)
        self.exchanges = 0

    def spawn_groups(self, groups: Sequence[Sequence[SpawnRequest]],
                     keys: Sequence[str]) -> list[list[RawRun]]:
        self.exchanges += 1
        return in_groups(self.spawn, groups, keys)


def test_batched_rounds_are_judged_at_exactly_the_scheduled_looks(
        make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    # Several rounds go to the worker in one exchange, never past a workload's next look:
    # each look sees exactly its scheduled number of triplets, as one round at a time did.
    names = ["w0", "w1"]
    repo = make_repo({"benchbot.yml": "version: 1\nworkloads:\n"
                      "  - {name: w0, run: [echo, w0], max_runs: 300}\n"
                      "  - {name: w1, run: [echo, w1], max_runs: 120}\n"})
    seen: dict[str, list[int]] = {n: [] for n in names}
    real = measuring.Sequential._look

    def look(self: measuring.Sequential, due: Sequence[str]) -> None:
        for name in due:
            seen[name].append(self.triplets.results[name].pairs)
        real(self, due)

    monkeypatch.setattr(measuring.Sequential, "_look", look)
    spawner = BatchingInstantSpawner()
    doc = engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                        overrides=Overrides(budget=600.0, seed=3)),
                         reporter=TerminalReporter(io.StringIO(), tty=False),
                         spawner_factory=lambda _: spawner)
    for b in doc.benchmarks:
        assert b.measuring is not None and b.measuring.stopped == "max_runs"
    assert seen["w0"] == list(sequential.looks(300))
    assert seen["w1"] == list(sequential.looks(120))
    assert spawner.exchanges < spawner.runs / 6  # a round of two triplets an exchange before


class SlowWarmUps:
    """Every run takes 0.4 s: six workloads' warm-ups alone (two runs each) take 4.8 s."""

    def __init__(self, clock: FakeClock) -> None:
        self.runs, self.clock = 0, clock

    def spawn(self, request: SpawnRequest) -> RawRun:
        self.runs += 1
        self.clock.advance(0.4)
        return RawRun(wall_ns=400_000_000, cpu_ns=400_000_000, maxrss_kib=1, returncode=0)


def test_the_warm_ups_stop_when_the_budget_is_spent(make_repo: MakeRepo) -> None:
    # A 2 s budget and warm-ups that would take 4.8 s: the warm-ups stop once the budget
    # is spent, so the comparison ends near its budget, and the workloads not reached
    # are reported as stopped by it, with no pairs and no verdict called.
    names = [f"w{i}" for i in range(6)]
    repo = make_repo({"benchbot.yml": "version: 1\nworkloads:\n" + "".join(
        f"  - {{name: {n}, run: [echo, {n}]}}\n" for n in names)})
    clock = FakeClock()
    spawner = SlowWarmUps(clock)
    start = clock()
    doc = engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                        overrides=Overrides(budget=2.0, seed=3)),
                         spawner_factory=lambda _: spawner, clock=clock)
    took = clock() - start
    # Nothing else takes time on the fake clock: the warm-ups stop at the first workload
    # to start past the budget, three workloads' warm-ups (2.4 s) in all.
    assert spawner.runs == 6  # the warm-ups of three workloads; 12 before
    assert took == pytest.approx(2.4), took
    for b in doc.benchmarks:
        assert b.measuring is not None and b.measuring.stopped == "budget"
        assert b.measuring.pairs == 0 and b.verdict.outcome == "inconclusive"


def test_what_would_settle_it_comes_from_the_verdict_reported(make_repo: MakeRepo) -> None:
    # Stopped by the budget: the pairs that would settle each unsettled workload are
    # worked out from the verdict the report shows (judged on all its pairs), and the
    # suggestion is at least the pairs it already has.
    repo = make_repo({"benchbot.yml": CONFIG})
    doc = _compare(repo, budget_s=3.0)
    for b in doc.benchmarks:
        assert b.measuring is not None
        if b.verdict.outcome == "inconclusive" and b.measuring.stopped == "budget":
            ab = b.ab
            expected = sequential.pairs_to_settle_uncapped(ab, b.parity)
            assert b.measuring.settle_pairs == expected
            assert expected > b.measuring.pairs
        else:
            assert b.measuring.settle_pairs is None


class HeadFailsLater:
    """``broken``'s head runs fail from the 5th on (exit 3, a line on stderr); every
    other run succeeds with steady times."""

    def __init__(self, broken: str) -> None:
        self.broken, self.head_runs = broken, 0
        self.rng = np.random.default_rng(4)

    def spawn(self, request: SpawnRequest) -> RawRun:
        ns = int(BASE_S * 1e9 * self.rng.lognormal(0.0, 0.005))
        if request.argv[1] == self.broken and Path(request.cwd).name == "head":
            self.head_runs += 1
            if self.head_runs >= 5:
                return RawRun(wall_ns=ns, cpu_ns=ns, maxrss_kib=1, returncode=3,
                              stderr_tail="segfault in the new code\n")
        return RawRun(wall_ns=ns, cpu_ns=ns, maxrss_kib=1, returncode=0)


def test_a_head_run_failing_fails_the_comparison_not_the_a_a_check(make_repo: MakeRepo) -> None:
    # Only head's runs fail: the A/B phase is invalid and says whose run failed, while
    # the A/A check (base against base) was measured and is judged like any other.
    repo = make_repo({"benchbot.yml": "version: 1\nworkloads:\n"
                      "  - {name: broken, run: [echo, broken]}\n  - {name: fine, run: [echo, fine]}\n"})
    spawner = HeadFailsLater("broken")
    doc = engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                        overrides=Overrides(budget=30.0, seed=5)),
                         spawner_factory=lambda _: spawner)
    broken = next(b for b in doc.benchmarks if b.name == "broken")
    assert broken.verdict.outcome == "invalid"
    assert broken.verdict.reason == "the head run exited with status 3: segfault in the new code"
    assert broken.phases["ab"].failure == broken.verdict.reason
    assert broken.phases["aa"].failure is None
    assert broken.aa is not None and broken.aa.outcome != "invalid"
    assert broken.measuring is not None and broken.measuring.stopped == "failed"
    assert "broken" not in doc.aa.failed
    fine = next(b for b in doc.benchmarks if b.name == "fine")
    assert fine.verdict.outcome == "level"


def test_a_called_change_measures_on_for_its_estimate_only_after_the_unsettled(
        make_repo: MakeRepo) -> None:
    # The change is called at 51 pairs; measuring on to 102 for its estimate alone comes
    # after the noisy workloads, which the budget cannot settle (they wait while the change
    # is pending, and have the rounds again once it is called). With 3.5 s the rounds after
    # the call all go to them and the estimate gets none; with 9 s, what is left once the
    # noisy workloads' next looks no longer fit goes to the estimate. The call stands on
    # the pairs it was made at either way.
    repo = make_repo({"benchbot.yml": CONFIG})
    for budget_s, estimated in ((3.5, False), (9.0, True)):
        # (no share of the budget kept for profiled runs: test_profiled_runs_have_their_share)
        by_name = {b.name: b for b in _compare(repo, budget_s=budget_s,
                                               profile="off").benchmarks}
        change, m = by_name["change"], by_name["change"].measuring
        assert m is not None and m.called_at == 51 and m.stopped == "settled"
        assert change.verdict.outcome == "slower" and change.verdict.n == 51
        noisy = [by_name[n].measuring for n in ("noisy1", "noisy2")]
        assert all(n is not None and n.stopped == "budget" and n.pairs > 34 for n in noisy)
        if estimated:
            assert m.pairs == sequential.estimate_pairs(51, 1000) == change.verdict.estimate_n
        else:
            assert m.pairs == 51 and change.verdict.estimate_n == 51  # from the pairs it has


class SteadySpawner:
    """The same program in both builds: every run about 8 ms, varying by about 3%."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock, self.rng = clock, np.random.default_rng(9)

    def spawn(self, request: SpawnRequest) -> RawRun:
        wall = BASE_S * self.rng.lognormal(0.0, 0.03)
        self.clock.advance(wall)
        ns = int(wall * 1e9)
        return RawRun(wall_ns=ns, cpu_ns=ns, maxrss_kib=1, returncode=0)


def test_a_level_is_measured_on_until_its_estimate_is_within_half_its_tolerance(
        make_repo: MakeRepo) -> None:
    # Settled level at n pairs, the workload is measured on for its estimate alone: at
    # least 50 pairs more, then until the estimate's interval is within half the tolerance
    # each way (at most twice the pairs it settled at). The level stands on its first n
    # pairs; the estimate comes from them all.
    repo = make_repo({"benchbot.yml": "version: 1\nworkloads:\n  - {name: same, run: [echo, same]}\n"})
    clock = FakeClock()
    spawner = SteadySpawner(clock)
    doc = engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                        overrides=Overrides(budget=600.0, seed=2)),
                         spawner_factory=lambda _: spawner, clock=clock)
    (same,) = doc.benchmarks
    m, v = same.measuring, same.verdict
    assert m is not None and v.outcome == "level" and m.stopped == "settled"
    assert m.called_at is not None and v.n == m.called_at  # judged where it settled
    assert m.called_at in m.looks
    assert m.pairs >= sequential.estimate_pairs(m.called_at, 1000) == m.called_at + 50
    assert v.estimate is not None and v.estimate_ci is not None and v.estimate_n == m.pairs
    assert v.tolerance is not None
    lo, hi = v.estimate_ci
    # within half the tolerance, or stopped at twice the pairs it settled at
    within = max(hi / v.estimate, v.estimate / lo) - 1 <= v.tolerance / 2 + 1e-9
    assert within or m.pairs == sequential.level_estimate_cap(m.called_at, 1000)
    assert lo <= v.estimate <= hi


def test_the_report_says_when_the_budget_stops_a_change_short_of_the_pairs_a_call_needs(
        make_repo: MakeRepo) -> None:
    # 1.2 s buy about 15 triplets of each workload: the change reads +8% but its runs
    # overlap base's (every 7th base run is slow), so it waits for the 51 pairs a call then
    # needs; the report says how far the budget reached, at what pace, and how far a call needs.
    repo = make_repo({"benchbot.yml": CONFIG})
    log = io.StringIO()
    doc = _compare(repo, budget_s=1.2, log=log)
    # and the progress says so at the first look, from the first rounds' pace
    assert re.search(r"at about \d+ ms a round the budget reaches about \d+ pairs; 51 pairs "
                     r"would take about [\d.]+ (ms|s): a change is called from 51 pairs on \(a "
                     r"faster one from 32\), or from 15 where base's and head's runs do not overlap", log.getvalue()), \
        log.getvalue()
    change = next(b for b in doc.benchmarks if b.name == "change")
    assert change.verdict.outcome == "inconclusive" and change.verdict.reason_code == "few_runs"
    assert change.measuring is not None and change.measuring.pairs < 51
    notes = [w for w in doc.environment.warnings if w.startswith("the budget reached")]
    assert len(notes) == 1, doc.environment.warnings
    assert re.match(rf"the budget reached {change.measuring.pairs} pairs at about \d+ ms a round, "
                    r"and 1 workload \(change\)", notes[0]), notes[0]
    assert ("read a change that waits for more: a change is called from 51 pairs on (a faster "
            "one from 32), or from 15 where base's and head's runs do not overlap; 51 pairs would take about") in notes[0]
    # with the budget for the change to reach 51 pairs (first, as a change pending) it is
    # called, and the report has no such warning
    doc = _compare(repo, budget_s=3.0)
    assert not [w for w in doc.environment.warnings if w.startswith("the budget reached")]


def test_profiled_runs_have_their_share_of_the_budget(make_repo: MakeRepo) -> None:
    # Where valgrind can profile, measuring ends PROFILE_RESERVE of the budget early, so
    # that the called change's profiled runs (here planted runs, which bring back no
    # profile: the table says why) end by the deadline; with profile off it takes it all.
    from benchbot.sandbox import counting

    if counting.find_valgrind(os.environ) is None:
        pytest.skip("valgrind not installed: nothing can be profiled, nothing is kept")
    repo = make_repo({"benchbot.yml": CONFIG})
    kept = _compare(repo, budget_s=9.0)
    whole = _compare(repo, budget_s=9.0, profile="off")
    timed = [sum(b.measuring.timed_s or 0 for b in doc.benchmarks if b.measuring)
             for doc in (kept, whole)]
    assert timed[0] < (1 - context.PROFILE_RESERVE / 2) * timed[1], timed
    change = next(b for b in kept.benchmarks if b.name == "change")
    assert change.verdict.outcome == "slower" and change.profile is not None
    # planted runs: made and without a profile, or not started where the estimate of
    # their time (the timed runs' times callgrind's slowdown) is more than the share kept
    error = change.profile.error or ""
    assert (change.profile.runs == 3 and "no profile" in error) or (
        change.profile.runs == 0 and "the budget has left" in error), change.profile
    assert all(b.profile is None for b in whole.benchmarks)
