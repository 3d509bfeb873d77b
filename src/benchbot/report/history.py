"""The history report (``historyreport.HistoryReport``) as markdown and as one self-contained
page: a view that decides, templates that format, and one SVG trend per workload.

Each trend: the cumulative change since the line's start on a log scale, its band (the
scan's z times its standard error), the steps called (a triangle up for slower, down for
faster), the drifts as spans, and a link strip per commit to its row of the commits table
(which links to the commit and its file in the store). The SVG holds numbers, hex and
fixed words only; commit subjects and workload names go through jinja2's autoescape (the
page) or ``md_inline`` (markdown). The page runs no script and fetches nothing; each
workload's section is ``content-visibility: auto``, so the browser lays out and paints
only the trends in view: 500 commits × 50 workloads stays one fast page.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from benchbot.history.composed import Commit, DriftRow, HistoryReport, Series
from benchbot.report import format as fmt
from benchbot.report import pages, plots
from benchbot.verdict import figures

_W, _H, _LEFT, _RIGHT, _TOP, _BOTTOM = 760.0, 190.0, 58.0, 10.0, 12.0, 160.0


@dataclass(frozen=True, slots=True, kw_only=True)
class TrendRow:
    """One workload: what the tables say of it, and its trend."""

    name: str
    anchor: str
    since_start: float | None  # the cumulative ratio at the line's last commit
    since_start_ci: tuple[float, float] | None
    steps: int
    drifts: int
    parity: float
    throughput: bool
    svg: Markup


@dataclass(frozen=True, slots=True, kw_only=True)
class StepLine:
    workload: str
    anchor: str
    sha: str
    short: str
    subject: str
    outcome: str
    ratio: float | None
    ci: tuple[float, float] | None
    href: str | None
    verdict: str = ""  # the outcome and its figure (benchbot.verdict.figures.words)


@dataclass(frozen=True, slots=True, kw_only=True)
class DriftLine:
    workload: str
    anchor: str
    since: str  # short SHAs
    until: str
    commits: int
    ratio: float
    ci: tuple[float, float]
    contributors: tuple[tuple[str, float], ...]  # (short sha, step ratio)
    confirmation: str | None  # in words


@dataclass(frozen=True, slots=True, kw_only=True)
class CommitLine:
    index: int
    sha: str
    short: str
    subject: str
    state: str
    why: str | None
    href: str | None  # the commit on the forge
    file: str | None  # its file in the store


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryView:
    title: str
    commits: int
    first: str
    last: str
    workloads: tuple[TrendRow, ...]
    steps: tuple[StepLine, ...]
    drifts: tuple[DriftLine, ...]
    table: tuple[CommitLine, ...]
    alpha: float
    z: float
    ranges: int
    off_line: int
    problems: tuple[str, ...]


def build_view(report: HistoryReport, *, results_base: str = "") -> HistoryView:
    """The page's and the markdown's view of a report; ``results_base`` is prefixed to each
    store file's name to link it (the store's folder, relative to the page)."""
    url = _web(report.url)
    commits = report.commits
    href = (lambda sha: f"{url}/commit/{sha}") if url else (lambda sha: None)
    anchors = {s.name: f"w{k}" for k, s in enumerate(report.workloads)}
    rows = tuple(_row(s, anchors[s.name], report) for s in report.workloads)
    steps = tuple(StepLine(workload=s.name, anchor=anchors[s.name], sha=commits[p.index].sha,
                           short=commits[p.index].sha[:7], subject=commits[p.index].subject,
                           outcome=p.outcome, ratio=p.ratio, ci=p.ci,
                           href=href(commits[p.index].sha),
                           verdict=figures.words(figures.figure_from(
                               p.outcome, settled_by=p.settled_by, time=p.ratio,
                               at_call=p.ratio, ci=p.ci, work=p.work, reading=p.counts)))
                  for s in report.workloads for p in s.steps)
    drifts = tuple(_drift_line(s.name, anchors[s.name], d, commits)
                   for s in report.workloads for d in s.drifts)
    table = tuple(CommitLine(index=c.index, sha=c.sha, short=c.sha[:7], subject=c.subject,
                             state=c.state, why=c.why, href=href(c.sha),
                             file=results_base + c.file if c.file else None)
                  for c in commits)
    return HistoryView(
        title="benchbot history" + (f": {report.repository}" if report.repository else ""),
        commits=max(len(commits) - 1, 0), first=commits[0].sha[:7] if commits else "",
        last=commits[-1].sha[:7] if commits else "", workloads=rows, steps=steps,
        drifts=drifts, table=table, alpha=report.alpha, z=report.z, ranges=report.ranges,
        off_line=report.off_line, problems=report.problems)


def _web(url: str | None) -> str | None:
    """The repository's address when it is a plain https one (anything else is not linked)."""
    if url and re.fullmatch(r"https://[A-Za-z0-9.-]+(:\d+)?(/[A-Za-z0-9._~-]+)*/?", url):
        return url.rstrip("/")
    return None


def _row(s: Series, anchor: str, report: HistoryReport) -> TrendRow:
    last = next((p for p in reversed(s.points) if p.level is not None), None)
    ratio = ci = None
    if last is not None and last.level is not None and last.level_se is not None and last.index:
        ratio = math.exp(last.level)
        ci = (math.exp(last.level - report.z * last.level_se),
              math.exp(last.level + report.z * last.level_se))
    return TrendRow(name=s.name, anchor=anchor, since_start=ratio, since_start_ci=ci,
                    steps=len(s.steps), drifts=len(s.drifts), parity=s.parity,
                    throughput=s.better == "higher", svg=trend_svg(s, report))


def _drift_line(name: str, anchor: str, d: DriftRow, commits: Sequence[Commit]) -> DriftLine:
    words = None
    if d.confirmation is not None:
        c = d.confirmation
        words = (f"{'confirmed' if c.confirmed else 'not confirmed'}: {c.outcome} "
                 f"{fmt.change(c.ratio)} ({fmt.interval(c.ci)})")
    return DriftLine(workload=name, anchor=anchor, since=commits[d.since].sha[:7],
                     until=commits[d.until].sha[:7], commits=d.until - d.since, ratio=d.ratio,
                     ci=d.ci, contributors=tuple((commits[i].sha[:7], r)
                                                 for i, r in d.contributors),
                     confirmation=words)


# --- the trend ------------------------------------------------------------------------------


def trend_svg(s: Series, report: HistoryReport) -> Markup:
    """One workload's trend as an ``<svg>`` (module docstring)."""
    n = max(len(report.commits) - 1, 1)
    z = report.z
    levels = [(p.index, p.level, p.level_se) for p in s.points
              if p.level is not None and p.level_se is not None]
    values = [math.exp(lv + k * z * se) for _, lv, se in levels for k in (-1, 0, 1)]
    values += [1.0, 1 + s.parity, 1 / (1 + s.parity)]
    lo, hi = plots.log_domain(values)
    y = plots.Scale(lo, hi, _BOTTOM, _TOP, log=True)
    x = plots.Scale(0, n, _LEFT, _W - _RIGHT)
    parts = [f'<svg class="trend" viewBox="0 0 {_W:.0f} {_H:.0f}" role="img" '
             'xmlns="http://www.w3.org/2000/svg"><title>the change since the first commit, '
             'commit by commit</title>',
             f'<path class="frame" d="M{_f(_LEFT)} {_f(_TOP)}H{_f(_W - _RIGHT)}V{_f(_BOTTOM)}'
             f'H{_f(_LEFT)}z"/>']
    for d in s.drifts:
        cls = "slower" if d.ratio > 1 else "faster"
        parts.append(f'<rect class="drift {cls}" x="{_f(x(d.since))}" y="{_f(_TOP)}" '
                     f'width="{_f(max(x(d.until) - x(d.since), 1))}" height="{_f(_BOTTOM - _TOP)}"/>')
    parity = (y(1 + s.parity), y(1 / (1 + s.parity)))
    parts.append(f'<path class="parity" d="M{_f(_LEFT)} {_f(parity[0])}H{_f(_W - _RIGHT)}'
                 f'M{_f(_LEFT)} {_f(parity[1])}H{_f(_W - _RIGHT)}"/>')
    parts.append(f'<path class="one" d="M{_f(_LEFT)} {_f(y(1.0))}H{_f(_W - _RIGHT)}"/>')
    for run in _runs(s):
        upper = [(x(i), y(math.exp(lv + z * se))) for i, lv, se in run]
        lower = [(x(i), y(math.exp(lv - z * se))) for i, lv, se in reversed(run)]
        parts.append(f'<path class="band" d="{_poly(upper + lower)}z"/>')
        parts.append(f'<path class="level" d="{_poly([(x(i), y(math.exp(lv))) for i, lv, _ in run])}"/>')
    parts += _markers(s, levels, x, y)
    ticks = plots.ratio_ticks(lo, hi)
    labels = plots.thin([plots.Tick(y(t), plots.ratio_label(t, ticks)) for t in ticks], keep=y(1.0))
    parts.append('<g class="tick" text-anchor="end">' + "".join(
        f'<text x="{_f(_LEFT - 5)}" y="{_f(t.at + 3.5)}">{_esc(t.label)}</text>' for t in labels)
        + "</g>")
    parts.append(f'<text class="axis" x="{_f((_LEFT + _W) / 2)}" y="{_f(_H - 8)}" '
                 f'text-anchor="middle">commits, oldest first ({n}); the change since the first, '
                 f'with its band at z = {z:.2f}</text>')
    parts += _hits(s, report, x)
    parts.append("</svg>")
    return Markup("".join(parts))  # numbers, hex and fixed words only


def _runs(s: Series) -> list[list[tuple[int, float, float]]]:
    """The levels in runs: a gap (no figure for a step) ends one, and the next begins
    again from no change at the gap's commit."""
    out: list[list[tuple[int, float, float]]] = [[]]
    for p in s.points:
        if p.level is None or p.level_se is None:
            out.append([(p.index, 0.0, 0.0)])
        else:
            out[-1].append((p.index, p.level, p.level_se))
    return [run for run in out if len(run) > 1]


def _markers(s: Series, levels: Sequence[tuple[int, float, float]], x: plots.Scale,
             y: plots.Scale) -> list[str]:
    at = {i: lv for i, lv, _ in levels}
    paths = {"slower": "", "faster": ""}
    for step in s.steps:
        if step.index not in at or step.outcome not in paths:
            continue
        cx, cy = x(step.index), y(math.exp(at[step.index]))
        if step.outcome == "slower":
            paths["slower"] += f"M{_f(cx)} {_f(cy - 7)}l5 9h-10z"
        else:
            paths["faster"] += f"M{_f(cx)} {_f(cy + 7)}l5 -9h-10z"
    return [f'<path class="mark {k}" d="{d}"/>' for k, d in paths.items() if d]


MIN_STRIP = 4.0  # pixels: a link narrower than this cannot be pointed at


def _hits(s: Series, report: HistoryReport, x: plots.Scale) -> list[str]:
    """Links over the trend to the commits' rows of the table: a transparent strip per
    commit, or, where commits are too many for a strip each (narrower than MIN_STRIP),
    per group of neighbours, to the one whose step moved most; with a tooltip of short
    SHA and figures."""
    n = max(len(report.commits) - 1, 1)
    each = (_W - _RIGHT - _LEFT) / n
    group = max(1, math.ceil(MIN_STRIP / each))
    points = list(s.points)
    out = []
    for start in range(0, len(points), group):
        members = points[start:start + group]
        p = max(members, key=lambda q: abs(q.step.centre) if q.step is not None else -1.0)
        sha = _hex(report.commits[p.index].sha[:7])
        step = fmt.change(p.step.ratio) if p.step is not None else "–"
        total = fmt.change(math.exp(p.level)) if p.level is not None else "–"
        more = f" (of {len(members)} commits here)" if len(members) > 1 else ""
        tip = f"{sha}{more}: step {step}, since the first {total}" + (
            f", {p.outcome}" if p.outcome in ("slower", "faster") else "")
        left, right = x(members[0].index) - each / 2, x(members[-1].index) + each / 2
        out.append(f'<a href="#c{p.index}"><rect class="hit" x="{_f(left)}" '
                   f'width="{_f(right - left)}"><title>{_esc(tip)}</title></rect></a>')
    return out


def _poly(points: Sequence[tuple[float, float]]) -> str:
    return "M" + "L".join(f"{_f(a)} {_f(b)}" for a, b in points)


def _f(value: float) -> str:
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _hex(text: str) -> str:
    return text if re.fullmatch(r"[0-9a-f]*", text) else ""


def _esc(words: str) -> str:
    return str(Markup.escape(words))


# --- rendering -------------------------------------------------------------------------------

HistoryFormat = pages.PageFormat
TEMPLATES = {"markdown": "history.md.j2", "html": "history.html.j2"}


def render(report: HistoryReport, fmt_: HistoryFormat = "markdown", *,
           results_base: str = "") -> str:
    """The history report as markdown or as a self-contained HTML page."""
    return pages.render(build_view(report, results_base=results_base), TEMPLATES, fmt_)
