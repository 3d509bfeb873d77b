"""A differential flame graph for the HTML report: two folded profiles -> inline SVG.

The input is Brendan Gregg's folded format, one map per arm: a stack of frames joined by
``;`` (the outermost first) -> the self cost of exactly that stack (instructions,
samples). The picture is head's profile laid out as a flame graph (the outermost frame
at the bottom, each frame as wide as its inclusive cost in head, siblings in name
order), each frame coloured by how its inclusive cost moved against base: red where head
spends more, blue where it spends less, grey where it is the same (within
``same_within`` of the frame's own cost, or below ``floor`` of the whole). The deeper the
colour, the larger the move, against the largest move of any frame (as Gregg's
``flamegraph.pl --diff`` scales it). Each frame's hover title gives its name, head's
and base's inclusive and self costs, the change and its share of the whole change.
Frames only base has (head spent nothing there) have no width in head's graph; they are
listed under it, largest first.

Bounded by construction: siblings narrower than ``min_share`` of the whole are merged
into one ``[n smaller frames]`` box (dropped where even that is too narrow: the cost
stays in the parent's width), stacks deeper than ``max_depth`` are cut, and when more
than ``max_frames`` frames remain, ``min_share`` is doubled until they fit, so one graph
stays within a few tens of kB however large the profile (the report's pages are 20 to
70 kB; ``tests/report/test_flame.py`` holds the bound).

Why a renderer of our own rather than a library (also in docs/report.md, "The differential
flame graph"): the report
is one file that runs no code (its Content-Security-Policy forbids scripts), so the
JavaScript flame graph viewers (d3-flame-graph, which also needs d3; speedscope, an
application; flamegraph.pl's SVG, which carries a script and is CDDL-licensed) cannot be
used as they are, and none renders a static SVG; the Python packages on PyPI either
compute no picture (pyrometry compares flame graphs and needs scipy; codechu-treeviz
lays out boxes, with no colours by change and no escaping), or are unmaintained
single-purpose tools (difflame, 2017; pyinferno, 2022). A flame graph is a prefix tree
and one rectangle per node: about 200 lines here, with the report's own formatting and
the report's escaping.

What reaches the SVG: coordinates and colours computed from integers, costs formatted
by ``report.format``, fixed English words, and frame names. Frame names come from the
code under test's binary (symbols, file names) and are hostile: every one goes through
``markupsafe.escape`` (the escaping of jinja2's HTML autoescape, which the report
uses), after control characters and direction overrides are taken out, and is cut to
``NAME_LIMIT`` characters, so no name becomes markup or hides another.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from markupsafe import Markup

from benchbot.report import format as fmt

WIDTH = 1200.0  # the SVG's user units across; it is drawn at the page's width
ROW = 17.0  # one frame's height
PAD = 4.0
FONT = 11.0
CHAR_W = 6.4  # an average character of FONT in the page's sans-serif, for cutting labels
NAME_LIMIT = 400  # characters of a frame's name kept (C++ and Go names run to thousands)
UNKNOWN = "[unknown]"
ROOT = "all"
MIN_SHARE = 0.004  # of the whole: a frame narrower than this is merged with its siblings
MAX_FRAMES = 160
MAX_DEPTH = 48
SAME_WITHIN = 0.01  # a frame whose cost moved less than this share of itself is unchanged
FLOOR = 0.001  # ... or less than this share of the whole
# The same for sampled time (benchbot.profiles.timeprofile: a millisecond a sample, a few hundred
# samples a profile): base against base again moves a frame by up to ~10% of itself.
SAMPLED_SAME_WITHIN = 0.1
SAMPLED_FLOOR = 0.02
GONE_SHOWN = 10

# Taken out of names before they are shown: C0 controls but tab, DEL, C1 controls,
# zero-width and direction-changing characters (a name must not reorder the text beside it).
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


@dataclass(slots=True)
class _Node:
    name: str
    head: int = 0  # inclusive
    base: int = 0
    head_self: int = 0
    base_self: int = 0
    children: dict[str, _Node] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Frame:
    """One box of the graph: where it is (``x`` and ``width`` as shares of the whole,
    ``depth`` 0 at the bottom) and its costs; ``merged`` > 0 for a box standing for that
    many narrow siblings."""

    name: str
    depth: int
    x: float
    width: float
    head: int
    base: int
    head_self: int
    base_self: int
    merged: int = 0

    @property
    def delta(self) -> int:
        return self.head - self.base


@dataclass(frozen=True, slots=True)
class Layout:
    """The frames to draw, the stacks only base has (``gone``: stack, base's inclusive
    cost; largest first), the totals, and what was left out to stay small."""

    frames: tuple[Frame, ...]
    gone: tuple[tuple[str, int], ...]
    head_total: int
    base_total: int
    min_share: float
    cut_depth: bool

    @property
    def max_delta(self) -> int:
        """The largest move of a frame but the root (which holds every move)."""
        return max((abs(f.delta) for f in self.frames if f.depth > 0), default=0)


def clean(name: str) -> str:
    """A frame's name as it may be shown: no control or direction characters, one line,
    at most NAME_LIMIT characters (not yet escaped)."""
    text = " ".join(_HIDDEN.sub("", name).split()) or UNKNOWN
    return text if len(text) <= NAME_LIMIT else text[:NAME_LIMIT - 1] + "…"


def _tree(base: Mapping[str, int], head: Mapping[str, int]) -> _Node:
    root = _Node(ROOT)
    for arm, folded in (("head", head), ("base", base)):
        for stack, value in folded.items():
            if value < 0:
                raise ValueError(f"a negative cost in a folded profile: {value} for {stack[:80]!r}")
            if value == 0:
                continue
            node = root
            _add(node, arm, value)
            for name in stack.split(";"):
                node = node.children.setdefault(name or UNKNOWN, _Node(name or UNKNOWN))
                _add(node, arm, value)
            if arm == "head":
                node.head_self += value
            else:
                node.base_self += value
    return root


def _add(node: _Node, arm: str, value: int) -> None:
    if arm == "head":
        node.head += value
    else:
        node.base += value


def layout(base: Mapping[str, int], head: Mapping[str, int], *, min_share: float = MIN_SHARE,
           max_frames: int = MAX_FRAMES, max_depth: int = MAX_DEPTH) -> Layout:
    """Lay out head's flame graph, coloured against base (the module's docstring)."""
    root = _tree(base, head)
    share = min_share
    while True:
        frames, cut = _frames(root, share, max_depth)
        if len(frames) <= max_frames or share >= 0.5:
            break
        share *= 2
    gone: list[tuple[str, int]] = []
    _gone(root, (), gone, max(1.0, share * root.base))
    gone.sort(key=lambda g: (-g[1], g[0]))
    return Layout(frames=tuple(frames), gone=tuple(gone), head_total=root.head,
                  base_total=root.base, min_share=share, cut_depth=cut)


def _frames(root: _Node, share: float, max_depth: int) -> tuple[list[Frame], bool]:
    out: list[Frame] = []
    if root.head == 0:
        return out, False
    total = root.head
    least = share * total
    cut = False
    todo: list[tuple[_Node, int, float]] = [(root, 0, 0.0)]
    while todo:
        node, depth, x = todo.pop()
        out.append(Frame(node.name, depth, x / total, node.head / total, node.head, node.base,
                         node.head_self, node.base_self))
        kids = [c for c in sorted(node.children.values(), key=lambda c: c.name) if c.head > 0]
        if kids and depth + 1 >= max_depth:
            cut = True
            continue
        small = [c for c in kids if c.head < least]
        at = x
        for child in kids:
            if child.head >= least:
                todo.append((child, depth + 1, at))
                at += child.head
        merged = sum(c.head for c in small)
        if small and merged >= least:
            out.append(Frame(f"[{len(small)} smaller frame{'s' if len(small) > 1 else ''}]",
                             depth + 1, at / total, merged / total, merged,
                             sum(c.base for c in small), sum(c.head_self for c in small),
                             sum(c.base_self for c in small), merged=len(small)))
    out.sort(key=lambda f: (f.depth, f.x))
    return out, cut


def _gone(node: _Node, path: tuple[str, ...], out: list[tuple[str, int]], least: float) -> None:
    """The outermost frames with a cost in base and none in head."""
    for child in node.children.values():
        here = (*path, child.name)
        if child.head == 0:
            if child.base >= least:
                out.append((";".join(here), child.base))
        else:
            _gone(child, here, out, least)


def colour(frame: Frame, max_delta: int, total: int, *, same_within: float = SAME_WITHIN,
           floor: float = FLOOR) -> str:
    """The frame's fill: grey if unchanged, else red (more) or blue (less), deeper with
    the move's size against ``max_delta``."""
    delta = frame.delta
    if (abs(delta) <= same_within * max(frame.base, frame.head) or abs(delta) <= floor * total
            or max_delta == 0):
        return "rgb(214,214,214)"
    strength = 0.3 + 0.7 * min(1.0, abs(delta) / max_delta)  # the root's move may pass max
    near = round(238 - 178 * strength)
    return f"rgb(250,{near},{near})" if delta > 0 else f"rgb({near},{near},250)"


def quantity(value: float, unit: str) -> str:
    """A cost with its unit: ``585.8M instructions``, ``379 ms`` (unit "ns": CPU time),
    ``1,234 samples``."""
    if unit == "instructions":
        return fmt.instructions(value)
    if unit == "ns":
        return fmt.duration(value)
    return f"{value:,.0f} {unit}"


def _signed(value: int, unit: str) -> str:
    text = quantity(abs(value), unit)
    return ("+" if value > 0 else "−" if value < 0 else "±") + text


def hover(frame: Frame, lay: Layout, unit: str) -> str:
    """The frame's hover title (plain text, not yet escaped)."""
    change = lay.head_total - lay.base_total
    lines = [clean(frame.name)]
    if frame.merged:
        lines.append(f"{frame.merged} frames, each under {fmt.percent(lay.min_share)} of head")
    lines.append(f"head: {quantity(frame.head, unit)} ({fmt.percent(frame.head / lay.head_total)}"
                 f" of head), self {quantity(frame.head_self, unit)}")
    lines.append(f"base: {quantity(frame.base, unit)}"
                 + (f" ({fmt.percent(frame.base / lay.base_total)} of base)" if lay.base_total else "")
                 + f", self {quantity(frame.base_self, unit)}")
    rel = f" ({fmt.change(frame.head / frame.base)})" if frame.base else " (only in head)"
    share = (f", {fmt.percent(frame.delta / change).replace('-', '−')} of the whole change"
             if change else "")
    lines.append(f"change: {_signed(frame.delta, unit)}{rel}{share}")
    return "\n".join(lines)


def _label(name: str, width_px: float) -> str:
    fits = int((width_px - 6) / CHAR_W)
    if fits < 3:
        return ""
    text = clean(name)
    return text if len(text) <= fits else text[:fits - 1] + "…"


def render(base: Mapping[str, int], head: Mapping[str, int], *, unit: str,
           title: str = "Differential flame graph", min_share: float = MIN_SHARE,
           max_frames: int = MAX_FRAMES, max_depth: int = MAX_DEPTH,
           same_within: float = SAME_WITHIN, floor: float = FLOOR) -> Markup:
    """The HTML fragment of a differential flame graph of ``head`` against ``base``
    (folded stacks -> self cost in ``unit``): a ``<figure class="flame">`` holding the
    inline SVG and a caption (the colours' key, the frames only base has, what was
    merged). Self-contained: no script, no style sheet, nothing fetched.

    ``same_within`` and ``floor`` say which moves are grey (``colour``): the defaults
    suit exact counts (instructions); for sampled time, whose counts move by their
    square root between two profiles of the same program, use wider ones
    (``SAMPLED_SAME_WITHIN``, ``SAMPLED_FLOOR``)."""
    lay = layout(base, head, min_share=min_share, max_frames=max_frames, max_depth=max_depth)
    if not lay.frames:
        return Markup('<figure class="flame"><p>{}: head has no cost recorded ({}).</p></figure>'
                      ).format(title, unit)
    depth = max(f.depth for f in lay.frames) + 1
    height = depth * ROW + 2 * PAD
    top = max(lay.max_delta, 0)
    change = lay.head_total - lay.base_total
    summary = (f"{title}: head {quantity(lay.head_total, unit)} against base "
               f"{quantity(lay.base_total, unit)} ({_signed(change, unit)})")
    parts = [Markup('<figure class="flame" style="margin:0 0 1rem">'
                    '<div class="scroll" style="overflow-x:auto">'
                    '<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {w:.0f} {h:.0f}" '
                    'width="100%" style="display:block;min-width:640px;height:auto" '
                    'font-family="system-ui,sans-serif" font-size="{f:.0f}">'
                    '<title>{s}</title>').format(w=WIDTH, h=height, f=FONT, s=summary)]
    for frame in lay.frames:
        x = PAD + frame.x * (WIDTH - 2 * PAD)
        w = frame.width * (WIDTH - 2 * PAD)
        y = height - PAD - (frame.depth + 1) * ROW
        fill = colour(frame, top, lay.head_total, same_within=same_within, floor=floor)
        label = _label(frame.name, w)
        text = Markup('<text x="{:.1f}" y="{:.1f}" fill="#1f2328">{}</text>').format(
            x + 3, y + ROW - 5, label) if label else Markup("")
        parts.append(Markup('<g class="frame"><title>{t}</title><rect x="{x:.1f}" y="{y:.1f}" '
                            'width="{w:.1f}" height="{r:.0f}" rx="2" fill="{c}" '
                            'stroke="#ffffff" stroke-width="0.5"/>{text}</g>').format(
            t=hover(frame, lay, unit), x=x, y=y, w=max(w, 0.5), r=ROW - 1, c=fill, text=text))
    parts.append(Markup("</svg></div>"))
    parts.append(_caption(lay, unit, summary, same_within, floor))
    parts.append(Markup("</figure>"))
    return Markup("").join(parts)


def _caption(lay: Layout, unit: str, summary: str, same_within: float, floor: float) -> Markup:
    key = Markup('<span style="background:rgb(250,60,60);padding:0 .4em">&nbsp;</span> more in head · '
                 '<span style="background:rgb(60,60,250);padding:0 .4em">&nbsp;</span> less · '
                 '<span style="background:rgb(214,214,214);padding:0 .4em">&nbsp;</span> the same '
                 '(within {same} of the frame, or {floor} of the whole)').format(
        same=fmt.setting_percent(same_within), floor=fmt.setting_percent(floor))
    what = "CPU time" if unit == "ns" else unit
    notes = [Markup("{}. Width: head's inclusive {}; hover a frame for its figures. ").format(summary, what),
             key]
    if lay.min_share > 0:
        notes.append(Markup(". Frames under {} of head merged").format(fmt.percent(lay.min_share)))
    if lay.cut_depth:
        notes.append(Markup(", stacks cut at depth {}").format(MAX_DEPTH))
    out = [Markup('<figcaption style="font-size:.85rem">'), *notes, Markup(".")]
    if lay.gone:
        items = _gone_items(lay.gone[:GONE_SHOWN], lay.base_total, unit)
        more = len(lay.gone) - GONE_SHOWN
        out.append(Markup("<br>Only in base (no cost in head): <ul>{}{}</ul>").format(
            items, Markup("<li>and {} more</li>").format(more) if more > 0 else ""))
    out.append(Markup("</figcaption>"))
    return Markup("").join(out)


def _gone_items(gone: Iterable[tuple[str, int]], base_total: int, unit: str) -> Markup:
    return Markup("").join(
        Markup("<li><code>{}</code>: {} ({} of base)</li>").format(
            clean(stack.rsplit(";", 1)[-1]), quantity(value, unit),
            fmt.percent(value / base_total) if base_total else "–")
        for stack, value in gone)
