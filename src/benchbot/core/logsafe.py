"""Output for a GitHub Actions job log that the runner cannot read as workflow commands.

The runner treats a line whose first non-blank characters are ``::`` as a command
(``::add-mask::``, ``::stop-commands::``, ``::error::`` …), and the older form ``##[``
anywhere in a line. Text benchbot prints may hold what the code under test wrote (a
build log's tail in an error, a failure's stderr in a report, a file name), so every
line benchbot writes inside Actions passes through ``escape_text`` (``Stream`` applies
it): a line starting with ``:`` gets a zero width space in front, and ``##[`` is broken
by one. benchbot's own commands go around it with ``Stream.command``. This works line by
line whatever order the runner reads stdout and stderr in, which wrapping the output in
``::stop-commands::`` cannot promise.

What a line is, as the runner reads it (actions/runner, ``ProcessInvoker``): .NET's
``StreamReader.ReadLine``, which ends a line at ``\n``, at ``\r\n`` and at a lone ``\r``.
``BOUNDARIES`` holds those and every other line end Python knows (``str.splitlines``:
``\v``, ``\f``, ``\x1c``–``\x1e``, ``\x85``, U+2028, U+2029): a line is escaped wherever any
reader may begin one. The parser then trims .NET's white space (``char.IsWhiteSpace``,
all of which ``str.isspace`` counts too) and compares with the current culture, which
ignores zero-width characters; but it takes the command's name at a fixed offset after
the prefix, so the zero width space in front of ``::`` (or inside ``##[``) shifts the name
by one character, and no command by that name exists (``tests/security/test_logsafe.py``).
"""

from __future__ import annotations

import re
from typing import Any, TextIO, cast

ZWSP = "\u200b"
# Every line end: the runner's three and the rest of str.splitlines' (\r\n first: one end).
BOUNDARIES = ("\r\n", "\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_BOUNDARY = re.compile("(" + "|".join(re.escape(b) for b in BOUNDARIES) + ")")


def escape_line(line: str) -> str:
    """One line (without its end) made inert for the runner's command parser."""
    line = line.replace("##[", f"#{ZWSP}#[")
    if line.lstrip().startswith(":"):
        return ZWSP + line
    return line


def escape_text(text: str) -> str:
    """``text`` with every line in it (at every one of ``BOUNDARIES``) made inert; the
    line ends are kept as they were. The one function every line benchbot writes to a
    job's log goes through."""
    parts = _BOUNDARY.split(text)
    return "".join(part if i % 2 else escape_line(part) for i, part in enumerate(parts))


class Stream:
    """A text stream that escapes every line written to it (see the module's docstring)."""

    def __init__(self, raw: TextIO) -> None:
        self._raw = raw
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        ends = [m.end() for m in _BOUNDARY.finditer(self._pending)]
        # A \r last may be the first half of a \r\n: it waits for the next write.
        ends = [e for e in ends if not (e == len(self._pending) and self._pending[-1] == "\r")]
        if ends:
            done, self._pending = self._pending[: ends[-1]], self._pending[ends[-1]:]
            self._raw.write(escape_text(done))
        return len(text)

    def flush(self) -> None:
        """Write out a partial line unless it could still become the start of a command
        (what follows a flushed part is escaped as the start of a line: harmless where it
        continues one)."""
        head = self._pending.lstrip()
        if self._pending.endswith("\r") or (head and not head.startswith(":")
                                            and not self._pending.endswith("#")):
            self._raw.write(escape_text(self._pending))
            self._pending = ""
        self._raw.flush()

    def command(self, line: str) -> None:
        """Write one of benchbot's own workflow commands, unescaped, on a line of its own."""
        if self._pending:
            self._raw.write(escape_text(self._pending) + "\n")
            self._pending = ""
        self._raw.write(line + "\n")
        self._raw.flush()

    def isatty(self) -> bool:
        return bool(self._raw.isatty())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def wrap(raw: TextIO) -> TextIO:
    """``raw`` behind a ``Stream`` (typed as the text stream it stands in for)."""
    return cast(TextIO, Stream(raw))
