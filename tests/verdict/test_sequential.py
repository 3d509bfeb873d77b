"""Sequential measuring's arithmetic: the looks, the error each spends, when to stop.

The error control is checked the way it is meant to hold: identical arms judged at
every look of the schedule, many times over, call a change no more often than alpha.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from benchbot.core.model import ArmRuns, Family, PhaseRuns, Verdict
from benchbot.verdict import intervals, sequential, stats
from benchbot.verdict.judge import Policy, Workload, judge, rule_for
from benchbot.verdict.sequential import alpha_at, looks, stop_reason


def test_looks_grow_by_half_from_ten_and_end_at_max_runs() -> None:
    assert looks(1000)[:6] == (10, 15, 22, 34, 51, 76)
    assert looks(1000)[-1] == 1000
    assert looks(10) == (10,)
    assert looks(12) == (10, 12)
    for most in (10, 11, 57, 200, 999, 1000):
        schedule = looks(most)
        assert schedule[-1] == most
        assert all(a < b for a, b in itertools.pairwise(schedule))


def test_the_looks_of_all_workloads_spend_no_more_than_alpha() -> None:
    for family in (1, 3, 40):
        spent = sum(alpha_at(k, 0.05, family) for k in range(1, len(looks(1000)) + 1))
        assert spent * family <= 0.05
        assert math.isclose(sum(alpha_at(k, 0.05, 1) for k in range(1, 10**5)), 0.05, rel_tol=1e-4)
    spends = [alpha_at(k, 0.05, 1) for k in range(1, 14)]
    assert spends == sorted(spends, reverse=True) and spends[0] < 0.05  # each look is stricter
    assert alpha_at(1, 0.05, 10) == alpha_at(1, 0.05, 1) / 10  # and more so for a larger family


def _triplet_workload(base: list[float], again: list[float], head: list[float],
                      look: int) -> Workload:
    def arm(values: list[float]) -> ArmRuns:
        ns = tuple(values)
        return ArmRuns(samples_ns=ns, wall_ns=tuple(int(v) for v in ns), cpu_ns=ns,
                       maxrss_kib=tuple(1 for _ in ns))

    n = len(head)
    return Workload(
        name="w", parity=0.02, floor_ns=25_000.0, better="lower", design="triplets", looks=look,
        phases={"aa": PhaseRuns(arms={"base": arm(base), "base_again": arm(again)}, order="AB" * n),
                "ab": PhaseRuns(arms={"base": arm(base), "head": arm(head)}, order="AB" * n)},
    )


def _sequence(rng: np.random.Generator, *, shift: float, noise: float, seed: int) -> str:
    """One workload measured through the whole schedule up to 200 pairs: its first call
    (or the outcome at the last look)."""
    n = 200
    drift = np.exp(np.cumsum(rng.normal(0, 0.002, n)))  # the machine wanders; pairs cancel it
    base, again, head = (drift * 10e6 * rng.lognormal(0, noise, n) for _ in range(3))
    head = head * shift
    policy = Policy(alpha=0.05, aa=True, seed=seed)
    outcome = "inconclusive"
    for k, m in enumerate(looks(n), start=1):
        w = _triplet_workload(list(base[:m]), list(again[:m]), list(head[:m]), k)
        final = judge([w], policy).workloads["w"].final
        assert final is not None
        outcome = final.outcome
        if outcome in ("slower", "faster", "level"):
            return outcome
    return outcome


@pytest.mark.slow
def test_identical_arms_looked_at_again_and_again_are_called_different_rarely() -> None:
    rng = np.random.default_rng(2024)
    outcomes = [_sequence(rng, shift=1.0, noise=0.03, seed=i) for i in range(120)]
    false = sum(o in ("slower", "faster") for o in outcomes)
    # alpha is 5% for all looks together, and the intervals are exact, so the rate may be
    # at most that; with the parity band on top it is far lower (none in these 120, which
    # are fixed by the seed). A rule spending 30% a look calls 7 of them.
    assert false <= 2, outcomes
    assert outcomes.count("level") >= 110  # and nearly all settle as level


def test_a_clear_change_is_found_at_an_early_look() -> None:
    rng = np.random.default_rng(7)
    outcomes = [_sequence(rng, shift=1.10, noise=0.03, seed=i) for i in range(20)]
    assert outcomes == ["slower"] * 20
    outcomes = [_sequence(rng, shift=0.90, noise=0.03, seed=i) for i in range(20)]
    assert outcomes == ["faster"] * 20


def _verdict(**over: object) -> Verdict:
    fields: dict[str, object] = dict(outcome="inconclusive", n=30, ratio=1.0, ci=(0.97, 1.03),
                                     ci_half=0.03, best_ratio=1.0, low_ratio=1.0,
                                     low_ci_half=0.01, tolerance=0.03, best_tolerance=0.02,
                                     reason_code="spread")
    fields.update(over)
    return Verdict(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(("ab", "aa", "expected"), [
    (_verdict(outcome="slower", reason_code=None), None, "settled"),
    (_verdict(outcome="level", reason_code=None), None, "settled"),
    (_verdict(), None, None),
    (_verdict(reason_code="floor"), None, "cannot_help"),
    # medians apart, best runs level with an interval inside parity: only timing modes
    (_verdict(reason_code="timing_modes", ratio=1.06, low_ratio=1.004, low_ci_half=0.01), None,
     "cannot_help"),
    # the best runs' interval still reaches past parity: more runs may tell
    (_verdict(reason_code="timing_modes", ratio=1.06, low_ratio=1.004, low_ci_half=0.03), None,
     None),
    (_verdict(reason_code="best_disagree", ratio=1.06, low_ratio=1.015, low_ci_half=0.01), None,
     None),
    # the same, faster: the best runs follow, their interval is merely wide yet
    (_verdict(reason_code="timing_modes", ratio=0.958, low_ratio=0.966, low_ci_half=0.04,
              best_tolerance=0.04), None, None),
    (_verdict(reason_code="timing_modes", ratio=0.94, low_ratio=0.996, low_ci_half=0.01), None,
     "cannot_help"),
    # an early look: the best runs read the other way, but their interval is wide
    (_verdict(reason_code="best_disagree", ratio=1.06, low_ratio=0.99, low_ci_half=0.05,
              best_tolerance=0.05), None, None),
    # the side a call must clear is narrow, but the far side reaches past parity: the fast
    # runs may yet move as far as the median (a long fast tail), so measuring goes on
    (_verdict(reason_code="best_disagree", ratio=1.06, low_ratio=1.004, low_ci_half=0.01,
              low_ci_far=0.05), None, None),
    (_verdict(reason_code="best_disagree", ratio=1.06, low_ratio=1.004, low_ci_half=0.05,
              low_ci_far=0.01), None, "cannot_help"),
    (_verdict(), _verdict(outcome="faster", reason_code=None), "aa_failed"),
    (_verdict(outcome="invalid", reason_code="run_failed"), None, "failed"),
])
def test_why_a_workload_stops(ab: Verdict, aa: Verdict | None, expected: str | None) -> None:
    assert stop_reason(ab, aa, pairs=30, max_pairs=1000, parity=0.02) == expected


def test_a_workload_too_fast_to_time_stops_as_such_not_as_a_failed_run() -> None:
    """A program whose median lies below the 25 us floor of process timing, and a harness
    that reports 0 ns: both invalid, and measuring stops on it, but no run failed."""
    rule = stats.Rule(parity=0.02, alpha=0.05, floor_ns=25_000.0, seed=1)
    below = stats.compare([10_000.0] * 12, [10_100.0] * 12, rule=rule)
    zero = stats.compare([0.0] * 12, [0.0] * 12, rule=rule)
    failed = stats.invalid("run_failed", "the head run exited with status 2")
    for verdict in (below, zero):
        assert verdict.outcome == "invalid" and verdict.reason_code == "too_fast"
        stop = stop_reason(verdict, None, pairs=12, max_pairs=1000, parity=0.02)
        assert stop == "failed" and sequential.why(stop, verdict) == "too fast to time"
    assert sequential.why("failed", failed) == "a run failed"
    assert sequential.why("budget", below) == sequential.WHY["budget"]


@pytest.mark.parametrize(("ab", "expected"), [
    # the median left its tolerance; the best-run side or the 51-pair start holds it back
    (_verdict(reason_code="timing_modes", ratio=1.04, tolerance=0.02), True),
    (_verdict(reason_code="best_disagree", ratio=0.95, tolerance=0.03), True),
    (_verdict(reason_code="few_runs", ratio=1.05, tolerance=0.02), True),
    # the median has not left its tolerance: nothing found yet
    (_verdict(reason_code="spread", ratio=1.04, tolerance=0.05), False),
    (_verdict(reason_code="few_runs", ratio=1.01, tolerance=0.02), False),
    # decided, or waiting on something more runs cannot change
    (_verdict(outcome="slower", reason_code=None, ratio=1.04, tolerance=0.02), False),
    (_verdict(reason_code="floor", ratio=1.04, tolerance=0.02), False),
    (None, False),
])
def test_a_pending_change_is_a_median_that_left_its_tolerance_alone(ab: Verdict | None,
                                                                     expected: bool) -> None:
    assert sequential.pending_change(ab) is expected


def test_max_runs_stops_what_has_not_settled() -> None:
    assert stop_reason(_verdict(), None, pairs=100, max_pairs=100, parity=0.02) == "max_runs"
    assert stop_reason(_verdict(outcome="slower", reason_code=None), None, pairs=100,
                       max_pairs=100, parity=0.02) == "settled"


def test_pairs_to_settle_follows_the_shrinking_interval() -> None:
    v = _verdict(n=40, ratio=1.0, ci_half=0.04)
    need = sequential.pairs_to_settle(v, 0.02, max_pairs=1000)
    # the interval must shrink to half the parity band: (0.04 / 0.01)^2 = 16 times the pairs
    assert 550 <= need <= 700
    assert sequential.pairs_to_settle(v, 0.02, max_pairs=300) == 300
    assert sequential.pairs_to_settle(None, 0.02, max_pairs=300) == 300


def test_the_low_side_has_an_interval_that_shrinks_with_the_runs() -> None:
    rng = np.random.default_rng(3)
    rule = stats.Rule(look_alpha=0.0125, low_quantile=0.1, seed=1)
    few = [rng.lognormal(np.log(1e7), 0.05, 10) for _ in range(3)]
    many = [rng.lognormal(np.log(1e7), 0.05, 400) for _ in range(3)]
    v_few = stats.compare(few[0], few[2], rule=rule, low=((few[0], few[1]), few[2]))
    v_many = stats.compare(many[0], many[2], rule=rule, low=((many[0], many[1]), many[2]))
    assert v_few.low_ci_half is not None and v_many.low_ci_half is not None
    assert v_few.low_ci_half > 2 * v_many.low_ci_half
    # shown, not a bar a call must clear: the best-run side's tolerance is the spec's
    assert v_few.best_tolerance == v_many.best_tolerance == rule.parity


def _sides(values: np.ndarray) -> tuple[float, float]:
    """How far the 10th percentile's interval reaches below and above it (log scale)."""
    logs = np.sort(np.log(values))
    point = float(np.quantile(logs, 0.1))
    lo, hi = intervals.order_interval(logs, 0.1, intervals.LOW_ALPHA, clip=True)
    return point - lo, hi - point


@pytest.mark.parametrize("shift", [1.04, 1 / 1.04])
def test_a_call_rests_on_the_side_of_the_fast_runs_interval_toward_no_change(
        shift: float) -> None:
    """Runs with a long fast tail (as the demo's sort has) give their 10th percentile an
    interval twice as long below as above. A slower call must clear the ratio's lower edge:
    head's lower side with the base arms' upper sides; a faster call the upper edge."""
    rng = np.random.default_rng(11)

    def runs(scale: float) -> np.ndarray:
        body = rng.lognormal(np.log(1e7 * scale), 0.01, 120)
        tail = rng.random(120) < 0.15  # a sparse fast tail, up to 12% below the body
        return np.where(tail, body * rng.uniform(0.88, 1.0, 120), body)

    base1, base2, head = runs(1.0), runs(1.0), runs(shift)
    rule = stats.Rule(look_alpha=0.0125, low_quantile=0.1, seed=1)
    v = stats.compare(base1, head, rule=rule, low=((base1, base2), head))
    (b1_lo, b1_hi), (b2_lo, b2_hi), (h_lo, h_hi) = _sides(base1), _sides(base2), _sides(head)
    down = math.hypot(h_lo, math.hypot(b1_hi, b2_hi) / 2)
    up = math.hypot(h_hi, math.hypot(b1_lo, b2_lo) / 2)
    near, far = (down, up) if shift > 1 else (up, down)
    assert v.low_ci_half == pytest.approx(math.expm1(near))
    assert v.low_ci_far == pytest.approx(math.expm1(far))
    # narrower than an interval as wide as its longer side each way (how it was judged
    # before): by the base arms' short upper sides for slower, head's for faster
    wide = math.hypot(max(h_lo, h_hi), math.hypot(max(b1_lo, b1_hi), max(b2_lo, b2_hi)) / 2)
    assert near < 0.9 * wide
    assert v.best_tolerance == 0.02  # max(parity, floor): the interval is not part of it
    # the lower depths: head's against the geometric mean of the base arms'
    tail = [float(np.quantile(np.log(a), stats.TAIL_QUANTILE)) for a in (base1, base2, head)]
    assert v.tail_ratio == pytest.approx(math.exp(tail[2] - (tail[0] + tail[1]) / 2))
    fastest = [float(np.log(a.min())) for a in (base1, base2, head)]
    assert v.best_ratio == pytest.approx(math.exp(fastest[2] - (fastest[0] + fastest[1]) / 2))


def test_fast_runs_that_move_far_less_than_the_median_are_not_a_change() -> None:
    """Biased timing modes: head lands in the slow mode (1.25x) in 80% of its runs where
    base does in 30%, and its fast mode reads 3% slower. The median of per-pair ratios
    moves by about 20%, the 10th percentile by 3%: past parity, but not with the median."""
    rng = np.random.default_rng(11)
    n = 400

    def runs(slow_share: float, fast_ms: float) -> list[float]:
        slow = rng.random(n) < slow_share
        return list(np.where(slow, 1.25 * 10.0, fast_ms) * 1e6 * rng.lognormal(0, 0.004, n))

    base, again, head = runs(0.3, 10.0), runs(0.3, 10.0), runs(0.8, 10.3)
    w = _triplet_workload(base, again, head, look=8)
    final = judge([w], Policy(alpha=0.05, aa=True, seed=3)).workloads["w"].final
    assert final is not None and final.ratio is not None and final.low_ratio is not None
    assert final.ratio > 1.05 and 1.02 < final.low_ratio < 1.04
    assert final.outcome == "inconclusive", final
    assert final.reason_code in ("best_disagree", "timing_modes")
    # and the same fast-mode shift with the median moving alike is a change
    head_alike = runs(0.3, 10.3)
    head_alike = [h * (1.03 if h > 11e6 else 1.0) for h in head_alike]
    w = _triplet_workload(base, again, head_alike, look=8)
    final = judge([w], Policy(alpha=0.05, aa=True, seed=3)).workloads["w"].final
    assert final is not None and final.outcome == "slower", final


def test_no_change_is_called_before_the_fast_runs_can_be_bounded() -> None:
    """Every run of head's first ten is 25% slower than both base runs of its round, which
    fall in a fast and a slow mode alike. Its median and its fastest runs both read +25%,
    but a 10th percentile of ten runs has no lower bound at 1%: no call before 51 pairs."""
    assert intervals.low_bounded_from(0.1) == 51
    fast_slow = [10.0e6, 12.5e6] * 5
    base, again = fast_slow, [v * 1.001 for v in fast_slow]
    head = [v * 1.25 for v in fast_slow]
    final = judge([_triplet_workload(base, again, head, look=1)],
                  Policy(alpha=0.05, aa=True, seed=3)).workloads["w"].final
    assert final is not None and final.ratio is not None and final.ratio > 1.2
    assert final.outcome == "inconclusive" and final.reason_code == "few_runs", final
    assert final.suggested_runs == 51 and "called from 51 pairs" in (final.reason or "")
    assert stop_reason(final, None, pairs=10, max_pairs=1000, parity=0.02) is None  # measure on
    # the same +25% on every run, at 51 pairs, is a change
    rng = np.random.default_rng(5)
    base, again = (list(1e7 * rng.lognormal(0, 0.01, 51)) for _ in range(2))
    head = list(1.25e7 * rng.lognormal(0, 0.01, 51))
    final = judge([_triplet_workload(base, again, head, look=5)],
                  Policy(alpha=0.05, aa=True, seed=3)).workloads["w"].final
    assert final is not None and final.outcome == "slower", final


def test_a_low_quantile_that_moves_while_the_fastest_runs_do_not_is_not_a_change() -> None:
    """Biased modes with wide modes: head slow (1.25x) in 70% of its runs, base in 50%, each
    run its mode's time plus noise that only adds (exponential, 15% on average). Head's 10th
    percentile lies a third of the way into its fast mode, base's a fifth: it moves with the
    median though nothing changed per run. The fastest runs stay level and stop the call."""
    def runs(rng: np.random.Generator, slow_share: float) -> list[float]:
        slow = rng.random(865) < slow_share
        return list(np.where(slow, 12.5, 10.0) * 1e6 * (1 + rng.exponential(0.15, 865)))

    low_moved = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        base, again, head = runs(rng, 0.5), runs(rng, 0.5), runs(rng, 0.7)
        final = judge([_triplet_workload(base, again, head, look=12)],
                      Policy(alpha=0.05, aa=True, seed=3)).workloads["w"].final
        assert final is not None and final.ratio is not None and final.low_ratio is not None
        assert final.best_ratio is not None and final.best_tolerance is not None
        assert final.outcome == "inconclusive", final
        assert abs(final.best_ratio - 1) < 0.005  # the fastest runs: level
        if math.log(final.low_ratio) > max(math.log1p(final.best_tolerance),
                                           stats.LOW_AGREEMENT * math.log(final.ratio)):
            low_moved += 1  # the 10th percentile alone would have called it slower
            reason = final.reason or ""
            assert "and the fast runs (10th percentile) +" in reason, reason
            assert "the fastest +0." in reason or "the fastest -0." in reason, reason
            assert final.tail_ratio is not None and f"5th percentile {stats._signed_pct(final.tail_ratio)}" in reason
    assert low_moved >= 8


def _against_their_mean(rec: dict, look: int) -> Verdict:
    """A recording judged as benchbot judged triplets before issue 30's third round: head
    against the geometric mean of the two base runs of its round, whose median a loaded
    machine's skewed runs and timing modes pull away from the typical pair's (the mean of
    two moded runs is a mode of its own). The best-run side is as the engine's."""
    w = _triplet_workload(rec["base"], rec["base_again"], rec["head"], look=look)
    policy = Policy(alpha=rec["alpha"], aa=True, seed=rec["seed"])
    rule = replace(rule_for(w, policy, seed=rec["seed"] + 1), low_quantile=policy.low_quantile,
                   look_alpha=alpha_at(look, policy.alpha, 1))
    aa = stats.compare(rec["base"], rec["base_again"], rule=replace(rule, seed=rec["seed"]))
    mean = [math.sqrt(b * a) for b, a in zip(rec["base"], rec["base_again"], strict=True)]
    return stats.compare(mean, rec["head"], rule=rule, aa_noise=stats.aa_noise_of(aa),
                         low=((rec["base"], rec["base_again"]), rec["head"]))


@pytest.mark.parametrize(("name", "within"), [("biased-modes-384.json", 1.01),
                                              ("biased-modes-1000.json", 1.01)])
def test_recorded_biased_modes_read_no_move_against_both_base_runs(name: str, within: float
                                                                   ) -> None:
    """Identical work per mode, head in the slow mode more often: against the mean of the
    two base runs the median read +7% and +4.3%, and only the low quantiles' rules below
    kept it from a false call. Against each base run of its round, the typical pair reads
    below +1%: nothing to call."""
    rec = json.loads((Path(__file__).parents[1] / "fixtures" / name).read_text())
    n = len(rec["head"])
    final = judge([_triplet_workload(rec["base"], rec["base_again"], rec["head"],
                                     look=looks(1000).index(n) + 1)],
                  Policy(alpha=rec["alpha"], aa=True, seed=rec["seed"])).workloads["w"].final
    assert final is not None and final.outcome in ("level", "inconclusive"), final
    assert final.ratio is not None and 1 / within < final.ratio < within, final


def test_a_recorded_biased_modes_comparison_is_held_by_the_5th_percentile() -> None:
    """A real recording (tests/fixtures/biased-modes-384.json): identical work per mode, head
    in the slow mode more often, a fast spell that the base arms caught more often. At 384
    pairs the median against the mean of both base runs reads about +7%, the 10th
    percentile and the fastest runs each more than half of that (the rule before called it
    slower); the 5th percentile does not. (The engine's centre now reads +0.7%: above.)"""
    rec = json.loads((Path(__file__).parents[1] / "fixtures" / "biased-modes-384.json").read_text())
    final = _against_their_mean(rec, looks(1000).index(384) + 1)
    assert final.outcome == "inconclusive", final
    assert final.ratio is not None and final.low_ratio is not None and final.best_ratio is not None
    assert final.tail_ratio is not None and final.best_tolerance is not None
    central, point = math.log(final.ratio), math.log1p(0.02)
    assert central > math.log(1.05)
    # the two estimates the rule had would both have called it
    assert stats._moves_with(math.log(final.low_ratio), math.log1p(final.best_tolerance), central,
                             0.5)
    assert stats._moves_with(math.log(final.best_ratio), point, central, stats.AGREEMENT)
    assert not stats._moves_with(math.log(final.tail_ratio), point, central, 0.5)
    assert "but the 5th percentile +1." in (final.reason or ""), final.reason
    # and it may go on measuring: the 10th percentile's interval does not say "cannot help"
    assert stop_reason(final, None, pairs=384, max_pairs=1000, parity=0.02) is None


def test_a_recorded_biased_modes_comparison_is_held_by_the_low_agreement() -> None:
    """A second recording (tests/fixtures/biased-modes-1000.json): a fast mode so wide that
    every low quantile of head sits about 2.3% above base's, against a median of +4.3%
    (against the mean of both base runs). The 10th and 5th percentiles move more than half
    as far (a call, had half been enough), the fastest runs too; less than LOW_AGREEMENT as
    far: held."""
    rec = json.loads((Path(__file__).parents[1] / "fixtures" / "biased-modes-1000.json").read_text())
    final = _against_their_mean(rec, len(looks(1000)))
    assert final.outcome == "inconclusive", final
    assert final.ratio is not None and final.low_ratio is not None and final.best_ratio is not None
    assert final.tail_ratio is not None and final.best_tolerance is not None
    central, point = math.log(final.ratio), math.log1p(0.02)
    assert final.tolerance is not None and central > math.log1p(final.tolerance)  # it moved
    for low, tolerance in ((final.low_ratio, math.log1p(final.best_tolerance)),
                           (final.tail_ratio, point)):
        assert stats._moves_with(math.log(low), tolerance, central, 0.5)
        assert not stats._moves_with(math.log(low), tolerance, central, stats.LOW_AGREEMENT)
    assert stats._moves_with(math.log(final.best_ratio), point, central, stats.AGREEMENT)
    assert "(10th percentile) +2." in (final.reason or ""), final.reason


def test_a_recorded_demo_sort_is_called_where_its_fast_runs_move_with_it() -> None:
    """A real recording (tests/fixtures/demo-sort-51.json): the demo's sort, +4.3% of work,
    its first 51 triplets. The median, the 10th and 5th percentiles and the fastest runs
    all read +3.8% to +5.0%: called slower. The 10th percentile's interval still reaches
    below parity (a sparse fast tail spreads its order statistics); when a call had to
    clear that edge, this one waited until the budget ran out at 127 pairs."""
    rec = json.loads((Path(__file__).parents[1] / "fixtures" / "demo-sort-51.json").read_text())
    look = looks(1000).index(51) + 1
    policy = Policy(alpha=rec["alpha"], aa=True, seed=rec["seed"],
                    family=Family(sequential=rec["workloads"], fixed=0))
    final = judge([_triplet_workload(rec["base"], rec["base_again"], rec["head"], look=look)],
                  policy).workloads["w"].final
    assert final is not None and final.outcome == "slower", final
    assert final.ratio is not None and final.low_ratio is not None and final.best_ratio is not None
    assert final.tail_ratio is not None and final.low_ci_half is not None
    central = math.log(final.ratio)
    for low in (final.low_ratio, final.tail_ratio):
        assert math.log(low) > max(math.log1p(0.02), stats.LOW_AGREEMENT * central)
    assert math.log(final.best_ratio) > max(math.log1p(0.02), stats.AGREEMENT * central)
    # the edge of the 10th percentile's interval toward no change: below parity
    assert math.log(final.low_ratio) - math.log1p(final.low_ci_half) < math.log1p(0.02)
    assert stop_reason(final, None, pairs=51, max_pairs=1000, parity=0.02) == "settled"


def test_a_change_moves_the_fastest_runs_too() -> None:
    """The same modes in both builds, every run of head 15% slower: called, and the mirror."""
    rng = np.random.default_rng(9)

    def runs(shift: float) -> list[float]:
        slow = rng.random(300) < 0.5
        return list(np.where(slow, 12.5, 10.0) * shift * 1e6 * (1 + rng.exponential(0.03, 300)))

    for shift, outcome in ((1.15, "slower"), (0.87, "faster")):
        final = judge([_triplet_workload(runs(1.0), runs(1.0), runs(shift), look=9)],
                      Policy(alpha=0.05, aa=True, seed=3)).workloads["w"].final
        assert final is not None and final.outcome == outcome, final


@pytest.mark.parametrize(("ratio", "low", "fastest", "says"), [
    (1.08, 1.06, 0.999, "and the fast runs (10th percentile) +6.0%, but the fastest -0.1%"),
    # the same way, not far enough: what a call needs (0.6 of the median's move, or the
    # best-run tolerance where that is more)
    (1.08, 1.03, 1.04, "but the fast runs (10th percentile) +3.0% is short of the +4.7% a "
                       "call needs (the fastest +4.0%)"),
    (0.92, 0.97, 0.96, "but the fast runs (10th percentile) -3.0% is short of the -4.9% a call "
                       "needs (the fastest -4.0%)"),
    (1.04, 1.03, 1.04, "but the fast runs (10th percentile) +3.0% is short of the +4.0% a "
                       "call needs (the fastest +4.0%)"),
    (1.08, 0.99, 1.01, "but the fast runs (10th percentile) -1.0% (the fastest +1.0%)"),
])
def test_the_reason_names_which_best_run_estimate_did_not_follow(
        ratio: float, low: float, fastest: float, says: str) -> None:
    v = _verdict(ratio=ratio, low_ratio=low, low_ci_half=0.04, best_ratio=fastest,
                 best_tolerance=0.04, spread=0.03, tolerance=0.02)
    reason = stats._best_disagree(v).reason or ""
    assert reason.startswith(f"the runs read {stats._signed_pct(ratio)}") and says in reason, \
        reason


@pytest.mark.parametrize(("low", "tail", "fastest", "says"), [
    (1.06, 1.01, 1.05, "and the fast runs (10th percentile) +6.0%, but the 5th percentile +1.0% "
                       "(the fastest +5.0%)"),
    (1.06, 1.01, 0.999, "but the 5th percentile +1.0% and the fastest -0.1%"),
    (1.06, 1.05, 0.999, "but the fastest -0.1% (the 5th percentile +5.0%)"),
    (1.03, 1.035, 1.04, "is short of the +4.7% a call needs (the 5th percentile +3.5%, the "
                        "fastest +4.0%)"),
])
def test_the_reason_names_the_lower_depths_that_did_not_follow(
        low: float, tail: float, fastest: float, says: str) -> None:
    v = _verdict(ratio=1.08, low_ratio=low, low_ci_half=0.04, tail_ratio=tail, best_ratio=fastest,
                 best_tolerance=0.04, spread=0.03, tolerance=0.02)
    reason = stats._best_disagree(v).reason or ""
    assert says in reason, reason


def test_a_level_s_estimate_is_measured_to_half_its_tolerance_a_call_s_to_1_4_percent() -> None:
    call = _verdict(outcome="slower", reason_code=None, estimate=1.05, estimate_ci=(1.03, 1.07))
    level = _verdict(outcome="level", reason_code=None, tolerance=0.02, estimate=1.0,
                     estimate_ci=(0.985, 1.015))
    assert sequential.estimate_half(call) == sequential.ESTIMATE_HALF == 0.014
    assert sequential.estimate_half(level) == pytest.approx(0.01)
    # a noisy machine's wider tolerance: never coarser than a call's
    assert sequential.estimate_half(replace(level, tolerance=0.05)) == sequential.ESTIMATE_HALF
    # ±1.5% at 100 pairs narrows as 1/sqrt(n): ±1% needs about (1.5 / 1)^2 = 2.3 times
    need = sequential.estimate_until(level, 100, 1000)
    assert need is not None and 220 <= need <= 235
    assert sequential.estimate_until(level, 100, 150) == 150  # never past max_runs
    assert sequential.estimate_until(replace(level, estimate_ci=(0.992, 1.009)), 100, 1000) is None
    # the call's ±1.9% at 100 pairs: to ±1.4%, about 1.9 times
    called = sequential.estimate_until(call, 100, 1000)
    assert called is not None and 180 <= called <= 195


def test_a_level_s_estimate_at_most_doubles_its_pairs() -> None:
    assert sequential.level_estimate_cap(10, 1000) == 60  # n + 50 where that is more
    assert sequential.level_estimate_cap(256, 1000) == 512
    assert sequential.level_estimate_cap(600, 1000) == 1000  # never past max_runs


@pytest.mark.parametrize(("outcome", "suite", "precision", "expected"), [
    ("slower", None, None, 80),  # a call: 50 pairs more
    ("level", None, None, 80),  # a program's level: the same
    ("level", "go", None, 30),  # a suite's benchmark settled level: not measured on
    ("faster", "go", None, 80),  # a suite's call is
    ("level", None, 0.005, 40),  # a history's step: one look more, then its trend decides
    ("inconclusive", None, None, 30),
])
def test_which_settled_verdicts_are_measured_on_for_their_estimate(
        outcome: str, suite: str | None, precision: float | None, expected: int) -> None:
    from types import SimpleNamespace

    from benchbot.measure.measuring import Sequential

    stub = SimpleNamespace(ctx=SimpleNamespace(estimate=True, precision=precision))
    w = SimpleNamespace(suite=suite, max_runs=1000)
    ab = _verdict(outcome=outcome, reason_code=None)
    assert Sequential._estimate_from(stub, ab, 30, w) == expected  # type: ignore[arg-type]
    stub.ctx.estimate = False  # bisect's steps: the verdict alone
    assert Sequential._estimate_from(stub, ab, 30, w) == 30  # type: ignore[arg-type]
