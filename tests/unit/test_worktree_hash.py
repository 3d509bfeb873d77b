"""``bisect.output_hash``: what makes two built worktrees identical for bisect and history.
Every difference a run could read changes the hash; where the worktree lies and its
``.git`` pointer do not; what cannot be hashed is None (the commit is measured)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from benchbot.bisect import output_hash


def _tree(root: Path) -> Path:
    (root / "src" / "deep").mkdir(parents=True)
    (root / "bench.py").write_text("import lib\nlib.work()\n")
    (root / "lib.py").write_text("WORK = 1000\n")
    (root / "src" / "deep" / "data.bin").write_bytes(bytes(range(256)) * 4)
    (root / "prog").write_bytes(b"\x7fELF built")
    (root / "prog").chmod(0o755)
    (root / "libwork.so").write_bytes(b"\x7fELF library")
    (root / "current").symlink_to("src/deep/data.bin")
    (root / "empty").mkdir()
    (root / ".git").write_text(f"gitdir: /repo/.git/worktrees/{root.name}\n")
    return root


def test_the_same_files_elsewhere_hash_the_same_whatever_their_git_pointer(tmp_path: Path) -> None:
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert (a / ".git").read_text() != (b / ".git").read_text()
    assert output_hash(a) is not None and output_hash(a) == output_hash(b)


CHANGES: dict[str, Callable[[Path], object]] = {
    "an imported module": lambda r: (r / "lib.py").write_text("WORK = 2000\n"),
    "a byte of a data file": lambda r: (r / "src/deep/data.bin").write_bytes(
        bytes(range(256)) * 3 + bytes(range(255)) + b"\x00"),
    "a shared library": lambda r: (r / "libwork.so").write_bytes(b"\x7fELF librarz"),
    "a README": lambda r: (r / "README.md").write_text("docs\n"),
    "an empty file added": lambda r: (r / "src" / "new.txt").touch(),
    "an empty directory added": lambda r: (r / "src" / "cache").mkdir(),
    "a file removed": lambda r: (r / "libwork.so").unlink(),
    "a file renamed": lambda r: (r / "lib.py").rename(r / "lib2.py"),
    "a mode": lambda r: (r / "lib.py").chmod(0o755),
    "a directory's mode": lambda r: (r / "src").chmod(0o700),
    "a symlink's target": lambda r: ((r / "current").unlink(), (r / "current").symlink_to("lib.py")),
    "a symlink for the file": lambda r: ((r / "lib.py").rename(r / "lib.real"),
                                         (r / "lib.py").symlink_to("lib.real"),
                                         (r / "lib.real").rename(r / "src" / "lib.real")),
    "a nested .git": lambda r: (r / "src" / ".git").write_text("gitdir: elsewhere\n"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_any_difference_a_run_can_read_changes_the_hash(tmp_path: Path, change: str) -> None:
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    CHANGES[change](b)
    assert output_hash(a) != output_hash(b)
    assert output_hash(b) is not None


def test_a_fifo_a_build_left_cannot_be_hashed_and_the_commit_is_measured(tmp_path: Path) -> None:
    root = _tree(tmp_path / "a")
    os.mkfifo(root / "src" / "pipe")
    assert output_hash(root) is None


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_file_that_cannot_be_read_cannot_be_hashed(tmp_path: Path) -> None:
    root = _tree(tmp_path / "a")
    (root / "lib.py").chmod(0)
    try:
        assert output_hash(root) is None
    finally:
        (root / "lib.py").chmod(0o644)


def test_a_worktree_that_is_gone_cannot_be_hashed(tmp_path: Path) -> None:
    root = _tree(tmp_path / "a")
    shutil.rmtree(root)
    assert output_hash(root) is None


def test_a_link_loop_is_hashed_as_links_never_followed(tmp_path: Path) -> None:
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    for root in (a, b):
        (root / "loop").symlink_to("loop")
        (root / "up").symlink_to("..")
    assert output_hash(a) is not None and output_hash(a) == output_hash(b)
