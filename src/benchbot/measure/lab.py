"""The repository laboratory that bisect and history share: one worktree per distinct tree
of a first-parent line, built once and kept while needed, the output of each build hashed
(``output_hash``: what may be skipped as identical), and any two commits compared through
``engine.compare_built``. ``bisect.search`` adds what its search asks of a step; a history
walks forward, releasing the worktrees behind it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchbot.config.config import Config
from benchbot.core.errors import BuildError, GitError
from benchbot.core.model import ProfileMode, Results
from benchbot.git import gitops
from benchbot.run.runner import Spawner
from benchbot.sandbox import hidden

if TYPE_CHECKING:
    from benchbot.measure.engine import Bench, Reporter


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


def _build_why(exc: BuildError) -> str:
    tail = [line for line in (exc.log_tail or "").splitlines() if line.strip()]
    last = tail[-1].strip()[:200] if tail else ""
    return f"the build failed (exit {exc.returncode})" + (f": {last}" if last else "")




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
