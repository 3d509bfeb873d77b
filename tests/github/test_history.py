"""A push to the default branch through `benchbot github` (gate, measure, publish) against the
fake GitHub: the push measured as one step (planted runs on a fake clock), recorded on the
history branch through the Git Data API with its page, one issue opened and then updated,
a push of several commits bisected; every other push left alone; a forged artifact and a
hostile commit subject handled as the security model says."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchbot.github import rescue, watch
from benchbot.history import historydoc
from benchbot.measure import engine
from benchbot.sandbox.spawn import RawRun, SpawnRequest
from tests.clock import FakeClock
from tests.conftest import git
from tests.fakegithub import FakeGitHub, load_payload
from tests.ghenv import SLOW, Env, Run

BRANCH = "benchbot-history"


class PlantedScript:
    """Each run reports the sleep of the nap.sh in its worktree (with 1% of seeded noise)
    and lets that time pass on ``clock``: the program each commit holds decides its time."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock, self.rng = clock, np.random.default_rng(5)

    def spawn(self, request: SpawnRequest) -> RawRun:
        script = (Path(request.cwd) / request.argv[0]).read_text()
        seconds = float(re.search(r"sleep ([0-9.]+)", script).group(1))  # type: ignore[union-attr]
        seconds *= float(self.rng.lognormal(0.0, 0.01))
        self.clock.advance(seconds)
        ns = int(seconds * 1e9)
        return RawRun(wall_ns=ns, cpu_ns=ns // 10, maxrss_kib=1024, returncode=0)


@pytest.fixture
def planted_steps(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """Every comparison of built checkouts (a push's step, a bisect's) measured by
    PlantedScript on a fake clock."""
    clock = FakeClock()
    spawner = PlantedScript(clock)
    real = engine.compare_built

    def compare_built(*args: Any, **kwargs: Any) -> Any:
        kwargs.update(spawner_factory=lambda _: spawner, clock=clock, deadline=clock() + 120)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "compare_built", compare_built)
    return clock


def push_event(env: Env, before: str, after: str, *, ref: str = "refs/heads/main") -> dict[str, Any]:
    """The push payload (tests/fakegithub/payloads/push.json) pointed at the workspace."""
    payload = load_payload("push")
    payload.update(ref=ref, before=before, after=after)
    payload["repository"]["default_branch"] = "main"
    payload["head_commit"]["id"] = after
    return payload


def _commit(env: Env, message: str, files: dict[str, str]) -> str:
    repo = env.ws.path
    for name, text in files.items():
        (repo / name).write_text(text)
        if text.startswith("#!"):
            (repo / name).chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def _split(env: Env, payload: dict[str, Any]) -> tuple[Run, Run | None, Run | None]:
    return env.run_split("push", payload)


def _issues(fake: FakeGitHub) -> list[dict[str, Any]]:
    return [i for i in fake.issues.values() if "benchbot" in i.get("labels", [])]


def test_a_push_is_recorded_on_the_history_branch_with_its_page_and_one_issue(
        env: Env, fake: FakeGitHub, planted_steps: FakeClock) -> None:
    before = env.ws.base_sha
    after = _commit(env, "make nap slower", {"nap.sh": SLOW})
    payload = push_event(env, before, after)
    gate = env.run("push", payload, BENCHBOT_MODE="gate")
    assert gate.returncode == 0 and gate.outputs["run"] == "true", gate.stderr
    job = watch.PushJob.from_json(gate.outputs["job"])
    assert (job.before, job.after, job.commits, job.branch) == (before, after, (after,), BRANCH)
    assert json.loads(gate.outputs["shards"]) == ["1/1"]
    measure = env.run("push", payload, BENCHBOT_MODE="measure", BENCHBOT_JOB=gate.outputs["job"],
                      _drop_token="1")
    assert measure.returncode == 0, measure.stderr
    assert measure.outputs["artifact"] == "benchbot-results-history"
    assert fake.requests == []  # neither the gate nor measuring asks GitHub anything
    publish = env.run("push", payload, BENCHBOT_MODE="publish", BENCHBOT_JOB=gate.outputs["job"],
                      BENCHBOT_MEASURE_RESULT="success", BENCHBOT_RESULTS_DIR=str(measure.results_dir))
    assert publish.returncode == 0, publish.stderr
    files = fake.branch_files(BRANCH)
    assert sorted(files) == [".nojekyll", f"commits/{after}.json", "index.html"]
    record = historydoc.parse(json.loads(files[f"commits/{after}.json"]), where="branch")
    assert record.against.sha == before and record.workloads[0].outcome == "slower"
    assert record.repository == "Codertocat/Hello-World"
    page = files["index.html"].decode()
    assert f'href="commits/{after}.json"' in page
    assert f'href="https://github.com/Codertocat/Hello-World/commit/{after}"' in page
    [issue] = _issues(fake)
    assert issue["body"].startswith(watch.MARKER) and issue["user"] == fake.bot_login
    assert "`nap` slower +" in issue["body"] and issue["title"].startswith("benchbot: 1 step and 0 drifts")
    assert publish.outputs["issue"] == str(issue["number"])


def test_a_second_push_adds_its_record_and_updates_the_same_issue(
        env: Env, fake: FakeGitHub, planted_steps: FakeClock) -> None:
    first = _commit(env, "make nap slower", {"nap.sh": SLOW})
    assert _split(env, push_event(env, env.ws.base_sha, first))[2].returncode == 0  # type: ignore[union-attr]
    second = _commit(env, "and slower again", {"nap.sh": SLOW.replace("0.02", "0.2")})
    _, _, publish = _split(env, push_event(env, first, second))
    assert publish is not None and publish.returncode == 0, publish.stderr
    files = fake.branch_files(BRANCH)
    assert {f"commits/{first}.json", f"commits/{second}.json"} <= set(files)
    [issue] = _issues(fake)
    assert issue["title"].startswith("benchbot: 2 steps")
    assert first[:7] in issue["body"] and second[:7] in issue["body"]
    refs = fake.requests_matching("PATCH", r"/git/refs/heads/benchbot-history$")
    assert len(refs) == 1 and refs[0].body["force"] is False


def test_a_push_of_several_commits_is_bisected_and_the_issue_names_the_commit(
        env: Env, fake: FakeGitHub, planted_steps: FakeClock) -> None:
    before = env.ws.base_sha
    readme = _commit(env, "docs only", {"README.md": "hello\n"})
    slow = _commit(env, "make nap slower", {"nap.sh": SLOW})
    after = _commit(env, "more docs", {"README.md": "hello again\n"})
    gate, measure, publish = _split(env, push_event(env, before, after))
    assert measure is not None and measure.returncode == 0, measure.stderr
    assert watch.PushJob.from_json(gate.outputs["job"]).commits == (readme, slow, after)
    assert (measure.results_dir / "bisect-1.json").is_file()
    assert publish is not None and publish.returncode == 0, publish.stderr
    record = historydoc.parse(json.loads(fake.branch_files(BRANCH)[f"commits/{after}.json"]),
                              where="branch")
    assert [c.sha for c in record.spans] == [readme, slow]
    [issue] = _issues(fake)
    assert "bisect of the push" in issue["body"]
    assert f"The change is at {slow[:7]}" in issue["body"]


@pytest.mark.parametrize("which", ["another branch", "a tag", "created", "deleted"])
def test_other_pushes_are_left_alone(env: Env, fake: FakeGitHub, which: str) -> None:
    before, after = env.ws.base_sha, env.ws.head_sha
    if which == "a tag":
        payload = load_payload("push.tag")
        payload["repository"]["default_branch"] = "main"
    else:
        payload = push_event(env, before, after, ref="refs/heads/feature" if which == "another branch"
                             else "refs/heads/main")
        if which == "created":
            payload["before"] = watch.ZERO
        elif which == "deleted":
            payload["after"] = watch.ZERO
    run = env.run_in_process("push", payload, BENCHBOT_MODE="gate")
    assert run.returncode == 0 and run.outputs == {"run": "false"}
    assert "ignored: " in run.stderr
    assert fake.requests == []


def test_a_forged_record_for_other_commits_is_not_written(
        env: Env, fake: FakeGitHub, planted_steps: FakeClock) -> None:
    after = _commit(env, "make nap slower", {"nap.sh": SLOW})
    payload = push_event(env, env.ws.base_sha, after)
    gate = env.run("push", payload, BENCHBOT_MODE="gate")
    measure = env.run("push", payload, BENCHBOT_MODE="measure", BENCHBOT_JOB=gate.outputs["job"],
                      _drop_token="1")
    assert measure.returncode == 0, measure.stderr
    path = measure.results_dir / watch.RECORD
    data = json.loads(path.read_text())
    data["commit"]["sha"] = "f" * 40
    path.write_text(json.dumps(data))
    publish = env.run("push", payload, BENCHBOT_MODE="publish", BENCHBOT_JOB=gate.outputs["job"],
                      BENCHBOT_RESULTS_DIR=str(measure.results_dir))
    assert publish.returncode == 1 and "not recording other commits" in publish.stderr
    assert "not recorded" in publish.summary
    assert fake.branch_files(BRANCH) == {} and _issues(fake) == []


def test_a_hostile_subject_is_text_on_the_page_and_in_the_issue(
        env: Env, fake: FakeGitHub, planted_steps: FakeClock) -> None:
    subject = "<img src=x onerror=alert(1)> @alice [x](https://evil.example) </details> `"
    after = _commit(env, subject, {"nap.sh": SLOW})
    _, _, publish = _split(env, push_event(env, env.ws.base_sha, after))
    assert publish is not None and publish.returncode == 0, publish.stderr
    page = fake.branch_files(BRANCH)["index.html"].decode()
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    [issue] = _issues(fake)
    body = issue["body"]
    assert re.search(r"(?<!\\)<(img|/details)", body) is None and "\\<img src=x" in body
    assert "@alice" not in body and "@\u2060alice" in body  # no mention
    assert "](https://evil" not in body  # no link


def test_the_single_job_form_records_a_push_too(env: Env, fake: FakeGitHub,
                                                planted_steps: FakeClock) -> None:
    after = _commit(env, "make nap slower", {"nap.sh": SLOW})
    run = env.run("push", push_event(env, env.ws.base_sha, after))
    assert run.returncode == 0, run.stderr
    assert f"commits/{after}.json" in fake.branch_files(BRANCH)


def test_a_push_s_publish_has_no_check_for_the_rescue_step_to_complete() -> None:
    job = watch.PushJob(ref="refs/heads/main", before="a" * 40, after="b" * 40,
                        commits=("b" * 40,), branch=BRANCH)
    said = rescue.rescue({"GITHUB_TOKEN": "t", "GITHUB_RUN_ID": "1", "BENCHBOT_JOB": job.to_json()})
    assert said == "a push's history opens no check: nothing to complete"


@pytest.mark.parametrize("name", ["../main", "a..b", "-x", "x.lock", ".hidden", "a b"])
def test_a_history_branch_benchbot_would_not_write_is_refused(env: Env, name: str) -> None:
    run = env.run_in_process("push", push_event(env, env.ws.base_sha, env.ws.head_sha),
                             BENCHBOT_MODE="gate", BENCHBOT_HISTORY_BRANCH=name)
    assert run.returncode == 2 and "BENCHBOT_HISTORY_BRANCH (input history-branch)" in run.stderr


# --- the line survives any record (issue 38, finding 6) --------------------------------------


def _measured_push(env: Env, before: str, after: str) -> tuple[dict[str, Any], Run, Run]:
    """The gate and the measure job of a push; its artifact, to forge, in measure.results_dir."""
    payload = push_event(env, before, after)
    gate = env.run("push", payload, BENCHBOT_MODE="gate")
    assert gate.returncode == 0 and gate.outputs["run"] == "true", gate.stderr
    measure = env.run("push", payload, BENCHBOT_MODE="measure", BENCHBOT_JOB=gate.outputs["job"],
                      _drop_token="1")
    assert measure.returncode == 0, measure.stderr
    return payload, gate, measure


def _publish(env: Env, payload: dict[str, Any], gate: Run, measure: Run) -> Run:
    return env.run("push", payload, BENCHBOT_MODE="publish", BENCHBOT_JOB=gate.outputs["job"],
                   BENCHBOT_MEASURE_RESULT="success", BENCHBOT_RESULTS_DIR=str(measure.results_dir))


def _forge(measure: Run, **changes: Any) -> None:
    path = measure.results_dir / watch.RECORD
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def test_a_push_recorded_as_failed_is_shown_failed_and_the_next_push_is_recorded(
        env: Env, fake: FakeGitHub, planted_steps: FakeClock) -> None:
    """The first push's step failed (a flaky build; or the measured code made it fail): the
    next push is measured against it, and its publish used to raise KeyError building the
    report (so did every later one: the history stopped)."""
    first = _commit(env, "flaky build", {"nap.sh": SLOW})
    payload, gate, measure = _measured_push(env, env.ws.base_sha, first)
    _forge(measure, state="failed", why="build of head failed (exit 2)", workloads=[],
           settings=None, environment=None)
    assert _publish(env, payload, gate, measure).returncode == 0
    second = _commit(env, "and slower again", {"nap.sh": SLOW.replace("0.02", "0.2")})
    _, _, publish = _split(env, push_event(env, first, second))
    assert publish is not None and publish.returncode == 0, publish.stderr
    files = fake.branch_files(BRANCH)
    assert {f"commits/{first}.json", f"commits/{second}.json"} <= set(files)
    page = files["index.html"].decode()
    assert "build of head failed (exit 2)" in page and first[:7] in page and second[:7] in page
    [issue] = _issues(fake)
    assert second[:7] in issue["body"]


def test_a_push_s_record_with_skipped_commits_is_not_written(
        env: Env, fake: FakeGitHub, planted_steps: FakeClock) -> None:
    after = _commit(env, "make nap slower", {"nap.sh": SLOW})
    payload, gate, measure = _measured_push(env, env.ws.base_sha, after)
    _forge(measure, skipped=[{"sha": "e" * 40, "subject": "hidden"}])
    publish = _publish(env, payload, gate, measure)
    assert publish.returncode == 1 and "lists 1 commit(s) as skipped" in publish.stderr
    assert "not recorded" in publish.summary
    assert fake.branch_files(BRANCH) == {} and _issues(fake) == []


def test_the_store_keeps_publish_s_time_not_the_artifact_s(
        env: Env, fake: FakeGitHub, planted_steps: FakeClock) -> None:
    """A record claiming to be written in 2099 would stay the line's tip for ever after a
    rewrite of the branch; publish stamps its own time on what it writes."""
    after = _commit(env, "make nap slower", {"nap.sh": SLOW})
    payload, gate, measure = _measured_push(env, env.ws.base_sha, after)
    _forge(measure, created="2099-01-01T00:00:00Z", tool={"name": "benchbot", "version": "99"})
    assert _publish(env, payload, gate, measure).returncode == 0
    record = historydoc.parse(json.loads(fake.branch_files(BRANCH)[f"commits/{after}.json"]),
                              where="branch")
    assert record.created < "2099" and record.tool.version != "99"
