"""The fake GitHub server (tests/fakegithub) driven by the real PyGithub client.

These tests pin down both the fake's behaviour and the PyGithub calls benchbot's
GitHub layer can rely on; every test ends by asserting that no request or response
broke GitHub's OpenAPI description (``validation_errors == []``).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import requests

github = pytest.importorskip("github", reason="PyGithub is a test dependency")
pytest.importorskip("openapi_core", reason="openapi-core is a test dependency")

from tests.fakegithub import FakeGitHub, load_payload  # noqa: E402
from tests.github.conftest import PULL_BASE_SHA as BASE_SHA  # noqa: E402
from tests.github.conftest import PULL_HEAD_SHA as SHA  # noqa: E402


@pytest.fixture
def gh(fake_with_pull: FakeGitHub) -> FakeGitHub:
    return fake_with_pull


def client(fake: FakeGitHub, *, token: str | None = None, per_page: int = 30, lazy: bool = True,
           retry: Any = "default") -> Any:
    """A PyGithub client configured the way benchbot's adapter should be (fast for tests)."""
    if retry == "default":
        retry = github.GithubRetry(total=3, backoff_factor=0.01, secondary_rate_wait=0.1,
                                   max_rate_limit_wait=10)
    return github.Github(
        auth=github.Auth.Token(token or fake.token),
        base_url=fake.url,
        per_page=per_page,
        retry=retry,
        seconds_between_requests=0,
        seconds_between_writes=0,
        timeout=5,
        lazy=lazy,
    )


def raw_get(url: str, token: str | None) -> tuple[int, dict[str, str], Any]:
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, dict(resp.headers.items()), json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers.items()), json.loads(e.read() or b"null")


# --------------------------------------------------------------------------- reads


def test_repo_pull_and_issue(gh: FakeGitHub) -> None:
    g = client(gh, lazy=False)  # not lazy: get_repo() fetches the full repository
    repo = g.get_repo(gh.full_name)
    assert repo.full_name == "octo-org/octo-repo" and repo.default_branch == "main"
    pr = repo.get_pull(7)
    assert (pr.head.sha, pr.base.sha, pr.head.ref, pr.base.ref) == (SHA, BASE_SHA, "speedup", "main")
    assert pr.head.repo.full_name == gh.full_name and pr.user.login == "alice"
    issue = repo.get_issue(7)
    assert issue.pull_request is not None and issue.pull_request.html_url.endswith("/pull/7")
    gh.add_issue(8, title="plain")
    assert repo.get_issue(8).pull_request is None
    with pytest.raises(github.UnknownObjectException):
        repo.get_pull(999)
    with pytest.raises(github.UnknownObjectException):
        g.get_repo("octo-org/other")


def test_fork_pull_request(gh: FakeGitHub) -> None:
    gh.add_pull(9, head_sha=SHA, head_repo_full_name="mallory/octo-repo", user_login="mallory")
    pr = client(gh).get_repo(gh.full_name).get_pull(9)
    assert pr.head.repo.full_name == "mallory/octo-repo" and pr.head.repo.fork is True
    assert pr.base.repo.full_name == gh.full_name


def test_every_response_carries_github_headers(gh: FakeGitHub) -> None:
    status, headers, body = raw_get(f"{gh.url}/repos/{gh.full_name}/pulls/7", gh.token)
    assert status == 200 and body["number"] == 7
    for h in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Used",
              "X-GitHub-Request-Id"):
        assert h in headers
    # every API URL in the answer points at the fake itself
    assert body["url"].startswith(gh.url) and body["head"]["repo"]["url"].startswith(gh.url)


# --------------------------------------------------------------------------- auth


def test_bad_or_missing_token_gets_401(gh: FakeGitHub) -> None:
    with pytest.raises(github.BadCredentialsException) as exc:
        _ = client(gh, token="ghs_wrong").get_repo(gh.full_name).get_pull(7).head
    assert exc.value.status == 401 and exc.value.data["message"] == "Bad credentials"
    status, _, body = raw_get(f"{gh.url}/repos/{gh.full_name}", None)
    assert status == 401 and body["message"] == "Requires authentication"
    status, _, _ = raw_get(f"{gh.url}/repos/{gh.full_name}", gh.token)
    assert status == 200


def test_get_user_is_forbidden_for_the_actions_token(gh: FakeGitHub) -> None:
    g = client(gh)
    with pytest.raises(github.GithubException) as exc:
        _ = g.get_user().login
    assert exc.value.status == 403
    assert exc.value.data["message"] == "Resource not accessible by integration"
    gh.user_endpoint_forbidden = False
    assert g.get_user().login == "github-actions[bot]"
    gh.app_endpoint_forbidden = False
    status, _, body = raw_get(f"{gh.url}/app", gh.token)
    assert status == 200 and body["slug"] == "github-actions"


# --------------------------------------------------------------------------- comments


def test_comments_across_three_pages(gh: FakeGitHub) -> None:
    gh.add_comment(7, "/benchbot run", "alice")
    gh.add_comment(7, "looks slow", "bob")
    g = client(gh, per_page=3)
    issue = g.get_repo(gh.full_name).get_issue(7)
    created = [issue.create_comment(f"bot comment {i}") for i in range(5)]
    assert all(c.user.login == "github-actions[bot]" and c.user.type == "Bot" for c in created)
    assert gh.comments[created[0].id]["user"] == {"login": "github-actions[bot]", "type": "Bot",
                                                   "id": 41898282}

    listed = list(issue.get_comments())
    assert [c.body for c in listed] == ["/benchbot run", "looks slow"] + [f"bot comment {i}" for i in range(5)]
    assert [c.user.type for c in listed[:2]] == ["User", "User"]
    pages = gh.requests_matching("GET", r"/issues/7/comments$")
    assert len(pages) == 3 and [r.query.get("page", ["1"])[0] for r in pages] == ["1", "2", "3"]
    assert all(r.query["per_page"] == ["3"] for r in pages)

    # edit the sticky comment, then read it back by id
    created[2].edit("bot comment 2, edited")
    assert gh.comments[created[2].id]["body"] == "bot comment 2, edited"
    again = issue.get_comment(created[2].id)
    assert again.body == "bot comment 2, edited" and again.updated_at >= again.created_at


def test_link_header(gh: FakeGitHub) -> None:
    for i in range(7):
        gh.add_comment(7, f"c{i}", "alice")
    path = f"/repos/{gh.full_name}/issues/7/comments"
    _, headers, body = raw_get(f"{gh.url}{path}?per_page=3", gh.token)
    assert [c["body"] for c in body] == ["c0", "c1", "c2"]
    link = headers["Link"]
    base = f"{gh.url}/repositories/{gh.repo_id}/issues/7/comments"
    assert link == f'<{base}?per_page=3&page=2>; rel="next", <{base}?per_page=3&page=3>; rel="last"'
    _, headers, body = raw_get(f"{base}?per_page=3&page=2", gh.token)  # GitHub's own link form works
    assert [c["body"] for c in body] == ["c3", "c4", "c5"]
    assert headers["Link"] == (f'<{base}?per_page=3&page=1>; rel="prev", <{base}?per_page=3&page=3>; '
                               f'rel="next", <{base}?per_page=3&page=3>; rel="last", '
                               f'<{base}?per_page=3&page=1>; rel="first"')
    _, headers, body = raw_get(f"{gh.url}{path}", gh.token)
    assert len(body) == 7 and "Link" not in headers


def test_comment_validation(gh: FakeGitHub) -> None:
    issue = client(gh, retry=None).get_repo(gh.full_name).get_issue(7)
    with pytest.raises(github.GithubException) as exc:
        issue.create_comment("x" * 65537)
    assert exc.value.status == 422 and "too long" in exc.value.data["errors"][0]["message"]
    with pytest.raises(github.UnknownObjectException):
        client(gh, retry=None).get_repo(gh.full_name).get_issue(404).create_comment("hi")
    assert gh.comments == {}


def test_reaction_with_preview_media_type(gh: FakeGitHub) -> None:
    c = gh.add_comment(7, "/benchbot run", "alice")
    comment = client(gh).get_repo(gh.full_name).get_issue(7).get_comment(c["id"])
    r = comment.create_reaction("eyes")
    assert r.content == "eyes" and r.user.login == "github-actions[bot]"
    assert comment.create_reaction("eyes").id == r.id  # second time: 200, same reaction
    assert [(x["comment_id"], x["content"], x["user"]["login"]) for x in gh.reactions] == [
        (c["id"], "eyes", "github-actions[bot]")]
    posts = gh.requests_matching("POST", r"/reactions$")
    assert [p.status for p in posts] == [201, 200]
    assert posts[0].header("Accept") == "application/vnd.github.squirrel-girl-preview"


# --------------------------------------------------------------------------- permissions


def test_collaborator_permission(gh: FakeGitHub) -> None:
    gh.permissions.update({"alice": "admin", "carol": "maintain", "dave": "triage", "eve": "none"})
    repo = client(gh).get_repo(gh.full_name)
    assert repo.get_collaborator_permission("alice") == "admin"
    # the legacy "permission" field folds maintain into write and triage into read
    assert repo.get_collaborator_permission("carol") == "write"
    assert repo.get_collaborator_role_name("carol") == "maintain"
    assert repo.get_collaborator_permission("dave") == "read"
    assert repo.get_collaborator_permission("eve") == "none"
    assert repo.get_collaborator_permission("stranger") == "read"  # public repo default
    assert repo.get_collaborator_permission("renovate[bot]") == "read"
    assert gh.requests_matching("GET", r"/collaborators/renovate\[bot\]/permission$")
    gh.default_permission = None
    with pytest.raises(github.UnknownObjectException):
        repo.get_collaborator_permission("stranger")


# --------------------------------------------------------------------------- checks & statuses


def test_check_run_create_and_edit(gh: FakeGitHub) -> None:
    repo = client(gh).get_repo(gh.full_name)
    run = repo.create_check_run(name="benchbot", head_sha=SHA, status="in_progress",
                                details_url="https://example.invalid/run/1",
                                output={"title": "Benchmarking", "summary": "running"})
    assert run.status == "in_progress" and run.conclusion is None and run.started_at is not None
    assert [p.number for p in run.pull_requests] == [7]
    run.edit(output={"summary": "halfway"})
    stored = gh.check_runs[run.id]
    assert stored["output"] == {"title": "Benchmarking", "summary": "halfway", "text": None}
    run.edit(conclusion="neutral", output={"title": "No verdict", "summary": "noisy", "text": "details"})
    assert run.status == "completed" and run.conclusion == "neutral" and run.completed_at is not None
    fetched = repo.get_check_run(run.id)
    assert (fetched.name, fetched.conclusion, fetched.output.title) == ("benchbot", "neutral", "No verdict")
    assert stored["details_url"] == "https://example.invalid/run/1" and stored["head_sha"] == SHA
    done = repo.create_check_run(name="other", head_sha=SHA, conclusion="success")
    assert done.status == "completed"


def test_check_run_invalid_input_gets_422(gh: FakeGitHub) -> None:
    repo = client(gh, retry=None).get_repo(gh.full_name)
    # status and conclusion that contradict each other: GitHub's rule, not the schema's
    with pytest.raises(github.GithubException) as exc:
        repo.create_check_run(name="b", head_sha=SHA, status="in_progress", conclusion="success")
    assert exc.value.status == 422
    with pytest.raises(github.GithubException) as exc:
        repo.create_check_run(name="b", head_sha=SHA, status="completed")
    assert exc.value.status == 422 and "conclusion" in exc.value.data["message"]
    with pytest.raises(github.GithubException) as exc:
        repo.create_check_run(name="b", head_sha="not-a-sha")
    assert exc.value.status == 422
    assert gh.validation_errors == []
    # a conclusion outside the enum breaks the schema: 422, and the fake reports the bad request
    with pytest.raises(github.GithubException) as exc:
        repo.create_check_run(name="b", head_sha=SHA, conclusion="great")
    assert exc.value.status == 422
    errors = gh.take_validation_errors()
    assert len(errors) == 1 and errors[0].startswith("request POST") and "great" in errors[0]
    assert gh.check_runs == {}


def test_check_run_output_over_65535_bytes_gets_422(gh: FakeGitHub) -> None:
    repo = client(gh, retry=None).get_repo(gh.full_name)
    run = repo.create_check_run(name="b", head_sha=SHA, status="in_progress",
                                output={"title": "t", "summary": "x" * 65_535})
    # 65,535 characters, but 131,070 bytes of UTF-8: refused, and nothing changes
    with pytest.raises(github.GithubException) as exc:
        run.edit(conclusion="success", output={"title": "t", "summary": "×" * 65_535})
    assert exc.value.status == 422 and exc.value.data["errors"] == [
        {"resource": "CheckRun", "code": "custom", "field": "summary",
         "message": "summary exceeds a maximum bytesize of 65535"}]
    assert (gh.check_runs[run.id]["status"], gh.check_runs[run.id]["conclusion"]) == (
        "in_progress", None)
    with pytest.raises(github.GithubException) as exc:  # too many characters: the schema's rule
        run.edit(output={"title": "t", "summary": "s", "text": "x" * 65_536})
    assert exc.value.status == 422 and exc.value.data["message"].startswith("Invalid request.")
    (error,) = gh.take_validation_errors()
    assert error.startswith("request PATCH") and "too long" in error
    with pytest.raises(github.GithubException) as exc:
        repo.create_check_run(name="b", head_sha=SHA, output={"title": "t", "summary": "µ" * 40_000})
    assert exc.value.status == 422 and len(gh.check_runs) == 1
    run.edit(conclusion="success", output={"title": "t", "summary": "×" * 32_767 + "x"})  # 65,535 bytes
    assert gh.check_runs[run.id]["conclusion"] == "success"
    assert gh.validation_errors == []


def test_checks_forbidden_then_commit_status(gh: FakeGitHub) -> None:
    gh.checks_forbidden = True
    repo = client(gh).get_repo(gh.full_name)
    with pytest.raises(github.GithubException) as exc:
        repo.create_check_run(name="benchbot", head_sha=SHA, status="in_progress")
    assert exc.value.status == 403
    assert exc.value.data["message"] == "Resource not accessible by integration"
    assert exc.value.headers.get("x-accepted-github-permissions") == "checks=write"
    assert len(gh.requests_matching("POST", r"/check-runs$")) == 1  # a plain 403 is not retried

    status = repo.get_commit(SHA).create_status("pending", target_url="https://example.invalid/1",
                                                description="benchmarking", context="benchbot")
    assert (status.state, status.context) == ("pending", "benchbot")
    assert gh.statuses[0]["sha"] == SHA and gh.statuses[0]["creator"]["login"] == "github-actions[bot]"
    # with Github(lazy=True) get_commit() fetches nothing: only the POST was sent
    assert [r.method for r in gh.requests] == ["POST", "POST"]


def test_non_lazy_get_commit_fetches_an_endpoint_the_fake_lacks(gh: FakeGitHub) -> None:
    with pytest.raises(github.UnknownObjectException):
        client(gh, lazy=False, retry=None).get_repo(gh.full_name).get_commit(SHA)
    errors = gh.take_validation_errors()
    assert len(errors) == 1 and "/commits/" in errors[0]


# --------------------------------------------------------------------------- faults & retry


def test_502_then_success(gh: FakeGitHub) -> None:
    gh.fail_next("GET", r"/pulls/7$", 502)
    assert client(gh).get_repo(gh.full_name).get_pull(7).head.sha == SHA
    attempts = gh.requests_matching("GET", r"/pulls/7$")
    assert [(r.status, r.injected) for r in attempts] == [(502, True), (200, False)]


def test_patch_is_not_retried_by_default(gh: FakeGitHub) -> None:
    c = gh.add_comment(7, "old", "github-actions[bot]")
    issue = client(gh).get_repo(gh.full_name).get_issue(7)
    gh.fail_next("PATCH", r"/issues/comments/\d+$", 502)
    with pytest.raises(github.GithubException) as exc:
        issue.get_comment(c["id"]).edit("new")
    assert exc.value.status == 502
    # allowed_methods must name PATCH for GithubRetry to retry it
    g = client(gh, retry=github.GithubRetry(total=3, backoff_factor=0.01,
                                            allowed_methods={"GET", "POST", "PATCH"}))
    gh.fail_next("PATCH", r"/issues/comments/\d+$", 502)
    g.get_repo(gh.full_name).get_issue(7).get_comment(c["id"]).edit("new")
    assert gh.comments[c["id"]]["body"] == "new"


def test_post_retried_after_a_lost_response_duplicates(gh: FakeGitHub) -> None:
    # the comment is created, but the client sees a 502 and (POST being retried) posts again
    gh.fail_next("POST", r"/issues/7/comments$", 502, apply=True)
    client(gh).get_repo(gh.full_name).get_issue(7).create_comment("report")
    assert [c["body"] for c in gh.comments_on(7)] == ["report", "report"]


def test_retries_exhausted(gh: FakeGitHub) -> None:
    # PyGithub does not wrap this: urllib3's MaxRetryError surfaces as requests' RetryError
    gh.fail_next("GET", r"/pulls/7$", 503, times=10)
    with pytest.raises(requests.exceptions.RetryError, match="too many 503 error responses"):
        _ = client(gh).get_repo(gh.full_name).get_pull(7).head
    assert len(gh.requests_matching("GET", r"/pulls/7$")) == 4  # 1 + total=3 retries


@pytest.mark.slow
def test_primary_rate_limit_403_is_waited_out(gh: FakeGitHub) -> None:
    gh.fail_rate_limited("POST", r"/issues/7/comments$", reset_in=1)
    t0 = time.monotonic()
    client(gh).get_repo(gh.full_name).get_issue(7).create_comment("after the reset")
    waited = time.monotonic() - t0
    assert waited >= 1.0  # GithubRetry sleeps until X-RateLimit-Reset (+1 s)
    first, second = gh.requests_matching("POST", r"/issues/7/comments$")
    assert (first.status, second.status) == (403, 201)
    assert len(gh.comments) == 1


def test_rate_limit_beyond_max_wait_raises(gh: FakeGitHub) -> None:
    gh.fail_rate_limited("GET", r"/pulls/7$", reset_in=120)
    with pytest.raises(github.RateLimitExceededException):
        _ = client(gh).get_repo(gh.full_name).get_pull(7).head


@pytest.mark.slow
def test_429_with_retry_after(gh: FakeGitHub) -> None:
    gh.fail_secondary_rate_limit("GET", r"/issues/7/comments$", retry_after=1)
    t0 = time.monotonic()
    assert list(client(gh).get_repo(gh.full_name).get_issue(7).get_comments()) == []
    assert time.monotonic() - t0 >= 1.0
    assert [r.status for r in gh.requests_matching("GET", r"/comments$")] == [429, 200]


def test_secondary_rate_limit_403(gh: FakeGitHub) -> None:
    # no Retry-After: GithubRetry waits secondary_rate_wait (default 60 s! here 0.1 s)
    gh.fail_next("POST", r"/issues/7/comments$", 403, body={
        "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
        "documentation_url": "https://docs.github.com/rest"})
    client(gh).get_repo(gh.full_name).get_issue(7).create_comment("x")
    assert len(gh.comments) == 1


def test_read_only_token_for_forks(gh: FakeGitHub) -> None:
    gh.read_only = True
    repo = client(gh).get_repo(gh.full_name)
    assert repo.get_pull(7).number == 7
    with pytest.raises(github.GithubException) as exc:
        repo.get_issue(7).create_comment("hi")
    assert exc.value.status == 403


# --------------------------------------------------------------------------- payload fixtures


@pytest.mark.parametrize("name", ["pull_request.opened", "pull_request.synchronize",
                                  "pull_request.reopened", "issue_comment.created",
                                  "issue_comment.created.pr", "issue_comment.edited"])
def test_payload_fixtures(name: str) -> None:
    p = load_payload(name)
    event, action = name.split(".")[:2]
    assert p["action"] == action and p["repository"]["full_name"] == "Codertocat/Hello-World"
    if event == "issue_comment":
        assert ("pull_request" in p["issue"]) == name.endswith(".pr")


def test_fake_seeded_from_payloads() -> None:
    with FakeGitHub(owner="Codertocat", repo="Hello-World", owner_type="User") as fake:
        ev = load_payload("pull_request.synchronize")
        fake.add_pull_from_event(ev)
        fake.add_pull_from_event(load_payload("issue_comment.created.pr"))
        repo = client(fake).get_repo("Codertocat/Hello-World")
        pr = repo.get_pull(ev["number"])
        assert pr.head.sha == ev["pull_request"]["head"]["sha"] == ev["after"]
        assert repo.get_issue(1).pull_request is not None
        assert fake.validation_errors == []


def test_openapi_extract_is_valid_and_complete() -> None:
    from openapi_spec_validator import validate

    from tests.fakegithub import EXTRACT_PATH

    spec = json.loads(EXTRACT_PATH.read_text(encoding="utf-8"))
    validate(spec)
    ops = {(m.upper(), p) for p, item in spec["paths"].items() for m in item if m in ("get", "post", "patch")}
    assert len(ops) == 27 and ("POST", "/repos/{owner}/{repo}/check-runs") in ops
    assert ("POST", "/repos/{owner}/{repo}/git/trees") in ops  # the history branch
    assert ("PATCH", "/repos/{owner}/{repo}/issues/{issue_number}") in ops  # and its issue
    assert ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews") in ops  # a fork's approval
    assert ("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs") in ops
    assert ("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission") in ops
    assert EXTRACT_PATH.stat().st_size < 1_500_000


# --------------------------------------------------------------------------- the history branch


def test_git_data_api_builds_a_branch_as_git_would(gh: FakeGitHub) -> None:
    import io
    import subprocess
    import tarfile
    import tempfile

    repo = client(gh).get_repo(gh.full_name)
    with pytest.raises(github.UnknownObjectException):
        repo.get_git_ref("heads/benchbot-history").object  # noqa: B018 - the GET is the point
    element = github.InputGitTreeElement
    tree = repo.create_git_tree([element("commits/a.json", "100644", "blob", content="{}\n"),
                                 element("index.html", "100644", "blob", content="<p>1</p>")])
    first = repo.create_git_commit("first", tree, [])
    repo.create_git_ref("refs/heads/benchbot-history", first.sha)
    # The same files committed by git itself have the same tree SHA.
    with tempfile.TemporaryDirectory() as tmp:
        run = lambda *a: subprocess.run(["git", *a], cwd=tmp, check=True, capture_output=True,  # noqa: E731
                                        text=True).stdout.strip()
        run("init", "-q")
        (Path(tmp) / "commits").mkdir()
        (Path(tmp) / "commits" / "a.json").write_text("{}\n")
        (Path(tmp) / "index.html").write_text("<p>1</p>")
        run("add", "-A")
        assert run("write-tree") == tree.sha
    ref = repo.get_git_ref("heads/benchbot-history")
    base = repo.get_git_commit(ref.object.sha)
    tree2 = repo.create_git_tree([element("commits/b.json", "100644", "blob", content="[]\n")],
                                 base_tree=base.tree)
    second = repo.create_git_commit("second", tree2, [base])
    ref.edit(second.sha, force=False)
    with pytest.raises(github.GithubException) as refused:  # not a fast-forward
        ref.edit(first.sha, force=False)
    assert refused.value.status == 422
    assert sorted(gh.branch_files("benchbot-history")) == ["commits/a.json", "commits/b.json", "index.html"]
    link = repo.get_archive_link("tarball", "benchbot-history")
    assert link.startswith(f"{gh.url}/_codeload/")
    data = requests.get(link, timeout=5).content
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        assert sorted(m.name.split("/", 1)[1] for m in tar.getmembers()) == [
            "commits/a.json", "commits/b.json", "index.html"]
    gh.take_validation_errors()  # the refused edit is a 422 GitHub documents; nothing else
    assert gh.validation_errors == []


def test_issues_with_a_label_are_created_listed_and_edited(gh: FakeGitHub) -> None:
    repo = client(gh).get_repo(gh.full_name)
    made = repo.create_issue("a step", body="the body", labels=["benchbot"])
    assert [label.name for label in made.labels] == ["benchbot"]
    found = [i.number for i in repo.get_issues(state="open", labels=["benchbot"])]
    assert found == [made.number]
    repo.get_issue(made.number).edit(title="two steps", body="another body")
    assert gh.issues[made.number]["body"] == "another body" and gh.validation_errors == []
