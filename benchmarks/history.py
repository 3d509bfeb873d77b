"""History: `benchbot history record` over generated histories of a C program, and what the
report names (docs/verdict.md, "History: steps and drifts").

Histories (tests/bisectrepo.py: a small C program that reports the fastest of 15 calls of
a loop; every commit changes the program's mark, so every commit is built and measured):

- **changes**: 30 commits after the start; +6% at commit 8, −5% at commit 24, and +0.8%
  at each of commits 13 to 18 (each below parity alone; together +4.9%);
- **null**: 30 commits, no change.

Each repetition records the history at default settings (no --budget: the config's
budget a commit, benchbot's default 10 minutes; the default precision), then builds the
report. Recorded: the record's wall time and the load, every step's verdict and pairs,
the steps and drifts named, the drift's figure and interval against the truth.

Two more modes:
- ``--sessions N``: one pair of commits (no change between them) compared N times, each a
  session of its own: the spread of the step's estimate between sessions against the
  standard error each session gives itself (trend.SESSION_SE).
- ``--interrupt``: a record stopped by SIGTERM after a while, then run again: what the
  second call measured, and whether any file was left half-written.

``python benchmarks/history.py [--scenario changes|null] [--reps 1] [--name history]``
writes results/NAME.json and results/NAME.md (appending repetitions to NAME.json).
"""

from __future__ import annotations

import sys

# Run as a script, this file's folder comes first on sys.path, and benchmarks/bisect.py
# would hide the standard library's bisect (which statistics imports): drop the folder.
if __package__ in (None, ""):
    sys.path[:] = [p for p in sys.path if p != __file__.rpartition("/")[0]]

import argparse
import json
import math
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` and `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
SRC = str(Path(__file__).resolve().parent.parent / "src")
sys.path.insert(0, SRC)

from benchbot.history import composed, historydoc, walk  # noqa: E402
from tests.bisectrepo import make_history  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"
COMMITS = 30
STEP_UP, STEP_DOWN = 8, 24
DRIFT = tuple(range(13, 19))
FACTORS = {STEP_UP: 1.06, STEP_DOWN: 0.95, **dict.fromkeys(DRIFT, 1.008)}
DRIFT_TRUTH = 1.008 ** len(DRIFT)


def _load() -> list[float]:
    return [float(v) for v in Path("/proc/loadavg").read_text().split()[:3]]


def one(scenario: str, rep: int, work: Path) -> dict[str, Any]:
    """Record one generated history and report it; its figures."""
    repo = make_history(work / f"repo-{rep}", commits=COMMITS + 1, budget=None,
                        factors=FACTORS if scenario == "changes" else {})
    store = work / f"store-{rep}"
    load_before = _load()
    started = time.monotonic()
    done = walk.record(walk.Request(repo=repo, range="good..HEAD", store=store))
    wall = time.monotonic() - started
    load_after = _load()
    report = composed.build(store)
    [series] = report.workloads
    steps = [{"index": p.index, "outcome": p.outcome, "ratio": p.ratio,
              "step": p.step.ratio if p.step else None, "se": p.step.se if p.step else None,
              "pairs": next(w.pairs for w in done.written[p.index - 1].workloads)}
             for p in series.points[1:]]
    drifts: list[dict[str, Any]] = [
        {"since": d.since, "until": d.until, "ratio": d.ratio, "ci": list(d.ci),
         "contributors": [i for i, _ in d.contributors]} for d in series.drifts]
    expected_steps = {STEP_UP: "slower", STEP_DOWN: "faster"} if scenario == "changes" else {}
    named = {s.index: s.outcome for s in series.steps}
    drift_range = (DRIFT[0] - 1, DRIFT[-1])
    exact = [d for d in drifts if (d["since"], d["until"]) == drift_range]
    return {
        "scenario": scenario, "rep": rep, "wall_s": round(wall, 1), "commits": COMMITS,
        "load_before": load_before, "load_after": load_after, "z": report.z,
        "ranges": report.ranges, "steps": steps, "named": {str(k): v for k, v in named.items()},
        "drifts": drifts,
        "steps_right": named == expected_steps,
        "false_steps": sum(1 for i in named if i not in expected_steps),
        "drift_exact": bool(exact) if scenario == "changes" else None,
        "drift_covers_truth": (exact[0]["ci"][0] <= DRIFT_TRUTH <= exact[0]["ci"][1])
        if exact else None,
        "false_drifts": sum(1 for d in drifts if not _overlaps(d, drift_range))
        if scenario == "changes" else len(drifts),
        "drift_levels": [s["outcome"] for s in steps if s["index"] in DRIFT]
        if scenario == "changes" else None,
        "bytes_per_commit": _bytes(store),
    }


def _overlaps(d: dict[str, Any], r: tuple[int, int]) -> bool:
    return not (d["until"] <= r[0] or d["since"] >= r[1])


def _bytes(store: Path) -> float:
    sizes = [p.stat().st_size for p in store.glob("*.json")]
    return round(sum(sizes) / len(sizes), 1) if sizes else 0.0


def sessions(count: int, work: Path) -> dict[str, Any]:
    """One pair of commits compared ``count`` times, each in a session of its own."""
    from benchbot.bisect import search
    from benchbot.config.load import load_config
    from benchbot.git import gitops
    from benchbot.measure import engine

    repo = make_history(work / "repo-sessions", commits=3, budget=None)
    commits = gitops.first_parent_commits(repo, gitops.resolve(repo, "good"),
                                          gitops.resolve(repo, "HEAD"))
    config = load_config(repo / "benchbot.yml")
    rows: list[dict[str, Any]] = []
    with engine.bench(repo, config) as where, gitops.WorktreePool(repo) as pool:
        lab = search.RepoLab(commits, config, where=where, pool=pool, seed=1,
                             reporter=engine.Reporter(), clock=time.monotonic)
        for i in (1, 2):
            assert lab.prepare(i) is None
        for k in range(count):
            load = _load()
            doc = lab.results(1, 2, budget_s=config.budget_s, seed=100 + k,
                              precision=walk.PRECISION)
            est = walk.estimate_of(doc.benchmarks[0], 100 + k)
            assert est is not None
            rows.append({"centre": est.centre, "se": est.se, "n": est.n, "load": load,
                         "outcome": doc.benchmarks[0].verdict.outcome})
    centres = [float(r["centre"]) for r in rows]
    mean = sum(centres) / len(centres)
    sd = math.sqrt(sum((c - mean) ** 2 for c in centres) / (len(centres) - 1))
    within = math.sqrt(sum(float(r["se"]) ** 2 for r in rows) / len(rows))
    return {"mode": "sessions", "count": count, "rows": rows, "between_sd": sd,
            "within_se_rms": within,
            "session_se": math.sqrt(max(sd ** 2 - within ** 2, 0.0))}


def interrupt(work: Path, after_s: float) -> dict[str, Any]:
    """A record stopped by SIGTERM after ``after_s``, then run again."""
    repo = make_history(work / "repo-interrupt", commits=11, budget=None)
    store = work / "store-interrupt"
    cmd = [sys.executable, "-m", "benchbot", "history", "record", "--repo", str(repo),
           "--range", "good..HEAD", "--store", str(store), "--quiet"]
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(after_s)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    first = sorted(p.name for p in store.iterdir() if p.suffix == ".json")
    leftovers = sorted(p.name for p in store.iterdir() if p.name.endswith(".tmp"))
    mtimes = {p.name: p.stat().st_mtime_ns for p in store.glob("*.json")}
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    second = sorted(p.name for p in store.glob("*.json"))
    rewritten = [n for n, t in mtimes.items() if (store / n).stat().st_mtime_ns != t]
    readable = historydoc.Store(store).read()
    return {"mode": "interrupt", "after_s": after_s, "status": proc.returncode,
            "stderr": err.strip().splitlines()[-1:], "stored_before": len(first),
            "temporary_left": leftovers, "stored_after": len(second),
            "rewritten": rewritten, "second_out": again.stdout.strip(),
            "problems": list(readable.problems)}


def _markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["# History: record and report", "",
             "| scenario | rep | wall | load before → after | steps named | false steps | "
             "drift | drift change (interval) | covers +4.9% | false drifts | drift steps alone |",
             "|---|--:|--:|---|---|--:|---|---|---|--:|---|"]
    notes = []
    for r in rows:
        if r.get("mode") == "sessions":
            notes.append(f"- sessions: one pair of unchanged commits compared {r['count']} times: "
                         f"the estimates spread by {r['between_sd'] * 100:.4f}% (standard "
                         f"deviation), each session's own standard error {r['within_se_rms'] * 100:.3f}% "
                         f"(root mean square): a session's own term of {r['session_se'] * 100:.4f}%")
        elif r.get("mode") == "interrupt":
            notes.append(f"- interrupt: SIGTERM after {r['after_s']:.0f} s: exit {r['status']}, "
                         f"{r['stored_before']} commits stored, temporary files left: "
                         f"{len(r['temporary_left'])}; the second call: {r['second_out']!r}, "
                         f"files rewritten: {len(r['rewritten'])}, files refused: {len(r['problems'])}")
        if "scenario" not in r:
            continue
        exact = [d for d in r["drifts"] if (d["since"], d["until"]) == (DRIFT[0] - 1, DRIFT[-1])]
        figure = (f"{(exact[0]['ratio'] - 1) * 100:+.2f}% ({(exact[0]['ci'][0] - 1) * 100:+.2f} … "
                  f"{(exact[0]['ci'][1] - 1) * 100:+.2f})") if exact else "–"
        named = ", ".join(f"{k} {v}" for k, v in r["named"].items()) or "none"
        drifts = ", ".join(f"{d['since']}→{d['until']}" for d in r["drifts"]) or "none"
        levels = ", ".join(r["drift_levels"]) if r["drift_levels"] else "–"
        lines.append(f"| {r['scenario']} | {r['rep']} | {r['wall_s'] / 60:.1f} min | "
                     f"{r['load_before'][0]:.2f} → {r['load_after'][0]:.2f} | {named} | "
                     f"{r['false_steps']} | {drifts} | {figure} | {r['drift_covers_truth']} | "
                     f"{r['false_drifts']} | {levels} |")
    return "\n".join([*lines, "", *notes]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=("changes", "null"), default="changes")
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--first", type=int, default=1, help="number of the first repetition")
    parser.add_argument("--sessions", type=int, default=0)
    parser.add_argument("--interrupt", type=float, default=0.0, metavar="SECONDS")
    parser.add_argument("--name", default="history")
    args = parser.parse_args()
    path = OUT / f"{args.name}.json"
    rows: list[dict[str, Any]] = json.loads(path.read_text()) if path.exists() else []
    with tempfile.TemporaryDirectory(prefix="benchbot-history-") as tmp:
        work = Path(tmp)
        if args.sessions:
            rows.append(sessions(args.sessions, work))
        elif args.interrupt:
            rows.append(interrupt(work, args.interrupt))
        else:
            for rep in range(args.first, args.first + args.reps):
                rows.append(one(args.scenario, rep, work))
                path.write_text(json.dumps(rows, indent=1) + "\n")
                print(json.dumps({k: v for k, v in rows[-1].items() if k != "steps"}), flush=True)
    path.write_text(json.dumps(rows, indent=1) + "\n")
    (OUT / f"{args.name}.md").write_text(_markdown(rows))
    print(json.dumps(rows[-1])[:2000])


if __name__ == "__main__":
    main()
