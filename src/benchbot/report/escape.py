"""Text from outside benchbot, made safe to show in markdown.

Workload output, build logs, failure reasons, branch names and everything in a results
file that came from the benchmark runner may have been written by the code under test.
In the comment, the check and the job summary such text must stay text: no live HTML, no
links or images, no ``@mention`` that notifies someone, no closing of a code fence, no
table cell broken open. The HTML report relies on jinja2's autoescape instead.
"""

from __future__ import annotations

import re

# Characters that make markup in GitHub-flavoured markdown inline text: HTML and entities
# (< > &), links and images ([ ]), code (`), emphasis and strikethrough (* ~), math ($),
# table cells (|) and the escape itself. A backslash before ASCII punctuation makes it
# literal (CommonMark). Others (. - ( ) _) are left alone: harmless there, and the same
# report is read as plain text in a terminal.
_SPECIAL = re.compile(r"([\\`*<>\[\]|~$&])")
# Autolinks (https://…, www.…) and cross-references (#12, owner/repo#12) are broken by an
# invisible word joiner.
_AUTOLINK = re.compile(r"(://|www\.|#(?=\d))", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# An underscore makes emphasis only at the edge of a word; inside one (edit_distance) it
# is left alone, so that names stay readable as plain text.
_EDGE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# A word joiner after "@" and "#" keeps GitHub from turning "@someone" into a mention
# (which notifies) and "#12" into a link, while the text reads the same.
_JOINER = "\u2060"


def md_inline(text: str | None) -> str:
    """``text`` as literal inline markdown on one line (safe in a table cell)."""
    if not text:
        return ""
    flat = " ".join(_CONTROL.sub("", text).split())
    escaped = _SPECIAL.sub(r"\\\1", flat)
    escaped = _EDGE_UNDERSCORE.sub(r"\\_", escaped)
    escaped = _AUTOLINK.sub(lambda m: m.group(1)[0] + _JOINER + m.group(1)[1:], escaped)
    return escaped.replace("@", "@" + _JOINER)


def md_code_block(text: str, info: str = "text") -> str:
    """``text`` in a fenced code block whose fence no line of it can close."""
    clean = _CONTROL.sub("", text.replace("\t", "    ").replace("\r", ""))
    longest = max((len(run) for run in re.findall(r"`+|~+", clean)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{clean}\n{fence}"


def md_code_span(text: str) -> str:
    """``text`` as an inline code span that no backtick in it can end."""
    clean = " ".join(_CONTROL.sub("", text).split())
    if not clean:
        return "` `"
    longest = max((len(run) for run in re.findall(r"`+", clean)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if clean.startswith("`") or clean.endswith("`") else ""
    return f"{fence}{pad}{clean}{pad}{fence}"


def md_cell_code(text: str) -> str:
    """``text`` as an inline code span inside a table row. GitHub splits a row at every
    ``|`` before it parses the cells, code spans included; a ``\\|`` is a ``|`` of the
    cell's text (the table takes the backslash, so it shows in no cell)."""
    return md_code_span(text).replace("|", "\\|")
