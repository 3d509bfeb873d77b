"""The history page (benchbot history report --html) in Chromium: 500 commits × 50
workloads, the size the issue names, loads within 2 s, fetches nothing, runs nothing, and
every commit's column of a trend leads to its row. The figures (the report's time, the
page's size, its load event) go to ``history-page.json`` beside the screenshots."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from benchbot.history import composed
from benchbot.report import history as page
from tests.historystore import synthetic_store
from tests.render.browser import shoot

COMMITS, WORKLOADS = 500, 50
LOAD_TARGET_S = 2.0


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, float]]:
    root = tmp_path_factory.mktemp("history")
    changes = {(3, 120): 1.06, **{(7, i): 1.004 for i in range(300, 312)}}
    synthetic_store(root / "commits", commits=COMMITS, workloads=WORKLOADS, changes=changes)
    started = time.monotonic()
    report = composed.build(root / "commits")
    built = time.monotonic() - started
    started = time.monotonic()
    html = page.render(report, "html", results_base="commits/")
    rendered = time.monotonic() - started
    return html, {"report_s": built, "render_s": rendered, "bytes": len(html.encode())}


def test_the_page_of_500_commits_and_50_workloads_loads_within_two_seconds(
        big: tuple[str, dict[str, float]], open_file: Any, screenshots: Path) -> None:
    html, figures = big
    started = time.monotonic()
    watched = open_file(html, "history.html")
    watched.page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    wall = time.monotonic() - started
    timing = watched.page.evaluate("""() => {
      const n = performance.getEntriesByType('navigation')[0];
      return {dom: n.domContentLoadedEventEnd, load: n.loadEventEnd};
    }""")
    figures |= {"open_s": wall, "load_event_s": timing["load"] / 1000}
    (screenshots / "history-page.json").write_text(json.dumps(figures, indent=1) + "\n")
    assert timing["load"] / 1000 <= LOAD_TARGET_S, figures
    assert watched.errors == [] and watched.refused == []
    assert watched.requests == [watched.page.url]
    sections = watched.page.locator("section.workload")
    assert sections.count() == WORKLOADS
    assert watched.page.locator("svg.trend").count() == WORKLOADS
    assert watched.page.locator("section.workload").first.evaluate(
        "s => getComputedStyle(s).contentVisibility") == "auto"
    shoot(watched.page, screenshots / "history.png")


def test_a_commit_s_column_leads_to_its_row_and_subjects_stay_text(
        big: tuple[str, dict[str, float]], open_file: Any) -> None:
    html, _ = big
    watched = open_file(html, "history.html")
    p = watched.page
    assert p.locator("section#w3 .mark.slower").count() == 1  # the planted +6% step
    assert p.locator("section#w7 rect.drift.slower").count() == 1  # the planted drift
    # 500 commits in 700 pixels: a link for each 4 pixels, to the commit that moved most.
    links = p.locator("section#w3 svg a")
    assert 100 <= links.count() <= 200
    step = p.locator('section#w3 svg a[href="#c120"]')
    assert "step +6" in (step.locator("title").text_content() or "")
    link = p.locator("section#w0 svg a").nth(83)
    target = link.get_attribute("href")
    assert target is not None and target.startswith("#c")
    p.locator("section#w0").scroll_into_view_if_needed()
    link.click()
    assert p.evaluate("() => location.hash") == target
    row = p.locator(f"tr{target}")
    number = int(target[2:])
    assert f"change {number}: <b>tune</b> @someone #12" in row.inner_text()
    assert row.locator("b").count() == 0
    assert row.locator("a").last.get_attribute("href", timeout=1000).startswith("commits/")
    width = p.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert width[0] <= width[1]
