"""Publishing on a pull request: the sticky comment, the check run, reactions, replies.

Plain logic over a small ``Api`` protocol (``api.GitHubAPI`` implements it; the unit
tests use an in-memory one), so every decision here is tested without HTTP:

- the sticky comment is the oldest comment that carries ``MARKER`` *and* was written by
  benchbot's own identity; any other comment is never edited, whoever wrote it;
- the identity is, in this order: the configured login (``BENCHBOT_BOT_LOGIN``, the
  action's ``bot-login`` input); the app that owns the check run we just created
  (``<slug>[bot]``: ``github-actions[bot]`` for the workflow's token, your app's bot
  for an app token); the token's user (``GET /user``, which answers for a personal
  token, not for the Actions token); else ``github-actions[bot]``;
- the check run goes in_progress -> completed; where the token may not create check
  runs (403), a commit status of the same name is set instead;
- a failed call is recorded in ``failures`` and publishing goes on with the next
  step, so one refused call does not hide the rest; the caller decides the exit code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from benchbot.errors import GithubError
from benchbot.github.api import CheckRunInfo, CommentInfo
from benchbot.github.command import HELP

MARKER = "<!-- benchbot:sticky -->"
DEFAULT_BOT_LOGIN = "github-actions[bot]"
COMMENT_LIMIT = 65_536  # characters GitHub accepts in a comment body
CHECK_SUMMARY_LIMIT = 65_535  # characters in a check run's output.summary
STATUS_DESCRIPTION_LIMIT = 140
BENCH_HINT = (
    "<sub>Re-run with a comment: `/bench` (options `runs=N only=a,b parity=0.01 "
    "confirm=off aa=off`; `/bench help`).</sub>"
)
T = TypeVar("T")
STATUS_STATES = {"success": "success", "failure": "failure", "neutral": "success",
                 "cancelled": "error"}


class Api(Protocol):
    """The calls publishing needs (implemented by ``api.GitHubAPI``)."""

    def comments(self, number: int) -> list[CommentInfo]: ...
    def create_comment(self, number: int, body: str) -> CommentInfo: ...
    def edit_comment(self, number: int, comment_id: int, body: str) -> CommentInfo: ...
    def react(self, number: int, comment_id: int, content: str) -> None: ...
    def authenticated_login(self) -> str | None: ...
    def create_check_run(self, *, name: str, head_sha: str, title: str, summary: str,
                         details_url: str | None = None) -> CheckRunInfo: ...
    def update_check_run(self, check_id: int, *, title: str, summary: str,
                         conclusion: str | None = None, text: str | None = None) -> None: ...
    def create_status(self, sha: str, *, state: str, context: str, description: str,
                      target_url: str | None = None) -> None: ...


def find_sticky(comments: Sequence[CommentInfo], identity: str) -> CommentInfo | None:
    """The sticky comment: the oldest with the marker written by ``identity``, or None."""
    for comment in comments:
        if MARKER in comment.body and comment.author.lower() == identity.lower():
            return comment
    return None


def app_login(slug: str) -> str:
    """The login under which a GitHub App writes: ``<slug>[bot]``."""
    return f"{slug}[bot]"


def fit(text: str, limit: int, tail: str) -> str:
    """``text`` if it fits in ``limit`` characters, else its first lines and then ``tail``.

    The cut falls at a line end, and a ``<details>`` block left open by it is closed,
    so the shortened markdown still renders.
    """
    if len(text) <= limit:
        return text
    closing = "\n</details>\n"
    room = max(0, limit - len(tail) - 2)
    kept = _cut(text, room)
    if kept.count("<details") > kept.count("</details>"):
        kept = _cut(text, room - len(closing))
        if kept.count("<details") > kept.count("</details>"):
            kept += closing
    return f"{kept}\n\n{tail}"[:limit]


def _cut(text: str, room: int) -> str:
    """The longest run of whole lines of ``text`` within ``room`` characters."""
    kept = text[: max(0, room)]
    return kept[: kept.rindex("\n")] if "\n" in kept else kept


def too_long_note(what: str, limit: int, artifact: str, run_url: str | None) -> str:
    """The pointer that replaces the end of a report that does not fit."""
    where = f"the workflow run's artifact `{artifact}`"
    if run_url:
        where += f" ([workflow run]({run_url}))"
    return (
        f"> [!NOTE]\n> The report is longer than {what} allows ({limit:,} characters) and "
        f"was cut here; the whole report (`report.md`) and the results file are in {where}."
    )


def final_body(report: str, *, artifact: str, run_url: str | None) -> str:
    """The sticky comment once the results are in: marker, report (with run link and hint)."""
    tail = too_long_note("a GitHub comment", COMMENT_LIMIT, artifact, run_url) + "\n\n" + BENCH_HINT
    return fit(f"{MARKER}\n{report}", COMMENT_LIMIT, tail)


def running_body(*, base_sha: str, head_sha: str, base_ref: str | None, head_ref: str | None,
                 phase: str, run_url: str | None, request: str | None = None) -> str:
    """The sticky comment while measuring: what is compared and the phase it is in."""
    lines = [
        MARKER,
        "### benchbot: measuring…",
        "",
        f"**{_side(base_ref, base_sha)}** → **{_side(head_ref, head_sha)}** · {phase}",
    ]
    if request:
        lines += ["", request]
    link = f"[workflow run]({run_url}) · " if run_url else ""
    lines += ["", f"{link}this comment is replaced by the report when it is done.", "", BENCH_HINT]
    return "\n".join(lines) + "\n"


def error_body(message: str, *, run_url: str | None) -> str:
    """The sticky comment when the comparison could not run."""
    link = f" See the [workflow run]({run_url}) for the log." if run_url else ""
    return (
        f"{MARKER}\n### benchbot: could not run\n\n```text\n{message.strip()}\n```\n\n"
        f"Nothing was measured.{link}\n\n{BENCH_HINT}\n"
    )


def help_reply(login: str) -> str:
    """The answer to ``/bench help``."""
    return f"@{login}\n\n{HELP}\n"


def refusal_reply(login: str, problems: Sequence[str]) -> str:
    """The answer to a ``/bench`` comment with options that were not understood."""
    items = "\n".join(f"- {p}" for p in problems)
    return (
        f"@{login}, benchbot did not understand that command, so nothing was run:\n\n{items}\n\n"
        f"<details><summary>/bench syntax</summary>\n\n{HELP}\n\n</details>\n"
    )


def permission_reply(login: str, permission: str) -> str:
    """The polite answer to a ``/bench`` comment from someone without write access."""
    return (
        f"@{login}, thanks for asking: `/bench` runs code on this repository's own "
        f"benchmark machine, so only people with write access can start it (yours is "
        f"`{permission}`). A maintainer can run it for this pull request."
    )


def headline(summary: Mapping[str, object]) -> str:
    """``1 slower · 2 level`` from a results summary (outcomes with a count only)."""
    parts = [f"{summary[o]} {o}" for o in ("slower", "faster", "level", "inconclusive", "invalid")
             if summary.get(o)]
    return " · ".join(parts) or "nothing compared"


def status_description(summary: Mapping[str, object], conclusion: str) -> str:
    """A commit status's description (140 characters at most)."""
    text = f"{headline(summary)} ({conclusion})".replace(" · ", ", ")
    return text[:STATUS_DESCRIPTION_LIMIT]


def _side(ref: str | None, sha: str) -> str:
    return f"{ref} ({sha[:12]})" if ref else sha[:12]


@dataclass(slots=True)
class _Check:
    kind: str  # "check", "status" or "none"
    id: int | None = None


class Publisher:
    """Everything benchbot writes on one pull request during one job."""

    def __init__(self, api: Api, *, number: int, head_sha: str, check_name: str,
                 run_url: str | None, comment: bool = True, bot_login: str | None = None) -> None:
        self.api = api
        self.number = number
        self.head_sha = head_sha
        self.check_name = check_name
        self.run_url = run_url
        self.comment_enabled = comment
        self.failures: list[str] = []
        self._bot_login = bot_login
        self._app_login: str | None = None
        self._identity: str | None = None
        self._comment_id: int | None = None
        self._check = _Check("none")

    # --- identity -----------------------------------------------------------------

    def identity(self) -> str:
        """The login benchbot's comments are written by (see the module's docstring)."""
        if self._identity is None:
            self._identity = (
                self._bot_login or self._app_login or self._token_login() or DEFAULT_BOT_LOGIN
            )
        return self._identity

    def _token_login(self) -> str | None:
        try:
            return self.api.authenticated_login()
        except GithubError:  # not knowing is not a failure: the default follows
            return None

    # --- the check ----------------------------------------------------------------

    @property
    def check_started(self) -> bool:
        """Whether a check run (or the fallback status) was started."""
        return self._check.kind != "none"

    def start_check(self, title: str, summary: str) -> None:
        """Create the check run in_progress, or a pending commit status where that is refused."""
        try:
            run = self.api.create_check_run(
                name=self.check_name, head_sha=self.head_sha, title=title,
                summary=fit(summary, CHECK_SUMMARY_LIMIT, ""), details_url=self.run_url,
            )
        except GithubError as exc:
            if exc.status == 403:  # the token may not write checks: fall back to a status
                self._check = _Check("status")
                self._status("pending", title)
            else:
                self.failures.append(str(exc))
            return
        self._check = _Check("check", run.id)
        if run.app_slug:
            self._app_login = app_login(run.app_slug)

    def update_check(self, title: str, summary: str) -> None:
        """Show progress in the check run's summary (statuses have no room for it)."""
        if self._check.kind == "check" and self._check.id is not None:
            check_id = self._check.id
            self._try(lambda: self.api.update_check_run(
                check_id, title=title, summary=fit(summary, CHECK_SUMMARY_LIMIT, "")))

    def finish_check(self, conclusion: str, title: str, summary: str, *, artifact: str,
                     description: str) -> None:
        """Complete the check run with a conclusion, or set the final commit status."""
        if self._check.kind == "check" and self._check.id is not None:
            tail = too_long_note("a check's summary", CHECK_SUMMARY_LIMIT, artifact, self.run_url)
            check_id = self._check.id
            try:
                self.api.update_check_run(
                    check_id, title=title, conclusion=conclusion,
                    summary=fit(summary, CHECK_SUMMARY_LIMIT, tail),
                )
                return
            except GithubError as exc:
                if exc.status != 403:
                    self.failures.append(str(exc))
                    return
        self._status(STATUS_STATES.get(conclusion, "error"), description)

    def _status(self, state: str, description: str) -> None:
        self._try(lambda: self.api.create_status(
            self.head_sha, state=state, context=self.check_name,
            description=description[:STATUS_DESCRIPTION_LIMIT], target_url=self.run_url,
        ))

    # --- the sticky comment -------------------------------------------------------

    def show(self, body: str) -> None:
        """Put ``body`` in the sticky comment: edit ours if there is one, else create it."""
        if not self.comment_enabled:
            return
        try:
            self._show(body)
        except GithubError as exc:
            self.failures.append(str(exc))

    def _show(self, body: str) -> None:
        if self._comment_id is None:
            found = find_sticky(self.api.comments(self.number), self.identity())
            self._comment_id = found.id if found else None
        if self._comment_id is not None:
            try:
                self.api.edit_comment(self.number, self._comment_id, body)
                return
            except GithubError as exc:
                if exc.status != 404:  # deleted since: make a new one
                    raise
                self._comment_id = None
        try:
            self._comment_id = self.api.create_comment(self.number, body).id
        except GithubError as exc:
            if exc.status is not None and exc.status < 500:
                raise
            # The answer was lost or a 5xx: GitHub may have stored it anyway. Look first,
            # so that the sticky comment is never duplicated.
            found = find_sticky(self.api.comments(self.number), self.identity())
            if found is not None:
                self._comment_id = found.id
                self.api.edit_comment(self.number, found.id, body)
            else:
                self._comment_id = self.api.create_comment(self.number, body).id

    # --- reactions and replies ----------------------------------------------------

    def react(self, comment_id: int, content: str) -> None:
        """React to the triggering comment; a failure is recorded, not raised."""
        self._try(lambda: self.api.react(self.number, comment_id, content))

    def reply(self, body: str) -> None:
        """Post a separate (not sticky) comment, e.g. a refusal."""
        self._try(lambda: self.api.create_comment(self.number, body))

    def _try(self, call: Callable[[], T]) -> T | None:
        try:
            return call()
        except GithubError as exc:
            self.failures.append(str(exc))
            return None
