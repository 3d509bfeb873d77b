"""``benchbot github``: what the Action does for each event.

- ``pull_request`` (opened, synchronize, reopened): compare the pull request's base
  (by default the merge-base of the base branch and the head) with its head, unless
  the head is in a fork and the config does not allow forks (then: a log line, a
  notice and a job-summary line, nothing else: the token of a fork's run may not write).
- ``issue_comment`` (created) on a pull request, starting with ``/bench``: ask the API
  whether the commenter may write; if so react with eyes, parse the options, compare
  and react rocket (or confused). A refusal is a short reply, and nothing runs.
- Anything else is ignored with a log line.

The config is read at the base revision (``--config``/the ``config`` input names a
path *in the repository*, also read at the base revision), so a pull request cannot
change how it is judged. The results file, the report and the job summary are written
before anything is published, so a publishing failure loses nothing measured.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO

from benchbot import engine, gitops, results
from benchbot.config import Config, apply_overrides, parse_config
from benchbot.errors import BenchbotError, ConfigError, GithubError, UsageError
from benchbot.github import publish
from benchbot.github.api import GitHubAPI, PullInfo
from benchbot.github.command import BenchCommand, CommandError, is_command, parse
from benchbot.github.event import (
    PULL_REQUEST_ACTIONS,
    Comment,
    Event,
    Settings,
    Side,
    is_fork,
    load_event,
)
from benchbot.github.fetch import ensure_commits
from benchbot.model import OUTCOMES
from benchbot.progress import PHASE_NAMES, TerminalReporter
from benchbot.report import render_results

ALLOWED_PERMISSIONS = ("admin", "write")  # the API folds maintain into write


class ActionApi(publish.Api, Protocol):
    """The calls the action makes besides publishing (implemented by ``api.GitHubAPI``)."""

    def permission(self, login: str) -> str: ...
    def pull(self, number: int) -> PullInfo: ...


ApiFactory = Callable[[Settings], ActionApi]


def default_api(settings: Settings) -> ActionApi:
    """The real adapter, configured from the environment."""
    return GitHubAPI(token=settings.token, api_url=settings.api_url,
                     repository=settings.repository, throttle=settings.throttle)


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """One comparison to run on a pull request."""

    number: int
    base: Side  # the base branch's tip; the config is read here
    head: Side
    command: BenchCommand = field(default_factory=BenchCommand)
    trigger: int | None = None  # the /bench comment's id
    requested_by: str | None = None


def main(env: Mapping[str, str], *, err: TextIO, api_factory: ApiFactory = default_api) -> int:
    """Do what the event asks; return the exit status (errors are raised as BenchbotError)."""
    settings = Settings.from_env(env)
    event = load_event(settings)
    log = _Log(err)
    if event.name == "pull_request":
        return _on_pull_request(settings, event, log, api_factory)
    if event.name == "issue_comment":
        return _on_comment(settings, event, log, api_factory)
    log.line(f"ignored: benchbot acts on pull_request and issue_comment, not {event.name}")
    return 0


class _Log:
    """Lines for the job's log; never carries text from a comment."""

    def __init__(self, err: TextIO) -> None:
        self.err = err

    def line(self, text: str) -> None:
        self.err.write(f"benchbot: {text}\n")
        self.err.flush()

    def notice(self, text: str) -> None:
        self.err.write(f"::notice title=benchbot::{text}\n")
        self.err.flush()


def _on_pull_request(settings: Settings, event: Event, log: _Log, api_factory: ApiFactory) -> int:
    if event.action not in PULL_REQUEST_ACTIONS:
        wanted = ", ".join(PULL_REQUEST_ACTIONS)
        log.line(f"ignored: pull_request {event.action} (runs on {wanted})")
        return 0
    if event.number is None or event.base is None or event.head is None:
        raise UsageError(f"GITHUB_EVENT_PATH {settings.event_path}: no pull_request in the payload")
    job = Job(number=event.number, base=event.base, head=event.head)
    try:
        config = _base_config(settings, job.base)
    except BenchbotError as exc:
        if not event.is_fork:  # say so on the pull request; a fork's token may not write
            pub = _publisher(api_factory(settings), settings, job)
            _publish_error(settings, pub, str(exc), trigger=None, log=log)
        raise
    if event.is_fork and not fork_allowed(config, event.labels):
        text = (f"pull request #{event.number} comes from a fork ({event.head.repo or 'deleted'}); "
                "benchbot does not run a fork's code on this runner by itself. A maintainer can "
                "start it with a `/bench` comment.")
        log.line(f"skipped: {text}")
        log.notice(text)
        _append(settings.step_summary, f"### benchbot: skipped\n\n{text}\n")
        write_outputs(settings.output, {"conclusion": "skipped"})
        return 0
    return run_job(settings, job, config, _publisher(api_factory(settings), settings, job), log)


def fork_allowed(config: Config, labels: tuple[str, ...]) -> bool:
    """Whether a fork's pull request runs without a /bench: configured, or labelled."""
    label = config.github.fork_label
    return config.github.forks or (label is not None and label in labels)


def ignored_comment(event: Event, settings: Settings) -> str | None:
    """Why an issue_comment event is none of benchbot's business, or None when it is."""
    comment = event.comment
    if event.action != "created" or comment is None or event.number is None:
        return f"issue_comment {event.action} (only new comments are read)"
    if not event.is_pull_request:
        return f"#{event.number} is an issue, not a pull request"
    if not is_command(comment.body):
        return "the comment does not start with /bench"
    if comment.author_type == "Bot" or comment.author.lower() in _own_logins(settings):
        return f"a comment by the bot {comment.author}"
    return None


def _on_comment(settings: Settings, event: Event, log: _Log, api_factory: ApiFactory) -> int:
    reason = ignored_comment(event, settings)
    if reason is not None:
        log.line(f"ignored: {reason}")
        return 0
    comment, number = event.comment, event.number
    assert comment is not None and number is not None
    api = api_factory(settings)
    pub = publish.Publisher(api, number=number, head_sha="",
                            check_name=settings.check_name or "benchbot",
                            run_url=settings.run_url, bot_login=settings.bot_login)
    permission = _permission(api, comment.author)
    if permission not in ALLOWED_PERMISSIONS:
        log.line(f"refused: /bench from {comment.author}, whose permission is {permission}")
        pub.reply(publish.permission_reply(comment.author, permission))
        return _done(pub, log)
    pub.react(comment.id, "eyes")
    try:
        command = parse(comment.body)
    except CommandError as exc:
        return _refuse(pub, log, comment, list(exc.problems))
    if command.help:
        pub.reply(publish.help_reply(comment.author))
        return _done(pub, log)
    try:
        pull = api.pull(number)
        pub.head_sha = pull.head.sha
        config = _base_config(settings, pull.base)
    except BenchbotError as exc:
        _publish_error(settings, pub, str(exc), trigger=comment.id, log=log)
        raise
    try:
        apply_overrides(config, only=command.only)  # names that are not in the config
    except ConfigError as exc:
        return _refuse(pub, log, comment, [str(exc)])
    job = Job(number=number, base=pull.base, head=pull.head, command=command,
              trigger=comment.id, requested_by=comment.author)
    if is_fork(pull.head.repo, pull.base.repo):
        log.line(f"running a fork's pull request #{number}: {comment.author} asked with /bench")
    return run_job(settings, job, config, pub, log)


def _refuse(pub: publish.Publisher, log: _Log, comment: Comment, problems: list[str]) -> int:
    """A /bench that was not understood: reply with the problems, react confused, run nothing."""
    log.line(f"refused: /bench from {comment.author} was not understood ({len(problems)} problems)")
    pub.reply(publish.refusal_reply(comment.author, problems))
    pub.react(comment.id, "confused")
    return _done(pub, log)


def _permission(api: ActionApi, login: str) -> str:
    try:
        return api.permission(login)
    except GithubError as exc:
        if exc.status != 404:  # GitHub answers 404 for a user with no access at all
            raise
        return "none"


def _own_logins(settings: Settings) -> set[str]:
    logins = {publish.DEFAULT_BOT_LOGIN}
    if settings.bot_login:
        logins.add(settings.bot_login.lower())
    return logins


def _base_refspecs(base: Side) -> list[str]:
    return [f"+refs/heads/{base.ref}:refs/remotes/origin/{base.ref}"] if base.ref else []


def load_config(settings: Settings, repo: Path, base_sha: str) -> Config:
    """The config at the base revision, with the action's inputs put over it."""
    root = gitops.toplevel(repo)
    if settings.config_path:
        path = settings.config_path.removeprefix("./")
        text = gitops.show_file(root, base_sha, path)
        if text is None:
            raise ConfigError(
                f"{path}: not found at the base revision {base_sha[:12]}; benchbot reads its "
                "config from the base branch, so that a pull request cannot change how it is "
                "judged: commit it there first (the path is relative to the repository root)"
            )
        config = parse_config(text, path=path)
    else:
        request = engine.Request(repo=root, base=base_sha, head=base_sha)
        config = engine.load_request_config(request, root, base_sha)
    status = dataclasses.replace(
        config.status,
        fail_on=settings.fail_on if settings.fail_on is not None else config.status.fail_on,
        name=settings.check_name or config.status.name,
    )
    comment = settings.comment if settings.comment is not None else config.github.comment
    github = dataclasses.replace(config.github, comment=comment)
    return dataclasses.replace(config, status=status, github=github)


class _Progress(engine.Reporter):
    """Forwards progress to the log, and each new phase to the comment and the check."""

    def __init__(self, log: TextIO, show: Callable[[str], None]) -> None:
        self._terminal = TerminalReporter(log, tty=False)
        self._show = show
        self._built = False

    def phase(self, name: str, workloads: int, runs: int) -> None:
        self._terminal.phase(name, workloads, runs)
        self._show(f"phase: {PHASE_NAMES.get(name, name)}, {workloads} workloads, {runs} runs")

    def progress(self, phase: str, workload: str, done: int, planned: int) -> None:
        self._terminal.progress(phase, workload, done, planned)

    def note(self, message: str) -> None:
        self._terminal.note(message)
        if not self._built and message.startswith("building"):
            self._built = True
            self._show("phase: building base and head")


def _publisher(api: publish.Api, settings: Settings, job: Job) -> publish.Publisher:
    return publish.Publisher(api, number=job.number, head_sha=job.head.sha,
                             check_name=settings.check_name or "benchbot",
                             run_url=settings.run_url, bot_login=settings.bot_login)


def _base_config(settings: Settings, base: Side) -> Config:
    """Fetch the base commit if it is missing and read the config there."""
    ensure_commits(settings.workspace, {base.sha: _base_refspecs(base)},
                   token=settings.token, server_url=settings.server_url)
    return load_config(settings, settings.workspace, base.sha)


def run_job(settings: Settings, job: Job, config: Config, pub: publish.Publisher,
            log: _Log) -> int:
    """Fetch, compare, write the files, publish; return the exit status."""
    pub.head_sha, pub.check_name = job.head.sha, config.status.name
    pub.comment_enabled = config.github.comment
    try:
        doc = _measure(settings, job, config, pub, log)
    except BenchbotError as exc:
        _publish_error(settings, pub, str(exc), trigger=job.trigger, log=log)
        raise
    except KeyboardInterrupt:  # the job was cancelled: do not leave the check in progress
        _publish_error(settings, pub, "cancelled before the comparison finished",
                       trigger=job.trigger, log=log, conclusion="cancelled")
        raise
    report = write_files(settings, doc)
    log.line(f"results written to {settings.results_dir / 'results.json'}")
    summary = doc["summary"]
    conclusion = summary["conclusion"]
    pub.show(publish.final_body(report, artifact=settings.artifact, run_url=settings.run_url))
    pub.finish_check(conclusion, f"benchbot: {publish.headline(summary)}", report,
                     artifact=settings.artifact,
                     description=publish.status_description(summary, conclusion))
    if job.trigger is not None:
        pub.react(job.trigger, "rocket")
    return _done(pub, log, written=True)


def _measure(settings: Settings, job: Job, config: Config, pub: publish.Publisher,
             log: _Log) -> dict[str, Any]:
    repo = gitops.toplevel(settings.workspace)
    ensure_commits(repo, {job.head.sha: [f"+refs/pull/{job.number}/head"]},
                   token=settings.token, server_url=settings.server_url)
    base_sha = job.base.sha
    if config.base == "merge-base":
        base_sha = gitops.merge_base(repo, job.base.sha, job.head.sha)
    command = f"/bench {job.command.describe()}".strip()
    request_line = f"Requested by @{job.requested_by}: `{command}`" if job.requested_by else None

    def show(phase: str) -> None:
        body = publish.running_body(base_sha=base_sha, head_sha=job.head.sha, base_ref=job.base.ref,
                                    head_ref=job.head.ref, phase=phase, run_url=settings.run_url,
                                    request=request_line)
        pub.update_check("benchbot: measuring", body.replace(publish.MARKER + "\n", ""))
        pub.show(body)

    log.line(f"comparing {base_sha[:12]} (base) with {job.head.sha[:12]} (head) for #{job.number}")
    pub.start_check("benchbot: measuring", f"Comparing {base_sha[:12]} with {job.head.sha[:12]}.")
    show("phase: starting")
    runs = job.command.runs if job.command.runs is not None else settings.runs
    doc = engine.compare(
        engine.Request(
            repo=repo, base=base_sha, head=job.head.sha, config=config, runs=runs,
            only=job.command.only, parity=job.command.parity, confirm=job.command.confirm,
            aa=job.command.aa, repository=settings.repository, resolve_merge_base=False,
        ),
        reporter=_Progress(log.err, show),
    )
    doc["base"]["ref"] = job.base.ref or base_sha
    doc["head"]["ref"] = job.head.ref or job.head.sha
    return doc


def _publish_error(settings: Settings, pub: publish.Publisher, message: str, *,
                   trigger: int | None, log: _Log, conclusion: str = "failure") -> None:
    """The comparison could not run: say so everywhere; the caller lets the error go on."""
    first = message.splitlines()[0] if message else "error"
    _append(settings.step_summary, f"### benchbot: could not run\n\n```text\n{message}\n```\n")
    write_outputs(settings.output, {"conclusion": conclusion})
    pub.show(publish.error_body(message, run_url=settings.run_url))
    if pub.head_sha:
        if not pub.check_started:
            pub.start_check("benchbot: could not run", first)
        pub.finish_check(conclusion, "benchbot: could not run", f"```text\n{message}\n```",
                         artifact=settings.artifact, description=f"could not run: {first}")
    if trigger is not None:
        pub.react(trigger, "confused")
    for failure in pub.failures:
        log.line(f"publishing: {failure}")


def _done(pub: publish.Publisher, log: _Log, *, written: bool = False) -> int:
    if not pub.failures:
        return 0
    for failure in pub.failures:
        log.line(f"publishing: {failure}")
    where = " The results file and the job summary hold everything measured." if written else ""
    count = len(pub.failures)
    raise GithubError(f"{count} GitHub call(s) failed; first: {pub.failures[0]}.{where}")


def write_files(settings: Settings, doc: dict[str, Any]) -> str:
    """Write the results file, the report, the job summary and the outputs; return the report."""
    out = settings.results_dir
    results.save(out / "results.json", doc)
    report = render_results(doc, "markdown", run_url=settings.run_url, command_style="bench")
    results.write_atomic(out / "report.md", report)
    _append(settings.step_summary, report)
    summary = doc["summary"]
    values = {"conclusion": summary["conclusion"], "results": str(out / "results.json"),
              "report": str(out / "report.md")}
    values.update({o: str(summary[o]) for o in OUTCOMES})
    write_outputs(settings.output, values)
    return report


def _append(path: Path | None, text: str) -> None:
    if path is None:
        return
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text if text.endswith("\n") else text + "\n")


def write_outputs(path: Path | None, values: Mapping[str, str]) -> None:
    """Append step outputs in the delimiter form, safe for any value (GITHUB_OUTPUT)."""
    if path is None:
        return
    with open(path, "a", encoding="utf-8") as fh:
        for name, value in values.items():
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            fh.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
