"""Unit tests of the verdict rule (docs/verdict.md) in benchbot.verdict.stats."""

from __future__ import annotations

import math
from dataclasses import fields, replace
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from benchbot.core.model import REASON_CODES, Rule, Verdict
from benchbot.verdict import stats

RULE = Rule()
MS = 1_000_000.0  # ns
US = 1_000.0  # ns
MIRROR = {"slower": "faster", "faster": "slower"}

# The published paired experiment (throughput, higher is better, 12 blocks).
CHAINS_1 = [725.4, 720.8, 726.0, 671.8, 719.2, 722.7, 723.6, 721.3, 713.5, 716.5, 718.9, 716.2]
CHAINS_2 = [1356.3, 1338.7, 1314.4, 1329.9, 1328.3, 1332.6, 1327.8, 1327.7, 1318.9, 1319.3,
            1300.0, 1313.0]
RUN_A = [719.2, 717.0, 712.6, 719.7, 717.8, 710.6, 702.9, 713.3, 713.1, 715.5, 717.4, 714.0]
RUN_B = [719.6, 708.1, 721.4, 721.0, 713.9, 715.8, 700.6, 718.4, 712.0, 717.9, 716.5, 720.1]


def paired(seed: int, n: int = 30, *, shift: float = 1.0, machine: float = 0.05,
           own: float = 0.002, median_ns: float = 100 * MS) -> tuple[Any, Any]:
    """n pairs that share a machine state (drift, modes) plus each run's own noise."""
    rng = np.random.default_rng(seed)
    state = median_ns * rng.lognormal(0.0, machine, n)
    return state * rng.lognormal(0.0, own, n), shift * state * rng.lognormal(0.0, own, n)


def near_a_tie(v: Verdict, rule: Rule, eps: float = 1e-9) -> bool:
    """Whether rounding alone could move one of the rule's decisions."""
    assert v.ratio and v.best_ratio and v.ci and v.tolerance is not None
    assert v.best_tolerance is not None and v.noise is not None and v.spread is not None
    logs = [math.log(v.ratio), math.log(v.best_ratio), math.log(v.ci[0]), math.log(v.ci[1])]
    limits = [math.log1p(v.tolerance), math.log1p(v.best_tolerance), math.log1p(rule.parity), 0]
    return (
        any(abs(abs(a) - t) < eps for a in logs for t in limits)
        or abs(v.noise - rule.parity) < eps
        or abs(v.spread - stats.TIMING_MODES_FACTOR * v.tolerance) < eps
    )


# --- the cases verdict.md is built on --------------------------------------------------


def test_timing_modes_with_equal_best_runs_are_not_a_loss() -> None:
    # Two clusters, ~570 and ~720 µs; the candidate lands in the slow one far more often.
    rng = np.random.default_rng(7)
    fast, slow = 570 * US, 720 * US
    modes = [("F", "S")] * 21 + [("S", "S")] * 7 + [("F", "F"), ("S", "F")]
    x = np.array([(fast if a == "F" else slow) * rng.lognormal(0, 0.005) for a, _ in modes])
    y = np.array([(fast if b == "F" else slow) * rng.lognormal(0, 0.005) for _, b in modes])
    x[-2] = y[-2] = fast  # equal minimums
    x, y = np.maximum(x, fast), np.maximum(y, fast)

    v = stats.compare(x, y, rule=RULE)

    assert v.outcome == "inconclusive"
    assert v.reason_code == "timing_modes"
    assert v.best_ratio == 1.0
    assert v.ratio is not None and v.ratio > 1.2
    assert v.spread is not None and v.tolerance is not None
    assert v.spread > stats.TIMING_MODES_FACTOR * v.tolerance
    assert v.reason is not None and v.reason.startswith("timing modes: single runs vary by")


@pytest.mark.parametrize("seed", range(10))
def test_timing_modes_of_random_shares_never_call_a_difference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 30
    x = np.where(rng.random(n) < 0.85, 570 * US, 720 * US) * rng.lognormal(0, 0.004, n)
    y = np.where(rng.random(n) < 0.15, 570 * US, 720 * US) * rng.lognormal(0, 0.004, n)
    x[0] = y[0] = min(x.min(), y.min())  # equal best runs

    v = stats.compare(x, y, rule=RULE)

    assert v.outcome == "inconclusive"
    assert v.reason_code in ("timing_modes", "best_disagree", "spread")


def test_a_smooth_16_percent_cloud_is_slower() -> None:
    x, y = paired(1, shift=1.16, machine=0.03, own=0.03)
    v = stats.compare(x, y, rule=RULE)
    assert v.outcome == "slower"
    assert v.reason is None and v.suggested_runs is None
    assert v.ratio == pytest.approx(1.16, rel=0.02)
    assert v.ci is not None and v.ci[0] > 1 + RULE.parity


@pytest.mark.parametrize("machine", [0.0, 0.05, 0.3])
def test_an_aa_comparison_with_paired_noise_never_concludes(machine: float) -> None:
    for seed in range(100):
        x, y = paired(seed, machine=machine, own=0.003)
        assert stats.compare(x, y, rule=RULE).outcome not in ("slower", "faster"), seed


def test_an_aa_comparison_with_large_own_noise_rarely_concludes() -> None:
    # Noise of single runs comparable to the difference: a 95% interval alone would
    # call about 1 in 20 A/A comparisons different; the best-run check lowers it.
    called = sum(
        stats.compare(*paired(seed, machine=0.1, own=0.1), rule=RULE).outcome
        in ("slower", "faster")
        for seed in range(300)
    )
    assert called <= 15


def test_a_lopsided_interval_is_shown_as_it_is_not_as_plus_minus() -> None:
    x, y = paired(3, shift=1.05, machine=0.0, own=0.08)
    v = stats.compare(x, y, rule=RULE)
    assert v.outcome == "inconclusive" and v.reason_code == "spread"
    assert v.ci is not None and v.ci_half is not None and v.ratio is not None
    lo, hi = v.ci
    near, far = sorted(abs(math.log(edge / v.ratio)) for edge in (lo, hi))
    assert far > 1.5 * near  # lopsided: 6.8% below the median, 2.0% above
    assert v.reason == (
        f"the interval {(lo - 1) * 100:+.1f}%..{(hi - 1) * 100:+.1f}% is too wide for the 2% "
        f"parity (one side {v.ci_half * 100:.1f}% from the median): about "
        f"{v.suggested_runs} runs would settle it")


def test_a_noisy_comparison_is_inconclusive_and_says_how_many_runs() -> None:
    x, y = paired(5, shift=1.05, machine=0.0, own=0.1)
    v = stats.compare(x, y, rule=RULE)
    assert v.outcome == "inconclusive"
    assert v.reason_code == "spread"
    assert v.suggested_runs is not None and 30 < v.suggested_runs <= stats.MAX_SUGGESTED_RUNS
    assert v.ci_half is not None and v.ci_half > RULE.parity
    assert v.reason == (
        f"the interval ±{v.ci_half * 100:.1f}% is wider than the 2% parity: "
        f"about {v.suggested_runs} runs would settle it"
    )
    assert v.suggested_runs == stats.suggested_runs(30, v.ci_half, v.ratio or 0, RULE.parity)


def test_a_spread_more_runs_than_benchbot_takes_would_settle_says_so() -> None:
    # Very noisy single runs: settling would take thousands of pairs, beyond the 1,000 a
    # setting allows, so no run count is suggested (a /bench runs=N that would be refused).
    x, y = paired(3, shift=1.01, machine=0.0, own=1.5)
    v = stats.compare(x, y, rule=RULE)
    assert v.outcome == "inconclusive" and v.reason_code == "spread"
    assert v.suggested_runs is None
    need = stats.suggested_runs(30, v.ci_half or 0, v.ratio or 0, RULE.parity)
    assert need > stats.MAX_SUGGESTED_RUNS
    assert v.reason is not None and v.reason.endswith(
        f"about {need} runs would settle it, more than the 1000 benchbot takes "
        "(quiet the runner, or judge at a wider parity)")


def test_a_difference_below_parity_is_level_and_real() -> None:
    x, y = paired(4, shift=1.005, own=0.001)
    v = stats.compare(x, y, rule=RULE)
    assert v.outcome == "level"
    assert v.reason_code == "below_parity"
    assert v.reason == "real, but below the 2% that matters"
    assert v.ci is not None and 1 < v.ci[0] < v.ci[1] < 1.02


def test_no_difference_with_tight_noise_is_plain_level() -> None:
    x, y = paired(5, own=0.002)
    v = stats.compare(x, y, rule=RULE)
    assert v.outcome == "level"
    assert v.reason is None and v.reason_code is None
    assert v.ci is not None and v.ci[0] < 1 < v.ci[1]


def test_an_interval_reaching_past_parity_is_inconclusive_spread() -> None:
    # The ratio sits inside parity and the interval is narrower than parity, but it
    # pokes out of the band: not yet level.
    x, y = paired(11, shift=1.015, own=0.012)
    v = stats.compare(x, y, rule=RULE)
    assert v.outcome == "inconclusive"
    assert v.reason_code == "spread"
    assert v.noise is not None and v.noise <= RULE.parity
    assert v.reason is not None and "reaches past the 2% parity" in v.reason


# --- exact figures ----------------------------------------------------------------------


def test_figures_of_a_literal_sample() -> None:
    x = [MS * (1 + i / 100) for i in range(10)]  # 1.00 .. 1.09 ms
    y = [v * 1.03 for v in x]
    v = stats.compare(x, y, rule=Rule(floor_ns=0))
    assert v.outcome == "slower"
    assert v.n == 10
    assert v.ratio == pytest.approx(1.03, rel=1e-12)
    assert v.ci == pytest.approx((1.03, 1.03), rel=1e-12)
    assert v.best_ratio == pytest.approx(1.03, rel=1e-12)
    assert v.median_ratio == pytest.approx(1.03, rel=1e-12)
    assert v.spread == pytest.approx(1.03 * (1.0675 - 1.0225) / (1.03 * 1.045), rel=1e-9)
    assert v.ci_half == pytest.approx(0, abs=1e-12)
    assert v.tolerance == RULE.parity and v.best_tolerance == RULE.parity


def test_identical_values_are_level_with_ratio_exactly_one() -> None:
    x = [123 * MS] * 20
    v = stats.compare(x, list(x), rule=RULE)
    assert v.outcome == "level"
    assert v.ratio == 1.0 and v.ci == (1.0, 1.0) and v.best_ratio == 1.0
    assert v.spread == 0.0 and v.ci_half == 0.0
    assert v.reason_code is None


def test_floor_terms_are_floor_over_median_and_best() -> None:
    x, y = paired(8, median_ns=2 * MS, own=0.01)
    v = stats.compare(x, y, rule=RULE)
    assert v.floor_med == pytest.approx(RULE.floor_ns / float(np.median(x)), rel=1e-12)
    assert v.floor_best == pytest.approx(RULE.floor_ns / float(np.min(x)), rel=1e-12)
    assert v.noise == max(v.ci_half or 0, v.aa_noise, v.floor_med or 0)
    assert v.best_tolerance == max(RULE.parity, v.floor_best or 0)


def test_all_figures_are_plain_python_floats() -> None:
    v = stats.compare(*paired(9), rule=RULE, aa_noise=0.001)
    for f in fields(Verdict):
        value = getattr(v, f.name)
        if f.name == "ci":
            assert type(value) is tuple and all(type(c) is float for c in value)
        elif isinstance(value, (float, np.floating)):
            assert type(value) is float, f.name
    assert type(v.n) is int


def test_suggested_runs_follows_the_formula_and_its_clamps() -> None:
    # h = 0.04, target = ln(1.02) / 2: 30 * (0.04 / 0.0099013)^2 = 489.6
    assert stats.suggested_runs(30, math.expm1(0.04), 1.0, 0.02) == 490
    assert stats.suggested_runs(30, 0.001, 1.0, 0.02) == 40  # at least n + 10
    # Not clamped: above 1000 the verdict says no run count benchbot takes would do.
    assert stats.suggested_runs(30, 0.5, 1.0, 0.02) == math.ceil(30 * (math.log(1.5) / (math.log(1.02) / 2)) ** 2)
    assert stats.suggested_runs(995, 0.001, 1.0, 0.02) == 1005
    # A large ratio sets the target: half of ln(1.5).
    assert stats.suggested_runs(30, math.expm1(0.3), 1.5, 0.02) == math.ceil(
        30 * (0.3 / (math.log(1.5) / 2)) ** 2
    ) == 66


# --- thin and bad data ------------------------------------------------------------------


def test_ten_runs_are_judged_and_nine_are_refused() -> None:
    x, y = paired(10, n=10)
    assert stats.compare(x, y, rule=RULE).outcome == "level"
    v = stats.compare(x[:9], y[:9], rule=RULE)
    assert v.outcome == "inconclusive"
    assert v.reason_code == "few_runs"
    assert v.reason == "needs at least 10 runs a side (got 9)"
    assert v.suggested_runs is not None and v.suggested_runs >= 10
    assert v.n == 9 and v.ratio is not None and v.ci is not None


def test_no_runs_at_all_are_few_runs() -> None:
    v = stats.compare([], [], rule=RULE)
    assert (v.outcome, v.reason_code, v.n, v.ratio) == ("inconclusive", "few_runs", 0, None)
    assert v.suggested_runs == 10


def test_unequal_lengths_are_cut_to_the_shorter() -> None:
    x, y = paired(11, n=30)
    assert stats.compare(x, y[:20], rule=RULE) == stats.compare(x[:20], y[:20], rule=RULE)


@pytest.mark.parametrize("bad", [0.0, -5.0])
def test_a_value_of_zero_is_invalid(bad: float) -> None:
    x, y = paired(12)
    y[3] = bad
    v = stats.compare(x, y, rule=RULE)
    assert (v.outcome, v.reason_code) == ("invalid", "too_fast")
    assert v.ratio is None
    assert v.reason is not None and v.reason.startswith("a reported value of 0")
    assert stats.compare(y, x, rule=Rule(better="higher")).outcome == "invalid"


def test_a_value_that_is_not_finite_is_invalid() -> None:
    x, y = paired(12)
    x[0] = math.nan
    assert stats.compare(x, y, rule=RULE).reason_code == "run_failed"


def test_one_huge_outlier_does_not_flip_a_level() -> None:
    x, y = paired(13, own=0.002)
    before = stats.compare(x, y, rule=RULE)
    y[17] *= 100
    after = stats.compare(x, y, rule=RULE)
    assert before.outcome == after.outcome == "level"
    assert after.ratio == pytest.approx(before.ratio, rel=0.002)


@pytest.mark.parametrize("arm", ["reference", "candidate"])
def test_a_median_below_the_floor_is_invalid(arm: str) -> None:
    x, y = paired(14, median_ns=100 * MS)
    fast = paired(14, median_ns=20 * US)[0]
    x, y = (fast, y) if arm == "reference" else (x, fast)
    v = stats.compare(x, y, rule=RULE)
    assert (v.outcome, v.reason_code) == ("invalid", "too_fast")
    assert v.reason is not None and v.reason.startswith(f"the {arm}'s median 20")
    assert v.reason.endswith("is below the 25 µs floor: too fast to measure")


# --- the terms that set the tolerance ---------------------------------------------------


def test_aa_noise_sets_the_tolerance_and_more_runs_will_not_help() -> None:
    x, y = paired(15, shift=1.05, own=0.002)
    v = stats.compare(x, y, rule=RULE, aa_noise=0.08)
    assert v.outcome == "inconclusive"
    assert v.reason_code == "aa_noise"
    assert v.tolerance == v.noise == 0.08
    assert v.suggested_runs is None
    assert stats.compare(x, y, rule=RULE).outcome == "slower"  # without the A/A noise


def test_the_floor_sets_the_tolerance_just_above_it() -> None:
    x, y = paired(16, shift=1.1, own=0.002, median_ns=30 * US)
    v = stats.compare(x, y, rule=RULE)
    assert v.outcome == "inconclusive"
    assert v.reason_code == "floor"
    assert v.tolerance == v.floor_med and v.floor_med is not None and v.floor_med > 0.8
    assert v.suggested_runs is None
    assert v.reason is not None and "25 µs floor of process timing" in v.reason


def test_a_ratio_that_left_while_best_runs_did_not_is_best_disagree() -> None:
    x, y = paired(17, shift=1.05, machine=0.0, own=0.002)
    x[0] = y[0] = 0.9 * min(x.min(), y.min())  # one equally fast best run in each arm
    v = stats.compare(x, y, rule=RULE)
    assert v.outcome == "inconclusive"
    assert v.reason_code == "best_disagree"
    assert v.best_ratio == 1.0
    assert v.reason == "the runs read +5.0% but the best runs +0.0%: a real difference moves both alike"


def test_bonferroni_widens_the_interval() -> None:
    x, y = paired(18, own=0.02)
    one = stats.compare(x, y, rule=RULE)
    many = stats.compare(x, y, rule=Rule(comparisons=20))
    assert one.ci is not None and many.ci is not None
    assert many.ci[0] < one.ci[0] and one.ci[1] < many.ci[1]
    assert many.ratio == one.ratio


def test_better_higher_judges_throughputs_inverted() -> None:
    rng = np.random.default_rng(19)
    x = 700 * rng.lognormal(0, 0.005, 30)  # far below the floor, were they times
    y = 1.2 * 700 * rng.lognormal(0, 0.005, 30)
    v = stats.compare(x, y, rule=Rule(better="higher"))
    assert v.outcome == "faster"
    assert v.ratio == pytest.approx(1 / 1.2, rel=0.01)
    assert v.best_ratio == pytest.approx(float(x.max() / y.max()), rel=1e-12)
    assert v.floor_med == 0.0 and v.floor_best == 0.0
    assert stats.compare(y, x, rule=Rule(better="higher")).outcome == "slower"


def test_the_published_paired_experiment() -> None:
    higher = Rule(better="higher")
    assert stats.compare(CHAINS_1, CHAINS_2, rule=higher).outcome == "faster"
    assert stats.compare(CHAINS_2, CHAINS_1, rule=higher).outcome == "slower"
    assert stats.compare(RUN_A, RUN_B, rule=higher).outcome not in ("slower", "faster")
    assert stats.compare(RUN_B, RUN_A, rule=higher).outcome not in ("slower", "faster")


def test_a_seed_makes_it_deterministic() -> None:
    x, y = paired(20, own=0.02)
    assert stats.compare(x, y, rule=Rule(seed=5)) == stats.compare(x, y, rule=Rule(seed=5))
    assert stats.compare(x, y, rule=Rule(seed=5)).ci != stats.compare(x, y, rule=Rule(seed=6)).ci


def test_compare_many_equals_compare() -> None:
    cases = [paired(s, n=10 + s % 3 * 20, shift=1 + s / 50, own=0.01 * (s % 4)) for s in range(12)]
    rules = [Rule(seed=s % 2, bootstrap=1000 + s % 2 * 1000, comparisons=1 + s % 3)
             for s in range(12)]
    aa = [0.001 * s for s in range(12)]
    cases[3] = (cases[3][0], np.zeros(10))  # invalid in the middle
    cases[5] = (cases[5][0][:9], cases[5][1][:9])  # few runs
    xs, ys = [c[0] for c in cases], [c[1] for c in cases]
    many = stats.compare_many(xs, ys, rules=rules, aa_noise=aa)
    one_by_one = zip(xs, ys, rules, aa, strict=True)
    assert many == [stats.compare(x, y, rule=r, aa_noise=a) for x, y, r, a in one_by_one]
    one_rule = [stats.compare(x, y, rule=RULE) for x, y in zip(xs, ys, strict=True)]
    assert stats.compare_many(xs, ys, rules=RULE) == one_rule


def test_compare_many_refuses_mismatched_lengths() -> None:
    with pytest.raises(ValueError, match="as many ys"):
        stats.compare_many([[1.0]], [], rules=RULE)


def test_reason_codes_are_the_models() -> None:
    verdicts = [
        stats.compare(*paired(s, shift=1 + s / 40, own=0.002 * s, median_ns=MS * (s + 1)),
                      rule=RULE, aa_noise=0.01 * (s % 3))
        for s in range(20)
    ]
    assert {v.reason_code for v in verdicts} <= set(REASON_CODES) | {None}


# --- properties -------------------------------------------------------------------------

PROPERTY_RULE = Rule(floor_ns=0.0, bootstrap=200)
samples = st.integers(10, 30).flatmap(
    lambda n: st.tuples(*[st.lists(st.floats(1.0, 1e6), min_size=n, max_size=n)] * 2)
)


@settings(max_examples=50, deadline=None)
@given(samples)
def test_swapping_the_arms_mirrors_the_outcome(xy: tuple[list[float], list[float]]) -> None:
    x, y = xy
    v, w = stats.compare(x, y, rule=PROPERTY_RULE), stats.compare(y, x, rule=PROPERTY_RULE)
    assert w.outcome == MIRROR.get(v.outcome, v.outcome)
    assert w.reason_code == v.reason_code
    assert v.ratio is not None and w.ratio is not None and v.ci and w.ci
    assert v.ratio * w.ratio == pytest.approx(1.0, rel=1e-12)
    assert (w.ci[0] * v.ci[1], w.ci[1] * v.ci[0]) == pytest.approx((1.0, 1.0), rel=1e-12)
    assert w.ci_half == v.ci_half and w.tolerance == v.tolerance
    if v.suggested_runs is not None and w.suggested_runs is not None:
        assert abs(v.suggested_runs - w.suggested_runs) <= 1


@settings(max_examples=50, deadline=None)
@given(samples, st.sampled_from([0.5, 2.0, 3.0, 1e3, 1e-3, 7.25]))
def test_scaling_every_sample_changes_nothing(
    xy: tuple[list[float], list[float]], scale: float
) -> None:
    x, y = xy
    v = stats.compare(x, y, rule=PROPERTY_RULE)
    w = stats.compare([a * scale for a in x], [b * scale for b in y], rule=PROPERTY_RULE)
    assume(not near_a_tie(v, PROPERTY_RULE))
    assert w.outcome == v.outcome and w.reason_code == v.reason_code
    for name in ("ratio", "best_ratio", "median_ratio", "spread", "ci_half", "tolerance"):
        assert getattr(w, name) == pytest.approx(getattr(v, name), rel=1e-9, abs=1e-12), name


@settings(max_examples=50, deadline=None)
@given(samples)
def test_throughputs_mirror_times(xy: tuple[list[float], list[float]]) -> None:
    x, y = xy
    as_time = stats.compare(x, y, rule=PROPERTY_RULE)
    as_rate = stats.compare([1 / a for a in x], [1 / b for b in y],
                            rule=replace(PROPERTY_RULE, better="higher"))
    assume(not near_a_tie(as_time, PROPERTY_RULE))
    assert as_rate.outcome == as_time.outcome
    assert as_rate.ratio == pytest.approx(as_time.ratio, rel=1e-9)


# --- confirmation and the A/A check -----------------------------------------------------


def test_a_confirmed_outcome_is_kept_and_pooled_figures_are_reported() -> None:
    first = stats.compare(*paired(21, shift=1.1, own=0.01), rule=RULE)
    second = stats.compare(*paired(22, shift=1.1, own=0.01), rule=Rule(seed=2))
    assert first.outcome == second.outcome == "slower"
    assert stats.confirm(first, second) is first
    pooled = replace(first, outcome="inconclusive", reason_code="spread", reason="r", n=60,
                     ratio=1.09, suggested_runs=100)
    final = stats.confirm_pooled(first, second, pooled)
    assert (final.outcome, final.reason_code, final.reason) == ("slower", None, None)
    assert final.n == 60 and final.ratio == 1.09 and final.suggested_runs is None


def test_an_unconfirmed_outcome_is_inconclusive() -> None:
    first = stats.compare(*paired(23, shift=1.1, own=0.01), rule=RULE)
    second = stats.compare(*paired(24, shift=1.004, own=0.001), rule=RULE)
    assert second.outcome == "level"
    v = stats.confirm(first, second)
    assert (v.outcome, v.reason_code) == ("inconclusive", "not_confirmed")
    read = f"{(second.ratio or 0) - 1:+.1%}"
    assert v.reason == f"not confirmed by an independent re-run (it read {read})"
    pooled = replace(first, n=60, ratio=1.05)
    final = stats.confirm_pooled(first, second, pooled)
    assert (final.outcome, final.reason_code, final.n, final.ratio) == (
        "inconclusive", "not_confirmed", 60, 1.05)
    # pooled data that are inconclusive for another reason still say why: not confirmed
    pooled = replace(first, outcome="inconclusive", reason_code="timing_modes", reason="modes")
    final = stats.confirm_pooled(first, second, pooled)
    assert (final.outcome, final.reason_code) == ("inconclusive", "not_confirmed")


def test_an_aa_failure_forces_inconclusive() -> None:
    aa = stats.compare(*paired(25, shift=1.06, own=0.002), rule=RULE)
    assert aa.outcome == "slower"
    ab = stats.compare(*paired(26, shift=1.2, own=0.002), rule=RULE, aa_noise=stats.aa_noise_of(aa))
    v = stats.force_aa_failed(ab, aa)
    assert (v.outcome, v.reason_code) == ("inconclusive", "aa_failed")
    assert v.reason == f"A/A check read base against itself as {(aa.ratio or 0) - 1:+.1%}"
    assert v.ratio == ab.ratio
    bad = stats.invalid("run_failed", "exit 1")
    assert stats.force_aa_failed(bad, aa) is bad


def test_aa_noise_of_is_the_distance_from_one_either_way() -> None:
    assert stats.aa_noise_of(None) == 0.0
    assert stats.aa_noise_of(Verdict(outcome="invalid")) == 0.0
    assert stats.aa_noise_of(Verdict(outcome="level", ratio=1.05)) == pytest.approx(0.05)
    assert stats.aa_noise_of(Verdict(outcome="level", ratio=1 / 1.05)) == pytest.approx(0.05)


def test_invalid_builds_a_verdict_with_a_known_code() -> None:
    assert stats.invalid("run_failed", "exit 1") == Verdict(
        outcome="invalid", reason="exit 1", reason_code="run_failed")
    with pytest.raises(ValueError, match="unknown reason code"):
        stats.invalid("no_such_code", "x")
