"""The results file: schema, typed round trip, atomic writes, loading errors (merging: test_shards)."""

from __future__ import annotations

import io
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from benchbot import cli, results
from benchbot.errors import ResultsError
from tests.golden.scenarios import mixed

FIXTURES = Path(__file__).parents[1] / "fixtures" / "results-0.1.0"


def test_document_validates_and_round_trips(tmp_path: Path, validate) -> None:
    doc = mixed()
    path = tmp_path / "r.json"
    results.save(path, doc)
    validate(path)
    assert results.load(path) == doc


def test_samples_are_integers_in_measured_order() -> None:
    data = results.to_json(mixed())
    sort = next(b for b in data["benchmarks"] if b["name"] == "sort")
    samples = sort["arms"]["base"]["wall_ns"]
    assert all(isinstance(s, int) for s in samples)
    assert samples[:30] == sort["phases"]["ab"]["arms"]["base"]["wall_ns"]
    assert samples != sorted(samples)  # measured order, not sorted
    assert sort["aa"] == {"verdict": sort["aa"]["verdict"]} and "outcome" in sort["aa"]["verdict"]


def test_a_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"old": true}\n')

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        results.save(path, mixed())
    assert path.read_text() == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary left behind


def test_nan_is_written_as_null(tmp_path: Path) -> None:
    doc = mixed()
    doc = replace(doc, summary=replace(doc.summary, geomean_ratio=float("nan")))
    results.save(tmp_path / "r.json", doc)
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["geomean_ratio"] is None


def test_runs_are_written_one_list_a_line(tmp_path: Path) -> None:
    # A results file of 500 workloads x 200 pairs is tens of megabytes with a line per
    # number (benchmarks/scale.py): each list of numbers is written on one line.
    text = results.dumps(mixed())
    line = next(x for x in text.splitlines() if '"wall_ns": [' in x)
    assert line.rstrip(",").endswith("]") and line.count(",") >= 29
    assert json.loads(text) == results.to_json(mixed())


def test_text_that_looks_like_a_list_marker_stays_text(tmp_path: Path, monkeypatch) -> None:
    # The markers hold a fresh random token; were it guessed, the text is still kept.
    monkeypatch.setattr(results.secrets, "token_hex", lambda n: "0123456789abcdef")
    doc = mixed()
    doc = replace(doc, base=replace(doc.base, ref="0123456789abcdef:0"))
    path = tmp_path / "r.json"
    results.save(path, doc)
    assert results.load(path).base.ref == "0123456789abcdef:0"


@pytest.mark.parametrize(("value", "where"), [(-1, "[5]"), (1.5, "[5]"), ("7", "[5]"), (True, "[5]")])
def test_a_bad_run_in_a_long_list_is_named(tmp_path: Path, value: object, where: str) -> None:
    # Lists of valid runs are checked apart from jsonschema (for speed); a list with a
    # bad item is left to it, so the error names the item as before.
    data = results.to_json(mixed())
    data["benchmarks"][0]["phases"]["ab"]["arms"]["head"]["wall_ns"][5] = value
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=r"benchmarks\[0\]\.phases\.ab\.arms\.head\.wall_ns\[5\]"):
        results.load(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"x": 1}', "no schema_version"),
        ('{"schema_version": 99}', "schema_version 99 is not supported"),
        ('{"schema_version": 1}', "does not match the results schema: (top level): 'tool' is a required property"),
    ],
)
def test_load_errors_say_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(ResultsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        results.load(path)


@pytest.mark.parametrize("name", ["mixed.json", "demo.json"])
def test_files_of_benchbot_0_1_0_still_load_and_render(name: str) -> None:
    """Results files written by today's main before the typed model (kept as fixtures)."""
    doc = results.load(FIXTURES / name)
    assert doc.schema_version == 1 and doc.sandbox is None and doc.environment.other_cpu is None
    out = io.StringIO()
    assert cli.main(["report", str(FIXTURES / name)], out=out, err=io.StringIO()) == 0
    assert "### benchbot" in out.getvalue()
    assert cli.main(["report", str(FIXTURES / name), "--format", "html"], out=io.StringIO(),
                    err=io.StringIO()) == 0


def test_cli_report(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    results.save(path, mixed())
    out = io.StringIO()
    assert cli.main(["report", str(path)], out=out, err=io.StringIO()) == 0
    assert "**slower +4.4%**" in out.getvalue()
    assert cli.main(["report", str(path), "--format", "html", "-o", str(tmp_path / "r.html")],
                    out=io.StringIO(), err=io.StringIO()) == 0
    assert "<table>" in (tmp_path / "r.html").read_text()
    err = io.StringIO()
    assert cli.main(["report", str(tmp_path / "missing.json")], out=io.StringIO(), err=err) == 1
    assert "missing.json" in err.getvalue()


def test_cli_usage_error_exits_2() -> None:
    err = io.StringIO()
    assert cli.main(["compare", "--base", "x"], out=io.StringIO(), err=err) == 2
    assert "--head" in err.getvalue()
    assert cli.main(["compare", "--base", "a", "--head", "b", "--fail-on", "worse"], out=io.StringIO(), err=err) == 2
