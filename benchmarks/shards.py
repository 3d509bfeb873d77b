"""Shards: how the wall time of a comparison falls with the number of machines.

Two parts:

- **measured** (``measure``): the same comparison three ways on this machine, the bundled
  kernels at a fixed number of pairs: unsharded on one core, and as two shards at once,
  each pinned to a core of its own with ``taskset``, then merged. Wall time of each, and
  whether the merged verdicts are the unsharded ones.
- **model** (``model``): N = 1 … 16 machines for a suite of workloads whose cost per
  comparison is known only roughly. The split is benchbot's own (``shards.split``, the
  greedy longest-first rule); each machine pays a fixed cost (checkout, Python, both
  builds) before it measures; the shards run at once, so the wall time is the slowest
  shard's. With sequential measuring a workload's cost is not known in advance: the split
  sees an estimate (equal weights, or last run's costs) and the shard pays the actual.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# Measure this checkout's benchbot, not whichever one is installed.
SRC = str(Path(__file__).resolve().parent.parent / "src")
sys.path.insert(0, SRC)

from benchbot import demo  # noqa: E402
from benchbot.config.config import WorkloadConfig  # noqa: E402
from benchbot.results import resultsdir, shards  # noqa: E402

NS = (1, 2, 3, 4, 6, 8, 12, 16)


# --- the model ------------------------------------------------------------------------


def _workloads(names: Sequence[str]) -> list[WorkloadConfig]:
    return [WorkloadConfig(name=n, run=("true",)) for n in names]


def makespan(actual: Mapping[str, float], estimate: Mapping[str, float] | None, count: int,
             fixed_s: float) -> float:
    """The slowest shard's wall time: its fixed cost and what its workloads actually cost,
    split by benchbot on ``estimate`` (None: equal weights)."""
    parts = shards.split(_workloads(sorted(actual)), count, estimate)
    return max(fixed_s + sum(actual[n] for n in part) if part else 0.0 for part in parts)


def model(*, workloads: int = 48, median_s: float = 20.0, sigma: float = 1.0,
          rerun_sigma: float = 0.35, fixed_s: float = 60.0, trials: int = 200,
          seed: int = 7) -> list[dict[str, Any]]:
    """Speed-up and efficiency for N machines, over ``trials`` random suites.

    A suite: ``workloads`` costs drawn log-normal (median ``median_s``, log-sd ``sigma``:
    some workloads settle in seconds, some take minutes). One run's actual cost is the
    suite's cost times a log-normal factor of log-sd ``rerun_sigma`` (sequential measuring
    stops when settled, which varies from run to run); "last run's costs" is another such
    draw. ``fixed_s`` is each machine's cost before measuring.
    """
    rng = random.Random(seed)
    rows = []
    for count in NS:
        equal, informed, ideal = [], [], []
        for _ in range(trials):
            typical = {f"w{i:02d}": rng.lognormvariate(0, sigma) * median_s
                       for i in range(workloads)}
            actual = {n: c * rng.lognormvariate(0, rerun_sigma) for n, c in typical.items()}
            last = {n: c * rng.lognormvariate(0, rerun_sigma) for n, c in typical.items()}
            one = fixed_s + sum(actual.values())
            equal.append(one / makespan(actual, None, count, fixed_s))
            informed.append(one / makespan(actual, last, count, fixed_s))
            ideal.append(one / max(fixed_s + sum(actual.values()) / count,
                                   fixed_s + max(actual.values())))
        rows.append({"machines": count, "speedup_equal": statistics.median(equal),
                     "speedup_last_costs": statistics.median(informed),
                     "speedup_bound": statistics.median(ideal)})
    return rows


def model_markdown(rows: Sequence[Mapping[str, Any]], trials: int, **settings: Any) -> list[str]:
    from benchmarks.report import markdown_table

    head = ["machines", "speed-up, equal weights", "speed-up, last run's costs",
            "bound (perfect split)", "efficiency (last run's costs)"]
    body = [[str(r["machines"]), f"{r['speedup_equal']:.2f}x", f"{r['speedup_last_costs']:.2f}x",
             f"{r['speedup_bound']:.2f}x", f"{r['speedup_last_costs'] / r['machines']:.0%}"]
            for r in rows]
    said = ", ".join(f"{k}={v}" for k, v in settings.items())
    return [f"Model ({said}; medians over {trials} random suites):", "", markdown_table(head, body)]


# --- measured on this machine --------------------------------------------------------


def _compare(repo: Path, out: Path, *, runs: int, cpu: int, shard: str | None,
             costs: Path | None = None) -> subprocess.Popen[bytes]:
    argv = ["taskset", "-c", str(cpu), sys.executable, "-m", "benchbot", "compare",
            "--repo", str(repo), "--base", "demo-base", "--head", "HEAD", "--runs", str(runs),
            "--seed", "11", "--json", str(out), "--quiet"]
    if shard:
        argv += ["--shard", shard]
    if costs:
        argv += ["--shard-costs", str(costs)]
    return subprocess.Popen(argv, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _env() -> dict[str, str]:
    """This process's environment with this checkout's benchbot first on the path."""
    path = os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def _wait(procs: Sequence[subprocess.Popen[bytes]], start: float) -> list[float]:
    """Wait for all; each one's wall time from ``start`` (their output is a few lines)."""
    ended: dict[int, float] = {}
    while len(ended) < len(procs):
        for i, p in enumerate(procs):
            if i not in ended and p.poll() is not None:
                ended[i] = time.monotonic() - start
        time.sleep(0.02)
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"benchbot compare failed: {err.decode(errors='replace')[-500:]}")
    return [ended[i] for i in range(len(procs))]


VARIANTS = ("unsharded", "two shards, equal weights", "two shards, last run's costs")


def measure(*, runs: int = 20, reps: int = 3, log: Callable[[str], None] = print) -> dict[str, Any]:
    """The demo's kernels at ``runs`` pairs: unsharded on core 0, and two shards at once on
    cores 0 and 1, split with equal weights and split by the costs of the rep's unsharded
    run (``--shard-costs``), ``reps`` times each (the order rotates)."""
    out: dict[str, Any] = {"runs": runs, "reps": reps,
                           "variants": {v: {"wall_s": [], "shard_s": [], "split": None,
                                            "same_verdicts": []} for v in VARIANTS}}
    with tempfile.TemporaryDirectory(prefix="bench-shards-") as tmp:
        root = Path(tmp)
        repo = root / "demo"
        demo.make_repo(repo)
        whole = root / "whole.json"
        # An unsharded run first, whose costs the first repetition splits by.
        _wait([_compare(repo, whole, runs=runs, cpu=0, shard=None)], time.monotonic())
        for rep in range(reps):
            order = VARIANTS[rep % 3:] + VARIANTS[:rep % 3]
            docs: dict[str, Any] = {}
            costs_file = root / "costs.json"
            costs_file.write_bytes(whole.read_bytes())  # the last unsharded run's costs
            for what in order:
                rec = out["variants"][what]
                start = time.monotonic()
                if what == "unsharded":
                    took = _wait([_compare(repo, whole, runs=runs, cpu=0, shard=None)], start)
                    docs[what] = resultsdir.load(whole)
                else:
                    costs = costs_file if "costs" in what else None
                    parts = [root / f"s{k}.json" for k in (1, 2)]
                    took = _wait([_compare(repo, parts[k - 1], runs=runs, cpu=k - 1,
                                           shard=f"{k}/2", costs=costs) for k in (1, 2)], start)
                    merged = root / "merged.json"
                    subprocess.run([sys.executable, "-m", "benchbot", "merge", *map(str, parts),
                                    "-o", str(merged)], capture_output=True, check=True, env=_env())
                    docs[what] = resultsdir.load(merged)
                    rec["split"] = [list(s.workloads) for s in docs[what].shards or ()]
                rec["wall_s"].append(time.monotonic() - start)
                rec["shard_s"].append(took)
            verdicts = {v: {b.name: b.verdict.outcome for b in d.benchmarks} for v, d in docs.items()}
            for what in VARIANTS[1:]:
                out["variants"][what]["same_verdicts"].append(verdicts[what] == verdicts["unsharded"])
            log(f"  shards rep {rep + 1}/{reps}: " + "; ".join(
                f"{v} {out['variants'][v]['wall_s'][-1]:.1f} s" for v in VARIANTS)
                + f"; verdicts {verdicts}")
    return out


def measured_markdown(m: Mapping[str, Any]) -> list[str]:
    from benchmarks.report import markdown_table

    base = statistics.median(m["variants"]["unsharded"]["wall_s"])
    body = []
    for name, rec in m["variants"].items():
        wall = statistics.median(rec["wall_s"])
        shards_s = " / ".join(f"{statistics.median(s):.1f}" for s in zip(*rec["shard_s"], strict=True))
        split = (" + ".join("{" + ", ".join(p) + "}" for p in rec["split"]) if rec["split"]
                 else "all five")
        same = (f"{sum(rec['same_verdicts'])}/{len(rec['same_verdicts'])}"
                if rec["same_verdicts"] else "")
        body.append([name, f"{wall:.1f} s", f"{base / wall:.2f}x", shards_s, split, same])
    head = ["", "wall (median)", "speed-up", "each machine (s)", "split", "verdicts all as unsharded"]
    return [f"Measured ({m['reps']} repetitions, `--runs {m['runs']}`, the demo's five kernels):",
            "", markdown_table(head, body)]


def main() -> int:
    """``python benchmarks/shards.py``: the measurement, then the model; writes
    ``results/shards.json`` and ``results/shards.md``."""
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    measured = measure()
    settings: dict[str, Any] = {"workloads": 48, "median_s": 20.0, "sigma": 1.0,
                                "rerun_sigma": 0.35, "fixed_s": 60.0, "trials": 200}
    rows = model(**settings)
    doc = {"command": "python benchmarks/shards.py", "started": started, "cores": os.cpu_count(),
           "measured": measured, "model_settings": settings, "model": rows}
    results_dir = Path(__file__).resolve().parent / "results"
    (results_dir / "shards.json").write_text(json.dumps(doc, indent=1) + "\n")
    trials = settings.pop("trials")
    text = "\n".join([f"# Shards: `{doc['command']}`, started {started}", "",
                      *measured_markdown(measured), "", *model_markdown(rows, trials, **settings)])
    (results_dir / "shards.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
