"""benchbot bisect: the search of ``bisectsearch`` run on a repository's commits, every
step a whole comparison under the same rule (docs/verdict.md, "Bisecting: many
comparisons, one error"; docs/cli.md, "Bisect").

``RepoLab`` is the search's ``Lab`` for real: one worktree per distinct tree, built once
and kept until the bisect ends, the output of each build hashed, every step run through
``engine.compare_built``. ``bisect`` wires config, sandbox, worktrees, lab and search and
returns the document (``bisectdoc``); the GitHub layer calls it with a pull request's
base and head.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from benchbot.bisect.bisectdoc import (
    BisectResults,
    BisectSettings,
    Commit,
    build_document,
)
from benchbot.bisect.steps import CALLS, IDENTICAL, EndError, Found, Search
from benchbot.config.config import Config
from benchbot.config.find import read_config
from benchbot.config.load import load_config
from benchbot.config.settings import Overrides
from benchbot.core.errors import ConfigError
from benchbot.core.model import Revision, SandboxInfo
from benchbot.git import gitops
from benchbot.measure import lab
from benchbot.run import machine

if TYPE_CHECKING:
    from benchbot.measure.engine import Reporter

__all__ = ["BUDGET_FACTOR", "CALLS", "IDENTICAL", "EndError", "RepoLab", "Request", "bisect"]

BUDGET_FACTOR = 3  # the default bisect budget: this many times the config's budget


# --- the laboratory, with what the search asks of it ----------------------------------------


class RepoLab(lab.RepoLab):
    """``lab.RepoLab`` as the search's ``Lab``: a step's verdict as the search reads it, and
    each commit as the document records it."""

    def compare(self, left: int, right: int, *, alpha: float, budget_s: float,
                number: int, estimate: bool = True) -> Found:
        # Only a step that can name a commit (``estimate``) is profiled where it calls a
        # change: the culprit against its parent (docs/verdict.md, "Where the change is").
        doc = self.results(left, right, budget_s=budget_s, seed=self.seed + 10 * number,
                           alpha=alpha, estimate=estimate,
                           profile=self.config.profile if estimate else "off")
        [bench] = doc.benchmarks
        v = bench.verdict
        failed = any(p.failure is not None for p in bench.phases.values())
        counted = bench.counts is not None and bench.counts.method is not None
        return Found(outcome=v.outcome, reason=v.reason, ratio=v.ratio, ci=v.ci,
                     pairs=bench.measuring.pairs if bench.measuring else v.n,
                     runs_failed=failed, settled_by=v.settled_by,
                     work=bench.counts.ratio if counted and bench.counts else None,
                     counts=bench.counts.reading if counted and bench.counts else None,
                     profile=bench.profile)

    def commit_records(self, search: Search) -> tuple[Commit, ...]:
        out = []
        for i, (sha, tree, subject) in enumerate(self.commits):
            state = self.built.get(tree, "not built")
            if i in search.skipped:
                build, why = "skipped", search.skipped[i]
            elif state is None:
                build, why = "ok", None
            else:
                build, why = "not_built", None if state == "not built" else state
                if state != "not built":
                    build = "skipped"
            out.append(Commit(sha=sha, subject=subject, tree=tree, build=build,  # type: ignore[arg-type]
                              why=why, output_hash=self.hashes.get(tree)))
        return tuple(out)


# --- the whole bisect ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """What to bisect: the command line, or a /bench bisect comment (base and head of the
    pull request as good and bad)."""

    repo: Path
    good: str
    bad: str
    workload: str
    budget_s: float | None = None  # the whole bisect (None: BUDGET_FACTOR × the config's)
    config_path: Path | None = None
    config: Config | None = None  # read already (the GitHub layer: at the base)
    seed: int | None = None
    repository: str | None = None
    require_sandbox: bool = False


def bisect(request: Request, *, reporter: Reporter | None = None,
           source_env: Mapping[str, str] | None = None,
           clock: Callable[[], float] = time.monotonic) -> BisectResults:
    """Search good..bad for the commit(s) carrying the workload's change; the document.

    Every worktree is removed on the way out, also on an error or Ctrl-C."""
    from benchbot.measure import engine

    started = clock()
    notes = reporter or engine.Reporter()
    repo = gitops.toplevel(request.repo)
    good, bad = gitops.resolve_all(repo, [request.good, request.bad])
    commits = _commits(repo, request, good, bad)
    config = _config(request, repo, good)
    budget_s = request.budget_s if request.budget_s is not None else BUDGET_FACTOR * config.budget_s
    seed = request.seed if request.seed is not None else (
        config.seed if config.seed is not None else secrets.randbits(32))
    engine.check_pins(config)
    before = machine.snapshot()
    with engine.bench(repo, config, source_env=source_env, reporter=notes,
                      require_sandbox=request.require_sandbox) as where, \
            gitops.WorktreePool(repo) as pool:
        lab = RepoLab(commits, config, where=where, pool=pool, seed=seed, reporter=notes,
                      clock=clock, repository=request.repository)
        search = Search(lab=lab, shas=[c[0] for c in commits], alpha=config.alpha,
                        deadline=started + budget_s, step_cap_s=config.budget_s, clock=clock,
                        notes=notes)
        answer = search.run()
        records = lab.commit_records(search)
        box = SandboxInfo(kind=where.box.kind, description=where.box.description)
    [w] = config.workloads
    return build_document(
        good=Revision(ref=request.good, sha=good), bad=Revision(ref=request.bad, sha=bad),
        workload=w.name, commits=records, steps=tuple(search.steps), answer=answer,
        settings=BisectSettings(alpha=config.alpha, parity=w.parity, budget_s=budget_s,
                                step_budget_s=config.budget_s, seed=seed, config=config.path,
                                runs=w.runs, max_runs=w.max_runs),
        environment=machine.finish(before), sandbox=box, repository=request.repository,
        wall_s=round(clock() - started, 3))


def _commits(repo: Path, request: Request, good: str, bad: str) -> list[tuple[str, str, str]]:
    """good and the first-parent commits after it up to bad, or GitError saying why not."""
    return lab.first_parent_line(repo, good, bad, names=(f"--good {request.good}",
                                                     f"--bad {request.bad}"))


def _config(request: Request, repo: Path, good: str) -> Config:
    """The config read at good (or as given) with only the workload, measured as it says."""
    over = Overrides(only=(request.workload,))
    if request.config is not None:
        config = request.config.with_overrides(over)
    elif request.config_path is not None:
        config = load_config(request.config_path).with_overrides(over)
    else:
        config = read_config(repo, good).with_overrides(over)
    if config.suites or len(config.workloads) != 1:
        raise ConfigError(f"{config.path}: bisect follows one workload of its own; "
                          f"{request.workload!r} is a suite's (give one of its own workloads)")
    return config
