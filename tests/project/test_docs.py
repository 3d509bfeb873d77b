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


def repeated_paragraphs(text: str) -> list[str]:
    """The first words of each paragraph (of more than a line) that a page holds twice,
    and each heading that follows itself: what an edit pasting a section in again leaves."""
    seen: set[str] = set()
    twice = []
    for paragraph in re.split(r"\n\s*\n", text):
        body = paragraph.strip()
        if len(body) > 120 and body in seen:
            twice.append(body[:60])
        seen.add(body)
    twice += re.findall(r"^(#+ .+)\n\1$", text, re.M)
    return twice


def test_a_pasted_section_is_seen() -> None:
    para = "A paragraph long enough to count, " * 5
    assert repeated_paragraphs(f"# T\n\n{para}\n\nshort\n\nshort\n") == []
    assert repeated_paragraphs(f"{para}\n\nx\n\n{para}\n") == [para[:60]]
    assert repeated_paragraphs("## Results\n## Results\n") == ["## Results"]


@pytest.mark.parametrize("page", LINKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_says_a_paragraph_twice(page: Path) -> None:
    assert repeated_paragraphs(page.read_text()) == []
