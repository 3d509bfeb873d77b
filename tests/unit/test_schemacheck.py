"""benchbot.schemacheck tells valid from invalid exactly as jsonschema does, for the schemas
it is used with: every valid document, and documents broken in every way hypothesis finds."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchbot import historydoc, schemacheck
from tests.unit.test_history_store import _record

SCHEMA = historydoc.schema()
CHECK = schemacheck.compile_schema(SCHEMA)
VALIDATOR = jsonschema.validators.validator_for(SCHEMA)(SCHEMA)
VALID = historydoc.to_json(_record())
ODD = [None, True, False, 0, -1, 1.5, 1e308, "", "x" * 500, "a" * 40, [], [1, 2], {},
       {"sha": "a" * 40}, "slower", "maybe", float(2**53)]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


PATHS = _paths(VALID)


def _agree(doc: Any) -> None:
    assert CHECK(doc) == VALIDATOR.is_valid(doc), doc


def test_the_valid_record_is_valid_to_both() -> None:
    assert CHECK(VALID) and VALIDATOR.is_valid(VALID)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PATHS[1:]), st.sampled_from(ODD), st.booleans())
def test_a_value_replaced_or_removed_anywhere_is_judged_alike(
        path: tuple[Any, ...], value: Any, remove: bool) -> None:
    doc = copy.deepcopy(VALID)
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if remove and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    _agree(doc)


@pytest.mark.parametrize("doc", [None, [], "x", {}, {"kind": "history-commit"}])
def test_what_is_not_a_record_is_judged_alike(doc: Any) -> None:
    _agree(doc)


def test_a_schema_keyword_it_does_not_know_is_refused() -> None:
    with pytest.raises(schemacheck.UnknownKeyword, match="uniqueItems"):
        schemacheck.compile_schema({"type": "array", "uniqueItems": True})
    with pytest.raises(schemacheck.UnknownKeyword, match="not a local definition"):
        schemacheck.compile_schema({"$ref": "https://example.invalid/x.json"})
