"""The hand-over from the gate to the measure and publish steps: one approved comparison.

The gate (on a GitHub-hosted runner, with the write token) decides that a comparison runs,
pins the exact commits and settings, creates the check run and the sticky comment, and
writes a ``Job`` as a step output. The measure step (on the benchmark runner, with no write
token) builds and measures exactly those commits; the publish step writes the results
where the gate left its marks. The JSON travels through ``needs.<job>.outputs`` and
``env:``, never through a script's text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from benchbot.errors import UsageError
from benchbot.github.command import BenchCommand
from benchbot.github.event import Side
from benchbot.model import OUTCOMES, Outcome

JOB_VERSION = 1
_SHA = re.compile(r"^[0-9a-f]{40}$")
CheckKind = Literal["check", "status", "none"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckRef:
    """Where the gate put the pull request's status: a check run, a commit status, or nowhere."""

    kind: CheckKind = "none"
    id: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """One comparison the gate approved, with every commit pinned."""

    number: int
    base: Side  # the commit measured as base (the merge-base, or the base branch's tip)
    head: Side  # the commit measured as head
    config_sha: str  # where the config is read: the base branch's tip
    config_path: str | None = None  # the action's `config` input, if any
    command: BenchCommand = field(default_factory=BenchCommand)
    trigger: int | None = None  # the /bench comment's id
    requested_by: str | None = None
    check_name: str = "benchbot"
    fail_on: tuple[Outcome, ...] = ("slower",)
    comment: bool = True
    check: CheckRef = field(default_factory=CheckRef)
    comment_id: int | None = None
    identity: str | None = None  # the login the sticky comment is written by

    def to_json(self) -> str:
        """The job as one line of JSON (a step output)."""
        data = asdict(self)
        data["version"] = JOB_VERSION
        return json.dumps(data, separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Job:
        """Read the gate's hand-over; anything malformed is a UsageError naming the field."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"BENCHBOT_JOB (input job): not JSON: {exc.msg}") from None
        if not isinstance(data, dict) or data.get("version") != JOB_VERSION:
            raise UsageError(
                f"BENCHBOT_JOB (input job): not a job of version {JOB_VERSION} from `mode: gate`"
            )
        try:
            return _job(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"BENCHBOT_JOB (input job): malformed: {exc}") from None


def _job(data: Mapping[str, Any]) -> Job:
    command = data.get("command") or {}
    fail_on = tuple(data.get("fail_on") or ("slower",))
    if any(o not in OUTCOMES for o in fail_on):
        raise ValueError(f"fail_on: {fail_on!r}")
    check = data.get("check") or {}
    if check.get("kind", "none") not in ("check", "status", "none"):
        raise ValueError(f"check.kind: {check.get('kind')!r}")
    return Job(
        number=_int(data["number"], "number"),
        base=_side(data["base"], "base"),
        head=_side(data["head"], "head"),
        config_sha=_sha(data["config_sha"], "config_sha"),
        config_path=str(data["config_path"]) if data.get("config_path") else None,
        command=BenchCommand(
            runs=_opt_int(command.get("runs"), "command.runs"),
            only=tuple(str(x) for x in command["only"]) if command.get("only") else None,
            parity=float(command["parity"]) if command.get("parity") is not None else None,
            confirm=_opt_bool(command.get("confirm"), "command.confirm"),
            aa=_opt_bool(command.get("aa"), "command.aa"),
            sha=str(command["sha"]) if command.get("sha") else None,
        ),
        trigger=_opt_int(data.get("trigger"), "trigger"),
        requested_by=str(data["requested_by"]) if data.get("requested_by") else None,
        check_name=str(data.get("check_name") or "benchbot"),
        fail_on=fail_on,
        comment=bool(data.get("comment", True)),
        check=CheckRef(kind=check.get("kind", "none"), id=_opt_int(check.get("id"), "check.id")),
        comment_id=_opt_int(data.get("comment_id"), "comment_id"),
        identity=str(data["identity"]) if data.get("identity") else None,
    )


def _side(data: Mapping[str, Any], name: str) -> Side:
    repo = data.get("repo")
    return Side(ref=str(data.get("ref") or ""), sha=_sha(data["sha"], f"{name}.sha"),
                repo=str(repo) if repo else None)


def _sha(value: Any, name: str) -> str:
    if not isinstance(value, str) or not _SHA.match(value):
        raise ValueError(f"{name}: not a full commit SHA")
    return value


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name}: not an integer")
    return value


def _opt_int(value: Any, name: str) -> int | None:
    return None if value is None else _int(value, name)


def _opt_bool(value: Any, name: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise ValueError(f"{name}: not true or false")
