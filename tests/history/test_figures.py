"""A history's steps say what each verdict rests on (issue 37): a step the counts called
shows the work's move, in the store's file, the history report's JSON, its markdown and
its page, as the results report does."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from benchbot.history import composed, historydoc, walk
from benchbot.history.historydoc import CommitRef, StepSettings
from benchbot.report import history as page
from tests.golden.scenarios import suite_counted
from tests.historystore import sha_of


def test_a_step_the_counts_called_shows_the_work(tmp_path: Path) -> None:
    steps = {s.name: s for s in walk.steps_of(suite_counted(), seed=1)}
    encode = steps["go/BenchmarkEncode"]  # the work −3.3%; time's estimate +0.8%
    assert encode.outcome == "faster" and encode.ratio == 1.008
    assert encode.settled_by == "instructions and time" and round(encode.work or 0, 3) == 0.967
    store = historydoc.Store(tmp_path / "store")
    shas = [sha_of(37, i) for i in range(3)]
    level = [historydoc.WorkloadStep(name=name, outcome="level", ratio=1.0, ci=(0.99, 1.01),
                                     step=steps["go/BenchmarkEncode"].step)
             for name in steps]
    for i, workloads in ((1, level), (2, list(steps.values()))):
        store.write(historydoc.record(
            commit=CommitRef(sha=shas[i], subject=f"change {i}"),
            against=CommitRef(sha=shas[i - 1], subject=f"change {i - 1}"), state="measured",
            workloads=tuple(workloads), settings=StepSettings(alpha=0.05, seed=i, budget_s=60.0)))
    stored = json.loads((tmp_path / "store" / f"{shas[2]}.json").read_text())
    [kept] = [w for w in stored["workloads"] if w["name"] == "go/BenchmarkEncode"]
    assert kept["settled_by"] == "instructions and time" and kept["work"] < 1
    report = composed.build(tmp_path / "store")
    jsonschema.validate(composed.to_json(report), composed.schema())
    for fmt in ("markdown", "html"):
        text = page.render(report, fmt)
        assert "faster −3.3% work" in text and "faster +0.8%" not in text
        assert "slower +5.0% work" in text  # BenchmarkFnv: the counts called it too
