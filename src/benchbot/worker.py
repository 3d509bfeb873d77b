"""The measuring process that runs inside the sandbox: it spawns and times every run.

benchbot starts one worker per comparison inside bubblewrap (``sandbox.Sandbox``) and
sends it one JSON line per batch of pairs or triplets (``{"groups": [[SpawnRequest, ...],
...], "keys": [workload, ...]}``); the worker makes them one after another as
``spawn.in_groups`` does (a failed run ends its group and skips its workload's later
groups) and answers with one JSON line (``{"groups": [[RawRun, ...], ...]}``). Starting
``bwrap`` for every run would cost about 5 ms each and move the floor of timing; one
long-lived worker keeps the spawn-to-reap path exactly as it is outside the sandbox, and
one exchange per batch rather than per run saves the wake-ups of both processes (about
0.45 ms an exchange on a 2-core VM). The
worker needs the standard library only and holds nothing secret: its environment is the
allow-listed one.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import NoReturn, TextIO

from benchbot.spawn import ProcessSpawner, RawRun, SpawnRequest


def serve(scratch: Path, lines: TextIO, out: TextIO) -> int:
    """Answer run requests from ``lines`` on ``out`` until end of input."""
    spawner = ProcessSpawner(scratch)
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    try:
        for line in lines:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
                groups = [[SpawnRequest.from_json(r) for r in g] for g in message["groups"]]
                keys = [str(k) for k in message["keys"]]
                answers: list[list[RawRun]] = spawner.spawn_groups(groups, keys)
            except (ValueError, KeyError, TypeError) as exc:
                out.write(json.dumps({"error": f"bad request: {exc}"}) + "\n")
                out.flush()
                continue
            t = os.times()  # the worker's CPU time and its runs', for benchbot's accounts
            out.write(json.dumps({"groups": [[run.to_json() for run in g] for g in answers],
                                  "cpu_s": t.user + t.system + t.children_user
                                  + t.children_system}) + "\n")
            out.flush()
    finally:
        spawner.close()
    return 0


def leave(status: int) -> NoReturn:
    """End the worker at once with ``status``, without the interpreter's teardown: 13 of the
    15 ms that closing the worker took at the end of every comparison. It has nothing to
    tidy: every run is reaped, its files are closed, its answers flushed."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def main() -> int:
    """Entry point: ``python -m benchbot.worker SCRATCH``."""
    if len(sys.argv) != 2:
        sys.stderr.write("usage: python -m benchbot.worker SCRATCH_DIR\n")
        return 2
    return serve(Path(sys.argv[1]), sys.stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
