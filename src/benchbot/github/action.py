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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TextIO

from benchbot import engine
from benchbot.errors import BenchbotError, UsageError
from benchbot.github import gate, measure, post, publish
from benchbot.github.api import GitHubAPI
from benchbot.github.common import Log, first_line, publisher
from benchbot.github.env import ActionEnv
from benchbot.github.event import load_event
from benchbot.github.job import Job
from benchbot.progress import PHASE_NAMES, TerminalReporter


def default_api(action_env: ActionEnv) -> gate.GateApi:
    """The real adapter, configured from the environment."""
    if action_env.token is None:
        raise UsageError("GITHUB_TOKEN is not set: the gate and publish steps need a token")
    return GitHubAPI(token=action_env.token, api_url=action_env.api_url,
                     repository=action_env.repository, throttle=action_env.throttle)


def main(env: Mapping[str, str], *, err: TextIO, token: str | None = None,
         api_factory: gate.ApiFactory = default_api) -> int:
    """Do what the mode and the event ask; return the exit status (errors are raised)."""
    action_env = ActionEnv.from_env(env, token=token)
    log = Log(err)
    if action_env.mode == "measure":
        measure.run(action_env, _job(action_env), log, source_env=env)
        return 0
    if action_env.mode == "publish":
        job = _job(action_env)
        pub = publisher(api_factory(action_env), action_env, job)
        return publish.publish_artifact(action_env, job, pub, log)
    opened = gate.run(action_env, load_event(action_env), api_factory, log)
    if opened is None or action_env.mode == "gate":
        return 0
    return _measure_and_publish(action_env, opened, log, env)


def _job(action_env: ActionEnv) -> Job:
    if not action_env.job:
        raise UsageError(
            f"BENCHBOT_JOB (input job) is not set: mode {action_env.mode} continues the job "
            "that `mode: gate` wrote as its output `job`"
        )
    return Job.from_json(action_env.job)


def _measure_and_publish(action_env: ActionEnv, opened: gate.Opened, log: Log,
                         env: Mapping[str, str]) -> int:
    """The single-job form: measure here, then publish; the check ends whatever happens."""
    job, pub = opened.job, opened.publisher
    progress = _Progress(log.err, lambda phase: _show_phase(action_env, job, pub, phase))
    try:
        doc = measure.run(action_env, job, log, source_env=env, reporter=progress)
    except BaseException as exc:
        try:
            publish.run(action_env, job, pub, log, not_measured(exc))
        except BenchbotError:
            pass  # the error that stopped measuring is the one to report
        raise
    return publish.run(action_env, job, pub, log, publish.Measured(doc))


def not_measured(exc: BaseException) -> publish.NotMeasured:
    """Why measuring stopped, for the check and the comment."""
    if isinstance(exc, KeyboardInterrupt):  # the job was cancelled (SIGTERM) or Ctrl-C
        return publish.NotMeasured("cancelled before the comparison finished", "cancelled")
    if isinstance(exc, BenchbotError):
        return publish.NotMeasured(str(exc))
    return publish.NotMeasured(f"benchbot failed: {type(exc).__name__}: {first_line(str(exc))}")


def _show_phase(action_env: ActionEnv, job: Job, pub: post.Publisher, phase: str) -> None:
    body = gate.running_body(action_env, job, phase)
    pub.update_check(f"benchbot: measuring {job.head.sha[:12]}",
                     body.replace(post.MARKER + "\n", ""))
    pub.show(body)


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

    def building(self, side: str, sha: str) -> None:
        self._terminal.building(side, sha)
        if not self._built:
            self._built = True
            self._show("phase: building base and head")
