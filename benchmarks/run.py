"""benchbot's performance benchmark: verdict accuracy, resolution, overhead, published data,
and decisive verdicts (the sequential design against the fixed one).

    python benchmarks/run.py --quick     # R=3, a reduced sweep (about 20 min on 2 cores)
    python benchmarks/run.py             # the full run: R=10, decisive R=20 (about 2.5 h)

Prints progress and a table, and writes ``benchmarks/results/<name>.json`` and
``<name>.md`` (``full``/``summary.md`` for the full run, ``quick`` for --quick). This is
the project's performance benchmark; it is not part of the test suite's pass/fail.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# Measure this checkout's benchbot, not whichever one is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
try:
    import numpy  # noqa: F401
except ModuleNotFoundError:  # pragma: no cover - a message beats a traceback
    sys.exit("benchmarks need benchbot's dependencies: run it with the README's venv, "
             "e.g. .venv/bin/python benchmarks/run.py --quick")

from benchbot import __version__
from benchbot.run import machine
from benchmarks import accuracy, decisive, overhead, published, report, scenarios
from benchmarks.methods import BLOCK_METHODS
from benchmarks.scenarios import Scenario

RESULTS = Path(__file__).resolve().parent / "results"
SECTIONS = ("accuracy", "resolution", "overhead", "published", "decisive")


@dataclass(frozen=True, slots=True)
class Plan:
    """How much of everything to do: --quick or the full run."""

    name: str
    reps: int
    runs: int
    iterations: int
    resolution_planted: tuple[float, ...]
    resolution_runs: tuple[int, ...]
    resolution_reps: int
    decisive_reps: int
    budgets: tuple[float, ...]  # the budget check's budgets (seconds)


SHORT_ITERATIONS = 3_000_000  # programs of about 8 ms on a 2-core VM (overhead (b))
QUICK = Plan("quick", 3, 30, 3_000_000, (1.02, 1.03, 1.043, 1.06), (10, 30), 3, 3, (15.0,))
FULL = Plan("full", 10, 30, 6_000_000, (1.01, 1.02, 1.03, 1.043, 1.06, 1.10), (10, 30, 100), 10,
            20, (15.0, 30.0, 60.0))


class LoadSampler:
    """The 1-minute load average, sampled every ``period_s`` while the suite runs."""

    def __init__(self, period_s: float = 10.0) -> None:
        self.samples: list[float] = []
        self._period = period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="load-sampler", daemon=True)

    def _loop(self) -> None:
        while True:
            self.samples.append(machine.load_average()[0])
            if self._stop.wait(self._period):
                return

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict[str, float]:
        """min, median and max of the samples so far."""
        xs = list(self.samples) or [0.0]
        return {"min": min(xs), "median": statistics.median(xs), "max": max(xs),
                "samples": len(xs)}  # fmt: skip


def log(message: str) -> None:
    """Progress on stdout, flushed (the run is long)."""
    print(message, flush=True)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="R=3 and a reduced sweep (minutes)")
    p.add_argument("--reps", type=int, help="repetitions per scenario (R)")
    p.add_argument("--sections", default=",".join(SECTIONS),
                   help=f"comma-separated subset of {', '.join(SECTIONS)}")
    p.add_argument("--name", help="results file name (default: quick, or full)")
    p.add_argument("--seed", type=int, default=20240601, help="seed of orders and drift")
    p.add_argument("--no-hyperfine", action="store_true", help="skip hyperfine even if installed")
    p.add_argument("--update", action="store_true",
                   help="replace only these sections in the existing results file of that name")
    return p


def _hyperfine(args: argparse.Namespace) -> tuple[str | None, str]:
    path = None if args.no_hyperfine else accuracy.find_hyperfine()
    if path is None:
        why = "disabled" if args.no_hyperfine else "not installed (apt-get install hyperfine)"
        log(f"hyperfine: {why}; its columns are skipped")
        return None, why
    version = subprocess.run([path, "--version"], capture_output=True, text=True).stdout.strip()
    return path, version


def meta(args: argparse.Namespace, plan: Plan, hyperfine_version: str) -> dict[str, Any]:
    """What a reader needs to rerun and to trust the figures."""
    snap = machine.snapshot()
    return {
        "command": " ".join(["python", "benchmarks/run.py", *map(shlex.quote, sys.argv[1:])]),
        "started": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "benchbot": __version__, "hyperfine": hyperfine_version,
        "machine": {k: getattr(snap.environment, k)
                    for k in ("cpu", "cores", "kernel", "python", "governor")},
        "load_before": snap.environment.load_before, "plan": dataclasses.asdict(plan), "seed": args.seed,
    }  # fmt: skip


def build_all(items: Sequence[Scenario], root: Path, plan: Plan) -> dict[str, scenarios.Built]:
    """Each scenario's repository and block builds."""
    return {s.key: scenarios.make(s, root, iterations=plan.iterations, runs=plan.runs)
            for s in items}  # fmt: skip


def section_accuracy(doc: dict[str, Any], root: Path, plan: Plan, seed: int,
                     hyperfine: str | None) -> None:
    """Section 1: every method on every planted truth, R times."""
    built = build_all(scenarios.ACCURACY, root / "acc", plan)
    before = accuracy.calibrate(built["aa"], root)
    cal = accuracy.dilution(before)
    truth = {k: scenarios.true_ratio(b.scenario, cal["dilution"]) for k, b in built.items()}
    log(f"calibration: a process with no work takes {cal['fixed_ns'] / 1e6:.2f} ms at best, "
        f"the base {cal['full_ns'] / 1e6:.2f} ms (dilution {cal['dilution']:.3f})")
    records = accuracy.run_accuracy(list(built.values()), reps=plan.reps, runs=plan.runs,
                                    seed=seed, truth=truth, hyperfine=hyperfine, log=log)
    cal = accuracy.dilution(before, accuracy.calibrate(built["aa"], root))
    truth = {k: scenarios.true_ratio(b.scenario, cal["dilution"]) for k, b in built.items()}
    records = [dataclasses.replace(r, truth=truth[r.scenario]) for r in records]
    log(f"calibration, before and after: dilution {cal['dilution']:.3f}; true ratios: "
        + ", ".join(f"{k} {v:.4f}" for k, v in truth.items()))
    doc["accuracy"] = {"calibration": cal, "truth": truth,
                       "planted": {k: b.scenario.work for k, b in built.items()},
                       "labels": {k: b.scenario.label for k, b in built.items()},
                       "records": accuracy.as_dicts(records)}  # fmt: skip


def section_resolution(doc: dict[str, Any], root: Path, plan: Plan, seed: int) -> None:
    """Section 2: benchbot's detection rate by planted slowdown and run count."""
    items = [Scenario(f"r{w:g}", f"+{(w - 1) * 100:g}%", w) for w in plan.resolution_planted]
    built = build_all(items, root / "res", plan)
    rows = accuracy.run_resolution(built, reps=plan.resolution_reps,
                                   runs_list=plan.resolution_runs, seed=seed + 7, log=log)
    doc["resolution"] = {"rows": rows}


def section_overhead(doc: dict[str, Any], root: Path, plan: Plan, seed: int,
                     hyperfine: str | None, quick: bool) -> None:
    """Section 3: the time floor, the whole run, judging."""
    built = scenarios.make(Scenario("o10", "+10%", 1.10), root / "ovh",
                           iterations=plan.iterations, runs=None)
    short = scenarios.make(Scenario("o10s", "+10%", 1.10), root / "ovh",
                           iterations=SHORT_ITERATIONS, runs=None)
    doc["overhead"] = overhead.run_overhead(built, short, hyperfine, quick=quick, seed=seed,
                                            runs=plan.runs, log=log)


def section_decisive(doc: dict[str, Any], root: Path, plan: Plan, seed: int) -> None:
    """Decisive verdicts: the sequential design and the fixed one on the same builds."""
    built = {s.key: scenarios.make(s, root / "dec", iterations=plan.iterations, runs=None)
             for s in decisive.SCENARIOS}  # fmt: skip
    sec: dict[str, Any] = {"reps": plan.decisive_reps, "records": []}
    doc["decisive"] = sec
    sec["records"] = decisive.run_section(built, reps=plan.decisive_reps, seed=seed + 53, log=log)
    log("decisive: the budget honoured")
    sec["budget"] = decisive.budget_check(built[scenarios.BIASED_MODES.key], budgets=plan.budgets,
                                          seed=seed + 59, log=log)


def render(doc: dict[str, Any]) -> str:
    """The markdown summary of whatever sections ran."""
    m = doc["meta"]
    out = [f"# benchbot benchmark: {m['plan']['name']} run", "",
           f"- command: `{m['command']}`",
           f"- machine: {m['machine']['cpu']}, {m['machine']['cores']} cores, "
           f"{m['machine']['kernel']}, Python {m['machine']['python']}",
           f"- load average (1, 5, 15 min): before {m['load_before']}, after "
           f"{m.get('load_after')}; sampled every 10 s during the run: "
           + ", ".join(f"{k} {v:.2f}" for k, v in m.get("load_during", {}).items()
                       if k != "samples"),
           f"- started {m['started']}, took {m.get('minutes', 0):.1f} min; benchbot "
           f"{m['benchbot']}, hyperfine: {m['hyperfine']}"]  # fmt: skip
    for section, run in section_runs(m).items():
        if section in doc and run["started"] != m["started"]:
            out.append(f"- section {section} is from an earlier run: `{run['command']}`, started "
                       f"{run['started']}; load sampled during that run: "
                       + ", ".join(f"{k} {v:.2f}" for k, v in run.get("load_during", {}).items()
                                   if k != "samples"))
    if "accuracy" in doc:
        out += ["", *accuracy_markdown(doc["accuracy"], m["plan"])]
    if "resolution" in doc:
        table, found = report.resolution_table(doc["resolution"]["rows"], m["plan"]["runs"])
        smallest = ", ".join(
            f"runs={n}: " + (f"+{(p - 1) * 100:g}%" if p else "none of those tried")
            for n, p in found["smallest_95"].items()
        )
        out += ["", "## 2. Resolution (benchbot: slower calls / repetitions)", "", table, "",
                f"Smallest planted slowdown called slower in >= 95% of repetitions: {smallest}."]
    if "overhead" in doc:
        out += ["", "## 3. Overhead", "", *report.overhead_lines(doc["overhead"])]
    if "decisive" in doc:
        out += ["", *decisive.markdown(doc["decisive"]["records"], doc["decisive"].get("budget", []))]
    if "published" in doc:
        out += ["", "## 4. Published paired experiment (throughput, higher is better)", "",
                report.published_table(doc["published"])]
    return "\n".join(out) + "\n"


def accuracy_markdown(acc: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    """Section 1's tables."""
    methods = [accuracy.BENCHBOT, accuracy.BENCHBOT_FIRST, *BLOCK_METHODS, accuracy.HYPERFINE]
    records = acc["records"]
    present = [x for x in methods if any(r["method"] == x for r in records)]
    summary = report.summarize(records, acc["planted"], present)
    near = [(k, acc["labels"][k]) for k, w in acc["planted"].items() if report.kind(w) == "near"]
    return [
        f"## 1. Verdict accuracy ({plan['reps']} repetitions, {plan['runs']} runs a side, "
        f"programs of {acc['calibration']['full_ns'] / 1e6:.0f} ms at best)", "",
        report.headline_table(summary, records, near), "",
        "Per scenario: slower / faster / no call, ± the median |estimated ratio - true ratio|:",
        "", report.scenario_table(summary, acc["labels"], acc["truth"]), "",
        report.outcome_table(summary, acc["labels"], accuracy.BENCHBOT),
    ]  # fmt: skip


def _run_of(m: dict[str, Any]) -> dict[str, Any]:
    return {k: m[k] for k in ("command", "started", "load_during") if k in m}


def section_runs(m: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Which run each section of a results file came from (``--update`` mixes runs).
    Files written before this was recorded keep the earlier run's meta in ``earlier``."""
    if "section_runs" in m:
        return dict(m["section_runs"])
    found = section_runs(m["earlier"]) if "earlier" in m else {}
    argv = shlex.split(m["command"])
    ran = argv[argv.index("--sections") + 1].split(",") if "--sections" in argv else SECTIONS
    return {**found, **{s: _run_of(m) for s in ran}}


def save(doc: dict[str, Any], name: str) -> None:
    """Write the results file and its markdown (after every section: a long run keeps data)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
    md = "summary.md" if name == "full" else f"{name}.md"
    (RESULTS / md).write_text(render(doc))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the chosen sections and write the results."""
    args = _parser().parse_args(argv)
    plan = QUICK if args.quick else FULL
    if args.reps:
        plan = dataclasses.replace(plan, reps=args.reps, resolution_reps=args.reps,
                                   decisive_reps=args.reps)
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        raise SystemExit(f"unknown sections: {', '.join(sorted(unknown))}")
    name = args.name or plan.name
    hyperfine, hf_version = _hyperfine(args)
    doc: dict[str, Any] = {"meta": meta(args, plan, hf_version)}
    if args.update and (RESULTS / f"{name}.json").is_file():
        earlier = json.loads((RESULTS / f"{name}.json").read_text())
        doc = {**earlier, "meta": {**doc["meta"], "section_runs": section_runs(earlier["meta"])}}
    runs = doc["meta"].setdefault("section_runs", {})
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="benchbot-bench-") as tmp, LoadSampler() as load:
        root = Path(tmp)
        for section in sections:
            log(f"== {section} ==")
            if section == "accuracy":
                section_accuracy(doc, root, plan, args.seed, hyperfine)
            elif section == "resolution":
                section_resolution(doc, root, plan, args.seed)
            elif section == "decisive":
                section_decisive(doc, root, plan, args.seed)
            elif section == "overhead":
                section_overhead(doc, root, plan, args.seed, hyperfine, args.quick)
            else:
                doc["published"] = published.run_published()
            doc["meta"].update(load_after=machine.load_average(), load_during=load.summary(),
                               minutes=(time.monotonic() - start) / 60)
            runs[section] = _run_of(doc["meta"])
            save(doc, name)
    print("\n" + render(doc))
    log(f"written: {RESULTS / (name + '.json')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
