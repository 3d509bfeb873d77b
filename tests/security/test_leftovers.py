"""A build or a run leaves nothing behind that outlives the comparison (``benchbot.core.trees``).

``shutil.rmtree(ignore_errors=True)`` kept what its owner could not enter: ``mkdir -p
keep/inner && chmod 000 keep`` in a worktree survived every comparison, in the machine's
temporary directory, for the next job to find. Root reads any directory whatever its
mode, so on a machine where the tests run as root these run benchbot without the
capabilities that let root ignore modes (``setpriv``), as the runner's user would.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from benchbot.core import trees
from benchbot.core.errors import CleanupError
from benchbot.git import gitops
from tests.conftest import MakeRepo

# What a user other than root cannot do to a file of their own mode 000, and root can.
DAC = "-dac_override,-dac_read_search,-fowner"


def as_the_runner_user(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` as an ordinary user sees files: as it is, or under root without the
    capabilities that bypass file modes."""
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root, and no setpriv (util-linux) to run as an ordinary user")
        argv = [setpriv, "--inh-caps", DAC, "--bounding-set", DAC, *argv]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False,
                          **kwargs)  # type: ignore[call-overload]


LEAVE = """
mkdir -p keep/inner && touch keep/inner/file && chmod 000 keep
mkdir -p ro/sub && touch ro/sub/f && chmod 500 ro/sub ro
mkdir noexec && touch noexec/f && chmod 600 noexec
ln -s loop-b loop-a && ln -s loop-a loop-b
mkfifo fifo
ln -s "$OUTSIDE" outside-link
"""


def _leave(where: Path, outside: Path) -> None:
    subprocess.run(["sh", "-ec", LEAVE], cwd=where, check=True, env={**os.environ,
                                                                     "OUTSIDE": str(outside)})
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(where / "sock"))


REMOVE = ("import sys; from benchbot.core.trees import remove_tree; "
          "problems = remove_tree(sys.argv[1]); print(problems); sys.exit(1 if problems else 0)")


def test_everything_a_build_can_leave_is_removed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "kept").write_text("not the tree's\n")
    os.chmod(outside / "sub", 0o500)
    tree = tmp_path / "tree"
    tree.mkdir()
    _leave(tree, outside / "sub")
    proc = as_the_runner_user([sys.executable, "-c", REMOVE, str(tree)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not tree.exists()
    # a link is removed, never followed: what it pointed to is as it was
    assert (outside / "sub" / "kept").read_text() == "not the tree's\n"
    assert os.stat(outside / "sub").st_mode & 0o777 == 0o500


def test_what_cannot_be_removed_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "x"], cwd=repo, check=True)
    real = os.rmdir

    def busy(path: str, *, dir_fd: int | None = None) -> None:
        if path == "mounted\nhere":  # a mount point, say: rmdir answers EBUSY
            raise OSError(16, "Device or resource busy")
        real(path, dir_fd=dir_fd)

    monkeypatch.setattr(os, "rmdir", busy)
    with pytest.raises(CleanupError) as caught, gitops.worktrees(repo, {"head": "HEAD"}) as co:
        (co["head"].path / "mounted\nhere").mkdir()
    message = str(caught.value)
    assert "head/mounted\\nhere: Device or resource busy" in message  # named, on one line
    assert "\n" not in message


def test_a_failed_comparison_still_removes_and_keeps_its_own_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "keep").mkdir()
    with pytest.raises(ValueError, match="the block's own"), trees.removed(root, what="a test"):
        raise ValueError("the block's own")
    assert not root.exists() and capsys.readouterr().err == ""


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["off", pytest.param("on", marks=pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed"))])
def test_a_comparison_leaves_nothing_in_the_temporary_directory(make_repo: MakeRepo,
                                                                tmp_path: Path, mode: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    build = (f"#!/bin/sh\nset -e\nOUTSIDE='{outside}'\n" + LEAVE
             + f"'{sys.executable}' -c \"import socket; socket.socket(socket.AF_UNIX).bind('sock')\"\n")
    repo = make_repo({"benchbot.yml": f"version: 1\naa: off\nconfirm: off\nsandbox: {mode}\n"
                                      "build: ./build.sh\ndefaults: {runs: 10}\n"
                                      "workloads: [{name: w, run: ['true']}]\n",
                      "build.sh": build})
    temp = tmp_path / "temp"
    temp.mkdir()
    os.chmod(temp, 0o777)
    proc = as_the_runner_user(
        [sys.executable, "-m", "benchbot", "compare", "--repo", str(repo), "--base", "base",
         "--head", "HEAD", "--json", str(tmp_path / "results.json"), "--quiet"],
        env={**os.environ, "TMPDIR": str(temp)}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # used to keep base/keep and head/keep (and ro/, noexec/) under benchbot-*/
    assert list(temp.iterdir()) == []
