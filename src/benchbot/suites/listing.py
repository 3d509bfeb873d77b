"""Suites: a benchmark harness run as one command, each benchmark it reports a workload.

Before measuring, each suite's harness runs once in each arm, base then head (more with
``warmup`` above 1): these are the builds' first runs, never kept, and what the suite's
benchmarks are is read from their reports (``discover``). A benchmark reported by both
arms becomes a workload ``<suite>/<benchmark>`` of metric ``reported``, judged like any
other (the same rule, A/A check and family-wise error control); one reported by one arm
only is recorded as added or removed, not compared. From then on the runner starts the
harness once per arm per round for all of the suite's benchmarks still measuring, with the
suite's ``filter`` where that runs fewer (``runner.suite_request``), and gives each
benchmark the figure the report has for it (``runner.member_record``): the harness's own
estimate over the iterations it ran in that process is one observation, and independence
comes from fresh processes, as for any workload.

On a shard of a comparison (``--shard K/N``) every shard discovers every suite, and
each keeps its share of the benchmarks (``shards.suite_shares``): it measures and counts
those alone, and its file's ``suites[]`` lists every benchmark discovered, for ``merge``
to check that all shards found the same ones. A suite's harness then knows all of them
(``Harness.benchmarks``), so that its ``filter`` runs only the shard's share.

A suite whose discovery fails (the harness cannot start, exits non-zero without saying
which benchmark failed, times out, or prints something benchbot cannot read) is one
invalid workload named after the suite, with the reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchbot.config.config import Config, SuiteConfig, WorkloadConfig
from benchbot.core.model import ARM_NAMES, ArmRuns, PhaseRuns, Shard, SuiteRecord
from benchbot.harness import formats
from benchbot.run.runner import Harness, Spawner, Target, record, suite_request
from benchbot.sandbox.spawn import RawRun

# A harness reports a time per iteration averaged over many iterations inside one process:
# the floor of timing one process from spawn to reap (25 µs) does not apply to it.
SUITE_FLOOR_NS = 0.001


@dataclass(frozen=True, slots=True, kw_only=True)
class Discovered:
    """The config with every suite's benchmarks as workloads, how to run each suite, what
    each suite reported, and the phases of suites that failed (as invalid workloads)."""

    config: Config
    harnesses: dict[str, Harness]
    records: tuple[SuiteRecord, ...]
    failed: dict[str, dict[str, PhaseRuns]]
    warmup_s: dict[str, float]  # seconds a warm-up run took, per benchmark's workload
    # What each benchmark's discovery run in base said of it, by its workload's name: what
    # its counted runs are planned from (benchbot.suites.fixedwork).
    figures: dict[str, Figures] = dataclasses.field(default_factory=dict)
    discovery_s: float = 0.0  # seconds the discovery runs took, all suites together


@dataclass(frozen=True, slots=True, kw_only=True)
class Figures:
    """A benchmark as its base discovery run reported it."""

    ns: float | None  # time per iteration (None: it reported a throughput or another unit)
    bytes_op: float | None  # bytes allocated per iteration (Go's -benchmem), if reported
    index: int  # its place among the benchmarks of the report (pyperf's worker task)


def discover(config: Config, base: Mapping[str, Target], head: Mapping[str, Target], *,
             spawner: Spawner, env: Mapping[str, str], shard: Shard | None = None) -> Discovered:
    """Run each suite's harness in both arms and expand it (module docstring). ``base`` and
    ``head`` hold each suite's target under its name; ``shard``: keep only its share of
    the suites' benchmarks (None: all of them)."""
    workloads: list[WorkloadConfig] = list(config.workloads)
    harnesses: dict[str, Harness] = {}
    records: list[SuiteRecord] = []
    failed: dict[str, dict[str, PhaseRuns]] = {}
    warmup_s: dict[str, float] = {}
    figures: dict[str, Figures] = {}
    discovery_s = 0.0
    for suite in config.suites:
        runs = {"base": [], "head": []}  # type: dict[str, list[RawRun]]
        for _ in range(max(1, suite.settings.warmup)):
            for side, targets in (("base", base), ("head", head)):
                runs[side].append(spawner.spawn(suite_request(
                    targets[suite.name], [suite.settings], env, Harness(format=suite.format))))
        discovery_s += sum(r.wall_ns for side in runs.values() for r in side) / 1e9
        why = _failure(suite, runs)
        if why is not None:
            code, kind, text = why
            workloads.append(suite.settings)
            failed[suite.name] = {
                phase: PhaseRuns(arms={arm: ArmRuns(samples_ns=()) for arm in ARM_NAMES[phase]},
                                 order="", failure=text, failure_code=code,
                                 failure_kind=kind)  # type: ignore[arg-type]
                for phase in ("aa", "ab")}
            records.append(SuiteRecord(name=suite.name, format=suite.format, command=suite.run,
                                       filtered=suite.filter is not None, failure=text))
            continue
        in_base = _reported(runs["base"][-1])
        in_head = _reported(runs["head"][-1])
        shared = [e for e in in_base.values() if e.name in in_head]
        if suite.only is not None:
            shared = [e for e in shared if e.name in suite.only]
        members = [_member(suite, e) for e in shared]
        workloads += members
        order = list(in_base)
        for m, e in zip(members, shared, strict=True):
            extras = dict(e.extras)
            figures[m.name] = Figures(ns=_fastest(e, in_head.get(e.name)),
                                      bytes_op=extras.get("B/op"), index=order.index(e.name))
        harnesses[suite.name] = Harness(format=suite.format, filter=suite.filter,
                                        benchmarks=tuple(m.name for m in members))
        per_run = [r.wall_ns / 1e9 for side in runs.values() for r in side]
        for m in members:
            warmup_s[m.name] = sum(per_run) / len(per_run) / max(1, len(members))
        records.append(SuiteRecord(
            name=suite.name, format=suite.format, command=suite.run,
            benchmarks=tuple(m.bench or m.name for m in members),
            added=tuple(n for n in in_head if n not in in_base),
            removed=tuple(n for n in in_base if n not in in_head),
            filtered=suite.filter is not None,
            not_found=tuple(n for n in suite.only or () if n not in {e.name for e in shared}),
        ))
    if shard is not None:
        from benchbot.results import shards

        mine = set(shards.suite_shares(records, shard.count)[shard.index - 1])
        own = {w.name for w in config.workloads}
        workloads = [w for w in workloads if w.name in own or w.name in mine]
        failed = {n: p for n, p in failed.items() if n in mine}
    return Discovered(config=dataclasses.replace(config, workloads=tuple(workloads)),
                      harnesses=harnesses, records=tuple(records), failed=failed,
                      warmup_s=warmup_s, figures=figures, discovery_s=discovery_s)


def _reported(run: RawRun) -> dict[str, formats.Entry]:
    """The benchmarks a run's report names, in its order (those it says failed too: their
    runs will fail again and make them invalid with the harness's reason)."""
    report = run.report
    if report is None:
        return {}
    entries = {e.name: e for e in report.entries}
    for name, _why in report.failed:
        entries.setdefault(name, formats.Entry(name=name, value=0.0, unit="ns", better="lower",
                                               select=name))
    return entries


def _fastest(base: formats.Entry, head: formats.Entry | None) -> float | None:
    """A benchmark's time per iteration to plan its counted runs from: the faster of its
    two discovery runs' (noise only adds time: a loaded moment made one read several
    times slower here, and its counted runs would have been planned that much too short)."""
    times = [e.value for e in (base, head) if e is not None and e.unit == "ns" and e.value > 0]
    return min(times) if times else None


def _member(suite: SuiteConfig, entry: formats.Entry) -> WorkloadConfig:
    """One benchmark as a workload of its own, with the suite's settings."""
    s = suite.settings
    return dataclasses.replace(
        s, name=f"{suite.name}/{entry.name}", suite=suite.name, bench=entry.name,
        select=entry.select, metric="reported", better=entry.better,  # type: ignore[arg-type]
        unit=None if entry.unit == "ns" else entry.unit,
        floor_ns=s.floor_ns if s.floor_ns is not None else SUITE_FLOOR_NS)


def _failure(suite: SuiteConfig, runs: Mapping[str, Sequence[RawRun]]
             ) -> tuple[str, str, str] | None:
    """Why the suite cannot be measured: (reason code, failure kind, words), or None."""
    for side in ("base", "head"):
        for raw in runs[side]:
            report = raw.report
            if raw.not_started is not None or raw.timed_out or (
                    raw.returncode != 0 and (report is None or not report.failed)):
                run = record(raw, suite.settings)
                kind = run.failure or "exit_status"
                return "run_failed", kind, f"the {side} run of the harness {run.error}"
            if report is None or report.error is not None:
                said = report.error if report is not None and report.error else "no report"
                return ("no_metric", "bad_metric",
                        f"the {side} run's report cannot be read as {suite.format}: {said}")
    return None
