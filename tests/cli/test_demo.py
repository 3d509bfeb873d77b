"""The demo's repository: the head differs from the base only in the sort's size."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchbot import demo
from benchbot.config.load import load_config
from tests.conftest import git


def test_demo_repo_changes_only_the_sort(tmp_path: Path) -> None:
    repo = tmp_path / "demo"
    demo.make_repo(repo)
    changed = git(repo, "diff", "--name-only", "demo-base", "HEAD").split()
    assert changed == ["kernels/sort.c"]
    diff = git(repo, "diff", "-U0", "demo-base", "HEAD")
    assert "-#define SIZE_PERCENT 100" in diff and "+#define SIZE_PERCENT 104" in diff
    config = load_config(repo / "benchbot.yml")
    assert {w.name for w in config.workloads} >= {"sort", "sum", "edit_distance", "copy", "bfs"}


@pytest.mark.slow
def test_demo_kernels_build_and_consume_their_results(tmp_path: Path) -> None:
    repo = tmp_path / "demo"
    demo.make_repo(repo)
    subprocess.run(["make", "-s", "-C", "kernels"], cwd=repo, check=True, capture_output=True)
    config = load_config(repo / "benchbot.yml")
    for w in config.workloads:
        # the smallest sizes keep this fast; each kernel must print what it computed
        argv = [str(repo / w.run[0]), "1000"] if w.name != "sum" else [str(repo / w.run[0]), "1"]
        out = subprocess.run(argv, cwd=repo, check=True, capture_output=True, text=True).stdout
        assert "checksum=" in out, (w.name, out)
