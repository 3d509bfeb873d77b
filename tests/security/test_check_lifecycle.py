"""The check is opened before anything is measured, and completed whatever fails.

- The gate asks for the benchmark runner only once the check (or its fallback status)
  and the sticky comment exist: a check that could not be opened could not be completed
  either, and a required check would then block the pull request with no reason given.
- Creating a check run is never repeated blindly: GitHub sometimes stores the run and
  still answers 5xx (or the answer is lost), so after a failure benchbot lists the head's
  check runs and adopts its own (same name, same ``external_id``) before it creates one.
- Reading the measure job's artifact happens inside the guard that completes the check.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fakegithub import FakeGitHub
from tests.ghenv import Env, sticky


def only_check(fake: FakeGitHub) -> dict:
    (check,) = fake.check_runs.values()
    return check


# --- the gate opens the check before anything is measured --------------------------------


@pytest.mark.parametrize("mode", ["gate", "all"])
def test_no_measuring_when_neither_check_nor_status_can_be_created(
        env: Env, fake: FakeGitHub, mode: str) -> None:
    fake.checks_forbidden = True
    fake.statuses_forbidden = True
    run = env.run_in_process("pull_request", env.pull_request_event(), BENCHBOT_MODE=mode)
    assert run.returncode != 0
    assert run.outputs.get("run") == "false" and "job" not in run.outputs
    assert "not measuring: the check and the comment could not be opened" in run.stderr
    assert "statuses" in run.stderr and "403" in run.stderr  # the call that failed, named
    assert not (run.results_dir / "results.json").exists()


def test_no_measuring_when_the_check_run_keeps_failing(env: Env, fake: FakeGitHub) -> None:
    fake.fail_next("POST", r"/check-runs$", 500, times=50)
    fake.fail_next("GET", r"/commits/[0-9a-f]+/check-runs$", 500, times=50)
    run = env.run_in_process("pull_request", env.pull_request_event(), BENCHBOT_MODE="gate")
    assert run.returncode != 0 and run.outputs.get("run") == "false"
    assert "check-runs failed: 500" in run.stderr
    assert fake.check_runs == {}


def test_no_measuring_when_the_sticky_comment_cannot_be_written(env: Env, fake: FakeGitHub) -> None:
    fake.fail_next("POST", r"/issues/2/comments$", 422, times=5)
    run = env.run_in_process("pull_request", env.pull_request_event(), BENCHBOT_MODE="gate")
    assert run.returncode != 0 and run.outputs.get("run") == "false"
    assert "comments failed: 422" in run.stderr
    check = only_check(fake)  # opened, then completed with the reason
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert "could not be opened" in check["output"]["summary"]


def test_comment_off_needs_only_the_check(env: Env, fake: FakeGitHub) -> None:
    run = env.run_in_process("pull_request", env.pull_request_event(), BENCHBOT_MODE="gate",
                             BENCHBOT_COMMENT="off")
    assert run.returncode == 0, run.stderr
    assert run.outputs["run"] == "true" and sticky(fake) == []
    assert only_check(fake)["status"] == "in_progress"
