"""The bisect's results document (``kind: "bisect"``): its dataclasses, JSON, schema and loader.

A document of its own beside the comparison's results file (``benchbot.results.resultsdir``): the
commits in order (tree, build, hash of the built worktree), every step with its figures and
the error it spent, and the answer. Written atomically (``benchbot.core.files``); read back by
``load``, which checks it against ``schemas/bisect.schema.json`` and names the first
problem in one line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from benchbot import __version__
from benchbot.core import codec, files
from benchbot.core.codec import omitted_when_none
from benchbot.core.model import Environment, Outcome, ProfileTable, Revision, SandboxInfo, ToolInfo

SCHEMA_VERSION = 1
# History:
# 1 - first version: commits, steps, answer, settings, environment

BuildState = Literal["ok", "skipped", "not_built"]
AnswerKind = Literal["culprits", "range", "partial", "no_change"]
# How the error is spread over the steps (docs/verdict.md, "Bisecting").
SPENDING = "step k (of those measured) is judged at alpha * 6 / (pi^2 k^2); the sum is alpha"
# A commit as the bisect's answer, reports, check and progress lines show it: this many hex
# digits, as GitHub shows a commit (the document keeps the full SHA).
SHORT_SHA = 7


def short(sha: str) -> str:
    """``sha`` as the bisect's outputs show it (SHORT_SHA hex digits)."""
    return sha[:SHORT_SHA]


@dataclass(frozen=True, slots=True, kw_only=True)
class Commit:
    """One commit of the first-parent line, good first: whether it was built and what its
    build produced for the workload."""

    sha: str
    subject: str
    tree: str
    build: BuildState  # not_built: the search never needed it
    why: str | None = None  # skipped: why (the build failed, its runs failed)
    output_hash: str | None = None  # sha256 of the built worktree (measure.lab.output_hash; None: not hashed)


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One comparison of the search: ``left`` the reference, ``right`` the candidate."""

    number: int
    left: str
    right: str
    outcome: Outcome
    measured: bool  # False: identical build output (level by construction) or no budget left
    reason: str | None = None
    ratio: float | None = None
    ci: tuple[float, float] | None = None
    pairs: int = 0
    wall_s: float = 0.0
    alpha: float = 0.0  # the error this step spent (0 when not measured)
    budget_s: float = 0.0  # the time it was given
    runs_failed: bool = False
    # What the verdict rests on (benchbot.verdict.figures): its signals, and the instruction
    # counts' ratio and reading where counted.
    settled_by: str | None = omitted_when_none(default=None)
    work: float | None = omitted_when_none(default=None)
    counts: str | None = omitted_when_none(default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class Culprit:
    """A commit named as carrying (part of) the change, by the step against its parent (or
    its nearest built ancestor, the commits between being ``skipped``)."""

    sha: str
    parent: str
    outcome: Outcome
    ratio: float | None
    ci: tuple[float, float] | None
    step: int
    skipped: tuple[str, ...] = ()  # the change may be at one of these instead
    settled_by: str | None = omitted_when_none(default=None)  # as its step's
    work: float | None = omitted_when_none(default=None)
    # Where the change is: its step's profile (benchbot.profiles.profiling); absent: not profiled
    profile: ProfileTable | None = omitted_when_none(default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class Range:
    """Commits after ``left`` up to ``right`` among which a change could not be placed."""

    left: str
    right: str
    why: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """What the bisect found: culprits, ranges left undecided, or no change at all."""

    kind: AnswerKind
    culprits: tuple[Culprit, ...] = ()
    ranges: tuple[Range, ...] = ()
    sentence: str


@dataclass(frozen=True, slots=True, kw_only=True)
class BisectSettings:
    """How the bisect measured: the error for all steps, the budgets, the seed."""

    alpha: float
    parity: float
    budget_s: float  # the whole bisect
    step_budget_s: float  # the most one step may take
    seed: int
    config: str
    runs: int | None = None  # fixed pairs per phase (None: sequential)
    max_runs: int = 1000
    spending: str = SPENDING


@dataclass(frozen=True, slots=True, kw_only=True)
class BisectResults:
    """The whole bisect document."""

    kind: Literal["bisect"] = "bisect"
    schema_version: int
    tool: ToolInfo
    created: str
    repository: str | None
    good: Revision
    bad: Revision
    workload: str
    commits: tuple[Commit, ...]
    steps: tuple[Step, ...]
    answer: Answer
    settings: BisectSettings
    environment: Environment
    sandbox: SandboxInfo | None = None
    wall_s: float = 0.0


def build_document(**parts: Any) -> BisectResults:
    """The document, stamped with the tool and the time."""
    return BisectResults(
        schema_version=SCHEMA_VERSION, tool=ToolInfo(name="benchbot", version=__version__),
        created=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), **parts)


def to_json(doc: BisectResults) -> dict[str, Any]:
    data: dict[str, Any] = codec.encode(doc)
    return data


def dumps(doc: BisectResults) -> str:
    return json.dumps(to_json(doc), indent=2, allow_nan=False) + "\n"


def save(path: Path, doc: BisectResults) -> None:
    """Write the document atomically."""
    files.write_text(path, dumps(doc))


def schema() -> dict[str, Any]:
    """The JSON Schema of the bisect document, shipped with the package."""
    text = resources.files("benchbot").joinpath("schemas/bisect.schema.json").read_text()
    return dict(json.loads(text))


def validation_error(document: Any) -> str | None:
    """The first place where ``document`` breaks the schema, in one line, or None."""
    import jsonschema.validators

    from benchbot.results.resultsdir import best_match

    cls = jsonschema.validators.validator_for(schema())
    return best_match(cls(schema()).iter_errors(document))


def parse(document: Any, *, where: str = "bisect") -> BisectResults:
    """A bisect document from JSON values: checked against the schema, then typed."""
    from benchbot.results.resultsdir import parse_kind

    return parse_kind(document, BisectResults, where=where, kind="bisect", label="bisect",
                      version=SCHEMA_VERSION, problem=validation_error)


def is_bisect_file(path: Path) -> bool:
    """Whether ``path`` holds a JSON object whose ``kind`` is ``bisect`` (False for anything
    else, unreadable files included: the results loader then says what is wrong)."""
    from benchbot.results.resultsdir import READ_LIMIT

    try:
        document = json.loads(files.read_bounded(path, READ_LIMIT).decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return False
    return isinstance(document, dict) and document.get("kind") == "bisect"


def load(path: Path) -> BisectResults:
    """Read a bisect file; every problem is a one-line ResultsError naming the file."""
    from benchbot.results.resultsdir import read_json

    return parse(read_json(path, "a bisect file"), where=str(path))
