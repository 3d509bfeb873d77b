"""Reports: results -> view model -> markdown or HTML."""

from __future__ import annotations

from benchbot.model import Results
from benchbot.report.render import Format, prepare, render
from benchbot.report.view import CommandStyle, build_view

__all__ = ["build_view", "prepare", "render", "render_results"]


def render_results(
    doc: Results,
    fmt: Format = "markdown",
    *,
    run_url: str | None = None,
    command_style: CommandStyle = "cli",
) -> str:
    """Render a results document in one step."""
    return render(build_view(doc, run_url=run_url, command_style=command_style), fmt)
