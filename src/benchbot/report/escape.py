"""Text from outside benchbot, made safe to show in markdown: one escaper for every value.

Workload output, build logs, failure reasons, branch names, a commenter's words and
everything in a results file that came from the benchmark runner may have been written by
someone else. In the comment, the replies, the check, the job summary and the history
issue such text must stay text: no live HTML, no links or images, no ``@mention`` that
notifies someone, no closing of a code fence, no table cell broken open. The HTML report
relies on jinja2's autoescape instead.

By construction, as jinja2's autoescape does for HTML:

- ``Markdown`` is markdown benchbot wrote; every value put into it goes through ``md``
  (``Markdown.format``, ``join``, ``+``), which escapes whatever is not ``Markdown``
  already. What benchbot posts (a reply, the sticky comment, a check's summary, the job
  summary) must be ``Markdown``: ``require`` refuses a plain ``str``.
- The markdown templates render in ``markdown_environment``: each ``{{ value }}`` goes
  through ``md`` unless a filter made it (a filter formats numbers and benchbot's own
  words, or escapes what it is given); ``code`` is the one code span, right inside a
  table row and outside one (``_MarkdownTemplate`` escapes its ``|`` in a row).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import jinja2


class Markdown(str):
    """Markdown that benchbot wrote, every value in it escaped (see the module's docstring)."""

    __slots__ = ()

    def format(self, *args: object, **kwargs: object) -> Markdown:
        """``str.format`` with every argument escaped by ``md`` (after its format spec)."""
        return Markdown(_FORMATTER.vformat(self, args, kwargs))

    def join(self, items: Iterable[object]) -> Markdown:
        return Markdown(str.join(self, (md(item) for item in items)))

    def __add__(self, other: object) -> Markdown:
        return Markdown(str.__add__(self, md(other)))

    def __radd__(self, other: object) -> Markdown:
        return Markdown(str.__add__(md(other), self))


class _Formatter(string.Formatter):
    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, Markdown):
            return value if not format_spec else md(format(str(value), format_spec))
        return md(format(value, format_spec))


_FORMATTER = _Formatter()


def md(value: object) -> Markdown:
    """``value`` as markdown: ``Markdown`` as it is, a number as its digits, None as
    nothing, anything else escaped as literal inline text (``md_inline``)."""
    if isinstance(value, Markdown):
        return value
    if value is None:
        return Markdown("")
    if isinstance(value, (bool, int, float)):
        return Markdown(str(value))
    return md_inline(str(value))


def require(text: object, what: str) -> Markdown:
    """``text`` if it is ``Markdown``; a TypeError if it is not (benchbot posts nothing else)."""
    if not isinstance(text, Markdown):
        raise TypeError(f"{what}: {type(text).__name__} is not benchbot's Markdown; "
                        "build it with escape.Markdown(...).format(...) or md()")
    return text

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


def md_inline(text: str | None) -> Markdown:
    """``text`` as literal inline markdown on one line (safe in a table cell)."""
    if not text:
        return Markdown("")
    flat = " ".join(_CONTROL.sub("", text).split())
    escaped = _SPECIAL.sub(r"\\\1", flat)
    escaped = _EDGE_UNDERSCORE.sub(r"\\_", escaped)
    escaped = _AUTOLINK.sub(lambda m: m.group(1)[0] + _JOINER + m.group(1)[1:], escaped)
    return Markdown(escaped.replace("@", "@" + _JOINER))


def md_code_block(text: str, info: str = "text") -> Markdown:
    """``text`` in a fenced code block whose fence no line of it can close."""
    clean = _CONTROL.sub("", text.replace("\t", "    ").replace("\r", ""))
    longest = max((len(run) for run in re.findall(r"`+|~+", clean)), default=0)
    fence = "`" * max(3, longest + 1)
    return Markdown(f"{fence}{info}\n{clean}\n{fence}")


def md_code_span(text: str) -> Markdown:
    """``text`` as an inline code span that no backtick in it can end (outside a table:
    the templates' ``code`` is right in both)."""
    clean = " ".join(_CONTROL.sub("", text).split())
    if not clean:
        return Markdown("` `")
    longest = max((len(run) for run in re.findall(r"`+", clean)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if clean.startswith("`") or clean.endswith("`") else ""
    return Markdown(f"{fence}{pad}{clean}{pad}{fence}")


# A "|" inside a code span that the templates wrote: a NUL, which no text reaches the
# output with (``_CONTROL`` takes it out of everything escaped), until the rendered
# template's lines are read: GitHub splits a table row at every "|" before it parses the
# cells, code spans included, so in a row it becomes "\\|" (a "|" of the cell's text: the
# table takes the backslash), elsewhere "|" (a backslash in a code span would show).
_SPAN_PIPE = "\x00"


def md_code(text: object) -> Markdown:
    """The templates' code span (``code``): right in a table row and outside one."""
    return Markdown(md_code_span(str(text)).replace("|", _SPAN_PIPE))


def _pipes(text: str) -> str:
    """The code spans' "|" of a rendered template, as a table row or other text needs it."""
    if _SPAN_PIPE not in text:
        return text
    return "\n".join(line.replace(_SPAN_PIPE, "\\|" if line.lstrip().startswith("|") else "|")
                     for line in text.split("\n"))


class _MarkdownTemplate(jinja2.Template):
    """A markdown template: what it renders is ``Markdown``, its code spans' pipes placed."""

    def render(self, *args: Any, **kwargs: Any) -> Markdown:
        return Markdown(_pipes(super().render(*args, **kwargs)))


def _made(f: Callable[..., object]) -> Callable[..., Markdown]:
    """A template filter, whose output is markup it made (numbers, benchbot's words)."""
    def made(*args: Any, **kwargs: Any) -> Markdown:
        out = f(*args, **kwargs)
        return out if isinstance(out, Markdown) else Markdown(str(out))
    made.__name__ = getattr(f, "__name__", "filter")
    return made


def markdown_environment(loader: jinja2.BaseLoader,
                         filters: Mapping[str, Callable[..., Any]]) -> jinja2.Environment:
    """The environment of every markdown template: ``{{ value }}`` is escaped by ``md``
    unless a filter made it; ``md`` escapes text, ``code`` makes a code span, ``url`` a
    link's target; ``markdown`` marks a macro's output (the template's own markdown)."""
    env = jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined, autoescape=False,
                             keep_trailing_newline=True, finalize=md)
    env.template_class = _MarkdownTemplate
    env.filters.update({name: _made(f) for name, f in filters.items()})
    env.filters.update(md=md, code=md_code, url=md_url, markdown=Markdown)
    return env


_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}")


def mention(login: str) -> Markdown:
    """``@login`` that notifies them (benchbot answers the one who asked), where ``login``
    is a GitHub login; anything else as text that mentions no one."""
    return Markdown(f"@{login}") if _LOGIN.fullmatch(login) else md("@" + login)


def md_url(url: object) -> Markdown:
    """A link's target: an ``http(s)://`` URL with nothing in it that ends the link
    (``( ) < >``, space, a line end, ``\\``, ``[ ]``, a backtick), each percent-encoded; else a
    ValueError (benchbot links to the pages of GitHub's server only)."""
    text = str(url)
    if not text.startswith(("https://", "http://")):
        raise ValueError(f"not an http(s) URL: {text[:80]!r}")
    return Markdown(re.sub(r"[\s()<>\\\[\]`\x00-\x1f\x7f]",
                           lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), text))
