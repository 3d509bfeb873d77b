"""The whole comparison: config, worktrees, builds, A/A, A/B, confirmation, verdicts.

This module wires the stages in the order spec/verdict.md gives; every decision about
what a figure means lives in ``stats``, every byte of the results file in ``results``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchbot import gitops, machine, procs, results, sandbox, stats
from benchbot.config import (
    DEFAULT_PATHS,
    Config,
    WorkloadConfig,
    apply_overrides,
    load_config,
    parse_config_bytes,
)
from benchbot.errors import ConfigError
from benchbot.model import Rule, Verdict
from benchbot.runner import (
    PhaseResult,
    ProcessSpawner,
    Spawner,
    Target,
    planned_runs,
    run_phase,
    target,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """What the user asked to compare, and how (the command line or a /bench comment)."""

    repo: Path
    base: str
    head: str
    config_path: Path | None = None
    runs: int | None = None
    only: tuple[str, ...] | None = None
    parity: float | None = None
    confirm: bool | None = None
    aa: bool | None = None
    seed: int | None = None
    repository: str | None = None
    resolve_merge_base: bool = True  # False: take `base` as given (the caller resolved it)
    config: Config | None = None  # already read (benchbot github reads it at the base revision)


class Reporter:
    """Receives progress; the CLI prints it, tests record it. Does nothing by default."""

    def phase(self, name: str, workloads: int, runs: int) -> None:
        """A phase begins: its name, how many workloads and runs it plans."""

    def progress(self, phase: str, workload: str, done: int, planned: int) -> None:
        """One more run finished in the phase."""

    def note(self, message: str) -> None:
        """Something worth a line (the sandbox used, the demo's repository)."""

    def building(self, side: str, sha: str) -> None:
        """A build begins in one worktree."""
        self.note(f"building {side} ({sha[:12]})")


@dataclass(slots=True)
class _Workload:
    """Bookkeeping for one workload across the phases."""

    config: WorkloadConfig
    phases: dict[str, PhaseResult] = field(default_factory=dict)
    aa: Verdict | None = None
    ab: Verdict | None = None
    confirmation: Verdict | None = None
    final: Verdict | None = None


def load_request_config(request: Request, repo: Path, base_sha: str) -> Config:
    """Read the config: --config if given, else from the base revision (never the head)."""
    if request.config is not None:
        return request.config
    if request.config_path is not None:
        return load_config(request.config_path)
    for path in DEFAULT_PATHS:
        data = gitops.show_file(repo, base_sha, path)
        if data is not None:
            return parse_config_bytes(data, path=path)
    raise ConfigError(
        f"no {' or '.join(DEFAULT_PATHS)} at the base revision {base_sha[:12]}: "
        "commit one there, or pass --config FILE"
    )


def compare(
    request: Request,
    *,
    reporter: Reporter | None = None,
    spawner_factory: Callable[[Path], Spawner] | None = None,
    source_env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Run the whole comparison and return the results document (results.SCHEMA_VERSION).

    The code under test (the build and every run) gets the environment of
    ``sandbox.clean_env`` made from ``source_env`` (default: this process's), and runs in
    the sandbox the config asks for. ``spawner_factory`` replaces the process layer (tests).
    """
    reporter = reporter or Reporter()
    repo = gitops.toplevel(request.repo)
    base_sha = gitops.resolve(repo, request.base)
    head_sha = gitops.resolve(repo, request.head)
    config = load_request_config(request, repo, base_sha)
    config = apply_overrides(
        config, runs=request.runs, only=request.only, parity=request.parity,
        confirm=request.confirm, aa=request.aa,
    )
    check_pins(config)
    if request.resolve_merge_base and config.base == "merge-base":
        base_sha = gitops.merge_base(repo, base_sha, head_sha)
    seed = request.seed if request.seed is not None else (
        config.seed if config.seed is not None else secrets.randbits(32)
    )
    source = os.environ if source_env is None else source_env
    box = sandbox.choose(config.sandbox.mode, source=source, read_only=config.sandbox.read_only)
    env = sandbox.clean_env(source, pass_env=config.pass_env)
    if not box.active:
        procs.become_subreaper()  # so that a build's daemons can be found and stopped
    reporter.note(f"sandbox: {box.description}")
    env_before = machine.snapshot()
    with _scratch() as scratch, gitops.worktrees(repo, {"base": base_sha, "head": head_sha}) as co:
        confine = _Confinement(box, repo, scratch, co, config)
        for side in ("base", "head"):
            reporter.building(side, co[side].sha)
            gitops.build(config.build, co[side], env=box.adjust_env(env), log_dir=scratch / "logs",
                         wrap=confine.build_wrap())
        spawner = spawner_factory(scratch) if spawner_factory else confine.spawner(env)
        # Every run's process group is killed after it; a process that left its group
        # (setsid) is ended with the sandbox, or else swept here when measuring ends.
        with contextlib.ExitStack() as stack:
            stack.callback(_close, spawner)
            if not box.active:
                stack.enter_context(procs.swept())
            workloads = _measure(
                config, co, seed=seed, spawner=spawner, reporter=reporter,
                env=box.adjust_env(env),
            )
    environment = machine.finish(env_before)
    doc = results.build(
        config=config, workloads=[_as_result(w) for w in workloads],
        base={"ref": request.base, "sha": base_sha}, head={"ref": request.head, "sha": head_sha},
        seed=seed, environment=environment, repository=request.repository,
        aa_status=_aa_status(config, workloads),
    )
    doc["sandbox"] = {"kind": box.kind, "description": box.description}
    return doc


class _Confinement:
    """The sandbox as applied to one comparison: what the build and the worker may write."""

    def __init__(self, box: sandbox.Sandbox, repo: Path, scratch: Path,
                 co: Mapping[str, gitops.Checkout], config: Config) -> None:
        self.box, self.scratch, self.config = box, scratch, config
        self.worktrees = sorted({c.path.parent for c in co.values()})
        self.git_dir: Path | None = None
        self.git_config: Path | None = None
        if box.active:
            self.git_dir = gitops.common_dir(repo)
            self.git_config = sandbox.sanitized_git_config(self.git_dir, scratch / "gitconfig")

    def build_wrap(self) -> gitops.Wrap | None:
        if not self.box.active:
            return None
        extra = [Path(p) for p in self.config.sandbox.writable]

        def wrap(argv: list[str], worktree: Path) -> list[str]:
            return self.box.wrap(argv, cwd=worktree, writable=[worktree, *extra], network=True,
                                 git_dir=self.git_dir, git_config=self.git_config)

        return wrap

    def spawner(self, env: Mapping[str, str]) -> Spawner:
        if not self.box.active:
            return ProcessSpawner(self.scratch)
        writable = [self.scratch, *self.worktrees, *(Path(p) for p in self.config.sandbox.writable)]
        return sandbox.WorkerSpawner(self.box, self.scratch, env, writable=writable,
                                     git_dir=self.git_dir, git_config=self.git_config)


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
    with tempfile.TemporaryDirectory(prefix="benchbot-run-") as path:
        yield Path(path)


def rule_for(w: WorkloadConfig, config: Config, *, seed: int, comparisons: int = 1) -> Rule:
    """The verdict rule's settings for one workload."""
    return Rule(
        parity=w.parity, alpha=config.alpha, floor_ns=w.effective_floor_ns,
        seed=seed, better=w.better, comparisons=comparisons,
    )


def _measure(
    config: Config, co: dict[str, gitops.Checkout], *, seed: int, spawner: Spawner,
    reporter: Reporter, env: Mapping[str, str],
) -> list[_Workload]:
    state = [_Workload(config=w) for w in config.workloads]
    base = {w.name: target(w, co["base"].path) for w in config.workloads}
    head = {w.name: target(w, co["head"].path) for w in config.workloads}
    warm: set[tuple[str, str]] = set()

    def phase(name: str, items: list[_Workload], ref: dict[str, Target], cand: dict[str, Target],
              keys: tuple[str, str], phase_seed: int, runs: int | None = None) -> None:
        configs = [dataclasses.replace(i.config, runs=runs or i.config.runs) for i in items]
        reporter.phase(name, len(configs), planned_runs(configs))
        expected = {i.config.name: e for i in items if (e := _expected(i)) is not None}
        measured = run_phase(
            configs, ref, cand, spawner=spawner, env=env, seed=phase_seed, warm=warm,
            arm_keys=keys, expected=expected,
            progress=lambda wl, done, total: reporter.progress(name, wl, done, total),
        )
        for item in items:
            item.phases[name] = measured[item.config.name]

    comparisons = 1 if config.confirm else max(1, len(state))
    if config.aa.enabled:
        phase("aa", state, base, base, ("base", "base"), seed, runs=config.aa.runs)
        for item in state:
            rule = rule_for(item.config, config, seed=seed, comparisons=comparisons)
            item.aa = _judge(item.phases["aa"], item.config, rule)
    alive, failed, aborted = _aa_outcome(config, state)
    if aborted:
        for item in alive:
            item.final = _aborted(item.aa, failed=len(failed), total=len(alive))
        return state
    phase("ab", alive, base, head, ("base", "head"), seed + 1)
    for item in alive:
        rule = rule_for(item.config, config, seed=seed + 1, comparisons=comparisons)
        item.ab = _judge(item.phases["ab"], item.config, rule, aa=item.aa)
        item.final = item.ab
    standouts = [i for i in alive if i.ab is not None and i.ab.outcome in ("slower", "faster")]
    if config.confirm and standouts:
        phase("confirm", standouts, base, head, ("base", "head"), seed + 2)
        for item in standouts:
            rule = rule_for(item.config, config, seed=seed + 2)
            item.confirmation = _judge(item.phases["confirm"], item.config, rule, aa=item.aa)
            pooled = _judge_pooled(item, rule)
            assert item.ab is not None
            item.final = stats.confirm_pooled(item.ab, item.confirmation, pooled)
    for item in state:
        if item.final is None:
            item.final = item.aa  # invalid in the A/A phase
    return state


def _aborted(aa: Verdict | None, *, failed: int, total: int) -> Verdict:
    """The A/A check failed for too many workloads: nothing is concluded (verdict.md, A/A 3)."""
    seen = f"; it read base against itself as {(aa.ratio - 1) * 100:+.1f}%" if (
        aa is not None and aa.ratio is not None) else ""
    return Verdict(
        outcome="inconclusive", reason_code="aa_aborted",
        reason=f"the A/A check failed for {failed} of {total} workloads, so this runner is "
        f"too noisy now to compare anything{seen}",
        n=aa.n if aa else 0, ratio=aa.ratio if aa else None, ci=aa.ci if aa else None,
        best_ratio=aa.best_ratio if aa else None, spread=aa.spread if aa else None,
    )


def _expected(item: _Workload) -> str | None:
    """The `expect` text seen in an earlier phase: every phase must reproduce it."""
    for result in item.phases.values():
        if result.expected is not None:
            return result.expected
    return None


def _invalid(verdict: Verdict | None) -> bool:
    return verdict is not None and verdict.outcome == "invalid"


def judged_values(samples: Any, w: WorkloadConfig) -> list[float]:
    """The numbers the rule judges: wall times, or the reported metric."""
    return list(samples.value_ns) if w.metric == "reported" else list(samples.wall_ns)


def _judge(result: PhaseResult, w: WorkloadConfig, rule: Rule, aa: Verdict | None = None) -> Verdict:
    if result.failure:
        return stats.invalid(result.failure, result.failure_text or result.failure)
    verdict = stats.compare(
        judged_values(result.reference, w), judged_values(result.candidate, w),
        rule=rule, aa_noise=stats.aa_noise_of(aa),
    )
    if aa is not None and aa.outcome in ("slower", "faster") and verdict.outcome != "invalid":
        verdict = stats.force_aa_failed(verdict, aa)
    return verdict


def _judge_pooled(item: _Workload, rule: Rule) -> Verdict:
    ab, conf = item.phases["ab"], item.phases["confirm"]
    if conf.failure:
        return stats.invalid(conf.failure, conf.failure_text or conf.failure)
    w = item.config
    x = judged_values(ab.reference, w) + judged_values(conf.reference, w)
    y = judged_values(ab.candidate, w) + judged_values(conf.candidate, w)
    return stats.compare(x, y, rule=rule, aa_noise=stats.aa_noise_of(item.aa))


def _aa_outcome(
    config: Config, state: Sequence[_Workload]
) -> tuple[list[_Workload], list[_Workload], bool]:
    """The workloads still comparable after the A/A check, those it failed, and whether more
    than the abort fraction failed (verdict.md, "The A/A check comes first", 3)."""
    alive = [i for i in state if not _invalid(i.aa)]
    failed = [i for i in alive if i.aa is not None and i.aa.outcome in ("slower", "faster")]
    aborted = bool(alive) and len(failed) > config.aa.abort_fraction * len(alive)
    return alive, failed, aborted


def _aa_status(config: Config, state: Sequence[_Workload]) -> dict[str, Any]:
    if not config.aa.enabled:
        return {"status": "skipped", "failed": []}
    _, failed, aborted = _aa_outcome(config, state)
    return {
        "status": "failed" if failed else "passed",
        "failed": [i.config.name for i in failed],
        "aborted": aborted,
        "abort_fraction": config.aa.abort_fraction,
    }


def _as_result(item: _Workload) -> results.WorkloadResult:
    assert item.final is not None
    return results.WorkloadResult(
        config=item.config, phases=item.phases, aa=item.aa, verdict=item.final,
        confirmation=item.confirmation, first=item.ab,
    )
