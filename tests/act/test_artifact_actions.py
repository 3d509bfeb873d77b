"""The artifact stand-ins keep the rules of actions/upload-artifact and download-artifact v4
that the workflows rely on; run here with node directly, as act runs them (INPUT_* variables,
GITHUB_OUTPUT, the workspace)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.act.harness import artifact_actions

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs node on PATH")


def action(tools: Path, which: str, store: Path, workspace: Path, **inputs: str) -> subprocess.CompletedProcess[str]:
    """Run one stand-in with these inputs (``if_no_files_found`` for ``if-no-files-found``)."""
    output = workspace / "output.txt"
    output.touch()
    env = {"PATH": "/usr/bin:/bin", "BENCHBOT_ACT_ARTIFACTS": str(store),
           "GITHUB_WORKSPACE": str(workspace), "GITHUB_OUTPUT": str(output)}
    env |= {f"INPUT_{k.upper().replace('_', '-')}": v for k, v in inputs.items()}
    script = "upload.js" if which == "upload-artifact" else "download.js"
    return subprocess.run([shutil.which("node") or "node", str(tools / which / script)], env=env,
                          capture_output=True, text=True, check=False, timeout=60)


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    artifact_actions(tmp_path / "tools")
    return tmp_path / "tools"


def shard(workspace: Path, name: str, text: str) -> Path:
    folder = workspace / name
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(text)
    return folder


def test_pattern_download_puts_each_artifact_in_a_folder_of_its_name(tools: Path, tmp_path: Path) -> None:
    store, ws = tmp_path / "store", tmp_path / "ws"
    for n in ("1", "2"):
        src = shard(ws, f"out{n}", n)
        assert action(tools, "upload-artifact", store, ws, name=f"res-shard-{n}-of-2",
                      path=f"{src}/").returncode == 0
    got = action(tools, "download-artifact", store, ws, pattern="res*", merge_multiple="false",
                 path=str(tmp_path / "down"))
    assert got.returncode == 0, got.stdout
    assert (tmp_path / "down" / "res-shard-1-of-2" / "results.json").read_text() == "1"
    assert (tmp_path / "down" / "res-shard-2-of-2" / "results.json").read_text() == "2"


def test_a_pattern_that_matches_nothing_fails_the_step(tools: Path, tmp_path: Path) -> None:
    got = action(tools, "download-artifact", tmp_path / "store", tmp_path, pattern="res*",
                 path=str(tmp_path / "down"))
    assert got.returncode == 1 and "::error::" in got.stdout


def test_upload_rules_for_no_files_and_overwrite(tools: Path, tmp_path: Path) -> None:
    store, ws = tmp_path / "store", tmp_path / "ws"
    ws.mkdir()
    empty = str(ws / "nothing")
    assert action(tools, "upload-artifact", store, ws, name="a", path=empty,
                  if_no_files_found="ignore").returncode == 0
    assert not (store / "a").exists()
    assert action(tools, "upload-artifact", store, ws, name="a", path=empty,
                  if_no_files_found="error").returncode == 1
    src = shard(ws, "out", "first")
    assert action(tools, "upload-artifact", store, ws, name="a", path=f"{src}/").returncode == 0
    (src / "results.json").write_text("second")
    assert action(tools, "upload-artifact", store, ws, name="a", path=f"{src}/",
                  overwrite="false").returncode == 1
    assert action(tools, "upload-artifact", store, ws, name="a", path=f"{src}/",
                  overwrite="true").returncode == 0
    assert (store / "a" / "results.json").read_text() == "second"
