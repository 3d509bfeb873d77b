"""What the measured runs are not shown of a worktree: the config's ``sandbox.build_only``.

A file that only the build reads (a C source, a README) can differ between two commits
whose builds are byte-identical. bisect and history may treat two such commits as
identical only if no run can read the file (docs/cli.md, "Bisect"), so the sandbox
makes that true rather than assuming it: each worker's bubblewrap covers every regular
file of its place that ``sandbox.build_only`` names, found after the build, with
``/dev/null`` bound read-only (mounted ``nodev``, so it cannot even be opened), and
leaves out the repository's ``.git`` (whose objects hold the same files). ``files`` is
the one rule both sides use: the hash (``bisect.output_hash``) leaves out the bytes and
mode of exactly the files a worker started on that worktree covers.

Pure but for reading the directory tree.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from benchbot import skipping

# Left out of everything: the worktree's own ``.git`` (a file naming where the repository
# keeps this worktree's HEAD and index).
GIT = ".git"
# The most bytes of covered paths one worker's sandbox takes (they are bwrap arguments).
MAX_BYTES = 512 * 1024


class TooMany(ValueError):
    """``build_only`` covers more files than a sandbox can be given."""


def covered(globs: Sequence[str], relative: str) -> bool:
    """Whether ``relative`` (``/``-separated, from the worktree's root) is one of the
    files ``globs`` names (``skipping``'s globs)."""
    return any(skipping.matches(g, relative) for g in globs)


def files(root: Path, globs: Sequence[str]) -> list[str]:
    """The regular files under ``root`` (its ``.git`` left out, no symlink followed) that
    ``globs`` covers, relative to ``root``, sorted; TooMany past ``MAX_BYTES``."""
    if not globs:
        return []
    found: list[str] = []
    size = 0
    todo = [""]
    while todo:
        rel = todo.pop()
        with os.scandir(root / rel if rel else root) as listing:
            entries = list(listing)
        for entry in entries:
            if not rel and entry.name == GIT:
                continue
            here = f"{rel}/{entry.name}" if rel else entry.name
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                todo.append(here)
            elif stat.S_ISREG(info.st_mode) and covered(globs, here):
                found.append(here)
                size += len(os.fsencode(root / here)) + 32
                if size > MAX_BYTES:
                    raise TooMany(f"sandbox.build_only covers more than {len(found)} files "
                                  f"of {root}: name fewer (a directory's sources, not all)")
    return sorted(found)
