"""Posting on a pull request: the sticky comment, the check run, reactions, replies.

Plain logic over a small ``Api`` protocol (``api.GitHubAPI`` implements it; the unit
tests use an in-memory one), so every decision here is tested without HTTP:

- the sticky comment is the oldest comment that begins with ``MARKER`` *and* was written
  by benchbot's own identity; any other comment is never edited, whoever wrote it; a
  ``/bench bisect`` answers in a comment of its own, found the same way by
  ``BISECT_MARKER``, so neither ever overwrites the other;
- the identity is, in this order: the configured login (``BENCHBOT_BOT_LOGIN``, the
  action's ``bot-login`` input); the app that owns the check run we just created
  (``<slug>[bot]``: ``github-actions[bot]`` for the workflow's token, your app's bot
  for an app token); the token's user (``GET /user``, which answers for a personal
  token, not for the Actions token); else ``github-actions[bot]``;
- the check run goes in_progress -> completed; it carries an ``external_id`` naming the
  workflow run, and a creation that failed with a 5xx or a lost answer is not repeated
  before the commit's check runs are listed: one of ours in progress is adopted, since
  GitHub may have stored it (a second would stay in progress forever); where the token
  may not create check runs (403), a commit status of the same name is set instead; its summary is cut to
  GitHub's limit in bytes, and where GitHub still refuses the completing call (422), the
  check is completed with a short summary that says where the report is;
- a failed call is recorded in ``failures`` and publishing goes on with the next
  step, so one refused call does not hide the rest; the caller decides the exit code.

Why one module of about 600 lines: every decision about what benchbot writes on a pull
request (which comment is its own, the check's life, the replies) rests on the same
identity and marker rules; apart, each part would import those rules from the other.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TextIO, TypeVar

from benchbot.core.errors import GithubError
from benchbot.core.model import OUTCOMES, Results, Summary
from benchbot.github import rescue
from benchbot.github.api import CheckRunInfo, CommentInfo
from benchbot.github.command import HELP, BenchCommand
from benchbot.github.job import CheckRef, Job
from benchbot.github.limits import artifact_link, fit, too_long_note
from benchbot.measure import engine
from benchbot.measure.progress import PHASE_NAMES, TerminalReporter
from benchbot.report.escape import (
    Markdown,
    md,
    md_code_block,
    md_code_span,
    md_inline,
    md_url,
    mention,
    require,
)

if TYPE_CHECKING:
    from benchbot.github.env import ActionEnv

MARKER = rescue.MARKER  # "<!-- benchbot:sticky -->", where the rescue step needs it too
BISECT_MARKER = rescue.BISECT_MARKER  # "<!-- benchbot:bisect -->": the bisect's own comment
BISECT_HINT = Markdown("<sub>Bisect again with a comment: `/bench bisect only=NAME` (options "
                       "`budget=1h sha=…`; `/bench help`).</sub>")
DEFAULT_BOT_LOGIN = "github-actions[bot]"
COMMENT_LIMIT = 65_536  # characters GitHub accepts in a comment body
REPORT_ROOM = COMMENT_LIMIT - len(MARKER) - 1  # what is left of it for the report (final_body)
# A check run's output.summary (and output.text): GitHub's docs say "65535 characters",
# but it counts UTF-8 bytes ("summary exceeds a maximum bytesize of 65535"), and a report
# is full of multi-byte characters (×, −, …, µ, emoji, the pictures' blocks).
CHECK_SUMMARY_LIMIT = 65_535
STATUS_DESCRIPTION_LIMIT = 140
REASON_LIMIT = 300  # characters of GitHub's refusal quoted in a check's summary
BENCH_HINT = Markdown(
    "<sub>Re-run with a comment: `/bench` (options `budget=20m max_runs=N runs=N only=a,b "
    "parity=0.01 confirm=off aa=off`; `/bench help`).</sub>"
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
                         details_url: str | None = None,
                         external_id: str | None = None) -> CheckRunInfo: ...
    def check_runs(self, head_sha: str, *, name: str,
                   status: str | None = None) -> list[CheckRunInfo]: ...
    def update_check_run(self, check_id: int, *, title: str, summary: str,
                         conclusion: str | None = None, text: str | None = None) -> None: ...
    def create_status(self, sha: str, *, state: str, context: str, description: str,
                      target_url: str | None = None) -> None: ...


def find_sticky(comments: Sequence[CommentInfo], identity: str,
                marker: str = MARKER) -> CommentInfo | None:
    """The sticky comment: the oldest that begins with ``marker`` and was written by
    ``identity``, or None. At its beginning: a bisect's comment quotes commit subjects,
    which could spell the other marker out."""
    for comment in comments:
        if comment.body.lstrip().startswith(marker) and comment.author.lower() == identity.lower():
            return comment
    return None


def app_login(slug: str) -> str:
    """The login under which a GitHub App writes: ``<slug>[bot]``."""
    return f"{slug}[bot]"


def refused_note(reason: str, artifact: str, run_url: str | None, *, comment: bool) -> Markdown:
    """The check's summary when GitHub refused the report there: where to read it instead."""
    where = "the pull request's benchbot comment, " if comment else ""
    return Markdown(
        "> [!NOTE]\n> GitHub refused the report as this check's summary ({}), so it is not "
        "shown here. It is in {}the job summary, and with the results file in {}."
    ).format(reason[:REASON_LIMIT], where, artifact_link(artifact, run_url))


def final_body(report: Markdown, *, artifact: str, run_url: str | None) -> Markdown:
    """The sticky comment once the results are in: marker, report (with run link and hint)."""
    tail = too_long_note("a GitHub comment", COMMENT_LIMIT, artifact, run_url) + \
        Markdown("\n\n") + BENCH_HINT
    return fit(Markdown(f"{MARKER}\n") + require(report, "the report"), COMMENT_LIMIT, tail)


def running_body(*, base_sha: str, head_sha: str, base_ref: str | None, head_ref: str | None,
                 phase: str, run_url: str | None, request: Markdown | None = None) -> Markdown:
    """The sticky comment while measuring: what is compared and the phase it is in."""
    lines = [
        Markdown(MARKER),
        Markdown("{}…").format(rescue.RUNNING),
        Markdown(""),
        Markdown("**{}** → **{}** · {}").format(_side(base_ref, base_sha),
                                              _side(head_ref, head_sha), phase),
    ]
    if request:
        lines += [Markdown(""), request]
    lines += [Markdown(""), _run_link(run_url) + "this comment is replaced by the report when it is done.",
              Markdown(""), BENCH_HINT]
    return Markdown("\n").join(lines) + Markdown("\n")


def link_target(run_url: str) -> Markdown:
    """The workflow run's URL as a link's target (``escape.md_url``)."""
    return md_url(run_url)


def _run_link(run_url: str | None) -> Markdown:
    """``[workflow run](URL) · ``, or nothing without a run's URL."""
    return Markdown("[workflow run]({}) · ").format(link_target(run_url)) if run_url else Markdown("")


def error_body(message: str, *, run_url: str | None, title: str = "could not run",
               measured: str = "Nothing was measured.", bisect: bool = False) -> Markdown:
    """The sticky comment (or with ``bisect``, the bisect's) when the comparison could not
    run (the message is shown as text: it may hold a build log's tail, which the pull
    request's code wrote)."""
    link = (Markdown(" See the [workflow run]({}) for the log.").format(link_target(run_url))
            if run_url else "")
    marker, what, hint = ((BISECT_MARKER, Markdown(" bisect"), BISECT_HINT) if bisect
                          else (MARKER, Markdown(""), BENCH_HINT))
    body = Markdown("{}\n### benchbot{}: {}\n\n{}\n\n{}{}\n\n{}\n").format(
        Markdown(marker), what, title, md_code_block(message.strip()), measured, link, hint)
    return fit(body, COMMENT_LIMIT, hint)


def bisect_final_body(report: Markdown, *, artifact: str, run_url: str | None) -> Markdown:
    """The bisect's comment once it is done: marker, report, run link and hint."""
    tail = too_long_note("a GitHub comment", COMMENT_LIMIT, artifact, run_url) + \
        Markdown("\n\n") + BISECT_HINT
    body = Markdown("{}\n{}\n{}{}\n").format(Markdown(BISECT_MARKER), require(report, "the report"),
                                             _run_link(run_url), BISECT_HINT)
    return fit(body, COMMENT_LIMIT, tail)


def bisect_running_body(job: Job, phase: str, run_url: str | None) -> Markdown:
    """The bisect's comment while it waits or searches."""
    return Markdown("\n").join([
        Markdown(BISECT_MARKER), Markdown("{}…").format(rescue.BISECT_RUNNING), "",
        Markdown("{}: **{}** (good) → **{}** (bad), this pull request's commits · {}").format(
            md_code_span(job.command.workload or ""), _side(job.base.ref, job.base.sha),
            _side(job.head.ref, job.head.sha), phase),
        "", requested_by(job) or "",
        "", _run_link(run_url) + "this comment is replaced by the answer when it is done.", "",
        BISECT_HINT]) + Markdown("\n")


def requested_by(job: Job) -> Markdown | None:
    """``Requested by @login: `/bench …```, or None where no comment asked for the job."""
    if not job.requested_by:
        return None
    command = f"/bench {job.command.describe()}".strip()
    return Markdown("Requested by {}: {}").format(mention(job.requested_by), md_code_span(command))


def error_text(message: str) -> Markdown:
    """A message that may hold a build log's tail, as markdown that shows it as text."""
    return md_code_block(message.strip())


def help_reply(login: str) -> Markdown:
    """The answer to ``/bench help``."""
    return Markdown("{}\n\n{}\n").format(mention(login), Markdown(HELP))


def refusal_reply(login: str, problems: Sequence[str]) -> Markdown:
    """The answer to a ``/bench`` comment with options that were not understood: each
    problem as ``md`` makes it (the parser's are ``Markdown``, whose values it escaped; a
    config's error is text, and may quote what the comment said)."""
    items = Markdown("\n").join(Markdown("- {}").format(p) for p in problems)
    syntax = Markdown("<details><summary>/bench syntax</summary>\n\n{}\n\n</details>\n").format(
        Markdown(HELP))
    head = Markdown("{}, benchbot did not understand that command, so nothing was run:\n\n").format(
        mention(login))
    room = COMMENT_LIMIT - len(head) - len(syntax) - 4
    return head + fit(items, room, Markdown("- …")) + Markdown("\n\n") + syntax


def fork_needs_sha_reply(login: str, head_sha: str, command: BenchCommand) -> Markdown:
    """``/bench`` on a fork's pull request without the head's full SHA: name the commit
    and the command that confirms it."""
    again = " ".join(filter(None, ["/bench", f"sha={head_sha}", _without_sha(command)]))
    short = Markdown("")
    if command.sha is not None:
        short = Markdown(" {} is not enough: on a fork only the full 40-digit SHA runs, since "
                         "a shorter prefix can be matched by a commit made for the purpose."
                         ).format(md_code_span(f"sha={command.sha}"))
    return Markdown(
        "{}, this pull request comes from a fork, so benchbot runs its code on the benchmark "
        "machine only at a commit a maintainer has read.{} Its head is now {}. To measure "
        "exactly that commit, comment:\n\n{}\n\nNothing was run. A later push needs a new "
        "`/bench sha=…`."
    ).format(mention(login), short, md_code_span(head_sha), md_code_block(again))


def sha_mismatch_reply(login: str, given: str, head_sha: str, command: BenchCommand) -> Markdown:
    """``/bench sha=X`` where the pull request's head is no longer X."""
    again = " ".join(filter(None, ["/bench", f"sha={head_sha}", _without_sha(command)]))
    return Markdown(
        "{}, {} does not name this pull request's head, which is now {} (pushed since, or a "
        "typo), so nothing was run. Read the new commits; to measure the head as it is now, "
        "comment:\n\n{}"
    ).format(mention(login), md_code_span(f"sha={given}"), md_code_span(head_sha),
             md_code_block(again))


FORK_BISECT_LIMIT = 100  # commits a maintainer is asked to approve in one reply, at most


def fork_refused_reply(login: str, why: str) -> Markdown:
    """``/bench`` on a fork's pull request whose base (or config) may not run it."""
    return Markdown("{}, this pull request comes from a fork, and benchbot does not run its "
                    "code here: {}. Nothing was run.").format(mention(login), why)


def bisect_range_reply(login: str, commits: Sequence[tuple[str, str, str]], head: str,
                       command: BenchCommand) -> Markdown:
    """``/bench bisect`` on a fork without ``from=`` naming the range's base (or naming
    another): the commits it would build, and the command that approves exactly those.
    ``commits``: the base, then the first-parent commits up to the head, as (sha, tree,
    subject); the subjects are the pull request's text, escaped."""
    base, built = commits[0][0], commits[1:]
    given = Markdown("")
    if command.base is not None:
        given = Markdown(" {} is not the base of its commits, which is {}.").format(
            md_code_span(f"from={command.base}"), md_code_span(base))
    head_words = Markdown(
        "{}, a bisect builds and runs every commit of this pull request between its base and "
        "its head, not only the head: a commit can hold a build script that a later one "
        "takes out again, which the pull request's diff never shows. This pull request comes "
        "from a fork, so benchbot bisects only the range of commits a maintainer has read, "
        "commit by commit.{}").format(mention(login), given)
    if len(built) > FORK_BISECT_LIMIT:
        return head_words + Markdown(
            " It has {} commits, more than the {} benchbot asks anyone to approve in one "
            "comment: run `benchbot bisect` on a machine of your own instead. Nothing was "
            "run.").format(len(built), FORK_BISECT_LIMIT)
    listed = Markdown("\n").join(
        Markdown("- {} {}").format(md_code_span(sha[:12]),
                                   md_inline(subject[:120]) or "(no subject)")
        for sha, _, subject in built)
    again = " ".join(filter(None, ["/bench", f"sha={head}", command.describe(sha=False),
                                   f"from={base}"]))
    return head_words + Markdown(
        " These are the {} commits it would build, oldest first (and the base, {}):\n\n"
        "{}\n\nTo bisect exactly these, comment:\n\n{}\n\nNothing was run.").format(
        len(built), md_code_span(base[:12]), listed, md_code_block(again))


def _without_sha(command: BenchCommand) -> str:
    return command.describe(sha=False)


def reader_marker(login: str) -> str:
    """What the answer to a reader begins with, naming them: found again (``reply_once``),
    it is not repeated, however often they comment ``/bench``."""
    return f"<!-- benchbot:reader:{re.sub(r'[^a-z0-9-]', '', login.lower())} -->"


def permission_reply(login: str, permission: str) -> Markdown:
    """The polite answer to a ``/bench`` comment from someone without write access (once
    per reader and pull request: it begins with ``reader_marker``)."""
    return Markdown(
        "{}\n{}, thanks for asking: `/bench` runs code on this repository's own benchmark "
        "machine, so only people with write access can start it (yours is {}). A maintainer "
        "can run it for this pull request."
    ).format(Markdown(reader_marker(login)), mention(login), md_code_span(permission))


def headline(summary: Summary) -> str:
    """``1 slower · 2 level`` from a results summary (outcomes with a count only)."""
    parts = [f"{summary.count(o)} {o}" for o in OUTCOMES if summary.count(o)]
    return " · ".join(parts) or "nothing compared"


def shards_note(doc: Results) -> str:
    """`` · shard 2 of 2 missing`` for a merged comparison some shard did not complete."""
    gaps = sorted([*(doc.missing_shards or ()), *(f.index for f in doc.failed_shards or ())])
    if not gaps or not doc.shards:
        return ""
    count = doc.shards[0].count
    which = ", ".join(map(str, gaps))
    return f" · shard{'s' if len(gaps) > 1 else ''} {which} of {count} missing or failed"


def status_description(summary: Summary, conclusion: str, note: str = "") -> str:
    """A commit status's description (140 characters at most)."""
    text = f"{headline(summary)}{note} ({conclusion})".replace(" · ", ", ")
    return text[:STATUS_DESCRIPTION_LIMIT]


def _side(ref: str | None, sha: str) -> Markdown:
    return Markdown("{} ({})").format(ref, sha[:12]) if ref else md(sha[:12])


class Publisher:
    """Everything benchbot writes on one pull request during one step.

    ``check``, ``comment_id`` and ``identity`` continue what an earlier step (the gate)
    started; ``state`` hands them on. Creating the sticky comment or the check run is
    tried ``attempts`` times, waiting ``retry_wait_s``, doubling, after a server error:
    each try after the first looks for what the last one may have stored (the comment by
    marker and author, the check run by name and ``external_id``), so that a creation
    whose answer was lost is never repeated.
    """

    def __init__(self, api: Api, *, number: int, head_sha: str, check_name: str,
                 run_url: str | None, comment: bool = True, bot_login: str | None = None,
                 check: CheckRef | None = None, comment_id: int | None = None,
                 identity: str | None = None, attempts: int = 5,
                 retry_wait_s: float = 2.0, external_id: str | None = None,
                 marker: str = MARKER) -> None:
        self.api = api
        self.marker = marker
        self.number = number
        self.head_sha = head_sha
        self.check_name = check_name
        self.run_url = run_url
        self.comment_enabled = comment
        self.failures: list[str] = []
        self._bot_login = bot_login
        self._app_login: str | None = None
        self._identity = identity
        self._comment_id = comment_id
        self._check = check or CheckRef()
        self._attempts = max(1, attempts)
        self._retry_wait_s = retry_wait_s
        self.external_id = external_id or f"benchbot-{uuid.uuid4()}"

    def state(self) -> tuple[CheckRef, int | None, str | None]:
        """The check, the sticky comment's id and the identity, for the next step."""
        return self._check, self._comment_id, self.identity()

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

    def start_check(self, title: str, summary: Markdown) -> None:
        """Create the check run in_progress, or a pending commit status where that is refused."""
        require(summary, "a check's summary")
        try:
            run = self._create_check(title, fit(summary, CHECK_SUMMARY_LIMIT, "", unit="bytes"))
        except GithubError as exc:
            if exc.status == 403:  # the token may not write checks: fall back to a status
                self._check = CheckRef(kind="status")
                self._status("pending", title)
            else:
                self.failures.append(str(exc))
            return
        self._check = CheckRef(kind="check", id=run.id)
        if run.app_slug:
            self._app_login = app_login(run.app_slug)

    def _create_check(self, title: str, summary: str) -> CheckRunInfo:
        wait = self._retry_wait_s
        for attempt in range(1, self._attempts + 1):
            try:
                found = self._own_open_check() if attempt > 1 else None
                if found is not None:
                    return found
                return self.api.create_check_run(
                    name=self.check_name, head_sha=self.head_sha, title=title,
                    summary=summary, details_url=self.run_url, external_id=self.external_id)
            except GithubError as exc:
                if (exc.status is not None and exc.status < 500) or attempt == self._attempts:
                    raise
                time.sleep(wait)  # GitHub may have stored it: the next try looks first
                wait *= 2
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _own_open_check(self) -> CheckRunInfo | None:
        """The check run in progress that an earlier try of ours created, if GitHub kept it."""
        runs = self.api.check_runs(self.head_sha, name=self.check_name, status="in_progress")
        ours = [r for r in runs if r.external_id == self.external_id]
        return min(ours, key=lambda r: r.id) if ours else None

    def update_check(self, title: str, summary: Markdown) -> None:
        """Show progress in the check run's summary (statuses have no room for it)."""
        require(summary, "a check's summary")
        if self._check.kind == "check" and self._check.id is not None:
            check_id = self._check.id
            self._try(lambda: self.api.update_check_run(
                check_id, title=title, summary=fit(summary, CHECK_SUMMARY_LIMIT, "", unit="bytes")))

    def finish_check(self, conclusion: str, title: str, summary: Markdown, *, artifact: str,
                     description: str) -> None:
        """Complete the check run with a conclusion, or set the final commit status.

        The conclusion and the summary go in one call; where GitHub refuses that (422:
        the summary, by a rule of its own), the check is completed with a short summary
        that says where the report is, so that it never stays in progress.
        """
        require(summary, "a check's summary")
        if not self.check_started:
            self.start_check(title, md(description))
        if self._check.kind == "check" and self._check.id is not None:
            tail = too_long_note("a check's summary", CHECK_SUMMARY_LIMIT, artifact,
                                 self.run_url, "bytes")
            check_id = self._check.id
            try:
                self.api.update_check_run(
                    check_id, title=title, conclusion=conclusion,
                    summary=fit(summary, CHECK_SUMMARY_LIMIT, tail, unit="bytes"),
                )
                return
            except GithubError as exc:
                if exc.status == 422:
                    note = refused_note(str(exc), artifact, self.run_url,
                                        comment=self.comment_enabled)
                    self._try(lambda: self.api.update_check_run(
                        check_id, title=title, conclusion=conclusion, summary=note))
                    return
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

    def show(self, body: Markdown) -> None:
        """Put ``body`` in the sticky comment: edit ours if there is one, else create it."""
        require(body, "a comment")
        if not self.comment_enabled:
            return
        try:
            self._show(body)
        except GithubError as exc:
            self.failures.append(str(exc))

    def _show(self, body: str) -> None:
        wait = self._retry_wait_s
        for attempt in range(1, self._attempts + 1):
            try:
                self._show_once(body)
                return
            except GithubError as exc:
                if (exc.status is not None and exc.status < 500) or attempt == self._attempts:
                    raise
                # A 5xx or a lost answer: GitHub may have stored a new comment anyway;
                # the next try looks for it before it creates one, so there is never two.
                self._comment_id = None
                time.sleep(wait)
                wait *= 2

    def _show_once(self, body: str) -> None:
        if self._comment_id is None:
            found = find_sticky(self.api.comments(self.number), self.identity(), self.marker)
            self._comment_id = found.id if found else None
        if self._comment_id is not None:
            try:
                self.api.edit_comment(self.number, self._comment_id, body)
                return
            except GithubError as exc:
                if exc.status != 404:  # deleted since: make a new one
                    raise
                self._comment_id = None
        self._comment_id = self.api.create_comment(self.number, body).id

    # --- reactions and replies ----------------------------------------------------

    def react(self, comment_id: int, content: str) -> None:
        """React to the triggering comment; a failure is recorded, not raised."""
        self._try(lambda: self.api.react(self.number, comment_id, content))

    def reply(self, body: Markdown) -> None:
        """Post a separate (not sticky) comment, e.g. a refusal."""
        require(body, "a reply")
        self._try(lambda: self.api.create_comment(self.number, body))

    def reply_once(self, marker: str, body: Markdown) -> bool:
        """Post ``body`` (which begins with ``marker``) unless a comment of benchbot's own
        identity on this pull request begins with it already; whether it was posted. A
        failure to list the comments is recorded, and nothing posted."""
        comments = self._try(lambda: self.api.comments(self.number))
        if comments is None or find_sticky(comments, self.identity(), marker) is not None:
            return False
        self.reply(body)
        return True

    def _try(self, call: Callable[[], T]) -> T | None:
        try:
            return call()
        except GithubError as exc:
            self.failures.append(str(exc))
            return None


def publisher_for(api: Api, action_env: ActionEnv, job: Job) -> Publisher:
    """The publisher of one job, continuing where the gate left the check and the comment."""
    return Publisher(
        api, number=job.number, head_sha=job.head.sha, check_name=job.check_name,
        run_url=action_env.run_url, comment=job.comment, bot_login=action_env.bot_login,
        check=job.check, comment_id=job.comment_id, identity=job.identity,
        retry_wait_s=2.0 if action_env.throttle else 0.05,
        external_id=rescue.external_id(action_env.run_id),
        marker=BISECT_MARKER if job.bisect else MARKER,
    )


def job_running_body(job: Job, phase: str, run_url: str | None) -> Markdown:
    """The sticky comment (or the bisect's) while the job waits or measures."""
    if job.bisect:
        return bisect_running_body(job, phase, run_url)
    return running_body(
        base_sha=job.base.sha, head_sha=job.head.sha, base_ref=job.base.ref,
        head_ref=job.head.ref, phase=phase, run_url=run_url, request=requested_by(job),
    )


class PhasePoster(engine.Reporter):
    """Progress for the single-job form: every line to the log, and each new phase to the
    sticky comment and the check's title."""

    def __init__(self, log: TextIO, pub: Publisher, job: Job, run_url: str | None) -> None:
        self._terminal = TerminalReporter(log, tty=False)
        self._pub, self._job, self._run_url = pub, job, run_url
        self._built = False

    def phase(self, name: str, workloads: int, runs: int) -> None:
        self._terminal.phase(name, workloads, runs)
        self._show(f"phase: {PHASE_NAMES.get(name, name)}, {workloads} workloads, {runs} runs")

    def progress(self, phase: str, workload: str, done: int, planned: int,
                 left_s: float | None = None) -> None:
        self._terminal.progress(phase, workload, done, planned, left_s)

    def note(self, message: str) -> None:
        self._terminal.note(message)

    def building(self, side: str, sha: str) -> None:
        self._terminal.building(side, sha)
        if not self._built:
            self._built = True
            self._show("phase: building base and head")

    def _show(self, phase: str) -> None:
        body = job_running_body(self._job, phase, self._run_url)
        self._pub.update_check(f"benchbot: measuring {self._job.head.sha[:12]}",
                               Markdown(body.replace(MARKER + "\n", "")))
        self._pub.show(body)
