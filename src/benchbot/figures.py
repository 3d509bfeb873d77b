"""The figure a verdict shows: the move of the signal that settled it (issue 37).

A verdict is settled by one or more signals, named in ``Verdict.settled_by`` in the order
they led ("instructions and time": the work per iteration called it, time agreed). Its
figure, the one number a report puts beside the outcome, is the move of the first of
them that points the outcome's way: the work's move for a call the counts settled
("faster −3.3% work"), time's estimate for a call time settled ("slower +2.9%"). Time's
estimate, measured on past a call, may come back across 1; a call settled by the counts
then still shows the work it rests on, and time's estimate stays in its own column. A
figure never points against its outcome (tests/unit/test_figures.py reads every report).

A level settled with the counts says so, and how far time's interval reaches: "level:
same work; time within ±19.8%", since the interval may be far wider than parity (a
suite's benchmark spreads ±20-40% a run) and the level rests on the work.

Pure: no I/O, no formatting beyond ``words``. A new signal that can settle a verdict
(a count of cache misses, say) adds its name and ratio in ``moves`` and its word in
``WORDS``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from benchbot.model import Better, Counts, Metric, Outcome, Verdict

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
    """The signals that settled ``verdict``, leading first, of those this module knows
    (``WORDS``: ``settled_by`` is text from a results file, which a report does not
    repeat in a verdict's cell); "time" where none is named."""
    named = tuple(s for s in _SPLIT.split(verdict.settled_by or "") if s in WORDS)
    return named or ("time",)


def moves(verdict: Verdict, counts: Counts | None, metric: Metric) -> dict[str, float | None]:
    """Each signal's move as head over base (time-like: above 1 is slower, more work)."""
    time = verdict.estimate if verdict.estimate is not None else verdict.ratio
    counted = counts.ratio if counts is not None and counts.method is not None else None
    if metric == "instructions":  # judged on counts alone: its ratio is theirs
        return {"instructions": counted if counted is not None else verdict.ratio}
    return {"time": time, "instructions": counted}


def points_with(outcome: Outcome, ratio: float | None) -> bool:
    """A time-like ratio that points the way of a call (above 1 slower, below faster)."""
    if ratio is None or not math.isfinite(ratio) or ratio <= 0:
        return False
    return ratio > 1 if outcome == "slower" else ratio < 1 if outcome == "faster" else False


def figure_of(verdict: Verdict, counts: Counts | None, *, metric: Metric = "wall",
              better: Better = "lower") -> Figure:
    """The figure ``verdict`` shows (module docstring)."""
    outcome = verdict.outcome
    signals = signals_of(verdict)
    by_counts = any(s != "time" for s in signals)
    if outcome in CALLS:
        ratios = moves(verdict, counts, metric)
        for signal in signals:
            if points_with(outcome, ratios.get(signal)):
                return Figure(outcome=outcome, ratio=ratios[signal], signal=signal, better=better,
                              by_counts=by_counts)
        if metric != "instructions" and points_with(outcome, verdict.ratio):
            # time's estimate came back across 1 and no other signal settled it: the
            # figure the call was made on, said as such
            return Figure(outcome=outcome, ratio=verdict.ratio, better=better, at_call=True,
                          by_counts=by_counts)
        return Figure(outcome=outcome, better=better, by_counts=by_counts)
    if outcome == "level" and by_counts:
        signal = next(s for s in signals if s != "time")  # the work: what the level rests on
        moved = counts is not None and counts.reading == "small"
        ratio = moves(verdict, counts, metric).get(signal) if moved else None
        ci = verdict.estimate_ci if verdict.estimate_ci is not None else verdict.ci
        reach = None
        if metric != "instructions" and ci is not None and min(ci) > 0:
            reach = math.expm1(max(abs(math.log(ci[0])), abs(math.log(ci[1]))))
        return Figure(outcome=outcome, ratio=ratio, signal=signal, better=better,
                      reach=reach, work_moved=moved, by_counts=True)
    return Figure(outcome=outcome, better=better)


def _pct(change: float) -> str:
    return f"{change * 100:+.1f}%".replace("-", "−")


def words(figure: Figure) -> str:
    """The verdict's cell: ``slower +4.3%``, ``faster −3.3% work``, ``faster (+20.0%
    throughput)``, ``level: same work; time within ±19.8%``, or the outcome alone."""
    f = figure
    if f.outcome == "level" and f.by_counts:
        word = WORDS[f.signal]
        said = (f"{word} {_pct(f.ratio - 1)}, below parity" if f.work_moved and f.ratio is not None
                else f"same {word}")
        reach = f"; time within ±{f.reach * 100:.1f}%" if f.reach is not None else ""
        return f"level: {said}{reach}"
    change = f.change
    if f.outcome not in CALLS or change is None:
        return f.outcome
    if f.signal == "time":
        if f.better == "higher":  # judged as time (1/throughput); said as throughput
            said = f"{f.outcome} ({_pct(change)} throughput)"
        else:
            said = f"{f.outcome} {_pct(change)}"
        return f"{said} at the call" if f.at_call else said
    return f"{f.outcome} {_pct(change)} {WORDS[f.signal]}"
