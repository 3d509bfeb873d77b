"""Workload names from a suite come from the code under test: they stay text everywhere.

A harness names its benchmarks (``core/BM_sort/1024``, ``bench/test_parse[utf-8]``) and
benchbot shows those names in the comment, the markdown report and the HTML report. Any
printable text up to 200 characters may be one (control characters are refused when the
output is read; a tab is not one of them). Here names full of markdown and HTML go through
every renderer: changed and level workloads, in a short report (one table) and in a suite
of 150 workloads (the level ones folded). The markdown is rendered with cmark-gfm, GitHub's own
renderer, with raw HTML allowed, and read back: no live HTML or link, no mention, no cell
broken open, and each name shown as it is.
"""

from __future__ import annotations

import html as htmllib
import re
from dataclasses import replace
from html.parser import HTMLParser

import pytest

from benchbot.core.model import Results
from benchbot.github.post import REPORT_ROOM, final_body
from benchbot.report import render_comment, render_results
from tests.golden.scenarios import mixed, suite

cmarkgfm = pytest.importorskip("cmarkgfm", reason="cmarkgfm (GitHub's renderer) is a test dependency")

NAMES = (
    "core/BM_sort/1024",
    "bench/test_parse[utf-8]",
    "a|b|c | broken | cell",
    "back`tick``s",
    "<script>alert(1)</script>",
    "[x](http://evil.example/login)",
    "@alice please look",
    "tab\there",
    "</details> <img src=x onerror=alert(1)>",
    "\\|escaped pipe\\",
    "`",
    "~~~ fence #12 www.evil.example",
)
RUN_URL = "https://github.com/octo-org/octo-repo/actions/runs/42"


def renamed(doc: Results, outcomes: tuple[str, ...]) -> tuple[Results, dict[str, str]]:
    """``doc`` with hostile names given to workloads of each of ``outcomes`` in turn."""
    picks = [b.name for o in outcomes for b in doc.benchmarks if b.verdict.outcome == o]
    order = [picks[i::len(outcomes)] for i in range(len(outcomes))]
    chosen = [n for group in zip(*order, strict=False) for n in group][: len(NAMES)]
    chosen += [b.name for b in doc.benchmarks if b.name not in chosen][: len(NAMES) - len(chosen)]
    new = dict(zip(chosen, NAMES, strict=False))
    benchmarks = tuple(replace(b, name=new.get(b.name, b.name)) for b in doc.benchmarks)
    return replace(doc, benchmarks=benchmarks), {v: k for k, v in new.items()}


def markdowns(doc: Results) -> dict[str, str]:
    comment = final_body(render_comment(doc, REPORT_ROOM, run_url=RUN_URL, artifact="benchbot-results"),
                         artifact="benchbot-results", run_url=RUN_URL)
    return {"comment": comment, "markdown": render_results(doc, "markdown")}


class Tables(HTMLParser):
    """Each table's rows as lists of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append("".join(self.cell))
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def shown(name: str) -> str:
    """A name as a report shows it: on one line, each run of spaces and tabs one space."""
    return " ".join(name.split())


def check_markdown(markdown: str, names: list[str]) -> None:
    html = str(cmarkgfm.github_flavored_markdown_to_html(
        markdown, options=cmarkgfm.cmark.Options.CMARK_OPT_UNSAFE))
    assert "<script" not in html and "<img" not in html
    assert 'href="http://evil' not in html and 'href="http://www.evil' not in html
    # GitHub makes no mention inside code; anywhere else "@" must be joined to nothing.
    outside_code = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    assert not re.search(r"(?<![\w\u2060])@alice", outside_code), "an @mention that would notify"
    assert html.count("<details") == html.count("</details>")
    tables = Tables()
    tables.feed(html)
    cells = set()
    for table in tables.tables:
        width = len(table[0])
        for row in table:
            assert len(row) == width, f"a cell broken open: {row}"
            cells.update(htmllib.unescape(c).replace("\u2060", "").strip() for c in row)
    missing = {shown(n) for n in names} - cells
    assert not missing, f"names not shown as they are: {missing}"


@pytest.mark.parametrize("which", ["short", "suite"])
def test_hostile_names_stay_text_in_the_comment_and_the_markdown(which: str) -> None:
    doc = mixed() if which == "short" else suite(150)  # the level ones folded
    outcomes = ("slower", "faster", "level", "inconclusive", "invalid")
    hostile, used = renamed(doc, outcomes)
    assert which == "short" or len(used) == len(NAMES)
    for text in markdowns(hostile).values():
        check_markdown(text, list(used))


def test_hostile_names_stay_text_in_the_html_report() -> None:
    # 150 workloads: every outcome, and a section with plots for each (500 take seconds)
    hostile, used = renamed(suite(150), ("slower", "faster", "level", "inconclusive", "invalid"))
    page = render_results(hostile, "html")
    assert "<script>alert" not in page and "<img src=x" not in page
    assert 'href="http://evil' not in page
    for name in used:
        assert htmllib.escape(shown(name), quote=False) in page or htmllib.escape(name, quote=False) in page
