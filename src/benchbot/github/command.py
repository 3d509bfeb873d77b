"""The ``/bench`` comment command: a pure parser, no I/O.

Only the first line of a comment is read; whatever follows is free text for humans.
A command is a word ``/bench`` followed by ``key=value`` options and the bare words
``all`` and ``bisect`` separated by white space, or the single word ``help``. Anything not understood is collected, so the reply
can name every problem at once, and nothing runs. Values are checked here against
fixed rules (ranges, spellings); workload names in ``only=`` are checked later against
the configuration, which this module does not read. Nothing of a comment ever reaches
a shell: the values become typed fields, never text in a command line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from benchbot.config.settings import MAX_RUNS, MIN_RUNS, Overrides, SettingError, check_design, read
from benchbot.report.escape import Markdown, md_code_span

PREFIX = "/bench"
OPTIONS = ("runs", "budget", "max_runs", "only", "parity", "confirm", "aa", "sha", "from")
WORDS = ("all", "bisect", "profile")  # options written as a bare word
BISECT_OPTIONS = ("only", "budget", "sha", "from")  # what /bench bisect takes
FULL_SHA_DIGITS = 40
_SHA_RE = re.compile(r"[0-9a-fA-F]{7,40}")
_SHOWN_MAX = 40  # characters of a bad token quoted back in the reply

HELP = f"""\
**`/bench`** measures this pull request's head against its base on the benchmark runner.

```text
/bench                      run with the repository's settings
/bench budget=20m           measure until settled, for at most this long
                            (default: the config's budget, else 10m)
/bench max_runs=N           measure until settled, at most N pairs a workload ({MIN_RUNS} to {MAX_RUNS})
/bench runs=N               a fixed number of pairs per phase instead, {MIN_RUNS} to {MAX_RUNS}
/bench only=a,b             only these workloads or suites (core/BM_x: one benchmark)
/bench all                  also the workloads this change cannot affect (their
                            paths: in the config), which are otherwise skipped
/bench profile              profile every workload, not only those called slower or
                            faster: the functions whose instructions moved (callgrind)
/bench parity=0.01          differences below this fraction (1%) count as level
/bench confirm=off          with runs=N: skip the confirmation of standouts
/bench aa=off               skip the A/A check (not recommended)
/bench sha=<SHA>            only if the head is still this commit (forks: all 40 digits)
/bench bisect only=NAME     which of this pull request's commits changed NAME: each step
                            a comparison; the answer in a comment of its own (also
                            budget=1h for the whole search, default 3x the config's
                            budget, sha=, and from=<the base's 40 digits>, which a
                            fork needs: the reply lists the commits it would build)
/bench help                 this text
```

Options combine: `/bench budget=30m only=sort` (but `runs=` with `budget=` or `max_runs=` is
refused: they are two ways of measuring). Only people with write access to the
repository can run it. On a pull request from a fork, benchbot runs only the commit a
maintainer names with `sha=` and the head's full 40-digit SHA: a shorter prefix could be
matched by a commit made for the purpose; a bisect of a fork builds every commit between
base and head, so it runs only for the range a maintainer approves with `from=`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchCommand:
    """A parsed ``/bench`` command: the settings it puts over the config's, and ``sha=``."""

    overrides: Overrides = field(default_factory=Overrides)
    sha: str | None = None  # the head commit the commenter read (lower case; 7 to 40 digits)
    help: bool = False
    # /bench bisect: search the pull request's commits for the one that changed the
    # workload (``overrides.only``, exactly one); ``overrides.budget`` is the whole search's.
    bisect: bool = False
    # /bench bisect from=<base>: the base commit (all 40 digits) of the range the commenter
    # approves building, every first-parent commit from it to the head (``sha=``).
    base: str | None = None

    @property
    def workload(self) -> str | None:
        """The workload a bisect follows (None: not a bisect)."""
        only = self.overrides.only
        return only[0] if self.bisect and only else None

    def describe(self, *, sha: bool = True) -> str:
        """The options as a reader would type them, e.g. ``runs=50 only=sort``."""
        if self.bisect:
            words = f"bisect {self.overrides.words(('only', 'budget'))}".strip()
        else:
            words = self.overrides.words()
        if sha and self.sha is not None:
            words = f"{words} sha={self.sha}".strip()
        if sha and self.base is not None:
            words = f"{words} from={self.base}".strip()
        return words

    def matches(self, head_sha: str) -> bool:
        """Whether ``sha=`` (if given) names ``head_sha`` (a prefix will do)."""
        return self.sha is None or head_sha.lower().startswith(self.sha)

    @property
    def pins(self) -> bool:
        """Whether ``sha=`` names a commit outright: all 40 hex digits.

        A prefix of 7 digits is 28 bits, which a prepared commit can be made to match in
        minutes; a fork's code runs only when the full SHA was given.
        """
        return self.sha is not None and len(self.sha) == FULL_SHA_DIGITS


class CommandError(ValueError):
    """A ``/bench`` comment that was not understood; ``problems`` lists every reason, as
    ``Markdown`` whose values (the comment's words) are escaped."""

    def __init__(self, problems: list[Markdown]) -> None:
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
        raise CommandError([Markdown("a command starts with {}").format(md_code_span(PREFIX))])
    tokens = words[1:]
    if tokens == ["help"]:
        return BenchCommand(help=True)
    problems: list[Markdown] = []
    values: dict[str, object] = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if token in WORDS:
            if token in values:
                problems.append(Markdown("{} is given twice").format(md_code_span(token)))
            values[token] = True
        elif not sep:
            problems.append(Markdown("{} is not an option (write key=value, e.g. runs=50, or "
                                     "all)").format(md_code_span(_shown(token))))
        elif key not in OPTIONS:
            problems.append(Markdown("unknown option {} (options: {}, {})").format(
                md_code_span(_shown(key)), ", ".join(OPTIONS), ", ".join(WORDS)))
        elif key in values:
            problems.append(Markdown("{} is given twice").format(md_code_span(key)))
        else:
            try:
                values[key] = (_sha(value) if key == "sha" else _full_sha(value) if key == "from"
                               else read(key, value))
            except SettingError as exc:
                problems.append(Markdown("{}: {}").format(
                    md_code_span(f"{key}={_shown(value)}"), _unquoted(exc)))
    try:
        check_design(values.get("runs"), values.get("budget"), values.get("max_runs"),
                     spell=lambda key: f"`{key}=`")
    except SettingError as exc:  # benchbot's words and the keys' names, no value of the comment's
        problems.append(Markdown(str(exc)))
    bisect = bool(values.pop("bisect", False))
    if bisect:
        problems.extend(_bisect_problems(values))
    elif "from" in values:
        problems.append(Markdown("`from=` applies to `/bench bisect` only (the first commit "
                                 "of the range it builds)"))
    if problems:
        raise CommandError(problems)
    if values.pop("profile", False):
        values["profile"] = "all"
    sha = values.pop("sha", None)
    base = values.pop("from", None)
    return BenchCommand(overrides=Overrides(**values), sha=sha,  # type: ignore[arg-type]
                        bisect=bisect, base=base)  # type: ignore[arg-type]


def _bisect_problems(values: dict[str, object]) -> list[Markdown]:
    """What ``/bench bisect`` cannot take: one workload named with ``only=``, and no option
    that chooses how one comparison measures (each step measures as the config says)."""
    problems = [Markdown("{} does not apply to `/bench bisect` (it takes {})").format(
                    md_code_span(key), Markdown(", ").join(md_code_span(f"{o}=")
                                                           for o in BISECT_OPTIONS))
                for key in values if key not in BISECT_OPTIONS]
    only = values.get("only")
    if only is None:
        problems.append(Markdown("`/bench bisect` needs `only=NAME`: the one workload to follow"))
    elif isinstance(only, tuple) and len(only) != 1:
        problems.append(Markdown("`/bench bisect` follows one workload; `only=` names {}").format(
            len(only)))
    return problems


def _unquoted(exc: SettingError) -> str:
    """A setting's message without the value it quotes (the reply quotes it, made safe)."""
    return str(exc).split(", got ", 1)[0]


def _first_line(body: str | None) -> str:
    text = (body or "").lstrip()
    return text.splitlines()[0] if text else ""


def _shown(text: str) -> str:
    """A user's token, cut to quote in a reply (``md_code_span`` makes it safe there)."""
    clean = "".join(c if c.isprintable() else "?" for c in text)
    return clean if len(clean) <= _SHOWN_MAX else clean[: _SHOWN_MAX - 1] + "…"


def _full_sha(value: str) -> str:
    if not re.fullmatch(r"[0-9a-fA-F]{40}", value):
        raise SettingError("must be all 40 hex digits of the base commit the reply names")
    return value.lower()


def _sha(value: str) -> str:
    if not _SHA_RE.fullmatch(value):
        raise SettingError("must be hex digits of the head commit, all 40 of them "
                           "(7 or more will do on the repository's own branches)")
    return value.lower()


