"""A GitHub Actions job around `benchbot github`, for end-to-end tests against the fake server.

``Env`` writes an event file (a real webhook payload from @octokit/webhooks-examples,
pointed at the test repository's commits), sets the ``GITHUB_*`` variables Actions sets,
and runs ``benchbot github``, collecting the outputs, the job summary and the results
directory. ``Env.run`` runs it in this process, through ``cli.main`` with the job's
environment as ``os.environ``; ``process=True`` starts ``python -m benchbot github``
instead, for the tests whose point is the process boundary (the token moved out of the
environment, what a run can read of benchbot's process).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchbot import cli
from benchbot.github import action
from benchbot.github.post import MARKER
from benchbot.sandbox.spawn import RawRun, SpawnRequest
from tests.clock import FakeClock
from tests.conftest import copied_repo, git
from tests.fakegithub import FakeGitHub, load_payload

OWNER, REPO = "Codertocat", "Hello-World"
BOT = "github-actions[bot]"
# How long `benchbot github` in a process of its own may take: a hang still ends the test,
# and a loaded 2-core machine has room (the secrets test's spy reads every process's /proc
# files in each of its 22 runs; under load 6 some runs took 40 s, and the whole 300 s).
PROCESS_TIMEOUT_S = 900
CONFIG = """\
version: 1
aa: off
confirm: off
defaults:
  runs: 10
  warmup: 1
workloads:
  - name: nap
    run: ["./nap.sh"]
"""
# Two workloads, both the planted 10x slowdown of nap.sh: split in two, one in each shard.
SHARD_CONFIG = CONFIG + """\
  - name: snooze
    run: ["./nap.sh", "again"]
"""
FAST = "#!/bin/sh\nsleep 0.002\n"
SLOW = "#!/bin/sh\nsleep 0.02\n"
FAST_S, SLOW_S = 0.002, 0.02  # what FAST and SLOW sleep


class PlantedNap:
    """A spawner that stands for the workspace's nap.sh without running it: each run
    reports the script's sleep (FAST at the base, SLOW at the head: the planted 10x
    slowdown) with 1% of seeded noise, and lets that time pass on ``clock``."""

    def __init__(self, clock: FakeClock, seed: int = 7) -> None:
        self.clock, self.rng = clock, np.random.default_rng(seed)

    def spawn(self, request: SpawnRequest) -> RawRun:
        seconds = (SLOW_S if Path(request.cwd).name == "head" else FAST_S)
        seconds *= self.rng.lognormal(0.0, 0.01)
        self.clock.advance(seconds)
        ns = int(seconds * 1e9)
        return RawRun(wall_ns=ns, cpu_ns=ns // 10, maxrss_kib=1024, returncode=0)


@dataclass
class Workspace:
    """A clone as actions/checkout leaves it, with the base and head commits."""

    path: Path
    base_sha: str
    head_sha: str


@dataclass
class Run:
    """One `benchbot github` process and the files it wrote."""

    returncode: int
    stderr: str
    outputs: dict[str, str]
    summary: str
    results_dir: Path


def unconfined(config: str) -> str:
    """``config`` with ``sandbox: off`` at its end, unless it says ``sandbox:`` itself.

    ``benchbot github`` refuses ``sandbox: auto`` without bubblewrap, and a fresh machine
    has none: the tests whose point is elsewhere (the gate, the comment, the check, the
    shards, bisect's search) run the pull request's scripts unconfined on purpose, the same
    with bubblewrap or without it. The sandbox's own tests say ``sandbox:`` and skip, with
    the reason, where bubblewrap cannot make one (tests/security/)."""
    if "sandbox:" in config:
        return config
    return config + ("" if config.endswith("\n") else "\n") + "sandbox: off\n"


def make_workspace(root: Path, *, head_script: str = SLOW, config: str = CONFIG,
                   files: dict[str, str] | None = None) -> Workspace:
    """A repository whose base runs nap.sh fast and whose head runs ``head_script``;
    ``files`` are added to both (a file starting with #! is made executable). Its
    benchbot.yml is ``config``, ``unconfined`` unless it says how to sandbox."""
    repo = root / "workspace"
    key = ("workspace", head_script, config, tuple((files or {}).items()))
    base, head = copied_repo(repo, key, lambda at: _new_workspace(at, head_script, config, files))
    return Workspace(repo, base, head)


def _new_workspace(repo: Path, head_script: str, config: str,
                   files: dict[str, str] | None) -> tuple[str, str]:
    """make_workspace's repository, made at ``repo``: its base and head SHAs."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "benchbot.yml").write_text(unconfined(config))
    for name, text in (files or {}).items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if text.startswith("#!"):
            path.chmod(0o755)
    nap = repo / "nap.sh"
    nap.write_text(FAST)
    nap.chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "feature")
    nap.write_text(head_script)
    git(repo, "commit", "-q", "-am", "head")
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    return base, head


def _from_fork(payload: dict[str, Any]) -> bool:
    """Whether a pull request event's head lives in another repository (or a deleted one)."""
    pull = payload.get("pull_request")
    if not isinstance(pull, dict):
        return False
    head = (pull.get("head") or {}).get("repo") or {}
    base = (pull.get("base") or {}).get("repo") or {}
    return head.get("full_name") is None or head.get("full_name") != base.get("full_name")


def parse_outputs(text: str) -> dict[str, str]:
    """Read GITHUB_OUTPUT's `name<<DELIM` blocks."""
    out: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        name, _, delim = line.partition("<<")
        value = []
        for inner in lines:
            if inner == delim:
                break
            value.append(inner)
        out[name] = "\n".join(value)
    return out


class Env:
    """Builds the Actions environment and runs `benchbot github` against the fake."""

    def __init__(self, tmp: Path, fake: FakeGitHub, ws: Workspace) -> None:
        self.tmp, self.fake, self.ws = tmp, fake, ws
        self.count = 0

    def pull_request_event(self, action_name: str = "opened", *, number: int = 2,
                           fork: str | None = None, labels: tuple[str, ...] = (),
                           sender: str | None = None) -> dict[str, Any]:
        known = ("opened", "synchronize", "reopened", "labeled")
        payload = load_payload(f"pull_request.{action_name if action_name in known else 'opened'}")
        payload["action"] = action_name
        payload["number"] = number
        pr = payload["pull_request"]
        pr["number"] = number
        pr["base"].update(ref="main", sha=self.ws.base_sha)
        pr["head"].update(ref="feature", sha=self.ws.head_sha)
        pr["labels"] = [{"name": n} for n in labels]
        payload["repository"]["default_branch"] = self.fake.default_branch
        if fork:
            pr["head"]["repo"]["full_name"] = fork
            pr["head"]["repo"]["fork"] = True
        if sender:
            payload["sender"]["login"] = sender
        if number not in self.fake.pulls:
            self.fake.add_pull_from_event(payload)
        return payload

    def comment_event(self, body: str, *, login: str = "alice", number: int = 2,
                      user_type: str = "User", action_name: str = "created",
                      on_pull: bool = True) -> dict[str, Any]:
        payload = load_payload("issue_comment.created.pr" if on_pull else "issue_comment.created")
        payload["action"] = action_name
        if number not in self.fake.issues:
            if on_pull:
                self.fake.add_pull(number, head_sha=self.ws.head_sha, base_sha=self.ws.base_sha,
                                   head_ref="feature", base_ref="main")
            else:
                self.fake.add_issue(number)
        stored = self.fake.add_comment(number, body, login, user_type)
        payload["issue"]["number"] = number
        payload["repository"]["default_branch"] = self.fake.default_branch
        payload["comment"].update(id=stored["id"], body=body)
        payload["comment"]["user"].update(login=login, type=user_type)
        return payload

    def environ(self, name: str, payload: dict[str, Any], **extra: str) -> dict[str, str]:
        self.count += 1
        run_dir = self.tmp / f"run{self.count}"
        run_dir.mkdir()
        event_path = run_dir / "event.json"
        event_path.write_text(json.dumps(payload))
        (run_dir / "summary.md").touch()
        (run_dir / "output.txt").touch()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GITHUB_", "BENCHBOT_", "RUNNER_"))}
        env.update({
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": name,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_REPOSITORY": f"{OWNER}/{REPO}",
            "GITHUB_API_URL": self.fake.url,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_TOKEN": self.fake.workflow_token(name, fork=_from_fork(payload)),
            "GITHUB_RUN_ID": str(1000 + self.count),
            "GITHUB_WORKSPACE": str(self.ws.path),
            "GITHUB_STEP_SUMMARY": str(run_dir / "summary.md"),
            "GITHUB_OUTPUT": str(run_dir / "output.txt"),
            "BENCHBOT_RESULTS_DIR": str(run_dir / "results"),
            "BENCHBOT_GITHUB_THROTTLE": "off",
            **extra,
        })
        if env.pop("_drop_token", None) and "GITHUB_TOKEN" not in extra:
            del env["GITHUB_TOKEN"]  # the measure job is given no token at all
        return env

    def run(self, name: str, payload: dict[str, Any], *, process: bool = False,
            **extra: str) -> Run:
        """`benchbot github` in this process, or with ``process`` in one of its own."""
        env = self.environ(name, payload, **extra)
        if not process:
            return self._collect(*_in_process(env), env)
        proc = subprocess.run([sys.executable, "-m", "benchbot", "github"], env=env,
                              capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S,
                              check=False)
        return self._collect(proc.returncode, proc.stderr, env)

    def run_split(self, name: str, payload: dict[str, Any], *, measure_token: str | None = None,
                  process: bool = False, **extra: str) -> tuple[Run, Run | None, Run | None]:
        """The three-job workflow: gate, then (if it approved) measure with no write token,
        then publish with the measure step's results directory as the artifact."""
        gate = self.run(name, payload, process=process, BENCHBOT_MODE="gate", **extra)
        if gate.outputs.get("run") != "true":
            return gate, None, None
        token = {"GITHUB_TOKEN": measure_token} if measure_token else {}
        measure = self.run(name, payload, process=process, BENCHBOT_MODE="measure",
                           BENCHBOT_JOB=gate.outputs["job"], _drop_token="1", **token, **extra)
        publish = self.run(name, payload, process=process, BENCHBOT_MODE="publish",
                           BENCHBOT_JOB=gate.outputs["job"],
                           BENCHBOT_MEASURE_RESULT="success" if measure.returncode == 0 else "failure",
                           BENCHBOT_RESULTS_DIR=str(measure.results_dir), **extra)
        return gate, measure, publish

    def run_in_process(self, name: str, payload: dict[str, Any], **extra: str) -> Run:
        """The same through action.main, for the cases that measure nothing (faster)."""
        env = self.environ(name, payload, **extra)
        err = io.StringIO()
        try:
            code = action.main(env, err=err)
        except Exception as exc:
            err.write(f"benchbot: error: {exc}\n")
            code = getattr(exc, "exit_code", 99)
        return self._collect(code, err.getvalue(), env)

    @staticmethod
    def _collect(code: int, stderr: str, env: dict[str, str]) -> Run:
        output = Path(env["GITHUB_OUTPUT"])
        return Run(
            returncode=code, stderr=stderr,
            outputs=parse_outputs(output.read_text()) if output.is_file() else {},
            summary=Path(env["GITHUB_STEP_SUMMARY"]).read_text(),
            results_dir=Path(env["BENCHBOT_RESULTS_DIR"]),
        )




def _in_process(env: dict[str, str]) -> tuple[int, str]:
    """``cli.main(["github"])`` with ``env`` as the whole of ``os.environ`` while it runs:
    its exit status and what it wrote to stderr."""
    saved = dict(os.environ)
    err = io.StringIO()
    os.environ.clear()
    os.environ.update(env)
    try:
        code = cli.main(["github"], out=io.StringIO(), err=err)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return code, err.getvalue()


def sticky(fake: FakeGitHub, number: int = 2) -> list[dict[str, Any]]:
    return [c for c in fake.comments_on(number)
            if MARKER in c["body"] and c["user"]["login"] == BOT]


def reactions(fake: FakeGitHub, comment_id: int) -> list[str]:
    return [r["content"] for r in fake.reactions if r["comment_id"] == comment_id]


# --- the sharded workflow: gate, a matrix of measure jobs, publish ----------------------


def gate_shards(env: Env, payload: dict[str, Any], shards: int = 2) -> Run:
    """The gate with the input ``shards``; it must approve."""
    run = env.run("issue_comment", payload, BENCHBOT_MODE="gate", BENCHBOT_SHARDS=str(shards))
    assert run.returncode == 0, run.stderr
    assert run.outputs["run"] == "true"
    return run


def measure_shard(env: Env, payload: dict[str, Any], job: str, shard: str) -> Run:
    """One measure job of the matrix (input ``shard``), given no token at all."""
    run = env.run("issue_comment", payload, BENCHBOT_MODE="measure", BENCHBOT_JOB=job,
                  BENCHBOT_SHARD=shard, _drop_token="1")
    assert run.returncode == 0, run.stderr
    return run


def artifacts(env: Env, *runs: Run) -> Path:
    """The publish job's download: each measure job's artifact in a folder of its name
    (actions/download-artifact with a pattern and merge-multiple: false)."""
    folder = env.tmp / "downloaded"
    folder.mkdir(exist_ok=True)
    for run in runs:
        shutil.copytree(run.results_dir, folder / run.outputs["artifact"])
    return folder


def publish_shards(env: Env, payload: dict[str, Any], job: str, folder: Path,
                   result: str = "success") -> Run:
    """The publish job over the downloaded artifacts."""
    run = env.run("issue_comment", payload, BENCHBOT_MODE="publish", BENCHBOT_JOB=job,
                  BENCHBOT_MEASURE_RESULT=result, BENCHBOT_RESULTS_DIR=str(folder))
    assert run.returncode == 0, run.stderr
    return run
