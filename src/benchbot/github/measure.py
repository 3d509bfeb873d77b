"""The measure step: builds and measures exactly the commits the gate pinned.

It runs on the benchmark runner, where the pull request's code runs, and publishes
nothing: in the three-job workflow its job holds no write token (``contents: read``
only, used for nothing but fetching the two commits). It leaves its outcome in the
results directory, which the workflow uploads as an artifact for the publish step:
``results.json`` and ``report.md`` when the comparison ran, else ``error.json`` saying
why it did not (a build failure, a cancellation, a crash).

A ``/bench bisect`` job (``Job.bisect``) runs ``bisect.bisect`` instead, over the
first-parent commits from the pinned base (good) to the pinned head (bad), with the
config read at the same commit and the same sandbox required; it leaves ``bisect.json``
and ``bisect.md`` (or ``error.json``) in the results directory, uploaded under a name of
its own (``Job.artifact``: ``<artifact>-bisect``).

When the gate split the comparison over several machines, each measure job of the
workflow's matrix measures the share its input ``shard`` names (``K/N``, N the gate's),
and uploads it under a name of its own (``Job.artifact``, the step output ``artifact``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path

from benchbot.bisect import bisectdoc, search
from benchbot.config.config import Config
from benchbot.config.find import read_config
from benchbot.core import files
from benchbot.core.errors import BenchbotError, UsageError
from benchbot.core.model import Results, Revision, Shard
from benchbot.github.env import ActionEnv
from benchbot.github.fetch import base_refspecs, fetch_commits
from benchbot.github.job import Job
from benchbot.github.output import (
    BISECT,
    BISECT_REPORT,
    ERROR,
    REPORT,
    RESULTS,
    Log,
    append_summary,
    write_outputs,
)
from benchbot.measure import engine
from benchbot.measure.progress import TerminalReporter
from benchbot.report import bisect as bisect_report
from benchbot.report import render_results
from benchbot.report.escape import require
from benchbot.results import resultsdir


def run(action_env: ActionEnv, job: Job, log: Log, *, source_env: Mapping[str, str],
        reporter: engine.Reporter | None = None,
        config: Config | None = None) -> Results | bisectdoc.BisectResults:
    """Measure the job; write the results directory; return the results document (the
    bisect document for a bisect).

    ``config`` is the one the gate read and overrode (the single-job form); else it is
    read here, at the commit the gate named. Any failure leaves ``error.json`` (kind and
    message) before it propagates.
    """
    shard = shard_of(action_env, job)
    if action_env.mode == "measure" or job.bisect:  # a bisect's has a name of its own
        write_outputs(action_env.output, {"artifact": job.artifact(action_env.artifact, shard)})
    doc: Results | bisectdoc.BisectResults
    with errors_written(action_env.results_dir, "cancelled before the comparison finished"):
        if job.bisect:
            doc = _bisect(action_env, job, log, source_env=source_env, reporter=reporter,
                          config=config)
            write_bisect(action_env, doc, artifact=job.artifact(action_env.artifact, None))
        else:
            doc = _measure(action_env, job, log, shard, source_env=source_env,
                           reporter=reporter, config=config)
            write_results(action_env, doc, artifact=job.artifact(action_env.artifact, shard))
    return doc


@contextlib.contextmanager
def errors_written(directory: Path, cancelled: str) -> Iterator[None]:
    """Whatever stops what runs inside leaves ``error.json`` (its kind and message) in the
    results directory before it propagates: publish says why from it."""
    try:
        yield
    except BenchbotError as exc:
        write_error(directory, "error", str(exc))
        raise
    except KeyboardInterrupt:
        write_error(directory, "cancelled", cancelled)
        raise
    except Exception as exc:
        write_error(directory, "crash", f"{type(exc).__name__}: {exc}",
                    detail=traceback.format_exc(limit=8))
        raise


def shard_of(action_env: ActionEnv, job: Job) -> Shard | None:
    """The share of the job this step measures (None: all of it, the gate did not split
    it); an input ``shard`` that does not fit the gate's split is a UsageError."""
    shard, count = action_env.shard, job.shards
    if count == 1:
        if shard is not None and shard.count != 1:
            raise UsageError(f"BENCHBOT_SHARD (input shard): {shard}, but the gate did not split "
                             "this comparison (its input shards is 1)")
        return None
    if shard is None:
        raise UsageError(f"BENCHBOT_SHARD (input shard) is not set: the gate split this comparison "
                         f"into {count} shards; give each measure job of the matrix "
                         "`shard: ${{ matrix.shard }}`")
    if shard.count != count:
        raise UsageError(f"BENCHBOT_SHARD (input shard): {shard}, but the gate split this "
                         f"comparison into {count} shards")
    return shard


def fetched(action_env: ActionEnv, job: Job, config: Config | None) -> tuple[Path, Config]:
    """The clone with the pinned commits, and the config: the gate's, else read at the
    commit it named, with the job's settings over it."""
    repo = fetch_commits(action_env, {
        job.config_sha: base_refspecs(job.base),
        job.base.sha: [],
        job.head.sha: [f"+refs/pull/{job.number}/head"],
    })
    if config is None:
        read = read_config(repo, job.config_sha, job.config_path or action_env.config_path)
        config = action_env.with_inputs(read).with_overrides(job.overrides)
    return repo, config


def _measure(action_env: ActionEnv, job: Job, log: Log, shard: Shard | None, *,
             source_env: Mapping[str, str], reporter: engine.Reporter | None,
             config: Config | None) -> Results:
    repo, config = fetched(action_env, job, config)
    part = f", shard {shard}" if shard else ""
    log.line(f"measuring #{job.number}{part}: base {job.base.sha[:12]}, head {job.head.sha[:12]}")
    doc = engine.compare(
        engine.Request(
            repo=repo, base=job.base.sha, head=job.head.sha, config=config,
            repository=action_env.repository, resolve_merge_base=False,
            shard=shard, require_sandbox=True,
        ),
        reporter=reporter or TerminalReporter(log.err, tty=False),
        source_env=source_env,
    )
    return dataclasses.replace(
        doc, base=Revision(ref=job.base.ref or job.base.sha, sha=job.base.sha),
        head=Revision(ref=job.head.ref or job.head.sha, sha=job.head.sha),
    )


def _bisect(action_env: ActionEnv, job: Job, log: Log, *, source_env: Mapping[str, str],
            reporter: engine.Reporter | None,
            config: Config | None) -> bisectdoc.BisectResults:
    """The bisect of the job's workload from the pinned base (good) to the head (bad)."""
    repo, config = fetched(action_env, job, config)
    workload = job.command.workload
    if workload is None:
        raise UsageError("BENCHBOT_JOB (input job): a bisect names no workload")
    log.line(f"bisecting {workload} on #{job.number}: good {job.base.sha[:12]} (base), "
             f"bad {job.head.sha[:12]} (head)")
    doc = search.bisect(
        search.Request(repo=repo, good=job.base.sha, bad=job.head.sha, workload=workload,
                       budget_s=job.command.overrides.budget, config=config,
                       repository=action_env.repository, require_sandbox=True),
        reporter=reporter or TerminalReporter(log.err, tty=False), source_env=source_env)
    return dataclasses.replace(
        doc, good=Revision(ref=job.base.ref or job.base.sha, sha=job.base.sha),
        bad=Revision(ref=job.head.ref or job.head.sha, sha=job.head.sha))


def write_bisect(action_env: ActionEnv, doc: bisectdoc.BisectResults, *,
                 artifact: str) -> str:
    """The bisect document and its report, in the results directory and the job summary."""
    out = action_env.results_dir
    bisectdoc.save(out / BISECT, doc)
    report = require(bisect_report.render(doc, "markdown"), "the bisect's report")
    files.write_text(out / BISECT_REPORT, report)
    append_summary(action_env.step_summary, report, artifact=artifact, run_url=action_env.run_url)
    return report


def write_results(action_env: ActionEnv, doc: Results, *, artifact: str | None = None) -> str:
    """The results file and the report, in the results directory and the job summary
    (cut there where it is too long, with a pointer to ``artifact``, the name the results
    directory is uploaded under)."""
    out = action_env.results_dir
    files.write_text(out / RESULTS, resultsdir.dumps(doc))
    report = require(render_results(doc, "markdown", run_url=action_env.run_url,
                                    command_style="bench"), "the report")
    files.write_text(out / REPORT, report)
    append_summary(action_env.step_summary, report, artifact=artifact or action_env.artifact,
                   run_url=action_env.run_url)
    return report


def write_error(directory: Path, kind: str, message: str, detail: str | None = None) -> None:
    """Leave why the comparison did not finish, for the publish step (best effort)."""
    try:
        files.write_text(directory / ERROR, json.dumps(
            {"kind": kind, "message": message, "detail": detail}, indent=2) + "\n")
    except BenchbotError:
        pass
