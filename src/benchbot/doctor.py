"""``benchbot doctor``: inspects this machine as a benchmark runner and says what to fix."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from benchbot.run import machine
from benchbot.sandbox import bwrap, counting, fsview
from benchbot.sandbox.spawn import ProcessSpawner

Level = Literal["ok", "warn", "info"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing checked: how it stands and, if it matters, what to do."""

    level: Level
    what: str
    fix: str | None = None


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def inspect() -> list[Finding]:
    """Check the things that make timings on this machine noisy or wrong."""
    found: list[Finding] = []
    cores = machine.usable_cores()
    found.append(Finding("ok" if cores >= 2 else "warn", f"{cores} usable CPU cores ({machine.cpu_model()})",
                         None if cores >= 2 else "give the runner at least 2 cores: one for benchbot, one for the workload"))
    load = machine.load_average()
    busy = load[0] > machine.LOAD_WARNING
    found.append(Finding("warn" if busy else "ok", f"1-minute load average {load[0]:.2f}",
                         "stop other work on this machine, or give it a dedicated runner" if busy else None))
    gov = machine.governor()
    if gov is None:
        found.append(Finding("info", "CPU frequency governor not exposed (a VM or container?)"))
    else:
        good = gov == "performance"
        found.append(Finding("ok" if good else "warn", f"CPU frequency governor: {gov}",
                             None if good else "sudo cpupower frequency-set -g performance"))
    no_turbo = _read("/sys/devices/system/cpu/intel_pstate/no_turbo")
    boost = _read("/sys/devices/system/cpu/cpufreq/boost")
    if no_turbo == "0" or boost == "1":
        found.append(Finding("warn", "turbo boost is on: the clock depends on temperature and load",
                             "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo"))
    smt = _read("/sys/devices/system/cpu/smt/active")
    if smt == "1":
        found.append(Finding("info", "SMT (hyper-threading) is on: a sibling thread can slow a workload",
                             "pin workloads (pin: in benchbot.yml) to cores whose siblings are idle"))
    isolated = _read("/sys/devices/system/cpu/isolated")
    found.append(Finding("ok" if isolated else "info",
                         f"isolated CPUs: {isolated}" if isolated else "no isolated CPUs",
                         None if isolated else "optional: boot with isolcpus=N and pin workloads there"))
    aslr = _read("/proc/sys/kernel/randomize_va_space")
    if aslr and aslr != "0":
        found.append(Finding("info", "address space layout randomisation is on: layout varies per process, "
                             "which interleaved pairs average out"))
    found.extend(sandbox_findings())
    found.extend(counting_findings())
    found.extend(memory_findings())
    for tool in ("git", "cc"):
        have = shutil.which(tool) is not None
        found.append(Finding("ok" if have else "warn", f"{tool} {'found' if have else 'not found'}",
                             None if have else f"install {tool}"))
    if os.environ.get("GITHUB_ACTIONS") == "true" and os.environ.get("RUNNER_ENVIRONMENT") == "github-hosted":
        found.append(Finding("warn", "a GitHub-hosted runner: shared VMs make timings noisy",
                             "use a dedicated self-hosted runner, one runner per machine"))
    return found


def sandbox_findings() -> list[Finding]:
    """Whether the code under test can be sandboxed here (bubblewrap and user namespaces)."""
    probe = bwrap.probe()
    out: list[Finding] = []
    if probe.works:
        out.append(Finding("ok", f"sandbox: {probe.version or 'bubblewrap'} works here "
                                 "(the build and the runs get their own PID, mount and network namespaces)"))
        out.extend(hidden_tool_findings(os.environ))
    else:
        out.append(Finding("warn", f"sandbox: {probe.problem}; with sandbox: auto the code under "
                                   "test runs unconfined (with a clean environment only), and "
                                   "benchbot github refuses to run it", probe.fix))
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        out.append(Finding("warn", "running as root: inside the sandbox the code under test is "
                                   "uid 0 too, and can read every file the sandbox shows, whatever its mode",
                           "run the runner as an unprivileged user"))
    return out


def counting_findings() -> list[Finding]:
    """Whether instructions can be counted here, and by which method ``counts: auto``
    takes: perf (the CPU's counters) or valgrind, tried where the runs would use it."""
    perf = counting.perf_probe()
    if perf is None:
        return [Finding("ok", "instruction counts: perf works here (hardware counters, user "
                              "space): counts: auto counts every measured run")]
    out = [Finding("info", f"instruction counts: perf cannot count here: {perf}",
                   _perf_fix(perf))]
    problem = _valgrind_problem()
    if problem is None:
        out.append(Finding("ok", "instruction counts: valgrind works here"
                                 f"{' in the sandbox' if bwrap.probe().works else ''}: "
                                 "counts: auto counts a few runs of each revision of workloads "
                                 f"whose run takes at most {counting.VALGRIND_MAX_RUN_S:g} s"))
    else:
        out.append(Finding("warn", f"instruction counts: {problem}, so counts: auto compares "
                                   "on time alone (instruction counts settle changes sooner)",
                           "apt-get install valgrind (dnf/zypper/pacman: valgrind)"))
    return out


def memory_findings() -> list[Finding]:
    """How a run's peak memory is measured here, and the floor no run reads below: the
    fork server's few hundred KiB (built with cc by benchbot, in the sandbox too, where
    its workers are shown it read-only), or else benchbot's own Python process, whose
    peak every run's includes."""
    with tempfile.TemporaryDirectory(prefix="benchbot-doctor-") as scratch:
        spawner = ProcessSpawner(Path(scratch))
        try:
            spawner.start()
            floor, method, served = (spawner.maxrss_floor_kib, spawner.floor_method,
                                     spawner.has_fork_server)
        finally:
            spawner.close()
    if not served:
        return [Finding("warn", f"peak memory: each run's peak RSS (ru_maxrss); {method}, "
                                f"about {floor / 1024:.1f} MiB, so a program's peak within "
                                "3% of that is not judged",
                        "install a C compiler (cc): benchbot builds its fork server with it")]
    return [Finding("ok", f"peak memory: each run's peak RSS (ru_maxrss); {method}, so no "
                          f"run's peak reads below its {floor / 1024:.2f} MiB (the floor of "
                          "the memory verdict)")]


def _perf_fix(problem: str) -> str | None:
    if "seccomp" in problem:
        return ("in a container: run it with a seccomp profile that allows perf_event_open "
                "(e.g. --security-opt seccomp=unconfined, or the default profile with "
                "perf_event_open added)")
    if "paranoid" in problem:
        return "sudo sysctl -w kernel.perf_event_paranoid=2"
    return None


def _valgrind_problem() -> str | None:
    """None where cachegrind counts /bin/true (in the sandbox, where it works), else why not."""
    import subprocess
    import tempfile

    env = bwrap.clean_env(os.environ)
    path = counting.find_valgrind(env)
    if path is None:
        return "valgrind is not installed (not on PATH)"
    with tempfile.TemporaryDirectory() as scratch:
        argv = counting.valgrind_argv(path, ["/bin/true"], Path(scratch))
        box = bwrap.choose("auto")
        fds: tuple[int, ...] = ()
        if box.active:
            if box.view is not None and not box.view.shows(path):
                return f"valgrind ({path}) is not visible in the sandbox"
            fds = (bwrap.filter_fd(),)
            argv = box.wrap(argv, cwd=Path(scratch), writable=[Path(scratch)], network=False,
                            seccomp_fd=fds[0])
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False,
                                  env=box.adjust_env(env), stdin=subprocess.DEVNULL,
                                  pass_fds=fds)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"valgrind did not run: {exc}"
        finally:
            for fd in fds:
                os.close(fd)
        said = counting.valgrind_said(Path(scratch))
        if proc.returncode != 0 or counting.read_valgrind(Path(scratch)) is None:
            why = said or (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            return f"valgrind does not work here: {why}"
    return None


def hidden_tool_findings(env: Mapping[str, str]) -> list[Finding]:
    """The tools on PATH that lead into a directory the sandbox does not show, one finding
    per directory (a build that calls one fails there with exit 127)."""
    tools = fsview.hidden_tools(fsview.allowed(env), env)
    return [Finding("warn", f"sandbox: {listed} on PATH {'lead' if ' ' in listed else 'leads'} into {into}, which the sandbox "
                            "does not show: a build that calls them fails there (exit 127)",
                    f"list {into} under sandbox.read_only in benchbot.yml")
            for into, listed in fsview.by_directory(tools).items()]


def format_findings(findings: list[Finding]) -> str:
    """Format findings as lines for a terminal."""
    marks = {"ok": "ok  ", "warn": "WARN", "info": "info"}
    lines = []
    for f in findings:
        lines.append(f"[{marks[f.level]}] {f.what}")
        if f.fix:
            lines.append(f"       fix: {f.fix}")
    warns = sum(f.level == "warn" for f in findings)
    lines.append(f"{warns} warning(s)" if warns else "this machine looks fit for benchmarking")
    return "\n".join(lines) + "\n"
