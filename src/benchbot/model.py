"""Frozen dataclasses passed between stages: no I/O, no formatting.

Units are in the names (``wall_ns``, ``maxrss_kib``); sequences are tuples so that
values can be shared between stages safely.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Outcome = Literal["slower", "faster", "level", "inconclusive", "invalid"]
OUTCOMES: tuple[Outcome, ...] = ("slower", "faster", "level", "inconclusive", "invalid")
Better = Literal["lower", "higher"]
Metric = Literal["wall", "reported"]
Order = Literal["alternate", "random"]
# What a failed run did; the workload's verdict names it (runner.FAILURE_REASONS).
RunFailure = Literal[
    "not_started",  # the program could not be started (no such file, not executable)
    "exit_status",  # it exited with a status other than 0, or was killed by a signal
    "timeout",  # it ran past the workload's timeout and was killed
    "no_metric",  # metric: reported, and the pattern matched nothing
    "bad_metric",  # the pattern matched something that is not a number
    "expect_missing",  # the `expect` pattern matched nothing
    "expect_mismatch",  # the `expect` text differed from an earlier run's
]

# Reason codes: the machine-readable half of Verdict.reason. The words live in the
# reason text; the code says which term decided, so reports and tests need not parse
# English.
REASON_CODES = (
    "few_runs",  # fewer than 10 pairs
    "spread",  # the interval is wider than parity: more runs would help
    "aa_noise",  # the A/A check's own error set the tolerance
    "floor",  # the floor of process timing set the tolerance
    "best_disagree",  # the ratio left its tolerance, the best runs did not (or the other way)
    "timing_modes",  # as best_disagree, with a single-run spread that shows two modes
    "aa_failed",  # the A/A check read base against itself as different
    "aa_aborted",  # the A/A check failed for too many workloads: nothing concluded
    "not_confirmed",  # the confirmation phase disagreed
    "below_parity",  # level, though the interval excludes 1: real but small
    "run_failed",  # a run exited non-zero, was killed, or timed out
    "expect_mismatch",  # the `expect` output differed between runs
    "no_metric",  # metric: reported, and the pattern did not match
    "too_fast",  # median below the floor, or a reported time of 0
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """The settings the verdict rule is judged with (spec/verdict.md, Defaults)."""

    parity: float = 0.02
    alpha: float = 0.05
    floor_ns: float = 25_000.0
    bootstrap: int = 2000
    seed: int = 0
    better: Better = "lower"
    min_runs: int = 10
    # k comparisons for Bonferroni (1 - alpha/k); 1 when confirmation is on.
    comparisons: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """The judgement of a candidate against a reference, with every figure it rests on.

    Ratios are candidate over reference (below 1: the candidate is faster). For
    ``better: higher`` metrics the samples were inverted first, so the same holds.
    Figures are None where they could not be computed (invalid, too few runs).
    """

    outcome: Outcome
    reason: str | None = None
    reason_code: str | None = None
    n: int = 0
    ratio: float | None = None
    ci: tuple[float, float] | None = None
    best_ratio: float | None = None
    median_ratio: float | None = None
    spread: float | None = None
    ci_half: float | None = None
    aa_noise: float = 0.0
    floor_med: float | None = None
    floor_best: float | None = None
    noise: float | None = None
    tolerance: float | None = None
    best_tolerance: float | None = None
    suggested_runs: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecord:
    """One execution of one workload in one arm: a fresh process, spawn to reap."""

    wall_ns: int
    cpu_ns: int
    maxrss_kib: int
    returncode: int
    timed_out: bool = False
    value_ns: float | None = None  # metric: reported (or a throughput, unitless) read from output
    expect: str | None = None  # the text captured by `expect`
    error: str | None = None  # why this run does not count, in words
    failure: RunFailure | None = None  # the same as a code


@dataclass(slots=True, kw_only=True)
class ArmSamples:
    """One arm's measured runs of one workload in one phase, in the order they were made.

    Mutable on purpose: the runner appends as it measures, so a cancellation keeps
    what was measured.
    """

    wall_ns: list[int] = field(default_factory=list)
    cpu_ns: list[int] = field(default_factory=list)
    maxrss_kib: list[int] = field(default_factory=list)
    value_ns: list[float] = field(default_factory=list)  # only for metric: reported
    expect: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def add(self, run: RunRecord) -> None:
        """Append one run's figures."""
        self.wall_ns.append(run.wall_ns)
        self.cpu_ns.append(run.cpu_ns)
        self.maxrss_kib.append(run.maxrss_kib)
        if run.value_ns is not None:
            self.value_ns.append(run.value_ns)
        if run.expect is not None:
            self.expect.append(run.expect)
        if run.error is not None:
            self.errors.append(run.error)
