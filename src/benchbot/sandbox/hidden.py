"""What the measured runs are not shown of a worktree: the config's ``sandbox.build_only``.

A file that only the build reads (a C source, a README) can differ between two commits
whose builds are byte-identical. bisect and history may treat two such commits as
identical only if no run can read the file (docs/cli.md, "What makes two commits
identical"), so the sandbox
makes that true rather than assuming it: each worker's bubblewrap covers every regular
file of its place that ``sandbox.build_only`` names, found after the build, with
``/dev/null`` bound read-only (mounted ``nodev``, so it cannot even be opened), or the
directory holding it with an empty one where nothing else is in it, and leaves out the
repository's ``.git`` (whose objects hold the same files). ``covered`` is the one rule
both sides use: the hash (``measure.lab.output_hash``) leaves out the bytes and mode of
exactly the regular files a worker started on that worktree covers, and keeps every
name.

Pure but for reading the directory tree.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from benchbot.core.globs import matches

# Left out of everything: the worktree's own ``.git`` (a file naming where the repository
# keeps this worktree's HEAD and index).
GIT = ".git"
# The most covers one worker's sandbox takes: bubblewrap's start grows with the square of
# its mounts (on the 2-core VM at load 12-16: 200 covers 0.2 s, 500 0.8 s, 1,000 2.7 s,
# 2,000 12 s a worker, three workers a comparison).
MAX_COVERS = 1000


class TooMany(ValueError):
    """``build_only`` needs more covers than a sandbox can be given."""


def covered(globs: Sequence[str], relative: str) -> bool:
    """Whether ``relative`` (``/``-separated, from the worktree's root) is one of the
    files ``globs`` names (``core.globs``)."""
    return any(matches(g, relative) for g in globs)


def files(root: Path, globs: Sequence[str]) -> list[str]:
    """What a worker on ``root`` covers for ``globs``, relative to ``root``, sorted: each
    regular file they name (its ``.git`` left out, no symlink followed), and in place of
    its files a directory that holds nothing else (written with a trailing ``/``; every
    entry below it a covered file or such a directory), which one empty directory covers.
    TooMany past ``MAX_COVERS``."""
    if not globs:
        return []
    found, _ = _covers(root, "", tuple(globs))
    if len(found) > MAX_COVERS:
        raise TooMany(f"sandbox.build_only covers {len(found)} files and directories of "
                      f"{root}, more than the {MAX_COVERS} a sandbox takes: name fewer, or "
                      "keep the build's outputs out of the source directories (a directory "
                      "that holds only such files is covered whole)")
    return sorted(found)


def _covers(root: Path, rel: str, globs: tuple[str, ...]) -> tuple[list[str], bool]:
    """The covers under ``rel``, and whether everything in it is covered."""
    with os.scandir(root / rel if rel else root) as listing:
        entries = list(listing)
    found: list[str] = []
    whole = bool(entries)
    for entry in entries:
        if not rel and entry.name == GIT:
            whole = False
            continue
        here = f"{rel}/{entry.name}" if rel else entry.name
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            below, all_of = _covers(root, here, globs)
            found += [here + "/"] if all_of else below
            whole = whole and all_of
        elif stat.S_ISREG(info.st_mode) and covered(globs, here):
            found.append(here)
        else:
            whole = False
    return found, whole and bool(rel)
