"""Frozen dataclasses passed between stages: no I/O, no formatting.

Units are in the names (``wall_ns``, ``maxrss_kib``); sequences are tuples so that
values can be shared between stages safely.

Why one module of about 650 lines: every dataclass of the results document, and nothing
else, so that the schema (``schemas/results.schema.json``) and ``codec`` mirror one place.
It holds no logic to split.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from benchbot.core.codec import omitted_when_none, wrapped

Outcome = Literal["slower", "faster", "level", "inconclusive", "invalid"]
OUTCOMES: tuple[Outcome, ...] = ("slower", "faster", "level", "inconclusive", "invalid")
Better = Literal["lower", "higher"]
Metric = Literal["wall", "reported", "instructions"]
# How instructions are counted (docs/verdict.md, "A second signal"): perf_event_open around
# each measured run, or valgrind's cachegrind on a few runs of each arm apart from them.
CountMethod = Literal["perf", "valgrind"]
# What one unit of a suite's benchmark's counted work is (benchbot.suites.fixedwork): an iteration
# of its loop, a call of its function (google-benchmark 1.7), a round (pytest-benchmark),
# a loop (pyperf).
CountUnit = Literal["iteration", "call", "round", "loop"]
CountsMode = Literal["auto", "perf", "valgrind", "off"]
# Which workloads are profiled after the verdicts (benchbot.profiles.profiling): those called slower
# or faster, every one, or none.
ProfileMode = Literal["called", "all", "off"]
# How a workload's instruction counts read, head against base (Counts.reading).
CountsReading = Literal["same", "up", "down", "small", "unsteady"]
Order = Literal["alternate", "random"]
# What a failed run did; the workload's verdict names it (rounds.FAILURE_REASONS).
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
    "same_counts",  # time moved while the instruction counts did not: layout, environment, modes
    "layout",  # as same_counts, and base again from another place moved time by as much
    "counts_disagree",  # time moved one way, the instruction counts the other
    "rss_floor",  # memory: peak RSS at the floor the spawner's own peak sets
    "counts_ahead",  # a suite's benchmark: its work per iteration moved, time has not followed yet
    "misses_moved",  # the same instructions, but the last-level cache misses moved: not level on them
    "misses_disagree",  # the instructions moved, the misses take it back: no call on them
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """The settings the verdict rule is judged with (docs/verdict.md, Defaults)."""

    parity: float = 0.02
    alpha: float = 0.05
    floor_ns: float = 25_000.0
    bootstrap: int = 2000
    seed: int = 0
    better: Better = "lower"
    min_runs: int = 10
    # k comparisons for Bonferroni (1 - alpha/k); 1 when confirmation is on.
    comparisons: int = 1
    # Sequential measuring: the error this look may spend (two-sided); the interval is then
    # the distribution-free one from order statistics (None: the bootstrap percentile
    # interval at alpha/k).
    look_alpha: float | None = None
    # The best-run side judged on this quantile of single runs (None: the fastest run).
    low_quantile: float | None = None
    # False: call a change on the central estimate alone (benchmarks/ weigh the check).
    best_check: bool = True


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
    low_ratio: float | None = omitted_when_none(default=None)  # with Rule.low_quantile
    # At a look: how far low_ratio's interval reaches toward no change (the side a call
    # must clear) and away from it, as fractions.
    low_ci_half: float | None = omitted_when_none(default=None)
    low_ci_far: float | None = omitted_when_none(default=None)
    # A lower depth of the fast runs (stats.TAIL_QUANTILE, the 5th percentile): its ratio.
    tail_ratio: float | None = omitted_when_none(default=None)
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
    # Which signals settled the outcome, in words: "time", "time and instructions",
    # "instructions", "peak memory" (None: nothing settled it).
    settled_by: str | None = omitted_when_none(default=None)
    # The ratio over every pair measured, including those measured after the call for the
    # estimate alone (docs/verdict.md, "An estimate the stopping rule does not inflate"),
    # and its pairs; None where measuring stopped at the call.
    estimate: float | None = omitted_when_none(default=None)
    estimate_ci: tuple[float, float] | None = omitted_when_none(default=None)
    estimate_n: int | None = omitted_when_none(default=None)


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
    instructions: int | None = None  # user-space instructions retired (counts: perf or valgrind)
    cycles: int | None = None  # user-space cycles (perf, where the hardware counts them)
    ll_misses: int | None = None  # last-level cache misses (valgrind's simulated cache; perf)
    counts_scaled: bool = False  # perf multiplexed the counters: the values are estimates
    # A suite's benchmark: the memory its harness reported per iteration (Go's B/op and
    # allocs/op), None where it reported none.
    bytes_op: float | None = None
    allocs_op: float | None = None


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
    instructions: list[int] = field(default_factory=list)  # counts: perf, one per run
    cycles: list[int] = field(default_factory=list)
    ll_misses: list[int] = field(default_factory=list)  # counts: perf, where the CPU counts them
    bytes_op: list[float] = field(default_factory=list)  # a harness's B/op, one per run
    allocs_op: list[float] = field(default_factory=list)

    def extend(self, more: ArmSamples) -> None:
        """Append another arm's runs."""
        self.wall_ns += more.wall_ns
        self.cpu_ns += more.cpu_ns
        self.maxrss_kib += more.maxrss_kib
        self.value_ns += more.value_ns
        self.instructions += more.instructions
        self.cycles += more.cycles
        self.ll_misses += more.ll_misses
        self.bytes_op += more.bytes_op
        self.allocs_op += more.allocs_op

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
        if run.instructions is not None:
            self.instructions.append(run.instructions)
        if run.cycles is not None:
            self.cycles.append(run.cycles)
        if run.ll_misses is not None:
            self.ll_misses.append(run.ll_misses)
        if run.bytes_op is not None and run.allocs_op is not None:
            self.bytes_op.append(run.bytes_op)
            self.allocs_op.append(run.allocs_op)


# --- the results document (results.py reads and writes it; schemas/results.schema.json) ---

# The arms of each phase as the file names them: reference first, then candidate.
ARM_NAMES: dict[str, tuple[str, str]] = {
    "aa": ("base", "base_again"), "ab": ("base", "head"), "confirm": ("base", "head"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Revision:
    """One side of the comparison: the name it was asked by, and the commit it resolved to."""

    ref: str
    sha: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolInfo:
    """The benchbot that wrote the file."""

    name: str = "benchbot"
    version: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Family:
    """How many workloads of the whole comparison share each error control.

    A shard measures some of the workloads, but its verdicts are judged as part of the
    whole: a sequential look k spends alpha / (sequential · k (k + 1)), and the fixed
    design with confirmation off widens each interval for ``fixed`` comparisons
    (Bonferroni), whatever share of them this file holds.
    """

    sequential: int  # workloads measured until settled
    fixed: int  # workloads measured with a fixed number of pairs


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSettings:
    """The settings the comparison ran with (``settings`` in the file), after overrides."""

    runs: int
    warmup: int
    order: Order
    seed: int
    parity: float
    alpha: float
    confirm: bool
    aa: bool
    config: str | None = None  # the config's path, as read (in the repository, or given)
    repo: str | None = omitted_when_none(default=None)  # the repository's directory, as compared
    budget_s: float | None = omitted_when_none(default=None)  # sequential: the wall-time budget
    max_runs: int | None = omitted_when_none(default=None)  # sequential: the most pairs
    # the --config file given, absolute (None: the repository's own, at the base revision)
    config_file: str | None = omitted_when_none(default=None)
    # The workloads of the whole comparison each error control spans (a shard's too).
    family: Family | None = omitted_when_none(default=None)
    # sha256 of the effective config (after --only and the other settings), for a shard:
    # merge refuses shards of different configs.
    config_digest: str | None = omitted_when_none(default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class NoiseModel:
    """The rule's constants, and the rule in one sentence, so the file explains itself."""

    floor_ns: float
    parity: float
    rule: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Environment:
    """The machine while measuring, and what about it makes the figures less trustworthy."""

    cpu: str
    cores: int
    kernel: str
    python: str
    governor: str | None = None
    load_before: tuple[float, ...] = ()
    load_after: tuple[float, ...] = ()
    warnings: tuple[str, ...] = ()
    maxrss_floor_kib: int | None = omitted_when_none(default=None)
    # Other processes' CPU use while measuring, in CPUs (benchbot's own work left out).
    other_cpu: float | None = omitted_when_none(default=None)
    machine: Machine | None = omitted_when_none(default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class Machine:
    """Which machine measured: its host name, and a short id that stays the same across
    runs and tells apart machines that share a host name (a hash of /etc/machine-id, not
    the id itself, which is meant to stay private)."""

    hostname: str
    id: str

    @property
    def label(self) -> str:
        """The machine as a report names it: ``bench-1 (3f2a9c1d)``."""
        return f"{self.hostname} ({self.id[:8]})"


AAStatus = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AASummary:
    """The A/A check over all workloads: which failed it, and whether that aborted the run."""

    status: AAStatus
    failed: tuple[str, ...] = ()
    aborted: bool = False
    abort_fraction: float = 0.25


@dataclass(frozen=True, slots=True, kw_only=True)
class ArmRuns:
    """One arm's runs, in the order they were made: the judged values and the raw figures."""

    samples_ns: tuple[float, ...]  # the reported time, else the wall time (ns)
    wall_ns: tuple[int, ...] = ()
    cpu_ns: tuple[int, ...] = ()
    maxrss_kib: tuple[int, ...] = ()
    values: tuple[float, ...] | None = omitted_when_none(default=None)  # better: higher
    # counts: perf, every measured run's user-space instructions and cycles
    instructions: tuple[int, ...] | None = omitted_when_none(default=None)
    cycles: tuple[int, ...] | None = omitted_when_none(default=None)
    # counts: perf, every measured run's last-level cache misses, where the CPU counts them
    ll_misses: tuple[int, ...] | None = omitted_when_none(default=None)
    # a suite's benchmark: the memory its harness reported per iteration, every run (Go's
    # -benchmem: B/op and allocs/op)
    bytes_op: tuple[float, ...] | None = omitted_when_none(default=None)
    allocs_op: tuple[float, ...] | None = omitted_when_none(default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseRuns:
    """A phase's runs of one workload: two arms in interleaved pairs, and why it stopped."""

    arms: dict[str, ArmRuns]  # reference first: base/base_again (A/A), base/head (A/B)
    order: str  # "AB" or "BA" per pair: which arm ran first
    failure: str | None = None  # why the workload stopped, in words (may quote its output)
    failure_code: str | None = omitted_when_none(default=None)  # its reason code (REASON_CODES)
    failure_kind: RunFailure | None = omitted_when_none(default=None)  # what the failing run did


Design = Literal["pairs", "triplets"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Measuring:
    """How a workload was measured and why measuring stopped (``measuring`` in the file)."""

    design: Design  # pairs: the fixed phases; triplets: sequential rounds of base, base, head
    pairs: int  # the pairs (triplets) the verdict rests on
    stopped: str  # sequential.StopReason: settled, budget, max_runs, cannot_help, …
    why: str  # the same in words
    looks: tuple[int, ...] = ()  # the pair counts at which it was judged
    orders: str = ""  # triplets: the order of each round ("12H", "H21", …), concatenated
    settle_pairs: int | None = None  # about how many pairs would settle it, if it is not
    # A change called at this many pairs (or, measuring a history's step to a precision, a
    # level settled); the pairs after it were measured for the estimate alone
    # (Verdict.estimate), and the verdict is judged on these.
    called_at: int | None = omitted_when_none(default=None)
    # Seconds its timed runs took (a suite's benchmark: its share of each harness run, by
    # the time its harness reported for it), and seconds its counted runs took.
    timed_s: float | None = omitted_when_none(default=None)
    counted_s: float | None = omitted_when_none(default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class CountedRun:
    """One counted run of a suite's benchmark (benchbot.suites.fixedwork): which arm, how many
    units of work it was asked for, the instructions it took and its wall time (and its
    last-level cache misses, where they were counted)."""

    arm: Literal["base", "base_again", "head"]
    units: int
    instructions: int
    seconds: float
    ll_misses: int | None = omitted_when_none(default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class MissesAt:
    """The work with the misses in it at another weight than ``Misses.weight``: the low
    one, at which the misses must have moved for a call of time's to stand as memory
    (``Misses.low``; docs/verdict.md, "Memory beside the instructions")."""

    weight: float  # the instructions one miss is taken for in this work
    work_ratio: float | None = None  # head over base of the work at this weight
    noise: float | None = None  # how far one build's work at this weight varies
    reading: CountsReading | None = None  # how the work at this weight reads
    # A suite's benchmark: the pooled noise of the work at this weight
    pooled_noise: float | None = omitted_when_none(default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class Misses:
    """The last-level cache misses counted beside a workload's instructions, and how the
    work reads with them (``counts.misses`` in the file; docs/verdict.md, "Memory beside the
    instructions"). The work is instructions + ``weight`` x misses, per counted run (per unit
    of work for a suite's benchmark; perf: per measured run, arms[].ll_misses): ``weight``
    the high price of a miss, which holds a level or a call back, and ``low`` the same
    work at the low price (files from before have only the one weight, 100)."""

    how: str  # what counted them, in words: cachegrind's simulated cache, perf's counter
    weight: float  # the instructions one miss is taken for in the work
    base: tuple[float, ...] = ()  # the misses of base's counted runs (valgrind; per unit)
    base_again: tuple[float, ...] = ()
    head: tuple[float, ...] = ()
    ratio: float | None = None  # head over base, of the misses' medians
    work_ratio: float | None = None  # head over base of the work with the misses in it
    noise: float | None = None  # how far one build's work with the misses varies
    reading: CountsReading | None = None  # how the work with the misses reads
    reading_why: str | None = None
    # A suite's benchmark: the pooled noise of the work with the misses (as Counts')
    pooled_noise: float | None = omitted_when_none(default=None)
    # The misses keep the instructions' reading from settling (signals.memory_same where
    # the instructions read the same or small, signals.memory_agrees where they moved):
    # decided where the counts are read, so that what shows them need not judge again.
    holds_back: bool | None = omitted_when_none(default=None)
    # The work at the low weight (signals.MISS_WEIGHT_LOW); None in files from before
    low: MissesAt | None = omitted_when_none(default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class Counts:
    """A workload's instruction counts, how they were made and how they read
    (``counts`` in the file; docs/verdict.md, "A second signal")."""

    method: CountMethod | None  # None: not counted (``why`` says why)
    why: str  # why this method, or why none: "perf: the CPU's counters", "off in the config"
    every_run: bool = False  # perf: every measured run; valgrind: a few runs apart from them
    scaled: bool = False  # perf multiplexed its counters: the counts are scaled estimates
    # The counted runs' instructions per arm (valgrind's runs; with perf, arms[].instructions);
    # a suite's benchmark's: per unit of work (``unit``).
    base: tuple[float, ...] = ()
    base_again: tuple[float, ...] = ()
    head: tuple[float, ...] = ()
    ratio: float | None = None  # head over base, of the medians
    aa_ratio: float | None = None  # base again over base, of the medians
    noise: float | None = None  # how far one build's counts varied, as a fraction
    cycles_ratio: float | None = None  # perf, where cycles were counted
    # CPU time in user space over wall time, median of base's runs: the share of the time
    # instructions can account for.
    user_share: float | None = None
    reading: CountsReading | None = None  # how they read; None: not counted
    reading_why: str | None = None  # the reading in words, as the report gives it
    # A suite's benchmark (benchbot.suites.fixedwork): base, base_again and head above are counts
    # per unit of work, each (C(2n) - C(n)) / n from two counted runs of n and 2n units.
    unit: CountUnit | None = omitted_when_none(default=None)
    exact: bool | None = omitted_when_none(default=None)  # False: setup counted with the unit
    units: int | None = omitted_when_none(default=None)  # n
    runs: tuple[CountedRun, ...] | None = omitted_when_none(default=None)
    counted_s: float | None = omitted_when_none(default=None)  # the counted runs' seconds
    # How far one per-unit count varies, from the A/A of all the suite's benchmarks
    # (suitecount._pool_noise); ``noise`` is at least this.
    pooled_noise: float | None = omitted_when_none(default=None)
    # Where one benchmark's counts vary from process to process by themselves (a hash seed):
    # the processes counted per arm, whose counts are then compared as two samples, by
    # their means (suitecount._to_sample, signals.read_counts).
    samples: int | None = omitted_when_none(default=None)
    # The last-level cache misses beside the instructions; absent where none were counted
    # (perf without the event, files written before them).
    misses: Misses | None = omitted_when_none(default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfiledFunction:
    """One function whose own instructions moved beyond its noise (benchbot.profiles.profile)."""

    name: str  # as the binary names it (untrusted: escaped wherever shown)
    object: str  # the file name of the object it is in (the executable, a library)
    file: str  # its source file, relative to the arm's place where it lies in one
    base_self: int  # its own instructions, base's profiled run
    head_self: int
    base_inclusive: int  # with everything it called
    head_inclusive: int
    delta: int  # head_self - base_self
    share: float | None  # delta over the whole run's change (None: the total did not move)
    noise: int  # |base again - base| of its own instructions
    noise_inclusive: int  # the same of its inclusive instructions


@dataclass(frozen=True, slots=True, kw_only=True)
class FoldedStacks:
    """Base's and head's profiled runs as folded stacks (``"main;f;g"`` -> instructions of
    its last function itself; names not escaped): what a differential flame graph draws."""

    base: dict[str, int]
    head: dict[str, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class TimedFunction:
    """One function whose own CPU time per run moved beyond its noise in the sampled time
    profile (benchbot.profiles.timeprofile.compare)."""

    name: str  # as the binary names it (untrusted: escaped wherever shown)
    base_ns: float  # its own CPU time in one run of base (samples' periods over the runs)
    head_ns: float
    base_again_ns: float | None  # None: base again was not profiled
    delta_ns: float  # head_ns - base_ns
    share: float | None  # delta over the whole run's change (None: the total did not move)
    noise_ns: float  # the move it had to exceed (its samples' error, |base again - base|)


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeTable:
    """Where a change of time with the same work is (``profile.time`` in the file;
    docs/verdict.md, "Where the change is"): base, head and base again each run a few
    times under ``perf record -e cpu-clock`` (benchbot.profiles.timing), each function's
    own CPU time per run compared. ``error``: why there is none."""

    tool: str = "perf"
    event: str = "cpu-clock"  # the kernel's software clock: no hardware counter needed
    period_ns: int = 0  # CPU time between two samples
    runs: int = 0  # the profiled runs made, all arms together
    runs_per_arm: tuple[int, ...] = ()  # base, head, base again
    seconds: float = 0.0  # what they took together (perf's start and end included)
    base_ns: float = 0.0  # the whole run's CPU time per run, per arm
    head_ns: float = 0.0
    base_again_ns: float = 0.0
    samples: tuple[int, ...] = ()  # base, head, base again
    confined: bool = True  # made where no process of the run could reach it (the sandbox)
    functions: tuple[TimedFunction, ...] = ()  # named: largest change first
    more: int = 0  # functions named beyond those kept
    failures: tuple[str, ...] = ()  # profiled runs that did not exit 0 (their time counts)
    error: str | None = omitted_when_none(default=None)
    # per run, in ns of CPU time: what the flame graph draws (names not escaped)
    stacks: FoldedStacks | None = omitted_when_none(default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileTable:
    """Where a called change is (``profile`` in the file; docs/verdict.md, "Where the
    change is"): base, base again and head run once each under callgrind, their
    instructions (Ir) compared function by function. ``error``: why there is none."""

    tool: str = "callgrind"
    event: str = "Ir"  # instructions executed
    runs: int = 3  # the profiled runs (base, base again, head)
    seconds: float = 0.0  # what they took together
    base_total: int = 0  # the whole run's instructions, per arm
    base_again_total: int = 0
    head_total: int = 0
    floor: int = 0  # a function's change must exceed this (0.1% of base's total)
    functions: tuple[ProfiledFunction, ...] = ()  # named: largest change first
    more: int = 0  # functions named beyond those kept
    moved_within_noise: int = 0  # functions that moved, but not beyond their noise or floor
    error: str | None = omitted_when_none(default=None)
    stacks: FoldedStacks | None = omitted_when_none(default=None)
    # Where the work profile named nothing: the sampled time profile (absent where none
    # was tried; its ``error`` says why it could not be made)
    time: TimeTable | None = omitted_when_none(default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class Benchmark:
    """Everything measured and judged for one workload (``benchmarks[]`` in the file)."""

    name: str
    metric: Metric
    better: Better = "lower"
    unit: str = "ns"
    command: tuple[str, ...] = ()
    runs: int = 0
    parity: float = 0.02
    floor_ns: float = 25_000.0
    arms: dict[str, ArmRuns]  # base and head over the phases the verdict rests on
    phases: dict[str, PhaseRuns] = field(default_factory=dict)
    # In the file each phase's verdict sits in an object: {"verdict": {...}} or null.
    aa: Verdict | None = wrapped("verdict", default=None)
    ab: Verdict | None = wrapped("verdict", default=None)  # the A/B phase's, before confirmation
    verdict: Verdict
    confirmation: Verdict | None = wrapped("verdict", default=None)
    measuring: Measuring | None = omitted_when_none(default=None)
    machine: Machine | None = omitted_when_none(default=None)  # after a merge: where it ran
    counts: Counts | None = omitted_when_none(default=None)  # the instruction counts
    memory: Verdict | None = omitted_when_none(default=None)  # peak RSS, judged on its own
    # Where a called change is: its functions (benchbot.profiles.profile); absent where not profiled
    profile: ProfileTable | None = omitted_when_none(default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteRecord:
    """A suite as its harness reported it (``suites[]`` in the file; benchbot.suites.listing): which
    benchmarks were compared, and which one arm alone reported."""

    name: str
    format: str
    command: tuple[str, ...] = ()
    benchmarks: tuple[str, ...] = ()  # reported by both arms: compared, as <name>/<benchmark>
    added: tuple[str, ...] = ()  # reported by the head only
    removed: tuple[str, ...] = ()  # reported by the base only
    filtered: bool = False  # later rounds ran only the benchmarks still measuring
    not_found: tuple[str, ...] = ()  # named by /bench only=, reported by neither arm
    failure: str | None = omitted_when_none(default=None)  # why nothing of it was compared
    # Its benchmarks' counted runs (benchbot.suites.fixedwork): how (the recipe in words, or why
    # none), how many, and the seconds they took together.
    counting: str | None = omitted_when_none(default=None)
    counted_runs: int | None = omitted_when_none(default=None)
    counting_s: float | None = omitted_when_none(default=None)


Conclusion = Literal["success", "failure", "neutral"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    """Counts per outcome, the geometric mean ratio, and the check's conclusion."""

    slower: int = 0
    faster: int = 0
    level: int = 0
    inconclusive: int = 0
    invalid: int = 0
    geomean_ratio: float | None = None
    conclusion: Conclusion = "success"

    def count(self, outcome: Outcome) -> int:
        """How many workloads came out ``outcome``."""
        return int(getattr(self, outcome))


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckSettings:
    """The check (``status`` in the file): its name and the outcomes that make it fail."""

    fail_on: tuple[Outcome, ...] = ()
    name: str = "benchbot"


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxInfo:
    """How the code under test was confined."""

    kind: Literal["bubblewrap", "none"]
    description: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Shard:
    """One share of a comparison's workloads: ``--shard K/N``, the Action's ``shard``."""

    index: int  # 1 … count
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ShardInfo:
    """The shard a results file holds (``shard``), and how the whole was split, so that
    ``merge`` can tell shards of one split from another's and name what a missing shard
    would have measured."""

    index: int
    count: int
    plan: tuple[tuple[str, ...], ...] = ()  # every shard's workloads, shard 1 first


@dataclass(frozen=True, slots=True, kw_only=True)
class ShardRecord:
    """One shard of a merged comparison (``shards[]``): where it ran and what it measured."""

    index: int
    count: int
    machine: Machine | None = None
    seed: int  # each shard orders and judges its runs with a seed of its own
    workloads: tuple[str, ...]
    environment: Environment


@dataclass(frozen=True, slots=True, kw_only=True)
class FailedShard:
    """A shard whose job ran but left no usable results: why, in one line."""

    index: int
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Skipped:
    """A workload left out of the measuring, and why: ``not affected`` (its ``paths``
    cover none of the files the change touches; benchbot.git.skipping)."""

    name: str
    why: str
    paths: tuple[str, ...] = ()  # the globs that named what can affect it


@dataclass(frozen=True, slots=True, kw_only=True)
class Spent:
    """Where the comparison's wall time went, in seconds (``spent`` in the file)."""

    wall_s: float  # from the start of the comparison to its last run, builds included
    counting_s: float  # counted runs apart from the timed ones (valgrind; suites' benchmarks)
    timed_s: float  # timed runs, warm-ups and suites' discovery runs included
    # the profiled runs after the verdicts (benchbot.profiles.profiling); absent: none were made
    profiling_s: float | None = omitted_when_none(default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class Results:
    """A whole results file (schema_version 3): it explains its own verdicts."""

    schema_version: int = 3
    tool: ToolInfo
    created: str
    repository: str | None = None
    base: Revision
    head: Revision
    settings: RunSettings
    noise_model: NoiseModel
    environment: Environment
    aa: AASummary
    benchmarks: tuple[Benchmark, ...]
    summary: Summary
    status: CheckSettings = CheckSettings()
    sandbox: SandboxInfo | None = omitted_when_none(default=None)
    shard: ShardInfo | None = omitted_when_none(default=None)  # one shard's own file
    # A merged file: the shards that reported, those that did not or failed, and the
    # workloads nobody measured because of them.
    shards: tuple[ShardRecord, ...] | None = omitted_when_none(default=None)
    missing_shards: tuple[int, ...] | None = omitted_when_none(default=None)
    failed_shards: tuple[FailedShard, ...] | None = omitted_when_none(default=None)
    unmeasured: tuple[str, ...] | None = omitted_when_none(default=None)
    suites: tuple[SuiteRecord, ...] | None = omitted_when_none(default=None)
    # Workloads not measured because the change cannot affect them (``paths``); shown in
    # every report. None: none was skipped.
    skipped: tuple[Skipped, ...] | None = omitted_when_none(default=None)
    spent: Spent | None = omitted_when_none(default=None)  # where the wall time went

    @property
    def is_incomplete(self) -> bool:
        """Some shard of the comparison did not report: it concludes nothing as a whole."""
        return bool(self.missing_shards or self.failed_shards)
