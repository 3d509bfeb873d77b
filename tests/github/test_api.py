"""The PyGithub adapter (benchbot.github.api) over real HTTP against the fake GitHub server."""

from __future__ import annotations

import socket
import time

import pytest

from benchbot.core.errors import GithubError
from benchbot.github.api import GitHubAPI, make_retry
from tests.fakegithub import FakeGitHub
from tests.github.conftest import PULL_BASE_SHA as BASE
from tests.github.conftest import PULL_HEAD_SHA as HEAD

REPO = "octo-org/octo-repo"


@pytest.fixture
def fake(fake_with_pull: FakeGitHub) -> FakeGitHub:
    return fake_with_pull


def adapter(fake: FakeGitHub, **kw: object) -> GitHubAPI:
    options: dict[str, object] = {"token": fake.token, "api_url": fake.url, "repository": REPO,
                                  "throttle": False}
    options.update(kw)
    return GitHubAPI(**options)  # type: ignore[arg-type]


def test_reads(fake: FakeGitHub) -> None:
    fake.permissions.update({"alice": "admin", "maria": "maintain", "tom": "triage"})
    fake.add_pull(9, head_sha=HEAD, head_repo_full_name="mallory/octo-repo")
    api = adapter(fake)
    pull = api.pull(7)
    assert (pull.base.ref, pull.base.sha, pull.head.ref, pull.head.sha) == ("main", BASE, "speedup", HEAD)
    assert pull.head.repo == pull.base.repo == REPO and pull.state == "open"
    assert api.pull(9).head.repo == "mallory/octo-repo"
    assert [api.permission(u) for u in ("alice", "maria", "tom", "stranger")] == [
        "admin", "write", "read", "read"]
    assert api.authenticated_login() is None  # GET /user: 403 for the Actions token
    fake.user_endpoint_forbidden = False
    assert api.authenticated_login() == "github-actions[bot]"


def test_every_page_of_comments_is_read(fake: FakeGitHub) -> None:
    for i in range(230):
        fake.add_comment(7, f"comment {i}", "alice")
    comments = adapter(fake).comments(7)
    assert [c.body for c in comments] == [f"comment {i}" for i in range(230)]
    assert len(fake.requests_matching("GET", r"/issues/7/comments$")) == 3  # 100 a page


def test_writes(fake: FakeGitHub) -> None:
    api = adapter(fake)
    made = api.create_comment(7, "hello")
    assert (made.author, made.author_type) == ("github-actions[bot]", "Bot")
    api.edit_comment(7, made.id, "edited")
    assert fake.comments[made.id]["body"] == "edited"
    api.react(7, made.id, "eyes")
    (post,) = fake.requests_matching("POST", r"/reactions$")
    assert "squirrel-girl-preview" in (post.header("Accept") or "")
    run = api.create_check_run(name="benchbot", head_sha=HEAD, title="t", summary="s",
                               details_url="https://github.com/x/actions/runs/1")
    assert run.app_slug == "github-actions"  # how benchbot learns who it is
    api.update_check_run(run.id, title="t2", summary="phase")
    api.update_check_run(run.id, title="done", summary="report", conclusion="neutral")
    stored = fake.check_runs[run.id]
    assert (stored["status"], stored["conclusion"], stored["output"]["summary"]) == (
        "completed", "neutral", "report")
    fresh = adapter(fake)  # a check run it did not create in this process
    fresh.update_check_run(run.id, title="again", summary="again", conclusion="success")
    assert fake.check_runs[run.id]["conclusion"] == "success"
    api.create_status(HEAD, state="pending", context="benchbot", description="measuring")
    assert fake.statuses[0]["state"] == "pending"
    assert "benchbot" in (fake.requests[0].header("User-Agent") or "")


def test_errors_name_the_call(fake: FakeGitHub) -> None:
    fake.checks_forbidden = True
    api = adapter(fake)
    with pytest.raises(GithubError) as exc:
        api.create_check_run(name="benchbot", head_sha=HEAD, title="t", summary="s")
    assert str(exc.value) == (
        "POST /repos/octo-org/octo-repo/check-runs failed: 403 Resource not accessible by "
        "integration (the token needs checks=write)"
    )
    assert exc.value.status == 403
    with pytest.raises(GithubError, match=r"^GET /repos/octo-org/octo-repo/pulls/99 failed: 404 Not Found$"):
        api.pull(99)
    with pytest.raises(GithubError, match="too long") as exc:
        api.create_comment(7, "x" * 70_000)
    assert exc.value.status == 422
    with pytest.raises(GithubError, match="401 Bad credentials"):
        adapter(fake, token="ghs_wrong").comments(7)


def test_server_errors_are_retried(fake: FakeGitHub) -> None:
    api = adapter(fake)
    fake.fail_next("GET", r"/pulls/7$", 502)
    assert api.pull(7).head.sha == HEAD
    c = api.create_comment(7, "x")
    fake.fail_next("PATCH", r"/issues/comments/\d+$", 503)
    api.edit_comment(7, c.id, "y")
    assert fake.comments[c.id]["body"] == "y"
    run = api.create_check_run(name="benchbot", head_sha=HEAD, title="t", summary="s")
    fake.fail_next("PATCH", r"/check-runs/\d+$", 500)
    api.update_check_run(run.id, title="t", summary="done", conclusion="success")
    assert fake.check_runs[run.id]["conclusion"] == "success"


def test_retries_run_out_with_a_github_error(fake: FakeGitHub) -> None:
    fake.fail_next("GET", r"/pulls/7$", 503, times=10)
    api = adapter(fake, retry=make_retry(total=2, backoff_factor=0.01))
    with pytest.raises(GithubError, match="pulls/7 failed: 503") as exc:
        api.pull(7)
    assert exc.value.status == 503
    assert len(fake.requests_matching("GET", r"/pulls/7$")) == 3


def test_a_comment_creation_is_never_repeated(fake: FakeGitHub) -> None:
    fake.fail_next("POST", r"/issues/7/comments$", 502, apply=True)
    with pytest.raises(GithubError) as exc:
        adapter(fake).create_comment(7, "report")
    assert exc.value.status == 502
    assert [c["body"] for c in fake.comments_on(7)] == ["report"]  # stored once, not twice


def test_a_check_run_creation_is_never_repeated(fake: FakeGitHub) -> None:
    fake.fail_next("POST", r"/check-runs$", 502, apply=True)
    api = adapter(fake)
    with pytest.raises(GithubError) as exc:
        api.create_check_run(name="benchbot", head_sha=HEAD, title="t", summary="s",
                             external_id="benchbot-run-9")
    assert exc.value.status == 502
    assert len(fake.check_runs) == 1  # stored once, not twice
    (found,) = api.check_runs(HEAD, name="benchbot", status="in_progress")
    assert (found.external_id, found.status, found.name) == ("benchbot-run-9", "in_progress", "benchbot")


def test_check_runs_are_listed_on_every_page(fake: FakeGitHub) -> None:
    api = adapter(fake)
    made = [api.create_check_run(name="benchbot", head_sha=HEAD, title="t", summary="s",
                                 external_id=f"benchbot-run-{k}") for k in range(2)]
    made_ids = [run.id for run in made] + [  # and 118 more, seeded: 120 ask for two pages
        fake.add_check_run("benchbot", HEAD, status="in_progress", external_id=f"seeded-{k}")["id"]
        for k in range(118)]
    api.create_check_run(name="other", head_sha=HEAD, title="t", summary="s")
    api.update_check_run(made[0].id, title="t", summary="s", conclusion="success")
    runs = api.check_runs(HEAD, name="benchbot", status="in_progress")
    assert sorted(r.id for r in runs) == sorted(made_ids[1:])
    assert len(fake.requests_matching("GET", r"/commits/[0-9a-f]{40}/check-runs$")) == 2


@pytest.mark.slow
def test_rate_limits_are_waited_out(fake: FakeGitHub) -> None:
    api = adapter(fake)
    fake.fail_secondary_rate_limit("POST", r"/issues/7/comments$", retry_after=1)
    t0 = time.monotonic()
    made = api.create_comment(7, "after a secondary limit")
    assert time.monotonic() - t0 >= 0.9  # honours Retry-After
    fake.fail_rate_limited("PATCH", r"/issues/comments/\d+$", reset_in=0)
    api.edit_comment(7, made.id, "after a primary limit")
    fake.fail_secondary_rate_limit("GET", r"/pulls/7$", retry_after=1, status=403)
    api.pull(7)
    statuses = [r.status for r in fake.requests if r.method != "GET" or "pulls" in r.path]
    assert statuses == [429, 201, 403, 200, 403, 200]
    assert fake.comments[made.id]["body"] == "after a primary limit"


def test_a_rate_limit_too_far_away_fails_instead_of_waiting(fake: FakeGitHub) -> None:
    fake.fail_rate_limited("GET", r"/pulls/7$", reset_in=3600)
    api = adapter(fake, retry=make_retry(max_rate_limit_wait=5))
    with pytest.raises(GithubError, match="pulls/7 failed: 403 API rate limit exceeded"):
        api.pull(7)


def test_an_unreachable_server_is_a_github_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    api = GitHubAPI(token="t", api_url=f"http://127.0.0.1:{port}", repository=REPO, throttle=False,
                    retry=make_retry(total=1, backoff_factor=0.01))
    with pytest.raises(GithubError, match=r"^GET /repos/octo-org/octo-repo/pulls/1 failed: ") as exc:
        api.pull(1)
    assert exc.value.status is None
