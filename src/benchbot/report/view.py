"""Results -> view model: every decision a report makes (row order, what each cell rests
on, which notes to show) is made here; the templates only format numbers and escape text.

The view holds numbers, enums and raw text. Templates format them with the filters of
``format`` (``{{ row.ratio | ratio }}``) and escape free text for their medium (``| md`` in
markdown; jinja2's autoescape in HTML), because text in a results file may come from the
code under test. Context such as the workflow run's URL is passed in, never read from a
global, so the view is a pure function of its inputs.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from benchbot.config.settings import (
    DEFAULT_PARITY,
    MAX_BUDGET_S,
    MAX_RUNS,
    ONLY_NAME,
    UNIT_LABEL,
    duration_words,
)
from benchbot.core.model import (
    OUTCOMES,
    ArmRuns,
    Benchmark,
    Better,
    Counts,
    Environment,
    Machine,
    Metric,
    Outcome,
    PhaseRuns,
    Results,
    Revision,
    Spent,
    SuiteRecord,
)
from benchbot.report.profiles import ProfileView, profile_view
from benchbot.results.shards import suite_items
from benchbot.verdict.figures import Figure, figure_of
from benchbot.verdict.sequential import CALLS, FIRST_LOOK
from benchbot.verdict.sequential import why as sequential_why

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
HISTOGRAM_BINS = 12
MIN_FOR_MODES = 20
# A unimodal normal sample of 30 to 200 values splits at best into halves about 3 to 4.6
# standard deviations apart (99.9th percentile, seeded simulation); two timing modes 13%
# apart with 1-2% spread each split 10 or more apart.
MODE_SEPARATION = 4.8


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


_NO_RUNS = ArmRuns(samples_ns=())
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
        made = [r.profile for r in self.rows if r.profile is not None]
        if not made:
            return None
        runs = sum(p.runs for p in made)
        seconds = self.spent.profiling_s if self.spent and self.spent.profiling_s is not None \
            else sum(p.seconds for p in made)
        return f"profiled: {runs} run{'' if runs == 1 else 's'}, {seconds:.1f} s"

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


def build_view(doc: Results, *, run_url: str | None = None, command_style: CommandStyle = "cli",
               title: str = "benchbot", artifact: str | None = None) -> ReportView:
    """Turn a results document into the view every report format renders (``artifact``:
    the workflow run's artifact that holds the whole report, named where one is cut)."""
    ordered = sorted(doc.benchmarks, key=lambda b: (OUTCOME_ORDER[b.verdict.outcome], b.name))
    rows: list[Row] = []
    whys: dict[str, str] = {}  # why not counted -> its footnote letter
    for bench in ordered:
        counts = bench.counts
        if counts is not None and counts.method is None and counts.why not in whys:
            whys[counts.why] = chr(ord("a") + len(whys)) if len(whys) < 26 else f"z{len(whys)}"
        note = sum(1 for r in rows if r.note is not None) + 1 if _has_note(bench) else None
        rows.append(_row(bench, note, _settle(bench, doc, command_style), whys,
                         floor_kib=doc.environment.maxrss_floor_kib))
    env = doc.environment
    s = doc.settings
    return ReportView(
        title=title, counts={o: doc.summary.count(o) for o in OUTCOMES},
        geomean=doc.summary.geomean_ratio, conclusion=doc.summary.conclusion,
        fail_on=doc.status.fail_on, base=doc.base, head=doc.head, rows=tuple(rows),
        notes=tuple(r for r in rows if r.note is not None), aa=_aa_view(doc),
        environment=_environment(doc),
        load_before=env.load_before, load_after=env.load_after, other_cpu=env.other_cpu,
        warnings=env.warnings, runs=s.runs, warmup=s.warmup, order=s.order, seed=s.seed,
        sequential=any(b.measuring is not None and b.measuring.design == "triplets"
                       for b in doc.benchmarks),
        budget_s=s.budget_s, max_runs=s.max_runs,
        parity=s.parity, confirm=s.confirm, aa_on=s.aa,
        sandbox=doc.sandbox.description if doc.sandbox else None,
        run_url=run_url, bench_hint=command_style == "bench", created=doc.created,
        rule=doc.noise_model.rule, shards=_shards_view(doc),
        uncounted=tuple(Uncounted(letter=letter, why=why.removeprefix("not counted: "),  # the
                                  names=tuple(r.name for r in rows  # heading says so
                                              if r.counts is not None and r.counts.letter == letter))
                        for why, letter in whys.items()),
        suites=tuple(_suite_view(doc, s, rows) for s in doc.suites or ()),
        skipped=tuple(k.name for k in doc.skipped or ()), artifact=artifact, spent=doc.spent,
    )


def _suite_view(doc: Results, suite: SuiteRecord, rows: Sequence[Row]) -> SuiteView:
    members = [b for b in doc.benchmarks if b.name.startswith(suite.name + "/")]
    pairs = {b.measuring.pairs for b in members if b.measuring is not None}
    own = next((r for r in rows if r.name == suite.name and r.outcome == "invalid"), None)
    counting = suite.counting or ""
    # Runs were made (failed ones count too; a file written before counted those of the
    # benchmarks counted alone, and says "none counted" where all of them failed)
    made = bool(suite.counted_runs)
    wall = doc.spent.wall_s if doc.spent is not None else 0.0
    return SuiteView(name=suite.name, format=suite.format, compared=len(suite.benchmarks),
                     added=suite.added, removed=suite.removed, not_found=suite.not_found,
                     failure=suite.failure,
                     filter_hint=not suite.filtered and len(pairs) > 1,
                     counting=suite.counting, counted_runs=suite.counted_runs,
                     counting_s=suite.counting_s,
                     counted=sum(1 for b in members if b.counts is not None
                                 and b.counts.method is not None),
                     counting_share=(suite.counting_s or 0.0) / wall if wall > 0 else None,
                     stopped=counting.startswith("stopped: "),
                     # "none: why" names no recipe; nor does one no run followed
                     how=counting if made and not counting.startswith(("none: ", "stopped: "))
                     else None,
                     failure_note=own.note if own is not None and suite.failure else None)


def shortened(view: ReportView) -> list[ReportView]:
    """Ever shorter versions of ``view`` for a report that must fit a limit (a GitHub
    comment), each saying what it leaves out: without the table of every workload's runs;
    then without the notes on inconclusive workloads (their rows stay); then without the
    list of level workloads (the headline still counts them)."""
    out: list[ReportView] = []
    omitted: list[str] = []
    if view.rows and view.show_runs:
        omitted.append("the table of each workload's runs")
        view = replace(view, show_runs=False, omitted=tuple(omitted))
        out.append(view)
    unsure = [r for r in view.notes if r.outcome == "inconclusive"]
    if unsure:
        omitted.append(f"the notes on {len(unsure)} inconclusive workload"
                       f"{'' if len(unsure) == 1 else 's'} (what would settle each)")
        kept = [r.name for r in view.notes if r.outcome != "inconclusive"]
        number = {name: i for i, name in enumerate(kept, start=1)}  # numbered again, 1, 2, …
        rows = tuple(replace(r, note=number.get(r.name)) for r in view.rows)
        view = replace(view, rows=rows, notes=tuple(r for r in rows if r.name in kept),
                       omitted=tuple(omitted))
        out.append(view)
    if view.level_rows and view.show_level:
        omitted.append(f"the list of {len(view.level_rows)} level workloads")
        view = replace(view, show_level=False, omitted=tuple(omitted))
        out.append(view)
    return out


def _has_note(bench: Benchmark) -> bool:
    """A reason, a second signal that settled it, or a call on peak memory: a note says it."""
    v, memory = bench.verdict, bench.memory
    second = v.settled_by not in (None, "time") and bench.metric != "instructions"
    return bool(v.reason or second or bench.profile is not None
                or (memory is not None and memory.outcome in ("slower", "faster", "inconclusive")
                    and (memory.outcome != "inconclusive" or memory.reason)))


def _first_line(text: str, limit: int = 300) -> str:
    lines = text.strip().splitlines()
    line = lines[0] if lines else "no reason given"
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _environment(doc: Results) -> tuple[tuple[str, str], ...]:
    """The machine's rows; after a merge of shards measured on several machines, a row
    for each shard's machine with its own CPU, load and other processes' work."""
    env = doc.environment
    if _machines(doc) > 1:
        return tuple((f"shard {s.index}/{s.count}", _machine_words(s.machine, s.environment))
                     for s in doc.shards or ())
    rows = [("CPU", f"{env.cpu} ({env.cores} usable cores)"), ("kernel", env.kernel),
            ("Python", env.python), ("governor", env.governor or "not exposed")]
    if env.machine is not None:
        rows.append(("machine", env.machine.label))
    if env.maxrss_floor_kib:
        rows.append(("peak memory floor", f"{env.maxrss_floor_kib / 1024:.2f} MiB: no run's "
                     "peak RSS reads below what the process that started it held"))
    return tuple(rows)


def _machines(doc: Results) -> int:
    return len({s.machine for s in doc.shards or ()})


def _machine_words(machine: Machine | None, env: Environment) -> str:
    load = " / ".join(f"{v:.2f}" for v in env.load_before) or "–"
    after = " / ".join(f"{v:.2f}" for v in env.load_after) or "–"
    other = "not measured" if env.other_cpu is None else f"{env.other_cpu:.2f} CPUs"
    return (f"{machine.label if machine else 'unknown machine'}: {env.cpu} ({env.cores} usable "
            f"cores), {env.kernel}, Python {env.python}, governor {env.governor or 'not exposed'}; "
            f"load {load} → {after}; other processes {other}")


def _shards_view(doc: Results) -> ShardsView | None:
    """How the comparison was split, or None when it was not."""
    if doc.shard is not None:
        own = ShardView(index=doc.shard.index, count=doc.shard.count,
                        machine=doc.environment.machine.label if doc.environment.machine else None,
                        workloads=tuple(b.name for b in doc.benchmarks))
        # the config's workloads, and every benchmark (or failed suite) its suites discovered
        suites = len(suite_items(doc.suites or ()))
        return ShardsView(own=own, total=sum(len(p) for p in doc.shard.plan) + suites, reported=(),
                          machines=1, gaps=(), unmeasured=())
    if doc.shards is None:
        return None
    reported = tuple(ShardView(index=s.index, count=s.count,
                               machine=s.machine.label if s.machine else None,
                               workloads=s.workloads) for s in doc.shards)
    count = doc.shards[0].count if doc.shards else 0
    gaps = sorted([ShardGap(index=k, count=count, reason=None) for k in doc.missing_shards or ()]
                  + [ShardGap(index=f.index, count=count, reason=_first_line(f.reason))
                     for f in doc.failed_shards or ()], key=lambda g: g.index)
    unmeasured = doc.unmeasured or ()
    return ShardsView(own=None, total=len(doc.benchmarks) + len(unmeasured), reported=reported,
                      machines=_machines(doc), gaps=tuple(gaps), unmeasured=unmeasured)


def _row(bench: Benchmark, note: int | None, settle: Settle | None,
         whys: dict[str, str] | None = None, *, floor_kib: int | None = None) -> Row:
    v = bench.verdict
    counted = _counts_view(bench, (whys or {}).get(bench.counts.why) if bench.counts else None)
    by_count = bench.metric == "instructions"  # judged on counts alone: no time to show
    judged = [p for n, p in bench.phases.items()
              if n in ("ab", "confirm") and not (p.failure_code or p.failure) and not by_count]
    base_runs, head_runs = _series(judged, bench.better)
    pair_ratios = tuple(h / b for b, h in zip(base_runs, head_runs, strict=False) if b > 0)
    aa_phase = bench.phases.get("aa")
    aa_ok = aa_phase is not None and not (aa_phase.failure_code or aa_phase.failure)
    aa_base, aa_again = (_series([aa_phase], bench.better) if aa_phase and aa_ok and not by_count
                         else ((), ()))
    aa_ratios = tuple(a / b for b, a in zip(aa_base, aa_again, strict=False) if b > 0)
    base = float(np.median(base_runs)) if base_runs else None
    if by_count:
        base = counted.base if counted else None
    ratio, ci = (v.estimate, v.estimate_ci) if v.estimate is not None else (v.ratio, v.ci)
    called_at = bench.measuring.called_at if bench.measuring else None
    breaks, total = [], 0
    for phase in judged[:-1]:  # pairs, not runs: a phase's order holds two letters a pair
        total += len(_series([phase], bench.better)[0])
        breaks.append(total)
    return Row(
        name=bench.name, outcome=v.outcome, icon=ICONS[v.outcome], better=bench.better,
        base=base, head=_head(base, ratio, v.outcome, bench.better), unit=_unit(bench),
        ratio=ratio, ci=ci, best_ratio=None if by_count else v.best_ratio, tolerance=v.tolerance,
        best_tolerance=v.best_tolerance, spread=v.spread, parity=bench.parity,
        aa_ratio=bench.aa.ratio if bench.aa else None, aa_outcome=bench.aa.outcome if bench.aa else None,
        pairs=bench.measuring.pairs if bench.measuring else v.n,
        design=bench.measuring.design if bench.measuring else "pairs",
        stopped=bench.measuring.stopped if bench.measuring else None,
        stopped_why=_stopped_why(bench),
        reason=v.reason, reason_code=v.reason_code, settle=settle, note=note,
        ratios=distribution(pair_ratios), aa_ratios=distribution(aa_ratios),
        base_runs=distribution(base_runs), head_runs=distribution(head_runs),
        pair_ratios=pair_ratios, aa_pair_ratios=aa_ratios, base_series=base_runs,
        head_series=head_runs, phase_breaks=tuple(breaks), metric=bench.metric,
        settled_by=v.settled_by, called_at=called_at if v.estimate is not None else None,
        estimate_n=v.estimate_n if v.estimate is not None else None,
        counts=counted, memory=_memory_view(bench, floor_kib),
        timed_s=bench.measuring.timed_s if bench.measuring else None,
        counted_s=bench.measuring.counted_s if bench.measuring else None,
        figure=figure_of(v, bench.counts, metric=bench.metric, better=bench.better),
        profile=profile_view(bench.profile),
    )


def _stopped_why(bench: Benchmark) -> str | None:
    """Why measuring stopped, in words: as recorded, but a stop on an invalid verdict says
    what made it invalid (a benchmark too fast to time did not fail a run), also in a file
    written before the words did."""
    m = bench.measuring
    if m is None:
        return None
    if m.stopped == "failed":
        return sequential_why("failed", bench.verdict)
    return m.why


def _median(values: Sequence[float] | None) -> float | None:
    return float(np.median(values)) if values else None


def _counts_view(bench: Benchmark, letter: str | None) -> CountsView | None:
    """The counts as shown: per arm the counted runs' medians (valgrind's own runs, or with
    perf every measured run's count in the arms)."""
    c: Counts | None = bench.counts
    if c is None:
        return None
    if c.method is None:
        return CountsView(method=None, why=c.why, kind=None, letter=letter, ratio=None, base=None,
                          base_again=None, head=None, runs=(0, 0, 0), cycles_ratio=None,
                          user_share=c.user_share, reading=None, reading_why=c.reading_why)
    base, again, head = c.base, c.base_again, c.head
    if c.every_run and not (base or head):  # perf: every measured run's count, per phase
        base, again, head = (_counted(bench, phases, arm) for phases, arm in (
            (("ab", "confirm"), "base"), (("aa",), "base_again"), (("ab", "confirm"), "head")))
    exact = c.method == "perf" and c.every_run and not c.scaled
    kind = f"per {c.unit}" if c.unit else "exact" if exact else "sampled"
    runs = ((len(base), len(again), len(head)) if c.unit is None else
            tuple(sum(1 for r in c.runs or () if r.arm == arm) for arm in ARMS))
    return CountsView(method=c.method, why=c.why, kind=kind, letter=None,
                      ratio=c.ratio, base=_median(base), base_again=_median(again), head=_median(head),
                      runs=runs, cycles_ratio=c.cycles_ratio,  # type: ignore[arg-type]
                      user_share=c.user_share if c.unit is None else None, reading=c.reading,
                      reading_why=c.reading_why, unit=c.unit, units=c.units,
                      counted_s=c.counted_s,
                      misses_why=c.misses.reading_why if c.misses is not None else None,
                      misses_shown=_misses_shown(c))


def _misses_shown(c: Counts) -> float | None:
    """The misses' ratio where the cell shows it: where they keep the work from being the
    same (the instructions read the same or below parity), or from moving the way the
    instructions did (they moved by parity), as reading the counts decided
    (``Misses.holds_back``); else None, and only the details give them."""
    m = c.misses
    if m is None or m.ratio is None or c.reading is None:
        return None
    return m.ratio if m.holds_back else None


ARMS = ("base", "base_again", "head")


def _counted(bench: Benchmark, phases: Sequence[str], arm: str) -> tuple[int, ...]:
    """One arm's per-run instruction counts over the named phases, in measured order."""
    return tuple(n for name in phases if name in bench.phases
                 for n in bench.phases[name].arms.get(arm, _NO_RUNS).instructions or ())


def _memory_view(bench: Benchmark, env_floor_kib: int | None) -> MemoryView | None:
    m = bench.memory
    if m is None:
        return None
    floor = float(env_floor_kib) if m.reason_code == "rss_floor" and env_floor_kib else None
    base = bench.arms["base"].maxrss_kib if "base" in bench.arms else ()
    head = bench.arms["head"].maxrss_kib if "head" in bench.arms else ()
    return MemoryView(outcome=m.outcome, word=MEMORY_WORDS[m.outcome], ratio=m.ratio, ci=m.ci,
                      tolerance=m.tolerance, base_kib=_median(base), head_kib=_median(head),
                      reason=m.reason, floor_kib=floor, harness=_harness_memory(bench))


def _harness_memory(bench: Benchmark) -> tuple[float, float, float, float] | None:
    """A suite's benchmark: the medians of the bytes and allocations per iteration its
    harness reported in base's and head's A/B runs (None: it reported none)."""
    ab = bench.phases.get("ab")
    if ab is None or "base" not in ab.arms or "head" not in ab.arms:
        return None
    base, head = ab.arms["base"], ab.arms["head"]
    figures = [_median(x) for x in (base.bytes_op, head.bytes_op, base.allocs_op, head.allocs_op)]
    if any(f is None for f in figures):
        return None
    return tuple(figures)  # type: ignore[return-value]


def _series(phases: Sequence[PhaseRuns], better: Better) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Reference and candidate values over the phases, in measured order."""
    ref: list[float] = []
    cand: list[float] = []
    for phase in phases:
        a, b = phase.arms.values()
        if better == "higher":
            ref += a.values or ()
            cand += b.values or ()
        else:
            ref += a.samples_ns
            cand += b.samples_ns
    return tuple(ref), tuple(cand)


def _unit(bench: Benchmark) -> str:
    """How the row's figures are shown: a time, a bare reported value, or a value with the
    unit the config gave it; a label a results file brings that the config could not
    have given (the file may come from an untrusted job) is left out."""
    if bench.metric == "instructions":
        return "instructions"
    if bench.better != "higher":
        return "ns"
    if bench.unit == "reported" or not UNIT_LABEL.fullmatch(bench.unit):
        return "value"
    return bench.unit


def _head(base: float | None, ratio: float | None, outcome: Outcome, better: Better) -> float | None:
    """Head as the verdict sees it: base x ratio (for a throughput, base / ratio, since the
    ratio is of the reciprocals)."""
    if base is None or ratio is None or outcome == "invalid":
        return None
    return base / ratio if better == "higher" else base * ratio


def _settle(bench: Benchmark, doc: Results, style: CommandStyle) -> Settle | None:
    """The command that would settle this workload, with the settings it was measured
    with that the command must keep; None where nothing benchbot takes would (more pairs
    than MAX_RUNS, or more than a day of measuring: the reason says so)."""
    measuring = bench.measuring
    runs, budget, most = bench.verdict.suggested_runs, None, None
    if measuring is not None and measuring.design == "triplets":
        pairs = measuring.settle_pairs
        if measuring.stopped not in ("budget", "max_runs") or not pairs or pairs > MAX_RUNS:
            return None
        runs = None
        budget = _budget_for(bench, pairs)
        if budget > MAX_BUDGET_S:
            return None
        if measuring.stopped == "max_runs" or pairs > (doc.settings.max_runs or MAX_RUNS):
            most = min(MAX_RUNS, 10 * math.ceil(pairs / 10))
    if not runs and budget is None:
        return None
    parity = bench.parity if not math.isclose(bench.parity, DEFAULT_PARITY) else None
    aa_off = not doc.settings.aa
    argv = ["benchbot", "compare"]
    if doc.settings.repo:
        argv += ["--repo", doc.settings.repo]
    if doc.settings.config_file:
        argv += ["--config", doc.settings.config_file]
    argv += ["--base", doc.base.ref or doc.base.sha, "--head", doc.head.ref or doc.head.sha]
    argv += ["--runs", str(runs)] if budget is None else ["--budget", duration_words(budget)]
    if most is not None:
        argv += ["--max-runs", str(most)]
    if parity is not None:
        argv += ["--parity", f"{parity:g}"]
    if aa_off:
        argv += ["--no-aa"]
    # A suite's benchmark whose name only= cannot take is measured with its whole suite.
    name = bench.name if ONLY_NAME.fullmatch(bench.name) else bench.name.partition("/")[0]
    argv += [f"--only={name}"]  # one word: a name may start with "-"
    return Settle(style=style, runs=runs, budget_s=budget, max_runs=most, parity=parity,
                  aa_off=aa_off, name=name, argv=tuple(argv))


def _budget_for(bench: Benchmark, pairs: int) -> float:
    """A time budget that would carry this workload alone to ``pairs`` triplets: three runs
    a triplet at their median wall time (a second a run where none finished), a half again
    for builds and overhead, in whole minutes."""
    walls = [float(np.median(a.wall_ns)) for a in bench.arms.values() if a.wall_ns]
    triplet_s = 3 * (max(walls) if walls else 1e9) / 1e9 + 0.006
    return 60.0 * math.ceil(pairs * triplet_s * 1.5 / 60.0 + 0.5)


def _aa_view(doc: Results) -> AAView:
    readings = [(abs(math.log(b.aa.ratio)), b.name, b.aa.ratio) for b in doc.benchmarks
                if b.aa is not None and b.aa.ratio]
    worst = max(readings) if readings else None
    return AAView(status=doc.aa.status, failed=doc.aa.failed, aborted=doc.aa.aborted,
                  compared=len(readings), worst_name=worst[1] if worst else None,
                  worst_ratio=worst[2] if worst else None)


def distribution(values: Sequence[float]) -> Distribution | None:
    """The histogram (log-spaced bins), the 10th, 50th and 90th percentiles, and the
    number of modes of ``values``; None for fewer than 3 positive values."""
    data = np.asarray([v for v in values if v > 0 and math.isfinite(v)], dtype=np.float64)
    if data.size < 3:
        return None
    logs = np.log(data)
    lo, hi = float(logs.min()), float(logs.max())
    if hi - lo < 1e-12:
        hi = lo + 1e-12
    counts, _ = np.histogram(logs, bins=HISTOGRAM_BINS, range=(lo, hi))
    p10, p50, p90 = np.quantile(data, [0.1, 0.5, 0.9])
    return Distribution(counts=tuple(int(c) for c in counts), lo=math.exp(lo), hi=math.exp(hi),
                        p10=float(p10), p50=float(p50), p90=float(p90), n=int(data.size),
                        modes=_modes(logs))


def _modes(logs: np.ndarray) -> int:
    """2 when the values split into two groups, each of at least a fifth of them, whose
    means lie far apart for their spread (more than MODE_SEPARATION pooled standard
    deviations, the most a single normal sample reaches in one case in a thousand at
    that size); else 1. A picture for the reader, not a test."""
    n = logs.size
    if n < MIN_FOR_MODES:
        return 1
    x = np.sort(logs)
    x = x - x.mean()  # centred, so that the sums of squares below lose no precision
    threshold = MODE_SEPARATION if n >= 30 else MODE_SEPARATION + 0.7
    # Every split at once, from running sums (one split at a time, with numpy's mean and
    # var, took 5 ms a picture: 10 s for a report of 500 workloads).
    k = np.arange(max(2, int(0.2 * n)), int(0.8 * n) + 1)
    if k.size == 0:
        return 1
    s1 = np.concatenate(([0.0], np.cumsum(x)))
    s2 = np.concatenate(([0.0], np.cumsum(x * x)))
    left_mean = s1[k] / k
    right_mean = (s1[n] - s1[k]) / (n - k)
    # n · pooled variance: each side's sum of squares about its own mean
    spread = (s2[k] - k * left_mean**2) + ((s2[n] - s2[k]) - (n - k) * right_mean**2)
    pooled = np.sqrt(np.maximum(spread, 0.0) / n)
    # A spread of zero (each side one value) is no evidence: the sums leave a rounding
    # error there, a trillionth of the whole sum of squares at most, which counts as none.
    spread_ok = spread > 1e-12 * s2[n]
    apart = (right_mean - left_mean) > threshold * pooled
    return 2 if bool(np.any(apart & spread_ok)) else 1
