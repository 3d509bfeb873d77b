"""The history line survives any record (issue 38, finding 6): a record of a commit that
could not be built is shown as failed wherever it is on the line (one used to make every
later `history report` raise `KeyError`), and of two lines (a branch rewritten) the one
whose tip benchbot wrote last is shown, by the tip's own time."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

from benchbot import cli
from benchbot.history import composed, historydoc
from benchbot.history.historydoc import CommitRef, StepSettings, Store, WorkloadStep
from benchbot.report import history as page
from benchbot.verdict.trend import StepEstimate

S, A, X, B, C = "5" * 40, "a" * 40, "f" * 40, "b" * 40, "c" * 40
P1, P2, Q1 = "1" * 40, "2" * 40, "3" * 40


def _step(ratio: float = 1.0) -> WorkloadStep:
    outcome = "slower" if ratio > 1.05 else "level"
    import math

    return WorkloadStep(name="nap", outcome=outcome, ratio=ratio, ci=(ratio * 0.99, ratio * 1.01),
                        pairs=60, step=StepEstimate(n=60, centre=math.log(ratio), se=0.002))


def _measured(sha: str, against: str, *, ratio: float = 1.0, created: str | None = None):
    doc = historydoc.record(commit=CommitRef(sha=sha, subject=f"commit {sha[:4]}"),
                            against=CommitRef(sha=against, subject=f"commit {against[:4]}"),
                            state="measured", workloads=(_step(ratio),),
                            settings=StepSettings(alpha=0.05, seed=1, budget_s=60.0))
    return dataclasses.replace(doc, created=created) if created else doc


def _failed(sha: str, against: str, *, created: str | None = None):
    doc = historydoc.record(commit=CommitRef(sha=sha, subject="broken build"),
                            against=CommitRef(sha=against), state="failed",
                            why="build of head failed (exit 2)")
    return dataclasses.replace(doc, created=created) if created else doc


def _store(tmp_path: Path, *records: historydoc.CommitRecord) -> Path:
    store = Store(tmp_path / "store")
    for r in records:
        store.write(r)
    return store.path


def test_a_failed_record_on_the_line_is_shown_failed_and_the_line_goes_on(tmp_path: Path) -> None:
    """A push whose head failed is the next push's `against`: the line S→A→X(failed)→B→C
    (it used to raise KeyError in every later report, so every later push's publish)."""
    store = _store(tmp_path, _measured(A, S), _failed(X, A), _measured(B, X, ratio=1.3),
                   _measured(C, B))
    report = composed.build(store)
    assert [(c.sha, c.state) for c in report.commits] == [
        (S, "start"), (A, "measured"), (X, "failed"), (B, "measured"), (C, "measured")]
    assert report.commits[2].why == "build of head failed (exit 2)"
    assert report.off_line == 0
    [series] = report.workloads
    assert [(s.index, s.outcome) for s in series.steps] == [(3, "slower")]
    failed_point = next(p for p in series.points if p.index == 2)
    assert failed_point.outcome is None and failed_point.step is None  # a gap, not a step
    markdown = page.render(report, "markdown")
    assert "`nap`" in markdown and "`bbbbbbb`" in markdown
    html = page.render(report, "html")
    assert "build of head failed (exit 2)" in html
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["history", "report", "--store", str(store)], out=out, err=err) == 0, err.getvalue()


def test_a_failed_tip_ends_the_line_as_failed(tmp_path: Path) -> None:
    """The latest push's head failed: the line ends at it, shown failed (it used to be left
    off the line and counted as a record of a rewritten branch)."""
    report = composed.build(_store(tmp_path, _measured(A, S), _failed(X, A)))
    assert [(c.sha, c.state) for c in report.commits] == [(S, "start"), (A, "measured"), (X, "failed")]
    assert report.off_line == 0


def test_a_store_of_one_failed_record_is_that_record(tmp_path: Path) -> None:
    report = composed.build(_store(tmp_path, _failed(X, S)))
    assert [c.state for c in report.commits] == ["start", "failed"]
    assert report.workloads == ()
    page.render(report, "markdown")
    page.render(report, "html")


def test_of_two_lines_the_one_whose_tip_was_written_last_is_shown(tmp_path: Path) -> None:
    """Line P (P1 written on the 1st, its tip P2 on the 5th) and line Q (Q1 alone, written
    on the 3rd): P's tip is the latest, so P is shown. The order used to be read from each
    line's oldest record, which shows Q."""
    store = _store(tmp_path,
                   _measured(P1, S, created="2026-01-01T00:00:00Z"),
                   _measured(P2, P1, created="2026-01-05T00:00:00Z"),
                   _measured(Q1, A, created="2026-01-03T00:00:00Z"))
    chain, off = composed.line(historydoc.Store(store).read().records)
    assert [r.sha for r in chain] == [P1, P2] and off == 1


def test_stamped_is_benchbot_s_time_not_the_record_s(tmp_path: Path) -> None:
    forged = _measured(A, S, created="2099-01-01T00:00:00Z")
    again = historydoc.stamped(forged)
    assert again.created < "2099" and again.commit == forged.commit
    assert again.workloads == forged.workloads
