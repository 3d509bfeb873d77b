"""The history's statistics (benchbot.verdict.trend): a step's estimate from its rounds, the steps
composed, and the drift scan with its error for the whole report."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchbot.verdict import trend
from benchbot.verdict.trend import Step, StepEstimate


def _noise(rng: np.random.Generator, n: int) -> np.ndarray:
    """Runs of a program whose noise only adds time, with a slow mode in 40% of them."""
    fast = 1e6 * (1 + rng.exponential(0.02, n))
    return np.where(rng.random(n) < 0.4, fast * 1.8, fast)


def test_a_step_of_identical_builds_reads_no_change_where_the_verdict_s_median_does_not() -> None:
    rng = np.random.default_rng(3)
    centres, skewed = [], []
    for seed in range(25):
        b1, b2, h = (_noise(rng, 300) for _ in range(3))
        est = trend.step_estimate([b1, b2], h, seed=seed)
        assert est is not None and est.n == 300
        centres.append(est.centre)
        skewed.append(float(np.median(np.log(h) - (np.log(b1) + np.log(b2)) / 2)))
    # One run against the mean of two is skewed when the noise is: its median reads faster.
    assert np.mean(skewed) < -0.004
    assert abs(np.mean(centres)) < 0.001
    assert np.std(centres) < 0.003


def test_a_step_s_estimate_follows_a_planted_change_and_its_error_is_honest() -> None:
    rng = np.random.default_rng(4)
    hits = 0
    for seed in range(40):
        b1, b2 = _noise(rng, 200), _noise(rng, 200)
        h = _noise(rng, 200) * 1.008
        est = trend.step_estimate([b1, b2], h, seed=seed)
        assert est is not None
        hits += abs(est.centre - math.log(1.008)) <= 1.96 * est.se
    assert hits >= 34  # about 95% of 40


def test_pairs_a_throughput_and_thin_data() -> None:
    base = [100.0] * 20
    est = trend.step_estimate([base], [110.0] * 20, seed=1)
    assert est is not None and est.ratio == pytest.approx(1.1)
    assert est.se == pytest.approx(trend.SE_FLOOR)  # tied readings: the floor
    faster = trend.step_estimate([base], [110.0] * 20, seed=1, higher_is_better=True)
    assert faster is not None and faster.ratio == pytest.approx(1 / 1.1)
    assert trend.step_estimate([base[:9]], [110.0] * 9, seed=1) is None
    assert trend.step_estimate([[0.0] * 20], [1.0] * 20, seed=1) is None
    assert trend.step_estimate([], [1.0] * 20, seed=1) is None


def _steps(centres: list[float], se: float = 0.001, called: frozenset[int] = frozenset(),
           gaps: frozenset[int] = frozenset()) -> list[Step]:
    return [Step(index=i + 1, called=i + 1 in called,
                 estimate=None if i + 1 in gaps else StepEstimate(n=100, centre=c, se=se))
            for i, c in enumerate(centres)]


def test_cumulative_adds_steps_and_their_variances_and_restarts_after_a_gap() -> None:
    levels = trend.cumulative(_steps([0.01, 0.02, 0.0, 0.03], se=0.003, gaps=frozenset({3})))
    assert [lv.log for lv in levels] == [0.0, 0.01, pytest.approx(0.03), None, 0.03]
    assert levels[2].se == pytest.approx(math.sqrt(2) * 0.003)
    assert levels[4].se == pytest.approx(0.003)


def test_ranges_are_counted_within_segments_that_no_call_or_gap_breaks() -> None:
    steps = _steps([0.0] * 10, called=frozenset({4}), gaps=frozenset({8}))
    # segments: 1-3 (3 steps: 3 ranges), 5-7 (3), 9-10 (2: 1)
    assert trend.ranges_in(steps) == 3 + 3 + 1
    identical = [Step(index=i + 1, estimate=trend.IDENTICAL) for i in range(5)]
    assert trend.ranges_in(identical) == 0  # nothing measured, nothing to test


def test_six_small_steps_make_one_drift_named_as_their_range() -> None:
    centres = [0.0] * 30
    for i in range(12, 18):
        centres[i] = math.log(1.008)
    centres[7], centres[23] = math.log(1.06), math.log(0.95)
    steps = _steps(centres, called=frozenset({8, 24}))
    z, ranges, found = trend.scan({"work": steps}, {"work": 0.02}, alpha=0.05)
    [drift] = found["work"]
    assert (drift.first, drift.last) == (13, 18)
    assert drift.ratio == pytest.approx(1.008 ** 6)
    lo, hi = drift.interval
    assert lo < 1.008 ** 6 < hi and lo > 1.02
    assert set(drift.contributors) <= set(range(13, 19)) and len(drift.contributors) == 3
    assert ranges == trend.ranges_in(steps) and z == pytest.approx(trend.critical_z(0.05, ranges))


def test_a_drift_must_leave_parity_not_just_one() -> None:
    steps = _steps([0.003] * 5)  # +1.5% in all, sure of it, but within parity
    assert trend.drifts(steps, z=3.0, parity=0.02) == []
    assert trend.drifts(steps, z=3.0, parity=0.005)  # beyond a 0.5% parity


def test_one_step_alone_is_never_a_drift() -> None:
    steps = _steps([0.0, 0.1, 0.0], se=0.01)  # its own verdict did not call it: it stands
    assert trend.drifts(steps[1:2], z=2.0, parity=0.02) == []
    [d] = trend.drifts(steps, z=2.0, parity=0.02)
    assert d.last - d.first == 1  # two steps at least


def test_no_false_drift_in_null_histories_beyond_the_error_allowed() -> None:
    rng = np.random.default_rng(11)
    false = 0
    for _ in range(200):
        # The steps' true changes sit at the edge of parity together: the hardest null.
        se = rng.uniform(0.0005, 0.004, 30)
        centres = rng.normal(0, se) + math.log1p(0.02) / 30
        steps = [Step(index=i + 1, estimate=StepEstimate(n=100, centre=c, se=s))
                 for i, (c, s) in enumerate(zip(centres, se, strict=True))]
        _, _, found = trend.scan({"w": steps}, {"w": 0.02}, alpha=0.05)
        false += bool(found["w"])
    assert false <= 10  # at most alpha of the histories, with room for chance


def test_the_family_grows_with_workloads_and_so_does_z() -> None:
    one = {"a": _steps([0.0] * 20)}
    two = {"a": _steps([0.0] * 20), "b": _steps([0.0] * 20)}
    z1, r1, _ = trend.scan(one, {"a": 0.02}, alpha=0.05)
    z2, r2, _ = trend.scan(two, {"a": 0.02, "b": 0.02}, alpha=0.05)
    assert r2 == 2 * r1 and z2 > z1


def test_overlapping_drifts_are_reduced_to_the_strongest_and_those_apart() -> None:
    centres = [0.0] * 20
    for i in (2, 3, 4, 13, 14, 15):
        centres[i] = 0.02
    found = trend.drifts(_steps(centres), z=3.0, parity=0.02)
    assert [(d.first, d.last) for d in found] == [(3, 5), (14, 16)]
