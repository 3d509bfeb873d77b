"""Progress lines: a bar on a terminal, plain throttled lines in logs."""

from __future__ import annotations

import io

from benchbot.progress import TerminalReporter, eta


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


def test_terminal_bar_is_redrawn_in_place() -> None:
    stream = io.StringIO()
    rep = TerminalReporter(stream, tty=True)
    rep.phase("aa", 1, 4)
    for i in range(1, 5):
        rep.progress("aa", "sum", i, 4)
    text = stream.getvalue()
    assert text.count("\r") == 4
    assert "4/4 runs · sum" in text
    assert text.endswith("\n")
