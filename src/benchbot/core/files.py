"""Writing the files a user asked for (results, reports) without surprises, and reading
a file with a bound on what it may cost (``read_bounded``).

- Atomic: a temporary file in the same directory, then a rename, so that a crash or a
  cancellation leaves the old file or the new one, never half of one.
- A symlink is followed: the file it points to is replaced and the link stays a link.
- A device, FIFO or socket (``/dev/stdout``, a pipe, ``/dev/null``) is written into as it
  is, never replaced by a regular file.
- The mode is the one a new file would get from ``open`` (0666 less the umask), or the
  replaced file's own mode: a report is not made private by the temporary file's 0600.
- Any failure (a full disk, a directory where a file was asked for) is an ``OutputError``
  naming the path, and the temporary file is removed.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from benchbot.core.errors import OutputError


class TooLarge(OSError):
    """A file holds more bytes than its reader takes (``size``: what it held, at least)."""

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(f"{path}: {size} bytes, more than the {limit} read of it")
        self.size, self.limit = size, limit


class NotAFile(OSError):
    """Not a regular file: a FIFO, a socket or a device, which a reader never waits on."""


def read_bounded(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    The file's size is looked at (``fstat`` of the descriptor opened) before anything is
    read: a file of more is ``TooLarge`` and costs nothing to refuse. The read takes at
    most that size and one byte more, so a file that grows meanwhile is refused too
    (``NotAFile``), never read on past its limit. It is opened without
    waiting (``O_NONBLOCK``), so a FIFO is refused (``NotAFile``) rather than read;
    ``IsADirectoryError`` for a directory; any other ``OSError`` as the system says.
    """
    shown = os.fspath(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "Is a directory", shown)
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(f"{shown}: not a regular file")
        if info.st_size > limit:
            raise TooLarge(shown, info.st_size, limit)
        buffer = bytearray(info.st_size + 1)  # one more: a file that grew is seen to have
        with memoryview(buffer) as view:
            held = 0
            while held < len(buffer):
                got = os.readv(fd, [view[held:]])
                if not got:
                    break
                held += got
            if held > info.st_size:
                raise NotAFile(f"{shown}: grew while it was read")
            return bytes(view[:held])
    finally:
        os.close(fd)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` as the module's docstring says."""
    shown = os.fspath(path)
    try:
        _write(Path(path), text.encode("utf-8"))
    except OutputError:
        raise
    except OSError as exc:
        raise OutputError(f"cannot write {shown}: {exc.strerror or exc}") from None


def _write(path: Path, data: bytes) -> None:
    try:
        info = os.stat(path)  # follows a symlink to what it points at
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise OutputError(f"cannot write {path}: it is a directory; name a file")
    if info is not None and not stat.S_ISREG(info.st_mode):
        with open(path, "wb") as fh:  # a device or a pipe: write through, never replace
            fh.write(data)
        return
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    """This process's umask, read without changing it (Linux 4.7+), else set and restored."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current
