"""Runs in rounds, as the measuring asks for them: a phase of interleaved pairs over every
workload (run_phase: base and head alternating, the order of each pair drawn, a failing
workload dropped while the others go on), rounds of triplets (Triplets: base, base
again and head for the sequential rule), and the counted runs apart from the timed ones
(counted_runs). Rounds are the outer loop: every workload gets one pair per round, so a
slow drift of the machine reaches every workload and both arms alike (docs/verdict.md,
Terms). One run of one arm is runner's.

Why one module of about 600 lines: the three ways of making rounds share how a run is
spawned, grouped and accepted (``_spawn_groups``, ``_accept``), and a suite's harness
serves several workloads in each of them.
"""

from __future__ import annotations

import random
import statistics
from collections import deque
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import TypeVar

from benchbot.config.config import WorkloadConfig
from benchbot.core.model import (
    ARM_NAMES,
    ArmRuns,
    ArmSamples,
    CountMethod,
    PhaseRuns,
    RunFailure,
    RunRecord,
)
from benchbot.run.runner import (
    BATCH_RUNS,
    BATCH_S,
    Harness,
    Spawner,
    Target,
    clip,
    group_key,
    member_record,
    record,
    request,
    said_of,
    suite_request,
)
from benchbot.sandbox.spawn import RawRun, SpawnRequest, in_groups

_T = TypeVar("_T")


@dataclass(slots=True, kw_only=True)
class Tracked:
    """Why a workload's runs stopped, if they did, and the output every run must repeat."""

    failure: str | None = None  # reason code: run_failed | no_metric | expect_mismatch
    failure_kind: RunFailure | None = None  # what the failing run did (model.RunFailure)
    failure_text: str | None = None
    failure_side: str | None = None  # base or head: whose run failed
    expected: str | None = None  # the first `expect` capture, which all must equal
    counts_scaled: bool = False  # perf multiplexed the counters in some run
    count_error: str | None = None  # why a run asked to be counted was not (the first)
    # Seconds its measured runs took; a suite's benchmark: its share of each harness run
    # (the run's time over the benchmarks it served).
    timed_s: float = 0.0

    def noted(self, raw: RawRun) -> RawRun:
        """Remember what a run's count says about all of them; the run."""
        if raw.count_error is not None and self.count_error is None:
            self.count_error = raw.count_error
        self.counts_scaled |= raw.counts_scaled
        return raw


@dataclass(slots=True, kw_only=True)
class PhaseResult(Tracked):
    """One workload's runs in one phase: the two arms, and why it stopped, if it did."""

    reference: ArmSamples = field(default_factory=ArmSamples)
    candidate: ArmSamples = field(default_factory=ArmSamples)
    orders: list[str] = field(default_factory=list)  # "RC" or "CR" per pair

    def recorded(self, phase: str, w: WorkloadConfig) -> PhaseRuns:
        """The phase's runs as the results file records them."""
        ref, cand = ARM_NAMES[phase]
        return PhaseRuns(
            arms={ref: _arm(self.reference, w), cand: _arm(self.candidate, w)},
            order="".join("AB" if o == "RC" else "BA" for o in self.orders),
            failure=self.failure_text, failure_code=self.failure, failure_kind=self.failure_kind,
        )


def _arm(samples: ArmSamples, w: WorkloadConfig) -> ArmRuns:
    """An arm's runs, frozen: ``samples_ns`` is the reported time, else the wall time; a
    throughput (better: higher) is in ``values``."""
    reported = w.metric == "reported"
    return ArmRuns(
        samples_ns=tuple(samples.value_ns if reported and w.better == "lower" else samples.wall_ns),
        wall_ns=tuple(samples.wall_ns), cpu_ns=tuple(samples.cpu_ns),
        maxrss_kib=tuple(samples.maxrss_kib),
        values=tuple(samples.value_ns) if reported and w.better == "higher" else None,
        instructions=tuple(samples.instructions) if samples.instructions else None,
        cycles=tuple(samples.cycles) if samples.cycles else None,
        ll_misses=(tuple(samples.ll_misses) if samples.ll_misses
                   and len(samples.ll_misses) == len(samples.instructions) else None),
        bytes_op=tuple(samples.bytes_op) if samples.bytes_op else None,
        allocs_op=tuple(samples.allocs_op) if samples.allocs_op else None,
    )


Progress = Callable[[str, int, int], None]  # (workload, runs done, runs planned) for the phase


def run_phase(
    workloads: Sequence[WorkloadConfig],
    reference: Mapping[str, Target],
    candidate: Mapping[str, Target],
    *,
    spawner: Spawner,
    env: Mapping[str, str],
    seed: int,
    warm: set[tuple[str, str]],
    arm_keys: tuple[str, str],
    progress: Progress | None = None,
    expected: Mapping[str, str] | None = None,
    perf: Set[str] = frozenset(),
    harnesses: Mapping[str, Harness] | None = None,
) -> dict[str, PhaseResult]:
    """Measure every workload's reference against its candidate in interleaved pairs.

    Warm-ups (per workload's ``warmup``, per build) are made first and discarded, for a
    build not yet warm (keyed by ``arm_keys`` and workload in ``warm``): a later phase
    follows the last one's runs at once and finds its builds warm. The first execution
    of a build is always discarded, even with ``warmup: 0``. A workload whose run fails
    stops being run; the others go on. The measured runs of the workloads named in
    ``perf`` are counted by the worker's perf counter. The benchmarks of a suite (named
    in ``harnesses``, whose discovery warmed their builds) share one run of the harness
    per arm per pair.
    """
    rng = random.Random(seed)
    results = {w.name: PhaseResult() for w in workloads}
    if expected:
        for name, value in expected.items():
            if name in results:
                results[name].expected = value
    planned = planned_runs(workloads, warm=warm, arm_keys=arm_keys)
    done = 0

    def tick(name: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(name, done, planned)

    for w in workloads:
        arms = ((arm_keys[0], reference[w.name]), (arm_keys[1], candidate[w.name]))
        if w.suite is not None:  # its suite's discovery made each build's first run
            warm.update((key, w.name) for key, _ in arms)
            continue
        cold = {key: tgt for key, tgt in arms if (key, w.name) not in warm}
        for _ in range(max(1, w.warmup) if cold else 0):  # a fresh build's first run at least
            for tgt in cold.values():
                _spawn(spawner, tgt, w, env)
                tick(w.name)
        warm.update((key, w.name) for key in cold)

    units = _units(workloads)
    queue = deque((index, unit) for index in range(max((_pairs(w) for w in workloads), default=0))
                  for unit in units if index < _pairs(unit[0]))
    while queue:
        batch: list[tuple[int, list[WorkloadConfig], bool]] = []
        expected_s = 0.0
        while queue and len(batch) < BATCH_RUNS // 2 and (not batch or expected_s < BATCH_S):
            index, unit = queue.popleft()
            live = [w for w in unit if not results[w.name].failure]
            if not live:
                continue
            result = results[live[0].name]
            batch.append((index, live, _reference_first(live[0].order, index, rng)))
            expected_s += _last_s(result.reference, result.candidate)
        groups = [[_unit_request(tgt, live, env, harnesses, perf)
                   for tgt in _sides(first, reference[live[0].name], candidate[live[0].name])]
                  for _, live, first in batch]
        answers = _spawn_groups(spawner, groups, [group_key(live[0]) for _, live, _ in batch])
        for (index, live, first_is_ref), raws in zip(batch, answers, strict=True):
            if not raws:  # its workload failed earlier in this batch
                continue
            for _ in raws:
                tick(live[0].name)
            said = [said_of(raw) for raw in raws] if live[0].suite is not None else []
            share = sum(raw.wall_ns for raw in raws) / 1e9 / len(live)
            for w in live:
                result = results[w.name]
                if result.failure:
                    continue
                result.timed_s += share
                result.orders.append("RC" if first_is_ref else "CR")
                ordered = _sides(first_is_ref, result.reference, result.candidate)
                sides = _sides(first_is_ref, *arm_keys)
                for made, (samples, raw) in enumerate(zip(ordered, raws, strict=False), start=1):
                    run = (record(result.noted(raw), w) if w.suite is None
                           else member_record(raw, w, said[made - 1]))
                    if not _accept(result, samples, run, sides[made - 1]):
                        if w is live[0]:
                            planned -= 2 * (_pairs(w) - index) - made  # keep the ETA honest
                        break
    return results


def _units(workloads: Sequence[WorkloadConfig]) -> list[list[WorkloadConfig]]:
    """What one spawn serves, in the workloads' order: a workload alone, or every benchmark
    of a suite together (where its first one stands)."""
    units: list[list[WorkloadConfig]] = []
    suites: dict[str, list[WorkloadConfig]] = {}
    for w in workloads:
        if w.suite is None:
            units.append([w])
        elif w.suite in suites:
            suites[w.suite].append(w)
        else:
            suites[w.suite] = [w]
            units.append(suites[w.suite])
    return units


def _unit_request(tgt: Target, live: Sequence[WorkloadConfig], env: Mapping[str, str],
                  harnesses: Mapping[str, Harness] | None, perf: Set[str]) -> SpawnRequest:
    """The run of a workload, or of a suite's harness for its benchmarks in ``live``."""
    w = live[0]
    if w.suite is not None:
        if harnesses is None or w.suite not in harnesses:
            raise ValueError(f"suite {w.suite!r}: no harness given")  # a caller's mistake
        return suite_request(tgt, live, env, harnesses[w.suite])
    return request(tgt, w, env, "perf" if w.name in perf else None)


def _sides(reference_first: bool, reference: _T, candidate: _T) -> list[_T]:
    return [reference, candidate] if reference_first else [candidate, reference]


def _last_s(*arms: ArmSamples) -> float:
    """Seconds the arms' last runs took together; a batch's first group when none ran yet
    (1 s: the batch holds that group alone)."""
    if not all(arm.wall_ns for arm in arms):
        return 1.0
    return sum(arm.wall_ns[-1] for arm in arms) / 1e9


def planned_runs(workloads: Sequence[WorkloadConfig], *, warm: Set[tuple[str, str]] = frozenset(),
                 arm_keys: tuple[str, str] = ("base", "head")) -> int:
    """How many runs a phase makes: the warm-ups of builds not yet warm, and the pairs (a
    suite's benchmarks share theirs, and its discovery warmed its builds)."""
    return sum(
        2 * _pairs(unit[0]) + (0 if unit[0].suite is not None else sum(
            max(1, unit[0].warmup) for key in dict.fromkeys(arm_keys)
            if (key, unit[0].name) not in warm))
        for unit in _units(workloads)
    )


def _pairs(w: WorkloadConfig) -> int:
    """A fixed design's pairs per phase (0 for a sequential workload)."""
    return w.runs or 0


def _reference_first(order: str, index: int, rng: random.Random) -> bool:
    if order == "random":
        return rng.random() < 0.5
    return index % 2 == 0


def _spawn(spawner: Spawner, tgt: Target, w: WorkloadConfig, env: Mapping[str, str]) -> RawRun:
    return spawner.spawn(request(tgt, w, env))


def _spawn_groups(spawner: Spawner, groups: Sequence[Sequence[SpawnRequest]],
                  keys: Sequence[str]) -> list[list[RawRun]]:
    """A batch of pairs or triplets in one exchange where the spawner can (a
    ``GroupSpawner``), else one run after another: the same runs either way."""
    # (getattr: isinstance on a runtime-checkable protocol costs ~15 µs a call.)
    batch: Callable[[Sequence[Sequence[SpawnRequest]], Sequence[str]],
                    list[list[RawRun]]] | None = getattr(spawner, "spawn_groups", None)
    if batch is not None:
        return batch(groups, keys)
    return in_groups(spawner.spawn, groups, keys)


def spawn_group(spawner: Spawner, group: Sequence[SpawnRequest], key: str) -> list[RawRun]:
    """One group of runs in one exchange where the spawner can, up to and including the
    first that failed (``spawn.in_turn``)."""
    return _spawn_groups(spawner, [group], [key])[0]


# A run's failure kind -> the reason code of the workload's verdict (model.REASON_CODES).
FAILURE_REASONS: dict[RunFailure, str] = {
    "not_started": "run_failed", "exit_status": "run_failed", "timeout": "run_failed",
    "no_metric": "no_metric", "bad_metric": "no_metric",
    "expect_missing": "expect_mismatch", "expect_mismatch": "expect_mismatch",
}


def _accept(result: Tracked, samples: ArmSamples, run: RunRecord, side: str) -> bool:
    """Append a run; on a failure mark the workload, naming the side whose run failed
    (base or head: "the head run exited with status 3 …"), and return False."""
    if run.failure is not None:
        result.failure, result.failure_kind = FAILURE_REASONS[run.failure], run.failure
        result.failure_text = f"the {side} run {run.error}" if run.error else None
        result.failure_side = side
        return False
    if run.expect is not None:
        if result.expected is None:
            result.expected = run.expect
        elif run.expect != result.expected:
            result.failure, result.failure_kind = "expect_mismatch", "expect_mismatch"
            result.failure_text = (
                f"expected output differs between runs: {clip(result.expected)!r} "
                f"then {clip(run.expect)!r}"
            )
            result.failure_side = side
            return False
    samples.add(run)
    return True




# The six orders of base, base again and head in a triplet ("1", "2", "H"): taken in turn
# (order: alternate) or drawn (order: random), so that every arm runs first, second and
# last equally often and whatever a position adds cancels.
TRIPLET_ORDERS = ("12H", "2H1", "H12", "21H", "1H2", "H21")


@dataclass(slots=True, kw_only=True)
class TripletResult(Tracked):
    """One workload's triplets: base, base again and head, one of each per round."""

    base: ArmSamples = field(default_factory=ArmSamples)
    again: ArmSamples = field(default_factory=ArmSamples)
    head: ArmSamples = field(default_factory=ArmSamples)
    orders: list[str] = field(default_factory=list)  # a TRIPLET_ORDERS entry per round

    @property
    def pairs(self) -> int:
        """Complete triplets so far."""
        return min(len(self.base.wall_ns), len(self.again.wall_ns), len(self.head.wall_ns))

    def recorded(self, w: WorkloadConfig) -> dict[str, PhaseRuns]:
        """The triplets as two phases the results file knows: the A/A (base, base again)
        and the A/B (base, head); the first base run of each triplet is in both. A head
        run's failure is the A/B phase's only: the A/A phase's runs did not fail."""
        n = self.pairs
        failure = {"failure": self.failure_text, "failure_code": self.failure,
                   "failure_kind": self.failure_kind}
        aa_failure = failure if self.failure_side != "head" else {}
        return {
            "aa": PhaseRuns(arms={"base": _arm(_cut(self.base, n), w),
                                  "base_again": _arm(_cut(self.again, n), w)},
                            order="".join(_before(o, "1", "2") for o in self.orders[:n]),
                            **aa_failure),  # type: ignore[arg-type]
            "ab": PhaseRuns(arms={"base": _arm(_cut(self.base, n), w),
                                  "head": _arm(_cut(self.head, n), w)},
                            order="".join(_before(o, "1", "H") for o in self.orders[:n]),
                            **failure),  # type: ignore[arg-type]
        }


def _cut(samples: ArmSamples, n: int) -> ArmSamples:
    """The first ``n`` runs (a failed round leaves a partial triplet behind)."""
    return ArmSamples(wall_ns=samples.wall_ns[:n], cpu_ns=samples.cpu_ns[:n],
                      maxrss_kib=samples.maxrss_kib[:n], value_ns=samples.value_ns[:n],
                      expect=samples.expect[:n], instructions=samples.instructions[:n],
                      cycles=samples.cycles[:n], ll_misses=samples.ll_misses[:n], bytes_op=samples.bytes_op[:n],
                      allocs_op=samples.allocs_op[:n])


class HarnessPace:
    """How long one run of a suite's harness takes by how many of its benchmarks it serves.

    A harness run has a start of its own (the interpreter, pytest's collection, loading
    the binary) besides each benchmark's work, so a run of the 3 benchmarks still waiting
    takes more than 3/11 of a run of all 11 (pytest-benchmark: about 3 s against 7 s).
    The budget plans a round of the benchmarks it admits from this, not from the time of
    a run of all of them shared out. A count not yet run is read off a line through the
    counts run (a start and a cost a benchmark, neither below 0); with one count run only,
    in proportion to it, which errs short until the fewer benchmarks have run once."""

    KEEP = 32  # the latest runs kept for each count: the pace follows the machine

    def __init__(self) -> None:
        self._walls: dict[int, deque[float]] = {}
        self._medians: dict[int, float] = {}

    def add(self, served: int, seconds: float) -> None:
        """One harness run that served ``served`` benchmarks took ``seconds``."""
        self._walls.setdefault(served, deque(maxlen=self.KEEP)).append(seconds)
        self._medians.pop(served, None)

    def seconds(self, served: int) -> float | None:
        """A run serving ``served`` benchmarks, in seconds; None before any run."""
        if not self._walls:
            return None
        if served in self._walls:
            return self._median(served)
        seen = [(k, self._median(k)) for k in sorted(self._walls)]
        if len(seen) == 1:
            k, s = seen[0]
            return s * served / k
        mean_k = sum(k for k, _ in seen) / len(seen)
        mean_s = sum(s for _, s in seen) / len(seen)
        spread = sum((k - mean_k) ** 2 for k, _ in seen)
        per = max(0.0, sum((k - mean_k) * (s - mean_s) for k, s in seen) / spread)
        start = max(0.0, mean_s - per * mean_k)
        return start + per * served

    def _median(self, served: int) -> float:
        if served not in self._medians:
            self._medians[served] = statistics.median(self._walls[served])
        return self._medians[served]


def _before(order: str, a: str, b: str) -> str:
    return "AB" if order.index(a) < order.index(b) else "BA"


class Triplets:
    """Measures workloads in rounds of triplets, one round at a time, for the engine's
    sequential loop, which decides after each look which workloads go on."""

    def __init__(self, workloads: Sequence[WorkloadConfig], base: Mapping[str, Target],
                 head: Mapping[str, Target], *, spawner: Spawner, env: Mapping[str, str],
                 seed: int, perf: Set[str] = frozenset(),
                 harnesses: Mapping[str, Harness] | None = None,
                 again: Mapping[str, Target] | None = None) -> None:
        self._by_name = {w.name: w for w in workloads}
        self.perf = set(perf)  # the workloads whose measured runs perf counts
        self.warmup_failed: set[str] = set()  # workloads a warm-up run of which failed
        self._base, self._head = base, head
        # Where base again runs from (its own place: docs/verdict.md, "Placement"); base's
        # own where none is given, or where a run from there failed and base's did not.
        self.again = dict(again if again is not None else base)
        self.again_fallback: dict[str, str] = {}  # workload -> why base again ran from base's place
        self._spawner, self._env = spawner, env
        self._harnesses = harnesses
        self._rng = random.Random(seed)
        self.results = {w.name: TripletResult() for w in workloads}
        self.runs = 0  # runs made, warm-ups included
        # A suite's benchmark: how many benchmarks its last run of the harness served (the
        # run's time is theirs together).
        self.served: dict[str, int] = {}
        self.pace: dict[str, HarnessPace] = {}  # suite: its harness runs' time by benchmarks served

    def warm_up(self, names: Sequence[str]) -> None:
        """Each arm's warm-ups (at least one: a fresh build's first run is never kept); not
        for a suite's benchmarks, whose discovery made their builds' first runs."""
        for name in names:
            w = self._by_name[name]
            if w.suite is not None:
                continue
            placed = self.again.get(name, self._base[name]) != self._base[name]
            for _ in range(max(1, w.warmup)):
                for tgt in (self._base[name], self._head[name]):
                    if _spawn(self._spawner, tgt, w, self._env).failed:
                        self.warmup_failed.add(name)
                    self.runs += 1
                if placed:
                    raw = _spawn(self._spawner, self.again[name], w, self._env)
                    self.runs += 1
                    if raw.failed and name not in self.warmup_failed:
                        self.again[name] = self._base[name]
                        self.again_fallback[name] = fallback_reason(raw)
                        placed = False

    def rounds(self, names: Sequence[str], index: int, count: int,
               progress: Callable[[str], None] | None = None) -> None:
        """``count`` rounds from round ``index``: one triplet for each named workload still
        running per round (rounds are the outer loop), sent as one batch. A suite's
        benchmarks share one run of its harness per arm, in the order where its first one
        stands."""
        batch: list[tuple[list[str], str]] = []  # (the workloads a group serves, its order)
        for r in range(count):
            suites: dict[str, list[str]] = {}
            for name in names:
                if self.results[name].failure:
                    continue
                w = self._by_name[name]
                if w.suite is not None and w.suite in suites:
                    suites[w.suite].append(name)
                    continue
                order = (self._rng.choice(TRIPLET_ORDERS) if w.order == "random"
                         else TRIPLET_ORDERS[(index + r) % len(TRIPLET_ORDERS)])
                served = [name]
                if w.suite is not None:
                    suites[w.suite] = served
                batch.append((served, order))
        where = {"1": self._base, "2": self.again, "H": self._head}
        groups = [[_unit_request(where[key].get(served[0]) or self._base[served[0]],
                                 [self._by_name[n] for n in served], self._env, self._harnesses,
                                 self.perf)
                   for key in order]
                  for served, order in batch]
        answers = _spawn_groups(self._spawner, groups,
                                [group_key(self._by_name[served[0]]) for served, _ in batch])
        for (served, order), raws in zip(batch, answers, strict=True):
            if not raws:  # its workload failed earlier in this batch
                continue
            for _ in raws:
                self.runs += 1
                if progress is not None:
                    progress(served[0])
            suite = self._by_name[served[0]].suite
            said = [said_of(raw) for raw in raws] if suite is not None else []
            if suite is not None:
                pace = self.pace.setdefault(suite, HarnessPace())
                for raw in raws:
                    pace.add(len(served), raw.wall_ns / 1e9)
            share = sum(raw.wall_ns for raw in raws) / 1e9 / len(served)
            for name in served:
                w, result = self._by_name[name], self.results[name]
                if result.failure:
                    continue
                result.timed_s += share
                if w.suite is not None:
                    self.served[name] = len(served)
                result.orders.append(order)
                arms = {"1": result.base, "2": result.again, "H": result.head}
                for made, (key, raw) in enumerate(zip(order, raws, strict=False)):
                    run = (record(result.noted(raw), w) if w.suite is None
                           else member_record(raw, w, said[made]))
                    if not _accept(result, arms[key], run, "head" if key == "H" else "base"):
                        break


def fallback_reason(raw: RawRun) -> str:
    """Why base again runs from base's own place: its run from the copy failed where
    base's did not (a build that names its own path, such as a virtual environment's
    scripts or a library's run path)."""
    if raw.not_started is not None:
        what = f"did not start: {raw.not_started}"
    elif raw.timed_out:
        what = "timed out"
    else:
        what = f"exited with status {raw.returncode}"
    return f"a run of base's build from its copy {what}; base again ran from base's own place"


# The arms of a counted run by their letter in a plan: base, base again (the same build,
# another run) and head.
COUNTED_ARMS = {"B": "base", "A": "base_again", "H": "head"}


# valgrind's counted runs beside a timed workload: base, head, base again, head
# (docs/verdict.md, "A second signal"); for metric: instructions, three of each arm and
# two of base again; perf's, ten rounds of each.
VALGRIND_PLAN = "BHAH"


VALGRIND_METRIC_PLAN = "BHAHBAHB"


PERF_METRIC_PLAN = "BAH" * 10


@dataclass(slots=True, kw_only=True)
class Counted:
    """A workload's counted runs: each arm's instructions, in the order made, and why they
    stopped short, if they did (in words)."""

    instructions: dict[str, list[int]] = field(
        default_factory=lambda: {arm: [] for arm in COUNTED_ARMS.values()})
    cycles: dict[str, list[int]] = field(
        default_factory=lambda: {arm: [] for arm in COUNTED_ARMS.values()})
    ll_misses: dict[str, list[int]] = field(
        default_factory=lambda: {arm: [] for arm in COUNTED_ARMS.values()})
    scaled: bool = False
    failure: str | None = None
    seconds: float = 0.0  # what the counted runs took together


def counted_runs(spawner: Spawner, w: WorkloadConfig, base: Target, head: Target,
                 env: Mapping[str, str], *, method: CountMethod, plan: str,
                 again: Target | None = None) -> Counted:
    """The counted runs of ``plan`` (letters of COUNTED_ARMS), each in its arm's worker
    (base again's from ``again``, else base's place), in one exchange; they stop at the
    first that failed or was not counted. Their times are not measurements: only their
    counts are kept."""
    where = {"B": base, "A": again or base, "H": head}
    sides = [(COUNTED_ARMS[key], where[key]) for key in plan]
    group = [request(tgt, w, env, method) for _, tgt in sides]
    answers = _spawn_groups(spawner, [group], [w.name])[0]
    counted = Counted(seconds=sum(raw.wall_ns for raw in answers) / 1e9)
    for (arm, _tgt), raw, made in zip(sides, answers, group, strict=False):
        run = record(raw, w, timeout_s=made.timeout_s)
        side = "head" if arm == "head" else "base"
        if run.failure is not None:
            counted.failure = f"the counted {side} run {run.error}"
            break
        if run.instructions is None:
            counted.failure = raw.count_error or f"the counted {side} run was not counted"
            break
        counted.instructions[arm].append(run.instructions)
        if run.cycles is not None:
            counted.cycles[arm].append(run.cycles)
        if run.ll_misses is not None:
            counted.ll_misses[arm].append(run.ll_misses)
        counted.scaled |= run.counts_scaled
    return counted
