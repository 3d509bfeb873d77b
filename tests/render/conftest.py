"""A real headless Chromium for the render checks: Debian's, driven by playwright.

playwright's own browser downloads are never used (``playwright install`` cannot reach
its servers from CI); the Python package drives the system's chromium through
``executable_path``. Without playwright or chromium every test here is skipped with the
reason, never passed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.render.browser import ARGS, CHROMIUM, HERE, VIEWPORT, Watched

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One Chromium per test module (a launch costs about a second); a fresh profile each."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed: pip install -e '.[test]'")
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install chromium "
                    "(or set BENCHBOT_CHROMIUM to another one)")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where screenshots go: $BENCHBOT_SCREENSHOTS, else tests/render/screenshots/."""
    path = Path(os.environ.get("BENCHBOT_SCREENSHOTS") or HERE / "screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def open_file(browser: Browser, tmp_path: Path) -> Iterator[Any]:
    """Factory: write HTML to a file, open it in a new page, return the Watched page."""
    pages: list[Page] = []

    def open_(html: str, name: str = "page.html") -> Watched:
        path = tmp_path / name
        path.write_text(html, encoding="utf-8")
        page = browser.new_page(viewport=VIEWPORT)
        pages.append(page)
        watched = Watched(page, path.as_uri())
        page.goto(path.as_uri(), wait_until="load")
        return watched

    yield open_
    for page in pages:
        page.close()
