"""A generated linear history of a small C program for the bisect and history tests: a config value
(``WORK`` in work.h) sets how much work one call does, and the program reports the
fastest of its calls (as a benchmark harness does, to stand up to a loaded machine)."""

from __future__ import annotations

import json
import subprocess
import sys
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
                 empty: frozenset[int] = frozenset(),
                 parity: float = 0.02, budget: str | None = "60s") -> Path:
    """A repository of ``commits`` commits on main (0 is the good one, tagged ``good``; the
    last is HEAD). Commit i multiplies the work by ``factors[i]`` (from then on), one in
    ``broken`` does not compile and one in ``failing`` builds a program that exits with
    status 3 (the next commit mends either), one in ``readme_only`` changes
    only README.md (its program is byte-identical to its parent's, but a run could read
    the README, so it is measured), one in ``empty`` changes nothing (its tree is its
    parent's: identical, not measured); every other commit changes the program's mark. ``budget`` None leaves the config's budget to benchbot's
    default (a history recorded "at default settings")."""
    repo = root
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q")
    work = float(BASE_WORK)
    for i in range(commits):
        work *= (factors or {}).get(i, 1.0)
        if i in empty:
            git(repo, "commit", "-q", "--allow-empty", "-m", f"commit {i} (empty)")
            continue
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
        from benchbot.sandbox.spawn import RawRun

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
# fails its build), nothing sandboxed, the program's file what the workload runs, and
# PlantedWork standing for the runs.
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


# --- what a run reads besides its program: one history per kind -----------------------------
#
# Each kind is a benchmark whose program file stays byte-identical while what it reads at
# run time changes: a Python script's imported module, a data file a C program reads, a
# shared library built in the tree that a C program loads; and a comment-only change to
# a C file (the program built from it is byte-identical). Commit 0 is tagged good; commit
# 1 changes only what the kind names (doubling the work, or the comment); commit 2 is
# empty (its tree is commit 1's), so a bisect of good..HEAD has a commit to name and a
# step that nothing can tell apart. Every program reports the fastest of its calls, as
# PROG_C does, and writes WORK where ``planted_kind_work`` finds it.

KIND_WORK = {"module": 6_000, "data": 1_500_000, "library": 1_500_000, "comment": 1_500_000}

_BEST_OF_C = r"""
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static volatile unsigned long sink;
static void report(unsigned long (*work)(long), long n) {
  double best = 1e300;
  for (int k = 0; k < 15; k++) {
    double t0 = now();
    sink = work(n);
    double d = now() - t0;
    if (d < best) best = d;
  }
  printf("ns=%.0f\n", best);
}
"""

_LOOP_C = r"""unsigned long loop(long n) {
  unsigned long s = 0;
  for (long i = 0; i < n; i++) s += (unsigned long)i * 2654435761u;
  return s;
}
"""

_KIND_FILES: dict[str, dict[str, str]] = {
    "module": {
        "bench.py": "import time\n\nimport lib\n\nbest = float('inf')\nfor _ in range(9):\n"
                    "    t0 = time.perf_counter_ns()\n    lib.work()\n"
                    "    best = min(best, time.perf_counter_ns() - t0)\nprint(f'ns={best}')\n",
        "lib.py": "WORK = {work}\n\n\ndef work():\n    s = 0\n    for i in range(WORK):\n"
                  "        s += i * 2654435761 & 0xFFFFFFFF\n    return s\n",
    },
    "data": {
        "prog.c": "#include <stdio.h>\n#include <time.h>\n" + _BEST_OF_C + _LOOP_C.replace(
            "unsigned long loop", "static unsigned long loop") +
            "int main(void) {\n  long n = 0;\n  FILE *f = fopen(\"work.txt\", \"r\");\n"
            "  if (!f || fscanf(f, \"WORK %ld\", &n) != 1) return 2;\n  fclose(f);\n"
            "  report(loop, n);\n  return 0;\n}\n",
        "work.txt": "WORK {work}\n",
    },
    "library": {
        "prog.c": "#include <stdio.h>\n#include <time.h>\n" + _BEST_OF_C +
                  "unsigned long work(long unused);\n"
                  "int main(void) { report(work, 0); return 0; }\n",
        "work.c": "#define WORK {work}\n" + _LOOP_C +
                  "unsigned long work(long unused) { (void)unused; return loop(WORK); }\n",
        "build.sh": "set -e\ncc -O1 -shared -fPIC -o libwork.so work.c\n"
                    "cc -O1 -o prog prog.c -L. -lwork -Wl,-rpath,'$ORIGIN'\n",
    },
    "comment": {
        "prog.c": "#include <stdio.h>\n#include <time.h>\n#define WORK {work}\n{comment}" + _BEST_OF_C
                  + _LOOP_C.replace("unsigned long loop", "static unsigned long loop") +
                  "int main(void) { report(loop, WORK); return 0; }\n",
    },
}

# The interpreter running the tests: the sandbox shows it (benchbot's own), where a
# python3 on PATH may be a shim into a directory it does not show (pyenv's).
_KIND_RUN = {"module": f"[{json.dumps(sys.executable)}, bench.py]", "data": "./prog", "library": "./prog",
             "comment": "./prog"}
_KIND_BUILD: dict[str, str | None] = {"module": None,  # nothing to build: the interpreter reads the sources
               "data": "cc -O1 -o prog prog.c", "library": "sh build.sh",
               "comment": "cc -O1 -o prog prog.c"}
# Where each kind keeps WORK (for planted runs), and the file its commit 1 changes.
KIND_FILE = {"module": "lib.py", "data": "work.txt", "library": "work.c", "comment": "prog.c"}

KIND_CONFIG = """version: 1
{build}{sandbox}counts: off
budget: 60s
defaults:
  parity: 0.02
workloads:
  - name: work
    run: {run}
    metric: reported
    pattern: 'ns=(\\d+)'
"""


def make_kind_history(root: Path, kind: str, *, sandbox: str | None = None) -> Path:
    """The three commits of ``kind`` (above) in a new repository at ``root``; ``sandbox``
    is the config's ``sandbox:`` value (None: the default)."""
    repo = root
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q")
    base = KIND_WORK[kind]
    for i, (work, comment) in enumerate([(base, ""), (base * (1 if kind == "comment" else 2),
                                          "/* the loop below: a multiplicative hash */\n")]):
        files = {name: text.replace("{work}", str(work)).replace("{comment}", comment)
                 for name, text in _KIND_FILES[kind].items()}
        if i == 0:
            files["benchbot.yml"] = KIND_CONFIG.format(
                build=f"build: {_KIND_BUILD[kind]}\n" if _KIND_BUILD[kind] else "",
                run=_KIND_RUN[kind],
                sandbox=f"sandbox: {sandbox}\n" if sandbox else "")
        for name, text in files.items():
            (repo / name).write_text(text)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"commit {i}: {KIND_FILE[kind] if i else 'start'}")
        if i == 0:
            git(repo, "tag", "good")
    git(repo, "commit", "-q", "--allow-empty", "-m", "commit 2: nothing")
    return repo


class PlantedKind:
    """A spawner standing for a kind's program (as PlantedWork does for PROG_C): a run
    reports WORK as the kind's file in its worktree says, times a constant, with seeded
    noise, on ``clock``."""

    NS_PER_WORK = 0.27

    def __init__(self, clock: Any, kind: str, *, seed: int = 7, noise: float = 0.002) -> None:
        import numpy as np

        self.clock, self.kind, self.noise = clock, kind, noise
        self.rng = np.random.default_rng(seed)
        self.spawned = 0

    def spawn(self, request: Any) -> Any:
        import re

        from benchbot.sandbox.spawn import RawRun

        self.spawned += 1
        text = (Path(request.cwd) / KIND_FILE[self.kind]).read_text()
        work = int(re.search(r"WORK\D*(\d+)", text).group(1))  # type: ignore[union-attr]
        ns = work * self.NS_PER_WORK * float(self.rng.lognormal(0.0, self.noise))
        self.clock.advance(15 * ns / 1e9 + 0.002)
        return RawRun(wall_ns=int(15 * ns), cpu_ns=int(15 * ns), maxrss_kib=2048,
                      returncode=0, captures=tuple(f"{ns:.0f}" for _ in request.patterns))
