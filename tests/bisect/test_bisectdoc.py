"""The bisect document (schema, atomic write, loader) and its reports (markdown, HTML)."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from benchbot.bisect import bisectdoc
from benchbot.bisect.bisectdoc import BisectSettings, Commit
from benchbot.bisect.steps import Found, Search
from benchbot.core.errors import ResultsError
from benchbot.core.model import Environment, Revision, SandboxInfo
from benchbot.report import bisect as report
from tests.bisect.test_steps import SHAS, FakeLab, history

HOSTILE = "<script>alert(1)</script> | @someone [x](https://evil.example) `tick` #12"


def make_doc(n: int = 10, changes: dict[int, float] | None = None, **lab: Any) -> bisectdoc.BisectResults:
    fake = FakeLab(history(n, changes if changes is not None else {6: 1.08}), **lab)
    search = Search(lab=fake, shas=SHAS[:n], alpha=0.05, deadline=1e9, step_cap_s=60.0,
                    clock=lambda: 0.0)
    answer = search.run()
    commits = tuple(
        Commit(sha=SHAS[i], subject=HOSTILE if i == 6 else f"commit {i}", tree=SHAS[i][::-1],
               build="skipped" if i in search.skipped else "ok" if i in search.ready else "not_built",
               why=search.skipped.get(i), output_hash=f"{i:064x}" if i in search.ready else None)
        for i in range(n))
    return bisectdoc.build_document(
        good=Revision(ref="v1.0", sha=SHAS[0]), bad=Revision(ref=HOSTILE, sha=SHAS[n - 1]),
        workload="work", commits=commits, steps=tuple(search.steps), answer=answer,
        settings=BisectSettings(alpha=0.05, parity=0.02, budget_s=1800.0, step_budget_s=600.0,
                                seed=7, config="benchbot.yml"),
        environment=Environment(cpu="cpu", cores=2, kernel="Linux", python="3.12"),
        sandbox=SandboxInfo(kind="none", description="off"), repository=None, wall_s=12.5)


def test_the_document_matches_its_schema_and_survives_a_round_trip(tmp_path: Path) -> None:
    doc = make_doc(changes={3: 1.04, 7: 1.05}, broken=frozenset({5}))
    data = bisectdoc.to_json(doc)
    jsonschema.validate(data, bisectdoc.schema())
    assert data["kind"] == "bisect" and data["schema_version"] == 1
    path = tmp_path / "bisect.json"
    bisectdoc.save(path, doc)
    assert not list(tmp_path.glob(".*.tmp"))  # written atomically: no temporary file left
    assert bisectdoc.load(path) == doc
    assert {c["sha"] for c in data["answer"]["culprits"]} == {SHAS[3], SHAS[7]}


@pytest.mark.parametrize(("content", "message"), [
    (b"{", "bisect.json:1: not valid JSON"),
    (b"\xff", "not UTF-8"),
    (b'{"schema_version": 1}', "not a benchbot bisect file"),
    (b'{"kind": "bisect", "schema_version": 9}', "schema_version '9' is not supported"),
    (b'{"kind": "bisect", "schema_version": 1, "steps": []}', "does not match the bisect schema"),
])
def test_a_bad_file_is_one_line_naming_it(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bisect.json"
    path.write_bytes(content)
    with pytest.raises(ResultsError, match=r"bisect\.json") as err:
        bisectdoc.load(path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_broken_step_is_named_by_its_place(tmp_path: Path) -> None:
    data = bisectdoc.to_json(make_doc())
    data["steps"][1]["outcome"] = "maybe"
    path = tmp_path / "bisect.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=r"steps\[1\]\.outcome"):
        bisectdoc.load(path)


def test_markdown_names_the_culprit_and_escapes_every_subject() -> None:
    text = report.render(make_doc(), "markdown")
    assert f"The change is at {SHAS[6][:7]} (+8.0%)" in text
    assert "<script>" not in text and "\\<script\\>" in text
    assert "@someone" not in text and "\\[x\\](https:\u2060//" in text
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert sum("**culprit**" in r for r in rows) == 1


def test_markdown_says_what_was_not_measured_and_a_skipped_neighbour() -> None:
    same = {i: 0 for i in range(1, 6)} | {i: 6 for i in range(7, 10)}
    text = report.render(make_doc(same=same), "markdown")
    assert "not measured (identical build output)" in text
    text = report.render(make_doc(broken=frozenset({5})), "markdown")
    assert f"or at the skipped {SHAS[5][:7]}" in text and "skipped: the build failed" in text


class Notes:
    """The search's progress lines, kept."""

    def __init__(self) -> None:
        self.said: list[str] = []

    def note(self, message: str) -> None:
        self.said.append(message)


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_every_commit_is_shown_at_one_length(fmt: str) -> None:
    """The answer's sentence, the tables, the steps, the ranges and the SVG line: each
    commit at bisectdoc.SHORT_SHA hex digits, none longer or shorter."""
    doc = make_doc(changes={3: 1.04, 7: 1.05}, broken=frozenset({5}))
    ranged = make_doc(changes={2: 1.3, 7: 1.3}, undecided=frozenset({(0, 4)}))
    notes = Notes()
    Search(lab=FakeLab(history(10, {3: 1.04}), broken=frozenset({2})), shas=SHAS[:10],
           alpha=0.05, deadline=1e9, step_cap_s=60.0, clock=lambda: 0.0, notes=notes).run()
    assert any("skipped" in n for n in notes.said) and any("step" in n for n in notes.said)
    for text in (report.render(doc, fmt), report.render(ranged, fmt), "\n".join(notes.said)):
        shown = [m.group(0) for m in re.finditer(r"(?<![0-9a-f])[0-9a-f]{6,}(?![0-9a-f])", text)
                 if any(sha.startswith(m.group(0)) for sha in SHAS)]
        assert shown and {len(sha) for sha in shown} == {bisectdoc.SHORT_SHA}, shown


def test_no_change_says_so_and_names_nothing() -> None:
    doc = make_doc(changes={})
    text = report.render(doc, "markdown")
    assert doc.answer.kind == "no_change" and "No commit carries a change" in text
    assert "culprit" not in text


def test_html_is_self_contained_escaped_and_draws_every_step() -> None:
    doc = make_doc(changes={3: 1.04, 7: 1.05}, broken=frozenset({4}))
    html = report.render(doc, "html")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html.replace("https://evil.example", "")
    assert "<svg" in html and html.count('<line class="step ') == len(doc.steps)
    assert 'class="commit culprit"' in html and 'class="cross"' in html
    assert "src=" not in html and "<link" not in html


def test_benchbot_report_renders_a_bisect_document_again(tmp_path: Path) -> None:
    import io

    from benchbot import cli

    doc = make_doc()
    path = tmp_path / "bisect.json"
    bisectdoc.save(path, doc)
    out = io.StringIO()
    assert cli.main(["report", str(path)], out=out, err=io.StringIO()) == 0
    assert out.getvalue() == report.render(doc, "markdown")
    assert cli.main(["report", str(path), "--format", "html", "-o", str(tmp_path / "b.html")],
                    out=io.StringIO(), err=io.StringIO()) == 0
    assert (tmp_path / "b.html").read_text() == report.render(doc, "html")


def test_a_range_left_undecided_is_listed_with_its_reason() -> None:
    doc = make_doc(n=16, changes={3: 1.04, 11: 1.05}, undecided=frozenset({(7, 11)}))
    assert doc.answer.kind == "partial"
    text = report.render(doc, "markdown")
    assert f"- after `{SHAS[7][:7]}`, up to `{SHAS[11][:7]}`: inconclusive: the spread" in text
    assert "<h2>Not placed</h2>" in report.render(doc, "html")


@dataclass
class CountedLab(FakeLab):
    """The change (commit 6) is 3.3% less work: the counts call it, while time's ratio,
    noisy, reads +0.8% (issue 37's Go suite)."""

    def compare(self, left: int, right: int, *, alpha: float, budget_s: float,
                number: int, estimate: bool = True) -> Found:
        work = self.cost[right] / self.cost[left]
        if abs(work - 1) < 0.01:
            return Found(outcome="level", ratio=1.01, ci=(0.7, 1.45), pairs=22,
                         settled_by="instructions and time", work=1.0, counts="same")
        return Found(outcome="faster", ratio=1.008, ci=(0.91, 1.11), pairs=34,
                     settled_by="instructions and time", work=work, counts="down")


def test_a_step_the_counts_settled_shows_the_work_in_every_report(tmp_path: Path) -> None:
    fake = CountedLab(history(10, {6: 0.967}))
    search = Search(lab=fake, shas=SHAS[:10], alpha=0.05, deadline=1e9, step_cap_s=60.0,
                    clock=lambda: 0.0)
    answer = search.run()
    assert [c.sha for c in answer.culprits] == [SHAS[6]]
    assert "(−3.3% work)" in answer.sentence and "+0.8%" not in answer.sentence
    doc = make_doc()
    doc = dataclasses.replace(doc, steps=tuple(search.steps), answer=answer)
    bisectdoc.save(tmp_path / "b.json", doc)  # the new fields in the file, read back
    again = bisectdoc.load(tmp_path / "b.json")
    assert again == doc and again.steps[0].settled_by == "instructions and time"
    for fmt in ("markdown", "html"):
        text = report.render(again, fmt)
        assert "faster −3.3% work" in text and "faster +0.8%" not in text
        assert "level: same work; time within ±45.0%" in text


@dataclass
class ProfilingLab(FakeLab):
    """A lab whose steps that can name a commit (``estimate``) come with a profile, as
    ``bisect.RepoLab`` gives them (it profiles no other step)."""

    def compare(self, left: int, right: int, *, alpha: float, budget_s: float,
                number: int, estimate: bool = True) -> Found:
        found = super().compare(left, right, alpha=alpha, budget_s=budget_s, number=number,
                                estimate=estimate)
        if not estimate or found.outcome not in ("slower", "faster"):
            return found
        from benchbot.core.model import ProfiledFunction, ProfileTable

        f = ProfiledFunction(name=HOSTILE, object="t", file="src/t.c", base_self=1000,
                             head_self=1080, base_inclusive=1000, head_inclusive=1080,
                             delta=80, share=1.0, noise=0, noise_inclusive=0)
        return dataclasses.replace(found, profile=ProfileTable(
            runs=3, seconds=1.0, base_total=1000, base_again_total=1000, head_total=1080,
            floor=1, functions=(f,)))


def test_the_culprit_carries_its_step_s_profile_and_the_report_names_where(
        tmp_path: Path) -> None:
    fake = ProfilingLab(history(10, {6: 1.08}))
    search = Search(lab=fake, shas=SHAS[:10], alpha=0.05, deadline=1e9, step_cap_s=60.0,
                    clock=lambda: 0.0)
    answer = search.run()
    [culprit] = answer.culprits
    assert culprit.profile is not None and culprit.profile.functions[0].delta == 80
    doc = dataclasses.replace(make_doc(), answer=answer)
    data = bisectdoc.to_json(doc)
    jsonschema.validate(data, bisectdoc.schema())
    bisectdoc.save(tmp_path / "b.json", doc)
    assert bisectdoc.load(tmp_path / "b.json") == doc
    text = report.render(doc, "markdown")
    assert (f"In `{SHAS[6][:7]}` against its parent: Where (instructions by function, "
            "callgrind): ") in text and "+8.0% of +8.0%." in text
    cmarkgfm = pytest.importorskip("cmarkgfm")
    from cmarkgfm.cmark import Options

    shown = cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE)
    assert "<script>" not in shown and "<code>&lt;script&gt;alert(1)" in shown
    page = report.render(doc, "html")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page
    # a bisect without profiles writes none
    assert "profile" not in json.dumps(bisectdoc.to_json(make_doc()))
