"""Helpers for the render checks: where Chromium is, how it is started, a watched page."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import Page

HERE = Path(__file__).parent
CHROMIUM = Path(os.environ.get("BENCHBOT_CHROMIUM", "/usr/bin/chromium"))
# What works as root in a container: no sandbox (it needs user namespaces), no GPU, and
# nothing that phones home (QUIC, component updates, sync, background networking).
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 900}
MAX_SHOT_HEIGHT = 6000  # pixels: 'many' is 40 000 tall; its first screens show enough


def shoot(page: Page, path: Path) -> None:
    """A screenshot of the whole page, or of its top MAX_SHOT_HEIGHT pixels."""
    height = page.evaluate("() => document.documentElement.scrollHeight")
    width = page.viewport_size["width"] if page.viewport_size else VIEWPORT["width"]
    clip = {"x": 0, "y": 0, "width": width, "height": MAX_SHOT_HEIGHT}
    page.screenshot(path=str(path), full_page=True,
                    clip=clip if height > MAX_SHOT_HEIGHT else None)


class Watched:
    """A page whose every request, console error and page error is recorded; requests for
    anything but ``allowed`` are refused."""

    def __init__(self, page: Page, allowed: str) -> None:
        self.page = page
        self.requests: list[str] = []
        self.refused: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.route("**/*", lambda route: self._route(route, allowed))

    def _route(self, route: Any, allowed: str) -> None:
        if route.request.url == allowed:
            route.continue_()
        else:
            self.refused.append(route.request.url)
            route.abort()
