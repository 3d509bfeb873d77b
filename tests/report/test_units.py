"""A throughput's unit (config ``unit``) beside its figures, and a hostile one from a
results file left out: the publish job renders files a measure job wrote."""

from __future__ import annotations

from dataclasses import replace

from benchbot.report import render_results
from tests.golden.scenarios import better_higher


def test_the_unit_the_config_gave_is_shown_with_every_figure() -> None:
    text = render_results(better_higher())
    assert "1,490\u00a0queries/s" in text and "1,456\u00a0queries/s–1,534\u00a0queries/s" in text


def test_a_unit_the_config_could_not_have_given_is_left_out() -> None:
    doc = better_higher()
    hostile = "</details><img src=x> @team"
    doc = replace(doc, benchmarks=tuple(replace(b, unit=hostile) if b.name == "qps" else b
                                        for b in doc.benchmarks))
    for fmt in ("markdown", "html"):
        text = render_results(doc, fmt)  # type: ignore[arg-type]
        assert "<img" not in text and "@team" not in text and "1,490" in text
