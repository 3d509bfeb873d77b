"""What a reader sees: a results document made into markdown (the comment, the job summary)
or a self-contained HTML page.

``view`` builds the view model (one row per workload, its cell texts and notes) from a
``Results``; ``render`` fills the templates (``templates/``) with it, ``plots`` draws the
HTML page's SVG plots, ``format`` writes numbers with units and ``escape`` is the one
escaper of text the code under test or a commenter controls. ``bisect`` and ``history``
render those commands' documents, ``pages`` the pieces their pages share.
"""

from __future__ import annotations

from benchbot.core.model import Results
from benchbot.report.build import build_view
from benchbot.report.render import Format, prepare, render, render_within
from benchbot.report.view import CommandStyle

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
