"""What the code under test starts does not outlive it, nor leak into the next run.

Each test gives its processes a unique marker in their command line (a sleep of 299 s
and a random fraction, which sleep reads as a duration), then looks through /proc for
anything still carrying it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from benchbot.measure import engine
from benchbot.results.resultsdir import to_json as as_json
from benchbot.sandbox import bwrap
from tests.conftest import MakeRepo

pytestmark = pytest.mark.slow  # real processes (and sandboxes) started, watched and ended

MODES = [
    pytest.param("on", marks=pytest.mark.skipif(
        not bwrap.probe().works, reason=f"no sandbox here: {bwrap.probe().problem}")),
    "off",
]


def _marker() -> str:
    return f"299.{uuid.uuid4().int % 10**12:012d}"


def marked(marker: str) -> list[int]:
    """Processes whose command line holds ``marker``."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def leaves_processes(script: Path, marker: str) -> bool:
    """The control: run the script directly and see that it does leave processes behind
    (then end them), so that "nothing is left" after benchbot means benchbot ended them."""
    subprocess.run([str(script)], cwd=script.parent, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=30)
    deadline = time.monotonic() + 5
    while len(marked(marker)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    found = marked(marker)
    for pid in found:
        os.kill(pid, signal.SIGKILL)
    wait_gone(marker)
    return len(found) >= 2


def wait_gone(marker: str, timeout_s: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while (left := marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.mark.parametrize("mode", MODES)
def test_a_workload_s_background_child_neither_leaks_nor_pollutes(make_repo: MakeRepo,
                                                                   mode: str) -> None:
    marker = _marker()
    # Prints its checksum and leaves a child behind that would print another one into the
    # same output a moment later, and one that calls setsid to leave the process group.
    prog = (
        "#!/bin/sh\n"
        "echo checksum=1\n"
        f"(sleep 0.05; echo checksum=2; exec sleep {marker}) &\n"
        f"setsid sh -c 'exec sleep {marker}' </dev/null >/dev/null 2>&1 &\n"
    )
    config = (f"version: 1\naa: off\nconfirm: off\nsandbox: {mode}\ndefaults: {{runs: 10}}\n"
              "workloads:\n  - {name: w, run: ['./prog.sh'], expect: 'checksum=(\\d)'}\n")
    repo = make_repo({"benchbot.yml": config, "prog.sh": prog})
    assert leaves_processes(repo / "prog.sh", marker)
    doc = as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD")))
    verdict = doc["benchmarks"][0]["verdict"]
    assert verdict["outcome"] != "invalid", verdict["reason"]  # no run read another's output
    assert wait_gone(marker) == []


@pytest.mark.parametrize("mode", MODES)
def test_sigterm_during_the_build_kills_everything_it_started(make_repo: MakeRepo, tmp_path: Path,
                                                             mode: str) -> None:
    marker = _marker()
    started = tmp_path / "started"
    build = (
        "#!/bin/sh\n"
        f"sleep {marker} &\n"
        f"setsid sh -c 'exec sleep {marker}' </dev/null >/dev/null 2>&1 &\n"
        f"touch '{started}'\n"
        f"exec sleep {marker}\n"
    )
    config = (f"version: 1\nsandbox: {{mode: {mode}, writable: ['{tmp_path}']}}\n"
              "build: ./build.sh\nworkloads:\n  - {name: x, run: [true]}\n")
    repo = make_repo({"benchbot.yml": config, "build.sh": build})
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchbot", "compare", "--repo", str(repo), "--base", "base",
         "--head", "HEAD", "--json", str(tmp_path / "results.json")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), "the build never started"
    # Both builds run at once (parallel_builds: true), three processes each.
    while len(marked(marker)) < 6 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(marked(marker)) == 6
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert wait_gone(marker) == []  # the setsid daemon too
    assert not (tmp_path / "results.json").exists()


@pytest.mark.parametrize("mode", MODES)
def test_a_finished_build_leaves_nothing_running(make_repo: MakeRepo, mode: str) -> None:
    marker = _marker()
    build = (
        "#!/bin/sh\n"
        f"sleep {marker} &\n"
        f"setsid sh -c 'exec sleep {marker}' </dev/null >/dev/null 2>&1 &\n"
        "exit 0\n"
    )
    config = (f"version: 1\naa: off\nconfirm: off\nsandbox: {mode}\nbuild: ./build.sh\n"
              "defaults: {runs: 10}\nworkloads:\n  - {name: x, run: [true]}\n")
    repo = make_repo({"benchbot.yml": config, "build.sh": build})
    assert leaves_processes(repo / "build.sh", marker)
    as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD")))
    assert wait_gone(marker) == []


def test_a_sweep_ends_new_processes_but_not_those_below_one_already_running() -> None:
    """The sandbox's measuring worker starts while the builds run (its start-up overlaps
    them), so a build's sweep sees the worker's own new processes appear: they are below a
    process that was there before the sweep, and must be left alone."""
    from benchbot.sandbox import procs

    procs.become_subreaper()  # as benchbot is when it sweeps: orphans stay its descendants
    older_marker, newer_marker = _marker(), _marker()
    # Already running when the sweep begins; its child appears only later.
    # (The markers travel in the environment: only the sleeps carry them on their command line.)
    older = subprocess.Popen(["sh", "-c", "sleep 0.3; sleep $M & wait"], start_new_session=True,
                             env={**os.environ, "M": older_marker})
    try:
        with procs.swept():
            subprocess.run(["sh", "-c", "sleep $M & exit 0"], check=True,
                           env={**os.environ, "M": newer_marker})
            deadline = time.monotonic() + 5
            while not (marked(older_marker) and marked(newer_marker)) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert marked(older_marker) and marked(newer_marker)
        assert wait_gone(newer_marker) == []  # the new process's leftover is ended
        assert wait_gone(older_marker, timeout_s=1.0) != []  # the older one's new child is not
    finally:
        os.killpg(older.pid, signal.SIGKILL)
        older.wait()
