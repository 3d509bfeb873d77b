"""What the report shows of a profile (benchbot.report.profiles): the note of a called row
names the functions that carry the change with their share of it, a table per profiled
row, what the profiled runs cost; and the names and files, which come from the binary
under test, stay text wherever shown."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from benchbot.core.model import (
    Benchmark,
    FoldedStacks,
    ProfiledFunction,
    ProfileTable,
    Results,
    Spent,
    TimedFunction,
    TimeTable,
)
from benchbot.report import render_comment, render_results
from benchbot.results import resultsdir
from tests.golden.scenarios import counted

# Names a C++ or Go binary may hold (<, >, *, spaces, |, backticks), and a file name that
# may be anything.
HOSTILE_NAME = "std::vector<int>::operator[](unsigned long) const | `x` <img src=x onerror=alert(1)> @alice"
HOSTILE_FILE = "../</details><script>steal()</script> [click](https://evil.example) #1 |.c"


def _function(name: str, delta: int, base_self: int = 1_000_000, file: str = "src/a.c",
              share: float | None = None) -> ProfiledFunction:
    return ProfiledFunction(name=name, object="prog", file=file, base_self=base_self,
                            head_self=base_self + delta, base_inclusive=base_self,
                            head_inclusive=base_self + delta, delta=delta, share=share,
                            noise=12, noise_inclusive=12)


def _table(*functions: ProfiledFunction, base: int = 10_000_000, head: int = 8_480_000,
           error: str | None = None) -> ProfileTable:
    return ProfileTable(runs=3, seconds=4.2, base_total=base, base_again_total=base,
                        head_total=head, floor=base // 1000, functions=functions, more=0,
                        moved_within_noise=2, error=error,
                        stacks=FoldedStacks(base={"main;f": base}, head={"main;f": head}))


@pytest.fixture(scope="module")
def doc() -> Results:
    return counted()


def _with(doc: Results, name: str, table: ProfileTable) -> Results:
    def put(b: Benchmark) -> Benchmark:
        return replace(b, profile=table) if b.name == name else b

    return replace(doc, benchmarks=tuple(put(b) for b in doc.benchmarks),
                   spent=Spent(wall_s=100.0, counting_s=10.0, timed_s=60.0, profiling_s=4.2))


def test_the_note_names_the_functions_with_their_share_of_the_change(doc: Results) -> None:
    table = _table(_function("adler32_sse41", -1_480_000, base_self=2_000_000, share=0.974),
                   _function("crc_fold", -30_000, share=0.02), _function("memcpy", 10_000),
                   _function("strlen", -10_000))
    md = render_results(_with(doc, "sort", table), "markdown")
    assert ("Where (instructions by function, callgrind): `adler32_sse41` −14.8% of −15.2%, "
            "`crc_fold` −0.3%, `memcpy` +0.1% and 1 more.") in md
    assert "| `adler32_sse41` | `src/a.c` | 2M | 520k | −14.8% | 97.4% | 12 |" in md
    assert "profiled: 3 runs, 4.2 s" in md
    comment = render_comment(_with(doc, "sort", table), 65_000)
    assert "`adler32_sse41` −14.8% of −15.2%" in comment
    page = render_results(_with(doc, "sort", table), "html")
    assert "<code>adler32_sse41</code>" in page and "profiled: 3 runs, 4.2 s" in page


def test_a_profile_that_could_not_be_made_says_why(doc: Results) -> None:
    table = ProfileTable(runs=3, seconds=3.0, error="the head run: callgrind: not profiled: "
                         "process 12 never reached its end under valgrind")
    md = render_results(_with(doc, "sort", table), "markdown")
    assert "Not profiled: the head run: callgrind: not profiled: process 12 never" in md
    assert "Where the instructions moved, by function" not in md


def test_nothing_is_said_where_nothing_was_profiled(doc: Results) -> None:
    md = render_results(doc, "markdown")
    assert "callgrind" not in md and "profiled" not in md


def test_names_and_files_from_the_binary_stay_text(doc: Results) -> None:
    cmarkgfm = pytest.importorskip("cmarkgfm")
    from cmarkgfm.cmark import Options

    table = _table(_function(HOSTILE_NAME, -1_480_000, base_self=2_000_000, file=HOSTILE_FILE,
                             share=0.97),
                   _function(f"{HOSTILE_NAME} 2", -10_000_000 // 1000 * 2, file=HOSTILE_FILE))
    bad = _with(doc, "sort", table)
    md = render_results(bad, "markdown")
    html = cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE)
    assert "<img" not in html and "<script" not in html
    assert 'href="https://evil.example' not in html
    # a mention only outside code (GitHub makes none in a code span)
    assert not re.search(r"(?<![\w\u2060])@alice", re.sub(r"<code>.*?</code>", "", html))
    assert html.count("<details>") == html.count("</details>") == 2
    for found in re.findall(r"<table>.*?</table>", html, re.S):
        widths = {len(re.findall(r"<t[dh]", row)) for row in re.findall(r"<tr>.*?</tr>", found, re.S)}
        assert len(widths) == 1, widths  # no name broke a row's cells open
    assert "operator[](unsigned long) const" in html
    page = render_results(bad, "html")
    assert "<img src=x" not in page and "<script>steal" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page


def test_a_profile_goes_through_the_results_file(doc: Results) -> None:
    table = _table(_function(HOSTILE_NAME, -1_480_000, base_self=2_000_000, share=0.97))
    made = _with(doc, "sort", table)
    back = resultsdir.parse(resultsdir.to_json(made))
    assert next(b for b in back.benchmarks if b.name == "sort").profile == table
    assert back.spent == made.spent
    # a file without profiles writes none, as before
    assert "profile" not in str(resultsdir.to_json(doc)["benchmarks"])


def test_the_html_report_draws_the_flame_graph_of_a_profiled_row(doc: Results) -> None:
    """The row's section holds the differential flame graph of its folded stacks (head's,
    coloured by the move against base's), with a hostile frame name kept as text; a row
    profiled without stacks, and the markdown, have none."""
    table = replace(_table(_function("planted", 1_000_000, share=0.99)),
                    stacks=FoldedStacks(base={"main;planted": 1_000_000, "main;steady": 500_000},
                                        head={"main;planted": 2_000_000,
                                              f"main;{HOSTILE_NAME}": 500_000}))
    page = render_results(_with(doc, "sort", table), "html")
    assert page.count('<figure class="flame"') == 1
    start = page.index('<figure class="flame"')
    figure = page[start:page.index("</figure>", start)]
    assert "planted" in figure and "<img" not in figure and "&lt;img" in figure
    assert "Head against base, instructions by function (callgrind)" in figure
    bare = replace(table, stacks=None)
    assert '<figure class="flame"' not in render_results(_with(doc, "sort", bare), "html")
    assert '<figure class="flame"' not in render_results(_with(doc, "sort", table), "markdown")


def test_a_call_whose_instructions_did_not_move_says_only_the_work_was_profiled(
        doc: Results) -> None:
    """A change in time alone (the same instructions: memory, layout): the note says the
    profile of the work found nothing, and that the time was not profiled."""
    table = _table(base=10_000_000, head=10_000_000)
    md = render_results(_with(doc, "sort", table), "markdown")
    assert ("Where: no function's own instructions moved beyond its noise (callgrind; the "
            "whole run +0.0%), so the change is in time, not in the work done; only the work "
            "was profiled, not the time.") in md


def test_profiles_that_were_never_run_cost_nothing_in_the_time_line(doc: Results) -> None:
    """Where no profiled run was made (valgrind missing here), the note says why once and
    the time line claims no profiled runs."""
    table = ProfileTable(runs=0, seconds=0.0, error="valgrind is not installed (not on the "
                         "runs' PATH)")
    md = render_results(_with(doc, "sort", table), "markdown")
    assert "Not profiled: valgrind is not installed (not on the runs' PATH)." in md
    assert "not profiled: not profiled" not in md.lower() and "profiled: 0 runs" not in md


MS = 1_000_000


def _time(*functions: TimedFunction, error: str | None = None,
          stacks: FoldedStacks | None = None) -> TimeTable:
    return TimeTable(period_ns=MS, runs=9, runs_per_arm=(3, 3, 3), seconds=11.8,
                     base_ns=100 * MS, head_ns=290 * MS, base_again_ns=101 * MS,
                     samples=(300, 870, 303), functions=functions, error=error, stacks=stacks)


def _timed(name: str, base_ms: float, head_ms: float, share: float | None) -> TimedFunction:
    return TimedFunction(name=name, base_ns=base_ms * MS, head_ns=head_ms * MS,
                         base_again_ns=base_ms * MS, delta_ns=(head_ms - base_ms) * MS,
                         share=share, noise_ns=6 * MS)


def test_a_call_in_time_alone_names_the_functions_whose_time_moved(doc: Results) -> None:
    """The work profile named nothing, the time profile named ``walk``: the note names it
    with its change of CPU time a run against the whole run's, the markdown has its table,
    and the HTML report its table and the sampled flame graph."""
    stacks = FoldedStacks(base={"main;walk": 48 * MS, "main;spin": 50 * MS},
                          head={"main;walk": 234 * MS, "main;spin": 51 * MS})
    table = replace(_table(base=10_000_000, head=10_000_000),
                    time=_time(_timed("walk", 48, 234, 0.979), stacks=stacks))
    made = _with(doc, "sort", table)
    md = render_results(made, "markdown")
    assert ("so the change is in time, not in the work done. Where the time went (CPU time "
            "by function, perf): `walk` +186 ms of +190 ms a run.") in md
    assert "only the work was profiled" not in md
    assert "<summary>Where the CPU time moved, by function: sort</summary>" in md
    assert ("| `walk` | 48.0 ms | 234 ms | 48.0 ms | +186 ms | 97.9% | 6.00 ms |"
            .replace(" ms", "\u00a0ms") in md)
    assert "profiled: 3 runs and 9 for time (perf), 4.2 s" in md
    assert "`walk` +186 ms of +190 ms a run" in render_comment(made, 65_000)
    page = render_results(made, "html")
    assert "Head against base, CPU time by function (perf, cpu-clock)" in page
    assert "<caption>Where the CPU time moved, by function (perf record -e cpu-clock: 9 profiled runs" in page
    assert page.count('<figure class="flame"') == 2  # the work's, the time's


@pytest.mark.parametrize(("time", "said"), [
    (None, "; only the work was profiled, not the time."),
    (TimeTable(error="perf is not installed"),
     "; only the work was profiled, not the time: perf is not installed."),
    (TimeTable(period_ns=MS, runs=9, runs_per_arm=(3, 3, 3), base_ns=100 * MS,
               head_ns=104 * MS),
     ". Time (CPU time by function, perf): no function's own time moved beyond its noise "
     "(the whole run +4.00 ms a run)."),
])
def test_where_the_time_was_not_placed_the_note_says_why(doc: Results, time: TimeTable | None,
                                                         said: str) -> None:
    table = replace(_table(base=10_000_000, head=10_000_000), time=time)
    md = render_results(_with(doc, "sort", table), "markdown")
    assert "so the change is in time, not in the work done" + said in md, md
    assert "Where the CPU time moved" not in md


def test_names_from_the_time_profile_stay_text(doc: Results) -> None:
    cmarkgfm = pytest.importorskip("cmarkgfm")
    from cmarkgfm.cmark import Options

    stacks = FoldedStacks(base={f"main;{HOSTILE_NAME}": 48 * MS},
                          head={f"main;{HOSTILE_NAME}": 234 * MS})
    table = replace(_table(base=10_000_000, head=10_000_000),
                    time=_time(_timed(HOSTILE_NAME, 48, 234, 0.98),
                               _timed(f"{HOSTILE_NAME} 2", 10, 14, 0.02), stacks=stacks,
                               error=None))
    bad = _with(doc, "sort", table)
    html = cmarkgfm.github_flavored_markdown_to_html(render_results(bad, "markdown"),
                                                     options=Options.CMARK_OPT_UNSAFE)
    assert "<img" not in html and "<script" not in html
    assert not re.search(r"(?<![\w\u2060])@alice", re.sub(r"<code>.*?</code>", "", html))
    for found in re.findall(r"<table>.*?</table>", html, re.S):
        widths = {len(re.findall(r"<t[dh]", row)) for row in re.findall(r"<tr>.*?</tr>", found, re.S)}
        assert len(widths) == 1, widths
    page = render_results(bad, "html")
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_a_time_profile_goes_through_the_results_file(doc: Results) -> None:
    stacks = FoldedStacks(base={"main;walk": 48 * MS}, head={"main;walk": 234 * MS})
    table = replace(_table(base=10_000_000, head=10_000_000),
                    time=_time(_timed("walk", 48, 234, 0.979), stacks=stacks))
    made = _with(doc, "sort", table)
    back = resultsdir.parse(resultsdir.to_json(made))  # checked against the schema
    assert next(b for b in back.benchmarks if b.name == "sort").profile == table
    failed = replace(table, time=TimeTable(error="perf is not installed"))
    back = resultsdir.parse(resultsdir.to_json(_with(doc, "sort", failed)))
    assert next(b for b in back.benchmarks if b.name == "sort").profile == failed
