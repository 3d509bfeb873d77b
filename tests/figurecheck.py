"""Read every verdict cell of a report and tell which figure points against its outcome
(issue 37: "0 verdict cells whose figure points against their outcome").

A verdict cell is the bold last cell of a markdown table row (``**faster −3.3% work**``)
or an HTML pill (``<span class="pill faster" …>🟢 faster −3.3% work</span>``). Its figure
is the first signed percentage after the outcome. The sign conventions:

- a time or the work (instructions): above 0 is slower, more work; so ``slower`` needs a
  figure above 0 and ``faster`` one below;
- a throughput (``… throughput``, a metric with ``better: higher``): above 0 is faster;
- ``level``: a signed figure only for work that moved below parity, which the cell says
  (``level: work +1.2%, below parity``); a reach (``±48%``) has no sign;
- ``inconclusive`` and ``invalid`` show no figure.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

OUTCOME = r"(slower|faster|level|inconclusive|invalid)"
MD_CELL = re.compile(r"\|\s*\*\*" + OUTCOME + r"([^*|]*)\*\*")
HTML_PILL = re.compile(r'<span class="pill ' + OUTCOME + r'"[^>]*>[^<a-z]*([^<]*)</span>')
GFM_CELL = re.compile(r"<td><strong>" + OUTCOME + r"([^<]*)</strong>")
SIGNED = re.compile(r"([+\-−])(\d+(?:\.\d+)?)%")


@dataclass(frozen=True)
class Cell:
    outcome: str
    text: str  # the whole cell, outcome first

    @property
    def figure(self) -> float | None:
        """The first signed percentage after the outcome, as a signed fraction."""
        found = SIGNED.search(self.text[len(self.outcome):])
        if found is None:
            return None
        value = float(found.group(2)) / 100
        return -value if found.group(1) in "-−" else value

    @property
    def throughput(self) -> bool:
        return "throughput" in self.text

    def problem(self) -> str | None:
        """Why this cell's figure points against its outcome, or None."""
        f = self.figure
        if self.outcome in ("inconclusive", "invalid"):
            return None if f is None else f"{self.outcome} with a figure: {self.text!r}"
        if self.outcome == "level":
            if f is not None and "below parity" not in self.text:
                return f"a level with a signed figure not said to be below parity: {self.text!r}"
            return None
        if f is None or f == 0:
            return None  # the outcome alone
        up = f > 0 if not self.throughput else f < 0  # which way it says the code went: slower
        if up != (self.outcome == "slower"):
            return f"{self.outcome} with a figure that says the other way: {self.text!r}"
        return None


def cells(report: str) -> list[Cell]:
    """Every verdict cell of a markdown or HTML report, in order."""
    if "<td><strong>" in report:  # markdown as GitHub renders it
        return [Cell(m.group(1), html.unescape(m.group(1) + m.group(2)).strip())
                for m in GFM_CELL.finditer(report)]
    if "<span class=\"pill" in report:
        return [Cell(m.group(1), html.unescape(m.group(2)).strip())
                for m in HTML_PILL.finditer(report)]
    out = []
    for line in report.splitlines():
        if line.startswith("|"):
            out += [Cell(m.group(1), (m.group(1) + m.group(2)).strip()) for m in MD_CELL.finditer(line)]
    return out


def by_workload(markdown: str) -> dict[str, Cell]:
    """The verdict cell of each workload's row of a markdown report's main table."""
    out = {}
    for line in markdown.splitlines():
        name = re.match(r"\|[^|]*\| `([^`]+)` \|", line)
        found = MD_CELL.search(line)
        if name and found:
            out[name.group(1)] = Cell(found.group(1), (found.group(1) + found.group(2)).strip())
    return out


def problems(report: str) -> list[str]:
    """Each verdict cell of ``report`` whose figure points against its outcome."""
    return [p for c in cells(report) if (p := c.problem()) is not None]
