"""What the machine was like while measuring: CPU, kernel, governor, load, and warnings.

A run taken with other work on the machine measures that work as well as the code,
so the load average is recorded before and after, and a 1-minute load above 1 is a
warning carried into the results file and the report.
"""

from __future__ import annotations

import hashlib
import os
import platform
import resource
import socket
import time
from dataclasses import dataclass, replace
from pathlib import Path

from benchbot.core.model import Environment, Machine

LOAD_WARNING = 1.0  # benchbot doctor: a 1-minute load above this is other work
# Warn when other processes used more than this many CPUs on average while measuring.
OTHER_CPU_WARNING = 0.25
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def cpu_model() -> str:
    """Return the CPU's model name as the kernel reports it."""
    info = _read("/proc/cpuinfo") or ""
    for line in info.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "Hardware", "cpu model"):
            return value.strip()
    return platform.processor() or platform.machine() or "unknown"


def identity() -> Machine:
    """This machine: its host name, and an id made from /etc/machine-id (which systemd
    keeps for the life of an installation) and the host name, hashed so that the file
    never holds the machine id itself. Where there is no machine id, the host name and
    the CPU's model stand in for it."""
    hostname = (socket.gethostname() or "unknown")[:64]
    secret = _read("/etc/machine-id") or _read("/var/lib/dbus/machine-id") or cpu_model()
    digest = hashlib.sha256(f"benchbot machine\n{secret}\n{hostname}".encode()).hexdigest()
    return Machine(hostname=hostname, id=digest[:12])


def governor() -> str | None:
    """Return cpu0's frequency governor, or None where the kernel exposes none."""
    return _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")


def load_average() -> list[float]:
    """Return the 1, 5 and 15 minute load averages, rounded to 2 places."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return [0.0, 0.0, 0.0]


def usable_cores() -> int:
    """Return how many CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def usable_cpus() -> set[int]:
    """The CPU numbers this process may run on."""
    try:
        return set(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return set(range(os.cpu_count() or 1))


def cpu_list(cpus: set[int]) -> str:
    """A CPU set as Linux writes it: {0, 1, 2, 5} -> "0-2,5"."""
    runs: list[list[int]] = []
    for cpu in sorted(cpus):
        if runs and cpu == runs[-1][-1] + 1:
            runs[-1].append(cpu)
        else:
            runs.append([cpu])
    return ",".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


@dataclass(frozen=True, slots=True)
class Before:
    """The machine as measuring begins: what the results file says of it, and the clocks
    that tell, when it ends, how much CPU other processes used meanwhile."""

    environment: Environment
    busy_s: float | None  # all CPUs' busy time so far (/proc/stat)
    own_s: float  # this process's and its reaped children's CPU time so far
    wall_s: float


def snapshot() -> Before:
    """Describe the machine now, before measuring."""
    return Before(
        environment=Environment(
            cpu=cpu_model(), cores=usable_cores(),
            kernel=f"{platform.system()} {platform.release()}",
            python=platform.python_version(), governor=governor(),
            load_before=tuple(load_average()), machine=identity(),
        ),
        busy_s=busy_cpu_seconds(), own_s=own_cpu_seconds(), wall_s=time.monotonic(),
    )


def busy_cpu_seconds() -> float | None:
    """CPU time all CPUs spent busy since boot (user, nice, system, interrupts, and time a
    VM's CPU was stolen by others), from /proc/stat; None where it cannot be read."""
    text = _read("/proc/stat")
    if not text:
        return None
    fields = text.splitlines()[0].split()
    if fields[0] != "cpu" or len(fields) < 9:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / _CLOCK_TICKS


def own_cpu_seconds() -> float:
    """CPU time of this process and of every child it has waited for (and theirs)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def own_peak_rss_kib() -> int:
    """This process's peak resident set size.

    Note: a child started with vfork/posix_spawn (or fork) reports in its rusage
    ``max(its own peak, the parent's peak at exec)``, because Linux records the old
    address space's high-water mark at exec. A workload's ``maxrss_kib`` at or below this
    figure is therefore only an upper bound; the results file records it as
    ``environment.maxrss_floor_kib``.
    """
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def other_cpu(before: Before, unreaped_s: float = 0.0) -> float | None:
    """How many CPUs' worth of other processes' work ran while measuring (0.0 on a quiet
    machine): all busy time, less benchbot's own and that of everything it ran.
    ``unreaped_s``: CPU time of benchbot's own work that the kernel does not pass up to it
    when it reaps a child (the sandbox's worker and its runs: see WorkerSpawner.close).

    Note: the load average was used first. A benchbot run keeps one core busy, so it reads
    near 1 after (and, for the next run, before) any comparison, and warned every time.
    """
    busy_now = busy_cpu_seconds()
    elapsed = time.monotonic() - before.wall_s
    if busy_now is None or before.busy_s is None or elapsed <= 0:
        return None
    others = (busy_now - before.busy_s) - (own_cpu_seconds() - before.own_s) - unreaped_s
    return max(0.0, others / elapsed)


def finish(before: Before, unreaped_s: float = 0.0, *,
           maxrss_floor_kib: int | None = None) -> Environment:
    """The environment after measuring: the load, the memory floor (the spawner's own peak
    RSS: the sandbox's workers', else this process's), other processes' CPU use
    (``other_cpu``), and the warnings a reader should see."""
    env = replace(before.environment, load_after=tuple(load_average()),
                  maxrss_floor_kib=maxrss_floor_kib or own_peak_rss_kib(),
                  other_cpu=other_cpu(before, unreaped_s))
    return replace(env, warnings=tuple(warnings(env)))


def warnings(env: Environment) -> list[str]:
    """What about this machine makes its figures less trustworthy, in words."""
    found: list[str] = []
    if env.other_cpu is not None and env.other_cpu > OTHER_CPU_WARNING:
        found.append(
            f"other processes kept {env.other_cpu:.2f} CPUs busy on average while benchbot "
            "measured: their work was measured too"
        )
    if env.governor and env.governor != "performance":
        found.append(
            f"CPU frequency governor is '{env.governor}', not 'performance': clock ramp-up adds noise"
        )
    if env.cores < 2:
        found.append("only one CPU is usable: the measured program shares it with benchbot")
    return found
