"""Schemas compiled once and reused (controlplane/api/structural/compiled.py): the identity
cache, the keywords found anywhere in a schema, and the compiled validator and defaulter
giving the interpreted results (the value-level cases live in test_api_structural.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from controlplane.api import structural as st
from controlplane.api.structural.compiled import IdentityCache, keywords
from controlplane.api.structural.defaulting import apply_defaults, compile_defaulter
from controlplane.api.structural.values import compile_schema, validate_values

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "n": {"type": "integer", "minimum": 1, "maximum": 5},
    "s": {"type": "string", "maxLength": 3, "pattern": "^a"},
    "mode": {"type": "string", "enum": ["x", "y"], "default": "x"},
    "items": {"type": "array", "items": {"type": "object", "properties": {"p": {"type": "integer", "default": 1}}}},
}}}}


def test_identity_cache_builds_once_per_object():
    built: list[Any] = []
    cache: IdentityCache[int] = IdentityCache(lambda s: built.append(s) or len(built))
    a, b = {"type": "object"}, {"type": "object"}
    assert cache(a) == 1 and cache(a) == 1
    assert cache(b) == 2          # an equal schema that is another object is compiled on its own
    assert built == [a, b]


def test_identity_cache_empties_when_full():
    cache: IdentityCache[int] = IdentityCache(lambda s: len(s), size=2)
    schemas = [{"k": i} for i in range(3)]
    assert [cache(s) for s in schemas] == [1, 1, 1]
    assert cache(schemas[2]) == 1   # kept after the clear


def test_compiled_validator_is_reused():
    assert compile_schema(SCHEMA) is compile_schema(SCHEMA)


@pytest.mark.parametrize("schema, present, absent", [
    (SCHEMA, {"default", "enum", "pattern", "maxLength"}, {"x-kubernetes-validations", "x-kubernetes-list-type=set"}),
    ({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
     {"x-kubernetes-list-type=set"}, {"x-kubernetes-list-type=map"}),
    ({"type": "object", "additionalProperties": {"x-kubernetes-validations": [{"rule": "true"}]}},
     {"x-kubernetes-validations"}, {"default"}),
    ({"allOf": [{"properties": {"a": {"x-kubernetes-embedded-resource": True}}}]},
     {"x-kubernetes-embedded-resource"}, set()),
], ids=["nested properties", "list type value", "additionalProperties", "inside allOf"])
def test_keywords_anywhere_in_a_schema(schema, present, absent):
    found = keywords(schema)
    assert present <= found and not (absent & found)


@pytest.mark.parametrize("obj, want", [
    ({"spec": {"n": 3, "s": "ab", "mode": "y"}}, []),
    ({"spec": {"n": 0, "s": "bcde", "mode": "z", "items": [{"p": "q"}]}},
     ["spec.n", "spec.s", "spec.s", "spec.mode", "spec.items[0].p"]),
    ({"spec": {"n": None}}, ["spec.n"]),
], ids=["valid", "every keyword failing", "null"])
def test_compiled_validator_fields(obj, want):
    assert [c["field"] for c in validate_values(SCHEMA, obj)] == want


def test_compiled_defaulter_matches_the_interpreted_one():
    obj = {"spec": {"items": [{}, {"p": 7}, None]}}
    interpreted = copy.deepcopy(obj)
    apply_defaults(SCHEMA, interpreted)
    st.apply_defaults(SCHEMA, obj)
    assert obj == interpreted == {"spec": {"mode": "x", "items": [{"p": 1}, {"p": 7}, None]}}


def test_schema_without_defaults_compiles_to_nothing():
    assert compile_defaulter({"type": "object", "properties": {"a": {"type": "string"}}}) is None
