"""Benchmark harnesses' reports read into entries (provisional: JSON lines only).

Standard library only: the sandboxed worker imports it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

FORMATS: tuple[str, ...] = ("google-benchmark", "go", "bencher", "pytest-benchmark", "pyperf",
                            "jsonl")
_TIME_NS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    name: str
    value: float
    unit: str
    better: str
    select: str
    extras: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Parsed:
    entries: tuple[Entry, ...]
    failed: tuple[tuple[str, str], ...] = ()
    error: str | None = None


def parse(fmt: str, text: str) -> Parsed:
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            name, value, unit = str(item["name"]), float(item["value"]), str(item["unit"])
        except (ValueError, KeyError, TypeError):
            return Parsed(entries=(), error=f"line {number}: {line[:80]!r} is not a result")
        if not math.isfinite(value) or value < 0:
            return Parsed(entries=(), error=f"line {number}: {line[:80]!r} is not a result")
        better = item.get("better", "lower")
        if unit in _TIME_NS:
            value, unit = value * _TIME_NS[unit], "ns"
        entries.append(Entry(name=name, value=value, unit=unit, better=better, select=name))
    if not entries:
        return Parsed(entries=(), error="no benchmark results in the output")
    return Parsed(entries=tuple(entries))


def filter_regex(fmt: str, selects: Sequence[str]) -> str:
    return "^(" + "|".join(re.escape(s) for s in selects) + ")$"


def to_json(parsed: Parsed) -> dict[str, Any]:
    return {"entries": [[e.name, e.value, e.unit, e.better, e.select,
                         [list(x) for x in e.extras]] for e in parsed.entries],
            "failed": [list(f) for f in parsed.failed], "error": parsed.error}


def from_json(data: Mapping[str, Any]) -> Parsed:
    return Parsed(
        entries=tuple(Entry(name=str(n), value=float(v), unit=str(u), better=str(b),
                            select=str(s), extras=tuple((str(k), float(x)) for k, x in ex))
                      for n, v, u, b, s, ex in data["entries"]),
        failed=tuple((str(n), str(w)) for n, w in data["failed"]), error=data.get("error"))
TEXT_LIMIT = 16 << 20  # bytes of a report that are read
