"""The results file: building it, writing it atomically, reading it back.

The file must explain its own verdicts without the code (spec/interfaces.md): raw
samples in the order measured, settings, seed, environment, the noise model and, per
workload, every figure of the verdict with its reason.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from benchbot import __version__, files
from benchbot.config import Config, WorkloadConfig
from benchbot.errors import ResultsError
from benchbot.model import OUTCOMES, ArmSamples, Verdict
from benchbot.runner import PhaseResult

SCHEMA_VERSION = 1
# History:
# 1 - first version: arms, phases, aa, verdict, confirmation, environment, seed

RULE_SENTENCE = (
    "A workload is slower (faster) only when the median of per-pair ratios leaves "
    "max(parity, bootstrap interval half-width, A/A noise, floor/median) upward (downward) "
    "and the best-run ratio leaves max(parity, floor/best run) the same way; level when "
    "the whole interval lies inside the parity band; inconclusive otherwise."
)

ARM_NAMES = {"aa": ("base", "base_again"), "ab": ("base", "head"), "confirm": ("base", "head")}


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadResult:
    """Everything measured and judged for one workload."""

    config: WorkloadConfig
    phases: Mapping[str, PhaseResult]
    aa: Verdict | None
    verdict: Verdict
    confirmation: Verdict | None
    first: Verdict | None  # the A/B phase's own verdict, before confirmation


def verdict_dict(v: Verdict) -> dict[str, Any]:
    """A Verdict as the results file stores it (ci as a list, no NaN)."""
    out = asdict(v)
    out["ci"] = list(v.ci) if v.ci is not None else None
    return {k: (None if isinstance(x, float) and not math.isfinite(x) else x) for k, x in out.items()}


def _arm(samples: ArmSamples, w: WorkloadConfig) -> dict[str, Any]:
    arm: dict[str, Any] = {
        "samples_ns": list(samples.value_ns) if _reported_time(w) else list(samples.wall_ns),
        "wall_ns": list(samples.wall_ns),
        "cpu_ns": list(samples.cpu_ns),
        "maxrss_kib": list(samples.maxrss_kib),
    }
    if w.metric == "reported" and w.better == "higher":
        arm["values"] = list(samples.value_ns)
    return arm


def _reported_time(w: WorkloadConfig) -> bool:
    return w.metric == "reported" and w.better == "lower"


def _pooled(phases: Mapping[str, PhaseResult], w: WorkloadConfig) -> dict[str, Any]:
    """The base and head arms over the A/B and confirmation phases, in measured order."""
    base, head = ArmSamples(), ArmSamples()
    for name in ("ab", "confirm"):
        if name in phases:
            _extend(base, phases[name].reference)
            _extend(head, phases[name].candidate)
    return {"base": _arm(base, w), "head": _arm(head, w)}


def _extend(into: ArmSamples, more: ArmSamples) -> None:
    into.wall_ns += more.wall_ns
    into.cpu_ns += more.cpu_ns
    into.maxrss_kib += more.maxrss_kib
    into.value_ns += more.value_ns


def _phase(name: str, result: PhaseResult, w: WorkloadConfig) -> dict[str, Any]:
    ref, cand = ARM_NAMES[name]
    return {
        "arms": {ref: _arm(result.reference, w), cand: _arm(result.candidate, w)},
        "order": "".join("AB" if o == "RC" else "BA" for o in result.orders),
        "failure": result.failure_text,
    }


def benchmark_dict(r: WorkloadResult) -> dict[str, Any]:
    """One entry of ``benchmarks[]``."""
    w = r.config
    return {
        "name": w.name,
        "metric": w.metric,
        "better": w.better,
        "unit": "ns" if w.better == "lower" else "reported",
        "command": list(w.run),
        "runs": w.runs,
        "parity": w.parity,
        "floor_ns": w.effective_floor_ns,
        "arms": _pooled(r.phases, w),
        "phases": {name: _phase(name, res, w) for name, res in r.phases.items()},
        "aa": {"verdict": verdict_dict(r.aa)} if r.aa is not None else None,
        "ab": {"verdict": verdict_dict(r.first)} if r.first is not None else None,
        "verdict": verdict_dict(r.verdict),
        "confirmation": (
            {"verdict": verdict_dict(r.confirmation)} if r.confirmation is not None else None
        ),
    }


def summarize(benchmarks: Sequence[Mapping[str, Any]], fail_on: Sequence[str], aborted: bool) -> dict[str, Any]:
    """Counts per outcome, the geometric mean ratio, and the check's conclusion."""
    counts: dict[str, int] = dict.fromkeys(OUTCOMES, 0)
    logs = []
    for b in benchmarks:
        v = b["verdict"]
        counts[v["outcome"]] += 1
        if v["outcome"] != "invalid" and v.get("ratio"):
            logs.append(math.log(v["ratio"]))
    geomean = math.exp(sum(logs) / len(logs)) if logs else None
    if any(counts[o] for o in fail_on):
        conclusion = "failure"
    elif aborted or counts["inconclusive"] or counts["invalid"]:
        conclusion = "neutral"
    else:
        conclusion = "success"
    return {**counts, "geomean_ratio": geomean, "conclusion": conclusion}


def build(
    *,
    config: Config,
    workloads: Sequence[WorkloadResult],
    base: Mapping[str, str],
    head: Mapping[str, str],
    seed: int,
    environment: Mapping[str, Any],
    repository: str | None,
    aa_status: Mapping[str, Any],
) -> dict[str, Any]:
    """Assemble the results document."""
    benchmarks = [benchmark_dict(w) for w in workloads]
    first = config.workloads[0] if config.workloads else None
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "benchbot", "version": __version__},
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "repository": repository,
        "base": dict(base),
        "head": dict(head),
        "settings": {
            "runs": first.runs if first else 0,
            "warmup": first.warmup if first else 0,
            "order": first.order if first else "alternate",
            "seed": seed,
            "parity": first.parity if first else 0.02,
            "alpha": config.alpha,
            "confirm": config.confirm,
            "aa": config.aa.enabled,
            "config": config.path,
        },
        "noise_model": {
            "floor_ns": first.effective_floor_ns if first else 25_000.0,
            "parity": first.parity if first else 0.02,
            "rule": RULE_SENTENCE,
        },
        "environment": dict(environment),
        "aa": dict(aa_status),
        "benchmarks": benchmarks,
        "summary": summarize(benchmarks, config.status.fail_on, bool(aa_status.get("aborted"))),
        "status": {"fail_on": list(config.status.fail_on), "name": config.status.name},
    }


def dumps(document: Mapping[str, Any]) -> str:
    """Serialise a results document (no NaN: JSON has none)."""
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see ``benchbot.files``)."""
    files.write_text(path, text)


def save(path: Path, document: Mapping[str, Any]) -> None:
    """Write a results document atomically."""
    write_atomic(path, dumps(document))


def load(path: Path) -> dict[str, Any]:
    """Read a results file and check it against the shipped JSON Schema.

    Every problem is a ResultsError of one line naming the file and, for a file that
    does not match the schema, the place in it (``benchmarks[0].verdict: 'outcome' is a
    required property``).
    """
    try:
        data = Path(path).read_bytes()
    except IsADirectoryError:
        raise ResultsError(f"{path}: is a directory, not a results file") from None
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{path}: not a results file (not UTF-8 text at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise ResultsError(f"{path}: not a results file (nested too deeply)") from None
    if not isinstance(document, dict) or "schema_version" not in document:
        raise ResultsError(f"{path}: not a benchbot results file (no schema_version)")
    if document["schema_version"] != SCHEMA_VERSION:
        raise ResultsError(
            f"{path}: schema_version {_clip(repr(document['schema_version']))} is not supported "
            f"(this benchbot reads {SCHEMA_VERSION})"
        )
    problem = validation_error(document)
    if problem is not None:
        raise ResultsError(f"{path}: does not match the results schema: {problem}")
    return document


def validation_error(document: Any) -> str | None:
    """The first place where ``document`` breaks the results schema, in one line, or None."""
    error = jsonschema.exceptions.best_match(_validator().iter_errors(document))
    if error is None:
        return None
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"{where.lstrip('.') or '(top level)'}: {_clip(error.message)}"


def _clip(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(schema())
    return cls(schema())


def schema() -> dict[str, Any]:
    """The JSON Schema of the results file, shipped with the package."""
    text = resources.files("benchbot").joinpath("schemas/results.schema.json").read_text()
    return dict(json.loads(text))


def merge(documents: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Combine the results of shards of one comparison (same base and head)."""
    if not documents:
        raise ResultsError("nothing to merge")
    first = documents[0]
    seen: set[str] = set()
    benchmarks: list[dict[str, Any]] = []
    for doc in documents:
        for side in ("base", "head"):
            if doc[side]["sha"] != first[side]["sha"]:
                raise ResultsError(
                    f"cannot merge: {side} is {doc[side]['sha'][:12]} in one file and "
                    f"{first[side]['sha'][:12]} in another"
                )
        for b in doc["benchmarks"]:
            if b["name"] in seen:
                raise ResultsError(f"cannot merge: workload {b['name']!r} is in two files")
            seen.add(b["name"])
            benchmarks.append(b)
    failed = sorted({n for d in documents for n in d["aa"]["failed"]})
    aborted = any(d["aa"].get("aborted") for d in documents)
    statuses = {d["aa"]["status"] for d in documents}
    merged = dict(first)
    merged["benchmarks"] = benchmarks
    merged["aa"] = {
        **first["aa"], "failed": failed, "aborted": aborted,
        "status": "failed" if "failed" in statuses else ("passed" if "passed" in statuses else "skipped"),
    }
    warnings = [w for d in documents for w in d["environment"].get("warnings", [])]
    merged["environment"] = {**first["environment"], "warnings": list(dict.fromkeys(warnings))}
    fail_on = first.get("status", {}).get("fail_on", ["slower"])
    merged["summary"] = summarize(benchmarks, fail_on, aborted)
    return merged
