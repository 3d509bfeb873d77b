"""The HTML report's plot geometry (report/plots.py): scales, bands, ticks and edge cases."""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

import pytest
from markupsafe import Markup

from benchbot.report import plots
from benchbot.report.build import build_view
from benchbot.report.plots import Box, Scale
from benchbot.report.view import Row
from tests.golden.scenarios import mixed


def make_row(**over: Any) -> Row:
    """A timed workload, 1.05x slower, with 30 pairs and 30 A/A pairs; override any field."""
    fields: dict[str, Any] = dict(
        name="sort", outcome="slower", icon="", better="lower", base=100.0, head=105.0,
        unit="ns", ratio=1.05, ci=(1.04, 1.06), best_ratio=1.05, tolerance=0.02,
        best_tolerance=0.02, spread=0.01, parity=0.02, aa_ratio=1.0, aa_outcome="level",
        pairs=30, reason=None, reason_code=None, settle=None, note=None, ratios=None,
        aa_ratios=None, base_runs=None, head_runs=None,
        pair_ratios=tuple(1.05 + 0.01 * math.sin(i) for i in range(30)),
        aa_pair_ratios=tuple(1.0 + 0.005 * math.cos(i) for i in range(30)),
        base_series=tuple(100.0 + i % 3 for i in range(30)),
        head_series=tuple(105.0 + i % 3 for i in range(30)), phase_breaks=(),
        design="pairs", stopped=None, stopped_why=None,
    )
    fields.update(over)
    return Row(**fields)


def inside(points: tuple[plots.Point, ...], box: Box) -> bool:
    return all(box.left <= x <= box.right and box.top <= y <= box.bottom for x, y in points)


def numbers_are_finite(markup: str) -> bool:
    return not re.search(r"nan|inf", markup, re.IGNORECASE)


# Scales and domains


def test_a_linear_scale_maps_its_ends_and_a_log_scale_its_geometric_middle() -> None:
    linear = Scale(10, 20, 0, 100)
    assert (linear(10), linear(15), linear(20)) == (0, 50, 100)
    log = Scale(0.5, 2.0, 200, 0, log=True)  # y grows downwards: high values go up
    assert log(0.5) == 200 and log(2.0) == 0 and log(1.0) == pytest.approx(100)


def test_a_log_domain_holds_the_values_with_a_margin() -> None:
    lo, hi = plots.log_domain([0.9, 1.0, 1.2])
    assert lo < 0.9 and hi > 1.2
    pad = math.log(1.2 / 0.9) * plots.PAD
    assert math.log(0.9 / lo) == pytest.approx(pad) and math.log(hi / 1.2) == pytest.approx(pad)


@pytest.mark.parametrize("values", [[1.0], [1.0] * 50, [3.7, 3.7], [], [0.0, -1.0, math.nan]])
def test_identical_single_or_no_values_still_give_a_domain_of_some_width(values: list[float]) -> None:
    lo, hi = plots.log_domain(values)
    assert 0 < lo < hi and math.log(hi / lo) >= plots.MIN_LOG_SPAN


@pytest.mark.parametrize(("values", "expected"), [([5.0, 5.0], (4.95, 5.05)), ([0.0], (-1.0, 1.0))])
def test_identical_values_on_a_linear_axis_get_a_band_around_them(values: list[float],
                                                                  expected: tuple[float, float]) -> None:
    assert plots.linear_domain(values) == pytest.approx(expected)


# Ticks


@pytest.mark.parametrize(("span", "count", "step"), [(0.1, 5, 0.02), (7, 5, 2), (1, 4, 0.25), (900, 5, 200)])
def test_steps_are_round(span: float, count: int, step: float) -> None:
    assert plots.nice_step(span, count) == pytest.approx(step)


def test_ticks_on_a_narrow_ratio_axis_are_round_and_include_one() -> None:
    ticks = plots.ratio_ticks(0.97, 1.06)
    assert 1.0 in ticks and ticks == pytest.approx([0.98, 1.0, 1.02, 1.04, 1.06])
    assert plots.ratio_label(1.0, ticks) == "1.00×"


def test_ticks_on_a_wide_ratio_axis_go_by_one_two_five() -> None:
    assert plots.ratio_ticks(0.15, 30) == pytest.approx([0.2, 0.5, 1, 2, 5, 10, 20])


def test_labels_get_the_decimals_that_tell_ticks_apart() -> None:
    ticks = (0.995, 1.0, 1.005)
    assert [plots.ratio_label(t, ticks) for t in ticks] == ["0.995×", "1.000×", "1.005×"]


def test_crowded_ticks_are_thinned_keeping_the_one_asked_for() -> None:
    ticks = [plots.Tick(at, str(at)) for at in (0, 5, 10, 20, 30)]
    kept = plots.thin(ticks, keep=10)
    assert [t.at for t in kept] == [10, 30]
    assert all(abs(a.at - b.at) >= plots.MIN_TICK_GAP for a, b in itertools.pairwise(kept))


def test_pair_numbers_start_at_one_and_end_within_the_pairs() -> None:
    box = Box(0, 0, 500, 100)
    labels = [t.label for t in plots.pair_ticks(60, box)]
    assert labels[0] == "1" and labels[-1] == "60" and all(int(x) <= 60 for x in labels)
    assert [t.label for t in plots.pair_ticks(1, box)] == ["1"] and plots.pair_ticks(0, box) == ()


# Positions, dots, histograms


def test_one_point_sits_in_the_middle_and_many_spread_evenly_inside_the_box() -> None:
    box = Box(10, 0, 110, 50)
    assert plots.positions(1, box) == (60,)
    xs = plots.positions(1000, box)
    assert xs[0] >= 10 and xs[-1] <= 110 and all(b > a for a, b in itertools.pairwise(xs))


def test_dots_shrink_as_they_crowd() -> None:
    sizes = [plots.dot_size(n) for n in (1, 60, 100, 300, 1000)]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] >= 2


def test_the_fullest_histogram_bin_has_the_full_length_and_the_top_value_the_top_bin() -> None:
    bars = plots.histogram([1.0, 1.0, 2.0, 3.0], 1.0, 3.0, 40)
    assert len(bars) == plots.HIST_BINS and max(bars) == 40 and bars[0] == 40 and bars[-1] == 20


# The ratio plot


def test_the_bands_sit_where_their_ratios_say_on_a_symmetric_log_scale() -> None:
    p = plots.ratio_plot(make_row(tolerance=0.05))
    up, down = p.parity
    assert p.one - up == pytest.approx(down - p.one)  # 1.02 and 1/1.02 equally far from 1
    assert p.tolerance is not None
    assert p.one - p.tolerance[0] > p.one - up  # 5% lies further out than 2%
    assert p.median is not None and p.ci is not None
    assert p.ci[0] < p.median < p.ci[1]  # y grows downwards: 1.06 is above 1.05
    assert p.median < p.one  # slower: above the line


def test_every_point_lies_inside_its_panel_and_both_panels_share_one_scale() -> None:
    row = make_row(pair_ratios=(1.0, 1.3, 0.8), aa_pair_ratios=(1.0, 1.3, 0.8))
    p = plots.ratio_plot(row)
    assert inside(p.ab_points, p.ab) and inside(p.aa_points, p.aa)
    assert [y for _, y in p.ab_points] == [y for _, y in p.aa_points]


def test_a_throughput_is_drawn_the_way_the_verdict_reads_it() -> None:
    # Head makes 25% more operations a second: per-pair value ratios of 1.25, a verdict
    # ratio (of times) of 0.8. The dots must sit on the median line, below 1.
    row = make_row(better="higher", unit="value", ratio=0.8, ci=(0.79, 0.81),
                   pair_ratios=(1.25,) * 10, aa_pair_ratios=(1.0,) * 10)
    p = plots.ratio_plot(row)
    assert p.median is not None and all(y == pytest.approx(p.median) for _, y in p.ab_points)
    assert p.median > p.one and "as time" in p.y_label


def test_an_invalid_workload_without_runs_gets_empty_panels_and_no_runs_plot() -> None:
    row = make_row(outcome="invalid", ratio=None, ci=None, best_ratio=None, tolerance=None,
                   pair_ratios=(), aa_pair_ratios=(), base_series=(), head_series=(), pairs=0)
    p = plots.ratio_plot(row)
    assert p.ab_points == () and p.aa_points == () and p.median is None and p.tolerance is None
    markup = plots.svg(p)
    assert markup.count("no runs") == 2 and "pts" not in markup and numbers_are_finite(markup)
    assert plots.runs_plot(row) is None


def test_with_the_aa_check_off_the_ab_panel_stands_alone() -> None:
    p = plots.ratio_plot(make_row(aa_pair_ratios=(), aa_ratio=None, aa_outcome=None))
    assert p.aa_points == () and p.aa_median is None and len(p.ab_points) == 30
    assert plots.svg(p).count("no runs") == 1


def test_an_aborted_aa_check_leaves_the_ab_panel_empty_and_draws_no_median_there() -> None:
    p = plots.ratio_plot(make_row(pair_ratios=(), base_series=(), head_series=(), ratio=1.09,
                                  ci=(1.08, 1.1), tolerance=None))
    assert p.ab_points == () and p.median is None and p.ci is None and len(p.aa_points) == 30


@pytest.mark.parametrize("n", [1, 2, 1000])
def test_one_to_a_thousand_pairs_fit(n: int) -> None:
    row = make_row(pair_ratios=tuple(1 + 0.01 * math.sin(i) for i in range(n)),
                   base_series=tuple(float(100 + i % 7) for i in range(n)),
                   head_series=tuple(float(103 + i % 5) for i in range(n)))
    ratio, runs = plots.ratio_plot(row), plots.runs_plot(row)
    assert runs is not None
    assert inside(ratio.ab_points, ratio.ab) and len(ratio.ab_points) == n
    assert inside(runs.base_points, runs.box) and inside(runs.head_points, runs.box)
    assert numbers_are_finite(plots.svg(ratio) + plots.svg(runs))
    assert len(plots.svg(ratio)) < 20_000 + 14 * n  # one path of short segments per series


def test_identical_values_draw_a_flat_line_of_dots() -> None:
    row = make_row(pair_ratios=(1.0,) * 20, aa_pair_ratios=(1.0,) * 20, ratio=1.0, ci=(1.0, 1.0),
                   base_series=(5.0,) * 20, head_series=(5.0,) * 20)
    ratio, runs = plots.ratio_plot(row), plots.runs_plot(row)
    assert runs is not None and {y for _, y in ratio.ab_points} == {ratio.one}
    assert len({y for _, y in runs.base_points + runs.head_points}) == 1
    assert numbers_are_finite(plots.svg(ratio) + plots.svg(runs))


def test_the_confirmation_line_falls_between_the_phases() -> None:
    # Regression: the view counted runs (two letters of order a pair), not pairs, and put
    # the line past the end.
    row = next(r for r in build_view(mixed()).rows if r.name == "sort")
    assert row.phase_breaks == (30,) and len(row.pair_ratios) == 60
    p = plots.ratio_plot(row)
    (x,) = p.breaks
    assert p.ab_points[29][0] < x < p.ab_points[30][0]


# The runs plot and the markup


def test_runs_are_labelled_with_their_unit() -> None:
    timed = plots.runs_plot(make_row(base_series=(85e6, 86e6), head_series=(88e6, 89e6)))
    assert timed is not None and all(t.label.endswith(" ms") for t in timed.y_ticks)
    reported = plots.runs_plot(make_row(better="higher", unit="value",
                                        base_series=(7000.0, 7100.0), head_series=(8400.0, 8500.0)))
    assert reported is not None and "higher is better" in reported.y_label
    assert all(t.label.replace(",", "").isdigit() for t in reported.y_ticks)


def test_the_svg_is_markup_made_of_numbers_and_fixed_words_only() -> None:
    row = make_row(name="<script>alert(1)</script>", reason="<img src=x onerror=alert(1)>")
    for plot in (plots.ratio_plot(row), plots.runs_plot(row)):
        assert plot is not None
        markup = plots.svg(plot)
        assert isinstance(markup, Markup) and "script" not in markup and "img" not in markup

