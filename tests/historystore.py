"""A synthetic history store: many commits and workloads of planted step estimates, written
as ``benchbot history record`` writes its files, for the report's speed and the page."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from benchbot.history import historydoc
from benchbot.history.historydoc import CommitRef, StepSettings, WorkloadStep
from benchbot.verdict.trend import StepEstimate


def sha_of(seed: int, i: int) -> str:
    return hashlib.sha1(f"{seed}-{i}".encode()).hexdigest()


def synthetic_store(path: Path, *, commits: int = 500, workloads: int = 50, seed: int = 1,
                    changes: Mapping[tuple[int, int], float] | None = None,
                    se: float = 0.001) -> list[str]:
    """``commits`` records (after a start commit), each with ``workloads`` steps of no
    change but noise of ``se``, except ``changes[(workload, commit)]``, a ratio: its step
    (called when beyond 2%). The SHAs, start first."""
    rng = np.random.default_rng(seed)
    store = historydoc.Store(path)
    shas = [sha_of(seed, i) for i in range(commits + 1)]
    for i in range(1, commits + 1):
        steps = []
        for k in range(workloads):
            ratio = (changes or {}).get((k, i), 1.0)
            centre = math.log(ratio) + float(rng.normal(0.0, se))
            outcome = ("slower" if ratio > 1.02 else "faster" if ratio < 1 / 1.02 else "level")
            steps.append(WorkloadStep(
                name=f"suite/bench_{k:02d}", outcome=outcome, ratio=math.exp(centre),
                ci=(math.exp(centre - 2 * se), math.exp(centre + 2 * se)), pairs=120,
                stopped="settled", step=StepEstimate(n=120, centre=centre, se=se)))
        store.write(historydoc.record(
            commit=CommitRef(sha=shas[i], subject=f"change {i}: <b>tune</b> @someone #12"),
            against=CommitRef(sha=shas[i - 1], subject=f"change {i - 1}"), state="measured",
            workloads=tuple(steps), settings=StepSettings(alpha=0.05, seed=i, budget_s=60.0)))
    return shas
