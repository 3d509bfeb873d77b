"""A second signal: instruction counts and peak memory judged beside time (issue 20's targets).

    python benchmarks/signals.py [--reps 10] [--scenarios aa,p3,...] [--budget 180]
                                 [--demos 10] [--quick] [--require-counts]

The program is a sort: ``prog N`` fills a 1,000-value array with xorshift values and
qsorts it, N x WORK_PERMILLE / 1000 times (about 100 ms a run at N = 1200, single runs
varying 10-15% on a 2-core VM), after touching a buffer of MEMORY_KIB once a page (the
run's peak memory, at almost no instructions). Every scenario is a throwaway git
repository whose head differs from base only in ``work.h``:

- identical; +3% and -4% of work (chunks sorted);
- drift (``scenarios.SpeedController``), timing modes and biased modes (as in
  ``decisive.py``) and identical under load (``decisive.busy_core``);
- layout only: head puts an unused function of PAD_BYTES before the hot ones, so the
  same instructions sit at other addresses (checked with valgrind: counts identical
  within 0.1%); time may move, the counts do not;
- memory only: head's buffer is larger by a tenth of base's peak RSS (+10% peak memory,
  checked), the same work (counts within 0.1%);
- a program of 9 MB (a buffer of SMALL_MEMORY_KIB), identical, and its head touching
  1 MiB more (+11%): below the floor of peak memory before the fork server
  (``benchbot.sandbox.forkserver``), judged since.

Per repetition, one live ``engine.compare`` (sequential, the default design, counts as
the engine chooses, ``--budget`` seconds) and the same recording judged again on time
alone (``judge`` with ``Workload.counts=None``) at each of its looks: the time-only
design's verdict is the first look at which time alone settles (a call or ``level``),
else its verdict at the recording's last look. Then ``benchbot demo`` ``--demos`` times.
Writes ``results/signals.json`` and ``results/signals.md`` (``signals-quick.*`` with
``--quick``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# Measure this checkout's benchbot, not whichever one is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from benchbot.config.settings import Overrides
from benchbot.core.model import ArmRuns, Benchmark, PhaseRuns, Results, Verdict
from benchbot.measure import engine
from benchbot.run import machine
from benchbot.sandbox.spawn import ProcessSpawner
from benchbot.verdict import intervals
from benchbot.verdict.judge import Policy, Workload, judge
from benchmarks import accuracy, demo_ab, scenarios, suites
from benchmarks.decisive import busy_core

RESULTS = Path(__file__).resolve().parent / "results"
SRC = Path(__file__).resolve().parent.parent / "src"

PROG_C = r"""/* prog: a sort for benchbot's signals study (benchmarks/signals.py). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "work.h"

#define ITEMS 700000
#define STR2(x) #x
#define STR(x) STR2(x)

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

#if PAD_BYTES > 0
/* Never called: it moves the functions after it (built with -fno-toplevel-reorder). */
__attribute__((used, noinline)) static void layout_pad(void)
{
    __asm__ volatile(".fill " STR(PAD_BYTES) ", 1, 0x90");
}
#endif

static int cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* One sort of n xorshift values in a fresh array of a few MB, like a real program's sort:
   it reaches past the core's own caches, and how much of the array the kernel backs with
   huge pages depends on where the allocation lands, so single runs vary by 10-30% on a
   shared VM (the memory buffer above makes that likelier). */
__attribute__((noinline)) static uint64_t sort_values(uint64_t n)
{
    uint32_t *v = malloc(n * sizeof *v + 1);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    if (!v)
        exit(2);
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v[i] = (uint32_t)(x >> 32);
    }
    qsort(v, n, sizeof v[0], cmp);
    uint64_t mid = n ? v[n / 2] : 0;
    free(v);
    return mid;
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
    /* A buffer touched once a page: the run's peak memory, at almost no instructions. */
    size_t bytes = (size_t)MEMORY_KIB * 1024;
    volatile char *buf = malloc(bytes);
    for (size_t i = 0; buf && i < bytes; i += 4096)
        buf[i] = (char)i;
    uint64_t n = (uint64_t)((argc > 1 ? strtod(argv[1], NULL) : ITEMS) * factor + 0.5);
    printf("median=%016llx n=%llu\n", (unsigned long long)sort_values(n), (unsigned long long)n);
    free((void *)buf);
    return 0;
}
"""

BUILD = "cc -O2 -fno-toplevel-reorder -o prog prog.c"
ITERATIONS = 700_000  # values sorted: 100-130 ms a run on this 2-core VM
# The work of sorting n values grows as n log n: a head that sorts f times as many values
# does f (1 + ln f / ln n) times the work. The scenarios plant f so that the work is +3%
# (f = 1.028) or -4% (f = 0.963), and the truth is computed from the work (work_of).
# The buffer every run touches. Above what a run's peak RSS reads at the least: a run started
# by posix_spawn reports at least its spawner's peak at exec (machine.own_peak_rss_kib),
# about 14.5 MB for the sandbox's worker here, so a smaller program's memory is not seen.
MEMORY_KIB = 20480
# With the fork server (benchbot.sandbox.forkserver) the floor is under 1 MiB: a buffer of 2.25 MiB
# makes a program of about 9 MB (the sort's array and qsort's copy of it are 2.8 MB each).
SMALL_MEMORY_KIB = 2304
LAYOUT_PAD = 16  # bytes: moves the hot functions by 32 (function alignment 16)
MEMORY_STEP = 0.10  # memory only: head's peak RSS over base's
COUNTS_SAME = 0.001  # layout and memory only: the counts may differ by at most this


def work_of(factor: float, n: int = ITERATIONS) -> float:
    """The work of sorting ``factor`` times as many values, over sorting n: n log n."""
    return factor * math.log(factor * n) / math.log(n)


@dataclass(frozen=True, slots=True)
class Signal:
    """One scenario: the planted time truth (``base``) and what else head changes."""

    base: scenarios.Scenario
    load: bool = False  # a busy loop on the other core while it is compared
    pad: int = 0  # layout only: head's PAD_BYTES
    memory: bool = False  # memory only: head's buffer holds MEMORY_STEP more peak RSS
    memory_kib: int = MEMORY_KIB  # base's buffer
    memory_step_kib: int | None = None  # memory only: this much more, not MEMORY_STEP

    @property
    def key(self) -> str:
        return self.base.key

    @property
    def label(self) -> str:
        return self.base.label


SCENARIOS: tuple[Signal, ...] = (
    Signal(scenarios.Scenario("aa", "identical")),
    Signal(scenarios.Scenario("p3", "+3%", 1.028)),  # 1.028 times the values: +3.0% work
    Signal(scenarios.Scenario("m4", "-4%", 0.963)),  # 0.963 times: -4.0% work
    Signal(scenarios.Scenario("drift", "drift, identical", drift=True)),
    Signal(scenarios.Scenario("modes", "modes, identical", modes=True)),
    Signal(scenarios.BIASED_MODES),
    Signal(scenarios.Scenario("load", "identical, under load"), load=True),
    Signal(scenarios.Scenario("layout", "layout only"), pad=LAYOUT_PAD),
    Signal(scenarios.Scenario("memory", "memory only (+10% peak RSS)"), memory=True),
    # A program of 9 MB (below the floor before the fork server), identical and 1 MiB more.
    Signal(scenarios.Scenario("aasmall", "identical, 9 MB"), memory_kib=SMALL_MEMORY_KIB),
    Signal(scenarios.Scenario("memsmall", "memory only, 9 MB (+1 MiB)"), memory=True,
           memory_kib=SMALL_MEMORY_KIB, memory_step_kib=1024),
)
BY_KEY = {s.key: s for s in SCENARIOS}
# No time difference planted (a call is false); memory only is one for time, not for memory.
NULLS = ("aa", "drift", "modes", "biasedmodes", "load", "layout", "memory", "aasmall",
         "memsmall")
JOINT, TIME = "time and counts (live)", "time only (same runs)"
CALLS = ("slower", "faster")


def work_h(permille: int, modes: bool, slow_permille: int, memory_kib: int, pad: int) -> str:
    """The header that plants the change: the only file a head commit changes."""
    return (f"#define WORK_PERMILLE {permille}\n#define MODES {int(modes)}\n"
            f"#define SLOW_PERMILLE {slow_permille}\n#define MEMORY_KIB {memory_kib}\n"
            f"#define PAD_BYTES {pad}\n")


def config_yml(speed_file: Path | None) -> str:
    """benchbot.yml of a scenario repository: the defaults (sequential, counts: auto)."""
    lines = ["version: 1", f"build: {BUILD}", "workloads:", "  - name: prog",
             f"    run: ['./prog', '{ITERATIONS}']"]
    if speed_file is not None:
        lines.append(f"    env: {{SPEED_FILE: '{speed_file}'}}")
    return "\n".join(lines) + "\n"


def _build(where: Path, files: Mapping[str, str]) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (where / name).write_text(text)
    subprocess.run(BUILD.split(), cwd=where, check=True, capture_output=True)
    return where / "prog"


def peak_rss(built: scenarios.Built, side: str, runs: int = 5) -> float:
    """The median peak RSS (KiB) of a side's build, outside the sandbox, by GNU time (whose
    own small address space is the one a run inherits at exec, unlike Python's)."""
    def once() -> int:
        got = subprocess.run(["/usr/bin/time", "-f", "%M", *built.argv(side)], check=True,
                             capture_output=True, text=True, env=built.env())
        return int(got.stderr.strip().splitlines()[-1])
    return statistics.median(once() for _ in range(runs))


def cachegrind(prog: Path, env: Mapping[str, str], scratch: Path) -> tuple[int, float]:
    """Instructions of one run under ``valgrind --tool=cachegrind --cache-sim=no``, and
    how long the counted run took (the cost of counting it)."""
    out = scratch / f"cg.{os.getpid()}.{time.monotonic_ns()}"
    start = time.monotonic()
    subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                    f"--cachegrind-out-file={out}", str(prog), str(ITERATIONS)],
                   check=True, capture_output=True, env=dict(env), cwd=scratch)
    took = time.monotonic() - start
    summary = [line for line in out.read_text().splitlines() if line.startswith("summary:")]
    out.unlink()
    return int(summary[0].split()[1]), took


@dataclass(frozen=True, slots=True)
class Made:
    """A scenario's repository and builds, and what was checked of them."""

    signal: Signal
    built: scenarios.Built
    truth: float  # head over base in wall time
    memory_truth: float  # head over base in peak RSS (outside the sandbox)
    counts: dict[str, Any] = field(default_factory=dict)  # valgrind of each build, outside


def make(s: Signal, root: Path, *, valgrind: bool) -> Made:
    """Make the scenario's repository and both builds; check what it plants."""
    top = root / s.key
    speed = top / "speed" if s.base.drift else None
    repo = top / "repo"
    repo.mkdir(parents=True)
    base_h = work_h(1000, s.base.modes, 500, s.memory_kib, 0)
    base_files = {"prog.c": PROG_C, "work.h": base_h, "benchbot.yml": config_yml(speed)}
    base_prog = _build(top / "build-base", base_files)
    if speed is not None:
        speed.write_text(f"{scenarios.DRIFT_LOW}\n")
    probe = scenarios.Built(s.base, repo, base_prog, base_prog, speed, ITERATIONS)
    base_rss = peak_rss(probe, "base")
    step = s.memory_step_kib if s.memory_step_kib is not None else round(MEMORY_STEP * base_rss)
    memory_kib = s.memory_kib + step if s.memory else s.memory_kib
    head_h = work_h(s.base.permille, s.base.modes, s.base.slow_permille, memory_kib, s.pad)
    head_prog = _build(top / "build-head", {**base_files, "work.h": head_h})
    scenarios._git(repo, "init", "-q")
    scenarios._write(repo, base_files)
    scenarios._git(repo, "add", "-A")
    scenarios._git(repo, "commit", "-q", "-m", "base")
    scenarios._git(repo, "tag", "base")
    scenarios._write(repo, {"work.h": head_h})
    scenarios._git(repo, "commit", "-q", "--allow-empty", "-am", f"head: {s.label}")
    built = scenarios.Built(s.base, repo, base_prog, head_prog, speed, ITERATIONS)
    cal = accuracy.dilution(accuracy.calibrate(built, top, pairs=10))
    truth = scenarios.true_ratio(replace(s.base, work=work_of(s.base.work)), cal["dilution"])
    memory_truth = peak_rss(built, "head") / peak_rss(built, "base")
    counts: dict[str, Any] = {}
    if valgrind:
        b, b_s = cachegrind(base_prog, built.env(), top)
        h, h_s = cachegrind(head_prog, built.env(), top)
        counts = {"base": b, "head": h, "ratio": h / b, "base_s": b_s, "head_s": h_s}
        if (s.pad or s.memory) and abs(h / b - 1) > COUNTS_SAME:
            raise SystemExit(f"{s.label}: head's instructions differ from base's by "
                             f"{(h / b - 1) * 100:+.3f}% (more than {COUNTS_SAME:.1%}): the "
                             "scenario does not plant what it says")
    return Made(s, built, truth, memory_truth, counts)


def measure_truth(made: Made, scratch: Path, pairs: int) -> dict[str, Any]:
    """The true time ratio measured, not modelled: ``pairs`` interleaved pairs of base and
    head (the order alternating, two pairs of warm-up), outside the sandbox, their
    Hodges-Lehmann centre and its 95% interval, and the fastest runs' ratio. The model
    (``work_of`` and the fixed cost) leaves out what does not grow as n log n (filling the
    array, its page faults), so it can be off by a few tenths of a point."""
    spawner = ProcessSpawner(scratch)
    base = accuracy.request(made.built, made.built.argv("base"))
    head = accuracy.request(made.built, made.built.argv("head"))
    times: dict[str, list[int]] = {"base": [], "head": []}
    for i in range(pairs + 2):
        order = (("base", base), ("head", head)) if i % 2 else (("head", head), ("base", base))
        for arm, req in order:
            run = spawner.spawn(req)
            if i >= 2:
                times[arm].append(run.wall_ns)
    spawner.close()
    d = [math.log(h / b) for b, h in zip(times["base"], times["head"], strict=True)]
    centre, lo, hi = intervals.pseudo_median(d, 0.05)
    return {"pairs": pairs, "ratio": math.exp(centre), "ci": [math.exp(lo), math.exp(hi)],
            "best_ratio": min(times["head"]) / min(times["base"])}


# --- the time-only design, replayed on the same recording -----------------------------------


def _cut(phase: PhaseRuns, pairs: int) -> PhaseRuns:
    """A phase's first ``pairs`` pairs."""
    def arm(a: ArmRuns) -> ArmRuns:
        return replace(a, samples_ns=a.samples_ns[:pairs], wall_ns=a.wall_ns[:pairs],
                       cpu_ns=a.cpu_ns[:pairs], maxrss_kib=a.maxrss_kib[:pairs],
                       values=a.values[:pairs] if a.values is not None else None,
                       instructions=a.instructions[:pairs] if a.instructions is not None else None,
                       cycles=a.cycles[:pairs] if a.cycles is not None else None)
    return replace(phase, arms={k: arm(a) for k, a in phase.arms.items()},
                   order=phase.order[:pairs] if len(phase.order) > pairs else phase.order)


def time_only(doc: Results) -> dict[str, Any]:
    """The recording judged again on time alone (no counts) at each of its looks: the
    first look at which time settles (a call or level), else the last look's verdict."""
    bench = doc.benchmarks[0]
    m = bench.measuring
    policy = Policy(alpha=doc.settings.alpha, aa=doc.settings.aa, seed=doc.settings.seed)
    looks = m.looks if m and m.design == "triplets" and m.looks else ()
    verdict: Verdict | None = None
    pairs = 0
    settled = False
    # Each look on the pairs it had, then (as the engine's last judgement) every pair.
    steps = [(at, i) for i, at in enumerate(looks, start=1)] + [(None, max(1, len(looks)))]
    for at, i in steps:
        w = Workload(name=bench.name, parity=bench.parity, floor_ns=bench.floor_ns,
                     better=bench.better, design=m.design if m else "pairs",
                     phases={k: _cut(p, at) for k, p in bench.phases.items()} if at
                     else bench.phases, looks=i, counts=None)
        verdict = judge([w], policy).workloads[w.name].final
        pairs = at or (m.pairs if m else bench.verdict.n)
        if verdict is not None and verdict.outcome in (*CALLS, "level"):
            settled = True
            break
    assert verdict is not None
    return {"outcome": verdict.outcome, "reason": verdict.reason_code or "",
            "ratio": verdict.ratio, "pairs": pairs, "settled_in_recording": settled}


# --- one repetition ---------------------------------------------------------------------------


def counting_expected() -> bool:
    """Whether this engine counts instructions (the measure branch's ``counting`` module)
    and valgrind is here to count with (this VM has no PMU for perf)."""
    return importlib.util.find_spec("benchbot.sandbox.counting") is not None and bool(shutil.which("valgrind"))


def _verdict_fields(v: Verdict | None) -> dict[str, Any] | None:
    if v is None:
        return None
    return {"outcome": v.outcome, "reason": v.reason_code or "", "ratio": v.ratio,
            "settled_by": getattr(v, "settled_by", None)}


def _counts_fields(bench: Benchmark) -> dict[str, Any] | None:
    c = getattr(bench, "counts", None)
    if c is None:
        return None
    return {"method": c.method, "why": c.why, "every_run": c.every_run, "scaled": c.scaled,
            "base": list(c.base), "base_again": list(c.base_again), "head": list(c.head),
            "ratio": c.ratio, "aa_ratio": c.aa_ratio, "noise": c.noise,
            "user_share": c.user_share, "reading": c.reading, "reading_why": c.reading_why}


def one(made: Made, *, rep: int, budget: float, seed: int, require_counts: bool) -> dict[str, Any]:
    """One live comparison and its recording judged on time alone."""
    s = made.signal
    with scenarios.drifting(made.built, seed), busy_core(s.load):
        start = time.monotonic()
        doc = engine.compare(engine.Request(repo=made.built.repo, base="base", head="HEAD",
                                            overrides=Overrides(budget=budget, seed=seed)))
        wall = time.monotonic() - start
    bench = doc.benchmarks[0]
    v, m = bench.verdict, bench.measuring
    counts = _counts_fields(bench)
    if require_counts and (counts is None or counts["method"] is None):
        raise SystemExit(f"{s.label}: counts were expected but this comparison has none "
                         f"({counts['why'] if counts else 'no counts in its results'})")
    estimate = getattr(v, "estimate", None)
    figure = estimate if estimate is not None else v.ratio
    alone = time_only(doc)
    measured_s = sum(sum(a.wall_ns) for k, p in bench.phases.items() for name, a in p.arms.items()
                     if not (k == "ab" and name == "base" and "aa" in bench.phases)) / 1e9
    return {
        "scenario": s.key, "rep": rep, "truth": made.truth, "memory_truth": made.memory_truth,
        "outcome": v.outcome, "reason": v.reason_code or "",
        "settled_by": getattr(v, "settled_by", None), "ratio": v.ratio, "estimate": estimate,
        "estimate_n": getattr(v, "estimate_n", None),
        "error_points": abs(figure - made.truth) * 100 if figure is not None else None,
        "pairs": m.pairs if m else v.n, "called_at": getattr(m, "called_at", None) if m else None,
        "stopped": m.stopped if m else "fixed", "looks": list(m.looks) if m else [],
        "wall_s": wall, "measured_s": measured_s,
        # how much single runs varied: the largest IQR/median of base's and head's runs
        "spread": _spread(bench), "load": list(doc.environment.load_after),
        "memory": _verdict_fields(getattr(bench, "memory", None)), "counts": counts,
        "maxrss_kib": {arm: statistics.median(a.maxrss_kib) for arm, a in bench.arms.items()
                       if a.maxrss_kib},
        "maxrss_floor_kib": doc.environment.maxrss_floor_kib,
        # The A/A (base again, from its own place since issue 30) and what the verdict
        # reported as its noise: whether that covers head's reading is issue 30's target.
        "aa": _aa_fields(bench, v),
        "time_only": {**alone, "error_points": abs(alone["ratio"] - made.truth) * 100
                      if alone["ratio"] is not None else None},
    }


def _aa_fields(bench: Any, v: Verdict) -> dict[str, Any]:
    """The A/A's reading (base again over base, medians of wall time) and the noise and
    tolerance the verdict reported."""
    aa = bench.phases.get("aa")
    ratio = None
    if aa is not None and aa.arms["base"].wall_ns and aa.arms["base_again"].wall_ns:
        ratio = (statistics.median(aa.arms["base_again"].wall_ns)
                 / statistics.median(aa.arms["base"].wall_ns))
    own = getattr(bench, "aa", None)  # the A/A's own verdict: its reading and interval
    return {"ratio": ratio, "aa_noise": v.aa_noise, "noise": v.noise, "ci_half": v.ci_half,
            "tolerance": v.tolerance,
            "aa_ci": list(own.ci) if own is not None and own.ci is not None else None}


def _spread(bench: Any) -> float | None:
    """The largest IQR/median over base's and head's single runs (wall time)."""
    spreads = []
    for arm in ("base", "head"):
        runs = bench.arms[arm].wall_ns if arm in bench.arms else ()
        if len(runs) >= 4:
            q1, q2, q3 = statistics.quantiles(runs, n=4)
            spreads.append((q3 - q1) / q2)
    return max(spreads) if spreads else None


def run_reps(made: Mapping[str, Made], keys: Sequence[str], *, reps: int, budget: float,
             seed: int, require_counts: bool, log: Callable[[str], None],
             out: list[dict[str, Any]], saved: Callable[[], None]) -> None:
    """Every chosen scenario ``reps`` times (repetitions outermost), each record appended
    to ``out`` and saved as it comes."""
    for rep in range(reps):
        for index, key in enumerate(keys):
            r = one(made[key], rep=rep, budget=budget, seed=seed + 1000 * rep + 10 * index,
                    require_counts=require_counts)
            out.append(r)
            saved()
            rss = r["maxrss_kib"]
            if made[key].signal.memory and rss.get("head", 0) <= rss.get("base", 0):
                log(f"  WARNING: {BY_KEY[key].label}: the recorded peak RSS did not move "
                    f"(base {rss.get('base')} KiB, head {rss.get('head')} KiB): is the program "
                    "below the worker's own peak at exec?")
            c, mem, t = r["counts"], r["memory"], r["time_only"]
            counted = (f"counts {c['method']} {c['reading']} "
                       f"{(c['ratio'] - 1) * 100:+.2f}%" if c and c["ratio"] else "counts none")
            log(f"  rep {rep + 1}/{reps} {BY_KEY[key].label:>28}: {r['outcome']}"
                f"({r['reason'] or r['stopped']}, by {r['settled_by']}, {r['pairs']}p, "
                f"{r['wall_s']:.0f}s, ratio {_pct(r['ratio'])}, est {_pct(r['estimate'])}) | "
                f"time only {t['outcome']}({t['reason']}, {t['pairs']}p) | "
                f"memory {mem['outcome'] if mem else '-'} | {counted}")


def _pct(x: float | None) -> str:
    return f"{(x - 1) * 100:+.1f}%" if x is not None else "-"


# --- benchbot demo ----------------------------------------------------------------------------


def run_demo(scratch: Path, tag: str) -> dict[str, Any]:
    """One ``benchbot demo`` (its own default budget of 90 s) with this checkout's src."""
    doc, wall = demo_ab.demo_results(SRC, scratch, tag)
    kernels = {}
    for b in doc.benchmarks:
        c, mem = getattr(b, "counts", None), getattr(b, "memory", None)
        kernels[b.name] = {
            "outcome": b.verdict.outcome, "reason": b.verdict.reason_code,
            "settled_by": getattr(b.verdict, "settled_by", None), "ratio": b.verdict.ratio,
            "estimate": getattr(b.verdict, "estimate", None),
            "pairs": b.measuring.pairs if b.measuring else b.verdict.n,
            "counts": (c.method, c.reading, c.ratio) if c is not None else None,
            "memory": mem.outcome if mem is not None else None,
        }  # fmt: skip
    return {"wall_s": wall, "kernels": kernels}


# --- scoring and tables -----------------------------------------------------------------------


def _of(rows: Sequence[Mapping[str, Any]], test: Callable[[Mapping[str, Any]], bool]) -> str:
    return f"{sum(1 for r in rows if test(r))}/{len(rows)}"


def _median(xs: Sequence[float | None], fmt: str = "{:.1f}") -> str:
    ys = [x for x in xs if x is not None]
    return fmt.format(statistics.median(ys)) if ys else "–"


def summary_rows(records: Sequence[Mapping[str, Any]],
                 builds: Mapping[str, Any] | None = None) -> list[list[str]]:
    """Per scenario and design: calls, level, inconclusive, false, pairs, wall, estimate
    error (against the modelled truth, and against the measured one where it was)."""
    rows = []
    for s in SCENARIOS:
        rs = [r for r in records if r["scenario"] == s.key]
        if not rs:
            continue
        truth = "slower" if s.base.work > 1 else "faster" if s.base.work < 1 else None
        for design in (JOINT, TIME):
            got = [r if design == JOINT else {**r["time_only"], "wall_s": None} for r in rs]
            false = f"{sum(1 for r in got if r['outcome'] in CALLS and r['outcome'] != truth)}/{len(got)}"
            called = [r for r in got if truth and r["outcome"] == truth]
            err = [r["error_points"] for r in called]
            measured = ((builds or {}).get(s.key) or {}).get("measured")
            err_m = ([abs(_figure(r) - measured["ratio"]) * 100 for r in called]
                     if measured else [])
            rows.append([
                s.label, design, _of(got, lambda r: r["outcome"] in CALLS),
                _of(got, lambda r: r["outcome"] == "level"),
                _of(got, lambda r: r["outcome"] == "inconclusive"), false,
                _median([r["pairs"] for r in got], "{:.0f}"),
                _median([r["wall_s"] for r in got]) if design == JOINT else
                f"(unsettled {_of(got, lambda r: not r['settled_in_recording'])})",
                _median([r["ratio"] for r in got], "{:.4f}"),
                _median([r["spread"] * 100 for r in rs if r.get("spread") is not None], "{:.0f}%")
                if design == JOINT else "",
                _median(err, "{:.2f}") if truth else "",
                _median(err_m, "{:.2f}") if truth and measured else "",
            ])
    return rows


def _figure(r: Mapping[str, Any]) -> float:
    """The ratio a record reports: its estimate where it has one."""
    est = r.get("estimate")
    return float(est if est is not None else r["ratio"])


def memory_rows(records: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    rows = []
    for s in SCENARIOS:
        rs = [r for r in records if r["scenario"] == s.key]
        if not rs:
            continue
        mem = [r["memory"] for r in rs if r["memory"]]
        cnt = [r["counts"] for r in rs if r["counts"] and r["counts"]["ratio"] is not None]
        rows.append([
            s.label, f"{(rs[0]['memory_truth'] - 1) * 100:+.1f}%",
            f"{sum(1 for m in mem if m['outcome'] == 'slower')}/{len(rs)}",
            f"{sum(1 for m in mem if m['outcome'] in CALLS)}/{len(rs)}",
            _median([r["memory"]["ratio"] for r in rs if r["memory"]], "{:.4f}"),
            _median([r["maxrss_kib"]["head"] / r["maxrss_kib"]["base"] for r in rs
                      if {"base", "head"} <= set(r["maxrss_kib"])], "{:.4f}"),
            ", ".join(sorted({str(c["reading"]) for c in cnt})) or "–",
            _median([c["ratio"] for c in cnt], "{:.5f}"),
            _median([r["time_only"]["ratio"] for r in rs], "{:.4f}"),
        ])
    return rows


def demo_lines(demos: Sequence[Mapping[str, Any]]) -> list[str]:
    if not demos:
        return []
    names = list(demos[0]["kernels"])
    out = ["", "`benchbot demo` (its default 90 s budget), outcomes per kernel:", ""]
    from benchmarks.report import markdown_table

    rows = []
    for n in names:
        ks = [d["kernels"][n] for d in demos if n in d["kernels"]]
        rows.append([n] + [str(sum(1 for k in ks if k["outcome"] == o))
                           for o in ("slower", "faster", "level", "inconclusive")]
                    + [_median([k["pairs"] for k in ks], "{:.0f}"),
                       ", ".join(sorted({str(k["settled_by"]) for k in ks}))])
    out += [markdown_table(["kernel", "slower", "faster", "level", "inconclusive",
                            "median pairs", "settled by"], rows)]
    out.append(f"\n{len(demos)} demos; wall {_median([d['wall_s'] for d in demos])} s (median).")
    return out


def aa_lines(records: Sequence[Mapping[str, Any]], builds: Mapping[str, Any]) -> list[str]:
    """Issue 30's targets, where the records hold the A/A's figures: per scenario, the
    median |head's reading| (points), how often the noise the A/A reported (and the
    verdict's whole noise) covered it, the reading's error against the modelled and the
    measured truth, and the signed errors' median (the common shift)."""
    with_aa = [r for r in records if r.get("aa")]
    if not with_aa:
        return []
    rows = []
    for key in dict.fromkeys(r["scenario"] for r in with_aa):
        got = [r for r in with_aa if r["scenario"] == key]
        read = [(r["estimate"] if r["estimate"] is not None else r["ratio"]) for r in got]
        truth = builds.get(key, {}).get("truth", 1.0)
        measured = builds.get(key, {}).get("measured", {}).get("ratio")
        signed = [(x - truth) * 100 for x in read]
        covered = sum(abs(x - 1) <= r["aa"]["aa_noise"] for x, r in zip(read, got, strict=True))
        # the A/A's interval as reported (its reading's own uncertainty at the look's error):
        # what an identical build may read at these pairs; a reading alone cannot bound
        # another reading as precise as itself (about half the time, by symmetry)
        spans = [r["aa"].get("aa_ci") for r in got]
        spanned = sum(1 for x, ci in zip(read, spans, strict=True)
                      if ci and abs(math.log(x)) <= max(abs(math.log(ci[0])), abs(math.log(ci[1]))))
        has_span = sum(1 for ci in spans if ci)
        within = sum(abs(x - 1) <= (r["aa"]["noise"] or 0) for x, r in zip(read, got, strict=True))
        calls = sum(r["outcome"] in CALLS for r in got)
        loads = [r["load"][0] for r in got]
        rows.append([BY_KEY[key].label, str(len(got)), f"{calls}/{len(got)}",
                     f"{statistics.median(abs(x - 1) * 100 for x in read):.2f}",
                     f"{covered}/{len(got)}",
                     f"{spanned}/{has_span}" if has_span else "",
                     f"{within}/{len(got)}",
                     f"{statistics.median(abs(e) for e in signed):.2f}" if truth != 1 else "",
                     f"{statistics.median(signed):+.2f}" if truth != 1 else "",
                     f"{statistics.median(abs(x - measured) * 100 for x in read):.2f}"
                     if measured else "",
                     f"{min(loads):.1f}-{max(loads):.1f}"])
    from benchmarks.report import markdown_table

    head = ["scenario", "reps", "called", "median abs(reading) (points)",
            "A/A's noise covers it", "the A/A's interval covers it",
            "the verdict's noise covers it",
            "error vs modelled truth (median, points)", "shift vs modelled truth (median)",
            "error vs measured truth", "load (1 min, after)"]
    return ["Issue 30 (base again from its own place): head's reading is the estimate where "
            "there is one, else the ratio; the A/A's noise is the verdict's `aa_noise` (the A/A's "
            "reading), the A/A's interval its own verdict's, at the error of its look.", "",
            markdown_table(head, rows), ""]


def markdown(doc: Mapping[str, Any]) -> list[str]:
    """The study's tables for benchmarks/README.md and the closing note."""
    from benchmarks.report import markdown_table

    records, meta = doc["records"], doc["meta"]
    lines = ["### A second signal: instruction counts and peak memory beside time", "",
             f"`{meta['command']}`, started {meta['started']}, {meta.get('minutes', 0):.0f} min; "
             f"budget {meta['budget']:.0f} s a comparison; counting by the engine: "
             f"{'yes' if meta['engine_counts'] else 'NO (this engine has no counting: both designs are time only)'}.",
             ""]
    head = ["scenario", "design", "calls", "level", "inconclusive", "false or wrong",
            "median pairs", "median wall s", "median ratio", "single runs' spread (median)",
            "estimate error (points, median)",
            "error vs measured truth"]
    lines += [markdown_table(head, summary_rows(records, doc.get("builds"))), "",
              "Time only is the live recording judged again without counts at each of its "
              "looks; its wall time is not its own (the recording's measuring stopped by the "
              "joint rule), so the column gives how many did not settle within the recording.",
              ""]
    lines += aa_lines(records, doc.get("builds", {}))
    lines += ["Peak memory and counts:", "",
              markdown_table(["scenario", "true peak RSS change", "memory: more", "memory: any call",
                              "median memory ratio", "recorded peak RSS head/base", "counts reading", "median counts ratio",
                              "median time ratio"], memory_rows(records)), ""]
    builds = doc.get("builds", {})
    cost = [b["counts"] for b in builds.values() if b.get("counts")]
    if cost:
        per_run = statistics.median([c["base_s"] for c in cost] + [c["head_s"] for c in cost])
        walls = [r["wall_s"] for r in records]
        lines.append(f"- Counting's cost, valgrind (cachegrind, --cache-sim=no): {per_run:.2f} s "
                     f"a counted run (median, outside the sandbox), about {4 * per_run:.1f} s "
                     "for the four counted runs of a comparison"
                     + (f", {4 * per_run / statistics.median(walls):.1%} of the median "
                        "comparison's wall" if walls else "") + ".")
    lines.append("- Counting's cost, perf: not available on this VM (no PMU: perf_event_open "
                 "for hardware events answers ENOENT).")
    for key, b in builds.items():
        m = b.get("measured")
        if m:
            lines.append(f"- {BY_KEY[key].label}: true time ratio {b['truth']:.4f} modelled, "
                         f"{m['ratio']:.4f} measured ({m['pairs']} interleaved pairs, 95% "
                         f"interval {m['ci'][0]:.4f}–{m['ci'][1]:.4f}, fastest runs "
                         f"{m['best_ratio']:.4f}).")
    layout = builds.get("layout", {}).get("counts")
    if layout:
        lines.append(f"- Layout only: valgrind counts head/base {layout['ratio']:.6f} (outside "
                     "the sandbox); the time moved by the median ratio in the table.")
    mem = builds.get("memory", {})
    if mem.get("counts"):
        lines.append(f"- Memory only: peak RSS head/base {mem['memory_truth']:.3f}, counts "
                     f"{mem['counts']['ratio']:.6f}.")
    lines += demo_lines(doc.get("demos", []))
    return lines


# --- main -------------------------------------------------------------------------------------


def combine(names: Sequence[str], out: str) -> int:
    """Pool the records of several results files into ``out`` (builds: the first file's,
    with the measured truth of the most pairs from any of them)."""
    docs = [json.loads((RESULTS / f"{n}.json").read_text()) for n in names]
    builds: dict[str, Any] = {}
    for d in docs:
        for key, b in d["builds"].items():
            builds.setdefault(key, dict(b))
            if "measured" in b and b["measured"]["pairs"] > builds[key].get(
                    "measured", {"pairs": 0})["pairs"]:  # the most precise truth
                builds[key]["measured"] = b["measured"]
    meta = {**docs[0]["meta"], "command": " + ".join(d["meta"]["command"] for d in docs),
            "started": ", ".join(d["meta"]["started"] for d in docs),
            "minutes": sum(d["meta"].get("minutes", 0) for d in docs), "pooled": list(names)}
    doc = {"meta": meta, "builds": builds, "records": [r for d in docs for r in d["records"]],
           "demos": [x for d in docs for x in d.get("demos", [])]}
    (RESULTS / f"{out}.json").write_text(json.dumps(doc, indent=1) + "\n")
    (RESULTS / f"{out}.md").write_text("\n".join(markdown(doc)) + "\n")
    print("\n".join(markdown(doc)))
    return 0


def rescore(name: str, pairs: int) -> int:
    """Measure the true ratios of a results file's changed scenarios (the same programs,
    built again) and write its tables again."""
    path = RESULTS / f"{name}.json"
    doc = json.loads(path.read_text())
    keys = sorted({r["scenario"] for r in doc["records"]} & {k for k, s in BY_KEY.items()
                                                            if s.base.work != 1})
    with tempfile.TemporaryDirectory(prefix="benchbot-signals-") as tmp:
        for key in keys:
            made = make(BY_KEY[key], Path(tmp), valgrind=False)
            doc["builds"].setdefault(key, {})["measured"] = measure_truth(made, Path(tmp), pairs)
            log(f"{BY_KEY[key].label}: measured {doc['builds'][key]['measured']['ratio']:.4f}")
    path.write_text(json.dumps(doc, indent=1) + "\n")
    (RESULTS / f"{name}.md").write_text("\n".join(markdown(doc)) + "\n")
    print("\n".join(markdown(doc)))
    return 0


def log(message: str) -> None:
    print(message, flush=True)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, help="repetitions per scenario (default 10; --quick 2)")
    p.add_argument("--scenarios", default=",".join(BY_KEY), help="comma-separated keys: "
                   + ", ".join(BY_KEY))
    p.add_argument("--budget", type=float, default=180.0, help="seconds a comparison (180)")
    p.add_argument("--demos", type=int, help="benchbot demo runs (default 10; --quick 1)")
    p.add_argument("--quick", action="store_true", help="2 reps, 1 demo, written as signals-quick")
    p.add_argument("--name", help="results file name (default signals, or signals-quick)")
    p.add_argument("--seed", type=int, default=20261202)
    p.add_argument("--truth-pairs", type=int, default=300,
                   help="interleaved pairs that measure the true ratio of +3%% and -4%% (300; 0: "
                   "the model only)")
    p.add_argument("--rescore", metavar="NAME",
                   help="measure the true ratios for results/NAME.json's scenarios and "
                   "write its tables again (no comparisons)")
    p.add_argument("--combine", metavar="NAME,NAME",
                   help="pool the records of results files (runs of different scenarios or "
                   "seeds) into --name, and write its tables (no comparisons)")
    p.add_argument("--neighbours", type=int, default=0, metavar="N",
                   help="N processes beside the comparisons, each keeping a CPU busy in random "
                   "bursts (benchmarks.suites.NEIGHBOUR), for a shared runner's noise")
    p.add_argument("--require-counts", action="store_true",
                   help="fail if a comparison has no counts (the default where the engine counts)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    reps = args.reps or (2 if args.quick else 10)
    demos = args.demos if args.demos is not None else (1 if args.quick else 10)
    keys = [k.strip() for k in args.scenarios.split(",") if k.strip()]
    unknown = set(keys) - set(BY_KEY)
    if unknown:
        raise SystemExit(f"unknown scenarios: {', '.join(sorted(unknown))}")
    name = args.name or ("signals-quick" if args.quick else "signals")
    if args.rescore:
        return rescore(args.rescore, args.truth_pairs)
    if args.combine:
        return combine([n.strip() for n in args.combine.split(",")], name)
    expected = counting_expected()
    if not expected:
        log("WARNING: this engine does not count instructions (no benchbot.sandbox.counting, or no "
            "valgrind): the comparisons are time only, so both designs are the same rule")
    valgrind = bool(shutil.which("valgrind"))
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    meta = {"command": "python benchmarks/signals.py " + " ".join(argv if argv is not None
                                                                     else sys.argv[1:]),
            "started": started, "budget": args.budget, "reps": reps, "seed": args.seed,
            "engine_counts": expected, "load_before": machine.load_average(),
            "neighbours": args.neighbours}
    doc: dict[str, Any] = {"meta": meta, "builds": {}, "records": [], "demos": []}
    start = time.monotonic()
    RESULTS.mkdir(exist_ok=True)

    def save() -> None:
        meta.update(minutes=(time.monotonic() - start) / 60, load_after=machine.load_average())
        (RESULTS / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
        (RESULTS / f"{name}.md").write_text("\n".join(markdown(doc)) + "\n")

    with tempfile.TemporaryDirectory(prefix="benchbot-signals-") as tmp:
        made = {}
        for key in keys:
            made[key] = make(BY_KEY[key], Path(tmp), valgrind=valgrind)
            c = made[key].counts
            doc["builds"][key] = {"truth": made[key].truth, "memory_truth": made[key].memory_truth,
                                  "counts": c}
            if args.truth_pairs and BY_KEY[key].base.work != 1:
                doc["builds"][key]["measured"] = measure_truth(made[key], Path(tmp), args.truth_pairs)
            log(f"built {BY_KEY[key].label}: true time ratio {made[key].truth:.4f}, peak RSS "
                f"{made[key].memory_truth:.3f}" + (f", valgrind counts {c['ratio']:.6f} "
                                                   f"({c['base_s']:.2f} s a counted run)" if c else ""))
        busy = suites.neighbours(args.neighbours)
        try:
            run_reps(made, keys, reps=reps, budget=args.budget, seed=args.seed,
                     require_counts=args.require_counts or expected, log=log,
                     out=doc["records"], saved=save)
        finally:
            suites.stop(busy)
        for i in range(demos):
            d = run_demo(Path(tmp), f"demo-{i}")
            doc["demos"].append(d)
            log(f"  demo {i + 1}/{demos}: {d['wall_s']:.0f} s: " + " | ".join(
                f"{k} {v['outcome']} {v['pairs']}p" for k, v in d["kernels"].items()))
            save()
    save()
    print("\n".join(markdown(doc)))
    log(f"written: {RESULTS / (name + '.json')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
