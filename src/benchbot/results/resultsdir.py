"""The results file: building it, writing it atomically, reading it back.

The file must explain its own verdicts without the code (README, "Results file"): raw
samples in the order measured, settings, seed, environment, the noise model and, per
workload, every figure of the verdict with its reason. In memory it is a
``model.Results``; ``codec`` turns it into JSON values and back, after the file has been
checked against the shipped JSON Schema.
"""

from __future__ import annotations

import functools
import json
import math
import re
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from benchbot import __version__
from benchbot.config.config import Config, WorkloadConfig
from benchbot.core import codec, files
from benchbot.core.errors import ResultsError
from benchbot.core.model import (
    OUTCOMES,
    AASummary,
    ArmRuns,
    Benchmark,
    CheckSettings,
    Environment,
    Family,
    Measuring,
    NoiseModel,
    Outcome,
    PhaseRuns,
    ProfileTable,
    Results,
    Revision,
    RunSettings,
    SandboxInfo,
    ShardInfo,
    Skipped,
    Spent,
    SuiteRecord,
    Summary,
    ToolInfo,
)
from benchbot.results import schemacheck
from benchbot.verdict.judge import Judged

SCHEMA_VERSION = 3
# Versions this benchbot reads (an older file reads as it was written: what it lacks is
# absent, and it means what it meant).
READS = (1, 2, 3)
# History (additions keep a schema_version; a change of meaning raises it):
# 1 - first version: arms, phases, aa, verdict, confirmation, environment, seed
#     + sandbox; phases.*.failure_code and failure_kind; environment.other_cpu
#     + environment.machine; settings.family and config_digest; shard; after a merge
#       shards, missing_shards, failed_shards, unmeasured and benchmarks[].machine
#     + suites; benchmarks[].name may be <suite>/<benchmark>; samples_ns may be
#       fractional (a harness's time per iteration)
#     + skipped (workloads a change cannot affect, by their paths)
# 2 - a suite's benchmark has counts of its own: counts.base, base_again and head are
#     instructions per unit of work (counts.unit: iteration, call, round, loop; counts.units,
#     counts.runs: the counted runs, counts.exact, counts.counted_s), no longer absent;
#     its memory verdict is the memory its harness reports (arms' bytes_op and allocs_op),
#     no longer absent; measuring.timed_s and counted_s; suites[].counting, counted_runs
#     and counting_s; spent (where the wall time went); reason code counts_ahead;
#     settings.family counts a suite's benchmarks (in 1 it held the workloads known before
#     discovery, and each look of a suites-only comparison was judged as if m = 1)
# 3 - a memory verdict's outcome says more and less memory in those words (``more``,
#     ``less``), where 1 and 2 said ``slower`` and ``faster``; in the model it stays an
#     Outcome (more memory is the slower side), and files of 1 and 2 keep their words
#     + benchmarks[].profile (the functions that carry a called change: benchbot.profiles.profiling)
#       and spent.profiling_s

RULE_SENTENCE = (
    "A workload is slower (faster) only when the median of per-pair ratios leaves "
    "max(parity, bootstrap interval half-width, A/A noise, floor/median) upward (downward) "
    "and the best-run ratio leaves max(parity, floor/best run) the same way; level when "
    "the whole interval lies inside the parity band and the A/A noise within parity; "
    "inconclusive otherwise."
)
SEQUENTIAL_RULE_SENTENCE = (
    "Measured in rounds of base, base again and head, and judged at looks of 10, 15, 22, "
    "34 … pairs: a workload is slower (faster) only when the median of per-pair ratios "
    "leaves max(parity, interval half-width, A/A noise, floor/median) upward (downward), "
    "and the 10th- and 5th-percentile ratios of single runs and the best-run ratio each "
    "leave max(parity, floor/base's 10th percentile) the same way, the percentiles at "
    "least 0.6 and the best runs at least half as far, from 51 pairs on (from 15 where no "
    "run of head reaches base's runs; a faster one from 32 against both base arms' runs "
    "together, a slower one from 30 where each run of base's that reaches head's lies above "
    "all of head's runs (from 34: all but 12), or from 33 where only a few reach them); "
    "level when the "
    "whole interval lies inside the parity band and the A/A noise within parity. Each "
    "look's median interval is distribution-free and spends a share of alpha, so that all "
    "looks of all workloads together err at most alpha."
)

PER_UNIT_RULE_SENTENCE = (
    "A suite's benchmark whose instructions per iteration were counted apart (2 and 2 + n "
    "iterations, base twice) is level when they moved less than parity for sure and time's "
    "interval at alpha / workloads holds no change within ±50%, and slower (faster) when "
    "they moved by parity or more, beyond their own noise, and time points the same way "
    "with an interval that reaches that move; where time's interval stops short of it, "
    "inconclusive, unless time called that way by itself (then the call is time's)."
)


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadResult:
    """Everything measured and judged for one workload, before it becomes a Benchmark."""

    config: WorkloadConfig
    phases: Mapping[str, PhaseRuns]
    judged: Judged
    measuring: Measuring | None = None
    profile: ProfileTable | None = None  # where a called change is (benchbot.profiles.profiling)

if TYPE_CHECKING:
    import jsonschema.protocols


def _pooled(phases: Mapping[str, PhaseRuns], design: str) -> dict[str, ArmRuns]:
    """The base and head arms over the phases the verdict rests on, in measured order:
    the A/B and confirmation phases; for triplets, both base runs of every triplet."""
    parts = [phases[n] for n in ("ab", "confirm") if n in phases]
    pooled = {}
    for arm in ("base", "head"):
        runs = [p.arms[arm] for p in parts]
        if design == "triplets" and arm == "base" and "aa" in phases:
            runs = _interleaved(phases["aa"].arms["base"], phases["aa"].arms["base_again"])
        values = [r.values for r in runs if r.values is not None]
        pooled[arm] = ArmRuns(
            samples_ns=tuple(v for r in runs for v in r.samples_ns),
            wall_ns=tuple(v for r in runs for v in r.wall_ns),
            cpu_ns=tuple(v for r in runs for v in r.cpu_ns),
            maxrss_kib=tuple(v for r in runs for v in r.maxrss_kib),
            values=tuple(v for vs in values for v in vs) if values else None,
        )
    return pooled


def _interleaved(a: ArmRuns, b: ArmRuns) -> list[ArmRuns]:
    """One arm of both base runs, each triplet's two in turn."""
    def mix(x: tuple[float, ...] | tuple[int, ...], y: tuple[float, ...] | tuple[int, ...]) -> tuple:  # type: ignore[type-arg]
        return tuple(v for pair in zip(x, y, strict=False) for v in pair)

    values = mix(a.values, b.values) if a.values is not None and b.values is not None else None
    return [ArmRuns(samples_ns=mix(a.samples_ns, b.samples_ns), wall_ns=mix(a.wall_ns, b.wall_ns),
                    cpu_ns=mix(a.cpu_ns, b.cpu_ns), maxrss_kib=mix(a.maxrss_kib, b.maxrss_kib),
                    values=values)]


def benchmark(r: WorkloadResult) -> Benchmark:
    """One entry of ``benchmarks[]``."""
    w, j = r.config, r.judged
    assert j.final is not None
    design = r.measuring.design if r.measuring else "pairs"
    return Benchmark(
        name=w.name, metric=w.metric, better=w.better,
        unit=_unit(w), command=w.run,
        runs=w.runs if w.runs is not None else (r.measuring.pairs if r.measuring else 0),
        parity=w.parity, floor_ns=w.effective_floor_ns, arms=_pooled(r.phases, design),
        phases=dict(r.phases), aa=j.aa, ab=j.ab, verdict=j.final, confirmation=j.confirmation,
        measuring=r.measuring, counts=j.counts, memory=j.memory, profile=r.profile,
    )


def _unit(w: WorkloadConfig) -> str:
    """What the judged figure counts: instructions (metric: instructions, never a time),
    ns, or a throughput's unit."""
    if w.metric == "instructions":
        return "instructions"
    return "ns" if w.better == "lower" else (w.unit or "reported")


def summarize(benchmarks: Sequence[Benchmark], fail_on: Sequence[Outcome], aborted: bool,
              incomplete: bool = False) -> Summary:
    """Counts per outcome, the geometric mean ratio, and the check's conclusion.

    The conclusion is ``failure`` when an outcome in ``fail_on`` occurred (the one meaning
    of fail_on: the check, the exit status of ``compare --fail-on`` and the Action's
    conclusion), also when the comparison is ``incomplete``: a regression a shard found is
    not hidden because another shard's machine went down. Else ``neutral`` when the
    comparison is incomplete (a shard did not report or failed: the whole was not
    compared) or anything was inconclusive, invalid or aborted; else ``success``.
    """
    counts: dict[str, int] = dict.fromkeys(OUTCOMES, 0)
    logs = []
    for b in benchmarks:
        counts[b.verdict.outcome] += 1
        ratio = b.verdict.estimate or b.verdict.ratio  # the estimate, where measured past a call
        if b.verdict.outcome != "invalid" and ratio and b.metric != "instructions":
            logs.append(math.log(ratio))  # times only: an instruction count is not one
    geomean = math.exp(sum(logs) / len(logs)) if logs else None
    if any(counts[o] for o in fail_on):
        conclusion = "failure"
    elif incomplete or aborted or counts["inconclusive"] or counts["invalid"]:
        conclusion = "neutral"
    else:
        conclusion = "success"
    return Summary(**counts, geomean_ratio=geomean, conclusion=conclusion)  # type: ignore[arg-type]


def concluded(results: Results, fail_on: Sequence[Outcome], check_name: str | None = None) -> Results:
    """The same results judged against another ``fail_on`` (the summary made again)."""
    status = CheckSettings(fail_on=tuple(fail_on), name=check_name or results.status.name)
    return replace(results, status=status,
                   summary=summarize(results.benchmarks, fail_on, results.aa.aborted,
                                     results.is_incomplete))


def build(
    *,
    config: Config,
    workloads: Sequence[WorkloadResult],
    base: Revision,
    head: Revision,
    seed: int,
    environment: Environment,
    repository: str | None,
    aa: AASummary,
    sandbox: SandboxInfo | None = None,
    fail_on: Sequence[Outcome] = (),
    repo: str | None = None,
    config_file: str | None = None,
    family: Family | None = None,
    shard: ShardInfo | None = None,
    config_digest: str | None = None,
    suites: Sequence[SuiteRecord] = (),
    skipped: Sequence[Skipped] | None = None,
    spent: Spent | None = None,
) -> Results:
    """Assemble the results document (``shard``: the share of the comparison it holds;
    ``suites``: what each suite's harness reported; ``skipped``: the workloads not
    measured because the change cannot affect them)."""
    benchmarks = tuple(benchmark(w) for w in workloads)
    first = config.workloads[0] if config.workloads else WorkloadConfig(name="none", run=("none",))
    sequential = any(w.runs is None for w in config.workloads)
    fixed = [w for w in config.workloads if w.runs is not None]
    rule = SEQUENTIAL_RULE_SENTENCE if sequential else RULE_SENTENCE
    if sequential and fixed:  # a config that gives some workloads their own runs
        rule = f"With their own runs: {RULE_SENTENCE} Measured until settled: {rule}"
    if any(w.judged.counts is not None and w.judged.counts.unit is not None for w in workloads):
        rule = f"{rule} {PER_UNIT_RULE_SENTENCE}"
    return Results(
        schema_version=SCHEMA_VERSION,
        tool=ToolInfo(name="benchbot", version=__version__),
        created=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        repository=repository, base=base, head=head,
        settings=RunSettings(
            runs=fixed[0].runs or 0 if fixed else 0, warmup=first.warmup, order=first.order,
            seed=seed,
            parity=first.parity, alpha=config.alpha, confirm=config.confirm,
            aa=config.aa.enabled, config=config.path, repo=repo, config_file=config_file,
            budget_s=config.budget_s if sequential else None,
            max_runs=next(w.max_runs for w in config.workloads if w.runs is None)
            if sequential else None,
            family=family, config_digest=config_digest,
        ),
        noise_model=NoiseModel(floor_ns=first.effective_floor_ns, parity=first.parity,
                               rule=rule),
        environment=environment, aa=aa, benchmarks=benchmarks,
        summary=summarize(benchmarks, fail_on, aa.aborted),
        status=CheckSettings(fail_on=tuple(fail_on), name=config.status.name),
        sandbox=sandbox, shard=shard, suites=tuple(suites) or None,
        skipped=tuple(skipped) if skipped else None, spent=spent,
    )


# A memory verdict's outcome in the file from schema_version 3 (MEMORY_SINCE): the model
# keeps an Outcome, more memory being the slower side.
MEMORY_SINCE = 3
MEMORY_WORDS: dict[str, str] = {"slower": "more", "faster": "less"}
_MEMORY_OUTCOMES = {word: outcome for outcome, word in MEMORY_WORDS.items()}


def to_json(results: Results) -> dict[str, Any]:
    """The document as JSON values (a memory verdict in the words of its version)."""
    data: dict[str, Any] = codec.encode(results)
    if results.schema_version >= MEMORY_SINCE:
        for bench in data.get("benchmarks", ()):
            memory = bench.get("memory")
            if memory is not None:
                memory["outcome"] = MEMORY_WORDS.get(memory["outcome"], memory["outcome"])
    return data


def dumps(results: Results) -> str:
    """Serialise a results document (no NaN: JSON has none): indented, each list of
    numbers (the runs) on a line of its own, so that a file of 500 workloads' runs is a
    fifth of the size it would be with a line per number, and written in a fifth the time."""
    lists: list[str] = []
    document = to_json(results)
    nonce = secrets.token_hex(8)  # the markers' own: no text of the document holds it
    text = json.dumps(_numbers_marked(document, lists, nonce), indent=2, allow_nan=False)
    if text.count(nonce) != len(lists):  # some text does: written the plain way
        return json.dumps(document, indent=2, allow_nan=False) + "\n"
    marker = re.compile(rf'"{nonce}:(\d+)"')
    return marker.sub(lambda m: lists[int(m.group(1))], text) + "\n"


def _numbers_marked(value: Any, lists: list[str], nonce: str) -> Any:
    """``value`` with each list of two or more numbers replaced by a marker, its text
    kept in ``lists``."""
    if isinstance(value, dict):
        return {k: _numbers_marked(v, lists, nonce) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) > 1 and all(type(v) is int or type(v) is float for v in value):
            lists.append(json.dumps(value, allow_nan=False))
            return f"{nonce}:{len(lists) - 1}"
        return [_numbers_marked(v, lists, nonce) for v in value]
    return value


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see ``benchbot.core.files``)."""
    files.write_text(path, text)


def save(path: Path, results: Results) -> None:
    """Write a results document atomically."""
    write_atomic(path, dumps(results))


def load(path: Path) -> Results:
    """Read a results file, check it against the shipped JSON Schema, and make it typed.

    Every problem is a ResultsError of one line naming the file and, for a file that
    does not match the schema, the place in it (``benchmarks[0].verdict: 'outcome' is a
    required property``).
    """
    return parse(read_json(path, "a results file"), where=str(path))


# The most bytes of one JSON document benchbot reads: a results file of 500 workloads'
# runs at 200 pairs each is 27 MB (benchmarks/README.md, section 8), so this holds
# about 900 workloads at 1,000 pairs; a file of more is refused before it is read.
READ_LIMIT = 256 * 1024 * 1024


def read_json(path: Path, what: str, *, limit: int = READ_LIMIT) -> Any:
    """The JSON values of a file benchbot wrote (``what`` it should be, for messages),
    read through ``files.read_bounded`` (at most ``limit`` bytes); every problem is a
    one-line ResultsError naming the file."""
    try:
        data = files.read_bounded(path, limit)
    except IsADirectoryError:
        raise ResultsError(f"{path}: is a directory, not {what}") from None
    except files.TooLarge as exc:
        raise ResultsError(f"{path}: not read: {_size(exc.size)}, more than the "
                           f"{_size(limit)} benchbot reads of {what}") from None
    except files.NotAFile:
        raise ResultsError(f"{path}: not a regular file, not {what}") from None
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{path}: not {what} (not UTF-8 text at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise ResultsError(f"{path}: not {what} (nested too deeply)") from None


def _size(count: int) -> str:
    """A size in bytes with its unit: 1,024 bytes, 16 MiB, 300.5 MiB."""
    if count < 1024 * 1024:
        return f"{count:,} bytes"
    return f"{count / (1024 * 1024):,.1f}".removesuffix(".0") + " MiB"


T = TypeVar("T")


def parse_kind(document: Any, cls: type[T], *, where: str, kind: str, label: str,
               version: int, problem: Callable[[Any], str | None]) -> T:
    """A document of benchbot's with a ``kind`` (a bisect's, a history store's file) from
    JSON values: its kind, its version, its schema (``problem``: the first place it breaks
    it, or None), then typed; each refusal one line naming ``where``."""
    if not isinstance(document, dict) or document.get("kind") != kind:
        raise ResultsError(f"{where}: not a benchbot {label} file (no kind: {kind})")
    if document.get("schema_version") != version:
        raise ResultsError(f"{where}: schema_version {str(document.get('schema_version'))[:40]!r} "
                           f"is not supported (this benchbot reads {version})")
    try:
        found = problem(document)
        if found is not None:
            raise ResultsError(f"{where}: does not match the {label} schema: {found}")
        return codec.decode(cls, document)
    except (codec.DecodeError, TypeError, ValueError) as exc:
        raise ResultsError(f"{where}: does not match the {label} schema: {_clip(str(exc))}") from None
    except RecursionError:  # parsed, but too deep for the schema's check
        raise ResultsError(f"{where}: not a benchbot {label} file (nested too deeply)") from None


def best_match(errors: Any) -> str | None:
    """jsonschema's most telling of ``errors`` as one line, ``place: message``, or None."""
    import jsonschema.exceptions

    error = jsonschema.exceptions.best_match(errors)
    if error is None:
        return None
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"{where.lstrip('.') or '(top level)'}: {_clip(error.message)}"


def parse(document: Any, *, where: str = "results") -> Results:
    """A results document from JSON values: checked against the schema, then typed."""
    if not isinstance(document, dict) or "schema_version" not in document:
        raise ResultsError(f"{where}: not a benchbot results file (no schema_version)")
    if document["schema_version"] not in READS or isinstance(document["schema_version"], bool):
        raise ResultsError(
            f"{where}: schema_version {_clip(repr(document['schema_version']))} is not supported "
            f"(this benchbot reads {' and '.join(map(str, READS))})"
        )
    try:
        problem = validation_error(document) or _memory_words_problem(document)
        if problem is not None:
            raise ResultsError(f"{where}: does not match the results schema: {problem}")
        return codec.decode(Results, _memory_as_outcomes(document))
    except (codec.DecodeError, TypeError, ValueError) as exc:
        raise ResultsError(f"{where}: does not match the results schema: {_clip(str(exc))}") from None
    except RecursionError:  # parsed, but too deep for the schema's check
        raise ResultsError(f"{where}: not a benchbot results file (nested too deeply)") from None


def _memory_words_problem(document: dict[str, Any]) -> str | None:
    """Where a memory verdict uses the other version's words (the schema takes both):
    ``more`` and ``less`` from 3 on, ``slower`` and ``faster`` before."""
    new = document["schema_version"] >= MEMORY_SINCE
    wrong = set(MEMORY_WORDS) if new else set(_MEMORY_OUTCOMES)
    for i, bench in enumerate(document.get("benchmarks") or ()):
        memory = bench.get("memory") if isinstance(bench, dict) else None
        if isinstance(memory, dict) and memory.get("outcome") in wrong:
            said = "more or less" if new else "slower or faster"
            return (f"benchmarks[{i}].memory.outcome: {memory['outcome']!r} is not what schema_version "
                    f"{document['schema_version']} says (it says {said})")
    return None


def _memory_as_outcomes(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with its memory verdicts' words as the model's outcomes (a copy where
    any is changed; files of 1 and 2 say them already)."""
    if document["schema_version"] < MEMORY_SINCE:
        return document
    benchmarks = []
    for bench in document.get("benchmarks") or ():
        memory = bench.get("memory")
        if isinstance(memory, dict) and memory.get("outcome") in _MEMORY_OUTCOMES:
            bench = {**bench, "memory": {**memory, "outcome": _MEMORY_OUTCOMES[memory["outcome"]]}}
        benchmarks.append(bench)
    return {**document, "benchmarks": benchmarks}


def validation_error(document: Any) -> str | None:
    """The first place where ``document`` breaks the results schema, in one line, or None
    (a valid document is told by ``schemacheck``, an invalid one explained by jsonschema)."""
    if _fast()(document):
        return None
    return best_match(_validator().iter_errors(_sampled(document))) or "(top level): not valid"


@functools.cache
def _fast() -> schemacheck.Check:
    return schemacheck.compile_schema(schema())


def _sampled(document: Any) -> Any:
    """``document`` with each run's list that holds only what the schema allows in it cut
    to its first item: jsonschema checks items one by one, a minute for a file of 500
    workloads' runs, and this check is the same for those lists. A list that breaks the
    rule is kept whole, so the error names its item as before. The lists: the schema's
    ``arm`` properties (arrays of integers from 0, or of numbers)."""
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
        return document
    out = dict(document)
    out["benchmarks"] = [_sampled_benchmark(b) for b in document["benchmarks"]]
    return out


def _sampled_benchmark(bench: Any) -> Any:
    if not isinstance(bench, dict):
        return bench
    out = dict(bench)
    if isinstance(bench.get("arms"), dict):
        out["arms"] = {k: _sampled_arm(a) for k, a in bench["arms"].items()}
    if isinstance(bench.get("phases"), dict):
        out["phases"] = {
            name: {**p, "arms": {k: _sampled_arm(a) for k, a in p["arms"].items()}}
            if isinstance(p, dict) and isinstance(p.get("arms"), dict) else p
            for name, p in bench["phases"].items()}
    return out


def _sampled_arm(arm: Any) -> Any:
    if not isinstance(arm, dict):
        return arm
    out = dict(arm)
    for key, kind in _arm_lists().items():
        values = arm.get(key)
        if isinstance(values, list) and len(values) > 1 and all(map(kind, values)):
            out[key] = values[:1]
    return out


def _natural(v: Any) -> bool:
    """An integer from 0, as JSON Schema counts integers (1.0 is one: samples_ns are
    written as floats)."""
    return (type(v) is int or (type(v) is float and v.is_integer())) and v >= 0


def _number(v: Any) -> bool:
    return type(v) is int or type(v) is float


@functools.cache
def _arm_lists() -> dict[str, Callable[[Any], bool]]:
    """The schema's arm lists whose items are checked here (the rest go to jsonschema)."""
    kinds: dict[str, Callable[[Any], bool]] = {}
    for key, spec in schema()["$defs"]["arm"]["properties"].items():
        if set(spec) - {"type", "items", "description"} or spec.get("type") != "array":
            continue
        items = spec.get("items")
        if items == {"type": "integer", "minimum": 0}:
            kinds[key] = _natural
        elif items == {"type": "number"}:
            kinds[key] = _number
    return kinds


def _clip(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    import jsonschema.validators

    cls = jsonschema.validators.validator_for(schema())
    return cls(schema())


def schema() -> dict[str, Any]:
    """The JSON Schema of the results file, shipped with the package."""
    text = resources.files("benchbot").joinpath("schemas/results.schema.json").read_text()
    return dict(json.loads(text))
