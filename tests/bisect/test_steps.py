"""The bisect's search on planted histories (a fake Lab): who is named, what is left a
range, which steps are measured and what error each may spend."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from benchbot.bisect.steps import CALLS, IDENTICAL, EndError, Found, Search, step_alpha

SHAS = [f"{i:02x}" + "c" * 38 for i in range(64)]


@dataclass
class FakeLab:
    """Commit i costs ``cost[i]``; a comparison calls a ratio outside ±2% and is level
    inside, unless the pair is in ``undecided``. ``broken`` commits do not build,
    ``failing`` ones build but their runs fail; ``same`` commits share a build output."""

    cost: list[float]
    broken: frozenset[int] = frozenset()
    failing: frozenset[int] = frozenset()
    undecided: frozenset[tuple[int, int]] = frozenset()
    same: Mapping[int, int] = field(default_factory=dict)  # index -> index of equal output
    prepared: list[int] = field(default_factory=list)
    compared: list[tuple[int, int, float]] = field(default_factory=list)
    estimated: list[bool] = field(default_factory=list)

    def prepare(self, index: int) -> str | None:
        self.prepared.append(index)
        return "the build failed (exit 1)" if index in self.broken else None

    def output_hash(self, index: int) -> str | None:
        return f"h{self.same.get(index, index)}"

    def compare(self, left: int, right: int, *, alpha: float, budget_s: float,
                number: int, estimate: bool = True) -> Found:
        self.compared.append((left, right, alpha))
        self.estimated.append(estimate)
        if right in self.failing or left in self.failing:
            return Found(outcome="invalid", reason="a run failed", runs_failed=True)
        ratio = self.cost[right] / self.cost[left]
        if (left, right) in self.undecided:
            return Found(outcome="inconclusive", reason="the spread", ratio=ratio, pairs=40)
        outcome = "slower" if ratio > 1.02 else "faster" if ratio < 1 / 1.02 else "level"
        return Found(outcome=outcome, ratio=ratio, ci=(ratio * 0.99, ratio * 1.01), pairs=20)


def history(n: int, changes: Mapping[int, float]) -> list[float]:
    cost, out = 1.0, []
    for i in range(n):
        cost *= changes.get(i, 1.0)
        out.append(cost)
    return out


def search(lab: FakeLab, n: int, **kw: float) -> Search:
    s = Search(lab=lab, shas=SHAS[:n], alpha=0.05, deadline=kw.get("deadline", 1e9),
               step_cap_s=60.0, clock=lambda: 0.0)
    s.run()
    return s


def named(s: Search) -> list[int]:
    return [SHAS.index(c.sha) for c in s.culprits]


def test_one_change_names_its_commit_only_after_comparing_it_with_its_parent() -> None:
    lab = FakeLab(history(10, {6: 1.08}))
    s = search(lab, 10)
    assert named(s) == [6] and not s.ranges
    [culprit] = s.culprits
    assert culprit.parent == SHAS[5] and culprit.ratio == pytest.approx(1.08)
    assert (5, 6) in [(a, b) for a, b, _ in lab.compared]  # the adjacent pair called it
    # Only the steps that can name a commit (adjacent pairs here) are measured on for
    # their figure after a call.
    for (a, b, _), estimate in zip(lab.compared, lab.estimated, strict=True):
        assert estimate == (b - a == 1)


def test_two_changes_are_both_named_with_their_own_ratios() -> None:
    s = search(FakeLab(history(10, {3: 1.04, 7: 1.05})), 10)
    assert named(s) == [3, 7] and not s.ranges
    assert [round(c.ratio or 0, 3) for c in s.culprits] == [1.04, 1.05]
    answer = s._answer()
    assert answer.kind == "culprits" and "spread over several commits" in answer.sentence


def test_a_commit_that_does_not_build_next_to_the_culprit_is_skipped_and_named() -> None:
    lab = FakeLab(history(10, {6: 1.08}), broken=frozenset({5}))
    s = search(lab, 10)
    assert named(s) == [6] and s.skipped == {5: "the build failed (exit 1)"}
    [culprit] = s.culprits
    assert culprit.parent == SHAS[4] and culprit.skipped == (SHAS[5],)
    assert "or at the skipped" in s._answer().sentence


def test_a_change_at_a_commit_that_does_not_build_is_placed_at_it_or_the_next() -> None:
    s = search(FakeLab(history(10, {5: 1.3}), broken=frozenset({5})), 10)
    assert named(s) == [6] and s.culprits[0].skipped == (SHAS[5],)


def test_a_commit_whose_runs_fail_is_skipped_and_its_neighbours_searched() -> None:
    lab = FakeLab(history(10, {7: 1.2}), failing=frozenset({4}))
    s = search(lab, 10)
    assert named(s) == [7] and 4 in s.skipped and "runs failed" in s.skipped[4]


def test_no_change_names_no_commit() -> None:
    lab = FakeLab(history(10, {}))
    s = search(lab, 10)
    answer = s._answer() if s.culprits or s.ranges else None
    assert answer is None and len(lab.compared) == 1  # good against bad, level: done
    assert s.steps[0].outcome == "level"


@pytest.mark.parametrize("n", [2, 3, 16, 64])
@pytest.mark.parametrize("at", [1, "mid", "last"])
def test_every_single_change_is_found_and_no_innocent_named(n: int, at: int | str) -> None:
    where = 1 if at == 1 else n - 1 if at == "last" else n // 2
    s = search(FakeLab(history(n, {where: 1.5})), n)
    assert named(s) == [where] and not s.ranges
    assert len(s.steps) <= 1 + 2 * math.ceil(math.log2(n))


def test_identical_build_output_is_level_without_measuring() -> None:
    # Commits 1-5 and 7-9 change only a README: their programs equal their parents'.
    same = {i: 0 for i in range(1, 6)} | {i: 6 for i in range(7, 10)}
    lab = FakeLab(history(10, {6: 1.08}), same=same)
    s = search(lab, 10)
    assert named(s) == [6]
    unmeasured = [st for st in s.steps if not st.measured]
    assert unmeasured and all(st.outcome == "level" and st.reason == IDENTICAL
                              and st.alpha == 0 for st in unmeasured)
    assert all(lab.output_hash(a) != lab.output_hash(b) for a, b, _ in lab.compared)


def test_an_inconclusive_good_against_bad_is_a_range_and_stops() -> None:
    lab = FakeLab(history(10, {6: 1.08}), undecided=frozenset({(0, 9)}))
    s = search(lab, 10)
    answer = s._answer()
    assert not s.culprits and answer.kind == "range" and len(lab.compared) == 1
    assert (answer.ranges[0].left, answer.ranges[0].right) == (SHAS[0], SHAS[9])


def test_an_inconclusive_half_is_left_as_a_range_not_guessed() -> None:
    lab = FakeLab(history(10, {2: 1.3, 7: 1.3}), undecided=frozenset({(0, 4)}))
    s = search(lab, 10)
    assert named(s) == [7]
    assert [(SHAS.index(r.left), SHAS.index(r.right)) for r in s.ranges] == [(0, 4)]
    assert s._answer().kind == "partial"


def test_a_change_too_thin_for_either_half_is_a_range() -> None:
    # +1.5% at two commits: each half level (inside ±2%), the whole +3%.
    s = search(FakeLab(history(8, {2: 1.015, 6: 1.015})), 8)
    assert not s.culprits and len(s.ranges) == 1 and "spread" in s.ranges[0].why


def test_the_error_of_all_steps_sums_to_at_most_alpha() -> None:
    assert sum(step_alpha(0.05, k) for k in range(1, 100_000)) < 0.05
    assert sum(step_alpha(0.05, k) for k in range(1, 100_000)) == pytest.approx(0.05, rel=1e-4)
    lab = FakeLab(history(64, {10: 1.1, 40: 1.2, 41: 0.8}))
    s = search(lab, 64)
    spent = [st.alpha for st in s.steps if st.measured]
    assert spent == [step_alpha(0.05, k) for k in range(1, len(spent) + 1)]
    assert [a for _, _, a in lab.compared] == spent
    assert all(c.outcome in CALLS for c in s.culprits)


def test_no_step_starts_once_the_budget_is_spent() -> None:
    lab = FakeLab(history(16, {9: 1.2}))
    s = Search(lab=lab, shas=SHAS[:16], alpha=0.05, deadline=1.0, step_cap_s=60.0,
               clock=lambda: 0.0)
    s.run()
    assert not lab.compared and not s.culprits and "budget was spent" in s.ranges[0].why


def test_a_budget_spent_halfway_leaves_ranges_and_shares_out_what_was_left() -> None:
    now = [0.0]
    budgets: list[float] = []

    class Slow(FakeLab):
        def compare(self, left: int, right: int, *, alpha: float, budget_s: float,
                    number: int, estimate: bool = True) -> Found:
            budgets.append(budget_s)
            now[0] += 10.0
            return super().compare(left, right, alpha=alpha, budget_s=budget_s, number=number)

    lab = Slow(history(16, {9: 1.2}))
    s = Search(lab=lab, shas=SHAS[:16], alpha=0.05, deadline=35.0, step_cap_s=60.0,
               clock=lambda: now[0])
    s.run()
    assert not s.culprits and s.ranges and all("budget was spent" in r.why for r in s.ranges)
    assert any(SHAS.index(r.left) < 9 <= SHAS.index(r.right) for r in s.ranges)
    assert budgets[0] == pytest.approx(35.0) and budgets[1] < 25.0  # shared among the steps ahead


def test_a_good_or_bad_commit_that_does_not_build_stops_the_bisect() -> None:
    with pytest.raises(EndError, match="good"):
        search(FakeLab(history(4, {}), broken=frozenset({0})), 4)


def test_each_commit_is_prepared_once() -> None:
    lab = FakeLab(history(32, {20: 1.2}))
    search(lab, 32)
    assert len(lab.prepared) == len(set(lab.prepared))
