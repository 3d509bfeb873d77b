"""The glob language of ``paths:`` and ``sandbox.build_only``. Pure.

The globs read like a ``.gitignore``'s, against paths relative to the repository root,
``/``-separated and case-sensitive:

- ``*`` matches any characters within one path segment, ``?`` one character, ``[abc]``,
  ``[a-z]`` and ``[!abc]`` one of (or none of) a set; ``\\`` makes the next character
  literal;
- ``**`` as a whole segment matches any number of segments: ``**/x`` (x at any depth),
  ``a/**/x`` (x anywhere below a, or a/x), ``a/**`` (everything below a);
- a glob without a ``/`` (but a trailing one) matches that name at any depth: ``*.c``
  matches ``src/x/y.c``; with one it is anchored at the root (a leading ``/`` may be
  written too);
- a glob that matches a directory matches everything below it: ``src/a`` covers
  ``src/a/x.c``; a trailing ``/`` matches only a directory, so ``build/`` covers
  ``build/x`` but not a file named ``build``.

Negation (``!``), ``.`` and ``..`` segments, empty segments and ``**`` inside a segment
(``a**``) are refused (``GlobError``), as is an unclosed ``[``: a glob that can never
match what its writer meant is a mistake to name, not a workload silently never measured.
"""

from __future__ import annotations

import functools
import re

MAX_GLOB = 1000  # characters of one glob


class GlobError(ValueError):
    """A glob that ``paths`` does not accept; the message says why and what to write."""


def check_glob(glob: str) -> str:
    """``glob`` if ``paths`` accepts it, else GlobError saying why."""
    compiled(glob)
    return glob


def matches(glob: str, path: str) -> bool:
    """Whether the file ``path`` (relative to the root, ``/``-separated) is covered by ``glob``."""
    return compiled(glob).match(path) is not None


@functools.cache
def compiled(glob: str) -> re.Pattern[str]:
    """The pattern of ``glob`` (cached), or GlobError."""
    return re.compile(_regex(glob), re.DOTALL)


def _regex(glob: str) -> str:
    """The regular expression of the files ``glob`` covers (the module's docstring)."""
    if not glob or not glob.strip():
        raise GlobError("is empty; write a path or a glob such as src/** or *.c")
    if len(glob) > MAX_GLOB:
        raise GlobError(f"is longer than {MAX_GLOB} characters")
    if any(not c.isprintable() for c in glob):
        raise GlobError("holds a control character")
    if glob.startswith("!"):
        raise GlobError("negation (!) is not supported; list the paths that can affect the "
                        "workload (write \\! for a name that starts with !)")
    directory = glob.endswith("/")
    body = glob[:-1] if directory else glob
    anchored = "/" in body
    body = body.removeprefix("/")
    if not body:
        raise GlobError("names no path (the root itself); write ** for every file")
    segments = body.split("/")
    pieces = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "**":
            pieces.append(".+" if last else "(?:[^/]+/)*")
        else:
            pieces.append(_segment(segment) + ("" if last else "/"))
    prefix = "" if anchored else "(?:[^/]+/)*"
    suffix = "/.+" if directory else "(?:/.+)?"
    return f"{prefix}{''.join(pieces)}{suffix}\\Z"


def _segment(segment: str) -> str:
    """One path segment of a glob as a regular expression that never crosses a ``/``."""
    if not segment:
        raise GlobError("has an empty path segment (//); write each directory once")
    if segment in (".", ".."):
        raise GlobError(f"has a {segment!r} segment; write paths from the repository root, "
                        "without . or ..")
    if "**" in segment.replace("\\*", ""):
        raise GlobError("has ** inside a name: ** matches whole path segments only, as in src/**/x.c "
                        "(write * within a name)")
    out, i = [], 0
    while i < len(segment):
        c = segment[i]
        if c == "\\":
            if i + 1 == len(segment):
                raise GlobError("ends with a lone \\ (it makes the next character literal)")
            out.append(re.escape(segment[i + 1]))
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            cls, i = _class(segment, i)
            out.append(cls)
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _class(segment: str, start: int) -> tuple[str, int]:
    """The set ``[...]`` that starts at ``start``: its regex and the index after it."""
    i = start + 1
    negate = i < len(segment) and segment[i] in "!^"
    i += negate
    chars: list[tuple[str, bool]] = []  # (character, written escaped)
    while i < len(segment) and (segment[i] != "]" or not chars):
        if segment[i] == "\\" and i + 1 < len(segment):
            chars.append((segment[i + 1], True))
            i += 2
        else:
            chars.append((segment[i], False))
            i += 1
    if i >= len(segment):
        raise GlobError("has a [ without its ] (write \\[ for a literal [)")
    items, k = [], 0
    while k < len(chars):
        if k + 2 < len(chars) and chars[k + 1] == ("-", False):
            low, high = chars[k][0], chars[k + 2][0]
            if high < low:
                raise GlobError(f"has a range {low}-{high} that runs backwards")
            items.append(f"{re.escape(low)}-{re.escape(high)}")
            k += 3
        else:
            items.append(re.escape(chars[k][0]))
            k += 1
    return f"[{'^/' if negate else ''}{''.join(items)}]", i + 1
