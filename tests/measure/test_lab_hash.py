"""``measure.lab.output_hash``: what makes two built worktrees identical for bisect and history.
Every difference a run could read changes the hash; where the worktree lies and its
``.git`` pointer do not; what cannot be hashed is None (the commit is measured); a
``sandbox.build_only`` file counts by its name alone (``benchbot.sandbox.hidden``)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from benchbot.measure.lab import output_hash
from benchbot.sandbox import hidden


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


# --- sandbox.build_only: files no run can open count by their names alone ---------------------

GLOBS = ("*.c", "docs/**")


def _sources(root: Path) -> Path:
    _tree(root)
    (root / "src" / "prog.c").write_text("int main(void) { return 0; }\n")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("# guide\n")
    return root


def test_a_build_only_file_s_bytes_and_mode_do_not_count(tmp_path: Path) -> None:
    a, b = _sources(tmp_path / "a"), _sources(tmp_path / "b")
    (b / "src" / "prog.c").write_text("/* a comment */\nint main(void) { return 0; }\n")
    (b / "src" / "prog.c").chmod(0o600)
    (b / "docs" / "guide.md").write_text("# the guide, rewritten\n")
    assert output_hash(a, GLOBS) == output_hash(b, GLOBS)
    assert output_hash(a) != output_hash(b)  # without build_only they count


@pytest.mark.parametrize("change", ["added", "removed", "renamed", "a symlink", "not covered"])
def test_what_a_run_can_still_see_of_build_only_files_counts(tmp_path: Path, change: str) -> None:
    a, b = _sources(tmp_path / "a"), _sources(tmp_path / "b")
    if change == "added":
        (b / "src" / "new.c").write_text("")
    elif change == "removed":
        (b / "src" / "prog.c").unlink()
    elif change == "renamed":
        (b / "src" / "prog.c").rename(b / "src" / "main.c")
    elif change == "a symlink":  # named like a source, but a link: its target counts
        for root, target in ((a, "lib.py"), (b, "bench.py")):
            (root / "link.c").symlink_to(target)
    else:
        (b / "lib.py").write_text("WORK = 3\n")
    assert output_hash(a, GLOBS) != output_hash(b, GLOBS)


def test_the_files_hidden_are_the_regular_files_the_globs_cover(tmp_path: Path) -> None:
    root = _sources(tmp_path / "a")
    (root / "link.c").symlink_to("src/prog.c")
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "x.c").write_text("")
    (root / "via").symlink_to("elsewhere")  # a directory link: not followed
    (root / ".git").unlink()
    (root / ".git").mkdir()
    (root / ".git" / "y.c").write_text("")
    (root / "src" / "only").mkdir()  # a directory of sources alone is covered whole
    (root / "src" / "only" / "a.c").write_text("")
    (root / "src" / "only" / "inner").mkdir()
    (root / "src" / "only" / "inner" / "b.c").write_text("")
    (root / "src" / "none").mkdir()  # an empty one is left as it is
    assert hidden.files(root, GLOBS) == ["docs/", "elsewhere/", "src/only/", "src/prog.c"]
    assert hidden.files(root, ()) == []


def test_too_many_build_only_files_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _sources(tmp_path / "a")
    monkeypatch.setattr(hidden, "MAX_COVERS", 1)
    with pytest.raises(hidden.TooMany, match="name fewer"):
        hidden.files(root, GLOBS)
