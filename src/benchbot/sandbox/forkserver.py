"""The fork server: a small C process that starts and times the runs, so that a run's
peak memory is its own and not its spawner's.

Why: a run's peak RSS (``ru_maxrss``) is the largest high-water mark of any address space
it had, and the first one is its spawner's. ``posix_spawn`` (a vfork) lends the child the
spawner's own address space until exec, whose high-water mark Linux keeps at exec; a
fork copies the spawner's anonymous pages. So no run started by a Python process reads
below that process's own peak: about 15.7 MiB in the sandbox's worker and 40-56 MiB in
benchbot's own process, where most benchmark programs need a few MiB. A run started by
``forkserver.c`` starts from that small process's own high-water mark: about 0.65 MiB
built static, 1.1 MiB dynamic (``ForkServer.floor_kib`` measures it: a probe started the
same way reads its own peak before it would exec).

How: the C source ships with the package. ``build`` compiles it with the machine's C
compiler (``cc``, else gcc or clang; with a minimal environment: no CC or CFLAGS from a
config), static where the C library allows it, else dynamic; 0.3-0.5 s of CPU, once
per process (``copy_into`` gives each sandbox a copy of its own). The spawner
(``spawn.ProcessSpawner``) starts it once and sends it one request per run over a
socket (argv, environment, directory, CPU pin, timeout, and the run's stdin, stdout and
stderr as descriptors); it starts the run with vfork and times it as
the Python spawner did (a monotonic clock read just before the vfork and just after the
reap, the reap woken by the run's pidfd), kills the run's process group after it, ends
whatever the run left running elsewhere (it is a child subreaper), and answers one line.
Nothing of the exchange is inside the timed region, and less work is than with Python's
``posix_spawn``, which builds the argv and environment arrays after the clock is read
(``benchmarks/memfloor.py``: /bin/true's median run 16-19% shorter). A perf counter for
instruction counts is opened by the fork server on itself, so that runs inherit it as
they inherited the worker's (``counting``), and its descriptor is handed back.

Where no C compiler is found, or it cannot build or start the program, the Python
spawner starts the runs as before and the floor is its own peak; ``benchbot doctor`` and
``ProcessSpawner.floor_method`` say which is used.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import math
import os
import select
import shutil
import signal
import socket
import struct
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).with_name("forkserver.c")
COMPILERS = ("cc", "gcc", "clang")
CFLAGS = ("-O2", "-std=gnu11")
# Tried in turn: static (the smallest address space: 0.65 MiB against 1.1 here), then
# dynamic where the C library has no static archive (Fedora without glibc-static).
LINKS = (("-static",), ())
BUILD_TIMEOUT_S = 120.0
POLL_MAX_MS = 2**31 - 1
# How long past a run's timeout (or, for the other requests, at all) an answer may take.
# The fork server is the runs' parent, not the sandbox's init: a run can stop it
# (SIGSTOP), and then nothing would answer; past this it is killed and the comparison
# ends with an error, as a run that fails its own comparison could make it anyway.
ANSWER_GRACE_S = 60.0
_ANSWER_LIMIT = 4096
# Where a build of the source is, per source hash: one build per process.
_BUILT: dict[str, Path] = {}
_PRIVATE: Path | None = None  # copy_into's directory
_PRIVATE_LOCK = threading.Lock()
_STAGES = {"c": "cannot enter its directory", "p": "cannot be pinned to its CPUs",
           "f": "cannot fork", "e": ""}


class ForkServerError(Exception):
    """The fork server cannot be built or started, or stopped answering."""


@dataclass(frozen=True, slots=True)
class Ran:
    """What the fork server said of one run."""

    wall_ns: int
    status: int  # as waitpid gives it
    cpu_ns: int
    maxrss_kib: int
    timed_out: bool
    failure: str | None  # why it could not be started, in words (None: it ran)
    leftovers: int  # processes it left running outside its group, ended since


def compiler(path: str | None = None) -> str | None:
    """The C compiler that builds the fork server (``cc``, else ``gcc`` or ``clang``, on
    ``path``), or None."""
    search = path if path is not None else os.environ.get("PATH", os.defpath)
    return next((found for name in COMPILERS if (found := shutil.which(name, path=search))), None)


def build(into: Path, *, path: str | None = None) -> Path:
    """The fork server's program, compiled into ``into`` unless this process built it
    already (ForkServerError with the compiler's last words where it cannot be)."""
    import subprocess  # only here: the worker imports this module at its start

    source = SOURCE.read_bytes()
    key = hashlib.sha256(source + " ".join(CFLAGS).encode()).hexdigest()[:16]
    done = _BUILT.get(key)
    if done is not None and done.is_file():
        return done
    cc = compiler(path)
    if cc is None:
        raise ForkServerError("no C compiler (cc) on PATH")
    out = Path(into) / f"benchbot-forkserver-{key}"
    env = {"PATH": path if path is not None else os.environ.get("PATH", os.defpath),
           "LC_ALL": "C"}
    said = ""
    for link in LINKS:
        try:
            proc = subprocess.run([cc, *CFLAGS, *link, "-o", str(out), str(SOURCE)], env=env,
                                  capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ForkServerError(f"{cc} did not run: {exc}") from None
        if proc.returncode == 0 and out.is_file():
            _BUILT[key] = out
            return out
        said = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    raise ForkServerError(f"{cc} could not build it: {said[:200]}")


def copy_into(into: Path, *, path: str | None = None) -> Path:
    """The fork server's program as a file of ``into``'s own (ForkServerError where it
    cannot be built): a copy of this process's build, which is made on first use in a
    directory of the process's own (mode 0700, removed at exit). The sandbox binds the
    copy into its workers read-only; one compile a process, not one a comparison (0.3-0.5 s
    of CPU static)."""
    global _PRIVATE
    with _PRIVATE_LOCK:  # one compile, whichever thread asks first
        if _PRIVATE is None:
            _PRIVATE = Path(tempfile.mkdtemp(prefix="benchbot-forkserver-"))
            atexit.register(shutil.rmtree, _PRIVATE, True)
        built = build(_PRIVATE, path=path)
    out = Path(into) / built.name
    shutil.copyfile(built, out)
    out.chmod(0o755)
    return out


def start(into: Path, *, path: str | None = None, program: Path | None = None) -> ForkServer:
    """A running fork server, built into ``into`` where needed (ForkServerError if not);
    ``program``: one built already (the sandbox's worker is given one it cannot write:
    ``sandbox.WorkerSpawner``)."""
    server = ForkServer(program if program is not None else build(into, path=path))
    server.floor_kib()  # it answers: it works here
    return server


class ForkServer:
    """One running fork server and the socket to it (the module's docstring)."""

    def __init__(self, program: Path) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        devnull = os.open(os.devnull, os.O_RDWR)
        try:
            # Its socket at descriptor 3; nothing else of this process's is inherited
            # (Python's own descriptors are not inheritable).
            self.pid = os.posix_spawn(
                str(program), [str(program), "3"], {"LC_ALL": "C"},
                file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1),
                              (os.POSIX_SPAWN_DUP2, theirs.fileno(), 3)])
        except OSError as exc:
            mine.close()
            raise ForkServerError(f"cannot start {program}: {exc.strerror or exc}") from None
        finally:
            os.close(devnull)
            theirs.close()
        self._sock = mine
        self._buffer = b""

    def run(self, *, program: str, argv: Sequence[str], env: Mapping[str, str], cwd: str,
            timeout_s: float, pin: Sequence[int] | None, stdio: tuple[int, int, int]) -> Ran:
        """Start one run, wait for it (killing its group at the timeout), and say how it went."""
        fields = [str(_timeout_ms(timeout_s)), ",".join(str(c) for c in pin or ()), cwd,
                  program, str(len(argv)), *argv, *(f"{k}={v}" for k, v in env.items())]
        if any("\0" in f for f in fields):
            return Ran(0, 0, 0, 0, False, "embedded null byte", 0)
        payload = b"".join(os.fsencode(f) + b"\0" for f in fields)
        words = self._ask(b"R", payload, fds=stdio, wait_s=timeout_s + ANSWER_GRACE_S).split()
        if len(words) != 10 or words[0] != "R":
            raise ForkServerError(f"the fork server answered {' '.join(words)[:120]!r}")
        wall, status, utime, stime, peak, timed_out = (int(w) for w in words[1:7])
        stage, err, leftovers = words[7], int(words[8]), int(words[9])
        failure = None
        if stage != "-":
            failure = "; ".join(p for p in (_STAGES.get(stage, stage), os.strerror(err)) if p)
        return Ran(wall_ns=wall, status=status, cpu_ns=(utime + stime) * 1000,
                   maxrss_kib=peak, timed_out=bool(timed_out), failure=failure,
                   leftovers=leftovers)

    def floor_kib(self) -> int:
        """The peak RSS a run forked now starts from (no run's reads below it)."""
        words = self._ask(b"F", b"").split()
        if len(words) != 2 or words[0] != "F" or int(words[1]) < 0:
            raise ForkServerError(f"the fork server answered {' '.join(words)[:120]!r}")
        return int(words[1])

    def cpu_s(self) -> float:
        """CPU time the fork server and the runs it reaped used so far (the kernel passes it
        up to this process only when the fork server ends)."""
        words = self._ask(b"T", b"").split()
        if len(words) != 2 or words[0] != "T":
            raise ForkServerError(f"the fork server answered {' '.join(words)[:120]!r}")
        return int(words[1]) / 1e6

    def open_counter(self, attr: bytes) -> int:
        """A perf counter the fork server opened on itself (``attr``: a perf_event_attr),
        as a descriptor of this process; OSError with the kernel's errno where it cannot."""
        self._send(b"P", attr, ())
        self._wait(ANSWER_GRACE_S)
        data, fds, _, _ = socket.recv_fds(self._sock, _ANSWER_LIMIT, 1)
        self._buffer += data
        words = self._line().split()
        if len(words) != 2 or words[0] != "P":
            for fd in fds:
                os.close(fd)
            raise ForkServerError(f"the fork server answered {' '.join(words)[:120]!r}")
        if int(words[1]) != 0 or not fds:
            raise OSError(int(words[1]), os.strerror(int(words[1])))
        os.set_inheritable(fds[0], False)
        return fds[0]

    def close(self) -> None:
        """End the fork server (closing its socket ends it) and reap it."""
        if self._sock.fileno() >= 0:
            self._sock.close()
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass

    def _ask(self, command: bytes, payload: bytes, fds: Sequence[int] = (),
             wait_s: float = ANSWER_GRACE_S) -> str:
        self._send(command, payload, fds)
        return self._line(wait_s)

    def _send(self, command: bytes, payload: bytes, fds: Sequence[int]) -> None:
        header = command + b"\0\0\0" + struct.pack("=I", len(payload))
        try:
            sent = socket.send_fds(self._sock, [header + payload], list(fds))
            if sent < len(header) + len(payload):
                self._sock.sendall((header + payload)[sent:])
        except OSError as exc:
            raise ForkServerError(f"the fork server stopped ({exc.strerror or exc})") from None

    def _wait(self, wait_s: float) -> None:
        """Wait until the fork server has answered something; after ``wait_s``, kill it
        and raise ForkServerError."""
        poller = select.poll()
        poller.register(self._sock.fileno(), select.POLLIN)
        if not poller.poll(_timeout_ms(wait_s)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            raise ForkServerError(f"the fork server did not answer within {wait_s:.0f} s "
                                  "(a run stopped it?), and was ended")

    def _line(self, wait_s: float = ANSWER_GRACE_S) -> str:
        """The next line the fork server answers (``_wait`` for each part of it)."""
        while b"\n" not in self._buffer:
            self._wait(wait_s)
            try:
                data = self._sock.recv(_ANSWER_LIMIT)
            except OSError as exc:
                raise ForkServerError(f"the fork server stopped ({exc.strerror or exc})") from None
            if not data:
                raise ForkServerError("the fork server stopped")
            self._buffer += data
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode(errors="replace")


def _timeout_ms(timeout_s: float) -> int:
    return min(POLL_MAX_MS, max(0, math.ceil(timeout_s * 1000)))
