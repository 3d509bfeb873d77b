"""A push to the default branch, watched: the push measured as one step of the branch's
history, kept on a branch of its own with its page, and an issue for what changed
(docs/github.md, "Watching the default branch").

The same three jobs as a pull request, the same trust zones:

- **gate** (GitHub-hosted): a push to the repository's default branch only (the
  payload's ``repository.default_branch``), not one that created or deleted it; the tips
  before and after pinned, the config read at the one before (as a pull request's at its
  base), the first-parent commits between listed; the hand-over is a ``PushJob``. Whoever
  could push there is a writer: nothing else is asked.
- **measure** (the benchmark machine, ``contents: read``): the tip after against the tip
  before as one step (``history.step``, measured to the history's precision), in the
  sandbox; when it calls a change and the push brought several first-parent commits,
  ``bisect`` names the commit, for each workload called (at most ``MAX_BISECTS``). It
  leaves the step's record (``history.json``), the results and the bisect documents in the
  results directory, uploaded as ``<artifact>-history``; it publishes nothing.
- **publish** (GitHub-hosted, ``contents: write`` and ``issues: write``): the artifact is
  untrusted (the measured code ran on that machine): the record is checked against the
  store's schema and the pinned tips, each bisect document against its schema, the tips
  and a workload the step called. The branch's store is read through the API (one
  archive), the record added, the page rebuilt from the whole store, and both written in
  one commit through the Git Data API, moving the branch only from the tip it read (never
  forced). A step or drift opens, or updates, one issue (label ``benchbot``) that names the
  commits and the figures; subjects and names are escaped in it and in the page.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import secrets
import tarfile
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from benchbot.bisect import bisectdoc, search
from benchbot.config.config import Config
from benchbot.config.find import read_config
from benchbot.config.settings import Overrides
from benchbot.core import codec, files
from benchbot.core.errors import BenchbotError, GitError, ResultsError, UsageError
from benchbot.github import artifact as artifact_files
from benchbot.github import limits
from benchbot.github.api import BranchHead
from benchbot.github.env import ActionEnv, check_branch
from benchbot.github.event import Event
from benchbot.github.fetch import fetch_commits
from benchbot.github.measure import errors_written, write_results
from benchbot.github.output import ERROR, Log, append_summary, first_line, write_outputs
from benchbot.history import composed, historydoc, walk
from benchbot.history.historydoc import CommitRecord
from benchbot.measure import lab
from benchbot.measure.progress import TerminalReporter
from benchbot.report import bisect as bisect_report
from benchbot.report import history as page
from benchbot.report.escape import Markdown, md_code_span, md_url, require
from benchbot.report.format import change

if TYPE_CHECKING:
    from benchbot.github.api import IssueInfo
    from benchbot.measure.engine import Reporter


class HistoryApi(Protocol):
    """The calls publishing a push makes (implemented by ``api.HistoryApi``)."""

    def branch_head(self, branch: str) -> BranchHead | None: ...
    def archive(self, commit: str) -> bytes: ...
    def commit_files(self, branch: str, head: BranchHead | None, files: dict[str, str],
                     message: str) -> str: ...
    def issues(self, label: str) -> list[IssueInfo]: ...
    def create_issue(self, title: str, body: str, labels: tuple[str, ...]) -> IssueInfo: ...
    def edit_issue(self, number: int, *, title: str, body: str) -> None: ...

PUSH_JOB_VERSION = 1
ZERO = "0" * 40
MARKER = "<!-- benchbot:history -->"  # the issue's first line: found by it and its author
LABEL = "benchbot"
STORE = "commits"  # the store's folder on the branch
PAGE = "index.html"
RECORD = "history.json"  # the step's record in the results directory
MAX_BISECTS = 3  # workloads a push's step called that are bisected
ISSUE_LIMIT = 65_536
_SHA = re.compile(r"[0-9a-f]{40}")
_RECORD_PATH = re.compile(rf"[^/]+/{STORE}/([0-9a-f]{{40}})\.json")  # in the branch's archive


@dataclass(frozen=True, slots=True, kw_only=True)
class PushJob:
    """A push the gate approved: the tips before and after and the first-parent commits
    after the one up to the other, pinned."""

    version: int = PUSH_JOB_VERSION
    kind: Literal["push"] = "push"
    ref: str
    before: str
    after: str
    commits: tuple[str, ...]  # first-parent commits after ``before`` up to ``after``
    config_path: str | None = None
    overrides: Overrides = field(default_factory=Overrides)
    branch: str  # the history branch

    def __post_init__(self) -> None:
        for name, sha in (("before", self.before), ("after", self.after),
                          *(("commits", c) for c in self.commits)):
            if not _SHA.fullmatch(sha):
                raise ValueError(f"{name}: not a full commit SHA")
        if not self.commits or self.commits[-1] != self.after:
            raise ValueError("commits: must end with after")
        check_branch(self.branch)

    def to_json(self) -> str:
        return json.dumps(codec.encode(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> PushJob:
        """The gate's hand-over; anything malformed is a UsageError naming the field."""
        try:
            return codec.decode(cls, json.loads(text))
        except (json.JSONDecodeError, RecursionError, codec.DecodeError, TypeError,
                ValueError) as exc:
            message = " ".join(str(exc).split())[:200]
            raise UsageError(f"BENCHBOT_JOB (input job): not a push's job: {message}") from None


def is_push_job(text: str | None) -> bool:
    """Whether a hand-over is a push's (``kind: push``)."""
    try:
        data = json.loads(text or "")
    except (json.JSONDecodeError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("kind") == "push"


# --- gate ----------------------------------------------------------------------------------


def gate(action_env: ActionEnv, event: Event, log: Log) -> PushJob | None:
    """Pin a push to the default branch; None (and a log line) for any other push."""
    push = event.push
    if push is None:
        raise UsageError(f"GITHUB_EVENT_PATH {action_env.event_path}: no push in the payload")
    default = push.default_branch
    if default is None or push.ref != f"refs/heads/{default}":
        log.line(f"ignored: a push to {push.ref[:100]}; benchbot watches the default branch"
                 f" ({default or 'unknown'})")
        return None
    if push.before == ZERO or push.after == ZERO:
        log.line(f"ignored: the push {'created' if push.before == ZERO else 'deleted'} "
                 f"{default}: there is no step to measure (the next push is one)")
        return None
    repo = fetch_commits(action_env, _wants(push.ref, push.before, push.after))
    read_config(repo, push.before, action_env.config_path)  # a broken config stops here
    try:
        line = lab.first_parent_line(repo, push.before, push.after,
                                        names=(push.before[:12], push.after[:12]))
    except GitError as exc:
        text = (f"the push to {default} rewrote it ({first_line(str(exc))}): nothing measured; "
                "the history goes on from the next push")
        log.line(f"skipped: {text}")
        log.notice(text)
        append_summary(action_env.step_summary,
                       Markdown("### benchbot history: skipped\n\n{}\n").format(text))
        return None
    job = PushJob(ref=push.ref, before=push.before, after=push.after,
                  commits=tuple(c[0] for c in line[1:]), config_path=action_env.config_path,
                  overrides=action_env.overrides, branch=action_env.history_branch)
    log.line(f"approved: the push to {default}, {push.before[:12]}..{push.after[:12]} "
             f"({len(job.commits)} first-parent commits)")
    write_outputs(action_env.output, {
        "run": "true", "job": job.to_json(), "base-sha": job.before, "head-sha": job.after,
        "shards": json.dumps(["1/1"])})
    return job


def _wants(ref: str, *shas: str) -> dict[str, list[str]]:
    branch = ref.removeprefix("refs/heads/")
    return {sha: [f"+{ref}:refs/remotes/origin/{branch}"] for sha in shas}


# --- measure -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Step:
    """What the measure job made of a push: the step's record, and its bisects."""

    record: CommitRecord
    bisects: tuple[bisectdoc.BisectResults, ...] = ()


def artifact(action_env: ActionEnv) -> str:
    return f"{action_env.artifact}-history"


def measure(action_env: ActionEnv, job: PushJob, log: Log, *, source_env: Mapping[str, str],
            reporter: Reporter | None = None, config: Config | None = None) -> Step:
    """Measure the push as one step, bisect what it called; the results directory."""
    write_outputs(action_env.output, {"artifact": artifact(action_env)})
    progress = reporter or TerminalReporter(log.err, tty=False)
    with errors_written(action_env.results_dir, "cancelled before the push was measured"):
        repo = fetch_commits(action_env, _wants(job.ref, job.before, job.after))
        if config is None:
            read = read_config(repo, job.before, job.config_path or action_env.config_path)
            config = action_env.with_inputs(read).with_overrides(job.overrides)
        seed = config.seed if config.seed is not None else secrets.randbits(31)
        log.line(f"measuring the push {job.before[:12]}..{job.after[:12]} as one step")
        record, doc = walk.step(repo, job.before, job.after, config, seed=seed,
                                   repository=action_env.repository, require_sandbox=True,
                                   reporter=progress, source_env=source_env)
        record = dataclasses.replace(record, repository=action_env.repository)
        out = action_env.results_dir
        files.write_text(out / RECORD, historydoc.dumps(record))
        if doc is not None:
            write_results(action_env, doc, artifact=artifact(action_env))
        found = []
        if len(job.commits) > 1:
            own = {w.name for w in config.workloads if w.suite is None}
            for k, name in enumerate([n for n in called(record) if n in own][:MAX_BISECTS], 1):
                log.line(f"bisecting {name} over the push's {len(job.commits)} commits")
                done = search.bisect(search.Request(
                    repo=repo, good=job.before, bad=job.after, workload=name, config=config,
                    repository=action_env.repository, require_sandbox=True, seed=seed + k),
                    reporter=progress, source_env=source_env)
                bisectdoc.save(out / f"bisect-{k}.json", done)
                found.append(done)
    return Step(record=record, bisects=tuple(found))


def called(record: CommitRecord) -> list[str]:
    """The workloads whose own verdict in the step is slower or faster."""
    return [w.name for w in record.workloads if w.outcome in ("slower", "faster")]


# --- publish -------------------------------------------------------------------------------


def read_artifact(action_env: ActionEnv, job: PushJob) -> Step:
    """The measure job's record and bisects, each checked against its schema, the pinned
    tips and the step; a ResultsError (one line) for anything else."""
    directory = action_env.results_dir
    nested = directory / artifact(action_env)
    if not (directory / RECORD).is_file() and nested.is_dir():
        directory = nested
    if not (directory / RECORD).is_file():
        if (directory / ERROR).is_file():
            try:
                said = artifact_files.error_file(directory / ERROR)[0]
            except ResultsError as exc:
                said = f"its error file cannot be read: {exc}"
            raise ResultsError(f"the push was not measured: {first_line(said)[:2000]}")
        word = action_env.measure_result or "failure"
        raise ResultsError(f"the measure job left no record of the push (its result: {word})")
    record = artifact_files.history_record(directory / RECORD, where=RECORD)
    if (record.commit.sha, record.against.sha) != (job.after, job.before):
        raise ResultsError(f"{RECORD} holds {record.commit.sha[:12]} against "
                           f"{record.against.sha[:12]}, but the gate pinned {job.after[:12]} "
                           f"against {job.before[:12]}: not recording other commits")
    if tuple(c.sha for c in (*record.spans, record.commit)) != job.commits:
        raise ResultsError(f"{RECORD} names other commits than the push's")
    if record.skipped:  # a push's step holds its commits in spans; skipped is the CLI's
        raise ResultsError(f"{RECORD} lists {len(record.skipped)} commit(s) as skipped, which "
                           "a push's step never does (its commits are its spans): not recording")
    found = sorted(directory.glob("bisect-*.json"))
    if len(found) > MAX_BISECTS:
        raise ResultsError(f"the artifact holds {len(found)} bisect files; a push's measure job "
                           f"writes at most {MAX_BISECTS}: not published")
    bisects = []
    for path in found:
        doc = artifact_files.bisect_file(path)
        if (doc.good.sha, doc.bad.sha) != (job.before, job.after) or doc.workload not in called(record):
            raise ResultsError(f"{path.name}: a bisect of other commits or of a workload the "
                               "step did not call: not published")
        bisects.append(doc)
    return Step(record=record, bisects=tuple(bisects))


def publish(action_env: ActionEnv, job: PushJob, api: HistoryApi, log: Log) -> int:
    """Record the push on the history branch, rebuild the page, open or update the issue."""
    try:
        step = read_artifact(action_env, job)
    except BenchbotError as exc:
        append_summary(action_env.step_summary, Markdown(
            "### benchbot history: not recorded\n\n{}\n").format(first_line(str(exc))))
        raise
    # The store's order is benchbot's own: the time this step writes the record, not the
    # artifact's word (its `created`, like all of it, came from the measured machine).
    step = dataclasses.replace(step, record=historydoc.stamped(step.record))
    head = api.branch_head(job.branch)
    with tempfile.TemporaryDirectory(prefix="benchbot-store-") as tmp:
        store = historydoc.Store(Path(tmp) / STORE)
        _unpack(api.archive(head.commit) if head else b"", store.path)
        store.write(step.record)
        report = composed.build(store.path, url=f"{action_env.server_url}/{action_env.repository}")
        for problem in report.problems:
            log.line(f"left out of the page: {problem}")
        sha = _commit(api, job, head, step.record, report)
    log.line(f"recorded {job.after[:12]} on {job.branch} ({sha[:12]})")
    issue = _issue(api, action_env, job, step, report, log)
    markdown = require(page.render(report, "markdown"), "the history's report")
    append_summary(action_env.step_summary, markdown, artifact=artifact(action_env),
                   run_url=action_env.run_url)
    write_outputs(action_env.output, {"history": f"{job.branch}:{STORE}/{job.after}.json",
                                      "issue": str(issue or "")})
    return 0


def _unpack(archive: bytes, into: Path) -> None:
    """The store's files of the branch's archive into ``into``: regular files named for a
    commit, read in memory, nothing else of the archive written anywhere."""
    into.mkdir(parents=True, exist_ok=True)
    if not archive:
        return
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        for member in tar:
            m = _RECORD_PATH.fullmatch(member.name)
            if m is None or not member.isfile() or member.size > 10 * 1024 * 1024:
                continue
            data = tar.extractfile(member)
            if data is not None:
                (into / f"{m.group(1)}.json").write_bytes(data.read())


def _commit(api: HistoryApi, job: PushJob, head: BranchHead | None, record: CommitRecord,
            report: composed.HistoryReport) -> str:
    """The record and the page rebuilt, in one commit on the branch."""
    written = {f"{STORE}/{record.sha}.json": historydoc.dumps(record),
               PAGE: page.render(report, "html", results_base=f"{STORE}/"),
               ".nojekyll": ""}
    message = (f"benchbot: {job.after[:12]} against {job.before[:12]} "
               f"({len(job.commits)} commit{'' if len(job.commits) == 1 else 's'})")
    return api.commit_files(job.branch, head, written, message)


def _issue(api: HistoryApi, action_env: ActionEnv, job: PushJob, step: Step,
           report: composed.HistoryReport, log: Log) -> int | None:
    """Open, or update, the one issue that names the steps and drifts; nothing while there
    are none. Found by its first line and its author, as the sticky comment is."""
    steps = sum(len(s.steps) for s in report.workloads)
    drifts = sum(len(s.drifts) for s in report.workloads)
    if not steps and not drifts:
        return None
    from benchbot.github.post import DEFAULT_BOT_LOGIN

    identity = (action_env.bot_login or DEFAULT_BOT_LOGIN).lower()
    body = require(issue_body(job, step, report, run_url=action_env.run_url), "the history issue")
    title = (f"benchbot: {steps} step{'' if steps == 1 else 's'} and {drifts} "
             f"drift{'' if drifts == 1 else 's'} on the default branch")
    mine = [i for i in api.issues(LABEL)
            if i.body.lstrip().startswith(MARKER) and i.author.lower() == identity]
    if mine:
        oldest = min(mine, key=lambda i: i.number)
        if oldest.body != body or oldest.title != title:
            api.edit_issue(oldest.number, title=title, body=body)
        log.line(f"updated issue #{oldest.number}: {title}")
        return oldest.number
    made = api.create_issue(title, body, (LABEL,))
    log.line(f"opened issue #{made.number}: {title}")
    return made.number


def issue_body(job: PushJob, step: Step, report: composed.HistoryReport, *,
               run_url: str | None) -> Markdown:
    """The issue: the latest push's step (and its bisects), then the history's report;
    every text from the repository or the measured code escaped (``escape.Markdown``)."""
    record = step.record
    moved = [w for w in record.workloads if w.outcome in ("slower", "faster")]
    changes = (Markdown(", ").join(Markdown("{} {} {}").format(md_code_span(w.name), w.outcome,
                                                               Markdown(change(w.ratio)))
                                   for w in moved)
               if moved else Markdown("no change called ({})").format(record.state))
    lines = [Markdown(MARKER), Markdown("### benchbot: what changed on the default branch"), "",
             Markdown("The latest push, {} → {} ({} first-parent commit{}): {}.").format(
                 md_code_span(job.before[:12]), md_code_span(job.after[:12]), len(job.commits),
                 "" if len(job.commits) == 1 else "s", changes)]
    for doc in step.bisects:
        lines += ["", Markdown("<details><summary>bisect of the push</summary>"), "",
                  require(bisect_report.render(doc, "markdown"), "the bisect's report"),
                  Markdown("</details>")]
    lines += ["", require(page.render(report, "markdown"), "the history's report")]
    if run_url:
        lines += ["", Markdown("<sub>[the workflow run]({}) · the trend page is `index.html` "
                               "on the {} branch (GitHub Pages)</sub>").format(
                                   md_url(run_url), md_code_span(job.branch))]
    tail = Markdown("… (cut to fit an issue: the whole report is in the job summary)")
    return limits.fit(Markdown("\n").join(lines) + Markdown("\n"), ISSUE_LIMIT, tail)
