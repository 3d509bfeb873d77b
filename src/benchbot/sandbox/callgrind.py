"""valgrind's callgrind out files, read: each function's own instructions and its calls.

This module imports the standard library only: the worker reads a profiled run's out
files inside the sandbox (``spawn``), and sends back what ``read_files`` made of them
(``Profile.to_json``), never the files.

The format (valgrind's "Callgrind Format Specification"), as far as benchbot needs it:

- a header: ``events: Ir …`` names the cost columns, ``positions: line`` (or ``instr
  line``) how many position columns each cost line starts with; ``summary:`` and
  ``totals:`` give the whole run's costs;
- ``ob=`` (the object: the executable or a library), ``fl=`` (the function's source
  file), ``fi=``/``fe=`` (inlined code from another file: the costs stay the function's),
  ``fn=`` (the function the cost lines below belong to);
- a cost line: its positions (a number, ``0x…``, or relative: ``+n``, ``-n``, ``*``), then
  one figure per event (trailing ones left out: 0): the function's own cost;
- ``cob=``, ``cfi=``/``cfl=``, ``cfn=`` name a call's target (its object and file the
  caller's where not given), and ``calls=<count> <target position>`` says it was called
  that many times: the next line is a cost line with the call's *inclusive* cost, not
  the caller's own;
- name compression: ``fn=(12) name`` defines the number 12 for ``name``, and later
  ``fn=(12)`` means it (one numbering for objects, one for files — fl, fi, fe, cfi, cfl —
  and one for functions — fn, cfn).

A function is known by its name and its object (the object's file name only: the same
build in two places reads the same). Its source file is kept to show it. Several files
(one per process of a run) are summed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# An out file larger than this is refused (a profile of a few thousand functions is well
# under a megabyte; the run could have written one without end).
MAX_FILE_BYTES = 64 << 20
# The most functions and call edges a profile keeps (more: refused, it is not a program's).
MAX_FUNCTIONS = 200_000
MAX_EDGES = 1_000_000
EVENT = "Ir"  # the event benchbot reads: instructions executed

_POSITION = re.compile(r"(?:[0-9]+|0x[0-9a-fA-F]+|[+-][0-9]+|[+-]0x[0-9a-fA-F]+|\*)\Z")
_COMPRESSED = re.compile(r"\(([0-9]+)\)(?: (.*))?\Z")
# callgrind's name for a recursion's deeper level (--separate-recs): ``rec'2``; read as
# the function itself.
_RECURSION = re.compile(r"'[0-9]+\Z")

# A function: its name and its object's file name.
Key = tuple[str, str]


class CallgrindError(Exception):
    """An out file that cannot be read as callgrind's; the message says why."""


@dataclass(frozen=True, slots=True)
class Function:
    """One function of a profile: its name, object, source file and own instructions."""

    name: str
    object: str  # the object's file name ("" where callgrind named none)
    file: str  # the source file, as the debug information names it ("???": none)
    self_ir: int


@dataclass(frozen=True, slots=True)
class Call:
    """All the calls from one function to another: how many, and the instructions they
    took, the callee's callees included."""

    caller: Key
    callee: Key
    calls: int
    inclusive_ir: int


@dataclass(frozen=True, slots=True)
class Profile:
    """What callgrind recorded of one run (every process of it): the functions by key,
    the call edges, and the run's total instructions."""

    functions: Mapping[Key, Function]
    calls: Mapping[tuple[Key, Key], Call]
    total_ir: int

    def to_json(self) -> dict[str, Any]:
        """As plain JSON values (from the sandboxed worker): functions as rows, the calls
        by the functions' places in that list."""
        keys = list(self.functions)
        at = {key: i for i, key in enumerate(keys)}
        return {
            "total_ir": self.total_ir,
            "functions": [[f.name, f.object, f.file, f.self_ir] for f in self.functions.values()],
            "calls": [[at[c.caller], at[c.callee], c.calls, c.inclusive_ir]
                      for c in self.calls.values() if c.caller in at and c.callee in at],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Profile:
        """The inverse of ``to_json``; CallgrindError where it is not one."""
        try:
            rows = [(str(n), str(o), str(f), _count(s)) for n, o, f, s in data["functions"]]
            functions = {(n, o): Function(n, o, f, s) for n, o, f, s in rows}
            keys = [(n, o) for n, o, _f, _s in rows]
            calls: dict[tuple[Key, Key], Call] = {}
            for i, j, count, ir in data["calls"]:
                edge = (keys[int(i)], keys[int(j)])
                calls[edge] = Call(edge[0], edge[1], _count(count), _count(ir))
            total = _count(data["total_ir"])
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise CallgrindError(f"not a profile: {exc}") from None
        if len(functions) > MAX_FUNCTIONS or len(calls) > MAX_EDGES:
            raise CallgrindError("a profile with more functions or calls than benchbot keeps")
        return cls(functions=functions, calls=calls, total_ir=total)


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{value!r} is not a count")
    return value


class _Reader:
    """The state of reading one file, line by line (``parse``)."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.positions = 1
        self.names: dict[str, dict[str, str]] = {"ob": {}, "fl": {}, "fn": {}}
        self.ob = ""
        self.fl = "???"
        self.fn: Key | None = None
        self.cob: str | None = None
        self.cfl: str | None = None
        self.cfn: str | None = None
        self.pending_calls: int | None = None  # a calls= line read: its cost line is next
        self.self_ir: dict[Key, int] = {}
        self.files: dict[Key, str] = {}
        self.edges: dict[tuple[Key, Key], list[int]] = {}
        self.summary: int | None = None
        self.totals: int | None = None
        self.column = 0  # the event benchbot reads, among the cost columns

    def name(self, space: str, text: str) -> str:
        """A name, with compression undone (``(12) name`` defines, ``(12)`` refers)."""
        match = _COMPRESSED.match(text)
        if match is None:
            return text
        number, given = match.group(1), match.group(2)
        if given is not None:
            self.names[space][number] = given
            return given
        if number not in self.names[space]:
            raise CallgrindError(f"name ({number}) is used before it is defined")
        return self.names[space][number]

    def cost(self, text: str, line: int) -> int:
        """The event's figure on a cost line (after its positions)."""
        parts = text.split()
        if len(parts) < self.positions or not all(
                _POSITION.match(p) for p in parts[:self.positions]):
            raise CallgrindError(f"line {line}: not a cost line")
        figures = parts[self.positions:]
        if self.column >= len(figures):
            return 0
        figure = figures[self.column]
        if not figure.isdigit():
            raise CallgrindError(f"line {line}: {figure[:20]!r} is not a count")
        return int(figure)


def parse(lines: Iterable[str]) -> Profile:
    """One out file's lines, read (module docstring); CallgrindError where they are not
    callgrind's."""
    r = _Reader()
    for number, raw in enumerate(lines, 1):
        text = raw.rstrip("\n")
        if not text or text.startswith("#"):
            continue
        if r.pending_calls is not None:
            ir = r.cost(text, number)
            if r.fn is None or r.cfn is None:
                raise CallgrindError(f"line {number}: a call outside any function")
            callee = (r.cfn, r.cob if r.cob is not None else r.ob)
            if r.cfl is not None or callee not in r.files:
                r.files.setdefault(callee, r.cfl if r.cfl is not None else r.fl)
            edge = r.edges.setdefault((r.fn, callee), [0, 0])
            edge[0] += r.pending_calls
            edge[1] += ir
            r.pending_calls = None
            r.cob = r.cfl = None
            continue
        first = text[0]
        if first.isdigit() or first in "+-*":
            if r.fn is None:
                raise CallgrindError(f"line {number}: a cost outside any function")
            r.self_ir[r.fn] = r.self_ir.get(r.fn, 0) + r.cost(text, number)
            continue
        key, sep, value = text.partition("=")
        if sep and key in ("ob", "cob"):
            name = _object(r.name("ob", value))
            if key == "ob":
                r.ob = name
            else:
                r.cob = name
        elif sep and key == "fl":
            r.fl = r.name("fl", value)
        elif sep and key in ("fi", "fe"):
            r.name("fl", value)  # inlined code: its costs stay the current function's
        elif sep and key in ("cfi", "cfl"):
            r.cfl = r.name("fl", value)
        elif sep and key == "fn":
            r.fn = (_function(r.name("fn", value)), r.ob)
            r.files.setdefault(r.fn, r.fl)
            r.self_ir.setdefault(r.fn, 0)
        elif sep and key == "cfn":
            r.cfn = _function(r.name("fn", value))
        elif sep and key == "calls":
            count = value.split()
            if not count or not count[0].isdigit():
                raise CallgrindError(f"line {number}: calls= without a count")
            r.pending_calls = int(count[0])
        elif sep and key in ("jump", "jcnd"):
            continue  # --collect-jumps: no cost line follows
        else:
            _header(r, text, number)
        if len(r.self_ir) > MAX_FUNCTIONS or len(r.edges) > MAX_EDGES:
            raise CallgrindError("more functions or calls than benchbot keeps")
    if r.pending_calls is not None:
        raise CallgrindError("the file ends after a calls= line")
    functions = {k: Function(k[0], k[1], r.files.get(k, "???"), r.self_ir.get(k, 0))
                 for k in {*r.self_ir, *(c for e in r.edges for c in e)}}
    calls = {e: Call(e[0], e[1], v[0], v[1]) for e, v in r.edges.items()}
    own = sum(f.self_ir for f in functions.values())
    total = r.totals if r.totals is not None else r.summary if r.summary is not None else own
    if not r.events:
        raise CallgrindError("no events: line (not a callgrind out file)")
    return Profile(functions=functions, calls=calls, total_ir=total)


def _header(r: _Reader, text: str, number: int) -> None:
    """A header line (``events:``, ``positions:``, ``summary:``, ``totals:`` …)."""
    key, sep, value = text.partition(":")
    if not sep:
        raise CallgrindError(f"line {number}: {text[:40]!r} is not callgrind's")
    key = key.strip()
    if key == "events":
        r.events = value.split()
        r.column = r.events.index(EVENT) if EVENT in r.events else 0
    elif key == "positions":
        r.positions = max(1, len(value.split()))
    elif key in ("summary", "totals"):
        figures = value.split()
        if r.column < len(figures) and figures[r.column].isdigit():
            setattr(r, key, int(figures[r.column]))


def _function(name: str) -> str:
    """A function's name, a recursion's level taken off."""
    return _RECURSION.sub("", name)


def _object(path: str) -> str:
    """An object as a function's key holds it: its file name."""
    return os.path.basename(path)


def read_file(path: str | os.PathLike[str]) -> Profile:
    """One out file, read (at most ``MAX_FILE_BYTES``); CallgrindError saying why not."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise CallgrindError(f"cannot be read: {exc.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise CallgrindError(f"the out file is larger than {MAX_FILE_BYTES >> 20} MiB")
    return parse(data.decode("utf-8", errors="replace").splitlines())


def merged(profiles: Sequence[Profile]) -> Profile:
    """Several processes' profiles as one: each function's and each call's figures summed."""
    selfs: dict[Key, int] = {}
    files: dict[Key, str] = {}
    edges: dict[tuple[Key, Key], list[int]] = {}
    for p in profiles:
        for key, f in p.functions.items():
            selfs[key] = selfs.get(key, 0) + f.self_ir
            files.setdefault(key, f.file)
        for edge, c in p.calls.items():
            got = edges.setdefault(edge, [0, 0])
            got[0] += c.calls
            got[1] += c.inclusive_ir
    return Profile(functions={k: Function(k[0], k[1], files[k], v) for k, v in selfs.items()},
                   calls={e: Call(e[0], e[1], v[0], v[1]) for e, v in edges.items()},
                   total_ir=sum(p.total_ir for p in profiles))


def argv(valgrind: str, argv_: Sequence[str], place: str, out: str, log: str) -> list[str]:
    """``argv_`` under callgrind, its out files (one per process) and logs in ``place``,
    named as ``counting``'s audit expects (``out``.<pid>, ``log``.<pid>.<n>)."""
    # Not --quiet (counting.valgrind_argv says why); no line numbers (the functions alone
    # are read: a smaller file), no cache simulation (instructions only).
    return [valgrind, "--tool=callgrind", "--dump-line=no", "--separate-recs=1",
            "--trace-children=yes", f"--callgrind-out-file={place}/{out}.%p",
            f"--log-file={place}/{log}.%p.%n", "--", *argv_]


# --- a split run: one process, its count cut at the named functions -------------------------

# A function callgrind dumps before (``--dump-before``), as benchbot names it: a qualified
# C++ name and its empty parameter list, nothing else. callgrind matches the pattern
# against each function's whole name, ``*`` and ``?`` as wildcards: none may be in it, so
# that no other function of the binary under test (of any name it likes) cuts a part.
DUMP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*\(\)\Z")
# The trigger of the part written at the process's end (its own out file).
END_TRIGGER = "Program termination"
# What a part's header is read for, among its first lines.
_PART_HEADER_LINES = 64


@dataclass(frozen=True, slots=True)
class Part:
    """One dump of a split run: which function it was made before (its place among the
    run's dump names; -1: the process's end), and the instructions and last-level misses
    (None: no cache simulation) since the dump before."""

    trigger: int
    ir: int
    ll_misses: int | None
    # The basic blocks valgrind had run at the dump before and at this one (callgrind's
    # ``Timerange``: its own count, on from the process's start).
    blocks: tuple[int, int] = (0, 0)


_TIMERANGE = re.compile(r"Timerange: Basic block ([0-9]{1,20}) - ([0-9]{1,20})\Z")


def chained(parts: Sequence[Part]) -> str | None:
    """None where a split run's parts (in order, the end's last) follow each other as
    callgrind's dumps do: the first from the start (block 0), each from where the one
    before ended, each over at least one basic block and with at least as many
    instructions as blocks; else what is wrong, in words. A part no dump made, such as a
    file a process of the run wrote in valgrind's directory after callgrind's last dump,
    cannot take a place in that chain: the end's part, written by callgrind after it,
    starts where callgrind's last dump ended."""
    at = 0
    for number, part in enumerate(parts, 1):
        first, last = part.blocks
        if first != at:
            return f"part {number} starts at basic block {first}, not {at}"
        if last <= first or part.ir < last - first:
            return (f"part {number} ran {last - first} basic blocks in {part.ir} "
                    "instructions")
        at = last
    return None


def split_argv(valgrind: str, argv_: Sequence[str], place: str, out: str, log: str,
               dumps: Sequence[str], cache: Sequence[str]) -> list[str]:
    """``argv_`` under callgrind, its count dumped before each call of the functions
    ``dumps`` names (exact names: ``DUMP_NAME``), with the simulated cache's options
    ``cache``; the parts in ``place`` as ``out``.<pid>.<part>, the end's ``out``.<pid>.
    ValueError on a name with anything but a plain qualified name."""
    for name in dumps:
        if not DUMP_NAME.match(name):
            raise ValueError(f"{name!r} is not a plain function name to dump before")
    # Not --quiet (counting.valgrind_argv says why); no per-line or per-instruction costs:
    # each part's summary is all that is read.
    return [valgrind, "--tool=callgrind", "--dump-line=no", "--dump-instr=no",
            "--cache-sim=yes", *cache, *(f"--dump-before={name}" for name in dumps),
            "--trace-children=yes", f"--callgrind-out-file={place}/{out}.%p",
            f"--log-file={place}/{log}.%p.%n", "--", *argv_]


def read_part(path: str | os.PathLike[str], *, number: int | None, pid: int,
              dumps: Sequence[str]) -> Part:
    """One part of a split run (``number``; None: the process's own out file, its end's
    part), from its header: its ``pid:``, ``part:``, trigger and ``summary:`` must be what
    callgrind writes for that part; CallgrindError saying why not."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16).decode("utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise CallgrindError(f"cannot be read: {exc.strerror}") from None
    header: dict[str, str] = {}
    trigger_text = None
    blocks = None
    for text in head[:_PART_HEADER_LINES]:
        key, sep, value = text.partition(":")
        if not sep:
            continue
        if key == "desc" and value.strip().startswith("Trigger:"):
            trigger_text = value.strip()[len("Trigger:"):].strip()
        elif key == "desc" and (match := _TIMERANGE.match(value.strip())):
            blocks = (int(match.group(1)), int(match.group(2)))
        elif key in ("pid", "part", "events", "summary"):
            header.setdefault(key, value.strip())
        if key == "summary":
            break
    if blocks is None:
        raise CallgrindError(f"part {header.get('part')!r} has no time range")
    if header.get("pid") != str(pid):
        raise CallgrindError(f"a part of process {header.get('pid')!r}, not {pid}")
    part = header.get("part", "")
    if number is not None and part != str(number):
        raise CallgrindError(f"part {part!r} in the file of part {number}")
    asked = [f"--dump-before={name}" for name in dumps]
    if number is None:
        if trigger_text != END_TRIGGER:
            raise CallgrindError(f"the last part's trigger is {trigger_text!r}, not the end")
        trigger = -1
    elif trigger_text in asked:
        trigger = asked.index(trigger_text)
    else:
        raise CallgrindError(f"part {number}'s trigger {trigger_text!r} is not one asked for")
    events = header.get("events", "").split()
    figures = header.get("summary", "").split()
    if not events or not figures or not all(f.isdigit() for f in figures):
        raise CallgrindError(f"part {part}: no summary of whole numbers")
    values = dict(zip(events, (int(f) for f in figures), strict=False))
    ll = sum(values.get(e, 0) for e in _LL_EVENTS) if all(e in events for e in _LL_EVENTS) \
        else None
    return Part(trigger=trigger, ir=values.get(EVENT, 0), ll_misses=ll, blocks=blocks)


# The events whose sum is a part's last-level misses (counting.LL_EVENTS: this module
# imports nothing of benchbot's, so that the worker reads it alone).
_LL_EVENTS = ("DLmr", "DLmw", "ILmr")
