"""The gate: decides whether a comparison runs, pins it, and opens the check and the comment.

It runs where the write token is (a GitHub-hosted runner in the three-job workflow) and
never builds or runs the pull request's code, so everything a stranger can trigger ends
here: a comment from someone without write access is answered and nothing is queued on
the benchmark runner.

Who may start work is one rule, ``admit``, that every way in goes through (``Way``):
whoever starts it (the commenter, the labeller, the sender of an own branch's event)
needs write access, asked from the API; only a fork's own push with ``forks: true`` has
no person behind it (the config approved every push). ``_pin`` takes the ``Admission``
that only ``admit`` makes, so nothing is pinned, and nothing queued, past it.

- ``pull_request`` (opened, synchronize, reopened) on a branch of the repository runs
  when its sender has write access (anyone who may read can open a pull request from a
  branch that is there already, and triage may reopen one).
  A fork's ``pull_request`` run is ignored, with a log line: GitHub gives it a read-only
  token (the check and the comment would be refused) and runs the fork's own copy of
  the workflow file.
- ``pull_request_target`` serves forks: GitHub runs the default branch's workflow with a
  token that may write, and the shipped workflow takes benchbot's own code from the
  workflow's commit too (``github.workflow_sha``), never from the fork's base. A fork runs only when the config says ``github: {forks: true}``
  (every push; its ``fork_label`` then needs write access too), or for the one head
  commit a maintainer with write access approved by
  adding the ``fork_label`` after reviewing that very commit (a ``labeled`` event whose
  sender has an approving or commenting review on the head: that head is pinned; a later
  push is not approved). Its events for the repository's own branches are ignored
  (``pull_request`` serves those). Only the three-job workflow may take it: ``mode:
  all`` would run the fork's code in the job that holds the write token.
- Every way a fork's code runs (the label, ``forks: true``, ``/bench sha=``) needs a
  trusted base branch: a fork chooses its base, and the config is read there, so only the
  branches ``github.fork_bases`` names (default: the
  repository's default branch, as the event says) may measure one; and never with a
  ``sandbox.writable`` directory, which both arms share and jobs keep
  (``fork_trust_refusal``).
- ``issue_comment`` starting with ``/bench``: the commenter's permission is asked from
  the API (write, maintain or admin); the command is parsed; on a fork's pull request
  only ``/bench sha=<head>`` with all 40 digits of the head runs (a 7-digit prefix is
  28 bits, which a prepared commit can match), and only while the head is that commit.

``/bench bisect only=NAME`` passes the same gate (permission, the fork rules, ``sha=``)
and is pinned the same way; then the workload is checked against the config at the base
(one of its own workloads, not a suite's) and the commits between base and head (some,
on the head's first-parent line): a bisect that cannot run completes its own check as
failure and says why in its own comment, before the runner is asked for. It builds every
one of those commits, not only the head, so on a fork it runs only where ``from=`` names
the pinned base with all 40 digits: without it, the reply lists the commits (SHA and
subject, escaped) and the command that approves exactly that range.

The base and head commits are pinned here (the merge-base is resolved here too), so the
measure step builds exactly what was approved, whatever is pushed meanwhile. The gate
also decides how many machines share the comparison (the input ``shards``): its output
``shards`` is the measure jobs' matrix, ``["1/2", "2/2"]``.

Why one module of about 680 lines: every way in (a pull request, a ``/bench`` comment, a
label, a fork's push) sits beside ``admit``, the one rule they all go through, so that a
reviewer sees each caller of the door in the same file as the door.
"""

from __future__ import annotations

import dataclasses
import enum
import fnmatch
import json
from collections.abc import Callable
from typing import Protocol

from benchbot.config.config import Config
from benchbot.config.find import read_config
from benchbot.config.settings import Overrides
from benchbot.core.errors import BenchbotError, ConfigError, GitError, GithubError, UsageError
from benchbot.git import gitops
from benchbot.github import post
from benchbot.github.api import PullInfo, ReviewInfo
from benchbot.github.command import BenchCommand, CommandError, is_command, parse
from benchbot.github.env import ActionEnv
from benchbot.github.event import (
    PULL_REQUEST_ACTIONS,
    PULL_REQUEST_EVENTS,
    Comment,
    Event,
    Side,
    is_fork,
)
from benchbot.github.fetch import base_refspecs, fetch_commits
from benchbot.github.job import Job
from benchbot.github.output import Log, append_summary, first_line, write_outputs
from benchbot.report.escape import Markdown, md, md_code_span

ALLOWED_PERMISSIONS = ("admin", "write")  # the API folds maintain into write


class GateApi(post.Api, Protocol):
    """The calls the gate makes besides publishing (implemented by ``api.GitHubAPI``)."""

    def permission(self, login: str) -> str: ...
    def pull(self, number: int) -> PullInfo: ...
    def reviews(self, number: int) -> list[ReviewInfo]: ...


ApiFactory = Callable[[ActionEnv], GateApi]


@dataclasses.dataclass(frozen=True, slots=True)
class Opened:
    """A job the gate approved, the config it read for it (overridden), and the publisher
    that opened its check and comment."""

    job: Job
    config: Config
    publisher: post.Publisher


def run(action_env: ActionEnv, event: Event, api_factory: ApiFactory, log: Log) -> Opened | None:
    """Decide on the event; return the opened job, or None when nothing is to run."""
    opened: Opened | None = None
    if event.name in PULL_REQUEST_EVENTS:
        opened = _on_pull_request(action_env, event, api_factory, log)
    elif event.name == "issue_comment":
        opened = _on_comment(action_env, event, api_factory, log)
    else:
        log.line("ignored: benchbot acts on pull_request, pull_request_target and "
                 f"issue_comment, not {event.name}")
    if opened is None:
        write_outputs(action_env.output, {"run": "false"})
    return opened


# --- pull_request -----------------------------------------------------------------------


def _on_pull_request(action_env: ActionEnv, event: Event, api_factory: ApiFactory,
                     log: Log) -> Opened | None:
    if event.action not in PULL_REQUEST_ACTIONS:
        log.line(f"ignored: pull_request {event.action} (runs on {', '.join(PULL_REQUEST_ACTIONS)})")
        return None
    if event.number is None or event.base is None or event.head is None:
        raise UsageError(f"GITHUB_EVENT_PATH {action_env.event_path}: no pull_request in the payload")
    if not _serves(action_env, event, log):
        return None
    number, base, head = event.number, event.base, event.head
    try:
        config = _config(action_env, number, base, head)
    except BenchbotError as exc:
        if not event.is_fork:  # say so on the pull request; a fork's token may not write
            job = Job(number=number, base=base, head=head, config_sha=base.sha)
            _report_refusal_as_failure(api_factory(action_env), action_env, job, str(exc))
        raise
    if event.is_fork:
        why = fork_refusal(config, event) or fork_trust_refusal(config, base.ref, event.default_branch)
        if why is not None:
            _skip_fork(action_env, event, why, log)
            return None
    api = api_factory(action_env)
    admitted = admit(api, way_of(event, config), event.sender or "", number=number,
                     head=head.sha, config=config)
    if isinstance(admitted, Refusal):
        if event.is_fork:
            _skip_fork(action_env, event, admitted.why, log)
        else:
            _skip_branch(action_env, event, admitted.why, log)
        return None
    config = config.with_overrides(action_env.overrides)
    job = _pin(action_env, config, admitted, number=number, base=base, head=head,
               overrides=action_env.overrides, command=BenchCommand())
    return _open(api, action_env, job, config, log)


def _serves(action_env: ActionEnv, event: Event, log: Log) -> bool:
    """Whether this trigger is the one that serves this pull request (see the module's
    docstring); a log line (and for a fork's ``pull_request``, a notice) says why not."""
    target = event.name == "pull_request_target"
    if event.is_fork and not target:
        _skip_fork(action_env, event, Markdown(
            "its `pull_request` run holds a read-only token and the fork's own workflow "
            "file, so benchbot leaves it alone. A maintainer who has read the change can "
            "start it with `/bench sha=<the head's 40 digits>`, or with the config's "
            "fork_label on `pull_request_target`."), log)
        return False
    if target and not event.is_fork:
        log.line("ignored: pull_request_target for a branch of this repository "
                 "(the pull_request event serves those)")
        return False
    if event.action == "labeled" and not event.is_fork:
        log.line("ignored: a label on a pull request from this repository's own branch")
        return False
    if target and action_env.mode == "all":
        raise UsageError(
            "pull_request_target needs the three-job workflow (mode: gate, measure, publish): "
            "mode all would build a fork's code in the job that holds the write token")
    return True


def _skip_fork(action_env: ActionEnv, event: Event, why: Markdown, log: Log) -> None:
    """A fork's event that does not run: say so in the log, a notice and the summary."""
    repo = event.head.repo if event.head else None
    _skip(action_env, Markdown("pull request #{} comes from a fork ({}): {}").format(
        event.number, repo or "deleted", why), log)


def _skip_branch(action_env: ActionEnv, event: Event, why: Markdown, log: Log) -> None:
    """An event on the repository's own branch whose sender may not start work."""
    _skip(action_env, Markdown("pull request #{}: {}").format(event.number, why), log)


def _skip(action_env: ActionEnv, text: Markdown, log: Log) -> None:
    log.line(f"skipped: {text}")
    log.notice(text)
    append_summary(action_env.step_summary, Markdown("### benchbot: skipped\n\n{}\n").format(text))
    write_outputs(action_env.output, {"conclusion": "skipped"})


# --- who may start work: one rule for every way in -----------------------------------------


class Way(enum.Enum):
    """Every way work starts in the gate, each with its starter: the one whose permission
    ``admit`` asks. A push to the default branch (``watch.gate``) is not one of them:
    GitHub lets only people with write access push there."""

    COMMENT = "a /bench comment"  # the commenter (/bench and /bench bisect)
    BRANCH = "a pull request from this repository's own branch"  # the event's sender
    FORK_LABEL = "the fork_label on a fork's pull request"  # the labeller
    FORK_PUSH = "a fork's push with forks: true"  # the config, which approved every push


_ADMIT = object()  # only ``admit`` holds it: an Admission is proof that the rule was applied


@dataclasses.dataclass(frozen=True, slots=True)
class Admission:
    """Work the rule admitted: the way, the starter, and their permission. ``_pin`` takes
    one, so no job is pinned (and nothing queued) that did not pass ``admit``."""

    way: Way
    starter: str
    permission: str
    key: object = dataclasses.field(repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.key is not _ADMIT:
            raise TypeError("an Admission is made by gate.admit only")


def way_of(event: Event, config: Config) -> Way:
    """The way a pull request event (one ``_serves``) starts work."""
    if not event.is_fork:
        return Way.BRANCH
    if event.action == "labeled" and event.label == config.github.fork_label:
        return Way.FORK_LABEL
    return Way.FORK_PUSH


@dataclasses.dataclass(frozen=True, slots=True)
class Refusal:
    """Why ``admit`` refused: a sentence, and the starter's permission."""

    why: Markdown
    permission: str


def admit(api: GateApi, way: Way, starter: str, *, number: int, head: str = "",
          config: Config | None = None) -> Admission | Refusal:
    """The one rule for who may start work: an Admission, or why not (a sentence).

    Work queues on the benchmark runner, where a newer pending job in a concurrency group
    replaces an older one, and it runs the pull request's code: so whoever starts it
    needs write access (write, maintain or admin: the API folds maintain into write and
    triage into read), asked from the API, whichever way they start it. The one way with
    no person behind it is a fork's own push with ``forks: true``: the config approved
    every push, and that job waits in a concurrency group of its pull request's own. A
    fork's label approves, besides, only the head its labeller reviewed (approving or
    commenting), unless ``forks: true`` already approved every head.
    """
    if way is Way.FORK_PUSH:
        return Admission(way, "the config's forks: true", "config", _ADMIT)
    permission = _permission(api, starter) if starter else "none"
    label = config.github.fork_label if config is not None else None
    if permission not in ALLOWED_PERMISSIONS:
        who = starter or "someone unknown"
        if way is Way.FORK_LABEL:
            why = Markdown("the {} label was added by {}, whose permission is {}; only people "
                           "with write access approve a fork's code").format(
                md_code_span(label or ""), who, permission)
        elif way is Way.BRANCH:
            why = Markdown("started by {}, whose permission is {}; only people with write "
                           "access start a comparison (a push by one of them, or their "
                           "`/bench`, measures it)").format(who, permission)
        else:
            why = Markdown("{} from {}, whose permission is {}").format(way.value, who, permission)
        return Refusal(why, permission)
    forks = config is not None and config.github.forks
    if way is Way.FORK_LABEL and not forks and not reviewed(api.reviews(number), starter, head):
        return Refusal(Markdown(
            "the {} label was added by {}, but none of their reviews is of the head {} (it was "
            "pushed after their review, or they did not review it); a label approves the "
            "commit its labeller reviewed. Review {} (approve or comment) and add the label "
            "again, or comment {}").format(md_code_span(label or ""), starter, head[:12],
                                           head[:12], md_code_span(f"/bench sha={head}")),
            permission)
    return Admission(way, starter, permission, _ADMIT)


REVIEWED = ("APPROVED", "COMMENTED")  # a review that says its author read the commit


def reviewed(reviews: list[ReviewInfo], login: str, head: str) -> bool:
    """Whether ``login`` submitted an approving or commenting review of exactly ``head``."""
    return any(r.author.lower() == login.lower() and r.commit == head and r.state in REVIEWED
               for r in reviews)


def fork_trust_refusal(config: Config, base_ref: str,
                       default_branch: str | None) -> Markdown | None:
    """Why a fork's code may not run with the config, workflow and action of its base
    branch, or None. A fork chooses its base: an older branch may hold older settings
    (``forks: true``, ``sandbox: off``, an older workflow), so only the branches
    ``github.fork_bases`` names (default: the repository's default branch, as the event
    says) may measure a fork; and a ``sandbox.writable`` directory, shared by both arms
    and kept between jobs, is one a fork's build could leave things in for base's build
    and the next pull request."""
    trusted = config.github.fork_bases or ((default_branch,) if default_branch else ())
    if not any(fnmatch.fnmatchcase(base_ref, pattern) for pattern in trusted):
        named = (Markdown(", ").join(md_code_span(p) for p in trusted)
                 or "none (the event names no default branch)")
        return Markdown(
            "its base branch {} is not one whose config, workflow and action may run a fork's "
            "code (github.fork_bases: {}; by default the repository's default branch): a fork "
            "chooses its base, and an older branch may hold older settings").format(
            md_code_span(base_ref), named)
    if config.sandbox.writable:
        return Markdown(
            "{}:{}: sandbox.writable: a directory both arms share and jobs keep is one a "
            "fork's build could leave things in for base's build and the next pull request; "
            "benchbot does not run a fork's code with one (keep caches in the worktree)").format(
            config.path, config.sandbox.writable_line)
    return None


def fork_refusal(config: Config, event: Event) -> Markdown | None:
    """Why a fork's pull_request_target event does not run, or None when it does.

    ``forks: true`` runs every push (and the ``fork_label``, not any other label).
    ``fork_label`` approves the head commit at the moment
    the label is added (the ``labeled`` event) and no other: a push after that, or one
    made while the pull request was closed and then reopened, is a commit nobody has
    read, so a label that is merely present approves nothing.
    """
    label = config.github.fork_label
    if config.github.forks:
        if event.action == "labeled" and event.label != label:
            return Markdown("the {} label adds no commit to measure (forks: true runs every "
                            "push)").format(md_code_span(event.label or ""))
        return None
    head = event.head.sha if event.head else ""
    if label is not None:
        if event.action == "labeled" and event.label == label:
            return None
        if label in event.labels:
            return Markdown("the {} label approved an earlier head commit, not {}; remove and "
                            "add the label again, or comment {}").format(
                md_code_span(label), head[:12], md_code_span(f"/bench sha={head}"))
    return Markdown("benchbot does not run a fork's code on this runner by itself. A "
                    "maintainer who has read the change can start it with {}.").format(
        md_code_span(f"/bench sha={head}"))


# --- issue_comment ----------------------------------------------------------------------


def ignored_comment(event: Event, action_env: ActionEnv) -> str | None:
    """Why an issue_comment event is none of benchbot's business, or None when it is."""
    comment = event.comment
    if event.action != "created" or comment is None or event.number is None:
        return f"issue_comment {event.action} (only new comments are read)"
    if not event.is_pull_request:
        return f"#{event.number} is an issue, not a pull request"
    if not is_command(comment.body):
        return "the comment does not start with /bench"
    if comment.author_type == "Bot" or comment.author.lower() in _own_logins(action_env):
        return f"a comment by the bot {comment.author}"
    return None


def _on_comment(action_env: ActionEnv, event: Event, api_factory: ApiFactory,
                log: Log) -> Opened | None:
    reason = ignored_comment(event, action_env)
    if reason is not None:
        log.line(f"ignored: {reason}")
        return None
    comment, number = event.comment, event.number
    assert comment is not None and number is not None
    api = api_factory(action_env)
    replies = post.Publisher(api, number=number, head_sha="", check_name="benchbot",
                                run_url=action_env.run_url, bot_login=action_env.bot_login)
    accepted = _accept(api, replies, comment, number, log)
    if accepted is None:
        _done(replies, log)
        return None
    command, pull, admitted = accepted
    fork = is_fork(pull.head.repo, pull.base.repo)
    try:
        config = _config(action_env, number, pull.base, pull.head)
    except BenchbotError as exc:
        job = Job(number=number, base=pull.base, head=pull.head, config_sha=pull.base.sha,
                  trigger=comment.id, command=command,
                  check_name=check_name(action_env.check_name or "benchbot", command))
        _report_refusal_as_failure(api, action_env, job, str(exc))
        raise
    why = fork_trust_refusal(config, pull.base.ref, event.default_branch) if fork else None
    if why is not None:
        log.line(f"refused: /bench on the fork pull request #{number}: {first_line(why)}")
        replies.reply(post.fork_refused_reply(comment.author, why))
        replies.react(comment.id, "confused")
        _done(replies, log)
        return None
    if command.bisect:
        return _on_bisect(api, action_env, comment, command, pull, config, log, admitted,
                          replies=replies, fork=fork)
    overrides = action_env.overrides.over(command.overrides)
    try:
        config = config.with_overrides(overrides)  # e.g. only= names a workload the config lacks
    except ConfigError as exc:
        _refuse(replies, log, comment, [str(exc)])
        _done(replies, log)
        return None
    job = _pin(action_env, config, admitted, number=number, base=pull.base, head=pull.head,
               overrides=overrides, command=command, trigger=comment.id,
               requested_by=comment.author)
    return _open(api, action_env, job, config, log)


def _accept(api: GateApi, replies: post.Publisher, comment: Comment, number: int,
            log: Log) -> tuple[BenchCommand, PullInfo, Admission] | None:
    """The command and the pull request it is for, or None once a reply has said why not:
    no write permission, a command not understood, ``help``, a closed pull request, a
    fork's head not named with ``sha=``, or ``sha=`` naming another commit."""
    admitted = admit(api, Way.COMMENT, comment.author, number=number)
    if isinstance(admitted, Refusal):
        permission = admitted.permission
        log.line(f"refused: /bench from {comment.author}, whose permission is {permission}")
        if not replies.reply_once(post.reader_marker(comment.author),
                                  post.permission_reply(comment.author, permission)):
            log.line(f"not answered again: {comment.author} was answered on #{number} before")
        return None
    replies.react(comment.id, "eyes")
    try:
        command = parse(comment.body)
    except CommandError as exc:
        _refuse(replies, log, comment, list(exc.problems))
        return None
    if command.help:
        replies.reply(post.help_reply(comment.author))
        return None
    pull = api.pull(number)
    head = pull.head.sha
    if pull.state != "open":
        _refuse(replies, log, comment, [f"#{number} is {pull.state}; /bench measures open pull requests"])
        return None
    fork = is_fork(pull.head.repo, pull.base.repo)
    if fork and not command.pins:
        given = "without sha=" if command.sha is None else f"with sha={command.sha}, not all 40 digits"
        log.line(f"refused: /bench on the fork pull request #{number} {given}")
        replies.reply(post.fork_needs_sha_reply(comment.author, head, command))
        replies.react(comment.id, "confused")
        return None
    if command.sha is not None and not command.matches(head):
        log.line(f"refused: /bench sha={command.sha} but the head is {head[:12]}")
        replies.reply(post.sha_mismatch_reply(comment.author, command.sha, head, command))
        replies.react(comment.id, "confused")
        return None
    if fork:
        log.line(f"running the fork pull request #{number} at {head[:12]}: "
                 f"{comment.author} named it with /bench sha=")
    return command, pull, admitted


def check_name(name: str, command: BenchCommand) -> str:
    """The check's name: the config's (or the input's), and for a bisect ``NAME / bisect``,
    a check of its own that never takes the comparison's place."""
    return f"{name} / bisect" if command.bisect else name


def _on_bisect(api: GateApi, action_env: ActionEnv, comment: Comment, command: BenchCommand,
               pull: PullInfo, config: Config, log: Log, admitted: Admission, *,
               replies: post.Publisher,
               fork: bool) -> Opened | None:
    """``/bench bisect only=NAME``: pinned as a comparison is (good: the base the config's
    ``base`` names; bad: the head), with a check, a comment and an artifact of its own
    and one machine. The config's settings and the action's inputs measure each step;
    ``budget=`` is the whole search's (``Job.command``). On a fork it runs only for the
    range ``from=`` approves (``_unapproved_range``)."""
    assert command.workload is not None  # the parser requires only=NAME
    overrides = action_env.overrides.over(Overrides(only=(command.workload,)))
    job = _pin(action_env, config, admitted, number=pull.number, base=pull.base, head=pull.head,
               overrides=overrides, command=command, trigger=comment.id,
               requested_by=comment.author)
    job = dataclasses.replace(job, check_name=check_name(config.status.name, command),
                              comment=True, shards=1)
    try:
        config = _bisect_config(config, overrides, command.workload)
        commits = _bisect_commits(action_env, job)
    except BenchbotError as exc:
        log.line(f"refused: /bench bisect from {comment.author}: {first_line(str(exc))}")
        _report_refusal_as_failure(api, action_env, job, str(exc))
        return None
    if (fork or command.base is not None) and command.base != job.base.sha:
        log.line(f"refused: /bench bisect on #{pull.number} without from= naming the base "
                 f"{job.base.sha[:12]}: the reply lists the {len(commits) - 1} commits to approve")
        replies.reply(post.bisect_range_reply(comment.author, commits, job.head.sha, command))
        replies.react(comment.id, "confused")
        _done(replies, log)
        return None
    return _open(api, action_env, job, config, log)


def _bisect_config(config: Config, overrides: Overrides, workload: str) -> Config:
    """The config with only the workload, or a ConfigError: no such workload, or a suite's."""
    config = config.with_overrides(overrides)
    if config.suites or len(config.workloads) != 1:
        raise ConfigError(f"{config.path}: `{workload}` is a suite's: /bench bisect follows one "
                          "workload of the config's own `workloads:`")
    return config


def _bisect_commits(action_env: ActionEnv, job: Job) -> list[tuple[str, str, str]]:
    """The commits a bisect builds: the pinned base, then the head's first-parent line
    up to the head, as (sha, tree, subject); a GitError unless that line leads back to
    the base with at least one commit between them (what the bisect searches)."""
    repo = gitops.toplevel(action_env.workspace)
    base, head = job.base.sha, job.head.sha
    if base == head:
        raise GitError(f"nothing to bisect: the head {head[:12]} is the base this pull "
                       "request is compared with; it adds no commit")
    commits = gitops.first_parent_commits(repo, base, head)
    if not gitops.is_ancestor(repo, base, head) or len(commits) < 2 or \
            gitops.git(repo, "rev-parse", f"{commits[1][0]}^1") != base:
        raise GitError(f"cannot bisect: the base {base[:12]} is not on the first-parent line "
                       f"of the head {head[:12]} (the branch merged its base in, or was "
                       "rebased onto another); run `benchbot bisect` on the commits to search")
    return commits


def _refuse(pub: post.Publisher, log: Log, comment: Comment, problems: list[str]) -> None:
    """A /bench that was not understood: reply with the problems, react confused, run nothing."""
    log.line(f"refused: /bench from {comment.author} was not understood ({len(problems)} problems)")
    pub.reply(post.refusal_reply(comment.author, problems))
    pub.react(comment.id, "confused")


def _permission(api: GateApi, login: str) -> str:
    try:
        return api.permission(login)
    except GithubError as exc:
        if exc.status != 404:  # GitHub answers 404 for a user with no access at all
            raise
        return "none"


def _own_logins(action_env: ActionEnv) -> set[str]:
    logins = {post.DEFAULT_BOT_LOGIN}
    if action_env.bot_login:
        logins.add(action_env.bot_login.lower())
    return logins


def _done(pub: post.Publisher, log: Log) -> None:
    """Nothing runs; a failed reply still fails the step, naming the call."""
    if pub.failures:
        for failure in pub.failures:
            log.line(f"publishing: {failure}")
        raise GithubError(f"{len(pub.failures)} GitHub call(s) failed; first: {pub.failures[0]}")


# --- pinning and opening ----------------------------------------------------------------


def _config(action_env: ActionEnv, number: int, base: Side, head: Side) -> Config:
    """Fetch both commits (the merge-base needs the head) and read the config at the base."""
    repo = fetch_commits(action_env, {base.sha: base_refspecs(base),
                                      head.sha: [f"+refs/pull/{number}/head"]})
    return action_env.with_inputs(read_config(repo, base.sha, action_env.config_path))


def _pin(action_env: ActionEnv, config: Config, admitted: Admission, *, number: int,
         base: Side, head: Side,
         overrides: Overrides, command: BenchCommand, trigger: int | None = None,
         requested_by: str | None = None) -> Job:
    """The job with its commits fixed: the merge-base (or the base tip) and the head; only
    for work the rule admitted (``admit``)."""
    if not isinstance(admitted, Admission):
        raise TypeError("nothing is pinned that gate.admit did not admit")
    base_sha = base.sha
    if config.base == "merge-base":
        base_sha = gitops.merge_base(gitops.toplevel(action_env.workspace), base.sha, head.sha)
    return Job(
        number=number, base=dataclasses.replace(base, sha=base_sha), head=head,
        config_sha=base.sha, config_path=action_env.config_path, overrides=overrides,
        command=command, trigger=trigger, requested_by=requested_by,
        check_name=config.status.name, fail_on=config.status.fail_on,
        comment=config.github.comment, shards=action_env.shards or 1,
    )


def _open(api: post.Api, action_env: ActionEnv, job: Job, config: Config, log: Log) -> Opened:
    """Create the check (in progress) and the "measuring…" comment; hand the job on."""
    pub = post.publisher_for(api, action_env, job)
    short = job.head.sha[:12]
    what = f"bisect of {job.command.workload}" if job.bisect else "#" + str(job.number)
    log.line(f"approved: {what}, base {job.base.sha[:12]}, head {short}")
    try:
        if job.bisect:
            pub.start_check(f"benchbot: bisecting {job.command.workload} ({short})", Markdown(
                "Searching the commits from {} (base) to {} (head) for the one that changed "
                "{}.").format(job.base.sha[:12], short, md_code_span(job.command.workload or "")))
        else:
            pub.start_check(f"benchbot: measuring {short}", Markdown(
                "Comparing {} (base) with {} (head).").format(job.base.sha[:12], short))
        phase = "starting"
        if action_env.mode == "gate":
            phase = ("waiting for the benchmark runner" if job.shards == 1 else
                     f"waiting for {job.shards} benchmark runners ({job.shards} shards)")
        pub.show(post.job_running_body(job, phase, action_env.run_url))
        _require_opened(pub, log)
        check, comment_id, identity = pub.state()
        job = dataclasses.replace(job, check=check, comment_id=comment_id, identity=identity)
        write_outputs(action_env.output, {
            "run": "true", "job": job.to_json(), "base-sha": job.base.sha,
            "head-sha": job.head.sha, "number": str(job.number),
            "shards": json.dumps([str(s) for s in job.shard_list]),  # the measure matrix
        })
    except BaseException as exc:
        _not_started(action_env)
        if pub.check_started:
            pub.finish_check("failure", f"{_name(job)}: could not start",
                             Markdown("The gate failed: {}").format(
                                 first_line(str(exc) or type(exc).__name__)),
                             artifact=action_env.artifact, description="could not start")
        raise
    return Opened(job=job, config=config, publisher=pub)


def _require_opened(pub: post.Publisher, log: Log) -> None:
    """Measure only where the result can be published: a check (or status) that could
    not be created, or a comment that could not be written, stops the job here, before
    the benchmark runner is asked for (a check never created cannot be completed)."""
    for failure in pub.failures:
        log.line(f"publishing: {failure}")
    if pub.failures or not pub.check_started:
        first = pub.failures[0] if pub.failures else "no check was created"
        raise GithubError(f"not measuring: the check and the comment could not be opened "
                          f"({first})")


def _not_started(action_env: ActionEnv) -> None:
    """Tell the workflow that nothing is to be measured (best effort: the error that
    stopped the gate is the one to report)."""
    try:
        write_outputs(action_env.output, {"run": "false"})
    except BenchbotError:
        pass


def _report_refusal_as_failure(api: post.Api, action_env: ActionEnv, job: Job, message: str) -> None:
    """The config at the base could not be read: fail a check and say why in the comment."""
    pub = post.publisher_for(api, action_env, job)
    pub.start_check(f"{_name(job)}: could not run", md(first_line(message)))
    pub.show(post.error_body(message, run_url=action_env.run_url, bisect=job.bisect))
    pub.finish_check("failure", f"{_name(job)}: could not run", post.error_text(message),
                     artifact=action_env.artifact, description=f"could not run: {first_line(message)}")
    if job.trigger is not None:
        pub.react(job.trigger, "confused")
    append_summary(action_env.step_summary, Markdown("### {}: could not run\n\n{}\n").format(
        _name(job), post.error_text(message)))
    write_outputs(action_env.output, {"conclusion": "failure"})


def _name(job: Job) -> str:
    return "benchbot bisect" if job.bisect else "benchbot"
