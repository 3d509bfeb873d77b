"""Instruction counts of runs: ``perf_event_open`` around each run, or valgrind's cachegrind.

This module imports the standard library only: it runs inside the sandbox, in the worker
(``benchbot.sandbox.worker``), with nothing but the interpreter.

**perf** (docs/verdict.md, "A second signal"): the process that forks the runs (the fork
server, ``benchbot.sandbox.forkserver``, else the worker) opens, once, a counter on itself (pid 0,
any CPU) for user-space instructions retired (and cycles, where the CPU counts them) with
``disabled``, ``inherit`` and ``enable_on_exec``: a run it spawns inherits the counter, it
is enabled at the run's ``exec``, and the counts of the run and of its children fold into
that counter as they exit. The worker holds the counter's descriptor (the fork server
hands it over) and reads it before and after each run, outside the timed region: the
difference is the run's. The process it counts on never execs, so its own work is never
counted. When the kernel multiplexed the counter (time running below time enabled), the
count is scaled, and marked so.

Where there are no hardware counters (a VM without a virtual PMU answers ENOENT) a
software event can stand in (``PerfCounter(events=SOFTWARE_TEST)``): the page faults of
the run, which prove the same plumbing (inherit, enable at exec, fold at exit) on any
machine. Tests use it; a comparison never does.

**valgrind**: a run wrapped in ``valgrind --tool=cachegrind --cache-sim=yes
--trace-children=yes``, whose out files (one per process, in a directory of the run's own
that the worker watches: ``ValgrindPlace``) are summed and removed (``valgrind_argv``,
``read_valgrind``), only where the worker's record of that directory is what valgrind
alone makes (``audit_valgrind``; docs/security.md, "Counts"). About 7x slower, and exact
for a deterministic program. The cache simulation counts the last-level misses beside the
instructions (DLmr + DLmw + ILmr) in a cache of fixed geometry (``SIMULATED_CACHE``), so
that they do not depend on the machine the run lands on (docs/verdict.md, "Memory beside
the instructions").

**perf** counts the last-level misses too where the CPU has the generic cache-misses event
(``PERF_COUNT_HW_CACHE_MISSES``: the last-level cache's misses on x86), opened like cycles:
where it cannot be, the runs have instructions without misses.

Why one module of about 650 lines: the worker runs it with the standard library only, and
both ways of counting (perf's counters, valgrind in its watched place) sit beside the
choice between them (``choose``), which weighs one against the other.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import re
import shutil
import stat
import struct
import tempfile
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path

# The counted runs of valgrind: only for a workload whose warm-up run took at most this
# long (valgrind makes a run about 7x slower; four counted runs of a 1 s workload is ~30 s).
VALGRIND_MAX_RUN_S = 1.0
VALGRIND = "valgrind"
VALGRIND_OUT = "cg.benchbot"  # the out files' name prefix, in the worker's scratch
VALGRIND_LOG = "vg.benchbot"  # valgrind's own messages (kept out of the run's stderr)
# The cache cachegrind simulates (--I1/--D1/--LL: size in bytes, associativity, line size):
# fixed, not the host's, so that two runners count the same misses for the same program
# (this VM reports a 300 MiB L3 to valgrind, in which nearly everything fits). A common
# desktop or server core's first level and an 8 MiB last level, a share of a shared L3.
SIMULATED_CACHE = {"I1": (32768, 8, 64), "D1": (32768, 8, 64), "LL": (8 << 20, 16, 64)}
CACHE_WORDS = "cachegrind's simulated 8 MiB last-level cache"
# cachegrind's events (its out files' ``events:`` line) whose sum is a run's last-level
# misses: data reads, data writes and instruction fetches that missed the last level.
LL_EVENTS = ("DLmr", "DLmw", "ILmr")
# A counted run's timeout: valgrind's slowdown is large and varies by program.
VALGRIND_TIMEOUT_FACTOR = 40
VALGRIND_MIN_TIMEOUT_S = 60.0

# perf_event_open: the syscall's number per machine, the constants of <linux/perf_event.h>.
_SYSCALL = {"x86_64": 298, "amd64": 298, "aarch64": 241, "arm64": 241}
PERF_TYPE_HARDWARE = 0
PERF_TYPE_SOFTWARE = 1
PERF_COUNT_HW_CPU_CYCLES = 0
PERF_COUNT_HW_INSTRUCTIONS = 1
PERF_COUNT_HW_CACHE_MISSES = 3
PERF_COUNT_SW_TASK_CLOCK = 1
PERF_COUNT_SW_PAGE_FAULTS = 2
PERF_FORMAT_TOTAL_TIME_ENABLED = 1
PERF_FORMAT_TOTAL_TIME_RUNNING = 2
_ATTR_SIZE = 64  # PERF_ATTR_SIZE_VER0: every field this module sets
_DISABLED, _INHERIT, _EXCLUDE_KERNEL, _EXCLUDE_HV, _ENABLE_ON_EXEC = 1, 2, 1 << 5, 1 << 6, 1 << 12
PERF_EVENT_IOC_ENABLE = 0x2400

# (type, config) of the instructions event, and of the cycles event where there is one.
Events = tuple[tuple[int, int], tuple[int, int] | None]
HARDWARE: Events = ((PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
                    (PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES))
# Stands in for HARDWARE on a machine without counters, in tests only: page faults.
SOFTWARE_TEST: Events = ((PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS), None)
EVENT_NAMES: dict[str, Events] = {"hardware": HARDWARE, "software-test": SOFTWARE_TEST}
# The last-level misses counted beside a set of events, where the CPU has the event.
MISSES: dict[Events, tuple[int, int]] = {HARDWARE: (PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES)}
PERF_MISSES_WORDS = "perf: the CPU's last-level cache-misses counter"


class CountingError(Exception):
    """Counting cannot work here; the message says why, in words."""


@dataclass(frozen=True, slots=True)
class Reading:
    """A counter's value, and the times it was enabled and running (ns)."""

    value: int
    enabled: int
    running: int


@dataclass(frozen=True, slots=True)
class Count:
    """One run's counts: instructions, cycles and last-level cache misses (None where not
    counted), whether scaled."""

    instructions: int
    cycles: int | None = None
    scaled: bool = False
    ll_misses: int | None = None


def _syscall_number() -> int:
    number = _SYSCALL.get(platform.machine().lower())
    if number is None:
        raise CountingError(f"perf_event_open: not known on {platform.machine()} "
                            "(benchbot knows x86_64 and aarch64)")
    return number


def why_not(err: int) -> str:
    """Why ``perf_event_open`` answered ``err``, in words."""
    name = errno.errorcode.get(err, str(err))
    if err == errno.ENOENT:
        return f"this machine has no hardware counters (perf_event_open: {name})"
    if err in (errno.EACCES, errno.EPERM):
        paranoid = _read("/proc/sys/kernel/perf_event_paranoid")
        if paranoid is not None and paranoid.lstrip("-").isdigit() and int(paranoid) > 2:
            return (f"perf_event_paranoid is {paranoid}, which forbids counting "
                    f"(perf_event_open: {name}; sudo sysctl -w kernel.perf_event_paranoid=2)")
        if paranoid is not None and paranoid.lstrip("-").isdigit():
            return (f"perf_event_open is refused (perf_event_open: {name}) although "
                    f"perf_event_paranoid is {paranoid}, which allows counting one's own user "
                    "space: a seccomp profile refuses it (a container's default one does)")
        return (f"perf_event_open is not permitted here (perf_event_open: {name}: a seccomp "
                "profile, or perf_event_paranoid)")
    if err == errno.ENOSYS:
        return f"the kernel has no perf events (perf_event_open: {name})"
    if err == errno.EOPNOTSUPP:
        return f"the counters cannot count user space alone here (perf_event_open: {name})"
    return f"perf_event_open: {name} ({os.strerror(err)})"


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


# Opens a counter from its perf_event_attr: on this process (``open_here``), or on the
# fork server that starts the runs (``forkserver.ForkServer.open_counter``); OSError with
# the kernel's errno where it cannot.
Opener = Callable[[bytes], int]


def open_here(attr: bytes) -> int:
    """A counter on this process (pid 0, any CPU), as a non-inheritable descriptor."""
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(attr, len(attr))
    fd = int(libc.syscall(ctypes.c_long(_syscall_number()), buf, ctypes.c_int(0),
                          ctypes.c_int(-1), ctypes.c_int(-1), ctypes.c_ulong(0)))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    os.set_inheritable(fd, False)
    return fd


def _attr(kind: int, config: int, *, inherit: bool) -> bytes:
    """A disabled counter's perf_event_attr: inherited and enabled at the next exec (with
    ``inherit`` False: a counter that is never enabled, never inherited)."""
    attr = bytearray(_ATTR_SIZE)
    flags = _DISABLED | _EXCLUDE_KERNEL | _EXCLUDE_HV
    if inherit:
        flags |= _INHERIT | _ENABLE_ON_EXEC
    struct.pack_into("=IIQQQQQ", attr, 0, kind, _ATTR_SIZE, config, 0, 0,
                     PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING, flags)
    return bytes(attr)


def _open(kind: int, config: int, *, inherit: bool = True, opener: Opener = open_here) -> int:
    """A counter (``_attr``) opened by ``opener``: CountingError saying why it cannot be."""
    try:
        return opener(_attr(kind, config, inherit=inherit))
    except OSError as exc:
        if exc.errno is None:
            raise
        raise CountingError(why_not(exc.errno)) from None


def _reading(fd: int) -> Reading:
    data = os.read(fd, 24)
    if len(data) != 24:
        raise CountingError(f"perf counter read {len(data)} bytes, not 24")
    value, enabled, running = struct.unpack("=QQQ", data)
    return Reading(value, enabled, running)


class PerfCounter:
    """The worker's counters (module docstring): open once, read around each run."""

    def __init__(self, events: Events = HARDWARE, *, opener: Opener = open_here) -> None:
        instructions, cycles = events
        self._fds: list[int] = [_open(*instructions, opener=opener)]
        self._kinds: list[str] = ["instructions"]
        # A counter that is not inherited keeps the kernel from taking a run's copy of the
        # context for the worker's own: where every counter of a context is inherited, the
        # child's context is a clone, and at a switch between the two (posix_spawn's vfork)
        # the kernel swaps them, so that the worker's counter moves to the run, ends with
        # it, and reads the same from then on (seen on Linux 6.18: counts after the second
        # run were 0).
        self._blocker = _open(*instructions, inherit=False, opener=opener)
        for kind, event in (("cycles", cycles), ("ll_misses", MISSES.get(events))):
            if event is None:
                continue
            try:
                self._fds.append(_open(*event, opener=opener))
                self._kinds.append(kind)
            except CountingError:  # some virtual PMUs count instructions only
                pass

    @property
    def kinds(self) -> tuple[str, ...]:
        """What ``read`` returns, in order: instructions, then cycles and ll_misses where
        counted."""
        return tuple(self._kinds)

    def read(self) -> tuple[Reading, ...]:
        """The counters now, in the order of ``kinds``."""
        return tuple(_reading(fd) for fd in self._fds)

    @staticmethod
    def between(before: Sequence[Reading], after: Sequence[Reading],
                kinds: Sequence[str] = ("instructions", "cycles")) -> Count:
        """The counts of what ran between two readings (of the counters ``kinds`` names, in
        order), scaled where multiplexed."""
        values: dict[str, int] = {}
        scaled = False
        for kind, b, a in zip(kinds, before, after, strict=False):
            value, enabled, running = a.value - b.value, a.enabled - b.enabled, a.running - b.running
            if running < enabled and running > 0:
                value = round(value * enabled / running)
                scaled = True
            values[kind] = value
        return Count(instructions=values["instructions"], cycles=values.get("cycles"),
                     ll_misses=values.get("ll_misses"), scaled=scaled)

    def close(self) -> None:
        """Close the counters."""
        for fd in (*self._fds, self._blocker):
            os.close(fd)
        self._fds = []


def perf_probe(events: Events = HARDWARE) -> str | None:
    """None where a user-space instructions counter opens in this process, else why not."""
    try:
        PerfCounter(events).close()
    except CountingError as exc:
        return str(exc)
    except OSError as exc:  # pragma: no cover - no libc to load
        return f"perf_event_open cannot be called: {exc}"
    return None


# --- valgrind ---------------------------------------------------------------------------------


# inotify(7): the events of a watched directory, and the calls that make and read a watch.
IN_ACCESS, IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE, IN_CLOSE_NOWRITE, IN_OPEN = 1, 2, 4, 8, 16, 32
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE, IN_DELETE_SELF, IN_MOVE_SELF = (
    0x40, 0x80, 0x100, 0x200, 0x400, 0x800)
IN_UNMOUNT, IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR = 0x2000, 0x4000, 0x8000, 0x40000000
_IN_ALL_EVENTS, _IN_ONLYDIR, _IN_DONT_FOLLOW = 0xFFF, 0x01000000, 0x02000000
_IN_EVENT = struct.Struct("=iIII")  # wd, mask, cookie, len; then the name, NUL-padded
_IN_NAMES = {IN_ACCESS: "read", IN_MODIFY: "written", IN_ATTRIB: "changed (attributes)",
             IN_CLOSE_WRITE: "closed after writing", IN_CLOSE_NOWRITE: "closed",
             IN_OPEN: "opened", IN_MOVED_FROM: "renamed away", IN_MOVED_TO: "renamed in",
             IN_CREATE: "created", IN_DELETE: "deleted", IN_DELETE_SELF: "deleted",
             IN_MOVE_SELF: "moved", IN_UNMOUNT: "unmounted", IN_Q_OVERFLOW: "too many events",
             IN_IGNORED: "no longer watched"}
# A directory watched and events read, per counted run: far below inotify's own limits
# (max_queued_events 16,384); more than this, and the count is refused.
VALGRIND_MAX_EVENTS = 16_000
_OUT_NAME = re.compile(rf"({re.escape(VALGRIND_OUT)}|{re.escape(VALGRIND_LOG)})\.([0-9]{{1,10}})"
                       r"(\.[0-9]{1,10})?\Z")

# An event of the watched directory: its mask, and the name it is about ("" for the
# directory itself).
Event = tuple[int, str]


# Where each worker makes its counted runs' directories: under its scratch, and (in the
# sandbox) a mount of its own (``sandbox.WorkerSpawner``), so that no file from anywhere
# else can be linked into one (link(2) does not cross mounts).
VALGRIND_ROOT = "counted"


class ValgrindPlace:
    """A counted run's own directory for valgrind's files (docs/security.md, "Counts"):
    made fresh for each counted run under ``scratch``/``VALGRIND_ROOT``, and watched by
    the worker (inotify) with the directory that holds it, from before the run starts
    until its files are read, so that whatever any process did there (made, opened,
    wrote, renamed, deleted) is on record in the worker, where no process of the run can
    reach or take it back. ``audit_valgrind`` says whether the record is exactly what
    valgrind alone makes; only then are the out files read."""

    def __init__(self, scratch: Path) -> None:
        root = scratch / VALGRIND_ROOT
        root.mkdir(mode=0o700, exist_ok=True)
        for left in root.iterdir():  # a killed worker's, or planted by an earlier run
            if left.is_dir() and not left.is_symlink():
                shutil.rmtree(left, ignore_errors=True)
            else:
                left.unlink()
        self.path = Path(tempfile.mkdtemp(prefix="run-", dir=root))
        self._events: list[Event] = []
        try:
            self._fd = _inotify()
            libc = ctypes.CDLL(None, use_errno=True)
            mask = _IN_ALL_EVENTS | _IN_ONLYDIR | _IN_DONT_FOLLOW
            self._root_wd = _checked(libc, libc.inotify_add_watch(
                self._fd, os.fsencode(root), mask), "inotify_add_watch")
            self._wd = _checked(libc, libc.inotify_add_watch(
                self._fd, os.fsencode(self.path), mask), "inotify_add_watch")
            if [p.name for p in root.iterdir()] != [self.path.name]:
                raise CountingError("the directory of valgrind's directories is not empty")
            # This process's own doings so far, and an earlier place's removal: no process
            # of the run exists yet.
            self.events()
            self._events.clear()
        except BaseException:
            self.close()
            raise

    def events(self) -> list[Event]:
        """Every event so far, in order (an event next to the run's directory, in the
        directory that holds it, reads as one about a name outside valgrind's)."""
        while len(self._events) <= VALGRIND_MAX_EVENTS:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                break
            at = 0
            while at + _IN_EVENT.size <= len(data):
                wd, mask, _, length = _IN_EVENT.unpack_from(data, at)
                name = os.fsdecode(data[at + _IN_EVENT.size: at + _IN_EVENT.size + length]
                                   .rstrip(b"\0"))
                at += _IN_EVENT.size + length
                if wd == self._root_wd:
                    name = f"../{name}" if name else ".."
                elif wd != self._wd and not mask & IN_Q_OVERFLOW:
                    continue  # an earlier place's watch, ended
                self._events.append((mask, name))
        return list(self._events)

    def close(self) -> None:
        """Remove the directory with what is in it (which ends its watch)."""
        shutil.rmtree(self.path, ignore_errors=True)


# One inotify instance for the process, opened at its first counted run and kept: closing
# one waits for the kernel's grace period (about 20 ms a counted run here), removing a
# watch does not.
_INOTIFY: list[int] = []


def _inotify() -> int:
    if not _INOTIFY:
        libc = ctypes.CDLL(None, use_errno=True)
        _INOTIFY.append(_checked(libc, libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC),
                                 "inotify_init1"))
    return _INOTIFY[0]


def _checked(libc: ctypes.CDLL, result: int, call: str) -> int:
    if int(result) < 0:
        raise CountingError(f"{call}: {os.strerror(ctypes.get_errno())}")
    return int(result)


# How each valgrind tool makes an out file, in the record of its directory (its writes
# aside): cachegrind creates it when the process exits, writes and closes it; callgrind
# creates it (and closes it, unwritten) as the process starts, to see that it can, and
# opens it again to write it when the process exits.
_OUT_MADE = {
    "cachegrind": [IN_CREATE, IN_OPEN, IN_CLOSE_WRITE],
    "callgrind": [IN_CREATE, IN_OPEN, IN_CLOSE_WRITE, IN_OPEN, IN_CLOSE_WRITE],
}


def audit_valgrind(events: Sequence[Event], place: Path, *, whole: bool = False,
                   tool: str = "cachegrind") -> tuple[frozenset[int], str | None]:
    """The processes valgrind counted in a run, from the record of its directory
    (``ValgrindPlace``), and what is wrong with the record (None: nothing).

    valgrind makes a log ``vg.benchbot.<pid>.<n>`` (``n`` the first number not taken)
    when it starts a process, in a forked child before the child's own code runs again,
    and again in a process that execs (the new program's valgrind); it writes
    ``cg.benchbot.<pid>`` once, when that process exits. So each process it counted shows
    as one log and one out file created, opened, written and closed once. Anything else
    is refused: a log opened twice (an exec: valgrind counts the new program from zero,
    and what ran before it is lost), a log without an out file (a process that never
    reached its end: killed, or exec'd into a program valgrind does not follow), an out
    file opened again (read or rewritten by some other process), a name valgrind does not
    make, a rename, a delete, a change of attributes, anything next to the directory, the
    directory itself moved or deleted, too many events. (The kernel merges an event with
    the one before it when both are the same and unread: two opens of one file one right
    after the other read as one. Each valgrind writes its preamble as it starts, so that
    an exec's opening of the log never directly follows the one before.) Accepted: a
    forked child's exec (a second log, numbered on), the way every program starts another;
    ``whole``: not even that, for a count that settles a verdict by itself. ``tool``:
    callgrind (a profiled run, benchbot.profiles.profile) makes its out file as the process starts
    and writes it as it ends: created, opened and closed with nothing written, then
    opened, written and closed once more (``_OUT_MADE``)."""
    logs: dict[int, set[str]] = {}
    outs: dict[int, list[int]] = {}
    if len(events) > VALGRIND_MAX_EVENTS:
        return frozenset(), "valgrind's directory saw too many events to check"
    for mask, name in events:
        if mask & (IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED):
            return frozenset(), f"valgrind's directory was {_said(mask)} during the run"
        match = _OUT_NAME.match(name)
        if name.startswith(".."):
            return frozenset(), ("a process of the run reached next to valgrind's directory "
                                 f"({name[3:] or 'the directory holding it'} "
                                 f"{_said(mask)})")
        if match is None or mask & IN_ISDIR:
            return frozenset(), f"a process of the run made {name!r} in valgrind's directory"
        if mask & (IN_ATTRIB | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO):
            return frozenset(), f"{name} was {_said(mask)} during the run"
        pid, log = int(match.group(2)), match.group(1) == VALGRIND_LOG
        if log != bool(match.group(3)):
            return frozenset(), f"a process of the run made {name!r} in valgrind's directory"
        if log:
            logs.setdefault(pid, set()).add(name)
        else:
            outs.setdefault(pid, []).append(mask)
    for pid, names in sorted(logs.items()):
        # A forked child's exec shows as a second log (valgrind numbers the logs of one
        # image): what ran between its fork and its exec is not counted (docs/security.md,
        # "Counts"). A process's exec with no fork before it opens the same log again:
        # refused, whatever ran before it.
        if any(sum(1 for m, n in events if n == name and m & IN_OPEN) > 1 for name in names):
            return frozenset(), (f"process {pid} exec'd: valgrind does not count what a "
                                 "process ran before an exec")
        if whole and len(names) > 1:  # a count that settles a verdict alone: all or none
            return frozenset(), (f"process {pid} exec'd after a fork: valgrind does not count "
                                 "what it ran before the exec, and this count must be the "
                                 "whole run's (metric: instructions, a suite's counted run)")
        if pid not in outs:
            return frozenset(), (f"process {pid} never reached its end under valgrind (killed, "
                                 "or exec'd into a program valgrind does not follow)")
    for pid, masks in sorted(outs.items()):
        if pid not in logs:
            return frozenset(), f"{VALGRIND_OUT}.{pid} was made for no process valgrind started"
        kinds = [m & (IN_CREATE | IN_OPEN | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE | IN_ACCESS)
                 for m in masks if m & ~IN_MODIFY]
        made = _OUT_MADE[tool]
        # Nothing written before the last opening: valgrind writes its file once, at the end.
        early = masks[:max((i for i, m in enumerate(masks) if m & IN_OPEN), default=0)]
        if kinds != made or any(m & IN_MODIFY for m in early):
            return frozenset(), (f"{VALGRIND_OUT}.{pid} was not made, written and closed once "
                                 "by valgrind alone: "
                                 + ", ".join(_said(m) for m in masks if m & ~IN_MODIFY))
        if masks[-1] != IN_CLOSE_WRITE:
            return frozenset(), f"{VALGRIND_OUT}.{pid} was written after valgrind closed it"
    for pid in outs:
        if (why := _not_own_file(place, f"{VALGRIND_OUT}.{pid}")) is not None:
            return frozenset(), why
    if not logs:
        return frozenset(), "valgrind started no process"
    return frozenset(outs), None


# A suite's split run (callgrind with --dump-before, docs/suites.md, "One process per
# build"): callgrind writes each dump to an out file of its own, ``cg.benchbot.<pid>.<part>``,
# numbered from 1 as it dumps, and the last part (the program's end) to the process's own
# out file, as for any callgrind run. The most parts one run may make: each part is about
# four events of the record (made, opened, written, closed), which VALGRIND_MAX_EVENTS
# bounds (a split run of 500 benchmarks at three repetitions makes 3,000).
VALGRIND_MAX_PARTS = 3_900


def audit_parts(events: Sequence[Event], place: Path) -> tuple[int | None, int, str | None]:
    """The process and the number of dump parts of a split run (callgrind with
    ``--dump-before``), from the record of its directory, and what is wrong with it (None:
    nothing). Exactly one process, the whole run's (no exec), its own out file made as
    callgrind makes it (``audit_valgrind``, tool "callgrind") and written last; and one
    out file per dump, ``cg.benchbot.<pid>.1`` … ``.<K>`` without a gap, each created,
    opened, written and closed once, in that order, the next made only after the one
    before was closed, none touched again, each a file of its own. So a dump a process of
    the run made itself (a file it wrote in the directory), a part rewritten, read or
    removed, a number skipped or used twice, leaves the run with no parts at all: the
    counts of a split come from valgrind's dumps alone (docs/security.md, "Counts")."""
    parts: dict[int, list[tuple[int, int]]] = {}  # part: [(place in the record, mask)]
    rest: list[Event] = []
    pid_of_parts: set[int] = set()
    for at, (mask, name) in enumerate(events):
        match = _OUT_NAME.match(name)
        if match is not None and match.group(1) == VALGRIND_OUT and match.group(3):
            pid_of_parts.add(int(match.group(2)))
            parts.setdefault(int(match.group(3)[1:]), []).append((at, mask))
        else:
            rest.append((mask, name))
    pids, problem = audit_valgrind(rest, place, whole=True, tool="callgrind")
    if problem is not None:
        return None, 0, problem
    if len(pids) != 1:
        return None, 0, (f"the run counted {len(pids)} processes, not the one the split "
                         "is made of")
    (pid,) = pids
    if pid_of_parts - {pid}:
        return None, 0, (f"{VALGRIND_OUT}.{min(pid_of_parts - {pid})}.* was made for no "
                         "process valgrind started")
    if len(parts) > VALGRIND_MAX_PARTS:
        return None, 0, f"more than {VALGRIND_MAX_PARTS} dumps"
    if sorted(parts) != list(range(1, len(parts) + 1)):
        gap = next(n for n in range(1, len(parts) + 2) if n not in parts)
        return None, 0, f"the dumps are not numbered from 1 without a gap (no part {gap})"
    made = [IN_CREATE, IN_OPEN, IN_CLOSE_WRITE]
    last_at = -1
    for number in range(1, len(parts) + 1):
        record = parts[number]
        name = f"{VALGRIND_OUT}.{pid}.{number}"
        kinds = [m & (IN_CREATE | IN_OPEN | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE | IN_ACCESS)
                 for _, m in record if m & ~IN_MODIFY]
        opened = next((i for i, (_, m) in enumerate(record) if m & IN_OPEN), 0)
        if kinds != made or any(m & IN_MODIFY for _, m in record[:opened]) \
                or record[-1][1] != IN_CLOSE_WRITE or record[0][0] < last_at:
            return None, 0, (f"{name} was not made, written and closed once by valgrind "
                             "alone, after the part before it: "
                             + ", ".join(_said(m) for _, m in record if m & ~IN_MODIFY))
        last_at = record[-1][0]
    if parts:
        final = [at for at, (mask, name) in enumerate(events)
                 if name == f"{VALGRIND_OUT}.{pid}" and mask & IN_OPEN]
        if not final or final[-1] < last_at:
            return None, 0, f"{VALGRIND_OUT}.{pid} was written before its last part"
    for number in parts:
        if (why := _not_own_file(place, f"{VALGRIND_OUT}.{pid}.{number}")) is not None:
            return None, 0, why
    return pid, len(parts), None


def _not_own_file(place: Path, name: str) -> str | None:
    """Why ``name`` in valgrind's directory is not a plain file of its own (None: it is):
    unreadable, a link, or a name for a file elsewhere."""
    try:
        info = os.lstat(place / name)
    except OSError as exc:
        return f"{name} cannot be read: {exc.strerror}"
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        return f"{name} is not a file of its own (a link, or a name for a file elsewhere)"
    return None


def _said(mask: int) -> str:
    return " and ".join(w for bit, w in _IN_NAMES.items() if mask & bit) or f"event {mask:#x}"


def valgrind_argv(valgrind: str, argv: Sequence[str], scratch: Path) -> list[str]:
    """``argv`` counted by cachegrind, with its cache simulation (``SIMULATED_CACHE``), its
    out files (one per process) in ``scratch``."""
    # Not --quiet: each valgrind writes its preamble to its log as it starts, so that a
    # start after an exec always shows as its own opening (audit_valgrind).
    return [valgrind, "--tool=cachegrind", "--cache-sim=yes", *cache_options(),
            "--trace-children=yes",
            f"--cachegrind-out-file={scratch}/{VALGRIND_OUT}.%p",
            f"--log-file={scratch}/{VALGRIND_LOG}.%p.%n", "--", *argv]


def cache_options() -> list[str]:
    """valgrind's options for the simulated cache (``SIMULATED_CACHE``)."""
    return [f"--{level}={size},{assoc},{line}"
            for level, (size, assoc, line) in SIMULATED_CACHE.items()]


def read_valgrind(scratch: Path, pids: AbstractSet[int] | None = None) -> Count | None:
    """The instructions and last-level misses of every out file a counted run left in
    ``scratch`` (summed), the files removed; None when there was none, one had no
    ``summary:`` line, or (``pids``: the processes ``audit_valgrind`` found) the out files
    are not exactly those. The misses are None where a file had no cache simulation."""
    total = 0
    misses: int | None = 0
    found = False
    ok = pids is None or {_pid_of(path) for path in scratch.glob(f"{VALGRIND_OUT}.*")} == pids
    _remove(scratch, VALGRIND_LOG)
    for path in sorted(scratch.glob(f"{VALGRIND_OUT}.*")):
        lines: list[str] = []
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                lines = [text for text in fh if text.startswith(("events:", "summary:"))]
            path.unlink()
        except OSError:
            ok = False
            continue
        counted = cachegrind_totals(lines)
        if counted is None:
            ok = False
            continue
        total += counted[0]
        misses = None if misses is None or counted[1] is None else misses + counted[1]
        found = True
    return Count(instructions=total, ll_misses=misses) if found and ok else None


def cachegrind_totals(lines: Sequence[str]) -> tuple[int, int | None] | None:
    """(instructions, last-level misses) of one cachegrind out file's ``events:`` and
    ``summary:`` lines (the last of each): Ir, and DLmr + DLmw + ILmr (None where the file
    has no cache simulation's events); None without a summary of whole numbers."""
    events: list[str] = []
    summary: list[str] | None = None
    for text in lines:
        if text.startswith("events:"):
            events = text.split()[1:]
        elif text.startswith("summary:"):
            summary = text.split()[1:]
    if not summary or not all(v.isdigit() for v in summary):
        return None
    values = dict(zip(events, (int(v) for v in summary), strict=False))
    instructions = values.get("Ir", int(summary[0]))
    if not all(e in values for e in LL_EVENTS):
        return instructions, None
    return instructions, sum(values[e] for e in LL_EVENTS)


def _pid_of(path: Path) -> int | None:
    match = _OUT_NAME.match(path.name)
    return int(match.group(2)) if match else None


# How valgrind begins each line of its log: its messages, and its own remarks.
_VALGRIND_PREFIX = re.compile(r"\A(==|--)[0-9]+(==|--) ?")
# What valgrind writes to every log: its preamble, and the summary of the counts.
_VALGRIND_USUAL = re.compile(r"(Cachegrind, |Copyright \(C\)|Using Valgrind-|Command: |"
                             r"Parent PID: |\S+\s+(refs|misses|miss rate|mispred)\b)")


def valgrind_said(scratch: Path) -> str:
    """The last line valgrind wrote to its logs of the last counted run (warnings about the
    simulated cache left out), or ""."""
    lines: list[str] = []
    for path in sorted(scratch.glob(f"{VALGRIND_LOG}.*")):
        try:
            lines += path.read_text(errors="replace").splitlines()
        except OSError:
            continue
    said = [_VALGRIND_PREFIX.sub("", line).strip() for line in lines]
    said = [line for line in said if line and "cache" not in line
            and not _VALGRIND_USUAL.match(line)]
    return said[-1] if said else ""


def _remove(scratch: Path, prefix: str) -> None:
    for path in scratch.glob(f"{prefix}.*"):
        try:
            path.unlink()
        except OSError:
            pass


def find_valgrind(env: Mapping[str, str]) -> str | None:
    """valgrind on the runs' PATH, or None."""
    return shutil.which(VALGRIND, path=env.get("PATH", os.defpath))


def valgrind_timeout(timeout_s: float) -> float:
    """A counted run's timeout, from the workload's."""
    return max(VALGRIND_MIN_TIMEOUT_S, VALGRIND_TIMEOUT_FACTOR * timeout_s)


# --- which method, and why ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Means:
    """What this comparison can count with: perf's problem (None: it works in the worker),
    and valgrind's (None: it is on the runs' PATH and the sandbox shows it)."""

    perf_problem: str | None
    valgrind_problem: str | None


def means(env: Mapping[str, str], *, shown: Callable[[str], bool] | None = None) -> Means:
    """Probe perf (in this process: the worker runs on the same kernel, with the same
    seccomp filter, and says so in its runs' ``count_error`` if it disagrees) and look for
    valgrind on the runs' PATH, visible in the sandbox (``shown``: the sandbox view's)."""
    found = find_valgrind(env)
    if found is None:
        valgrind_problem: str | None = "valgrind is not installed (not on the runs' PATH)"
    elif shown is not None and not shown(found):
        valgrind_problem = (f"valgrind ({found}) is not visible in the sandbox: list its "
                            "directory under sandbox.read_only")
    else:
        valgrind_problem = None
    return Means(perf_problem=perf_probe(), valgrind_problem=valgrind_problem)


def choose(mode: str, means: Means, *, run_s: float | None = None) -> tuple[str | None, str]:
    """The method for a workload's ``counts`` setting, and why, in words; ``run_s``: how
    long its warm-up run took (None: not known yet; auto then answers only for perf)."""
    perf, valgrind = means.perf_problem, means.valgrind_problem
    if mode == "off":
        return None, "off in the config"
    if mode == "perf":
        if perf is None:
            return "perf", "perf: the CPU's counters, around every run (asked for in the config)"
        return None, f"perf was asked for, but {perf}"
    if mode == "valgrind":
        if valgrind is None:
            return "valgrind", "valgrind: a few counted runs of each revision (asked for in the config)"
        return None, f"valgrind was asked for, but {valgrind}"
    if perf is None:
        return "perf", "perf: the CPU's counters count user-space instructions here"
    if valgrind is not None:
        return None, f"not counted: {perf}, and {valgrind}"
    if run_s is not None and run_s > VALGRIND_MAX_RUN_S:
        return None, (f"not counted: {perf}, and a run took {run_s:.2f} s, longer than "
                      f"valgrind's limit of {VALGRIND_MAX_RUN_S:g} s (counts: valgrind "
                      "asks for it anyway)")
    return "valgrind", f"valgrind: {perf}"


def asked_and_impossible(mode: str, method: str | None) -> bool:
    """Whether a method asked for in the config could not be used (a warning)."""
    return mode in ("perf", "valgrind") and method is None
