"""Whole reports compared with expected files (benchstat style), for eight scenarios.

Each scenario (``scenarios.py``) is rendered three ways: the markdown report a terminal
shows, the sticky comment on GitHub, and the HTML report. A mismatch writes NAME.got
beside NAME and shows a diff; set BENCHBOT_UPDATE_GOLDEN=1 to rewrite the expected files
after checking the .got by eye.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchbot.core.model import Results
from benchbot.github.post import COMMENT_LIMIT, REPORT_ROOM, final_body
from benchbot.report import render_comment, render_results
from benchbot.results import resultsdir
from tests.golden.scenarios import NOTHING_MEASURED, SCENARIOS

HERE = Path(__file__).parent
RUN_URL = "https://github.com/octo-org/octo-repo/actions/runs/42"


@pytest.fixture(scope="module")
def docs() -> dict[str, Results]:
    return {name: make() for name, make in SCENARIOS.items()}


def check_golden(name: str, got: str) -> None:
    path = HERE / name
    if os.environ.get("BENCHBOT_UPDATE_GOLDEN") == "1":
        path.write_text(got)
    expected = path.read_text() if path.exists() else ""
    if got != expected:
        (HERE / f"{name}.got").write_text(got)
        diff = "".join(difflib.unified_diff(expected.splitlines(True), got.splitlines(True), name, f"{name}.got"))
        pytest.fail(f"{name} differs from the expected output (see {name}.got):\n{diff[:4000]}")


def comment(doc: Results) -> str:
    """The sticky comment as the publish step makes it."""
    report = render_comment(doc, REPORT_ROOM, run_url=RUN_URL, artifact="benchbot-results")
    return final_body(report, artifact="benchbot-results", run_url=RUN_URL)


@pytest.mark.parametrize("name", SCENARIOS)
def test_markdown_report(docs: dict[str, Results], name: str) -> None:
    check_golden(f"{name}.md", render_results(docs[name], "markdown"))


@pytest.mark.parametrize("name", SCENARIOS)
def test_github_comment(docs: dict[str, Results], name: str) -> None:
    body = comment(docs[name])
    assert len(body) <= COMMENT_LIMIT
    check_golden(f"{name}.comment.md", body)


@pytest.mark.parametrize("name", [n for n in SCENARIOS if n != "many"])
def test_html_report(docs: dict[str, Results], name: str) -> None:
    check_golden(f"{name}.html", render_results(docs[name], "html"))


def test_an_html_report_of_many_workloads_has_them_all(docs: dict[str, Results]) -> None:
    html = render_results(docs["many"], "html")  # no golden file: a plot per workload
    assert html.count("<tr") > 140 and "kernel_139_with_a_long_descriptive_name" in html


def outcomes(doc: Results) -> dict[str, tuple[str, str | None]]:
    return {b.name: (b.verdict.outcome, b.verdict.reason_code) for b in doc.benchmarks}


EXPECTED: dict[str, Callable[[Results], Any]] = {
    "all-level": lambda d: {o for o, _ in outcomes(d).values()} == {"level"},
    "mixed": lambda d: outcomes(d) == {
        "sort": ("slower", None), "bfs": ("faster", None), "sum": ("level", "below_parity"),
        "edit_distance": ("inconclusive", outcomes(d)["edit_distance"][1]),
        "crash": ("invalid", "run_failed"), "parse": ("level", None),
    } and d.environment.warnings,
    "aa-aborted": lambda d: d.aa.aborted and d.aa.failed == ("sort", "sum") and all(
        o == ("inconclusive", "aa_aborted") for o in outcomes(d).values()),
    "aa-off": lambda d: d.aa.status == "skipped" and outcomes(d)["sort"][0] == "slower"
    and outcomes(d)["sum"][0] == "level",
    "not-confirmed": lambda d: outcomes(d)["sort"] == ("inconclusive", "not_confirmed")
    and d.benchmarks[0].ab is not None and d.benchmarks[0].ab.outcome == "slower",
    "invalid": lambda d: outcomes(d) == {
        "crash": ("invalid", "run_failed"), "mismatch": ("invalid", "expect_mismatch"),
        "empty": ("invalid", "too_fast"), "hangs": ("invalid", "run_failed"),
        "sort": ("level", None),
    },
    "better-higher": lambda d: outcomes(d)["tput"][0] == "faster" and outcomes(d)["qps"][0] == "slower",
    "many": lambda d: len(d.benchmarks) == 140 and d.summary.inconclusive > 100,
    "sequential": lambda d: outcomes(d)["sort"][0] == "slower" and outcomes(d)["copy"][0] == "level"
    and outcomes(d)["bfs"][0] == "inconclusive" and outcomes(d)["tiny"] == ("inconclusive", "floor")
    and all(b.measuring and b.measuring.design == "triplets" for b in d.benchmarks),
    "sharded": lambda d: {n: o for n, (o, _) in outcomes(d).items()} == {
        "sort": "slower", "sum": "level", "bfs": "level"}
    and d.unmeasured == ("copy", "parse") and d.failed_shards and d.missing_shards == ()
    and d.summary.conclusion == "failure" and len({b.machine for b in d.benchmarks}) == 2,
    "skipped": lambda d: {n: o for n, (o, _) in outcomes(d).items()} == {
        "sort": "slower", "sum": "level"}
    and [(s.name, s.why) for s in d.skipped or ()] == [
        ("bfs", "not affected"), ("parse.json_v2", "not affected")],
    "counted": lambda d: outcomes(d) == {
        "sort": ("slower", None), "layout": ("inconclusive", "same_counts"), "bfs": ("faster", None),
        "alloc": ("level", None), "parse": ("level", None), "count_ops": ("slower", None),
        "aligned": ("inconclusive", "layout")}
    and {b.name: b.verdict.settled_by for b in d.benchmarks} == {
        "sort": "time and instructions", "layout": None, "bfs": "time",
        "alloc": "time and instructions", "parse": "time", "count_ops": "instructions",
        "aligned": None}
    and {b.name: b.counts.method for b in d.benchmarks if b.counts} == {
        "sort": "valgrind", "layout": "valgrind", "bfs": "perf", "alloc": "valgrind", "parse": None,
        "count_ops": "valgrind", "aligned": "valgrind"}
    and {b.name for b in d.benchmarks if b.memory and b.memory.outcome == "slower"} == {"alloc"}
    and {b.name for b in d.benchmarks if b.metric == "instructions"} == {"count_ops"},
    "suite-counted": lambda d: outcomes(d) == {
        "go/BenchmarkFnv": ("slower", None), "go/BenchmarkSort": ("level", None),
        "go/BenchmarkJson": ("inconclusive", "counts_ahead"),
        "go/BenchmarkSearch": ("inconclusive", "same_counts"),
        "go/BenchmarkMap": ("inconclusive", "spread"), "go/BenchmarkEncode": ("faster", None)}
    and {b.name: b.verdict.settled_by for b in d.benchmarks} == {
        "go/BenchmarkFnv": "instructions and time", "go/BenchmarkSort": "instructions and time",
        "go/BenchmarkJson": None, "go/BenchmarkSearch": None, "go/BenchmarkMap": None,
        "go/BenchmarkEncode": "instructions and time"}
    and {b.name: b.memory.outcome for b in d.benchmarks if b.memory} == {
        "go/BenchmarkFnv": "level", "go/BenchmarkSort": "level", "go/BenchmarkJson": "slower",
        "go/BenchmarkSearch": "level", "go/BenchmarkMap": "level", "go/BenchmarkEncode": "level"}
    and d.benchmarks[-1].verdict.estimate == 1.008
    and d.spent is not None and d.spent.counting_s == 18.3,
    # sort's work profile names merge_sort; walk's names nothing, and its time profile walk
    "profiled": lambda d: {n: o for n, (o, _) in outcomes(d).items()
                           if n in ("sort", "walk")} == {"sort": "slower", "walk": "slower"}
    and [(b.name, [f.name for f in b.profile.functions],
          [f.name for f in b.profile.time.functions] if b.profile.time else None)
         for b in d.benchmarks if b.profile] == [
        ("sort", ["merge_sort", "main"], None), ("walk", [], ["walk"])],
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_each_scenario_shows_what_it_is_named_for(docs: dict[str, Results], name: str) -> None:
    assert EXPECTED[name](docs[name]), outcomes(docs[name])


def test_the_long_report_is_cut_with_a_pointer(docs: dict[str, Results]) -> None:
    report = render_results(docs["many"], "markdown", run_url=RUN_URL, command_style="bench")
    assert len(report) > COMMENT_LIMIT
    body = final_body(report, artifact="benchbot-results", run_url=RUN_URL)
    assert "was cut here" in body and "benchbot-results" in body
    assert body.count("<details>") == body.count("</details>")


def test_a_comment_too_long_leaves_out_details_and_says_which(docs: dict[str, Results]) -> None:
    # The runs of 140 workloads do not fit in a comment: it leaves their table out,
    # keeps every row and note, and says where the whole report is.
    body = comment(docs["many"])
    assert len(body) <= COMMENT_LIMIT and "was cut here" not in body
    assert "leaves out the table of each workload's runs." in body
    assert "artifact `benchbot-results`" in body and RUN_URL in body
    assert "| workload | pairs |" not in body
    assert all(f"`kernel_{i:03d}_with_a_long_descriptive_name` (inconclusive)" in body for i in range(140))


def test_fifty_workloads_fit_in_a_comment_whole(docs: dict[str, Results]) -> None:
    from dataclasses import replace

    doc = docs["many"]
    fifty = replace(doc, benchmarks=doc.benchmarks[:50])
    body = comment(fifty)
    assert "was cut here" not in body and len(body) < COMMENT_LIMIT // 2


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_document_matches_the_schema_and_round_trips(docs: dict[str, Results], name: str,
                                                           tmp_path: Path, validate) -> None:
    doc = docs[name]
    validate(resultsdir.to_json(doc))
    resultsdir.save(tmp_path / "r.json", doc)
    again = resultsdir.load(tmp_path / "r.json")
    assert again == doc
    assert render_results(again, "html") == render_results(doc, "html")


# --- skipped workloads, read as GitHub renders the comment ---------------------------------


def _gfm(body: str) -> str:
    cmarkgfm = pytest.importorskip("cmarkgfm")
    from cmarkgfm.cmark import Options

    html: str = cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE)
    return html


def test_the_skipped_workloads_are_one_line_above_the_table(docs: dict[str, Results]) -> None:
    html = _gfm(comment(docs["skipped"]))
    line = ("<p>Skipped, not affected by this change (paths): <code>bfs</code>, "
            "<code>parse.json_v2</code> — <code>/bench all</code> measures them.</p>")
    assert line in html and html.index(line) < html.index("<table>")
    assert "<code>/bench all</code>" not in _gfm(render_results(docs["skipped"], "markdown"))
    assert "<code>bfs</code>, <code>parse.json_v2</code>" in render_results(docs["skipped"], "html")


@pytest.fixture(scope="module")
def nothing() -> dict[str, Results]:
    return {name: make() for name, make in NOTHING_MEASURED.items()}


@pytest.mark.parametrize("name", NOTHING_MEASURED)
def test_a_comparison_that_measured_nothing_says_why(nothing: dict[str, Results], name: str,
                                                     tmp_path: Path, validate) -> None:
    doc = nothing[name]
    check_golden(f"{name}.md", render_results(doc, "markdown"))
    check_golden(f"{name}.comment.md", comment(doc))
    check_golden(f"{name}.html", render_results(doc, "html"))
    validate(resultsdir.to_json(doc))
    resultsdir.save(tmp_path / "r.json", doc)
    assert resultsdir.load(tmp_path / "r.json") == doc
    assert doc.benchmarks == () and doc.summary.conclusion == "success"
    html = _gfm(comment(doc))
    assert "<table>" not in html and "<blockquote>" in html
    assert "Nothing was measured" in html and "<code>/bench all</code> measures them anyway" in html
    assert "A/A check" not in html


def test_a_skipped_name_stays_text(docs: dict[str, Results]) -> None:
    """Suites name workloads after what their harness prints: a skipped one is escaped too."""
    from dataclasses import replace

    from benchbot.core.model import Skipped

    hostile = "x`<img src=x onerror=alert(1)>`@alice[y](https://evil.example)"
    doc = replace(docs["skipped"], skipped=(Skipped(name=hostile, why="not affected"),))
    html = _gfm(comment(doc))
    assert "<img" not in html and 'href="https://evil.example' not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in render_results(doc, "html")
