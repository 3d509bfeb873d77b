"""The history store (docs/results.md, "The history store"): one file per commit, each a
step of the first-parent line, commit against the commit it was compared with.

A store is a directory of ``<sha>.json`` files, ``kind: "history-commit"``, written
atomically (``benchbot.core.files``), checked against ``schemas/history.schema.json`` when
read. A file holds what the trend and the page need of the comparison: each workload's
verdict and its figures, the step's own estimate (``trend.StepEstimate``) and how the
comparison was made; not the raw runs (docs/results.md says why). ``Store.read`` reads
every file and refuses a corrupt or foreign one with one line, never stopping at it.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from benchbot import __version__
from benchbot.core import codec, files
from benchbot.core.codec import omitted_when_none
from benchbot.core.errors import ResultsError
from benchbot.core.model import Better, Metric, Outcome, ToolInfo
from benchbot.results import schemacheck
from benchbot.verdict.trend import StepEstimate

SCHEMA_VERSION = 1
KIND = "history-commit"
# History:
# 1 - first version: commit, against, skipped, state, workloads with their steps

State = Literal["measured", "identical", "failed"]
SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
REASON_LIMIT = 300  # characters of a verdict's reason kept (it may quote a program's output)


@dataclass(frozen=True, slots=True, kw_only=True)
class CommitRef:
    """A commit: its SHA and its subject (text from the repository, escaped wherever shown)."""

    sha: str
    subject: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadStep:
    """One workload's step into the commit: the verdict of its comparison and the step's
    estimate for the trend."""

    name: str
    unit: str = "ns"
    better: Better = "lower"
    metric: Metric = "wall"
    parity: float = 0.02
    outcome: Outcome
    reason_code: str | None = None
    reason: str | None = None
    ratio: float | None = None  # the verdict's (its estimate where measured on past the call)
    ci: tuple[float, float] | None = None
    pairs: int = 0
    stopped: str | None = None  # why measuring stopped (sequential), in words
    step: StepEstimate | None = None  # the trend's estimate (None: none could be made)
    counts: str | None = None  # how the instruction counts read (None: not counted)
    memory: Outcome | None = None  # the peak-memory verdict
    # What the verdict rests on (benchbot.verdict.figures): its signals, the counts' ratio.
    settled_by: str | None = omitted_when_none(default=None)
    work: float | None = omitted_when_none(default=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class StepSettings:
    """How the step was measured."""

    alpha: float
    seed: int
    budget_s: float  # the time this step was given
    precision: float | None = None  # measured on until the estimate was within this
    config: str | None = None
    runs: int | None = None  # a fixed design's pairs (None: sequential)
    max_runs: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Where:
    """The machine and the sandbox the step was measured on."""

    machine: str | None = None
    cores: int = 0
    load_before: tuple[float, ...] = ()
    load_after: tuple[float, ...] = ()
    sandbox: str | None = None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CommitRecord:
    """One commit of the store: its step against ``against`` (its first parent, or the
    nearest ancestor that could be built, the commits between being ``skipped``)."""

    kind: Literal["history-commit"] = "history-commit"
    schema_version: int = SCHEMA_VERSION
    tool: ToolInfo
    created: str
    repository: str | None = None
    commit: CommitRef
    against: CommitRef
    skipped: tuple[CommitRef, ...] = ()
    state: State  # identical: the build equals against's, not measured; failed: see why
    why: str | None = None
    workloads: tuple[WorkloadStep, ...] = ()
    settings: StepSettings | None = None
    environment: Where | None = None
    wall_s: float = 0.0
    # A step made of a push's commits at once (the Action): the first-parent commits it holds
    # beyond ``commit`` itself, oldest first.
    spans: tuple[CommitRef, ...] = field(default=())

    @property
    def sha(self) -> str:
        return self.commit.sha


def record(**parts: Any) -> CommitRecord:
    """A record stamped with the tool and the time."""
    return CommitRecord(tool=_tool(), created=_now(), **parts)


def stamped(doc: CommitRecord) -> CommitRecord:
    """``doc`` stamped again with this benchbot and the time now: what the store orders by
    (``historyreport.line``) is when benchbot wrote a record, never a time it was handed."""
    return replace(doc, tool=_tool(), created=_now())


def _tool() -> ToolInfo:
    return ToolInfo(name="benchbot", version=__version__)


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- JSON ------------------------------------------------------------------------------------


def to_json(doc: CommitRecord) -> dict[str, Any]:
    data: dict[str, Any] = _rounded(codec.encode(doc))
    return data


def dumps(doc: CommitRecord) -> str:
    """The record as compact JSON (no indentation: a store holds thousands of them)."""
    return json.dumps(to_json(doc), separators=(",", ":"), allow_nan=False, ensure_ascii=False) + "\n"


def _rounded(value: Any) -> Any:
    """Floats to 7 significant digits (a ratio's 0.00001%): what a measurement can mean."""
    if isinstance(value, float):
        return float(f"{value:.7g}") if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


@functools.cache
def schema() -> dict[str, Any]:
    """The JSON Schema of a store's file, shipped with the package."""
    text = resources.files("benchbot").joinpath("schemas/history.schema.json").read_text()
    return dict(json.loads(text))


@functools.cache
def _fast() -> schemacheck.Check:
    return schemacheck.compile_schema(schema())


def validation_error(document: Any) -> str | None:
    """The first place where ``document`` breaks the schema, in one line, or None (a
    valid document is told by ``schemacheck``, an invalid one explained by jsonschema)."""
    if _fast()(document):
        return None
    import jsonschema.validators

    from benchbot.results.resultsdir import best_match

    cls = jsonschema.validators.validator_for(schema())
    return best_match(cls(schema()).iter_errors(document)) or "(top level): not valid"


def parse(document: Any, *, where: str) -> CommitRecord:
    """A record from JSON values: its kind and version, the schema, then typed."""
    from benchbot.results.resultsdir import parse_kind

    return parse_kind(document, CommitRecord, where=where, kind=KIND, label="history",
                      version=SCHEMA_VERSION, problem=validation_error)


def load(path: Path) -> CommitRecord:
    """Read one file of a store; every problem is a one-line ResultsError naming it, as is
    a file whose name is not the SHA of the commit it holds."""
    from benchbot.results.resultsdir import read_json

    doc = parse(read_json(path, "a history file"), where=str(path))
    if path.name != f"{doc.commit.sha}.json":
        raise ResultsError(f"{path}: holds commit {doc.commit.sha[:12]}, not the one its name says")
    return doc


# --- the store -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Read:
    """What a store holds: the records that could be read, and one line for each file that
    could not."""

    records: dict[str, CommitRecord]
    problems: tuple[str, ...]


class Store:
    """A directory of commit records."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def file(self, sha: str) -> Path:
        return self.path / f"{sha}.json"

    def names(self) -> Iterator[Path]:
        """The store's JSON files (a temporary file of an atomic write, named with a leading
        dot, is not one)."""
        if not self.path.is_dir():
            return iter(())
        return iter(sorted(p for p in self.path.iterdir()
                           if p.suffix == ".json" and not p.name.startswith(".")))

    def read(self) -> Read:
        """Every record; a file that cannot be read, is not a record, or is named for
        another commit is refused with one line, and the others are read on."""
        records: dict[str, CommitRecord] = {}
        problems: list[str] = []
        for path in self.names():
            if not SHA.fullmatch(path.stem):
                problems.append(f"{path}: not a commit's file (its name is not a commit SHA)")
                continue
            try:
                records[path.stem] = load(path)
            except ResultsError as exc:
                problems.append(str(exc).splitlines()[0])
        return Read(records=records, problems=tuple(problems))

    def has(self, sha: str) -> bool:
        """Whether the store holds a readable record of ``sha``."""
        path = self.file(sha)
        if not path.is_file():
            return False
        try:
            load(path)
        except ResultsError:
            return False
        return True

    def write(self, doc: CommitRecord) -> Path:
        """Write one record atomically; its path."""
        path = self.file(doc.commit.sha)
        files.write_text(path, dumps(doc))
        return path
