"""A fake GitHub REST API for tests: see ``server.py`` and ``payloads/README.md``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .server import EXTRACT_PATH, FakeGitHub, RecordedRequest

PAYLOADS_DIR = Path(__file__).with_name("payloads")


def load_payload(name: str) -> dict[str, Any]:
    """A webhook payload fixture by name, e.g. ``"pull_request.opened"`` or
    ``"issue_comment.created.pr"`` (``.json`` optional); a fresh copy each call."""
    if not name.endswith(".json"):
        name += ".json"
    payload: dict[str, Any] = json.loads((PAYLOADS_DIR / name).read_text(encoding="utf-8"))
    return payload


def payload_path(name: str) -> Path:
    """Path of a payload fixture (for GITHUB_EVENT_PATH)."""
    if not name.endswith(".json"):
        name += ".json"
    path = PAYLOADS_DIR / name
    if not path.is_file():
        raise FileNotFoundError(path)
    return path


__all__ = ["EXTRACT_PATH", "PAYLOADS_DIR", "FakeGitHub", "RecordedRequest", "load_payload", "payload_path"]
