"""The templates of the reports beside the comparison's (a bisect's, a history's): one
jinja2 environment for markdown and one for HTML (autoescaped), their filters, and the
markdown tidied the same way."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any, Literal

import jinja2

from benchbot.report import format as fmt
from benchbot.report.escape import md_code_span, md_inline

PageFormat = Literal["markdown", "html"]


@cache
def environment(autoescape: bool) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("benchbot", "report/templates"),
        undefined=jinja2.StrictUndefined, autoescape=autoescape, keep_trailing_newline=True)
    env.filters.update(change=fmt.change, interval=fmt.interval, md=md_inline,
                       code=md_code_span, seconds=_seconds, alpha=_alpha,
                       percent=fmt.setting_percent)
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
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"
