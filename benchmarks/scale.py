"""Scale: one comparison of a real suite's size, 500 workloads x 200 pairs, judged and reported.

What a suite of hundreds of benchmarks costs benchbot itself, apart from its runs:

- **looks**: the sequential loop judges every workload at each look (``sequential.looks``:
  10, 15, 22, 34, 51, 76, 114, 171, 200 pairs), as ``measuring.Sequential._record`` does;
  here every workload is still measuring at every look (none settles early), the worst case;
- **final**: the judgement the results are built from (200 pairs, the looks all taken);
- **build**: ``results.build``; **write** / **read**: the results file (``read`` checks it
  against the JSON Schema, as ``benchbot report`` and the publish step do);
- **comment**, **markdown**, **html**: the sticky comment as the publish step makes it
  (``report.render_comment`` within GitHub's limit, ``post.final_body``), the whole
  markdown report and the HTML report with its plots.

The runs are synthetic (a seeded generator, no process is started): base, base again and
head per round, with a drift shared by the round and noise of 1-3% per run; a few
workloads have a planted change (slower, faster), a few are noisy. The verdicts of every
look are hashed (``verdicts_sha256``), so that a faster judge can be checked to give the
same verdicts on the same data (``--check FILE``).

    python benchmarks/scale.py                  # writes benchmarks/results/scale.{json,md}
    python benchmarks/scale.py --name scale-before --check benchmarks/results/scale.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# Measure this checkout's benchbot, not whichever one is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from benchbot.config.config import Config
from benchbot.config.load import parse_config
from benchbot.core.model import (
    ArmRuns,
    Environment,
    Measuring,
    PhaseRuns,
    Results,
    Revision,
)
from benchbot.github import post
from benchbot.measure.context import Measured, policy
from benchbot.report import render_comment, render_results
from benchbot.report.escape import require
from benchbot.results import resultsdir
from benchbot.run.rounds import TRIPLET_ORDERS
from benchbot.verdict import sequential
from benchbot.verdict.judge import Judgement, judge

OUT = Path(__file__).resolve().parent / "results"
WORKLOADS = 500
PAIRS = 200
SEED = 21
# Planted changes (index: factor) and noisy workloads (index: noise).
PLANTED = {7: 1.08, 61: 1.05, 123: 0.92, 250: 1.12, 377: 0.95, 444: 1.04}
NOISY = {33: 0.25, 301: 0.3}
T = TypeVar("T")


def names(count: int) -> list[str]:
    """Names of a suite's length (the results schema's charset, until suites widen it)."""
    kinds = ("core.BM_sort_{}", "core.BM_parse_utf8_{}", "py.test_parse-case-{}",
             "go.BenchmarkMap_size_{}-8")
    return [kinds[i % len(kinds)].format(i) for i in range(count)]


def config_of(count: int, pairs: int) -> Config:
    """A config of ``count`` workloads, named as a suite's benchmarks are."""
    lines = "".join(f"  - {{name: w{i}, run: [bin/bench, '{i}']}}\n" for i in range(count))
    config = parse_config(f"version: 1\nbudget: 10m\ndefaults: {{max_runs: {pairs}}}\n"
                          f"workloads:\n{lines}")
    return replace(config, workloads=tuple(replace(w, name=n) for w, n in
                                           zip(config.workloads, names(count), strict=True)))


def runs(count: int, pairs: int, seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Base, base again and head per workload: a shared drift per round, noise per run."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        centre = float(rng.lognormal(np.log(2e6), 1.5))
        noise = NOISY.get(i, float(rng.uniform(0.01, 0.03)))
        drift = rng.lognormal(0, 0.02, pairs)
        b1, b2, h = (centre * f * drift * rng.lognormal(0, noise, pairs)
                     for f in (1.0, 1.0, PLANTED.get(i, 1.0)))
        out.append((b1, b2, h))
    return out


def _arm(values: np.ndarray) -> ArmRuns:
    ints = tuple(int(v) for v in values)
    return ArmRuns(samples_ns=tuple(float(v) for v in ints), wall_ns=ints, cpu_ns=ints,
                   maxrss_kib=(2048,) * len(ints))


def phases_of(b1: np.ndarray, b2: np.ndarray, h: np.ndarray) -> dict[str, PhaseRuns]:
    """Rounds of triplets as the engine records them: an A/A and an A/B phase."""
    orders = [TRIPLET_ORDERS[i % 6] for i in range(len(h))]
    ab = "".join("AB" if o.index("1") < o.index("H") else "BA" for o in orders)
    aa = "".join("AB" if o.index("1") < o.index("2") else "BA" for o in orders)
    base = _arm(b1)
    return {"aa": PhaseRuns(arms={"base": base, "base_again": _arm(b2)}, order=aa),
            "ab": PhaseRuns(arms={"base": base, "head": _arm(h)}, order=ab)}


def measured_at(config: Config, data: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
                pairs: int, look: int) -> Measured:
    measured = Measured(phases={})
    for w, (b1, b2, h) in zip(config.workloads, data, strict=True):
        measured.phases[w.name] = phases_of(b1[:pairs], b2[:pairs], h[:pairs])
        measured.looks[w.name] = look
    return measured


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def fingerprint(judgement: Judgement) -> list[str]:
    """Every workload's A/A and A/B verdict in a line: outcome, reason, figures."""
    lines = []
    for name, j in judgement.workloads.items():
        for v in (j.aa, j.ab, j.memory):
            if v is None:
                lines.append(f"{name} -")
                continue
            lines.append(f"{name} {v.outcome} {v.reason_code} {v.n} {v.ratio!r} {v.ci!r} "
                         f"{v.best_ratio!r} {v.low_ratio!r} {v.estimate!r} {v.estimate_ci!r}")
    return lines


def document(config: Config, measured: Measured, judgement: Judgement, seed: int) -> Results:
    env = Environment(cpu="synthetic", cores=2, kernel="Linux", python=platform.python_version(),
                      governor=None, load_before=(0.0, 0.0, 0.0), load_after=(0.0, 0.0, 0.0))
    return resultsdir.build(
        config=config,
        workloads=[resultsdir.WorkloadResult(config=w, phases=measured.phases[w.name],
                                          judged=judgement.workloads[w.name],
                                          measuring=measured.measuring.get(w.name))
                   for w in config.workloads],
        base=Revision(ref="main", sha="a1" * 20), head=Revision(ref="topic", sha="b2" * 20),
        seed=seed, environment=env, repository="octo-org/octo-repo", aa=judgement.aa,
    )


def measure(count: int = WORKLOADS, pairs: int = PAIRS, seed: int = SEED) -> dict[str, Any]:
    """Every stage's wall time in seconds, and what the verdicts came to."""
    config = config_of(count, pairs)
    data = runs(count, pairs, seed)
    rule = policy(config, seed)
    schedule = sequential.looks(pairs)
    looks: list[dict[str, Any]] = []
    digest = hashlib.sha256()
    for k, n in enumerate(schedule, start=1):
        m = measured_at(config, data, n, k)
        judgement, seconds = timed(lambda m=m: judge(m.workloads(config), rule))  # type: ignore[misc]
        digest.update("\n".join(fingerprint(judgement)).encode())
        looks.append({"pairs": n, "judge_s": seconds})
    m = measured_at(config, data, pairs, len(schedule))
    for w in config.workloads:
        m.measuring[w.name] = Measuring(
            design="triplets", pairs=pairs, stopped="max_runs", why=sequential.WHY["max_runs"],
            looks=schedule, orders="".join(TRIPLET_ORDERS[i % 6] for i in range(pairs)))
    final, final_s = timed(lambda: judge(m.workloads(config), rule))
    digest.update("\n".join(fingerprint(final)).encode())
    doc, build_s = timed(lambda: document(config, m, final, seed))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "results.json"
        _, write_s = timed(lambda: resultsdir.save(path, doc))
        size = path.stat().st_size
        loaded, read_s = timed(lambda: resultsdir.load(path))
    report, markdown_s = timed(lambda: render_results(loaded, "markdown"))
    run_url = "https://github.com/o/r/actions/runs/1"
    body, comment_s = timed(lambda: post.final_body(
        require(render_comment(loaded, post.REPORT_ROOM, run_url=run_url,
                               artifact="benchbot-results"), "the comment"),
        artifact="benchbot-results", run_url=run_url))
    left_out = next((line[2:] for line in body.splitlines() if line.startswith("> To fit")), None)
    html, html_s = timed(lambda: render_results(loaded, "html"))
    outcomes = [b.verdict.outcome for b in loaded.benchmarks]
    return {
        "workloads": count, "pairs": pairs, "seed": seed,
        "looks": looks, "looks_s": sum(x["judge_s"] for x in looks),
        "final_s": final_s, "build_s": build_s, "write_s": write_s, "read_s": read_s,
        "comment_s": comment_s, "markdown_s": markdown_s, "html_s": html_s,
        "results_bytes": size, "comment_chars": len(body), "comment_left_out": left_out,
        "comment_cut": "was cut here" in body, "markdown_chars": len(report),
        "html_bytes": len(html.encode()),
        "outcomes": {o: outcomes.count(o) for o in sorted(set(outcomes))},
        "planted": {names(count)[i]: f for i, f in PLANTED.items() if i < count},
        "called": {b.name: b.verdict.outcome for b in loaded.benchmarks
                   if b.verdict.outcome in ("slower", "faster")},
        "verdicts_sha256": digest.hexdigest(),
    }


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "load_before": os.getloadavg()}


def summary(result: dict[str, Any]) -> str:
    m = result["machine"]
    lines = [
        f"# Scale: {result['workloads']} workloads x {result['pairs']} pairs",
        "",
        f"`python benchmarks/scale.py`, {result['started']}; {m['cpu']}, {m['cores']} cores, "
        f"Python {m['python']}, numpy {m['numpy']}; load before {m['load_before'][0]:.2f}, "
        f"after {m['load_after'][0]:.2f} (1-minute averages).",
        "",
        "| stage | seconds |",
        "|---|--:|",
    ]
    for look in result["looks"]:
        lines.append(f"| look at {look['pairs']} pairs (judge all) | {look['judge_s']:.2f} |")
    lines += [
        f"| every look together | {result['looks_s']:.2f} |",
        f"| final judgement | {result['final_s']:.2f} |",
        f"| results.build | {result['build_s']:.2f} |",
        f"| write results file ({result['results_bytes'] / 1e6:.1f} MB) | {result['write_s']:.2f} |",
        f"| read results file (schema checked) | {result['read_s']:.2f} |",
        f"| comment ({result['comment_chars']:,} characters) | {result['comment_s']:.2f} |",
        f"| markdown report ({result['markdown_chars']:,} characters) | {result['markdown_s']:.2f} |",
        f"| HTML report ({result['html_bytes'] / 1e6:.1f} MB) | {result['html_s']:.2f} |",
        "",
        f"Outcomes: {', '.join(f'{n} {o}' for o, n in result['outcomes'].items())}; "
        f"called: {', '.join(f'`{k}` {v}' for k, v in result['called'].items())}; "
        f"planted: {', '.join(f'`{k}` ×{v}' for k, v in result['planted'].items())}.",
        "",
        f"The comment: {result['comment_left_out'] or 'whole'}"
        f"{' (and then cut)' if result['comment_cut'] else ''}",
        "",
        f"Verdicts of every look: sha256 `{result['verdicts_sha256']}`.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=WORKLOADS)
    parser.add_argument("--pairs", type=int, default=PAIRS)
    parser.add_argument("--name", default="scale", help="output files: results/NAME.{json,md}")
    parser.add_argument("--check", type=Path, help="a results file whose verdicts must match")
    args = parser.parse_args(argv)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    info = machine()
    result = measure(args.workloads, args.pairs)
    info["load_after"] = os.getloadavg()
    result = {"started": started, "machine": info, **result}
    OUT.mkdir(exist_ok=True)
    (OUT / f"{args.name}.json").write_text(json.dumps(result, indent=2) + "\n")
    (OUT / f"{args.name}.md").write_text(summary(result))
    print(summary(result))
    if args.check is not None:
        expected = json.loads(args.check.read_text())["verdicts_sha256"]
        if expected != result["verdicts_sha256"]:
            print(f"verdicts differ from {args.check}", file=sys.stderr)
            return 1
        print(f"verdicts match {args.check}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
