"""The measuring process that runs inside the sandbox: it spawns and times every run.

benchbot starts one worker per comparison inside bubblewrap (``sandbox.Sandbox``) and
sends it one JSON line per run (a ``spawn.SpawnRequest``); the worker answers with one
JSON line (a ``spawn.RawRun``). Starting ``bwrap`` for every run would cost about 5 ms
each and move the floor of timing; one long-lived worker keeps the spawn-to-reap path
exactly as it is outside the sandbox. The worker needs the standard library only and holds
nothing secret: its environment is the allow-listed one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

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
                request = SpawnRequest.from_json(json.loads(line))
            except (ValueError, KeyError, TypeError) as exc:
                out.write(json.dumps({"error": f"bad request: {exc}"}) + "\n")
                out.flush()
                continue
            run: RawRun = spawner.spawn(request)
            out.write(json.dumps({"run": run.to_json()}) + "\n")
            out.flush()
    finally:
        spawner.close()
    return 0


def main() -> int:
    """Entry point: ``python -m benchbot.worker SCRATCH``."""
    if len(sys.argv) != 2:
        sys.stderr.write("usage: python -m benchbot.worker SCRATCH_DIR\n")
        return 2
    return serve(Path(sys.argv[1]), sys.stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
