"""The figure a verdict shows: the move of the signal that settled it (benchbot.verdict.figures)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from benchbot.core.model import Counts, Verdict
from benchbot.verdict.figures import figure_of, signals_of, words
from tests.figurecheck import Cell

COUNTED = Counts(method="valgrind", why="valgrind", ratio=0.967, reading="down", unit="iteration")


def said(verdict: Verdict, counts: Counts | None = None, **kw: object) -> str:
    return words(figure_of(verdict, counts, **kw))  # type: ignore[arg-type]


def test_a_call_time_settled_shows_time() -> None:
    v = Verdict(outcome="slower", ratio=1.034, estimate=1.029, settled_by="time and instructions")
    assert said(v, COUNTED) == "slower +2.9%"  # the estimate, as the ratio column shows it
    assert said(Verdict(outcome="faster", ratio=0.92)) == "faster −8.0%"  # no settled_by: time


def test_a_call_the_work_settled_shows_the_work_beside_times_estimate() -> None:
    # issue 37's Go suite: the work −3.3%, time's estimate measured on past the call +0.8%
    v = Verdict(outcome="faster", ratio=0.931, estimate=1.008, settled_by="instructions and time")
    assert said(v, COUNTED) == "faster −3.3% work"
    # the same when time agreed all along: the call rests on the work first
    assert said(Verdict(outcome="faster", ratio=0.95, settled_by="instructions and time"),
                COUNTED) == "faster −3.3% work"


def test_time_that_came_back_gives_way_to_the_other_signal_that_settled_it() -> None:
    v = Verdict(outcome="faster", ratio=0.95, estimate=1.004, settled_by="time and instructions")
    assert said(v, COUNTED) == "faster −3.3% work"


def test_time_alone_that_came_back_shows_its_figure_at_the_call() -> None:
    v = Verdict(outcome="slower", ratio=1.031, estimate=0.998, settled_by="time")
    assert said(v) == "slower +3.1% at the call"
    # nothing points its way: the outcome alone, never a figure against it
    assert said(Verdict(outcome="slower", ratio=0.99, estimate=0.98, settled_by="time")) == "slower"


def test_a_throughput_is_said_as_a_throughput() -> None:
    # judged as time (1/throughput): a ratio below 1 is a higher throughput
    assert said(Verdict(outcome="faster", ratio=1 / 1.2), better="higher") == "faster (+20.0% throughput)"
    v = Verdict(outcome="slower", ratio=1.05, estimate=0.99, settled_by="time")
    assert said(v, better="higher") == "slower (−4.8% throughput) at the call"


def test_a_workload_judged_on_its_counts_alone_shows_its_work() -> None:
    counts = Counts(method="valgrind", why="valgrind", ratio=1.021, reading="up")
    v = Verdict(outcome="slower", ratio=1.021, settled_by="instructions")
    assert said(v, counts, metric="instructions") == "slower +2.1% work"
    level = Verdict(outcome="level", ratio=1.0, settled_by="instructions")
    assert said(level, counts, metric="instructions") == "level: same work"


def test_a_level_the_work_settled_says_so_and_how_far_time_reaches() -> None:
    same = Counts(method="valgrind", why="valgrind", ratio=1.0, reading="same", unit="iteration")
    v = Verdict(outcome="level", ratio=1.0, ci=(0.675, 1.472), settled_by="instructions and time")
    assert said(v, same) == "level: same work; time within ±48.1%"
    small = Counts(method="valgrind", why="valgrind", ratio=1.012, reading="small", unit="iteration")
    assert said(replace_settled(v, "instructions and time"), small) == (
        "level: work +1.2%, below parity; time within ±48.1%")
    # where the estimate was measured on, the reach is the interval the row shows
    on = Verdict(outcome="level", ratio=1.0, ci=(0.98, 1.03), estimate=1.001,
                 estimate_ci=(0.995, 1.006), settled_by="time and instructions")
    assert said(on, same) == "level: same work; time within ±0.6%"
    assert said(Verdict(outcome="level", ratio=1.0, ci=(0.99, 1.01), settled_by="time")) == "level"


def replace_settled(v: Verdict, settled_by: str) -> Verdict:
    from dataclasses import replace

    return replace(v, settled_by=settled_by)


def test_settled_by_is_text_from_a_file_and_never_reaches_the_cell() -> None:
    hostile = "instructions and <img src=x onerror=alert(1)> and @alice"
    assert signals_of(Verdict(outcome="level", settled_by=hostile)) == ("instructions",)
    assert signals_of(Verdict(outcome="level", settled_by="<b>x</b>")) == ("time",)
    v = Verdict(outcome="level", ratio=1.0, ci=(0.9, 1.1), settled_by="<b>work</b>")
    assert said(v, COUNTED) == "level"


@pytest.mark.parametrize("settled_by", [None, "time", "time and instructions",
                                        "instructions and time", "instructions"])
def test_no_figure_points_against_its_outcome(settled_by: str | None) -> None:
    """Every combination of the signals' ways, the estimate's and the call's: the cell's
    figure points the outcome's way or is not there."""
    rng = np.random.default_rng(37)
    ways = (0.9, 0.99, 1.0, 1.01, 1.1)
    for outcome, time, estimate, work, better, metric in itertools.product(
            ("slower", "faster", "level"), ways, (None, *ways), ways, ("lower", "higher"),
            ("wall", "instructions")):
        counts = Counts(method="valgrind", why="valgrind", ratio=work * rng.uniform(0.999, 1.001),
                        reading="up" if work > 1.005 else "down" if work < 0.995 else "same")
        lo = min(time, estimate or time) * 0.97
        v = Verdict(outcome=outcome, ratio=time, estimate=estimate, ci=(lo, 1 / lo),  # type: ignore[arg-type]
                    settled_by=settled_by)
        text = said(v, counts, metric=metric, better=better)
        assert text.startswith(outcome)
        assert Cell(outcome, text).problem() is None, (v, counts, better, metric, text)


def test_another_signal_that_settled_it_is_shown_by_its_word(monkeypatch: pytest.MonkeyPatch) -> None:
    # a signal a later count adds (cache misses, say): its word and its ratio, nothing else
    from benchbot.verdict import figures

    monkeypatch.setitem(figures.WORDS, "LL misses", "LL misses")
    f = figures.figure_from("slower", settled_by="LL misses and time", time=0.99,
                            more={"LL misses": 1.3})
    assert words(f) == "slower +30.0% LL misses"
    assert words(figures.figure_from("slower", settled_by="LL misses and time",
                                     time=1.04)) == "slower +4.0%"  # no ratio for it: time's
