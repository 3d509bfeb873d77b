"""A google-benchmark suite counted in one process per build, split at each benchmark's loop.

docs/suites.md, "One process per build", is the design; benchmarks/README.md, section 18,
what it costs against counting each benchmark in processes of its own (``suitecount``'s
plan: five valgrind processes a benchmark, whose start is most of their cost).

Each build (base, base again, head) runs the suite's benchmarks once, all of them in one
process, under callgrind (the counted runs' simulated cache), with
``--benchmark_min_time=0 --benchmark_repetitions=R`` (one iteration a repetition, 1.7 and
1.8 alike) and a dump of the count before each call of ``benchmark::State::
StartKeepRunning()`` and ``benchmark::State::FinishKeepRunning()`` (the names exact: no
wildcard, so that no function of the binary under test cuts a part by its name). The
worker reads each dump's instructions and misses only where the record of valgrind's
directory shows one out file per dump, made by callgrind alone
(``counting.audit_parts``). This module cuts the parts into benchmarks (``split``):

- the report (its JSON) names every repetition in the order run; there must be exactly
  2 x R dumps a benchmark, alternating, in that order (else no split for the suite);
- a benchmark's count per call is the span from the end of its first repetition's loop to
  the end of its last, over R - 1: setup and the harness's own work between repetitions
  included, as a call's count is in ``fixedwork.GB_CALLS``, so that moving work between
  a benchmark's own parts changes nothing;
- the loops of repetitions 2 to R must agree (``AGREE``): a benchmark whose loop does
  not do the same work each time is counted as before (``suitecount``'s plan), which
  counts and samples more processes.

No I/O: ``request`` makes a build's run, ``split`` reads it, ``check`` compares a
benchmark's split with its count made as before.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchbot.harness import formats
from benchbot.sandbox import counting
from benchbot.sandbox.spawn import RawRun, SpawnRequest
from benchbot.verdict import signals

REPETITIONS = 3
DUMPS = ("benchmark::State::StartKeepRunning()", "benchmark::State::FinishKeepRunning()")
START, FINISH = 0, 1
# How far the loops of a benchmark's repetitions 2 to R may differ, as a share of the
# loop: about nothing (the generated suite's loops agree to the instruction, but for two
# whose containers grow with the repetitions: their own work differs by 0.06% and 1%).
AGREE = 1e-4
# The fewest benchmarks a suite splits: the three processes and the check's five runs are
# eight runs, against five a benchmark one by one; from four benchmarks on (20 runs) the
# split makes fewer than half.
SPLIT_MIN = 4
# The most benchmarks one split run counts (6 dumps each, about 24 events of the record of
# valgrind's directory: counting.VALGRIND_MAX_PARTS); a larger suite's are split in runs
# of this many, one after another in each build's place.
CHUNK = 500
# The check (``check``): the split's head-less-base difference a call and the one counted
# as before must agree within CHECK_TIMES the two methods' A/A (base again less base) and
# CHECK_FLOOR of the work: signals.SAME_FLOOR, under which a move of the counts never
# decides a reading. The harness's own work a call moves with the binary's layout by a few
# dozen instructions, differently in the two ways of running it (the generated suite's
# BM_Reverse, 29,480 instructions a call and the same loop in both builds: head -20 a call
# split, -4 one by one, 5e-4 of the work apart; at 1e-4 the check refused the split).
CHECK_TIMES = 4.0
CHECK_FLOOR = signals.SAME_FLOOR
HOW = ("one callgrind process per build, each benchmark from the end of its first "
       "repetition's loop to the end of its last (--benchmark_min_time=0 "
       f"--benchmark_repetitions={REPETITIONS}: a call, setup included)")


@dataclass(frozen=True, slots=True)
class Span:
    """One benchmark's count from a split run: instructions and last-level misses a call
    (None: no cache simulation), and whether its repetitions' loops agreed."""

    per_call: float
    ll_per_call: float | None
    agree: bool
    loops: tuple[int, ...]


def request(argv: Sequence[str], cwd: str, env: Mapping[str, str], *,
            selects: Sequence[str], timeout_s: float,
            pin: tuple[int, ...] | None = None) -> SpawnRequest:
    """A build's split run: every benchmark ``selects`` names, R repetitions of one
    iteration each, under callgrind with the dumps (later arguments win over the suite's
    own)."""
    regex = formats.filter_regex("google-benchmark", selects)
    more = [f"--benchmark_filter={regex}", "--benchmark_min_warmup_time=0",
            "--benchmark_enable_random_interleaving=false", "--benchmark_min_time=0",
            f"--benchmark_repetitions={REPETITIONS}",
            "--benchmark_report_aggregates_only=false",
            "--benchmark_display_aggregates_only=false"]
    return SpawnRequest(argv=(*argv, *more), cwd=cwd, env=tuple(env.items()),
                        timeout_s=counting.valgrind_timeout(timeout_s),  # one harness run's
                        pin=pin, harness="google-benchmark", count="callgrind-parts",
                        whole=True, dumps=DUMPS)


def split(raw: RawRun, *, repetitions: int = REPETITIONS) -> dict[str, Span] | str:
    """Each benchmark's span (module docstring) from a build's split run, by the name its
    report gives; or why the run cannot be split, in words."""
    if raw.not_started is not None:
        return raw.not_started
    if raw.timed_out:
        return "timed out"
    if raw.returncode != 0:
        return f"exited with status {raw.returncode}"
    if raw.parts is None:
        return raw.count_error or "callgrind made no parts"
    order = raw.order
    if not order:
        return "its report names no runs"
    blocks: list[str] = []
    for at in range(0, len(order), repetitions):
        block = order[at:at + repetitions]
        name = block[0][0]
        if list(block) != [(name, k) for k in range(repetitions)] or name in blocks:
            return (f"its report does not name {repetitions} repetitions of each benchmark "
                    f"one after another (at {name})")
        blocks.append(name)
    parts = raw.parts
    want = 2 * len(order) + 1
    if len(parts) != want:
        return (f"callgrind made {len(parts) - 1} dumps for {len(order)} repetitions, not "
                f"{want - 1}")
    triggers = [p.trigger for p in parts]
    if triggers != [START, FINISH] * len(order) + [-1]:
        return "the dumps are not each repetition's loop start and end, in turn"
    out: dict[str, Span] = {}
    for b, name in enumerate(blocks):
        first = b * repetitions
        last = first + repetitions - 1
        span = parts[2 * first + 2: 2 * last + 2]
        loops = tuple(parts[2 * k + 1].ir for k in range(first, last + 1))
        later = loops[1:]
        agree = bool(later) and max(later) - min(later) <= AGREE * max(later)
        ll = None if any(p.ll_misses is None for p in span) else \
            sum(p.ll_misses or 0 for p in span) / (repetitions - 1)
        out[name] = Span(per_call=sum(p.ir for p in span) / (repetitions - 1), ll_per_call=ll,
                         agree=agree, loops=loops)
    return out


def check(split_: Mapping[str, float], before: Mapping[str, float]) -> str | None:
    """None where a benchmark's split counts (per call of each arm: base, base_again,
    head) agree with its counts made as before (the same, per call): head's difference
    from base, within CHECK_TIMES the two methods' A/A and CHECK_FLOOR of base's work;
    else how they differ, in words. (The counts themselves differ by the harness's work
    a call, which is not the same in the two ways of running it: 0.5% here.)"""
    moved_split = split_["head"] - split_["base"]
    moved_before = before["head"] - before["base"]
    noise = abs(split_["base_again"] - split_["base"]) + abs(before["base_again"] - before["base"])
    allowed = CHECK_TIMES * noise + CHECK_FLOOR * before["base"]
    if not all(math.isfinite(v) for v in (moved_split, moved_before, allowed)):
        return "a count is not a number"
    if abs(moved_split - moved_before) <= allowed:
        return None
    return (f"head moved {moved_split:+,.0f} instructions a call split and "
            f"{moved_before:+,.0f} counted one by one (at most {allowed:,.0f} apart)")
