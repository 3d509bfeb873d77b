"""The view model: every decision a report makes (row order, what each cell rests on, which
notes to show) is a field or a property here, filled by ``build``; the templates only
format numbers and escape text.

The view holds numbers, enums and raw text. Templates format them with the filters of
``format`` (``{{ row.ratio | ratio }}``) and escape free text for their medium (``| md`` in
markdown; jinja2's autoescape in HTML), because text in a results file may come from the
code under test. Context such as the workflow run's URL is passed in, never read from a
global, so the view is a pure function of its inputs.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Literal

from benchbot.config.settings import duration_words
from benchbot.core.model import (
    ArmRuns,
    Better,
    Metric,
    Outcome,
    Revision,
    Spent,
)
from benchbot.report.profiles import ProfileView
from benchbot.verdict.figures import Figure
from benchbot.verdict.sequential import CALLS, FIRST_LOOK

CommandStyle = Literal["cli", "bench"]

# Order rows so that what needs a reader's attention comes first.
OUTCOME_ORDER: dict[Outcome, int] = {"slower": 0, "faster": 1, "invalid": 2, "inconclusive": 3,
                                     "level": 4}
ICONS: dict[Outcome, str] = {"slower": "🔴", "faster": "🟢", "level": "⚪", "inconclusive": "🟡",
                             "invalid": "⛔"}
# From this many workloads, the markdown table shows the changed ones (slower, faster,
# invalid, inconclusive) and folds the level ones into a compact list under it: a suite
# of hundreds stays readable at a glance.
FOLD_LEVEL_FROM = 20


@dataclass(frozen=True, slots=True, kw_only=True)
class Distribution:
    """A compact picture of some values: a histogram, quantiles, and how many modes."""

    counts: tuple[int, ...]  # HISTOGRAM_BINS bins from lo to hi (log-spaced)
    lo: float
    hi: float
    p10: float
    p50: float
    p90: float
    n: int
    modes: int  # 1, or 2 when the runs fall into two separated groups


NO_RUNS = ArmRuns(samples_ns=())
# A memory verdict in one word: more memory is the "slower" side.
MEMORY_WORDS: dict[Outcome, str] = {"slower": "more", "faster": "less", "level": "level",
                                    "inconclusive": "?", "invalid": "–"}


@dataclass(frozen=True, slots=True, kw_only=True)
class CountsView:
    """A workload's instruction counts as a report shows them."""

    method: str | None  # perf, valgrind; None: not counted
    why: str  # why this method, or why none (from the results file: escape it)
    # exact: perf on every run, unscaled; sampled: counted runs apart; "per iteration" (or
    # per call, round, loop): a suite's benchmark counted alone at n and 2n units of work
    kind: str | None
    letter: str | None  # the footnote that gives ``why`` where not counted
    ratio: float | None  # head over base
    base: float | None  # medians of the counted runs per arm
    base_again: float | None
    head: float | None
    runs: tuple[int, int, int]  # counted runs: base, base again, head
    cycles_ratio: float | None
    user_share: float | None
    reading: str | None
    reading_why: str | None
    unit: str | None = None  # a suite's benchmark: what base, base_again and head count per
    units: int | None = None  # n of its counted runs (n and 2n units)
    counted_s: float | None = None  # seconds its counted runs took
    # The last-level cache misses counted beside them, in words (None: not counted), and
    # their move where it matters: the work with them not the same within parity, or not
    # moved the way the instructions did (the cell shows it; None: it does not).
    misses_why: str | None = None
    misses_shown: float | None = None

    @property
    def per_unit(self) -> bool:
        return self.unit is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryView:
    """Peak memory (RSS) per arm and its own verdict."""

    outcome: Outcome
    word: str  # more, less, level, ?
    ratio: float | None
    ci: tuple[float, float] | None
    tolerance: float | None
    base_kib: float | None  # median peak RSS of each arm's runs
    head_kib: float | None
    reason: str | None

    floor_kib: float | None = None  # below_floor: the floor that hid the runs' own peak
    # A suite's benchmark: the memory its harness reported per iteration, medians of each
    # arm's runs (bytes and allocations), instead of peak RSS.
    harness: tuple[float, float, float, float] | None = None  # B/op base, head; allocs/op

    @property
    def called(self) -> bool:
        return self.outcome in ("slower", "faster")

    @property
    def below_floor(self) -> bool:
        """Not judged: the runs' peak sits at the floor the spawner's own peak sets."""
        return self.outcome == "invalid" and self.floor_kib is not None

    @property
    def noted(self) -> bool:
        """Worth a note of the workload's own: a call, or a verdict with a reason that is
        not the floor (which one line under the table explains for all)."""
        return self.called or (self.reason is not None and not self.below_floor)

    @property
    def note_word(self) -> str:
        return {"inconclusive": "not settled", "invalid": "not judged"}.get(self.outcome, self.word)


@dataclass(frozen=True, slots=True, kw_only=True)
class Settle:
    """The command that would settle an inconclusive workload: more pairs (a fixed count),
    or for sequential measuring a larger time budget."""

    style: CommandStyle
    name: str
    runs: int | None = None
    budget_s: float | None = None
    max_runs: int | None = None  # sequential: where the pairs needed pass the run's max_runs
    parity: float | None = None  # the run's parity, where it was not the default
    aa_off: bool = False
    argv: tuple[str, ...]  # the whole command, for the command-line style

    @property
    def text(self) -> str:
        """The command as a reader types it."""
        if self.style == "bench":
            words = [f"budget={duration_words(self.budget_s)}" if self.budget_s is not None
                     else f"runs={self.runs}"]
            if self.max_runs is not None:
                words.append(f"max_runs={self.max_runs}")
            if self.parity is not None:
                words.append(f"parity={self.parity:g}")
            if self.aa_off:
                words.append("aa=off")
            return " ".join(["/bench", *words, f"only={self.name}"])
        return shlex.join(self.argv)


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One workload: what the table shows, the note under it, and the runs behind it."""

    name: str
    outcome: Outcome
    icon: str
    better: Better
    # The figures the verdict rests on: base is the median of base's runs over the phases
    # judged; head is base x ratio (the median of per-pair ratios), not head's own median,
    # which would contradict the ratio whenever the machine moved between modes.
    base: float | None
    head: float | None
    unit: str  # ns: a time; value: a throughput the program reports; instructions; else its unit (MB/s)
    ratio: float | None
    ci: tuple[float, float] | None
    best_ratio: float | None
    tolerance: float | None
    best_tolerance: float | None
    spread: float | None
    parity: float
    aa_ratio: float | None
    aa_outcome: Outcome | None
    pairs: int  # pairs the verdict rests on
    design: str  # pairs (fixed phases) or triplets (sequential)
    stopped: str | None  # sequential: why measuring stopped (sequential.StopReason)
    stopped_why: str | None  # the same in words
    reason: str | None
    reason_code: str | None
    settle: Settle | None
    note: int | None  # footnote number in the markdown table
    # Pictures of the runs: per-pair ratios (A/B and confirmation), the A/A ratios, each arm.
    ratios: Distribution | None
    aa_ratios: Distribution | None
    base_runs: Distribution | None
    head_runs: Distribution | None
    # The runs themselves, in the order they were measured (the HTML report plots them).
    pair_ratios: tuple[float, ...]
    aa_pair_ratios: tuple[float, ...]
    base_series: tuple[float, ...]
    head_series: tuple[float, ...]
    phase_breaks: tuple[int, ...]  # pair indexes where a new phase (confirmation) began
    metric: Metric = "wall"
    # Which signals settled the verdict (Verdict.settled_by), in words; None: not recorded.
    settled_by: str | None = None
    # The call (or the level) was made at this many pairs; ratio and ci are then the
    # estimate over all ``estimate_n`` pairs measured (Verdict.estimate).
    called_at: int | None = None
    estimate_n: int | None = None
    counts: CountsView | None = None
    memory: MemoryView | None = None
    timed_s: float | None = None  # seconds of timed runs it took (a suite's: its share)
    counted_s: float | None = None  # seconds of counted runs it took
    # What the verdict's cell shows beside the outcome: the move of the signal that settled
    # it (benchbot.verdict.figures); None: the outcome alone.
    figure: Figure | None = None
    # Where a called change is: the functions that carry it (benchbot.report.profiles)
    profile: ProfileView | None = None

    @property
    def made_at(self) -> str:
        """What happened at ``called_at`` pairs, in words: a change was called, or level
        settled."""
        return "called" if self.outcome in CALLS else "settled"

    @property
    def second_signal(self) -> bool:
        """Settled with a signal other than time alone: the note names it."""
        return self.settled_by not in (None, "time") and self.metric != "instructions"


@dataclass(frozen=True, slots=True, kw_only=True)
class AAView:
    """The A/A check as the report tells it."""

    status: Literal["passed", "failed", "skipped"]
    failed: tuple[str, ...]
    aborted: bool
    compared: int  # workloads the check judged
    worst_name: str | None
    worst_ratio: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ShardView:
    """One shard of a comparison: which, where it ran, and what it measured."""

    index: int
    count: int
    machine: str | None  # the machine's label, as the report names it
    workloads: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ShardGap:
    """A shard that did not report (``reason`` None) or failed (``reason`` says why)."""

    index: int
    count: int
    reason: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ShardsView:
    """How a comparison was split over machines, as a report tells it.

    ``own`` is set for one shard's own file (its verdicts are its share's alone, until
    ``benchbot merge`` judges the whole); ``reported`` and ``gaps`` for a merged file.
    """

    own: ShardView | None
    total: int  # workloads of the whole comparison
    reported: tuple[ShardView, ...]
    machines: int  # distinct machines among the shards that reported
    gaps: tuple[ShardGap, ...]  # shards that did not report or failed, by index
    unmeasured: tuple[str, ...]  # their workloads, which nobody measured

    @property
    def is_incomplete(self) -> bool:
        """Some shard is missing or failed: the whole was not compared."""
        return bool(self.gaps)


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteView:
    """A suite as a report tells it: what was compared, what one arm alone reported."""

    name: str
    format: str
    compared: int
    added: tuple[str, ...]
    removed: tuple[str, ...]
    not_found: tuple[str, ...]
    failure: str | None
    # Every round ran the whole suite though some benchmarks had settled: a filter would
    # have run fewer.
    filter_hint: bool
    counting: str | None = None  # how its benchmarks' counted runs were made, or why none
    counted_runs: int | None = None
    counting_s: float | None = None
    # What the suite line says of counting: its benchmarks counted, the share of the
    # comparison's wall time the counted runs took, whether counting stopped early, and the
    # recipe the runs followed (None where no run was made: the notes say why).
    counted: int = 0
    counting_share: float | None = None
    stopped: bool = False
    how: str | None = None
    # The note of the suite's own invalid row, where its harness failed: the line refers to
    # it rather than quote the harness's stderr a second time.
    failure_note: int | None = None

    SHOWN = 20  # names listed of added or removed benchmarks; the rest are counted


@dataclass(frozen=True, slots=True, kw_only=True)
class Uncounted:
    """One reason instructions were not counted, as a footnote: its letter (the table's
    cells point to it), the reason, and the workloads it applies to."""

    letter: str
    why: str
    names: tuple[str, ...]

    SHOWN = 3  # names listed; the rest are counted ("and 4 more")


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportView:
    """Everything a markdown or HTML report shows."""

    title: str
    counts: dict[Outcome, int]
    geomean: float | None
    conclusion: str
    fail_on: tuple[Outcome, ...]
    base: Revision
    head: Revision
    rows: tuple[Row, ...]
    notes: tuple[Row, ...]
    aa: AAView
    environment: tuple[tuple[str, str], ...]
    load_before: tuple[float, ...]
    load_after: tuple[float, ...]
    other_cpu: float | None
    warnings: tuple[str, ...]
    runs: int
    sequential: bool  # some workloads were measured in triplets, within a budget
    budget_s: float | None
    max_runs: int | None
    warmup: int
    order: str
    seed: int
    parity: float
    confirm: bool
    aa_on: bool
    sandbox: str | None
    run_url: str | None
    bench_hint: bool
    created: str
    rule: str
    shards: ShardsView | None = None  # None: measured on one machine, not sharded
    # Why instructions were not counted, one footnote per distinct reason, naming its workloads.
    uncounted: tuple[Uncounted, ...] = ()
    suites: tuple[SuiteView, ...] = ()  # the harnesses' suites, in the config's order
    spent: Spent | None = None  # where the comparison's wall time went
    # Workloads not measured because the change cannot affect them (their ``paths``).
    skipped: tuple[str, ...] = ()
    # What a report cut to fit a limit leaves out (``shortened``), in words; the workflow
    # run's artifact that holds the whole report (None: not known here).
    omitted: tuple[str, ...] = ()
    artifact: str | None = None
    show_runs: bool = True  # the table of every workload's runs, in the details
    show_level: bool = True  # the folded list of level workloads

    @property
    def check_asked(self) -> bool:
        """Some outcome fails the check, or a check run is made (GitHub): a report made
        where neither holds (``benchbot compare`` without ``--fail-on``) says that no check
        was asked for, not "success" over a slower row."""
        return bool(self.fail_on) or self.bench_hint

    @property
    def all_skipped(self) -> bool:
        """Every workload was skipped as not affected: nothing was measured."""
        return bool(self.skipped) and not self.rows

    @property
    def measure_all(self) -> str:
        """What measures the skipped workloads too, as this report's reader would ask."""
        return "/bench all" if self.bench_hint else "--all"

    @property
    def is_folded(self) -> bool:
        """Enough workloads that the level ones are listed apart, folded."""
        return len(self.rows) >= FOLD_LEVEL_FROM

    @property
    def table_rows(self) -> tuple[Row, ...]:
        """The rows of the main markdown table: all, or the changed ones where folded."""
        return tuple(r for r in self.rows if r.outcome != "level") if self.is_folded else self.rows

    @property
    def out_of_budget(self) -> tuple[int, int]:
        """Where folded (a suite): the workloads the budget stopped before they settled, and
        how many of them it stopped before their first look, for a line of their own
        under the table (each one's note says it too, where the comment holds the notes)."""
        if not self.is_folded:
            return 0, 0
        short = [r for r in self.rows if r.stopped == "budget" and r.outcome == "inconclusive"]
        return len(short), sum(1 for r in short if r.pairs < FIRST_LOOK)

    @property
    def first_look(self) -> int:
        return FIRST_LOOK

    @property
    def table_notes(self) -> tuple[Row, ...]:
        """The notes under the main table: those of its rows (where folded, the level
        workloads' notes are folded with them)."""
        return tuple(r for r in self.notes if r.outcome != "level") if self.is_folded else self.notes

    @property
    def level_notes(self) -> tuple[Row, ...]:
        return tuple(r for r in self.notes if r.outcome == "level") if self.is_folded else ()

    @property
    def level_rows(self) -> tuple[Row, ...]:
        """The level workloads listed apart (folded), none where the table holds them."""
        return tuple(r for r in self.rows if r.outcome == "level") if self.is_folded else ()

    @property
    def levels_by_work(self) -> bool:
        """Some level workload listed apart (folded) was settled with the counts: the list
        gains a verdict column that says so ("level: same work; time within ±48.1%")."""
        return any(r.figure is not None and r.figure.by_counts for r in self.level_rows)

    @property
    def has_counts(self) -> bool:
        """Some workload was counted: the table has an instructions column."""
        return any(r.counts is not None and r.counts.method is not None for r in self.rows)

    @property
    def has_memory(self) -> bool:
        """Some workload's peak memory was judged: the table has a memory column."""
        return any(r.memory is not None and not r.memory.below_floor for r in self.rows)

    @property
    def has_misses(self) -> bool:
        """Some workload's cell shows its last-level misses."""
        return any(r.counts is not None and r.counts.misses_shown is not None for r in self.rows)

    @property
    def has_per_unit(self) -> bool:
        """Some suite's benchmark was counted alone, per unit of work."""
        return any(r.counts is not None and r.counts.per_unit for r in self.rows)

    @property
    def has_harness_memory(self) -> bool:
        """Some suite's benchmark's memory is what its harness reported (B/op, allocs/op)."""
        return any(r.memory is not None and r.memory.harness is not None for r in self.rows)

    @property
    def profiled(self) -> str | None:
        """What the profiled runs cost, in words ("profiled: 3 runs, 4.2 s"); None: none made."""
        made = [r.profile for r in self.rows if r.profile is not None and r.profile.runs]
        if not made:
            return None
        runs = sum(p.runs for p in made)
        timed = [p.time for p in made if p.time is not None and p.time.runs]
        seconds = self.spent.profiling_s if self.spent and self.spent.profiling_s is not None \
            else sum(p.seconds for p in made) + sum(t.seconds for t in timed)
        said = f"profiled: {runs} run{'' if runs == 1 else 's'}"
        if timed:
            time_runs = sum(t.runs for t in timed)
            said += f" and {time_runs} for time (perf)"
        return f"{said}, {seconds:.1f} s"

    @property
    def counting_share(self) -> float | None:
        """The share of the comparison's wall time its counted runs took."""
        s = self.spent
        return s.counting_s / s.wall_s if s is not None and s.wall_s > 0 else None

    @property
    def memory_floor_kib(self) -> float | None:
        """The floor under which peak memory was not judged, where it hid some workload's."""
        floors = [r.memory.floor_kib for r in self.rows
                  if r.memory is not None and r.memory.below_floor and r.memory.floor_kib]
        return max(floors) if floors else None

    @property
    def signals(self) -> bool:
        """The table shows instructions and memory beside time: to keep it within a comment's
        width, the best-run ratio and the tolerance move to the details."""
        return self.has_counts or self.has_memory

    @property
    def has_estimate(self) -> bool:
        """Some ratio shown is an estimate measured on past its call."""
        return any(r.called_at is not None for r in self.rows)

    @property
    def memory_calls(self) -> dict[str, int]:
        """How many workloads use more or less peak memory (none when no call)."""
        words = [r.memory.word for r in self.rows if r.memory is not None and r.memory.called]
        return {w: words.count(w) for w in ("more", "less") if w in words}

    @property
    def per_machine(self) -> bool:
        """Shards ran on several machines: the environment rows are one per shard."""
        return self.shards is not None and self.shards.machines > 1

    @property
    def aa_noisy(self) -> str:
        """Who the A/A check found too noisy: the runner, or the runners of the shards."""
        several = self.shards is not None and self.shards.machines > 1
        return "these runners are" if several else "this runner is"

    @property
    def interval_head(self) -> str:
        """The interval column's heading: 95% only where it is."""
        return "95% interval" if self.confirm and not self.sequential else "interval"

    @property
    def interval_words(self) -> str:
        """What the interval is, for the legend."""
        if self.sequential:
            return ("interval (distribution-free, at the error its last look may spend: "
                    "wider than 95%)")
        if not self.confirm:
            return "bootstrap interval (widened for the number of workloads)"
        return "95% bootstrap interval"


