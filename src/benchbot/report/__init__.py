"""Reports: results -> view model -> markdown or HTML."""

from __future__ import annotations

from benchbot.core.model import Results
from benchbot.report.render import Format, prepare, render, render_within
from benchbot.report.view import CommandStyle, build_view

__all__ = ["build_view", "prepare", "render", "render_comment", "render_results", "render_within"]


def render_results(
    doc: Results,
    fmt: Format = "markdown",
    *,
    run_url: str | None = None,
    command_style: CommandStyle = "cli",
) -> str:
    """Render a results document in one step."""
    return render(build_view(doc, run_url=run_url, command_style=command_style), fmt)


def render_comment(doc: Results, limit: int, *, run_url: str | None = None,
                   artifact: str | None = None) -> str:
    """The markdown report for a GitHub comment: within ``limit`` characters where leaving
    out details makes it fit (``render_within``), saying what it left out and where the
    whole report is."""
    view = build_view(doc, run_url=run_url, command_style="bench", artifact=artifact)
    return render_within(view, limit)
