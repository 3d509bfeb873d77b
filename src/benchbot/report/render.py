"""Render a ReportView with jinja2: markdown for comments and terminals, HTML for browsers."""

from __future__ import annotations

import re
from functools import cache
from typing import Literal

import jinja2

from benchbot.report.view import ReportView

Format = Literal["markdown", "html"]


@cache
def _environment(autoescape: bool) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("benchbot", "report/templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=autoescape,
        keep_trailing_newline=True,
        trim_blocks=False,
    )


def render(view: ReportView, fmt: Format = "markdown") -> str:
    """Render the report; markdown cells have their pipes escaped."""
    if fmt == "html":
        return _environment(True).get_template("report.html.j2").render(view=view)
    text = _environment(False).get_template("report.md.j2").render(view=_md_safe(view))
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def _md_safe(view: ReportView) -> ReportView:
    """Escape characters that would break a markdown table out of free text."""
    from dataclasses import replace

    def esc(text: str | None) -> str | None:
        return None if text is None else text.replace("|", "\\|").replace("\n", " ")

    rows = [replace(r, why=esc(r.why)) for r in view.rows]
    notes = [r for r in rows if r.note is not None]
    return replace(view, rows=rows, notes=notes)
