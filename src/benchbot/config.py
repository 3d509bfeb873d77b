"""benchbot.yml read into frozen dataclasses; a mistake is a ConfigError naming file, line, key.

The file is composed into a YAML node tree (``yaml.compose``) and every value is built
from its node, so each error can say where it is: ``benchbot.yml:7: workloads[1].runs:
must be at least 10 ...``. Workloads are indexed from 0 in key paths, like the list they
are in. YAML 1.1 reads ``on``/``off``/``yes``/``no`` as booleans; switches accept those and
their quoted spellings alike. The JSON Schema in ``schemas/config.schema.json`` describes
the same file for editors.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import shlex
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal, NoReturn, TypeVar, get_args

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from benchbot.errors import ConfigError
from benchbot.model import OUTCOMES, Better, Metric, Order, Outcome
from benchbot.settings import (
    DEFAULT_PARITY,
    UNIT_LABEL,
    SettingError,
    check_budget,
    check_max_runs,
    check_parity,
    check_runs,
)
from benchbot.settings import seconds as settings_seconds

DEFAULT_PATHS = (".github/benchbot.yml", "benchbot.yml")
# A number as a user means it: decimal digits (YAML 1.1's "_" separators allowed), an
# optional fraction and exponent, or .inf/.nan (refused later with their own message).
_DECIMAL = re.compile(
    r"[-+]?(?:(?:0|[1-9][0-9_]*)(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)

MAX_TIMEOUT_S = 86_400.0  # a day per run
MAX_WARMUP = 100
MAX_WEIGHT = 1e9  # a weight is relative: a billion to one is more than any split needs
MAX_CPU = 4095  # highest CPU number a pin may name (Linux's default NR_CPUS is 8192 at most)
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
# Floors of process timing (docs/verdict.md, Defaults).
_FLOOR_WALL_NS = 25_000.0
_FLOOR_REPORTED_NS = 1_000.0

_ORDERS: tuple[Order, ...] = get_args(Order)
_METRICS: tuple[Metric, ...] = get_args(Metric)
_BETTERS: tuple[Better, ...] = get_args(Better)
_BASES: tuple[Literal["merge-base", "tip"], ...] = ("merge-base", "tip")

# Keys accepted in each mapping; the JSON Schema's properties are tested against these.
SETTING_KEYS = (
    "runs", "warmup", "parity", "floor", "timeout", "order", "metric",
    "pattern", "expect", "env", "cwd", "pin", "better", "max_runs", "stdout", "unit",
)  # fmt: skip
WORKLOAD_KEYS = ("name", "run", *SETTING_KEYS, "weight")
TOP_KEYS = (
    "version", "build", "defaults", "workloads", "aa", "confirm",
    "alpha", "base", "status", "github", "seed", "sandbox", "pass_env", "budget",
    "parallel_builds",
)  # fmt: skip
AA_KEYS = ("enabled", "runs", "abort_fraction")
STATUS_KEYS = ("fail_on", "name")
GITHUB_KEYS = ("forks", "fork_label", "comment")
SANDBOX_KEYS = ("mode", "read_only", "writable", "build_network")
SANDBOX_MODES: tuple[Literal["auto", "on", "off"], ...] = ("auto", "on", "off")

_TRUE_WORDS = frozenset({"on", "yes", "true"})
_FALSE_WORDS = frozenset({"off", "no", "false"})
_UNITS_S = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0,
}  # fmt: skip
_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)"
_DURATION_PART = re.compile(rf"({_NUMBER})(ns|us|µs|μs|ms|s|m|h)")
_DURATION_RE = re.compile(rf"(?:{_NUMBER}(?:ns|us|µs|μs|ms|s|m|h))+")
_CPU_ITEM = re.compile(r"^(\d+)(?:-(\d+))?$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

_T = TypeVar("_T", bound=str)
_FIELDS = {"floor": "floor_ns", "timeout": "timeout_s"}  # file key -> WorkloadConfig field
_TOP_FIELDS = {"budget": "budget_s"}  # file key -> Config field


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
    line: int = 0

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
    comment: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxConfig:
    """How the code under test is confined (benchbot.sandbox)."""

    mode: Literal["auto", "on", "off"] = "auto"
    read_only: tuple[str, ...] = ()  # directories the sandbox shows besides its own, read-only
    writable: tuple[str, ...] = ()  # directories besides the worktrees the code may write
    build_network: bool = False  # the build reaches the host's network (else loopback only)


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """A whole benchbot.yml, validated."""

    path: str
    version: int = 1
    build: str | tuple[str, ...] | None = None
    parallel_builds: bool = True  # build base and head at once (false: one after the other)
    workloads: tuple[WorkloadConfig, ...] = ()
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
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            f"{path}:{line}: not UTF-8 text (byte {exc.start}); save it as UTF-8"
        ) from None
    return parse_config(text, path=path)


def parse_config(text: str, path: str = "benchbot.yml") -> Config:
    """Validate the text of a config file; path is only used in messages."""
    return _Reader(path).config(_compose(text, path))


def parse_duration(value: object, *, where: str) -> float:
    """A duration in seconds: "60s", "500ms", "2m", "1m30s", "25us"/"25µs"; a number is seconds.

    where prefixes the error message, e.g. "benchbot.yml:7: defaults.timeout".
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str):
        try:
            seconds = settings_seconds(value)
        except SettingError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    else:
        raise ConfigError(f"{where}: must be a duration such as 60s or 500ms, got {value!r}")
    if not math.isfinite(seconds) or seconds < 0:
        raise ConfigError(f"{where}: must be a finite duration of 0 or more, got {value!r}")
    return seconds


def _compose(text: str, path: str) -> Node:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        column = f" at column {mark.column + 1}" if mark is not None else ""
        problem = ", ".join(filter(None, (exc.context, exc.problem))) or "cannot parse"
        raise ConfigError(f"{path}:{line}: YAML syntax error{column}: {problem}") from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow, e.g. a control code
        line = text.count("\n", 0, exc.position) + 1
        char = f"U+{exc.character:04X}" if isinstance(exc.character, int) else repr(exc.character)
        raise ConfigError(f"{path}:{line}: YAML syntax error: {exc.reason} ({char})") from None
    if node is None:
        raise ConfigError(f"{path}:1: version: the file is empty; start it with 'version: 1'")
    return node


def _suggest(word: str, known: Collection[str]) -> str:
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1


@dataclass(frozen=True, slots=True)
class _Setting:
    """A setting's value and where it was written."""

    value: Any
    node: Node
    key: str


_Pairs = dict[str, tuple[Node, Node]]


class _Reader:
    """Builds the dataclasses from a node tree, failing with the position of the node at fault."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._scalars = SafeConstructor()
        self._setting_readers: dict[str, Callable[[Node, str], Any]] = {
            "runs": self.runs,
            "warmup": lambda n, k: self.integer(n, k, minimum=0, maximum=MAX_WARMUP),
            "parity": lambda n, k: self.bounded(n, k, self.number, check_parity),
            "floor": lambda n, k: self.optional(n, k, self.duration),
            "timeout": self.timeout,
            "order": lambda n, k: self.choice(n, k, _ORDERS),
            "metric": lambda n, k: self.choice(n, k, _METRICS),
            "better": lambda n, k: self.choice(n, k, _BETTERS),
            "pattern": lambda n, k: self.optional(n, k, self.regex),
            "expect": lambda n, k: self.optional(n, k, self.regex),
            "env": self.env,
            "cwd": lambda n, k: self.optional(n, k, self.cwd),
            "pin": lambda n, k: self.optional(n, k, self.pin),
            "max_runs": lambda n, k: self.bounded(n, k, lambda m, j: self.integer(m, j, minimum=-(2**63)),
                                                  check_max_runs),
            "stdout": lambda n, k: self.choice(n, k, ("capture", "discard")),
            "unit": lambda n, k: self.optional(n, k, self.unit),
        }

    def fail(self, node: Node, key: str, message: str) -> NoReturn:
        raise ConfigError(f"{self.path}:{_line(node)}: {key}: {message}")

    # --- shapes -------------------------------------------------------------------

    def scalar(self, node: Node) -> Any:
        """The Python value of a scalar node as YAML 1.1 reads it; a mapping or list as itself."""
        if not isinstance(node, ScalarNode):
            return node
        try:
            return self._scalars.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError):
            return node.value

    def describe(self, node: Node) -> str:
        if isinstance(node, MappingNode):
            return "a mapping"
        if isinstance(node, SequenceNode):
            return "a list"
        value = self.scalar(node)
        if value is None:
            return "nothing (null)"
        kind = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
        text = node.value if len(node.value) <= 40 else node.value[:39] + "…"
        return f"{kind.get(type(value), 'a ' + type(value).__name__)} ({text!r})"

    def pairs(self, node: Node, key: str, allowed: Collection[str] | None) -> _Pairs:
        """A mapping's entries by key; refuses duplicates, and unknown keys unless allowed."""
        where = key or "(top level)"
        if not isinstance(node, MappingNode):
            self.fail(node, where, f"must be a mapping, got {self.describe(node)}")
        seen: dict[str, Node] = {}
        for knode, _ in node.value:
            if knode.tag == "tag:yaml.org,2002:merge":
                continue
            name = self.key_name(knode, where)
            if name in seen:
                self.fail(
                    knode,
                    _join(key, name),
                    f"duplicate key (first given on line {_line(seen[name])}); "
                    "YAML would silently keep the last one",
                )
            seen[name] = knode
        try:
            self._scalars.flatten_mapping(node)  # `<<: *anchor` merges; later keys win
        except yaml.MarkedYAMLError as exc:
            self.fail(node, where, f"bad merge key: {exc.problem}")
        out: _Pairs = {}
        for knode, vnode in node.value:
            name = self.key_name(knode, where)
            if allowed is not None and name not in allowed:
                hint = _suggest(name, allowed) or f"; known keys: {', '.join(allowed)}"
                self.fail(knode, _join(key, name), f"unknown key{hint}")
            out[name] = (knode, vnode)
        return out

    def key_name(self, knode: Node, where: str) -> str:
        if not isinstance(knode, ScalarNode):
            self.fail(knode, where, "keys must be plain names")
        return str(knode.value)

    def items(self, node: Node, key: str) -> list[Node]:
        if not isinstance(node, SequenceNode):
            self.fail(node, key, f"must be a list, got {self.describe(node)}")
        return list(node.value)

    # --- values -------------------------------------------------------------------

    def decimal(self, node: Node, key: str, value: Any) -> None:
        """Refuse a number YAML 1.1 read from another notation (010 is octal 8, 0x10 is 16,
        1:30 is 90): what a user writes as a count or a duration is meant in decimal."""
        if (isinstance(value, (int, float)) and not isinstance(value, bool)
                and isinstance(node, ScalarNode) and not node.style
                and not _DECIMAL.fullmatch(node.value)):
            self.fail(node, key, f"write the number in decimal: YAML reads {node.value!r} as "
                                 f"{value!r}")

    def integer(self, node: Node, key: str, *, minimum: int, maximum: int | None = None,
                why: str = "") -> int:
        value = self.scalar(node)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(node, key, f"must be an integer, got {self.describe(node)}")
        self.decimal(node, key, value)
        if value < minimum:
            self.fail(node, key, f"must be at least {minimum}{why}, got {value}")
        if maximum is not None and value > maximum:
            self.fail(node, key, f"must be at most {maximum}{why}, got {value}")
        return value

    def number(self, node: Node, key: str) -> float:
        value = self.scalar(node)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(node, key, f"must be a number, got {self.describe(node)}")
        self.decimal(node, key, value)
        if not math.isfinite(value):
            self.fail(node, key, f"must be a finite number, got {node.value}")
        return float(value)

    def fraction(self, node: Node, key: str, *, low_open: bool, high_open: bool) -> float:
        value = self.number(node, key)
        too_low = value <= 0 if low_open else value < 0
        too_high = value >= 1 if high_open else value > 1
        if too_low or too_high:
            low = "above 0" if low_open else "at least 0"
            high = "below 1" if high_open else "at most 1"
            self.fail(node, key, f"must be {low} and {high}, got {node.value}")
        return value

    def string(self, node: Node, key: str) -> str:
        value = self.scalar(node)
        if not isinstance(value, str):
            self.fail(node, key, f"must be a string, got {self.describe(node)}")
        if not value.strip():
            self.fail(node, key, "must not be empty")
        _no_nul(self, node, key, value)
        return value

    def text(self, node: Node, key: str) -> str:
        """A scalar as it was written: numbers and words in argv and env are text to the program."""
        if not isinstance(node, ScalarNode) or self.scalar(node) is None:
            self.fail(node, key, f"must be a string, got {self.describe(node)}")
        _no_nul(self, node, key, str(node.value))
        return str(node.value)

    def switch(self, node: Node, key: str) -> bool:
        value = self.scalar(node)
        if not _is_switch(value):
            self.fail(node, key, f"must be on or off (true/false), got {self.describe(node)}")
        return value is True or (isinstance(value, str) and value.lower() in _TRUE_WORDS)

    def choice(self, node: Node, key: str, choices: tuple[_T, ...]) -> _T:
        value = self.scalar(node)
        for choice in choices:
            if value == choice:
                return choice
        hint = _suggest(value, choices) if isinstance(value, str) else ""
        listed = " | ".join(choices)
        self.fail(node, key, f"must be one of {listed}, got {self.describe(node)}{hint}")

    def regex(self, node: Node, key: str) -> str:
        value = self.string(node, key)
        try:
            compiled = re.compile(value)
        except re.error as exc:
            self.fail(node, key, f"not a valid regular expression: {exc}")
        if compiled.groups != 1:
            self.fail(
                node,
                key,
                f"must have exactly one group (...) around the value to capture, "
                f"has {compiled.groups}; "
                "make other groups non-capturing with (?:...)",
            )
        return value

    def duration(self, node: Node, key: str) -> float:
        value = self.scalar(node)
        if not isinstance(node, ScalarNode) or value is None or isinstance(value, bool):
            self.fail(
                node, key, f"must be a duration such as 60s or 500ms, got {self.describe(node)}"
            )
        self.decimal(node, key, value)
        return parse_duration(value, where=f"{self.path}:{_line(node)}: {key}")

    def optional(self, node: Node, key: str, read: Callable[[Node, str], Any]) -> Any:
        return None if self.scalar(node) is None else read(node, key)

    # --- settings -----------------------------------------------------------------

    def runs(self, node: Node, key: str) -> int:
        value = self.integer(node, key, minimum=-(2**63))
        return int(self.bounded(node, key, lambda n, k: value, check_runs))

    def bounded(self, node: Node, key: str, read: Callable[[Node, str], Any],
                check: Callable[[Any], Any]) -> Any:
        """A value read from ``node`` and checked against a setting's bounds (settings.py)."""
        try:
            return check(read(node, key))
        except SettingError as exc:
            self.fail(node, key, str(exc))

    def argv(self, node: Node, key: str) -> tuple[str, ...]:
        if isinstance(node, SequenceNode):
            argv = tuple(self.text(item, f"{key}[{i}]") for i, item in enumerate(node.value))
        else:
            command = self.string(node, key) if self.scalar(node) is not None else ""
            try:
                argv = tuple(shlex.split(command))
            except ValueError as exc:
                self.fail(node, key, f"cannot split into arguments: {exc}")
        if not argv or not argv[0].strip():
            self.fail(node, key, "is empty; give the program and its arguments")
        return argv

    def env(self, node: Node, key: str) -> tuple[tuple[str, str], ...]:
        out = []
        for name, (knode, vnode) in self.pairs(node, key, None).items():
            if not name or "=" in name or "\0" in name:
                self.fail(knode, _join(key, name), "not a valid environment variable name")
            out.append((name, self.text(vnode, _join(key, name))))
        return tuple(out)

    def cwd(self, node: Node, key: str) -> str:
        value = self.string(node, key)
        path = PurePosixPath(value)
        depth = 0
        for part in path.parts:
            depth += -1 if part == ".." else 0 if part == "." else 1
            if depth < 0:
                break
        if path.is_absolute() or depth < 0:
            self.fail(
                node,
                key,
                f"must be a path inside the repository, relative to its root, got {value!r}",
            )
        return value

    def pin(self, node: Node, key: str) -> tuple[int, ...]:
        value = self.scalar(node)
        if isinstance(node, SequenceNode):
            cpus = [
                self.integer(item, f"{key}[{i}]", minimum=0, maximum=MAX_CPU)
                for i, item in enumerate(node.value)
            ]
        elif isinstance(value, int) and not isinstance(value, bool):
            cpus = [self.integer(node, key, minimum=0, maximum=MAX_CPU)]
        elif isinstance(value, str):
            cpus = []
            for piece in value.split(","):
                match = _CPU_ITEM.match(piece.strip())
                if match is None:
                    self.fail(
                        node,
                        key,
                        f"bad CPU list {value!r}: {piece.strip()!r} is not a CPU number "
                        "or a range like 2-3",
                    )
                low, high = int(match[1]), int(match[2] or match[1])
                if high < low:
                    self.fail(
                        node, key, f"bad CPU list {value!r}: range {piece.strip()!r} runs backwards"
                    )
                if high > MAX_CPU:
                    self.fail(node, key, f"bad CPU list {value!r}: CPU numbers go up to {MAX_CPU}")
                cpus.extend(range(low, high + 1))
        else:
            self.fail(
                node,
                key,
                f'must be a CPU list such as "0,2-3", [0, 2] or 3, got {self.describe(node)}',
            )
        if not cpus:
            self.fail(node, key, "names no CPU")
        return tuple(sorted(set(cpus)))

    def timeout(self, node: Node, key: str) -> float:
        seconds = self.duration(node, key)
        if seconds <= 0:
            self.fail(node, key, f"must be longer than 0, got {node.value}")
        if seconds > MAX_TIMEOUT_S:
            self.fail(node, key, f"must be at most a day (86400s) per run, got {node.value}")
        return seconds

    def settings(self, pairs: _Pairs, key: str) -> dict[str, _Setting]:
        return {
            name: _Setting(
                self._setting_readers[name](vnode, _join(key, name)), vnode, _join(key, name)
            )
            for name, (_, vnode) in pairs.items()
            if name in SETTING_KEYS
        }

    # --- the file -----------------------------------------------------------------

    def config(self, root: Node) -> Config:
        top = self.pairs(root, "", None)  # version first: a newer file has other keys
        if "version" not in top:
            self.fail(root, "version", "missing; start the file with 'version: 1'")
        vnode = top["version"][1]
        if type(self.scalar(vnode)) is not int or self.scalar(vnode) != 1:
            self.fail(
                vnode, "version", f"this benchbot reads version 1, got {self.describe(vnode)}"
            )
        top = self.pairs(root, "", TOP_KEYS)
        defaults: dict[str, _Setting] = {}
        if "defaults" in top:
            dnode = top["defaults"][1]
            defaults = self.settings(self.pairs(dnode, "defaults", SETTING_KEYS), "defaults")
        if "workloads" not in top:
            self.fail(root, "workloads", "missing; list the programs to time under workloads:")
        wnode = top["workloads"][1]
        if self.scalar(wnode) is None or not self.items(wnode, "workloads"):
            self.fail(
                wnode, "workloads", "is empty; list at least one workload with name: and run:"
            )
        fields: dict[str, Any] = {
            "path": self.path,
            "workloads": self.workloads(wnode.value, defaults),
        }
        readers: dict[str, Callable[[Node, str], Any]] = {
            "build": self.build,
            "parallel_builds": self.switch,
            "aa": self.aa,
            "confirm": self.switch,
            "alpha": lambda n, k: self.fraction(n, k, low_open=True, high_open=True),
            "base": lambda n, k: self.choice(n, k, _BASES),
            "status": self.status,
            "github": self.github,
            "seed": lambda n, k: self.optional(
                n, k, lambda m, j: self.integer(m, j, minimum=0, maximum=2**63 - 1)
            ),
            "sandbox": self.sandbox,
            "pass_env": self.pass_env,
            "budget": lambda n, k: self.bounded(n, k, self.duration, check_budget),
        }
        for name, read in readers.items():
            if name in top:
                fields[_TOP_FIELDS.get(name, name)] = read(top[name][1], name)
        return Config(**fields)

    def workloads(
        self, nodes: list[Node], defaults: dict[str, _Setting]
    ) -> tuple[WorkloadConfig, ...]:
        out: list[WorkloadConfig] = []
        first_line: dict[str, int] = {}
        for i, node in enumerate(nodes):
            key = f"workloads[{i}]"
            pairs = self.pairs(node, key, WORKLOAD_KEYS)
            for required, hint in (
                ("name", "a short name such as sort"),
                ("run", "the command to time"),
            ):
                if required not in pairs:
                    self.fail(node, _join(key, required), f"missing; give {hint}")
            name_node = pairs["name"][1]
            name = self.name(name_node, _join(key, "name"))
            if name in first_line:
                self.fail(
                    name_node,
                    _join(key, "name"),
                    f"duplicate workload name {name!r} (first on line {first_line[name]}, "
                    f"again on line {_line(name_node)})",
                )
            first_line[name] = _line(name_node)
            settings = {**defaults, **self.settings(pairs, key)}
            self.check_metric(settings)
            self.check_design(settings)
            fields = {_FIELDS.get(k, k): s.value for k, s in settings.items()}
            if fields.get("floor_ns") is not None:
                fields["floor_ns"] *= 1e9
            run = self.argv(pairs["run"][1], _join(key, "run"))
            if "weight" in pairs:
                fields["weight"] = self.weight(pairs["weight"][1], _join(key, "weight"))
            out.append(WorkloadConfig(name=name, run=run, line=_line(node), **fields))
        return tuple(out)

    def check_design(self, settings: dict[str, _Setting]) -> None:
        """``runs`` (a fixed count) and ``max_runs`` (the cap of measuring until settled)
        for one workload: max_runs would be silently unused, so name both. A workload's own
        ``runs`` under a ``max_runs`` in ``defaults`` is fine: that one is fixed, the
        others are capped."""
        if "runs" in settings and "max_runs" in settings:
            runs, most = settings["runs"], settings["max_runs"]
            if most.key.startswith("defaults.") and not runs.key.startswith("defaults."):
                return
            later = max((runs, most), key=lambda s: _line(s.node))
            other = most if later is runs else runs
            self.fail(later.node, later.key,
                      f"cannot be set with {other.key} (line {_line(other.node)}): runs asks for "
                      "a fixed number of pairs per phase, max_runs caps measuring until "
                      "settled; keep one of them")

    def weight(self, node: Node, key: str) -> float:
        value = self.number(node, key)
        if value <= 0 or value > MAX_WEIGHT:
            self.fail(node, key, f"must be a positive number up to {MAX_WEIGHT:g} (the workload's "
                      f"expected cost relative to the others; default 1), got {node.value}")
        return value

    def name(self, node: Node, key: str) -> str:
        name = self.text(node, key)
        if not _NAME_RE.match(name):
            self.fail(
                node,
                key,
                f"{name!r} may only hold letters, digits, '_', '.' and '-' "
                "(names go into comments and /bench only=)",
            )
        return name

    def build(self, node: Node, key: str) -> str | tuple[str, ...] | None:
        if isinstance(node, SequenceNode):
            return self.argv(node, key)
        command: str | None = self.optional(node, key, self.string)
        return command

    def unit(self, node: Node, key: str) -> str:
        value = self.text(node, key)
        if not UNIT_LABEL.fullmatch(value):
            self.fail(node, key, "must be a short label of letters, digits, spaces and / % . µ "
                                 f"(at most 16), e.g. MB/s or ops/s, got {self.describe(node)}")
        return value

    def check_metric(self, settings: dict[str, _Setting]) -> None:
        """The rules tying metric, pattern and better together, blamed on the most specific key."""
        metric, pattern, better = (settings.get(k) for k in ("metric", "pattern", "better"))
        reported = metric is not None and metric.value == "reported"
        if reported and (pattern is None or pattern.value is None):
            blame = _blame(pattern, metric)
            self.fail(
                blame.node,
                blame.key,
                "metric: reported needs a pattern, a regex with one group that captures "
                "the time in ns, e.g. 'elapsed_ns=(\\d+)'",
            )
        if not reported and pattern is not None and pattern.value is not None:
            blame = _blame(pattern, metric)
            self.fail(
                blame.node,
                blame.key,
                f"a pattern is only read with metric: reported, and this workload's metric is "
                f"{metric.value if metric else 'wall'}; add metric: reported or remove the pattern",
            )
        unit = settings.get("unit")
        if unit is not None and unit.value is not None and (better is None or better.value != "higher"):
            self.fail(unit.node, unit.key, "a unit is only for a figure the workload reports with "
                                           "better: higher (a throughput); a time is shown in "
                                           "ns, µs, ms or s")
        if better is not None and better.value == "higher" and not reported:
            blame = _blame(better, metric)
            self.fail(
                blame.node,
                blame.key,
                "better: higher is only for a value the workload reports (metric: reported); "
                "wall time is always better lower",
            )

    def aa(self, node: Node, key: str) -> AAConfig:
        if _is_switch(self.scalar(node)):
            return AAConfig(enabled=self.switch(node, key))
        if not isinstance(node, MappingNode):
            self.fail(
                node,
                key,
                f"must be on, off or a mapping (runs, abort_fraction), got {self.describe(node)}",
            )
        fields: dict[str, Any] = {}
        for name, (_, vnode) in self.pairs(node, key, AA_KEYS).items():
            sub = _join(key, name)
            if name == "enabled":
                fields[name] = self.switch(vnode, sub)
            elif name == "runs":
                fields[name] = self.optional(vnode, sub, self.runs)
            else:
                fields[name] = self.fraction(vnode, sub, low_open=False, high_open=False)
        return AAConfig(**fields)

    def status(self, node: Node, key: str) -> StatusConfig:
        fields: dict[str, Any] = {}
        for name, (_, vnode) in self.pairs(node, key, STATUS_KEYS).items():
            sub = _join(key, name)
            if name == "name":
                fields[name] = self.string(vnode, sub)
            elif isinstance(vnode, SequenceNode):
                outcomes = [
                    self.choice(item, f"{sub}[{i}]", OUTCOMES) for i, item in enumerate(vnode.value)
                ]
                fields[name] = tuple(dict.fromkeys(outcomes))
            else:
                fields[name] = (self.choice(vnode, sub, OUTCOMES),)
        return StatusConfig(**fields)

    def sandbox(self, node: Node, key: str) -> SandboxConfig:
        if isinstance(node, ScalarNode):
            value = self.scalar(node)
            if value is True or value is False:  # YAML 1.1 reads on/off as booleans
                return SandboxConfig(mode="on" if value else "off")
            return SandboxConfig(mode=self.choice(node, key, SANDBOX_MODES))
        fields: dict[str, Any] = {}
        for name, (_, vnode) in self.pairs(node, key, SANDBOX_KEYS).items():
            sub = _join(key, name)
            if name == "mode":
                fields[name] = self.sandbox(vnode, sub).mode
            elif name == "build_network":
                fields[name] = self.switch(vnode, sub)
            else:
                fields[name] = tuple(
                    self.absolute_path(item, f"{sub}[{i}]")
                    for i, item in enumerate(self.items(vnode, sub))
                )
        return SandboxConfig(**fields)

    def absolute_path(self, node: Node, key: str) -> str:
        value = self.string(node, key)
        expanded = os.path.expanduser(value)
        if not os.path.isabs(expanded):
            self.fail(node, key, f"must be an absolute path (or start with ~/), got {value!r}")
        return os.path.normpath(expanded)

    def pass_env(self, node: Node, key: str) -> tuple[str, ...]:
        from benchbot.sandbox import is_never_passed

        names: list[str] = []
        for i, item in enumerate(self.items(node, key)):
            sub = f"{key}[{i}]"
            name = self.string(item, sub)
            if not _ENV_NAME.match(name):
                self.fail(item, sub, f"{name!r} is not an environment variable name")
            if is_never_passed(name):
                self.fail(
                    item,
                    sub,
                    f"{name} is never passed to the code under test: tokens, credentials and "
                    "the runner's and benchbot's own variables stay out of its reach "
                    "(set a fixed value under env: if the build needs one)",
                )
            names.append(name)
        return tuple(dict.fromkeys(names))

    def github(self, node: Node, key: str) -> GithubConfig:
        fields: dict[str, Any] = {}
        for name, (_, vnode) in self.pairs(node, key, GITHUB_KEYS).items():
            sub = _join(key, name)
            if name == "fork_label":
                fields[name] = self.optional(vnode, sub, self.string)
            else:
                fields[name] = self.switch(vnode, sub)
        return GithubConfig(**fields)


def _no_nul(reader: _Reader, node: Node, key: str, value: str) -> None:
    """Refuse NUL bytes: an argv, environment or path cannot hold one."""
    if "\0" in value:
        reader.fail(node, key, "contains a NUL byte (\\0), which no argument, variable or path can hold")


def _is_switch(value: object) -> bool:
    """True for a YAML boolean, and for on/off/yes/no/true/false quoted as strings."""
    return isinstance(value, bool) or (
        isinstance(value, str) and value.lower() in _TRUE_WORDS | _FALSE_WORDS
    )


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name


def _blame(*candidates: _Setting | None) -> _Setting:
    """The first candidate written on the workload itself, else the first written anywhere."""
    present = [c for c in candidates if c is not None]
    for candidate in present:
        if candidate.key.startswith("workloads["):
            return candidate
    return present[0]
