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
from dataclasses import dataclass, field
from typing import Literal

from benchbot.config.settings import Overrides, SettingError, check_shards
from benchbot.core import codec
from benchbot.core.errors import UsageError
from benchbot.core.model import Outcome, Shard
from benchbot.github.command import BenchCommand
from benchbot.github.event import Side

JOB_VERSION = 1
_SHA = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckRef:
    """Where the gate put the pull request's status: a check run, a commit status, or nowhere."""

    kind: Literal["check", "status", "none"] = "none"
    id: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """One comparison the gate approved, with every commit and setting pinned."""

    version: int = JOB_VERSION
    number: int
    base: Side  # the commit measured as base (the merge-base, or the base branch's tip)
    head: Side  # the commit measured as head
    config_sha: str  # where the config is read: the base branch's tip
    config_path: str | None = None  # the action's `config` input, if any
    overrides: Overrides = field(default_factory=Overrides)  # the action's inputs, then /bench's, over the config
    command: BenchCommand = field(default_factory=BenchCommand)  # the /bench comment, as typed (for the record)
    trigger: int | None = None  # the /bench comment's id
    requested_by: str | None = None
    check_name: str = "benchbot"
    fail_on: tuple[Outcome, ...] = ("slower",)
    comment: bool = True
    check: CheckRef = field(default_factory=CheckRef)
    comment_id: int | None = None
    identity: str | None = None  # the login the sticky comment is written by
    shards: int = 1  # machines the comparison is split over (a measure job each)

    def __post_init__(self) -> None:
        for name, sha in (("base.sha", self.base.sha), ("head.sha", self.head.sha),
                          ("config_sha", self.config_sha)):
            if not _SHA.match(sha):
                raise ValueError(f"{name}: not a full commit SHA")
        check_shards(self.shards)

    @property
    def shard_list(self) -> tuple[Shard, ...]:
        """Every shard of the job, for the measure jobs' matrix (1/1 when not sharded)."""
        return tuple(Shard(index=k, count=self.shards) for k in range(1, self.shards + 1))

    @property
    def bisect(self) -> bool:
        """Whether this job is a ``/bench bisect`` (its own check, comment and artifact)."""
        return self.command.bisect

    def artifact(self, base: str, shard: Shard | None) -> str:
        """The name a measure job uploads its results under: ``base`` when the comparison
        is not sharded, else one name per shard (artifact names may not hold a slash); a
        bisect's is ``base-bisect``, never taken for a comparison's."""
        if self.bisect:
            return f"{base}-bisect"
        if self.shards == 1 or shard is None:
            return base
        return f"{base}-shard-{shard.index}-of-{shard.count}"

    def to_json(self) -> str:
        """The job as one line of JSON (a step output)."""
        return json.dumps(codec.encode(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Job:
        """Read the gate's hand-over; anything malformed is a UsageError naming the field."""
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise UsageError(f"BENCHBOT_JOB (input job): not JSON: {exc}") from None
        if not isinstance(data, dict) or data.get("version") != JOB_VERSION:
            raise UsageError(
                f"BENCHBOT_JOB (input job): not a job of version {JOB_VERSION} from `mode: gate`"
            )
        try:
            return codec.decode(cls, data)
        except (codec.DecodeError, SettingError, TypeError, ValueError) as exc:
            message = " ".join(str(exc).split())[:200]
            raise UsageError(f"BENCHBOT_JOB (input job): malformed: {message}") from None
