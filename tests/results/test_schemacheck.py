"""benchbot.results.schemacheck tells valid from invalid exactly as jsonschema does, for the schemas
it is used with: every valid document, and documents broken in every way hypothesis finds."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchbot.history import historydoc
from benchbot.results import resultsdir, schemacheck
from tests.golden.scenarios import SCENARIOS
from tests.history.test_historydoc import _record

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


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _mutated(doc: Any, path: tuple[Any, ...], value: Any, remove: bool) -> Any:
    """A copy of ``doc`` with the item at ``path`` removed (from an object) or replaced."""
    doc = copy.deepcopy(doc)
    parent = _at(doc, path[:-1])
    if remove and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


def _agree(doc: Any) -> None:
    assert CHECK(doc) == VALIDATOR.is_valid(doc), doc


def test_the_valid_record_is_valid_to_both() -> None:
    assert CHECK(VALID) and VALIDATOR.is_valid(VALID)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PATHS[1:]), st.sampled_from(ODD), st.booleans())
def test_a_value_replaced_or_removed_anywhere_is_judged_alike(
        path: tuple[Any, ...], value: Any, remove: bool) -> None:
    _agree(_mutated(VALID, path, value, remove))


@pytest.mark.parametrize("doc", [None, [], "x", {}, {"kind": "history-commit"}])
def test_what_is_not_a_record_is_judged_alike(doc: Any) -> None:
    _agree(doc)


def test_a_schema_keyword_it_does_not_know_is_refused() -> None:
    with pytest.raises(schemacheck.UnknownKeyword, match="uniqueItems"):
        schemacheck.compile_schema({"type": "array", "uniqueItems": True})
    with pytest.raises(schemacheck.UnknownKeyword, match="not a local definition"):
        schemacheck.compile_schema({"$ref": "https://example.invalid/x.json"})


# --- the results schema (results.validation_error asks schemacheck first) -----------------

RESULTS_SCHEMA = resultsdir.schema()
RESULTS_CHECK = schemacheck.compile_schema(RESULTS_SCHEMA)
RESULTS_VALIDATOR = jsonschema.validators.validator_for(RESULTS_SCHEMA)(RESULTS_SCHEMA)
RESULTS_DOCS = {name: resultsdir.to_json(make()) for name, make in SCENARIOS.items()}


def _trimmed(value: Any) -> Any:
    """``value`` with every list of plain values (the runs) cut to its first three: the same
    structure, checked by jsonschema in a tenth of the time."""
    if isinstance(value, dict):
        return {k: _trimmed(v) for k, v in value.items()}
    if isinstance(value, list):
        plain = all(not isinstance(v, (dict, list)) for v in value)
        return [_trimmed(v) for v in (value[:3] if plain else value)]
    return value


MIXED = _trimmed(RESULTS_DOCS["mixed"])
MIXED_PATHS = _paths(MIXED)


@pytest.mark.parametrize("name", sorted(RESULTS_DOCS))
def test_every_golden_results_document_is_valid_to_both(name: str) -> None:
    doc = RESULTS_DOCS[name]
    assert RESULTS_CHECK(doc) and RESULTS_VALIDATOR.is_valid(doc)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(MIXED_PATHS[1:]), st.sampled_from([*ODD, {"extra": 1}, -0.5, 2**40]),
       st.booleans())
def test_a_results_value_replaced_or_removed_anywhere_is_judged_alike(
        path: tuple[Any, ...], value: Any, remove: bool) -> None:
    doc = _mutated(MIXED, path, value, remove)
    assert RESULTS_CHECK(doc) == RESULTS_VALIDATOR.is_valid(doc), path


def test_a_key_added_to_any_object_is_judged_alike() -> None:
    """Every object of the document, given a key no schema names: additionalProperties
    refuses it in some objects, allows it in others, and both checkers must say which."""
    objects = [p for p in MIXED_PATHS if isinstance(_at(MIXED, p), dict)]
    verdicts = set()
    for path in objects:
        doc = copy.deepcopy(MIXED)
        _at(doc, path)["zz_unknown"] = {"x": 1}
        valid = RESULTS_VALIDATOR.is_valid(doc)
        assert RESULTS_CHECK(doc) == valid, path
        verdicts.add(valid)
    assert verdicts == {True, False}  # both kinds of object are in the document


def test_additional_properties_false_a_schema_or_true() -> None:
    schema = {"properties": {"a": {"type": "integer"}}, "additionalProperties": False}
    check = schemacheck.compile_schema(schema)
    assert check({"a": 1}) and not check({"a": 1, "b": 2})
    assert check([1])  # only objects are concerned
    judge = jsonschema.validators.validator_for(schema)(schema)
    assert [check(d) for d in ({"a": 1}, {"a": 1, "b": 2}, [1])] == \
        [judge.is_valid(d) for d in ({"a": 1}, {"a": 1, "b": 2}, [1])]
    typed = schemacheck.compile_schema({"type": "object", "additionalProperties": {"type": "string"}})
    assert typed({"x": "y"}) and not typed({"x": 1}) and typed({})
    assert schemacheck.compile_schema({"additionalProperties": True})({"any": object()})
