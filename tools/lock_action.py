#!/usr/bin/env python3
"""Write ``requirements/action.txt``, the hash-pinned lock the action installs from.

The one command that keeps it current (run it from anywhere, with Python 3.11 or
later; it needs ``uv``, e.g. ``pip install uv``, and the package index)::

    python tools/lock_action.py

It resolves benchbot's runtime dependencies (``[project] dependencies`` of
pyproject.toml) together with its build backend (``[build-system] requires``, so that
``pip install --no-deps --no-build-isolation`` installs benchbot itself with nothing
unpinned fetched for the build) into one version of each package for every Python
from 3.10 on (``uv pip compile --universal --fork-strategy fewest``), with the sha256
of every file of each pinned version. Then it checks that each pin has a wheel for every
target the action supports, ``TARGETS`` (CPython 3.10 to 3.13 on Linux x86_64 and
aarch64), since the action installs with ``--only-binary :all:``: no package's build
code runs in a job that holds a write token. A target without a wheel fails the
command, naming the package; pin it lower in pyproject.toml, or drop the target.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "action.txt"
COMMAND = "python tools/lock_action.py"
PYTHONS = ("3.10", "3.11", "3.12", "3.13")
PLATFORMS = ("x86_64-manylinux_2_28", "aarch64-manylinux_2_28")
TARGETS = [(platform, python) for platform in PLATFORMS for python in PYTHONS]


def uv(*args: str, stdin: str | None = None) -> None:
    """Run ``uv`` (as the module pip installs), never letting it fetch an interpreter."""
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    proc = subprocess.run([sys.executable, "-m", "uv", *args], input=stdin, text=True,
                          cwd=ROOT, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"lock_action: uv {args[1] if len(args) > 1 else ''} failed "
                         f"(exit {proc.returncode}); see above")


def main() -> int:
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    LOCK.parent.mkdir(exist_ok=True)
    uv("pip", "compile", "pyproject.toml", "-", "--universal", "--python-version", PYTHONS[0],
       "--fork-strategy", "fewest", "--generate-hashes", "--custom-compile-command", COMMAND,
       "--quiet", "-o", str(LOCK.relative_to(ROOT)), stdin="\n".join(build) + "\n")
    for platform, python in TARGETS:
        uv("pip", "compile", str(LOCK.relative_to(ROOT)), "--python-platform", platform,
           "--python-version", python, "--only-binary", ":all:", "--no-deps", "--quiet",
           "-o", os.devnull)
    print(f"lock_action: wrote {LOCK.relative_to(ROOT)}; every pin has a wheel for "
          f"{len(TARGETS)} targets (Python {', '.join(PYTHONS)} on "
          f"{' and '.join(p.split('-')[0] for p in PLATFORMS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
