"""The hunter the scenarios rely on finds what it looks for, where nothing hides it: a
scenario's "no leak" means something only if the same script run unconfined says "LEAK"."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.act.harness import Layout, hunter


def hunt(tmp_path: Path, layout: Layout, env: dict[str, str], token: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "hunt.sh"
    script.write_text(hunter(token, layout, tmp_path / "leaks.txt"))
    script.chmod(0o755)
    work = tmp_path / "worktree"
    work.mkdir(exist_ok=True)
    return subprocess.run([str(script), "run"], cwd=work, env={"PATH": os.defpath, **env},
                          capture_output=True, text=True, check=False, timeout=60)


def test_the_hunter_finds_the_token_in_its_environment(tmp_path: Path) -> None:
    layout = Layout.make(tmp_path / "elsewhere", work_inside=False)
    token = "ghs_" + "x1" * 18
    got = hunt(tmp_path, layout, {"GITHUB_TOKEN": token}, token)
    assert got.returncode == 97 and "LEAK: env" in got.stderr, got.stderr
    assert "LEAK: env" in (tmp_path / "leaks.txt").read_text()


def test_the_hunter_finds_the_runner_credential(tmp_path: Path) -> None:
    layout = Layout.make(tmp_path)
    got = hunt(tmp_path, layout, {}, "ghs_" + "y2" * 18)
    assert got.returncode == 97 and f"{layout.root}/.credentials" in got.stderr, got.stderr


def test_the_hunter_hunts_once_per_place_and_is_quiet_when_nothing_is_there(tmp_path: Path) -> None:
    layout = Layout.make(tmp_path)
    (layout.root / ".credentials").unlink()
    (layout.root / ".runner").unlink()
    first = hunt(tmp_path, layout, {}, "ghs_" + "z3" * 18)
    assert first.returncode == 0 and first.stderr == ""
    assert (tmp_path / "worktree" / ".hunted-run").exists()
