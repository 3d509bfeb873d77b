"""Where the budget goes when it cannot carry every workload to a decision: a real
repository and the real engine, with a spawner that takes (by sleeping) and reports the
times planted here, so that the budget runs short in a few seconds."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from benchbot import engine
from benchbot.model import Results
from benchbot.runner import RawRun, SpawnRequest
from benchbot.settings import Overrides
from tests.conftest import MakeRepo

BASE_S = 0.008  # each run takes about this long


class PlantedSpawner:
    """``change``'s head runs take 8% longer than its base runs, with little noise; the
    other workloads' runs are the same in both builds and vary by about 30%, so that they
    need hundreds of pairs to be called level."""

    def __init__(self, change: str, seed: int = 5) -> None:
        self.change = change
        self.rng = np.random.default_rng(seed)

    def spawn(self, request: SpawnRequest) -> RawRun:
        name = request.argv[1]
        head = Path(request.cwd).name == "head"
        if name == self.change:
            wall = BASE_S * (1.08 if head else 1.0) * self.rng.lognormal(0.0, 0.01)
        else:
            wall = BASE_S * self.rng.lognormal(0.0, 0.3)
        time.sleep(wall)
        ns = int(wall * 1e9)
        return RawRun(wall_ns=ns, cpu_ns=ns, maxrss_kib=1, returncode=0)


CONFIG = "version: 1\nworkloads:\n" + "".join(
    f"  - {{name: {n}, run: [echo, {n}]}}\n" for n in ("noisy1", "change", "noisy2"))


def _compare(repo: Path, budget_s: float) -> Results:
    spawner = PlantedSpawner("change")
    return engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                         overrides=Overrides(budget=budget_s, seed=11)),
                          spawner_factory=lambda _: spawner)


def test_a_pending_change_keeps_its_rounds_when_the_budget_runs_short(make_repo: MakeRepo) -> None:
    # In rounds that take every workload in turn, 3 s buy about 35 triplets each, short
    # of the 51 pairs from which a change is called; given the budget first, the change
    # reaches them while the noisy workloads, far from settling, wait.
    repo = make_repo({"benchbot.yml": CONFIG})
    doc = _compare(repo, budget_s=3.0)
    by_name = {b.name: b for b in doc.benchmarks}
    change = by_name["change"]
    assert change.measuring is not None
    assert change.verdict.outcome == "slower", change.verdict.reason
    assert change.measuring.pairs >= 51
    for name in ("noisy1", "noisy2"):
        b = by_name[name]
        assert b.measuring is not None and b.measuring.stopped == "budget"
        assert b.verdict.outcome == "inconclusive"  # never a call on unchanged builds
        assert b.measuring.pairs < change.measuring.pairs


def test_with_budget_enough_every_workload_goes_on(make_repo: MakeRepo) -> None:
    # The same planted times with a budget that is not short at the first looks: the
    # noisy workloads get rounds beside the change until it is called.
    repo = make_repo({"benchbot.yml": CONFIG})
    doc = _compare(repo, budget_s=6.0)
    by_name = {b.name: b for b in doc.benchmarks}
    assert by_name["change"].verdict.outcome == "slower"
    for name in ("noisy1", "noisy2"):
        b = by_name[name]
        assert b.measuring is not None and b.measuring.pairs >= 34
        assert b.verdict.outcome in ("level", "inconclusive")
