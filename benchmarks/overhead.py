"""Section 3: what benchbot costs. The time floor, the whole run, and judging.

(a) ``/bin/true`` timed by benchbot's process spawner and by ``hyperfine -N``, in
alternating blocks within one run; (b) the wall time of a whole ``benchbot compare``
(A/A, A/B, confirmation) over the summed time of its measured runs, beside hyperfine
making as many runs; (c) ``stats.compare_many`` on 100 workloads x 1,000 pairs; (d)
benchbot's own time per run in a long sequential comparison of many workloads, with runs
that take no time (what is left is the bookkeeping between runs: requests, records,
progress, budget and looks); (e) a whole compare of ``/bin/true``: what benchbot adds to
each run of about a millisecond, exchanges with the sandbox's worker included; (f)
benchbot's own CPU time in one compare's process, part by part, each in a fresh
interpreter: the work that must be done once per compare, set against what the 8 ms
compare's target of 1.2x leaves for it.
"""

from __future__ import annotations

import compileall
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchbot.core.model import Rule
from benchbot.results import resultsdir
from benchbot.sandbox import bwrap
from benchbot.sandbox.spawn import ProcessSpawner, RawRun, SpawnRequest
from benchbot.verdict.stats import compare_many
from benchmarks.decisive import measured
from benchmarks.scenarios import Built

TRUE = "/bin/true"
LONG_RUNS = 100  # pairs a phase: the 8 ms programs measured long enough to show the fixed cost fade


def _summary(times_ns: list[float]) -> dict[str, float]:
    return {"median_us": statistics.median(times_ns) / 1e3, "min_us": min(times_ns) / 1e3,
            "n": len(times_ns)}  # fmt: skip


def _hyperfine_times(hyperfine: str, commands: list[str], runs: int, scratch: Path,
                     env: dict[str, str] | None = None) -> list[list[float]]:
    """hyperfine -N's times (ns) of each command, one warm-up each."""
    export = scratch / "hf.json"
    subprocess.run(
        [hyperfine, "-N", "--style", "none", "--warmup", "1", "--runs", str(runs),
         "--export-json", str(export), *commands],
        check=True, capture_output=True, env=env,
    )  # fmt: skip
    return [[t * 1e9 for t in r["times"]] for r in json.loads(export.read_text())["results"]]


def floor(hyperfine: str | None, *, rounds: int, per_block: int) -> dict[str, Any]:
    """(a) /bin/true: benchbot's spawner (in its own process, and in the sandbox's worker
    when bubblewrap works here) against hyperfine -N, in blocks that take turns."""
    if hyperfine is None:
        return {"skipped": "no hyperfine (apt-get install hyperfine; or --no-hyperfine given)"}
    times: dict[str, list[float]] = {"benchbot": [], "hyperfine": []}
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        scratch = Path(tmp)
        env = bwrap.clean_env(os.environ)
        request = SpawnRequest(argv=(TRUE,), cwd=str(scratch), env=tuple(env.items()), timeout_s=10)
        spawners: dict[str, Any] = {"benchbot": ProcessSpawner(scratch)}
        box = bwrap.choose("auto")
        if box.active:
            times["benchbot, sandboxed"] = []
            spawners["benchbot, sandboxed"] = bwrap.WorkerSpawner(box, scratch, env,
                                                                    places=[scratch])

        def ours(name: str) -> Callable[[], None]:
            def block() -> None:
                for i in range(per_block + 1):
                    raw = spawners[name].spawn(request)
                    if i:
                        times[name].append(raw.wall_ns)
            return block

        def hyper() -> None:
            times["hyperfine"].extend(_hyperfine_times(hyperfine, [TRUE], per_block, scratch)[0])

        steps = [ours(n) for n in spawners] + [hyper]
        try:
            for r in range(rounds):
                for step in steps[r % len(steps):] + steps[: r % len(steps)]:
                    step()
        finally:
            for spawner in spawners.values():
                spawner.close()
    summary = {name: _summary(t) for name, t in times.items()}
    h = summary["hyperfine"]
    result: dict[str, Any] = dict(summary)
    for name in spawners:
        result[f"{name}: median_ratio"] = summary[name]["median_us"] / h["median_us"]
        result[f"{name}: min_ratio"] = summary[name]["min_us"] / h["min_us"]
    result["median_ratio"] = result["benchbot: median_ratio"]
    result["min_ratio"] = result["benchbot: min_ratio"]
    result["sandbox"] = box.description
    return result


def _measured(doc_path: Path) -> tuple[float, int, str]:
    """Summed wall time (s) and count of the runs a results file recorded (each run once),
    and the first workload's outcome."""
    doc = resultsdir.load(doc_path)
    total, count = 0.0, 0
    for bench in doc.benchmarks:
        secs, runs = measured(bench)
        total, count = total + secs, count + runs
    return total, count, doc.benchmarks[0].verdict.outcome


def whole_run(built: Built, hyperfine: str | None, *, runs: int | None, seed: int,
              repeats: int = 3) -> dict[str, Any]:
    """(b) ``benchbot compare`` end to end (the CLI, a fresh Python) against its runs:
    ``runs`` pairs a phase, or the sequential default when ``runs`` is None; the repeat
    whose factor is the median of ``repeats``, with every repeat's factor beside it."""
    with tempfile.TemporaryDirectory(prefix="bench-whole-") as tmp:
        scratch = Path(tmp)
        out = scratch / "results.json"
        argv = [sys.executable, "-m", "benchbot", "compare", "--repo", str(built.repo),
                "--base", "base", "--head", "HEAD", "--json", str(out), "--quiet"]  # fmt: skip
        if runs is not None:
            argv += ["--runs", str(runs)]
        tries = []
        for r in range(repeats):
            wall = _timed([*argv, "--seed", str(seed + r)])
            measured_s, count, outcome = _measured(out)
            tries.append((wall / measured_s, wall, measured_s, count, outcome))
        factor, wall, measured_s, count, outcome = sorted(tries)[len(tries) // 2]
        result: dict[str, Any] = {
            "design": f"--runs {runs}" if runs is not None else "sequential (default)",
            "runs_measured": count, "wall_s": wall, "measured_s": measured_s,
            "program_ms": measured_s / count * 1e3, "overhead_factor": factor,
            "factors": [t[0] for t in tries], "outcome": outcome,
            "parts_s": {
                # The interpreter and every module a compare imports, one after the other
                # (compare imports about half of them while the builds run).
                "python and imports": _timed([sys.executable, "-c", IMPORTS]),
                "two builds": 2 * _timed(["cc", "-O2", "-o", str(scratch / "p"),
                                          str(built.base_prog.parent / "prog.c")]),
                "warmups": 2 * measured_s / count,
            },
        }  # fmt: skip
        if hyperfine is not None:
            commands = [" ".join(built.argv("base")), " ".join(built.argv("head"))]
            start = time.monotonic_ns()
            times = _hyperfine_times(hyperfine, commands, max(2, count // 2), scratch)
            hwall = (time.monotonic_ns() - start) / 1e9
            hsum = sum(sum(t) for t in times) / 1e9
            result["hyperfine"] = {"runs_measured": sum(len(t) for t in times),
                                   "wall_s": hwall, "measured_s": hsum,
                                   "overhead_factor": hwall / hsum}  # fmt: skip
    return result


IMPORTS = ("import benchbot.cli, benchbot.measure.engine, benchbot.measure.measuring, benchbot.results.resultsdir, "
           "benchbot.report")


SRC = Path(__file__).resolve().parent.parent / "src"  # this checkout's benchbot


def _timed(argv: list[str], src: Path = SRC) -> float:
    """Seconds one command takes, start to exit (``-m benchbot`` is ``src``'s, by default
    this checkout's)."""
    path = os.pathsep.join(p for p in (str(src), os.environ.get("PYTHONPATH", "")) if p)
    start = time.monotonic_ns()
    subprocess.run(argv, check=True, capture_output=True, env={**os.environ, "PYTHONPATH": path})
    return (time.monotonic_ns() - start) / 1e9


def judging(workloads: int = 100, pairs: int = 1000, repeats: int = 3) -> dict[str, Any]:
    """(c) The verdicts of ``workloads`` x ``pairs``: best of ``repeats``, new seed each."""
    rng = np.random.default_rng(7)
    state = rng.lognormal(np.log(5e6), 0.1, (workloads, pairs))
    xs = list(state * rng.lognormal(0.0, 0.02, (workloads, pairs)))
    ys = list(state * rng.lognormal(0.01, 0.02, (workloads, pairs)))
    best = float("inf")
    for repeat in range(repeats):
        start = time.perf_counter()
        compare_many(xs, ys, rules=Rule(seed=1000 + repeat))
        best = min(best, time.perf_counter() - start)
    return {"workloads": workloads, "pairs": pairs, "best_s": best, "repeats": repeats}


class _Instant:
    """A spawner whose runs take no time and report lognormal times (30% spread), the same
    for both builds: far from settling, so that every workload runs to ``max_runs``."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.runs = 0

    def spawn(self, request: SpawnRequest) -> RawRun:
        self.runs += 1
        wall = int(8e6 * self.rng.lognormal(0.0, 0.3))
        return RawRun(wall_ns=wall, cpu_ns=wall, maxrss_kib=1, returncode=0)


def _config_repo(root: Path, config: str) -> Path:
    """A git repository under ``root`` holding ``config`` as benchbot.yml, tagged ``base``
    (no build: base and HEAD are the same commit)."""
    repo = root / "repo"
    repo.mkdir()
    (repo / "benchbot.yml").write_text(config)
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@invalid", "-C", str(repo)]
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "base"], ["tag", "base"]):
        subprocess.run(git + args, check=True, capture_output=True)
    return repo


def bookkeeping(workloads: int = 10, pairs: int = 1000, seed: int = 3) -> dict[str, Any]:
    """(d) ``engine.compare`` (the real engine, a real repository, no build) of
    ``workloads`` workloads to ``pairs`` triplets each, with runs that take no time and a
    progress reporter as on a CI log: its wall time over the runs it made."""
    from benchbot.config.settings import Overrides
    from benchbot.measure import engine
    from benchbot.measure.progress import TerminalReporter

    with tempfile.TemporaryDirectory(prefix="bench-books-") as tmp:
        repo = _config_repo(Path(tmp), f"version: 1\ndefaults: {{max_runs: {pairs}}}\nworkloads:\n"
                            + "".join(f"  - {{name: w{i}, run: [echo, w{i}]}}\n"
                                      for i in range(workloads)))
        spawner = _Instant(seed)
        log = io.StringIO()
        start = time.perf_counter()
        doc = engine.compare(
            engine.Request(repo=repo, base="base", head="HEAD",
                           overrides=Overrides(budget=3600.0, seed=seed)),
            reporter=TerminalReporter(log, tty=False), spawner_factory=lambda _: spawner)
        wall = time.perf_counter() - start
    return {"workloads": workloads, "pairs": pairs, "runs": spawner.runs, "wall_s": wall,
            "per_run_us": wall / spawner.runs * 1e6,
            "stopped": sorted({b.measuring.stopped for b in doc.benchmarks if b.measuring})}


def short_runs(runs: int = 1000, repeats: int = 3, src: Path = SRC) -> dict[str, Any]:
    """(e) A whole ``benchbot compare --runs 1000`` of ``/bin/true`` against itself (A/A
    and A/B, 4,000 runs of about a millisecond, in the sandbox's worker where bubblewrap
    works): what benchbot adds to each run beyond its own time, the median of
    ``repeats`` (``src``: whose benchbot, by default this checkout's)."""
    with tempfile.TemporaryDirectory(prefix="bench-short-") as tmp:
        repo = _config_repo(Path(tmp), "version: 1\nworkloads:\n  - {name: true, run: [/bin/true]}\n")
        out = Path(tmp) / "results.json"
        tries = []
        for r in range(repeats):
            wall = _timed([sys.executable, "-m", "benchbot", "compare", "--repo", str(repo),
                           "--base", "base", "--head", "HEAD", "--json", str(out), "--quiet",
                           "--runs", str(runs), "--seed", str(r)], src)
            doc = resultsdir.load(out)
            walls = [w for phase in doc.benchmarks[0].phases.values()
                     for arm in phase.arms.values() for w in arm.wall_ns]
            tries.append(((wall - sum(walls) / 1e9) / len(walls) * 1e6, wall, len(walls),
                          statistics.median(walls) / 1e3))
    per_run_us, wall, count, median_us = sorted(tries)[len(tries) // 2]
    return {"runs": count, "wall_s": wall, "median_run_us": median_us,
            "beyond_us": per_run_us, "all_beyond_us": [t[0] for t in tries],
            "sandbox": doc.sandbox.description if doc.sandbox else "none"}


# Each part's CPU time (user and system, all of the process's threads) in a fresh
# interpreter, in the order a compare meets them; the last two render and serialize the
# results file given as argv[1].
OWN_CPU = r"""
import importlib, json, sys, time
from pathlib import Path
clock, out = time.process_time, {}
def part(name, work):
    t = clock(); value = work(); out[name] = clock() - t; return value
part("benchbot.cli (arguments, settings, the results model)", lambda: importlib.import_module("benchbot.cli"))
part("benchbot.measure.engine (config, yaml, git, runner, sandbox)", lambda: importlib.import_module("benchbot.measure.engine"))
part("numpy", lambda: importlib.import_module("numpy"))
part("statistics, judging and results modules",
     lambda: [importlib.import_module(m) for m in ("benchbot.verdict.stats", "benchbot.verdict.judge",
                                                    "benchbot.measure.measuring", "benchbot.results.resultsdir")])
part("numpy's random module and first use (stats.warm_up)", lambda: sys.modules["benchbot.verdict.stats"].warm_up())
report = part("report modules and jinja2", lambda: importlib.import_module("benchbot.report"))
part("the markdown template compiled", lambda: report.prepare("markdown"))
doc = sys.modules["benchbot.results.resultsdir"].load(Path(sys.argv[1]))
part("the report rendered and the results serialized",
     lambda: (report.render_results(doc), sys.modules["benchbot.results.resultsdir"].dumps(doc)))
print(json.dumps(out))
"""


def own_cpu(short: Built, *, runs: int, seed: int, repeats: int = 5) -> dict[str, Any]:
    """(f) benchbot's own CPU time in one compare, part by part (``OWN_CPU``), the median
    of ``repeats`` fresh interpreters each; the interpreter's own start and exit from
    ``python -c pass``. Beside it, one ``--runs`` compare of the 8 ms programs: the time
    its runs took and what a wall of 1.2x that leaves for everything else."""
    with tempfile.TemporaryDirectory(prefix="bench-cpu-") as tmp:
        doc_path = Path(tmp) / "results.json"
        _timed([sys.executable, "-m", "benchbot", "compare", "--repo", str(short.repo),
                "--base", "base", "--head", "HEAD", "--json", str(doc_path), "--quiet",
                "--runs", str(runs), "--seed", str(seed)])  # fmt: skip
        measured_s, count, _ = _measured(doc_path)
        parts: dict[str, list[float]] = {"interpreter start and exit": [
            _child_cpu([sys.executable, "-c", "pass"]) for _ in range(repeats)]}
        for _ in range(repeats):
            got = json.loads(_output([sys.executable, "-c", OWN_CPU, str(doc_path)]))
            for name, secs in got.items():
                parts.setdefault(name, []).append(secs)
    medians = {name: statistics.median(v) for name, v in parts.items()}
    return {"parts_s": medians, "total_s": sum(medians.values()), "repeats": repeats,
            "runs_measured": count, "measured_s": measured_s,
            "allowance_s": 0.2 * measured_s}  # what a wall of 1.2x the runs leaves


def _child_cpu(argv: list[str]) -> float:
    """User and system CPU seconds of one child process."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _output(argv: list[str]) -> str:
    """A command's standard output (``-c`` code runs against this checkout's benchbot)."""
    src = str(Path(__file__).resolve().parent.parent / "src")
    path = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p)
    return subprocess.run(argv, check=True, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": path}).stdout


def run_overhead(built: Built, short: Built, hyperfine: str | None, *, quick: bool, seed: int,
                 runs: int, log: Callable[[str], None]) -> dict[str, Any]:
    """All of section 3; ``short`` is the same scenario with programs of about 8 ms."""
    log("overhead (a): /bin/true, benchbot's spawner against hyperfine -N")
    a = floor(hyperfine, rounds=4 if quick else 10, per_block=100 if quick else 200)
    log("overhead (b): a whole benchbot compare against the time of its runs")
    out: dict[str, Any] = {"floor": a}
    # Bytecode as an installed benchbot has it (pip compiles it; PYTHONDONTWRITEBYTECODE,
    # where set, would otherwise have every run compile benchbot's modules again).
    compileall.compile_dir(Path(__file__).resolve().parent.parent / "src", quiet=1)
    for key, b, design in (("whole_run", built, runs), ("whole_run_sequential", built, None),
                           ("whole_run_8ms", short, runs),
                           ("whole_run_8ms_sequential", short, None),
                           ("whole_run_8ms_long", short, LONG_RUNS)):
        out[key] = whole_run(b, hyperfine, runs=design, seed=seed,
                             repeats=1 if quick else 3)
    log("overhead (c): judging 100 workloads x 1,000 pairs")
    out["judging"] = judging()
    log("overhead (d): benchbot's own time per run, 10 workloads x 1,000 pairs of instant runs")
    out["bookkeeping"] = bookkeeping()
    log("overhead (e): what benchbot adds to each run of /bin/true, 4,000 runs")
    out["short_runs"] = short_runs(repeats=1 if quick else 3)
    log("overhead (f): benchbot's own CPU time in one compare, part by part")
    out["own_cpu"] = own_cpu(short, runs=runs, seed=seed, repeats=2 if quick else 5)
    return out
