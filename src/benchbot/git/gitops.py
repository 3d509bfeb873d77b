"""Worktrees and builds, through one run() helper that wraps failures.

The user's working tree, index and branches are never touched: both revisions are
checked out detached into a temporary directory with ``git worktree add``, and the
worktrees are removed afterwards, also on error or Ctrl-C.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from benchbot.core import trees
from benchbot.core.errors import BuildError, GitError
from benchbot.sandbox import procs
from benchbot.sandbox.spawn import kill_group

LOG_TAIL_LINES = 40


# Every git command benchbot runs on commits it did not make (a pull request's, checked
# out, logged, read or fetched) reads the repository's own config only: not the
# machine's (system) nor the user's (global), where git-lfs installs its filters and a
# runner may keep hooks, an fsmonitor or log.showSignature (gpg on a stranger's
# signature). What the repository's config may still name is turned off on the command
# line: hooks (post-checkout, reference-transaction), the fsmonitor, the lfs filter
# (which would fetch from a URL the pull request's .lfsconfig names), submodules (whose
# URLs it names), signature checks and the global attributes file.
UNTRUSTED_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                 "GIT_ATTR_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
UNTRUSTED_CONFIG = (
    "core.hooksPath=/dev/null", "core.fsmonitor=false", f"core.attributesFile={os.devnull}",
    "submodule.recurse=false", "log.showSignature=false", "filter.lfs.smudge=",
    "filter.lfs.clean=", "filter.lfs.process=", "filter.lfs.required=false",
)  # fmt: skip


def git_argv(*args: str, user: bool = False) -> list[str]:
    """git's command line for ``args``: with ``UNTRUSTED_CONFIG`` (and the machine's and
    user's ``safe.directory``, which git honours from there and from the command line
    only), unless ``user`` (the user's own working tree, with all of their config)."""
    if user:
        return ["git", *args]
    settings = [*UNTRUSTED_CONFIG, *(f"safe.directory={d}" for d in _safe_directories())]
    return ["git", *(arg for setting in settings for arg in ("-c", setting)), *args]


def git_environment(extra: Mapping[str, str] | None = None, *,
                    user: bool = False) -> dict[str, str]:
    """The environment of a git command: ``UNTRUSTED_ENV`` over this process's, then
    ``extra``; with ``user``, only no prompt and messages in C."""
    ours = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"} if user else UNTRUSTED_ENV
    return {**os.environ, **ours, **(extra or {})}


@functools.lru_cache(maxsize=1)
def _safe_directories() -> tuple[str, ...]:
    """The ``safe.directory`` values of the machine's and the user's config (the config
    the other git commands do not read), so that a checkout git trusted stays trusted."""
    try:
        proc = subprocess.run(["git", "config", "--get-all", "safe.directory"], cwd="/",
                              capture_output=True, text=True, check=False,
                              env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except OSError:
        return ()
    return tuple(line for line in proc.stdout.split("\n") if line)


def git(repo: Path, *args: str, check: bool = True, env: Mapping[str, str] | None = None,
        strip: bool = True, user: bool = False) -> str:
    """Run one git command in ``repo`` and return its stdout, stripped (unless ``strip``
    is false: ``-z`` output, whose names may begin or end with a space).

    ``env`` adds to the environment. The command runs as ``git_argv`` and ``git_environment``
    say: untrusted unless ``user``. Raises GitError with git's own message when
    ``check`` is true and git fails.
    """
    try:
        proc = subprocess.run(
            git_argv(*args, user=user),
            cwd=repo,
            capture_output=True,
            check=False,
            env=git_environment(env, user=user),
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed or not on PATH") from exc
    except NotADirectoryError as exc:
        raise GitError(f"{repo}: not a directory") from exc
    if check and proc.returncode != 0:
        message = proc.stderr.decode(errors="replace").strip().splitlines()
        detail = message[-1] if message else f"exit {proc.returncode}"
        raise GitError(f"git {' '.join(args)} (in {repo}): {detail}")
    # Bytes decoded as they are: no universal newlines (a \r in a subject or a file
    # name stays a \r), and a file name need not be UTF-8.
    out = proc.stdout.decode(errors="surrogateescape")
    return out.strip() if strip else out


def toplevel(repo: Path) -> Path:
    """Return the root of the git repository that contains ``repo``."""
    return locate(repo)[0]


def locate(repo: Path) -> tuple[Path, Path]:
    """The root of the git repository that contains ``repo``, and its .git directory
    (shared by its worktrees): one git process."""
    if "\0" in str(repo) or not repo.exists():
        raise GitError(f"{repo}: no such directory")
    top, _, common = git(repo, "rev-parse", "--show-toplevel", "--git-common-dir").partition("\n")
    return Path(top), (repo / common).resolve()


def _check_rev(rev: str) -> None:
    if rev.startswith("-") or "\0" in rev or "\n" in rev:
        raise GitError(f"revision {rev!r} is not a revision name")


def resolve(repo: Path, rev: str) -> str:
    """Return the full commit SHA that ``rev`` names, or raise GitError naming it."""
    return resolve_all(repo, [rev])[0]


def resolve_all(repo: Path, revs: Sequence[str]) -> list[str]:
    """The full commit SHA each of ``revs`` names (one git process), or GitError naming
    the first that names none."""
    for rev in revs:
        _check_rev(rev)
    lines = _batch(repo, "--batch-check", [f"{rev}^{{commit}}" for rev in revs])
    shas = []
    for rev, (header, _) in zip(revs, lines, strict=True):
        sha, _, kind = header.partition(" ")
        if not kind.startswith("commit "):
            raise GitError(f"revision {rev!r} does not name a commit in {repo}")
        shas.append(sha)
    return shas


def _batch(repo: Path, mode: str, queries: Sequence[str]) -> list[tuple[str, bytes | None]]:
    """``git cat-file --batch-check`` or ``--batch``: per query, git's header line and
    (``--batch``, for an object found) its contents."""
    try:
        proc = subprocess.run(
            git_argv("cat-file", mode), cwd=repo, capture_output=True, check=False,
            input="".join(q + "\n" for q in queries).encode(),
            env=git_environment(),
        )  # fmt: skip
    except FileNotFoundError as exc:
        raise GitError("git is not installed or not on PATH") from exc
    if proc.returncode != 0:
        message = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git cat-file (in {repo}): {message[-1] if message else proc.returncode}")
    out, at = proc.stdout, 0
    found: list[tuple[str, bytes | None]] = []
    for _ in queries:
        end = out.index(b"\n", at)
        header = out[at:end].decode(errors="replace")
        at = end + 1
        parts = header.split(" ")
        if mode == "--batch" and len(parts) == 3 and parts[2].isdigit():  # <oid> <type> <size>
            size = int(parts[2])
            found.append((header, out[at:at + size]))
            at += size + 1
        else:
            found.append((header, None))
    return found


WORKTREE = "WORKTREE"  # --head WORKTREE (or .): the working tree, uncommitted changes included


def snapshot(repo: Path) -> str:
    """A commit object of the working tree as it is, uncommitted changes and untracked
    files (not ignored ones) included, whose parent is HEAD.

    It is made with a temporary copy of the index (``GIT_INDEX_FILE``), ``git add -A``,
    ``write-tree`` and ``commit-tree``: the user's index, HEAD, branches and files are not
    touched, and no ref points at the commit (git's gc removes it in time).
    """
    with tempfile.TemporaryDirectory(prefix="benchbot-index-") as tmp:
        index = Path(tmp) / "index"
        real = repo / git(repo, "rev-parse", "--git-path", "index", user=True)
        if real.is_file():
            shutil.copyfile(real, index)
        env = {
            "GIT_INDEX_FILE": str(index), "GIT_AUTHOR_NAME": "benchbot",
            "GIT_AUTHOR_EMAIL": "benchbot@localhost", "GIT_COMMITTER_NAME": "benchbot",
            "GIT_COMMITTER_EMAIL": "benchbot@localhost",
        }
        git(repo, "add", "-A", env=env, user=True)  # the user's ignores, filters included
        tree = git(repo, "write-tree", env=env, user=True)
        head = git(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
        parents = ["-p", head] if head else []
        return git(repo, "commit-tree", tree, *parents, "-m", "benchbot: the working tree",
                   env=env, user=True)


def merge_base(repo: Path, a: str, b: str) -> str:
    """Return the merge-base of two commits."""
    return git(repo, "merge-base", a, b)


def changed_files(repo: Path, base: str, head: str) -> tuple[str, ...]:
    """The files that differ between commits ``base`` and ``head``, relative to the
    repository root, each once, sorted. A rename counts as both names (``--no-renames``:
    the old name deleted, the new one added), whatever ``diff.renames`` says; a
    submodule counts as its path."""
    for rev in (base, head):
        _check_rev(rev)
    out = git(repo, "-c", "core.quotePath=false", "diff", "--name-only", "-z", "--no-renames",
              "--no-ext-diff", "--no-textconv", base, head, "--", strip=False)
    return tuple(sorted({name for name in out.split("\0") if name}))


def show_file(repo: Path, sha: str, path: str) -> bytes | None:
    """Return the bytes of ``path`` at commit ``sha``, or None when it is not there."""
    return show_files(repo, sha, [path])[0]


def show_files(repo: Path, sha: str, paths: Sequence[str]) -> list[bytes | None]:
    """The bytes of each of ``paths`` at commit ``sha`` (None where it is not a file
    there): one git process."""
    if any("\n" in p or "\0" in p for p in paths):
        raise GitError(f"a path in {list(paths)!r} is not a path")
    found = _batch(repo, "--batch", [f"{sha}:{p}" for p in paths])
    return [data if header.split(" ")[1:2] == ["blob"] else None for header, data in found]


def add_worktree(repo: Path, path: Path, sha: str) -> None:
    """Check ``sha`` out detached at ``path``, as ``git_argv`` says (no hook, filter or
    fsmonitor from outside the repository's own config)."""
    _check_rev(sha)
    git(repo, "worktree", "add", "--detach", "--quiet", str(path), sha)


@dataclass(frozen=True, slots=True)
class Checkout:
    """One revision checked out in its own worktree."""

    side: str
    sha: str
    path: Path


@contextlib.contextmanager
def worktrees(repo: Path, revisions: Mapping[str, str]) -> Iterator[dict[str, Checkout]]:
    """Check out each ``side -> sha`` detached in a temporary directory; remove them after.

    One ``git worktree add`` after the other: two at once race (the second reads the
    first's half-written entry under .git/worktrees and fails: "failed to read
    .git/worktrees/base/commondir"). Removal happens on every way out (error,
    KeyboardInterrupt, SystemExit): the directories are deleted whatever the builds left
    in them (``trees.removed``: a ``CleanupError`` names what could not be) and ``git
    worktree prune`` drops their entries, so no stale entry is left.
    """
    root = Path(tempfile.mkdtemp(prefix="benchbot-"))
    try:
        with trees.removed(root, what="the builds and the runs"):
            checkouts: dict[str, Checkout] = {}
            for side, sha in revisions.items():
                path = root / side
                add_worktree(repo, path, sha)
                checkouts[side] = Checkout(side=side, sha=sha, path=path)
            yield checkouts
    finally:
        git(repo, "worktree", "prune", check=False)


class WorktreePool:
    """Worktrees added one at a time, as they are needed (``benchbot bisect``), under one
    temporary directory; ``close`` removes them all and prunes their entries, as
    ``worktrees`` does on its way out. Use it as a context manager."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.root = Path(tempfile.mkdtemp(prefix="benchbot-bisect-"))
        self.checkouts: dict[str, Checkout] = {}

    def add(self, name: str, sha: str) -> Checkout:
        """Check ``sha`` out detached as ``name`` (a name already added is returned as it is)."""
        if name not in self.checkouts:
            path = self.root / name
            add_worktree(self.repo, path, sha)
            self.checkouts[name] = Checkout(side=name, sha=sha, path=path)
        return self.checkouts[name]

    def remove(self, name: str) -> list[str]:
        """Remove the worktree ``name`` whatever its build left in it, and prune its entry
        (nothing when there is none); what could not be removed."""
        checkout = self.checkouts.pop(name, None)
        if checkout is None:
            return []
        try:
            return trees.remove_tree(checkout.path)
        finally:
            git(self.repo, "worktree", "prune", check=False)

    def close(self) -> list[str]:
        """Remove every worktree and prune their entries; what could not be removed."""
        try:
            return trees.remove_tree(self.root)
        finally:
            git(self.repo, "worktree", "prune", check=False)

    def __enter__(self) -> WorktreePool:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        trees.report(self.close(), what="the builds and the runs", failed=kind is not None)


def is_ancestor(repo: Path, a: str, b: str) -> bool:
    """Whether commit ``a`` is an ancestor of (or is) commit ``b``."""
    for rev in (a, b):
        _check_rev(rev)
    return subprocess.run(git_argv("merge-base", "--is-ancestor", a, b), cwd=repo,
                          capture_output=True, check=False, env=git_environment()).returncode == 0


def first_parent_commits(repo: Path, good: str, bad: str) -> list[tuple[str, str, str]]:
    """``good`` and the first-parent commits of ``good..bad``, oldest first, each as
    (sha, tree, subject): one git process for the range."""
    for rev in (good, bad):
        _check_rev(rev)
    # NUL between the fields and after each commit (-z): a subject may hold any other
    # character (a lone \r, \x1c, U+2028 end a line for str.splitlines).
    fmt = "--format=%H%x00%T%x00%s"
    first = _fields(git(repo, "log", "-z", "-1", fmt, good, "--", strip=False))
    rest = _fields(git(repo, "log", "-z", "--first-parent", "--reverse", fmt, f"{good}..{bad}",
                       "--", strip=False))
    return [*first, *rest]


def _fields(out: str) -> list[tuple[str, str, str]]:
    """``git log -z --format=%H%x00%T%x00%s``'s commits as (sha, tree, subject)."""
    fields = out.split("\0")
    if fields and fields[-1] in ("", "\n"):
        fields.pop()  # after the last commit: nothing (or the newline of a one-commit log)
    if len(fields) % 3:
        raise GitError(f"git log gave {len(fields)} fields, not three for each commit")
    return [(fields[i], fields[i + 1], fields[i + 2]) for i in range(0, len(fields), 3)]


# (argv, worktree) -> the argv to run, and descriptors it must inherit (the sandbox's
# filter), which the build closes once the command started
Wrap = Callable[[list[str], Path], tuple[list[str], tuple[int, ...]]]


def build(
    command: str | Sequence[str] | None,
    checkouts: Sequence[Checkout],
    *,
    env: Mapping[str, str],
    log_dir: Path,
    wrap: Wrap | None = None,
    parallel: bool = True,
    sweep: bool = True,
) -> None:
    """Run the build command in each worktree: in all of them at once (``parallel``; each
    worktree is its own directory, and the sandbox lets a build write only there), or one
    after another in the order given.

    A string is run by ``/bin/sh -c`` (it comes from the repository's own config at
    the base revision, never from a commenter); a list is an argv. ``wrap`` puts the
    command in the sandbox. Each build runs in a session of its own; whatever the builds
    leave running is killed when they end, also on Ctrl-C and SIGTERM (a ``procs.Sweep``;
    ``sweep`` false where ``wrap``'s own PID namespace ends them). A failure raises
    BuildError naming the side (the first failed in the order given) and carrying the
    tail of its log, ``build-<side>.log`` in ``log_dir``.
    """
    if command is None:
        return
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    shown = command if isinstance(command, str) else " ".join(command)
    log_dir.mkdir(parents=True, exist_ok=True)
    groups = [list(checkouts)] if parallel else [[c] for c in checkouts]
    for group in groups:
        logs = {c.side: log_dir / f"build-{c.side}.log" for c in group}
        with contextlib.ExitStack() as stack:
            # One sweep around builds that run together: a sweep ending while another
            # build runs would take that build's processes for leftovers.
            if sweep:
                stack.enter_context(procs.swept())
            codes = _run_builds(
                [(*(wrap(argv, c.path) if wrap else (argv, ())), c.path,
                  stack.enter_context(open(logs[c.side], "wb"))) for c in group],
                env,
            )  # fmt: skip
        for checkout, code in zip(group, codes, strict=True):
            if code != 0:
                text = logs[checkout.side].read_text(errors="replace").splitlines()
                tail = "\n".join(text[-LOG_TAIL_LINES:])
                raise BuildError(f"{checkout.side} ({checkout.sha[:12]})", shown, code, tail)


def _run_builds(builds: list[tuple[list[str], tuple[int, ...], Path, BinaryIO]],
                env: Mapping[str, str]) -> list[int]:
    """Start every (argv, descriptors to pass, cwd, log) at once and wait for all; return
    their exit statuses (127 for one that could not start). The descriptors are closed
    once their command started; each process group is killed once it is done with, also
    when waiting is interrupted."""
    started: list[subprocess.Popen[bytes] | None] = []
    try:
        for argv, fds, cwd, log in builds:
            try:
                started.append(subprocess.Popen(
                    argv, cwd=cwd, env=dict(env), stdout=log, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, start_new_session=True, pass_fds=fds,
                ))  # fmt: skip
            except OSError as exc:
                log.write(f"{exc}\n".encode())
                started.append(None)
            finally:
                for fd in fds:
                    os.close(fd)
        return [127 if proc is None else proc.wait() for proc in started]
    finally:
        for proc in started:
            if proc is not None:
                kill_group(proc.pid)
                if proc.returncode is None:
                    proc.wait()
