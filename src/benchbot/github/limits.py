"""Fitting markdown into GitHub's size limits: cut at a line, closed, with a pointer.

A comment, a check run's summary and a step's job summary each have a limit (in
characters or in UTF-8 bytes); a report longer than that is cut where a line ends, what
the cut leaves open is closed, and a note says where the whole report is.
"""

from __future__ import annotations

import re
from typing import Literal, TypeVar

from benchbot.report.escape import Markdown, md_code_span, md_url, require

Unit = Literal["characters", "bytes"]
S = TypeVar("S", bound=str)


def fit(text: S, limit: int, tail: str, *, unit: Unit = "characters") -> S:
    """``text`` if it fits in ``limit`` characters (or UTF-8 bytes), else its first lines
    and then ``tail``.

    The cut falls at a line end (in bytes, never inside a character), and what it leaves
    open is closed, so the shortened markdown still renders: a code fence, and the
    ``<details>`` blocks benchbot itself opened (see ``_closers``).
    """
    if length(text, unit) <= limit:
        return text
    if isinstance(text, Markdown) and tail:
        require(tail, "what follows a cut")
    room = max(0, limit - length(tail, unit) - 2)
    kept = _cut(text, room, unit)
    closers = _closers(kept)
    while length(kept, unit) + length(closers, unit) > room:  # ends: closers grow each time
        kept = _cut(text, room - length(closers, unit), unit)
        closers = _closers(kept)
    cut = _head(f"{kept}{closers}\n\n{tail}", limit, unit)
    return Markdown(cut) if isinstance(text, Markdown) else cut  # type: ignore[return-value]


def length(text: str, unit: Unit = "characters") -> int:
    """The length of ``text`` in characters, or in bytes of UTF-8."""
    return len(text.encode("utf-8", "surrogatepass")) if unit == "bytes" else len(text)


def _head(text: str, room: int, unit: Unit) -> str:
    """The longest start of ``text`` within ``room`` units, in whole characters."""
    room = max(0, room)
    if unit == "characters":
        return text[:room]
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= room:
        return text
    while room > 0 and data[room] & 0xC0 == 0x80:  # a continuation byte: not a boundary
        room -= 1
    return data[:room].decode("utf-8", "surrogatepass")


def _cut(text: str, room: int, unit: Unit) -> str:
    """The longest run of whole lines of ``text`` within ``room`` units."""
    kept = _head(text, room, unit)
    return kept[: kept.rindex("\n")] if "\n" in kept else kept


# The <details> tags benchbot writes, each at the start of a line of its own markup
# (report.md.j2, refusal_reply). Text from the code under test never starts a line there
# (md_inline escapes "<" and joins lines), or is inside a code block (md_code_block), so
# "\<details" or a log line "<details>" does not count.
_DETAILS_OPEN = re.compile(r"<details[\s>]")
_DETAILS_CLOSE = "</details>"
# A code fence (CommonMark): up to three spaces, then three or more ` or ~.
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def _closers(text: str) -> str:
    """What closes the code block and the ``<details>`` blocks ``text`` leaves open."""
    fence = ""
    depth = 0
    for line in text.split("\n"):
        if fence:
            bare = line.strip()
            if (len(bare) >= len(fence) and bare == fence[0] * len(bare)
                    and len(line) - len(line.lstrip(" ")) <= 3):
                fence = ""
        elif (found := _FENCE.match(line)) and not (
                found.group(1)[0] == "`" and "`" in line[found.end():]):
            fence = found.group(1)
        elif _DETAILS_OPEN.match(line):
            depth += 1
        elif line.startswith(_DETAILS_CLOSE):
            depth = max(0, depth - 1)
    return (f"\n{fence}" if fence else "") + "\n</details>\n" * depth


def too_long_note(what: str, limit: int, artifact: str, run_url: str | None,
                  unit: Unit = "characters") -> Markdown:
    """The pointer that replaces the end of a report that does not fit."""
    return Markdown(
        "> [!NOTE]\n> The report is longer than {} allows ({:,} {}) and was cut here; the "
        "whole report (`report.md`) and the results file are in {}."
    ).format(what, limit, unit, artifact_link(artifact, run_url))


def artifact_link(artifact: str, run_url: str | None) -> Markdown:
    """Where the artifact is: its name, and the workflow run's page where it is known."""
    where = Markdown("the workflow run's artifact {}").format(md_code_span(artifact))
    if not run_url:
        return where
    return where + Markdown(" ([workflow run]({}))").format(md_url(run_url))
