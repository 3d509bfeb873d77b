"""Calls from few pairs (issue 39): below the 51 pairs a 10th percentile needs for its
lower bound, a change is called where the two builds' runs do not overlap, from 15 pairs
in triplets, and a faster one from 32 pairs against both base arms' runs pooled
(docs/verdict.md, "Calls from few pairs")."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from benchbot.core.model import ArmRuns, Family, PhaseRuns, Verdict
from benchbot.verdict import intervals, sequential, stats
from benchbot.verdict.judge import Policy, Workload, judge

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _arm(values: list[float]) -> ArmRuns:
    return ArmRuns(samples_ns=tuple(values), wall_ns=tuple(int(v) for v in values),
                   cpu_ns=tuple(values), maxrss_kib=(1,) * len(values))


def _judged(base: list[float], again: list[float], head: list[float], *,
            family: int = 11, seed: int = 3) -> Verdict:
    n = len(head)
    look = sequential.looks(1000).index(n) + 1 if n in sequential.looks(1000) else 2
    w = Workload(name="w", parity=0.02, floor_ns=25_000.0, design="triplets", looks=look,
                 phases={"aa": PhaseRuns(arms={"base": _arm(base), "base_again": _arm(again)},
                                         order="AB" * n),
                         "ab": PhaseRuns(arms={"base": _arm(base), "head": _arm(head)},
                                         order="AB" * n)})
    final = judge([w], Policy(alpha=0.05, seed=seed, family=Family(sequential=family, fixed=0))
                  ).workloads["w"].final
    assert final is not None
    return final


def _issue_example(n: int = 15) -> tuple[list[float], list[float], list[float]]:
    """Issue 39's benchmark: 15 triplets of a pytest-benchmark suite of 11, base's runs
    4.76-5.06 ms, head's 2.70-3.11 ms (every per-pair ratio 0.54-0.65), in a fixed shuffle."""
    rng = np.random.default_rng(39)
    base = list(rng.permutation(np.linspace(4.76e6, 5.06e6, n)))
    again = list(rng.permutation(np.linspace(4.77e6, 5.05e6, n)))
    head = list(rng.permutation(np.linspace(2.70e6, 3.11e6, n)))
    return base, again, head


@pytest.fixture
def rule_before(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The rule before issue 39: below 51 pairs nothing is called, however the runs lie."""
    monkeypatch.setattr(stats, "_apart", lambda arms, ys, q, slower: (None, 0))
    yield


def test_the_fewest_pairs_the_runs_lying_apart_can_call_from() -> None:
    # (1 - 0.1)^(n + 2n) <= 1%: 15 triplets; pairs of one base arm need 22
    assert intervals.apart_from(0.1, 2) == 15 and intervals.apart_from(0.1, 1) == 22
    assert intervals.apart_bound(15, 30, 0.1) <= intervals.LOW_ALPHA < intervals.apart_bound(14, 28, 0.1)
    assert intervals.apart_from(0.1, 2) < sequential.CALL_PAIRS == 51


def test_the_issue_s_fifteen_pairs_are_called_faster() -> None:
    final = _judged(*_issue_example())
    assert final.outcome == "faster", final
    assert final.ratio is not None and 0.55 < final.ratio < 0.62
    assert final.ci is not None and final.ci[1] < 0.66  # the central side's own interval
    assert sequential.stop_reason(final, None, pairs=15, max_pairs=1000, parity=0.02) == "settled"


def test_the_issue_s_fifteen_pairs_waited_for_51_under_the_rule_before(rule_before: None) -> None:
    final = _judged(*_issue_example())
    assert final.outcome == "inconclusive" and final.reason_code == "few_runs", final
    assert "a change is called from 51 pairs on" in (final.reason or "")


def test_ten_pairs_apart_are_too_few_even_so() -> None:
    final = _judged(*_issue_example(10))
    assert final.outcome == "inconclusive" and final.reason_code == "few_runs", final
    assert ("called from 51 pairs on (a faster one from 32), or from 15 where the builds' runs "
            "do not overlap") in (final.reason or "")
    assert final.suggested_runs == 32  # a faster reading: the pooled reference's pairs


def test_one_head_run_that_reaches_base_s_runs_holds_the_call() -> None:
    base, again, head = _issue_example()
    head[4] = 4.9e6  # one slow head run among base's: the runs overlap
    final = _judged(base, again, head)
    assert final.outcome == "inconclusive" and final.reason_code == "few_runs", final
    assert "(1 of head's 15 reach base's fastest)" in (final.reason or ""), final.reason
    assert sequential.pending_change(final)  # the budget goes to it first
    # the mirror image: a slower call, held by one base run as slow as head's fastest
    fast, fast_again, slow = _issue_example()[2], _issue_example()[2][::-1], _issue_example()[0]
    assert _judged(fast, fast_again, slow).outcome == "slower"
    fast_again[2] = 4.8e6  # above head's fastest, 4.76 ms
    held = _judged(fast, fast_again, slow)
    assert held.outcome == "inconclusive" and held.reason_code == "few_runs", held
    assert "(1 of base's 30 reach head's fastest; 0 may at 15 pairs)" in (held.reason or ""), \
        held.reason


def test_the_pairs_from_which_runs_across_are_spared() -> None:
    # k = 0 as before; what LOW_ALPHA leaves beyond it goes half to base's slow runs across a
    # slower call wherever they lie (halved for each further k: 1 from 33 pairs), half to
    # those above all but t of head's runs (t = 0 from 30 pairs, 12 from 34). A faster call
    # spares none: what LOW_ALPHA leaves goes to base's runs pooled, from 32 pairs
    # (0.9^64 = 0.12%)
    assert intervals.apart_tiers(0.1, 2, True) == (15, 33, 40, 48, 55)
    assert intervals.above_tiers(0.1, 2) == ((30, 0), (34, 12))
    assert intervals.apart_tiers(0.1, 2, False) == (15,)
    assert intervals.pooled_from(0.1, 2) == 32
    tiers = intervals.apart_tiers(0.1, 2, True)
    spared = sum(intervals.apart_bound(n, 2 * n, 0.1, k, slower=True) for k, n in enumerate(tiers))
    above = sum(intervals.above_bound(n, 2 * n, 0.1, t) for n, t in intervals.above_tiers(0.1, 2))
    assert spared + above <= intervals.LOW_ALPHA  # every k, every t, every look: within 1%
    # the rule before this split spent all of what was left on k and called from 30 pairs
    assert intervals.spared_from(0.1, 2, True, 15) == (15, 30, 38, 45, 52)
    assert intervals.apart_spared(tiers[1] - 1, 0.1, 2, True) == 0
    assert intervals.apart_spared(tiers[1], 0.1, 2, True) == 1
    assert intervals.above_spared(29, 0.1, 2) is None and intervals.above_spared(30, 0.1, 2) == 0
    assert intervals.above_spared(33, 0.1, 2) == 0 and intervals.above_spared(34, 0.1, 2) == 12
    # one base arm (the A/A comparison): no such route below 51 pairs, and its k tiers as before
    assert intervals.above_tiers(0.1, 1) == ()
    assert intervals.apart_tiers(0.1, 1, True) == intervals.spared_from(0.1, 1, True, 22)
    # a faster call: no run across from 15, and the pooled reference from 32, within 1% too
    faster = intervals.apart_bound(15, 30, 0.1, 0, slower=False) + 0.9 ** (2 * 32)
    assert faster <= intervals.LOW_ALPHA < intervals.apart_bound(15, 30, 0.1) + 0.9 ** (2 * 31)
    assert intervals.apart_spared(14, 0.1, 2, False) is None
    assert intervals.apart_spared(50, 0.1, 2, False) == 0
    # one base arm (the A/A comparison) has nothing to pool: its faster tiers stay
    assert intervals.pooled_from(0.1, 1) is None
    assert len(intervals.apart_tiers(0.1, 1, False)) == intervals.APART_SPARED + 1
    # k = 0 is the bound as it was, both ways
    assert intervals.apart_bound(15, 30, 0.1, 0, slower=False) == pytest.approx(0.9 ** 45)
    assert intervals.apart_bound(15, 30, 0.1, 0, slower=True) == pytest.approx(0.9 ** 45)
    # the slower bound spares the reference's runs: (0.9)^n P(Bin(2n, 0.1) <= 1)
    assert intervals.apart_bound(30, 60, 0.1, 1, slower=True) == pytest.approx(
        0.9 ** 30 * (0.9 ** 60 + 60 * 0.1 * 0.9 ** 59))


def _apart_example(n: int, slow_head: int) -> tuple[list[float], list[float], list[float]]:
    """The issue's -40%, n triplets, ``slow_head`` of head's runs slowed to base's level by
    a busy host (5.0 ms: among base's runs)."""
    base, again, head = _issue_example(n)
    for i in range(slow_head):
        head[3 * i + 1] = 5.0e6
    return base, again, head


def test_slow_head_runs_do_not_hold_a_faster_call_from_32_pairs() -> None:
    # from 32 pairs a faster call rests on base's 64 and more runs pooled, however many of
    # head's runs a busy host slowed: at 34 pairs, 3 and 8 of them among base's runs
    assert _judged(*_apart_example(34, 3)).outcome == "faster"
    assert _judged(*_apart_example(34, 8)).outcome == "faster"
    # at 22 pairs a faster call still needs the runs apart: one slow head run holds it
    held = _judged(*_apart_example(22, 1))
    assert held.outcome == "inconclusive" and held.reason_code == "few_runs", held
    assert ("a change is called from 51 pairs on (a faster one from 32), or before where the "
            "builds' runs do not overlap (1 of head's 22 reach base's fastest)") in (held.reason or "")
    assert held.suggested_runs == 32
    assert _judged(*_apart_example(22, 0)).outcome == "faster"


def test_a_faster_reading_whose_fast_runs_stay_against_the_pooled_runs_waits_for_51() -> None:
    # the median reads -40%, but head's fastest run is no faster than base's fastest of all
    # 68 runs: one arm's runs all slow (a mode) would make the arms' mean read faster
    base, again, head = _issue_example(34)
    base[0] = head[0] = 2.6e6
    held = _judged(base, again, head)
    assert held.outcome == "inconclusive" and held.reason_code == "few_runs", held
    assert "against both base arms' runs together, head's fastest reads +0.0%" in (
        held.reason or ""), held.reason
    assert held.suggested_runs == 51


def test_a_slower_call_spares_base_s_slow_runs_more_dearly() -> None:
    # the mirror image (head and base swapped): base's 68 runs at 34 pairs spare 1
    fast, fast_again, slow = _apart_example(34, 0)[2], _apart_example(34, 0)[2][::-1], \
        _apart_example(34, 0)[0]
    fast[5] = 4.85e6  # a slow run of base's, above head's fastest, in its midst
    assert _judged(fast, fast_again, slow).outcome == "slower"
    fast_again[7] = 4.85e6
    held = _judged(fast, fast_again, slow)
    assert held.outcome == "inconclusive" and "(2 of base's 68 reach head's fastest; 1 may at " \
        "34 pairs, or any number lying above all but 12 of head's runs: 2 do not)" in (
            held.reason or ""), held.reason


def _bursts(n: int, base_slow: int, head_slow: int) -> tuple[list[float], list[float], list[float]]:
    """The issue's -40% mirrored into a slower change (+67%: head 4.76-5.06 ms, base
    2.70-3.11 ms), n triplets, a busy host's bursts: ``base_slow`` of base's runs at
    7.2-7.6 ms (above all of head's runs but its own bursts), ``head_slow`` of head's at
    9 ms."""
    fast, again, slow = _issue_example(n)[2], _issue_example(n)[2][::-1], _issue_example(n)[0]
    for i in range(base_slow):
        (fast if i % 2 else again)[3 * i + 1] = 7.2e6 + 0.1e6 * (i % 5)
    for i in range(head_slow):
        slow[2 * i + 1] = 9.0e6
    return fast, again, slow


def test_base_s_slow_runs_above_nearly_all_of_head_s_are_spared_from_30_pairs() -> None:
    # six of base's 68 runs across head's fastest, each above all of head's runs but head's
    # own bursts: at 34 pairs a slower call spares any that lie above all but 12
    assert _judged(*_bursts(34, 6, 2)).outcome == "slower"
    assert _judged(*_bursts(34, 6, 12)).outcome == "slower"
    # thirteen of head's above them: more than any pairs below 51 allow
    held = _judged(*_bursts(34, 6, 13))
    assert held.outcome == "inconclusive" and held.reason_code == "few_runs", held
    assert ("(6 of base's 68 reach head's fastest; 1 may at 34 pairs, or any number lying "
            "above all but 12 of head's runs: 6 do not)") in (held.reason or ""), held.reason
    # from 30 pairs, those above all of head's runs
    assert _judged(*_bursts(30, 6, 0)).outcome == "slower"
    held = _judged(*_bursts(30, 6, 1))
    assert held.outcome == "inconclusive" and (
        "above all but 0 of head's runs: 6 do not)") in (held.reason or ""), held.reason
    # two slow runs of base's in head's midst (4.85 ms: head's runs reach 5.06) hold it
    fast, again, slow = _bursts(34, 6, 0)
    fast[0], fast[10] = 4.85e6, 4.85e6
    held = _judged(fast, again, slow)
    assert held.outcome == "inconclusive" and ": 2 do not)" in (held.reason or ""), held.reason
    # below 30 pairs, none is spared this way: at 22 pairs six bursts hold the call, and
    # the reason says only what the runs across are
    held = _judged(*_bursts(22, 6, 0))
    assert held.outcome == "inconclusive" and held.reason_code == "few_runs", held
    assert "(6 of base's 44 reach head's fastest; 0 may at 22 pairs)" in (held.reason or "")


@pytest.mark.parametrize(("m", "t"), [(1, 0), (2, 12), (4, 12)])
def test_slow_runs_of_base_s_in_head_s_mode_escape_its_midst_as_often_as_the_bound_says(
        m: int, t: int) -> None:
    """Head's 34 runs all in the slow mode (1% wide), m of base's 68 in it too and the rest
    25% faster: the m lie outside head's midst (below its fastest or above all but t of its
    runs) in C(m + t + 1, m) of the C(34 + m, m) ways their ranks interleave with head's,
    the share ``intervals.above_bound`` sums. Counted over 4,000 draws."""
    rng = np.random.default_rng(2029 + 10 * m + t)
    n, escaped = 34, 0
    for _ in range(4000):
        head = 1.25 * (1 + rng.exponential(0.005, n))
        base = np.concatenate([1.25 * (1 + rng.exponential(0.005, m)),
                               1 + rng.exponential(0.005, 2 * n - m)])
        escaped += stats._amid(base, head, t) == 0
    expected = math.comb(m + t + 1, m) / math.comb(n + m, m)
    assert abs(escaped / 4000 - expected) < 4 * math.sqrt(expected * (1 - expected) / 4000) + 0.002


def test_the_above_bound_is_largest_where_base_is_slow_least_often() -> None:
    # the premise lets base land in its slow mode in any share from q up; the bound is
    # taken at q, so it must be the largest there
    for n, t in ((30, 0), (34, 12), (40, 12)):
        at_q = intervals.above_bound(n, 2 * n, 0.1, t)
        for q2 in (0.11, 0.15, 0.3, 0.5, 0.9):
            head_all_slow = 0.9 ** n
            other = head_all_slow * sum(
                math.comb(2 * n, m) * q2 ** m * (1 - q2) ** (2 * n - m)
                * math.comb(m + t + 1, m) / math.comb(n + m, m) for m in range(2 * n + 1))
            assert other < at_q, (n, t, q2)
    # m = 0 alone is the runs lying apart with none across: the bound holds it
    assert intervals.above_bound(15, 30, 0.1, 0) > intervals.apart_bound(15, 30, 0.1)


@pytest.mark.parametrize("name", ["biased-modes-384.json", "biased-modes-1000.json"])
@pytest.mark.parametrize("n", [15, 22, 34])
def test_recorded_biased_modes_are_not_called_from_few_pairs(name: str, n: int) -> None:
    """Identical work per mode, head in the slow mode in 70% of its runs, base in 50%
    (tests/fixtures): at every look below 51 pairs, no call; the runs overlap."""
    rec = json.loads((FIXTURES / name).read_text())
    final = _judged(rec["base"][:n], rec["base_again"][:n], rec["head"][:n], family=1,
                    seed=rec["seed"])
    assert final.outcome not in ("slower", "faster"), final


def test_timing_modes_at_the_premise_s_corner_lie_apart_about_as_often_as_it_says() -> None:
    """Head in the slow mode (+25%) in 90% of its runs, base in 10%, each mode 1% wide:
    the runs of 15 triplets lie apart (head's above all 30 of base's) only where head's
    all landed slow and base's all fast, (0.9)^45 = 0.9% of the time; within a mode
    nothing separates them. Counted over 4,000 draws: about that, and below 1.5%."""
    share = _corner_apart(2026, 15, head_slow=0.9, base_slow=0.1, slower=True)
    assert 0.004 < share < 0.015, share


def test_timing_modes_at_the_corner_fool_the_pooled_reference_as_rarely_as_the_bound_says() -> None:
    """The corner mirrored for a faster call (head slow in 10% of its runs, base in 90%),
    modes 25% apart and 1% wide, 32 pairs: head's fastest run reads faster than base's
    fastest of all 64 beyond parity only where all 64 landed slow, 0.9^64 = 0.12%; counted
    over 4,000 draws, under 0.4%. The arms' fastest one by one are fooled where either
    arm's 32 runs all landed slow, about 6% of draws: why a faster call pools them."""
    rng = np.random.default_rng(2028)
    n, pooled, by_arm = 32, 0, 0
    for _ in range(4000):
        base = np.where(rng.random(2 * n) < 0.9, 1.25, 1.0) * (1 + rng.exponential(0.005, 2 * n))
        head = np.where(rng.random(n) < 0.1, 1.25, 1.0) * (1 + rng.exponential(0.005, n))
        logs = stats._pooled_logs([base[:n], base[n:]], head, 0.1,
                                  float(np.quantile(np.log(head), 0.1)),
                                  float(np.quantile(np.log(head), stats.TAIL_QUANTILE)))
        pooled += logs[2] < -np.log1p(0.02)
        by_arm += np.log(head.min()) - (np.log(base[:n].min()) + np.log(base[n:].min())) / 2 \
            < -np.log1p(0.02)
    assert pooled / 4000 < 0.004, pooled
    assert 0.03 < by_arm / 4000 < 0.1, by_arm


def _corner_apart(seed: int, n: int, *, head_slow: float, base_slow: float, slower: bool,
                  draws: int = 4000) -> float:
    """The share of ``draws`` of n triplets, in two modes 25% apart (each 1% wide), that
    ``stats._apart`` finds lying apart the way ``slower`` says."""
    rng = np.random.default_rng(seed)

    def runs(slow: float, k: int) -> np.ndarray:
        return np.where(rng.random(k) < slow, 1.25, 1.0) * (1 + rng.exponential(0.005, k))
    apart = 0
    for _ in range(draws):
        base, head = runs(base_slow, 2 * n), runs(head_slow, n)
        got, _ = stats._apart([base[:n], base[n:]], head, 0.1, slower)
        apart += bool(got)
    return apart / draws
