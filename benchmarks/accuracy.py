"""Section 1 and 2: each method's verdicts on planted truths, and benchbot's resolution.

For every scenario and repetition, benchbot runs for real (``engine.compare``: A/A,
A/B, confirmation), and the same scenario is measured the way the other tools collect
runs: all base runs, then all head runs, with benchbot's own process timer, and (where
installed) by hyperfine itself. The block methods of ``methods`` judge those blocks.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchbot.config.settings import Overrides
from benchbot.core.model import Verdict
from benchbot.measure import engine
from benchbot.results import resultsdir
from benchbot.sandbox import bwrap
from benchbot.sandbox.spawn import ProcessSpawner, SpawnRequest
from benchmarks import methods, scenarios
from benchmarks.methods import Call
from benchmarks.scenarios import Built, Scenario

BENCHBOT, BENCHBOT_FIRST, HYPERFINE = "benchbot", "benchbot, 1st phase", "hyperfine + Welch"
# The verdict figures kept with benchbot's records (to see which term withheld a call).
FIGURES = ("ci", "best_ratio", "tolerance", "best_tolerance", "aa_noise", "spread", "n")


@dataclass(frozen=True, slots=True)
class Record:
    """One method's call on one repetition of one scenario."""

    scenario: str
    rep: int
    method: str
    direction: str
    outcome: str
    ratio: float | None
    truth: float
    detail: str = ""
    figures: dict[str, Any] | None = None


@dataclass(slots=True)
class Collected:
    """Everything one repetition measured: the calls, and the raw block samples."""

    calls: dict[str, Call] = field(default_factory=dict)
    blocks: dict[str, list[int]] = field(default_factory=dict)
    seconds: float = 0.0
    # benchbot's own entry for the workload (phases with their samples), for re-judging.
    bench: dict[str, Any] | None = None


def benchbot_calls(built: Built, *, runs: int, seed: int) -> dict[str, Call]:
    """Run the real engine (A/A, A/B, confirmation) and read its verdicts."""
    return benchbot_run(built, runs=runs, seed=seed)[0]


def benchbot_run(built: Built, *, runs: int, seed: int,
                 **request: Any) -> tuple[dict[str, Call], dict[str, Any]]:
    """The real engine's verdicts (the fixed design, ``runs`` pairs a phase), and its entry
    for the workload as the results file has it (with every sample)."""
    doc = engine.compare(engine.Request(
        repo=built.repo, base="base", head="HEAD",
        overrides=Overrides(runs=runs, seed=seed, **request),
    ))
    bench = doc.benchmarks[0]
    final = _benchbot_call(bench.verdict)
    first = _benchbot_call(bench.ab) if bench.ab is not None else final
    return {BENCHBOT: final, BENCHBOT_FIRST: first}, resultsdir.to_json(doc)["benchmarks"][0]


def _benchbot_call(v: Verdict) -> Call:
    direction = v.outcome if v.outcome in ("slower", "faster") else "none"
    ratio = None if v.reason_code == "aa_aborted" else v.ratio
    figures = {k: getattr(v, k) for k in FIGURES}
    return Call(direction, ratio, v.outcome, v.reason_code or "", figures)


def collect_blocks(built: Built, spawner: ProcessSpawner, runs: int) -> dict[str, list[int]]:
    """All base runs, then all head runs (one discarded warm-up each), benchbot's timer."""
    out: dict[str, list[int]] = {}
    for side in ("base", "head"):
        times = []
        for i in range(runs + 1):
            raw = spawner.spawn(request(built, built.argv(side)))
            if raw.returncode != 0:
                raise RuntimeError(f"{built.argv(side)}: exit {raw.returncode}: {raw.stderr_tail.strip()}")
            if i:
                times.append(raw.wall_ns)
        out[side] = times
    return out


def request(built: Built, argv: list[str]) -> SpawnRequest:
    """One run of a scenario's program, with the environment benchbot would give it."""
    env = bwrap.clean_env(built.env())
    if built.speed_file is not None:
        env["SPEED_FILE"] = str(built.speed_file)
    return SpawnRequest(argv=tuple(argv), cwd=str(built.repo), env=tuple(env.items()),
                        timeout_s=60)


def hyperfine_blocks(
    built: Built, runs: int, scratch: Path, binary: str = "hyperfine"
) -> dict[str, list[float]]:
    """hyperfine's own blocks: base's warm-up and runs, then head's; times in ns."""
    export = scratch / "hyperfine.json"
    argv = [binary, "-N", "--style", "none", "--warmup", "1", "--runs", str(runs),
            "--export-json", str(export),
            " ".join(built.argv("base")), " ".join(built.argv("head"))]  # fmt: skip
    subprocess.run(argv, env=built.env(), check=True, capture_output=True, cwd=built.repo)
    data = json.loads(export.read_text())["results"]
    sides = zip(("base", "head"), data, strict=True)
    return {side: [t * 1e9 for t in r["times"]] for side, r in sides}


def run_rep(built: Built, *, rep: int, runs: int, seed: int, scratch: Path,
            hyperfine: str | None) -> Collected:
    """One repetition of one scenario: every method, in an order that rotates per rep."""
    got = Collected()
    spawner = ProcessSpawner(scratch)
    start = time.monotonic()

    def bench() -> None:
        calls, got.bench = benchbot_run(built, runs=runs, seed=seed)
        got.calls.update(calls)

    def blocks() -> None:
        got.blocks = collect_blocks(built, spawner, runs)
        got.calls.update(methods.judge_blocks(got.blocks["base"], got.blocks["head"]))

    def hyper() -> None:
        if hyperfine is None:
            return
        times = hyperfine_blocks(built, runs, scratch, hyperfine)
        got.calls[HYPERFINE] = methods.welch(times["base"], times["head"])

    steps: list[Callable[[], None]] = [bench, blocks, hyper]
    shift = rep % len(steps)
    with scenarios.drifting(built, seed):
        for step in steps[shift:] + steps[:shift]:
            step()
    got.seconds = time.monotonic() - start
    return got


def calibrate(built: Built, scratch: Path, pairs: int = 30) -> dict[str, list[int]]:
    """Times (ns) of the base with no work and with its planted work, interleaved."""
    spawner = ProcessSpawner(scratch)
    empty = [str(built.base_prog), "0"]
    times: dict[str, list[int]] = {"fixed": [], "full": []}
    for i in range(pairs + 1):
        for argv, key in ((empty, "fixed"), (built.argv("base"), "full")):
            raw = spawner.spawn(request(built, argv))
            if i:
                times[key].append(raw.wall_ns)
    return times


def dilution(*calibrations: dict[str, list[int]]) -> dict[str, float]:
    """The fixed cost of a process over the base's whole time, from the fastest runs.

    Minimums, not medians: load adds waiting time to both, and the truth is a property
    of the programs, not of the load. The result turns planted work ratios into true
    wall-time ratios (scenarios.true_ratio).
    """
    fixed = [t for c in calibrations for t in c["fixed"]]
    full = [t for c in calibrations for t in c["full"]]
    return {"fixed_ns": min(fixed), "full_ns": min(full), "dilution": min(fixed) / min(full),
            "fixed_median_ns": statistics.median(fixed),
            "full_median_ns": statistics.median(full)}  # fmt: skip


def records_of(scenario: Scenario, rep: int, got: Collected, truth: float) -> list[Record]:
    """The calls of one repetition as flat records."""
    return [
        Record(scenario.key, rep, name, call.direction, call.outcome, call.ratio, truth,
               call.detail, call.figures)
        for name, call in got.calls.items()
    ]


def line_of(scenario: Scenario, rep: int, got: Collected) -> str:
    """One progress line: what each method said."""
    def short(c: Call) -> str:
        word = {"slower": "SLOW", "faster": "FAST"}.get(c.direction, c.outcome[:5])
        return f"{word}({(c.ratio - 1) * 100:+.1f}%)" if c.ratio else word

    calls = " ".join(f"{name.split(',')[0].split(' +')[0]}={short(c)}"
                     for name, c in got.calls.items() if name != BENCHBOT_FIRST)
    return f"{scenario.label:>12} rep {rep + 1}: {calls}  [{got.seconds:.0f} s]"


def run_accuracy(
    built: Sequence[Built], *, reps: int, runs: int, seed: int, truth: dict[str, float],
    hyperfine: str | None, log: Callable[[str], None],
) -> list[Record]:
    """Every scenario, ``reps`` times; repetitions are the outer loop, as rounds are."""
    out: list[Record] = []
    total, done = reps * len(built), 0
    with tempfile.TemporaryDirectory(prefix="bench-acc-") as tmp:
        scratch = Path(tmp)
        for rep in range(reps):
            for index, b in enumerate(built):
                got = run_rep(b, rep=rep, runs=runs, seed=seed + 1000 * rep + index,
                              scratch=scratch, hyperfine=hyperfine)
                out += records_of(b.scenario, rep, got, truth[b.scenario.key])
                done += 1
                log(f"[{done:3d}/{total}] {line_of(b.scenario, rep, got)}")
    return out


def run_resolution(
    built: dict[str, Built], *, reps: int, runs_list: Sequence[int], seed: int,
    log: Callable[[str], None],
) -> list[dict[str, Any]]:
    """benchbot alone on planted slowdowns at several run counts: what it calls."""
    out: list[dict[str, Any]] = []
    for rep in range(reps):
        for runs in runs_list:
            for index, (key, b) in enumerate(built.items()):
                start = time.monotonic()
                call = benchbot_calls(b, runs=runs, seed=seed + 1000 * rep + 100 * index + runs)
                final = call[BENCHBOT]
                out.append({"planted": b.scenario.work, "runs": runs, "rep": rep,
                            "outcome": final.outcome, "reason": final.detail,
                            "ratio": final.ratio})  # fmt: skip
                log(f"  resolution rep {rep + 1}/{reps} runs={runs:<3d} {key:>6}: "
                    f"{final.outcome} {final.detail} [{time.monotonic() - start:.0f} s]")
    return out


def as_dicts(records: Sequence[Record]) -> list[dict[str, Any]]:
    """Records for the results file."""
    return [asdict(r) for r in records]


def find_hyperfine() -> str | None:
    """hyperfine's path, or None (the suite then says so and skips it)."""
    return shutil.which("hyperfine")
