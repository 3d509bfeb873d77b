"""Keeping the GitHub token out of every environment the code under test could read.

A process's ``/proc/<pid>/environ`` shows the environment it was started with, to any
process of the same user, for as long as it runs; deleting a variable from
``os.environ`` does not change it. So ``benchbot github``, started with ``GITHUB_TOKEN``
in its environment, writes the token into a pipe and executes itself again without it,
reading the token back from the pipe (``BENCHBOT_TOKEN_FD``). The action starts it with
``exec``, so no shell holding the token waits above it either. benchbot then makes its own
process undumpable (``procs.make_undumpable``), which stops other processes of the same
user reading its memory or its ``/proc`` files.
"""

from __future__ import annotations

import os
import sys

from benchbot.sandbox import procs

TOKEN_VARIABLE = "GITHUB_TOKEN"
FD_VARIABLE = "BENCHBOT_TOKEN_FD"

_token: str | None = None


def hide_token() -> None:
    """Take the token out of this process's environment (re-executing it if needed)."""
    global _token
    fd_text = os.environ.pop(FD_VARIABLE, None)
    if fd_text is not None:
        _token = _read_all(int(fd_text)) or None
        procs.make_undumpable()
        return
    value = os.environ.get(TOKEN_VARIABLE)
    if not value:
        procs.make_undumpable()
        return
    read_end, write_end = os.pipe()
    os.write(write_end, value.encode())
    os.close(write_end)
    os.set_inheritable(read_end, True)
    env = {k: v for k, v in os.environ.items() if k != TOKEN_VARIABLE}
    env[FD_VARIABLE] = str(read_end)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-m", "benchbot", *sys.argv[1:]], env)


def _read_all(fd: int) -> str:
    chunks = []
    try:
        while chunk := os.read(fd, 4096):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks).decode()


def token() -> str | None:
    """The token ``hide_token`` took, or None (then the environment's is used)."""
    return _token
