"""The documentation names tests that exist, and links that lead somewhere (a file, and\nthe heading a ``#`` names in it).

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


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a markdown page's headings (lower case, punctuation but
    ``-`` and ``_`` dropped, spaces as ``-``, ``-1``, ``-2`` … on repeats), and its
    ``id="…"`` attributes; headings inside fenced code are none."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    seen: dict[str, int] = {}
    found = set(re.findall(r'\bid="([^"]+)"', text))
    for heading in re.findall(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return found


def test_anchors_are_github_s() -> None:
    page = "# A `cmd`: which one?\n## Run it\n## Run it\n```sh\n# not a heading\n```\n<a id=\"x\"></a>\n"
    assert anchors(page) == {"a-cmd-which-one", "run-it", "run-it-1", "x"}


LINKED = [*DOCS, ROOT / "tests" / "README.md", ROOT / "benchmarks" / "README.md"]


@pytest.mark.parametrize("page", LINKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_lead_to_files_and_headings(page: Path) -> None:
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.M | re.S)
    for target, anchor in re.findall(r"\]\(([^)\s#]*)(?:#([^)\s]*))?\)", text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        where = (page.parent / target) if target else page
        assert where.exists(), f"{page.name}: link to {target} leads nowhere"
        if anchor and where.suffix == ".md":
            assert anchor in anchors(where.read_text()), (
                f"{page.name}: link to {target}#{anchor}: no such heading in {where.name}")
