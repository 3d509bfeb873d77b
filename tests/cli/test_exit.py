"""The program's quick exit (``cli.leave``): everything written, the handlers run, the
status kept, in a process of its own each time."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=60)


def test_buffered_output_and_exit_handlers_survive_the_quick_exit() -> None:
    proc = _python("""
        import atexit, sys
        from benchbot.cli import leave
        atexit.register(lambda: print("handler ran"))
        sys.stdout.write("x" * 100_000)
        sys.stderr.write("to stderr")
        leave(3)
    """)
    assert proc.returncode == 3
    assert proc.stdout == "x" * 100_000 + "handler ran\n"
    assert proc.stderr == "to stderr"


def test_a_running_thread_is_waited_for_as_usual() -> None:
    proc = _python("""
        import threading, time
        from benchbot.cli import leave
        def late():
            time.sleep(0.3)
            print("thread done", flush=True)
        threading.Thread(target=late).start()
        leave(4)
    """)
    assert proc.returncode == 4
    assert proc.stdout == "thread done\n"


@pytest.mark.real_runs("benchbot compare as a process, refusing its arguments: nothing is measured")
def test_the_program_reports_and_exits_with_its_status() -> None:
    proc = subprocess.run([sys.executable, "-m", "benchbot", "compare", "--runs", "5"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("benchbot: error: ") and "--runs" in proc.stderr
    assert proc.stderr.endswith("(see --help)\n")
