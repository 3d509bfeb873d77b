"""Progress on stderr while measuring: a bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from benchbot.measure.engine import Reporter

PHASE_NAMES = {"aa": "A/A check (base vs base)", "ab": "A/B (base vs head)", "confirm": "confirmation",
               "counting": "counted runs (each benchmark alone, a fixed amount of work)"}
LINE_INTERVAL_S = 5.0  # plain lines: at most one every this many seconds
# The bar: redrawn at most this often. Runs of a few ms would otherwise have the terminal
# redraw hundreds of times a second, on the machine that measures them.
BAR_INTERVAL_S = 0.1
BAR_WIDTH = 24


def duration(seconds: float) -> str:
    """Seconds as 1m05s (or 42s)."""
    minutes, whole = divmod(round(max(0.0, seconds)), 60)
    return f"{minutes}m{whole:02d}s" if minutes else f"{whole}s"


def eta(elapsed_s: float, done: int, planned: int) -> str:
    """Estimate the time left in a phase from the rate so far, as 1m05s."""
    if done <= 0 or planned <= done:
        return "0s"
    return duration(elapsed_s / done * (planned - done))


class TerminalReporter(Reporter):
    """Writes progress to a stream: a redrawn bar on a TTY, throttled lines elsewhere (CI logs)."""

    def __init__(self, stream: TextIO, *, tty: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._stream = stream
        self._tty = stream.isatty() if tty is None else tty
        self._clock = clock
        self._start = clock()
        self._last_line = float("-inf")
        self._phase = ""
        self._drawn = False
        self._ended = False  # the phase's "all done" drawn (an estimate may say so early)
        # (when, runs done) at the phase's first reported run: the rate is taken from there,
        # so that what came before it (valgrind's counted runs, minutes for a slow
        # program) does not read as the time the runs take.
        self._first: tuple[float, int] | None = None
        self._budget_ends: float | None = None  # on this clock, where the budget bounds the phase

    def phase(self, name: str, workloads: int, runs: int) -> None:
        self._end_bar()
        self._phase = name
        self._start = self._clock()
        self._last_line = float("-inf")
        self._ended = False
        self._first = None
        self._budget_ends = None
        self._stream.write(
            f"benchbot: {PHASE_NAMES.get(name, name)}: {workloads} workloads, {runs} runs\n"
        )
        self._stream.flush()

    def progress(self, phase: str, workload: str, done: int, planned: int,
                 left_s: float | None = None) -> None:
        now = self._clock()
        if self._first is None:
            self._first = (now, done)
        if left_s is not None:
            self._budget_ends = now + left_s
        # Drawn once: the sequential phase's estimate can read "all done" for a few runs
        # at the end of the budget, which must not become a line (or a bar) each.
        last = done >= planned and not self._ended
        self._ended = self._ended or last
        if self._tty:
            if not last and now - self._last_line < BAR_INTERVAL_S:
                return
            self._last_line = now
            left = self._left(now, done, planned)
            filled = int(BAR_WIDTH * done / max(planned, 1))
            bar = "█" * filled + "░" * (BAR_WIDTH - filled)
            self._stream.write(
                f"\r  {bar} {done}/{planned} runs · {workload:<20.20} · {left}  "
            )
            self._drawn = True
            if last:
                self._end_bar()
        elif last or now - self._last_line >= LINE_INTERVAL_S or done == 1:
            self._last_line = now
            left = self._left(now, done, planned)
            self._stream.write(
                f"benchbot: {phase}: run {done} of {planned} ({workload}), {left}\n"
            )
        else:
            return
        self._stream.flush()

    def _left(self, now: float, done: int, planned: int) -> str:
        """The ETA at the rate since the phase's first reported run ("ETA –" until a second
        one gives a rate: the time before the first is not the runs'); where the budget
        ends sooner, what it leaves ("budget: 9m12s left"), never an ETA beyond it."""
        if self._first is None or done <= self._first[1]:
            return "ETA –" if planned > done else "ETA 0s"
        runs, since = done - self._first[1], now - self._first[0]
        seconds = since / runs * max(0, planned - done)
        if self._budget_ends is not None and seconds > self._budget_ends - now:
            return f"budget: {duration(self._budget_ends - now)} left"
        return f"ETA {eta(since, runs, planned - self._first[1])}"

    def note(self, message: str) -> None:
        self._end_bar()
        self._stream.write(f"benchbot: {message}\n")
        self._stream.flush()

    def _end_bar(self) -> None:
        if self._drawn:
            self._stream.write("\n")
            self._drawn = False
