"""Fixtures of the act tier: the tools once per session, a fresh world per test."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.act.harness import (
    CHECKOUT,
    REPO_ROOT,
    Act,
    artifact_actions,
    build_wheelhouse,
    missing_prerequisites,
    readme_workflow,
    source_snapshot,
    unpack_checkout,
)
from tests.act.world import World
from tests.workflows import PINNED


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/act/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.act)


@pytest.fixture(scope="session")
def act_tools(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The mapped actions, a snapshot of benchbot and a wheelhouse, made once. Without
    act, node, bubblewrap or the pinned checkout the tier is skipped, saying what is
    missing; in CI (CI=true) that is a failure instead."""
    missing = missing_prerequisites()
    if missing:
        message = "the act tier needs " + ", ".join(missing)
        if os.environ.get("CI") == "true":
            pytest.fail(message + " (CI=true: .ci/run installs them)")
        pytest.skip(message)
    base = tmp_path_factory.mktemp("act-tools")
    readme = base / "readme-workflow.yml"
    readme.write_text(readme_workflow())
    return {"checkout": unpack_checkout(base), "wheelhouse": build_wheelhouse(base / "wheels"),
            "snapshot": source_snapshot(base / "benchbot"), "readme": readme,
            "bench": REPO_ROOT / ".github" / "workflows" / "bench.yml", "base": base}


MakeWorld = Callable[..., World]


@pytest.fixture
def make_world(tmp_path: Path, act_tools: dict[str, Path]) -> Iterator[MakeWorld]:
    """Factory: ``make_world(workflow="bench"|"readme", work_inside=True, fork=False,
    files=None, head_files=None)``; more keywords (``branches``, ``main_after``,
    ``base_branch``) shape the repository (``World``)."""
    worlds: list[World] = []

    def make(*, workflow: str = "bench", work_inside: bool = True, fork: bool = False,
             files: dict[str, str] | None = None,
             head_files: dict[str, str] | None = None, **repository: Any) -> World:
        tools = tmp_path / "tools"
        local = {CHECKOUT: act_tools["checkout"], **artifact_actions(tools)}
        if workflow == "readme":
            local[PINNED] = act_tools["snapshot"]
        act = Act(workdir=tmp_path / "runs", local=local, wheelhouse=act_tools["wheelhouse"])
        world = World(tmp_path, act, flavour="self" if workflow == "bench" else "readme",
                      work_inside=work_inside, snapshot=act_tools["snapshot"],
                      workflow=act_tools[workflow], fork=fork, files=files,
                      head_files=head_files, **repository)
        worlds.append(world)
        return world

    yield make
    for world in worlds:
        world.close()
        assert world.fake.validation_errors == []
