"""The one module that talks to GitHub: a small adapter over PyGithub.

Every call goes through ``GitHubAPI._call``, which turns PyGithub's and requests'
exceptions into ``GithubError`` naming the call ("POST /repos/o/r/check-runs failed:
403 Resource not accessible by integration"). Objects come back as our own frozen
dataclasses, so the code above this module never sees PyGithub.

Retries (``make_retry``) are PyGithub's ``GithubRetry``, a urllib3 ``Retry`` that waits
out rate limits: a 403/429 with ``Retry-After`` sleeps that long, a primary rate limit
(403, ``X-RateLimit-Remaining: 0``) sleeps until ``X-RateLimit-Reset``, and 5xx answers
are retried with exponential backoff. On top of PyGithub's defaults: PATCH is retried
too (our edits set fixed values, so repeating one is harmless), 429 is retried even
without ``Retry-After``, and a rate-limit wait longer than ``MAX_RATE_LIMIT_WAIT_S`` fails
instead of holding the runner. Creating a comment or a check run is *not* repeated after
a 5xx or a lost answer: GitHub may have stored it, and a blind retry would duplicate the
sticky comment, or leave a second check run in progress forever; ``publish`` looks for
what was stored instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

import requests
from github import Auth, Consts, Github, GithubException, GithubRetry, InputGitTreeElement
from github.CheckRun import CheckRun
from github.Repository import Repository
from urllib3 import Retry
from urllib3.connectionpool import ConnectionPool
from urllib3.exceptions import MaxRetryError, ProtocolError, ReadTimeoutError, ResponseError
from urllib3.response import BaseHTTPResponse

from benchbot.core.errors import GithubError, UsageError
from benchbot.github.event import Side

if TYPE_CHECKING:
    from benchbot.github.env import ActionEnv

TIMEOUT_S = 30
RETRIES = 5
BACKOFF_FACTOR_S = 1.0  # urllib3: no wait before the first retry, then 2, 4, 8 s
SECONDARY_RATE_WAIT_S = 60.0  # GitHub: wait at least a minute after a secondary rate limit
MAX_RATE_LIMIT_WAIT_S = 600.0
# The creations whose answer may be lost after GitHub stored them: a comment, a check run.
_CREATE_ONCE = re.compile(r"(?:/issues/\d+/comments|/check-runs)/?(?:\?.*)?$")

T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class CommentInfo:
    """An issue or pull-request comment."""

    id: int
    body: str
    author: str
    author_type: str
    url: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ReviewInfo:
    """A pull request review: who wrote it, its state (APPROVED, COMMENTED, …) and the
    head commit it was written on (None when GitHub no longer has that commit)."""

    author: str
    state: str
    commit: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckRunInfo:
    """A check run; ``app_slug`` names the GitHub App that owns it, ``external_id`` the
    job that created it (benchbot sets one per workflow run)."""

    id: int
    app_slug: str | None
    url: str | None = None
    name: str = ""
    status: str = "in_progress"
    external_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class IssueInfo:
    """An issue (not a pull request)."""

    number: int
    title: str
    body: str
    author: str
    labels: tuple[str, ...] = ()
    url: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BranchHead:
    """A branch's tip: its commit and that commit's tree."""

    commit: str
    tree: str


ARCHIVE_LIMIT = 200 * 1024 * 1024  # bytes of a branch's archive read at most


@dataclass(frozen=True, slots=True, kw_only=True)
class PullInfo:
    """A pull request's two sides."""

    number: int
    state: str
    base: Side
    head: Side
    labels: tuple[str, ...] = ()


class _Retry(GithubRetry):
    """GithubRetry that never repeats a creation the server may have stored."""

    def increment(  # type: ignore[override]
        self,
        method: str | None = None,
        url: str | None = None,
        response: BaseHTTPResponse | None = None,
        error: Exception | None = None,
        _pool: ConnectionPool | None = None,
        _stacktrace: TracebackType | None = None,
    ) -> Retry:
        ambiguous = (response is not None and response.status >= 500) or isinstance(
            error, (ReadTimeoutError, ProtocolError)
        )
        if method == "POST" and url and _CREATE_ONCE.search(url) and ambiguous:
            reason = error or ResponseError(f"{response.status if response else '?'} on a create")
            raise MaxRetryError(_pool, url, reason)  # type: ignore[arg-type]
        return super().increment(method, url, response, error, _pool, _stacktrace)  # type: ignore[arg-type]


def make_retry(*, total: int = RETRIES, backoff_factor: float = BACKOFF_FACTOR_S,
               secondary_rate_wait: float = SECONDARY_RATE_WAIT_S,
               max_rate_limit_wait: float = MAX_RATE_LIMIT_WAIT_S) -> GithubRetry:
    """The retry policy of every call (see the module's docstring)."""
    return _Retry(
        total=total,
        backoff_factor=backoff_factor,
        secondary_rate_wait=secondary_rate_wait,
        max_rate_limit_wait=max_rate_limit_wait,
        status_forcelist=[*range(500, 600), 429],
        allowed_methods=Retry.DEFAULT_ALLOWED_METHODS | {"GET", "POST", "PATCH"},
        raise_on_status=False,  # the last answer reaches PyGithub, which raises with its status
    )


def connect(action_env: ActionEnv) -> GitHubAPI:
    """The adapter, configured from the Action's environment."""
    if action_env.token is None:
        raise UsageError("GITHUB_TOKEN is not set: the gate and publish steps need a token")
    return GitHubAPI(token=action_env.token, api_url=action_env.api_url,
                     repository=action_env.repository, throttle=action_env.throttle)


class GitHubAPI:
    """The GitHub REST calls benchbot makes, for one repository."""

    def __init__(self, *, token: str, api_url: str, repository: str, timeout: int = TIMEOUT_S,
                 retry: GithubRetry | None = None, throttle: bool = True) -> None:
        self.repository = repository
        self._base = f"/repos/{repository}"
        pauses: dict[str, Any] = {} if throttle else {
            "seconds_between_requests": 0, "seconds_between_writes": 0,
        }
        self._github = Github(
            auth=Auth.Token(token), base_url=api_url, timeout=timeout,
            retry=retry if retry is not None else make_retry(), lazy=True,
            per_page=100, user_agent=f"benchbot ({Consts.DEFAULT_USER_AGENT})", **pauses,
        )
        self._repo: Repository = self._github.get_repo(repository)
        self._check_runs: dict[int, CheckRun] = {}

    def close(self) -> None:
        """Release the HTTP connections."""
        self._github.close()

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        """Run one API call; failures become a GithubError that names it."""
        try:
            return fn()
        except GithubException as exc:
            raise GithubError(f"{what} failed: {_describe(exc)}", status=exc.status) from exc
        except requests.RequestException as exc:
            raise GithubError(f"{what} failed: {type(exc).__name__}: {exc}") from exc

    # --- reads --------------------------------------------------------------------

    def permission(self, login: str) -> str:
        """The user's permission on the repository: admin, write, read or none.

        This is the API's ``permission`` field, which folds maintain (and custom roles
        based on write) into write and triage into read.
        """
        what = f"GET {self._base}/collaborators/{quote(login, safe='')}/permission"
        return self._call(what, lambda: self._repo.get_collaborator_permission(login))

    def pull(self, number: int) -> PullInfo:
        """A pull request's base and head."""

        def get() -> PullInfo:
            pr = self._repo.get_pull(number)
            return PullInfo(
                number=pr.number, state=pr.state,
                base=Side(ref=pr.base.ref, sha=pr.base.sha,
                          repo=pr.base.repo.full_name if pr.base.repo else None),
                head=Side(ref=pr.head.ref, sha=pr.head.sha,
                          repo=pr.head.repo.full_name if pr.head.repo else None),
                labels=tuple(label.name for label in pr.labels),
            )

        return self._call(f"GET {self._base}/pulls/{number}", get)

    def reviews(self, number: int) -> list[ReviewInfo]:
        """Every review of a pull request, oldest first (all pages)."""

        def get() -> list[ReviewInfo]:
            return [ReviewInfo(author=r.user.login if r.user else "", state=r.state or "",
                               commit=r.commit_id)
                    for r in self._repo.get_pull(number).get_reviews()]

        return self._call(f"GET {self._base}/pulls/{number}/reviews", get)

    def comments(self, number: int) -> list[CommentInfo]:
        """Every comment on an issue or pull request, oldest first (all pages)."""

        def get() -> list[CommentInfo]:
            return [_comment(c) for c in self._repo.get_issue(number).get_comments()]

        return self._call(f"GET {self._base}/issues/{number}/comments", get)

    def authenticated_login(self) -> str | None:
        """The token's user (works for a personal token); None where GitHub refuses to say."""
        try:
            return self._call("GET /user", lambda: self._github.get_user().login)
        except GithubError as exc:
            if exc.status in (401, 403, 404):
                return None
            raise

    # --- writes -------------------------------------------------------------------

    def create_comment(self, number: int, body: str) -> CommentInfo:
        """Post a comment on an issue or pull request."""
        return self._call(
            f"POST {self._base}/issues/{number}/comments",
            lambda: _comment(self._repo.get_issue(number).create_comment(body)),
        )

    def edit_comment(self, number: int, comment_id: int, body: str) -> CommentInfo:
        """Replace a comment's body."""

        def edit() -> CommentInfo:
            comment = self._repo.get_issue(number).get_comment(comment_id)
            comment.edit(body)
            return _comment(comment)

        return self._call(f"PATCH {self._base}/issues/comments/{comment_id}", edit)

    def react(self, number: int, comment_id: int, content: str) -> None:
        """Add a reaction (eyes, rocket, confused, ...) to a comment."""
        self._call(
            f"POST {self._base}/issues/comments/{comment_id}/reactions",
            lambda: self._repo.get_issue(number).get_comment(comment_id).create_reaction(content),
        )

    def create_check_run(self, *, name: str, head_sha: str, title: str, summary: str,
                         details_url: str | None = None,
                         external_id: str | None = None) -> CheckRunInfo:
        """Start a check run (status in_progress) on a commit."""

        def create() -> CheckRunInfo:
            extra: dict[str, Any] = {"details_url": details_url} if details_url else {}
            if external_id:
                extra["external_id"] = external_id
            run = self._repo.create_check_run(
                name=name, head_sha=head_sha, status="in_progress",
                output={"title": title, "summary": summary}, **extra,
            )
            self._check_runs[run.id] = run
            return _check_run(run)

        return self._call(f"POST {self._base}/check-runs", create)

    def check_runs(self, head_sha: str, *, name: str, status: str | None = None) -> list[CheckRunInfo]:
        """Every check run of that name on a commit (all pages, every attempt: not only
        the latest), optionally only those in a status."""

        def get() -> list[CheckRunInfo]:
            extra: dict[str, Any] = {"status": status} if status else {}
            runs = self._repo.get_commit(head_sha).get_check_runs(
                check_name=name, filter="all", **extra)
            found = []
            for run in runs:
                self._check_runs[run.id] = run
                found.append(_check_run(run))
            return found

        return self._call(f"GET {self._base}/commits/{head_sha}/check-runs", get)

    def update_check_run(self, check_id: int, *, title: str, summary: str,
                         conclusion: str | None = None, text: str | None = None) -> None:
        """Update a check run's output; with a conclusion, complete it."""

        def edit() -> None:
            run = self._check_runs.get(check_id) or self._repo.get_check_run(check_id)
            output: dict[str, Any] = {"title": title, "summary": summary}
            if text is not None:
                output["text"] = text
            if conclusion is None:
                run.edit(output=output)
            else:
                run.edit(status="completed", conclusion=conclusion, output=output)

        self._call(f"PATCH {self._base}/check-runs/{check_id}", edit)

    def create_status(self, sha: str, *, state: str, context: str, description: str,
                      target_url: str | None = None) -> None:
        """Set a commit status (where check runs are not allowed)."""
        extra: dict[str, Any] = {"target_url": target_url} if target_url else {}
        self._call(
            f"POST {self._base}/statuses/{sha}",
            lambda: self._repo.get_commit(sha).create_status(
                state, description=description, context=context, **extra,
            ),
        )


    # --- the history branch and its issue (publish, after a push) ---------------------

    def branch_head(self, branch: str) -> BranchHead | None:
        """The branch's tip commit and tree, or None when there is no such branch."""

        def get() -> BranchHead | None:
            try:
                sha = self._repo.get_git_ref(f"heads/{branch}").object.sha
            except GithubException as exc:
                if exc.status == 404:
                    return None
                raise
            return BranchHead(commit=sha, tree=self._repo.get_git_commit(sha).tree.sha)

        return self._call(f"GET {self._base}/git/ref/heads/{branch}", get)

    def archive(self, commit: str) -> bytes:
        """The tree of ``commit`` as a gzipped tar (GitHub redirects to its archive host,
        which is asked without the token: its address carries its own)."""

        def get() -> bytes:
            link = self._repo.get_archive_link("tarball", commit)
            with requests.get(link, timeout=TIMEOUT_S, stream=True) as response:
                response.raise_for_status()
                data = response.raw.read(ARCHIVE_LIMIT + 1, decode_content=True)
            if len(data) > ARCHIVE_LIMIT:
                raise requests.RequestException(f"the archive is over {ARCHIVE_LIMIT} bytes")
            return bytes(data)

        return self._call(f"GET {self._base}/tarball/{commit}", get)

    def commit_files(self, branch: str, head: BranchHead | None, files: dict[str, str],
                     message: str) -> str:
        """A commit on ``branch`` over ``head`` (None: the branch's first, which creates
        it) that writes ``files`` (path: text) and keeps every other file: its SHA. The
        branch moves only from ``head`` (no force): a branch moved meanwhile is a 422."""

        def write() -> str:
            entries = [InputGitTreeElement(path, "100644", "blob", content=text)
                       for path, text in sorted(files.items())]
            if head is None:
                tree = self._repo.create_git_tree(entries)
                commit = self._repo.create_git_commit(message, tree, [])
                self._repo.create_git_ref(f"refs/heads/{branch}", commit.sha)
                return commit.sha
            parent = self._repo.get_git_commit(head.commit)
            tree = self._repo.create_git_tree(entries, base_tree=parent.tree)
            commit = self._repo.create_git_commit(message, tree, [parent])
            ref = self._repo.get_git_ref(f"heads/{branch}")
            if ref.object.sha != head.commit:  # read: its address is then the one to PATCH
                raise GithubError(f"{branch} moved from {head.commit[:12]} to "
                                  f"{ref.object.sha[:12]} meanwhile", status=409)
            ref.edit(commit.sha, force=False)
            return commit.sha

        return self._call(f"write {len(files)} files to {branch} ({self._base}/git/…)", write)

    def issues(self, label: str) -> list[IssueInfo]:
        """The open issues (not pull requests) with ``label``, newest first."""

        def get() -> list[IssueInfo]:
            return [_issue(i) for i in self._repo.get_issues(state="open", labels=[label])
                    if i.pull_request is None]

        return self._call(f"GET {self._base}/issues?labels={quote(label)}", get)

    def create_issue(self, title: str, body: str, labels: tuple[str, ...]) -> IssueInfo:
        """Open an issue with these labels (GitHub makes a label that does not exist)."""
        return self._call(f"POST {self._base}/issues",
                          lambda: _issue(self._repo.create_issue(title, body=body,
                                                                 labels=list(labels))))

    def edit_issue(self, number: int, *, title: str, body: str) -> None:
        """Replace an issue's title and body."""
        self._call(f"PATCH {self._base}/issues/{number}",
                   lambda: self._repo.get_issue(number).edit(title=title, body=body))


def _issue(i: Any) -> IssueInfo:
    return IssueInfo(number=i.number, title=i.title or "", body=i.body or "",
                     author=i.user.login if i.user else "",
                     labels=tuple(label.name for label in i.labels), url=i.html_url)


def _check_run(run: CheckRun) -> CheckRunInfo:
    app = run.raw_data.get("app") or {}
    return CheckRunInfo(id=run.id, app_slug=app.get("slug"), url=run.html_url, name=run.name,
                        status=run.status, external_id=run.external_id or None)


def _comment(c: Any) -> CommentInfo:
    return CommentInfo(id=c.id, body=c.body or "", author=c.user.login if c.user else "",
                       author_type=c.user.type if c.user else "", url=c.html_url)


def _describe(exc: GithubException) -> str:
    """``403 Resource not accessible by integration (needs checks=write)``."""
    data = exc.data if isinstance(exc.data, dict) else {}
    message = str(data.get("message") or exc.message or "").strip().splitlines()
    text = f"{exc.status} {message[0] if message else ''}".strip()
    errors = data.get("errors")
    if isinstance(errors, list) and errors:
        first = errors[0]
        detail = first.get("message") or first.get("code") if isinstance(first, dict) else first
        if detail:
            text += f" ({detail})"
    headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
    needs = headers.get("x-accepted-github-permissions")
    if needs:
        text += f" (the token needs {needs})"
    return text
