"""Peak memory without the spawner's floor (issue 30, item 4): which measure, at what cost.

    python -m benchmarks.memfloor [--reps 40] [--pairs 1000] [--sort-pairs 1500] [--name memfloor]

(a) Methods. Programs that touch 0, 1, 9 and 10 MiB once a page (a dynamic C program),
each measured ``--reps`` times by every way of reading a run's peak memory that works
here: ``ru_maxrss`` of a run started by benchbot's Python process (``posix_spawn``, the
old way), by the fork server (``benchbot.sandbox.forkserver``), by the sandbox's worker (which
uses the fork server); and, from a small C probe, by a fork from a small process, a vfork
from it, cgroup v1 ``memory.max_usage_in_bytes`` of a cgroup per run (the child moves
itself in before its exec; only where the memory controller is writable: root), the
final address space's ``VmHWM`` read at a ptrace stop at exit (``PTRACE_O_TRACEEXIT``),
and GNU time. Per method: the median peak of each program, the 10 MiB program's peak
over the 9 MiB one's (the truth is +1 MiB, +11%), the floor (the 0 MiB program's peak)
and the median wall time a run took.

(b) Timing. The fork server against the Python spawner, interleaved (the order
alternating), ``--pairs`` pairs on each of ``/bin/true`` (the floor of process timing) and the 9 MiB
program, and ``--sort-pairs`` of the signals study's 110 ms sort: each spawner's median and
fastest run, and the median per-pair ratio with its 95% interval (Hodges-Lehmann): does
the fork server move what a run measures?

Writes ``results/NAME.json`` and ``results/NAME.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from benchbot.run import machine
from benchbot.sandbox import bwrap
from benchbot.sandbox.spawn import ProcessSpawner, SpawnRequest
from benchbot.verdict import intervals
from benchmarks import signals

RESULTS = Path(__file__).resolve().parent / "results"
SIZES_KIB = (0, 1024, 9216, 10240)

TOUCH_C = r"""/* touch KIB: allocate KIB KiB and write one byte a page (its peak memory). */
#include <stdlib.h>
int main(int argc, char **argv)
{
    size_t kib = argc > 1 ? strtoul(argv[1], 0, 10) : 0;
    volatile char *b = malloc(kib * 1024 + 1);
    for (size_t i = 0; b && i < kib * 1024; i += 4096)
        b[i] = 1;
    return 0;
}
"""

# probe MODE CGROUP N PROGRAM ARGS...: N runs of PROGRAM, each line "wall_ns peak_kib".
PROBE_C = r"""#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
extern char **environ;
static long long now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}
static int put(const char *dir, const char *file, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_WRONLY);
    int ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    if (fd >= 0)
        close(fd);
    return ok ? 0 : -1;
}
static long get(const char *path, const char *key)
{
    char line[256];
    long value = -1;
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        if (!key)
            value = atol(line);
        else if (!strncmp(line, key, strlen(key)))
            value = atol(line + strlen(key));
    }
    if (f)
        fclose(f);
    return value;
}
int main(int argc, char **argv)
{
    const char *mode = argv[1], *cg = argv[2];
    int n = atoi(argv[3]);
    char **av = argv + 4, path[512];
    for (int i = 0; i < n; i++) {
        int cgroup = !strcmp(mode, "cgroup"), trace = !strcmp(mode, "ptrace");
        if (cgroup && put(cg, "memory.max_usage_in_bytes", "0") < 0)
            return 3;
        long long start = now();
        pid_t pid = !strcmp(mode, "vfork") ? vfork() : fork();
        if (pid == 0) {
            if (cgroup) {
                char me[32];
                snprintf(me, sizeof me, "%d", getpid());
                put(cg, "cgroup.procs", me);
            }
            if (trace)
                ptrace(PTRACE_TRACEME, 0, 0, 0);
            execve(av[0], av, environ);
            _exit(127);
        }
        int status;
        long peak = -1;
        struct rusage usage;
        if (trace) {
            waitpid(pid, &status, 0); /* the stop at exec */
            ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACEEXIT);
            ptrace(PTRACE_CONT, pid, 0, 0);
            waitpid(pid, &status, 0); /* the stop at exit: its address space is still there */
            snprintf(path, sizeof path, "/proc/%d/status", pid);
            peak = get(path, "VmHWM:");
            ptrace(PTRACE_CONT, pid, 0, 0);
        }
        wait4(pid, &status, 0, &usage);
        long long end = now();
        if (cgroup) {
            snprintf(path, sizeof path, "%s/memory.max_usage_in_bytes", cg);
            peak = get(path, NULL) / 1024;
        }
        printf("%lld %ld\n", end - start, trace || cgroup ? peak : usage.ru_maxrss);
    }
    return 0;
}
"""


def _compile(source: str, into: Path, name: str) -> Path:
    (into / f"{name}.c").write_text(source)
    subprocess.run(["cc", "-O2", "-o", str(into / name), str(into / f"{name}.c")], check=True,
                   capture_output=True)
    return into / name


def _cgroup_v1() -> Path | None:
    """A memory cgroup (v1) of our own, below this process's, where one can be made."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, where = line.split(":", 2)
        if "memory" in controllers.split(","):
            mine = Path("/sys/fs/cgroup/memory") / where.lstrip("/") / f"benchbot-memfloor-{os.getpid()}"
            try:
                mine.mkdir()
            except OSError:
                return None
            return mine
    return None


def _cgroup_v2_note() -> str:
    for root in (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup")):
        controllers = root / "cgroup.controllers"
        if controllers.is_file():
            have = controllers.read_text().split()
            if "memory" in have:
                return f"{root}: the memory controller is there (memory.peak: not measured here)"
            return (f"not measurable here: the cgroup2 hierarchy at {root} has no memory "
                    f"controller (controllers: {' '.join(have) or 'none'}; it is bound to v1)")
    return "not measurable here: no cgroup2 hierarchy"


def methods(scratch: Path, reps: int) -> dict[str, Any]:
    """(a): each method's peak of each program, its floor, the +1 MiB it sees, its wall."""
    touch = _compile(TOUCH_C, scratch, "touch")
    probe = _compile(PROBE_C, scratch, "probe")
    env = bwrap.clean_env(os.environ)
    cgroup = _cgroup_v1()
    readings: dict[str, dict[int, list[tuple[int, int]]]] = {}

    def spawner_runs(name: str, spawn: Callable[[SpawnRequest], Any]) -> None:
        for kib in SIZES_KIB:
            req = SpawnRequest(argv=(str(touch), str(kib)), cwd=str(scratch),
                               env=tuple(env.items()), timeout_s=30)
            spawn(req)  # warm-up
            runs = [spawn(req) for _ in range(reps)]
            readings.setdefault(name, {})[kib] = [(r.wall_ns, r.maxrss_kib) for r in runs]

    def probe_runs(name: str, mode: str) -> None:
        for kib in SIZES_KIB:
            out = subprocess.run([str(probe), mode, str(cgroup or "-"), str(reps + 1), str(touch),
                                  str(kib)], check=True, capture_output=True, text=True, env=env)
            pairs = [tuple(int(x) for x in line.split()) for line in out.stdout.splitlines()]
            readings.setdefault(name, {})[kib] = [(p[0], p[1]) for p in pairs[1:]]

    python = ProcessSpawner(scratch, fork_server=False)
    server = ProcessSpawner(scratch)
    try:
        spawner_runs("ru_maxrss, benchbot's Python process (posix_spawn)", python.spawn)
        spawner_runs("ru_maxrss, the fork server", server.spawn)
        server_floor = server.maxrss_floor_kib
    finally:
        python.close()
        server.close()
    box = bwrap.choose("auto")
    worker_floor = None
    if box.active:
        worker = bwrap.WorkerSpawner(box, scratch, env, places=[scratch])
        try:
            spawner_runs("ru_maxrss, the sandbox's worker (fork server)", worker.spawn)
        finally:
            worker.close()
        worker_floor = worker.maxrss_floor_kib
    probe_runs("ru_maxrss, fork from a small C process", "fork")
    probe_runs("ru_maxrss, vfork from a small C process", "vfork")
    if cgroup is not None:
        try:
            probe_runs("cgroup v1 memory.max_usage_in_bytes, a cgroup per run", "cgroup")
        finally:
            cgroup.rmdir()
    probe_runs("VmHWM at a ptrace stop at exit", "ptrace")
    if shutil.which("time") or Path("/usr/bin/time").exists():
        for kib in SIZES_KIB:
            got = []
            for _ in range(reps):
                start = time.monotonic_ns()
                out = subprocess.run(["/usr/bin/time", "-f", "%M", str(touch), str(kib)],
                                     check=True, capture_output=True, text=True, env=env)
                got.append((time.monotonic_ns() - start, int(out.stderr.split()[-1])))
            readings.setdefault("GNU time (%M)", {})[kib] = got
    table = {}
    for name, by_size in readings.items():
        peak = {kib: statistics.median(p for _, p in runs) for kib, runs in by_size.items()}
        table[name] = {
            "peak_kib": peak, "floor_kib": peak[0],
            "step_kib": peak[10240] - peak[9216], "step_ratio": peak[10240] / peak[9216],
            "wall_us": {kib: statistics.median(w for w, _ in runs) / 1e3
                        for kib, runs in by_size.items()},
            "runs": {kib: runs for kib, runs in by_size.items()},
        }
    return {"reps": reps, "methods": table, "fork_server_floor_kib": server_floor,
            "worker_floor_kib": worker_floor, "cgroup_v1": cgroup is not None,
            "cgroup_v2": _cgroup_v2_note(), "sandbox": box.description}


def timing(scratch: Path, pairs: int, sort_pairs: int) -> dict[str, Any]:
    """(b): the fork server against the Python spawner, interleaved."""
    touch = scratch / "touch"
    if not touch.exists():
        touch = _compile(TOUCH_C, scratch, "touch")
    sort_dir = scratch / "sort"
    sort_dir.mkdir(exist_ok=True)
    (sort_dir / "prog.c").write_text(signals.PROG_C)
    (sort_dir / "work.h").write_text(signals.work_h(1000, False, 500, signals.MEMORY_KIB, 0))
    subprocess.run(signals.BUILD.split(), cwd=sort_dir, check=True, capture_output=True)
    env = tuple(bwrap.clean_env(os.environ).items())
    programs = {"/bin/true": ("/bin/true",), "9 MiB program": (str(touch), "9216"),
                "sort (110 ms)": (str(sort_dir / "prog"), str(signals.ITERATIONS))}
    out: dict[str, Any] = {}
    for label, argv in programs.items():
        spawners = {"fork server": ProcessSpawner(scratch), "python": ProcessSpawner(scratch, fork_server=False)}
        # Started before the Python spawner's first run, which ends every child of this
        # process it did not have then (spawn.end_leftovers).
        spawners["fork server"].start()
        req = SpawnRequest(argv=argv, cwd=str(scratch), env=env, timeout_s=60)
        times: dict[str, list[int]] = {"fork server": [], "python": []}
        try:
            n = sort_pairs if label == "sort (110 ms)" else pairs
            for i in range(n + 2):
                order = ("fork server", "python") if i % 2 else ("python", "fork server")
                for name in order:
                    run = spawners[name].spawn(req)
                    if i >= 2:
                        times[name].append(run.wall_ns)
        finally:
            for s in spawners.values():
                s.close()
        d = [math.log(a / b) for a, b in zip(times["fork server"], times["python"], strict=True)]
        centre, lo, hi = intervals.pseudo_median(d, 0.05)
        out[label] = {
            "pairs": len(d),
            **{f"{name}: median_us": statistics.median(t) / 1e3 for name, t in times.items()},
            **{f"{name}: min_us": min(t) / 1e3 for name, t in times.items()},
            "ratio": math.exp(centre), "ci": [math.exp(lo), math.exp(hi)],
            "load": machine.load_average(),
        }
    return out


def markdown(doc: dict[str, Any]) -> list[str]:
    from benchmarks.report import markdown_table

    meta, m = doc["meta"], doc["methods"]
    lines = ["### Peak memory without the spawner's floor (`memfloor.py`)", "",
             f"`{meta['command']}`, {meta['started']}, {meta['minutes']:.1f} min, load "
             f"{meta['load_before']} before and {meta['load_after']} after.", "",
             f"(a) Each program {m['reps']} times per method (median peak, KiB); the truth "
             "between the 9 and 10 MiB programs is +1,024 KiB (+11%).", ""]
    rows = []
    for name, t in m["methods"].items():
        rows.append([name, *(f"{t['peak_kib'][k]:,.0f}" for k in SIZES_KIB),
                     f"{t['step_kib']:+,.0f} ({(t['step_ratio'] - 1) * 100:+.1f}%)",
                     f"{t['wall_us'][0]:.0f}", f"{t['wall_us'][9216]:.0f}"])
    keys = [str(k) for k in SIZES_KIB]
    lines += [markdown_table(["method", *(f"{k} KiB" for k in keys), "10 MiB over 9 MiB",
                              "wall µs (0 KiB)", "wall µs (9 MiB)"], rows), "",
              f"- The fork server's floor as it reports it (a probe forked the same way): "
              f"{m['fork_server_floor_kib']} KiB; the sandbox's worker's: "
              f"{m['worker_floor_kib']} KiB.",
              f"- cgroup v2 `memory.peak`: {m['cgroup_v2']}.",
              f"- cgroup v1: {'measured (as root)' if m['cgroup_v1'] else 'no writable memory cgroup here'}.",
              ""]
    t = doc.get("timing", {})
    if t:
        lines += ["(b) The fork server against the Python spawner, interleaved pairs:", ""]
        rows = [[label, str(r["pairs"]), f"{r['fork server: median_us']:.0f}",
                 f"{r['python: median_us']:.0f}", f"{r['fork server: min_us']:.0f}",
                 f"{r['python: min_us']:.0f}",
                 f"{(r['ratio'] - 1) * 100:+.2f}% [{(r['ci'][0] - 1) * 100:+.2f}, "
                 f"{(r['ci'][1] - 1) * 100:+.2f}]", " ".join(f"{x:.2f}" for x in r["load"])]
                for label, r in t.items()]
        lines += [markdown_table(["program", "pairs", "fork server median µs", "Python median µs",
                                  "fork server fastest µs", "Python fastest µs",
                                  "fork server / Python (95%)", "load after"], rows), ""]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=40)
    p.add_argument("--pairs", type=int, default=1000, help="pairs of /bin/true and the 9 MiB program")
    p.add_argument("--sort-pairs", type=int, default=1500, help="pairs of the 110 ms sort")
    p.add_argument("--name", default="memfloor")
    p.add_argument("--skip-timing", action="store_true")
    args = p.parse_args(argv)
    start = time.monotonic()
    meta: dict[str, Any] = {"command": "python -m benchmarks.memfloor " + " ".join(argv if argv is not None
                                                                     else sys.argv[1:]),
            "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load_before": machine.load_average()}
    with tempfile.TemporaryDirectory(prefix="benchbot-memfloor-") as tmp:
        doc: dict[str, Any] = {"meta": meta, "methods": methods(Path(tmp), args.reps)}
        print(f"methods done ({(time.monotonic() - start) / 60:.1f} min)", flush=True)
        if not args.skip_timing:
            doc["timing"] = timing(Path(tmp), args.pairs, args.sort_pairs)
    meta.update(minutes=(time.monotonic() - start) / 60, load_after=machine.load_average())
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(doc, indent=1) + "\n")
    (RESULTS / f"{args.name}.md").write_text("\n".join(markdown(doc)) + "\n")
    print("\n".join(markdown(doc)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
