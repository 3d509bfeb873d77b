"""YAML nodes read into plain values, every mistake a ConfigError naming file, line and key.

The file is composed into a node tree (``yaml.compose``) rather than loaded, so each
value keeps its line: ``benchbot.yml:7: workloads[1].runs: must be at least 10 ...``.
This module knows YAML's shapes (mappings, lists, scalars), how YAML 1.1 reads a scalar
and where it reads one a user did not mean (``010`` is octal 8, ``0x10`` is 16, ``1:30``
is 90), and the plain kinds of value (numbers, strings, switches, choices, durations).
What the keys of benchbot.yml are is ``config``'s business.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Collection
from typing import Any, NoReturn, TypeVar

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from benchbot.config.settings import SWITCH_WORDS, SettingError, seconds, switch
from benchbot.core.errors import ConfigError

# A number as a user means it: decimal digits (YAML 1.1's "_" separators allowed), an
# optional fraction and exponent, or .inf/.nan (refused later with their own message).
_DECIMAL = re.compile(
    r"[-+]?(?:(?:0|[1-9][0-9_]*)(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)
_MERGE_TAG = "tag:yaml.org,2002:merge"

Pairs = dict[str, tuple[Node, Node]]
Read = Callable[["Doc", Node, str], Any]  # a value read from a node, named by its key
_T = TypeVar("_T", bound=str)


def compose(text: str, path: str) -> Node:
    """The node tree of a YAML text; a syntax error names its line (and column)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = mark.line + 1 if mark is not None else 1
        column = f" at column {mark.column + 1}" if mark is not None else ""
        problem = ", ".join(filter(None, (exc.context, exc.problem))) or "cannot parse"
        raise ConfigError(f"{path}:{where}: YAML syntax error{column}: {problem}") from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow, e.g. a control code
        where = text.count("\n", 0, exc.position) + 1
        char = f"U+{exc.character:04X}" if isinstance(exc.character, int) else repr(exc.character)
        raise ConfigError(f"{path}:{where}: YAML syntax error: {exc.reason} ({char})") from None
    if node is None:
        raise ConfigError(f"{path}:1: version: the file is empty; start it with 'version: 1'")
    return node


def line(node: Node) -> int:
    """The 1-based line a node starts on."""
    return int(node.start_mark.line) + 1


def join(key: str, name: str) -> str:
    """The key path of ``name`` inside ``key``: ``defaults`` + ``runs`` -> ``defaults.runs``."""
    return f"{key}.{name}" if key else name


def suggest(word: str, known: Collection[str]) -> str:
    """``; did you mean 'x'?`` for the closest of ``known``, or nothing."""
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def parse_duration(value: object, *, where: str) -> float:
    """A duration in seconds: "60s", "500ms", "2m", "1m30s", "25us"/"25µs"; a number is seconds.

    where prefixes the error message, e.g. "benchbot.yml:7: defaults.timeout".
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value_s = float(value)
    elif isinstance(value, str):
        try:
            value_s = seconds(value)
        except SettingError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    else:
        raise ConfigError(f"{where}: must be a duration such as 60s or 500ms, got {value!r}")
    if not math.isfinite(value_s) or value_s < 0:
        raise ConfigError(f"{where}: must be a finite duration of 0 or more, got {value!r}")
    return value_s


class Doc:
    """One file's nodes read into values, failing with the position of the node at fault."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._scalars = SafeConstructor()

    def fail(self, node: Node, key: str, message: str) -> NoReturn:
        raise ConfigError(f"{self.path}:{line(node)}: {key}: {message}")

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
        """What a node holds, for a message: ``an integer ('5')``, ``a mapping``."""
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

    def pairs(self, node: Node, key: str, allowed: Collection[str] | None) -> Pairs:
        """A mapping's entries by key; refuses duplicates, and unknown keys unless allowed."""
        where = key or "(top level)"
        if not isinstance(node, MappingNode):
            self.fail(node, where, f"must be a mapping, got {self.describe(node)}")
        self._refuse_duplicates(node, key)
        try:
            self._scalars.flatten_mapping(node)  # `<<: *anchor` merges; later keys win
        except yaml.MarkedYAMLError as exc:
            self.fail(node, where, f"bad merge key: {exc.problem}")
        out: Pairs = {}
        for knode, vnode in node.value:
            name = self.key_name(knode, where)
            if allowed is not None and name not in allowed:
                hint = suggest(name, allowed) or f"; known keys: {', '.join(allowed)}"
                self.fail(knode, join(key, name), f"unknown key{hint}")
            out[name] = (knode, vnode)
        return out

    def _refuse_duplicates(self, node: MappingNode, key: str) -> None:
        seen: dict[str, Node] = {}
        for knode, _ in node.value:
            if knode.tag == _MERGE_TAG:
                continue
            name = self.key_name(knode, key or "(top level)")
            if name in seen:
                self.fail(knode, join(key, name),
                          f"duplicate key (first given on line {line(seen[name])}); "
                          "YAML would silently keep the last one")
            seen[name] = knode

    def key_name(self, knode: Node, where: str) -> str:
        if not isinstance(knode, ScalarNode):
            self.fail(knode, where, "keys must be plain names")
        return str(knode.value)

    def items(self, node: Node, key: str) -> list[Node]:
        """A list's nodes."""
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

    def integer(self, node: Node, key: str, *, minimum: int, maximum: int | None = None) -> int:
        value = self.scalar(node)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(node, key, f"must be an integer, got {self.describe(node)}")
        self.decimal(node, key, value)
        if value < minimum:
            self.fail(node, key, f"must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            self.fail(node, key, f"must be at most {maximum}, got {value}")
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
        self.no_nul(node, key, value)
        return value

    def text(self, node: Node, key: str) -> str:
        """A scalar as it was written: numbers and words in argv and env are text to the program."""
        if not isinstance(node, ScalarNode) or self.scalar(node) is None:
            self.fail(node, key, f"must be a string, got {self.describe(node)}")
        self.no_nul(node, key, str(node.value))
        return str(node.value)

    def no_nul(self, node: Node, key: str, value: str) -> None:
        """Refuse NUL bytes: an argv, environment or path cannot hold one."""
        if "\0" in value:
            self.fail(node, key,
                      "contains a NUL byte (\\0), which no argument, variable or path can hold")

    def is_switch(self, node: Node) -> bool:
        """A YAML boolean, or on/off/yes/no/true/false quoted as strings."""
        value = self.scalar(node)
        return isinstance(value, bool) or (isinstance(value, str)
                                           and value.lower() in SWITCH_WORDS)

    def switch(self, node: Node, key: str) -> bool:
        if not self.is_switch(node):
            self.fail(node, key, f"must be on or off (true/false), got {self.describe(node)}")
        value = self.scalar(node)
        return value if isinstance(value, bool) else switch(value)

    def choice(self, node: Node, key: str, choices: tuple[_T, ...]) -> _T:
        value = self.scalar(node)
        for choice in choices:
            if value == choice:
                return choice
        hint = suggest(value, choices) if isinstance(value, str) else ""
        listed = " | ".join(choices)
        self.fail(node, key, f"must be one of {listed}, got {self.describe(node)}{hint}")

    def regex(self, node: Node, key: str) -> str:
        """A regular expression with exactly one group."""
        value = self.string(node, key)
        try:
            compiled = re.compile(value)
        except re.error as exc:
            self.fail(node, key, f"not a valid regular expression: {exc}")
        if compiled.groups != 1:
            self.fail(node, key, f"must have exactly one group (...) around the value to "
                                 f"capture, has {compiled.groups}; make other groups "
                                 "non-capturing with (?:...)")
        return value

    def duration(self, node: Node, key: str) -> float:
        """A duration in seconds (settings.seconds), written as 60s or as a number."""
        value = self.scalar(node)
        if not isinstance(node, ScalarNode) or value is None or isinstance(value, bool):
            self.fail(node, key,
                      f"must be a duration such as 60s or 500ms, got {self.describe(node)}")
        self.decimal(node, key, value)
        return parse_duration(value, where=f"{self.path}:{line(node)}: {key}")

    def checked(self, node: Node, key: str, read: Read, check: Callable[[Any], Any]) -> Any:
        """A value read from ``node`` and passed through a setting's check (settings.check_*)."""
        try:
            return check(read(self, node, key))
        except SettingError as exc:
            self.fail(node, key, str(exc))
