"""The documentation names tests that exist, and links that lead somewhere.

docs/security.md lists each attack beside the test that tries it; a renamed or deleted
test must not leave the list pointing at nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_TEST_REF = re.compile(r"`((?:[\w/]+/)?test_\w+\.py|…)::(test_\w+)`")


def _referenced_tests(text: str) -> list[tuple[str, str]]:
    """(file, function) for each `file.py::test_name`; `…::name` reuses the file before it."""
    found: list[tuple[str, str]] = []
    last = ""
    for match in _TEST_REF.finditer(text):
        name = match.group(1)
        last = last if name == "…" else name
        found.append((last, match.group(2)))
    return found


def _test_file(name: str) -> Path:
    path = ROOT / name if "/" in name else ROOT / "tests" / "security" / name
    assert path.is_file(), f"docs/security.md names {name}, which does not exist"
    return path


def test_every_test_the_security_model_names_exists() -> None:
    refs = _referenced_tests((ROOT / "docs" / "security.md").read_text())
    assert len(refs) >= 30, refs
    for name, function in refs:
        source = _test_file(name).read_text()
        assert re.search(rf"^def {function}\(", source, re.M), f"{name}::{function} does not exist"


@pytest.mark.parametrize("page", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_lead_to_files(page: Path) -> None:
    text = page.read_text()
    for target in re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        assert (page.parent / target).exists(), f"{page.name}: link to {target} leads nowhere"
