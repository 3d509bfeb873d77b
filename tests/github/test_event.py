"""The Actions environment and real webhook payloads (tests/fakegithub/payloads) as dataclasses."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchbot.core.errors import UsageError
from benchbot.core.model import Shard
from benchbot.github.env import ActionEnv
from benchbot.github.event import load_event, parse_event
from tests.fakegithub import load_payload, payload_path

ENV = {
    "GITHUB_EVENT_NAME": "pull_request",
    "GITHUB_EVENT_PATH": str(payload_path("pull_request.opened")),
    "GITHUB_REPOSITORY": "Codertocat/Hello-World",
    "GITHUB_TOKEN": "ghs_x",
}


@pytest.mark.parametrize("name", ["opened", "synchronize", "reopened"])
def test_pull_request_payloads(name: str) -> None:
    event = parse_event("pull_request", load_payload(f"pull_request.{name}"))
    assert (event.name, event.action, event.number) == ("pull_request", name, 2)
    assert event.repository == "Codertocat/Hello-World" and event.is_pull_request
    assert event.head is not None and event.base is not None
    assert (event.head.ref, event.head.sha) == ("changes", "ec26c3e57ca3a959ca5aad62de7213c562f8c821")
    assert (event.base.ref, event.base.sha) == ("master", "f95f852bd8fca8fcc58a9a2d6c842781e32a215e")
    assert not event.is_fork and event.comment is None


def test_fork_and_deleted_fork() -> None:
    payload = load_payload("pull_request.opened")
    payload["pull_request"]["head"]["repo"]["full_name"] = "mallory/Hello-World"
    payload["pull_request"]["labels"] = [{"name": "safe-to-bench"}]
    event = parse_event("pull_request", payload)
    assert event.is_fork and event.labels == ("safe-to-bench",)
    payload["pull_request"]["head"]["repo"] = None  # GitHub sends null when the fork is gone
    assert parse_event("pull_request", payload).is_fork
    payload = load_payload("pull_request.opened")
    payload["pull_request"]["head"]["repo"]["full_name"] = "codertocat/hello-world"  # case only
    assert not parse_event("pull_request", payload).is_fork


def test_comment_on_a_pull_request() -> None:
    event = parse_event("issue_comment", load_payload("issue_comment.created.pr"))
    assert (event.action, event.number, event.is_pull_request) == ("created", 1, True)
    assert event.comment is not None
    assert (event.comment.author, event.comment.author_type) == ("Codertocat", "User")
    assert event.comment.body.startswith("You are totally right!")
    assert event.base is None and event.head is None  # the API is asked for those


def test_comment_on_a_plain_issue_and_an_edit() -> None:
    plain = parse_event("issue_comment", load_payload("issue_comment.created"))
    assert not plain.is_pull_request and plain.comment is not None
    edited = parse_event("issue_comment", load_payload("issue_comment.edited"))
    assert edited.action == "edited"


def test_other_events_and_odd_payloads_do_not_crash() -> None:
    assert parse_event("push", {"ref": "refs/heads/main"}).number is None
    assert parse_event("pull_request", {"action": "opened"}).base is None
    event = parse_event("issue_comment", {"action": "created", "issue": {"number": 3}, "comment": "x"})
    assert event.comment is None and not event.is_pull_request


def test_settings_from_the_environment(tmp_path: Path) -> None:
    action_env = ActionEnv.from_env({
        **ENV, "GITHUB_API_URL": "http://127.0.0.1:9/", "GITHUB_RUN_ID": "42",
        "GITHUB_WORKSPACE": str(tmp_path), "BENCHBOT_WORKING_DIRECTORY": "sub",
        "BENCHBOT_RUNS": "50", "BENCHBOT_FAIL_ON": "inconclusive, slower", "BENCHBOT_COMMENT": "off",
        "BENCHBOT_CHECK_NAME": "perf", "BENCHBOT_CONFIG": "", "RUNNER_TEMP": str(tmp_path / "t"),
    })
    assert action_env.api_url == "http://127.0.0.1:9" and action_env.server_url == "https://github.com"
    assert action_env.run_url == "https://github.com/Codertocat/Hello-World/actions/runs/42"
    assert action_env.workspace == tmp_path / "sub" and action_env.overrides.runs == 50
    assert action_env.overrides.fail_on == ("slower", "inconclusive") and action_env.comment is False
    assert action_env.check_name == "perf" and action_env.config_path is None  # empty input: unset
    assert action_env.results_dir == tmp_path / "t" / "benchbot-results"
    assert action_env.throttle
    assert action_env.shards is None and action_env.shard is None
    sharded = ActionEnv.from_env({**ENV, "BENCHBOT_MODE": "measure", "BENCHBOT_SHARD": " 2/3 ",
                                 "BENCHBOT_SHARDS": "3"})
    assert (sharded.shard, sharded.shards) == (Shard(index=2, count=3), 3)


@pytest.mark.parametrize("change, message", [
    ({"GITHUB_EVENT_NAME": ""}, "GITHUB_EVENT_NAME is not set"),
    ({"GITHUB_TOKEN": ""}, "GITHUB_TOKEN is not set"),
    ({"BENCHBOT_RUNS": "many"}, "BENCHBOT_RUNS (input runs): must be a whole number"),
    ({"BENCHBOT_FAIL_ON": "slow"}, "unknown outcome 'slow'"),
    ({"BENCHBOT_COMMENT": "maybe"}, "must be on or off"),
    ({"BENCHBOT_SHARD": "3/2"}, "BENCHBOT_SHARD (input shard): the shard K/2 must have K from 1 to 2"),
    ({"BENCHBOT_SHARD": "first"}, "BENCHBOT_SHARD (input shard): must be K/N"),
    ({"BENCHBOT_SHARDS": "0", "BENCHBOT_MODE": "gate"}, "BENCHBOT_SHARDS (input shards): must be a whole number from 1 to 64"),
    ({"BENCHBOT_SHARDS": "2"}, "BENCHBOT_SHARDS (input shards): 2 shards need the three-job workflow"),
])
def test_bad_settings_name_the_variable(change: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError) as exc:
        ActionEnv.from_env({**ENV, **change})
    assert message in str(exc.value)


def test_load_event_reads_the_file(tmp_path: Path) -> None:
    event = load_event(ActionEnv.from_env(ENV))
    assert event.number == 2
    bad = tmp_path / "event.json"
    bad.write_text("{not json")
    with pytest.raises(UsageError, match="not JSON"):
        load_event(ActionEnv.from_env({**ENV, "GITHUB_EVENT_PATH": str(bad)}))
    with pytest.raises(UsageError, match="cannot read"):
        load_event(ActionEnv.from_env({**ENV, "GITHUB_EVENT_PATH": str(tmp_path / "missing")}))
