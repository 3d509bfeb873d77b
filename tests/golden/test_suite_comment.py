"""The comment for a suite of 500 workloads (``scenarios.suite``): no golden file (it would
be hundreds of kilobytes); what a reader needs of it is asserted instead.

The changed workloads (slower, faster, invalid, inconclusive) are the table's rows, first
thing under the headline; the level ones are listed in a folded ``<details>``; the body
stays within GitHub's 65,536 characters and, where it left something out, says what and
where the whole report is. The comment is rendered with cmark-gfm (``cmarkgfm``, GitHub's
own renderer) and read as a browser shows it with ``<details>`` closed: the changed
workloads are on its first screen.
"""

from __future__ import annotations

from dataclasses import replace
from html.parser import HTMLParser

import pytest

from benchbot.core.model import Results
from benchbot.github.post import COMMENT_LIMIT
from benchbot.report import render_results
from tests.golden.scenarios import suite
from tests.golden.test_golden import RUN_URL, comment

FIRST_SCREEN_LINES = 40  # lines of text, table rows counted as one: about 1,000 pixels
CHANGED = ("slower", "faster", "invalid", "inconclusive")


@pytest.fixture(scope="module")
def doc() -> Results:
    return suite()


@pytest.fixture(scope="module")
def body(doc: Results) -> str:
    """The comment of the 500 workloads (rendered once: half a second)."""
    return comment(doc)


def test_the_suite_has_every_kind_of_outcome(doc: Results) -> None:
    outcomes = [b.verdict.outcome for b in doc.benchmarks]
    assert len(outcomes) == 500 and outcomes.count("level") > 400
    assert all(outcomes.count(o) >= 3 for o in CHANGED)


def test_changed_workloads_come_first_and_level_ones_are_folded(doc: Results, body: str) -> None:
    assert len(body) <= COMMENT_LIMIT
    folded = body.index("<details><summary>⚪ ")
    changed = [b.name for b in doc.benchmarks if b.verdict.outcome in CHANGED]
    level = [b.name for b in doc.benchmarks if b.verdict.outcome == "level"]
    assert all(0 < body.index(f"| `{n}` |") < folded for n in changed)
    assert all(body.index(f"`{n}`") > folded for n in level)
    assert f"⚪ {len(level)} level workloads" in body


def test_a_comment_over_the_limit_leaves_out_details_and_says_so(doc: Results) -> None:
    # Each workload with a long name: the runs' table, the notes on the inconclusive ones
    # and at last the list of level ones give way, in that order.
    big = replace(doc, benchmarks=tuple(replace(b, name=f"{b.name}_{'x' * 80}") for b in doc.benchmarks))
    assert len(render_results(big, "markdown", run_url=RUN_URL, command_style="bench")) > COMMENT_LIMIT
    body = comment(big)
    assert len(body) <= COMMENT_LIMIT and "was cut here" not in body
    note = body[body.index("> To fit a GitHub comment"):].split("\n")[0]
    assert "the table of each workload's runs" in note and "artifact `benchbot-results`" in note
    assert "the notes on 10 inconclusive workloads" in note
    assert RUN_URL in note
    for b in big.benchmarks:  # every changed workload keeps its row
        if b.verdict.outcome in CHANGED:
            assert f"| `{b.name}` |" in body


class _Visible(HTMLParser):
    """The lines of text a browser shows with every ``<details>`` closed (its summary
    shown), a table row or a paragraph to a line."""

    BLOCKS = ("p", "tr", "h3", "li", "summary", "blockquote")

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self.hidden = 0  # inside a closed <details>, outside its <summary>
        self.details = 0
        self.in_summary = False
        self.current: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "details":
            self.details += 1
        elif tag == "summary":
            self.in_summary = True
        if tag in self.BLOCKS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag == "summary":
            self._flush()
            self.in_summary = False
        elif tag == "details":
            self.details -= 1
        if tag in self.BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self.details == 0 or self.in_summary:
            self.current.append(data)

    def _flush(self) -> None:
        text = " ".join("".join(self.current).split())
        if text:
            self.lines.append(text)
        self.current = []


def test_the_rendered_comment_shows_the_changed_workloads_on_its_first_screen(
        doc: Results, body: str) -> None:
    cmarkgfm = pytest.importorskip("cmarkgfm")
    from cmarkgfm.cmark import Options

    html = cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE)
    shown = _Visible()
    shown.feed(html)
    first = "\n".join(shown.lines[:FIRST_SCREEN_LINES])
    for b in doc.benchmarks:
        if b.verdict.outcome in CHANGED:
            assert b.name in first, f"{b.name} ({b.verdict.outcome}) is not on the first screen"
    assert "level workloads" in first  # the folded list's summary, right under the table
    rows = "\n".join(line for line in shown.lines if not line.startswith("A/A check"))
    assert not any(b.name in rows for b in doc.benchmarks
                   if b.verdict.outcome == "level")  # folded: not shown until opened
