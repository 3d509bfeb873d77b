"""Sharding: one comparison's workloads split over several machines. Pure: no I/O.

``compare --shard K/N`` measures share K of N. Every machine computes the same split
from the same inputs (the effective config, after ``--only``, and the costs of an
earlier results file if one is given), so the shards of one comparison never measure a
workload twice or leave one out, whatever machine or moment they run on.

The split balances expected cost with the greedy longest-processing-time rule: the
workloads, costliest first (ties by name), each go to the shard with the least cost so far
(ties to the lowest index). It is within 4/3 of the best split and needs no search. A
workload's expected cost is what an earlier results file measured (its median wall time
times the runs it took), else its config ``weight`` in the unit of the measured ones.

A suite's benchmarks are known only once its harness has run, so no config can split
them: every shard runs each suite's discovery (its first runs in each arm, made anyway),
and the benchmarks both arms reported, the same list on every shard, are dealt out in
turn (``suite_shares``): each suite's workload names sorted, the suites in the config's
order, the j-th name (from 0) to shard j mod N + 1. Shares then differ by one benchmark
at most (a hash of the name mod N would leave shares of 200 names anywhere from about 40
to 60, and the slowest shard is the matrix's wall), and neighbours in sorted order, which
are often one benchmark at several sizes (``BenchmarkSort/8``, ``/64``, ``/512``), go to
different shards. A hash would keep a benchmark on its shard when the list changes; the
shards of one comparison need only agree, and a shard whose list differs fails the merge.
The family of the error control is then the config's workloads and every suite's
benchmarks (``with_suites``), as on one machine.

Sharding changes where workloads run, never how they are judged: pairs never span
machines, each shard runs its own A/A check on its own machine, and the error control of
the whole comparison (``Family``) is recorded in each shard's file so that ``merge`` can
judge the whole again (``merging``).
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from benchbot.config.config import Config, SuiteConfig, WorkloadConfig
from benchbot.core import codec
from benchbot.core.model import Benchmark, Family, Results, Shard, ShardInfo, SuiteRecord

# Parts of a config that may differ between the shards of one comparison: where the file
# was read from, each shard's own seed and time budget, whether it builds both sides at
# once, and what the check is called.
_MACHINE_LOCAL = ("path", "seed", "budget_s", "parallel_builds", "status", "github")


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What one machine measures of a comparison, and what it must know of the whole."""

    config: Config  # this shard's workloads (all of them when not sharded), every suite
    # The whole comparison's, for the error control; with suites, of the config's
    # workloads only until discovery (``with_suites``).
    family: Family
    shard: ShardInfo | None = None  # None: not sharded
    digest: str | None = None  # of the whole's effective config, when sharded


def plan(config: Config, shard: Shard | None, measured: Mapping[str, float] | None = None) -> Plan:
    """The share ``shard`` of ``config``'s workloads (``--only`` already applied), or all
    of them when ``shard`` is None; ``measured``: seconds each workload took before."""
    whole = family(config)
    if shard is None:
        return Plan(config=config, family=whole)
    parts = split(config.workloads, shard.count, measured)
    mine = set(parts[shard.index - 1])
    return Plan(
        config=replace(config, workloads=tuple(w for w in config.workloads if w.name in mine)),
        family=whole, digest=digest(config),
        shard=ShardInfo(index=shard.index, count=shard.count, plan=parts),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Split:
    """A sharded comparison as its config makes it: each shard's workloads, the family of
    the whole, the config's digest and the workloads skipped as not affected. Each shard's
    file states all of these; ``merging`` checks them against this, computed again from
    the config, since a shard's word is no proof (its machine ran the code under test)."""

    plan: tuple[tuple[str, ...], ...]
    family: Family  # of the config's workloads; with_suites adds the suites' benchmarks
    digest: str
    skipped: tuple[str, ...] = ()  # names, as every shard's file lists them
    # The config's suites (those not skipped), in its order: each name, and whether its
    # benchmarks are measured until settled (no ``runs``).
    suites: tuple[tuple[str, bool], ...] = ()

    def owner(self, name: str) -> int | None:
        """The shard (1 …) whose share holds the workload ``name``; None: no shard's."""
        return next((k for k, share in enumerate(self.plan, 1) if name in share), None)

    def family_with(self, records: Sequence[SuiteRecord]) -> Family:
        """The whole comparison's family, given what its suites discovered."""
        return with_suites(self.family, dict(self.suites), records)


def expected(config: Config, count: int, measured: Mapping[str, float] | None = None,
             skipped: Sequence[str] = ()) -> Split:
    """The split of ``config`` (after ``--only`` and the workloads skipped as not
    affected, ``skipped``) in ``count`` shards, as every shard's ``plan`` computed it."""
    first = plan(config, Shard(index=1, count=count), measured)
    assert first.shard is not None and first.digest is not None
    return Split(plan=first.shard.plan, family=first.family, digest=first.digest,
                 skipped=tuple(skipped),
                 suites=tuple((s.name, s.settings.runs is None) for s in config.suites))


def suite_items(records: Sequence[SuiteRecord]) -> list[str]:
    """What the suites give to deal out, in order: each suite's benchmarks as workload
    names (``<suite>/<benchmark>``), sorted, or the suite's own name where its discovery
    failed (one invalid workload), the suites in the config's order."""
    items: list[str] = []
    for r in records:
        items += [r.name] if r.failure is not None else sorted(f"{r.name}/{b}" for b in r.benchmarks)
    return items


def suite_shares(records: Sequence[SuiteRecord], count: int) -> tuple[tuple[str, ...], ...]:
    """The suites' workloads each of ``count`` shards measures (module docstring): the
    j-th of ``suite_items`` (from 0) is shard j mod count + 1's."""
    items = suite_items(records)
    return tuple(tuple(items[k::count]) for k in range(count))


def with_suites(family: Family, sequential: Mapping[str, bool] | Sequence[SuiteConfig],
                records: Sequence[SuiteRecord]) -> Family:
    """``family`` (of the config's workloads) and every suite's benchmarks as ``records``
    say its discovery found them: measured until settled where the suite has no ``runs``,
    and a suite whose discovery failed one workload measured so (as ``judge`` counts it)."""
    settles = (dict(sequential) if isinstance(sequential, Mapping)
               else {s.name: s.settings.runs is None for s in sequential})
    seq, fixed = family.sequential, family.fixed
    for r in records:
        if r.failure is not None or settles.get(r.name, True):
            seq += 1 if r.failure is not None else len(r.benchmarks)
        else:
            fixed += len(r.benchmarks)
    return Family(sequential=seq, fixed=fixed)


def family(config: Config) -> Family:
    """How many workloads of the comparison share each error control."""
    sequential = sum(1 for w in config.workloads if w.runs is None)
    return Family(sequential=sequential, fixed=len(config.workloads) - sequential)


def split(workloads: Sequence[WorkloadConfig], count: int,
          measured: Mapping[str, float] | None = None) -> tuple[tuple[str, ...], ...]:
    """The workloads' names in ``count`` shards of about equal expected cost (module
    docstring); each shard lists its workloads in the config's order."""
    costs = expected_costs(workloads, measured or {})
    loads = [0.0] * count
    members: list[list[str]] = [[] for _ in range(count)]
    for w in sorted(workloads, key=lambda w: (-costs[w.name], w.name)):
        k = min(range(count), key=lambda i: (loads[i], i))
        loads[k] += costs[w.name]
        members[k].append(w.name)
    position = {w.name: i for i, w in enumerate(workloads)}
    return tuple(tuple(sorted(m, key=position.__getitem__)) for m in members)


def expected_costs(workloads: Sequence[WorkloadConfig],
                   measured: Mapping[str, float]) -> dict[str, float]:
    """Each workload's expected cost: as measured, else its weight times the measured
    workloads' median cost per unit of weight (1 when none was measured)."""
    known = {w.name: measured[w.name] for w in workloads if measured.get(w.name, 0.0) > 0}
    per_weight = [known[w.name] / w.weight for w in workloads if w.name in known]
    unit = statistics.median(per_weight) if per_weight else 1.0
    return {w.name: known.get(w.name, w.weight * unit) for w in workloads}


def costs_from(doc: Results) -> dict[str, float]:
    """Seconds each workload of an earlier results file took to measure: the median wall
    time of its runs times the runs it took (pairs times two, or three for triplets)."""
    return {b.name: cost for b in doc.benchmarks if (cost := _cost(b)) > 0}


def _cost(bench: Benchmark) -> float:
    triplets = bench.measuring is not None and bench.measuring.design == "triplets"
    walls = [w for name, p in bench.phases.items() for arm, a in p.arms.items()
             if not (triplets and name == "ab" and arm == "base")  # the A/A's base run again
             for w in (a.wall_ns or a.samples_ns)]
    return statistics.median(walls) * len(walls) / 1e9 if walls else 0.0


def digest(config: Config) -> str:
    """A digest of the effective config as every shard must share it: the workloads and
    everything that judges them, not where the file was or each shard's seed and budget."""
    data = codec.encode(config)
    for key in _MACHINE_LOCAL:
        data.pop(key, None)
    for w in data["workloads"]:
        w.pop("line", None)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
