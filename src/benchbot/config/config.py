"""benchbot.yml read into frozen dataclasses; a mistake is a ConfigError naming file, line, key.

Every key of the file is declared once, in the tables below (``TOP``, ``SETTINGS``,
``WORKLOAD``, ``AA``, ``STATUS``, ``GITHUB``, ``SANDBOX``): its name, its kind of value
(how it is read, with its bounds, and how the JSON Schema describes it), the dataclass
field it fills and its help. The dataclasses below hold the defaults. The reader, the
unknown-key check with its suggestions and ``schemas/config.schema.json`` (written by
``python -m benchbot.config.schemagen``) all come from these tables. Reading the YAML nodes
themselves (shapes, lines, YAML 1.1's traps) is ``benchbot.config.yamlnode``'s job.

Workloads are indexed from 0 in key paths, like the list they are in. YAML 1.1 reads
``on``/``off``/``yes``/``no`` as booleans; switches accept those and their quoted
spellings alike.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal, get_args

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from benchbot.config.settings import (
    DEFAULT_PARITY,
    DURATION_SYNTAX,
    MAX_CPU,
    MAX_RUNS,
    MIN_RUNS,
    SWITCH_WORDS,
    UNIT_LABEL,
    WORKLOAD_NAME,
    Overrides,
    SettingError,
    check_budget,
    check_max_runs,
    check_parity,
    check_runs,
    cpu_list,
    designs,
    duration_words,
)
from benchbot.config.yamlnode import Doc, Read, compose, join, line, parse_duration, suggest
from benchbot.core.errors import ConfigError
from benchbot.core.model import OUTCOMES, Better, CountsMode, Metric, Order, Outcome, ProfileMode
from benchbot.git.skipping import GlobError, check_glob
from benchbot.sandbox import fsview
from benchbot.sandbox.bwrap import is_never_passed

__all__ = ["DEFAULT_PATHS", "AAConfig", "Config", "GithubConfig", "SandboxConfig",
           "StatusConfig", "SuiteConfig", "WorkloadConfig", "find_config", "load_config", "parse_config",
           "parse_config_bytes", "parse_duration"]

DEFAULT_PATHS = (".github/benchbot.yml", "benchbot.yml")
MAX_TIMEOUT_S = 86_400.0  # a day per run
MAX_WARMUP = 100
MAX_WEIGHT = 1e9  # a weight is relative: a billion to one is more than any split needs
MAX_SEED = 2**63 - 1
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Floors of process timing (docs/verdict.md, Defaults).
_FLOOR_WALL_NS = 25_000.0
_FLOOR_REPORTED_NS = 1_000.0

_ORDERS: tuple[Order, ...] = get_args(Order)
_METRICS: tuple[Metric, ...] = get_args(Metric)
_BETTERS: tuple[Better, ...] = get_args(Better)
_COUNTS: tuple[CountsMode, ...] = get_args(CountsMode)
# The peak-RSS verdict's parity (docs/verdict.md): a placeholder until measured.
DEFAULT_MEMORY_PARITY = 0.03  # signals.MEMORY_PARITY: peak RSS varies by under 1% (docs/verdict.md)
# Settings that may also be given at the top level of the file, for every workload
# (``defaults`` and a workload's own win over them).
TOP_SETTINGS = ("counts", "memory_parity")
_BASES: tuple[Literal["merge-base", "tip"], ...] = ("merge-base", "tip")
_STDOUTS: tuple[Literal["capture", "discard"], ...] = ("capture", "discard")
SANDBOX_MODES: tuple[Literal["auto", "on", "off"], ...] = ("auto", "on", "off")


# --- the dataclasses (and their defaults) ---------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadConfig:
    """One program to time: its argv and the settings it is measured and judged with."""

    name: str
    run: tuple[str, ...]
    runs: int | None = None  # a fixed number of pairs per phase; None: measure sequentially
    max_runs: int = 1000  # sequential: the most pairs
    warmup: int = 1
    parity: float = DEFAULT_PARITY
    floor_ns: float | None = None
    timeout_s: float = 60.0
    order: Order = "alternate"
    metric: Metric = "wall"
    pattern: str | None = None
    expect: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    pin: tuple[int, ...] | None = None
    better: Better = "lower"
    stdout: Literal["capture", "discard"] = "capture"
    unit: str | None = None  # better: higher: what the reported figure counts, e.g. MB/s
    # Expected cost relative to the other workloads, for splitting them over shards (a
    # cost measured in an earlier results file wins over it).
    weight: float = 1.0
    # How instructions are counted (benchbot.sandbox.counting): auto, perf, valgrind or off.
    counts: CountsMode = "auto"
    memory_parity: float = DEFAULT_MEMORY_PARITY  # the peak-RSS verdict's parity
    # Globs of the files that can affect the workload (benchbot.git.skipping): a change that
    # touches none of them skips it. None: always measured.
    paths: tuple[str, ...] | None = None
    line: int = 0
    # One benchmark of a suite (benchbot.suites.listing): the suite's name and the harness's own name
    # for it, and what selects it in the harness's filter. None for a workload of its own.
    suite: str | None = None
    bench: str | None = None
    select: str | None = None

    @property
    def keeps_stdout(self) -> bool:
        """Whether a run's stdout is kept: only when a pattern must be read from it, and
        ``stdout: discard`` does not say that the patterns are found in stderr."""
        return self.stdout == "capture" and bool(
            self.expect or (self.metric == "reported" and self.pattern))

    @property
    def effective_floor_ns(self) -> float:
        """The floor of timing for this workload: as configured, else the default for its metric."""
        if self.floor_ns is not None:
            return self.floor_ns
        return _FLOOR_WALL_NS if self.metric == "wall" else _FLOOR_REPORTED_NS


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteConfig:
    """A benchmark harness run as one command that reports many benchmarks (``suites``):
    each becomes a workload ``<name>/<benchmark>`` measured with ``settings``."""

    name: str
    run: tuple[str, ...]
    format: str  # harness.FORMATS
    # Appended to ``run`` for a round that measures only some of its benchmarks: an element
    # holding {regex} once, one holding {name} once per benchmark (suites.filter_argv).
    filter: tuple[str, ...] | None = None
    # The per-workload settings its benchmarks are measured with (metric: reported, the
    # better and unit each benchmark's report says; name and run are the suite's).
    settings: WorkloadConfig
    line: int = 0
    only: tuple[str, ...] | None = None  # /bench only=suite/benchmark: just these (None: all)


@dataclass(frozen=True, slots=True, kw_only=True)
class AAConfig:
    """The A/A check: base against itself, to measure what the method invents."""

    enabled: bool = True
    runs: int | None = None
    abort_fraction: float = 0.25


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusConfig:
    """The check run: its name and the outcomes that make it fail."""

    fail_on: tuple[Outcome, ...] = ("slower",)
    name: str = "benchbot"


@dataclass(frozen=True, slots=True, kw_only=True)
class GithubConfig:
    """What benchbot may do on GitHub: fork pull requests and the sticky comment."""

    forks: bool = False
    fork_label: str | None = None
    # The base branches (names or shell patterns) whose config, workflow and action may
    # run a fork's code; empty: the repository's default branch (from the event).
    fork_bases: tuple[str, ...] = ()
    comment: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxConfig:
    """How the code under test is confined (benchbot.sandbox.bwrap)."""

    mode: Literal["auto", "on", "off"] = "auto"
    read_only: tuple[str, ...] = ()  # directories the sandbox shows besides its own, read-only
    writable: tuple[str, ...] = ()  # directories besides the worktrees the code may write
    build_network: bool = False  # the build reaches the host's network (else loopback only)
    # Globs of the worktree's files that only the build reads: the measured runs are not
    # shown them, and bisect and history leave their bytes out of what makes two commits
    # identical (benchbot.sandbox.hidden). Only in bubblewrap, which enforces it.
    build_only: tuple[str, ...] = ()
    writable_line: int = 0  # where the config says `writable:` (for the gate's refusal)


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """A whole benchbot.yml, validated."""

    path: str
    version: int = 1
    build: str | tuple[str, ...] | None = None
    parallel_builds: bool = True  # build base and head at once (false: one after the other)
    workloads: tuple[WorkloadConfig, ...] = ()
    suites: tuple[SuiteConfig, ...] = ()
    aa: AAConfig = AAConfig()
    confirm: bool = True
    alpha: float = 0.05
    base: Literal["merge-base", "tip"] = "merge-base"
    status: StatusConfig = StatusConfig()
    github: GithubConfig = GithubConfig()
    seed: int | None = None
    sandbox: SandboxConfig = SandboxConfig()
    pass_env: tuple[str, ...] = ()  # environment variables passed to the build and workloads
    budget_s: float = 600.0  # sequential measuring: wall time for the whole comparison
    # For every workload, unless ``defaults`` or the workload says otherwise.
    counts: CountsMode = "auto"
    memory_parity: float = DEFAULT_MEMORY_PARITY
    # Which workloads are profiled after the verdicts (benchbot.profiles.profiling): those called
    # slower or faster, every one (--profile, /bench profile), or none.
    profile: ProfileMode = "called"

    def with_overrides(self, over: Overrides) -> Config:
        """This config with ``over`` put over it. ``runs`` measures every workload a fixed
        number of pairs; a ``budget`` or ``max_runs`` without it measures every workload
        sequentially, also those the config gives ``runs``. ``only`` names workloads,
        suites (all their benchmarks) or ``suite/benchmark``; ``all`` drops every
        workload's and suite's ``paths``, so that none is skipped as not affected."""
        workloads, suites = (self.workloads, self.suites) if over.only is None \
            else self._only(over.only)
        keep_runs = over.runs is None and not over.sequential

        def overridden(w: WorkloadConfig) -> WorkloadConfig:
            return dataclasses.replace(
                w, runs=w.runs if keep_runs else over.runs,
                parity=w.parity if over.parity is None else over.parity,
                max_runs=w.max_runs if over.max_runs is None else over.max_runs,
                paths=None if over.all else w.paths)

        return dataclasses.replace(
            self, workloads=tuple(overridden(w) for w in workloads),
            suites=tuple(dataclasses.replace(s, settings=overridden(s.settings)) for s in suites),
            confirm=self.confirm if over.confirm is None else over.confirm,
            aa=self.aa if over.aa is None else dataclasses.replace(self.aa, enabled=over.aa),
            status=self.status if over.fail_on is None
            else dataclasses.replace(self.status, fail_on=over.fail_on),
            seed=self.seed if over.seed is None else over.seed,
            budget_s=self.budget_s if over.budget is None else over.budget,
            profile=self.profile if over.profile is None else over.profile,
        )

    def _only(self, names: tuple[str, ...]) -> tuple[tuple[WorkloadConfig, ...],
                                                     tuple[SuiteConfig, ...]]:
        known = [w.name for w in self.workloads] + [s.name for s in self.suites]
        suites = {s.name: s for s in self.suites}
        chosen: dict[str, set[str] | None] = {}  # suite: its benchmarks named (None: all)
        for name in names:
            suite, _, bench = name.partition("/")
            if bench and suite in suites:
                picked = chosen.setdefault(suite, set())
                if picked is not None:
                    picked.add(bench)
            elif name in suites:
                chosen[name] = None
            elif name not in known:
                what = "workload or suite" if self.suites else "workload"
                raise ConfigError(f"only: no {what} named {name!r} in {self.path} "
                                  f"(known: {', '.join(known)}){suggest(name, known)}")
        return (tuple(w for w in self.workloads if w.name in set(names)),
                tuple(dataclasses.replace(s, only=None if chosen[s.name] is None
                                          else tuple(sorted(chosen[s.name] or ())))
                      for s in self.suites if s.name in chosen))

    @property
    def measured(self) -> tuple[str, ...]:
        """The names of what is measured: every workload and every suite."""
        return (*(w.name for w in self.workloads), *(s.name for s in self.suites))


# --- kinds of value: how each is read, and how the JSON Schema says it -----------------------


@dataclass(frozen=True, slots=True)
class Kind:
    """A kind of value: its reader (with its bounds) and its JSON Schema (the same bounds)."""

    read: Read
    schema: Mapping[str, Any]
    show: Callable[[Any], Any] = lambda value: value  # a default as the file writes it


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


def _optional(kind: Kind) -> Kind:
    """The kind, or null (left out)."""
    def read(doc: Doc, node: Node, key: str) -> Any:
        return None if doc.scalar(node) is None else kind.read(doc, node, key)
    return Kind(read, {"anyOf": [dict(kind.schema), {"type": "null"}]}, kind.show)


def _integer(low: int, high: int) -> Kind:
    return Kind(lambda d, n, k: d.integer(n, k, minimum=low, maximum=high),
                {"type": "integer", "minimum": low, "maximum": high})


def _pair_count(check: Callable[[int], int]) -> Kind:
    """A number of pairs, bounded by a setting's check (settings.check_runs or
    check_max_runs: both allow MIN_RUNS to MAX_RUNS, and their messages are used)."""
    def read(doc: Doc, node: Node, key: str) -> int:
        return int(doc.checked(node, key, lambda d, n, k: d.integer(n, k, minimum=-(2**63)), check))
    return Kind(read, {"type": "integer", "minimum": MIN_RUNS, "maximum": MAX_RUNS})


def _fraction(*, low_open: bool, high_open: bool) -> Kind:
    return Kind(lambda d, n, k: d.fraction(n, k, low_open=low_open, high_open=high_open),
                {"type": "number", ("exclusiveMinimum" if low_open else "minimum"): 0,
                 ("exclusiveMaximum" if high_open else "maximum"): 1})


def _choice(choices: tuple[str, ...]) -> Kind:
    return Kind(lambda d, n, k: d.choice(n, k, choices), {"enum": list(choices)})


def _duration(check: Callable[[Doc, Node, str, float], float]) -> Kind:
    def read(doc: Doc, node: Node, key: str) -> float:
        return check(doc, node, key, doc.duration(node, key))
    return Kind(read, _ref("duration"), duration_words)


_STRING = Kind(lambda d, n, k: d.string(n, k), {"type": "string", "minLength": 1})
_REGEX = Kind(lambda d, n, k: d.regex(n, k), {"type": "string", "minLength": 1})
_SWITCH = Kind(lambda d, n, k: d.switch(n, k), _ref("switch"))
_RUNS = _pair_count(check_runs)


def _list(item: Read, schema: Mapping[str, Any]) -> Kind:
    def read(doc: Doc, node: Node, key: str) -> tuple[Any, ...]:
        return tuple(item(doc, x, f"{key}[{i}]") for i, x in enumerate(doc.items(node, key)))
    return Kind(read, {"type": "array", "items": dict(schema)}, list)


# --- readers of benchbot.yml's own kinds -----------------------------------------------------


def _parity(doc: Doc, node: Node, key: str) -> float:
    return float(doc.checked(node, key, lambda d, n, k: d.number(n, k), check_parity))


def _timeout(doc: Doc, node: Node, key: str, seconds: float) -> float:
    if seconds <= 0:
        doc.fail(node, key, f"must be longer than 0, got {node.value}")
    if seconds > MAX_TIMEOUT_S:
        doc.fail(node, key, f"must be at most a day (86400s) per run, got {node.value}")
    return seconds


def _budget(doc: Doc, node: Node, key: str, seconds: float) -> float:
    return float(doc.checked(node, key, lambda d, n, k: seconds, check_budget))


def _floor_ns(doc: Doc, node: Node, key: str) -> float:
    return doc.duration(node, key) * 1e9


def _weight(doc: Doc, node: Node, key: str) -> float:
    value = doc.number(node, key)
    if value <= 0 or value > MAX_WEIGHT:
        doc.fail(node, key, f"must be a positive number up to {MAX_WEIGHT:g} (the workload's "
                 f"expected cost relative to the others; default 1), got {node.value}")
    return value


def _name(doc: Doc, node: Node, key: str) -> str:
    name = doc.text(node, key)
    if not WORKLOAD_NAME.fullmatch(name):
        doc.fail(node, key, f"{name!r} may only hold letters, digits, '_', '.' and '-' "
                            "(names go into comments and /bench only=)")
    return name


def _argv(doc: Doc, node: Node, key: str) -> tuple[str, ...]:
    if isinstance(node, SequenceNode):
        argv = tuple(doc.text(item, f"{key}[{i}]") for i, item in enumerate(node.value))
    else:
        command = doc.string(node, key) if doc.scalar(node) is not None else ""
        try:
            argv = tuple(shlex.split(command))
        except ValueError as exc:
            doc.fail(node, key, f"cannot split into arguments: {exc}")
    if not argv or not argv[0].strip():
        doc.fail(node, key, "is empty; give the program and its arguments")
    return argv


def _build(doc: Doc, node: Node, key: str) -> str | tuple[str, ...] | None:
    if isinstance(node, SequenceNode):
        return _argv(doc, node, key)
    return None if doc.scalar(node) is None else doc.string(node, key)


def _unit(doc: Doc, node: Node, key: str) -> str:
    value = doc.text(node, key)
    if not UNIT_LABEL.fullmatch(value):
        doc.fail(node, key, "must be a short label of letters, digits, spaces and / % . µ "
                            f"(at most 16), e.g. MB/s or ops/s, got {doc.describe(node)}")
    return value


def _env(doc: Doc, node: Node, key: str) -> tuple[tuple[str, str], ...]:
    out = []
    for name, (knode, vnode) in doc.pairs(node, key, None).items():
        if not name or "=" in name or "\0" in name:
            doc.fail(knode, join(key, name), "not a valid environment variable name")
        out.append((name, doc.text(vnode, join(key, name))))
    return tuple(out)


def _cwd(doc: Doc, node: Node, key: str) -> str:
    value = doc.string(node, key)
    path = PurePosixPath(value)
    depth = 0
    for part in path.parts:
        depth += -1 if part == ".." else 0 if part == "." else 1
        if depth < 0:
            break
    if path.is_absolute() or depth < 0:
        doc.fail(node, key,
                 f"must be a path inside the repository, relative to its root, got {value!r}")
    return value


def _pin(doc: Doc, node: Node, key: str) -> tuple[int, ...]:
    value = doc.scalar(node)
    if isinstance(node, SequenceNode):
        cpus = tuple(sorted({doc.integer(item, f"{key}[{i}]", minimum=0, maximum=MAX_CPU)
                             for i, item in enumerate(node.value)}))
    elif isinstance(value, int) and not isinstance(value, bool):
        cpus = (doc.integer(node, key, minimum=0, maximum=MAX_CPU),)
    elif isinstance(value, str):
        try:
            cpus = cpu_list(value)
        except SettingError as exc:
            doc.fail(node, key, str(exc))
    else:
        doc.fail(node, key,
                 f'must be a CPU list such as "0,2-3", [0, 2] or 3, got {doc.describe(node)}')
    if not cpus:
        doc.fail(node, key, "names no CPU")
    return cpus


def _outcomes(doc: Doc, node: Node, key: str) -> tuple[Outcome, ...]:
    if not isinstance(node, SequenceNode):
        return (doc.choice(node, key, OUTCOMES),)
    found = [doc.choice(item, f"{key}[{i}]", OUTCOMES) for i, item in enumerate(node.value)]
    return tuple(dict.fromkeys(found))


def _sandbox_mode(doc: Doc, node: Node, key: str) -> Literal["auto", "on", "off"]:
    value = doc.scalar(node)
    if value is True or value is False:  # YAML 1.1 reads on/off as booleans
        return "on" if value else "off"  # the Literal mypy needs; switch_word gives str
    return doc.choice(node, key, SANDBOX_MODES)


def _counts_mode(doc: Doc, node: Node, key: str) -> CountsMode:
    value = doc.scalar(node)
    if value is True or value is False:  # YAML 1.1 reads on/off as booleans
        return "auto" if value else "off"
    return doc.choice(node, key, _COUNTS)


_COUNTS_KIND = Kind(_counts_mode, {"enum": [*_COUNTS, True, False]})
_PROFILES: tuple[ProfileMode, ...] = get_args(ProfileMode)


def _profile_mode(doc: Doc, node: Node, key: str) -> ProfileMode:
    value = doc.scalar(node)
    if value is True or value is False:  # YAML 1.1 reads on/off as booleans
        return "called" if value else "off"
    return doc.choice(node, key, _PROFILES)


def _absolute_path(doc: Doc, node: Node, key: str) -> str:
    value = doc.string(node, key)
    expanded = os.path.expanduser(value)
    if not os.path.isabs(expanded):
        doc.fail(node, key, f"must be an absolute path (or start with ~/), got {value!r}")
    return os.path.normpath(expanded)


def _branch_pattern(doc: Doc, node: Node, key: str) -> str:
    value = doc.string(node, key)
    if not value.strip() or any(c.isspace() for c in value):
        doc.fail(node, key, f"{value!r} is not a branch name or pattern")
    return value


def _shown_path(doc: Doc, node: Node, key: str) -> str:
    """A directory the sandbox shows (``read_only``) or lets write (``writable``): checked
    against this machine by ``fsview.refusal`` (the config is read where it runs)."""
    value = doc.string(node, key)
    if ".." in PurePosixPath(value).parts:
        doc.fail(node, key, f"{value!r} holds `..`: name the directory itself")
    path = _absolute_path(doc, node, key)
    problem = fsview.refusal(path, os.environ)
    if problem is not None:
        doc.fail(node, key, problem)
    return path


def _pass_env_name(doc: Doc, node: Node, key: str) -> str:
    name = doc.string(node, key)
    if not _ENV_NAME.fullmatch(name):
        doc.fail(node, key, f"{name!r} is not an environment variable name")
    if is_never_passed(name):
        doc.fail(node, key, f"{name} is never passed to the code under test: tokens, "
                            "credentials and the runner's and benchbot's own variables stay "
                            "out of its reach (set a fixed value under env: if the build "
                            "needs one)")
    return name


def _pass_env(doc: Doc, node: Node, key: str) -> tuple[str, ...]:
    names = _list(_pass_env_name, {}).read(doc, node, key)
    return tuple(dict.fromkeys(names))


def _glob(doc: Doc, node: Node, key: str) -> str:
    value = doc.string(node, key)
    try:
        return check_glob(value)
    except GlobError as exc:
        doc.fail(node, key, f"{value!r} {exc}")


def _paths(doc: Doc, node: Node, key: str) -> tuple[str, ...]:
    if not isinstance(node, SequenceNode):
        doc.fail(node, key, 'must be a list of globs, e.g. ["src/**", "Makefile"], got '
                            + doc.describe(node))
    if not node.value:
        doc.fail(node, key, "is empty, so no change could ever affect the workload; list the "
                            "files that can, or leave paths out to always measure it")
    globs = _list(_glob, {}).read(doc, node, key)
    return tuple(dict.fromkeys(globs))


# --- the tables ------------------------------------------------------------------------------


FROM_FIELD: Any = object()  # a Key's default is its dataclass field's


@dataclass(frozen=True, slots=True)
class Key:
    """One key of benchbot.yml: its name, kind, help and the dataclass field it fills."""

    name: str
    kind: Kind
    help: str
    field: str = ""  # the dataclass field, when it is not named as the key
    default: Any = FROM_FIELD  # the schema's default, when not the field's

    @property
    def attr(self) -> str:
        return self.field or self.name


@dataclass(frozen=True, slots=True)
class Section:
    """The keys of one mapping of the file, and the dataclass they fill."""

    keys: tuple[Key, ...]
    cls: type[Any]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.keys)

    def key(self, name: str) -> Key:
        return next(k for k in self.keys if k.name == name)

    def read(self, doc: Doc, node: Node, key: str) -> dict[str, Any]:
        """The dataclass's fields from a mapping node, each read by its key's kind."""
        return {self.key(name).attr: self.key(name).kind.read(doc, vnode, join(key, name))
                for name, (_, vnode) in doc.pairs(node, key, self.names).items()}


SETTINGS = Section((
    Key("runs", _RUNS,
        "A fixed number of pairs of runs (one of each revision) per phase, 10 to 1000: the "
        "fixed design (A/A, A/B and confirmation phases). Left out, benchbot measures "
        "sequentially, until each workload is settled or the budget is spent."),
    Key("warmup", _integer(0, MAX_WARMUP),
        "Runs made and discarded before measuring, per revision."),
    Key("parity", Kind(_parity, {"type": "number", "exclusiveMinimum": 0,
                                 "exclusiveMaximum": 1}),
        "The smallest change that matters, as a fraction (0.02 is 2%): a smaller difference "
        "is reported as level."),
    Key("floor", _optional(Kind(_floor_ns, _ref("duration"))),
        "Floor of timing: a duration below which differences are not trusted. Default 25us "
        "for metric wall, 1us for metric reported.", field="floor_ns"),
    Key("timeout", _duration(_timeout),
        "Time limit of one run, e.g. 60s; a run that exceeds it makes the workload invalid.",
        field="timeout_s"),
    Key("order", _choice(_ORDERS),
        "Order of the two revisions within each pair: alternate (AB, BA, ...) or random "
        "(seeded)."),
    Key("metric", _choice(_METRICS),
        "What is compared: wall (process wall time, measured by benchbot), reported (a "
        "number the workload prints, read with pattern) or instructions (the user-space "
        "instructions of a few counted runs per revision, judged alone: not a time, never "
        "in the time geomean; needs counts other than off)."),
    Key("pattern", _optional(_REGEX),
        "With metric: reported, a regular expression with exactly one group capturing the "
        "reported value (integer ns for times), e.g. 'elapsed_ns=(\\d+)'. Not allowed with "
        "metric: wall."),
    Key("expect", _optional(_REGEX),
        "A regular expression with exactly one group; the captured output must be identical "
        "in every run of both revisions, e.g. 'checksum=(\\S+)'."),
    Key("env", Kind(_env, {"type": "object", "propertyNames": {"pattern": "^[^=\\u0000]+$"},
                           "additionalProperties": {"type": ["string", "number", "boolean"]}},
                    dict),
        "Environment variables set for the workload's runs. Values are passed as written."),
    Key("cwd", _optional(Kind(_cwd, {"type": "string", "minLength": 1})),
        "Directory the workload runs in, relative to the repository root (default: the root)."),
    Key("pin", _optional(Kind(_pin, {"oneOf": [
            {"type": "integer", "minimum": 0, "maximum": MAX_CPU},
            {"type": "string",
             "pattern": "^\\s*[0-9]+(?:-[0-9]+)?(?:\\s*,\\s*[0-9]+(?:-[0-9]+)?)*\\s*$"},
            {"type": "array", "minItems": 1,
             "items": {"type": "integer", "minimum": 0, "maximum": MAX_CPU}}]})),
        "CPUs to pin the workload's runs to: a list such as \"0,2-3\", [0, 2] or a single CPU "
        "number."),
    Key("better", _choice(_BETTERS),
        "Which direction is better: lower (times, the default) or higher (a reported "
        "throughput, judged as its reciprocal). higher needs metric: reported."),
    Key("max_runs", _pair_count(check_max_runs),
        "Sequential measuring: the most pairs (triplets of base, base again and head) a "
        "workload is measured with."),
    Key("stdout", _choice(_STDOUTS),
        "capture: keep a run's stdout when a pattern or expect must be read from it (else it "
        "goes to /dev/null); discard: never keep it (the patterns are then looked for in "
        "stderr only)."),
    Key("unit", _optional(Kind(_unit, {"type": "string",
                                       "pattern": f"^{UNIT_LABEL.pattern}$"})),
        "With better: higher, what the reported figure counts, shown beside it (e.g. MB/s, "
        "ops/s): up to 16 letters, digits, spaces and / % . µ."),
    Key("counts", _COUNTS_KIND,
        "How instructions are counted, as a second signal beside time: perf (the CPU's "
        "counters, around every run), valgrind (cachegrind, a few runs of each revision "
        "apart from the timed ones), auto (perf where the counters work, else valgrind where "
        "it is installed and a run takes at most 1s, else off) or off (on: auto). Asked for and "
        "impossible here: the workload is compared on time, and the report says why."),
    Key("memory_parity", Kind(_parity, {"type": "number", "exclusiveMinimum": 0,
                                        "exclusiveMaximum": 1}),
        "The smallest change of peak memory (max RSS) that matters, as a fraction: the "
        "memory verdict's parity."),
    Key("paths", _optional(Kind(_paths, {"type": "array", "minItems": 1,
                                         "items": {"type": "string", "minLength": 1}}, list)),
        "Globs of the files that can affect the workload, relative to the repository root "
        "(gitignore-like: * within a path segment, ** across segments, a glob without / "
        "matches that name at any depth, a trailing / a directory and everything below it). "
        "When a change touches none of them the workload is skipped as not affected (shown "
        "in the report); left out, it is always measured. --all and /bench all measure it "
        "anyway."),
), WorkloadConfig)

WORKLOAD = Section((
    Key("name", Kind(_name, {"type": "string", "pattern": f"^{WORKLOAD_NAME.pattern}$"}),
        "Short name shown in reports and used by `/bench only=`: letters, digits, '_', '.' "
        "and '-'."),
    Key("run", Kind(_argv, _ref("argv")),
        "The command to time: an argv list, or a string split like a shell would (no shell "
        "is used). Paths are relative to the repository root."),
    *SETTINGS.keys,
    Key("weight", Kind(_weight, {"type": "number", "exclusiveMinimum": 0,
                                 "maximum": MAX_WEIGHT}),
        "Expected cost relative to the other workloads (a positive number), used to split "
        "the workloads over shards (--shard K/N); a cost measured in an earlier results file "
        "(--shard-costs) wins over it."),
), WorkloadConfig)

# The settings a suite's benchmarks take from SETTINGS: what each is and how it is read come
# from the harness's report (metric, pattern, better, unit); its counts come from counted
# runs of each benchmark (benchbot.suites.fixedwork), its memory from what the harness reports.
SUITE_SETTINGS = tuple(k for k in SETTINGS.keys if k.name not in (
    "metric", "pattern", "expect", "better", "unit", "stdout"))


def _format(doc: Doc, node: Node, key: str) -> str:
    from benchbot.harness.formats import FORMATS

    value = doc.text(node, key)
    if value not in FORMATS:
        doc.fail(node, key, f"{value!r} is not a format benchbot reads; one of "
                            f"{', '.join(FORMATS)}{suggest(value, FORMATS)}")
    return value


def _filter(doc: Doc, node: Node, key: str) -> tuple[str, ...]:
    argv = _argv(doc, node, key)
    if not any("{regex}" in arg or "{name}" in arg for arg in argv):
        doc.fail(node, key, "holds neither {regex} nor {name}: give the harness's own option "
                            "with a placeholder, e.g. ['--benchmark_filter={regex}']")
    return argv


SUITE = Section((
    Key("name", Kind(_name, {"type": "string", "pattern": f"^{WORKLOAD_NAME.pattern}$"}),
        "Short name of the suite: its benchmarks are shown as <name>/<benchmark>, and "
        "`/bench only=<name>` measures them all. Letters, digits, '_', '.' and '-'."),
    Key("run", Kind(_argv, _ref("argv")),
        "The harness command, run once per revision per round: an argv list, or a string split "
        "like a shell would (no shell). {output} in an argument is replaced by a fresh file the "
        "harness writes its report to (e.g. --benchmark-json={output}); without it the report "
        "is read from stdout."),
    Key("format", Kind(_format, {"enum": ["google-benchmark", "go", "bencher",
                                          "pytest-benchmark", "pyperf", "jsonl"]}),
        "What the harness reports: google-benchmark (JSON), go (go test -bench text), bencher "
        "(cargo bench / Criterion --output-format bencher lines), pytest-benchmark "
        "(--benchmark-json), pyperf (JSON) or jsonl (one JSON object a line: name, value, unit, "
        "better; docs/suites.md)."),
    Key("filter", _optional(Kind(_filter, _ref("argv"))),
        "Arguments added to run when only some benchmarks are still unsettled, so later "
        "rounds run those only: {regex} is replaced by a regular expression matching exactly "
        "their names (in the harness's dialect), and an argument holding {name} is repeated "
        "once per benchmark, e.g. ['--benchmark_filter={regex}']. Left out, every round runs "
        "the whole suite."),
    *SUITE_SETTINGS,
    Key("weight", Kind(_weight, {"type": "number", "exclusiveMinimum": 0,
                                 "maximum": MAX_WEIGHT}),
        "Expected cost relative to the workloads, for splitting them over shards."),
), SuiteConfig)

AA = Section((
    Key("enabled", _SWITCH, "Whether the A/A check runs."),
    Key("runs", _optional(_RUNS),
        "Pairs of runs of the A/A check; default: as many as the A/B phase."),
    Key("abort_fraction", _fraction(low_open=False, high_open=False),
        "Conclude nothing when more than this fraction of workloads fail the A/A check."),
), AAConfig)

STATUS = Section((
    Key("fail_on", Kind(_outcomes, {"oneOf": [_ref("outcome"), {"type": "array",
                                                                 "items": _ref("outcome")}]},
                        list),
        "Outcomes that make the check fail: a list or a single outcome."),
    Key("name", _STRING, "Name of the check run."),
), StatusConfig)

GITHUB = Section((
    Key("forks", _SWITCH, "Run pull requests from forks without being asked. Off: a "
                          "maintainer must ask with /bench (or add fork_label)."),
    Key("fork_label", _optional(_STRING),
        "A label that allows running a pull request from a fork (its head, when the "
        "labeller's review names it)."),
    Key("fork_bases", _list(_branch_pattern, {"type": "string", "minLength": 1}),
        "The base branches (names or shell patterns such as release/*) whose config may "
        "judge a fork's code; default: the repository's default branch. A fork chooses its "
        "base, and an older branch may hold older settings (the workflow refuses other "
        "bases too, before any of benchbot's code runs)."),
    Key("comment", _SWITCH,
        "Post (and update) one sticky comment with the report on the pull request."),
), GithubConfig)

_MODE_SCHEMA = {"enum": [*SANDBOX_MODES, True, False]}
_PATHS = _list(_shown_path, {"type": "string", "minLength": 1})
SANDBOX = Section((
    Key("mode", Kind(_sandbox_mode, _MODE_SCHEMA), "auto, on or off, as above."),
    Key("read_only", _PATHS,
        "Directories the sandbox shows besides the system, the toolchains on PATH and "
        "benchbot itself (e.g. ~/.pyenv), read-only: absolute paths or ~/…"),
    Key("writable", _PATHS, "Directories besides the worktrees that the build and the runs "
                            "may write: absolute paths or ~/…"),
    Key("build_network", _SWITCH,
        "on: the build reaches the host's network (for a project that fetches its "
        "dependencies while it builds); off: the build gets its own network namespace, "
        "loopback only, so a pull request's build cannot reach the runner's network or a "
        "cloud metadata endpoint. The runs never reach the network."),
    Key("build_only", _list(_glob, {"type": "string", "minLength": 1}),
        "Globs of the worktree's files that only the build reads, relative to the "
        "repository root (as paths: takes them, e.g. [\"*.c\", \"*.h\", \"docs/**\", "
        "\"*.md\"]). In bubblewrap the measured runs cannot open them (nor the "
        "repository's .git, which holds them too), and benchbot bisect and history skip a "
        "commit whose built worktree differs from its neighbour's in their bytes alone (a "
        "comment-only change). Without the sandbox nothing is hidden and nothing is left "
        "out."),
), SandboxConfig)


def _aa(doc: Doc, node: Node, key: str) -> AAConfig:
    if doc.is_switch(node):
        return AAConfig(enabled=doc.switch(node, key))
    if not isinstance(node, MappingNode):
        doc.fail(node, key, "must be on, off or a mapping (runs, abort_fraction), got "
                            + doc.describe(node))
    return AAConfig(**AA.read(doc, node, key))


def _sandbox(doc: Doc, node: Node, key: str) -> SandboxConfig:
    if isinstance(node, ScalarNode):
        return SandboxConfig(mode=_sandbox_mode(doc, node, key))
    fields = SANDBOX.read(doc, node, key)
    writable = doc.pairs(node, key, SANDBOX.names).get("writable")
    return SandboxConfig(**fields, writable_line=line(writable[0]) if writable else 0)



def _object(section: Section) -> Kind:
    return Kind(lambda d, n, k: section.cls(**section.read(d, n, k)), {"section": section})


def _unread(doc: Doc, node: Node, key: str) -> Any:
    raise AssertionError(f"{key} is read by _read_config")


TOP = Section((
    Key("version", Kind(_unread, {"const": 1}), "Version of this file's format; must be 1.",
        default=None),
    Key("build", Kind(_build, {"oneOf": [{"type": "string", "minLength": 1}, _ref("argv_list"),
                                         {"type": "null"}]}),
        "Build command, run once in each revision's worktree. A string is run by /bin/sh -c; "
        "a list is an argv. Absent or null: no build."),
    Key("defaults", Kind(_unread, {"section": SETTINGS}),
        "Settings applied to every workload unless the workload gives its own."),
    Key("workloads", Kind(_unread, {"type": "array", "minItems": 1, "items": _ref("workload")}),
        "The programs to time (workloads, suites or both: at least one of them).",
        default=None),
    Key("suites", Kind(_unread, {"type": "array", "minItems": 1, "items": _ref("suite")}),
        "Benchmark harnesses that report many benchmarks from one command (google-benchmark, "
        "go test -bench, cargo bench, pytest-benchmark, pyperf, or JSON lines): each "
        "benchmark is judged as a workload of its own.", default=None),
    Key("aa", Kind(_aa, {"oneOf": [_ref("switch"), {"section": AA}]}),
        "The A/A check (base against itself) that measures what the method invents: on, off, "
        "or a mapping.", default=True),
    Key("confirm", _SWITCH, "Re-run slower/faster standouts in an independent confirmation "
                            "phase before reporting them."),
    Key("alpha", _fraction(low_open=True, high_open=True),
        "Significance level per workload (Bonferroni-corrected over workloads when confirm is "
        "off)."),
    Key("base", _choice(_BASES),
        "What a pull request is compared against: merge-base (the fork point) or tip (the "
        "base branch's latest commit)."),
    Key("status", _object(STATUS), "The check run benchbot reports to."),
    Key("github", _object(GITHUB), "What benchbot may do on GitHub."),
    Key("seed", _optional(_integer(0, MAX_SEED)),
        "Seed of run order and bootstrap; default: chosen at run time and recorded in the "
        "results."),
    Key("sandbox", Kind(_sandbox, {"oneOf": [_MODE_SCHEMA, {"section": SANDBOX}]}),
        "How the code under test (the build and every run) is confined. auto: in bubblewrap "
        "when it works here, else with a clean environment only; on: refuse to run without "
        "bubblewrap; off: a clean environment only.", default="auto"),
    Key("pass_env", Kind(_pass_env, {"type": "array", "items": {
            "type": "string", "pattern": _ENV_NAME.pattern}}, list),
        "Names of environment variables passed from benchbot's environment to the build and "
        "the runs, besides PATH, HOME, the locale, TMPDIR and the usual compiler variables. "
        "Tokens, credentials and ACTIONS_*, INPUT_*, GITHUB_*, RUNNER_*, GIT_CONFIG* are "
        "refused."),
    Key("budget", _duration(_budget),
        "Sequential measuring: the wall time the whole comparison may take, builds included, "
        "e.g. 10m or 1h30m; from 1s to 24h.", field="budget_s"),
    Key("parallel_builds", _SWITCH,
        "Build base and head at once, each in its own worktree; off builds them one after "
        "the other (where two builds at once would not fit in memory, or share a directory "
        "outside the worktrees)."),
    Key("counts", _COUNTS_KIND,
        "counts for every workload (as under defaults, which wins over it)."),
    Key("memory_parity", Kind(_parity, {"type": "number", "exclusiveMinimum": 0,
                                        "exclusiveMaximum": 1}),
        "memory_parity for every workload (as under defaults, which wins over it)."),
    Key("profile", Kind(_profile_mode, {"enum": [*_PROFILES, True, False]}),
        "Which workloads are profiled under callgrind after the verdicts, their notes naming "
        "the functions that carry the change: called (those called slower or faster, where "
        "valgrind is installed), all, or off (--profile, /bench profile and the Action's "
        "input profile win over it).", default="called"),
), Config)

# Keys accepted in each mapping, in the order messages list them.
SETTING_KEYS = SETTINGS.names
WORKLOAD_KEYS = WORKLOAD.names
SUITE_KEYS = SUITE.names
TOP_KEYS = TOP.names
AA_KEYS = AA.names
STATUS_KEYS = STATUS.names
GITHUB_KEYS = GITHUB.names
# The JSON Schema's shared definitions (benchbot.config.schemagen writes the rest from the tables).
SHARED_SCHEMAS: dict[str, dict[str, Any]] = {
    "switch": {"description": "A boolean; on/off/yes/no are accepted too.", "oneOf": [
        # YAML 1.1 reads these words unquoted as booleans; quoted, the parser takes them too
        # (settings.SWITCH_WORDS, any case), and editors are offered the usual spellings.
        {"type": "boolean"},
        {"enum": [w for word in sorted(SWITCH_WORDS - {"true", "false"}, reverse=True)
                  for w in (word, word.capitalize(), word.upper())]}]},
    "duration": {
        "description": "A duration: a number and a unit (ns, us, µs, ms, s, m, h), e.g. 500ms, "
                       "60s, 1m30s; a bare number is seconds.",
        "oneOf": [{"type": "number", "minimum": 0},
                  {"type": "string", "pattern": f"^\\s*(?:{DURATION_SYNTAX})\\s*$"}]},
    "argv_list": {"description": "An argv: the program, then its arguments.", "type": "array",
                  "minItems": 1, "items": {"type": ["string", "number", "boolean"]}},
    "argv": {"description": "An argv list, or a string split like a shell would (no shell).",
             "oneOf": [{"type": "string", "minLength": 1}, _ref("argv_list")]},
    "outcome": {"description": "A verdict's outcome.", "enum": list(OUTCOMES)},
}


# --- reading a file --------------------------------------------------------------------------


def find_config(root: Path) -> Path | None:
    """The first of DEFAULT_PATHS that exists under root, or None."""
    for name in DEFAULT_PATHS:
        candidate = Path(root) / name
        if candidate.is_file():
            return candidate
    return None


def load_config(path: str | os.PathLike[str]) -> Config:
    """Read and validate a config file."""
    shown = os.fspath(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise ConfigError(
            f"{shown}: no such file; benchbot looks for {' then '.join(DEFAULT_PATHS)} "
            "in the repository, or give --config FILE"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    return parse_config_bytes(data, path=shown)


def parse_config_bytes(data: bytes, path: str = "benchbot.yml") -> Config:
    """Validate a config file's bytes: UTF-8 text, then ``parse_config``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            f"{path}:{where}: not UTF-8 text (byte {exc.start}); save it as UTF-8"
        ) from None
    return parse_config(text, path=path)


def parse_config(text: str, path: str = "benchbot.yml") -> Config:
    """Validate the text of a config file; path is only used in messages."""
    return _read_config(Doc(path), compose(text, path))


@dataclass(frozen=True, slots=True)
class _Setting:
    """A setting's value and where it was written."""

    value: Any
    node: Node
    key: str


def _read_config(doc: Doc, root: Node) -> Config:
    top = doc.pairs(root, "", None)  # version first: a newer file has other keys
    if "version" not in top:
        doc.fail(root, "version", "missing; start the file with 'version: 1'")
    vnode = top["version"][1]
    if type(doc.scalar(vnode)) is not int or doc.scalar(vnode) != 1:
        doc.fail(vnode, "version", f"this benchbot reads version 1, got {doc.describe(vnode)}")
    top = doc.pairs(root, "", TOP_KEYS)
    defaults: dict[str, _Setting] = {
        name: _Setting(SETTINGS.key(name).kind.read(doc, top[name][1], name), top[name][1], name)
        for name in TOP_SETTINGS if name in top}
    if "defaults" in top:
        dnode = top["defaults"][1]
        defaults |= _settings(doc, doc.pairs(dnode, "defaults", SETTING_KEYS), "defaults")
    if "workloads" not in top and "suites" not in top:
        doc.fail(root, "workloads", "missing; list the programs to time under workloads: (or "
                                    "the benchmark harnesses under suites:)")
    fields: dict[str, Any] = {"path": doc.path}
    first_line: dict[str, int] = {}
    if "workloads" in top:
        wnode = top["workloads"][1]
        if doc.scalar(wnode) is None or not doc.items(wnode, "workloads"):
            doc.fail(wnode, "workloads", "is empty; list at least one workload with name: and "
                                         "run:")
        fields["workloads"] = _workloads(doc, wnode.value, defaults, first_line)
    if "suites" in top:
        snode = top["suites"][1]
        if doc.scalar(snode) is None or not doc.items(snode, "suites"):
            doc.fail(snode, "suites", "is empty; list at least one suite with name:, run: and "
                                      "format:")
        fields["suites"] = tuple(_suite(doc, node, f"suites[{i}]", defaults, first_line)
                                 for i, node in enumerate(snode.value))
    for name, (_, node) in top.items():
        if name not in ("version", "defaults", "workloads", "suites"):
            key = TOP.key(name)
            fields[key.attr] = key.kind.read(doc, node, name)
    return Config(**fields)


def _settings(doc: Doc, pairs: dict[str, tuple[Node, Node]], key: str) -> dict[str, _Setting]:
    return {name: _Setting(SETTINGS.key(name).kind.read(doc, vnode, join(key, name)), vnode,
                           join(key, name))
            for name, (_, vnode) in pairs.items() if name in SETTING_KEYS}


def _workloads(doc: Doc, nodes: list[Node], defaults: dict[str, _Setting],
               first_line: dict[str, int]) -> tuple[WorkloadConfig, ...]:
    return tuple(_workload(doc, node, f"workloads[{i}]", defaults, first_line)
                 for i, node in enumerate(nodes))


def _workload(doc: Doc, node: Node, key: str, defaults: dict[str, _Setting],
              first_line: dict[str, int]) -> WorkloadConfig:
    pairs = doc.pairs(node, key, WORKLOAD_KEYS)
    name, run = _name_and_run(doc, node, key, pairs, first_line, "workload")
    settings = {**defaults, **_settings(doc, pairs, key)}
    _check_metric(doc, settings)
    _check_design(doc, settings)
    fields = {SETTINGS.key(k).attr: s.value for k, s in settings.items()}
    if "weight" in pairs:
        fields["weight"] = _weight(doc, pairs["weight"][1], join(key, "weight"))
    return WorkloadConfig(name=name, run=run, line=line(node), **fields)


def _suite(doc: Doc, node: Node, key: str, defaults: dict[str, _Setting],
           first_line: dict[str, int]) -> SuiteConfig:
    pairs = doc.pairs(node, key, SUITE_KEYS)
    if "format" not in pairs:
        doc.fail(node, join(key, "format"), "missing; give the harness's format, one of "
                                            "google-benchmark, go, bencher, pytest-benchmark, "
                                            "pyperf, jsonl")
    name, run = _name_and_run(doc, node, key, pairs, first_line, "suite")
    own = {k.name for k in SUITE_SETTINGS}
    settings = {**{k: s for k, s in defaults.items() if k in own}, **_settings(doc, pairs, key)}
    _check_design(doc, settings)
    fields = {SETTINGS.key(k).attr: s.value for k, s in settings.items()}
    if "weight" in pairs:
        fields["weight"] = _weight(doc, pairs["weight"][1], join(key, "weight"))
    return SuiteConfig(
        name=name, run=run, format=_format(doc, pairs["format"][1], join(key, "format")),
        filter=_filter(doc, pairs["filter"][1], join(key, "filter"))
        if "filter" in pairs and doc.scalar(pairs["filter"][1]) is not None else None,
        settings=WorkloadConfig(name=name, run=run, line=line(node), metric="reported",
                                **fields),
        line=line(node))


def _name_and_run(doc: Doc, node: Node, key: str, pairs: dict[str, tuple[Node, Node]],
                  first_line: dict[str, int], what: str) -> tuple[str, tuple[str, ...]]:
    """A workload's or suite's name (unique among both) and its argv."""
    for required, hint in (("name", "a short name such as sort"), ("run", "the command to time")):
        if required not in pairs:
            doc.fail(node, join(key, required), f"missing; give {hint}")
    name_node = pairs["name"][1]
    name = _name(doc, name_node, join(key, "name"))
    if name in first_line:
        doc.fail(name_node, join(key, "name"),
                 f"duplicate {what} name {name!r} (first on line {first_line[name]}, "
                 f"again on line {line(name_node)})")
    first_line[name] = line(name_node)
    return name, _argv(doc, pairs["run"][1], join(key, "run"))


def _check_design(doc: Doc, settings: dict[str, _Setting]) -> None:
    """``runs`` (a fixed count) and ``max_runs`` (the cap of measuring until settled) for
    one workload: max_runs would be silently unused, so name both. A workload's own ``runs``
    under a ``max_runs`` in ``defaults`` is fine: that one is fixed, the others are capped."""
    if "runs" in settings and "max_runs" in settings:
        runs, most = settings["runs"], settings["max_runs"]
        if most.key.startswith("defaults.") and not runs.key.startswith("defaults."):
            return
        later = max((runs, most), key=lambda s: line(s.node))
        other = most if later is runs else runs
        doc.fail(later.node, later.key,
                 f"cannot be set with {other.key} (line {line(other.node)}): "
                 f"{designs('runs', 'max_runs')}; keep one of them")


def _check_metric(doc: Doc, settings: dict[str, _Setting]) -> None:
    """The rules tying metric, pattern and better together, blamed on the most specific key."""
    metric, pattern, better = (settings.get(k) for k in ("metric", "pattern", "better"))
    reported = metric is not None and metric.value == "reported"
    counts = settings.get("counts")
    if metric is not None and metric.value == "instructions" and counts is not None \
            and counts.value == "off":
        blame = _blame(counts, metric)
        doc.fail(blame.node, blame.key,
                 "metric: instructions judges the counts alone, and counts is off "
                 f"({counts.key}, line {line(counts.node)}); set counts: auto, perf or valgrind")
    if reported and (pattern is None or pattern.value is None):
        blame = _blame(pattern, metric)
        doc.fail(blame.node, blame.key,
                 "metric: reported needs a pattern, a regex with one group that captures the "
                 "time in ns, e.g. 'elapsed_ns=(\\d+)'")
    if not reported and pattern is not None and pattern.value is not None:
        blame = _blame(pattern, metric)
        doc.fail(blame.node, blame.key,
                 "a pattern is only read with metric: reported, and this workload's metric is "
                 f"{metric.value if metric else 'wall'}; add metric: reported or remove the "
                 "pattern")
    unit = settings.get("unit")
    if unit is not None and unit.value is not None and (better is None
                                                        or better.value != "higher"):
        doc.fail(unit.node, unit.key, "a unit is only for a figure the workload reports with "
                                      "better: higher (a throughput); a time is shown in ns, "
                                      "µs, ms or s")
    if better is not None and better.value == "higher" and not reported:
        blame = _blame(better, metric)
        doc.fail(blame.node, blame.key,
                 "better: higher is only for a value the workload reports (metric: reported); "
                 "wall time is always better lower")


def _blame(*candidates: _Setting | None) -> _Setting:
    """The first candidate written on the workload itself, else the first written anywhere."""
    present = [c for c in candidates if c is not None]
    for candidate in present:
        if candidate.key.startswith("workloads["):
            return candidate
    return present[0]

