"""benchbot history record: every first-parent commit of a range compared with its parent
and kept in a store (``historydoc``), one file per commit (docs/cli.md, "History").

Each step is a whole comparison under the config's rule, through ``measure.lab.RepoLab``: one
worktree per tree, each built once, ``engine.compare_built`` on the two builds, a commit
whose worktree after the build equals its parent's (``measure.lab.output_hash``) stored as
``identical`` and not measured. A step that settles early is measured on until its
estimate is within ``precision`` (the trend's figures need more than a verdict does). The store is written a commit at a time
and atomically, so an interruption (Ctrl-C, SIGTERM, a crash) loses at most the step
being measured; a second call measures only the commits the store lacks. A lock keeps
two records from writing one store at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchbot.config.config import Config
from benchbot.config.find import read_config
from benchbot.config.load import load_config
from benchbot.core.errors import BenchbotError, GitError, UsageError
from benchbot.core.model import Benchmark, ProfileMode, Results
from benchbot.git import gitops
from benchbot.history import historydoc
from benchbot.history.historydoc import (
    CommitRecord,
    CommitRef,
    StepSettings,
    Store,
    Where,
    WorkloadStep,
)
from benchbot.measure.lab import RepoLab, first_parent_line
from benchbot.run.runner import Spawner
from benchbot.verdict import trend

if TYPE_CHECKING:
    from benchbot.measure.engine import Reporter

# A settled step is measured on until the trend's estimate of it is within ±0.5% (its 95%
# interval: a standard error of about 0.26%).
PRECISION = 0.005
MIN_STEP_S = 5.0  # a step is not started with less than this left of the range's budget


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """What to record: the range A..B of a repository, into a store."""

    repo: Path
    range: str  # A..B: the first-parent commits after A up to B
    store: Path
    budget_s: float | None = None  # the whole range (None: the config's budget a step)
    config_path: Path | None = None
    config: Config | None = None  # read already (the GitHub layer)
    seed: int | None = None
    precision: float = PRECISION
    repository: str | None = None
    require_sandbox: bool = False


@dataclass(slots=True)
class Recorded:
    """What a record did: the commits it wrote, those the store had already, and those it
    left for the next call (the budget was spent)."""

    written: list[CommitRecord] = field(default_factory=list)
    present: int = 0
    left: list[str] = field(default_factory=list)
    wall_s: float = 0.0


def split_range(text: str) -> tuple[str, str]:
    """``A..B`` as (A, B); UsageError for anything else."""
    start, sep, end = text.partition("..")
    if not sep or not start or not end or end.startswith("."):
        raise UsageError(f"benchbot history record: --range {text!r} is not A..B "
                         "(two revisions, e.g. v1.0..main)")
    return start, end


def record(request: Request, *, reporter: Reporter | None = None,
           source_env: Mapping[str, str] | None = None,
           clock: Callable[[], float] = time.monotonic,
           spawner_factory: Callable[[Path], Spawner] | None = None) -> Recorded:
    """Record every commit of the range the store lacks (module docstring)."""
    from benchbot.measure import engine

    started = clock()
    notes = reporter or engine.Reporter()
    first, last = split_range(request.range)
    repo = gitops.toplevel(request.repo)
    start, end = gitops.resolve_all(repo, [first, last])
    commits = first_parent_line(repo, start, end, names=(first, last))
    store = Store(request.store)
    with _locked(store):
        done = {i for i, (sha, _, _) in enumerate(commits) if i and store.has(sha)}
        todo = [i for i in range(1, len(commits)) if i not in done]
        out = Recorded(present=len(done))
        notes.note(f"{len(commits) - 1} commits in {first}..{last}: {len(done)} in the store, "
                   f"{len(todo)} to record")
        if not todo:
            return out
        config = _config(request, repo, start)
        seed = request.seed if request.seed is not None else (
            config.seed if config.seed is not None else secrets.randbits(31))
        budget = request.budget_s if request.budget_s is not None else config.budget_s * len(todo)
        engine.check_pins(config)
        with engine.bench(repo, config, source_env=source_env, reporter=notes,
                          require_sandbox=request.require_sandbox) as where, \
                gitops.WorktreePool(repo) as pool:
            lab = RepoLab(commits, config, where=where, pool=pool, seed=seed, reporter=notes,
                          clock=clock, repository=request.repository,
                          spawner_factory=spawner_factory)
            walk = _Walk(commits=commits, store=store, lab=lab, config=config, seed=seed,
                         request=request, notes=notes, clock=clock,
                         deadline=started + budget, out=out)
            walk.run(todo)
    out.wall_s = round(clock() - started, 3)
    return out


def step(repo: Path, start: str, end: str, config: Config, *, seed: int,
         precision: float = PRECISION, repository: str | None = None,
         require_sandbox: bool = False, reporter: Reporter | None = None,
         source_env: Mapping[str, str] | None = None,
         clock: Callable[[], float] = time.monotonic) -> tuple[CommitRecord, Results | None]:
    """One step of ``end`` against ``start`` (SHAs on ``end``'s first-parent line), the
    commits between held in it (a push measured at once): its record, and the results
    document where it was measured. GitError when ``start`` cannot be built."""
    from benchbot.measure import engine

    notes = reporter or engine.Reporter()
    commits = first_parent_line(repo, start, end, names=(start[:12], end[:12]))
    engine.check_pins(config)
    with engine.bench(repo, config, source_env=source_env, reporter=notes,
                      require_sandbox=require_sandbox) as where, \
            gitops.WorktreePool(repo) as pool:
        lab = RepoLab(commits, config, where=where, pool=pool, seed=seed, reporter=notes,
                      clock=clock, repository=repository)
        why = lab.prepare(0)
        if why is not None:
            raise GitError(f"{start[:12]}, the commit to compare with, cannot be built: {why}")
        return measure_step(lab, commits, config, against=0, index=len(commits) - 1, seed=seed,
                            budget_s=config.budget_s, precision=precision,
                            repository=repository, clock=clock, spans=True)


@contextlib.contextmanager
def _locked(store: Store) -> Iterator[None]:
    """Hold the store's lock (a file ``.lock`` in it) while recording."""
    store.path.mkdir(parents=True, exist_ok=True)
    fd = os.open(store.path / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BenchbotError(f"{store.path}: another benchbot history record is writing "
                                "this store; wait for it to end") from None
        yield
    finally:
        os.close(fd)


def _config(request: Request, repo: Path, start: str) -> Config:
    """The config as given, or --config's file, or the one at the range's start."""
    if request.config is not None:
        return request.config
    if request.config_path is not None:
        return load_config(request.config_path)
    return read_config(repo, start)


@dataclass(slots=True, kw_only=True)
class _Walk:
    """The range walked forward, one step a commit the store lacks."""

    commits: Sequence[tuple[str, str, str]]
    store: Store
    lab: RepoLab
    config: Config
    seed: int
    request: Request
    notes: Reporter
    clock: Callable[[], float]
    deadline: float
    out: Recorded
    built: dict[int, bool] = field(default_factory=dict)  # commit: stored, and not failed

    def run(self, todo: Sequence[int]) -> None:
        for k, i in enumerate(todo):
            against = self._against(i)
            if self.deadline - self.clock() < MIN_STEP_S:
                self.out.left = [self.commits[j][0] for j in todo[k:]]
                self.notes.note(f"the budget is spent: {len(self.out.left)} commits left for "
                                "the next record")
                return
            self._ready(against)
            doc = self._step(against, i, remaining=len(todo) - k)
            self.store.write(doc)
            self.built[i] = doc.state != "failed"
            self.out.written.append(doc)
            self.notes.note(f"{i}/{len(self.commits) - 1} {doc.sha[:12]}: {_said(doc)}")
            if doc.state != "failed":
                self.lab.release(i)

    def _against(self, index: int) -> int:
        """The nearest commit before ``index`` that was built (stored as measured or
        identical, or the range's start)."""
        for j in range(index - 1, 0, -1):
            if j not in self.built:
                self.built[j] = _built(self.store, self.commits[j][0])
            if self.built[j]:
                return j
        return 0

    def _ready(self, index: int) -> None:
        why = self.lab.prepare(index)
        if why is not None:
            what = "the range's start" if index == 0 else "the commit to compare with"
            raise GitError(f"{what} {self.commits[index][0][:12]} cannot be built: {why}")

    def _step(self, against: int, index: int, *, remaining: int) -> CommitRecord:
        budget = min(self.config.budget_s, (self.deadline - self.clock()) / remaining)
        return measure_step(self.lab, self.commits, self.config, against=against, index=index,
                            seed=self.seed + index, budget_s=budget,
                            precision=self.request.precision,
                            repository=self.request.repository, clock=self.clock,
                            profile="off")[0]


def measure_step(lab: RepoLab, commits: Sequence[tuple[str, str, str]], config: Config, *,
                 against: int, index: int, seed: int, budget_s: float, precision: float,
                 repository: str | None, clock: Callable[[], float],
                 spans: bool = False,
                 profile: ProfileMode | None = None) -> tuple[CommitRecord, Results | None]:
    """Commit ``index`` of ``commits`` measured against commit ``against`` (the reference):
    its record, and the results document where it was measured. The commits between are
    ``skipped`` (they could not be built), or with ``spans`` the step's own (a push of
    several commits measured at once). ``profile``: which workloads are profiled, where
    not the config's (the store's walk: none, its records keep no profile; a push's
    step, whose results document is written, as the config says)."""
    sha, _, subject = commits[index]
    between = tuple(CommitRef(sha=s, subject=t) for s, _, t in commits[against + 1:index])
    common: dict[str, Any] = dict(
        repository=repository, commit=CommitRef(sha=sha, subject=subject),
        against=CommitRef(sha=commits[against][0], subject=commits[against][2]),
        **({"spans": between} if spans else {"skipped": between}))
    started = clock()
    why = lab.prepare(index)
    if why is not None:
        return historydoc.record(**common, state="failed", why=why), None
    ours, theirs = lab.output_hash(index), lab.output_hash(against)
    if ours is not None and ours == theirs:
        return historydoc.record(**common, state="identical",
                                 why="identical build output: not measured",
                                 workloads=identical_steps(config)), None
    doc = lab.results(against, index, budget_s=budget_s, seed=seed, precision=precision,
                      profile=profile)
    record = historydoc.record(
        **common, state="measured", workloads=steps_of(doc, seed=seed),
        settings=StepSettings(alpha=config.alpha, seed=seed, budget_s=round(budget_s, 3),
                              precision=precision, config=config.path,
                              runs=doc.settings.runs or None, max_runs=doc.settings.max_runs),
        environment=where_of(doc), wall_s=round(clock() - started, 3))
    return record, doc


def _built(store: Store, sha: str) -> bool:
    """Whether the store holds ``sha`` as measured or identical (it built)."""
    path = store.file(sha)
    if not path.is_file():
        return False
    try:
        return historydoc.load(path).state != "failed"
    except BenchbotError:
        return False


def _said(doc: CommitRecord) -> str:
    if doc.state != "measured":
        return doc.state + (f" ({doc.why})" if doc.why and doc.state == "failed" else "")
    calls = [f"{w.name} {w.outcome}" for w in doc.workloads if w.outcome in ("slower", "faster")]
    return ", ".join(calls) if calls else "no change called"


# --- a results document as the store keeps it ----------------------------------------------


def identical_steps(config: Config) -> tuple[WorkloadStep, ...]:
    """Each workload of an identical build: level by construction, a step of exactly 0."""
    return tuple(WorkloadStep(name=w.name, unit="ns" if w.better == "lower" else (w.unit or "reported"),
                              better=w.better, metric=w.metric, parity=w.parity,
                              outcome="level", reason="identical build output: not measured",
                              step=trend.IDENTICAL)
                 for w in config.workloads)


def steps_of(doc: Results, *, seed: int) -> tuple[WorkloadStep, ...]:
    """Each benchmark of a results document as the store keeps it."""
    return tuple(_step_of(b, seed) for b in doc.benchmarks)


def _step_of(bench: Benchmark, seed: int) -> WorkloadStep:
    v = bench.verdict
    ratio, ci = (v.estimate, v.estimate_ci) if v.estimate is not None else (v.ratio, v.ci)
    reason = v.reason if v.reason is None or len(v.reason) <= historydoc.REASON_LIMIT else (
        v.reason[: historydoc.REASON_LIMIT - 1] + "…")
    return WorkloadStep(
        name=bench.name, unit=bench.unit, better=bench.better, metric=bench.metric,
        parity=bench.parity, outcome=v.outcome, reason_code=v.reason_code, reason=reason,
        ratio=ratio, ci=ci, pairs=bench.measuring.pairs if bench.measuring else v.n,
        stopped=bench.measuring.why if bench.measuring else None,
        step=estimate_of(bench, seed),
        counts=bench.counts.reading if bench.counts is not None else None,
        memory=bench.memory.outcome if bench.memory is not None else None,
        settled_by=v.settled_by,
        work=bench.counts.ratio if bench.counts is not None and bench.counts.method else None)


def estimate_of(bench: Benchmark, seed: int) -> trend.StepEstimate | None:
    """The trend's estimate of a benchmark's step from its runs (``trend.phases_estimate``);
    None for a workload judged on instruction counts alone."""
    if bench.metric == "instructions":
        return None
    triplets = bench.measuring is not None and bench.measuring.design == "triplets"
    return trend.phases_estimate(bench.phases, triplets=triplets,
                                 higher_is_better=bench.better == "higher", seed=seed)


def where_of(doc: Results) -> Where:
    env = doc.environment
    return Where(machine=env.machine.label if env.machine else None, cores=env.cores,
                 load_before=env.load_before, load_after=env.load_after,
                 sandbox=doc.sandbox.kind if doc.sandbox else None, warnings=env.warnings)
