"""One rule for who may start work (``gate.admit``), whichever way it starts: a `/bench`
comment, a pull request from the repository's own branch, the ``fork_label`` on a fork,
a fork's push with ``forks: true``. Each way at each of GitHub's permission levels, and
an enumeration of every event the gate reads, each of which runs only through ``admit``."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from benchbot.github import gate
from tests.fakegithub import FakeGitHub
from tests.ghenv import CONFIG, Env, make_workspace, sticky

FORK = "mallory/Hello-World"
LEVELS = ("admin", "maintain", "write", "triage", "read", "none")
WRITERS = ("admin", "maintain", "write")
LABEL = "safe-to-bench"
CONFIGS = {
    "plain": CONFIG,
    "fork_label": CONFIG + f"github:\n  fork_label: {LABEL}\n",
    "forks": CONFIG + "github:\n  forks: true\n",
    "both": CONFIG + f"github:\n  forks: true\n  fork_label: {LABEL}\n",
}


def env_with(tmp_path: Path, fake: FakeGitHub, config: str, name: str = "ws") -> Env:
    root = tmp_path / name
    root.mkdir(exist_ok=True)
    return Env(root, fake, make_workspace(root, config=CONFIGS[config]))


def as_user(fake: FakeGitHub, level: str) -> str:
    login = f"user-{level}"
    fake.permissions[login] = level
    return login


def label_event(env: Env, sender: str, label: str = LABEL) -> dict[str, Any]:
    payload = env.pull_request_event("labeled", fork=FORK, labels=(label,), sender=sender)
    payload["label"] = {"name": label, "color": "0e8a16"}
    env.fake.add_review(2, sender, "APPROVED", env.ws.head_sha)  # they read the head
    return payload


def ran(run: Any) -> bool:
    return run.outputs.get("run") == "true"


# --- each way, each level -------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_a_bench_comment_runs_only_for_write_access(tmp_path: Path, fake: FakeGitHub,
                                                    level: str) -> None:
    env = env_with(tmp_path, fake, "plain")
    login = as_user(fake, level)
    run = env.run_in_process("issue_comment", env.comment_event("/bench", login=login),
                             BENCHBOT_MODE="gate")
    assert run.returncode == 0, run.stderr
    assert ran(run) is (level in WRITERS), run.stderr
    if level not in WRITERS:
        assert fake.check_runs == {} and sticky(fake) == []
        assert f"whose permission is {'read' if level == 'triage' else level}" in run.stderr


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("action", ["opened", "reopened"])
def test_a_pull_request_of_the_repository_s_own_branch_runs_only_for_write_access(
        tmp_path: Path, fake: FakeGitHub, level: str, action: str) -> None:
    """Anyone who may read can open a pull request from a branch that is already there, and
    triage may reopen one: the job would queue in the runner's group, where it replaces a
    maintainer's pending one."""
    env = env_with(tmp_path, fake, "plain")
    sender = as_user(fake, level)
    run = env.run_in_process("pull_request", env.pull_request_event(action, sender=sender),
                             BENCHBOT_MODE="gate")
    assert run.returncode == 0, run.stderr
    assert ran(run) is (level in WRITERS), run.stderr
    if level not in WRITERS:
        assert run.outputs == {"conclusion": "skipped", "run": "false"}
        assert f"started by {sender}, whose permission is" in run.stderr
        assert fake.check_runs == {} and fake.comments == {}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("config", ["fork_label", "both"])
def test_a_fork_label_approves_only_for_write_access(tmp_path: Path, fake: FakeGitHub,
                                                     level: str, config: str) -> None:
    """With ``forks: true`` beside the label (``both``), a labeller with triage used to
    approve it: the permission was asked only without ``forks: true``."""
    env = env_with(tmp_path, fake, config)
    sender = as_user(fake, level)
    run = env.run_in_process("pull_request_target", label_event(env, sender),
                             BENCHBOT_MODE="gate")
    assert run.returncode == 0, run.stderr
    assert ran(run) is (level in WRITERS), run.stderr
    if level not in WRITERS:
        assert run.outputs == {"conclusion": "skipped", "run": "false"}
        assert f"label was added by {sender}, whose permission is" in run.stderr
        assert fake.check_runs == {} and fake.comments == {}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("action", ["opened", "synchronize", "reopened"])
def test_forks_true_runs_a_fork_s_own_push_whoever_sent_it(tmp_path: Path, fake: FakeGitHub,
                                                           level: str, action: str) -> None:
    """The config approved every push of a fork: that is the starter, and the job waits in
    a concurrency group of its pull request's own (test_workflow_lint.py). No one's
    permission decides it, so none is asked."""
    env = env_with(tmp_path, fake, "forks")
    sender = as_user(fake, level)
    payload = env.pull_request_event(action, fork=FORK, sender=sender)
    run = env.run_in_process("pull_request_target", payload, BENCHBOT_MODE="gate")
    assert ran(run), run.stderr
    assert fake.requests_matching("GET", r"/collaborators/.*/permission$") == []


def test_an_admission_is_made_by_the_rule_only() -> None:
    with pytest.raises(TypeError, match=r"gate\.admit only"):
        gate.Admission(gate.Way.COMMENT, "mallory", "write", object())


# --- every event the gate reads goes through the rule -------------------------------------------


def events(env: Env, starter: str) -> list[tuple[str, dict[str, Any], str]]:
    """(event name, payload, who started it) for every pull request event and action the
    gate knows (and one it does not), own branch and fork, with the fork_label and another
    label; and `/bench` comments on the own branch and a fork."""
    out = []
    for name, action, fork in itertools.product(
            ("pull_request", "pull_request_target"),
            ("opened", "synchronize", "reopened", "labeled", "closed"), (None, FORK)):
        for label in ((LABEL, "bug") if action == "labeled" else (None,)):
            payload = env.pull_request_event(action, fork=fork, sender=starter,
                                             labels=(label,) if label else ())
            if label:
                payload["label"] = {"name": label}
            out.append((name, payload, starter))
    for body in ("/bench", f"/bench sha={env.ws.head_sha}", "/bench bisect only=nap"):
        out.append(("issue_comment", env.comment_event(body, login=starter), starter))
    return out


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_every_way_into_the_gate_runs_only_through_the_rule(
        tmp_path: Path, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch, config: str) -> None:
    admitted: list[tuple[gate.Way, str, object]] = []
    real = gate.admit

    def recording(api: Any, way: gate.Way, starter: str, **kw: Any) -> Any:
        answer = real(api, way, starter, **kw)
        admitted.append((way, starter, answer))
        return answer

    monkeypatch.setattr(gate, "admit", recording)
    started = 0
    for level in ("write", "triage"):
        for fork_pr in (False, True):
            env = env_with(tmp_path, fake, config, f"{level}-{fork_pr}")
            fake.pulls.clear()
            fake.issues.clear()
            if fork_pr:  # the comments' pull request is a fork's
                fake.add_pull(2, head_sha=env.ws.head_sha, base_sha=env.ws.base_sha,
                              head_ref="feature", base_ref="main", head_repo_full_name=FORK)
            starter = as_user(fake, level)
            for name, payload, who in events(env, starter):
                if fork_pr != (name == "issue_comment"):
                    continue  # pull request events carry their own fork; comments once each
                admitted.clear()
                run = env.run_in_process(name, payload, BENCHBOT_MODE="gate")
                what = f"{name} {payload.get('action')} {payload.get('label')} ({level})"
                if not ran(run):
                    continue
                started += 1
                assert len(admitted) == 1, what
                way, by, answer = admitted[0]
                assert isinstance(answer, gate.Admission), what
                assert by == who, what
                if way is not gate.Way.FORK_PUSH:  # the config's word, no person's
                    assert level in WRITERS, what
                    assert answer.permission in gate.ALLOWED_PERMISSIONS, what
    assert started > 0  # the enumeration reached the ways that run
