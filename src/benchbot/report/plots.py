"""Pictures of a workload's runs for the HTML report: a Row's numbers -> SVG geometry.

Two plots per workload. The ratio plot: each pair's head/base ratio in the order the
pairs were measured, on a log scale, over the line at 1.0, the parity band, the
tolerance lines and the median with its 95% interval; beside it, on the same scale, the
A/A ratios (base against itself), so the method's own noise sits next to the difference.
The runs plot: both arms' runs in measured order with a histogram of each at the side,
where drift (a slope) and timing modes (two bands of dots) show.

Why a small generator of our own rather than a plotting library: matplotlib would add a
large dependency (and fonts) to a tool installed on every CI runner for three kinds of
marks (dots, lines, bands) on two kinds of scale; the JavaScript ones (Vega, Plotly)
need a script at view time and, unless inlined at a few hundred kB, the network. The
report must stay one file that opens offline and runs no code. Owning the SVG also
keeps it small (a whole series is one ``<path>``) and leaves the colours to the page's
CSS, so light and dark themes both work.

What reaches the SVG built here: coordinates computed from floats, tick labels from the
``format`` filters, and fixed English words. Text that came from a results file (names,
reasons) is never passed in; the template writes it, through jinja2's autoescape. That
is why ``svg`` may return ``Markup``.

Everything is drawn in the verdict's direction: a ratio above 1 means head is slower.
For a throughput (``better: higher``) the view's per-pair ratios are of the values, so
they are turned over here to agree with ``row.ratio`` and its interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from benchbot.report import format as fmt
from benchbot.report.view import Row

Point = tuple[float, float]

WIDTH = 560.0
HEIGHT = 220.0
TOP = 24.0  # room for the panels' labels
BOTTOM = HEIGHT - 36.0  # room for the pair numbers and the axis label
LEFT = 62.0  # room for the tick labels
AA_WIDTH = 110.0
GAP = 14.0
HIST_WIDTH = 56.0
HIST_BINS = 24
PAD = 0.08  # of the log span, above and below the values
MIN_LOG_SPAN = math.log(1.01)
MIN_TICK_GAP = 14.0  # pixels between tick labels


@dataclass(frozen=True, slots=True)
class Box:
    """A panel's rectangle, in SVG user units (y grows downwards)."""

    left: float
    top: float
    right: float
    bottom: float

    @property
    def middle(self) -> float:
        return (self.left + self.right) / 2


@dataclass(frozen=True, slots=True)
class Scale:
    """Values -> pixels, linear or logarithmic; ``lo`` maps to ``start``, ``hi`` to ``end``."""

    lo: float
    hi: float
    start: float
    end: float
    log: bool = False

    def __call__(self, value: float) -> float:
        a, b, v = (math.log(self.lo), math.log(self.hi), math.log(value)) if self.log else (
            self.lo, self.hi, value)
        return self.start + (v - a) / (b - a) * (self.end - self.start)


@dataclass(frozen=True, slots=True)
class Tick:
    """A labelled position on an axis."""

    at: float
    label: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RatioPlot:
    """Per-pair ratios (A/B panel) and A/A ratios (A/A panel) on one log scale."""

    ab: Box
    aa: Box
    y_ticks: tuple[Tick, ...]
    x_ticks: tuple[Tick, ...]
    y_label: str
    one: float  # y of ratio 1.0
    parity: tuple[float, float]  # y of 1 + parity and of 1 / (1 + parity)
    tolerance: tuple[float, float] | None
    median: float | None
    ci: tuple[float, float] | None
    aa_median: float | None
    ab_points: tuple[Point, ...]
    aa_points: tuple[Point, ...]
    breaks: tuple[float, ...]  # x where a new phase (confirmation) began
    dot: float
    aa_dot: float
    width: float = WIDTH
    height: float = HEIGHT


@dataclass(frozen=True, slots=True, kw_only=True)
class RunsPlot:
    """Both arms' runs in measured order, with a histogram of each at the side."""

    box: Box
    hist: Box
    y_ticks: tuple[Tick, ...]
    x_ticks: tuple[Tick, ...]
    y_label: str
    base_points: tuple[Point, ...]
    head_points: tuple[Point, ...]
    base_bars: tuple[float, ...]  # bar lengths, one per bin, from the bottom bin up
    head_bars: tuple[float, ...]
    breaks: tuple[float, ...]
    dot: float
    width: float = WIDTH
    height: float = HEIGHT


def judged_ratios(values: Sequence[float], row: Row) -> tuple[float, ...]:
    """Ratios in the verdict's direction (above 1: head slower), positive and finite only."""
    flip = row.better == "higher"
    return tuple(1 / v if flip else v for v in values if v > 0 and math.isfinite(v))


def log_domain(values: Sequence[float]) -> tuple[float, float]:
    """A log-scale domain holding ``values`` with a margin, at least MIN_LOG_SPAN wide."""
    logs = [math.log(v) for v in values if v > 0 and math.isfinite(v)] or [0.0]
    lo, hi = min(logs), max(logs)
    if hi - lo < MIN_LOG_SPAN:
        mid = (hi + lo) / 2
        lo, hi = mid - MIN_LOG_SPAN / 2, mid + MIN_LOG_SPAN / 2
    pad = (hi - lo) * PAD
    return math.exp(lo - pad), math.exp(hi + pad)


def linear_domain(values: Sequence[float]) -> tuple[float, float]:
    """A linear domain holding ``values`` with a margin; identical values get ±1%."""
    finite = [v for v in values if math.isfinite(v)] or [0.0]
    lo, hi = min(finite), max(finite)
    if hi - lo <= abs(hi) * 1e-9:
        half = abs(hi) * 0.01 or 1.0
        return lo - half, hi + half
    pad = (hi - lo) * PAD
    return lo - pad, hi + pad


def nice_step(span: float, count: int) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) giving about ``count`` ticks."""
    raw = span / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    for mantissa in (1.0, 2.0, 2.5, 5.0, 10.0):
        if mantissa * power >= raw:
            return mantissa * power
    return 10 * power  # pragma: no cover - the loop ends at 10


def linear_ticks(lo: float, hi: float, count: int = 5) -> tuple[float, ...]:
    """Multiples of a round step between ``lo`` and ``hi``."""
    step = nice_step(hi - lo, count)
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    return tuple(round(k * step, 12) for k in range(first, last + 1))


def ratio_ticks(lo: float, hi: float) -> tuple[float, ...]:
    """Ratios to label on a log axis: round steps for a narrow range, 1-2-5 for a wide one."""
    if hi / lo <= 4:
        return tuple(v for v in linear_ticks(lo, hi) if v > 0)
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    return tuple(m * 10.0 ** d for d in decades for m in (1, 2, 5) if lo <= m * 10.0 ** d <= hi)


def ratio_label(value: float, ticks: Sequence[float]) -> str:
    """``1.05×``, with as many decimals as the ticks need to differ (at least two)."""
    decimals = 2
    while decimals < 5 and len({f"{t:.{decimals}f}" for t in ticks}) < len(ticks):
        decimals += 1
    return f"{value:.{decimals}f}×"


def thin(ticks: Sequence[Tick], keep: float | None = None) -> tuple[Tick, ...]:
    """Drop ticks closer than MIN_TICK_GAP to one kept before (the one at ``keep`` first)."""
    ordered = sorted(ticks, key=lambda t: (t.at != keep, t.at))
    kept: list[Tick] = []
    for tick in ordered:
        if all(abs(tick.at - k.at) >= MIN_TICK_GAP for k in kept):
            kept.append(tick)
    return tuple(sorted(kept, key=lambda t: t.at))


def positions(n: int, box: Box) -> tuple[float, ...]:
    """x of n points spread evenly over a box (one point sits in the middle)."""
    if n == 1:
        return (box.middle,)
    inset = min(6.0, (box.right - box.left) / 4)
    return tuple(Scale(0, n - 1, box.left + inset, box.right - inset)(i) for i in range(n))


def dot_size(n: int) -> float:
    """A dot's diameter: smaller as the points crowd."""
    return 5.0 if n <= 60 else 4.0 if n <= 150 else 3.0 if n <= 400 else 2.0


def pair_ticks(n: int, box: Box) -> tuple[Tick, ...]:
    """Pair numbers (from 1) along the x axis: the first, and round ones after it."""
    if n == 0:
        return ()
    xs = positions(n, box)
    numbers = [1] + [int(k) for k in linear_ticks(0, n, 5) if k >= 1 and k == int(k)]
    return thin([Tick(xs[k - 1], str(k)) for k in dict.fromkeys(numbers) if k <= n])


def break_xs(breaks: Sequence[int], xs: Sequence[float]) -> tuple[float, ...]:
    """x halfway between the last pair of a phase and the first of the next."""
    return tuple((xs[b - 1] + xs[b]) / 2 for b in breaks if 0 < b < len(xs))


def ratio_plot(row: Row) -> RatioPlot:
    """The ratio plot's geometry; empty panels where a phase has no runs."""
    ab_values, aa_values = judged_ratios(row.pair_ratios, row), judged_ratios(row.aa_pair_ratios, row)
    has_ab = bool(ab_values)
    marks = [1.0, 1 + row.parity, 1 / (1 + row.parity)]
    if row.tolerance is not None:
        marks += [1 + row.tolerance, 1 / (1 + row.tolerance)]
    if has_ab and row.ratio is not None:
        marks += [row.ratio, *(row.ci or ())]
    lo, hi = log_domain([*ab_values, *aa_values, *marks])
    y = Scale(lo, hi, BOTTOM, TOP, log=True)
    ab = Box(LEFT, TOP, WIDTH - AA_WIDTH - GAP - 8, BOTTOM)
    aa = Box(WIDTH - AA_WIDTH - 8, TOP, WIDTH - 8, BOTTOM)
    ab_xs, aa_xs = positions(len(ab_values), ab), positions(len(aa_values), aa)
    ticks = ratio_ticks(lo, hi)
    return RatioPlot(
        ab=ab, aa=aa, y_ticks=thin([Tick(y(t), ratio_label(t, ticks)) for t in ticks], keep=y(1.0)),
        x_ticks=pair_ticks(len(ab_values), ab),
        y_label="head/base, as time" if row.better == "higher" else "head/base time",
        one=y(1.0), parity=(y(1 + row.parity), y(1 / (1 + row.parity))),
        tolerance=None if row.tolerance is None else (y(1 + row.tolerance), y(1 / (1 + row.tolerance))),
        median=y(row.ratio) if has_ab and row.ratio else None,
        ci=(y(row.ci[1]), y(row.ci[0])) if has_ab and row.ci else None,
        aa_median=y(row.aa_ratio) if aa_values and row.aa_ratio else None,
        ab_points=tuple(zip(ab_xs, map(y, ab_values), strict=True)),
        aa_points=tuple(zip(aa_xs, map(y, aa_values), strict=True)),
        breaks=break_xs(row.phase_breaks, ab_xs), dot=dot_size(len(ab_values)),
        aa_dot=dot_size(len(aa_values) * 3),
    )


def runs_plot(row: Row) -> RunsPlot | None:
    """The runs plot's geometry, or None when no A/B runs were made."""
    base, head = row.base_series, row.head_series
    if not base and not head:
        return None
    lo, hi = linear_domain([*base, *head])
    box = Box(LEFT + 8, TOP, WIDTH - HIST_WIDTH - GAP, BOTTOM)
    hist = Box(WIDTH - HIST_WIDTH - 4, TOP, WIDTH - 4, BOTTOM)
    y = Scale(lo, hi, BOTTOM, TOP)
    xs = positions(max(len(base), len(head)), box)
    ticks = linear_ticks(lo, hi)
    # A throughput's unit label goes on the axis title, not on every tick (room).
    tick_unit = row.unit if row.unit == "ns" else "value"
    labels = [Tick(y(t), fmt.quantity(t, tick_unit).replace(fmt.NBSP, " ")) for t in ticks]
    return RunsPlot(
        box=box, hist=hist, y_ticks=thin(_distinct(labels)), x_ticks=pair_ticks(len(xs), box),
        y_label=("time per run" if row.unit == "ns" else "reported value (higher is better)"
                 if row.unit == "value" else f"reported {row.unit} (higher is better)"),
        base_points=tuple(zip(xs, map(y, base), strict=False)),
        head_points=tuple(zip(xs, map(y, head), strict=False)),
        base_bars=histogram(base, lo, hi, HIST_WIDTH - 6),
        head_bars=histogram(head, lo, hi, HIST_WIDTH - 6),
        breaks=break_xs(row.phase_breaks, xs), dot=dot_size(len(xs)),
    )


def _distinct(ticks: Sequence[Tick]) -> list[Tick]:
    """Ticks whose labels differ (three significant figures can make neighbours alike)."""
    return list({t.label: t for t in reversed(ticks)}.values())[::-1]


def histogram(values: Sequence[float], lo: float, hi: float, length: float) -> tuple[float, ...]:
    """Bar lengths of HIST_BINS equal bins from ``lo`` to ``hi``; the fullest is ``length``."""
    counts = [0] * HIST_BINS
    for v in values:
        counts[min(HIST_BINS - 1, max(0, int((v - lo) / (hi - lo) * HIST_BINS)))] += 1
    top = max(counts) or 1
    return tuple(round(c / top * length, 1) for c in counts)


# SVG: the geometry above as markup. Only numbers and fixed words are written here.

def svg(plot: RatioPlot | RunsPlot) -> Markup:
    """The inside of a plot's ``<svg>`` element (the template writes the element, its
    title and its description, which may hold text from the results file)."""
    parts = _ratio_svg(plot) if isinstance(plot, RatioPlot) else _runs_svg(plot)
    return Markup("\n".join(p for p in parts if p))  # numbers and fixed words only


def _ratio_svg(p: RatioPlot) -> list[str]:
    panels = ((p.ab, p.ab_points), (p.aa, p.aa_points))
    boxes = [b for b, points in panels if points]  # an empty panel gets no lines to read
    parts = [_rects([b for b, _ in panels], "frame"), *(_empty(b) for b, pts in panels if not pts),
             _rects([_span(*p.parity, b) for b in boxes], "parity"),
             _lines([t.at for t in p.y_ticks], boxes, "grid"),
             _lines(p.tolerance or (), boxes, "tol"), _lines([p.one], boxes, "one")]
    if p.ci:
        parts.append(_rects([_span(*p.ci, p.ab)], "ci"))
    if p.median is not None:
        parts.append(_lines([p.median], [p.ab], "median"))
    if p.aa_median is not None:
        parts.append(_lines([p.aa_median], [p.aa], "aa-median"))
    parts += _breaks(p.breaks, p.ab)
    parts += [_dots(p.ab_points, "pts ratio", p.dot), _dots(p.aa_points, "pts aa", p.aa_dot)]
    parts += _y_axis(p.y_ticks if boxes else (), p.ab, f"{p.y_label} (log scale)")
    parts += _x_axis(p.x_ticks, p.ab, "pair, in measured order")
    parts += [_text(p.ab.left, p.ab.top - 8, "A/B: head/base, one dot per pair"),
              _text(p.aa.left, p.aa.top - 8, "A/A: base/base")]
    return parts


def _runs_svg(p: RunsPlot) -> list[str]:
    parts = [_rects([p.box], "frame"), _lines([t.at for t in p.y_ticks], [p.box], "grid")]
    parts += _breaks(p.breaks, p.box)
    parts += [_dots(p.base_points, "pts base", p.dot), _dots(p.head_points, "pts head", p.dot)]
    parts += [_bars(p.base_bars, p.hist, "bars base"), _bars(p.head_bars, p.hist, "bars head")]
    parts += _y_axis(p.y_ticks, p.box, p.y_label)
    parts += _x_axis(p.x_ticks, p.box, "pair, in measured order")
    parts += [
        f'<text x="{_n(p.box.left)}" y="{_n(p.box.top - 8)}"><tspan class="key base">●</tspan> base '
        '<tspan class="key head">●</tspan> head, in measured order</text>',
        _text(p.hist.left, p.hist.top - 8, "histogram"),
    ]
    return parts


def _n(value: float) -> str:
    """A coordinate with one decimal at most: 12.3, 40."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _span(y1: float, y2: float, b: Box) -> Box:
    """The part of a box between two heights (at least a pixel, clipped to the box)."""
    top, bottom = max(min(y1, y2), b.top), min(max(y1, y2), b.bottom)
    return Box(b.left, top, b.right, max(bottom, top + 1))


def _rects(boxes: Sequence[Box], cls: str) -> str:
    """Rectangles as one path."""
    d = "".join(f"M{_n(b.left)} {_n(b.top)}H{_n(b.right)}V{_n(b.bottom)}H{_n(b.left)}z" for b in boxes)
    return f'<path class="{cls}" d="{d}"/>' if d else ""


def _lines(ys: Sequence[float], boxes: Sequence[Box], cls: str) -> str:
    """Horizontal lines across each box, as one path."""
    d = "".join(f"M{_n(b.left)} {_n(y)}H{_n(b.right)}" for y in ys for b in boxes)
    return f'<path class="{cls}" d="{d}"/>' if d else ""


def _breaks(xs: Sequence[float], b: Box) -> list[str]:
    return [part for x in xs for part in (
        f'<path class="break" d="M{_n(x)} {_n(b.top)}V{_n(b.bottom)}"/>',
        _text(x + 3, b.top + 11, "confirmation →", "small"))]


def _dots(points: Sequence[Point], cls: str, size: float) -> str:
    """A series as one path of zero-length strokes with round caps: a dot each, 12 bytes."""
    if not points:
        return ""
    d = "".join(f"M{_n(x)} {_n(y)}h0" for x, y in points)
    return f'<path class="{cls}" stroke-width="{_n(size)}" d="{d}"/>'


def _bars(lengths: Sequence[float], b: Box, cls: str) -> str:
    height = (b.bottom - b.top) / len(lengths)
    d = "".join(f"M{_n(b.left)} {_n(b.bottom - (i + 1) * height)}h{_n(w)}v{_n(height)}h{_n(-w)}z"
                for i, w in enumerate(lengths) if w > 0)
    return f'<path class="{cls}" d="{d}"/>' if d else ""


def _y_axis(ticks: Sequence[Tick], b: Box, label: str) -> list[str]:
    labels = "".join(_text(b.left - 5, t.at + 3.5, t.label) for t in ticks)
    mid = (b.top + b.bottom) / 2
    return [f'<g class="tick" text-anchor="end">{labels}</g>' if labels else "",
            f'<text class="axis" transform="rotate(-90)" x="{_n(-mid)}" y="12" '
            f'text-anchor="middle">{_escape(label)}</text>']


def _x_axis(ticks: Sequence[Tick], b: Box, label: str) -> list[str]:
    labels = "".join(_text(t.at, b.bottom + 13, t.label) for t in ticks)
    return [f'<g class="tick" text-anchor="middle">{labels}</g>' if labels else "",
            _text(b.middle, b.bottom + 29, label, "axis", "middle")]


def _empty(b: Box) -> str:
    return _text(b.middle, (b.top + b.bottom) / 2, "no runs", "empty", "middle")


def _text(x: float, y: float, words: str, cls: str = "", anchor: str = "") -> str:
    attrs = (f' class="{cls}"' if cls else "") + (f' text-anchor="{anchor}"' if anchor else "")
    return f'<text x="{_n(x)}" y="{_n(y)}"{attrs}>{_escape(words)}</text>'


def _escape(words: str) -> str:
    """Fixed words and formatted numbers need no escaping; escape anyway, in case one day
    a label is built from something else."""
    return str(Markup.escape(words))
