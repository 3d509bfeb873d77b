"""Counts per benchmark judged beside time (benchbot.verdict.benchsignals; docs/verdict.md, "Counts
per benchmark"): literal verdicts for every branch of the rule, properties that must hold
for any figures (mirror symmetry, no call on the same work, a call only the way both
signals point), seeded sequences judged by the real judge at the real looks, the memory a
harness reports, and the suite's pooled noise."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from benchbot.core.model import ArmRuns, Counts, Family, PhaseRuns, Verdict
from benchbot.suites import suitecount
from benchbot.verdict import benchsignals, sequential, signals
from benchbot.verdict.judge import Policy, Workload, judge

PARITY = 0.02


def time(ratio: float, ci: tuple[float, float], *, outcome: str = "inconclusive", n: int = 22,
         code: str | None = "spread") -> Verdict:
    """Time's verdict at a look (only what the joint rule reads of it)."""
    return Verdict(outcome=outcome, reason="time's own", reason_code=code, n=n, ratio=ratio,  # type: ignore[arg-type]
                   ci=ci, tolerance=0.2)


def counts(head: float, *, again: float = 1.0, pooled: float | None = 0.0002,
           unit: str | None = "iteration") -> Counts:
    """Counts per unit read as the judge reads them: base 100,000, base again and head as
    factors of it."""
    raw = Counts(method="valgrind", why="test", unit=unit, units=200,  # type: ignore[arg-type]
                 base=(100_000.0,), base_again=(100_000.0 * again,), head=(100_000.0 * head,),
                 pooled_noise=pooled)
    return signals.read_counts(raw, {}, parity=PARITY)


def joint(t: Verdict, c: Counts | None, whole: Verdict | None = None) -> Verdict:
    return benchsignals.joint(t, c, parity=PARITY, whole=whole)


# --- literal verdicts -----------------------------------------------------------------


def test_the_same_work_and_time_holding_no_change_is_level() -> None:
    got = joint(time(1.03, (0.80, 1.30)), counts(1.0001), whole=time(1.03, (0.87, 1.15)))
    assert got.outcome == "level" and got.reason_code is None
    assert got.settled_by == "instructions and time"
    assert got.ci == (0.87, 1.15)  # the interval the level rests on: at alpha / m
    assert "no change beyond ±15.0%" in (got.reason or "")


def test_the_same_work_and_time_too_wide_for_a_level_goes_on() -> None:
    got = joint(time(1.0, (0.4, 2.0)), counts(1.0), whole=time(1.0, (0.55, 1.7)))
    assert got.outcome == "inconclusive" and got.reason_code == "spread"
    reach = max(math.log(1.7), -math.log(0.55))
    assert got.suggested_runs == math.ceil(22 * (reach / math.log(1.5)) ** 2)
    assert "±50%" in (got.reason or "")
    # and the budget is told those pairs, not time alone's thousands
    assert sequential.pairs_to_settle_uncapped(got, PARITY) == got.suggested_runs


def test_work_that_moved_less_than_parity_for_sure_settles_like_the_same() -> None:
    got = joint(time(1.05, (0.8, 1.3)), counts(1.008), whole=time(1.05, (0.9, 1.2)))
    assert (got.outcome, got.reason_code) == ("level", "below_parity")
    assert "real, but below the 2% parity" in (got.reason or "")
    # a band of noise that reaches past parity: time's verdict
    t = time(1.05, (0.8, 1.3))
    assert joint(t, counts(1.019, pooled=0.0005)) == t


def test_the_same_work_while_time_moved_at_the_looks_error_is_same_counts() -> None:
    got = joint(time(1.2, (1.05, 1.4)), counts(1.0), whole=time(1.2, (1.1, 1.3)))
    assert (got.outcome, got.reason_code) == ("inconclusive", "same_counts")
    assert sequential.stop_reason(got, None, pairs=22, max_pairs=1000,
                                  parity=PARITY) == "cannot_help"


def test_time_leaving_out_no_change_only_at_alpha_over_m_goes_on() -> None:
    got = joint(time(1.1, (0.95, 1.3)), counts(1.0), whole=time(1.1, (1.01, 1.2)))
    assert (got.outcome, got.reason_code) == ("inconclusive", "spread")
    assert sequential.stop_reason(got, None, pairs=22, max_pairs=1000, parity=PARITY) is None


@pytest.mark.parametrize("outcome", ["slower", "faster"])
def test_a_suite_benchmark_with_the_same_work_is_never_called_on_time(outcome: str) -> None:
    ratio, ci = (1.4, (1.2, 1.6)) if outcome == "slower" else (0.7, (0.6, 0.8))
    got = joint(time(ratio, ci, outcome=outcome, code=None), counts(1.0))
    assert (got.outcome, got.reason_code) == ("inconclusive", "same_counts")


def test_a_level_of_times_own_stays_times() -> None:
    got = joint(time(1.0, (0.99, 1.01), outcome="level", code=None), counts(1.0))
    assert (got.outcome, got.settled_by) == ("level", "time")


def test_work_that_moved_with_time_pointing_the_same_way_is_called() -> None:
    got = joint(time(1.03, (0.9, 1.2)), counts(1.05))
    assert (got.outcome, got.settled_by) == ("slower", "instructions and time")
    got = joint(time(0.96, (0.9, 1.02)), counts(0.95))
    assert (got.outcome, got.settled_by) == ("faster", "instructions and time")
    got = joint(time(1.08, (1.02, 1.2), outcome="slower", code=None), counts(1.05))
    assert (got.outcome, got.settled_by) == ("slower", "time and instructions")


def test_time_that_excludes_the_works_move_is_counts_disagree() -> None:
    got = joint(time(0.8, (0.7, 1.0)), counts(1.05))
    assert (got.outcome, got.reason_code) == ("inconclusive", "counts_disagree")
    assert sequential.stop_reason(got, None, pairs=22, max_pairs=1000, parity=PARITY) == "cannot_help"
    # time's own call the other way: the same
    got = joint(time(0.8, (0.7, 0.9), outcome="faster", code=None), counts(1.05))
    assert (got.outcome, got.reason_code) == ("inconclusive", "counts_disagree")


def test_time_that_calls_the_works_way_by_less_than_the_work_keeps_its_own_call() -> None:
    """Time +35% (+30% … +40%) for +49% of instructions (caches, overlapping instructions):
    time called it by itself, with its own error control; the call is time's, with time's
    figure. Without time's own call the same interval is counts_disagree."""
    got = joint(time(1.35, (1.30, 1.40), outcome="slower", code=None), counts(1.49))
    assert (got.outcome, got.settled_by, got.ratio) == ("slower", "time", 1.35)
    assert "less than the work, and calls it by itself" in got.reason
    got = joint(time(0.8, (0.75, 0.85), outcome="faster", code=None), counts(0.6))
    assert (got.outcome, got.settled_by) == ("faster", "time")
    # Time moved the work's way for sure (its interval excludes 1) but has not called it
    # by its own rule yet: measuring goes on, first in the budget, so that it may.
    got = joint(time(1.35, (1.30, 1.40)), counts(1.49))
    assert (got.outcome, got.reason_code) == ("inconclusive", "counts_ahead")
    assert "the same way by less" in got.reason
    assert sequential.stop_reason(got, None, pairs=22, max_pairs=1000, parity=PARITY) is None
    assert sequential.pending_change(got)
    # An interval that holds no change short of the work's move: the veto, and it stops.
    got = joint(time(1.03, (0.98, 1.09)), counts(1.49))
    assert (got.outcome, got.reason_code) == ("inconclusive", "counts_disagree")
    assert sequential.stop_reason(got, None, pairs=22, max_pairs=1000, parity=PARITY) == "cannot_help"


def test_time_pointing_the_other_way_within_its_interval_waits() -> None:
    got = joint(time(0.97, (0.85, 1.10)), counts(1.05))
    assert (got.outcome, got.reason_code) == ("inconclusive", "counts_ahead")
    assert sequential.pending_change(got)  # the budget goes to it first
    assert sequential.stop_reason(got, None, pairs=22, max_pairs=1000, parity=PARITY) is None


@pytest.mark.parametrize(("c", "why"), [
    (counts(1.019, pooled=0.0005), "a move below parity, its noise reaching past it"),
    (counts(1.0, again=1.02), "unsteady: base against base again 2%"),
    (counts(1.05, unit=None), "whole-run counts: the rule of a workload of its own"),
    (None, "not counted"),
])
def test_otherwise_times_verdict_stands(c: Counts | None, why: str) -> None:
    t = time(1.01, (0.8, 1.3))
    got = joint(t, c)
    assert (got.outcome, got.reason_code, got.reason) == (t.outcome, t.reason_code, t.reason), why


def test_time_that_cannot_judge_keeps_its_verdict() -> None:
    for code in ("aa_failed", "aa_aborted", "floor"):
        t = time(1.0, (0.9, 1.1), code=code)
        assert joint(t, counts(1.05)) == t
    few = time(1.03, (0.9, 1.2), n=8, code="few_runs")
    assert joint(few, counts(1.05)).outcome == "inconclusive"  # fewer than 10 pairs: no call


def test_counts_too_noisy_for_half_the_parity_settle_no_level() -> None:
    # own A/A 0.4%: a band of 1.2%, past half of 2% (the suite's noise as large: the harness's)
    noisy = counts(1.0, again=1.004, pooled=0.002)
    assert noisy.reading == "same"
    got = joint(time(1.0, (0.9, 1.1)), noisy, whole=time(1.0, (0.95, 1.05)))
    assert got.outcome == "inconclusive" and "too much to call the work the same" in (got.reason or "")


def test_counts_that_vary_by_themselves_from_process_to_process_are_not_used() -> None:
    # Go's map lookups, recorded (benchmarks/README.md, section 10): an unchanged benchmark
    # read +3.1% with its own A/A 0.83% against the suite's 0.03%; a 3x band let it through
    got = counts(1.0307, again=1.0083, pooled=0.0003)
    assert got.reading == "unsteady" and "28 times the suite's own noise" in (got.reading_why or "")
    t = time(1.08, (0.35, 2.05))
    assert joint(t, got) == t  # time alone: it calls nothing at that spread
    # the same own A/A where the suite's noise is of its size: the harness's, read as before
    assert counts(1.0307, again=1.0083, pooled=0.004).reading == "up"
    # a steady benchmark at the edge of a suite's spread (own 0.07%, 3.5 times) is read
    assert counts(1.05, again=1.0007, pooled=0.0002).reading == "up"
    # and a tiny own A/A is no sign, whatever the ratio (gbench: 0.04% against 0.003%)
    assert counts(1.05, again=1.0004, pooled=0.00003).reading == "up"


# --- properties ------------------------------------------------------------------------

_ratio = st.floats(0.5, 2.0)


def _mirror_verdict(v: Verdict) -> Verdict:
    flip = {"slower": "faster", "faster": "slower"}
    ci = None if v.ci is None else (1 / v.ci[1], 1 / v.ci[0])
    return replace(v, outcome=flip.get(v.outcome, v.outcome), ratio=1 / (v.ratio or 1), ci=ci)  # type: ignore[arg-type]


@st.composite
def looks(draw: st.DrawFn) -> tuple[Verdict, Verdict, Counts]:
    centre = draw(_ratio)
    lo = centre / draw(st.floats(1.0, 1.8))
    hi = centre * draw(st.floats(1.0, 1.8))
    shrink = draw(st.floats(0.5, 1.0))
    whole = time(centre, (centre / (centre / lo) ** shrink, centre * (hi / centre) ** shrink))
    call = draw(st.sampled_from([None, "slower", "faster"]))
    if call == "slower" and lo > 1:
        t = time(centre, (lo, hi), outcome="slower", code=None)
    elif call == "faster" and hi < 1:
        t = time(centre, (lo, hi), outcome="faster", code=None)
    else:
        t = time(centre, (lo, hi))
    c = counts(draw(st.floats(0.9, 1.1)), again=draw(st.floats(0.999, 1.001)))
    return t, whole, c


@settings(max_examples=300, deadline=None)
@given(looks(), st.floats(0.9, 1.1))
def test_swapping_the_arms_mirrors_the_verdict(drawn: tuple[Verdict, Verdict, Counts],
                                               head: float) -> None:
    t, whole, _ = drawn
    c, mirrored = counts(head, pooled=0.0002), counts(1 / head, pooled=0.0002)
    edges = [e for v in (t, whole) for e in (v.ci or ())]
    assume(all(abs(math.log(head / e)) > 1e-9 for e in edges))  # not on an edge: rounding
    assume(abs(abs(math.log(head)) - math.log1p(PARITY)) > 1e-9)
    limit = math.log1p(benchsignals.LEVEL_TIME_LIMIT)
    assume(all(abs(math.log(e)) > 1e-9 and abs(abs(math.log(e)) - limit) > 1e-9 for e in edges))
    got = joint(t, c, whole)
    back = joint(_mirror_verdict(t), mirrored, _mirror_verdict(whole))
    assert back.outcome == _mirror_verdict(got).outcome
    assert back.reason_code == got.reason_code


@settings(max_examples=300, deadline=None)
@given(looks())
def test_a_call_is_only_made_the_way_both_signals_point(drawn: tuple[Verdict, Verdict, Counts]) -> None:
    t, whole, c = drawn
    got = joint(t, c, whole)
    if got.outcome in ("slower", "faster"):
        up = got.outcome == "slower"
        assert c.reading in ("up" if up else "down", "small")  # never on the same work
        assert ((c.ratio or 1.0) > 1) == up  # the work moved the way of the call
        assert ((t.ratio or 1.0) > 1) == up
        if c.reading != "small":  # a move of parity: time's interval reaches it
            assert t.ci is not None
            assert t.ci[1] >= (c.ratio or 0) if up else t.ci[0] <= (c.ratio or 0)
        else:  # below parity: time called it itself
            assert t.outcome == got.outcome
    if got.outcome == "level" and got.settled_by != "time":
        assert c.reading in ("same", "small") and whole.ci is not None
        band = max(signals.SAME_FLOOR, signals.NOISE_TIMES * (c.noise or 0.0))
        assert abs(math.log(c.ratio or 1.0)) + band <= math.log1p(PARITY) or c.reading == "same"
        lo, hi = whole.ci
        assert lo <= 1 <= hi and max(hi, 1 / lo) <= 1 + benchsignals.LEVEL_TIME_LIMIT + 1e-12


# --- seeded sequences through the real judge --------------------------------------------


def _sequence(rng: np.random.Generator, work: float, time_factor: float, max_pairs: int = 140
              ) -> tuple[str, int]:
    """One benchmark, runs spreading ±25% (log-normal, sigma 0.15), measured look by look
    until it stops: the outcome and the pairs."""
    def runs(factor: float) -> np.ndarray:
        return 1e5 * factor * rng.lognormal(0.0, 0.15, max_pairs)
    base, again, head = runs(1.0), runs(1.0), runs(time_factor)
    c = Counts(method="valgrind", why="seeded", unit="iteration", units=300,
               base=(5e4 * (1 + rng.normal(0, 3e-4)),), base_again=(5e4 * (1 + rng.normal(0, 3e-4)),),
               head=(5e4 * work * (1 + rng.normal(0, 3e-4)),), pooled_noise=3e-4)
    policy = Policy(alpha=0.05, family=Family(sequential=25, fixed=0))
    for look, n in enumerate(sequential.looks(max_pairs), start=1):
        def arm(v: np.ndarray, n: int = n) -> ArmRuns:
            return ArmRuns(samples_ns=tuple(float(x) for x in v[:n]))
        phases = {"aa": PhaseRuns(arms={"base": arm(base), "base_again": arm(again)}, order="AB" * n),
                  "ab": PhaseRuns(arms={"base": arm(base), "head": arm(head)}, order="AB" * n)}
        w = Workload(name="b", parity=PARITY, floor_ns=0.001, phases=phases, design="triplets",
                     looks=look, counts=c, metric="reported", judge_memory=False)
        judged = judge([w], policy).workloads["b"]
        assert judged.ab is not None
        if sequential.stop_reason(judged.ab, judged.aa, pairs=n, max_pairs=max_pairs,
                                  parity=PARITY) is not None:
            return judged.ab.outcome, n
    return judged.ab.outcome, max_pairs


def test_seeded_identical_work_is_level_and_never_called() -> None:
    rng = np.random.default_rng(29)
    got = [_sequence(rng, 1.0, 1.0) for _ in range(15)]
    outcomes = [o for o, _ in got]
    assert "slower" not in outcomes and "faster" not in outcomes
    assert outcomes.count("level") >= 13, got


def test_seeded_five_percent_more_work_is_called_slower() -> None:
    rng = np.random.default_rng(31)
    got = [_sequence(rng, 1.05, 1.05) for _ in range(15)]
    outcomes = [o for o, _ in got]
    assert "faster" not in outcomes and "level" not in outcomes
    assert outcomes.count("slower") >= 13, got


# --- the memory a harness reports --------------------------------------------------------


def _phases(base: float, head: float, allocs: tuple[float, float] = (3, 3), n: int = 12,
            bytes_: bool = True) -> dict[str, PhaseRuns]:
    def arm(b: float, a: float) -> ArmRuns:
        return ArmRuns(samples_ns=(1.0,) * n, bytes_op=(b,) * n if bytes_ else None,
                       allocs_op=(a,) * n if bytes_ else None)
    return {"aa": PhaseRuns(arms={"base": arm(base, allocs[0]), "base_again": arm(base, allocs[0])},
                            order="AB" * n),
            "ab": PhaseRuns(arms={"base": arm(base, allocs[0]), "head": arm(head, allocs[1])},
                            order="AB" * n)}


@pytest.mark.parametrize(("phases", "outcome", "said"), [
    (_phases(0, 0, (0, 0)), "level", None),  # allocates nothing in either
    (_phases(0, 64, (0, 1)), "slower", "B/op +6400.0%"),  # from none: judged on value + 1
    (_phases(1000, 1050, (3, 3)), "slower", "B/op +5.0%"),
    (_phases(1000, 1010, (3, 3)), "level", None),  # +1%: within the 3% memory parity
    (_phases(1000, 1100, (30, 20)), "inconclusive", "they disagree"),
])
def test_the_memory_a_harness_reports_is_judged(phases: dict[str, PhaseRuns], outcome: str,
                                                said: str | None) -> None:
    got = benchsignals.memory(phases, parity=0.03, alpha=0.05, look_alpha=0.001, seed=1,
                              triplets=True)
    assert got is not None and got.outcome == outcome
    if said is not None:
        assert said in (got.reason or "")


def test_no_memory_verdict_where_the_harness_reported_none() -> None:
    assert benchsignals.memory(_phases(0, 0, bytes_=False), parity=0.03, alpha=0.05,
                               look_alpha=0.001, seed=1, triplets=True) is None


# --- the suite's pooled noise -----------------------------------------------------------


def test_the_suites_pooled_noise_comes_from_every_benchmarks_a_a() -> None:
    # base again - base, times n: base again's larger run less base's (both against base's
    # small run), 2,000 instructions in all of them but one: sigma = 2,000 / (sqrt 2 x 0.6745)
    names = [f"b{i}" for i in range(6)]
    got = {name: Counts(method="valgrind", why="t", unit="iteration", units=100,
                        base=(50_000.0,), base_again=(50_000.0 + d / 100,), head=(50_000.0,))
           for name, d in zip(names, (2000, -2000, 2000, -2000, 2000, 40_000), strict=True)}
    suitecount._pool_noise(got, names)
    sigma = 2000 / (math.sqrt(2) * 0.6745)
    for name in names:
        assert got[name].pooled_noise == pytest.approx(math.sqrt(2) * sigma / (100 * 50_000.0))
    few = {n: got[n] for n in names[:3]}
    suitecount._pool_noise(few := {n: replace(c, pooled_noise=None) for n, c in few.items()}, names[:3])
    assert all(c.pooled_noise is None for c in few.values())  # too few to pool


def test_figures_that_never_vary_are_judged_at_once() -> None:
    # 10 pairs at a first look's error hold no finite interval; B/op that never varies
    # needs none
    got = benchsignals.memory(_phases(480, 480, (7, 7), n=10), parity=0.03, alpha=0.05,
                              look_alpha=0.05 / (25 * 2), seed=1, triplets=True)
    assert got is not None and got.outcome == "level"


def test_figures_that_vary_are_judged_with_the_time_rule() -> None:
    rng = np.random.default_rng(7)
    n = 40

    def arm(centre: float) -> ArmRuns:
        values = tuple(float(v) for v in centre * (1 + rng.normal(0, 0.002, n)))
        return ArmRuns(samples_ns=(1.0,) * n, bytes_op=values, allocs_op=(3.0,) * n)

    phases = {"aa": PhaseRuns(arms={"base": arm(16_600), "base_again": arm(16_600)}, order="AB" * n),
              "ab": PhaseRuns(arms={"base": arm(16_600), "head": arm(16_600 * 1.06)}, order="AB" * n)}
    got = benchsignals.memory(phases, parity=0.03, alpha=0.05, look_alpha=0.01, seed=1,
                              triplets=True)
    assert got is not None and got.outcome == "slower" and "B/op +6" in (got.reason or "")


# --- counts that vary from process to process: two samples ------------------------------


def sampled(work: float, spread: float, rng: np.random.Generator, *, n: int = suitecount.SAMPLES,
            ) -> Counts:
    """A benchmark's counts per unit from ``n`` processes a build, each by its own seed
    (log-normal, ``spread`` a process): base's first, base again's two, then base's rest."""
    base = 50_000.0 * rng.lognormal(0.0, spread, n)
    head = 50_000.0 * work * rng.lognormal(0.0, spread, n)
    raw = Counts(method="valgrind", why="test", unit="iteration", units=200, samples=n,
                 base=(base[0], *base[3:]), base_again=tuple(base[1:3]), head=tuple(head),
                 pooled_noise=2e-4)
    return signals.read_counts(raw, {}, parity=PARITY)


@pytest.mark.parametrize("spread", [0.01, 0.015])
def test_sampled_counts_at_parity_read_the_same_as_rarely_as_their_errors_allow(spread: float) -> None:
    # the level's error on the counts' side: a change of exactly parity read "same"
    rng = np.random.default_rng(11)
    readings = [sampled(1 + PARITY, spread, rng).reading for _ in range(3000)]
    assert readings.count("same") / len(readings) <= 0.002  # one-sided, 3.3 errors, and t's tails
    assert "down" not in readings


def test_sampled_counts_of_an_identical_head_read_the_same_and_a_change_moves() -> None:
    rng = np.random.default_rng(12)
    same = [sampled(1.0, 0.01, rng) for _ in range(500)]
    assert sum(c.reading == "same" for c in same) >= 0.97 * len(same)
    assert not any(c.reading in ("up", "down") for c in same)
    assert all(abs(math.log(c.ratio or 0)) < 0.02 for c in same)
    assert [sampled(1.05, 0.01, rng).reading for _ in range(200)].count("up") >= 198
    assert [sampled(1 / 1.05, 0.01, rng).reading for _ in range(200)].count("down") >= 198
    wide = sampled(1.0, 0.08, rng)  # a seed moving 8%: no number of processes here tells
    assert wide.reading == "unsteady" and "neither inside the 2% parity" in (wide.reading_why or "")


def test_sampled_counts_the_same_let_a_wide_band_stand_where_it_lies_within_parity() -> None:
    # a band of 1.2% is past half the parity, which deterministic counts may not reach, but
    # the samples' band is their reading's whole reach: within parity, the work is the same
    c = sampled(1.0, 0.012, np.random.default_rng(13))
    assert c.reading == "same" and 3 * (c.noise or 0) > 0.5 * math.log1p(PARITY)
    got = joint(time(1.02, (0.85, 1.25)), c, whole=time(1.02, (0.88, 1.2)))
    assert got.outcome == "level" and got.settled_by == "instructions and time", got.reason
    assert f"{suitecount.SAMPLES} processes a build" in (got.reason or "")
    # and the mirror: the arms swapped read the same, the other way
    swapped = signals.read_counts(replace(c, base=c.head[:1] + c.head[3:], base_again=c.head[1:3],
                                          head=(*c.base, *c.base_again)), {}, parity=PARITY)
    assert swapped.reading == "same"
    assert math.log(swapped.ratio or 0) == pytest.approx(-math.log(c.ratio or 0), abs=1e-12)


def test_counts_the_same_but_too_wide_to_settle_are_sampled_too() -> None:
    # Go's map iteration once read +0.3% with one build's counts 0.35% apart: the same, but
    # a band of 1.05% is past half the parity, and it was left to time alone
    from benchbot.sandbox.spawn import SpawnRequest

    wide = counts(1.005, again=1.0035, pooled=0.0012)
    assert wide.reading == "same" and benchsignals.too_wide(wide, PARITY)
    narrow = counts(1.0, again=1.0)
    assert narrow.reading == "same" and not benchsignals.too_wide(narrow, PARITY)
    request = SpawnRequest(argv=("suite.test",), cwd="/", env=(), timeout_s=5.0)
    plan = suitecount._Plan(method="valgrind", why="test", n=200, bench="B",
                            requests=tuple((arm, size, request) for arm, size in suitecount.PLAN))
    got = suitecount._to_sample({"wide": wide, "narrow": narrow}, {"wide": plan, "narrow": plan},
                                {"wide": PARITY, "narrow": PARITY}, suitecount.SAMPLES)
    assert list(got) == ["wide"]  # the narrow one settles as it is
    assert [arm for arm, _, _ in got["wide"].requests].count("head") == suitecount.SAMPLES - 1
    assert all(size == 1 for _, size, _ in got["wide"].requests)  # the larger runs alone
    sampled = replace(wide, samples=suitecount.SAMPLES)  # a sample is judged as one
    assert not benchsignals.too_wide(sampled, PARITY)
