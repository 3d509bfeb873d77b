"""Whether a JSON document is valid against a JSON Schema, fast, for the keywords benchbot's
own schemas use (the history store: 500 files of 50 workloads took jsonschema 14 s to
check, this a fraction of a second; a results file of six workloads, 64 ms against 13 ms).

It answers yes or no only; a document it finds invalid is explained by jsonschema, which
stays the authority (``tests/results/test_schemacheck.py`` checks that both agree on every
valid file and on thousands of broken ones). A schema with a keyword it does not know is
refused when compiled, so a schema cannot outgrow it unnoticed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]
IGNORED = {"$schema", "$id", "title", "description", "$defs"}
TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (type(v) is int) or (type(v) is float and v.is_integer()),
    "number": lambda v: type(v) in (int, float),
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
}


class UnknownKeyword(ValueError):
    """The schema uses a keyword this checker does not implement."""


def compile_schema(schema: Mapping[str, Any]) -> Check:
    """A function telling whether a document is valid against ``schema``."""
    defs = schema.get("$defs", {})
    cache: dict[str, Check] = {}

    def ref(name: str) -> Check:
        if name not in cache:
            cache[name] = lambda v: resolved[name](v)
            resolved[name] = _compile(defs[name], ref)
        return cache[name]

    resolved: dict[str, Check] = {}
    return _compile(schema, ref)


def _compile(s: Mapping[str, Any], ref: Callable[[str], Check]) -> Check:
    checks: list[Check] = []
    for key, value in s.items():
        if key in IGNORED:
            continue
        make = _KEYWORDS.get(key)
        if make is None:
            raise UnknownKeyword(f"schemacheck: keyword {key!r} is not implemented")
        checks.append(make(value, s, ref))
    return lambda v: all(c(v) for c in checks)


def _type(value: Any, s: Mapping[str, Any], ref: Callable[[str], Check]) -> Check:
    kinds = [TYPES[t] for t in ([value] if isinstance(value, str) else value)]
    return lambda v: any(k(v) for k in kinds)


def _properties(value: Mapping[str, Any], s: Mapping[str, Any], ref: Callable[[str], Check]) -> Check:
    props = {k: _compile(sub, ref) for k, sub in value.items()}
    return lambda v: not isinstance(v, dict) or all(
        c(v[k]) for k, c in props.items() if k in v)


def _additional(value: bool | Mapping[str, Any], s: Mapping[str, Any],
                ref: Callable[[str], Check]) -> Check:
    """Keys that ``properties`` does not name: refused (false), or each checked by a schema."""
    named = frozenset(s.get("properties", {}))
    if value is True:
        return lambda v: True
    if value is False:
        return lambda v: not isinstance(v, dict) or all(k in named for k in v)
    other = _compile(value, ref)
    return lambda v: not isinstance(v, dict) or all(
        other(x) for k, x in v.items() if k not in named)


def _required(value: list[str], s: Mapping[str, Any], ref: Callable[[str], Check]) -> Check:
    return lambda v: not isinstance(v, dict) or all(k in v for k in value)


def _items(value: Mapping[str, Any], s: Mapping[str, Any], ref: Callable[[str], Check]) -> Check:
    item = _compile(value, ref)
    skip = len(s.get("prefixItems", ()))
    return lambda v: not isinstance(v, list) or all(item(x) for x in v[skip:])


def _prefix(value: list[Any], s: Mapping[str, Any], ref: Callable[[str], Check]) -> Check:
    firsts = [_compile(sub, ref) for sub in value]
    return lambda v: not isinstance(v, list) or all(c(x) for c, x in zip(firsts, v, strict=False))


def _enum(value: list[Any], s: Mapping[str, Any], ref: Callable[[str], Check]) -> Check:
    return lambda v: any(_same(v, e) for e in value)


def _const(value: Any, s: Mapping[str, Any], ref: Callable[[str], Check]) -> Check:
    return lambda v: _same(v, value)


def _same(a: Any, b: Any) -> bool:
    """JSON Schema's equality: 1 and 1.0 are equal, true and 1 are not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def _pattern(value: str, s: Mapping[str, Any], ref: Callable[[str], Check]) -> Check:
    regex = re.compile(value)
    return lambda v: not isinstance(v, str) or regex.search(v) is not None


def _bound(test: Callable[[float, float], bool]) -> Callable[..., Check]:
    def make(value: float, s: Mapping[str, Any], ref: Callable[[str], Check]) -> Check:
        return lambda v: not TYPES["number"](v) or test(v, value)
    return make


def _length(test: Callable[[int, int], bool], kind: type[str] | type[list[Any]]) -> Callable[..., Check]:
    def make(value: int, s: Mapping[str, Any], ref: Callable[[str], Check]) -> Check:
        return lambda v: not isinstance(v, kind) or test(len(v), value)
    return make


def _one_of(value: list[Any], s: Mapping[str, Any], ref: Callable[[str], Check]) -> Check:
    options = [_compile(sub, ref) for sub in value]
    return lambda v: sum(1 for c in options if c(v)) == 1


def _ref(value: str, s: Mapping[str, Any], ref: Callable[[str], Check]) -> Check:
    prefix = "#/$defs/"
    if not value.startswith(prefix):
        raise UnknownKeyword(f"schemacheck: $ref {value!r} is not a local definition")
    return ref(value[len(prefix):])


_KEYWORDS: dict[str, Callable[..., Check]] = {
    "type": _type, "properties": _properties, "additionalProperties": _additional,
    "required": _required, "items": _items,
    "prefixItems": _prefix, "enum": _enum, "const": _const, "pattern": _pattern,
    "minimum": _bound(lambda v, b: v >= b), "maximum": _bound(lambda v, b: v <= b),
    "exclusiveMinimum": _bound(lambda v, b: v > b),
    "exclusiveMaximum": _bound(lambda v, b: v < b),
    "minLength": _length(lambda n, b: n >= b, str), "maxLength": _length(lambda n, b: n <= b, str),
    "minItems": _length(lambda n, b: n >= b, list), "maxItems": _length(lambda n, b: n <= b, list),
    "oneOf": _one_of, "$ref": _ref,
}
