"""A fork's code runs only at the commit a maintainer named, and only while it is the head."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from benchbot.config.load import parse_config
from benchbot.github import gate
from benchbot.github.event import parse_event
from tests.conftest import git
from tests.fakegithub import FakeGitHub
from tests.ghenv import BOT, CONFIG, Env, Workspace, make_workspace, reactions, sticky

# Measuring is planted (conftest.planted) but for runs of a process of their own.
pytestmark = pytest.mark.usefixtures("planted")

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


# --- pull_request and pull_request_target events from forks ------------------------------
#
# GitHub's token rules (FakeGitHub.workflow_token): a fork's `pull_request` run gets a
# read-only token and runs the fork's own workflow file; `pull_request_target` runs the
# default branch's workflow with a token that may write. So forks are served by
# pull_request_target, and a fork's pull_request run writes nothing.


def labeled_config() -> str:
    return CONFIG + "github:\n  fork_label: safe-to-bench\n"


def labeled(env: Env, *, label: str = "safe-to-bench", sender: str = "alice",
            labels: tuple[str, ...] | None = None, review: str | None = "APPROVED") -> dict:
    """The ``labeled`` event; ``review``: the state of the labeller's review of the head
    (written before the click), None for none."""
    payload = env.pull_request_event("labeled", fork=FORK, labels=labels or (label,),
                                     sender=sender)
    payload["label"] = {"name": label, "color": "0e8a16"}
    if review is not None:
        env.fake.add_review(2, sender, review, env.ws.head_sha)
    return payload


def fork_only_under_pull_refs(tmp_path: Path, fake: FakeGitHub, config: str) -> Env:
    """A clone of the base repository as actions/checkout leaves it (depth 1, the base
    branch): the fork's head is only in the base repository's refs/pull/2/head."""
    ws = make_workspace(tmp_path, config=config)
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(ws.path), str(origin)], check=True)
    git(origin, "update-ref", "refs/pull/2/head", ws.head_sha)
    git(origin, "branch", "-D", "feature")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{origin}", str(clone)],
                   check=True)
    return Env(tmp_path, fake, Workspace(clone, ws.base_sha, ws.head_sha))


@pytest.mark.parametrize("config", ["fork_label: safe-to-bench", "forks: true"])
def test_a_fork_s_pull_request_run_writes_nothing_and_measures_nothing(
        tmp_path: Path, fake: FakeGitHub, config: str) -> None:
    """Its token is read-only: opening the check would be refused (403), so the gate must
    not say run=true (the old gate did, and the fork's code ran with nothing published)."""
    env = Env(tmp_path, fake, make_workspace(tmp_path, config=CONFIG + f"github:\n  {config}\n"))
    run = env.run_in_process("pull_request", labeled(env), BENCHBOT_MODE="gate")
    assert run.returncode == 0, run.stderr
    assert run.outputs == {"conclusion": "skipped", "run": "false"}
    assert "read-only token" in run.stderr and "pull_request_target" in run.stderr
    assert fake.requests == []  # not even a refused write
    assert not run.results_dir.exists()


def test_a_fork_label_on_pull_request_target_measures_the_labelled_head(
        tmp_path: Path, fake: FakeGitHub) -> None:
    """The whole three-job workflow: the gate (base revision, write token) pins the head
    the label was added to; measure fetches it from refs/pull/2/head with no write token;
    publish completes the one check."""
    env = fork_only_under_pull_refs(tmp_path, fake, labeled_config())
    payload = labeled(env)
    labelled_head = payload["pull_request"]["head"]["sha"]
    gate, measure, publish = env.run_split("pull_request_target", payload,
                                           measure_token=fake.read_token)
    assert gate.returncode == 0, gate.stderr
    assert gate.outputs["run"] == "true" and gate.outputs["head-sha"] == labelled_head
    assert measure is not None and measure.returncode == 0, measure and measure.stderr
    assert publish is not None and publish.returncode == 0, publish and publish.stderr
    assert git(env.ws.path, "cat-file", "-t", labelled_head) == "commit"  # via refs/pull/2/head
    (check,) = fake.check_runs.values()
    assert (check["head_sha"], check["status"], check["conclusion"]) == (
        labelled_head, "completed", "failure")
    assert len(sticky(fake)) == 1
    assert [r.status for r in fake.requests_matching("GET", r"/collaborators/alice/permission$")] == [200]
    assert all(r.header("Authorization") != f"token {fake.read_token}"
               for r in fake.requests)  # the measure job made no call at all


def test_a_label_added_by_someone_without_write_access_approves_nothing(
        tmp_path: Path, fake: FakeGitHub) -> None:
    """GitHub lets triage add labels: approving a fork's code takes write access."""
    fake.permissions["tracy"] = "triage"
    env = Env(tmp_path, fake, make_workspace(tmp_path, config=labeled_config()))
    run = env.run_in_process("pull_request_target", labeled(env, sender="tracy"),
                             BENCHBOT_MODE="gate")
    assert run.returncode == 0, run.stderr
    assert run.outputs == {"conclusion": "skipped", "run": "false"}
    assert "added by tracy, whose permission is read" in run.stderr
    assert fake.check_runs == {} and fake.comments == {}


@pytest.mark.parametrize("action", ["synchronize", "reopened", "opened"])
def test_a_label_that_is_merely_present_approves_nothing(tmp_path: Path, fake: FakeGitHub,
                                                         action: str) -> None:
    """A push after the label, or one made while the pull request was closed and then
    reopened, is a commit nobody has read."""
    env = Env(tmp_path, fake, make_workspace(tmp_path, config=labeled_config()))
    payload = env.pull_request_event(action, fork=FORK, labels=("safe-to-bench",))
    run = env.run_in_process("pull_request_target", payload, BENCHBOT_MODE="gate")
    assert run.returncode == 0, run.stderr
    assert run.outputs == {"conclusion": "skipped", "run": "false"}
    assert "approved an earlier head commit" in run.stderr and env.ws.head_sha in run.summary
    assert fake.requests == [] and not run.results_dir.exists()


def test_another_label_approves_nothing(tmp_path: Path, fake: FakeGitHub) -> None:
    env = Env(tmp_path, fake, make_workspace(tmp_path, config=labeled_config()))
    run = env.run_in_process("pull_request_target", labeled(env, label="bug"),
                             BENCHBOT_MODE="gate")
    assert run.returncode == 0 and run.outputs["conclusion"] == "skipped"
    assert fake.requests == []


def test_forks_true_measures_every_push_from_pull_request_target(
        tmp_path: Path, fake: FakeGitHub) -> None:
    env = fork_only_under_pull_refs(tmp_path, fake, CONFIG + "github:\n  forks: true\n")
    payload = env.pull_request_event("synchronize", fork=FORK)
    gate, _, publish = env.run_split("pull_request_target", payload)
    assert gate.outputs["run"] == "true", gate.stderr
    assert publish is not None and publish.returncode == 0, publish.stderr
    (check,) = fake.check_runs.values()
    assert (check["head_sha"], check["conclusion"]) == (env.ws.head_sha, "failure")


def test_forks_true_reruns_nothing_for_another_label(env: Env, fake: FakeGitHub) -> None:
    """With forks: true every push runs; a label such as "bug" adds no commit to measure."""
    payload = env.pull_request_event("labeled", fork=FORK, labels=("bug",))
    payload["label"] = {"name": "bug"}
    event = parse_event("pull_request_target", payload)
    config = parse_config(CONFIG + "github:\n  forks: true\n")
    assert gate.fork_refusal(config, event) is not None
    payload["action"] = "synchronize"
    assert gate.fork_refusal(config, parse_event("pull_request_target", payload)) is None


def test_pull_request_target_leaves_the_repository_s_own_branches_to_pull_request(
        env: Env, fake: FakeGitHub) -> None:
    run = env.run_in_process("pull_request_target", env.pull_request_event("opened"),
                             BENCHBOT_MODE="gate")
    assert run.returncode == 0 and run.outputs == {"run": "false"}
    assert "the pull_request event serves those" in run.stderr and fake.requests == []


def test_pull_request_target_is_refused_in_the_single_job_form(tmp_path: Path,
                                                              fake: FakeGitHub) -> None:
    env = Env(tmp_path, fake, make_workspace(tmp_path, config=labeled_config()))
    run = env.run_in_process("pull_request_target", labeled(env))
    assert run.returncode != 0 and "needs the three-job workflow" in run.stderr
    assert fake.requests == [] and not run.results_dir.exists()


def test_a_label_on_a_branch_of_the_repository_does_not_rerun(env: Env, fake: FakeGitHub) -> None:
    payload = env.pull_request_event("labeled", labels=("bug",))
    payload["label"] = {"name": "bug"}
    run = env.run_in_process("pull_request", payload)
    assert run.returncode == 0 and "ignored" in run.stderr and fake.requests == []


# --- a label approves the head its labeller reviewed ---------------------------------------


@pytest.mark.parametrize(("state", "of", "by"), [
    (None, "head", "alice"),  # no review at all: the label was clicked unread
    ("APPROVED", "base", "alice"),  # a review of an earlier head: pushed after the review
    ("APPROVED", "head", "maria"),  # someone else read it, not the one who labelled
    ("CHANGES_REQUESTED", "head", "alice"),
    ("PENDING", "head", "alice"),  # not submitted
    ("DISMISSED", "head", "alice"),
])
def test_a_label_approves_only_the_head_its_labeller_reviewed(
        tmp_path: Path, fake: FakeGitHub, state: str | None, of: str, by: str) -> None:
    env = Env(tmp_path, fake, make_workspace(tmp_path, config=labeled_config()))
    payload = labeled(env, review=None)
    if state is not None:
        fake.add_review(2, by, state, env.ws.base_sha if of == "base" else env.ws.head_sha)
    run = env.run_in_process("pull_request_target", payload, BENCHBOT_MODE="gate")
    assert run.returncode == 0, run.stderr
    assert run.outputs == {"conclusion": "skipped", "run": "false"}
    assert "none of their reviews is of the head" in run.stderr
    assert f"/bench sha={env.ws.head_sha}" in run.stderr
    assert fake.check_runs == {} and sticky(fake) == []


@pytest.mark.parametrize("state", ["APPROVED", "COMMENTED"])
def test_a_label_after_reviewing_that_head_runs_it(tmp_path: Path, fake: FakeGitHub,
                                                   state: str) -> None:
    env = Env(tmp_path, fake, make_workspace(tmp_path, config=labeled_config()))
    run = env.run_in_process("pull_request_target", labeled(env, review=state),
                             BENCHBOT_MODE="gate")
    assert run.returncode == 0, run.stderr
    assert run.outputs["run"] == "true" and run.outputs["head-sha"] == env.ws.head_sha
    assert [r.status for r in fake.requests_matching("GET", r"/pulls/2/reviews$")] == [200]


# --- the base branch is trusted, not chosen -----------------------------------------------


def fork_event(env: Env, base_ref: str) -> dict:
    payload = env.pull_request_event("synchronize", fork=FORK)
    payload["pull_request"]["base"]["ref"] = base_ref
    return payload


@pytest.mark.parametrize(("bases", "base_ref", "runs"), [
    ("", "main", True),  # the default branch (the event's repository.default_branch)
    ("", "v1-maintenance", False),  # an older branch, whose config says forks: true
    ("  fork_bases: [main, 'release/*']\n", "release/2.0", True),
    ("  fork_bases: [main, 'release/*']\n", "v1-maintenance", False),
])
def test_only_the_trusted_base_branches_measure_a_fork(tmp_path: Path, fake: FakeGitHub,
                                                       bases: str, base_ref: str, runs: bool) -> None:
    config = CONFIG + "github:\n  forks: true\n" + bases
    env = Env(tmp_path, fake, make_workspace(tmp_path, config=config))
    run = env.run_in_process("pull_request_target", fork_event(env, base_ref),
                             BENCHBOT_MODE="gate")
    assert run.returncode == 0, run.stderr
    if runs:
        assert run.outputs["run"] == "true", run.stderr
    else:
        assert run.outputs == {"conclusion": "skipped", "run": "false"}
        assert f"its base branch `{base_ref}` is not one" in run.stderr
        assert fake.check_runs == {} and sticky(fake) == []


def test_bench_on_a_fork_against_an_untrusted_base_is_answered_and_runs_nothing(
        env: Env, fake: FakeGitHub) -> None:
    fake.add_pull(2, head_sha=env.ws.head_sha, base_sha=env.ws.base_sha, head_ref="feature",
                  base_ref="v1-maintenance", head_repo_full_name=FORK)
    payload = env.comment_event(f"/bench sha={env.ws.head_sha}")
    run = env.run_in_process("issue_comment", payload)
    assert run.returncode == 0, run.stderr
    (reply,) = replies(fake)
    assert "base branch `v1-maintenance` is not one" in reply and "Nothing was run" in reply
    assert fake.check_runs == {} and sticky(fake) == [] and run.outputs == {"run": "false"}
    assert reactions(fake, payload["comment"]["id"]) == ["eyes", "confused"]


def test_a_fork_never_runs_with_a_writable_directory_both_arms_share(tmp_path: Path,
                                                                     fake: FakeGitHub) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    config = CONFIG.replace("workloads:", f"sandbox: {{writable: ['{cache}']}}\nworkloads:") + \
        "github:\n  forks: true\n"
    env = Env(tmp_path, fake, make_workspace(tmp_path, config=config))
    run = env.run_in_process("pull_request_target", fork_event(env, "main"), BENCHBOT_MODE="gate")
    assert run.returncode == 0, run.stderr
    assert run.outputs == {"conclusion": "skipped", "run": "false"}
    assert re.search(r"benchbot\.yml:\d+: sandbox\.writable: a directory both arms share", run.stderr)
