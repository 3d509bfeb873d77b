"""Render a ReportView with jinja2: markdown for comments and terminals, HTML for browsers."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache
from typing import Literal

import jinja2

from benchbot.report.escape import md_code_span, md_inline
from benchbot.report.view import ReportView

Format = Literal["markdown", "html"]


@cache
def _environment(autoescape: bool) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("benchbot", "report/templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=autoescape,
        keep_trailing_newline=True,
        trim_blocks=False,
    )
    env.filters["code"] = md_code_span
    return env


def render(view: ReportView, fmt: Format = "markdown") -> str:
    """Render the report; markdown cells have their pipes escaped."""
    if fmt == "html":
        return _environment(True).get_template("report.html.j2").render(view=view)
    text = _environment(False).get_template("report.md.j2").render(view=_md_safe(view))
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def _md_safe(view: ReportView) -> ReportView:
    """Escape free text for markdown: it may come from the code under test (a failure's
    stderr, a branch name, anything in a results file made on the benchmark runner)."""
    rows = [replace(r, why=md_inline(r.why) if r.why else None) for r in view.rows]
    notes = [r for r in rows if r.note is not None]
    return replace(
        view, rows=rows, notes=notes, base=md_inline(view.base), head=md_inline(view.head),
        environment=[(k, md_inline(v)) for k, v in view.environment],
        warnings=[md_inline(w) for w in view.warnings],
    )
