"""The publish step: the results go where the gate left its check and comment.

In the three-job workflow this runs on a GitHub-hosted runner with the write token, after
the measure job, whatever became of it (``if: always()``). The results directory is the
measure job's artifact and is untrusted: the pull request's code ran on that machine. So
the results file is checked against the schema, must name the commits the gate pinned,
and the report is made again here from it (its text escaped), never taken from the
artifact. Whatever happens, the check is completed with a conclusion and a one-line
reason, and the sticky comment stops saying "measuring".

When the gate split the comparison over several machines, each shard's artifact is
checked the same way, and the shards that reported are merged into one document
(``merging``, missing shards allowed): a shard with no artifact is missing (its job
failed early, was cancelled or never ran), one whose artifact holds an error or a file
that fails the checks has failed. The report names both and the check is ``neutral``.
Only when no shard reported does publishing say the comparison could not run.

A ``/bench bisect`` job's artifact (``<artifact>-bisect``) holds the bisect document: it
is checked against its schema, must name the pinned base and head as good and bad and
the workload asked for, and its report is made here. It goes in the bisect's own comment
(``post.BISECT_MARKER``: the sticky comparison comment is never touched) and completes
the bisect's own check: ``success`` when the answer names the commit(s) or says no commit
carries a change, ``neutral`` when a range is left undecided, ``failure`` with the reason
when the bisect could not run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchbot.bisect import bisectdoc
from benchbot.core import files
from benchbot.core.errors import BenchbotError, GithubError, ResultsError
from benchbot.core.model import OUTCOMES, FailedShard, Results, Shard
from benchbot.github import artifact, post
from benchbot.github.env import ActionEnv
from benchbot.github.job import Job
from benchbot.github.output import (
    BISECT,
    BISECT_REPORT,
    ERROR,
    REPORT,
    RESULTS,
    Log,
    append_summary,
    first_line,
    write_outputs,
)
from benchbot.report import bisect as bisect_report
from benchbot.report import render_comment, render_results
from benchbot.report.escape import Markdown, md, require
from benchbot.results import merging, resultsdir, shards


@dataclass(frozen=True, slots=True)
class Measured:
    """The comparison ran: its results document."""

    doc: Results


@dataclass(frozen=True, slots=True)
class NotMeasured:
    """The comparison did not finish: why, and the check's conclusion for it."""

    message: str
    conclusion: str = "failure"  # or "cancelled"


@dataclass(frozen=True, slots=True)
class Bisected:
    """The bisect ran: its document."""

    doc: bisectdoc.BisectResults


Outcome = Measured | NotMeasured | Bisected


def not_measured(exc: BaseException) -> NotMeasured:
    """Why measuring stopped, for the check and the comment."""
    if isinstance(exc, KeyboardInterrupt):  # the job was cancelled (SIGTERM) or Ctrl-C
        return NotMeasured("cancelled before the comparison finished", "cancelled")
    if isinstance(exc, BenchbotError):
        return NotMeasured(str(exc))
    return NotMeasured(f"benchbot failed: {type(exc).__name__}: {first_line(str(exc))}")

_MEASURE_RESULT_WORDS = {
    "cancelled": ("measuring was cancelled before it finished: someone cancelled the run, or "
                  "a newer benchmark queued for the runner replaced this one while it waited"),
    "failure": "the measure job failed before it wrote any results; its log says why",
    "skipped": "the measure job did not run",
    "success": "the measure job finished but left no results file in its artifact",
}


def read_outcome(action_env: ActionEnv, job: Job) -> Outcome:
    """What the measure job (or each shard's measure job) left in its artifact."""
    if job.shards > 1 and not job.bisect:
        return _read_shards(action_env, job)
    directory = action_env.results_dir
    # downloaded by pattern: one folder per artifact
    nested = directory / job.artifact(action_env.artifact, None)
    found = BISECT if job.bisect else RESULTS
    if not (directory / found).is_file() and not (directory / ERROR).is_file() and nested.is_dir():
        directory = nested
    outcome = (_read_bisect(directory, job) if job.bisect else
               _read_artifact(directory, job, None))
    if outcome is not None:
        return outcome
    word = action_env.measure_result or "failure"
    return NotMeasured(_MEASURE_RESULT_WORDS.get(word, _MEASURE_RESULT_WORDS["failure"]),
                       "cancelled" if word == "cancelled" else "failure")


def _read_artifact(directory: Path, job: Job, shard: Shard | None) -> Outcome | None:
    """The results in one artifact, checked against the schema, the pinned commits and
    the shard it should hold; its error file; or None when it holds neither."""
    if (directory / RESULTS).is_file():
        try:
            doc = artifact.results_file(directory / RESULTS)
        except BenchbotError as exc:
            return NotMeasured(f"the results file from the measure job is not valid: {exc}")
        for side in ("base", "head"):
            pinned, named = getattr(job, side).sha, getattr(doc, side).sha
            if named != pinned:
                return NotMeasured(
                    f"the results file names {side} {named[:12]}, but the gate "
                    f"pinned {pinned[:12]}: not publishing results for other commits"
                )
        held = (doc.shard.index, doc.shard.count) if doc.shard else None
        if shard is not None and held != (shard.index, shard.count):
            said = f"shard {held[0]} of {held[1]}" if held else "not sharded"
            return NotMeasured(f"the results file of shard {shard} says it is {said}")
        return Measured(doc)
    if (directory / ERROR).is_file():
        return _error_file(directory / ERROR)
    return None


def _read_bisect(directory: Path, job: Job) -> Outcome | None:
    """The bisect document in the artifact, checked against its schema, the pinned commits
    and the workload asked for; its error file; or None when it holds neither."""
    if (directory / BISECT).is_file():
        try:
            doc = artifact.bisect_file(directory / BISECT)
        except BenchbotError as exc:
            return NotMeasured(f"the bisect file from the measure job is not valid: {exc}")
        for side, named, pinned in (("good", doc.good.sha, job.base.sha),
                                    ("bad", doc.bad.sha, job.head.sha)):
            if named != pinned:
                return NotMeasured(
                    f"the bisect file names {side} {named[:12]}, but the gate pinned "
                    f"{pinned[:12]}: not publishing a bisect of other commits")
        if doc.workload != job.command.workload:
            return NotMeasured(f"the bisect file follows `{doc.workload[:80]}`, not the "
                               f"workload asked for, `{job.command.workload}`")
        return Bisected(doc)
    if (directory / ERROR).is_file():
        return _error_file(directory / ERROR)
    return None


def _read_shards(action_env: ActionEnv, job: Job) -> Outcome:
    """Every shard's artifact, merged into one document of the shards that reported. Each
    file is checked against the split the config at the pinned base makes (computed here,
    not taken from any shard's file); one that claims otherwise has failed, named so."""
    try:
        split = _split(action_env, job)
    except BenchbotError as exc:
        return NotMeasured("the shards' split cannot be computed again from the config at "
                           f"{job.config_sha[:12]} to check them: {first_line(str(exc))}")
    found: list[merging.ShardFile] = []
    failed: list[FailedShard] = []
    for shard in job.shard_list:
        directory = action_env.results_dir / job.artifact(action_env.artifact, shard)
        outcome = _read_artifact(directory, job, shard)
        if isinstance(outcome, Measured) and (why := merging.refusal(outcome.doc, split)):
            outcome = NotMeasured(f"not merged: {why}")
        if isinstance(outcome, Measured):
            found.append(merging.ShardFile(f"shard {shard}", outcome.doc))
        elif isinstance(outcome, NotMeasured):
            failed.append(FailedShard(index=shard.index, reason=first_line(outcome.message)[:500]))
    if not found:
        said = {f.index: f"failed: {f.reason}" for f in failed}
        lines = [f"shard {s}: {said.get(s.index, 'did not report')}" for s in job.shard_list]
        word = action_env.measure_result or "failure"
        return NotMeasured(f"no shard of the {job.shards} reported results\n" + "\n".join(lines),
                           "cancelled" if word == "cancelled" and not failed else "failure")
    try:
        return Measured(merging.merge(found, allow_missing=True, failed=failed, split=split))
    except ResultsError as exc:
        return NotMeasured(f"the shards' results cannot be merged: {exc}")


def _split(action_env: ActionEnv, job: Job) -> shards.Split:
    """The comparison's split into the job's shards, from the config read at the commit
    the gate pinned with the job's settings over it, as each measure job read it
    (``measure.fetched``): the repository is fetched here for that (the base, the head
    and the config's commit, as objects: nothing of them runs)."""
    from benchbot.github.measure import fetched
    from benchbot.measure import engine

    repo, config = fetched(action_env, job, None)
    return engine.split_of(repo, config, job.base.sha, job.head.sha, job.shards)


def _error_file(path: Path) -> NotMeasured:
    try:
        message, kind = artifact.error_file(path)
    except ResultsError as exc:
        return NotMeasured(f"the measure job failed and its error file cannot be read: {exc}")
    return NotMeasured(message, "cancelled" if kind == "cancelled" else "failure")


def publish_artifact(action_env: ActionEnv, job: Job, pub: post.Publisher, log: Log) -> int:
    """The publish step: read what the measure job left and publish it. Reading is inside
    the guard too: an artifact that breaks the reader (it comes from the machine that ran
    the pull request's code) still ends the check, with the reason."""
    try:
        outcome = read_outcome(action_env, job)
    except BaseException as exc:
        finish_anyway(action_env, pub, "reading the measure job's results failed: "
                      f"{first_line(str(exc) or type(exc).__name__)}", bisect=job.bisect)
        raise
    return run(action_env, job, pub, log, outcome)


def run(action_env: ActionEnv, job: Job, pub: post.Publisher, log: Log, outcome: Outcome) -> int:
    """Publish the outcome; complete the check whatever happens; return the exit status."""
    try:
        if isinstance(outcome, Measured):
            _publish_results(action_env, job, pub, log, outcome.doc)
        elif isinstance(outcome, Bisected):
            _publish_bisect(action_env, job, pub, log, outcome.doc)
        else:
            _publish_failure(action_env, job, pub, outcome)
    except BaseException as exc:
        finish_anyway(action_env, pub, f"publishing failed: {first_line(str(exc) or type(exc).__name__)}",
                      bisect=job.bisect)
        raise
    return done(pub, log, written=not isinstance(outcome, NotMeasured))


def _publish_results(action_env: ActionEnv, job: Job, pub: post.Publisher, log: Log,
                     doc: Results) -> None:
    doc = resultsdir.concluded(doc, job.fail_on, job.check_name)  # never the file's own summary
    summary = doc.summary
    report = require(render_results(doc, "markdown", run_url=action_env.run_url,
                                    command_style="bench"), "the report")
    if action_env.mode == "publish":
        # The checked (or merged) document and the report made here from it, at the top
        # of the results directory: the artifact itself lies in a folder of its name.
        files.write_text(action_env.results_dir / RESULTS, resultsdir.dumps(doc))
        files.write_text(action_env.results_dir / REPORT, report)
    if action_env.mode == "publish":
        append_summary(action_env.step_summary, report, artifact=action_env.artifact,
                       run_url=action_env.run_url)
    conclusion = summary.conclusion
    values = {"conclusion": conclusion, "results": str(action_env.results_dir / RESULTS),
              "report": str(action_env.results_dir / REPORT)}
    values.update({o: str(summary.count(o)) for o in OUTCOMES})
    write_outputs(action_env.output, values)
    headline = post.headline(summary) + post.shards_note(doc)
    # The comment and the check's summary: the report within a comment's limit, leaving
    # out details where it must (the whole report is in the artifact).
    comment = require(render_comment(doc, post.REPORT_ROOM, run_url=action_env.run_url,
                                     artifact=action_env.artifact), "the report")
    pub.show(post.final_body(comment, artifact=action_env.artifact, run_url=action_env.run_url))
    pub.finish_check(conclusion, f"benchbot: {headline} ({job.head.sha[:7]})",
                     comment, artifact=action_env.artifact,
                     description=post.status_description(summary, conclusion,
                                                            post.shards_note(doc)))
    if job.trigger is not None:
        pub.react(job.trigger, "rocket")
    log.line(f"published: {headline}, check {conclusion}")


# A bisect's check: an answer passes; a range left undecided is neutral (never a failure:
# the pull request is judged by the comparison's check, not by its bisect).
BISECT_CONCLUSIONS = {"culprits": "success", "no_change": "success", "partial": "neutral",
                      "range": "neutral"}
BISECT_TITLES = {"culprits": "found", "no_change": "no commit carries a change",
                 "partial": "found, and a range undecided", "range": "a range, not one commit"}


def _publish_bisect(action_env: ActionEnv, job: Job, pub: post.Publisher, log: Log,
                    doc: bisectdoc.BisectResults) -> None:
    report = require(bisect_report.render(doc, "markdown"), "the bisect's report")
    artifact = job.artifact(action_env.artifact, None)
    out = action_env.results_dir
    if action_env.mode == "publish":
        # the checked document and the report made here from it (as _publish_results)
        bisectdoc.save(out / BISECT, doc)
        files.write_text(out / BISECT_REPORT, report)
        append_summary(action_env.step_summary, report, artifact=artifact,
                       run_url=action_env.run_url)
    answer = doc.answer
    conclusion = BISECT_CONCLUSIONS[answer.kind]
    named = ", ".join(bisectdoc.short(c.sha) for c in answer.culprits)
    title = f"benchbot bisect {doc.workload}: {BISECT_TITLES[answer.kind]}" + (
        f" ({named})" if named else "")
    write_outputs(action_env.output, {"conclusion": conclusion, "bisect": str(out / BISECT),
                                      "report": str(out / BISECT_REPORT)})
    pub.show(post.bisect_final_body(report, artifact=artifact, run_url=action_env.run_url))
    pub.finish_check(conclusion, title[:200], report, artifact=artifact,
                     description=first_line(answer.sentence))
    if job.trigger is not None:
        pub.react(job.trigger, "rocket")
    log.line(f"published: {title}, check {conclusion}")


def _publish_failure(action_env: ActionEnv, job: Job, pub: post.Publisher,
                     outcome: NotMeasured) -> None:
    message = outcome.message
    name = "benchbot bisect" if job.bisect else "benchbot"
    artifact = job.artifact(action_env.artifact, None) if job.bisect else action_env.artifact
    append_summary(action_env.step_summary,
                   Markdown("### {}: could not run\n\n{}\n").format(name, post.error_text(message)),
                   artifact=artifact, run_url=action_env.run_url)
    write_outputs(action_env.output, {"conclusion": outcome.conclusion})
    title = "cancelled" if outcome.conclusion == "cancelled" else "could not run"
    pub.show(post.error_body(message, run_url=action_env.run_url, title=title,
                             measured="Nothing was bisected." if job.bisect
                             else "Nothing was measured.", bisect=job.bisect))
    if not pub.check_started:
        pub.start_check(f"{name}: {title}", md(first_line(message)))
    pub.finish_check(outcome.conclusion, f"{name}: {title} ({job.head.sha[:7]})",
                     post.error_text(message), artifact=action_env.artifact,
                     description=f"{title}: {first_line(message)}")
    if job.trigger is not None:
        pub.react(job.trigger, "confused")


def finish_anyway(action_env: ActionEnv, pub: post.Publisher, reason: str, *,
                  bisect: bool = False) -> None:
    """The last resort: complete the check and replace "measuring" in the comment."""
    try:
        pub.show(post.error_body(reason, run_url=action_env.run_url, bisect=bisect))
        pub.finish_check("failure", f"benchbot{' bisect' if bisect else ''}: could not run",
                         post.error_text(reason),
                         artifact=action_env.artifact, description=reason)
    except (BenchbotError, OSError):
        pass


def done(pub: post.Publisher, log: Log, *, written: bool = False) -> int:
    """Exit status 0, or a GithubError naming the first failed call."""
    if not pub.failures:
        return 0
    for failure in pub.failures:
        log.line(f"publishing: {failure}")
    where = " The results file and the job summary hold everything measured." if written else ""
    raise GithubError(f"{len(pub.failures)} GitHub call(s) failed; first: {pub.failures[0]}.{where}")

