"""Whole reports compared with expected files (benchstat style).

A mismatch writes NAME.got beside NAME and shows a diff; set BENCHBOT_UPDATE_GOLDEN=1 to
rewrite the expected files after checking the .got by eye.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchbot import results, stats
from benchbot.config import parse_config
from benchbot.engine import rule_for
from benchbot.model import ArmSamples
from benchbot.report import render_results
from benchbot.runner import PhaseResult

HERE = Path(__file__).parent

CONFIG = r"""version: 1
build: make -C kernels
defaults: {runs: 30}
workloads:
  - {name: sort, run: [kernels/build/sort, "1000000"]}
  - {name: sum, run: kernels/build/sum, metric: reported, pattern: 'elapsed_ns=(\d+)'}
  - {name: bfs, run: kernels/build/bfs}
  - {name: crash, run: kernels/build/crash}
  - {name: tput, run: bin/tput, metric: reported, pattern: 'ops=(\S+)', better: higher}
"""

ENVIRONMENT = {
    "cpu": "Example CPU @ 3.0GHz", "cores": 2, "kernel": "Linux 6.1.0", "python": "3.11.7",
    "governor": "performance", "load_before": [0.12, 0.2, 0.3], "load_after": [1.4, 0.5, 0.35],
    "warnings": ["1-minute load average was 1.40 after measuring (above 1): other work on this machine was measured too"],
}


def _arm(values: np.ndarray, reported: bool) -> ArmSamples:
    ints = [int(v) for v in values]
    return ArmSamples(wall_ns=ints, cpu_ns=ints, maxrss_kib=[2048] * len(ints),
                      value_ns=ints if reported else [])


def _phase(x: np.ndarray, y: np.ndarray, reported: bool = False) -> PhaseResult:
    return PhaseResult(reference=_arm(x, reported), candidate=_arm(y, reported), orders=["RC", "CR"] * (len(x) // 2))


def make_document() -> dict[str, Any]:
    """A results document with every outcome, from seeded data and the real rule."""
    config = parse_config(CONFIG)
    rng = np.random.default_rng(2024)
    n = 30
    drift = rng.lognormal(0, 0.03, n)

    def pair(center: float, factor: float, noise: float) -> tuple[np.ndarray, np.ndarray]:
        x = center * drift * rng.lognormal(0, noise, n)
        return x, x * factor * rng.lognormal(0, noise, n)

    data = {
        "sort": pair(85e6, 1.043, 0.004),
        "sum": pair(22e6, 1.001, 0.002),
        "bfs": pair(60e6, 1.03, 0.08),
        "tput": pair(700.0, 1.2, 0.004),
    }
    out: list[results.WorkloadResult] = []
    for w in config.workloads:
        if w.name == "crash":
            failed = PhaseResult(failure="run_failed", failure_text="exited with status 139: Segmentation fault")
            v = stats.invalid("run_failed", "exited with status 139: Segmentation fault")
            out.append(results.WorkloadResult(config=w, phases={"aa": failed}, aa=v, verdict=v, confirmation=None, first=None))
            continue
        x, y = data[w.name]
        reported = w.metric == "reported"
        aa_phase = _phase(x, x * rng.lognormal(0, 0.003, n), reported)
        ab_phase = _phase(x, y, reported)
        rule = rule_for(w, config, seed=1)
        aa = stats.compare(aa_phase.reference.wall_ns, aa_phase.candidate.wall_ns, rule=rule)
        ab = stats.compare(x, y, rule=rule, aa_noise=stats.aa_noise_of(aa))
        out.append(results.WorkloadResult(config=w, phases={"aa": aa_phase, "ab": ab_phase}, aa=aa,
                                          verdict=ab, confirmation=None, first=ab))
    doc = results.build(
        config=config, workloads=out, base={"ref": "main", "sha": "a" * 40},
        head={"ref": "feature", "sha": "b" * 40}, seed=1, environment=ENVIRONMENT,
        repository="octo-org/octo-repo", aa_status={"status": "passed", "failed": [], "aborted": False},
    )
    doc["created"] = "2026-11-29T12:00:00Z"
    return doc


def check_golden(name: str, got: str) -> None:
    path = HERE / name
    if os.environ.get("BENCHBOT_UPDATE_GOLDEN") == "1":
        path.write_text(got)
    expected = path.read_text() if path.exists() else ""
    if got != expected:
        (HERE / f"{name}.got").write_text(got)
        diff = "".join(difflib.unified_diff(expected.splitlines(True), got.splitlines(True), name, f"{name}.got"))
        pytest.fail(f"{name} differs from the expected output (see {name}.got):\n{diff[:4000]}")


def test_document_is_valid_and_has_every_outcome(validate) -> None:
    doc = make_document()
    validate(doc)
    outcomes = {b["name"]: b["verdict"]["outcome"] for b in doc["benchmarks"]}
    assert outcomes["sort"] == "slower"
    assert outcomes["sum"] == "level"
    assert outcomes["crash"] == "invalid"
    assert outcomes["bfs"] == "inconclusive"
    assert outcomes["tput"] == "faster"


def test_markdown_report_matches() -> None:
    check_golden("report.md", render_results(make_document(), "markdown"))


def test_github_comment_flavour_matches() -> None:
    doc = make_document()
    check_golden("comment.md", render_results(doc, "markdown", run_url="https://github.com/octo-org/octo-repo/actions/runs/42", command_style="bench"))


def test_html_report_matches() -> None:
    check_golden("report.html", render_results(make_document(), "html"))


def test_round_trip_through_the_file_renders_the_same(tmp_path: Path) -> None:
    doc = make_document()
    results.save(tmp_path / "r.json", doc)
    assert render_results(results.load(tmp_path / "r.json")) == render_results(doc)
