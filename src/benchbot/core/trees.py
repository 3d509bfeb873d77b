"""Removing a directory tree that the code under test wrote into, whatever it left there.

A build or a run may leave what ``shutil.rmtree(ignore_errors=True)`` silently keeps: a
directory without read, write or search permission for its owner (``mkdir -p keep/inner
&& chmod 000 keep``), a read-only directory, a FIFO, a symlink loop, a symlink to a
directory elsewhere. Left in the machine's temporary directory, that is state which
outlives the job. ``remove_tree`` removes all of it as the owner can: a directory is
given ``u+rwx`` before it is entered (through a descriptor opened without following
links, so that a symlink swapped in cannot redirect the ``chmod``), every other kind of
file is unlinked, and a symlink is removed, never followed. What still cannot be removed
(another user's directory, an immutable file, a mount point) is named, never ignored:
``removed`` raises ``CleanupError`` with the paths.

It needs the standard library only (the sandbox's worker uses it).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

from benchbot.core.errors import CleanupError
from benchbot.core.logsafe import escape_text

SHOWN = 3  # paths named in the error; the rest counted


def remove_tree(root: str | os.PathLike[str]) -> list[str]:
    """Remove ``root`` and everything under it; what could not be removed, as ``path:
    reason`` (empty when everything is gone, or ``root`` never existed)."""
    path = os.fspath(root)
    problems: list[str] = []
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return problems
    if not stat.S_ISDIR(info.st_mode):
        _unlink(path, None, path, problems)
        return problems
    parent = os.open(os.path.dirname(os.path.abspath(path)), os.O_PATH | os.O_DIRECTORY)
    try:
        _remove_dir(os.path.basename(os.path.abspath(path)), parent, path, problems)
    finally:
        os.close(parent)
    return problems


def _remove_dir(name: str, parent: int, shown: str, problems: list[str]) -> None:
    """Remove the directory ``name`` in ``parent`` (a descriptor) and its contents."""
    try:
        fd = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
    except OSError as exc:
        problems.append(f"{shown}: {exc.strerror}")
        return
    try:
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        if mode & 0o700 != 0o700:
            try:  # an O_PATH descriptor cannot be fchmod-ed; its /proc link can
                os.chmod(f"/proc/self/fd/{fd}", mode | 0o700)
            except OSError as exc:
                problems.append(f"{shown}: {exc.strerror} (mode {mode:04o})")
                return
        try:
            listing = os.open(".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        except OSError as exc:
            problems.append(f"{shown}: {exc.strerror}")
            return
        try:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in os.scandir(listing)]
        finally:
            os.close(listing)
        before = len(problems)
        for child, is_dir in entries:
            where = os.path.join(shown, child)
            if is_dir:
                _remove_dir(child, fd, where, problems)
            else:
                _unlink(child, fd, where, problems)
        if len(problems) > before:
            return  # the directory cannot be empty; its contents are named already
    finally:
        os.close(fd)
    try:
        os.rmdir(name, dir_fd=parent)
    except OSError as exc:
        problems.append(f"{shown}: {exc.strerror}")


def _unlink(name: str, parent: int | None, shown: str, problems: list[str]) -> None:
    try:
        os.unlink(name, dir_fd=parent)
    except FileNotFoundError:
        pass
    except OSError as exc:
        problems.append(f"{shown}: {exc.strerror}")


def described(problems: list[str]) -> str:
    """The paths that could not be removed, for one line: the first few (a name with a
    line end or another unprintable character in Python's escapes), then a count."""
    more = len(problems) - SHOWN
    shown = [p if p.isprintable() else repr(p)[1:-1] for p in problems[:SHOWN]]
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


@contextlib.contextmanager
def removed(path: str | os.PathLike[str], *, what: str) -> Iterator[Path]:
    """Yield ``path``; remove it on every way out. What could not be removed is a
    ``CleanupError`` naming it after a block that succeeded; after one that raised, the
    same words go to stderr (escaped: the names are the code under test's) and the
    block's own error is the one that counts."""
    try:
        yield Path(path)
    except BaseException:
        report(remove_tree(path), what=what, failed=True)
        raise
    report(remove_tree(path), what=what, failed=False)


def report(problems: list[str], *, what: str, failed: bool) -> None:
    """Say what could not be removed: a ``CleanupError``, or a line on stderr where the
    work ``failed`` already (its own error is the one that counts)."""
    if not problems:
        return
    message = f"could not remove what {what} left: {described(problems)}"
    if not failed:
        raise CleanupError(message)
    sys.stderr.write(escape_text(f"benchbot: warning: {message}") + "\n")
