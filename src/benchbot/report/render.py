"""Render a ReportView with jinja2: markdown for comments and terminals, HTML for browsers."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any, Literal

import jinja2
from markupsafe import Markup

from benchbot.config.settings import duration_words
from benchbot.core.model import OUTCOMES, FoldedStacks
from benchbot.report import flame, plots
from benchbot.report import format as fmt
from benchbot.report.build import shortened
from benchbot.report.escape import Markdown, markdown_environment, md_code_span, md_inline
from benchbot.report.profiles import signed_duration, where_words
from benchbot.report.view import Distribution, ReportView, Row
from benchbot.verdict import figures

Format = Literal["markdown", "html"]


@cache
def _environment(autoescape: bool) -> jinja2.Environment:
    filters: dict[str, Callable[..., Any]] = dict(
        duration=fmt.duration, number=fmt.number, quantity=fmt.quantity, ratio=fmt.ratio,
        change=fmt.change, percent=fmt.percent, setting_percent=fmt.setting_percent,
        tolerance=fmt.tolerance, interval=fmt.interval, load=fmt.load, short_sha=fmt.short_sha,
        spark=fmt.spark, verdict=verdict_words,
        picture=picture, budget=lambda s: duration_words(s) if s is not None else "–",
        ratio_plot=plots.ratio_plot, runs_plot=plots.runs_plot, svg=plots.svg,
        instructions=fmt.instructions, memory=fmt.memory, signed_duration=signed_duration, counts_cell=counts_cell,
        memory_cell=memory_cell, count=fmt.count, where=where_words,
    )
    loader = jinja2.PackageLoader("benchbot", "report/templates")
    if not autoescape:  # every value escaped unless a filter made it (escape.py)
        env = markdown_environment(loader, filters)
    else:
        env = jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined,
                                 autoescape=True, keep_trailing_newline=True, trim_blocks=False)
        env.filters.update(filters, md=md_inline, code=md_code_span, flame=flame_graph,
                           time_flame=time_flame_graph)
    env.globals["outcomes"] = OUTCOMES
    return env


TEMPLATES: dict[Format, str] = {"markdown": "report.md.j2", "html": "report.html.j2"}


def prepare(*formats: Format) -> None:
    """Compile the templates of ``formats`` now (about 50 ms each, once per process)."""
    for f in formats:
        _environment(f == "html").get_template(TEMPLATES[f])


def render(view: ReportView, fmt_: Format = "markdown") -> str:
    """Render the report (the markdown one is ``Markdown``)."""
    if fmt_ == "html":
        return _environment(True).get_template(TEMPLATES["html"]).render(view=view)
    text = _environment(False).get_template(TEMPLATES["markdown"]).render(view=view)
    return Markdown(re.sub(r"\n{3,}", "\n\n", text).strip() + "\n")


def render_within(view: ReportView, limit: int) -> str:
    """The markdown report in at most ``limit`` characters where it can be: whole, or the
    first of ``build.shortened``'s versions that fits, which says what it leaves out; else
    the shortest (its caller cuts it, with a pointer to the whole)."""
    text = render(view)
    for shorter in shortened(view):
        if len(text) <= limit:
            break
        text = render(shorter)
    return text


def verdict_words(row: Row) -> str:
    """The verdict's cell: the outcome and the move of the signal that settled it
    (``benchbot.verdict.figures.words``): ``slower +4.3%``, ``faster −3.3% work``, ``faster (+20.0%
    throughput)``, ``level: same work; time within ±19.8%``, or the outcome alone."""
    if row.figure is None:
        return row.outcome
    return figures.words(row.figure)


def counts_cell(row: Row) -> str:
    """The instructions column: ``+3.0% exact``, ``+0.0% sampled``, ``–`` (not counted:
    with the footnote letter that says why, where there is one)."""
    c = row.counts
    if c is None or c.method is None:
        return f"– [{c.letter}]" if c is not None and c.letter else "–"
    if c.ratio is None:
        return f"– {c.kind}"
    if c.misses_shown is not None:  # the misses keep the counts from settling it: say so
        return f"{fmt.change(c.ratio)} {c.kind}, LL misses {fmt.change(c.misses_shown)}"
    return f"{fmt.change(c.ratio)} {c.kind}"


def memory_cell(row: Row) -> str:
    """The memory column: peak RSS change and the memory verdict's word: ``+10.2% more``."""
    m = row.memory
    if m is None:
        return "–"
    return m.word if m.ratio is None else f"{fmt.change(m.ratio)} {m.word}"


def picture(dist: Distribution | None, unit: str) -> str:
    """A distribution on one line: `▁▃█▅▁` 10th–90th percentile, and "2 modes" if so."""
    if dist is None:
        return "–"
    if unit == "ratio":
        span = f"{fmt.ratio(dist.p10)}–{fmt.ratio(dist.p90)}"
    else:
        span = f"{fmt.quantity(dist.p10, unit)}–{fmt.quantity(dist.p90, unit)}"
    modes = " · 2 modes" if dist.modes > 1 else ""
    return f"`{fmt.spark(dist.counts)}` {span}{modes}"


def flame_graph(stacks: FoldedStacks) -> Markup:
    """A profiled row's differential flame graph for the HTML report: head's folded stacks
    against base's, in instructions (``flame.render``; every name escaped there)."""
    return flame.render(stacks.base, stacks.head, unit="instructions",
                        title="Head against base, instructions by function (callgrind)")


def time_flame_graph(stacks: FoldedStacks) -> Markup:
    """A row's time profile as a differential flame graph: head's sampled stacks against
    base's, CPU time per run (``flame.render`` with the sampled thresholds: a sample's
    count moves by its square root between two profiles of the same program)."""
    return flame.render(stacks.base, stacks.head, unit="ns",
                        title="Head against base, CPU time by function (perf, cpu-clock)",
                        same_within=flame.SAMPLED_SAME_WITHIN, floor=flame.SAMPLED_FLOOR)
