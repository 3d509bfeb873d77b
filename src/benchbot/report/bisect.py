"""The bisect document as a report: a view that decides, templates that format, and the
commit line drawn as SVG (steps as spans over the commits they compared).

Commit subjects and names come from the repository: the markdown template passes them
through ``md_inline``, the HTML one through jinja2's autoescape; the SVG holds numbers,
short SHAs (hex) and fixed words only.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from markupsafe import Markup

from benchbot.bisect.bisectdoc import BisectResults, Step, short
from benchbot.report import pages
from benchbot.report.profiles import ProfileView, profile_view
from benchbot.verdict import figures

Role = Literal["good", "bad", "culprit", "skipped", "tried", "not built"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CommitRow:
    """One commit of the line as the report shows it."""

    index: int
    sha: str
    short: str
    subject: str
    role: Role
    why: str | None  # skipped: why
    against: str | None  # the step's reference that decided this row (short sha)
    outcome: str | None
    ratio: float | None
    ci: tuple[float, float] | None
    note: str | None  # "identical build output", "or the skipped …"
    verdict: str | None = None  # the outcome and its figure (benchbot.verdict.figures.words)


@dataclass(frozen=True, slots=True, kw_only=True)
class StepRow:
    number: int
    left: str
    right: str
    outcome: str
    measured: bool
    reason: str | None
    ratio: float | None
    ci: tuple[float, float] | None
    pairs: int
    wall_s: float
    alpha: float
    verdict: str = ""  # the outcome and its figure (benchbot.verdict.figures.words)


@dataclass(frozen=True, slots=True, kw_only=True)
class RangeRow:
    """Commits among which a change could not be placed, and why."""

    left: str
    right: str
    why: str


@dataclass(frozen=True, slots=True, kw_only=True)
class BisectView:
    """Every decision of the bisect report."""

    title: str
    workload: str
    good: str
    bad: str
    headline: str  # the answer in a sentence a human can act on
    kind: str
    rows: tuple[CommitRow, ...]
    ranges: tuple[RangeRow, ...]
    steps: tuple[StepRow, ...]
    measured: int
    identical: int
    alpha: float
    budget_s: float
    wall_s: float
    sandbox: str | None
    warnings: tuple[str, ...]
    svg: Markup
    # Where the change is: each profiled culprit's short SHA and its step's profile
    wheres: tuple[tuple[str, ProfileView], ...] = ()


def build_view(doc: BisectResults) -> BisectView:
    """The report's view of a bisect document."""
    index = {c.sha: i for i, c in enumerate(doc.commits)}
    culprits = {c.sha: c for c in doc.answer.culprits}
    # For each commit, the step whose candidate it was with the nearest reference.
    decided: dict[str, Step] = {}
    for s in doc.steps:
        best = decided.get(s.right)
        if best is None or index[s.left] > index[best.left]:
            decided[s.right] = s
    rows = []
    last = len(doc.commits) - 1
    for i, c in enumerate(doc.commits):
        step = decided.get(c.sha)
        role: Role = ("good" if i == 0 else "culprit" if c.sha in culprits else
                      "skipped" if c.build == "skipped" else "bad" if i == last else
                      "tried" if c.build == "ok" else "not built")
        note = None
        if c.sha in culprits and culprits[c.sha].skipped:
            note = "or at the skipped " + ", ".join(short(s) for s in culprits[c.sha].skipped)
        elif step is not None and not step.measured:
            note = step.reason
        rows.append(CommitRow(
            index=i, sha=c.sha, short=short(c.sha), subject=c.subject, role=role, why=c.why,
            against=short(step.left) if step else None, outcome=step.outcome if step else None,
            ratio=step.ratio if step else None, ci=step.ci if step else None, note=note,
            verdict=verdict_words(step) if step else None))
    steps = tuple(StepRow(number=s.number, left=short(s.left), right=short(s.right),
                          outcome=s.outcome, measured=s.measured, reason=s.reason,
                          ratio=s.ratio, ci=s.ci, pairs=s.pairs, wall_s=s.wall_s, alpha=s.alpha,
                          verdict=verdict_words(s))
                  for s in doc.steps)
    return BisectView(
        title=f"bisect {doc.workload}: {short(doc.good.sha)}..{short(doc.bad.sha)}",
        workload=doc.workload, good=doc.good.ref, bad=doc.bad.ref,
        headline=doc.answer.sentence, kind=doc.answer.kind, rows=tuple(rows), steps=steps,
        ranges=tuple(RangeRow(left=short(r.left), right=short(r.right), why=r.why)
                     for r in doc.answer.ranges),
        measured=sum(1 for s in doc.steps if s.measured),
        identical=sum(1 for s in doc.steps if not s.measured and s.outcome == "level"),
        alpha=doc.settings.alpha, budget_s=doc.settings.budget_s, wall_s=doc.wall_s,
        sandbox=doc.sandbox.description if doc.sandbox else None,
        warnings=doc.environment.warnings, svg=commit_line_svg(doc),
        wheres=tuple((short(c.sha), view) for c in doc.answer.culprits
                     if (view := profile_view(c.profile)) is not None))


def verdict_words(step: Step) -> str:
    """A step's outcome and the move of the signal that settled it, as every report says it
    (``slower +4.3%``, ``faster −3.3% work``; benchbot.verdict.figures)."""
    return figures.words(figures.figure_from(
        step.outcome, settled_by=step.settled_by, time=step.ratio, at_call=step.ratio,
        ci=step.ci, work=step.work, reading=step.counts))


# --- the commit line ------------------------------------------------------------------------

_W, _LEFT, _RIGHT, _TOP, _ROW = 720.0, 40.0, 20.0, 34.0, 18.0


def commit_line_svg(doc: BisectResults) -> Markup:
    """An ``<svg>`` of the commits (dots on a line, good at the left) and every step as a
    span from its reference to its candidate, one row per step in the order run, coloured
    by outcome; culprits ringed, skipped commits crossed."""
    n = len(doc.commits)
    index = {c.sha: i for i, c in enumerate(doc.commits)}
    span = max(n - 1, 1)

    def x(i: int) -> float:
        return _LEFT + (_W - _LEFT - _RIGHT) * i / span

    height = _TOP + _ROW * (len(doc.steps) + 1) + 16
    culprits = {c.sha for c in doc.answer.culprits}
    parts = [f'<svg class="line" viewBox="0 0 {_W:.0f} {height:.0f}" role="img" '
             f'xmlns="http://www.w3.org/2000/svg"><title>steps along the commit line</title>',
             f'<line class="axis" x1="{x(0):.1f}" y1="20" x2="{x(n - 1):.1f}" y2="20"/>']
    # A short SHA is about 45 px wide: label every commit only where they fit.
    label_every = max(1, math.ceil(48 / ((_W - _LEFT - _RIGHT) / span)))
    for i, c in enumerate(doc.commits):
        cls = "culprit" if c.sha in culprits else "skipped" if c.build == "skipped" else c.build
        parts.append(f'<circle class="commit {cls}" cx="{x(i):.1f}" cy="20" r="4"/>')
        if c.build == "skipped":
            parts.append(f'<path class="cross" d="M{x(i) - 5:.1f} 15 l10 10 m0 -10 l-10 10"/>')
        regular = i % label_every == 0 and (n - 1 - i >= label_every or i == n - 1)
        if regular or c.sha in culprits or i == n - 1:
            parts.append(f'<text class="sha" x="{x(i):.1f}" y="10">{_hex(short(c.sha))}</text>')
    for row, s in enumerate(doc.steps):
        y = _TOP + _ROW * (row + 0.5)
        a, b = x(index[s.left]), x(index[s.right])
        parts.append(f'<text class="num" x="4" y="{y + 4:.1f}">{s.number}</text>')
        dash = "" if s.measured else ' stroke-dasharray="4 3"'
        parts.append(f'<line class="step {s.outcome}" x1="{a:.1f}" y1="{y:.1f}" '
                     f'x2="{b:.1f}" y2="{y:.1f}"{dash}><title>step {s.number}: {verdict_words(s)}'
                     '</title></line>')
        for end in (a, b):
            parts.append(f'<circle class="end {s.outcome}" cx="{end:.1f}" cy="{y:.1f}" r="2.5"/>')
    parts.append("</svg>")
    return Markup("".join(parts))  # numbers, hex and fixed words only


def _hex(text: str) -> str:
    return text if re.fullmatch(r"[0-9a-f]*", text) else ""


# --- rendering -------------------------------------------------------------------------------

BisectFormat = pages.PageFormat
TEMPLATES = {"markdown": "bisect.md.j2", "html": "bisect.html.j2"}


def render(doc: BisectResults, fmt_: BisectFormat = "markdown") -> str:
    """The bisect report as markdown (comments, terminals) or a self-contained HTML page."""
    return pages.render(build_view(doc), TEMPLATES, fmt_)
