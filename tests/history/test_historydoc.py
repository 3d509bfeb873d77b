"""The history store's format (benchbot.history.historydoc): a record written and read back, its
schema, and every kind of file a store can hold that is not one of its records."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import jsonschema
import pytest

from benchbot.core.errors import ResultsError
from benchbot.history import historydoc
from benchbot.history.historydoc import CommitRef, StepSettings, Store, Where, WorkloadStep
from benchbot.verdict.trend import StepEstimate

A, B, C = "a" * 40, "b" * 40, "c" * 40


def _record(sha: str = B, against: str = A, **more: object) -> historydoc.CommitRecord:
    parts: dict[str, object] = dict(
        commit=CommitRef(sha=sha, subject="make it <b>fast</b> @alice"),
        against=CommitRef(sha=against, subject="before"), state="measured",
        workloads=(WorkloadStep(name="parse", outcome="slower", ratio=1.0612345678,
                                ci=(1.05, 1.07), pairs=101, reason_code=None,
                                step=StepEstimate(n=101, centre=0.0583, se=0.0005)),
                   WorkloadStep(name="sort", outcome="level", step=None)),
        settings=StepSettings(alpha=0.05, seed=7, budget_s=600.0, precision=0.005),
        environment=Where(machine="bench (3f2a9c1d)", cores=2, load_before=(0.5, 0.4, 0.3)),
        wall_s=12.5)
    parts.update(more)
    return historydoc.record(**parts)


def test_a_record_is_written_compactly_and_read_back_as_it_was(tmp_path: Path) -> None:
    store = Store(tmp_path)
    doc = _record()
    path = store.write(doc)
    assert path.name == f"{B}.json"
    text = path.read_text()
    assert text.count("\n") == 1 and ": " not in text  # one line, no padding
    assert '"ratio":1.061235' in text  # 7 significant digits
    jsonschema.validate(json.loads(text), historydoc.schema())
    back = historydoc.load(path)
    assert back.commit == doc.commit and back.workloads[0].step == doc.workloads[0].step
    assert back.workloads[0].ratio == pytest.approx(1.061235)
    assert store.has(B) and not store.has(C)


def test_a_record_is_a_few_hundred_bytes_a_workload_and_gzip_would_not_change_that_much(
        tmp_path: Path) -> None:
    """The figure the docs give (docs/results.md, "The history store")."""
    one = len(historydoc.dumps(_record()))
    assert one < 1200
    assert len(gzip.compress(historydoc.dumps(_record()).encode())) > one / 3


@pytest.mark.parametrize(("content", "says"), [
    (b"\x00\xff garbage", "not UTF-8"),
    (b"{broken", "not valid JSON"),
    (b"[1, 2]", "not a benchbot history file"),
    (b'{"kind": "bisect"}', "not a benchbot history file"),
    (b'{"kind": "history-commit", "schema_version": 9}', "schema_version '9' is not supported"),
    (b'{"kind": "history-commit", "schema_version": 1}', "does not match the history schema"),
])
def test_a_corrupt_or_foreign_file_is_one_line_and_the_others_are_read(
        tmp_path: Path, content: bytes, says: str) -> None:
    store = Store(tmp_path)
    store.write(_record())
    (tmp_path / f"{C}.json").write_bytes(content)
    read = store.read()
    assert list(read.records) == [B]
    [problem] = read.problems
    assert says in problem and str(tmp_path / f"{C}.json") in problem
    assert "\n" not in problem


def test_a_file_named_for_another_commit_or_not_for_a_commit_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path)
    (tmp_path / f"{C}.json").write_text(historydoc.dumps(_record(sha=B)))
    (tmp_path / "notes.json").write_text("{}")
    (tmp_path / f".{B}.json.x1y2.tmp").write_text("half a fi")  # an atomic write's leftover
    (tmp_path / "index.html").write_text("<p>the page</p>")
    read = store.read()
    assert read.records == {}
    assert sorted(p.split(": ", 1)[1] for p in read.problems) == [
        "holds commit bbbbbbbbbbbb, not the one its name says",
        "not a commit's file (its name is not a commit SHA)"]


def test_a_record_with_a_hostile_subject_or_a_bad_sha_does_not_pass_the_schema(tmp_path: Path) -> None:
    data = historydoc.to_json(_record())
    data["against"]["sha"] = "../../etc/passwd"
    with pytest.raises(ResultsError, match=r"against\.sha"):
        historydoc.parse(data, where="x.json")
    data = historydoc.to_json(_record())
    data["workloads"][0]["outcome"] = "maybe"
    with pytest.raises(ResultsError, match=r"workloads\[0\]\.outcome"):
        historydoc.parse(data, where="x.json")


def test_a_store_that_does_not_exist_holds_nothing(tmp_path: Path) -> None:
    read = Store(tmp_path / "none").read()
    assert read.records == {} and read.problems == ()
