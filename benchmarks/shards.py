"""Shards: how the wall time of a comparison falls with the number of machines.

Three parts:

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
- **a suite on shards** (``python -m benchmarks.shards suite [--count 4] [--budget 600]``,
  issue 39): ``suitegen.py``'s ``wide`` google-benchmark suite of 200 benchmarks (26 of them
  changed by ±5% of work) compared with ``benchbot compare --shard K/N`` for each K, one
  after another on this machine (a matrix runs them at once: its wall is the slowest
  shard's), then ``benchbot merge`` of the N files. Recorded: each shard's wall, its
  share, counting and load before and after; the merged verdicts against the truth (false
  calls, changed called, unchanged level); the comment the merged document makes (how many
  tables, its length). ``results/<out>.json`` is written after every shard, and a run
  started again with the same ``--out`` and seed measures only the shards it lacks.
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
from benchbot.core import files  # noqa: E402
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


# --- a suite on shards (issue 39) ----------------------------------------------------------


def _tables(markdown: str) -> list[list[str]]:
    """The markdown tables of a text: each a run of lines that start with ``|``."""
    out: list[list[str]] = []
    block: list[str] = []
    for line in [*markdown.splitlines(), ""]:
        if line.lstrip().startswith("|"):
            block.append(line)
        elif block:
            out.append(block)
            block = []
    return out


def comment_shape(doc: Any) -> dict[str, Any]:
    """What the GitHub comment of a results document looks like: its length, its tables
    (the first line of each and its rows) and how many benchmarks the tables name."""
    from benchbot.github.post import REPORT_ROOM
    from benchbot.report import render_comment

    text = str(render_comment(doc, REPORT_ROOM))
    tables = _tables(text)
    named = {b.name for b in doc.benchmarks if any(b.name in line for t in tables for line in t)}
    return {"chars": len(text), "tables": len(tables),
            "table_heads": [t[0][:160] for t in tables], "table_rows": [len(t) - 2 for t in tables],
            "verdict_tables": sum(1 for t in tables if "verdict" in t[0]),
            "benchmarks_in_tables": len(named), "benchmarks": len(doc.benchmarks),
            "shards_line": next((line[:300] for line in text.splitlines()
                                 if line.startswith("Measured on")), None)}


def suite_shards(*, count: int = 4, budget: float = 600.0, seed: int = 39, out: str = "shards-suite",
                 keep: Path | None = None, log: Callable[[str], None] = print) -> dict[str, Any]:
    """The ``wide`` suite compared on ``count`` shards one after another, merged and tallied
    (module docstring)."""
    from benchmarks import suitegen, suites

    path = Path(__file__).resolve().parent / "results" / f"{out}.json"
    doc: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    if doc.get("seed") != seed or doc.get("count") != count:
        doc = {"command": f"python -m benchmarks.shards suite --count {count} --budget {budget:g} "
                          f"--seed {seed} --out {out}",
               "harness": "gbench", "scenario": "wide", "count": count, "budget_s": budget,
               "seed": seed, "cores": os.cpu_count(), "shards": {}}
    keep = keep or Path(tempfile.mkdtemp(prefix="bench-shards-suite-"))
    keep.mkdir(parents=True, exist_ok=True)
    repo = keep / "gbench-wide"
    if not repo.exists():
        suitegen.make(keep, "gbench", "wide")
    for k in range(1, count + 1):
        got = doc["shards"].get(str(k))
        part = keep / f"shard{k}.json"
        if got and part.exists():
            continue
        before, start = suites.loadavg(), time.monotonic()
        log(f"{time.strftime('%H:%M:%S')} shard {k}/{count} (load {before})")
        argv = [sys.executable, "-m", "benchbot", "compare", "--repo", str(repo), "--base", "base",
                "--head", "HEAD", "--shard", f"{k}/{count}", "--budget", f"{budget:g}s",
                "--seed", str(seed), "--json", str(part), "--quiet"]
        done = subprocess.run(argv, env=_env(), capture_output=True, text=True)
        wall = time.monotonic() - start
        if done.returncode not in (0, 3) or not part.exists():
            raise RuntimeError(f"shard {k}/{count} failed ({done.returncode}): {done.stderr[-800:]}")
        mine = resultsdir.load(part)
        spent = mine.spent
        doc["shards"][str(k)] = {
            "wall_s": round(wall, 1), "load_before": before, "load_after": suites.loadavg(),
            "benchmarks": len(mine.benchmarks),
            "counting_s": getattr(spent, "counting_s", None) if spent else None,
            "outcomes": _tally(b.verdict.outcome for b in mine.benchmarks)}
        files.write_text(path, json.dumps(doc, indent=1) + "\n")
        log(f"   shard {k}: {doc['shards'][str(k)]}")
    merged = keep / "merged.json"
    done = subprocess.run([sys.executable, "-m", "benchbot", "merge",
                           *(str(keep / f"shard{k}.json") for k in range(1, count + 1)),
                           "-o", str(merged), "--repo", str(repo)],
                          env=_env(), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"merge failed ({done.returncode}): {done.stderr[-800:]}")
    whole = resultsdir.load(merged)
    with open(merged) as fh:
        summary = suites.summarize(json.load(fh), "gbench", "wide")
    run = {"harness": "gbench", "scenario": "wide", "seed": seed, "budget_s": budget,
           "wall_s": max(s["wall_s"] for s in doc["shards"].values()),
           "load_before": doc["shards"]["1"]["load_before"],
           "load_after": doc["shards"][str(count)]["load_after"], **summary}
    doc["merged"] = {"counts": suites._counts(run), "line": suites.line(run),
                     "wall_matrix_s": run["wall_s"],
                     "wall_one_after_another_s": round(sum(s["wall_s"] for s in doc["shards"].values()), 1),
                     "outcomes": _tally(b.verdict.outcome for b in whole.benchmarks),
                     "comment": comment_shape(whole), "rows": summary["rows"]}
    files.write_text(path, json.dumps(doc, indent=1) + "\n")
    return doc


def _tally(outcomes: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for o in outcomes:
        out[o] = out.get(o, 0) + 1
    return dict(sorted(out.items()))


def main() -> int:
    """``python benchmarks/shards.py``: the measurement, then the model; writes
    ``results/shards.json`` and ``results/shards.md``. ``… suite``: a suite on shards."""
    if sys.argv[1:2] == ["suite"]:
        import argparse

        parser = argparse.ArgumentParser(prog="python -m benchmarks.shards suite")
        parser.add_argument("--count", type=int, default=4)
        parser.add_argument("--budget", type=float, default=600.0, help="each shard's, seconds")
        parser.add_argument("--seed", type=int, default=39)
        parser.add_argument("--out", default="shards-suite")
        parser.add_argument("--keep", type=Path, default=None,
                            help="the repository and the shards' files here (to resume)")
        args = parser.parse_args(sys.argv[2:])
        got = suite_shards(count=args.count, budget=args.budget, seed=args.seed, out=args.out,
                           keep=args.keep)
        print(json.dumps({k: v for k, v in got.items() if k != "merged"}, indent=1))
        print(json.dumps({k: v for k, v in got["merged"].items() if k != "rows"}, indent=1))
        return 0
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
