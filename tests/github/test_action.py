"""End to end: `benchbot github` in a realistic Actions environment, against the fake
GitHub server (tests/fakegithub), on a real git repository.

Each test writes an event file (a real webhook payload from @octokit/webhooks-examples,
pointed at the test repository's commits), runs `benchbot github` with the ``GITHUB_*``
variables Actions sets, and asserts on what the server holds afterwards. The workloads
are `sleep` scripts with 10 runs; the fast tier's tests measure them with the
``planted`` fixture (the same slowdown on a fake clock), the slow tier's run them.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchbot.github.post import MARKER
from tests.conftest import git
from tests.fakegithub import FakeGitHub
from tests.ghenv import BOT, CONFIG, Env, Workspace, make_workspace, reactions, sticky

# Measuring is planted (conftest.planted): what these tests check happens around it.
pytestmark = pytest.mark.usefixtures("planted")

# --------------------------------------------------------------------------- pull_request


def test_two_runs_keep_one_sticky_comment_and_complete_the_check(
        tmp_path: Path, fake: FakeGitHub, validate: Callable[[Any], None]) -> None:
    config = CONFIG.replace("confirm: off", "confirm: on")
    env = Env(tmp_path, fake, make_workspace(tmp_path, config=config))
    payload = env.pull_request_event("opened")
    first = env.run("pull_request", payload)
    assert first.returncode == 0, first.stderr
    # the planted 10x slowdown fails the check (fail_on: slower by default)
    assert first.outputs["conclusion"] == "failure" and first.outputs["slower"] == "1"
    assert {"results", "report", "faster", "level", "inconclusive", "invalid"} <= set(first.outputs)
    validate(first.outputs["results"])
    assert Path(first.outputs["report"]).read_text() in first.summary
    (only,) = sticky(fake)
    assert "### benchbot" in only["body"] and "slower" in only["body"]
    assert "/bench" in only["body"] and "actions/runs/1001" in only["body"]
    (check,) = fake.check_runs.values()
    assert (check["name"], check["status"], check["conclusion"]) == ("benchbot", "completed", "failure")
    assert check["head_sha"] == env.ws.head_sha and "slower" in check["output"]["summary"]
    # the comment said what was being measured before the report replaced it
    edits = [r.body["body"] for r in fake.requests_matching("PATCH", r"/issues/comments/\d+$")]
    assert any("measuring" in e and env.ws.head_sha[:12] in e for e in edits)

    second = env.run("pull_request", env.pull_request_event("synchronize"))
    assert second.returncode == 0, second.stderr
    (again,) = sticky(fake)
    assert again["id"] == only["id"] and "actions/runs/1002" in again["body"]
    assert len(fake.comments_on(2)) == 1
    assert len(fake.requests_matching("POST", r"/issues/2/comments$")) == 1
    assert [c["conclusion"] for c in fake.check_runs.values()] == ["failure", "failure"]
    doc = json.loads(Path(second.outputs["results"]).read_text())
    assert doc["base"] == {"ref": "main", "sha": env.ws.base_sha}
    assert doc["head"] == {"ref": "feature", "sha": env.ws.head_sha}


def test_other_comments_with_the_marker_are_never_edited(env: Env, fake: FakeGitHub) -> None:
    payload = env.pull_request_event("opened")
    forged = fake.add_comment(2, f"{MARKER}\nnot benchbot's", "mallory")
    mine_unmarked = fake.add_comment(2, "an unrelated bot comment", BOT, "Bot")
    run = env.run_in_process("pull_request", payload, BENCHBOT_FAIL_ON="inconclusive")
    assert run.returncode == 0, run.stderr
    assert fake.comments[forged["id"]]["body"] == f"{MARKER}\nnot benchbot's"
    assert fake.comments[mine_unmarked["id"]]["body"] == "an unrelated bot comment"
    assert len(sticky(fake)) == 1
    # fail-on slower is replaced by the input: a clear slowdown alone is success now
    assert run.outputs["conclusion"] == "success"
    assert next(iter(fake.check_runs.values()))["conclusion"] == "success"


def test_fork_pull_request_is_not_run(env: Env, fake: FakeGitHub) -> None:
    run = env.run_in_process("pull_request", env.pull_request_event(fork="mallory/Hello-World"))
    assert run.returncode == 0, run.stderr
    assert "fork" in run.stderr and "::notice" in run.stderr
    assert run.outputs == {"conclusion": "skipped", "run": "false"} and "/bench" in run.summary
    assert fake.requests == [] and not run.results_dir.exists()


def test_checks_forbidden_falls_back_to_a_commit_status(env: Env, fake: FakeGitHub) -> None:
    fake.checks_forbidden = True
    run = env.run_in_process("pull_request", env.pull_request_event(), BENCHBOT_CHECK_NAME="perf")
    assert run.returncode == 0, run.stderr
    assert fake.check_runs == {}
    states = [(s["context"], s["state"], s["sha"]) for s in fake.statuses]
    assert states == [("perf", "pending", env.ws.head_sha), ("perf", "failure", env.ws.head_sha)]
    assert "slower" in fake.statuses[-1]["description"]
    assert len(sticky(fake)) == 1


def test_publishing_failure_still_leaves_results_and_summary(env: Env, fake: FakeGitHub) -> None:
    # The check and the comment were opened; every later edit of the comment is refused.
    fake.fail_next("PATCH", r"/issues/comments/\d+$", 403, times=100)
    run = env.run_in_process("pull_request", env.pull_request_event())
    assert run.returncode == 1
    assert "results file and the job summary hold everything measured" in run.stderr
    assert "PATCH /repos/Codertocat/Hello-World/issues/comments/" in run.stderr
    assert "failed: 403" in run.stderr
    assert (run.results_dir / "results.json").is_file() and (run.results_dir / "report.md").is_file()
    assert "slower" in run.summary and run.outputs["conclusion"] == "failure"
    assert next(iter(fake.check_runs.values()))["conclusion"] == "failure"


@pytest.mark.slow
def test_server_errors_and_rate_limits_are_survived(env: Env, fake: FakeGitHub) -> None:
    payload = env.comment_event("/bench runs=10 confirm=off")
    fake.fail_next("GET", r"/collaborators/alice/permission$", 502)
    fake.fail_rate_limited("POST", r"/reactions$", reset_in=0)
    fake.fail_secondary_rate_limit("POST", r"/check-runs$", retry_after=1)
    fake.fail_next("PATCH", r"/check-runs/\d+$", 503)
    fake.fail_next("GET", r"/issues/2/comments$", 500)
    # a lost answer to a comment creation: stored, but the client saw a 502
    fake.fail_next("POST", r"/issues/2/comments$", 502, apply=True)
    run = env.run("issue_comment", payload)
    assert run.returncode == 0, run.stderr
    assert len(sticky(fake)) == 1  # looked for it instead of posting twice
    assert "slower" in sticky(fake)[0]["body"]
    injected = [r for r in fake.requests if r.injected]
    assert len(injected) == 6
    assert reactions(fake, payload["comment"]["id"]) == ["eyes", "rocket"]
    assert next(iter(fake.check_runs.values()))["conclusion"] == "failure"


def test_a_broken_config_at_the_base_fails_the_check(tmp_path: Path, fake: FakeGitHub) -> None:
    env = Env(tmp_path, fake, make_workspace(tmp_path, config="version: 1\nworkloadz: []\n"))
    run = env.run_in_process("pull_request", env.pull_request_event())
    assert run.returncode == 1 and "workloadz: unknown key" in run.stderr
    (check,) = fake.check_runs.values()
    assert check["conclusion"] == "failure" and "workloadz" in check["output"]["summary"]
    (body,) = [c["body"] for c in sticky(fake)]
    assert "could not run" in body and "workloadz" in body
    assert "could not run" in run.summary and run.outputs == {"conclusion": "failure"}


# --------------------------------------------------------------------------- /bench


def test_a_build_failure_after_bench_is_reported_everywhere(tmp_path: Path,
                                                            fake: FakeGitHub) -> None:
    ws = make_workspace(tmp_path, config=CONFIG + "build: echo broken >&2; exit 3\n")
    env = Env(tmp_path, fake, ws)
    payload = env.comment_event("/bench")
    run = env.run_in_process("issue_comment", payload)
    assert run.returncode == 1 and "build of base" in run.stderr
    assert reactions(fake, payload["comment"]["id"]) == ["eyes", "confused"]
    (check,) = fake.check_runs.values()
    assert check["conclusion"] == "failure" and "broken" in check["output"]["summary"]
    (body,) = [c["body"] for c in sticky(fake)]
    assert "could not run" in body and "broken" in body


def test_bench_from_a_writer_runs_and_reacts(env: Env, fake: FakeGitHub) -> None:
    payload = env.comment_event("/bench runs=12 only=nap", login="maria")
    run = env.run("issue_comment", payload)
    assert run.returncode == 0, run.stderr
    assert reactions(fake, payload["comment"]["id"]) == ["eyes", "rocket"]
    doc = json.loads(Path(run.outputs["results"]).read_text())
    assert doc["settings"]["runs"] == 12
    (body,) = [c["body"] for c in sticky(fake)]
    assert "slower" in body
    edits = [r.body["body"] for r in fake.requests_matching("PATCH", r"/issues/comments/\d+$")]
    assert any("Requested by @maria: `/bench runs=12 only=nap`" in e for e in edits)
    assert [r.status for r in fake.requests_matching("GET", r"/collaborators/maria/permission$")] == [200]


def test_bench_from_a_reader_is_refused(env: Env, fake: FakeGitHub) -> None:
    payload = env.comment_event("/bench", login="bob")
    run = env.run_in_process("issue_comment", payload)
    assert run.returncode == 0, run.stderr
    replies = [c for c in fake.comments_on(2) if c["user"]["login"] == BOT]
    assert len(replies) == 1 and "@bob" in replies[0]["body"] and "write access" in replies[0]["body"]
    assert fake.check_runs == {} and fake.reactions == [] and not run.results_dir.exists()


def test_a_reader_is_answered_once_per_pull_request(env: Env, fake: FakeGitHub) -> None:
    """Five `/bench` from a reader: one reply, found again by the marker naming them in
    benchbot's own comment (listed through the API). A reader who quotes that marker in a
    comment of their own silences nobody; another reader, and another pull request, get
    an answer of their own."""
    fake.permissions.update({"Bob": "read", "tracy": "triage"})
    fake.add_pull(2, head_sha=env.ws.head_sha, base_sha=env.ws.base_sha, head_ref="feature",
                  base_ref="main")
    fake.add_comment(2, "<!-- benchbot:reader:tracy -->\nnot benchbot's", "tracy")
    for n in range(5):
        run = env.run_in_process("issue_comment", env.comment_event(f"/bench {n}", login="Bob"))
        assert run.returncode == 0 and run.outputs == {"run": "false"}, run.stderr
    assert "not answered again: Bob was answered on #2 before" in run.stderr
    for number in (2, 3):
        run = env.run_in_process("issue_comment",
                                 env.comment_event("/bench", login="tracy", number=number))
        assert run.returncode == 0, run.stderr
    answers = [(c["issue_number"], c["body"].split("\n")[1].split(",")[0])
               for c in fake.comments.values() if c["user"]["login"] == BOT]
    assert answers == [(2, "@Bob"), (2, "@tracy"), (3, "@tracy")]
    assert fake.check_runs == {} and fake.reactions == []


def test_bench_from_someone_unknown_to_the_repository_is_refused(env: Env, fake: FakeGitHub) -> None:
    fake.default_permission = None  # the API answers 404 for them
    run = env.run_in_process("issue_comment", env.comment_event("/bench", login="ghost"))
    assert run.returncode == 0, run.stderr
    (reply,) = [c for c in fake.comments_on(2) if c["user"]["login"] == BOT]
    assert "@ghost" in reply["body"] and "`none`" in reply["body"]
    assert fake.check_runs == {}


@pytest.mark.parametrize("body, problem", [
    ("/bench runs=5", "runs=5"),
    ("/bench runs=10 colour=blue", "unknown option `colour`"),
    ("/bench only=nope", "no workload named 'nope'"),
])
def test_bad_bench_options_are_refused_with_a_reply(env: Env, fake: FakeGitHub, body: str,
                                                    problem: str) -> None:
    payload = env.comment_event(body)
    run = env.run_in_process("issue_comment", payload)
    assert run.returncode == 0, run.stderr
    replies = [c for c in fake.comments_on(2) if c["user"]["login"] == BOT]
    assert len(replies) == 1 and problem in replies[0]["body"]
    assert "nothing was run" in replies[0]["body"]
    assert reactions(fake, payload["comment"]["id"]) == ["eyes", "confused"]
    assert fake.check_runs == {} and not run.results_dir.exists()


def test_bench_help_answers_with_the_syntax(env: Env, fake: FakeGitHub) -> None:
    run = env.run_in_process("issue_comment", env.comment_event("/bench help"))
    assert run.returncode == 0, run.stderr
    (reply,) = [c for c in fake.comments_on(2) if c["user"]["login"] == BOT]
    assert "runs=N" in reply["body"] and "only=a,b" in reply["body"]
    assert fake.check_runs == {}


@pytest.mark.parametrize("template, as_subprocess", [
    ("/bench runs=50; touch {path}", True),
    ("/bench $(touch {path})", True),
    ("/bench runs=10 `touch {path}`", False),
    ("/bench only=nap;touch${{IFS}}{path}", False),
    ("/bench runs=10 && touch {path}", False),
])
def test_command_text_never_reaches_a_shell(env: Env, fake: FakeGitHub, tmp_path: Path,
                                            template: str, as_subprocess: bool) -> None:
    target = tmp_path / f"pwned_{uuid.uuid4().hex}"
    payload = env.comment_event(template.format(path=target))
    run = (env.run if as_subprocess else env.run_in_process)("issue_comment", payload)
    assert run.returncode == 0, run.stderr
    assert not target.exists()
    (reply,) = [c for c in fake.comments_on(2) if c["user"]["login"] == BOT]
    assert "nothing was run" in reply["body"]
    assert fake.check_runs == {}


@pytest.mark.parametrize("case", ["plain issue", "edited", "bot", "not a command", "benchmark"])
def test_comments_that_are_not_commands_are_ignored(env: Env, fake: FakeGitHub, case: str) -> None:
    kwargs: dict[str, Any] = {
        "plain issue": {"body": "/bench", "on_pull": False, "number": 5},
        "edited": {"body": "/bench", "action_name": "edited"},
        "bot": {"body": "/bench", "login": BOT, "user_type": "Bot"},
        "not a command": {"body": "please run /bench"},
        "benchmark": {"body": "/benchmark runs=10"},
    }[case]
    body = kwargs.pop("body")
    run = env.run_in_process("issue_comment", env.comment_event(body, **kwargs))
    assert run.returncode == 0, run.stderr
    assert "ignored" in run.stderr
    assert fake.requests == []


def test_fetches_the_pull_request_head_when_missing(tmp_path: Path, fake: FakeGitHub) -> None:
    ws = make_workspace(tmp_path)
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(ws.path), str(origin)], check=True)
    git(origin, "update-ref", "refs/pull/2/head", ws.head_sha)
    git(origin, "branch", "-D", "feature")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{origin}", str(clone)], check=True)
    env = Env(tmp_path, fake, Workspace(clone, ws.base_sha, ws.head_sha))
    run = env.run_in_process("issue_comment", env.comment_event("/bench"))
    assert run.returncode == 0, run.stderr
    assert git(clone, "cat-file", "-t", ws.head_sha) == "commit"
    assert len(sticky(fake)) == 1


# --------------------------------------------------------------------------- paths and /bench all

# nap.sh is what the head changes; snooze names only files no change here touches.
PATHS_CONFIG = CONFIG + """\
    paths: ["nap.sh"]
  - name: snooze
    run: ["./nap.sh", "again"]
    paths: ["src/snooze/**"]
"""


@pytest.mark.parametrize("body, measured, skipped", [
    ("/bench", ["nap"], ["snooze"]),
    ("/bench all", ["nap", "snooze"], []),
    ("/bench runs=12 all", ["nap", "snooze"], []),
])
def test_bench_all_reaches_the_measuring_and_skipped_workloads_are_shown(
        tmp_path: Path, fake: FakeGitHub, body: str, measured: list[str],
        skipped: list[str]) -> None:
    env = Env(tmp_path, fake, make_workspace(tmp_path, config=PATHS_CONFIG))
    payload = env.comment_event(body, login="maria")
    run = env.run_in_process("issue_comment", payload)
    assert run.returncode == 0, run.stderr
    doc = json.loads(Path(run.outputs["results"]).read_text())
    assert [b["name"] for b in doc["benchmarks"]] == measured
    assert [s["name"] for s in doc.get("skipped", [])] == skipped
    (comment,) = [c["body"] for c in sticky(fake)]
    if skipped:
        assert ("Skipped, not affected by this change (paths): `snooze` — `/bench all` measures "
                "them." in comment)
    else:
        assert "Skipped" not in comment
        edits = [r.body["body"] for r in fake.requests_matching("PATCH", r"/issues/comments/\d+$")]
        described = "/bench all runs=12" if "runs" in body else body  # as describe() writes it
        assert any(f"Requested by @maria: `{described}`" in e for e in edits)
