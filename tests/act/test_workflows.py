"""The shipped workflows run as GitHub runs them: bench.yml, and what docs/github.md has a
user make of it (``tests/workflows.py``), with the real action.yml, every job on this
machine through `act`, against the fake GitHub.

Each scenario asserts what a maintainer would see (the sticky comment, the check) and
how each job ended, and that no process of any job found the token or the runner's
credential (``World.assert_no_leak``: the build and every run hunt for both).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.act.conftest import MakeWorld
from tests.act.harness import CONFIG, OLDER_BENCHBOT, broken_python, older_benchbot
from tests.act.world import Delivery, World

FORK_LABEL = "run-benchmark"


def assert_measured(world: World, delivery: Delivery, *, shards: int) -> str:
    """Every job succeeded, the planted slowdown is reported and fails the check; returns
    the sticky comment's body."""
    assert delivery.results("bench/gate") == ["success"], delivery.errors()
    assert delivery.results("bench/measure") == ["success"] * shards, delivery.errors()
    assert delivery.results("bench/publish") == ["success"], delivery.errors()
    (comment,) = world.sticky()
    body = str(comment["body"])
    assert "slower" in body and "nap" in body and "snooze" in body, body
    assert "benchbot: measuring" not in body and "could not run" not in body, body
    (check,) = world.checks()
    assert (check["status"], check["conclusion"]) == ("completed", "failure"), check
    assert check["head_sha"] == world.repo.head_sha
    world.assert_no_leak(delivery)
    return body


def results_documents(delivery: Delivery) -> list[dict[str, Any]]:
    """The results files the measure jobs uploaded."""
    docs = []
    for run in delivery.runs.values():
        if run.artifacts and run.artifacts.exists():
            docs += [json.loads(p.read_text()) for p in run.artifacts.rglob("results.json")]
    return docs


def test_pull_request_opened_measures_both_shards_in_the_runner_layout(
        make_world: MakeWorld) -> None:
    # bench.yml: gate, two measure jobs (the matrix from the gate's output), publish;
    # RUNNER_TEMP (where action.yml installs benchbot) under <runner root>/_work.
    world = make_world(workflow="bench")
    delivery = world.deliver("pull_request", world.pull_request("opened"))
    assert_measured(world, delivery, shards=2)


def test_bench_runs_by_a_maintainer_with_the_work_folder_outside_the_runner_root(
        make_world: MakeWorld) -> None:
    world = make_world(workflow="readme", work_inside=False)
    delivery = world.deliver("issue_comment", world.comment("/bench runs=12", "maria"))
    assert_measured(world, delivery, shards=1)
    (doc,) = results_documents(delivery)
    assert doc["settings"]["runs"] == 12, doc["settings"]


def test_bench_by_a_commenter_without_write_access_never_reaches_the_runner(
        make_world: MakeWorld) -> None:
    world = make_world(workflow="bench")
    delivery = world.deliver("issue_comment", world.comment("/bench", "bob"))
    assert delivery.results("bench/gate") == ["success"], delivery.errors()
    assert delivery.results("bench/measure") in ([], ["skipped"])
    assert delivery.results("bench/publish") in ([], ["skipped"])
    assert world.checks() == [] and world.sticky() == []
    (reply,) = world.replies()
    assert "bob" in reply and "write" in reply, reply
    world.assert_no_leak(delivery)


def test_fork_bench_with_the_full_sha_is_measured(make_world: MakeWorld) -> None:
    world = make_world(workflow="readme", fork=True)
    body = f"/bench sha={world.repo.head_sha}"
    delivery = world.deliver("issue_comment", world.comment(body, "alice"))
    assert_measured(world, delivery, shards=1)


def test_fork_bench_with_a_short_sha_is_refused_before_the_runner(make_world: MakeWorld) -> None:
    # 28 bits can be collided by a prepared commit: on forks only all 40 digits pin.
    world = make_world(workflow="readme", fork=True)
    body = f"/bench sha={world.repo.head_sha[:7]}"
    delivery = world.deliver("issue_comment", world.comment(body, "alice"))
    assert delivery.results("bench/measure") in ([], ["skipped"]), delivery.errors()
    assert world.checks() == [] and world.sticky() == []
    assert any("40" in reply for reply in world.replies()), world.replies()
    world.assert_no_leak(delivery)


def test_fork_label_is_measured_once_with_githubs_token_rules(make_world: MakeWorld) -> None:
    # GitHub gives the fork's pull_request run a read-only token; where the workflow
    # also listens to pull_request_target, that run (write token) gets the event too.
    config = CONFIG + f"github:\n  fork_label: {FORK_LABEL}\n"
    world = make_world(workflow="readme", fork=True, files={"benchbot.yml": config})
    world.fake.add_review(2, "alice", "APPROVED", world.repo.head_sha)  # she read that head
    payload = world.pull_request("labeled", labels=(FORK_LABEL,), label=FORK_LABEL, sender="alice")
    delivery = world.deliver("pull_request", payload)
    assert delivery.results("bench/measure") == ["success"], delivery.errors()
    assert delivery.results("bench/publish") == ["success"], delivery.errors()
    (check,) = world.checks()
    assert (check["status"], check["conclusion"]) == ("completed", "failure"), check
    (comment,) = world.sticky()
    assert "slower" in comment["body"]
    refused = [r for r in world.fake.requests if r.status == 403]
    assert refused == [], refused  # nothing tried to write with the read-only token
    world.assert_no_leak(delivery)


def test_a_fork_against_an_older_branch_runs_nothing(make_world: MakeWorld,
                                                    act_tools: dict[str, Path]) -> None:
    # Issue 38: a fork chooses its base branch. `v1` holds an older benchbot, from
    # before `github.fork_bases` (its gate approves a fork against any base), and a
    # config that says `forks: true`. The jobs used to check out the base revision and
    # run its action: that older gate approved, with the write token, and the fork's
    # code was measured. Now the gate does not start for a base other than the default
    # branch: no job runs, no code of any benchbot, no token used. (A /bench comment runs
    # main's workflow and action, before as now: its gate refuses the base.)
    config = CONFIG + "github:\n  forks: true\n"
    old = older_benchbot(act_tools["snapshot"]) | {"kernels/benchbot.yml": config}
    world = make_world(workflow="bench", fork=True, branches={"v1": old}, base_branch="v1")
    delivery = world.deliver("pull_request", world.pull_request("opened"))
    assert set(delivery.runs) == {"pull_request", "pull_request_target"}
    for job in ("bench/gate", "bench/measure", "bench/publish", "bench/history"):
        assert set(delivery.results(job)) <= {"skipped"}, (job, delivery.errors())
    assert OLDER_BENCHBOT not in delivery.log, delivery.errors()
    assert world.checks() == [] and world.fake.comments_on(2) == []
    used = [r.path for r in world.fake.requests if world.token in str(r.headers)]
    assert used == [] and world.token not in world.git.tokens, (used, world.git.tokens)
    assert not world.leaks.exists()
    assert all(not run.artifacts.exists() or not any(run.artifacts.iterdir())
               for run in delivery.runs.values() if run.artifacts is not None)
    # A maintainer's `/bench sha=<head>` there: a comment runs main's workflow and action
    # (a comment names no base for the workflow's if:), whose gate refuses the base.
    comment = world.deliver("issue_comment", world.comment(f"/bench sha={world.repo.head_sha}",
                                                           "alice"))
    assert comment.results("bench/gate") == ["success"], comment.errors()
    assert set(comment.results("bench/measure")) <= {"skipped"}, comment.errors()
    assert OLDER_BENCHBOT not in comment.log
    (reply,) = world.replies()
    assert "`v1`" in reply and "fork_bases" in reply, reply
    assert world.checks() == [] and world.sticky() == []
    world.assert_no_leak(comment)


def test_a_fork_s_run_takes_the_action_from_the_default_branch_and_the_config_from_its_base(
        make_world: MakeWorld, act_tools: dict[str, Path]) -> None:
    # Issue 38: the pull request's base commit is an older commit of main (a pull
    # request keeps the base it was opened on), holding an older benchbot; main has
    # moved on to today's. Every job runs main's action (the workflow's own commit),
    # which reads the config (`forks: true`) at the base commit and measures the fork.
    config = CONFIG + "github:\n  forks: true\n"
    older = older_benchbot(act_tools["snapshot"])
    today = {name: (act_tools["snapshot"] / name).read_text() for name in older}
    world = make_world(workflow="bench", fork=True, files=older | {"kernels/benchbot.yml": config},
                       main_after=today)
    assert world.repo.main_sha != world.repo.base_sha
    delivery = world.deliver("pull_request", world.pull_request("opened"))
    assert_measured(world, delivery, shards=2)
    assert OLDER_BENCHBOT not in delivery.log
    assert "OLDER-BENCHBOT" not in str(world.fake.comments)


def test_two_shards_one_failing_still_completes_the_check(make_world: MakeWorld) -> None:
    world = make_world(workflow="bench")
    delivery = world.deliver("pull_request", world.pull_request("opened"),
                             BENCHBOT_ACT_FAIL_UPLOAD="*-shard-2-of-2")
    assert delivery.results("bench/gate") == ["success"], delivery.errors()
    assert sorted(delivery.results("bench/measure")) == ["failure", "success"]
    assert delivery.results("bench/publish") == ["success"], delivery.errors()
    (check,) = world.checks()
    assert check["status"] == "completed" and check["conclusion"] in ("failure", "neutral"), check
    (comment,) = world.sticky()
    assert "Shard 2 of 2 did not report" in comment["body"], comment["body"]
    world.assert_no_leak(delivery)


def test_publish_install_failing_still_completes_the_check(make_world: MakeWorld) -> None:
    world = make_world(workflow="readme")
    delivery = world.deliver("pull_request", world.pull_request("opened"),
                             path_first=broken_python(world.base / "faults"),
                             BENCHBOT_ACT_BREAK_INSTALL="publish")
    assert delivery.results("bench/gate") == ["success"], delivery.errors()
    assert delivery.results("bench/measure") == ["success"], delivery.errors()
    assert "a fault the test injected" in delivery.log
    (check,) = world.checks()
    assert check["status"] == "completed" and check["conclusion"] is not None, check
    (comment,) = world.sticky()
    assert "benchbot: measuring" not in comment["body"], comment["body"]
    world.assert_no_leak(delivery)


def test_a_push_to_main_is_recorded_on_the_history_branch_and_opens_an_issue(
        make_world: MakeWorld) -> None:
    # bench.yml on a push: gate, measure (one machine), publish-history; the pull
    # requests' publish does not run.
    world = make_world(workflow="bench")
    delivery = world.deliver("push", world.push())
    assert delivery.results("bench/gate") == ["success"], delivery.errors()
    assert delivery.results("bench/measure") == ["success"], delivery.errors()
    assert delivery.results("bench/history") == ["success"], delivery.errors()
    assert delivery.results("bench/publish") in ([], ["skipped"])
    files = world.fake.branch_files("benchbot-history")
    head = world.repo.head_sha
    assert {f"commits/{head}.json", "index.html"} <= set(files), sorted(files)
    record = json.loads(files[f"commits/{head}.json"])
    assert record["against"]["sha"] == world.repo.base_sha
    assert {w["name"]: w["outcome"] for w in record["workloads"]} == {"nap": "slower",
                                                                      "snooze": "slower"}
    assert f'href="commits/{head}.json"' in files["index.html"].decode()
    issues = [i for i in world.fake.issues.values() if "benchbot" in i.get("labels", [])]
    assert len(issues) == 1 and "`nap` slower" in issues[0]["body"], issues
    assert world.checks() == [] and world.sticky() == []
    world.assert_no_leak(delivery)
