"""The results file: schema, typed round trip, atomic writes, loading errors (merging: test_shards)."""

from __future__ import annotations

import io
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from benchbot import cli
from benchbot.core.errors import ResultsError
from benchbot.report import render_results
from benchbot.results import resultsdir
from tests.golden.scenarios import counted, mixed

FIXTURES = Path(__file__).parents[1] / "fixtures" / "results-0.1.0"


def test_document_validates_and_round_trips(tmp_path: Path, validate) -> None:
    doc = mixed()
    path = tmp_path / "r.json"
    resultsdir.save(path, doc)
    validate(path)
    assert resultsdir.load(path) == doc


def test_samples_are_integers_in_measured_order() -> None:
    data = resultsdir.to_json(mixed())
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
        resultsdir.save(path, mixed())
    assert path.read_text() == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary left behind


def test_nan_is_written_as_null(tmp_path: Path) -> None:
    doc = mixed()
    doc = replace(doc, summary=replace(doc.summary, geomean_ratio=float("nan")))
    resultsdir.save(tmp_path / "r.json", doc)
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["geomean_ratio"] is None


def test_runs_are_written_one_list_a_line(tmp_path: Path) -> None:
    # A results file of 500 workloads x 200 pairs is tens of megabytes with a line per
    # number (benchmarks/scale.py): each list of numbers is written on one line.
    text = resultsdir.dumps(mixed())
    line = next(x for x in text.splitlines() if '"wall_ns": [' in x)
    assert line.rstrip(",").endswith("]") and line.count(",") >= 29
    assert json.loads(text) == resultsdir.to_json(mixed())


def test_text_that_looks_like_a_list_marker_stays_text(tmp_path: Path, monkeypatch) -> None:
    # The markers hold a fresh random token; were it guessed, the text is still kept.
    monkeypatch.setattr(resultsdir.secrets, "token_hex", lambda n: "0123456789abcdef")
    doc = mixed()
    doc = replace(doc, base=replace(doc.base, ref="0123456789abcdef:0"))
    path = tmp_path / "r.json"
    resultsdir.save(path, doc)
    assert resultsdir.load(path).base.ref == "0123456789abcdef:0"


@pytest.mark.parametrize(("value", "where"), [(-1, "[5]"), (1.5, "[5]"), ("7", "[5]"), (True, "[5]")])
def test_a_bad_run_in_a_long_list_is_named(tmp_path: Path, value: object, where: str) -> None:
    # Lists of valid runs are checked apart from jsonschema (for speed); a list with a
    # bad item is left to it, so the error names the item as before.
    data = resultsdir.to_json(mixed())
    data["benchmarks"][0]["phases"]["ab"]["arms"]["head"]["wall_ns"][5] = value
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=r"benchmarks\[0\]\.phases\.ab\.arms\.head\.wall_ns\[5\]"):
        resultsdir.load(path)


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
        resultsdir.load(path)


@pytest.mark.parametrize("name", ["mixed.json", "demo.json"])
def test_files_of_benchbot_0_1_0_still_load_and_render(name: str) -> None:
    """Results files written by today's main before the typed model (kept as fixtures)."""
    doc = resultsdir.load(FIXTURES / name)
    assert doc.schema_version == 1 and doc.sandbox is None and doc.environment.other_cpu is None
    out = io.StringIO()
    assert cli.main(["report", str(FIXTURES / name)], out=out, err=io.StringIO()) == 0
    assert "### benchbot" in out.getvalue()
    assert cli.main(["report", str(FIXTURES / name), "--format", "html"], out=io.StringIO(),
                    err=io.StringIO()) == 0


def test_cli_report(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    resultsdir.save(path, mixed())
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


# --- memory said as more and less (schema_version 3, issue 37) -----------------------------

FIXTURES_2 = Path(__file__).parents[1] / "fixtures" / "results-2"


def test_a_memory_verdict_is_written_as_more_or_less_memory(tmp_path: Path, validate: Any) -> None:
    doc = counted()
    data = resultsdir.to_json(doc)
    validate(data)
    assert data["schema_version"] == 3
    memory = {b["name"]: b["memory"]["outcome"] for b in data["benchmarks"] if "memory" in b}
    assert memory["alloc"] == "more" and memory["sort"] == "level"
    assert "slower" not in memory.values() and "faster" not in memory.values()
    less = replace(doc, benchmarks=tuple(
        replace(b, memory=replace(b.memory, outcome="faster")) if b.name == "alloc" else b
        for b in doc.benchmarks))
    resultsdir.save(tmp_path / "r.json", less)
    assert '"outcome": "less"' in (tmp_path / "r.json").read_text()
    assert resultsdir.load(tmp_path / "r.json") == less  # the model keeps its outcome


def test_a_file_of_schema_2_says_slower_for_more_memory_and_is_still_read(tmp_path: Path) -> None:
    """tests/fixtures/results-2/counted.json: the golden `counted` case as benchbot wrote it
    before the bump (at 8c169d0), `alloc` using 10% more memory."""
    raw = json.loads((FIXTURES_2 / "counted.json").read_text())
    assert raw["schema_version"] == 2
    [alloc] = [b for b in raw["benchmarks"] if b["name"] == "alloc"]
    assert alloc["memory"]["outcome"] == "slower"
    doc = resultsdir.load(FIXTURES_2 / "counted.json")
    assert doc.schema_version == 2
    assert {b.name: b.memory.outcome for b in doc.benchmarks if b.memory}["alloc"] == "slower"
    md = render_results(doc, "markdown")
    assert "+10.4% more" in md and "peak memory: 1 more" in md
    resultsdir.save(tmp_path / "again.json", doc)  # written again in its own version's words
    assert json.loads((tmp_path / "again.json").read_text()) == raw


@pytest.mark.parametrize(("version", "word", "says"), [(3, "slower", "more or less"),
                                                       (2, "more", "slower or faster")])
def test_memory_in_the_other_versions_words_is_refused(tmp_path: Path, version: int, word: str,
                                                       says: str) -> None:
    data = resultsdir.to_json(replace(counted(), schema_version=version))
    [alloc] = [b for b in data["benchmarks"] if b["name"] == "alloc"]
    alloc["memory"]["outcome"] = word
    (tmp_path / "r.json").write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=rf"memory\.outcome: '{word}' is not what schema_version "
                       rf"{version} says \(it says {says}\)"):
        resultsdir.load(tmp_path / "r.json")


def test_the_memory_verdict_of_the_schema_is_a_verdict_but_for_its_words() -> None:
    defs = resultsdir.schema()["$defs"]
    verdict, memory = defs["verdict"], defs["memory_verdict"]
    assert {k: v for k, v in memory.items() if k != "properties"} == {
        k: v for k, v in verdict.items() if k != "properties"}
    assert {k: v for k, v in memory["properties"].items() if k != "outcome"} == {
        k: v for k, v in verdict["properties"].items() if k != "outcome"}
    assert set(memory["properties"]["outcome"]["enum"]) == {
        *verdict["properties"]["outcome"]["enum"], "more", "less"}
