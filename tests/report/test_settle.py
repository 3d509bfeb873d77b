"""The command a report gives to settle an unsettled workload: it must be one that would
(the settings the run used, max_runs where the pairs needed pass it), or none at all."""

from __future__ import annotations

import shlex
from dataclasses import replace

from benchbot import cli
from benchbot.core.model import Results
from benchbot.report import build_view
from tests.golden.scenarios import sequential_design


def _settle(doc: Results, name: str, style: str = "cli") -> str | None:
    view = build_view(doc, command_style=style)  # type: ignore[arg-type]
    row = next(r for r in view.rows if r.name == name)
    return row.settle.text if row.settle else None


def test_a_budget_stop_suggests_a_budget_and_one_over_a_day_none() -> None:
    doc = sequential_design()
    assert _settle(doc, "sum", "bench") == "/bench budget=2m only=sum"
    assert _settle(doc, "bfs") is None  # about 5,000 pairs: more than benchbot takes
    assert _settle(doc, "sort") is None and _settle(doc, "copy") is None  # settled


def test_a_max_runs_stop_raises_max_runs() -> None:
    doc = sequential_design()  # parse stopped at its max_runs of 40, a call needs 51
    assert _settle(doc, "parse", "bench") == "/bench budget=1m max_runs=60 only=parse"
    argv = shlex.split(_settle(doc, "parse") or "")
    assert argv[argv.index("--max-runs") + 1] == "60"


def test_the_run_s_parity_and_aa_off_are_kept_and_a_dash_name_stays_one_word() -> None:
    doc = sequential_design()
    benches = tuple(replace(b, parity=0.01, name="-sum") if b.name == "sum" else b
                    for b in doc.benchmarks)
    doc = replace(doc, benchmarks=benches, settings=replace(doc.settings, aa=False))
    text = _settle(doc, "-sum") or ""
    argv = shlex.split(text)
    assert "--parity" in argv and argv[argv.index("--parity") + 1] == "0.01"
    assert "--no-aa" in argv and argv[-1] == "--only=-sum"
    # The command line takes it as written (parsing stops short of running anything).
    parsed = cli._parser().parse_args(argv[1:])
    assert parsed.only == ("-sum",) and parsed.parity == 0.01 and parsed.aa is False
    assert _settle(doc, "-sum", "bench") == "/bench budget=2m parity=0.01 aa=off only=-sum"


def test_a_mixed_config_s_report_names_both_designs() -> None:
    """Some workloads with their own runs, the others measured until settled: the rule
    and the settings line describe both, with the fixed workloads' count."""
    from benchbot.report import render_results
    from benchbot.results import resultsdir
    from benchbot.verdict import sequential
    from tests.golden.scenarios import Maker, document

    m = Maker(31)
    config = ("version: 1\nworkloads:\n  - {name: fixed, run: [f], runs: 30}\n"
              "  - {name: open, run: [o]}\n")
    b1, b2, h = (85e6 * f * m.rng.lognormal(0, 0.005, 51) for f in (1.0, 1.0, 1.05))
    doc = document(config, {"fixed": {"aa": m.same(50e6, 0.004), "ab": m.pair(50e6, 1.0, 0.004)}},
                   triplets={"open": (b1, b2, h, "settled")})
    assert doc.settings.runs == 30 and doc.settings.max_runs == 1000
    assert doc.noise_model.rule.startswith(f"With their own runs: {resultsdir.RULE_SENTENCE}")
    assert doc.noise_model.rule.endswith(resultsdir.SEQUENTIAL_RULE_SENTENCE)
    text = render_results(doc)
    assert "workloads with their own runs: 30 pairs per phase" in text
    assert sequential.CALL_PAIRS == 51
