"""What the sandbox's rules cost: two benchbot sources, measured in turns on one machine.

Issue 27 changed how the sandbox starts (the measuring worker is bubblewrap's PID 1, a
seccomp filter from a memfd, /proc/keys masked and /proc/sys bound read-only) and asked
for no measurable cost to a run. Each round measures, for each source in turn (so that
a busy machine weighs on both alike):

- **worker start**: ``sandbox.WorkerSpawner`` for two places, from its making to
  ``ready()`` (two bwraps and two Pythons), the median of ``STARTS``;
- **build start**: one build-wrapped ``/bin/true`` (bwrap, the filter, the mounts), the
  median of ``STARTS``;
- **floor**: ``/bin/true`` timed by the sandboxed worker, spawn to reap (inside the timed
  region: where the filter would show), the median of ``FLOOR_RUNS``;
- **per run**: ``overhead.short_runs``, a whole ``benchbot compare --runs 1000`` of
  ``/bin/true``: what benchbot adds to each run outside the timed region.

And once, for the seccomp filter alone (``syscall_cost``): the CPU time of a C program
making 2,000,000 ``getppid`` calls in bubblewrap without a filter, with a filter that
allows everything, and with ``benchbot.sandbox.seccomp``'s, in turns: what a system call of the
code under test costs with the filter (inside the timed region, in both arms alike).

    python -m benchmarks.sandbox_cost BEFORE_SRC [AFTER_SRC] [--rounds N]

(as a module, from the repository's root: run as a script, ``benchmarks/bisect.py``
would stand in for the standard library's ``bisect``).

BEFORE_SRC and AFTER_SRC are ``src`` directories (``git archive main src | tar -x -C
/tmp/main``); AFTER_SRC defaults to this checkout's. Writes
``benchmarks/results/sandbox-cost.json`` and prints a table with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.overhead import SRC, short_runs

STARTS = 15
FLOOR_RUNS = 2000
OUT = Path(__file__).resolve().parent / "results" / "sandbox-cost.json"

# Run in a fresh interpreter with PYTHONPATH at the source measured; prints JSON.
PROBE = r"""
import json, os, statistics, subprocess, sys, tempfile, time
from pathlib import Path
from benchbot.sandbox import bwrap as sandbox
from benchbot.sandbox.spawn import SpawnRequest
starts, floor = int(sys.argv[1]), int(sys.argv[2])
box = sandbox.choose("on")
env = sandbox.clean_env(os.environ)
worker_ms, build_ms = [], []
with tempfile.TemporaryDirectory() as tmp:
    a, b = Path(tmp, "a"), Path(tmp, "b")
    a.mkdir(); b.mkdir()
    for i in range(starts):
        scratch = Path(tmp, f"s{i}"); scratch.mkdir()
        t = time.perf_counter()
        spawner = sandbox.WorkerSpawner(box, scratch, env, places=[a, b])
        spawner.ready()
        worker_ms.append((time.perf_counter() - t) * 1e3)
        spawner.close()
        fds = (sandbox.filter_fd(),) if hasattr(sandbox, "filter_fd") else ()
        extra = {"seccomp_fd": fds[0]} if fds else {}
        argv = box.wrap(["/bin/true"], cwd=a, writable=[a], network=False, **extra)
        t = time.perf_counter()
        subprocess.run(argv, check=True, pass_fds=fds, stdin=subprocess.DEVNULL)
        build_ms.append((time.perf_counter() - t) * 1e3)
        for fd in fds:
            os.close(fd)
    scratch = Path(tmp, "floor"); scratch.mkdir()
    spawner = sandbox.WorkerSpawner(box, scratch, env, places=[a])
    request = SpawnRequest(argv=("/bin/true",), cwd=str(a), env=tuple(box.adjust_env(env).items()),
                           timeout_s=10)
    walls = [spawner.spawn(request).wall_ns for _ in range(floor)]
    spawner.close()
print(json.dumps({"worker_start_ms": statistics.median(worker_ms),
                  "build_start_ms": statistics.median(build_ms),
                  "floor_us": statistics.median(walls) / 1e3}))
"""


SYSCALLS = 2_000_000
LOOP_C = f"""
#include <unistd.h>
#include <sys/syscall.h>
int main(void) {{ long s = 0; for (int i = 0; i < {SYSCALLS}; i++) s += syscall(SYS_getppid); return s == 0; }}
"""


def syscall_cost(rounds: int = 15) -> dict[str, Any]:
    """Median CPU ns per system call of the getppid loop in bwrap: no filter, a filter
    that allows everything (the kernel's cost of having one), and benchbot's."""
    import shutil
    import struct
    import tempfile

    from benchbot.sandbox import seccomp

    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return {"skipped": "no bubblewrap"}
    filters = {"none": None, "allow everything": struct.pack("=HBBI", 0x06, 0, 0, 0x7FFF0000),
               "benchbot.sandbox.seccomp": seccomp.program()}
    cpu: dict[str, list[float]] = {name: [] for name in filters}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "loop.c").write_text(LOOP_C)
        subprocess.run(["cc", "-O2", "-o", f"{tmp}/loop", f"{tmp}/loop.c"], check=True)
        base = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                "--unshare-pid", "--die-with-parent", "--as-pid-1"]
        for r in range(rounds):
            for name in list(filters) if r % 2 == 0 else list(reversed(filters)):
                fds: tuple[int, ...] = ()
                argv = list(base)
                program = filters[name]
                if program is not None:
                    fd = os.memfd_create("filter")
                    os.write(fd, program)
                    os.lseek(fd, 0, os.SEEK_SET)
                    fds, argv = (fd,), [*argv, "--seccomp", str(fd)]
                proc = subprocess.Popen([*argv, f"{tmp}/loop"], pass_fds=fds)
                _, _, usage = os.wait4(proc.pid, 0)
                proc.returncode = 0
                for fd in fds:
                    os.close(fd)
                cpu[name].append((usage.ru_utime + usage.ru_stime) / SYSCALLS * 1e9)
    return {"ns_per_call": {name: statistics.median(v) for name, v in cpu.items()},
            "rounds": rounds, "calls": SYSCALLS}


def probe(src: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, "-c", PROBE, str(STARTS), str(FLOOR_RUNS)], env=env,
                         check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out))


def measure(sources: dict[str, Path], rounds: int) -> dict[str, Any]:
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in sources}
    loads = []
    for r in range(rounds):
        order = list(sources) if r % 2 == 0 else list(reversed(sources))
        for name in order:
            loads.append(Path("/proc/loadavg").read_text().split()[:3])
            got = probe(sources[name])
            got["per_run_us"] = short_runs(repeats=1, src=sources[name])["beyond_us"]
            rows[name].append(got)
            print(f"round {r + 1}/{rounds} {name}: {got} load {loads[-1]}", flush=True)
    medians = {name: {k: statistics.median(row[k] for row in got) for k in got[0]}
               for name, got in rows.items()}
    loads.append(Path("/proc/loadavg").read_text().split()[:3])
    syscalls = syscall_cost()
    print(f"syscalls: {syscalls} load {loads[-1]}", flush=True)
    return {"sources": {k: str(v) for k, v in sources.items()}, "rounds": rounds,
            "syscalls": syscalls,
            "starts": STARTS, "floor_runs": FLOOR_RUNS, "rows": rows, "medians": medians,
            "loadavg": loads, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path, nargs="?", default=SRC)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    result = measure({"before": args.before, "after": args.after}, args.rounds)
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    before, after = result["medians"]["before"], result["medians"]["after"]
    print(f"{'':18}{'before':>10}{'after':>10}{'after/before':>14}")
    for key in before:
        print(f"{key:18}{before[key]:10.2f}{after[key]:10.2f}{after[key] / before[key]:14.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
