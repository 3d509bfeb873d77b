"""Making sure both commits of a pull request are in the job's clone.

``actions/checkout`` gives one commit by default (``fetch-depth: 1``), and for an
``issue_comment`` event it checks out the default branch, not the pull request. So
before comparing, benchbot fetches what is missing from ``origin``: the full history
when the clone is shallow (the merge-base needs it), then ``refs/pull/N/head`` for the
head and the base branch for the base, and the bare SHAs as a last resort. Every git
call is an argv list; nothing from an event reaches a shell.

Where the clone has no credentials of its own (``persist-credentials: false``), the
token is handed to git in the environment (``GIT_CONFIG_*``), never on the command
line, so it does not show in the process list.
"""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from benchbot.core.errors import GitError
from benchbot.git import gitops

if TYPE_CHECKING:
    from benchbot.github.env import ActionEnv
    from benchbot.github.event import Side


def fetch_commits(action_env: ActionEnv, wants: Mapping[str, Sequence[str]]) -> Path:
    """Bring the commits into the workspace's clone; return the repository's root."""
    ensure_commits(action_env.workspace, wants, token=action_env.token,
                   server_url=action_env.server_url)
    return gitops.toplevel(action_env.workspace)


def base_refspecs(base: Side) -> list[str]:
    """Where the base branch's tip can be fetched from."""
    return [f"+refs/heads/{base.ref}:refs/remotes/origin/{base.ref}"] if base.ref else []


def has_commit(repo: Path, sha: str) -> bool:
    """Whether the commit is in the clone."""
    proc = _git(repo, ["cat-file", "-e", f"{sha}^{{commit}}"], env=gitops.git_environment())
    return proc.returncode == 0


def ensure_commits(repo: Path, wants: Mapping[str, Sequence[str]], *, token: str | None = None,
                   server_url: str = "https://github.com") -> list[str]:
    """Fetch each missing ``sha`` from origin, trying its refspecs first; return the fetches made.

    Raises GitError naming the commits still missing, and what to change in the workflow.
    """
    if not repo.is_dir():
        raise GitError(f"{repo}: no such directory; check the working-directory input")
    env = auth_env(repo, token, server_url)
    done: list[str] = []
    if _stdout(repo, ["rev-parse", "--is-shallow-repository"], env) == "true":
        done.append(_fetch(repo, ["--unshallow", "origin"], env))
    for sha, refspecs in wants.items():
        for refspec in [*refspecs, sha]:
            if has_commit(repo, sha):
                break
            done.append(_fetch(repo, ["origin", refspec], env))
    missing = [sha for sha in wants if not has_commit(repo, sha)]
    if missing:
        raise GitError(
            f"commit {', '.join(s[:12] for s in missing)} is not in {repo} and could not be "
            "fetched from origin (tried the pull request's refs); check out the repository "
            "with actions/checkout first (fetch-depth: 0 saves the fetch)"
        )
    return done


def auth_env(repo: Path, token: str | None, server_url: str) -> dict[str, str]:
    """The environment for git, with an Authorization header for server_url when needed."""
    env = gitops.git_environment()
    if not token or not server_url.startswith("https://"):
        return env
    key = f"http.{server_url.rstrip('/')}/.extraheader"
    if _stdout(repo, ["config", "--get-all", key], env):
        return env  # actions/checkout left its own header; a second one would be refused
    count = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    env.update({
        "GIT_CONFIG_COUNT": str(count + 1),
        f"GIT_CONFIG_KEY_{count}": key,
        f"GIT_CONFIG_VALUE_{count}": f"AUTHORIZATION: basic {basic}",
    })
    return env


def _fetch(repo: Path, args: list[str], env: dict[str, str]) -> str:
    shown = " ".join(["git", "fetch", *args])
    _git(repo, ["fetch", "--no-tags", "--quiet", *args], env=env)
    return shown


def _stdout(repo: Path, args: list[str], env: dict[str, str]) -> str:
    proc = _git(repo, args, env=env)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _git(repo: Path, args: list[str], *, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """One git command, as ``gitops.git_argv`` says (a pull request's refs are fetched:
    no hook or filter from outside the repository's own config); ``env`` is
    ``gitops.git_environment``'s."""
    try:
        return subprocess.run(gitops.git_argv(*args), cwd=repo, capture_output=True, text=True,
                              check=False, env=env, stdin=subprocess.DEVNULL)
    except FileNotFoundError as exc:
        raise GitError("git is not installed or not on PATH") from exc
    except NotADirectoryError as exc:
        raise GitError(f"{repo}: not a directory") from exc
