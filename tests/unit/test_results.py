"""The results file: schema, atomic writes, loading errors, merging shards."""

from __future__ import annotations

import copy
import io
import json
import os
from pathlib import Path

import pytest

from benchbot import cli, results
from benchbot.errors import ResultsError
from tests.golden.test_golden import make_document


def test_document_validates_and_round_trips(tmp_path: Path, validate) -> None:
    doc = make_document()
    path = tmp_path / "r.json"
    results.save(path, doc)
    validate(path)
    assert results.load(path) == json.loads(json.dumps(doc))


def test_samples_are_integers_in_measured_order() -> None:
    doc = make_document()
    sort = next(b for b in doc["benchmarks"] if b["name"] == "sort")
    samples = sort["arms"]["base"]["samples_ns"]
    assert all(isinstance(s, int) for s in samples)
    assert samples == sort["phases"]["ab"]["arms"]["base"]["samples_ns"]
    assert samples != sorted(samples)  # measured order, not sorted


def test_a_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"old": true}\n')

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        results.save(path, make_document())
    assert path.read_text() == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary left behind


def test_nan_is_refused_rather_than_written(tmp_path: Path) -> None:
    doc = make_document()
    doc["summary"]["geomean_ratio"] = float("nan")
    with pytest.raises(ValueError):
        results.save(tmp_path / "r.json", doc)
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"x": 1}', "no schema_version"),
        ('{"schema_version": 99}', "schema_version 99 is not supported"),
    ],
)
def test_load_errors_say_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(ResultsError, match=message):
        results.load(path)


def test_merge_combines_shards_and_recounts(validate) -> None:
    doc = make_document()
    a, b = copy.deepcopy(doc), copy.deepcopy(doc)
    a["benchmarks"] = doc["benchmarks"][:2]
    b["benchmarks"] = doc["benchmarks"][2:]
    merged = results.merge([a, b])
    validate(merged)
    assert [x["name"] for x in merged["benchmarks"]] == [x["name"] for x in doc["benchmarks"]]
    assert merged["summary"] == doc["summary"]


def test_merge_refuses_different_revisions_and_duplicates() -> None:
    doc = make_document()
    other = copy.deepcopy(doc)
    other["head"]["sha"] = "c" * 40
    with pytest.raises(ResultsError, match="head is"):
        results.merge([doc, other])
    with pytest.raises(ResultsError, match="in two files"):
        results.merge([doc, doc])


def test_cli_report_and_merge(tmp_path: Path) -> None:
    doc = make_document()
    path = tmp_path / "r.json"
    results.save(path, doc)
    out = io.StringIO()
    assert cli.main(["report", str(path)], out=out, err=io.StringIO()) == 0
    assert "**slower +4.3%**" in out.getvalue()
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
