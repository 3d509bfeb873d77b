"""The fork server, as the runs in the sandbox see it: its program is built by benchbot
outside every place a run may write and shown read-only (a run can neither replace it nor
plant one beside it), it is undumpable (a run, its child, cannot open its /proc/<pid>/fd
nor its exe: uid 0 may list that directory's numbers, never open one), and no descriptor
of its reaches a run. Real processes in bubblewrap."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from benchbot.sandbox import bwrap
from benchbot.sandbox.spawn import SpawnRequest

pytestmark = [
    pytest.mark.skipif(not bwrap.probe().works,
                       reason=f"bubblewrap cannot make a sandbox here: {bwrap.probe().problem}"),
    pytest.mark.real_runs("what a run can reach in the sandbox; not times"),
]

PROBE = """
exec 1>&2
prog="$1"
echo "parent: $(cat /proc/$PPID/comm)"
[ -x "$prog" ] && echo "sees: the program"
echo planted 2>/dev/null > "$prog" && echo "wrote: the program"
cp /bin/true "$prog.new" 2>/dev/null && echo "wrote: beside it"
rm -f "$prog" 2>/dev/null && echo "removed: the program"
echo x 2>/dev/null > /proc/$PPID/fd/3 && echo "wrote: its socket"
cat /proc/$PPID/fd/3 2>/dev/null >/dev/null && echo "read: its socket"
readlink /proc/$PPID/exe >/dev/null 2>&1 && echo "read: its exe"
ls /proc/self/fd | tr '\\n' ' '
exit 0
"""


def test_a_run_cannot_reach_the_fork_server_nor_its_program(tmp_path: Path) -> None:
    place = tmp_path / "place"
    place.mkdir()
    (place / "probe.sh").write_text(PROBE)
    spawner = bwrap.WorkerSpawner(bwrap.choose("on"), tmp_path, bwrap.clean_env(os.environ),
                                    places=[place])
    try:
        (program,) = (tmp_path / "forkserver").iterdir()
        before = hashlib.sha256(program.read_bytes()).hexdigest()
        env = bwrap.clean_env(os.environ)
        run = spawner.spawn(SpawnRequest(argv=("sh", "probe.sh", str(program)), cwd=str(place),
                                         env=tuple(env.items()), timeout_s=30))
        said = run.stderr_tail.splitlines()
    finally:
        spawner.close()
    assert run.returncode == 0, run.stderr_tail
    # Not vacuous: the run's parent is the fork server, and the program is there to see.
    assert said[0].startswith("parent: benchbot-forks"), said
    assert said[1:-1] == ["sees: the program"], said
    assert said[-1].split() == ["0", "1", "2", "3"]  # ls's own, nothing inherited
    assert hashlib.sha256(program.read_bytes()).hexdigest() == before
