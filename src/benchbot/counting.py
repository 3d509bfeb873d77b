"""Instruction counts of runs: ``perf_event_open`` around each run, or valgrind's cachegrind.

This module imports the standard library only: it runs inside the sandbox, in the worker
(``benchbot.worker``), with nothing but the interpreter.

**perf** (docs/verdict.md, "A second signal"): the process that forks the runs (the fork
server, ``benchbot.forkserver``, else the worker) opens, once, a counter on itself (pid 0,
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
--trace-children=yes``, whose out files (one per process, in the worker's scratch) are
summed and removed (``valgrind_argv``, ``read_valgrind``). About 7x slower, and exact for a
deterministic program. The cache simulation counts the last-level misses beside the
instructions (DLmr + DLmw + ILmr) in a cache of fixed geometry (``SIMULATED_CACHE``), so
that they do not depend on the machine the run lands on (docs/verdict.md, "Memory beside
the instructions").

**perf** counts the last-level misses too where the CPU has the generic cache-misses event
(``PERF_COUNT_HW_CACHE_MISSES``: the last-level cache's misses on x86), opened like cycles:
where it cannot be, the runs have instructions without misses.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import shutil
import struct
from collections.abc import Callable, Mapping, Sequence
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


def valgrind_argv(valgrind: str, argv: Sequence[str], scratch: Path) -> list[str]:
    """``argv`` counted by cachegrind, with its cache simulation (``SIMULATED_CACHE``), its
    out files (one per process) in ``scratch``."""
    cache = [f"--{level}={size},{assoc},{line}"
             for level, (size, assoc, line) in SIMULATED_CACHE.items()]
    return [valgrind, "--tool=cachegrind", "--cache-sim=yes", *cache, "--trace-children=yes",
            "--quiet", f"--cachegrind-out-file={scratch}/{VALGRIND_OUT}.%p",
            f"--log-file={scratch}/{VALGRIND_LOG}.%p", "--", *argv]


def read_valgrind(scratch: Path) -> Count | None:
    """The instructions and last-level misses of every out file a counted run left in
    ``scratch`` (summed), the files removed; None when there was none or one had no
    ``summary:`` line. The misses are None where a file had no cache simulation."""
    total = 0
    misses: int | None = 0
    found = False
    ok = True
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


def valgrind_said(scratch: Path) -> str:
    """The last line valgrind wrote to its logs of the last counted run (warnings about the
    simulated cache left out), or ""."""
    lines: list[str] = []
    for path in sorted(scratch.glob(f"{VALGRIND_LOG}.*")):
        try:
            lines += path.read_text(errors="replace").splitlines()
        except OSError:
            continue
    said = [line.split("-- ", 1)[-1].strip() for line in lines]
    said = [line for line in said if line and "cache" not in line]
    return said[-1] if said else ""


def clear_valgrind(scratch: Path) -> None:
    """Remove out files a killed counted run may have left."""
    for prefix in (VALGRIND_OUT, VALGRIND_LOG):
        _remove(scratch, prefix)


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
