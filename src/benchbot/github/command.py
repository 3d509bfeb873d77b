"""The ``/bench`` comment command: a pure parser, no I/O.

Only the first line of a comment is read; whatever follows is free text for humans.
A command is a word ``/bench`` followed by ``key=value`` options separated by white
space, or the single word ``help``. Anything not understood is collected, so the reply
can name every problem at once, and nothing runs. Values are checked here against
fixed rules (ranges, spellings); workload names in ``only=`` are checked later against
the configuration, which this module does not read. Nothing of a comment ever reaches
a shell: the values become typed fields, never text in a command line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from benchbot.config import MIN_RUNS

PREFIX = "/bench"
MAX_RUNS = 1000
OPTIONS = ("runs", "only", "parity", "confirm", "aa", "sha")
_NAME_RE = re.compile(r"[A-Za-z0-9_.-]+")
_INT_RE = re.compile(r"[0-9]+")
_SHA_RE = re.compile(r"[0-9a-fA-F]{7,40}")
_FRACTION_RE = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(%?)")
_ON = frozenset({"on", "true", "yes"})
_OFF = frozenset({"off", "false", "no"})
_SHOWN_MAX = 40  # characters of a bad token quoted back in the reply

HELP = f"""\
**`/bench`** measures this pull request's head against its base on the benchmark runner.

```text
/bench                      run with the repository's settings
/bench runs=N               pairs per phase, {MIN_RUNS} to {MAX_RUNS}
/bench only=a,b             only these workloads
/bench parity=0.01          differences below this fraction (1%) count as level
/bench confirm=off          skip the confirmation of standouts
/bench aa=off               skip the A/A check (not recommended)
/bench sha=1a2b3c4          only if the head is still this commit (needed for forks)
/bench help                 this text
```

Options combine: `/bench runs=100 only=sort`. Only people with write access to the
repository can run it. On a pull request from a fork, benchbot runs only the commit a
maintainer names with `sha=` (at least 7 hex digits of the head commit)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchCommand:
    """A parsed ``/bench`` command: the settings it overrides (None: the config's)."""

    runs: int | None = None
    only: tuple[str, ...] | None = None
    parity: float | None = None
    confirm: bool | None = None
    aa: bool | None = None
    sha: str | None = None  # the head commit the commenter read (a prefix, lower case)
    help: bool = False

    def describe(self) -> str:
        """The options as a reader would type them, e.g. ``runs=50 only=sort``."""
        parts: list[str] = []
        if self.runs is not None:
            parts.append(f"runs={self.runs}")
        if self.only is not None:
            parts.append(f"only={','.join(self.only)}")
        if self.parity is not None:
            parts.append(f"parity={self.parity:g}")
        if self.confirm is not None:
            parts.append(f"confirm={'on' if self.confirm else 'off'}")
        if self.aa is not None:
            parts.append(f"aa={'on' if self.aa else 'off'}")
        if self.sha is not None:
            parts.append(f"sha={self.sha}")
        return " ".join(parts)

    def matches(self, head_sha: str) -> bool:
        """Whether ``sha=`` (if given) names ``head_sha``."""
        return self.sha is None or head_sha.lower().startswith(self.sha)


class CommandError(ValueError):
    """A ``/bench`` comment that was not understood; ``problems`` lists every reason."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = tuple(problems)


def is_command(body: str | None) -> bool:
    """Whether a comment asks for benchbot: its first word is ``/bench`` (not ``/benchmark``)."""
    words = _first_line(body).split(maxsplit=1)
    return bool(words) and words[0] == PREFIX


def parse(body: str) -> BenchCommand:
    """Parse a ``/bench`` comment; raise CommandError naming everything not understood."""
    words = _first_line(body).split()
    if not words or words[0] != PREFIX:
        raise CommandError([f"a command starts with `{PREFIX}`"])
    tokens = words[1:]
    if tokens == ["help"]:
        return BenchCommand(help=True)
    problems: list[str] = []
    values: dict[str, object] = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep:
            problems.append(f"`{_shown(token)}` is not an option (write key=value, e.g. runs=50)")
            continue
        if key not in OPTIONS:
            problems.append(f"unknown option `{_shown(key)}` (options: {', '.join(OPTIONS)})")
            continue
        if key in values:
            problems.append(f"`{key}` is given twice")
            continue
        try:
            values[key] = _READERS[key](value)
        except ValueError as exc:
            problems.append(f"`{key}={_shown(value)}`: {exc}")
    if problems:
        raise CommandError(problems)
    return BenchCommand(**values)  # type: ignore[arg-type]


def _first_line(body: str | None) -> str:
    text = (body or "").lstrip()
    return text.splitlines()[0] if text else ""


def _shown(text: str) -> str:
    """A user's token, made safe to quote inside backticks in a markdown reply."""
    clean = "".join(c if c.isprintable() and c != "`" else "?" for c in text)
    return clean if len(clean) <= _SHOWN_MAX else clean[: _SHOWN_MAX - 1] + "…"


def _runs(value: str) -> int:
    if not _INT_RE.fullmatch(value):
        raise ValueError(f"must be a whole number from {MIN_RUNS} to {MAX_RUNS}")
    runs = int(value)
    if not MIN_RUNS <= runs <= MAX_RUNS:
        raise ValueError(
            f"must be from {MIN_RUNS} to {MAX_RUNS} (fewer than {MIN_RUNS} runs a side are "
            "refused; more would hold the runner too long)"
        )
    return runs


def _only(value: str) -> tuple[str, ...]:
    names = tuple(value.split(","))
    bad = [n for n in names if not _NAME_RE.fullmatch(n)]
    if bad:
        raise ValueError("must be workload names separated by commas, e.g. only=sort,sum")
    return tuple(dict.fromkeys(names))


def _parity(value: str) -> float:
    match = _FRACTION_RE.fullmatch(value)
    if not match:
        raise ValueError("must be a fraction above 0 and below 1, e.g. parity=0.01 (or 1%)")
    number = float(value.rstrip("%")) / (100 if match.group(1) else 1)
    if not 0 < number < 1:
        raise ValueError("must be above 0 and below 1, e.g. parity=0.01 (or 1%)")
    return number


def _sha(value: str) -> str:
    if not _SHA_RE.fullmatch(value):
        raise ValueError("must be 7 to 40 hex digits of the head commit, e.g. sha=1a2b3c4")
    return value.lower()


def _switch(value: str) -> bool:
    low = value.lower()
    if low in _ON:
        return True
    if low in _OFF:
        return False
    raise ValueError("must be on or off")


_READERS = {
    "runs": _runs, "only": _only, "parity": _parity, "confirm": _switch, "aa": _switch,
    "sha": _sha,
}
