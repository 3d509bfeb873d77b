"""The differential flame graph (benchbot.report.flame): layout, colours, hover titles,
bounds, and names from the code under test that never become markup."""

from __future__ import annotations

import random
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from benchbot.profiles.timeprofile import self_costs
from benchbot.report import flame

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "flame"

BASE = {"main;run;sort_kernel": 900, "main;run;compare": 100, "main;setup": 50, "main;old_helper": 30}
HEAD = {"main;run;sort_kernel": 1200, "main;run;compare": 100, "main;setup": 40, "main;new_helper": 20}

# Every element and attribute the fragment may hold: a name that became markup would add one.
TAGS = {"figure", "div", "svg", "title", "g", "rect", "text", "figcaption", "span", "br", "ul",
        "li", "code", "p"}
ATTRS = {"class", "style", "xmlns", "role", "viewbox", "width", "height", "font-family",
         "font-size", "x", "y", "rx", "fill", "stroke", "stroke-width"}
HOSTILE = [
    '</title><script>alert(1)</script>',
    '" onmouseover="alert(2)',
    "<img src=x onerror=alert(3)>",
    "operator<<(std::ostream&, Foo<Bar> const&)",
    "]]><!--<svg onload=alert(4)>",
    "&lt already &amp escaped &#60",  # (folded names have no ";")
    "evil\u202egnp.exe",
    "x" * 5000,
]


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attrs: set[str] = set()
        self.values: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs.update(a for a, _ in attrs)
        self.values.extend(v or "" for _, v in attrs)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(html: str) -> _Tags:
    p = _Tags()
    p.feed(html)
    p.close()
    return p


def test_head_is_laid_out_by_inclusive_cost_and_siblings_in_name_order() -> None:
    lay = flame.layout(BASE, HEAD, min_share=0.0)
    by = {(f.depth, f.name): f for f in lay.frames}
    assert lay.head_total == 1360 and lay.base_total == 1080
    assert by[(0, "all")].width == 1.0 and by[(1, "main")].width == 1.0
    run, setup, new = by[(2, "run")], by[(2, "setup")], by[(2, "new_helper")]
    assert (run.head, run.base, setup.head, setup.base) == (1300, 1000, 40, 50)
    assert new.x == 0.0 and run.x == pytest.approx(20 / 1360) and setup.x == pytest.approx(1320 / 1360)
    kernel = by[(3, "sort_kernel")]
    assert (kernel.head_self, kernel.base_self, kernel.delta) == (1200, 900, 300)
    assert lay.gone == (("main;old_helper", 30),)  # only base has it: listed, not drawn
    assert (2, "old_helper") not in by


def test_colours_say_more_less_and_the_same() -> None:
    lay = flame.layout(BASE, HEAD, min_share=0.0)
    by = {f.name: f for f in lay.frames}
    top, total = lay.max_delta, lay.head_total
    red = flame.colour(by["sort_kernel"], top, total)
    assert red == "rgb(250,60,60)"  # the largest move: the deepest red
    assert flame.colour(by["compare"], top, total) == "rgb(214,214,214)"  # unchanged
    r, g, b = map(int, re.findall(r"\d+", flame.colour(by["setup"], top, total)))
    assert b == 250 and r == g > 60  # less, and a smaller move: a lighter blue
    assert flame.colour(by["new_helper"], top, total).startswith("rgb(250,")


def test_a_hover_title_gives_head_base_the_change_and_its_share() -> None:
    lay = flame.layout(BASE, HEAD, min_share=0.0)
    kernel = next(f for f in lay.frames if f.name == "sort_kernel")
    assert flame.hover(kernel, lay, "instructions") == (
        "sort_kernel\n"
        "head: 1.2k instructions (88.2% of head), self 1.2k instructions\n"
        "base: 900 instructions (83.3% of base), self 900 instructions\n"
        "change: +300 instructions (+33.3%), 107.1% of the whole change")
    setup = next(f for f in lay.frames if f.name == "setup")
    assert flame.hover(setup, lay, "samples").splitlines()[-1] == (
        "change: −10 samples (−20.0%), −3.6% of the whole change")
    new = next(f for f in lay.frames if f.name == "new_helper")
    assert "(only in head)" in flame.hover(new, lay, "samples")


def test_narrow_siblings_are_merged_into_one_box() -> None:
    head = {"main;big": 9000, **{f"main;tiny_{i:02d}": 10 for i in range(40)}}
    lay = flame.layout({}, head, min_share=0.01)
    names = [f.name for f in lay.frames if f.depth == 2]
    assert names == ["big", "[40 smaller frames]"]
    merged = next(f for f in lay.frames if f.merged)
    assert (merged.merged, merged.head) == (40, 400)
    # Too narrow even together: dropped, its cost still in the parent's width.
    lay = flame.layout({}, {"main;big": 10000, "main;a": 1, "main;b": 1}, min_share=0.01)
    assert [f.name for f in lay.frames] == ["all", "main", "big"]
    assert lay.frames[1].head == 10002


def test_a_huge_profile_stays_small() -> None:
    rng = random.Random(7)
    names = [f"ns::Type<T{i}>::method_{i}(std::vector<int> const&)" for i in range(300)]
    def profile() -> dict[str, int]:
        out: dict[str, int] = {}
        for _ in range(5000):
            stack = ";".join(rng.choice(names) for _ in range(rng.randint(1, 80)))
            out[stack] = out.get(stack, 0) + rng.randint(1, 1000)
        return out
    base, head = profile(), profile()
    lay = flame.layout(base, head)
    assert len(lay.frames) <= flame.MAX_FRAMES
    assert max(f.depth for f in lay.frames) < flame.MAX_DEPTH
    html = flame.render(base, head, unit="samples")
    assert len(html.encode()) < 96_000, len(html.encode())  # the report's pages: 20-70 kB


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_name_stays_text(name: str) -> None:
    head = {f"main;{name}": 500, "main;fine": 500}
    base = {"main;fine": 500, f"main;{name}_old": 500}
    html = flame.render(base, head, unit="instructions")
    p = parsed(html)
    assert p.tags <= TAGS, p.tags - TAGS
    assert p.attrs <= ATTRS, p.attrs - ATTRS
    assert not any("alert" in v or "<" in v for v in p.values)
    shown = flame.clean(name)
    assert any(shown in t for t in p.text) or any(shown[:-1] in t for t in p.text)
    assert "\u202e" not in html
    assert len(html) < 20_000  # a 5,000-character name is cut (NAME_LIMIT)


def test_a_name_cut_for_its_box_keeps_its_whole_text_in_the_title() -> None:
    long = "std::__1::basic_string<char>::append(char const*, unsigned long)"
    html = flame.render({}, {f"main;{long}": 10, "main;other": 990}, unit="samples", min_share=0.0)
    p = parsed(html)
    assert any(t.startswith(long + "\n") for t in p.text)  # the hover title
    assert not any(t == long for t in p.text)  # the label: cut to its box


def test_empty_and_odd_input() -> None:
    assert "head has no cost recorded" in flame.render({"a": 5}, {}, unit="samples")
    lay = flame.layout({}, {"a;;b": 3, "": 2, "zero": 0})
    assert {f.name for f in lay.frames} == {"all", "a", "[unknown]", "b"}
    with pytest.raises(ValueError, match="negative"):
        flame.layout({}, {"a": -1})


def test_the_real_memory_profile_puts_walk_in_the_deepest_red() -> None:
    """A real profile (benchmarks/timeprofile.py --folded, perf's dwarf call graphs):
    the walk through the array is what head spends more in."""
    base, head = (_folded(FIXTURES / f"memory-walk.{arm}.folded") for arm in ("base", "head"))
    lay = flame.layout(base, head)
    def colour(f: flame.Frame) -> str:
        return flame.colour(f, lay.max_delta, lay.head_total, same_within=flame.SAMPLED_SAME_WITHIN,
                            floor=flame.SAMPLED_FLOOR)
    deepest = {f.name for f in lay.frames if colour(f) == "rgb(250,60,60)"}
    assert "walk" in deepest
    assert deepest <= {"all", "walk", "main", "__libc_start_call_main", "_start",
                       "__libc_start_main@@GLIBC_2.34"}  # walk and its callers
    selfs = {arm: self_costs(folded) for arm, folded in (("base", base), ("head", head))}
    moved = {n: selfs["head"].get(n, 0) - selfs["base"].get(n, 0) for n in {*selfs["base"], *selfs["head"]}}
    assert max(moved, key=lambda n: moved[n]) == "walk"
    spin = [f for f in lay.frames if f.name == "spin"]
    assert spin and all(colour(f) == "rgb(214,214,214)" for f in spin)  # unchanged


def _folded(path: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in path.read_text().splitlines():
        stack, _, value = line.rpartition(" ")
        out[stack] = out.get(stack, 0) + int(value)
    return out
