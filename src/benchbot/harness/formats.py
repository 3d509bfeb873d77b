"""Benchmark harnesses' output, read into one list of results: the parsers behind suites.

This module imports the standard library only, because it also runs inside the sandbox
(``benchbot.sandbox.worker``) with nothing but the interpreter.

A suite is one harness run that reports many benchmarks; ``parse(fmt, text)`` turns its
machine-readable output into ``Entry`` records (times in nanoseconds per iteration), the
benchmarks the harness itself says failed, or one ``error`` for output that cannot be
read. The output comes from the code under test, so it is untrusted: nothing is
evaluated, at most ``TEXT_LIMIT`` characters are read (longer output is an error,
not cut), every regular expression here runs in linear time, and names with control
characters or over ``MAX_NAME_CHARS`` characters are refused. An error quotes the
offending line, cut to ``QUOTE_CHARS`` characters with control characters escaped, and
gives its line number.

Formats (``FORMATS``):

- ``google-benchmark``: its JSON (``--benchmark_format=json`` or ``--benchmark_out``).
  The value is ``real_time`` in ns; with repetitions, the ``median`` aggregate where the
  harness reports one, else the median of the repetitions (mean, stddev, cv and
  complexity aggregates are left out); ``error_occurred`` is a failed benchmark, and one
  ``skipped`` with a message (``SkipWithMessage``) is left out.
- ``go``: ``go test -bench`` text (Go's benchmark data format). The -GOMAXPROCS suffix is
  taken off the names when every result line carries the same one; ``-count N``
  repeats give the median; a name reported by several packages gets its package's last
  path element as a prefix (``sorting.BenchmarkCopy``); ``--- FAIL: BenchmarkX`` fails.
- ``bencher``: libtest's ``cargo bench`` lines and Criterion's ``--output-format
  bencher`` (``test NAME ... bench: 1,234 ns/iter (+/- 56)``).
- ``pytest-benchmark``: its ``--benchmark-json`` file; the value is ``stats.median``.
- ``pyperf``: its JSON (``-o FILE``); the value is the median of every run's values
  (warm-ups left out).
- ``jsonl``: benchbot's own protocol, for everything else. Every non-empty line of the
  output is one JSON object ``{"name": str, "value": number, "unit": str, "better":
  "lower" | "higher"}``. The units ns, us, µs, ms and s are times, converted to ns, and
  ``better`` may be left out for them (lower); any other unit is taken as it is and
  needs ``better``. No other keys are allowed. A name reported twice gets the median.
  Any other line is an error. (docs/suites.md, "The JSON-lines protocol".)

``filter_regex`` builds, for the benchmarks still to measure, an anchored regular
expression in the harness's own dialect that selects exactly them.

Why one module of about 700 lines: six parsers that share one set of checks of untrusted
text (names, numbers, units, lengths), kept together so that each visibly uses the same
checks; the sandbox's worker imports this one module and nothing else of benchbot.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

FORMATS: tuple[str, ...] = ("google-benchmark", "go", "bencher", "pytest-benchmark",
                            "pyperf", "jsonl")

# The most of a run's output that is parsed; a longer text is refused as a whole rather
# than cut (most formats are one JSON document). A reader that stops at TEXT_LIMIT + 1
# characters lets ``parse`` say that the output was too long.
TEXT_LIMIT = 16 << 20
MAX_NAME_CHARS = 200
MAX_SELECT_CHARS = 1000  # pytest node ids, longer than the names they select
QUOTE_CHARS = 80
_WHY_CHARS = 200  # a failed benchmark's reason, as the harness gave it

# The extra figure that says how many iterations (google-benchmark, go), calls per round
# (pytest-benchmark) or loops per value (pyperf) a result ran: what a counted run of a
# fixed amount of work checks (benchbot.suites.fixedwork).
ITERATIONS = "iterations"

_TIME_NS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9}
# Unicode categories refused in names: controls, format characters (bidirectional
# overrides, zero-width ones), surrogates, and the line and paragraph separators.
_BAD_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One benchmark's result in one harness run."""

    name: str  # the benchmark's name as benchbot shows it (after the suite's "/")
    value: float  # times in ns per iteration/op; other units as the harness gives them
    unit: str  # "ns" for every time; else the harness's unit ("bytes/s", "B/op", ...)
    better: str  # "lower" | "higher" (throughputs: higher)
    select: str  # what selects it in the harness's own filter (see filter_regex)
    extras: tuple[tuple[str, float], ...] = ()  # other figures, e.g. ("B/op", 64.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Parsed:
    """What one harness run reported: its results, its failures, or why it is unreadable."""

    entries: tuple[Entry, ...]
    failed: tuple[tuple[str, str], ...] = ()  # (name, why): the harness says they failed
    error: str | None = None  # the output as a whole is unparsable: "line 7: '…' is not …"


class _Invalid(Exception):
    """The output cannot be read; the message says where and why."""


def parse(fmt: str, text: str) -> Parsed:
    """The results in a harness's output; an unreadable output comes back as ``error``."""
    try:
        parser = _PARSERS[fmt]
    except KeyError:
        raise ValueError(f"unknown harness format {fmt!r}; one of {', '.join(FORMATS)}") from None
    if len(text) > TEXT_LIMIT:
        return Parsed(entries=(), error=f"the output is {len(text)} characters long; benchbot "
                                        f"reads at most {TEXT_LIMIT} ({TEXT_LIMIT >> 20} Mi)")
    runs = _Runs()
    try:
        parser(text, runs)
    except _Invalid as exc:
        return Parsed(entries=(), failed=runs.failures(), error=str(exc))
    entries = runs.entries()
    if not entries:
        failed = runs.failures()
        return Parsed(entries=(), failed=failed, error="no benchmark results in the output"
                      + (f" ({len(failed)} failed)" if failed else ""))
    return Parsed(entries=entries, failed=runs.failures())


def filter_regex(fmt: str, selects: Sequence[str]) -> str:
    """An anchored regex, in the harness's own dialect, that matches exactly ``selects``.

    Every character outside [A-Za-z0-9_] is escaped in a way that dialect reads as that
    character alone: google-benchmark's POSIX extended regex (``std::regex::extended``
    or ``regcomp``, which has no hex escapes: a one-character bracket, ``\\^`` and
    ``\\\\``, non-ASCII bytes as they are), Go's RE2 and Rust's regex crate (``\\x{HH}``),
    Python's ``re`` for the rest. For go, only the top-level names (before the first
    ``/``) are used: ``go test -bench`` splits its pattern at every ``/`` outside
    brackets and parentheses and matches each level separately.
    """
    if fmt not in _ESCAPERS:
        raise ValueError(f"unknown harness format {fmt!r}; one of {', '.join(FORMATS)}")
    wanted = [s.split("/", 1)[0] for s in selects] if fmt == "go" else list(selects)
    unique = list(dict.fromkeys(wanted))
    if not unique:
        raise ValueError("no benchmarks to select")
    for select in unique:
        problem = _name_problem(select, MAX_SELECT_CHARS)
        if problem:
            raise ValueError(f"cannot select {_quote(select)}: {problem}")
    escape = _ESCAPERS[fmt]
    return "^(" + "|".join("".join(map(escape, s)) for s in unique) + ")$"


def go_exact(name: str) -> str:
    """A ``-test.bench`` pattern that selects the one (sub-)benchmark ``name``: each
    ``/``-separated level anchored and escaped on its own (``go test`` matches the levels
    one by one; the escapes hold no ``/``)."""
    levels = name.split("/")
    for level in levels:
        problem = _name_problem(level, MAX_SELECT_CHARS)
        if problem:
            raise ValueError(f"cannot select {_quote(name)}: {problem}")
    return "/".join("^" + "".join(map(_escape_hex_braces, level)) + "$" for level in levels)


def to_json(parsed: Parsed) -> dict[str, Any]:
    """The parsed output as plain JSON values (through the sandboxed worker's pipe)."""
    return {
        "entries": [{"name": e.name, "value": e.value, "unit": e.unit, "better": e.better,
                     "select": e.select, "extras": [[k, v] for k, v in e.extras]}
                    for e in parsed.entries],
        "failed": [[name, why] for name, why in parsed.failed],
        "error": parsed.error,
    }


def from_json(data: Mapping[str, Any]) -> Parsed:
    """The inverse of ``to_json``."""
    return Parsed(
        entries=tuple(Entry(name=str(e["name"]), value=float(e["value"]), unit=str(e["unit"]),
                            better=str(e["better"]), select=str(e["select"]),
                            extras=tuple((str(k), float(v)) for k, v in e.get("extras", ())))
                      for e in data["entries"]),
        failed=tuple((str(n), str(w)) for n, w in data.get("failed", ())),
        error=None if data.get("error") is None else str(data["error"]),
    )


# --- shared pieces ----------------------------------------------------------------------


@dataclass(slots=True)
class _Bench:
    """One benchmark's values so far (repetitions are folded by median at the end)."""

    unit: str
    better: str
    select: str
    values: list[float] = field(default_factory=list)
    extras: dict[str, list[float]] = field(default_factory=dict)


class _Runs:
    """Results gathered in the order the harness first reported them."""

    def __init__(self) -> None:
        self._benches: dict[str, _Bench] = {}
        self._failed: dict[str, str] = {}

    def add(self, name: str, value: float, *, unit: str, better: str, select: str,
            extras: Iterable[tuple[str, float]] = (), where: str) -> None:
        _check_name(name, where)
        bench = self._benches.get(name)
        if bench is None:
            bench = self._benches[name] = _Bench(unit=unit, better=better, select=select)
        elif bench.unit != unit:
            raise _Invalid(f"{where}: {_quote(name)} is reported in {_quote(bench.unit)} "
                           f"and in {_quote(unit)}")
        bench.values.append(value)
        for key, figure in extras:
            bench.extras.setdefault(key, []).append(figure)

    def fail(self, name: str, why: str, *, where: str) -> None:
        _check_name(name, where)
        self._failed.setdefault(name, _clean(why)[:_WHY_CHARS] or "failed")

    def entries(self) -> tuple[Entry, ...]:
        return tuple(
            Entry(name=name, value=statistics.median(b.values), unit=b.unit, better=b.better,
                  select=b.select,
                  extras=tuple((k, statistics.median(v)) for k, v in b.extras.items()))
            for name, b in self._benches.items() if name not in self._failed)

    def failures(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._failed.items())


def _quote(line: str) -> str:
    """A line as an error message shows it: cut, with control characters escaped."""
    cut = line[:QUOTE_CHARS]
    return repr(cut) + ("…" if len(line) > QUOTE_CHARS else "")


def _clean(text: str) -> str:
    """Free text from the harness with its control characters escaped (repr's way)."""
    return "".join(repr(c)[1:-1] if _is_bad(c) else c for c in text.strip())


def _is_bad(char: str) -> bool:
    return unicodedata.category(char) in _BAD_CATEGORIES


def _name_problem(name: str, limit: int) -> str | None:
    """Why a name cannot be used (None when it can)."""
    if not name:
        return "the name is empty"
    if len(name) > limit:
        return f"the name is {len(name)} characters long, more than {limit}"
    # isprintable() is False for every refused category (and a few allowed ones): the
    # character-by-character look is only for the names that need it.
    if not name.isprintable() and any(map(_is_bad, name)):
        return "the name has control characters"
    return None


def _check_name(name: str, where: str) -> None:
    problem = _name_problem(name, MAX_NAME_CHARS)
    if problem:
        raise _Invalid(f"{where}: {_quote(name)}: {problem}")


def _check_value(value: float, where: str, what: str) -> float:
    if not math.isfinite(value) or value < 0:
        raise _Invalid(f"{where}: {what} {value!r} is not a finite number of at least 0")
    return value


def _number(value: Any) -> float | None:
    """A JSON number as a float; None for anything else (booleans included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer too large for a float
        return math.inf


def _lines(text: str) -> Iterable[tuple[int, str]]:
    """(line number, line) with the line ending taken off; '\\n' ends a line."""
    for number, line in enumerate(text.split("\n"), 1):
        yield number, line.removesuffix("\r")


def _load_json(text: str) -> Any:
    """The output as one JSON document, or _Invalid with the line that is wrong."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        lines = text.split("\n")
        line = lines[exc.lineno - 1] if 0 < exc.lineno <= len(lines) else ""
        raise _Invalid(f"line {exc.lineno}: {_quote(line)} is not JSON: {exc.msg} "
                       f"(column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # too deep, or an integer too long
        raise _Invalid(f"the output is not JSON benchbot can read: {exc}") from None


def _items(data: Any, key: str, what: str) -> list[Any]:
    """``data[key]``, which must be a list."""
    items = data.get(key) if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise _Invalid(f"the output has no {key!r} list: it is not {what}'s JSON")
    return items


def _unit(unit: str, value: float) -> tuple[float, str]:
    """A time converted to ns, or the value and unit as they are."""
    factor = _TIME_NS.get(unit)
    return (value * factor, "ns") if factor is not None else (value, unit)


# --- google-benchmark -------------------------------------------------------------------

# Keys of a google-benchmark result that are not counters (every other number is one).
_GOOGLE_KEYS = frozenset({
    "name", "family_index", "per_family_instance_index", "run_name", "run_type",
    "repetitions", "repetition_index", "threads", "iterations", "real_time", "cpu_time",
    "time_unit", "aggregate_name", "aggregate_unit", "error_occurred", "error_message",
    "label", "big_o", "rms", "complexity", "complexity_n", "skipped", "skip_message",
})
_GOOGLE_EXTRAS = {"bytes_per_second": "bytes/s", "items_per_second": "items/s"}


def _google_benchmark(text: str, runs: _Runs) -> None:
    items = _items(_load_json(text), "benchmarks", "google-benchmark")
    medians: dict[str, tuple[float, list[tuple[str, float]], str]] = {}
    repeats: dict[str, list[tuple[float, list[tuple[str, float]], str]]] = {}
    for index, item in enumerate(items):
        where = f"benchmarks[{index}]"
        if not isinstance(item, dict):
            raise _Invalid(f"{where} is not a JSON object")
        name = item.get("run_name", item.get("name"))
        if not isinstance(name, str):
            raise _Invalid(f"{where} has no name")
        _check_name(name, where)
        if item.get("error_occurred") is True:
            runs.fail(name, str(item.get("error_message") or "error_occurred"), where=where)
            continue
        run_type = item.get("run_type", "iteration")
        if run_type == "aggregate" and item.get("aggregate_name") != "median":
            continue
        if run_type not in ("aggregate", "iteration"):
            continue
        if item.get("skipped") is True:  # SkipWithMessage (1.8): not measured, not failed
            continue
        value, extras = _google_figures(item, where)
        if run_type == "aggregate":
            medians.setdefault(name, (value, extras, where))
        else:
            repeats.setdefault(name, []).append((value, extras, where))
    for name in dict.fromkeys([*repeats, *medians]):  # in the order first reported
        chosen = [medians[name]] if name in medians else repeats[name]
        for value, extras, where in chosen:
            runs.add(name, value, unit="ns", better="lower", select=name, extras=extras,
                     where=where)


def google_order(text: str) -> tuple[tuple[str, int], ...]:
    """The runs a google-benchmark JSON report names, in its order: each repetition's
    (``run_type`` iteration; aggregates left out) as (its run's name, its repetition's
    index), failed ones included; () where the text is no such report. A split count
    (benchbot.suites.gbsplit) reads its dumps in this order."""
    try:
        items = _items(_load_json(text), "benchmarks", "google-benchmark")
    except _Invalid:
        return ()
    runs: list[tuple[str, int]] = []
    for item in items:
        if not isinstance(item, dict) or item.get("run_type", "iteration") != "iteration":
            continue
        name, index = item.get("run_name", item.get("name")), item.get("repetition_index", 0)
        if not isinstance(name, str) or isinstance(index, bool) or not isinstance(index, int):
            return ()
        runs.append((name, index))
    return tuple(runs)


def _google_figures(item: dict[str, Any], where: str) -> tuple[float, list[tuple[str, float]]]:
    """A result's real time in ns and its other figures (CPU time, counters)."""
    unit = item.get("time_unit", "ns")
    factor = _TIME_NS.get(unit) if isinstance(unit, str) else None
    if factor is None:
        raise _Invalid(f"{where}: time_unit {unit!r} is not one of ns, us, ms, s")
    real = _number(item.get("real_time"))
    if real is None:
        raise _Invalid(f"{where}: real_time {item.get('real_time')!r} is not a number")
    value = _check_value(real * factor, where, "real_time")
    extras: list[tuple[str, float]] = []
    iterations = _number(item.get("iterations"))
    if iterations is not None and math.isfinite(iterations):
        extras.append((ITERATIONS, iterations))
    cpu = _number(item.get("cpu_time"))
    if cpu is not None and math.isfinite(cpu):
        extras.append(("cpu ns", cpu * factor))
    for key, raw in item.items():
        figure = _number(raw)
        if key in _GOOGLE_KEYS or figure is None or not math.isfinite(figure):
            continue
        if _name_problem(key, MAX_NAME_CHARS) is None:
            extras.append((_GOOGLE_EXTRAS.get(key, key), figure))
    return value, extras


# --- go test -bench ---------------------------------------------------------------------

# A number as Go prints a benchmark's figures (%f, %g, %e forms); a sign for custom ones.
_GO_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?")
_PROCS = re.compile(r"-([0-9]+)\Z")


@dataclass(frozen=True, slots=True)
class _GoLine:
    line: int
    package: str
    name: str
    pairs: tuple[tuple[float, str], ...]
    iterations: int = 0  # b.N of the run the line reports


def _go(text: str, runs: _Runs) -> None:
    results: list[_GoLine] = []
    failed: list[tuple[int, str, str]] = []
    package = ""
    lines = list(_lines(text))
    for index, (number, line) in enumerate(lines):
        if line.startswith("pkg:"):
            package = line[4:].strip()
        elif line.lstrip().startswith("--- FAIL: Benchmark"):
            name = line.lstrip()[len("--- FAIL: "):].split(" (", 1)[0].strip()
            follow = lines[index + 1][1] if index + 1 < len(lines) else ""
            why = follow.strip() if follow[:1].isspace() and follow.strip() else "FAIL"
            failed.append((number, name, why))
        elif line.startswith("Benchmark"):
            parsed = _go_result(number, line, package)
            if parsed is not None:
                results.append(parsed)
    suffix = _common_procs(r.name for r in results)
    def strip(name: str) -> str:
        return name[: -len(suffix)] if suffix and name.endswith(suffix) else name
    packages: dict[str, set[str]] = {}
    for r in results:
        packages.setdefault(strip(r.name), set()).add(r.package)
    prefixes = _go_prefixes(packages)
    for r in results:
        name = strip(r.name)
        shown = prefixes.get((r.package, name), "") + name
        select = name.split("/", 1)[0].split("-", 1)[0]
        (value, unit), *rest = r.pairs
        unit = "ns" if unit == "ns/op" else unit
        better = "higher" if unit.endswith("/s") else "lower"
        _check_value(value, f"line {r.line}", unit)
        runs.add(shown, value, unit=unit, better=better, select=select,
                 extras=[(u, v) for v, u in rest] + [(ITERATIONS, float(r.iterations))],
                 where=f"line {r.line}")
    for number, name, why in failed:
        runs.fail(strip(name), why, where=f"line {number}")


def _go_result(number: int, line: str, package: str) -> _GoLine | None:
    """A result line's figures; None for a line that is not one (an iteration count is
    what makes one, as in Go's benchmark format); _Invalid for one that does not parse."""
    fields = line.split()
    if len(fields) < 2 or not fields[1].isascii() or not fields[1].isdigit():
        return None
    name = fields[0]
    if len(name) > len("Benchmark") and name[len("Benchmark")].islower():
        return None  # "Benchmarking ...": not a benchmark's name
    where = f"line {number}"
    if len(fields) < 4 or len(fields) % 2:
        raise _Invalid(f"{where}: {_quote(line)} is not a benchmark result: a result is a "
                       "name, an iteration count and pairs of value and unit")
    pairs = []
    for raw, unit in zip(fields[2::2], fields[3::2], strict=True):
        if not _GO_NUMBER.fullmatch(raw):
            raise _Invalid(f"{where}: {_quote(line)} is not a benchmark result: "
                           f"{_quote(raw)} is not a number")
        value = float(raw)
        if not math.isfinite(value):
            raise _Invalid(f"{where}: {_quote(line)} has a figure that is not finite")
        if _name_problem(unit, MAX_NAME_CHARS):
            raise _Invalid(f"{where}: {_quote(line)} has a unit that is not one: {_quote(unit)}")
        pairs.append((value, unit))
    _check_name(name, where)
    return _GoLine(number, package, name, tuple(pairs), int(fields[1]))


def _common_procs(names: Iterable[str]) -> str:
    """The "-N" GOMAXPROCS suffix every name ends with, or "" when they differ (-cpu
    1,2 or GOMAXPROCS=1, where go prints none: a name's own "-5" is then kept)."""
    found: set[str] = set()
    for name in names:
        match = _PROCS.search(name)
        found.add(match.group(0) if match else "")
        if len(found) > 1:
            return ""
    return found.pop() if found else ""


def _go_prefixes(packages: Mapping[str, set[str]]) -> dict[tuple[str, str], str]:
    """For names that several packages report: each package's prefix, its last path
    element where those differ, else its whole path."""
    prefixes: dict[tuple[str, str], str] = {}
    for name, pkgs in packages.items():
        if len(pkgs) < 2:
            continue
        last = {p: p.rsplit("/", 1)[-1] for p in pkgs}
        whole = len(set(last.values())) < len(pkgs)
        for p in pkgs:
            prefixes[(p, name)] = (p if whole else last[p]) + "."
    return prefixes


# --- bencher lines (libtest, Criterion) ---------------------------------------------------

_COMMA_NUMBER = r"[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?"
_BENCHER = re.compile(rf"({_COMMA_NUMBER})\s+([^\s/]+)/iter\s+\(\+/-\s*({_COMMA_NUMBER})\)"
                      rf"(?:\s*=\s*({_COMMA_NUMBER})\s*MB/s)?")


def _bencher(text: str, runs: _Runs) -> None:
    for number, raw in _lines(text):
        line = raw.rstrip()
        if not line.startswith("test "):
            continue
        where = f"line {number}"
        at = line.rfind("bench:")
        if at < 0:
            head, sep, outcome = line.rpartition(" ... ")
            if sep and outcome.strip() == "FAILED":
                runs.fail(head[5:].strip(), "FAILED", where=where)
            continue
        name = line[5:at].rstrip()
        name = name.removesuffix("...").rstrip()
        match = _BENCHER.fullmatch(line[at + len("bench:"):].strip())
        if match is None:
            raise _Invalid(f"{where}: {_quote(raw)} is not a bencher line: "
                           "test NAME ... bench: 1,234 ns/iter (+/- 56)")
        factor = _TIME_NS.get(match.group(2), 1.0)
        value, unit = _unit(match.group(2), float(match.group(1).replace(",", "")))
        extras = [("+/-", float(match.group(3).replace(",", "")) * factor)]
        if match.group(4):
            extras.append(("MB/s", float(match.group(4).replace(",", ""))))
        _check_value(value, where, unit)
        runs.add(name, value, unit=unit, better="lower", select=name, extras=extras,
                 where=where)


# --- pytest-benchmark ---------------------------------------------------------------------


def _pytest_benchmark(text: str, runs: _Runs) -> None:
    items = _items(_load_json(text), "benchmarks", "pytest-benchmark")
    found: list[tuple[str, str, float, list[tuple[str, float]], str]] = []
    for index, item in enumerate(items):
        where = f"benchmarks[{index}]"
        if not isinstance(item, dict):
            raise _Invalid(f"{where} is not a JSON object")
        name, fullname, stats = item.get("name"), item.get("fullname", item.get("name")), item.get("stats")
        if not isinstance(name, str) or not isinstance(fullname, str):
            raise _Invalid(f"{where} has no name")
        if not isinstance(stats, dict):
            raise _Invalid(f"{where}: {_quote(name)} has no stats")
        median = _number(stats.get("median"))
        if median is None:
            raise _Invalid(f"{where}: {_quote(name)}: stats.median is not a number")
        value = _check_value(median * 1e9, where, "stats.median")
        extras = [(label, figure * scale) for key, label, scale in
                  (("mean", "mean ns", 1e9), ("stddev", "stddev ns", 1e9),
                   ("iqr", "iqr ns", 1e9), ("ops", "ops/s", 1.0), ("rounds", "rounds", 1.0),
                   ("iterations", ITERATIONS, 1.0))
                  if (figure := _number(stats.get(key))) is not None and math.isfinite(figure)]
        problem = _name_problem(fullname, MAX_SELECT_CHARS)
        if problem:
            raise _Invalid(f"{where}: {_quote(fullname)}: {problem}")
        found.append((name, fullname, value, extras, where))
    shared = _shared_names([f[0] for f in found])
    for name, fullname, value, extras, where in found:
        runs.add(fullname if name in shared else name, value, unit="ns", better="lower",
                 select=fullname, extras=extras, where=where)


def _shared_names(names: Sequence[str]) -> set[str]:
    seen: set[str] = set()
    shared: set[str] = set()
    for name in names:
        (shared if name in seen else seen).add(name)
    return shared


# --- pyperf -------------------------------------------------------------------------------

_PYPERF_UNITS = {"second": "ns", "byte": "byte", "integer": "integer"}


def _pyperf(text: str, runs: _Runs) -> None:
    data = _load_json(text)
    items = _items(data, "benchmarks", "pyperf")
    common = data.get("metadata")
    common = common if isinstance(common, dict) else {}
    for index, item in enumerate(items):
        where = f"benchmarks[{index}]"
        if not isinstance(item, dict):
            raise _Invalid(f"{where} is not a JSON object")
        own = item.get("metadata")
        metadata = {**common, **(own if isinstance(own, dict) else {})}
        name, unit = metadata.get("name"), metadata.get("unit", "second")
        if not isinstance(name, str):
            raise _Invalid(f"{where} has no name (metadata.name)")
        _check_name(name, where)
        if unit not in _PYPERF_UNITS:
            raise _Invalid(f"{where}: {_quote(name)}: unit {unit!r} is not second, byte or integer")
        values = _pyperf_values(item, where)
        if not values:
            runs.fail(name, "pyperf recorded no values (only warm-ups or calibration)",
                      where=where)
            continue
        scale = 1e9 if unit == "second" else 1.0
        extras = [("values", float(len(values)))]
        loops = _number(metadata.get("loops"))
        if loops is not None and math.isfinite(loops):
            extras.append((ITERATIONS, loops))
        runs.add(name, _check_value(statistics.median(values) * scale, where, "the median"),
                 unit=_PYPERF_UNITS[unit], better="lower", select=name,
                 extras=extras, where=where)


def _pyperf_values(item: Mapping[str, Any], where: str) -> list[float]:
    """Every run's values (not its warm-ups)."""
    found: list[float] = []
    items = item.get("runs")
    if not isinstance(items, list):
        raise _Invalid(f"{where} has no runs")
    for index, run in enumerate(items):
        values = run.get("values", []) if isinstance(run, dict) else None
        if not isinstance(values, list):
            raise _Invalid(f"{where}.runs[{index}] has no list of values")
        for value in values:
            number = _number(value)
            if number is None:
                raise _Invalid(f"{where}.runs[{index}]: {value!r} is not a number")
            found.append(_check_value(number, f"{where}.runs[{index}]", "value"))
    return found


# --- jsonl (benchbot's own protocol) ---------------------------------------------------------

_JSONL_KEYS = frozenset({"name", "value", "unit", "better"})


def _jsonl(text: str, runs: _Runs) -> None:
    for number, line in _lines(text):
        if not line.strip():
            continue
        where = f"line {number}"
        head = f"{where}: {_quote(line)} is not"
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            raise _Invalid(f"{head} a JSON object") from None
        if not isinstance(obj, dict):
            raise _Invalid(f"{head} a JSON object")
        unknown = sorted(set(obj) - _JSONL_KEYS)
        if unknown:
            raise _Invalid(f"{head} a result: unknown key {_quote(unknown[0])} "
                           "(name, value, unit and better only)")
        name, unit, better = obj.get("name"), obj.get("unit"), obj.get("better")
        value = _number(obj.get("value"))
        if not isinstance(name, str) or value is None or not isinstance(unit, str) or not unit:
            raise _Invalid(f"{head} a result: it needs a string name, a number value and "
                           "a unit")
        _check_name(name, where)
        if _name_problem(unit, 32):
            raise _Invalid(f"{head} a result: the unit {_quote(unit)} is not one")
        is_time = unit in _TIME_NS
        if better is None and is_time:
            better = "lower"
        if better not in ("lower", "higher"):
            raise _Invalid(f"{head} a result: better must be \"lower\" or \"higher\""
                           + ("" if is_time else f" (unit {_quote(unit)} is not a time)"))
        value, unit = _unit(unit, _check_value(value, where, "value"))
        runs.add(name, value, unit=unit, better=better, select=name, where=where)


_PARSERS: dict[str, Callable[[str, _Runs], None]] = {
    "google-benchmark": _google_benchmark, "go": _go, "bencher": _bencher,
    "pytest-benchmark": _pytest_benchmark, "pyperf": _pyperf, "jsonl": _jsonl,
}


# --- escaping for filter_regex -----------------------------------------------------------


def _escape_ere(char: str) -> str:
    """POSIX extended regex (google-benchmark: std::regex::extended, or regcomp)."""
    if char in _WORD or not char.isascii():
        return char  # non-ASCII: its UTF-8 bytes, each one ordinary
    if char in "^\\":
        return "\\" + char
    return f"[{char}]"


def _escape_hex_braces(char: str) -> str:
    """RE2 (go) and Rust's regex crate: ``\\x{HHHH}``."""
    return char if char in _WORD else f"\\x{{{ord(char):X}}}"


def _escape_python(char: str) -> str:
    """Python's re."""
    if char in _WORD:
        return char
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


_ESCAPERS: dict[str, Callable[[str], str]] = {
    "google-benchmark": _escape_ere, "go": _escape_hex_braces, "bencher": _escape_hex_braces,
    "pytest-benchmark": _escape_python, "pyperf": _escape_python, "jsonl": _escape_python,
}
