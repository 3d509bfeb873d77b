"""Keeping track of the processes the code under test starts, and of benchbot's own.

A build or a workload may leave processes behind: a background job, a compiler server,
a daemon that called ``setsid`` to leave its process group. Left running they would add
noise to every later run, or outlive a cancelled job. The process that spawns the runs
(the sandbox's worker, or benchbot without the sandbox) is a *child subreaper* (orphans
of its descendants are re-parented to it rather than to init) and ends what a run left
behind before the next one starts (``spawn.end_leftovers``); a build's leftovers are
ended by the PID namespace inside the sandbox, and by ``Sweep`` without it.

``make_undumpable`` stops processes of the same user from reading benchbot's memory and
``/proc/<pid>/environ`` (Linux's ``PR_SET_DUMPABLE``): the token benchbot holds on GitHub
stays out of reach of a workload even without the sandbox.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
from collections.abc import Iterator

from benchbot.sandbox.spawn import process_tree

_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return False


def make_undumpable() -> bool:
    """Forbid ptrace and /proc/<pid>/{environ,mem} to other processes of this user."""
    return _prctl(_PR_SET_DUMPABLE, 0)


def become_subreaper() -> bool:
    """Adopt the orphans of this process's descendants (so ``Sweep`` can find them)."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def _parents() -> dict[int, int]:
    """pid -> parent pid for every process this user may see."""
    return {child: parent for parent, children in process_tree().items() for child in children}


def descendants(pid: int | None = None) -> set[int]:
    """Every process below ``pid`` (default: this one) in the process tree."""
    root = os.getpid() if pid is None else pid
    children = process_tree()
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


class Sweep:
    """Kills what a piece of work left running: the processes that became this process's
    descendants since the sweep began, except those named in ``keep`` and those below a
    process that was already there (the sandbox's measuring worker, starting up while a
    build runs, has new processes too)."""

    def __init__(self) -> None:
        self._before = descendants()

    def finish(self, keep: set[int] | None = None) -> set[int]:
        """Kill and reap the leftovers; return their pids."""
        parents, me = _parents(), os.getpid()

        def under_older(pid: int) -> bool:
            seen = set()
            while pid in parents and pid != me and pid not in seen:
                seen.add(pid)
                pid = parents[pid]
                if pid in self._before:
                    return True
            return False

        left = {pid for pid in descendants() - self._before - (keep or set())
                if not under_older(pid)}
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        for pid in left:
            with contextlib.suppress(ChildProcessError, OSError):
                if _parents().get(pid) == me:
                    os.waitpid(pid, 0)
        return left


@contextlib.contextmanager
def swept() -> Iterator[Sweep]:
    """A ``Sweep`` finished on every way out of the block."""
    sweep = Sweep()
    try:
        yield sweep
    finally:
        sweep.finish()
