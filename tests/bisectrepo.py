"""A generated linear history of a small C program for the bisect and history tests: a config value
(``WORK`` in work.h) sets how much work one call does, and the program reports the
fastest of its calls (as a benchmark harness does, to stand up to a loaded machine)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

# As tests/conftest.py's git, without importing it (benchmarks/bisect.py uses this module).
GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid",
       "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()

PROG_C = r"""
#include <stdio.h>
#include <time.h>
#include "work.h"
static volatile unsigned long sink;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main(void) {
  if (FAIL) { fprintf(stderr, "this commit's program fails\n"); return 3; }
  double best = 1e300;
  for (int k = 0; k < 15; k++) {
    double t0 = now();
    unsigned long s = 0;
    for (long i = 0; i < (long)WORK; i++) s += (unsigned long)i * 2654435761u;
    sink = s;
    double d = now() - t0;
    if (d < best) best = d;
  }
  sink += TAG;  /* the commit's own mark: every commit's program differs, none is faster */
  printf("ns=%.0f\n", best);
  return 0;
}
"""

CONFIG = """version: 1
build: cc -O1 -o prog prog.c
{budget}counts: off  # instruction counts are not what these histories are about
defaults:
  parity: {parity}
workloads:
  - name: work
    run: ./prog
    metric: reported
    pattern: 'ns=(\\d+)'
"""

BASE_WORK = 1_200_000  # about 0.3 ms a call: the 1 µs floor is 0.3% of it


def make_history(root: Path, *, commits: int = 10, factors: Mapping[int, float] | None = None,
                 broken: frozenset[int] = frozenset(), failing: frozenset[int] = frozenset(),
                 readme_only: frozenset[int] = frozenset(),
                 parity: float = 0.02, budget: str | None = "60s") -> Path:
    """A repository of ``commits`` commits on main (0 is the good one, tagged ``good``; the
    last is HEAD). Commit i multiplies the work by ``factors[i]`` (from then on), one in
    ``broken`` does not compile and one in ``failing`` builds a program that exits with
    status 3 (the next commit mends either), one in ``readme_only`` changes
    only README.md (its program is byte-identical to its parent's); every other commit
    changes the program's mark. ``budget`` None leaves the config's budget to benchbot's
    default (a history recorded "at default settings")."""
    repo = root
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q")
    work = float(BASE_WORK)
    for i in range(commits):
        work *= (factors or {}).get(i, 1.0)
        files: dict[str, str] = {"README.md": f"version {i}\n"}
        if i == 0:
            files |= {"prog.c": PROG_C,
                      "benchbot.yml": CONFIG.format(
                          parity=parity, budget=f"budget: {budget}\n" if budget else "")}
        if i not in readme_only:
            mark = "#error this commit does not build\n" if i in broken else ""
            files["work.h"] = (f"{mark}#define WORK {int(work)}\n#define TAG {i}\n"
                               f"#define FAIL {int(i in failing)}\n")
        for name, text in files.items():
            (repo / name).write_text(text)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"commit {i}" + (" (does not build)" if i in broken else ""))
        if i == 0:
            git(repo, "tag", "good")
    return repo
