"""What the machine was like while measuring: CPU, kernel, governor, load, and warnings.

A run taken with other work on the machine measures that work as well as the code,
so the load average is recorded before and after, and a 1-minute load above 1 is a
warning carried into the results file and the report.
"""

from __future__ import annotations

import os
import platform
import resource
from pathlib import Path
from typing import Any

LOAD_WARNING = 1.0


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


def snapshot() -> dict[str, Any]:
    """Describe the machine now: the part of `environment` taken before measuring."""
    return {
        "cpu": cpu_model(),
        "cores": usable_cores(),
        "kernel": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "governor": governor(),
        "load_before": load_average(),
    }


def own_peak_rss_kib() -> int:
    """This process's peak resident set size.

    Note: a child started with vfork/posix_spawn (or fork) reports in its rusage
    ``max(its own peak, the parent's peak at exec)``, because Linux records the old
    address space's high-water mark at exec. A workload's ``maxrss_kib`` at or below this
    figure is therefore only an upper bound; the results file records it as
    ``environment.maxrss_floor_kib``.
    """
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def finish(env: dict[str, Any]) -> dict[str, Any]:
    """Add the load after measuring, the memory floor, and the warnings a reader should see."""
    env = {**env, "load_after": load_average(), "maxrss_floor_kib": own_peak_rss_kib()}
    env["warnings"] = warnings(env)
    return env


def warnings(env: dict[str, Any]) -> list[str]:
    """Return what about this machine makes its figures less trustworthy, in words."""
    found: list[str] = []
    for when in ("load_before", "load_after"):
        load = env.get(when)
        if load and load[0] > LOAD_WARNING:
            found.append(
                f"1-minute load average was {load[0]:.2f} {when.split('_')[1]} measuring "
                f"(above {LOAD_WARNING:.0f}): other work on this machine was measured too"
            )
    gov = env.get("governor")
    if gov and gov not in ("performance",):
        found.append(
            f"CPU frequency governor is '{gov}', not 'performance': clock ramp-up adds noise"
        )
    if env.get("cores", 2) < 2:
        found.append("only one CPU is usable: the measured program shares it with benchbot")
    return found
