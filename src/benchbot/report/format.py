"""Small formatting filters for numbers with units; templates use these and nothing else."""

from __future__ import annotations

import math
from collections.abc import Sequence

_UNITS = ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns"))
NBSP = "\u00a0"  # keeps a number and its unit on one line in narrow table cells
SPARKS = "▁▂▃▄▅▆▇█"
_COUNT_PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def duration(ns: float | None) -> str:
    """Format nanoseconds with a unit and three significant figures: 85.3 ms, 412 µs."""
    if ns is None or not math.isfinite(ns):
        return "–"
    for scale, unit in _UNITS:
        if abs(ns) >= scale or unit == "ns":
            value = ns / scale
            if abs(value) >= 100:
                return f"{value:.0f}{NBSP}{unit}"
            if abs(value) >= 10:
                return f"{value:.1f}{NBSP}{unit}"
            return f"{value:.2f}{NBSP}{unit}"
    raise AssertionError("unreachable")


def number(value: float | None) -> str:
    """Format a unitless reported figure (a throughput) with four significant figures."""
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"


def instructions(value: float | None) -> str:
    """An instruction count with four significant figures and its unit: 585.8M instructions
    (an ordinary space: in a narrow table cell the unit may go under the number)."""
    if value is None or not math.isfinite(value):
        return "–"
    for scale, prefix in _COUNT_PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.4g}{prefix} instructions"
    return f"{value:.0f} instructions"


def count(value: float | None) -> str:
    """A count with four significant figures and no unit (a table's header names it):
    585.8M, −12.3k."""
    if value is None or not math.isfinite(value):
        return "–"
    for scale, prefix in _COUNT_PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.4g}{prefix}".replace("-", "−")
    return f"{value:.0f}".replace("-", "−")


def memory(kib: float | None) -> str:
    """A size in KiB with its unit and three significant figures: 2.05 MiB, 812 KiB."""
    if kib is None or not math.isfinite(kib):
        return "–"
    for scale, unit in ((1024.0 ** 2, "GiB"), (1024.0, "MiB"), (1.0, "KiB")):
        if abs(kib) >= scale or unit == "KiB":
            value = kib / scale
            digits = 0 if abs(value) >= 100 else 1 if abs(value) >= 10 else 2
            return f"{value:.{digits}f}{NBSP}{unit}"
    raise AssertionError("unreachable")


def quantity(value: float | None, unit: str) -> str:
    """A time (unit "ns") with its unit, a reported value (unit "value"), an instruction
    count (unit "instructions"), or a reported value with its unit label (config ``unit``,
    e.g. "MB/s")."""
    if unit == "ns":
        return duration(value)
    if unit == "instructions":
        return instructions(value)
    if unit == "value" or value is None or not math.isfinite(value):
        return number(value)
    return f"{number(value)}{NBSP}{unit}"


def ratio(value: float | None) -> str:
    """Format a ratio as 1.043×."""
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:.3f}×"


def change(value: float | None) -> str:
    """Format a ratio as a signed percentage change: +4.3%, −8.0%."""
    if value is None or not math.isfinite(value):
        return "–"
    pct = (value - 1) * 100
    text = f"{pct:+.1f}%"
    return text.replace("-", "−")


def percent(value: float | None) -> str:
    """Format a fraction as a percentage: 0.021 -> 2.1%."""
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value * 100:.1f}%"


def setting_percent(value: float | None) -> str:
    """A configured fraction without noise digits: 0.02 -> 2%."""
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value * 100:g}%"


def tolerance(value: float | None) -> str:
    """Format a tolerance as ±2.0%."""
    return "–" if value is None else f"±{percent(value)}"


def interval(ci: Sequence[float] | None) -> str:
    """Format a ratio interval as a change interval: −0.4% … +0.6%."""
    if not ci:
        return "–"
    return f"{change(ci[0])} … {change(ci[1])}"


def load(values: Sequence[float] | None) -> str:
    """Format load averages as 0.52 / 0.61 / 0.70."""
    if not values:
        return "–"
    return " / ".join(f"{v:.2f}" for v in values)


def short_sha(sha: str | None) -> str:
    """The first 7 characters of a commit SHA, as GitHub shows them."""
    return (sha or "")[:7]


def spark(counts: Sequence[int] | None) -> str:
    """A histogram as a line of block characters: ▁▃█▅▁ (empty bins as spaces)."""
    if not counts:
        return ""
    top = max(counts) or 1
    return "".join(
        " " if c == 0 else SPARKS[min(len(SPARKS) - 1, math.ceil(c / top * len(SPARKS)) - 1)]
        for c in counts
    )
