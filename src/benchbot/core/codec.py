"""Frozen dataclasses to JSON values and back: the JSON boundary of the results file and of
the GitHub job hand-over. The only module where values are untyped.

``encode`` writes every field (``None`` as ``null``, tuples as lists, a float that is not
finite as ``null``: JSON has no NaN). ``decode`` builds a dataclass from its type hints:
nested dataclasses, ``X | None``, ``tuple[X, ...]``, ``tuple[X, Y]``, ``dict[str, X]``,
``Literal`` and the scalars; a key the data lacks takes the field's default (a file from
an older benchbot), and one without a default is a ``DecodeError`` naming its path.
Scalars are checked against their hints too (an ``int`` field gets an integer, a
``Literal`` one of its values), so that data that has not been checked against a schema
(the job hand-over) still cannot smuggle in a value of the wrong type.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

T = TypeVar("T")
JSON = Any  # a value json.loads returns


class DecodeError(ValueError):
    """The data lacks a field its dataclass needs; ``path`` says where."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


def wrapped(key: str, **kwargs: Any) -> Any:
    """A dataclass field stored in JSON inside an object of one key: ``{key: value}``
    (``null`` stays ``null``). The results file stores a phase's verdict as ``{"verdict": …}``."""
    return dataclasses.field(metadata={WRAP: key}, **kwargs)


WRAP = "benchbot.core.codec.wrap"
OMIT = "benchbot.core.codec.omit_none"


def omitted_when_none(**kwargs: Any) -> Any:
    """A dataclass field left out of the JSON when it is None (an addition to a format
    whose older readers do not know it, or knew it only as an optional key)."""
    return dataclasses.field(metadata={OMIT: True}, **kwargs)


def encode(value: object) -> JSON:
    """A dataclass (or a value inside one) as JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in dataclasses.fields(value):
            item = encode(getattr(value, f.name))
            if item is None and f.metadata.get(OMIT):
                continue
            key = f.metadata.get(WRAP)
            out[f.name] = {key: item} if key and item is not None else item
        return out
    if isinstance(value, (tuple, list)):
        if all(type(v) is int or (type(v) is float and math.isfinite(v)) for v in value):
            return list(value)  # the runs: millions of numbers, each its own JSON value
        return [encode(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def decode(cls: type[T], data: JSON, path: str = "") -> T:
    """The dataclass ``cls`` made from ``data`` (see the module's docstring)."""
    if not isinstance(data, Mapping):
        raise DecodeError(path or "(top level)", f"must be an object, got {type(data).__name__}")
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        where = f"{path}.{f.name}" if path else f.name
        if f.name in data:
            item, key = data[f.name], f.metadata.get(WRAP)
            if key and item is not None:
                _expect(item, dict, "an object", where)
                if key not in item:
                    raise DecodeError(f"{where}.{key}", "is missing")
                item, where = item[key], f"{where}.{key}"
            kwargs[f.name] = _value(_hints(typing.cast(Any, cls))[f.name], item, where)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise DecodeError(where, "is missing")
    return cls(**kwargs)


@functools.cache
def _hints(cls: Any) -> dict[str, Any]:
    return get_type_hints(cls)


def _value(hint: Any, value: JSON, path: str) -> Any:
    origin = get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in get_args(hint) if a is not type(None)]
        if value is None:
            return None
        return _value(options[0], value, path) if len(options) == 1 else value
    if origin is typing.Literal:
        if value not in get_args(hint):
            raise DecodeError(path, f"must be one of {', '.join(map(repr, get_args(hint)))}")
        return value
    if hint is Any:
        return value
    if origin is tuple:
        _expect(value, list, "a list", path)
        args = get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            fast = _numbers(args[0], value)
            if fast is not None:
                return fast
            return tuple(_value(args[0], v, f"{path}[{i}]") for i, v in enumerate(value))
        return tuple(_value(a, v, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, value, strict=False)))
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        _expect(value, dict, "an object", path)
        item = get_args(hint)[1] if get_args(hint) else Any
        return {str(k): _value(item, v, f"{path}.{k}") for k, v in value.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return decode(hint, value, path)
    if hint is float:
        _expect(value, (int, float), "a number", path)
        return float(value)
    if hint is int:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        _expect(value, int, "an integer", path)
    elif hint is bool:
        _expect(value, bool, "true or false", path)
    elif hint is str:
        _expect(value, str, "a string", path)
    return value


def _numbers(hint: Any, value: list[Any]) -> tuple[Any, ...] | None:
    """A list of plain numbers as ``tuple[int, ...]`` or ``tuple[float, ...]`` in one step
    (a results file holds millions of them: one ``_value`` each took seconds); None where
    some item is not one, for ``_value`` to say which."""
    if hint is int and all(type(v) is int for v in value):
        return tuple(value)
    if hint is float and all(type(v) is int or type(v) is float for v in value):
        return tuple(map(float, value))
    return None


def _expect(value: JSON, kind: type | tuple[type, ...], words: str, path: str) -> None:
    if isinstance(value, bool) and kind is not bool:
        raise DecodeError(path, f"must be {words}, got a boolean")
    if not isinstance(value, kind):
        raise DecodeError(path, f"must be {words}, got {type(value).__name__}")
