"""What measuring carries from look to look: the Context a comparison measures in (the
config, the spawner, the clock, the deadline, the reporter), what it has Measured so
far, and the rule's policy for it. Shared by the measuring loop (measuring) and
what it asks of the counts and the profiles (counted).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from benchbot.config.config import Config
from benchbot.core.model import (
    Counts,
    Family,
    Measuring,
    PhaseRuns,
    ProfileTable,
    Shard,
    SuiteRecord,
)
from benchbot.run.runner import Harness, Spawner, Target
from benchbot.sandbox import bwrap, counting
from benchbot.verdict.judge import Judgement, Policy, Workload, judge

PER_RUN_OVERHEAD_S = 0.002  # benchbot's own time around a run (spawn, reap, bookkeeping)


ETA_INTERVAL_S = 0.1  # the progress estimate's time per run: taken again this often


PENDING_LOOKS_AHEAD = 2  # a pending change is admitted with the budget for this many looks


# The share of the budget left when measuring starts that is kept for the profiled runs
# after the verdicts (benchbot.profiles.profiling), where they can be made: once a change is called,
# measuring ends that much before the deadline (Sequential.deadline), the profiles end by
# it; while nothing is called measuring has the whole budget (the suites' counted runs,
# before any call, stop that much early).
PROFILE_RESERVE = 0.1


class Progress(Protocol):
    """Where measuring reports how far it got (the engine's Reporter)."""

    def phase(self, name: str, workloads: int, runs: int) -> None: ...
    def progress(self, phase: str, workload: str, done: int, planned: int,
                 left_s: float | None = None) -> None: ...
    def note(self, message: str) -> None: ...


@dataclass(slots=True)
class Measured:
    """What measuring recorded, per workload: its phases and how it was measured."""

    phases: dict[str, dict[str, PhaseRuns]]
    measuring: dict[str, Measuring] = field(default_factory=dict)
    looks: dict[str, int] = field(default_factory=dict)  # triplets: looks taken
    counts: dict[str, Counts] = field(default_factory=dict)  # how each workload was counted
    # The spawner's own peak RSS: no run's peak reads below it (the memory verdict's floor).
    maxrss_floor_kib: int | None = None
    # triplets: a change called at this many pairs, measured on for the estimate alone
    called: dict[str, int] = field(default_factory=dict)
    # With suites: the config with each suite's benchmarks as workloads, and what each
    # suite's harness reported (None: the config measured had no suites).
    config: Config | None = None
    suites: tuple[SuiteRecord, ...] = ()
    # Seconds spent on counted runs apart from the timed ones, and on the suites'
    # discovery runs (timed, but no workload's own).
    counting_s: float = 0.0
    discovery_s: float = 0.0
    timed_s: dict[str, float] = field(default_factory=dict)  # each workload's timed runs
    # Workloads whose base again ran from base's own place, not its copy: why; and why
    # every workload's did, where base's build could not be copied (engine.copy_built).
    again_fallback: dict[str, str] = field(default_factory=dict)
    again_note: str | None = None
    # The budget stopped workloads that read a change short of the pairs a call needs:
    # how far it reached and how far a call needs (a warning of the report's).
    budget_note: str | None = None
    # Where a called change is (benchbot.profiles.profiling): each profiled workload's table, and
    # the seconds the profiled runs took together.
    profiles: dict[str, ProfileTable] = field(default_factory=dict)
    profiling_s: float = 0.0

    def workloads(self, config: Config) -> list[Workload]:
        """What judging needs of every workload."""
        return [
            Workload(name=w.name, parity=w.parity, floor_ns=w.effective_floor_ns, better=w.better,
                     phases=self.phases[w.name],
                     design="triplets" if w.name in self.looks else "pairs",
                     looks=self.looks.get(w.name, 1), counts=self.counts.get(w.name),
                     metric=w.metric, called_at=self.called.get(w.name),
                     memory_parity=w.memory_parity, maxrss_floor_kib=self.maxrss_floor_kib,
                     judge_memory=w.suite is None)
            for w in config.workloads
        ]


def policy(config: Config, seed: int, *, family: Family | None = None,
           abort: bool = True) -> Policy:
    """The comparison-wide settings of the verdict rule. ``family``: the whole
    comparison's, when ``config`` holds a shard of it; ``abort`` False while a shard
    measures, so that its own A/A check never stops it short of what ``merge`` needs to
    apply the abort rule to all shards together."""
    return Policy(alpha=config.alpha, confirm=config.confirm, aa=config.aa.enabled,
                  abort_fraction=config.aa.abort_fraction, seed=seed, family=family,
                  abort=abort)


@dataclass(slots=True, kw_only=True)
class Context:
    """What both flows need: the config, the targets of each arm, where to run."""

    config: Config
    base: Mapping[str, Target]
    head: Mapping[str, Target]
    spawner: Spawner
    env: Mapping[str, str]
    seed: int
    reporter: Progress
    policy: Policy
    clock: Callable[[], float] = time.monotonic  # seconds; the budget's deadline is on it
    # What instructions can be counted with here (None: probed when measuring starts,
    # without the sandbox's view).
    means: counting.Means | None = None
    # Suites: how each suite's harness is run, and the seconds a warm-up run of each of
    # their benchmarks took (its share of its discovery's runs).
    harnesses: dict[str, Harness] = field(default_factory=dict)
    warmup_s: dict[str, float] = field(default_factory=dict)
    # Each suite benchmark's figures from its discovery run (suites.Figures)
    figures: dict[str, Any] = field(default_factory=dict)
    # False: a change called stops there, not measured on for its estimate (bisect's steps
    # that name no commit need the call, not the figure).
    estimate: bool = True
    # A history's step (benchbot.history.walk): every settled workload, level too, is measured on
    # until the trend's estimate of the step is within this fraction each way (its 95%
    # interval, trend.half_width). None: calls only, to sequential.ESTIMATE_HALF.
    precision: float | None = None
    # Where base again runs from: base's build in a place of its own, as head's stands
    # (docs/verdict.md, "Placement"); a workload not in it (or None) runs it from base's.
    again: dict[str, Target] | None = None
    # A shard of a comparison: its share of the suites' benchmarks alone is measured
    # (suites.discover), judged with the whole's family (None: not sharded).
    shard: Shard | None = None
    # The sandbox the runs are made in: a row whose change is in time, not in work, is
    # profiled for time in it (benchbot.profiles.timing). None: no time profile is made.
    sandbox: bwrap.Sandbox | None = None

    def again_of(self, name: str) -> Target:
        """Where ``name``'s base again runs from."""
        return (self.again or {}).get(name) or self.base[name]

    def fall_back(self, name: str, why: str, measured: Measured) -> None:
        """Base again from base's own place for ``name``, and why (a warning the report shows)."""
        if self.again is not None and name in self.again:
            del self.again[name]
            measured.again_fallback[name] = why

    def judged(self, measured: Measured) -> Judgement:
        return judge(measured.workloads(self.config), self.policy)
