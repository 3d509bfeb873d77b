"""GitHub's faults are survived, and the check always ends.

Whatever happens after the check run is created (a crash, a full disk, a cancelled job, a
measure job that failed or left a forged results file), it is completed with a conclusion
and a one-line reason, and the sticky comment no longer says "measuring". With shards, a
shard that did not report, failed, or left a forged or another shard's file is named,
and the check cannot pass (neutral, or failure for a slowdown another shard found).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchbot.core.model import Revision
from benchbot.measure import engine
from benchbot.report import render_results
from benchbot.results import resultsdir
from tests.fakegithub import FakeGitHub
from tests.ghenv import (
    CONFIG,
    Env,
    Run,
    artifacts,
    gate_shards,
    make_workspace,
    measure_shard,
    publish_shards,
    reactions,
    sticky,
)
from tests.golden.scenarios import many

# Measuring is planted (conftest.planted) but for runs of a process of their own.
pytestmark = pytest.mark.usefixtures("planted")


def only_check(fake: FakeGitHub) -> dict:
    (check,) = fake.check_runs.values()
    return check


def not_measuring(fake: FakeGitHub) -> str:
    (comment,) = sticky(fake)
    assert "benchbot: measuring" not in comment["body"]
    return str(comment["body"])


@pytest.mark.slow
@pytest.mark.parametrize("stored", [False, True])
def test_sticky_comment_survives_server_errors_in_a_row(env: Env, fake: FakeGitHub, stored: bool) -> None:
    # stored=True: GitHub kept each comment but the answers were lost
    fake.fail_next("POST", r"/issues/2/comments$", 502, times=3, apply=stored)
    fake.fail_next("GET", r"/issues/2/comments$", 503, times=2)
    run = env.run("pull_request", env.pull_request_event())
    assert run.returncode == 0, run.stderr
    assert len(sticky(fake)) == 1 and len(fake.comments_on(2)) == 1
    assert "slower" in not_measuring(fake)


def test_an_unexpected_crash_ends_the_check(env: Env, fake: FakeGitHub,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("something nobody expected")

    monkeypatch.setattr(engine, "compare", crash)
    payload = env.comment_event("/bench")
    run = env.run_in_process("issue_comment", payload)
    assert run.returncode != 0 and "something nobody expected" in run.stderr
    check = only_check(fake)
    assert check["status"] == "completed" and check["conclusion"] == "failure"
    assert "RuntimeError" in check["output"]["summary"]
    assert "could not run" in not_measuring(fake)
    assert reactions(fake, payload["comment"]["id"])[-1] == "confused"
    error = json.loads((run.results_dir / "error.json").read_text())
    assert error["kind"] == "crash"


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
                           capture_output=True, check=False)
    return probe.returncode == 0


@pytest.mark.slow  # benchbot github as a process, measuring for real: seconds
@pytest.mark.skipif(not _unshare_works(), reason="needs `unshare -rm` (user and mount namespaces) "
                    "to give the results directory a tiny file system of its own")
def test_a_full_disk_ends_the_check(tmp_path: Path, fake: FakeGitHub) -> None:
    env = Env(tmp_path, fake, make_workspace(tmp_path, config=CONFIG + "sandbox: off\n"))
    results = tmp_path / "full"
    results.mkdir()
    environ = env.environ("pull_request", env.pull_request_event(), BENCHBOT_RESULTS_DIR=str(results))
    script = (
        'mount -t tmpfs -o size=16k tmpfs "$1" && dd if=/dev/zero of="$1/fill" bs=1k count=14 '
        '2>/dev/null; exec "$2" -m benchbot github'
    )
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", str(results), sys.executable],
                          env=environ, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 1
    assert "No space left on device" in proc.stderr
    check = only_check(fake)
    assert check["status"] == "completed" and check["conclusion"] == "failure"
    assert "No space left on device" in check["output"]["summary"]
    assert "No space left on device" in not_measuring(fake)


@pytest.mark.slow
def test_a_cancelled_job_ends_the_check_as_cancelled(tmp_path: Path, fake: FakeGitHub) -> None:
    marks = tmp_path / "marks"  # not tmp_path: it holds the job's runner directories
    marks.mkdir()
    started = marks / "started"
    config = CONFIG.replace("aa: off", f"aa: off\nsandbox: {{writable: ['{marks}']}}").replace(
        "runs: 10", f"runs: 10\n  env: {{MARK: '{started}'}}")
    env = Env(tmp_path, fake, make_workspace(
        tmp_path, config=config, head_script='#!/bin/sh\ntouch "$MARK"\nexec sleep 60\n'))
    environ = env.environ("issue_comment", env.comment_event("/bench"))
    proc = subprocess.Popen([sys.executable, "-m", "benchbot", "github"], env=environ,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), "the head's workload never started"
    assert only_check(fake)["status"] == "in_progress"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    check = only_check(fake)
    assert (check["status"], check["conclusion"]) == ("completed", "cancelled")
    assert "cancelled" in not_measuring(fake)
    assert json.loads((Path(environ["BENCHBOT_RESULTS_DIR"]) / "error.json").read_text())["kind"] == "cancelled"


# --- the publish step, whatever the measure job left ---------------------------------------


def gate_then_publish(env: Env, prepare, measure_result: str) -> tuple[dict, str]:
    payload = env.comment_event("/bench")
    gate = env.run("issue_comment", payload, BENCHBOT_MODE="gate")
    assert gate.returncode == 0, gate.stderr
    assert only_check(env.fake)["status"] == "in_progress"
    assert "measuring" in sticky(env.fake)[0]["body"]
    artifact = env.tmp / "artifact"
    artifact.mkdir()
    prepare(artifact, gate.outputs["job"])
    publish = env.run("issue_comment", payload, BENCHBOT_MODE="publish",
                      BENCHBOT_JOB=gate.outputs["job"], BENCHBOT_MEASURE_RESULT=measure_result,
                      BENCHBOT_RESULTS_DIR=str(artifact))
    assert publish.returncode == 0, publish.stderr
    return only_check(env.fake), not_measuring(env.fake)


def test_publish_after_a_cancelled_measure_job_with_no_artifact(env: Env) -> None:
    check, body = gate_then_publish(env, lambda artifact, job: None, "cancelled")
    assert (check["status"], check["conclusion"]) == ("completed", "cancelled")
    assert "newer benchmark queued" in check["output"]["summary"] and "cancelled" in body


def test_publish_after_a_measure_job_that_failed_to_build(env: Env) -> None:
    def prepare(artifact: Path, job: str) -> None:
        (artifact / "error.json").write_text(json.dumps({
            "kind": "error", "message": "build of head (abc) failed (exit 2): make\n<img src=x> @alice",
        }))

    check, body = gate_then_publish(env, prepare, "failure")
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert "build of head" in check["output"]["summary"] and "build of head" in body


def many_workloads(env: Env, count: int = 100) -> resultsdir.Results:
    """A results document of ``count`` workloads for the workspace's two commits."""
    return dataclasses.replace(many(count), base=Revision(ref="main", sha=env.ws.base_sha),
                               head=Revision(ref="feature", sha=env.ws.head_sha))


def test_a_report_of_many_workloads_completes_the_check(env: Env) -> None:
    doc = many_workloads(env)
    report = render_results(doc, "markdown")
    # fewer characters than a check's summary holds, more bytes (×, −, µ, the pictures)
    assert len(report) < 65_535 < len(report.encode())
    check, body = gate_then_publish(
        env, lambda artifact, job: resultsdir.save(artifact / "results.json", doc), "success")
    assert (check["status"], check["conclusion"]) == ("completed", "neutral")  # all inconclusive
    summary = check["output"]["summary"]
    assert len(summary.encode()) <= 65_535 and "(65,535 bytes) and was cut here" in summary
    assert summary.count("<details>") == summary.count("</details>")
    assert "kernel_099" in body and "was cut here" not in body  # a comment counts characters


def test_a_check_summary_github_refuses_still_completes_the_check(env: Env) -> None:
    def prepare(artifact: Path, job: str) -> None:
        resultsdir.save(artifact / "results.json", many_workloads(env, 20))
        env.fake.fail_next("PATCH", r"/check-runs/\d+$", 422, body={
            "message": "Validation Failed", "status": "422",
            "documentation_url": "https://docs.github.com/rest/checks/runs#update-a-check-run",
            "errors": [{"resource": "CheckRun", "code": "custom", "field": "summary",
                        "message": "summary exceeds a maximum bytesize of 65535"}]})

    check, body = gate_then_publish(env, prepare, "success")
    assert (check["status"], check["conclusion"]) == ("completed", "neutral")  # all inconclusive
    summary = check["output"]["summary"]
    assert "GitHub refused the report" in summary and "maximum bytesize of 65535" in summary
    assert "benchbot-results" in summary and "kernel_019" in body


def test_publish_refuses_results_for_other_commits(env: Env) -> None:
    def prepare(artifact: Path, job: str) -> None:
        measured = env.run("issue_comment", env.comment_event("/bench"), BENCHBOT_MODE="measure",
                           BENCHBOT_JOB=job)
        assert measured.returncode == 0, measured.stderr
        doc = json.loads((measured.results_dir / "results.json").read_text())
        doc["head"]["sha"] = "f" * 40  # forged on the benchmark runner
        (artifact / "results.json").write_text(json.dumps(doc))

    check, body = gate_then_publish(env, prepare, "success")
    assert check["conclusion"] == "failure"
    assert "not publishing results for other commits" in check["output"]["summary"]
    assert "not publishing results for other commits" in body


def test_publish_refuses_a_results_file_that_breaks_the_schema(env: Env) -> None:
    def prepare(artifact: Path, job: str) -> None:
        (artifact / "results.json").write_text('{"schema_version": 1, "benchmarks": "<img>"}')

    check, body = gate_then_publish(env, prepare, "success")
    assert check["conclusion"] == "failure"
    assert "results file from the measure job is not valid" in check["output"]["summary"]
    assert "could not run" in body


def test_the_gate_s_own_failure_after_opening_the_check_ends_it(env: Env, fake: FakeGitHub) -> None:
    outputs = env.tmp / "outputs-dir"
    outputs.mkdir()  # GITHUB_OUTPUT names a directory: the hand-over cannot be written
    run = env.run_in_process("issue_comment", env.comment_event("/bench"), BENCHBOT_MODE="gate",
                             GITHUB_OUTPUT=str(outputs))
    assert run.returncode == 1
    assert f"cannot write GITHUB_OUTPUT {outputs}" in run.stderr
    check = only_check(fake)
    assert (check["status"], check["conclusion"]) == ("completed", "failure")


# --- shards: one missing, failed, forged or swapped -------------------------------------------


@pytest.mark.parametrize("case", ["missing", "failed", "forged", "swapped"])
def test_a_shard_that_did_not_report_is_named_and_the_check_cannot_pass(
        shard_env: Env, fake: FakeGitHub, case: str) -> None:
    env = shard_env
    payload = env.comment_event("/bench")
    job = gate_shards(env, payload).outputs["job"]
    first = measure_shard(env, payload, job, "1/2")
    runs = [first]
    if case == "failed":  # its job ran and left the error that stopped it
        broken = env.tmp / "broken"
        broken.mkdir()
        (broken / "error.json").write_text(json.dumps(
            {"kind": "error", "message": "build of head (abc) failed (exit 2): make\nlog"}))
        runs.append(Run(0, "", {"artifact": "benchbot-results-shard-2-of-2"}, "", broken))
    if case == "forged":  # a results file that names other commits
        second = measure_shard(env, payload, job, "2/2")
        doc = json.loads((second.results_dir / "results.json").read_text())
        doc["head"]["sha"] = "f" * 40
        (second.results_dir / "results.json").write_text(json.dumps(doc))
        runs.append(second)
    if case == "swapped":  # shard 1's file again, in shard 2's artifact
        copy = env.tmp / "copy"
        shutil.copytree(first.results_dir, copy)
        runs.append(Run(0, "", {"artifact": "benchbot-results-shard-2-of-2"}, "", copy))
    done = publish_shards(env, payload, job, artifacts(env, *runs), result="failure")
    # half of the comparison is missing, and the slowdown shard 1 found still fails it
    assert done.outputs["conclusion"] == "failure" and done.outputs["slower"] == "1"
    (check,) = fake.check_runs.values()
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert "shard 2 of 2 missing or failed" in check["output"]["title"]
    (comment,) = sticky(fake)
    body = comment["body"]
    expected = {
        "missing": "**Shard 2 of 2 did not report** (its job failed, was cancelled or never ran)",
        "failed": "**Shard 2 of 2 failed:** build of head (abc) failed (exit 2): make.",
        "forged": "**Shard 2 of 2 failed:** the results file names head ffffffffffff, but the gate",
        "swapped": "**Shard 2 of 2 failed:** the results file of shard 2/2 says it is shard 1 of 2.",
    }[case]
    assert expected in body, body
    assert "Not measured: `snooze`" in body and "The check cannot pass until every shard reports" in body
    assert "`nap`" in body


def test_no_shard_reporting_ends_the_check_naming_each(shard_env: Env, fake: FakeGitHub) -> None:
    env = shard_env
    payload = env.comment_event("/bench")
    job = gate_shards(env, payload).outputs["job"]
    folder = env.tmp / "downloaded"
    (folder / "benchbot-results-shard-1-of-2").mkdir(parents=True)
    (folder / "benchbot-results-shard-1-of-2" / "error.json").write_text(
        json.dumps({"kind": "cancelled", "message": "cancelled before the comparison finished"}))
    done = publish_shards(env, payload, job, folder, result="cancelled")
    assert done.outputs["conclusion"] == "failure"
    (check,) = fake.check_runs.values()
    assert check["conclusion"] == "failure"
    summary = check["output"]["summary"]
    assert "no shard of the 2 reported results" in summary
    assert "shard 1/2: failed: cancelled before the comparison finished" in summary
    assert "shard 2/2: did not report" in summary
    assert "could not run" in sticky(fake)[0]["body"]
