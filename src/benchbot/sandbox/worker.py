"""The measuring process that runs inside the sandbox: it spawns and times the runs of one
arm (through its fork server, ``benchbot.sandbox.forkserver``, which it starts before it says it
is ready, so that a run's peak memory is not the worker's). benchbot builds the fork
server's program outside every place a run may write and shows it to the worker
read-only (``sandbox.WorkerSpawner``): it is started before any run exists, from a file
no run can replace.

benchbot starts one worker per place (base's worktree, head's, and the copy of base's
built tree that base again runs from: docs/verdict.md, "Placement"), each in a sandbox of
its own (``sandbox.WorkerSpawner``) where only its own place is writable and the others
are out of reach, so that a run cannot rewrite the program another arm measures. All get
the same batch of pairs or triplets as one JSON line (``{"groups": [[SpawnRequest or
INDEX, ...], ...], "keys": [workload, ...]}``; INDEX, the number of another worker,
stands for a run that worker makes; null, for the only other one's) and go through it in
step as ``spawn.in_groups`` does (a failed run ends its group and skips its workload's
later groups): after each of its own runs a worker tells every other over a pipe
benchbot made for the two of them (one byte: whether the run failed; the one that makes
the next run last, so that the others wake before that run, not during it), and before a
run another makes it waits for that one's byte. Each answers with one JSON line
(``{"groups": [[RawRun or null, ...], ...]}``) once the whole batch is made, so that
benchbot wakes only after the last run.

Why this design: starting ``bwrap`` for every run would cost about 5 ms each and move the
floor of timing; a long-lived worker keeps the spawn-to-reap path exactly as it is outside
the sandbox; one exchange with benchbot per batch rather than per run saves the wake-ups
of three processes; and handing the turn over directly costs one pipe write and one
wake-up between runs of different arms (a round trip between two processes over pipes
takes 45-60 µs on a 2-core VM; with pairs of /bin/true, benchbot's time beyond the runs
went from about 165 to 290 µs a run, measured on a busy one), outside the timed region,
where a round trip through benchbot would cost two of each. One worker holding both worktrees could confine each arm's runs only with
work between ``posix_spawn`` and ``exec`` (inside the timed region), with capabilities it
must not hold (a mount namespace per arm), or with a Landlock-restricted thread per arm,
which hands the turn over just the same and leaves both arms' runs in one PID namespace.

A worker is the PID 1 of its sandbox (``bwrap --as-pid-1``): no other process there
holds its pipes (bubblewrap's reaper did, and could be opened through ``/proc/1/fd``). It
is undumpable from its start (``procs.make_undumpable``): its runs, the same user without
any capability, cannot open ``/proc/1/fd`` to write into its answers or read its
requests, nor ptrace it; no descriptor it holds is inherited by a run; and as the
namespace's init it gets no signal from its runs but those it handles, and it ignores
``SIGINT`` (benchbot ends it by closing its input, or kills it from outside). Whatever a
run left behind comes back to it (the namespace's init adopts every orphan there; it asks
to be a child subreaper as well, which costs nothing) and is ended before the next run
(``spawn.end_leftovers``); so is its fork server, which is the runs' parent, undumpable
too, and holds the socket to the worker and nothing else of its. It needs the standard
library only and holds nothing secret: its environment is the allow-listed one.

Instruction counts (``benchbot.sandbox.counting``): a run asked to be counted by perf is read
from a counter opened once on the process that forks the runs (the fork server, which
hands the descriptor over, else the worker), inherited by its runs and enabled at their
exec (its descriptor close-on-exec, like the others); one counted by valgrind is
started under cachegrind, whose out files go to the worker's scratch directory and are
summed and removed after the run.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn, TextIO

from benchbot.sandbox import counting, procs
from benchbot.sandbox.spawn import ProcessSpawner, RawRun, SpawnRequest, close_on_exec, in_groups


class PeerGone(Exception):
    """Another arm's worker stopped in the middle of a batch."""


class Turn:
    """The two pipes over which a worker and one other worker hand the turn to each
    other: one byte after each run, ``-`` when it failed, else ``+``."""

    def __init__(self, take_fd: int, give_fd: int) -> None:
        self._take, self._give = take_fd, give_fd

    def give(self, failed: bool) -> None:
        """Tell the other worker that this run is over, and how it went."""
        try:
            os.write(self._give, b"-" if failed else b"+")
        except BrokenPipeError as exc:
            raise PeerGone("another arm's worker stopped") from exc

    def take(self) -> bool:
        """Wait until the other worker's run is over; whether it failed."""
        data = os.read(self._take, 1)
        if not data:
            raise PeerGone("another arm's worker stopped")
        return data == b"-"


def _elsewhere(failed: bool) -> RawRun:
    """What stands for another worker's run: only whether it failed matters here."""
    return RawRun(wall_ns=0, cpu_ns=0, maxrss_kib=0, returncode=1 if failed else 0)


def _entry(entry: object) -> SpawnRequest | int | None:
    """A request line's entry: a run of this worker's, or the number of the worker that
    makes it (None: the only other one)."""
    if entry is None or (isinstance(entry, int) and not isinstance(entry, bool)):
        return entry
    if not isinstance(entry, dict):
        raise TypeError(f"{str(entry)[:80]} is neither a run nor a worker's number")
    return SpawnRequest.from_json(entry)


def run_batch(spawner: ProcessSpawner, turns: Mapping[int, Turn] | Turn | None,
              message: dict[str, Any]) -> list[list[dict[str, Any] | None]]:
    """Make this worker's runs of one batch, in step with the other workers' (``turns``:
    the pipes to each, by its number; a lone ``Turn``, the only other one's); the
    answer's groups, with null where another worker made the run."""
    peers = {0: turns} if isinstance(turns, Turn) else dict(turns or {})
    groups = [[_entry(r) for r in g] for g in message["groups"]]
    keys = [str(k) for k in message["keys"]]
    others = {r for g in groups for r in g if not isinstance(r, SpawnRequest)}
    for maker in others:
        if (maker is None and len(peers) != 1) or (maker is not None and maker not in peers):
            raise ValueError(f"a run for worker {maker}, which is not one of this one's peers")

    def maker_of(entry: SpawnRequest | int | None) -> int | None:
        """The peer that makes ``entry``'s run (None: this worker)."""
        if isinstance(entry, SpawnRequest):
            return None
        return next(iter(peers)) if entry is None else entry

    # After each of its runs a worker tells every peer; the one that makes the next run is
    # told last, so that the others (who only note the run and wait again) wake before that
    # run starts, not inside its timed region.
    flat = [entry for g in groups for entry in g]
    following = {id(entry): maker_of(after) for entry, after in itertools.pairwise(flat)
                 if isinstance(entry, SpawnRequest)}

    def step(request: SpawnRequest | int | None) -> RawRun:
        if not isinstance(request, SpawnRequest):
            return _elsewhere(peers[next(iter(peers)) if request is None else request].take())
        run = spawner.spawn(request)
        if others:
            last = following.get(id(request))
            for number in sorted(peers, key=lambda p: p == last):
                peers[number].give(run.failed)
        return run

    made = in_groups(step, groups, keys)
    return [[run.to_json() if isinstance(request, SpawnRequest) else None
             for request, run in zip(g, runs, strict=False)]
            for g, runs in zip(groups, made, strict=True)]


def serve(scratch: Path, lines: TextIO, out: TextIO,
          turns: Mapping[int, Turn] | Turn | None = None, *,
          perf_events: counting.Events = counting.HARDWARE,
          fork_server: bool | Path = True) -> int:
    """Answer run requests from ``lines`` on ``out`` until end of input (``fork_server``:
    the fork server's program, as ``ProcessSpawner`` takes it)."""
    spawner = ProcessSpawner(scratch, perf_events=perf_events, fork_server=fork_server)
    spawner.start()  # the fork server, started while benchbot builds
    _answer(out, {"ready": True})
    try:
        for line in lines:
            if not line.strip():
                continue
            try:
                answers = run_batch(spawner, turns, json.loads(line))
            except (ValueError, KeyError, TypeError) as exc:
                _answer(out, {"error": f"bad request: {exc}"})
                continue
            except PeerGone as exc:  # benchbot reads the other worker's last words
                _answer(out, {"error": str(exc), "peer_gone": True})
                continue
            t = os.times()  # the worker's CPU time and its runs', for benchbot's accounts
            # The floor of the memory verdict: no run's peak reads below it (the fork
            # server's, else the worker's own peak: Linux keeps the old address space's
            # high-water mark at exec).
            _answer(out, {"groups": answers, "cpu_s": t.user + t.system + t.children_user
                          + t.children_system + spawner.unreaped_cpu_s,
                          "maxrss_kib": spawner.maxrss_floor_kib})
    finally:
        spawner.close()
    return 0


def _answer(out: TextIO, message: dict[str, Any]) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()


def leave(status: int) -> NoReturn:
    """End the worker at once with ``status``, without the interpreter's teardown: 13 of the
    15 ms that closing the worker took at the end of every comparison. It has nothing to
    tidy: every run is reaped, its files are closed, its answers flushed."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def guard() -> None:
    """Put the worker out of its runs' reach before it reads a request: undumpable, a
    child subreaper, deaf to SIGINT, and no descriptor of its own left inheritable."""
    procs.make_undumpable()
    procs.become_subreaper()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    close_on_exec()


def main() -> int:
    """Entry point: ``python -m benchbot.sandbox.worker [--perf-events=NAME] [--fork-server=PATH
    | --no-fork-server] SCRATCH [PEER:TAKE_FD:GIVE_FD ...]`` (NAME: a key of
    ``counting.EVENT_NAMES``; tests pass software-test; PATH: the fork server's program,
    built by benchbot where no run can write it, else the runs are started by the worker
    itself; PEER: another worker's number, as the request lines name it)."""
    args = sys.argv[1:]
    events = counting.HARDWARE
    if args and args[0].startswith("--perf-events="):
        events = counting.EVENT_NAMES.get(args.pop(0).partition("=")[2], ())  # type: ignore[arg-type]
    fork_server: bool | Path = True
    if args and args[0].startswith("--fork-server="):
        fork_server = Path(args.pop(0).partition("=")[2])
    elif args and args[0] == "--no-fork-server":
        args.pop(0)
        fork_server = False
    peers = [a.split(":") for a in args[1:]]
    if (not args or not all(len(p) == 3 and all(f.isdigit() for f in p) for p in peers)
            or len(events) != 2):
        sys.stderr.write("usage: python -m benchbot.sandbox.worker [--perf-events=NAME] "
                         "[--fork-server=PATH | --no-fork-server] SCRATCH_DIR "
                         "[PEER:TAKE_FD:GIVE_FD ...]\n")
        return 2
    guard()
    turns = {int(p): Turn(int(take), int(give)) for p, take, give in peers}
    return serve(Path(args[0]), sys.stdin, sys.stdout, turns, perf_events=events,
                 fork_server=fork_server)


if __name__ == "__main__":
    sys.exit(main())
