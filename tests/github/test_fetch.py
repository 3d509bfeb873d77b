"""Bringing a pull request's commits into a shallow clone (benchbot.github.fetch)."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest

from benchbot.core.errors import GitError
from benchbot.github.fetch import auth_env, ensure_commits, has_commit
from tests.conftest import git


def origin_and_clone(tmp_path: Path) -> tuple[Path, Path, str, str]:
    """A bare origin with main and refs/pull/3/head, and a depth-1 clone of main."""
    src = tmp_path / "src"
    src.mkdir()
    git(src, "init", "-q")
    (src / "a").write_text("1")
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", "one")
    (src / "a").write_text("2")
    git(src, "commit", "-q", "-am", "two")
    base = git(src, "rev-parse", "HEAD")
    git(src, "checkout", "-q", "-b", "topic")
    (src / "a").write_text("3")
    git(src, "commit", "-q", "-am", "three")
    head = git(src, "rev-parse", "HEAD")
    git(src, "checkout", "-q", "main")
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(origin)], check=True)
    git(origin, "update-ref", "refs/pull/3/head", head)
    git(origin, "branch", "-D", "topic")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{origin}", str(clone)],
                   check=True)
    return origin, clone, base, head


def test_a_shallow_clone_gets_history_and_the_pull_request_head(tmp_path: Path) -> None:
    _, clone, base, head = origin_and_clone(tmp_path)
    assert has_commit(clone, base) and not has_commit(clone, head)
    done = ensure_commits(clone, {base: [], head: ["+refs/pull/3/head"]})
    assert done == ["git fetch --unshallow origin", "git fetch origin +refs/pull/3/head"]
    assert has_commit(clone, head)
    assert git(clone, "rev-parse", "--is-shallow-repository") == "false"
    assert git(clone, "merge-base", base, head) == base
    assert ensure_commits(clone, {base: [], head: ["+refs/pull/3/head"]}) == []  # nothing to do


def test_a_commit_nowhere_is_a_clear_error(tmp_path: Path) -> None:
    _, clone, _, _ = origin_and_clone(tmp_path)
    with pytest.raises(GitError, match=r"commit 0123456789ab is not in .* could not be fetched"):
        ensure_commits(clone, {"0123456789ab" + "0" * 28: ["+refs/pull/9/head"]})
    with pytest.raises(GitError, match="no such directory"):
        ensure_commits(tmp_path / "missing", {})


def test_the_token_goes_to_git_in_the_environment_only(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    env = auth_env(repo, "ghs_secret", "https://github.com")
    assert env["GIT_CONFIG_KEY_0"] == "http.https://github.com/.extraheader"
    value = env["GIT_CONFIG_VALUE_0"].removeprefix("AUTHORIZATION: basic ")
    assert base64.b64decode(value) == b"x-access-token:ghs_secret"
    # actions/checkout left its own header: a second one would be refused by GitHub
    git(repo, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic xyz")
    assert "GIT_CONFIG_COUNT" not in auth_env(repo, "ghs_secret", "https://github.com")
    assert "GIT_CONFIG_COUNT" not in auth_env(repo, None, "https://github.com")
