"""Interleaves arms over workloads and turns raw runs into records.

The process layer (spawning, timing, output files) is ``benchbot.sandbox.spawn``; this module
decides what runs when. Rounds are the outer loop: every workload gets one pair per
round, so slow drift of the machine reaches every workload and both arms alike
(docs/verdict.md, Terms).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from benchbot.config.config import WorkloadConfig
from benchbot.core.model import (
    CountMethod,
    RunFailure,
    RunRecord,
)
from benchbot.harness import formats
from benchbot.sandbox import counting
from benchbot.sandbox.spawn import ProcessSpawner, RawRun, SpawnRequest

__all__ = ["ProcessSpawner", "RawRun", "SpawnRequest", "Spawner"]

_T = TypeVar("_T")


class Spawner(Protocol):
    """Starts one fresh process and waits for it: the seam tests replace."""

    def spawn(self, request: SpawnRequest) -> RawRun: ...


class GroupSpawner(Spawner, Protocol):
    """A spawner that makes a batch of pairs or triplets in one exchange (the sandbox's
    worker), as ``spawn.in_groups`` does."""

    def spawn_groups(self, groups: Sequence[Sequence[SpawnRequest]],
                     keys: Sequence[str]) -> list[list[RawRun]]: ...


# One exchange with the worker carries pairs or rounds of triplets for about this long
# (pairs: at most BATCH_RUNS runs): each exchange wakes both processes (about 0.45 ms on a
# 2-core VM), which at one pair per exchange was 0.2-0.4 ms a run beyond the runs' own time.
BATCH_S = 0.1
BATCH_RUNS = 32


# --- one workload, one arm ---------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """Where one arm's build of one workload is run from."""

    argv: tuple[str, ...]
    cwd: Path


def target(workload: WorkloadConfig, root: Path) -> Target:
    """Resolve a workload's argv and cwd inside one worktree.

    A relative program path with a slash is taken relative to the run's cwd, as a
    shell would; a bare name is looked up on PATH.
    """
    cwd = (root / workload.cwd) if workload.cwd else root
    program = workload.run[0]
    if "/" in program and not os.path.isabs(program):
        program = str(cwd / program)
    return Target(argv=(program, *workload.run[1:]), cwd=cwd)


def request(tgt: Target, w: WorkloadConfig, env: Mapping[str, str],
            count: CountMethod | None = None) -> SpawnRequest:
    """The spawn request for one run of a workload in one arm, counted by ``count``'s
    method (a valgrind run gets ``counting.valgrind_timeout``)."""
    merged = {**env, **dict(w.env)}
    patterns = tuple(p for p in (w.pattern if w.metric == "reported" else None, w.expect) if p)
    timeout_s = counting.valgrind_timeout(w.timeout_s) if count == "valgrind" else w.timeout_s
    return SpawnRequest(
        argv=tgt.argv, cwd=str(tgt.cwd), env=tuple(merged.items()), timeout_s=timeout_s,
        pin=w.pin, patterns=patterns, keep_stdout=w.keeps_stdout, count=count,
        whole=count == "valgrind" and w.metric == "instructions",
    )


def record(raw: RawRun, workload: WorkloadConfig, *, timeout_s: float | None = None) -> RunRecord:
    """Turn a raw run into a RunRecord: read the reported metric and the expected output
    (``timeout_s``: the run's, where not the workload's: a counted run's)."""
    failure: RunFailure | None = None
    error = None
    if raw.not_started is not None:
        failure, error = "not_started", raw.not_started
    elif raw.timed_out:
        failure, error = "timeout", f"timed out after {timeout_s or workload.timeout_s:g} s"
    elif raw.returncode != 0:
        # The last three lines of its stderr, each cut short: the report's note stays a
        # line, however long a line the program printed; a line the program printed
        # again (a harness's "FAIL" after each benchmark) is quoted once, at its last place.
        lines = [clip(line, STDERR_LINE_CHARS) for line in raw.stderr_tail.strip().splitlines()]
        tail = list(dict.fromkeys(reversed(lines)))[:3][::-1]
        failure = "exit_status"
        error = f"exited with status {raw.returncode}" + (f": {' | '.join(tail)}" if tail else "")
    captures = iter(raw.captures)
    value: float | None = None
    expect = None
    reported = workload.metric == "reported" and bool(workload.pattern)
    found_value = next(captures, None) if reported else None
    found_expect = next(captures, None) if workload.expect else None
    if failure is None and reported:
        if found_value is None:
            failure, error = "no_metric", f"output did not match pattern {workload.pattern!r}"
        else:
            try:
                number = float(found_value)
            except ValueError:
                failure = "bad_metric"
                error = f"pattern {workload.pattern!r} captured {clip(found_value)!r}, not a number"
            else:
                value = round(number) if workload.better == "lower" else number
    if failure is None and workload.expect:
        expect = found_expect
        if expect is None:
            failure, error = "expect_missing", f"output did not match expect {workload.expect!r}"
    return RunRecord(
        wall_ns=raw.wall_ns, cpu_ns=raw.cpu_ns, maxrss_kib=raw.maxrss_kib,
        returncode=raw.returncode, timed_out=raw.timed_out,
        value_ns=value, expect=expect, error=error, failure=failure,
        instructions=raw.instructions, cycles=raw.cycles, counts_scaled=raw.counts_scaled,
        ll_misses=raw.ll_misses,
    )


# --- suites: one harness process, many workloads ------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Harness:
    """How a suite's harness is run (benchbot.suites.listing): its report's format, its filter, and
    the workloads its benchmarks became."""

    format: str
    filter: tuple[str, ...] | None = None
    benchmarks: tuple[str, ...] = ()  # every benchmark's workload name


def filter_argv(template: Sequence[str], fmt: str, selects: Sequence[str]) -> list[str]:
    """A suite's ``filter`` for these benchmarks: {regex} replaced by a pattern matching
    exactly them, an argument holding {name} repeated once per benchmark. Plain text
    replacement: nothing of a name is read as a format or by a shell."""
    out: list[str] = []
    for arg in template:
        if "{name}" in arg:
            out.extend(arg.replace("{name}", select) for select in selects)
        elif "{regex}" in arg:
            out.append(arg.replace("{regex}", formats.filter_regex(fmt, selects)))
        else:
            out.append(arg)
    return out


def suite_request(tgt: Target, members: Sequence[WorkloadConfig], env: Mapping[str, str],
                  how: Harness) -> SpawnRequest:
    """One run of a suite's harness for ``members`` (its benchmarks still measuring): the
    whole suite, or with its filter where that runs fewer of them."""
    w = members[0]
    argv = tgt.argv
    if how.filter is not None and len(members) < len(how.benchmarks):
        try:
            argv = (*argv, *filter_argv(how.filter, how.format, [m.select or m.bench or m.name
                                                                 for m in members]))
        except ValueError:  # a name the harness's filter cannot select: run them all
            pass
    return SpawnRequest(argv=argv, cwd=str(tgt.cwd), env=tuple({**env, **dict(w.env)}.items()),
                        timeout_s=w.timeout_s, pin=w.pin, harness=how.format)


@dataclass(frozen=True, slots=True)
class Said:
    """A harness run's report, indexed: its entries and failures by benchmark name."""

    entries: dict[str, formats.Entry]
    failed: dict[str, str]


def said_of(raw: RawRun) -> Said:
    report = raw.report
    if report is None:
        return Said({}, {})
    return Said({e.name: e for e in report.entries}, dict(report.failed))


def member_record(raw: RawRun, w: WorkloadConfig, said: Said | None = None) -> RunRecord:
    """One benchmark's figure from a run of its suite's harness: the value its report gives
    for it, or why there is none (the run failed, the report could not be read, the harness
    said the benchmark failed, or it did not report it). ``said``: the run's report indexed
    once for all the benchmarks it serves."""
    report = raw.report
    said = said or said_of(raw)
    failed = said.failed
    entry = said.entries.get(w.bench or "")
    failure: RunFailure | None = None
    error = None
    if w.bench in failed:
        failure, error = "exit_status", f"failed in the harness: {clip(failed[w.bench], 160)}"
    elif raw.not_started is not None or raw.timed_out or (raw.returncode != 0 and not failed):
        return record(raw, w)
    elif report is None or report.error is not None:
        failure = "bad_metric"
        error = ("left a report benchbot cannot read: "
                 + (report.error if report is not None and report.error else "none"))
    elif entry is None:
        failure, error = "no_metric", "did not report it"
    extras = dict(entry.extras) if entry is not None and not failure else {}
    return RunRecord(
        wall_ns=raw.wall_ns, cpu_ns=raw.cpu_ns, maxrss_kib=raw.maxrss_kib,
        returncode=raw.returncode, timed_out=raw.timed_out,
        value_ns=None if entry is None or failure else entry.value, error=error, failure=failure,
        bytes_op=extras.get(BYTES_OP), allocs_op=extras.get(ALLOCS_OP),
    )


# The memory a harness reports per iteration (Go's -benchmem), by its unit.
BYTES_OP, ALLOCS_OP = "B/op", "allocs/op"


def group_key(w: WorkloadConfig) -> str:
    """What one spawn serves: a workload, or a suite (all its benchmarks at once)."""
    return w.name if w.suite is None else "\0" + w.suite


# --- a phase: interleaved pairs of two arms over all workloads ---------------------------


# --- sequential measuring: rounds of triplets ---------------------------------------------


# --- counted runs: instructions apart from the timed ones ----------------------------------


STDERR_LINE_CHARS = 160  # of each stderr line a failure's reason quotes


def clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
