"""benchbot history report: a store read into the line of commits, each workload's trend,
its steps and its drifts (``trend``), and, with ``--confirm``, each drift's two ends
compared directly (docs/verdict.md, "History: steps and drifts").

The line is the first-parent chain the store's records make, each naming the commit it
was compared with: from the record written last that no other names, back to a commit
the store does not hold. A record off that line (a branch force-pushed away) is left out
and counted. The document built here is what the page, the markdown and ``--json``
show; ``dumps`` writes it (``kind: "history-report"``, schema
``schemas/history-report.schema.json``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from benchbot import __version__
from benchbot.config.settings import Overrides
from benchbot.core import codec
from benchbot.core.codec import omitted_when_none
from benchbot.core.model import Better, Outcome
from benchbot.history.historydoc import CommitRecord, Store, WorkloadStep
from benchbot.verdict import trend

if TYPE_CHECKING:
    from benchbot.measure.engine import Reporter

SCHEMA_VERSION = 1
# History:
# 1 - first version: commits, workloads (points, steps, drifts), the scan's error
CALLS = ("slower", "faster")
TRENDED: tuple[Outcome, ...] = ("slower", "faster", "level", "inconclusive")
DEFAULT_ALPHA = 0.05

CommitState = Literal["start", "measured", "identical", "failed"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Commit:
    """A commit of the line, oldest first; ``index`` 0 is the commit the first step was
    compared with."""

    index: int
    sha: str
    subject: str
    state: CommitState
    why: str | None = None
    file: str | None = None  # the store's file name (None: the start, not in the store)
    spans: int = 1  # first-parent commits the step holds (a push of several: more)


@dataclass(frozen=True, slots=True, kw_only=True)
class Point:
    """A workload at one commit: its step into it and the cumulative change since the
    line's start (ratios; log and error in ``trend``'s terms)."""

    index: int
    outcome: Outcome | None = None  # the step's own verdict (None: not measured here)
    ratio: float | None = None  # the verdict's figure
    ci: tuple[float, float] | None = None
    step: trend.StepEstimate | None = None  # the trend's estimate of the step
    level: float | None = None  # cumulative log change since the start (None: a gap)
    level_se: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class NamedStep:
    """A commit whose own verdict called a change for this workload."""

    index: int
    sha: str
    outcome: Outcome
    ratio: float | None
    ci: tuple[float, float] | None
    # What the verdict rests on (benchbot.verdict.figures), as the commit's record keeps it.
    settled_by: str | None = omitted_when_none(default=None)
    work: float | None = omitted_when_none(default=None)
    counts: str | None = omitted_when_none(default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class DriftRow:
    """A drift: the change after commit ``since`` up to commit ``until`` (indexes of the
    line), its figure and interval at the scan's z, and the commits that moved most."""

    since: int
    until: int
    ratio: float
    ci: tuple[float, float]
    contributors: tuple[tuple[int, float], ...]  # (commit index, its step's ratio)
    confirmation: Confirmation | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Confirmation:
    """A drift's two ends compared directly with the whole rule."""

    outcome: Outcome
    ratio: float | None
    ci: tuple[float, float] | None
    confirmed: bool
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Series:
    """One workload along the line."""

    name: str
    unit: str
    better: Better
    parity: float
    points: tuple[Point, ...]
    steps: tuple[NamedStep, ...]
    drifts: tuple[DriftRow, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryReport:
    kind: Literal["history-report"] = "history-report"
    schema_version: int = SCHEMA_VERSION
    tool: str = f"benchbot {__version__}"
    created: str
    store: str
    repository: str | None = None
    url: str | None = None  # the repository's web address (links to commits)
    alpha: float
    z: float  # every range was tested at this z
    ranges: int  # how many ranges the scan tested
    commits: tuple[Commit, ...]
    workloads: tuple[Series, ...]
    off_line: int = 0  # records of the store not on the line
    problems: tuple[str, ...] = ()  # files refused, one line each


# --- the line ------------------------------------------------------------------------------


def line(records: Mapping[str, CommitRecord]) -> tuple[list[CommitRecord], int]:
    """The records of the first-parent line, oldest first, and how many are off it.

    A record of a commit that could not be built is on the line like any other (a push
    whose head failed is the next push's ``against``) and shown as failed. Of several
    tips (a branch rewritten), the line is the one whose tip was written last, by the time
    benchbot stamped on it when it wrote the record into the store (``created``: the
    publish step stamps its own, never the artifact's); of tips written in the same
    second, the longest line's.
    """
    named = {r.against.sha for r in records.values()}
    named |= {s.sha for r in records.values() for s in r.skipped}
    tips = [r for r in records.values() if r.sha not in named]
    if not tips:  # a store of nothing, or a loop of records naming each other
        return [], len(records)
    chain = max((_back(t, records) for t in tips), key=lambda c: (c[0].created, len(c)))
    chain.reverse()
    on = {r.sha for r in chain} | {s.sha for r in chain for s in r.skipped}
    return chain, sum(1 for sha in records if sha not in on)


def _back(tip: CommitRecord, records: Mapping[str, CommitRecord]) -> list[CommitRecord]:
    """``tip`` and the records it was compared with, back to one the store lacks."""
    chain = [tip]
    seen = {tip.sha}
    while chain[-1].against.sha in records and chain[-1].against.sha not in seen:
        chain.append(records[chain[-1].against.sha])
        seen.add(chain[-1].sha)
    return chain


def _commits(chain: Sequence[CommitRecord], records: Mapping[str, CommitRecord]) -> list[Commit]:
    first = chain[0].against
    out = [Commit(index=0, sha=first.sha, subject=first.subject, state="start")]
    for r in chain:
        for s in r.skipped:
            failed = records.get(s.sha)
            out.append(Commit(index=len(out), sha=s.sha, subject=s.subject, state="failed",
                              why=failed.why if failed else "not built",
                              file=f"{s.sha}.json" if failed else None))
        out.append(Commit(index=len(out), sha=r.sha, subject=r.commit.subject,
                          state=r.state, why=r.why, file=f"{r.sha}.json",
                          spans=1 + len(r.spans)))
    return out


# --- the series ----------------------------------------------------------------------------


def _series(name: str, chain: Sequence[CommitRecord], index: Mapping[str, int],
            by_commit: Mapping[int, WorkloadStep]) -> tuple[Series, list[trend.Step]]:
    """A workload's points and steps along the line: a step into each commit of the chain
    (a workload the commit's record lacks, or that has no usable estimate there: a gap);
    ``by_commit``: its step at each commit's index."""
    steps = []
    for r in chain:
        w = by_commit.get(index[r.sha])
        usable = w is not None and w.outcome in TRENDED and w.step is not None
        steps.append(trend.Step(index=index[r.sha], estimate=w.step if usable and w else None,
                                called=w is not None and w.outcome in CALLS))
    levels = trend.cumulative(steps)
    points = [Point(index=0, level=0.0, level_se=0.0)]
    for s, lv in zip(steps, levels[1:], strict=True):
        w = by_commit.get(s.index)
        points.append(Point(index=s.index, outcome=w.outcome if w else None,
                            ratio=w.ratio if w else None, ci=w.ci if w else None,
                            step=s.estimate, level=lv.log, level_se=lv.se))
    shas = {i: sha for sha, i in index.items()}
    named = tuple(NamedStep(index=i, sha=shas[i], outcome=w.outcome, ratio=w.ratio, ci=w.ci,
                            settled_by=w.settled_by, work=w.work, counts=w.counts)
                  for i, w in sorted(by_commit.items()) if w.outcome in CALLS)
    ref = by_commit[max(by_commit)]
    return Series(name=name, unit=ref.unit, better=ref.better, parity=ref.parity,
                  points=tuple(points), steps=named, drifts=()), steps


def build(store: Path, *, url: str | None = None) -> HistoryReport:
    """The report of a store (module docstring)."""
    read = Store(store).read()
    chain, off = line(read.records)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if not chain:
        return HistoryReport(created=now, store=str(store), url=url, alpha=DEFAULT_ALPHA,
                             z=0.0, ranges=0, commits=(), workloads=(), off_line=off,
                             problems=read.problems)
    commits = _commits(chain, read.records)
    on_line = {r.sha for r in chain}
    index = {c.sha: c.index for c in commits if c.index == 0 or c.sha in on_line}
    steps_of: dict[str, dict[int, WorkloadStep]] = {}
    for r in chain:
        for w in r.workloads:
            steps_of.setdefault(w.name, {})[index[r.sha]] = w
    built = {n: _series(n, chain, index, by) for n, by in steps_of.items()}
    alpha = next((r.settings.alpha for r in reversed(chain) if r.settings), DEFAULT_ALPHA)
    z, ranges, found = trend.scan({n: s for n, (_, s) in built.items()},
                                  {n: series.parity for n, (series, _) in built.items()},
                                  alpha=alpha)
    workloads = []
    for n, (series, steps) in built.items():
        ratios = {s.index: s.estimate.ratio for s in steps if s.estimate}
        drifts = tuple(DriftRow(since=_before(steps, d.first), until=d.last,
                                ratio=d.ratio, ci=d.interval,
                                contributors=tuple((i, ratios[i]) for i in d.contributors))
                       for d in found[n])
        workloads.append(replace(series, drifts=drifts))
    return HistoryReport(created=now, store=str(store), repository=chain[-1].repository,
                         url=url, alpha=alpha, z=z, ranges=ranges, commits=tuple(commits),
                         workloads=tuple(workloads), off_line=off, problems=read.problems)


def _before(steps: Sequence[trend.Step], first: int) -> int:
    """The commit the step into commit ``first`` was compared with (the step before it,
    over any commit that could not be built)."""
    before = [s.index for s in steps if s.index < first]
    return before[-1] if before else 0


# --- confirmation --------------------------------------------------------------------------


def confirm(report: HistoryReport, *, repo: Path, config_path: Path | None = None,
            reporter: Reporter | None = None,
            compare: Callable[..., Any] | None = None) -> HistoryReport:
    """Each drift's two ends compared directly, interleaved, with the whole rule at the
    config's alpha (read at the drift's start, or ``config_path``): a drift is confirmed
    when that comparison calls the same change."""
    from benchbot.measure import engine

    run = compare or engine.compare
    workloads = []
    for series in report.workloads:
        rows = []
        for d in series.drifts:
            request = engine.Request(repo=repo, base=report.commits[d.since].sha,
                                     head=report.commits[d.until].sha, config_path=config_path,
                                     resolve_merge_base=False,
                                     overrides=_only(series.name))
            doc = run(request, reporter=reporter)
            [bench] = [b for b in doc.benchmarks if b.name == series.name]
            v = bench.verdict
            want = "slower" if d.ratio > 1 else "faster"
            ratio, ci = (v.estimate, v.estimate_ci) if v.estimate is not None else (v.ratio, v.ci)
            rows.append(replace(d, confirmation=Confirmation(
                outcome=v.outcome, ratio=ratio, ci=ci, confirmed=v.outcome == want,
                reason=v.reason)))
        workloads.append(replace(series, drifts=tuple(rows)))
    return replace(report, workloads=tuple(workloads))


def _only(name: str) -> Overrides:
    return Overrides(only=(name,), all=True)


# --- JSON ------------------------------------------------------------------------------------


def to_json(report: HistoryReport) -> dict[str, Any]:
    data: dict[str, Any] = codec.encode(report)
    return data


def dumps(report: HistoryReport) -> str:
    return json.dumps(to_json(report), indent=1, allow_nan=False) + "\n"


def schema() -> dict[str, Any]:
    """The JSON Schema of the report's document, shipped with the package."""
    from importlib import resources

    text = resources.files("benchbot").joinpath("schemas/history-report.schema.json").read_text()
    return dict(json.loads(text))
