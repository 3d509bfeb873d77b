"""What the gate, measure and publish steps share: the log, step outputs and summary,
the config at the base revision, and the publisher of one job."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from benchbot import engine, gitops
from benchbot.config import Config, parse_config_bytes
from benchbot.errors import ConfigError, OutputError
from benchbot.github import post, rescue
from benchbot.github.env import DEFAULT_ARTIFACT, ActionEnv
from benchbot.github.event import Side
from benchbot.github.fetch import ensure_commits
from benchbot.github.job import Job

# What benchbot appends to one step's job summary, in bytes: GitHub refuses a step's whole
# summary over 1024 KiB ("$GITHUB_STEP_SUMMARY upload aborted, supports content up to a
# size of 1024k"), so this keeps well clear of that, whatever else the step wrote.
STEP_SUMMARY_LIMIT = 1_000_000


class Log:
    """Lines for the job's log. Text in them may come from the code under test, so inside
    Actions the stream escapes workflow commands (``logsafe``); ``notice`` is benchbot's
    own command and goes around that."""

    def __init__(self, err: TextIO) -> None:
        self.err = err

    def line(self, text: str) -> None:
        self.err.write(f"benchbot: {text}\n")
        self.err.flush()

    def notice(self, text: str) -> None:
        command = getattr(self.err, "command", None)
        line = f"::notice title=benchbot::{_command_data(text)}"
        if callable(command):
            command(line)
        else:
            self.err.write(line + "\n")
        self.err.flush()


def _command_data(text: str) -> str:
    """A workflow command's data, escaped as the runner expects (%, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def append_summary(path: Path | None, text: str, *, artifact: str = DEFAULT_ARTIFACT,
                   run_url: str | None = None) -> None:
    """Add markdown to the job summary (GITHUB_STEP_SUMMARY), cut with a pointer to the
    artifact where the summary would pass ``STEP_SUMMARY_LIMIT`` bytes."""
    if path is None:
        return
    room = STEP_SUMMARY_LIMIT - _size(path) - 1  # 1: the line end after a pointer
    tail = post.too_long_note("a job summary", STEP_SUMMARY_LIMIT, artifact, run_url, "bytes")
    text = post.fit(text, room, tail, unit="bytes")
    _append(path, "GITHUB_STEP_SUMMARY", text if text.endswith("\n") else text + "\n")


def _size(path: Path) -> int:
    """The bytes a file holds already (0 for a missing file; a pipe reports 0 too)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def write_outputs(path: Path | None, values: Mapping[str, str]) -> None:
    """Append step outputs in the delimiter form, safe for any value (GITHUB_OUTPUT)."""
    blocks = []
    for name, value in values.items():
        delimiter = f"ghadelimiter_{uuid.uuid4()}"
        blocks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    _append(path, "GITHUB_OUTPUT", "".join(blocks))


def _append(path: Path | None, variable: str, text: str) -> None:
    if path is None:
        return
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise OutputError(f"cannot write {variable} {path}: {exc.strerror or exc}") from None


def base_refspecs(base: Side) -> list[str]:
    """Where the base branch's tip can be fetched from."""
    return [f"+refs/heads/{base.ref}:refs/remotes/origin/{base.ref}"] if base.ref else []


def fetch(action_env: ActionEnv, wants: Mapping[str, list[str]]) -> Path:
    """Bring the commits into the workspace's clone; return the repository's root."""
    ensure_commits(action_env.workspace, wants, token=action_env.token, server_url=action_env.server_url)
    return gitops.toplevel(action_env.workspace)


def load_config(action_env: ActionEnv, repo: Path, base_sha: str) -> Config:
    """The config at the base revision, with the action's inputs put over it."""
    if action_env.config_path:
        path = action_env.config_path.removeprefix("./")
        data = gitops.show_file(repo, base_sha, path)
        if data is None:
            raise ConfigError(
                f"{path}: not found at the base revision {base_sha[:12]}; benchbot reads its "
                "config from the base branch, so that a pull request cannot change how it is "
                "judged: commit it there first (the path is relative to the repository root)"
            )
        config = parse_config_bytes(data, path=path)
    else:
        request = engine.Request(repo=repo, base=base_sha, head=base_sha)
        config = engine.load_request_config(request, repo, base_sha)
    status = dataclasses.replace(config.status, name=action_env.check_name or config.status.name)
    comment = action_env.comment if action_env.comment is not None else config.github.comment
    github = dataclasses.replace(config.github, comment=comment)
    return dataclasses.replace(config, status=status, github=github)


def publisher(api: post.Api, action_env: ActionEnv, job: Job) -> post.Publisher:
    """The publisher of one job, continuing where the gate left the check and the comment."""
    return post.Publisher(
        api, number=job.number, head_sha=job.head.sha, check_name=job.check_name,
        run_url=action_env.run_url, comment=job.comment, bot_login=action_env.bot_login,
        check=job.check, comment_id=job.comment_id, identity=job.identity,
        retry_wait_s=2.0 if action_env.throttle else 0.05,
        external_id=rescue.external_id(action_env.run_id),
    )


def first_line(message: str) -> str:
    """The first line of a message, for a check's title or a status."""
    lines = message.strip().splitlines()
    return lines[0] if lines else "error"
