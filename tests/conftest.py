"""Shared fixtures: real git repositories made in a temporary directory."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from benchbot import results

GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid",
       "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]


def git(repo: Path, *args: str) -> str:
    """Run git in repo and return its stdout."""
    return subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def write_files(repo: Path, files: Mapping[str, str | None]) -> None:
    """Write (or with None, delete) files; a file starting with #! is made executable."""
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if text.startswith("#!"):
            path.chmod(0o755)


MakeRepo = Callable[..., Path]


@pytest.fixture
def make_repo(tmp_path: Path) -> MakeRepo:
    """Factory: a git repo with a `base` tag and a head commit on main."""

    def make(base: Mapping[str, str], head: Mapping[str, str | None] | None = None, name: str = "repo") -> Path:
        repo = tmp_path / name
        repo.mkdir()
        git(repo, "init", "-q")
        write_files(repo, base)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "base")
        git(repo, "tag", "base")
        if head:
            write_files(repo, head)
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", "head")
        return repo

    return make


@pytest.fixture(scope="session")
def results_schema() -> dict[str, Any]:
    return results.schema()


@pytest.fixture
def validate(results_schema: dict[str, Any]) -> Callable[[Any], None]:
    """Validate a results document (or a path to one) against the shipped JSON Schema."""

    def check(doc: Any) -> None:
        if isinstance(doc, (str, os.PathLike)):
            doc = json.loads(Path(doc).read_text())
        elif not isinstance(doc, dict):
            doc = results.to_json(doc)
        jsonschema.validate(doc, results_schema)

    return check


@pytest.fixture
def fake() -> Iterator[Any]:
    """The fake GitHub server with the webhook examples' repository, Codertocat/Hello-World;
    alice may write, maria maintain, bob read. Every request and response matched GitHub's
    OpenAPI description, or the test fails."""
    from tests.fakegithub import FakeGitHub
    from tests.ghenv import OWNER, REPO

    with FakeGitHub(owner=OWNER, repo=REPO, owner_type="User", default_branch="main") as server:
        server.permissions.update({"alice": "write", "maria": "maintain", "bob": "read"})
        yield server
        assert server.validation_errors == []


@pytest.fixture
def env(tmp_path: Path, fake: Any) -> Any:
    """A GitHub Actions job around `benchbot github` on a fresh workspace (tests/ghenv.py)."""
    from tests.ghenv import Env, make_workspace

    return Env(tmp_path, fake, make_workspace(tmp_path))


@pytest.fixture
def shard_env(tmp_path: Path, fake: Any) -> Any:
    """As ``env``, with two workloads to split over two shards (tests/ghenv.py)."""
    from tests.ghenv import SHARD_CONFIG, Env, make_workspace

    return Env(tmp_path, fake, make_workspace(tmp_path, config=SHARD_CONFIG))
