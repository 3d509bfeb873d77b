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

import dataclasses
import hashlib
import os
import secrets
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchbot.bisect.bisectdoc import (
    BisectResults,
    BisectSettings,
    Commit,
    build_document,
)
from benchbot.bisect.steps import CALLS, IDENTICAL, EndError, Found, Search
from benchbot.config.config import Config, load_config
from benchbot.config.find import read_config
from benchbot.config.settings import Overrides
from benchbot.core.errors import BuildError, ConfigError, GitError
from benchbot.core.model import ProfileMode, Results, Revision, SandboxInfo
from benchbot.git import gitops
from benchbot.run import machine
from benchbot.run.runner import Spawner
from benchbot.sandbox import hidden

if TYPE_CHECKING:
    from benchbot.measure.engine import Bench, Reporter

__all__ = ["BUDGET_FACTOR", "CALLS", "IDENTICAL", "EndError", "RepoLab", "Request",
           "bisect", "output_hash"]

BUDGET_FACTOR = 3  # the default bisect budget: this many times the config's budget


# --- the real laboratory -------------------------------------------------------------------


_CHUNK = 1 << 20


def output_hash(root: Path, build_only: Sequence[str] = ()) -> str | None:
    """A hash of everything a run can read in the worktree ``root`` after its build, but
    its ``.git``: every directory, file and symlink under it, each by its path relative to
    ``root``, its kind and permission bits, and a file's bytes or a link's target (read,
    never followed). Two worktrees with one hash hold the same files with the same
    contents, so no run can read anything of them that differs (docs/cli.md, "What makes
    two commits identical", says what is and is not covered). A regular file that ``build_only`` covers
    (``hidden.covered``: the config's ``sandbox.build_only`` where the sandbox enforces
    it, else nothing) counts by its path alone: no run can open it. None when something
    cannot be hashed (a file that cannot be read, a FIFO, socket or device a build left):
    the commit is then always measured."""
    digest = hashlib.sha256()
    try:
        _hash_dir(os.fsencode(root), b"", digest, tuple(build_only))
    except (OSError, RecursionError, _Unhashable):  # RecursionError: nested beyond reason
        return None
    return digest.hexdigest()


class _Unhashable(Exception):
    """A file whose content is not a sequence of bytes to hash (a FIFO, socket, device)."""


def _hash_dir(path: bytes, rel: bytes, digest: Any, build_only: tuple[str, ...]) -> None:
    with os.scandir(path) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    for entry in entries:
        name = os.fsencode(entry.name)
        if not rel and name == os.fsencode(hidden.GIT):
            continue
        here = rel + b"/" + name if rel else name
        info = entry.stat(follow_symlinks=False)
        mode = stat.S_IMODE(info.st_mode)
        if stat.S_ISDIR(info.st_mode):
            digest.update(b"d\0%s\0%o\0" % (here, mode))
            _hash_dir(os.fsencode(entry.path), here, digest, build_only)
        elif stat.S_ISLNK(info.st_mode):
            digest.update(b"l\0%s\0%s\0" % (here, os.readlink(os.fsencode(entry.path))))
        elif stat.S_ISREG(info.st_mode):
            if build_only and hidden.covered(build_only, os.fsdecode(here)):
                digest.update(b"h\0%s\0" % here)  # hidden from every run: its name alone
                continue
            digest.update(b"f\0%s\0%o\0" % (here, mode))
            digest.update(_file_digest(os.fsencode(entry.path)))
        else:
            raise _Unhashable(here)


def _file_digest(path: bytes) -> bytes:
    """The sha256 of a regular file's bytes, opened without following a link."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise _Unhashable(path)  # swapped for something else since it was listed
        inner = hashlib.sha256()
        while chunk := fh.read(_CHUNK):
            inner.update(chunk)
    return inner.digest()


class RepoLab:
    """Commits of a repository built in worktrees, one per distinct tree, each built once
    and kept until the bisect ends, compared through ``engine.compare_built``."""

    def __init__(self, commits: Sequence[tuple[str, str, str]], config: Config, *,
                 where: Bench, pool: gitops.WorktreePool, seed: int, reporter: Reporter,
                 clock: Callable[[], float], repository: str | None = None,
                 spawner_factory: Callable[[Path], Spawner] | None = None) -> None:
        from benchbot.measure import engine

        self.engine = engine
        self.commits, self.config, self.pool, self.seed = commits, config, pool, seed
        self.where, self.reporter = where, reporter
        self.clock, self.repository = clock, repository
        self.spawner_factory = spawner_factory  # tests: planted runs instead of real ones
        self.built: dict[str, str | None] = {}  # tree: None when built, else why not
        self.hashes: dict[str, str | None] = {}
        # The files no run can open, where the sandbox enforces it (benchbot.sandbox.hidden).
        self.build_only = config.sandbox.build_only if where.box.active else ()

    def _tree(self, index: int) -> str:
        return self.commits[index][1]

    def checkout(self, index: int) -> gitops.Checkout:
        sha, tree, _ = self.commits[index]
        return self.pool.add(tree[:16], sha)

    def prepare(self, index: int) -> str | None:
        tree = self._tree(index)
        if tree not in self.built:
            sha = self.commits[index][0]
            self.reporter.building(f"commit {index}", sha)
            try:
                co = self.checkout(index)
                self.engine.build_checkout(self.where, self.config, co)
            except BuildError as exc:
                self.built[tree] = _build_why(exc)
            except GitError as exc:
                self.built[tree] = f"could not be checked out: {exc}"
            else:
                self.built[tree] = None
                self.hashes[tree] = output_hash(co.path, self.build_only)
        return self.built[tree]

    def output_hash(self, index: int) -> str | None:
        return self.hashes.get(self._tree(index))

    def results(self, left: int, right: int, *, budget_s: float, seed: int,
                alpha: float | None = None, estimate: bool = True,
                precision: float | None = None, profile: ProfileMode | None = None) -> Results:
        """The results document of commit ``left`` (reference) against ``right``, both
        prepared, with the config's rule (at ``alpha`` where given) within ``budget_s``
        (``profile``: which workloads are profiled, where not the config's)."""
        config = dataclasses.replace(self.config, budget_s=budget_s,
                                     alpha=self.config.alpha if alpha is None else alpha,
                                     profile=self.config.profile if profile is None else profile)
        return self.engine.compare_built(
            self.where, config, self.checkout(left), self.checkout(right), seed=seed,
            reporter=self.reporter, deadline=self.clock() + budget_s, clock=self.clock,
            repository=self.repository, estimate=estimate, precision=precision,
            **({"spawner_factory": self.spawner_factory} if self.spawner_factory else {}))

    def release(self, keep: int) -> None:
        """Remove every worktree but commit ``keep``'s: a history goes forward and needs
        the last commit built, never an older one again (one rebuilt if it is)."""
        tree = self._tree(keep)
        for other in {t for t in self.built if t != tree}:
            self.pool.remove(other[:16])
            self.built.pop(other, None)

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


def _build_why(exc: BuildError) -> str:
    tail = [line for line in (exc.log_tail or "").splitlines() if line.strip()]
    last = tail[-1].strip()[:200] if tail else ""
    return f"the build failed (exit {exc.returncode})" + (f": {last}" if last else "")


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
    return first_parent_line(repo, good, bad, names=(f"--good {request.good}",
                                                     f"--bad {request.bad}"))


def first_parent_line(repo: Path, start: str, end: str, *,
                      names: tuple[str, str]) -> list[tuple[str, str, str]]:
    """``start`` and the first-parent commits after it up to ``end`` (SHAs), each as
    (sha, tree, subject), or GitError naming them as ``names`` says."""
    if not gitops.is_ancestor(repo, start, end):
        raise GitError(f"{names[0]} is not an ancestor of {names[1]}: "
                       "nothing lies between them")
    commits = gitops.first_parent_commits(repo, start, end)
    if len(commits) > 1 and gitops.git(repo, "rev-parse", f"{commits[1][0]}^1") != start:
        raise GitError(f"{names[0]} is not on the first-parent line of {names[1]} "
                       "(it was merged in): name a commit on that line")
    return commits


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
