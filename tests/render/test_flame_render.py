"""The differential flame graph in Chromium: a real profile drawn, a frame's hover title
right, nothing fetched, no script, and the picture in docs/screenshots/flamegraph.png
(``flamegraph.png`` among the screenshots, copied there by hand as the others are).

The page holds the fragment under the HTML report's own Content-Security-Policy, so a
fragment that needed a script or a fetch would show as a console error or a refused
request here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchbot.report import flame
from tests.report.test_flame import FIXTURES, _folded

CSP = ("default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'")

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<title>flame</title><style>body {{ font: 15px/1.45 system-ui, sans-serif; margin: 1rem; max-width: 76rem; }}</style>
</head><body><h3>walk: head against base</h3>{fragment}</body></html>"""

FRAMES_JS = """() => [...document.querySelectorAll('svg g.frame')].map(g => {
  const r = g.querySelector('rect').getBoundingClientRect();
  return {title: g.querySelector('title').textContent, label: g.querySelector('text')?.textContent ?? '',
          x: r.x + r.width / 2, y: r.y + r.height / 2, width: r.width, height: r.height,
          fill: g.querySelector('rect').getAttribute('fill')};
})"""


def test_the_flame_graph_of_a_real_profile_reads_in_chromium(open_file: Any, screenshots: Path) -> None:
    base, head = (_folded(FIXTURES / f"memory-walk.{arm}.folded") for arm in ("base", "head"))
    hostile = {"main;<img src=x onerror=alert(1)>": 20_000_000}
    fragment = flame.render(base, {**head, **hostile}, unit="ns",
                            title="walk: CPU time of 3 runs", same_within=flame.SAMPLED_SAME_WITHIN,
                            floor=flame.SAMPLED_FLOOR)
    watched = open_file(PAGE.format(csp=CSP, fragment=fragment), "flame.html")
    page = watched.page
    frames = page.evaluate(FRAMES_JS)
    assert len(frames) >= 8 and all(f["height"] > 10 for f in frames)
    walk = max((f for f in frames if f["title"].startswith("walk\n")), key=lambda f: f["width"])
    assert walk["label"] == "walk" and walk["fill"] == "rgb(250,60,60)"
    # What the mouse is over at the walk box's middle is that frame, and its title (the
    # hover tooltip) gives head, base and the change.
    under = page.evaluate("([x, y]) => document.elementFromPoint(x, y).closest('g.frame')"
                          ".querySelector('title').textContent", [walk["x"], walk["y"]])
    lay = flame.layout(base, {**head, **hostile})
    expected = flame.hover(max((f for f in lay.frames if f.name == "walk"), key=lambda f: f.width),
                           lay, "ns")
    assert under == expected
    assert "head: 379\u00a0ms" in under and "change: +289\u00a0ms" in under
    # The hostile name is text: no image was made of it, nothing was fetched.
    assert page.locator("img").count() == 0
    assert any(f["title"].startswith("<img src=x onerror=alert(1)>\n") for f in frames)
    assert watched.refused == [] and watched.errors == []
    assert page.evaluate("() => document.scripts.length") == 0
    page.set_viewport_size({"width": 1100, "height": 420})
    shot = screenshots / "flamegraph.png"
    page.locator("figure.flame").screenshot(path=str(shot))
