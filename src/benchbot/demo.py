"""``benchbot demo``: the whole comparison on the bundled C kernels, in a throwaway repo.

The head commit makes the sort handle 4% more elements (n log n: about +4.3% of work)
and changes nothing else, so a correct run shows ``sort`` slower near 1.04× and never
calls another kernel slower or faster.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path

from benchbot.config.settings import Overrides
from benchbot.core.errors import BenchbotError
from benchbot.core.model import Results
from benchbot.measure import engine

DEMO_BUDGET_S = 90.0  # about what the fixed design with 50 pairs per phase took
SORT_SOURCE = "kernels/sort.c"
SORT_BASE = "#define SIZE_PERCENT 100"
SORT_HEAD = "#define SIZE_PERCENT 104"
EXPECTATION = (
    "> What to expect: the head commit changed only `kernels/sort.c` (4% more elements, "
    "about +4% of work), so `sort` should read slower near 1.04×. Every other kernel is "
    "unchanged: `level`, or `inconclusive` where its runs vary more than the run count can "
    "settle (the note says how many runs would), but never `slower` or `faster`. Where "
    "instructions were counted (perf's counters, else valgrind), the instructions column "
    "reads about +4% for `sort` and +0.0% for the others, and the memory column level."
)
KERNEL_FILES = ("*.c", "*.h", "Makefile", "benchbot.yml", "README.md")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=benchbot demo", "-c", "user.email=demo@benchbot.invalid",
         "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
        cwd=repo, check=True, capture_output=True,
    )


def make_repo(path: Path) -> None:
    """Create the demo repository: a base commit and a head commit that grows the sort by 4%."""
    path.mkdir(parents=True, exist_ok=True)
    kernels = path / "kernels"
    kernels.mkdir(exist_ok=True)
    source = resources.files("benchbot.kernels")
    for entry in source.iterdir():
        if entry.is_file() and any(Path(entry.name).match(p) for p in KERNEL_FILES):
            (kernels / entry.name).write_bytes(entry.read_bytes())
    shutil.move(str(kernels / "benchbot.yml"), str(path / "benchbot.yml"))
    (path / ".gitignore").write_text("kernels/build/\n")
    sort = path / SORT_SOURCE
    text = sort.read_text()
    if SORT_BASE not in text:
        raise BenchbotError(f"demo: {SORT_SOURCE} has no line {SORT_BASE!r} to change")
    _git(path, "init", "-q")
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", "base: the bundled kernels")
    _git(path, "tag", "demo-base")
    sort.write_text(text.replace(SORT_BASE, SORT_HEAD))
    _git(path, "commit", "-q", "-am", "head: sort handles 4% more elements")


@contextlib.contextmanager
def _place(keep: Path | None) -> Iterator[Path]:
    if keep is not None:
        if keep.exists() and any(keep.iterdir()):
            raise BenchbotError(f"demo: {keep} exists and is not empty")
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix="benchbot-demo-") as tmp:
        yield Path(tmp) / "demo"


def run(
    *, overrides: Overrides | None = None, keep: Path | None = None,
    reporter: engine.Reporter | None = None, prepare: Callable[[], None] | None = None,
) -> Results:
    """Make the demo repository and compare its two commits; return the results document
    (``prepare`` as for ``engine.compare``)."""
    with _place(keep) as repo:
        if reporter:
            reporter.note(f"demo: making a git repository of the bundled kernels in {repo}")
        make_repo(repo)
        request = engine.Request(
            repo=repo, base="demo-base", head="HEAD",
            overrides=Overrides(budget=DEMO_BUDGET_S).over(overrides or Overrides()),
            repository="benchbot-demo",
        )
        return engine.compare(request, reporter=reporter, prepare=prepare)
