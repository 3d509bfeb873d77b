"""A generated linear history of a small C program for the bisect and history tests: a config value
(``WORK`` in work.h) sets how much work one call does, and the program reports the
fastest of its calls (as a benchmark harness does, to stand up to a loaded machine)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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


class PlantedWork:
    """A spawner that stands for the generated program without running it: a run at a
    worktree reports WORK (from its work.h) times a constant, with ``noise`` of seeded
    log-normal noise, and lets that time pass on ``clock``; a commit whose program fails
    (FAIL 1) exits with status 3. For the fast tier: the real engine, judge and store,
    decided without a loaded machine's noise."""

    NS_PER_WORK = 0.27  # about the real program's 0.3 ms per 1.2 million

    def __init__(self, clock: Any, *, seed: int = 7, noise: float = 0.002,
                 interrupt_at: int | None = None) -> None:
        import numpy as np

        self.clock, self.rng, self.noise = clock, np.random.default_rng(seed), noise
        self.spawned = 0
        self.interrupt_at = interrupt_at  # raise KeyboardInterrupt at this run (Ctrl-C)

    def spawn(self, request: Any) -> Any:
        from benchbot.spawn import RawRun

        self.spawned += 1
        if self.interrupt_at is not None and self.spawned >= self.interrupt_at:
            raise KeyboardInterrupt
        header = (Path(request.cwd) / "work.h").read_text()
        values = dict(line.split()[1:3] for line in header.splitlines()
                      if line.startswith("#define"))
        ns = float(values["WORK"]) * self.NS_PER_WORK * float(self.rng.lognormal(0.0, self.noise))
        self.clock.advance(15 * ns / 1e9 + 0.002)
        status = 3 if values.get("FAIL") == "1" else 0
        return RawRun(wall_ns=int(15 * ns), cpu_ns=int(15 * ns), maxrss_kib=2048,
                      returncode=status, captures=tuple(f"{ns:.0f}" for _ in request.patterns))


# The fast tier's config for these histories: nothing built (a commit marked not to build
# fails its build), nothing sandboxed, the program's file what the workload runs (so a
# README-only commit is byte-identical), and PlantedWork standing for the runs.
PLANTED_CONFIG = """version: 1
build: "! grep -q '#error' work.h"
sandbox: off
counts: off
budget: 60s
defaults:
  parity: 0.02
workloads:
  - name: work
    run: [sh, work.h]
    metric: reported
    pattern: 'ns=(\\d+)'
"""
