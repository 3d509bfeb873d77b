"""Planted truths: a small C program in throwaway git repositories, and a drifting machine.

Every scenario is one program, ``prog``, that spins a deterministic xorshift loop for
``iterations x WORK_PERMILLE / 1000`` steps and prints the result (so the loop is kept).
The head commit changes only ``work.h``, so the true ratio of head to base is known by
construction. Two switches in ``work.h`` and one in the environment add the noise the
scenarios are about:

- ``MODES 1``: in a random share of its processes (drawn from the clock and the pid;
  ``SLOW_PERMILLE`` of 1000, a half unless a scenario says otherwise) the program does
  1.25x the work: timing modes, identical in base and head except in "biased modes",
  whose head lands in the slow mode more often;
- ``SPEED_FILE``: the program multiplies its work by the number in this file, which a
  ``SpeedController`` thread rewrites every ``period_s`` from a seeded sequence in
  [1.0, 1.3]: the machine changing under the run, reproducibly.
"""

from __future__ import annotations

import os
import random
import subprocess
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PROG_C = r"""/* prog: planted work for benchbot's benchmark suite (benchmarks/scenarios.py). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "work.h"

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The speed factor a controller writes to $SPEED_FILE; 1 when there is none. */
static double speed_factor(void)
{
    const char *path = getenv("SPEED_FILE");
    double s = 1.0;
    FILE *f = path ? fopen(path, "r") : NULL;
    if (f) {
        if (fscanf(f, "%lf", &s) != 1 || !(s > 0))
            s = 1.0;
        fclose(f);
    }
    return s;
}

int main(int argc, char **argv)
{
    double factor = WORK_PERMILLE / 1000.0 * speed_factor();
    if (MODES) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
        if (splitmix64(&seed) % 1000 < SLOW_PERMILLE)
            factor *= 1.25;
    }
    uint64_t n = (uint64_t)((argc > 1 ? strtod(argv[1], NULL) : 1e6) * factor);
    uint64_t x = 0x9E3779B97F4A7C15ull, acc = 0;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc += x * 0xBF58476D1CE4E5B9ull;
    }
    printf("checksum=%016llx steps=%llu\n", (unsigned long long)acc, (unsigned long long)n);
    return 0;
}
"""

BUILD = "cc -O2 -o prog prog.c"
GIT = ["git", "-c", "user.name=benchbot-bench", "-c", "user.email=bench@example.invalid",
       "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]  # fmt: skip
# Drift: the speed factor's range and how often it changes.
DRIFT_LOW, DRIFT_HIGH, DRIFT_PERIOD_S = 1.0, 1.3, 0.3
MODES_FACTOR = 1.25


@dataclass(frozen=True, slots=True)
class Scenario:
    """One planted truth: head does ``work`` times base's work, under some noise."""

    key: str
    label: str
    work: float = 1.0
    modes: bool = False
    drift: bool = False
    # The head's share of processes in the slow mode (base's is always SLOW_BASE).
    slow: float = 0.5

    @property
    def permille(self) -> int:
        """The head's WORK_PERMILLE (base's is 1000)."""
        return round(self.work * 1000)

    @property
    def slow_permille(self) -> int:
        """The head's SLOW_PERMILLE (base's is 500)."""
        return round(self.slow * 1000)


ACCURACY = (
    Scenario("aa", "A/A"),
    Scenario("p1", "+1%", 1.01),
    Scenario("p2", "+2%", 1.02),
    Scenario("p4.3", "+4.3%", 1.043),
    Scenario("p10", "+10%", 1.10),
    Scenario("m8", "-8%", 0.92),
    Scenario("modes", "modes A/A", modes=True),
    Scenario("drift", "drift A/A", drift=True),
    Scenario("drift4.3", "drift +4.3%", 1.043, drift=True),
)


# Biased modes: the same code and the same work per mode, but head lands in the slow
# mode in 70% of its processes where base does in 50%. Not in ACCURACY: its truth is
# debatable (no per-run difference, +4.4% expected time), so it is reported on its own.
BIASED_MODES = Scenario("biasedmodes", "biased modes", modes=True, slow=0.7)
SLOW_BASE = 0.5


def work_h(permille: int, modes: bool, slow_permille: int = 500) -> str:
    """The header that plants the work: the only file a head commit changes."""
    return (f"#define WORK_PERMILLE {permille}\n#define MODES {int(modes)}\n"
            f"#define SLOW_PERMILLE {slow_permille}\n")


def config_yml(iterations: int, runs: int | None, speed_file: Path | None) -> str:
    """benchbot.yml of a scenario repository (read from the base commit); without ``runs``
    benchbot measures sequentially."""
    lines = ["version: 1", f"build: {BUILD}"]
    if runs is not None:
        lines += ["defaults:", f"  runs: {runs}"]
    lines += ["workloads:", "  - name: prog", f"    run: ['./prog', '{iterations}']"]
    if speed_file is not None:
        lines.append(f"    env: {{SPEED_FILE: '{speed_file}'}}")
    return "\n".join(lines) + "\n"


def _git(repo: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True)


def _write(root: Path, files: Mapping[str, str]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text)


@dataclass(frozen=True, slots=True)
class Built:
    """A scenario's repository (tag ``base``, head on ``main``) and its two builds."""

    scenario: Scenario
    repo: Path
    base_prog: Path
    head_prog: Path
    speed_file: Path | None
    iterations: int

    def argv(self, side: str) -> list[str]:
        """The command line of one side's build, as benchbot.yml runs it."""
        prog = self.base_prog if side == "base" else self.head_prog
        return [str(prog), str(self.iterations)]

    def env(self) -> dict[str, str]:
        """The environment a run gets (the speed file, for drift scenarios)."""
        env = dict(os.environ)
        if self.speed_file is not None:
            env["SPEED_FILE"] = str(self.speed_file)
        return env


def make(scenario: Scenario, root: Path, *, iterations: int, runs: int | None) -> Built:
    """Make the scenario's repository under ``root`` and build both sides for block runs."""
    top = root / scenario.key
    speed = top / "speed" if scenario.drift else None
    repo = top / "repo"
    repo.mkdir(parents=True)
    base_files = {"prog.c": PROG_C, "work.h": work_h(1000, scenario.modes, 500),
                  "benchbot.yml": config_yml(iterations, runs, speed)}  # fmt: skip
    head_files = {"work.h": work_h(scenario.permille, scenario.modes, scenario.slow_permille)}
    _git(repo, "init", "-q")
    _write(repo, base_files)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    _git(repo, "tag", "base")
    _write(repo, head_files)
    _git(repo, "commit", "-q", "--allow-empty", "-am", f"head: work x{scenario.work:g}")
    progs = {}
    for side, files in (("base", base_files), ("head", {**base_files, **head_files})):
        build_dir = top / f"build-{side}"
        _write(build_dir, files)
        subprocess.run(BUILD.split(), cwd=build_dir, check=True, capture_output=True)
        progs[side] = build_dir / "prog"
    if speed is not None:
        speed.write_text(f"{DRIFT_LOW}\n")
    return Built(scenario, repo, progs["base"], progs["head"], speed, iterations)


class SpeedController:
    """Rewrites a speed file every ``period_s`` with a factor from a seeded sequence.

    The file is replaced atomically, so a program never reads half a number.
    """

    def __init__(self, path: Path, seed: int, period_s: float = DRIFT_PERIOD_S) -> None:
        self._path = path
        self._rng = random.Random(seed)
        self._period = period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="speed-controller", daemon=True)
        self.changes = 0

    def _write(self) -> None:
        factor = self._rng.uniform(DRIFT_LOW, DRIFT_HIGH)
        tmp = self._path.with_suffix(".tmp")
        tmp.write_text(f"{factor:.4f}\n")
        os.replace(tmp, self._path)
        self.changes += 1

    def _loop(self) -> None:
        while not self._stop.wait(self._period):
            self._write()

    def __enter__(self) -> SpeedController:
        self._write()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._path.write_text(f"{DRIFT_LOW}\n")


@contextmanager
def drifting(built: Built, seed: int) -> Iterator[None]:
    """Run the block with the machine drifting, if the scenario asks for it."""
    if built.speed_file is None:
        yield
        return
    with SpeedController(built.speed_file, seed):
        yield


def true_ratio(scenario: Scenario, dilution: float) -> float:
    """The wall-time ratio the planted work makes, after the fixed cost of a process.

    ``dilution`` is (time of the program with no work) / (time with the base's work),
    measured by ``calibrate``; drift multiplies the work by the factor's mean, so it
    dilutes less.
    """
    mean_speed = (DRIFT_LOW + DRIFT_HIGH) / 2 if scenario.drift else 1.0
    mean_speed *= (1 + MODES_FACTOR) / 2 if scenario.modes else 1.0
    return 1.0 + (scenario.work - 1.0) * (1.0 - dilution / mean_speed)


def expected_time_ratio(scenario: Scenario, dilution: float) -> float:
    """head/base of the *expected* wall time, counting how often each lands in the slow mode.

    Differs from ``true_ratio`` only where head's slow-mode share differs from base's
    (biased modes): per run the work is the same in each mode, but head's mean is higher.
    ``dilution`` is fixed / full with full the fast mode's time, as in ``true_ratio``.
    """
    if not scenario.modes:
        return true_ratio(scenario, dilution)
    def mean(slow: float, work: float) -> float:
        return dilution + (1.0 - dilution) * work * (1.0 + slow * (MODES_FACTOR - 1.0))

    return mean(scenario.slow, scenario.work) / mean(SLOW_BASE, 1.0)
