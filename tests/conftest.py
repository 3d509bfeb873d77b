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
    """Write (or with None, delete) files; a file starting with #! is made executable.

    A benchbot.yml that does not say how to count instructions gets ``counts: off`` at its
    end (the line numbers of what it holds stay the same): ``counts: auto`` would count
    every short workload with valgrind, whose counted runs take about 0.4 s each, and most
    tests are about something else. The tests of counting say ``counts:``."""
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
            continue
        if name.endswith("benchbot.yml") and text.startswith("version:") and "counts:" not in text:
            text = text + ("" if text.endswith("\n") else "\n") + "counts: off\n"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if text.startswith("#!"):
            path.chmod(0o755)


MakeRepo = Callable[..., Path]

# --- the slow tier --------------------------------------------------------------------

# Every test under these folders is in the slow tier (the container image, a real browser,
# workflows run by act), whether or not it is marked itself.
SLOW_DIRS = ("container", "render", "act")
_TESTS = Path(__file__).parent
_LEFT_OUT = pytest.StashKey[int]()  # how many slow tests this run left out


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true",
                     help="run the slow tier too (tests marked slow; also BENCHBOT_SLOW=1)")


def _runs_slow(config: pytest.Config) -> bool:
    """Whether the slow tier runs: asked for with --slow or BENCHBOT_SLOW=1, or named in
    -m (``-m slow`` runs it alone; any -m expression that says ``slow`` decides itself)."""
    return (bool(config.getoption("--slow")) or os.environ.get("BENCHBOT_SLOW") == "1"
            or "slow" in (config.getoption("markexpr") or ""))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the slow folders' tests, then leave the slow tier out unless it was asked for
    (tryfirst: before -m selects, so that ``-m slow`` sees the folders' marks)."""
    for item in items:
        parts = item.path.relative_to(_TESTS).parts if item.path.is_relative_to(_TESTS) else ()
        if parts and parts[0] in SLOW_DIRS:
            item.add_marker(pytest.mark.slow)
    if _runs_slow(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]
        config.stash[_LEFT_OUT] = len(slow)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    left_out = config.stash.get(_LEFT_OUT, 0)
    if left_out:
        terminalreporter.write_line(
            f"{left_out} slow tests left out: run them with --slow (both tiers) or -m slow")


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
def planted(monkeypatch: pytest.MonkeyPatch) -> Any:
    """`benchbot github`, run in this process, measures with ``ghenv.PlantedNap`` on a fake
    clock instead of running nap.sh: the same planted slowdown, decided without waiting or
    a loaded machine's noise, for the tests whose point is what happens around measuring."""
    from benchbot import engine
    from tests.clock import FakeClock
    from tests.ghenv import PlantedNap

    clock = FakeClock()
    real = engine.compare

    def compare(request: engine.Request, **kwargs: Any) -> Any:
        return real(request, **kwargs, spawner_factory=lambda _: PlantedNap(clock), clock=clock)

    monkeypatch.setattr(engine, "compare", compare)
    return clock


@pytest.fixture
def shard_env(tmp_path: Path, fake: Any) -> Any:
    """As ``env``, with two workloads to split over two shards (tests/ghenv.py)."""
    from tests.ghenv import SHARD_CONFIG, Env, make_workspace

    return Env(tmp_path, fake, make_workspace(tmp_path, config=SHARD_CONFIG))
