"""End to end with shards: the gate splits the comparison, two measure jobs (shard 1/2 and
2/2, no write token) each measure their share (planted: conftest.planted), and publish
downloads both artifacts, merges them and writes exactly one comment and one check,
against the fake GitHub server over HTTP. (A shard that is missing, failed or left a
forged file: tests/security/test_faults.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchbot.github.job import Job
from tests.fakegithub import FakeGitHub
from tests.ghenv import (
    BOT,
    Env,
    artifacts,
    gate_shards,
    measure_shard,
    publish_shards,
    reactions,
    sticky,
)

# Measuring is planted (conftest.planted) but for runs of a process of their own.
pytestmark = pytest.mark.usefixtures("planted")


def test_gate_two_shards_publish_one_comment_and_one_check(shard_env: Env, fake: FakeGitHub,
                                                           validate) -> None:
    env = shard_env
    payload = env.comment_event("/bench")
    opened = gate_shards(env, payload)
    assert json.loads(opened.outputs["shards"]) == ["1/2", "2/2"]
    job = opened.outputs["job"]
    assert Job.from_json(job).shards == 2
    assert "waiting for 2 benchmark runners (2 shards)" in sticky(fake)[0]["body"]
    requests_before = len(fake.requests)
    first = measure_shard(env, payload, job, "1/2")
    second = measure_shard(env, payload, job, "2/2")
    assert len(fake.requests) == requests_before  # measuring makes no API call
    assert (first.outputs["artifact"], second.outputs["artifact"]) == (
        "benchbot-results-shard-1-of-2", "benchbot-results-shard-2-of-2")
    shares = [json.loads((r.results_dir / "results.json").read_text()) for r in (first, second)]
    assert [[b["name"] for b in d["benchmarks"]] for d in shares] == [["nap"], ["snooze"]]
    assert all(d["settings"]["family"] == {"sequential": 0, "fixed": 2} for d in shares)

    done = publish_shards(env, payload, job, artifacts(env, first, second))
    assert done.outputs["conclusion"] == "failure" and done.outputs["slower"] == "2"
    merged = json.loads(Path(done.outputs["results"]).read_text())
    validate(merged)
    assert sorted(b["name"] for b in merged["benchmarks"]) == ["nap", "snooze"]
    assert [s["index"] for s in merged["shards"]] == [1, 2] and merged["missing_shards"] == []
    (comment,) = sticky(fake)
    assert [c["user"]["login"] for c in fake.comments_on(2)] == ["alice", BOT]  # /bench, sticky
    body = comment["body"]
    assert "`nap`" in body and "`snooze`" in body and "Measured on 1 machine in 2 shards" in body
    (check,) = fake.check_runs.values()
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert "2 slower" in check["output"]["title"]
    assert reactions(fake, payload["comment"]["id"]) == ["eyes", "rocket"]


@pytest.mark.parametrize("shard, words", [
    ("", "BENCHBOT_SHARD (input shard) is not set: the gate split this comparison into 2 shards"),
    ("1/3", "BENCHBOT_SHARD (input shard): 1/3, but the gate split this comparison into 2 shards"),
])
def test_a_measure_job_must_name_a_shard_of_the_gate_s_split(shard_env: Env, fake: FakeGitHub,
                                                              shard: str, words: str) -> None:
    env = shard_env
    payload = env.comment_event("/bench")
    job = gate_shards(env, payload).outputs["job"]
    run = env.run("issue_comment", payload, BENCHBOT_MODE="measure", BENCHBOT_JOB=job,
                  BENCHBOT_SHARD=shard, _drop_token="1")
    assert run.returncode == 2 and words in run.stderr
    assert not (run.results_dir / "results.json").exists()


@pytest.mark.parametrize("shards", [1, 2])
def test_publish_outputs_name_files_that_exist(env: Env, fake: FakeGitHub, validate,
                                               shards: int) -> None:
    """actions/download-artifact with a pattern and merge-multiple: false puts every
    artifact, the unsharded one too, in a folder of its name; the outputs `results` and
    `report` name the files publish wrote, never a path inside the untrusted artifact."""
    payload = env.comment_event("/bench")
    job = gate_shards(env, payload, shards).outputs["job"]
    measured = [measure_shard(env, payload, job, f"{k}/{shards}") for k in range(1, shards + 1)]
    folder = artifacts(env, *measured)
    assert (folder / ("benchbot-results" if shards == 1 else "benchbot-results-shard-1-of-2")
            / "results.json").is_file()  # the layout the download leaves
    run = publish_shards(env, payload, job, folder)
    results, report = Path(run.outputs["results"]), Path(run.outputs["report"])
    assert results.is_file() and report.is_file(), run.outputs
    assert results.parent == report.parent == folder
    validate(json.loads(results.read_text()))
    assert "slower" in report.read_text() and report.read_text() in run.summary
