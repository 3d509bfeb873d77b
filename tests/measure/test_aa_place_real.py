"""Base again from its own place, with real processes in the sandbox (slow tier): its runs
start in the copy of base's build, in a worker of its own; a build that names its own path
(a script that calls base's worktree by its absolute path, which the copy's sandbox does
not show) falls back to base's place with a warning, and is still compared."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchbot.measure import engine
from benchbot.results.resultsdir import to_json as as_json
from benchbot.sandbox import bwrap
from tests.conftest import MakeRepo

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not bwrap.probe().works,
                       reason=f"bubblewrap cannot make a sandbox here: {bwrap.probe().problem}"),
]

PROG = 'basename "$PWD" >> "{log}/{name}"\n'


def test_base_again_runs_in_its_own_place_and_falls_back_where_a_copy_cannot_run(
        make_repo: MakeRepo, tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.mkdir()
    config = (f"version: 1\nconfirm: off\nsandbox: {{mode: on, writable: ['{log}']}}\n"
              # abs.sh calls prog.sh in its own worktree by that worktree's absolute path
              "build: printf '#!/bin/sh\\nexec sh %s/named.sh\\n' \"$PWD\" > abs.sh\n"
              "defaults: {runs: 10, warmup: 1}\n"
              "workloads:\n  - {name: rel, run: [sh, rel.sh]}\n"
              "  - {name: abs, run: [sh, abs.sh]}\n")
    files = {"benchbot.yml": config, "rel.sh": PROG.format(log=log, name="rel"),
             "named.sh": PROG.format(log=log, name="abs")}
    repo = make_repo(files, {"rel.sh": PROG.format(log=log, name="rel") + "true\n"})
    doc = as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD")))
    rel = (log / "rel").read_text().split()
    assert set(rel) == {"base", "head", "agai"}, sorted(set(rel))
    assert rel.count("agai") == rel.count("head")  # warm-ups and 10 pairs each
    # abs.sh from the copy names base's worktree, not shown to the copy's worker: its
    # base again runs from base's place
    assert set((log / "abs").read_text().split()) == {"base", "head"}
    warned = [w for w in doc["environment"]["warnings"] if "base again" in w]
    assert len(warned) == 1 and warned[0].startswith("abs: a run of base's build from its copy")
    bench = {b["name"]: b for b in doc["benchmarks"]}
    for name in ("rel", "abs"):
        assert bench[name]["verdict"]["outcome"] != "invalid", bench[name]["verdict"]
        assert len(bench[name]["phases"]["aa"]["arms"]["base_again"]["samples_ns"]) == 10
