"""Where the time went: a sampled profile of one arm's runs, for a change in time but not in work.

Instruction counts say which functions do more *work*; a change of the memory access
pattern (the same instructions, more cache misses), of locking or of a system call's
cost moves time alone, and only a profile of time finds it. This module samples with
``perf record -e cpu-clock``: the kernel's software clock, which needs no hardware
counter (this VM has none) and interrupts the run every ``PERIOD_NS`` of CPU time it
uses, recording the stack (``--call-graph fp`` by default: frame pointers, cheap; the
innermost frame, which is all the per-function comparison uses, is exact either way).
What it measures is on-CPU time: a process waiting for I/O or a lock is not sampled.
A comparison makes one for each call whose work profile named nothing
(``benchbot.profiles.timing``); ``benchmarks/timeprofile.py`` measures it alone.

**Where the profile is made** (docs/security.md, "Time profiles"). ``perf`` runs outside
the sandbox and starts it: ``perf record -o <private>/perf.data -- bwrap … <run>``. The
sampling counters are opened by perf on the bubblewrap process before it starts and are
inherited by every process of the run (the kernel copies them at each fork; no
descriptor reaches the run); the samples go through the kernel's ring buffer into
perf, and perf writes them into a directory benchbot made outside everything the
sandbox shows (``tempfile.mkdtemp`` in benchbot's own temporary directory, which is not
in the sandbox's view: its ``/tmp`` is an empty one of its own). So no process of the run
can read, write or remove its profile, and it cannot stop the sampling: perf is outside
its PID namespace (it cannot be seen, signalled or traced), and the counters belong to
perf, so ``prctl(PR_TASK_PERF_EVENTS_DISABLE)``, which reaches only the counters a
process opened itself, does not touch them (and the sandbox's seccomp filter refuses it
anyway). Without the sandbox (``sandbox: off``), the run is a process of the same user
beside the file: the profile says so (``TimeProfile.confined``).

What the run does decide: the names. Symbols are read from the run's own binaries after
it ends (``perf script``, itself in a sandbox of the arm's view with nothing writable:
the binaries are untrusted input to perf's reader), and the code under test names its
functions as it likes; names are shown as text, escaped (``benchbot.report.flame``), and
never trusted.
bubblewrap's own start (its samples: the process named ``bwrap`` in bwrap's own code or
the kernel) is left out.

**Cost**: each profiled run is one more run of the arm with ``perf record`` around it:
perf's start and end, the sandbox and ``perf script`` cost 0.9 s a run on the 2-core VM
at load 6-9 (``benchmarks/timeprofile.py``, benchmarks/README.md section 19; perf runs
with ``--no-bpf-event``, which spares it a 1 s wait at exit). ``record`` makes ``runs``
runs, more while the samples hold under ``min_cpu_s``, within ``max_runs`` and
``budget_s``.
"""

from __future__ import annotations

import functools
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchbot.core.errors import BenchbotError
from benchbot.sandbox import bwrap as sandboxes

PERF = "perf"
EVENT = "cpu-clock"
PERIOD_NS = 1_000_000  # one sample per millisecond of CPU time
CALL_GRAPHS = ("fp", "dwarf")
# A function is named as carrying a change only when its time per run moved by at least
# this share of base's whole time per run, ...
MIN_MOVE = 0.02
# ... by more than NOISE_TIMES its move from base to base again, ...
NOISE_TIMES = 2.0
# ... and by more than Z standard errors of two Poisson counts (the samples).
Z = 4.0
KERNEL_DSO = "[kernel.kallsyms]"


@dataclass(frozen=True, slots=True)
class TimeProbe:
    """Whether time profiling works here; if not, why (one line) and what to do."""

    works: bool
    perf: str | None
    version: str | None
    reason: str | None = None
    fix: str | None = None


@functools.lru_cache(maxsize=1)
def probe() -> TimeProbe:
    """Try ``perf record -e cpu-clock`` once on a short busy loop and remember the answer."""
    return probe_with(shutil.which(PERF))


def probe_with(perf: str | None, event: str = EVENT) -> TimeProbe:
    """``probe`` with ``perf`` at the path given (None: not installed), sampling ``event``."""
    if perf is None:
        return TimeProbe(False, None, None, "perf is not installed",
                         "install it: apt-get install linux-perf (Ubuntu: linux-tools-generic)")
    try:
        said = subprocess.run([perf, "--version"], capture_output=True, text=True,
                              timeout=30, check=False).stdout.strip()
        version = said.splitlines()[0] if said else None
    except (OSError, subprocess.TimeoutExpired) as exc:
        return TimeProbe(False, perf, None, f"perf cannot be run: {exc}", None)
    with tempfile.TemporaryDirectory(prefix="benchbot-probe-") as tmp:
        data = Path(tmp) / "perf.data"
        busy = [sys.executable, "-c", "import time\nt = time.process_time()\n"
                "while time.process_time() - t < 0.05: pass"]
        try:
            rec = subprocess.run([*_record_argv(perf, data, "fp", event), "--", *busy],
                                 capture_output=True, text=True, timeout=60, check=False,
                                 stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return TimeProbe(False, perf, version, f"perf record failed: {exc}", None)
        if rec.returncode != 0:
            return TimeProbe(False, perf, version, _record_problem(rec.stderr, event),
                             _record_fix())
        try:
            script = _script(perf, data)
        except TimeProfileError as exc:
            return TimeProbe(False, perf, version, str(exc), None)
        if not fold(script):
            return TimeProbe(False, perf, version, f"perf record -e {event} took no sample "
                             "of a 50 ms busy loop", _record_fix())
    return TimeProbe(True, perf, version)


def _record_problem(stderr: str, event: str = EVENT) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    paranoid = _paranoid()
    said = next((line for line in lines if line.rstrip(":") not in ("Error", "")), "no message")
    where = f" (kernel.perf_event_paranoid is {paranoid})" if paranoid is not None else ""
    return f"perf record -e {event} cannot sample here{where}: {said[:200]}"


def _record_fix() -> str:
    return ("let the runner's user sample its own processes: sudo sysctl -w "
            "kernel.perf_event_paranoid=2 (in a container: allow perf_event_open in its "
            "seccomp profile)")


def _paranoid() -> int | None:
    try:
        return int(Path("/proc/sys/kernel/perf_event_paranoid").read_text().strip())
    except (OSError, ValueError):
        return None


def _record_argv(perf: str, data: Path, call_graph: str, event: str = EVENT) -> list[str]:
    graph = "dwarf,16384" if call_graph == "dwarf" else call_graph
    return [perf, "record", "--quiet", "--no-bpf-event", "-e", event, "-c", str(PERIOD_NS), "--call-graph", graph,
            "--no-buildid-cache", "-o", str(data)]


# perf script's whole environment (``_script``)
_SCRIPT_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C"}


def _script(perf: str, data: Path, *, box: sandboxes.Sandbox | None = None,
            cwd: Path | None = None, shown: Sequence[Path] = (), git_dir: Path | None = None,
            git_config: Path | None = None, masked: Sequence[str] = ()) -> str:
    """``perf script``'s reading of a profile. It reads the run's binaries for their
    symbols: untrusted input to perf's ELF reader. So it runs in a sandbox of the arm's own
    view where there is one (``box``: nothing writable, no network, the seccomp filter;
    ``shown``, the directories the profiled runs could write, and the profile's file
    read-only; ``git_dir``, ``git_config`` and ``masked`` as the runs had them), and gets
    no environment of benchbot's either way (no token, no HOME of the runner's and so no
    ~/.perfconfig): a path to find its helpers and the C locale, nothing else
    (docs/security.md, "Time profiles")."""
    argv = [perf, "script", "-i", str(data), "--show-task-events",
            "-F", "comm,pid,period,ip,sym,dso", "--no-inline"]
    env = dict(_SCRIPT_ENV)
    fd = -1
    try:
        if box is not None and box.active:
            fd = sandboxes.filter_fd()
            argv = box.wrap(argv, cwd=cwd or Path("/"), writable=(), network=False,
                            seccomp_fd=fd, git_dir=git_dir, git_config=git_config,
                            read_only=(*shown, data), masked=masked)
            env = {**env, "HOME": box.home, "TMPDIR": "/tmp"}
        proc = subprocess.run(argv, capture_output=True, text=True, errors="replace",
                              timeout=300, check=False, stdin=subprocess.DEVNULL, env=env,
                              pass_fds=(fd,) if fd >= 0 else ())
    except subprocess.TimeoutExpired:
        raise TimeProfileError("perf script took longer than 300 s to read a profile") from None
    finally:
        if fd >= 0:
            os.close(fd)
    if proc.returncode != 0:
        said = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        raise TimeProfileError(f"perf script could not read the profile: {said[:200]}")
    return proc.stdout


_EXEC = re.compile(r"\sPERF_RECORD_COMM exec: .*?:(\d+)/\d+\s*$")
_FORK = re.compile(r"\sPERF_RECORD_FORK\((\d+):\d+\):\((\d+):\d+\)\s*$")


def fold(script: str, *, wrapper_execs: int = 0) -> dict[str, int]:
    """``perf script --show-task-events -F comm,pid,period,ip,sym,dso`` output -> folded
    stacks (outermost frame first, joined by ``;``) -> CPU time in nanoseconds (the
    samples' periods).

    Only the run's processes are sampled: the first ``wrapper_execs`` programs perf
    started (bubblewrap: 1) are not the run; a process is the run's from its exec of
    another program on, and so is every process it forks. That is decided by the kernel's
    records of exec and fork, not by a process's name, which a process can change.

    A frame is its symbol, or ``[dso's file name]`` where the symbol is unknown; kernel
    frames end in ``_[k]`` (as Gregg's ``stackcollapse-perf.pl --kernel``); a ``;`` in a
    name becomes ``:``."""
    out: dict[str, int] = {}
    execs = 0
    run: set[str] = set()
    sample: tuple[str, int] | None = None  # (pid, period) of the sample being read
    frames: list[str] = []
    for line in [*script.split("\n"), ""]:
        if "PERF_RECORD_" in line:
            if (fork := _FORK.search(line)) is not None:
                if fork.group(2) in run:
                    run.add(fork.group(1))
            elif (exe := _EXEC.search(line)) is not None:
                execs += 1
                if execs > wrapper_execs:
                    run.add(exe.group(1))
            continue
        if line[:1].isspace() and line.strip():
            if sample is not None:
                frames.append(_frame(line))
            continue
        if sample is not None and sample[0] in run:
            stack = ";".join(reversed(frames)) or "[unknown]"
            out[stack] = out.get(stack, 0) + sample[1]
        sample, frames = _header(line), []
    return out


def _header(line: str) -> tuple[str, int] | None:
    """A sample's first line (``COMM PID PERIOD``) -> (pid, period)."""
    words = line.split()
    if len(words) < 3 or not words[-2].isdigit() or not words[-1].isdigit():
        return None
    return words[-2], int(words[-1])


def _frame(line: str) -> str:
    """One line of a sample's stack (``ADDR SYM (DSO)``) -> the frame's name."""
    body = line.strip()
    parts = body.split(" ", 1)
    rest = parts[1] if len(parts) > 1 else ""
    sym, dso = rest, ""
    if rest.endswith(")") and " (" in rest:
        sym, dso = rest.rsplit(" (", 1)
        dso = dso[:-1]
    elif rest.startswith("(") and rest.endswith(")"):
        sym, dso = "", rest[1:-1]
    sym = sym.strip()
    if not sym or sym == "[unknown]":
        sym = f"[{os.path.basename(dso) or 'unknown'}]"
    name = sym.replace(";", ":")
    return name + "_[k]" if dso == KERNEL_DSO else name


def self_costs(folded: Mapping[str, int]) -> dict[str, int]:
    """Each function's self cost: the folded stacks' values summed by innermost frame."""
    out: dict[str, int] = {}
    for stack, value in folded.items():
        leaf = stack.rsplit(";", 1)[-1]
        out[leaf] = out.get(leaf, 0) + value
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeProfile:
    """One arm's sampled runs: folded stacks -> CPU nanoseconds, summed over ``runs``."""

    folded: Mapping[str, int]
    runs: int
    samples: int
    period_ns: int
    wall_s: float  # what making the profile cost: perf, the sandbox, the runs, the reading
    confined: bool  # made where no process of the run could reach it (the sandbox)
    failures: tuple[str, ...] = ()  # runs that did not exit 0 (kept: their time counts)

    def folded_per_run(self) -> dict[str, int]:
        """The folded stacks' CPU nanoseconds in one run (the flame graph's input:
        ``benchbot.report.flame.render(base.folded_per_run(), head.folded_per_run(),
        unit="ns", same_within=flame.SAMPLED_SAME_WITHIN, floor=flame.SAMPLED_FLOOR)``)."""
        return {stack: round(value / self.runs) for stack, value in self.folded.items()} if self.runs else {}

    def self_ns_per_run(self) -> dict[str, float]:
        """Each function's self CPU time in one run, in nanoseconds."""
        return {name: value / self.runs for name, value in self_costs(self.folded).items()}

    def total_ns_per_run(self) -> float:
        return sum(self.folded.values()) / self.runs if self.runs else 0.0


def record(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
           sandbox: sandboxes.Sandbox, writable: Sequence[Path] = (), runs: int = 3,
           min_cpu_s: float = 0.5, max_runs: int = 10, budget_s: float = 30.0,
           timeout_s: float = 60.0, call_graph: str = "fp",
           perf: str | None = None, git_dir: Path | None = None,
           git_config: Path | None = None, masked: Sequence[str] = ()) -> TimeProfile:
    """Run ``argv`` (one arm's command, in ``cwd`` with ``env``) under ``perf record`` at
    least ``runs`` times, and more until the samples hold ``min_cpu_s`` of CPU time (at
    most ``max_runs``, and no run started after ``budget_s`` seconds), each run a fresh
    sandbox (``sandbox.wrap``: only ``writable`` writable, no network; ``git_dir``,
    ``git_config`` and ``masked`` as the measured runs' worker has them) started by perf,
    whose file lies where no run can reach it.
    A run that fails is kept and said (``failures``); perf's own failure raises
    ``TimeProfileError``."""
    if call_graph not in CALL_GRAPHS:
        raise ValueError(f"call_graph must be one of {CALL_GRAPHS}, not {call_graph!r}")
    found = probe() if perf is None else probe_with(perf)
    if not found.works or found.perf is None:
        raise TimeProfileError(f"time profiling does not work here: {found.reason}")
    started = time.monotonic()
    folded: dict[str, int] = {}
    failures: list[str] = []
    done = 0
    with tempfile.TemporaryDirectory(prefix="benchbot-timeprofile-") as private:
        os.chmod(private, 0o700)
        data = Path(private) / "perf.data"
        while done < runs or (done < max_runs and sum(folded.values()) < min_cpu_s * 1e9
                              and time.monotonic() - started < budget_s):
            code = _one_run(found.perf, data, argv, cwd=cwd, env=env, box=sandbox,
                            writable=writable, timeout_s=timeout_s, call_graph=call_graph,
                            git_dir=git_dir, git_config=git_config, masked=masked)
            if code != 0:
                failures.append(f"run {done + 1}: exit {code}")
            script = _script(found.perf, data, box=sandbox, cwd=cwd,
                             shown=(cwd, *writable), git_dir=git_dir,
                             git_config=git_config, masked=masked)
            for stack, value in fold(script, wrapper_execs=1 if sandbox.active else 0).items():
                folded[stack] = folded.get(stack, 0) + value
            data.unlink(missing_ok=True)
            done += 1
    return TimeProfile(folded=folded, runs=done, samples=sum(folded.values()) // PERIOD_NS,
                       period_ns=PERIOD_NS, wall_s=time.monotonic() - started,
                       confined=sandbox.active, failures=tuple(failures))


class TimeProfileError(BenchbotError):
    """perf could not make or read the profile (not a failure of the code under test)."""


def _one_run(perf: str, data: Path, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
             box: sandboxes.Sandbox, writable: Sequence[Path], timeout_s: float,
             call_graph: str, git_dir: Path | None = None, git_config: Path | None = None,
             masked: Sequence[str] = ()) -> int:
    fd = sandboxes.filter_fd() if box.active else -1
    try:
        inner = box.wrap(argv, cwd=cwd, writable=writable, network=False, seccomp_fd=fd,
                         git_dir=git_dir, git_config=git_config, masked=masked)
        full = [*_record_argv(perf, data, call_graph), "--", *inner]
        proc = subprocess.Popen(full, cwd=cwd, env=box.adjust_env(env) if box.active else dict(env),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, pass_fds=(fd,) if fd >= 0 else (),
                                start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout_s + 30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise TimeProfileError(f"a profiled run took longer than {timeout_s + 30:.0f} s") from None
    finally:
        if fd >= 0:
            os.close(fd)
    if not data.exists():
        raise TimeProfileError(f"perf record wrote no profile: {_record_problem(err.decode(errors='replace'))}")
    return proc.returncode


@dataclass(frozen=True, slots=True)
class FunctionTime:
    """One function's self CPU time per run in each arm (ns), and whether it is named."""

    name: str
    base_ns: float
    head_ns: float
    base_again_ns: float | None
    noise_ns: float  # the move this function's time makes without a change (see ``compare``)
    share: float | None  # of the whole change of time per run; None where that is zero
    named: bool

    @property
    def delta_ns(self) -> float:
        return self.head_ns - self.base_ns


@dataclass(frozen=True, slots=True)
class TimeComparison:
    """Per-function time of head against base; ``named``: those that moved beyond noise,
    largest move first."""

    functions: tuple[FunctionTime, ...]
    base_ns: float
    head_ns: float
    guarded: bool  # base again was profiled: each function's own noise is known

    @property
    def named(self) -> tuple[FunctionTime, ...]:
        return tuple(f for f in self.functions if f.named)


def compare(base: TimeProfile, head: TimeProfile, base_again: TimeProfile | None = None,
            *, min_move: float = MIN_MOVE, noise_times: float = NOISE_TIMES,
            z: float = Z) -> TimeComparison:
    """Each function's self CPU time per run, head against base. A function is named
    only where its move is at least ``min_move`` of base's whole time per run, beyond
    ``z`` standard errors of its sample counts (Poisson: the samples of a function in
    ``runs`` runs), and beyond ``noise_times`` its move from base to base again (where
    base again was profiled: the machine's own drift between two profiles of the same
    program)."""
    b, h = base.self_ns_per_run(), head.self_ns_per_run()
    a = base_again.self_ns_per_run() if base_again is not None else None
    total_b, total_h = base.total_ns_per_run(), head.total_ns_per_run()
    change = total_h - total_b
    out = []
    for name in sorted(set(b) | set(h) | set(a or {})):
        bn, hn = b.get(name, 0.0), h.get(name, 0.0)
        an = a.get(name, 0.0) if a is not None else None
        # Standard error of a per-run time made of k samples of period p over r runs:
        # p * sqrt(k) / r.
        se = math.hypot(base.period_ns * math.sqrt(bn * base.runs / base.period_ns) / base.runs,
                        head.period_ns * math.sqrt(hn * head.runs / head.period_ns) / head.runs)
        aa = abs(an - bn) if an is not None else 0.0
        noise = max(z * se, noise_times * aa)
        move = abs(hn - bn)
        named = move >= min_move * total_b and move > noise
        out.append(FunctionTime(name, bn, hn, an, noise, (hn - bn) / change if change else None,
                                named))
    out.sort(key=lambda f: (-abs(f.delta_ns), f.name))
    return TimeComparison(functions=tuple(out), base_ns=total_b, head_ns=total_h,
                          guarded=base_again is not None)


def only_work_note(found: TimeProbe) -> str:
    """The report's line where time could not be profiled."""
    return f"only work was profiled: {found.reason}"
