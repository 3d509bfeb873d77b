"""What a report shows of a workload's profile (benchbot.profiles.profiling): the functions that
carry a called change, decided here; the templates only format and escape. Where the
work profile named nothing and the row was profiled for time (benchbot.profiles.timing),
the note names the functions whose CPU time moved instead (``time_words``), and the HTML
report draws the sampled stacks (``TimeView.stacks``).

The names and files come from the binary under test: they are text from outside benchbot
and go through the report's escaping wherever shown (``escape.md_code_span`` in markdown,
jinja2's autoescape in HTML). The flame graph of the HTML report is drawn from
``ProfileView.stacks`` (base's and head's folded stacks, names as the binary gives them).
"""

from __future__ import annotations

from dataclasses import dataclass

from benchbot.core.model import FoldedStacks, ProfileTable, TimeTable
from benchbot.report.escape import Markdown, md_code_span
from benchbot.report.format import change, duration

NOTED = 3  # functions the note names
SHOWN = 10  # functions the table lists


@dataclass(frozen=True, slots=True, kw_only=True)
class FunctionView:
    """One named function, as the report shows it."""

    name: str  # untrusted: escaped wherever shown
    file: str  # untrusted
    object: str  # untrusted
    base_self: int
    head_self: int
    base_inclusive: int
    head_inclusive: int
    delta: int
    # 1 + delta over base's whole run, a ratio as the ``change`` filter reads it: 0.852
    # reads "−14.8%" (of base's instructions)
    ratio: float
    share: float | None  # of the whole run's change
    noise: int

    @property
    def place(self) -> str:
        """Where it is, as the table shows it: its source file, or its object where the
        binary has no debug information ("???")."""
        return self.file if self.file and self.file != "???" else self.object


@dataclass(frozen=True, slots=True, kw_only=True)
class TimedFunctionView:
    """One function named by the time profile: its own CPU time per run, in nanoseconds."""

    name: str  # untrusted: escaped wherever shown
    base_ns: float
    head_ns: float
    base_again_ns: float | None
    delta_ns: float
    share: float | None  # of the whole run's change of CPU time
    noise_ns: float


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeView:
    """A row's sampled time profile (benchbot.profiles.timing), or why there is none."""

    error: str | None
    functions: tuple[TimedFunctionView, ...]  # at most SHOWN, largest change first
    more: int
    base_ns: float  # the whole run's CPU time per run
    head_ns: float
    runs: int
    runs_per_arm: tuple[int, ...]
    seconds: float
    samples: tuple[int, ...]
    confined: bool
    failures: tuple[str, ...]
    stacks: FoldedStacks | None  # per run, ns: the HTML report's flame graph

    @property
    def noted(self) -> tuple[TimedFunctionView, ...]:
        return self.functions[:NOTED]

    @property
    def delta_ns(self) -> float:
        return self.head_ns - self.base_ns


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileView:
    """A workload's profile: the functions named, the whole run's change, what it cost,
    or why there is none."""

    error: str | None
    functions: tuple[FunctionView, ...]  # at most SHOWN, largest change first
    more: int  # named beyond those listed
    within_noise: int  # moved, but not beyond their noise or floor
    total_ratio: float | None  # head's whole run over base's
    base_total: int
    head_total: int
    runs: int
    seconds: float
    floor: int
    stacks: FoldedStacks | None  # for the HTML report's flame graph
    time: TimeView | None = None  # the time profile, where the work named nothing

    @property
    def noted(self) -> tuple[FunctionView, ...]:
        """The functions the note names."""
        return self.functions[:NOTED]


def profile_view(table: ProfileTable | None) -> ProfileView | None:
    """The view of a workload's profile; None where it was not profiled."""
    if table is None:
        return None
    base = table.base_total
    total = table.head_total / base if base > 0 and table.error is None else None
    rows = tuple(FunctionView(
        name=f.name, file=f.file, object=f.object, base_self=f.base_self,
        head_self=f.head_self, base_inclusive=f.base_inclusive,
        head_inclusive=f.head_inclusive, delta=f.delta,
        ratio=1 + f.delta / base if base > 0 else 1.0, share=f.share, noise=f.noise)
        for f in table.functions)
    return ProfileView(
        error=table.error, functions=rows[:SHOWN], more=table.more + max(0, len(rows) - SHOWN),
        within_noise=table.moved_within_noise, total_ratio=total, base_total=base,
        head_total=table.head_total, runs=table.runs, seconds=table.seconds, floor=table.floor,
        stacks=table.stacks, time=time_view(table.time))


def time_view(table: TimeTable | None) -> TimeView | None:
    """The view of a row's time profile; None where none was tried."""
    if table is None:
        return None
    rows = tuple(TimedFunctionView(name=f.name, base_ns=f.base_ns, head_ns=f.head_ns,
                                   base_again_ns=f.base_again_ns, delta_ns=f.delta_ns,
                                   share=f.share, noise_ns=f.noise_ns)
                 for f in table.functions)
    return TimeView(error=table.error, functions=rows[:SHOWN],
                    more=table.more + max(0, len(rows) - SHOWN), base_ns=table.base_ns,
                    head_ns=table.head_ns, runs=table.runs, runs_per_arm=table.runs_per_arm,
                    seconds=table.seconds, samples=table.samples, confined=table.confined,
                    failures=table.failures, stacks=table.stacks)


def signed_duration(ns: float) -> str:
    """A change of time with its sign: "+186 ms", "−3.20 ms"."""
    return ("−" if ns < 0 else "+") + duration(abs(ns))


def where_words(view: ProfileView) -> Markdown:
    """The note's sentence on where the change is, in markdown (names escaped as code):
    "Where (instructions by function, callgrind): `f` −14.8% of −15.2%, `g` −0.3%.", or
    why there is no profile, or that nothing moved beyond its noise, and then what the
    time profile found (``time_words``)."""
    if view.error:
        return Markdown("Not profiled: {}{}").format(view.error,
                                                     "" if view.error.endswith(".") else ".")
    if not view.functions:
        work = Markdown("Where: no function's own instructions moved beyond its noise "
                        "(callgrind; the whole run {}), so the change is in time, not in the "
                        "work done").format(change(view.total_ratio))
        return work + time_words(view.time)
    named = [Markdown("{} {}").format(md_code_span(f.name), change(f.ratio)) for f in view.noted]
    named[0] = Markdown("{} of {}").format(named[0], change(view.total_ratio))
    rest = len(view.functions) + view.more - len(view.noted)
    return Markdown("Where (instructions by function, callgrind): {}{}.").format(
        Markdown(", ").join(named), Markdown(f" and {rest} more") if rest > 0 else "")


def time_words(time: TimeView | None) -> Markdown:
    """What the note says of the time profile, after the work profile named nothing:
    the functions whose CPU time per run moved ("`walk` +186 ms of +190 ms a run"), that
    none moved beyond its noise, or that only the work was profiled, and why."""
    if time is None:
        return Markdown("; only the work was profiled, not the time.")
    if time.error:
        return Markdown("; only the work was profiled, not the time: {}{}").format(
            time.error, "" if time.error.endswith(".") else ".")
    whole = signed_duration(time.delta_ns)
    if not time.functions:
        return Markdown(". Time (CPU time by function, perf): no function's own time moved "
                        "beyond its noise (the whole run {} a run).").format(whole)
    named = [Markdown("{} {}").format(md_code_span(f.name), signed_duration(f.delta_ns))
             for f in time.noted]
    named[0] = Markdown("{} of {} a run").format(named[0], whole)
    rest = len(time.functions) + time.more - len(time.noted)
    return Markdown(". Where the time went (CPU time by function, perf): {}{}.").format(
        Markdown(", ").join(named), Markdown(f" and {rest} more") if rest > 0 else "")
