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

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakegithub import FakeGitHub
from tests.ghenv import Env, sticky

# Measuring is planted (conftest.planted) but for runs of a process of their own.
pytestmark = pytest.mark.usefixtures("planted")


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
    run = env.run_in_process("pull_request", env.pull_request_event(), BENCHBOT_MODE="gate")
    assert run.returncode != 0 and run.outputs.get("run") == "false"
    assert "check-runs failed: 500" in run.stderr
    assert fake.check_runs == {}
    # each try after the first looked for a stored one before it created another
    assert len(fake.requests_matching("GET", r"/commits/[0-9a-f]{40}/check-runs$")) == 4


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


# --- creating the check run is never repeated blindly ----------------------------------------


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_check_run_stored_despite_a_server_error_is_not_duplicated(
        env: Env, fake: FakeGitHub, status: int) -> None:
    """GitHub stored the check run but answered 5xx: a blind retry would leave a second
    one in progress forever. There is exactly one, and it is completed."""
    fake.fail_next("POST", r"/check-runs$", status, apply=True)
    run = env.run("pull_request", env.pull_request_event())
    assert run.returncode == 0, run.stderr
    check = only_check(fake)
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert check["external_id"] == "benchbot-run-1001"  # this workflow run's
    assert len(fake.requests_matching("POST", r"/check-runs$")) == 1  # adopted, not re-created
    assert fake.requests_matching("GET", r"/commits/[0-9a-f]{40}/check-runs$")


def test_a_lost_creation_that_was_not_stored_is_made_again(env: Env, fake: FakeGitHub) -> None:
    fake.fail_next("POST", r"/check-runs$", 502)  # not stored this time
    run = env.run_in_process("pull_request", env.pull_request_event(), BENCHBOT_MODE="gate")
    assert run.returncode == 0, run.stderr
    assert only_check(fake)["status"] == "in_progress" and run.outputs["run"] == "true"
    assert len(fake.requests_matching("POST", r"/check-runs$")) == 2


def test_another_run_s_open_check_on_the_head_is_not_adopted(env: Env, fake: FakeGitHub) -> None:
    first = env.run_in_process("pull_request", env.pull_request_event(), BENCHBOT_MODE="gate")
    assert first.returncode == 0, first.stderr  # run 1001's check, still in progress
    fake.fail_next("POST", r"/check-runs$", 502)
    second = env.run_in_process("pull_request", env.pull_request_event("synchronize"),
                                BENCHBOT_MODE="gate")
    assert second.returncode == 0, second.stderr
    ids = sorted(c["external_id"] for c in fake.check_runs.values())
    assert ids == ["benchbot-run-1001", "benchbot-run-1002"]


# --- reading the artifact is inside the guard ------------------------------------------------


def test_an_artifact_that_breaks_the_reader_still_ends_the_check(
        env: Env, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    """E.g. a reader that runs out of memory: the reader fails, the check ends."""
    from benchbot.github import artifact

    payload = env.comment_event("/bench")
    gate = env.run_in_process("issue_comment", payload, BENCHBOT_MODE="gate")
    assert gate.returncode == 0, gate.stderr
    folder = env.tmp / "downloaded" / "benchbot-results"
    folder.mkdir(parents=True)
    (folder / "results.json").write_text("{}")

    def too_big(path: Path) -> None:
        raise MemoryError

    monkeypatch.setattr(artifact, "results_file", too_big)
    run = env.run_in_process("issue_comment", payload, BENCHBOT_MODE="publish",
                             BENCHBOT_JOB=gate.outputs["job"], BENCHBOT_MEASURE_RESULT="success",
                             BENCHBOT_RESULTS_DIR=str(folder.parent))
    assert run.returncode != 0
    check = only_check(fake)
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert "reading the measure job's results failed: MemoryError" in check["output"]["summary"]
    (comment,) = sticky(fake)
    assert "measuring" not in comment["body"].split("\n", 2)[1]


# --- the rescue step: benchbot could not even be installed -----------------------------------

RESCUE = Path(__file__).resolve().parents[2] / "src" / "benchbot" / "github" / "rescue.py"


def rescue(env: Env, payload: dict, **extra: str) -> subprocess.CompletedProcess[str]:
    """action.yml's last step: the runner's python3 on the file, with no site-packages
    (-S: no numpy, no PyGithub; -I: no PYTHONPATH), over real HTTP."""
    environ = env.environ(payload.get("_event", "issue_comment"), payload, **extra)
    return subprocess.run([sys.executable, "-I", "-S", str(RESCUE)], env=environ,
                          capture_output=True, text=True, timeout=120, check=False)


def test_rescue_completes_the_gate_s_check_when_publish_could_not_install(
        env: Env, fake: FakeGitHub) -> None:
    payload = env.comment_event("/bench")
    gate = env.run_in_process("issue_comment", payload, BENCHBOT_MODE="gate")
    assert gate.returncode == 0, gate.stderr
    assert only_check(fake)["status"] == "in_progress"
    # the publish job of the same workflow run: its "Install benchbot" step failed
    proc = rescue(env, payload, BENCHBOT_MODE="publish", BENCHBOT_JOB=gate.outputs["job"],
                  BENCHBOT_INSTALL_OUTCOME="failure", GITHUB_RUN_ID="1001")
    assert proc.returncode == 0, proc.stderr
    check = only_check(fake)
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert "could not be installed" in check["output"]["summary"]
    assert "completed 1 check run(s)" in proc.stderr
    (comment,) = sticky(fake)  # no longer "measuring"
    assert "could not run" in comment["body"] and "could not be installed" in comment["body"]


def test_rescue_leaves_a_published_report_alone(env: Env, fake: FakeGitHub) -> None:
    """Publish wrote the report, then completing the check failed: the rescue completes the
    check but does not put "could not run" over the report."""
    payload = env.comment_event("/bench")
    gate = env.run_in_process("issue_comment", payload, BENCHBOT_MODE="gate")
    assert gate.returncode == 0, gate.stderr
    (comment,) = sticky(fake)
    report = f"{comment['body'].splitlines()[0]}\n### benchbot: 1 slower\n\nthe report\n"
    fake.comments[comment["id"]]["body"] = report  # what publish wrote before it failed
    proc = rescue(env, payload, BENCHBOT_MODE="publish", BENCHBOT_JOB=gate.outputs["job"],
                  GITHUB_RUN_ID="1001")
    assert proc.returncode == 0, proc.stderr
    assert (only_check(fake)["status"], only_check(fake)["conclusion"]) == ("completed", "failure")
    (after,) = sticky(fake)
    assert after["body"] == report


def test_rescue_leaves_other_runs_and_completed_checks_alone(env: Env, fake: FakeGitHub) -> None:
    payload = env.comment_event("/bench")
    other = env.run_in_process("issue_comment", payload, BENCHBOT_MODE="gate")  # run 1001
    assert other.returncode == 0, other.stderr
    done = env.run("issue_comment", payload)  # run 1002, completed
    assert done.returncode == 0, done.stderr
    before = {i: (c["status"], c["conclusion"]) for i, c in fake.check_runs.items()}
    proc = rescue(env, payload, BENCHBOT_MODE="all")  # run 1003: opened nothing
    assert proc.returncode == 0, proc.stderr
    assert "nothing to complete" in proc.stderr
    assert {i: (c["status"], c["conclusion"]) for i, c in fake.check_runs.items()} == before
    assert sorted(before.values(), key=str) == [("completed", "failure"), ("in_progress", None)]


def test_rescue_in_the_single_job_form_finds_the_head_from_the_event(
        env: Env, fake: FakeGitHub) -> None:
    """mode all, killed after it opened the check: the head comes from the pull request."""
    payload = env.pull_request_event()
    gate = env.run_in_process("pull_request", payload, BENCHBOT_MODE="gate")
    assert gate.returncode == 0, gate.stderr
    proc = rescue(env, {**payload, "_event": "pull_request"}, BENCHBOT_MODE="all",
                  BENCHBOT_CHECK_NAME="benchbot", GITHUB_RUN_ID="1001")  # the same run
    assert proc.returncode == 0, proc.stderr
    check = only_check(fake)
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert "stopped before it completed this check" in check["output"]["summary"]


def test_rescue_sets_the_fallback_status_to_failure(env: Env, fake: FakeGitHub) -> None:
    fake.checks_forbidden = True
    payload = env.comment_event("/bench")
    gate = env.run_in_process("issue_comment", payload, BENCHBOT_MODE="gate")
    assert gate.returncode == 0, gate.stderr
    proc = rescue(env, payload, BENCHBOT_JOB=gate.outputs["job"],
                  BENCHBOT_INSTALL_OUTCOME="failure", GITHUB_RUN_ID="1001")
    assert proc.returncode == 0, proc.stderr
    assert [s["state"] for s in fake.statuses] == ["pending", "failure"]


def test_rescue_says_what_failed_in_one_line(env: Env, fake: FakeGitHub) -> None:
    payload = env.comment_event("/bench")
    proc = rescue(env, payload, GITHUB_TOKEN="wrong-token", BENCHBOT_MODE="all")
    assert proc.returncode == 1
    assert proc.stderr.strip() == ("benchbot rescue: GET /repos/Codertocat/Hello-World/pulls/2 "
                                   "failed: 401 Bad credentials")


def test_rescue_imports_nothing_but_the_standard_library() -> None:
    tree = ast.parse(RESCUE.read_text())
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree)
              if isinstance(n, ast.ImportFrom) and n.module}
    assert names <= set(sys.stdlib_module_names) | {"__future__"}, names


def test_the_action_runs_the_rescue_last_when_a_step_failed_or_the_job_was_cut_short() -> None:
    """action.yml: the rescue is the last step, runs only after a failure or a cancellation
    (a timeout is one) in the modes
    that hold the write token, and is the file the tests above run."""
    import yaml

    root = RESCUE.parents[3]
    steps = yaml.safe_load((root / "action.yml").read_text())["runs"]["steps"]
    last = steps[-1]
    assert "failure()" in last["if"] and "cancelled()" in last["if"] and "'publish'" in last["if"] and "'all'" in last["if"]
    assert "'measure'" not in last["if"] and "'gate'" not in last["if"]
    assert last["run"] == 'exec python3 "${GITHUB_ACTION_PATH}/src/benchbot/github/rescue.py"'
    assert (root / "src" / "benchbot" / "github" / "rescue.py") == RESCUE
    assert last["env"]["BENCHBOT_INSTALL_OUTCOME"] == "${{ steps.install.outcome }}"
    assert last["env"]["BENCHBOT_JOB"] == "${{ inputs.job }}"
    assert last["env"]["GITHUB_TOKEN"] == "${{ inputs.token }}"
    assert steps[0]["id"] == "install"
