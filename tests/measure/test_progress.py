"""Progress lines: a bar on a terminal, plain throttled lines in logs."""

from __future__ import annotations

import io

from benchbot.measure.progress import TerminalReporter, eta
from tests.clock import FakeClock


def test_eta_from_the_rate_so_far() -> None:
    assert eta(10.0, 10, 40) == "30s"
    assert eta(60.0, 1, 3) == "2m00s"
    assert eta(5.0, 0, 10) == "0s"


def test_plain_lines_name_phase_workload_run_and_eta() -> None:
    stream = io.StringIO()
    rep = TerminalReporter(stream, tty=False)
    rep.phase("ab", 2, 40)
    for i in range(1, 41):
        rep.progress("ab", "sort", i, 40)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "benchbot: A/B (base vs head): 2 workloads, 40 runs"
    assert lines[1].startswith("benchbot: ab: run 1 of 40 (sort), ETA ")
    assert lines[-1].startswith("benchbot: ab: run 40 of 40 (sort), ETA 0s")
    assert len(lines) < 10  # throttled, not one line per run
    assert "\r" not in stream.getvalue()


class Clock:
    """A clock that moves on by ``step`` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_terminal_bar_is_redrawn_in_place() -> None:
    stream = io.StringIO()
    rep = TerminalReporter(stream, tty=True, clock=Clock(0.2))
    rep.phase("aa", 1, 4)
    for i in range(1, 5):
        rep.progress("aa", "sum", i, 4)
    text = stream.getvalue()
    assert text.count("\r") == 4
    assert "4/4 runs · sum" in text
    assert text.endswith("\n")


def test_terminal_bar_is_redrawn_ten_times_a_second_at_most_and_always_at_the_end() -> None:
    # 1,000 runs a millisecond apart: a redraw for each would have the terminal repaint
    # 1,000 times a second on the machine that is measuring.
    stream = io.StringIO()
    rep = TerminalReporter(stream, tty=True, clock=Clock(0.001))
    rep.phase("sequential", 1, 1000)
    for i in range(1, 1001):
        rep.progress("sequential", "copy", i, 1000)
    text = stream.getvalue()
    assert 9 <= text.count("\r") <= 12
    assert "\r  " + "█" * 24 + " 1000/1000 runs · copy" in text
    assert text.endswith("\n")


def test_an_estimate_that_says_all_done_early_is_drawn_once() -> None:
    # At the end of a budget the sequential estimate reads "run n of n" for the last few
    # runs: one line (and one finished bar), not one each.
    for tty in (False, True):
        stream = io.StringIO()
        rep = TerminalReporter(stream, tty=tty, clock=Clock(0.001))
        rep.phase("sequential", 1, 10)
        for i in range(1, 8):
            rep.progress("sequential", "sort", i, 12)
        for i in range(8, 12):
            rep.progress("sequential", "sort", i, i)
        text = stream.getvalue()
        assert text.count("8 of 8") + text.count("8/8 runs") == 1, text
        assert "9 of 9" not in text and "9/9" not in text and "11/11" not in text


def test_what_came_before_the_first_run_does_not_set_the_pace() -> None:
    """valgrind's counted runs come between a phase's start and its first timed run: a
    minute there must not read as a minute a run."""
    now = [0.0]
    stream = io.StringIO()
    rep = TerminalReporter(stream, tty=False, clock=lambda: now[0])
    rep.phase("sequential", 5, 1000)
    now[0] = 60.0  # the counted runs
    for i in range(1, 101):
        now[0] += 0.1
        rep.progress("sequential", "sort", i, 1000)
    assert stream.getvalue().splitlines()[1] == "benchbot: sequential: run 1 of 1000 (sort), ETA –"
    # Lines come every 5 s: the last at run 52, 0.1 s a run since the first, 948 to go
    # (from the phase's start it would read 65 s for 52 runs: 20 minutes).
    assert stream.getvalue().splitlines()[-1] == "benchbot: sequential: run 52 of 1000 (sort), ETA 1m35s"


def test_where_the_budget_ends_first_the_line_says_what_it_leaves() -> None:
    """1 s a run, 1000 planned, ten minutes of budget: at the rate seen the runs would take
    16 minutes, so the line gives the budget's end; with 100 runs to go at the rate since
    (15 s for 899 runs), the ETA."""
    for tty in (False, True):
        now = FakeClock(0.0)
        stream = io.StringIO()
        rep = TerminalReporter(stream, tty=tty, clock=now)
        rep.phase("sequential", 55, 1000)
        for i in range(1, 12):
            now.advance(1.0)
            rep.progress("sequential", "sort", i, 1000, left_s=600.0 - now())
        assert "budget: 9m49s left" in stream.getvalue()
        assert "ETA 16m" not in stream.getvalue() and "ETA 15m" not in stream.getvalue()
        now.advance(5.0)
        rep.progress("sequential", "sort", 900, 1000, left_s=300.0)
        assert stream.getvalue().rstrip().endswith("900 of 1000 (sort), ETA 2s"
                                                   if not tty else "· sort                 · ETA 2s")
