"""The kinds of value benchbot.yml's keys hold: how each is read from its YAML node (with
its bounds, every mistake named by file, line and key) and how the JSON Schema says the
same. The key tables (``keys``) put a kind beside every key.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal, get_args

from yaml.nodes import Node, SequenceNode

from benchbot.config.config import COUNTS_MODES, ENV_NAME, MAX_TIMEOUT_S, MAX_WEIGHT, SANDBOX_MODES
from benchbot.config.settings import (
    MAX_CPU,
    MAX_RUNS,
    MIN_RUNS,
    UNIT_LABEL,
    WORKLOAD_NAME,
    SettingError,
    check_budget,
    check_parity,
    check_runs,
    cpu_list,
    duration_words,
)
from benchbot.config.yamlnode import Doc, Read, join
from benchbot.core.globs import GlobError, check_glob
from benchbot.core.model import OUTCOMES, CountsMode, Outcome, ProfileMode
from benchbot.sandbox import fsview
from benchbot.sandbox.bwrap import is_never_passed

# --- kinds of value: how each is read, and how the JSON Schema says it -----------------------


@dataclass(frozen=True, slots=True)
class Kind:
    """A kind of value: its reader (with its bounds) and its JSON Schema (the same bounds)."""

    read: Read
    schema: Mapping[str, Any]
    show: Callable[[Any], Any] = lambda value: value  # a default as the file writes it


def ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


def optional(kind: Kind) -> Kind:
    """The kind, or null (left out)."""
    def read(doc: Doc, node: Node, key: str) -> Any:
        return None if doc.scalar(node) is None else kind.read(doc, node, key)
    return Kind(read, {"anyOf": [dict(kind.schema), {"type": "null"}]}, kind.show)


def integer(low: int, high: int) -> Kind:
    return Kind(lambda d, n, k: d.integer(n, k, minimum=low, maximum=high),
                {"type": "integer", "minimum": low, "maximum": high})


def pair_count(check: Callable[[int], int]) -> Kind:
    """A number of pairs, bounded by a setting's check (settings.check_runs or
    check_max_runs: both allow MIN_RUNS to MAX_RUNS, and their messages are used)."""
    def read(doc: Doc, node: Node, key: str) -> int:
        return int(doc.checked(node, key, lambda d, n, k: d.integer(n, k, minimum=-(2**63)), check))
    return Kind(read, {"type": "integer", "minimum": MIN_RUNS, "maximum": MAX_RUNS})


def fraction(*, low_open: bool, high_open: bool) -> Kind:
    return Kind(lambda d, n, k: d.fraction(n, k, low_open=low_open, high_open=high_open),
                {"type": "number", ("exclusiveMinimum" if low_open else "minimum"): 0,
                 ("exclusiveMaximum" if high_open else "maximum"): 1})


def choice(choices: tuple[str, ...]) -> Kind:
    return Kind(lambda d, n, k: d.choice(n, k, choices), {"enum": list(choices)})


def duration(check: Callable[[Doc, Node, str, float], float]) -> Kind:
    def read(doc: Doc, node: Node, key: str) -> float:
        return check(doc, node, key, doc.duration(node, key))
    return Kind(read, ref("duration"), duration_words)


STRING = Kind(lambda d, n, k: d.string(n, k), {"type": "string", "minLength": 1})
REGEX = Kind(lambda d, n, k: d.regex(n, k), {"type": "string", "minLength": 1})
SWITCH = Kind(lambda d, n, k: d.switch(n, k), ref("switch"))
RUNS = pair_count(check_runs)


def list_of(item: Read, schema: Mapping[str, Any]) -> Kind:
    def read(doc: Doc, node: Node, key: str) -> tuple[Any, ...]:
        return tuple(item(doc, x, f"{key}[{i}]") for i, x in enumerate(doc.items(node, key)))
    return Kind(read, {"type": "array", "items": dict(schema)}, list)


# --- readers of benchbot.yml's own kinds -----------------------------------------------------


def read_parity(doc: Doc, node: Node, key: str) -> float:
    return float(doc.checked(node, key, lambda d, n, k: d.number(n, k), check_parity))


def read_timeout(doc: Doc, node: Node, key: str, seconds: float) -> float:
    if seconds <= 0:
        doc.fail(node, key, f"must be longer than 0, got {node.value}")
    if seconds > MAX_TIMEOUT_S:
        doc.fail(node, key, f"must be at most a day (86400s) per run, got {node.value}")
    return seconds


def read_budget(doc: Doc, node: Node, key: str, seconds: float) -> float:
    return float(doc.checked(node, key, lambda d, n, k: seconds, check_budget))


def read_floor_ns(doc: Doc, node: Node, key: str) -> float:
    return doc.duration(node, key) * 1e9


def read_weight(doc: Doc, node: Node, key: str) -> float:
    value = doc.number(node, key)
    if value <= 0 or value > MAX_WEIGHT:
        doc.fail(node, key, f"must be a positive number up to {MAX_WEIGHT:g} (the workload's "
                 f"expected cost relative to the others; default 1), got {node.value}")
    return value


def read_name(doc: Doc, node: Node, key: str) -> str:
    name = doc.text(node, key)
    if not WORKLOAD_NAME.fullmatch(name):
        doc.fail(node, key, f"{name!r} may only hold letters, digits, '_', '.' and '-' "
                            "(names go into comments and /bench only=)")
    return name


def read_argv(doc: Doc, node: Node, key: str) -> tuple[str, ...]:
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


def read_build(doc: Doc, node: Node, key: str) -> str | tuple[str, ...] | None:
    if isinstance(node, SequenceNode):
        return read_argv(doc, node, key)
    return None if doc.scalar(node) is None else doc.string(node, key)


def read_unit(doc: Doc, node: Node, key: str) -> str:
    value = doc.text(node, key)
    if not UNIT_LABEL.fullmatch(value):
        doc.fail(node, key, "must be a short label of letters, digits, spaces and / % . µ "
                            f"(at most 16), e.g. MB/s or ops/s, got {doc.describe(node)}")
    return value


def read_env(doc: Doc, node: Node, key: str) -> tuple[tuple[str, str], ...]:
    out = []
    for name, (knode, vnode) in doc.pairs(node, key, None).items():
        if not name or "=" in name or "\0" in name:
            doc.fail(knode, join(key, name), "not a valid environment variable name")
        out.append((name, doc.text(vnode, join(key, name))))
    return tuple(out)


def read_cwd(doc: Doc, node: Node, key: str) -> str:
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


def read_pin(doc: Doc, node: Node, key: str) -> tuple[int, ...]:
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


def read_outcomes(doc: Doc, node: Node, key: str) -> tuple[Outcome, ...]:
    if not isinstance(node, SequenceNode):
        return (doc.choice(node, key, OUTCOMES),)
    found = [doc.choice(item, f"{key}[{i}]", OUTCOMES) for i, item in enumerate(node.value)]
    return tuple(dict.fromkeys(found))


def read_sandbox_mode(doc: Doc, node: Node, key: str) -> Literal["auto", "on", "off"]:
    value = doc.scalar(node)
    if value is True or value is False:  # YAML 1.1 reads on/off as booleans
        return "on" if value else "off"  # the Literal mypy needs; switch_word gives str
    return doc.choice(node, key, SANDBOX_MODES)


def read_counts_mode(doc: Doc, node: Node, key: str) -> CountsMode:
    value = doc.scalar(node)
    if value is True or value is False:  # YAML 1.1 reads on/off as booleans
        return "auto" if value else "off"
    return doc.choice(node, key, COUNTS_MODES)


COUNTS_KIND = Kind(read_counts_mode, {"enum": [*COUNTS_MODES, True, False]})
PROFILES: tuple[ProfileMode, ...] = get_args(ProfileMode)


def read_profile_mode(doc: Doc, node: Node, key: str) -> ProfileMode:
    value = doc.scalar(node)
    if value is True or value is False:  # YAML 1.1 reads on/off as booleans
        return "called" if value else "off"
    return doc.choice(node, key, PROFILES)


def read_absolute_path(doc: Doc, node: Node, key: str) -> str:
    value = doc.string(node, key)
    expanded = os.path.expanduser(value)
    if not os.path.isabs(expanded):
        doc.fail(node, key, f"must be an absolute path (or start with ~/), got {value!r}")
    return os.path.normpath(expanded)


def read_branch_pattern(doc: Doc, node: Node, key: str) -> str:
    value = doc.string(node, key)
    if not value.strip() or any(c.isspace() for c in value):
        doc.fail(node, key, f"{value!r} is not a branch name or pattern")
    return value


def read_shown_path(doc: Doc, node: Node, key: str) -> str:
    """A directory the sandbox shows (``read_only``) or lets write (``writable``): checked
    against this machine by ``fsview.refusal`` (the config is read where it runs)."""
    value = doc.string(node, key)
    if ".." in PurePosixPath(value).parts:
        doc.fail(node, key, f"{value!r} holds `..`: name the directory itself")
    path = read_absolute_path(doc, node, key)
    problem = fsview.refusal(path, os.environ)
    if problem is not None:
        doc.fail(node, key, problem)
    return path


def read_pass_env_name(doc: Doc, node: Node, key: str) -> str:
    name = doc.string(node, key)
    if not ENV_NAME.fullmatch(name):
        doc.fail(node, key, f"{name!r} is not an environment variable name")
    if is_never_passed(name):
        doc.fail(node, key, f"{name} is never passed to the code under test: tokens, "
                            "credentials and the runner's and benchbot's own variables stay "
                            "out of its reach (set a fixed value under env: if the build "
                            "needs one)")
    return name


def read_pass_env(doc: Doc, node: Node, key: str) -> tuple[str, ...]:
    names = list_of(read_pass_env_name, {}).read(doc, node, key)
    return tuple(dict.fromkeys(names))


def read_glob(doc: Doc, node: Node, key: str) -> str:
    value = doc.string(node, key)
    try:
        return check_glob(value)
    except GlobError as exc:
        doc.fail(node, key, f"{value!r} {exc}")


def read_paths(doc: Doc, node: Node, key: str) -> tuple[str, ...]:
    if not isinstance(node, SequenceNode):
        doc.fail(node, key, 'must be a list of globs, e.g. ["src/**", "Makefile"], got '
                            + doc.describe(node))
    if not node.value:
        doc.fail(node, key, "is empty, so no change could ever affect the workload; list the "
                            "files that can, or leave paths out to always measure it")
    globs = list_of(read_glob, {}).read(doc, node, key)
    return tuple(dict.fromkeys(globs))


