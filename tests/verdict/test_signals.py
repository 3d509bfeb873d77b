"""The second signal (docs/verdict.md, "A second signal"): each branch of the joint rule
with the real judge on constructed samples large enough to be certain, the counts read,
metric: instructions, the peak-memory verdict and the estimate beyond a call."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest

from benchbot.core import codec
from benchbot.core.model import ArmRuns, Counts, PhaseRuns, Verdict
from benchbot.verdict import intervals, judge, sequential, signals
from benchbot.verdict.judge import Policy, Workload

RUN_NS = 1e8


def arm(times: Sequence[float], rss: Sequence[int] | None = None,
        instructions: Sequence[int] | None = None) -> ArmRuns:
    return ArmRuns(samples_ns=tuple(float(t) for t in times),
                   wall_ns=tuple(int(t) for t in times), cpu_ns=tuple(int(t) for t in times),
                   maxrss_kib=tuple(rss) if rss is not None else (50_000,) * len(times),
                   instructions=tuple(instructions) if instructions is not None else None)


def triplets(base: Sequence[float], again: Sequence[float], head: Sequence[float], *,
             looks: int, counts: Counts | None = None,
             rss: tuple[Sequence[int], Sequence[int], Sequence[int]] | None = None,
             instructions: tuple[Sequence[int], ...] | None = None,
             called_at: int | None = None) -> Workload:
    n = len(base)
    r = rss or (None, None, None)
    i = instructions or (None, None, None)
    b = arm(base, r[0], i[0])
    return Workload(name="w", parity=0.02, floor_ns=25_000.0, design="triplets", looks=looks,
                    counts=counts, called_at=called_at,
                    phases={"aa": PhaseRuns(arms={"base": b, "base_again": arm(again, r[1], i[1])},
                                            order="AB" * n),
                            "ab": PhaseRuns(arms={"base": b, "head": arm(head, r[2], i[2])},
                                            order="AB" * n)})


def runs(seed: int, n: int, spread: float, factor: float = 1.0) -> np.ndarray:
    return RUN_NS * factor * np.exp(np.random.default_rng(seed).normal(0.0, spread, n))


def overlapping(base: np.ndarray) -> np.ndarray:
    """Base's runs with slow runs (+10%, noise only adds time), more of them than any
    number of pairs below 51 spares, in the midst of a +10% head's runs (about half of
    head's above each, more than a slower call may leave above a spared run): the builds'
    runs overlap, so that below 51 pairs time alone calls nothing (docs/verdict.md, "Calls
    from few pairs")."""
    out = base.copy()
    out[: intervals.APART_SPARED + 1] = 1.1 * RUN_NS
    return out


def valgrind(base: int, head: int, again: int | None = None) -> Counts:
    return Counts(method="valgrind", why="valgrind: no hardware counters",
                  base=(base,), base_again=(again or base,), head=(head, head))


def judged(w: Workload) -> judge.Judged:
    return judge.judge([w], Policy()).workloads["w"]


# --- reading the counts ------------------------------------------------------------------

PHASES = triplets(runs(1, 20, 0.01), runs(2, 20, 0.01), runs(3, 20, 0.01), looks=2).phases


@pytest.mark.parametrize(("head", "reading"), [
    (1_000_000, "same"), (1_000_500, "same"), (1_050_000, "up"), (950_000, "down"),
    (1_010_000, "small"),
])
def test_exact_counts_read_as_the_rule_says(head: int, reading: str) -> None:
    got = signals.read_counts(valgrind(1_000_000, head), PHASES, parity=0.02)
    assert got.reading == reading, got.reading_why
    assert got.ratio == pytest.approx(head / 1_000_000)
    assert got.noise == 0.0 and got.aa_ratio == 1.0
    assert got.user_share == pytest.approx(1.0)
    assert signals.usable(got)


def test_counts_that_vary_by_themselves_are_unsteady_and_not_used() -> None:
    got = signals.read_counts(valgrind(1_000_000, 1_100_000, again=1_030_000), PHASES, parity=0.02)
    assert got.reading == "unsteady" and not signals.usable(got)


def test_counts_of_runs_mostly_outside_user_space_cpu_are_not_used() -> None:
    w = triplets(runs(1, 20, 0.01), runs(2, 20, 0.01), runs(3, 20, 0.01), looks=2)
    idle = {name: replace(p, arms={k: replace(a, cpu_ns=tuple(c // 4 for c in a.cpu_ns))
                                   for k, a in p.arms.items()}) for name, p in w.phases.items()}
    got = signals.read_counts(valgrind(1_000_000, 1_000_000), idle, parity=0.02)
    assert got.user_share == pytest.approx(0.25)
    assert not signals.usable(got) and "outside user-space" in (got.reading_why or "")


def test_perf_counts_of_every_run_read_per_triplet() -> None:
    n = 20
    w = triplets(runs(1, n, 0.01), runs(2, n, 0.01), runs(3, n, 0.01), looks=2,
                 instructions=([1000] * n, [1000] * n, [1040 + (i % 2) for i in range(n)]))
    counts = Counts(method="perf", why="perf: the CPU's counters", every_run=True)
    got = signals.read_counts(counts, w.phases, parity=0.02)
    assert got.ratio == pytest.approx(1.0405)
    assert got.reading == "up" and got.aa_ratio == 1.0


# --- the joint rule, each branch ---------------------------------------------------------

def test_a_time_call_with_the_same_instructions_is_held_back_within_the_layout_limit() -> None:
    n = 76
    w = triplets(runs(1, n, 0.01), runs(2, n, 0.01), runs(3, n, 0.01, 1.05), looks=6)
    assert judged(w).ab.outcome == "slower"  # type: ignore[union-attr]
    got = judged(replace(w, counts=valgrind(1_000_000, 1_000_000)))
    assert got.ab is not None and got.ab.outcome == "inconclusive"
    assert got.ab.reason_code == "same_counts" and "same instructions" in (got.ab.reason or "")
    assert sequential.stop_reason(got.ab, got.aa, pairs=n, max_pairs=1000,
                                  parity=0.02) == "cannot_help"


def test_a_call_that_placement_alone_nearly_makes_is_said_to_be_layout() -> None:
    """Base again (from its own place) +1.8%, head +3.5%: head over both base runs +2.6%,
    a call on time; the same instructions, and the A/A moved at least half as much."""
    n = 76
    w = triplets(runs(1, n, 0.002), runs(2, n, 0.002, 1.018), runs(3, n, 0.002, 1.035),
                 looks=6)
    alone = judged(w)
    assert alone.aa is not None and alone.aa.outcome not in ("slower", "faster")
    assert alone.ab is not None and alone.ab.outcome == "slower"
    got = judged(replace(w, counts=valgrind(1_000_000, 1_000_000))).ab
    assert got is not None and got.outcome == "inconclusive" and got.reason_code == "layout"
    assert (got.reason or "").startswith(signals.LAYOUT_WORDS)
    assert "from another place 1.8% either way" in (got.reason or "")
    assert sequential.stop_reason(got, alone.aa, pairs=n, max_pairs=1000,
                                  parity=0.02) == "cannot_help"


def test_a_move_the_a_a_did_not_nearly_make_stays_same_counts() -> None:
    time = Verdict(outcome="slower", n=76, ratio=1.05, aa_noise=0.02, tolerance=0.02,
                   noise=0.02)
    counts = replace(valgrind(1_000_000, 1_000_000), ratio=1.0, reading="same", noise=0.0,
                     user_share=1.0)
    got = signals.joint(time, counts, parity=0.02)
    assert got.reason_code == "same_counts" and not signals.layout_fragile(time)


def test_time_held_within_the_a_a_s_noise_with_the_same_instructions_says_layout() -> None:
    """Not a call: the A/A's noise (3%) set the tolerance over a move of +2.5%."""
    time = Verdict(outcome="inconclusive", reason_code="aa_noise", reason="…", n=40,
                   ratio=1.025, ci=(1.015, 1.035), aa_noise=0.03, noise=0.03, tolerance=0.03,
                   floor_med=0.001)
    counts = replace(valgrind(1_000_000, 1_000_000), ratio=1.0, reading="same", noise=0.0,
                     user_share=1.0)
    got = signals.joint(time, counts, parity=0.02)
    assert got.outcome == "inconclusive" and got.reason_code == "layout"
    # measuring goes on: the ratio has not left its tolerance, more pairs may settle it
    assert sequential.stop_reason(got, None, pairs=40, max_pairs=1000, parity=0.02) is None
    # within parity, or with other counts, the reason is time's own
    assert signals.joint(replace(time, ratio=1.015), counts, parity=0.02).reason_code == "aa_noise"
    up = replace(counts, ratio=1.03, reading="up")
    assert signals.joint(time, up, parity=0.02).reason_code == "aa_noise"


def test_a_time_call_beyond_the_layout_limit_stands_with_the_same_instructions() -> None:
    n = 76
    w = triplets(runs(1, n, 0.01), runs(2, n, 0.01), runs(3, n, 0.01, 1.25), looks=6,
                 counts=valgrind(1_000_000, 1_000_000))
    got = judged(w).ab
    assert got is not None and got.outcome == "slower" and got.settled_by == "time"
    assert "same instructions" in (got.reason or "")


def test_instructions_that_moved_let_time_call_before_the_fast_runs_follow() -> None:
    n = 34  # a call needs 51 pairs for the fast runs' side where the runs overlap: time alone waits
    w = triplets(overlapping(runs(1, n, 0.01)), runs(2, n, 0.01), runs(3, n, 0.01, 1.10), looks=4)
    alone = judged(w).ab
    assert alone is not None and alone.outcome == "inconclusive" and alone.reason_code == "few_runs"
    got = judged(replace(w, counts=valgrind(1_000_000, 1_100_000))).ab
    assert got is not None and got.outcome == "slower"
    assert got.settled_by == "time and instructions"
    # instructions moved the other way: no call
    other = judged(replace(w, counts=valgrind(1_000_000, 900_000))).ab
    assert other is not None and other.outcome == "inconclusive"


def test_the_same_instructions_settle_level_with_time_s_interval_at_the_whole_alpha() -> None:
    n = 51
    w = triplets(runs(11, n, 0.02), runs(12, n, 0.02), runs(13, n, 0.02), looks=5)
    alone = judged(w).ab
    assert alone is not None and alone.outcome == "inconclusive" and alone.reason_code == "spread"
    got = judged(replace(w, counts=valgrind(1_000_000, 1_000_000))).ab
    assert got is not None and got.outcome == "level"
    assert got.settled_by == "time and instructions"
    # instructions that moved settle nothing
    moved = judged(replace(w, counts=valgrind(1_000_000, 1_050_000))).ab
    assert moved is not None and moved.outcome == "inconclusive"


def test_the_same_instructions_settle_level_once_time_s_interval_holds_no_change_within_parity(
) -> None:
    """The interval at the whole alpha reaches past +2% but holds 1 and is no wider than
    ±2%: with the same instructions, level; with instructions that moved, not."""
    n = 384
    head = RUN_NS * np.exp(np.random.default_rng(0).normal(0.012, 0.1, n))
    w = triplets([RUN_NS] * n, [RUN_NS] * n, head, looks=10)
    alone = judged(w).ab
    assert alone is not None and alone.outcome == "inconclusive"
    whole = judge._whole(replace(w, counts=valgrind(1, 1)), Policy(), 1, alone)
    assert whole is not None and whole.ci is not None and whole.ci_half is not None
    assert whole.ci[0] < 1 < whole.ci[1] and whole.ci[1] > 1.02 and whole.ci_half <= 0.02
    got = judged(replace(w, counts=valgrind(1_000_000, 1_000_000))).ab
    assert got is not None and got.outcome == "level" and got.ci == whole.ci
    assert "holds no change" in (got.reason or "")
    moved = judged(replace(w, counts=valgrind(1_000_000, 1_050_000))).ab
    assert moved is not None and moved.outcome == "inconclusive"


def test_instructions_never_make_a_call_against_time() -> None:
    n = 76
    w = triplets(runs(1, n, 0.01), runs(2, n, 0.01), runs(3, n, 0.01, 1.05), looks=6,
                 counts=valgrind(1_000_000, 900_000))
    got = judged(w).ab
    assert got is not None and got.outcome == "slower" and got.reason_code == "counts_disagree"
    faster = triplets(runs(1, n, 0.01), runs(2, n, 0.01), runs(3, n, 0.01, 0.95), looks=6,
                      counts=valgrind(1_000_000, 1_000_000))
    assert judged(faster).ab.outcome == "inconclusive"  # type: ignore[union-attr]


def test_not_counted_gives_the_verdicts_of_before_byte_for_byte() -> None:
    cases = [triplets(runs(s, n, spread), runs(s + 1, n, spread), runs(s + 2, n, spread, f),
                      looks=k)
             for s, n, spread, f, k in [(1, 76, 0.01, 1.05, 6), (11, 51, 0.03, 1.0, 5),
                                        (1, 34, 0.01, 1.1, 4), (5, 10, 0.1, 1.0, 1)]]
    policy = Policy()
    for w in cases:
        before = judge._triplets(w, policy, 1)[1]  # the time rule alone, as before counts
        for counts in (None, Counts(method=None, why="off in the config")):
            got = judged(replace(w, counts=counts))
            assert got.ab is not None and got.final == got.ab
            # every call now also carries its estimate (the Hodges-Lehmann centre): nothing
            # else differs
            assert (got.ab.estimate is not None) == (got.ab.outcome in ("slower", "faster"))
            plain = replace(got.ab, estimate=None, estimate_ci=None, estimate_n=None)
            assert codec.encode(plain) == codec.encode(before)
    fixed = replace(cases[0], design="pairs", phases={
        "aa": cases[0].phases["aa"],
        "ab": cases[0].phases["ab"]})
    before_fixed = judge._phase(fixed, "ab", policy, 1, 1, judge._phase(fixed, "aa", policy, 0, 1, None))
    assert judged(fixed).ab == before_fixed


def test_metric_instructions_judges_the_counts_alone() -> None:
    def verdict(head: int) -> Verdict:
        return signals.metric_instructions(
            signals.read_counts(valgrind(1_000_000, head), {}, parity=0.02), parity=0.02)

    assert verdict(1_050_000).outcome == "slower"
    assert verdict(950_000).outcome == "faster"
    assert verdict(1_000_000).outcome == "level"
    assert verdict(1_010_000).reason_code == "below_parity"
    assert verdict(1_050_000).settled_by == "instructions"
    assert signals.metric_instructions(None, parity=0.02).outcome == "invalid"
    w = Workload(name="w", parity=0.02, floor_ns=25_000.0, metric="instructions",
                 counts=valgrind(1_000_000, 1_050_000))
    assert judged(w).final.outcome == "slower"  # type: ignore[union-attr]


# --- peak memory -------------------------------------------------------------------------

def rss(seed: int, n: int, kib: int) -> list[int]:
    return [kib + int(v) for v in np.random.default_rng(seed).integers(0, 300, n)]


def test_peak_memory_is_judged_on_its_own() -> None:
    n = 34
    t = (runs(1, n, 0.03), runs(2, n, 0.03), runs(3, n, 0.03))
    more = judged(triplets(*t, looks=4, rss=(rss(1, n, 66_000), rss(2, n, 66_000),
                                              rss(3, n, 72_600))))
    assert more.memory is not None and more.memory.outcome == "slower"
    assert more.memory.settled_by == "peak memory"
    same = judged(triplets(*t, looks=4, rss=(rss(1, n, 66_000), rss(2, n, 66_000),
                                              rss(3, n, 66_000))))
    assert same.memory is not None and same.memory.outcome == "level"
    assert more.ab == same.ab  # the time verdict does not see memory


def test_peak_memory_at_the_spawner_s_floor_is_not_judged() -> None:
    n = 34
    t = (runs(1, n, 0.03), runs(2, n, 0.03), runs(3, n, 0.03))
    small = (rss(1, n, 15_000), rss(2, n, 15_000), rss(3, n, 15_000))
    at_floor = judged(replace(triplets(*t, looks=4, rss=small), maxrss_floor_kib=14_900))
    assert at_floor.memory is not None and at_floor.memory.outcome == "invalid"
    assert at_floor.memory.reason_code == "rss_floor" and "14.6 MiB" in (at_floor.memory.reason or "")
    big = (rss(1, n, 66_000), rss(2, n, 66_000), rss(3, n, 72_600))
    above = judged(replace(triplets(*t, looks=4, rss=big), maxrss_floor_kib=14_900))
    assert above.memory is not None and above.memory.outcome == "slower"


# --- the estimate beyond a call ----------------------------------------------------------

def test_a_call_is_judged_on_its_first_pairs_and_estimated_on_all() -> None:
    n = 102
    base, again, head = runs(1, n, 0.02), runs(2, n, 0.02), runs(3, n, 0.02, 1.10)
    w = triplets(base, again, head, looks=5, called_at=51)
    first = triplets(base[:51], again[:51], head[:51], looks=5)
    got, at_call = judged(w).ab, judged(first).ab
    assert got is not None and at_call is not None and at_call.outcome == "slower"
    plain = {"estimate": None, "estimate_ci": None, "estimate_n": None}
    assert replace(got, **plain) == replace(at_call, **plain)  # type: ignore[arg-type]
    assert at_call.estimate_n == 51  # a call carries its estimate from the pairs it has
    assert got.estimate_n == n and got.estimate is not None and got.estimate_ci is not None
    assert got.estimate_ci[0] < got.estimate < got.estimate_ci[1]
    assert got.estimate == pytest.approx(1.10, abs=0.02)


def test_the_estimate_rule_measures_on_for_50_pairs_within_max_runs() -> None:
    assert sequential.estimate_pairs(51, 1000) == 101
    assert sequential.estimate_pairs(384, 1000) == 434
    assert sequential.estimate_pairs(976, 1000) == 1000


def test_the_hodges_lehmann_centre_has_the_signed_rank_interval() -> None:
    # (the estimate of a call was this centre until issue 30: benchmarks/centre.py)
    d = np.random.default_rng(7).normal(0.03, 0.1, 400)
    centre, lo, hi = intervals.pseudo_median(d, 0.05)
    walsh = [(d[i] + d[j]) / 2 for i in range(d.size) for j in range(i, d.size)]
    assert centre == pytest.approx(float(np.median(walsh)))
    assert lo < float(np.mean(d)) < hi and lo < centre < hi
    # about 1.96 standard errors of a mean of 400 such values each way (efficiency 95%)
    assert (hi - lo) / 2 == pytest.approx(1.96 * 0.1 / 20 / math.sqrt(0.955), rel=0.15)


def test_instructions_never_call_on_fewer_than_ten_pairs() -> None:
    n = 8
    w = triplets(runs(1, n, 0.01), runs(2, n, 0.01), runs(3, n, 0.01, 1.10), looks=1,
                 counts=valgrind(1_000_000, 1_100_000))
    fixed = replace(w, design="pairs")
    got = judged(fixed).ab
    assert got is not None and got.outcome == "inconclusive" and got.reason_code == "few_runs"


def test_the_estimate_of_a_throughput_reads_the_way_its_verdict_does() -> None:
    n = 102
    base, again, head = runs(1, n, 0.02), runs(2, n, 0.02), runs(3, n, 0.02, 1.10)
    w = replace(triplets(base, again, head, looks=5, called_at=51), better="higher")
    w = replace(w, phases={name: replace(p, arms={k: replace(a, values=a.samples_ns)
                                                  for k, a in p.arms.items()})
                           for name, p in w.phases.items()})
    got = judged(w).ab
    assert got is not None and got.outcome == "faster"  # 10% more throughput
    assert got.estimate is not None and got.estimate == pytest.approx(1 / 1.10, abs=0.02)


def test_instructions_are_never_in_the_time_geomean() -> None:
    from benchbot.core.model import Benchmark
    from benchbot.results.resultsdir import summarize

    def bench(name: str, metric: str, ratio: float) -> Benchmark:
        return Benchmark(name=name, metric=metric, arms={},  # type: ignore[arg-type]
                         verdict=Verdict(outcome="slower", ratio=ratio))

    summary = summarize([bench("t", "wall", 1.10), bench("i", "instructions", 2.0)], (), False)
    assert summary.geomean_ratio == pytest.approx(1.10)
    assert summary.slower == 2


def test_the_config_and_the_judge_default_to_the_same_memory_parity() -> None:
    from benchbot.config import config

    assert config.DEFAULT_MEMORY_PARITY == signals.MEMORY_PARITY == judge.Workload(
        name="w", parity=0.02, floor_ns=1.0).memory_parity


def test_instructions_that_moved_far_more_than_time_do_not_stand_in_for_the_fast_runs() -> None:
    """A slow mode made of extra work: two counted runs a build can read +25% where time's
    median moved +10%; such counts do not account for time and settle nothing."""
    n = 34
    w = triplets(overlapping(runs(1, n, 0.01)), runs(2, n, 0.01), runs(3, n, 0.01, 1.10), looks=4)
    assert judged(replace(w, counts=valgrind(1_000_000, 1_100_000))).ab.outcome == "slower"  # type: ignore[union-attr]
    far = judged(replace(w, counts=valgrind(1_000_000, 1_250_000))).ab
    assert far is not None and far.outcome == "inconclusive" and far.reason_code == "few_runs"


def test_the_estimate_is_measured_on_until_its_interval_is_narrow_enough() -> None:
    def called(half: float) -> Verdict:
        return Verdict(outcome="slower", n=51, ratio=1.05, estimate=1.05,
                       estimate_ci=(1.05 / (1 + half), 1.05 * (1 + half)))

    narrow = sequential.ESTIMATE_HALF * 0.9
    assert sequential.estimate_until(called(narrow), 101, 1000) is None
    # twice as wide: about four times the pairs
    wide = sequential.estimate_until(called(2 * sequential.ESTIMATE_HALF), 101, 1000)
    assert wide is not None and 380 <= wide <= 420
    assert sequential.estimate_until(called(0.2), 101, 1000) == 1000  # at most max_runs
    assert sequential.estimate_until(called(0.2), 1000, 1000) is None
    # just wider than the target: at least one look's worth more
    assert sequential.estimate_until(called(sequential.ESTIMATE_HALF * 1.01), 101, 1000) == 111


def test_metric_instructions_counted_by_perf_reads_its_counted_runs() -> None:
    """metric: instructions has no timed runs: perf's counts are its counted runs'."""
    counts = Counts(method="perf", why="perf", every_run=True, base=(1_000_000,) * 10,
                    base_again=(1_000_000,) * 10, head=(1_050_000,) * 10)
    w = Workload(name="w", parity=0.02, floor_ns=25_000.0, metric="instructions", counts=counts)
    got = judged(w)
    assert got.final is not None and got.final.outcome == "slower"
    assert got.counts is not None and got.counts.ratio == pytest.approx(1.05)
