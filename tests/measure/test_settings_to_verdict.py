"""Settings from the command line through a real comparison to the verdict (moved here
from tests/config/test_settings.py: it measures, which the unit tier does not)."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest

from benchbot import cli
from benchbot.config.settings import Overrides


@pytest.mark.real_runs("the settings as the results file records them: not the runs' times")
def test_runs_and_parity_walk_from_the_command_line_to_the_verdict(tmp_path: Path, make_repo) -> None:
    """--runs and --parity become one Overrides, applied once, and reach the rule."""
    repo = make_repo({"benchbot.yml": "version: 1\naa: off\nconfirm: off\nworkloads:\n  - {name: t, run: [true]}\n"})
    out = io.StringIO()
    code = cli.main(["compare", "--repo", str(repo), "--base", "base", "--head", "HEAD", "--quiet",
                     "--runs", "12", "--parity", "3%", "--json", str(tmp_path / "r.json")],
                    out=out, err=io.StringIO())
    assert code == 0
    from benchbot.results import resultsdir

    doc = resultsdir.load(tmp_path / "r.json")
    bench = doc.benchmarks[0]
    assert (doc.settings.runs, doc.settings.parity) == (12, 0.03)
    assert (bench.runs, bench.parity, len(bench.phases["ab"].order) // 2) == (12, 0.03, 12)
    if bench.verdict.tolerance is not None:
        assert bench.verdict.tolerance >= 0.03  # parity is the tolerance's least
    assert replace(Overrides(), runs=12).runs == 12
