"""The sticky comment of each golden scenario, rendered as GitHub would and opened in Chromium.

GitHub turns the comment's markdown into HTML with cmark-gfm (``cmarkgfm`` here) and
shows it in a column about 900 pixels wide, where a table wider than the column scrolls
sideways inside its own box. The page below imitates that with a little CSS of our own.
Checked: the summary table is a ``<table>`` with a row per workload; ``<details>`` holds
the runs, a row per workload up to where a long comment is cut, or, where the comment
would be too long whole, not at all (the comment says it left them out). The screenshot
(``<scenario>.comment.png``) is taken with ``<details>`` opened, as a reader who clicks
it sees it. How wide the tables would be without the column is measured and written to
``comment-widths.json`` beside the screenshots, not asserted: it is for a reviewer to
weigh.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from benchbot.core.model import Results
from tests.golden.scenarios import SCENARIOS
from tests.golden.test_golden import comment
from tests.render.browser import shoot

COLUMN_PX = 900  # GitHub's comment column on a desktop window, roughly

GITHUB_CSS = """
body { margin: 0; padding: 24px; background: #ffffff; color: #1f2328;
  font: 14px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }
.comment { width: %(column)dpx; border: 1px solid #d1d9e0; border-radius: 6px; }
.comment > header { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 8px 16px; color: #59636e; }
.markdown-body { padding: 16px; overflow-wrap: break-word; }
.markdown-body > :first-child { margin-top: 0; }
.markdown-body h3 { font-size: 1.25em; font-weight: 600; margin: 24px 0 16px; }
.markdown-body p, .markdown-body table, .markdown-body blockquote, .markdown-body details, .markdown-body ol
  { margin: 0 0 16px; }
.markdown-body table { display: block; width: max-content; max-width: 100%%; overflow: auto;
  border-spacing: 0; border-collapse: collapse; font-variant: tabular-nums; }
.markdown-body th, .markdown-body td { padding: 6px 13px; border: 1px solid #d1d9e0; }
.markdown-body th { font-weight: 600; }
.markdown-body tr:nth-child(2n) { background: #f6f8fa; }
.markdown-body code { font: 85%% ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace;
  padding: .2em .4em; background: rgba(129, 139, 152, .12); border-radius: 6px; white-space: break-spaces; }
.markdown-body blockquote { padding: 0 1em; color: #59636e; border-left: .25em solid #d1d9e0; }
.markdown-body summary { cursor: pointer; }
.markdown-body a { color: #0969da; text-decoration: none; }
"""

# Each table as shown in the column (its visible width, and whether it scrolls) and as
# wide as it would be if nothing in it wrapped.
WIDTHS_JS = """() => {
  const column = document.querySelector('.markdown-body');
  const tables = [...column.querySelectorAll('table')].map(t => {
    const shown = t.clientWidth, scrolls = t.scrollWidth > shown + 1;
    t.style.maxWidth = 'none';
    const unwrapped = Math.round(t.getBoundingClientRect().width);
    t.style.maxWidth = '';
    return {shown, scrolls, unwrapped};
  });
  const style = getComputedStyle(column);
  return {column: column.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight),
          tables, page: document.documentElement.scrollWidth,
          window: document.documentElement.clientWidth};
}"""


def page_of(body: str) -> str:
    html = cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE)
    return ("<!doctype html><html lang=en><head><meta charset=utf-8><title>comment</title>"
            f"<style>{GITHUB_CSS % {'column': COLUMN_PX}}</style></head><body><div class=comment>"
            f"<header>github-actions commented</header><div class=markdown-body>{html}</div>"
            "</div></body></html>")


# The one block that holds the runs table; a profiled row adds its own blocks (its table
# of functions) before it.
RUNS_SUMMARY = "The runs, the machine and the settings"
PROFILE_SUMMARIES = ("Where the instructions moved, by function: ",
                     "Where the CPU time moved, by function: ")


def runs_rows_before_the_cut(body: str) -> int:
    """Rows of the runs table in the markdown, as far as the comment holds them."""
    runs = body.split(f"<details><summary>{RUNS_SUMMARY}</summary>", 1)[1].split("</details>", 1)[0]
    return len(re.findall(r"^\| `", runs, re.MULTILINE))


@pytest.fixture(scope="module")
def docs() -> dict[str, Results]:
    return {name: make() for name, make in SCENARIOS.items()}


@pytest.fixture(scope="module")
def widths(screenshots: Path) -> Any:
    found: dict[str, Any] = {}
    yield found
    (screenshots / "comment-widths.json").write_text(json.dumps(found, indent=1) + "\n")


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_comment_renders_as_github_shows_it(name: str, docs: dict[str, Results], open_file: Any,
                                                screenshots: Path, widths: dict[str, Any]) -> None:
    doc = docs[name]
    body = comment(doc)
    watched = open_file(page_of(body), f"{name}.comment.html")
    page = watched.page

    summary = page.locator(".markdown-body > table").first
    assert summary.locator("tbody tr").count() == len(doc.benchmarks)
    every = page.locator(".markdown-body details")
    summaries = [every.nth(i).locator("summary").inner_text() for i in range(every.count())]
    # one block of runs, last; before it one per profiled row's table, each with its summary
    assert summaries[-1] == RUNS_SUMMARY and summaries.count(RUNS_SUMMARY) == 1
    profiled = [b.name for b in doc.benchmarks if b.profile is not None]
    assert all(s.startswith(PROFILE_SUMMARIES) for s in summaries[:-1])
    assert len(summaries) - 1 == sum(1 for b in doc.benchmarks if b.profile is not None
                                     and b.profile.functions) + sum(
        1 for b in doc.benchmarks if b.profile is not None and b.profile.time is not None
        and b.profile.time.functions)
    assert {s.rsplit(": ", 1)[1] for s in summaries[:-1]} <= set(profiled)
    details = every.last
    if "leaves out the table of each workload's runs" in body:
        # Too long for a comment whole (render_within): the runs table is left out, and
        # the note says so; what the details still hold is the machine and the settings.
        assert runs_rows_before_the_cut(body) == 0
        assert details.locator("table").count() == 1
        assert "was cut here" not in body
    else:
        runs = details.locator("table").first.locator("tbody tr").count()
        expected = runs_rows_before_the_cut(body)
        assert runs == expected and 0 < runs <= len(doc.benchmarks)
        assert (runs < len(doc.benchmarks)) == ("was cut here" in body)

    every.evaluate_all("ds => ds.forEach(d => { d.open = true; })")
    shoot(page, screenshots / f"{name}.comment.png")
    measured = page.evaluate(WIDTHS_JS)
    widths[name] = measured
    assert measured["page"] <= measured["window"]  # wide tables scroll in their own box
    assert watched.errors == [] and watched.refused == []
