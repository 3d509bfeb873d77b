"""Everything read from a measure job's artifact is bounded (issue 38, finding 5).

The artifact comes from the machine that ran the pull request's (or the push's) code. A
deeply nested `error.json` used to crash publish with a traceback (`RecursionError` was
caught where results files are read, not there, and a document nested just shallowly
enough for the parser still broke the schema's check), and nothing read from it had a
size limit (a 100 MiB file cost publish 200 MiB). Now each file goes through
`benchbot.github.artifact` (one bounded reader: its size looked at before a byte is
read), every failure is one line, and the check is completed with it. The enumeration
at the end finds every read of a file in `benchbot.github` and fails on one outside
that module which the allow-list does not name.
"""

from __future__ import annotations

import ast
import io
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

import benchbot.github
from benchbot.core import files
from benchbot.github import artifact, watch
from benchbot.results import resultsdir
from tests.fakegithub import FakeGitHub
from tests.ghenv import Env, sticky

DEEP = 100_000  # far past the parser's recursion limit
JUST_PARSED = 990  # the parser takes it; the schema's check (and repr) used to break on it


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def huge(path: Path, limit: int) -> None:
    """A file one byte over ``limit`` that takes no disk (sparse)."""
    with open(path, "wb") as fh:
        fh.truncate(limit + 1)


# What a hostile measure job leaves, per file of the artifact: (what, how to write it,
# words of the one-line reason).
def _deep(_: str, path: Path) -> None:
    path.write_text(nested(DEEP))


def _just_parsed(kind: str, path: Path) -> None:
    inner = nested(JUST_PARSED)
    doc = {
        "results": f'{{"schema_version": 2, "benchmarks": {inner}}}',
        "error": f'{{"kind": "error", "message": {inner}}}',
        "bisect": f'{{"kind": "bisect", "schema_version": 1, "steps": {inner}}}',
        "history": f'{{"kind": "history-commit", "schema_version": 1, "workloads": {inner}}}',
    }[kind]
    path.write_text(doc)


def _huge(kind: str, path: Path) -> None:
    huge(path, {"results": artifact.RESULTS_LIMIT, "error": artifact.ERROR_LIMIT,
                "bisect": artifact.BISECT_LIMIT, "history": artifact.RECORD_LIMIT}[kind])


HOSTILE: dict[str, tuple[Callable[[str, Path], None], str]] = {
    "nested 100,000 deep": (_deep, "nested too deeply"),
    "nested 990 deep": (_just_parsed, ""),  # the words depend on the file (below)
    "one byte over its limit": (_huge, "MiB, more than the"),
}
JUST_PARSED_WORDS = {"results": "nested too deeply", "bisect": "nested too deeply",
                     "error": "not an error file", "history": "nested too deeply"}


def _words(case: str, kind: str) -> str:
    return HOSTILE[case][1] or JUST_PARSED_WORDS[kind]


def _publish(env: Env, payload: dict, job: str, artifact_dir: Path):
    return env.run("issue_comment", payload, BENCHBOT_MODE="publish", BENCHBOT_JOB=job,
                   BENCHBOT_MEASURE_RESULT="failure", BENCHBOT_RESULTS_DIR=str(artifact_dir))


@pytest.mark.parametrize("case", list(HOSTILE))
@pytest.mark.parametrize("name, kind", [("results.json", "results"), ("error.json", "error")])
def test_a_hostile_file_in_a_comparison_s_artifact_completes_the_check_with_one_line(
        env: Env, fake: FakeGitHub, name: str, kind: str, case: str) -> None:
    payload = env.comment_event("/bench")
    gate = env.run("issue_comment", payload, BENCHBOT_MODE="gate")
    assert gate.returncode == 0, gate.stderr
    folder = env.tmp / "artifact"
    folder.mkdir()
    HOSTILE[case][0](kind, folder / name)
    publish = _publish(env, payload, gate.outputs["job"], folder)
    assert publish.returncode == 0, publish.stderr
    assert "Traceback" not in publish.stderr
    (check,) = fake.check_runs.values()
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    summary = check["output"]["summary"]
    assert _words(case, kind) in summary, summary
    assert name in summary
    body = sticky(fake)[0]["body"]
    assert "benchbot: measuring" not in body and _words(case, kind) in body


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_bisect_file_completes_the_bisect_s_check_with_one_line(
        env: Env, fake: FakeGitHub, case: str) -> None:
    payload = env.comment_event("/bench bisect only=nap")
    gate = env.run("issue_comment", payload, BENCHBOT_MODE="gate")
    assert gate.returncode == 0 and gate.outputs["run"] == "true", gate.stderr
    folder = env.tmp / "artifact"
    folder.mkdir()
    HOSTILE[case][0]("bisect", folder / "bisect.json")
    publish = _publish(env, payload, gate.outputs["job"], folder)
    assert publish.returncode == 0, publish.stderr
    assert "Traceback" not in publish.stderr
    (check,) = [c for c in fake.check_runs.values() if c["name"] == "benchbot / bisect"]
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert _words(case, "bisect") in check["output"]["summary"]


def _push_payload(env: Env) -> dict:
    from tests.fakegithub import load_payload

    payload = load_payload("push")
    payload.update(ref="refs/heads/main", before=env.ws.base_sha, after=env.ws.head_sha)
    payload["repository"]["default_branch"] = "main"
    payload["head_commit"]["id"] = env.ws.head_sha
    return payload


@pytest.mark.parametrize("case", list(HOSTILE))
@pytest.mark.parametrize("name, kind", [("history.json", "history"), ("error.json", "error"),
                                        ("bisect-1.json", "bisect")])
def test_a_hostile_file_in_a_push_s_artifact_is_one_line_and_nothing_is_written(
        env: Env, fake: FakeGitHub, name: str, kind: str, case: str) -> None:
    payload = _push_payload(env)
    gate = env.run_in_process("push", payload, BENCHBOT_MODE="gate")
    assert gate.returncode == 0 and gate.outputs["run"] == "true", gate.stderr
    folder = env.tmp / "artifact"
    folder.mkdir()
    if kind == "bisect":  # beside a record that passes: the record named by the gate
        job = watch.PushJob.from_json(gate.outputs["job"])
        from benchbot.history import historydoc
        from benchbot.history.historydoc import CommitRef

        record = historydoc.record(commit=CommitRef(sha=job.after), against=CommitRef(sha=job.before),
                                   state="identical")
        (folder / watch.RECORD).write_text(historydoc.dumps(record))
    HOSTILE[case][0](kind, folder / name)
    publish = env.run_in_process("push", payload, BENCHBOT_MODE="publish",
                                 BENCHBOT_JOB=gate.outputs["job"],
                                 BENCHBOT_RESULTS_DIR=str(folder))
    assert publish.returncode == 1, publish.stderr
    assert "Traceback" not in publish.stderr
    assert _words(case, kind) in publish.stderr and "not recorded" in publish.summary
    assert fake.branch_files("benchbot-history") == {}


def test_a_push_s_artifact_with_more_bisect_files_than_a_measure_job_writes_is_refused(
        env: Env, fake: FakeGitHub) -> None:
    payload = _push_payload(env)
    gate = env.run_in_process("push", payload, BENCHBOT_MODE="gate")
    folder = env.tmp / "artifact"
    folder.mkdir()
    job = watch.PushJob.from_json(gate.outputs["job"])
    from benchbot.history import historydoc
    from benchbot.history.historydoc import CommitRef

    (folder / watch.RECORD).write_text(historydoc.dumps(historydoc.record(
        commit=CommitRef(sha=job.after), against=CommitRef(sha=job.before), state="identical")))
    for k in range(1, watch.MAX_BISECTS + 2):
        (folder / f"bisect-{k}.json").write_text("{}")
    publish = env.run_in_process("push", payload, BENCHBOT_MODE="publish",
                                 BENCHBOT_JOB=gate.outputs["job"], BENCHBOT_RESULTS_DIR=str(folder))
    assert publish.returncode == 1
    assert f"holds {watch.MAX_BISECTS + 1} bisect files" in publish.stderr


# --- the reader itself -------------------------------------------------------------------


def test_the_reader_looks_at_the_size_before_it_reads(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    huge(path, 1 << 30)  # a GiB, sparse: reading it would take a GiB and more
    with pytest.raises(files.TooLarge) as caught:
        files.read_bounded(path, 1 << 20)
    assert caught.value.size == (1 << 30) + 1
    with pytest.raises(resultsdir.ResultsError, match=r"big.json: not read: 1,024 MiB, more than "
                                                   r"the 1 MiB benchbot reads of a results file"):
        resultsdir.read_json(path, "a results file", limit=1 << 20)
    path.write_bytes(b'{"a": 1}')
    assert resultsdir.read_json(path, "x", limit=8) == {"a": 1}
    with pytest.raises(resultsdir.ResultsError, match="more than the 7 bytes"):
        resultsdir.read_json(path, "x", limit=7)


def test_the_reader_never_waits_on_a_fifo_nor_reads_a_directory(tmp_path: Path) -> None:
    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    with pytest.raises(resultsdir.ResultsError, match="not a regular file"):
        resultsdir.read_json(fifo, "a results file")  # no writer: a blocking read would hang
    with pytest.raises(resultsdir.ResultsError, match="is a directory"):
        resultsdir.read_json(tmp_path, "a results file")


def test_a_document_too_deep_for_the_schema_s_check_is_one_line(tmp_path: Path) -> None:
    from benchbot.bisect import bisectdoc
    from benchbot.history import historydoc

    for kind, load in (("results", resultsdir.load), ("bisect", bisectdoc.load),
                       ("history", historydoc.load)):
        path = tmp_path / f"{'a' * 40}.json"
        _just_parsed(kind, path)
        with pytest.raises(resultsdir.ResultsError, match="nested too deeply"):
            load(path)


# --- the enumeration: no other read of a file in benchbot.github -------------------------

# Calls that read a file (or open one), by the name called.
READS = {"open", "read_text", "read_bytes", "load", "read_json", "read_bounded", "extractfile",
         "fdopen", "readv", "results_file", "bisect_file", "history_record", "error_file"}
# Where benchbot.github reads a file other than through `artifact`, and why that is not
# the artifact: (module, enclosing function) -> reason.
ALLOWED = {
    ("event.py", "load_event"): "the event payload, written by the runner from GitHub's webhook",
    ("output.py", "_append"): "opens GITHUB_OUTPUT or the job summary to append to it (a write)",
    ("rescue.py", "_payload"): "the event payload (the rescue script reads nothing else)",
    ("watch.py", "_unpack"): "the history branch's archive from the API, held in memory "
                             "(each member at most 10 MiB, the archive at most api.ARCHIVE_LIMIT)",
}
READER = "artifact.py"  # every read of the artifact
# The artifact's own readers, called from publish and watch only through `artifact`.
ARTIFACT_CALLS = {"results_file", "bisect_file", "history_record", "error_file"}


def _reads(path: Path) -> list[tuple[str, str, int]]:
    """(enclosing function, name called, line) of every call in ``path`` named in READS."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[str, str, int]] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else where
            if isinstance(child, ast.Call):
                func = child.func
                name = func.attr if isinstance(func, ast.Attribute) else (
                    func.id if isinstance(func, ast.Name) else "")
                if name in READS:
                    found.append((where, name, child.lineno))
            visit(child, inner)

    visit(tree, "<module>")
    return found


def test_every_read_of_a_file_in_the_github_layer_is_the_artifact_reader_s_or_allowed() -> None:
    package = Path(benchbot.github.__file__).parent
    modules = sorted(package.glob("*.py"))
    assert {m.name for m in modules} >= {"publish.py", "watch.py", "rescue.py", READER}
    stray, seen = [], set()
    for module in modules:
        for where, name, line in _reads(module):
            key = (module.name, where)
            if module.name == READER:
                continue
            if name in ARTIFACT_CALLS and module.name in ("publish.py", "watch.py"):
                continue  # the artifact's own reader, called by its two users
            if key in ALLOWED:
                seen.add(key)
                continue
            stray.append(f"{module.name}:{line} {where}() calls {name}")
    assert stray == [], "a read of a file outside benchbot.github.artifact:\n" + "\n".join(stray)
    assert seen == set(ALLOWED), f"allow-list entries no longer needed: {set(ALLOWED) - seen}"
    # and the reader reads through the one bounded reader
    reader = {name for _, name, _ in _reads(package / READER)}
    assert reader <= {"read_json"} | ARTIFACT_CALLS, reader


def test_the_enumeration_finds_a_read_it_does_not_allow(tmp_path: Path) -> None:
    """The check above can fail: a module reading the artifact the old way is caught."""
    module = tmp_path / "publish.py"
    module.write_text("import json\n\ndef _error_file(path):\n"
                      "    return json.loads(path.read_text())\n")
    assert _reads(module) == [("_error_file", "read_text", 4)]


def test_the_artifact_reader_s_limits_are_what_its_files_need() -> None:
    assert artifact.RESULTS_LIMIT == resultsdir.READ_LIMIT == 256 * 1024 * 1024
    assert artifact.ERROR_LIMIT < artifact.BISECT_LIMIT <= artifact.RESULTS_LIMIT
    # an error file benchbot writes, of the longest message publish keeps, fits its limit
    written = json.dumps({"kind": "error", "message": "x" * artifact.MESSAGE_LIMIT,
                          "detail": "y" * artifact.MESSAGE_LIMIT}, indent=2)
    assert len(written.encode()) < artifact.ERROR_LIMIT


def test_the_rescue_script_says_one_line_for_a_hand_over_nested_too_deeply(tmp_path: Path) -> None:
    """The rescue step (standard library only) reads no artifact; what it does read, the
    hand-over and the event payload, ends in one line however deep (it used to raise)."""
    from benchbot.github import rescue

    base = {"GITHUB_TOKEN": "t", "GITHUB_RUN_ID": "1", "GITHUB_REPOSITORY": "o/r",
            "GITHUB_API_URL": "http://127.0.0.1:9"}
    err = io.StringIO()
    assert rescue.main({**base, "BENCHBOT_JOB": nested(DEEP)}, err) == 1
    assert err.getvalue() == ("benchbot rescue: BENCHBOT_JOB is not the gate's hand-over: "
                              "nested too deeply\n")
    event = tmp_path / "event.json"
    event.write_text(nested(DEEP))
    err = io.StringIO()
    assert rescue.main({**base, "GITHUB_EVENT_PATH": str(event)}, err) == 1
    assert err.getvalue().endswith("cannot read: nested too deeply\n")


def test_report_on_a_fifo_is_one_line_not_a_hang(tmp_path: Path) -> None:
    """`benchbot report` reads through the same bounded reader (it used to wait for a
    writer for ever, first in telling a bisect's document from a results file)."""
    from benchbot import cli

    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    err = io.StringIO()
    assert cli.main(["report", str(fifo)], out=io.StringIO(), err=err) == 1
    assert err.getvalue() == f"benchbot: error: {fifo}: not a regular file, not a results file\n"
