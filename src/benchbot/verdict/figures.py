"""The figure a verdict shows: the move of the signal that settled it (issue 37).

A verdict is settled by one or more signals, named in ``Verdict.settled_by`` in the order
they led ("instructions and time": the work per iteration called it, time agreed). Its
figure, the one number a report puts beside the outcome, is the move of the first of
them that points the outcome's way: the work's move for a call the counts settled
("faster −3.3% work"), time's estimate for a call time settled ("slower +2.9%"). Time's
estimate, measured on past a call, may come back across 1; a call settled by the counts
then still shows the work it rests on, and time's estimate stays in its own column. A
figure never points against its outcome (tests/golden/test_figures.py reads every
golden report's verdict cells, tests/verdict/test_figures.py every combination of ways).

A level settled with the counts says so, and how far time's interval reaches: "level:
same work; time within ±19.8%", since the interval may be far wider than parity (a
suite's benchmark spreads ±20-40% a run) and the level rests on the work.

Pure: no I/O, no formatting beyond ``words``. A new signal that can settle a verdict
(a count of cache misses, say) adds its name as ``settled_by`` says it and the word its
figure is said in to ``WORDS``, and its ratio to ``figure_from``'s ``more`` (in
``figure_of``, from the counts; in a bisect's or a history's record, as kept there).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchbot.core.model import Better, Counts, Metric, Outcome, Verdict

CALLS = ("slower", "faster")
# The word a signal's figure is said in (time's is said bare: "slower +2.9%").
WORDS: dict[str, str] = {"time": "", "instructions": "work"}
_SPLIT = re.compile(r"\s*,\s*|\s+and\s+")


@dataclass(frozen=True, slots=True, kw_only=True)
class Figure:
    """What a verdict's cell shows beside its outcome."""

    outcome: Outcome
    # The figure, head over base as the signal counts it (time as time: for a throughput,
    # the ratio of reciprocals, above 1 slower; instructions: above 1 more work). None: the
    # outcome alone.
    ratio: float | None = None
    signal: str = "time"  # the signal the figure is of: time, instructions, …
    better: Better = "lower"
    at_call: bool = False  # time's ratio at the call: its estimate since points the other way
    # A level settled with the counts: how far time's interval reaches either way (a
    # fraction, ±), and whether the work moved (below parity) rather than read the same.
    reach: float | None = None
    work_moved: bool = False
    by_counts: bool = False  # settled with a signal other than time

    @property
    def change(self) -> float | None:
        """The figure as a signed change the way a reader takes it: for a throughput's
        time, the change of the throughput (above 0 faster); else of the signal (above 0
        slower, more work)."""
        if self.ratio is None:
            return None
        if self.signal == "time" and self.better == "higher":
            return 1 / self.ratio - 1
        return self.ratio - 1


def signals_of(verdict: Verdict) -> tuple[str, ...]:
    """The signals that settled ``verdict``, leading first (``signals_named``)."""
    return signals_named(verdict.settled_by)


def signals_named(settled_by: str | None) -> tuple[str, ...]:
    """The signals ``settled_by`` names, leading first, of those this module knows
    (``WORDS``: ``settled_by`` is text from a results file, which a report does not
    repeat in a verdict's cell); "time" where none is named."""
    named = tuple(s for s in _SPLIT.split(settled_by or "") if s in WORDS)
    return named or ("time",)


def points_with(outcome: Outcome, ratio: float | None) -> bool:
    """A time-like ratio that points the way of a call (above 1 slower, below faster)."""
    if ratio is None or not math.isfinite(ratio) or ratio <= 0:
        return False
    return ratio > 1 if outcome == "slower" else ratio < 1 if outcome == "faster" else False


def figure_of(verdict: Verdict, counts: Counts | None, *, metric: Metric = "wall",
              better: Better = "lower") -> Figure:
    """The figure ``verdict`` shows (module docstring), with the workload's ``counts``."""
    counted = counts is not None and counts.method is not None
    return figure_from(
        verdict.outcome, settled_by=verdict.settled_by,
        time=verdict.estimate if verdict.estimate is not None else verdict.ratio,
        at_call=verdict.ratio,
        ci=verdict.estimate_ci if verdict.estimate_ci is not None else verdict.ci,
        work=counts.ratio if counted and counts is not None else None,
        reading=counts.reading if counted and counts is not None else None,
        metric=metric, better=better)


def figure_from(outcome: Outcome, *, settled_by: str | None, time: float | None,
                at_call: float | None = None, ci: Sequence[float] | None = None,
                work: float | None = None, reading: str | None = None,
                metric: Metric = "wall", better: Better = "lower",
                more: Mapping[str, float | None] | None = None) -> Figure:
    """The figure of a verdict kept as its parts (a bisect's step, a history's record):
    ``time`` the ratio a report shows (the estimate where measured on), ``at_call`` the
    one the call was made on, ``ci`` time's interval as shown, ``work`` the counts'
    ratio and ``reading`` how they read; ``more``: the ratios of other signals by name
    (head over base, above 1 the slower side), for those ``WORDS`` knows."""
    signals = signals_named(settled_by)
    by_counts = any(s != "time" for s in signals)
    ratios = ({"instructions": work if work is not None else time} if metric == "instructions"
              else {"time": time, "instructions": work})
    ratios.update(more or {})
    if outcome in CALLS:
        for signal in signals:
            if points_with(outcome, ratios.get(signal)):
                return Figure(outcome=outcome, ratio=ratios[signal], signal=signal, better=better,
                              by_counts=by_counts)
        if metric != "instructions" and points_with(outcome, at_call):
            # time's estimate came back across 1 and no other signal settled it: the
            # figure the call was made on, said as such
            return Figure(outcome=outcome, ratio=at_call, better=better, at_call=True,
                          by_counts=by_counts)
        return Figure(outcome=outcome, better=better, by_counts=by_counts)
    if outcome == "level" and by_counts:
        signal = next(s for s in signals if s != "time")  # the work: what the level rests on
        moved = reading == "small"
        ratio = ratios.get(signal) if moved else None
        reach = None
        if metric != "instructions" and ci is not None and len(ci) == 2 and min(ci) > 0:
            reach = math.expm1(max(abs(math.log(ci[0])), abs(math.log(ci[1]))))
        return Figure(outcome=outcome, ratio=ratio, signal=signal, better=better,
                      reach=reach, work_moved=moved, by_counts=True)
    return Figure(outcome=outcome, better=better)


def _pct(change: float) -> str:
    return f"{change * 100:+.1f}%".replace("-", "−")


def words(figure: Figure) -> str:
    """The verdict's cell: ``slower +4.3%``, ``faster −3.3% work``, ``faster (+20.0%
    throughput)``, ``level: same work; time within ±19.8%``, or the outcome alone."""
    text = figure_text(figure)
    if text is None:
        return figure.outcome
    return f"{figure.outcome}: {text}" if figure.outcome == "level" else f"{figure.outcome} {text}"


def figure_text(figure: Figure) -> str | None:
    """The figure alone, as ``words`` puts it after the outcome (``−3.3% work``, ``+4.3%``,
    ``same work; time within ±19.8%``); None: the outcome alone."""
    f = figure
    if f.outcome == "level" and f.by_counts:
        word = WORDS[f.signal]
        said = (f"{word} {_pct(f.ratio - 1)}, below parity" if f.work_moved and f.ratio is not None
                else f"same {word}")
        reach = f"; time within ±{f.reach * 100:.1f}%" if f.reach is not None else ""
        return f"{said}{reach}"
    change = f.change
    if f.outcome not in CALLS or change is None:
        return None
    if f.signal == "time":
        said = f"({_pct(change)} throughput)" if f.better == "higher" else _pct(change)
        return f"{said} at the call" if f.at_call else said
    return f"{_pct(change)} {WORDS[f.signal]}"
