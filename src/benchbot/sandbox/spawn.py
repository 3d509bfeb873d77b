"""One fresh process, timed from spawn to reap: the lowest layer of measuring.

This module imports the standard library only, because it also runs inside the sandbox
(``benchbot.sandbox.worker``) with nothing but the interpreter.

Every run is started from an argv (never a shell), in a new session, and timed with a
monotonic nanosecond clock from just before the spawn to just after the reap. CPU time and
peak memory come from the child's rusage (``wait4``). After the reap the run's whole
process group is killed, so that a background child a workload left behind can neither
outlive it nor write into the next run's output; and so is every process that was
re-parented to the spawner (``end_leftovers``: it is a child subreaper, so a ``setsid``
child or a double-forked daemon comes back to it), before the next run starts and outside
the timed region. The runs are forked by the fork server (``benchbot.sandbox.forkserver``), a
small C process, so that a run's peak memory is not its spawner's; where it cannot be
built or started, this process starts them with ``posix_spawn`` and the floor of peak
memory is its own peak (``ProcessSpawner.floor_method``). Each run writes to
anonymous files of its own; stdout is only kept when a pattern must be read from it,
otherwise it goes to ``/dev/null`` (writing output nobody reads is part of the measured
time, and a workload that prints tens of megabytes would be measured writing them).

A request may ask for the run's instructions (``SpawnRequest.count``): "perf" reads the
spawner's counter just before the spawn and just after the reap, outside the timed
region; "valgrind" makes the run under cachegrind (a counted run, whose time is not a
measurement); "callgrind" makes it under callgrind (a profiled run, benchbot.profiles.profile: its
functions' instructions come back in ``RawRun.profile``), in the same watched place and
with the same audit. ``benchbot.sandbox.counting`` says how.

Why one module of about 700 lines: the worker runs it with the standard library only, and
a run's request, its record and the spawner that makes it (timed, counted or a harness's)
are one contract between the two sides of the sandbox.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import resource
import select
import shutil
import signal
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from benchbot.core import trees
from benchbot.harness import formats
from benchbot.sandbox import callgrind, counting, forkserver

# How much of a run's output is searched for patterns; a run that prints more than this
# has the rest ignored (the search reads the start of the output).
SCAN_LIMIT = 64 << 20
# In a suite's argv, replaced by the path of a fresh file for the harness's report.
OUTPUT_MARK = "{output}"
STDERR_TAIL_BYTES = 4096
POLL_MAX_MS = 2**31 - 1  # poll() takes a C int of milliseconds

_R = TypeVar("_R")  # a request, or what stands for one (the worker's other-arm runs)


@dataclass(frozen=True, slots=True, kw_only=True)
class SpawnRequest:
    """One process to start: what, where, with which environment, and what to read back."""

    argv: tuple[str, ...]
    cwd: str
    env: tuple[tuple[str, str], ...]
    timeout_s: float
    pin: tuple[int, ...] | None = None
    # Regexes with one group, searched in stdout and then stderr; the first group of the
    # first match of each comes back in RawRun.captures.
    patterns: tuple[str, ...] = ()
    keep_stdout: bool = False  # False: stdout goes to /dev/null
    # How the run's instructions are counted (benchbot.sandbox.counting): "perf", the worker's
    # counter read around it; "valgrind", the run made under cachegrind (a counted run,
    # whose time is not a measurement); "callgrind", the run made under callgrind (a
    # profiled run: RawRun.profile); None: not counted.
    count: str | None = None
    # A benchmark harness's run (a suite): its report, in this format (harness.FORMATS), is
    # read from the file an argument's OUTPUT_MARK names, else from its stdout, and parsed
    # into RawRun.report after the run.
    harness: str | None = None
    # A valgrind count that settles a verdict by itself (``metric: instructions``, a suite's
    # counted run) must be the whole run's: a forked child's exec, which valgrind accepts
    # but counts only from the exec on, leaves it with no count (counting.audit_valgrind).
    whole: bool = False
    # count "callgrind-parts" (a suite's split run, benchbot.suites.gbsplit): the functions
    # callgrind dumps before (callgrind.DUMP_NAME: exact names); RawRun.parts, the dumps.
    dumps: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The request as plain JSON values (for the sandboxed worker)."""
        return {
            "argv": list(self.argv), "cwd": self.cwd, "env": [list(p) for p in self.env],
            "timeout_s": self.timeout_s, "pin": list(self.pin) if self.pin else None,
            "patterns": list(self.patterns), "keep_stdout": self.keep_stdout,
            "count": self.count, "harness": self.harness, "whole": self.whole,
            "dumps": list(self.dumps),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SpawnRequest:
        """The inverse of ``to_json``."""
        return cls(
            argv=tuple(data["argv"]), cwd=data["cwd"],
            env=tuple((str(k), str(v)) for k, v in data["env"]),
            timeout_s=float(data["timeout_s"]),
            pin=tuple(data["pin"]) if data.get("pin") else None,
            patterns=tuple(data.get("patterns", ())), keep_stdout=bool(data.get("keep_stdout")),
            count=data.get("count"), harness=data.get("harness"),
            whole=bool(data.get("whole")), dumps=tuple(str(d) for d in data.get("dumps", ())),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RawRun:
    """What one process did: its timings, its exit, and the text its patterns matched."""

    wall_ns: int
    cpu_ns: int
    maxrss_kib: int
    returncode: int
    timed_out: bool = False
    captures: tuple[str | None, ...] = ()
    stderr_tail: str = ""
    not_started: str | None = None  # why the process could not be started at all
    instructions: int | None = None  # SpawnRequest.count: the run's user-space instructions
    cycles: int | None = None  # perf, where the CPU counts cycles
    # last-level cache misses: valgrind's simulated cache; perf, where the CPU counts them
    ll_misses: int | None = None
    counts_scaled: bool = False  # perf multiplexed the counter: the counts are estimates
    count_error: str | None = None  # why a run asked to be counted was not, in words
    report: formats.Parsed | None = None  # SpawnRequest.harness: what its report said
    profile: callgrind.Profile | None = None  # count "callgrind": what callgrind recorded
    # count "callgrind-parts": the dumps in order, the end's last (None: not split), and
    # the runs its google-benchmark report names, in order (formats.google_order)
    parts: tuple[callgrind.Part, ...] | None = None
    order: tuple[tuple[str, int], ...] = ()

    @property
    def failed(self) -> bool:
        """The process did not start, timed out or exited non-zero."""
        return self.not_started is not None or self.timed_out or self.returncode != 0

    def to_json(self) -> dict[str, Any]:
        """The run as plain JSON values (from the sandboxed worker)."""
        return {
            "wall_ns": self.wall_ns, "cpu_ns": self.cpu_ns, "maxrss_kib": self.maxrss_kib,
            "returncode": self.returncode, "timed_out": self.timed_out,
            "captures": list(self.captures), "stderr_tail": self.stderr_tail,
            "not_started": self.not_started, "instructions": self.instructions,
            "cycles": self.cycles, "ll_misses": self.ll_misses,
            "counts_scaled": self.counts_scaled,
            "count_error": self.count_error,
            "report": None if self.report is None else formats.to_json(self.report),
            "profile": None if self.profile is None else self.profile.to_json(),
            "parts": None if self.parts is None
            else [[p.trigger, p.ir, p.ll_misses, *p.blocks] for p in self.parts],
            "order": [list(o) for o in self.order],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RawRun:
        """The inverse of ``to_json``."""
        return cls(
            wall_ns=int(data["wall_ns"]), cpu_ns=int(data["cpu_ns"]),
            maxrss_kib=int(data["maxrss_kib"]), returncode=int(data["returncode"]),
            timed_out=bool(data["timed_out"]),
            captures=tuple(None if c is None else str(c) for c in data["captures"]),
            stderr_tail=str(data["stderr_tail"]), not_started=data.get("not_started"),
            instructions=_int_or_none(data.get("instructions")),
            cycles=_int_or_none(data.get("cycles")),
            ll_misses=_int_or_none(data.get("ll_misses")),
            counts_scaled=bool(data.get("counts_scaled")), count_error=data.get("count_error"),
            report=None if data.get("report") is None else formats.from_json(data["report"]),
            profile=None if data.get("profile") is None
            else callgrind.Profile.from_json(data["profile"]),
            parts=None if data.get("parts") is None
            else tuple(callgrind.Part(int(t), int(i), _int_or_none(m), (int(a), int(b)))
                       for t, i, m, a, b in data["parts"]),
            order=tuple((str(n), int(k)) for n, k in data.get("order", ())),
        )


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def find_captures(patterns: Sequence[str], stdout: str, stderr: str) -> tuple[str | None, ...]:
    """The first group of each pattern's first match in stdout, else in stderr, else None."""
    found: list[str | None] = []
    for pattern in patterns:
        regex = re.compile(pattern, re.MULTILINE)
        value = None
        for text in (stdout, stderr):
            match = regex.search(text)
            if match:
                value = match.group(1)
                break
        found.append(value)
    return tuple(found)


class ProcessSpawner:
    """Starts and times real processes (see the module's docstring): through its fork
    server, unless ``fork_server`` is False or it cannot be built or started here (a
    path: the fork server's program, built already; else it is built into ``scratch``).

    Note, without the fork server: ``subprocess.Popen`` was tried first; it added about
    0.45 ms to every run on a 2-core VM (median 1.18 ms against 0.74 ms for /bin/true), all
    of it inside the timed region, so the floor every workload is judged against was
    higher than it need be. ``posix_spawn`` has no working-directory action, so the parent
    changes directory around the call (benchbot measures one process at a time). What a
    run left behind is every child of this process that it did not have at its first run
    (``end_leftovers``): a program that measures with it starts no other process
    meanwhile (or starts its fork server first: ``start``).
    """

    def __init__(self, scratch: Path, *, perf_events: counting.Events = counting.HARDWARE,
                 fork_server: bool | Path = True) -> None:
        self._scratch = Path(scratch)
        self._devnull = -1
        self._keep: frozenset[int] | None = None  # children that are not the runs'
        self._perf_events = perf_events  # counting.SOFTWARE_TEST in tests
        self._perf: counting.PerfCounter | None = None  # opened at the first counted run
        self._perf_error: str | None = None  # why it could not be opened
        self._server: forkserver.ForkServer | None = None  # started by start()
        # Why the runs are not started by a fork server (None: not tried yet).
        self._no_server: str | None = None if fork_server else "not asked for"
        # The fork server's program, built already (None: built into ``scratch``).
        self._program = fork_server if isinstance(fork_server, Path) else None
        self._floor_kib = 0  # the largest floor the fork server reported
        self._others: frozenset[int] = frozenset()  # children before the fork server started

    def start(self) -> None:
        """Start the fork server now (the first run does otherwise). Where it cannot be
        built or started, the runs are started by this process (``floor_method`` says why)."""
        if self._server is None and self._no_server is None:
            try:
                # The children that are not the runs' (see _lost).
                self._others = frozenset(process_tree().get(os.getpid(), ()))
                self._server = forkserver.start(self._scratch, program=self._program)
                self._floor_kib = self._server.floor_kib()
            except forkserver.ForkServerError as exc:
                self._no_server = str(exc)

    @property
    def has_fork_server(self) -> bool:
        """Whether a fork server starts the runs (after ``start`` or a run)."""
        return self._server is not None or bool(self._floor_kib)

    @property
    def floor_method(self) -> str:
        """What starts the runs, as it bears on their peak memory, in words."""
        if self.has_fork_server:
            return "a fork server (a small C process) starts the runs"
        why = f" ({self._no_server})" if self._no_server else ""
        return f"this Python process starts the runs{why}: every run's peak includes its own"

    @property
    def maxrss_floor_kib(self) -> int:
        """No run's peak RSS reads below this: what the fork server's runs start from (the
        largest it reported), else this process's own peak (see ``machine.own_peak_rss_kib``)."""
        if self._server is not None:
            self._floor_kib = max(self._floor_kib, self._server.floor_kib())
        if self._floor_kib:
            return self._floor_kib
        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)

    @property
    def unreaped_cpu_s(self) -> float:
        """CPU time of the runs (and of the fork server) that this process's own children's
        time does not hold yet: the fork server reaps the runs, and is reaped at ``close``."""
        return self._server.cpu_s() if self._server is not None else 0.0

    def close(self) -> None:
        """Release the file descriptors kept between runs, and end the fork server."""
        if self._devnull >= 0:
            os.close(self._devnull)
            self._devnull = -1
        if self._perf is not None:
            self._perf.close()
            self._perf = None
        if self._server is not None:
            with contextlib.suppress(forkserver.ForkServerError):
                self._floor_kib = max(self._floor_kib, self._server.floor_kib())
            self._server.close()
            self._server = None

    def _counter(self) -> counting.PerfCounter | None:
        """The perf counter, opened once (None, with ``_perf_error``, where it cannot be):
        on the fork server where it starts the runs, else on this process."""
        if self._perf is None and self._perf_error is None:
            opener = self._server.open_counter if self._server is not None else counting.open_here
            try:
                self._perf = counting.PerfCounter(self._perf_events, opener=opener)
            except counting.CountingError as exc:
                self._perf_error = f"perf: {exc}"
            except OSError as exc:  # pragma: no cover - no libc to call it through
                self._perf_error = f"perf: perf_event_open cannot be called: {exc}"
        return self._perf

    def spawn_many(self, requests: Sequence[SpawnRequest]) -> list[RawRun]:
        """The requests' runs one after another, up to and including the first that failed."""
        return in_turn(self.spawn, requests)

    def spawn_groups(self, groups: Sequence[Sequence[SpawnRequest]],
                     keys: Sequence[str]) -> list[list[RawRun]]:
        """Groups of runs one after another (``in_groups``)."""
        return in_groups(self.spawn, groups, keys)

    def spawn(self, request: SpawnRequest) -> RawRun:
        """Run the request's process once; kill its process group at the timeout and after."""
        self.start()
        env = dict(request.env)
        program = _which(request.argv[0], env)
        if program is None:
            return _not_started(request, "no such file or command")
        argv = list(request.argv)
        place: counting.ValgrindPlace | None = None  # a counted run's (valgrind's) files
        if request.count in ("valgrind", "callgrind", "callgrind-parts"):
            valgrind = counting.find_valgrind(env)
            if valgrind is None:
                return _not_started(request, "valgrind is not on the run's PATH")
            try:
                place = counting.ValgrindPlace(self._scratch)
            except counting.CountingError as exc:
                return _not_started(request, f"valgrind's directory cannot be watched: {exc}")
            if request.count == "callgrind":
                argv = callgrind.argv(valgrind, [program, *argv[1:]], str(place.path),
                                      counting.VALGRIND_OUT, counting.VALGRIND_LOG)
            elif request.count == "callgrind-parts":
                try:
                    argv = callgrind.split_argv(valgrind, [program, *argv[1:]],
                                                str(place.path), counting.VALGRIND_OUT,
                                                counting.VALGRIND_LOG, request.dumps,
                                                counting.cache_options())
                except ValueError as exc:
                    place.close()
                    return _not_started(request, str(exc))
            else:
                argv = counting.valgrind_argv(valgrind, [program, *argv[1:]], place.path)
            program = valgrind
        if self._devnull < 0:
            self._devnull = os.open(os.devnull, os.O_RDWR)
        if self._keep is None and self._server is None:  # before the first run: what is
            self._keep = frozenset(process_tree().get(os.getpid(), ()))  # not the runs'
            close_on_exec()
        report_dir = None
        if request.harness is not None and any(OUTPUT_MARK in arg for arg in argv):
            # In the scratch directory: whatever the run leaves there is named when the
            # comparison removes it (trees.removed), if not removed here.
            report_dir = tempfile.mkdtemp(prefix="benchbot-report-", dir=self._scratch)
            argv = [arg.replace(OUTPUT_MARK, os.path.join(report_dir, "report")) for arg in argv]
        capture_out = (request.keep_stdout and bool(request.patterns)) or (
            request.harness is not None and report_dir is None)
        out_fd = _anonymous_file(self._scratch) if capture_out else self._devnull
        err_fd = _anonymous_file(self._scratch)
        try:
            if request.count == "perf":
                run = self._perf_run(request, program, argv, env, out_fd, err_fd)
            else:
                run = self._run(request, program, argv, env, out_fd, err_fd)
            if place is not None and request.count == "callgrind":
                run = _profiled_by_callgrind(run, place)
            elif place is not None and request.count == "callgrind-parts":
                run = _split_by_callgrind(run, place, request.dumps)
            elif place is not None:
                run = _counted_by_valgrind(run, place, whole=request.whole)
            if request.harness is not None and run.not_started is None and not run.timed_out:
                path = os.path.join(report_dir, "report") if report_dir is not None else None
                run = dataclasses.replace(run, report=_report(request.harness, out_fd, path))
                if request.count == "callgrind-parts" and request.harness == "google-benchmark":
                    run = dataclasses.replace(run, order=formats.google_order(
                        _report_text(out_fd, path)))
            return run
        finally:
            if out_fd != self._devnull:
                os.close(out_fd)
            os.close(err_fd)
            if report_dir is not None:
                trees.remove_tree(report_dir)
            if place is not None:
                place.close()

    def _perf_run(self, request: SpawnRequest, program: str, argv: list[str],
                  env: dict[str, str], out_fd: int, err_fd: int) -> RawRun:
        """A run with the perf counter read before and after it, outside the timed region."""
        counter = self._counter()
        if counter is None:
            run = self._run(request, program, argv, env, out_fd, err_fd)
            return dataclasses.replace(run, count_error=self._perf_error)
        before = counter.read()
        run = self._run(request, program, argv, env, out_fd, err_fd)
        count = counter.between(before, counter.read(), counter.kinds)
        return dataclasses.replace(run, instructions=count.instructions, cycles=count.cycles,
                                   ll_misses=count.ll_misses, counts_scaled=count.scaled)

    def _run(self, request: SpawnRequest, program: str, argv: list[str], env: dict[str, str],
             out_fd: int, err_fd: int) -> RawRun:
        if self._server is not None:
            try:
                ran = self._server.run(program=program, argv=argv, env=env, cwd=request.cwd,
                                       timeout_s=request.timeout_s, pin=request.pin,
                                       stdio=(self._devnull, out_fd, err_fd))
            except forkserver.ForkServerError as exc:
                return self._lost(request, exc)
            if ran.failure is not None:
                return _not_started(request, ran.failure)
            return _finished(request, out_fd if out_fd != self._devnull else None, err_fd,
                             wall_ns=ran.wall_ns, cpu_ns=ran.cpu_ns, maxrss_kib=ran.maxrss_kib,
                             status=ran.status, timed_out=ran.timed_out)
        return self._spawned_here(request, program, argv, env, out_fd, err_fd)

    def _lost(self, request: SpawnRequest, exc: forkserver.ForkServerError) -> RawRun:
        """The fork server stopped answering during a run: the run's own doing (it is the
        run's parent and the same user, so a run can kill or stop it; only the worker, its
        namespace's init, is out of a run's reach). The run is not measured: it fails with
        the reason, whatever it left is ended, and a fresh fork server (from the same
        program, which no run can write) starts the next run. ForkServerError where it
        cannot be started again."""
        if self._server is not None:
            self._server.close()  # killed already where it did not answer in time
            self._server = None
        end_leftovers(self._others)
        self._server = forkserver.start(self._scratch, program=self._program)
        self._floor_kib = max(self._floor_kib, self._server.floor_kib())
        return dataclasses.replace(
            _not_started(request, ""), returncode=-signal.SIGKILL,
            not_started=f"stopped the fork server that timed it, its parent ({exc}): not measured")

    def _spawned_here(self, request: SpawnRequest, program: str, argv: list[str],
                      env: dict[str, str], out_fd: int, err_fd: int) -> RawRun:
        """A run started by this process with ``posix_spawn`` (where no fork server is)."""
        actions = [
            (os.POSIX_SPAWN_DUP2, self._devnull, 0),
            (os.POSIX_SPAWN_DUP2, out_fd, 1),
            (os.POSIX_SPAWN_DUP2, err_fd, 2),
        ]
        previous_pin = _pin_self(request.pin)
        here = os.getcwd()
        try:
            os.chdir(request.cwd)
            start = time.monotonic_ns()
            pid = os.posix_spawn(program, argv, env, file_actions=actions, setsid=True)
        except (OSError, ValueError) as exc:
            os.chdir(here)
            _restore_pin(previous_pin)
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            return _not_started(request, why)
        try:
            status, usage, end, timed_out = _reap(pid, request.timeout_s)
        finally:
            kill_group(pid)  # whatever the run left behind, in its group
            end_leftovers(self._keep or frozenset())  # and outside it
            os.chdir(here)
            _restore_pin(previous_pin)
        return _finished(request, out_fd if out_fd != self._devnull else None, err_fd,
                         wall_ns=end - start, cpu_ns=round((usage.ru_utime + usage.ru_stime) * 1e9),
                         maxrss_kib=int(usage.ru_maxrss), status=status, timed_out=timed_out)


def _finished(request: SpawnRequest, out_fd: int | None, err_fd: int, *, wall_ns: int,
              cpu_ns: int, maxrss_kib: int, status: int, timed_out: bool) -> RawRun:
    """A reaped run with what its patterns found in its output (``out_fd`` None: its
    stdout was not kept)."""
    stdout = _read(out_fd, SCAN_LIMIT) if out_fd is not None else ""
    stderr = _read(err_fd, SCAN_LIMIT if request.patterns else None)
    return RawRun(
        wall_ns=wall_ns, cpu_ns=cpu_ns, maxrss_kib=maxrss_kib,
        returncode=os.waitstatus_to_exitcode(status), timed_out=timed_out,
        captures=find_captures(request.patterns, stdout, stderr),
        stderr_tail=stderr[-STDERR_TAIL_BYTES:],
    )


def _counted_by_valgrind(run: RawRun, place: counting.ValgrindPlace, *,
                         whole: bool = False) -> RawRun:
    """A run made under cachegrind, with its instructions read from its out files: only
    where the record of valgrind's directory, taken before anything there is read (every
    process of the run has ended by now), is what valgrind alone makes
    (``counting.audit_valgrind``); else no count, and why."""
    pids, problem = counting.audit_valgrind(place.events(), place.path, whole=whole)
    said = counting.valgrind_said(place.path)
    total = counting.read_valgrind(place.path, pids) if problem is None else None
    if run.failed:
        return dataclasses.replace(run, count_error=f"valgrind: {said}" if said else None)
    if problem is not None:
        return dataclasses.replace(run, count_error=f"valgrind: not counted: {problem}")
    if total is None:
        return dataclasses.replace(run, count_error="valgrind left no out file with a summary"
                                   + (f" ({said})" if said else ""))
    return dataclasses.replace(run, instructions=total.instructions, ll_misses=total.ll_misses)


def _profiled_by_callgrind(run: RawRun, place: counting.ValgrindPlace) -> RawRun:
    """A run made under callgrind, with what it recorded (every process's out file, read
    and merged): only where the record of valgrind's directory is what valgrind alone
    makes, the whole run's (``whole``: no exec after a fork), as for a count that settles
    a verdict; else no profile, never a part of one, and why (``count_error``)."""
    pids, problem = counting.audit_valgrind(place.events(), place.path, whole=True,
                                            tool="callgrind")
    said = counting.valgrind_said(place.path)
    if run.failed:
        return dataclasses.replace(run, count_error=f"callgrind: {said}" if said else None)
    if problem is not None:
        return dataclasses.replace(run, count_error=f"callgrind: not profiled: {problem}")
    found = {p: place.path / f"{counting.VALGRIND_OUT}.{p}" for p in sorted(pids)}
    try:
        profiles = [callgrind.read_file(path) for path in found.values()]
    except callgrind.CallgrindError as exc:
        return dataclasses.replace(run, count_error=f"callgrind: not profiled: {exc}")
    if not profiles:
        return dataclasses.replace(run, count_error="callgrind left no out file"
                                   + (f" ({said})" if said else ""))
    made = callgrind.merged(profiles)
    return dataclasses.replace(run, instructions=made.total_ir, profile=made)


def _split_by_callgrind(run: RawRun, place: counting.ValgrindPlace,
                        dumps: Sequence[str]) -> RawRun:
    """A split run (callgrind dumping before ``dumps``), with its parts in order: only
    where the record of valgrind's directory is what callgrind alone makes for one process
    and its dumps (``counting.audit_parts``), every part read; else no parts, and why."""
    pid, k, problem = counting.audit_parts(place.events(), place.path)
    said = counting.valgrind_said(place.path)
    if run.failed:
        return dataclasses.replace(run, count_error=f"callgrind: {said}" if said else None)
    if problem is not None or pid is None:
        return dataclasses.replace(run, count_error=f"callgrind: not split: {problem}")
    out = place.path / f"{counting.VALGRIND_OUT}.{pid}"
    try:
        parts = [callgrind.read_part(out.with_name(f"{out.name}.{n}"), number=n, pid=pid,
                                     dumps=dumps) for n in range(1, k + 1)]
        parts.append(callgrind.read_part(out, number=None, pid=pid, dumps=dumps))
    except callgrind.CallgrindError as exc:
        return dataclasses.replace(run, count_error=f"callgrind: not split: {exc}")
    broken = callgrind.chained(parts)
    if broken is not None:
        return dataclasses.replace(run, count_error=f"callgrind: not split: {broken}")
    return dataclasses.replace(run, parts=tuple(parts),
                               instructions=sum(p.ir for p in parts),
                               ll_misses=None if any(p.ll_misses is None for p in parts)
                               else sum(p.ll_misses or 0 for p in parts))


def in_turn(spawn: Callable[[_R], RawRun], requests: Sequence[_R]) -> list[RawRun]:
    """``spawn`` each request in turn, stopping after the first run that failed (the runs
    after it would belong to a workload that stops being measured)."""
    runs: list[RawRun] = []
    for request in requests:
        runs.append(spawn(request))
        if runs[-1].failed:
            break
    return runs


def in_groups(spawn: Callable[[_R], RawRun], groups: Sequence[Sequence[_R]],
              keys: Sequence[str]) -> list[list[RawRun]]:
    """Each group (a pair or a triplet of one workload) ``in_turn``, one group after
    another; after a run failed, the later groups of the same key (its workload) are not
    run and come back empty."""
    failed: set[str] = set()
    out: list[list[RawRun]] = []
    for group, key in zip(groups, keys, strict=True):
        if key in failed:
            out.append([])
            continue
        runs = in_turn(spawn, group)
        if runs and runs[-1].failed:
            failed.add(key)
        out.append(runs)
    return out


def _anonymous_file(directory: Path) -> int:
    """A new file with no name: gone when closed, never shared with another run."""
    try:
        return os.open(directory, os.O_TMPFILE | os.O_RDWR, 0o600)
    except (AttributeError, OSError):  # pragma: no cover - file systems without O_TMPFILE
        fd, name = _mkstemp(directory)
        os.unlink(name)
        return fd


def _mkstemp(directory: Path) -> tuple[int, str]:  # pragma: no cover
    import tempfile

    return tempfile.mkstemp(dir=directory)


def _read(fd: int, limit: int | None) -> str:
    """The file's text: its first ``limit`` bytes, or with None its last STDERR_TAIL_BYTES."""
    size = os.fstat(fd).st_size
    if limit is None:
        os.lseek(fd, max(0, size - STDERR_TAIL_BYTES), os.SEEK_SET)
        limit = STDERR_TAIL_BYTES
    else:
        os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    left = min(size, limit)
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks).decode(errors="replace")


def _report(fmt: str, out_fd: int, path: str | None) -> formats.Parsed:
    """What a harness reported: in the file at ``path`` (None: its stdout, ``out_fd``),
    parsed. A file is read only if the run left a regular file there, and a link is not
    followed (the worker would read what the link points to, not the run); a report longer
    than harness.TEXT_LIMIT bytes is refused, not cut."""
    fd = out_fd
    if path is not None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as exc:
            return formats.Parsed(entries=(), error=f"it wrote no report to {{output}} "
                                                    f"({exc.strerror or exc})")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return formats.Parsed(entries=(), error="{output} is not a regular file")
        if info.st_size > formats.TEXT_LIMIT:
            return formats.Parsed(entries=(), error=f"the report is longer than "
                                                    f"{formats.TEXT_LIMIT >> 20} MiB")
        return formats.parse(fmt, _read(fd, formats.TEXT_LIMIT))
    finally:
        if fd != out_fd:
            os.close(fd)


def _report_text(out_fd: int, path: str | None) -> str:
    """A harness's report as text (``_report``'s rules: a regular file, not followed,
    at most harness.TEXT_LIMIT bytes), or "" where there is none."""
    fd = out_fd
    if path is not None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return ""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > formats.TEXT_LIMIT:
            return ""
        return _read(fd, formats.TEXT_LIMIT)
    finally:
        if fd != out_fd:
            os.close(fd)


def _which(program: str, env: Mapping[str, str]) -> str | None:
    """Resolve a bare command name on the run's PATH, as a shell would; keep paths as they are."""
    if "/" in program:
        return program
    return shutil.which(program, path=env.get("PATH", os.defpath))


def _not_started(request: SpawnRequest, why: str) -> RawRun:
    return RawRun(
        wall_ns=0, cpu_ns=0, maxrss_kib=0, returncode=127,
        captures=tuple(None for _ in request.patterns),
        stderr_tail="", not_started=f"could not start {request.argv[0]!r}: {why}",
    )


def _reap(pid: int, timeout_s: float) -> tuple[int, Any, int, bool]:
    """Wait for ``pid`` up to the timeout (then kill its group); return status, rusage, end, timed out.

    Waiting on a pidfd keeps the wait in this thread: no timer thread is started inside
    the timed region.
    """
    timed_out = False
    try:
        fd = os.pidfd_open(pid)
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            if not poller.poll(min(timeout_s * 1000, POLL_MAX_MS)):
                timed_out = True
                kill_group(pid)
        finally:
            os.close(fd)
        _, status, usage = os.wait4(pid, 0)
        end = time.monotonic_ns()
    except BaseException:  # Ctrl-C or SIGTERM: take the child down with us
        kill_group(pid)
        os.waitpid(pid, 0)
        raise
    return status, usage, end, timed_out


def kill_group(pgid: int) -> None:
    """SIGKILL a process group; nothing happens when it is already gone."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _pin_self(pin: Sequence[int] | None) -> set[int] | None:
    """Pin this process so that the child inherits the CPU set; return the old set."""
    if not pin:
        return None
    previous = os.sched_getaffinity(0)
    os.sched_setaffinity(0, set(pin))
    return previous


def _restore_pin(previous: set[int] | None) -> None:
    if previous is not None:
        os.sched_setaffinity(0, previous)


def close_on_exec() -> None:
    """Make every descriptor of this process but 0, 1 and 2 non-inheritable, so that no run
    gets one: those this process inherited itself (a runner's pipe) and a sandboxed
    worker's pipes to benchbot and to the other arm's worker. (Closing them in each run's
    ``posix_spawn`` instead would be work inside the timed region.)"""
    for name in os.listdir("/proc/self/fd"):
        if int(name) > 2:
            try:
                os.set_inheritable(int(name), False)
            except OSError:  # the listing's own descriptor, closed by now
                pass


def end_leftovers(keep: AbstractSet[int] = frozenset()) -> set[int]:
    """Kill and reap what the last run left running outside its process group: every
    child of this process but those in ``keep`` (a child subreaper adopts the orphans of
    its descendants: a ``setsid`` child, a double-forked daemon) and every process below
    them, again until none is left (one may fork while the others die). Returns their pids.

    When nothing was left, as after nearly every run, this costs one ``waitid`` that finds
    no child. (``/proc/<pid>/task/*/children`` would list children cheaply, but only on
    kernels built with CONFIG_PROC_CHILDREN; the scan of ``/proc`` works on all.)
    """
    ended: set[int] = set()
    me = os.getpid()
    while _has_children():
        tree = process_tree()
        mine = [pid for pid in tree.get(me, ()) if pid not in keep]
        if not mine:
            break
        doomed = _below(tree, mine)
        for pid in doomed:
            _kill(pid)
        for pid in mine:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        ended |= doomed
    return ended


def _has_children() -> bool:
    """Whether this process has a child, living or not yet reaped (nothing is reaped)."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def process_tree() -> dict[int, list[int]]:
    """Parent pid -> its children's pids, for every process this one can see."""
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: split after the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def _below(tree: Mapping[int, Sequence[int]], roots: Iterable[int]) -> set[int]:
    """``roots`` and every process below them."""
    found: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(tree.get(pid, ()))
    return found


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
