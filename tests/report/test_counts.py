"""The report's instructions and memory columns, the signal that settled a verdict, the
estimate, and metric: instructions rows (issue 20), on the golden "counted" document."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from benchbot.core.model import Benchmark, Counts, Results
from benchbot.report import build_view, render_results
from benchbot.report.render import counts_cell, memory_cell
from benchbot.results import resultsdir
from tests.golden.scenarios import counted, mixed

HOSTILE = ("@alice <img src=x onerror=alert(1)> </details> ``` [click](https://evil.example/login) "
           "https://evil.example/phish #1 <script>steal()</script> &#64;bob | broken | cell")


@pytest.fixture(scope="module")
def doc() -> Results:
    return counted()


def bench(doc: Results, name: str) -> Benchmark:
    return next(b for b in doc.benchmarks if b.name == name)


def test_each_cell_says_the_change_and_how_it_was_counted(doc: Results) -> None:
    rows = {r.name: r for r in build_view(doc).rows}
    assert counts_cell(rows["sort"]) == "+3.0% sampled"  # valgrind: runs apart from the timed ones
    assert counts_cell(rows["bfs"]) == "−7.9% exact"  # perf on every run, not multiplexed
    assert counts_cell(rows["parse"]) == "– [a]"  # not counted: the footnote says why
    assert memory_cell(rows["alloc"]) == "+10.4% more"
    assert memory_cell(rows["sort"]) == "+0.1% level"
    assert memory_cell(rows["count_ops"]) == "–"


def test_perf_scaled_counts_are_sampled_not_exact(doc: Results) -> None:
    b = bench(doc, "bfs")
    assert b.counts is not None
    scaled = replace(doc, benchmarks=(replace(b, counts=replace(b.counts, scaled=True)),))
    (row,) = build_view(scaled).rows
    assert counts_cell(row) == "−7.9% sampled"
    # every measured run, per arm: base (the first of each triplet), base again, head
    assert row.counts is not None and row.counts.runs == (60, 60, 60)


def test_the_comment_names_the_second_signal_and_why_counts_are_missing(doc: Results) -> None:
    md = render_results(doc, "markdown").replace("\u00a0", " ")
    table = md.split("\n\n")[2]
    assert table.splitlines()[0].split("|")[7:10] == [" instructions ", " memory ", " verdict "]
    assert "`sort` (slower, settled by time and instructions):" in md
    assert "`layout` (inconclusive): same instructions: layout, environment or timing modes" in md
    assert "Peak memory: more +10.4% (20.0 MiB → 22.1 MiB, tolerance ±5.0%)" in md
    assert "[a] Instructions not counted for `parse`: a run takes 1.6 s" in md
    assert "peak memory: 1 more" in md.splitlines()[0]
    assert "76 (called at 34)" in md  # the estimate's pairs, and where the call was made
    # the estimate is the ratio shown, not the ratio at the call
    sort = bench(doc, "sort")
    assert sort.verdict.estimate == 1.029 and "**slower +2.9%**" in md


def test_a_level_measured_on_says_where_it_settled(doc: Results) -> None:
    sort = bench(doc, "sort")
    level = replace(sort, verdict=replace(sort.verdict, outcome="level", estimate=1.002,
                                          estimate_ci=(0.995, 1.009)))
    md = render_results(replace(doc, benchmarks=(level,)), "markdown")
    assert "76 (settled at 34)" in md and "(called at" not in md
    assert '"settled at" in the details' in md  # the footnote says what the ratio is


def test_an_instructions_workload_shows_counts_not_times(doc: Results) -> None:
    md = render_results(doc, "markdown").replace("\u00a0", " ")
    (line,) = [x for x in md.splitlines() if "`count_ops`" in x and "instructions" in x and "🔴" in x]
    assert "41.21M instructions" in line and "42.07M instructions" in line
    assert "**slower +2.1% work**" in line
    assert not re.search(r"\d (ms|µs|ns|s) ", line)


def test_an_instructions_workload_is_left_out_of_the_geomean(doc: Results) -> None:
    timed = [b for b in doc.benchmarks if b.metric != "instructions"]
    alone = resultsdir.summarize(timed, (), aborted=False)
    assert doc.summary.geomean_ratio == pytest.approx(alone.geomean_ratio)
    ops = bench(doc, "count_ops")
    big = replace(ops, verdict=replace(ops.verdict, ratio=3.0))
    assert resultsdir.summarize([*timed, big], (), aborted=False).geomean_ratio == pytest.approx(
        alone.geomean_ratio)


def test_a_file_without_counts_keeps_the_table_it_had() -> None:
    doc = mixed()  # as a file written before counts and memory were judged
    old = replace(doc, benchmarks=tuple(replace(b, counts=None, memory=None) for b in doc.benchmarks))
    md = render_results(old, "markdown")
    assert "| best-run ratio | tolerance | verdict |" in md
    assert "instructions" not in md and "memory" not in md.split("<details>")[0]


def test_counts_off_everywhere_says_why_without_a_column(doc: Results) -> None:
    off = Counts(method=None, why="off in the config")
    only = replace(doc, benchmarks=tuple(replace(b, counts=off, memory=None) for b in doc.benchmarks
                                         if b.metric != "instructions"))
    md = render_results(only, "markdown")
    assert "| instructions |" not in md
    # one note for the reason, naming the first few workloads it applies to and the rest's number
    [note] = [line for line in md.splitlines() if "Instructions not counted" in line]
    names = [r.name for r in build_view(only).rows]  # in the table's order
    shown = ", ".join(f"`{n}`" for n in names[:3])
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    assert note == f"Instructions not counted for {shown}{more}: off in the config."
    assert "[a]" not in md


def test_text_in_the_new_fields_stays_text(doc: Results) -> None:
    cmarkgfm = pytest.importorskip("cmarkgfm")
    from cmarkgfm.cmark import Options

    def hostile(b: Benchmark) -> Benchmark:
        counts = (replace(b.counts, why=HOSTILE, reading_why=HOSTILE) if b.counts is not None else None)
        memory = replace(b.memory, reason=HOSTILE) if b.memory is not None else None
        return replace(b, counts=counts, memory=memory,
                       verdict=replace(b.verdict, settled_by=HOSTILE, reason=HOSTILE))

    bad = replace(doc, benchmarks=tuple(hostile(b) for b in doc.benchmarks))
    md = render_results(bad, "markdown")
    html = cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE)
    assert "<img" not in html and "<script" not in html
    assert 'href="https://evil.example' not in html
    assert not re.search(r"(?<![\w\u2060])@alice", md)
    assert html.count("<details>") == 1 and html.count("</details>") == 1
    # every table row keeps its cells
    for table in re.findall(r"<table>.*?</table>", html, re.S)[:1]:
        widths = {len(re.findall(r"<t[dh]", row)) for row in re.findall(r"<tr>.*?</tr>", table, re.S)}
        assert len(widths) == 1, widths
    page = render_results(bad, "html")
    assert "<img src=x" not in page and "<script>steal" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
