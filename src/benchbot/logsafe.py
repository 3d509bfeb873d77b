"""Output for a GitHub Actions job log that the runner cannot read as workflow commands.

The runner treats a line whose first non-blank characters are ``::`` as a command
(``::add-mask::``, ``::stop-commands::``, ``::error::`` …), and the older form ``##[``
anywhere in a line. Text benchbot prints may hold what the code under test wrote (a
build log's tail in an error, a failure's stderr in a report), so inside Actions every
line benchbot writes passes through ``Stream``: a line starting with ``:`` gets a zero
width space in front, and ``##[`` is broken by one. benchbot's own commands go around it
with ``Stream.command``. This works line by line whatever order the runner reads stdout
and stderr in, which wrapping the output in ``::stop-commands::`` cannot promise.
"""

from __future__ import annotations

from typing import Any, TextIO, cast

ZWSP = "\u200b"


def escape_line(line: str) -> str:
    """One line (without its end) made inert for the runner's command parser."""
    line = line.replace("##[", f"#{ZWSP}#[")
    if line.lstrip().startswith(":"):
        return ZWSP + line
    return line


class Stream:
    """A text stream that escapes every line written to it (see the module's docstring)."""

    def __init__(self, raw: TextIO) -> None:
        self._raw = raw
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self._raw.write(escape_line(line) + "\n")
        return len(text)

    def flush(self) -> None:
        """Write out a partial line unless it could still become the start of a command."""
        head = self._pending.lstrip()
        if self._pending and head and not head.startswith(":") and not self._pending.endswith("#"):
            self._raw.write(escape_line(self._pending))
            self._pending = ""
        self._raw.flush()

    def command(self, line: str) -> None:
        """Write one of benchbot's own workflow commands, unescaped, on a line of its own."""
        if self._pending:
            self._raw.write(escape_line(self._pending) + "\n")
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
