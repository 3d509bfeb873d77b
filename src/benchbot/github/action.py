"""``benchbot github``: the Action's entry point, in one of four modes.

- ``gate`` (a GitHub-hosted runner, write token): decide, pin the commits, open the check
  and the sticky comment, hand the job on as the step output ``job`` (``gate.py``).
- ``measure`` (the benchmark runner, no write token): build and measure the pinned
  commits, leave the results directory for the artifact (``measure.py``).
- ``publish`` (a GitHub-hosted runner, write token): read the artifact, write the
  comment, the check, the summary and the outputs (``publish.py``).
- ``all`` (the default): the three in one job, on the benchmark runner. Simpler to set
  up; the cost is that the write token is on the machine that runs the pull request's
  code, kept from it by the clean environment, the sandbox and benchbot's own process
  being unreadable to other processes (README, "Security model").

Each mode goes straight down the same layers (docs/architecture.md): the environment and
the event, the settings, the config read once at the base revision, the engine or the
publisher, the output.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TextIO, cast

from benchbot.bisect.bisectdoc import BisectResults
from benchbot.core.errors import BenchbotError, UsageError
from benchbot.github import api, gate, measure, post, publish, watch
from benchbot.github.env import ActionEnv
from benchbot.github.event import load_event
from benchbot.github.job import Job
from benchbot.github.output import Log, write_outputs
from benchbot.measure.progress import TerminalReporter


def main(env: Mapping[str, str], *, err: TextIO, token: str | None = None,
         api_factory: gate.ApiFactory = api.connect) -> int:
    """Do what the mode and the event ask; return the exit status (errors are raised)."""
    action_env = ActionEnv.from_env(env, token=token)
    log = Log(err)
    if watch.is_push_job(action_env.job) and action_env.mode in ("measure", "publish"):
        return _push(action_env, watch.PushJob.from_json(action_env.job or ""), log, env,
                     api_factory)
    if action_env.mode == "measure":
        measure.run(action_env, _job(action_env), log, source_env=env)
        return 0
    if action_env.mode == "publish":
        job = _job(action_env)
        pub = post.publisher_for(api_factory(action_env), action_env, job)
        return publish.publish_artifact(action_env, job, pub, log)
    event = load_event(action_env)
    if event.name == "push":
        pushed = watch.gate(action_env, event, log)
        if pushed is None:
            write_outputs(action_env.output, {"run": "false"})
            return 0
        return 0 if action_env.mode == "gate" else _push(action_env, pushed, log, env, api_factory)
    opened = gate.run(action_env, event, api_factory, log)
    if opened is None or action_env.mode == "gate":
        return 0
    return _measure_and_publish(action_env, opened, log, env)


def _push(action_env: ActionEnv, job: watch.PushJob, log: Log, env: Mapping[str, str],
          api_factory: gate.ApiFactory) -> int:
    """A push to the default branch: measured (mode measure), published (publish), or
    both in this job (all)."""
    if action_env.mode != "publish":
        watch.measure(action_env, job, log, source_env=env)
    if action_env.mode == "measure":
        return 0
    return watch.publish(action_env, job, cast(watch.HistoryApi, api_factory(action_env)), log)


def _job(action_env: ActionEnv) -> Job:
    if not action_env.job:
        raise UsageError(
            f"BENCHBOT_JOB (input job) is not set: mode {action_env.mode} continues the job "
            "that `mode: gate` wrote as its output `job`"
        )
    return Job.from_json(action_env.job)


def _measure_and_publish(action_env: ActionEnv, opened: gate.Opened, log: Log,
                         env: Mapping[str, str]) -> int:
    """The single-job form: measure here, with the config the gate read, then publish; the
    check ends whatever happens."""
    job, pub = opened.job, opened.publisher
    # A bisect's many comparisons would edit its comment at every phase of every step:
    # its progress goes to the log only.
    progress = (TerminalReporter(log.err, tty=False) if job.bisect else
                post.PhasePoster(log.err, pub, job, action_env.run_url))
    try:
        doc = measure.run(action_env, job, log, source_env=env, reporter=progress,
                          config=opened.config)
    except BaseException as exc:
        try:
            publish.run(action_env, job, pub, log, publish.not_measured(exc))
        except BenchbotError:
            pass  # the error that stopped measuring is the one to report
        raise
    outcome = publish.Bisected(doc) if isinstance(doc, BisectResults) else publish.Measured(doc)
    return publish.run(action_env, job, pub, log, outcome)
