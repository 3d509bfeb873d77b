"""The templates of the reports beside the comparison's (a bisect's, a history's): one
jinja2 environment for markdown (``escape.markdown_environment``: every value escaped) and
one for HTML (autoescaped), their filters, and the markdown tidied the same way."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Literal

import jinja2

from benchbot.report import format as fmt
from benchbot.report.escape import Markdown, markdown_environment, md_code_span, md_inline
from benchbot.report.profiles import where_words

PageFormat = Literal["markdown", "html"]


@cache
def environment(autoescape: bool) -> jinja2.Environment:
    filters: dict[str, Callable[..., Any]] = dict(
        change=fmt.change, interval=fmt.interval, seconds=_seconds, alpha=_alpha,
        percent=fmt.setting_percent, where=where_words, count=fmt.count)
    loader = jinja2.PackageLoader("benchbot", "report/templates")
    if not autoescape:  # every value escaped unless a filter made it (escape.py)
        return markdown_environment(loader, filters)
    env = jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined, autoescape=True,
                             keep_trailing_newline=True)
    env.filters.update(filters, md=md_inline, code=md_code_span)
    return env


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"


def _alpha(value: float) -> str:
    return "–" if not value else f"{value:.2g}"


def render(view: Any, templates: Mapping[str, str], fmt_: PageFormat) -> str:
    """``view`` through ``templates[fmt_]``: the HTML page as it is, the markdown with runs
    of blank lines made one."""
    if fmt_ == "html":
        return environment(True).get_template(templates["html"]).render(view=view)
    text = environment(False).get_template(templates["markdown"]).render(view=view)
    return Markdown(re.sub(r"\n{3,}", "\n\n", text).strip() + "\n")
