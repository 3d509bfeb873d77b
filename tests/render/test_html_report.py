"""The HTML report of each golden scenario, opened in Chromium: what a reader gets.

For each scenario: a screenshot in the light and in the dark colour scheme
(``<scenario>.light.png``, ``<scenario>.dark.png``), and checks in the DOM: a table row,
a section and plots for every workload, the verdict pill's tooltip, labels that stay
inside their plots, nothing wider than the window (also on a phone-sized one), no
console error, and not a single request but the file itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchbot.core.model import Results
from benchbot.report import render_results
from tests.golden.scenarios import SCENARIOS
from tests.render.browser import shoot

NARROW = {"width": 420, "height": 900}
DARK_BACKGROUND = "rgb(13, 17, 23)"

# Elements reaching past the right edge of the window, outside a box that scrolls them.
OVERFLOW_JS = """() => {
  const width = document.documentElement.clientWidth;
  const out = [...document.querySelectorAll('body *')].filter(e =>
    !e.closest('.scroll') && !e.closest('svg') && e.getBoundingClientRect().right > width + 0.5);
  return {scroll: document.documentElement.scrollWidth, width,
          out: out.slice(0, 5).map(e => e.tagName + '.' + e.className + ': ' + e.textContent.slice(0, 40))};
}"""

# Text in a plot that reaches outside the plot (a cut label), in screen pixels so that
# rotated labels count as drawn.
CUT_LABELS_JS = """() => [...document.querySelectorAll('svg.plot')].flatMap(svg => {
  const box = svg.getBoundingClientRect();
  return [...svg.querySelectorAll('text')].filter(t => {
    const r = t.getBoundingClientRect();
    return r.left < box.left - 0.5 || r.top < box.top - 0.5 || r.right > box.right + 0.5
      || r.bottom > box.bottom + 0.5;
  }).map(t => t.textContent);
})"""

SECTIONS_JS = """() => [...document.querySelectorAll('section.workload')].map(s => ({
  name: s.querySelector('h3 code').textContent,
  plots: s.querySelectorAll('svg.plot').length,
  signals: s.querySelectorAll('.signals table').length,
  titled: [...s.querySelectorAll('svg.plot')].every(p => p.getAttribute('role') === 'img'
    && p.querySelector('title').textContent.length > 0 && p.querySelector('desc')),
}))"""


@pytest.fixture(scope="module")
def docs() -> dict[str, Results]:
    return {name: make() for name, make in SCENARIOS.items()}


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_html_report_reads_well_in_chromium(name: str, docs: dict[str, Results], open_file: Any,
                                                screenshots: Path) -> None:
    doc = docs[name]
    watched = open_file(render_results(doc, "html"), f"{name}.html")
    page = watched.page
    names = sorted(b.name for b in doc.benchmarks)

    sections = page.evaluate(SECTIONS_JS)
    assert sorted(s["name"] for s in sections) == names
    # metric: instructions has no time to plot: its counts stand where the plots would
    by_count = {b.name for b in doc.benchmarks if b.metric == "instructions"}
    assert all((s["plots"] >= 1 or (s["name"] in by_count and s["signals"] >= 1)) and s["titled"]
               for s in sections), sections
    counted = {b.name for b in doc.benchmarks if b.counts is not None or b.memory is not None}
    assert {s["name"] for s in sections if s["signals"]} == counted
    assert page.locator("table").first.locator("tbody tr").count() == len(names)
    pills = page.locator(".pill").evaluate_all("ps => ps.map(p => p.title)")
    assert len(pills) == 2 * len(names)  # in the table and in each section
    assert all(t.startswith("Judged against ") and " on medians, and best runs " in t for t in pills), pills
    assert page.evaluate(CUT_LABELS_JS) == []
    assert "NaN" not in page.inner_text("body")

    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
        assert (background == DARK_BACKGROUND) == (scheme == "dark"), background
        shoot(page, screenshots / f"{name}.{scheme}.png")

    for viewport in (page.viewport_size, NARROW):
        page.set_viewport_size(viewport)
        overflow = page.evaluate(OVERFLOW_JS)
        assert overflow["scroll"] <= overflow["width"] and overflow["out"] == [], (viewport, overflow)

    assert watched.errors == []
    assert watched.refused == [] and watched.requests == [page.url]
