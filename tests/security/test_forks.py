"""A fork's code runs only at the commit a maintainer named, and only while it is the head."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakegithub import FakeGitHub
from tests.ghenv import BOT, CONFIG, Env, make_workspace, reactions, sticky

FORK = "mallory/Hello-World"


def fork_pull(env: Env, fake: FakeGitHub, number: int = 2) -> None:
    fake.add_pull(number, head_sha=env.ws.head_sha, base_sha=env.ws.base_sha, head_ref="feature",
                  base_ref="main", head_repo_full_name=FORK)


def replies(fake: FakeGitHub) -> list[str]:
    return [c["body"] for c in fake.comments_on(2)
            if c["user"]["login"] == BOT and "benchbot:sticky" not in c["body"]]


def test_a_plain_bench_on_a_fork_names_the_head_and_runs_nothing(env: Env, fake: FakeGitHub) -> None:
    fork_pull(env, fake)
    payload = env.comment_event("/bench runs=12")
    run = env.run_in_process("issue_comment", payload)
    assert run.returncode == 0, run.stderr
    (reply,) = replies(fake)
    assert env.ws.head_sha in reply
    assert f"/bench sha={env.ws.head_sha} runs=12" in reply  # the command to confirm it
    assert fake.check_runs == {} and sticky(fake) == [] and not run.results_dir.exists()
    assert run.outputs == {"run": "false"}
    assert reactions(fake, payload["comment"]["id"]) == ["eyes", "confused"]


def test_bench_with_the_head_s_full_sha_runs_that_commit(env: Env, fake: FakeGitHub) -> None:
    fork_pull(env, fake)
    payload = env.comment_event(f"/bench sha={env.ws.head_sha.upper()}")
    run = env.run_in_process("issue_comment", payload)
    assert run.returncode == 0, run.stderr
    (check,) = fake.check_runs.values()
    assert check["head_sha"] == env.ws.head_sha and check["status"] == "completed"
    assert env.ws.head_sha[:7] in check["output"]["title"]  # the check names the SHA measured
    (comment,) = sticky(fake)
    assert env.ws.head_sha[:7] in comment["body"]
    assert reactions(fake, payload["comment"]["id"]) == ["eyes", "rocket"]


@pytest.mark.parametrize("digits", [7, 12, 39])
def test_a_prefix_of_the_head_is_not_a_pin_on_a_fork(env: Env, fake: FakeGitHub, digits: int) -> None:
    """28 bits (7 digits) can be matched by a commit prepared for it: forks need all 40."""
    fork_pull(env, fake)
    payload = env.comment_event(f"/bench sha={env.ws.head_sha[:digits]} runs=12")
    run = env.run_in_process("issue_comment", payload)
    assert run.returncode == 0, run.stderr
    (reply,) = replies(fake)
    assert "full 40-digit SHA" in reply and f"sha={env.ws.head_sha[:digits]}`" in reply
    assert f"/bench sha={env.ws.head_sha} runs=12" in reply  # the command that pins it
    assert fake.check_runs == {} and sticky(fake) == [] and not run.results_dir.exists()
    assert run.outputs == {"run": "false"}
    assert reactions(fake, payload["comment"]["id"]) == ["eyes", "confused"]


def test_a_prefix_still_runs_on_the_repository_s_own_branches(env: Env, fake: FakeGitHub) -> None:
    run = env.run_in_process("issue_comment", env.comment_event(f"/bench sha={env.ws.head_sha[:7]}"))
    assert run.returncode == 0, run.stderr
    (check,) = fake.check_runs.values()
    assert check["head_sha"] == env.ws.head_sha and check["status"] == "completed"


def test_bench_with_another_sha_names_both_and_runs_nothing(env: Env, fake: FakeGitHub) -> None:
    fork_pull(env, fake)
    stale = env.ws.base_sha  # e.g. the head before the author pushed again
    run = env.run_in_process("issue_comment", env.comment_event(f"/bench sha={stale}"))
    assert run.returncode == 0, run.stderr
    (reply,) = replies(fake)
    assert stale in reply and env.ws.head_sha in reply
    assert fake.check_runs == {} and not run.results_dir.exists()


def test_a_wrong_sha_is_refused_on_the_repository_s_own_branches_too(env: Env, fake: FakeGitHub) -> None:
    run = env.run_in_process("issue_comment", env.comment_event("/bench sha=0000000"))
    assert run.returncode == 0, run.stderr
    (reply,) = replies(fake)
    assert "0000000" in reply and env.ws.head_sha in reply and fake.check_runs == {}


@pytest.mark.parametrize("body", ["/bench sha=abc", "/bench sha=xyz1234", "/bench sha=" + "a" * 41])
def test_a_malformed_sha_is_not_understood(env: Env, fake: FakeGitHub, body: str) -> None:
    fork_pull(env, fake)
    run = env.run_in_process("issue_comment", env.comment_event(body))
    assert run.returncode == 0
    (reply,) = replies(fake)
    assert "all 40 of them" in reply and fake.check_runs == {}


def test_the_head_is_pinned_when_the_gate_runs(tmp_path: Path, fake: FakeGitHub) -> None:
    """A push after /bench (while measure waits for the runner) is not what gets measured."""
    env = Env(tmp_path, fake, make_workspace(tmp_path))
    payload = env.comment_event(f"/bench sha={env.ws.head_sha[:8]}")
    gate = env.run("issue_comment", payload, BENCHBOT_MODE="gate")
    assert gate.returncode == 0, gate.stderr
    # the author pushes a new head before the runner picks the job up
    fake.pulls[2]["head_sha"] = env.ws.base_sha
    measure = env.run("issue_comment", payload, BENCHBOT_MODE="measure",
                      BENCHBOT_JOB=gate.outputs["job"])
    assert measure.returncode == 0, measure.stderr
    import json
    doc = json.loads((measure.results_dir / "results.json").read_text())
    assert doc["head"]["sha"] == env.ws.head_sha


# --- pull_request events from forks ------------------------------------------------------


def labeled_config() -> str:
    return CONFIG + "github:\n  fork_label: safe-to-bench\n"


def test_a_fork_label_approves_the_head_it_was_added_to(tmp_path: Path, fake: FakeGitHub) -> None:
    env = Env(tmp_path, fake, make_workspace(tmp_path, config=labeled_config()))
    payload = env.pull_request_event("labeled", fork=FORK, labels=("safe-to-bench",))
    payload["label"] = {"name": "safe-to-bench", "color": "0e8a16"}
    run = env.run_in_process("pull_request", payload)
    assert run.returncode == 0, run.stderr
    assert run.outputs["conclusion"] == "failure" and len(sticky(fake)) == 1


def test_a_push_after_the_label_is_not_run(tmp_path: Path, fake: FakeGitHub) -> None:
    env = Env(tmp_path, fake, make_workspace(tmp_path, config=labeled_config()))
    payload = env.pull_request_event("synchronize", fork=FORK, labels=("safe-to-bench",))
    run = env.run_in_process("pull_request", payload)
    assert run.returncode == 0, run.stderr
    assert run.outputs == {"conclusion": "skipped", "run": "false"}
    assert "approved an earlier head commit" in run.stderr and env.ws.head_sha in run.summary
    assert fake.requests == [] and not run.results_dir.exists()


def test_another_label_approves_nothing(tmp_path: Path, fake: FakeGitHub) -> None:
    env = Env(tmp_path, fake, make_workspace(tmp_path, config=labeled_config()))
    payload = env.pull_request_event("labeled", fork=FORK, labels=("bug",))
    payload["label"] = {"name": "bug", "color": "d73a4a"}
    run = env.run_in_process("pull_request", payload)
    assert run.returncode == 0 and run.outputs["conclusion"] == "skipped"
    assert fake.requests == []


def test_a_label_on_a_branch_of_the_repository_does_not_rerun(env: Env, fake: FakeGitHub) -> None:
    payload = env.pull_request_event("labeled", labels=("bug",))
    payload["label"] = {"name": "bug"}
    run = env.run_in_process("pull_request", payload)
    assert run.returncode == 0 and "ignored" in run.stderr and fake.requests == []
