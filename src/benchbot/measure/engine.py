"""The whole comparison: config, worktrees, builds, A/A, A/B, confirmation, verdicts.

This module wires the stages in the order docs/verdict.md gives; every decision about
what a figure means lives in ``stats``, every byte of the results file in ``results``.

Why one module of about 680 lines: the comparison's wiring in the order docs/verdict.md
gives, including the part that bisect and history run on checkouts built beforehand
(``compare_built``); every decision it wires lives in another package.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import secrets
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchbot.config.config import Config
from benchbot.config.find import read_config
from benchbot.config.load import load_config
from benchbot.config.settings import Overrides
from benchbot.core import trees
from benchbot.core.errors import BuildError, ConfigError
from benchbot.core.model import (
    AASummary,
    Environment,
    Family,
    Results,
    Revision,
    SandboxInfo,
    Shard,
    ShardInfo,
    Skipped,
    Spent,
)
from benchbot.git import gitops, skipping
from benchbot.results import shards
from benchbot.run import machine
from benchbot.run.runner import ProcessSpawner, Spawner, Target, target
from benchbot.sandbox import bwrap, counting, procs

if TYPE_CHECKING:
    from benchbot.measure import context

# The statistics and the results file (numpy, jsonschema: about 0.2 s of imports) are
# imported by ``_Ahead`` while git and the builds run, not before them.
_HEAVY = ("benchbot.verdict.stats", "benchbot.verdict.judge", "benchbot.measure.measuring", "benchbot.results.resultsdir")


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """What the user asked to compare, and how (the command line or a /bench comment)."""

    repo: Path
    base: str
    head: str  # a revision, or WORKTREE (the uncommitted working tree)
    config_path: Path | None = None
    overrides: Overrides = field(default_factory=Overrides)  # over the config read (not ``config``)
    repository: str | None = None
    resolve_merge_base: bool = True  # False: take `base` as given (the caller resolved it)
    config: Config | None = None  # read and overridden already (benchbot github: at the base)
    shard: Shard | None = None  # measure only this share of the workloads (shards.py)
    shard_costs: Mapping[str, float] | None = None  # seconds each took before, to split by
    require_sandbox: bool = False  # sandbox: auto refuses to run unconfined (benchbot github)


class Reporter:
    """Receives progress; the CLI prints it, tests record it. Does nothing by default."""

    def phase(self, name: str, workloads: int, runs: int) -> None:
        """A phase begins: its name, how many workloads and runs it plans."""

    def progress(self, phase: str, workload: str, done: int, planned: int,
                 left_s: float | None = None) -> None:
        """One more run finished in the phase; ``left_s``: the seconds the budget leaves,
        where it bounds the phase (measuring sequentially)."""

    def note(self, message: str) -> None:
        """Something worth a line (the sandbox used, the demo's repository)."""

    def building(self, side: str, sha: str) -> None:
        """A build begins in one worktree."""
        self.note(f"building {side} ({sha[:12]})")


def read_request_config(request: Request, repo: Path, base_sha: str) -> Config:
    """The config with the request's overrides over it: as given, else --config's file,
    else the one at the base revision (never the head's)."""
    if request.config is not None:
        return request.config
    if request.config_path is not None:
        return load_config(request.config_path).with_overrides(request.overrides)
    return read_config(repo, base_sha).with_overrides(request.overrides)


@dataclass(frozen=True, slots=True)
class _Plan:
    """The request resolved: the repository, both revisions, the config and this share of it."""

    repo: Path
    git_dir: Path  # its .git directory, shared by the worktrees
    base: Revision
    head: Revision
    whole: Config  # every workload measured, with the user's overrides applied
    part: shards.Plan  # what this machine measures (the whole, unless --shard)
    seed: int
    skipped: tuple[Skipped, ...] | None = None  # not affected by the change (``paths``)

    @property
    def config(self) -> Config:
        return self.part.config


def _resolve(request: Request) -> _Plan:
    """Revisions to SHAs, the config read at the base and overridden, the shard chosen."""
    repo, git_dir = gitops.locate(request.repo)
    head_ref = gitops.WORKTREE if request.head in (gitops.WORKTREE, ".") else request.head
    if head_ref == gitops.WORKTREE:
        base_sha, head_sha = gitops.resolve(repo, request.base), gitops.snapshot(repo)
    else:
        base_sha, head_sha = gitops.resolve_all(repo, [request.base, request.head])
    whole = read_request_config(request, repo, base_sha)
    if request.resolve_merge_base and whole.base == "merge-base":
        base_sha = gitops.merge_base(repo, base_sha, head_sha)
    whole, skipped = _skip_unaffected(repo, whole, base_sha, head_sha)
    part = shards.plan(whole, request.shard, request.shard_costs)
    check_pins(part.config)
    seed = part.config.seed if part.config.seed is not None else secrets.randbits(32)
    return _Plan(repo=repo, git_dir=git_dir, base=Revision(ref=request.base, sha=base_sha),
                 head=Revision(ref=head_ref, sha=head_sha), whole=whole, part=part, seed=seed,
                 skipped=skipped)


def split_of(repo: Path, config: Config, base_sha: str, head_sha: str, count: int,
             measured: Mapping[str, float] | None = None) -> shards.Split:
    """The split of a comparison of ``base_sha`` and ``head_sha`` in ``count`` shards, as
    each shard's ``_resolve`` makes it: ``config`` (read and overridden as the shards read
    it) less the workloads the change cannot affect, split by ``measured`` costs. A
    suite's benchmarks are in no config: the split names its suites, and ``merging``
    checks each shard's share of them against the list its file states."""
    whole, skipped = _skip_unaffected(repo, config, base_sha, head_sha)
    return shards.expected(whole, count, measured, tuple(s.name for s in skipped or ()))


def _skip_unaffected(repo: Path, config: Config, base_sha: str,
                     head_sha: str) -> tuple[Config, tuple[Skipped, ...] | None]:
    """The config without the workloads the change cannot affect, and those (None when
    none is skipped). Done before the split into shards, which every shard computes from
    the same two commits alike: a skipped workload is in no shard and in no family of
    the error control, since it is not compared."""
    units = [*config.workloads, *(s.settings for s in config.suites)]  # a suite as a whole
    if all(w.paths is None for w in units):
        return config, None  # no git process for a config without paths
    skipped = skipping.unaffected(units, gitops.changed_files(repo, base_sha, head_sha))
    if not skipped:
        return config, None
    names = {s.name for s in skipped}
    return dataclasses.replace(
        config, workloads=tuple(w for w in config.workloads if w.name not in names),
        suites=tuple(s for s in config.suites if s.name not in names)), skipped


def compare(
    request: Request,
    *,
    reporter: Reporter | None = None,
    spawner_factory: Callable[[Path], Spawner] | None = None,
    source_env: Mapping[str, str] | None = None,
    prepare: Callable[[], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Results:
    """Run the whole comparison and return the results document (results.SCHEMA_VERSION).

    The code under test (the build and every run) gets the environment of
    ``sandbox.clean_env`` made from ``source_env`` (default: this process's), and runs in
    the sandbox the config asks for. ``spawner_factory`` replaces the process layer (tests).
    ``prepare`` is the caller's own warming up (compiling its report templates), done in
    a thread while git and the builds run and finished before the first run. ``clock``
    (seconds) is what the budget is counted on: a fake one lets tests spend a budget
    without waiting for it.
    """
    started = clock()  # the budget counts from here: builds take from it too
    ahead = _Ahead(prepare)
    # Whether bubblewrap works here (two bwrap processes, 20-40 ms) is found out while git
    # resolves the revisions and reads the config; sandbox.choose then has the answer.
    probing = threading.Thread(target=bwrap.probe, name="benchbot-probe", daemon=True)
    probing.start()
    try:
        return _compare(request, _Start(started, clock), ahead, reporter or Reporter(),
                        spawner_factory, source_env, probing)
    finally:
        probing.join()
        ahead.join()  # on the way out of an error too: no import is left running at exit


@dataclass(frozen=True, slots=True)
class _Start:
    """When the comparison began, on the clock its budget is counted on."""

    at: float
    clock: Callable[[], float]


def _compare(request: Request, started: _Start, ahead: _Ahead, reporter: Reporter,
             spawner_factory: Callable[[Path], Spawner] | None,
             source_env: Mapping[str, str] | None, probing: threading.Thread) -> Results:
    plan = _resolve(request)
    config, part = plan.config, plan.part

    def document(**parts: Any) -> Results:
        from benchbot.results import resultsdir

        return resultsdir.build(
            config=parts.pop("config", plan.whole), base=plan.base, head=plan.head, seed=plan.seed,
            repository=request.repository, fail_on=config.status.fail_on, repo=str(plan.repo),
            config_file=str(request.config_path.resolve()) if request.config_path else None,
            family=parts.pop("family", part.family), shard=part.shard,
            config_digest=part.digest, skipped=plan.skipped, **parts,
        )  # fmt: skip

    if plan.skipped:
        reporter.note(f"skipped, not affected by this change (paths): "
                      f"{', '.join(s.name for s in plan.skipped)}")
    if part.shard is not None:
        reporter.note(f"shard {request.shard}: {len(config.workloads)} of "
                      f"{len(plan.whole.workloads)} workloads"
                      + (f", and its share of the benchmarks of {len(config.suites)} "
                         f"{'suite' if len(config.suites) == 1 else 'suites'} (each shard "
                         "discovers them all)" if config.suites else ""))
    if not config.workloads and not config.suites:
        # Nothing to build or measure (every workload skipped, or a shard the split gave
        # none): no worktree, no build, none of the change's code runs; a file of its own
        # says so.
        return document(workloads=[], environment=machine.finish(machine.snapshot()),
                        aa=AASummary(status="skipped", abort_fraction=config.aa.abort_fraction))
    source = os.environ if source_env is None else source_env
    probing.join()
    box = bwrap.choose(config.sandbox.mode, source=source, read_only=config.sandbox.read_only,
                         require=request.require_sandbox)
    reporter.note(f"sandbox: {box.description}")
    got = _measure(plan, box, bwrap.clean_env(source, pass_env=config.pass_env),
                   reporter=reporter, spawner_factory=spawner_factory, ahead=ahead,
                   deadline=started.at + config.budget_s, clock=started.clock)
    # A shard's own file applies the A/A abort rule to its own workloads; merge applies
    # it again to all of them.
    measured_config = got.measured.config or plan.whole
    if part.shard is not None and plan.whole.suites:
        # The file's settings as every shard states them alike (merge compares them): from
        # the whole's workloads and each suite's settings, not from this shard's share.
        measured_config = dataclasses.replace(plan.whole, workloads=(
            *plan.whole.workloads, *(s.settings for s in plan.whole.suites)))
    # A shard's family is the whole's: the config's workloads and every benchmark its
    # suites discovered (the same on every shard, or merge refuses the shards).
    whole = (shards.with_suites(part.family, plan.whole.suites, got.measured.suites)
             if part.shard is not None else None)
    return document(**_judged_parts(config, got, box, plan.seed, whole),
                    config=measured_config,
                    family=whole or shards.family(measured_config),
                    spent=_spent(got.measured, started.clock() - started.at))


def _family(part: shards.Plan) -> Family | None:
    """The family a comparison's error control spans, where the judge cannot count it: a
    shard's (the whole's, given); else None, and the judge counts every workload it is
    given, a suite's benchmarks among them (known only once its harness ran: the plan,
    made before, does not hold them)."""
    return part.family if part.shard is not None else None


def _spent(measured: context.Measured, wall_s: float) -> Spent:
    """Where the comparison's wall time went (builds are the rest of ``wall_s``)."""
    return Spent(wall_s=round(wall_s, 3), counting_s=round(measured.counting_s, 3),
                 timed_s=round(sum(measured.timed_s.values()) + measured.discovery_s, 3),
                 profiling_s=round(measured.profiling_s, 3) if measured.profiles else None)


def _judged_parts(config: Config, got: _Measured, box: bwrap.Sandbox, seed: int,
                  family: Family | None) -> dict[str, Any]:
    """What was measured, judged: the results document's workloads, suites, environment,
    A/A summary and sandbox (``results.build``'s arguments)."""
    from benchbot.measure import context  # imported already, by _Ahead (compare)
    from benchbot.results import resultsdir  # imported already, by _Ahead (compare)
    from benchbot.verdict import judge  # imported already, by _Ahead (compare)

    config = got.measured.config or config  # with each suite's benchmarks as workloads
    judgement = judge.judge(got.measured.workloads(config),
                            context.policy(config, seed, family=family))
    return dict(
        workloads=[resultsdir.WorkloadResult(config=w, phases=got.measured.phases[w.name],
                                          judged=judgement.workloads[w.name],
                                          measuring=got.measured.measuring.get(w.name),
                                          profile=got.measured.profiles.get(w.name))
                   for w in config.workloads],
        suites=got.measured.suites,
        environment=_with_count_warnings(machine.finish(got.env_before, got.unreaped_cpu_s,
                                                        maxrss_floor_kib=got.measured.maxrss_floor_kib),
                                         config, got.measured),
        aa=judgement.aa, sandbox=SandboxInfo(kind=box.kind, description=box.description),
    )


# --- comparisons on checkouts built beforehand (bisect) ------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Bench:
    """What every comparison on already built checkouts shares (``benchbot bisect``): the
    repository, its .git directory, the sandbox, the code's environment and a scratch
    directory for logs and the sandbox's files."""

    repo: Path
    git_dir: Path
    box: bwrap.Sandbox
    env: Mapping[str, str]  # sandbox.clean_env's: what the builds and the runs get
    scratch: Path


@contextlib.contextmanager
def bench(repo: Path, config: Config, *, source_env: Mapping[str, str] | None = None,
          require_sandbox: bool = False, reporter: Reporter | None = None) -> Iterator[Bench]:
    """Open a ``Bench`` for ``repo`` with the sandbox ``config`` asks for; its scratch
    directory is removed on every way out."""
    top, git_dir = gitops.locate(repo)
    source = os.environ if source_env is None else source_env
    box = bwrap.choose(config.sandbox.mode, source=source, read_only=config.sandbox.read_only,
                         require=require_sandbox)
    (reporter or Reporter()).note(f"sandbox: {box.description}")
    if not box.active:  # as in _measure
        procs.become_subreaper()
        procs.make_undumpable()
    with _scratch() as scratch:
        yield Bench(repo=top, git_dir=git_dir, box=box, scratch=scratch,
                    env=bwrap.clean_env(source, pass_env=config.pass_env))


def build_checkout(where: Bench, config: Config, checkout: gitops.Checkout) -> None:
    """Run the config's build in one checkout, in the sandbox; BuildError when it fails."""
    confine = _Confinement(where.box, where.git_dir, where.scratch,
                           {"base": checkout, "head": checkout}, config)
    gitops.build(config.build, [checkout], env=where.box.adjust_env(where.env),
                 log_dir=where.scratch / "logs", wrap=confine.build_wrap(), parallel=False,
                 sweep=not where.box.active)


def compare_built(where: Bench, config: Config, base: gitops.Checkout, head: gitops.Checkout,
                  *, seed: int, reporter: Reporter | None = None, deadline: float,
                  clock: Callable[[], float] = time.monotonic,
                  spawner_factory: Callable[[Path], Spawner] | None = None,
                  repository: str | None = None, estimate: bool = True,
                  precision: float | None = None) -> Results:
    """Compare two checkouts built already (``build_checkout``) with the whole rule, as
    ``compare`` does after its builds: the results document of ``base`` against ``head``.
    ``deadline`` (on ``clock``) ends sequential measuring; ``estimate`` False stops a
    workload at its call instead of measuring on for its estimate; ``precision`` measures
    every settled workload on until its estimate is within that fraction each way (a
    history's step: ``context.Context.precision``)."""
    from benchbot.results import resultsdir

    co = {"base": base, "head": head}
    with contextlib.ExitStack() as stack:
        again = stack.enter_context(again_place(base.path, head.path))
        not_copied = copy_built(base.path, again)
        confine = _Confinement(where.box, where.git_dir, where.scratch, co, config, again)
        spawner = spawner_factory(where.scratch) if spawner_factory else confine.spawner(where.env)
        stack.callback(_close, spawner)
        got = _measure_checkouts(config, where.box, where.env, co, spawner, stack, seed=seed,
                                 family=None, abort=True, reporter=reporter or Reporter(),
                                 deadline=deadline, clock=clock, estimate=estimate,
                                 precision=precision, again=None if not_copied else again)
        got.measured.again_note = not_copied
    got = _with_spawner_figures(got, spawner)
    parts = _judged_parts(config, got, where.box, seed, None)
    return resultsdir.build(config=got.measured.config or config, base=Revision(ref=base.sha, sha=base.sha),
                         head=Revision(ref=head.sha, sha=head.sha), seed=seed,
                         repository=repository, repo=str(where.repo), **parts)


def _with_count_warnings(env: Environment, config: Config,
                         measured: context.Measured) -> Environment:
    """The environment's warnings, one for each workload whose ``counts`` asked for a
    method that could not be used here (it was compared on time alone), one for each
    whose base again ran from base's own place (its copy's run failed), and one where the
    budget stopped changes short of the pairs a call needs."""
    more = [f"{w.name}: {measured.counts[w.name].why}; compared on time alone"
            for w in config.workloads if w.name in measured.counts
            and counting.asked_and_impossible(w.counts, measured.counts[w.name].method)]
    more += [f"{name}: {why}" for name, why in measured.again_fallback.items()]
    more += [measured.again_note] if measured.again_note else []
    more += [measured.budget_note] if measured.budget_note else []
    return dataclasses.replace(env, warnings=(*env.warnings, *more)) if more else env


@dataclass(frozen=True, slots=True)
class _Measured:
    measured: context.Measured
    env_before: machine.Before  # the machine as measuring began
    unreaped_cpu_s: float  # sandboxed runs' CPU time the kernel does not count as our children's


def _measure(plan: _Plan, box: bwrap.Sandbox, env: Mapping[str, str], *, reporter: Reporter,
             spawner_factory: Callable[[Path], Spawner] | None,
             ahead: _Ahead, deadline: float, clock: Callable[[], float]) -> _Measured:
    """Worktrees, both builds, then every run: the part that starts the code under test."""
    config = plan.config
    if not box.active:
        # So that a build's or a run's daemons come back to benchbot and are stopped, and
        # a run (of another user than root) cannot open benchbot's descriptors in /proc.
        procs.become_subreaper()
        procs.make_undumpable()
    revisions = {"base": plan.base.sha, "head": plan.head.sha}
    with (_scratch() as scratch, gitops.worktrees(plan.repo, revisions) as co,
          again_place(co["base"].path, co["head"].path) as again):
        confine = _Confinement(box, plan.git_dir, scratch, co, config, again)
        # Every run's process group is killed after it, and a process that left its group
        # (setsid) is ended by the spawner before the next run (spawn.end_leftovers); a
        # sweep when measuring ends catches anything else.
        with contextlib.ExitStack() as stack:
            # Started before the builds, whose time covers the worker's start-up and
            # benchbot's own first-use costs (see _Ahead): none of it is left to the
            # measuring. With sandbox.build_only, after them: the worker hides files it
            # finds as it starts, build outputs and base again's copy included.
            def start() -> Spawner:
                made = spawner_factory(scratch) if spawner_factory else confine.spawner(env)
                stack.callback(_close, made)
                return made

            spawner = None if confine.after_build and not spawner_factory else start()
            _build(config, co, box, env, scratch, confine, reporter)
            not_copied = copy_built(co["base"].path, again)
            if spawner is None:
                spawner = start()
            ahead.finish()
            got = _measure_checkouts(config, box, env, co, spawner, stack, seed=plan.seed,
                                     family=_family(plan.part), abort=plan.part.shard is None,
                                     shard=plan.part.shard,
                                     reporter=reporter, deadline=deadline, clock=clock,
                                     again=None if not_copied else again)
            got.measured.again_note = not_copied
    return _with_spawner_figures(got, spawner)


def _measure_checkouts(config: Config, box: bwrap.Sandbox, env: Mapping[str, str],
                       co: Mapping[str, gitops.Checkout], spawner: Spawner,
                       stack: contextlib.ExitStack, *, seed: int, family: Family | None,
                       abort: bool, reporter: Reporter, deadline: float,
                       clock: Callable[[], float], estimate: bool = True,
                       precision: float | None = None,
                       again: Path | None = None,
                       shard: ShardInfo | None = None) -> _Measured:
    """Every run of a comparison whose two checkouts are built: the part both ``compare``
    and ``compare_built`` (bisect) share. ``stack`` holds what ends with the spawner;
    ``again``, the copy of base's built tree that base again runs from."""
    from benchbot.measure import (
        context,  # likewise
        measuring,  # imported already, by _Ahead (compare)
    )

    if isinstance(spawner, bwrap.WorkerSpawner):
        spawner.ready()
    env_before = machine.snapshot()
    if not box.active:
        stack.enter_context(procs.swept())
    ctx = context.Context(
        config=config, spawner=spawner, env=box.adjust_env(env), seed=seed,
        base=_targets(config, co["base"].path), head=_targets(config, co["head"].path),
        reporter=reporter,
        policy=context.policy(config, seed, family=family, abort=abort),
        clock=clock,
        means=counting.means(box.adjust_env(env),
                             shown=box.view.shows if box.view is not None else None),
        estimate=estimate,
        precision=precision,
        again=_targets(config, again) if again is not None else None,
        shard=Shard(index=shard.index, count=shard.count) if shard is not None else None,
        sandbox=box,
    )
    return _Measured(measuring.measure(ctx, deadline=deadline), env_before, 0.0)


def _with_spawner_figures(got: _Measured, spawner: Spawner) -> _Measured:
    """The measuring with what its spawner saw once closed: sandboxed runs' CPU time not
    reaped as ours, and the floor of peak RSS."""
    unreaped = spawner.unreaped_cpu_s if isinstance(spawner, bwrap.WorkerSpawner) else 0.0
    # No run's peak RSS reads below what its spawner's runs start from: the fork server's
    # where it starts them, else the spawner's own peak (the workers', or benchbot's).
    floor = (spawner.maxrss_floor_kib if isinstance(spawner, (bwrap.WorkerSpawner,
                                                              ProcessSpawner))
             else machine.own_peak_rss_kib())
    got.measured.maxrss_floor_kib = floor or None
    return _Measured(got.measured, got.env_before, unreaped)


@contextlib.contextmanager
def again_place(base: Path, head: Path) -> Iterator[Path]:
    """An empty directory for the copy of base's built tree that base again runs from,
    beside head's worktree with a name as long as head's (so its path is as long as
    head's: docs/verdict.md, "Placement"); removed on every way out. Made before the
    builds, as the sandbox's worker for it is started then."""
    size = len(head.name)
    name = next(n for n in (("again" + "_" * size)[:size], "~" * size,
                            *(f"{i:0{size}d}"[-size:] for i in range(1, 100)))
                if n not in (base.name, head.name) and not (head.parent / n).exists())
    path = head.parent / name
    path.mkdir()
    try:
        yield path
    finally:
        trees.remove_tree(path)  # whatever modes the build left in what was copied


def copy_built(base: Path, again: Path) -> str | None:
    """Copy base's built tree into ``again``: its own files, inodes and pages of the page
    cache, symbolic links kept as links, times kept (a build tool sees nothing to redo);
    FIFOs, sockets and devices are left out (a build's leftovers: nothing a run reads).
    None when copied; else why not (a file it cannot read), with the copy removed: base
    again then runs from base's own place."""

    def special(directory: str, names: list[str]) -> list[str]:
        left = []
        for name in names:
            with contextlib.suppress(OSError):
                mode = os.lstat(os.path.join(directory, name)).st_mode
                if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                    left.append(name)
        return left

    try:
        shutil.copytree(base, again, symlinks=True, dirs_exist_ok=True, ignore=special)
    except (OSError, shutil.Error) as exc:
        for child in list(again.iterdir()) if again.is_dir() else []:
            trees.remove_tree(child)
        first = exc.args[0][0] if isinstance(exc, shutil.Error) and exc.args[0] else exc
        why = first[2] if isinstance(first, tuple) else str(first)
        return (f"base again ran from base's own place: base's build could not be copied "
                f"({str(why)[:200]})")
    return None


def _targets(config: Config, root: Path) -> dict[str, Target]:
    """Where each workload, and each suite's harness (under the suite's name), runs from."""
    return {**{w.name: target(w, root) for w in config.workloads},
            **{s.name: target(s.settings, root) for s in config.suites}}


def _build(config: Config, co: Mapping[str, gitops.Checkout], box: bwrap.Sandbox,
           env: Mapping[str, str], scratch: Path, confine: _Confinement,
           reporter: Reporter) -> None:
    """Both builds; in the sandbox, first a line for each tool on PATH that leads into a
    directory it does not show (the runs may call one too), and the same with a build
    that could not find a command."""
    hints = box.tool_notes(env)
    for hint in hints:
        reporter.note(hint)
    if config.build is not None:
        for side in ("base", "head"):
            reporter.building(side, co[side].sha)
    try:
        gitops.build(config.build, [co["base"], co["head"]], env=box.adjust_env(env),
                     log_dir=scratch / "logs", wrap=confine.build_wrap(),
                     parallel=config.parallel_builds, sweep=not box.active)
    except BuildError as exc:
        if exc.returncode != 127 or not hints:
            raise
        raise BuildError(exc.side, exc.command, exc.returncode, exc.log_tail,
                         hint="\n".join(hints)) from None


class _Confinement:
    """The sandbox as applied to one comparison: what the build and the worker may write."""

    def __init__(self, box: bwrap.Sandbox, git_dir: Path, scratch: Path,
                 co: Mapping[str, gitops.Checkout], config: Config,
                 again: Path | None = None) -> None:
        self.box, self.scratch, self.config = box, scratch, config
        self.worktrees = [co["base"].path, co["head"].path]
        self.places = [*self.worktrees, *([again] if again is not None else [])]
        self.git_dir: Path | None = None
        self.git_config: Path | None = None
        if box.active:
            self.git_dir = git_dir
            self.git_config = bwrap.sanitized_git_config(self.git_dir, scratch / "gitconfig")

    def build_wrap(self) -> gitops.Wrap | None:
        if not self.box.active:
            return None
        extra = [Path(p) for p in self.config.sandbox.writable]

        def wrap(argv: list[str], worktree: Path) -> tuple[list[str], tuple[int, ...]]:
            fd = bwrap.filter_fd()
            return self.box.wrap(argv, cwd=worktree, writable=[worktree, *extra],
                                 network=self.config.sandbox.build_network,
                                 git_dir=self.git_dir, git_config=self.git_config,
                                 seccomp_fd=fd), (fd,)

        return wrap

    def spawner(self, env: Mapping[str, str]) -> Spawner:
        if not self.box.active:
            return ProcessSpawner(self.scratch)
        # One worker per worktree (and for base again's copy), each writing only its own:
        # a run cannot rewrite the program another arm measures.
        return bwrap.WorkerSpawner(self.box, self.scratch, env, places=self.places,
                                     writable=[Path(p) for p in self.config.sandbox.writable],
                                     git_dir=self.git_dir, git_config=self.git_config,
                                     build_only=self.config.sandbox.build_only)

    @property
    def after_build(self) -> bool:
        """Whether the worker must start after the builds and base again's copy: the files
        ``sandbox.build_only`` hides are found as it starts (benchbot.sandbox.hidden)."""
        return self.box.active and bool(self.config.sandbox.build_only)


class _Ahead:
    """First-use costs paid in a thread from the start of a comparison, while the main
    thread waits on git and the builds: the modules of ``_HEAVY``, numpy's lazily imported
    random module and ``prepare``'s work. ``finish`` waits for it (before the first run,
    so that no measured run shares the machine with it) and raises what it raised."""

    def __init__(self, prepare: Callable[[], None] | None) -> None:
        self._prepare = prepare
        self._failed: list[BaseException] = []
        self._thread = threading.Thread(target=self._guarded, name="benchbot-ahead",
                                        daemon=True)
        self._thread.start()

    def _guarded(self) -> None:
        try:
            for name in _HEAVY:
                importlib.import_module(name)
            from benchbot.verdict import stats

            stats.warm_up()
            if self._prepare is not None:
                self._prepare()
        except BaseException as exc:  # re-raised in the caller's thread
            self._failed.append(exc)

    def join(self) -> None:
        self._thread.join()

    def finish(self) -> None:
        self.join()
        if self._failed:
            raise self._failed[0]


def _close(spawner: Spawner) -> None:
    close = getattr(spawner, "close", None)
    if callable(close):
        close()


def check_pins(config: Config) -> None:
    """Refuse a ``pin`` that names a CPU this process may not run on, naming key and line."""
    usable = machine.usable_cpus()
    for i, w in enumerate(config.workloads):
        missing = sorted(set(w.pin or ()) - usable)
        if missing:
            have = machine.cpu_list(usable)
            raise ConfigError(
                f"{config.path}:{w.line}: workloads[{i}].pin: CPU {missing[0]} is not one this "
                f"machine lets benchbot use (usable: {have})"
            )


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    """A directory for logs and the workers' files, removed on every way out whatever
    the runs left in it (``trees.removed``)."""
    with trees.removed(tempfile.mkdtemp(prefix="benchbot-run-"), what="the runs") as path:
        yield path


