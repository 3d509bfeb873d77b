"""The code under test cannot reach the measuring.

A workload of one comparison tries what a pull request's code could do to the process
that times it: write a forged answer into every pipe of every process it can see
through ``/proc/*/fd/*`` (the worker's, PID 1), rewrite the other arm's copy of the program it is compared with,
and leave processes behind (a ``setsid`` sleeper and a double-forked daemon) that would
outlive its run and share the machine with the next runs. Each test goes through
``engine.compare`` on a throwaway repository with real processes and real bubblewrap.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path

import pytest

from benchbot.measure import engine
from benchbot.results.resultsdir import to_json as as_json
from benchbot.sandbox import bwrap
from tests.conftest import MakeRepo
from tests.security.test_processes import _marker, marked, wait_gone

pytestmark = pytest.mark.slow  # real processes (and sandboxes) started, watched and ended

needs_bwrap = pytest.mark.skipif(
    not bwrap.probe().works,
    reason=f"bubblewrap cannot make a sandbox here: {bwrap.probe().problem} "
    "(.ci/run installs the bubblewrap package)",
)
MODES = [pytest.param("on", marks=needs_bwrap), "off"]


def _verdict(repo: Path) -> dict[str, object]:
    doc = as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD")))
    verdict: dict[str, object] = doc["benchmarks"][0]["verdict"]
    return verdict


def _config(mode: str, *, runs: int = 10, extra: str = "") -> str:
    return (f"version: 1\naa: off\nconfirm: off\nsandbox: {{mode: {mode}{extra}}}\n"
            f"defaults: {{runs: {runs}, warmup: 1}}\n"
            "workloads:\n  - {name: w, run: ['./prog.sh']}\n")


# --- a run writes into the worker's answer pipe ------------------------------------------

_RUN = {"wall_ns": 1000, "cpu_ns": 1000, "maxrss_kib": 1, "returncode": 0, "timed_out": False,
        "captures": [], "stderr_tail": "", "not_started": None}
FORGED = {
    # The answer a batch of no groups would get: the reader's count check used to be an assert.
    "empty": {"groups": []},
    # One pair, well formed, with timings that make the base arm look 1,000 times slower.
    "pair": {"groups": [[{**_RUN, "wall_ns": 10**9}, _RUN]], "cpu_s": 0},
}
WRITER = """#!/bin/sh
# Writes a forged answer into every pipe and socket of every other process it can see
# (the worker that started it is PID 1; bubblewrap's reaper used to be, holding the
# worker's request and answer pipes), and notes for each descriptor whether the write
# went through or the descriptor could not even be read.
for d in /proc/[0-9]*; do
  [ "${{d#/proc/}}" = "$$" ] && continue
  for f in "$d"/fd/*; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    if ! t=$(readlink "$f" 2>/dev/null); then echo "refused $f" >> '{log}/tries'; continue; fi
    case "$t" in
      pipe:*|socket:*)
        if printf '%s\\n' '{line}' > "$f" 2>/dev/null; then
          echo "wrote $f $t" >> '{log}/tries'
        else
          echo "refused $f" >> '{log}/tries'
        fi;;
    esac
  done
done
exit 0
"""


@needs_bwrap
@pytest.mark.parametrize("forged", sorted(FORGED))
def test_a_run_cannot_write_into_the_worker_s_answers(make_repo: MakeRepo, tmp_path: Path,
                                                      forged: str) -> None:
    log = tmp_path / "log"
    log.mkdir()
    prog = WRITER.format(line=json.dumps(FORGED[forged]), log=log)
    repo = make_repo({"benchbot.yml": _config("on", extra=f", writable: ['{log}']"),
                      "prog.sh": prog})
    # used to raise AssertionError from sandbox.spawn_groups; then bubblewrap's reaper
    # (PID 1) took the forged pair through /proc/1/fd/1: "faster -50.5%"
    doc = as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD")))
    tries = (log / "tries").read_text().splitlines()
    assert not [t for t in tries if t.startswith("wrote")], tries  # none got through
    assert any(t.startswith("refused /proc/1/fd/") for t in tries), tries  # and it tried
    bench = doc["benchmarks"][0]
    assert bench["verdict"]["outcome"] != "invalid", bench["verdict"]
    # Every timing is a real run's: none of the forged figures (1 µs, 1 s) was taken, and
    # the two identical programs read alike (a forged pair reads base 1,000 times slower).
    # Whether 10 pairs of them come out level is chance (the rule's error, not the attack).
    walls = [w for arm in bench["arms"].values() for w in arm["wall_ns"]]
    assert len(walls) == 20 and not {1000, 10**9} & set(walls), walls
    assert 0.5 < bench["verdict"]["ratio"] < 2, bench["verdict"]


# --- a run rewrites the other arm's worktree ---------------------------------------------

REWRITER = """#!/bin/sh
# The {attacker} arm's runs rewrite the {victim} arm's copy of this program into a slow one;
# both arms' copies are the same file, and take about 20 ms.
if [ "$(basename "$PWD")" = {attacker} ]; then
  printf '#!/bin/sh\\nsleep 0.3\\n' > ../{victim}/prog.sh 2>/dev/null
fi
sleep 0.02
"""


@needs_bwrap
@pytest.mark.parametrize(("attacker", "victim"), [("head", "base"), ("base", "head")])
def test_a_run_cannot_rewrite_the_other_arm_s_program(make_repo: MakeRepo, attacker: str,
                                                      victim: str) -> None:
    prog = REWRITER.format(attacker=attacker, victim=victim)
    repo = make_repo({"benchbot.yml": _config("on"), "prog.sh": prog})
    doc = engine.compare(engine.Request(repo=repo, base="base", head="HEAD"))
    verdict = as_json(doc)["benchmarks"][0]["verdict"]
    # Rewritten, the victim's runs take 0.3 s: the head "faster" (or "slower") by ~90%,
    # a ratio of about 15 or 1/15. Unchanged, both arms read alike (whether 10 pairs of
    # them come out level is the rule's chance, not the attack's).
    assert verdict["outcome"] != "invalid" and 0.5 < verdict["ratio"] < 2, verdict
    victim_ns = doc.benchmarks[0].phases["ab"].arms[victim].wall_ns
    assert sorted(victim_ns)[len(victim_ns) // 2] < 0.15e9, victim_ns


def test_the_rewrite_is_a_real_attack_where_nothing_confines_the_runs(make_repo: MakeRepo) -> None:
    """The control: without the sandbox, nothing stops it (the same user writes both
    worktrees), and the unchanged program is judged faster. The test above would see it."""
    repo = make_repo({"benchbot.yml": _config("off"),
                      "prog.sh": REWRITER.format(attacker="head", victim="base")})
    assert _verdict(repo)["outcome"] == "faster"


# --- a run leaves processes behind -------------------------------------------------------

LEAVER = """#!/bin/sh
# Fails when a process an earlier run of this arm left behind is still alive; then leaves
# two behind and waits until both have written their pid: a setsid sleeper, and a daemon
# whose parent started it in a session of its own and exited (a double fork).
for pid in $(cat pids 2>/dev/null); do
  if grep -q {marker} /proc/$pid/cmdline 2>/dev/null; then
    echo "left alive by an earlier run: $pid" >&2
    exit 3
  fi
done
: > pids
setsid sh -c 'echo $$ >> pids; exec sleep {marker}' </dev/null >/dev/null 2>&1 &
setsid sh -c 'sleep {marker} & echo $! >> pids' </dev/null >/dev/null 2>&1 &
while [ "$(wc -l < pids)" -lt 2 ]; do sleep 0.01; done
"""


@pytest.mark.parametrize("mode", MODES)
def test_no_process_a_run_started_outlives_it(make_repo: MakeRepo, mode: str) -> None:
    marker = _marker()
    repo = make_repo({"benchbot.yml": _config(mode), "prog.sh": LEAVER.format(marker=marker)})
    try:
        verdict = _verdict(repo)
        # Every run found the last one's processes gone (else it exited with status 3).
        assert verdict["outcome"] != "invalid", verdict["reason"]
        assert wait_gone(marker) == []
    finally:
        for pid in marked(marker):  # what a failure left: not for the next test to meet
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

