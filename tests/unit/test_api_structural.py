"""controlplane.api.structural: CRD schemas checked, custom resources validated, pruned and
defaulted as the apiextensions-apiserver does; messages are Kubernetes' exact strings."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from controlplane.api import structural as st

JSON = dict[str, Any]


def msgs(errs: list[JSON]) -> list[str]:
    return [f"{c['field']}: {c['message']}" if c["field"] else c["message"] for c in errs]


def obj_schema(**props: Any) -> JSON:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}


# --------------------------------------------------------------------------- value validation

VALUE_CASES = [
    # (id, spec property schema, value, expected messages)
    ("integer-ok", {"type": "integer"}, 3, []),
    ("integer-string", {"type": "integer"}, "string",
     ['spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"']),
    ("integer-float-integral-ok", {"type": "integer"}, 2.0, []),
    ("integer-float", {"type": "integer"}, 2.5,
     ['spec.x: Invalid value: "number": spec.x in body must be of type integer: "number"']),
    ("number-int-ok", {"type": "number"}, 2, []),
    ("string-number", {"type": "string"}, 1,
     ['spec.x: Invalid value: "integer": spec.x in body must be of type string: "integer"']),
    ("boolean-string", {"type": "boolean"}, "true",
     ['spec.x: Invalid value: "string": spec.x in body must be of type boolean: "string"']),
    ("object-array", {"type": "object"}, [],
     ['spec.x: Invalid value: "array": spec.x in body must be of type object: "array"']),
    ("array-object", {"type": "array", "items": {"type": "string"}}, {},
     ['spec.x: Invalid value: "object": spec.x in body must be of type array: "object"']),
    ("null-not-nullable", {"type": "string"}, None,
     ['spec.x: Invalid value: "null": spec.x in body must be of type string: "null"']),
    ("null-nullable-ok", {"type": "string", "nullable": True}, None, []),
    ("enum-ok", {"type": "string", "enum": ["a", "b"]}, "a", []),
    ("enum-miss", {"type": "string", "enum": ["a", "b"]}, "x",
     ['spec.x: Unsupported value: "x": supported values: "a", "b"']),
    ("enum-int-miss", {"type": "integer", "enum": [1, 2]}, 3,
     ['spec.x: Unsupported value: 3: supported values: "1", "2"']),
    ("pattern-ok", {"type": "string", "pattern": "^a"}, "abc", []),
    ("pattern-miss", {"type": "string", "pattern": "^a"}, "bc",
     ["spec.x: Invalid value: \"bc\": spec.x in body should match '^a'"]),
    ("minimum", {"type": "integer", "minimum": 1}, 0,
     ["spec.x: Invalid value: 0: spec.x in body should be greater than or equal to 1"]),
    ("minimum-exclusive", {"type": "integer", "minimum": 1, "exclusiveMinimum": True}, 1,
     ["spec.x: Invalid value: 1: spec.x in body should be greater than 1"]),
    ("maximum", {"type": "number", "maximum": 1.5}, 2,
     ["spec.x: Invalid value: 2: spec.x in body should be less than or equal to 1.5"]),
    ("maximum-exclusive", {"type": "integer", "maximum": 10, "exclusiveMaximum": True}, 10,
     ["spec.x: Invalid value: 10: spec.x in body should be less than 10"]),
    ("maximum-large", {"type": "integer", "maximum": 1000000}, 1000001,
     ["spec.x: Invalid value: 1000001: spec.x in body should be less than or equal to 1e+06"]),
    ("multipleOf-ok", {"type": "integer", "multipleOf": 5}, 10, []),
    ("multipleOf", {"type": "integer", "multipleOf": 5}, 7,
     ["spec.x: Invalid value: 7: spec.x in body should be a multiple of 5"]),
    ("multipleOf-fraction-ok", {"type": "number", "multipleOf": 0.5}, 1.5, []),
    ("minLength", {"type": "string", "minLength": 3}, "ab",
     ['spec.x: Invalid value: "ab": spec.x in body should be at least 3 chars long']),
    ("maxLength", {"type": "string", "maxLength": 3}, "abcd", ["spec.x: Too long: may not be more than 3 bytes"]),
    ("maxLength-one", {"type": "string", "maxLength": 1}, "ab", ["spec.x: Too long: may not be more than 1 byte"]),
    ("maxLength-runes-ok", {"type": "string", "maxLength": 2}, "éé", []),
    ("minItems", {"type": "array", "items": {"type": "string"}, "minItems": 2}, ["a"],
     ["spec.x: Invalid value: 1: spec.x in body should have at least 2 items"]),
    ("maxItems", {"type": "array", "items": {"type": "string"}, "maxItems": 1}, ["a", "b"],
     ["spec.x: Too many: 2: must have at most 1 items"]),
    ("uniqueItems", {"type": "array", "items": {"type": "string"}, "uniqueItems": True}, ["a", "a"],
     ['spec.x: Invalid value: "": spec.x in body shouldn\'t contain duplicates']),
    ("minProperties", {"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 2},
     {"a": "b"}, ["spec.x: Invalid value: 2: spec.x in body should have at least 2 properties"]),
    ("maxProperties", {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 1},
     {"a": "b", "c": "d"}, ["spec.x: Too many: 2: must have at most 1 items"]),
    ("additionalProperties-schema", {"type": "object", "additionalProperties": {"type": "integer"}},
     {"a": "b"}, ['spec.x.a: Invalid value: "string": spec.x.a in body must be of type integer: "string"']),
    ("additionalProperties-false", {"type": "object", "additionalProperties": False}, {"a": 1},
     ['spec.x: Invalid value: "a": spec.x.a in body is a forbidden property']),
    ("items", {"type": "array", "items": {"type": "integer"}}, [1, "a"],
     ['spec.x[1]: Invalid value: "string": spec.x[1] in body must be of type integer: "string"']),
    ("required-nested", {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
     {}, ["spec.x.name: Required value"]),
    ("int-or-string-int-ok", {"x-kubernetes-int-or-string": True}, 80, []),
    ("int-or-string-string-ok", {"x-kubernetes-int-or-string": True}, "http", []),
    ("int-or-string-bool", {"x-kubernetes-int-or-string": True}, True,
     ['spec.x: Invalid value: "boolean": spec.x in body must be of type integer,string: "boolean"']),
    ("format-date-time-ok", {"type": "string", "format": "date-time"}, "2024-01-02T03:04:05Z", []),
    ("format-date-time", {"type": "string", "format": "date-time"}, "yesterday",
     ['spec.x: Invalid value: "yesterday": spec.x in body must be of type date-time: "yesterday"']),
    ("format-date-ok", {"type": "string", "format": "date"}, "2024-02-29", []),
    ("format-date", {"type": "string", "format": "date"}, "2023-02-29",
     ['spec.x: Invalid value: "2023-02-29": spec.x in body must be of type date: "2023-02-29"']),
    ("format-uuid", {"type": "string", "format": "uuid"}, "nope",
     ['spec.x: Invalid value: "nope": spec.x in body must be of type uuid: "nope"']),
    ("format-uuid-ok", {"type": "string", "format": "uuid"}, "123e4567-e89b-12d3-a456-426614174000", []),
    ("format-byte", {"type": "string", "format": "byte"}, "!!",
     ['spec.x: Invalid value: "!!": spec.x in body must be of type byte: "!!"']),
    ("format-byte-ok", {"type": "string", "format": "byte"}, "aGVsbG8=", []),
    ("format-int32-unchecked", {"type": "integer", "format": "int32"}, 1 << 40, []),
    ("format-ipv4", {"type": "string", "format": "ipv4"}, "1.2.3",
     ['spec.x: Invalid value: "1.2.3": spec.x in body must be of type ipv4: "1.2.3"']),
    ("format-unknown-unchecked", {"type": "string", "format": "whatever"}, "x", []),
    ("pattern-invalid", {"type": "string", "pattern": "+"}, "foo",
     ["spec.x: Invalid value: \"\": spec.x in body should match '+, but pattern is invalid: error parsing regexp: "
      "missing argument to repetition operator: `+`'"]),
    ("pattern-go-semantics-dot-matches-rune", {"type": "string", "pattern": "^a.c$"}, "aéc", []),
    ("anyOf-ok", {"type": "integer", "anyOf": [{"minimum": 10}, {"maximum": 0}]}, 11, []),
    ("anyOf-miss", {"type": "integer", "anyOf": [{"minimum": 10}, {"maximum": 0}]}, 5,
     ['Invalid value: "": "spec.x" must validate at least one schema (anyOf)',
      "spec.x: Invalid value: 5: spec.x in body should be greater than or equal to 10"]),
    ("oneOf-two", {"type": "integer", "oneOf": [{"minimum": 1}, {"minimum": 2}]}, 5,
     ['Invalid value: "": "spec.x" must validate one and only one schema (oneOf). Found 2 valid alternatives']),
    ("allOf-miss", {"type": "integer", "allOf": [{"minimum": 1}, {"maximum": 3}]}, 5,
     ["spec.x: Invalid value: 5: spec.x in body should be less than or equal to 3",
      'Invalid value: "": "spec.x" must validate all the schemas (allOf)']),
    ("not-miss", {"type": "string", "not": {"enum": ["x"]}}, "x",
     ['Invalid value: "": "spec.x" must not validate the schema (not)']),
]


@pytest.mark.parametrize("prop,value,expected", [c[1:] for c in VALUE_CASES], ids=[c[0] for c in VALUE_CASES])
def test_value_validation(prop: JSON, value: Any, expected: list[str]) -> None:
    assert msgs(st.validate(obj_schema(x=prop), {"spec": {"x": value}})) == expected


def test_required_at_root_and_path_prefix() -> None:
    s = {"type": "object", "required": ["spec"], "properties": {"spec": {"type": "object"}}}
    assert msgs(st.validate(s, {})) == ["spec: Required value"]
    d = st.validate({"type": "integer"}, "s", "spec.versions[0].schema.openAPIV3Schema.default")
    assert msgs(d) == ['spec.versions[0].schema.openAPIV3Schema.default: Invalid value: "string":  in body must be '
                       'of type integer: "string"']


# --------------------------------------------------------------------------- embedded resources

EMBEDDED = obj_schema(tpl={"type": "object", "x-kubernetes-embedded-resource": True,
                           "x-kubernetes-preserve-unknown-fields": True})

EMBEDDED_CASES = [
    ("ok", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}, []),
    ("missing-apiVersion-kind", {}, ["spec.tpl.apiVersion: Required value: must not be empty",
                                     "spec.tpl.kind: Required value: must not be empty"]),
    ("bad-kind", {"apiVersion": "v1", "kind": "Pod_x"},
     ['spec.tpl.kind: Invalid value: "Pod_x": may have mixed case, but should otherwise match: a DNS-1035 label '
      "must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end "
      "with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
      "'[a-z]([-a-z0-9]*[a-z0-9])?')"]),
    ("bad-apiVersion", {"apiVersion": "a/b/c", "kind": "X"},
     ['spec.tpl.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c']),
    ("bad-name", {"apiVersion": "v1", "kind": "X", "metadata": {"name": "a/b"}},
     ["spec.tpl.metadata.name: Invalid value: \"a/b\": may not contain '/'"]),
]


@pytest.mark.parametrize("tpl,expected", [c[1:] for c in EMBEDDED_CASES], ids=[c[0] for c in EMBEDDED_CASES])
def test_embedded_resource(tpl: JSON, expected: list[str]) -> None:
    assert msgs(st.validate(EMBEDDED, {"spec": {"tpl": tpl}})) == expected


# --------------------------------------------------------------------------- pruning

PRUNE_CASES = [
    ("unknown-dropped", obj_schema(a={"type": "string"}),
     {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n"}, "spec": {"a": "1", "b": 2}, "junk": 1},
     {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n"}, "spec": {"a": "1"}}, ["junk", "spec.b"]),
    ("preserve-at-spec", {"type": "object", "properties": {"spec": {
        "type": "object", "x-kubernetes-preserve-unknown-fields": True,
        "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}}}},
     {"spec": {"free": {"x": 1}, "known": {"a": "1", "b": 2}}},
     {"spec": {"free": {"x": 1}, "known": {"a": "1"}}}, ["spec.known.b"]),
    ("preserve-at-root", {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
     {"anything": {"goes": 1}}, {"anything": {"goes": 1}}, []),
    ("array-items", obj_schema(xs={"type": "array", "items": {"type": "object", "properties": {
        "a": {"type": "string"}}}}),
     {"spec": {"xs": [{"a": "1", "b": 1}, {"c": 1}]}}, {"spec": {"xs": [{"a": "1"}, {}]}},
     ["spec.xs[0].b", "spec.xs[1].c"]),
    ("additionalProperties-schema", obj_schema(m={"type": "object", "additionalProperties": {
        "type": "object", "properties": {"a": {"type": "string"}}}}),
     {"spec": {"m": {"k": {"a": "1", "z": 1}}}}, {"spec": {"m": {"k": {"a": "1"}}}}, ["spec.m.k.z"]),
    ("embedded-keeps-meta", obj_schema(t={"type": "object", "x-kubernetes-embedded-resource": True,
                                          "properties": {"spec": {"type": "object"}}}),
     {"spec": {"t": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {}, "junk": 1}}},
     {"spec": {"t": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {}}}}, ["spec.t.junk"]),
    ("non-embedded-drops-meta", obj_schema(t={"type": "object", "properties": {"a": {"type": "string"}}}),
     {"spec": {"t": {"kind": "Pod", "a": "1"}}}, {"spec": {"t": {"a": "1"}}}, ["spec.t.kind"]),
    ("null-dropped", obj_schema(a={"type": "string"}, b={"type": "string", "nullable": True}),
     {"spec": {"a": None, "b": None}}, {"spec": {"b": None}}, []),
]


@pytest.mark.parametrize("schema,obj,expected,paths", [c[1:] for c in PRUNE_CASES], ids=[c[0] for c in PRUNE_CASES])
def test_prune(schema: JSON, obj: JSON, expected: JSON, paths: list[str]) -> None:
    assert st.prune(schema, obj) == paths
    assert obj == expected


# --------------------------------------------------------------------------- defaulting

DEFAULT_CASES = [
    ("scalar", obj_schema(r={"type": "integer", "default": 1}), {"spec": {}}, {"spec": {"r": 1}}),
    ("not-overwritten", obj_schema(r={"type": "integer", "default": 1}), {"spec": {"r": 5}}, {"spec": {"r": 5}}),
    ("null-replaced", obj_schema(r={"type": "integer", "default": 1}), {"spec": {"r": None}}, {"spec": {"r": 1}}),
    ("nullable-null-kept", obj_schema(r={"type": "integer", "nullable": True, "default": 1}),
     {"spec": {"r": None}}, {"spec": {"r": None}}),
    ("nested-in-defaulted-object", {"type": "object", "properties": {"spec": {
        "type": "object", "default": {}, "properties": {"a": {"type": "string", "default": "x"}}}}},
     {}, {"spec": {"a": "x"}}),
    ("array-items", obj_schema(xs={"type": "array", "items": {"type": "object", "properties": {
        "p": {"type": "integer", "default": 80}}}}),
     {"spec": {"xs": [{}, {"p": 1}]}}, {"spec": {"xs": [{"p": 80}, {"p": 1}]}}),
    ("additionalProperties", obj_schema(m={"type": "object", "additionalProperties": {
        "type": "object", "properties": {"p": {"type": "string", "default": "d"}}}}),
     {"spec": {"m": {"a": {}}}}, {"spec": {"m": {"a": {"p": "d"}}}}),
]


@pytest.mark.parametrize("schema,obj,expected", [c[1:] for c in DEFAULT_CASES], ids=[c[0] for c in DEFAULT_CASES])
def test_defaults(schema: JSON, obj: JSON, expected: JSON) -> None:
    st.apply_defaults(schema, obj)
    assert obj == expected


def test_default_is_deep_copied() -> None:
    s = obj_schema(o={"type": "object", "default": {"a": [1]}, "properties": {"a": {"type": "array",
                                                                                     "items": {"type": "integer"}}}})
    a: JSON = {"spec": {}}
    st.apply_defaults(s, a)
    a["spec"]["o"]["a"].append(2)
    b: JSON = {"spec": {}}
    st.apply_defaults(s, b)
    assert b == {"spec": {"o": {"a": [1]}}}


# --------------------------------------------------------------------------- list types

LIST_CASES = [
    ("set-ok", {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}, ["a", "b"], []),
    ("set-dup", {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
     ["a", "b", "a", "a"], ['spec.x[2]: Duplicate value: "a"']),
    ("set-dup-int", {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "integer"}},
     [1, 1], ["spec.x[1]: Duplicate value: 1"]),
    ("map-dup", {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                 "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
     [{"name": "a"}, {"name": "a"}], ['spec.x[1]: Duplicate value: map[string]interface {}{"name":"a"}']),
    ("map-two-keys", {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k", "p"],
                      "items": {"type": "object", "properties": {"k": {"type": "string"}, "p": {"type": "integer"}}}},
     [{"k": "a", "p": 1}, {"k": "a", "p": 2}, {"k": "a", "p": 1}],
     ['spec.x[2]: Duplicate value: map[string]interface {}{"k":"a", "p":1}']),
    ("map-default-key", {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["p"],
                         "items": {"type": "object", "properties": {"p": {"type": "string", "default": "TCP"}}}},
     [{}, {"p": "TCP"}], ['spec.x[1]: Duplicate value: map[string]interface {}{"p":"TCP"}']),
    ("map-not-object", {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
     ["a"], ['spec.x[0]: Invalid value: "a": must be an object for an array of list-type map']),
    ("atomic-dups-ok", {"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "string"}},
     ["a", "a"], []),
]


@pytest.mark.parametrize("prop,value,expected", [c[1:] for c in LIST_CASES], ids=[c[0] for c in LIST_CASES])
def test_list_types(prop: JSON, value: Any, expected: list[str]) -> None:
    assert msgs(st.validate_list_types(obj_schema(x=prop), {"spec": {"x": value}})) == expected


# --------------------------------------------------------------------------- CEL

CEL_SCHEMA = {"type": "object", "properties": {"spec": {
    "type": "object",
    "properties": {"replicas": {"type": "integer"}, "min": {"type": "integer"}, "name": {"type": "string"},
                   "my-field": {"type": "string"}},
    "x-kubernetes-validations": [
        {"rule": "self.replicas >= self.min"},
        {"rule": "!has(self.name) || self.name.startsWith('a')", "message": "name must start with a"},
        {"rule": "!has(self.name) || size(self.name) < 5", "messageExpression": "'name too long: ' + self.name",
         "fieldPath": ".name", "reason": "FieldValueForbidden"},
        {"rule": "!has(self.my__dash__field) || self.my__dash__field != 'x'"},
        {"rule": "!has(oldSelf.replicas) || self.replicas >= oldSelf.replicas", "message": "may not shrink"},
    ]}}}

CEL_CASES = [
    ("pass", {"replicas": 2, "min": 1, "name": "ab"}, None, []),
    ("rule-default-message", {"replicas": 0, "min": 1}, None,
     ["spec: Invalid value: failed rule: self.replicas >= self.min"]),
    ("message", {"replicas": 1, "min": 1, "name": "b"}, None, ["spec: Invalid value: name must start with a"]),
    ("messageExpression-fieldPath-reason", {"replicas": 1, "min": 1, "name": "abcdef"}, None,
     ["spec.name: Forbidden: name too long: abcdef"]),
    ("escaped-property", {"replicas": 1, "min": 1, "my-field": "x"}, None,
     ["spec: Invalid value: failed rule: !has(self.my__dash__field) || self.my__dash__field != 'x'"]),
    ("transition-skipped-on-create", {"replicas": 1, "min": 0}, None, []),
    ("transition-fails", {"replicas": 1, "min": 0}, {"spec": {"replicas": 3, "min": 0}},
     ["spec: Invalid value: may not shrink"]),
    ("missing-key-error", {"min": 1}, None,
     ['spec: Invalid value: "object": no such key: replicas evaluating rule: self.replicas >= self.min']),
]


@pytest.mark.parametrize("spec,old,expected", [c[1:] for c in CEL_CASES], ids=[c[0] for c in CEL_CASES])
def test_cel(spec: JSON, old: JSON | None, expected: list[str]) -> None:
    assert msgs(st.validate_cel(CEL_SCHEMA, {"spec": spec}, old)) == expected


def test_cel_rules_found_and_compiled() -> None:
    rules = st.cel_rules(CEL_SCHEMA)
    assert [r.schema_path for r in rules] == [".properties[spec]"] * 5
    assert all(r.supported for r in rules)
    assert [r.compiled.transition for r in rules] == [False, False, False, False, True]


def test_cel_unsupported_rule_is_a_warning_and_skipped() -> None:
    s = obj_schema(q={"type": "string", "x-kubernetes-validations": [{"rule": "self.reverse() == self"}]})
    res = st.check_schema(s, "spec.versions[0].schema.openAPIV3Schema")
    assert list(res) == []
    assert len(res.warnings) == 1 and "not supported" in res.warnings[0]
    assert res.warnings[0].startswith(
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[q].x-kubernetes-validations[0].rule")
    assert st.validate_cel(s, {"spec": {"q": "1Gi"}}) == []


def test_cel_blocked_by_schema_errors() -> None:
    res = st.validate_custom_resource(CEL_SCHEMA, {"spec": {"replicas": "x", "min": 1}})
    assert msgs(res) == [
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        "Invalid value: null: some validation rules were not checked because the object was invalid; "
        "correct the existing errors to complete validation"]


# --------------------------------------------------------------------------- schema checks

P = "spec.validation.openAPIV3Schema"

SCHEMA_CASES = [
    ("ok", obj_schema(a={"type": "string"}), []),
    ("root-type-missing", {"properties": {"a": {"type": "string"}}},
     [f"{P}.type: Required value: must not be empty at the root"]),
    ("root-not-object", {"type": "string"}, [f'{P}.type: Invalid value: "string": must be object at the root']),
    ("field-type-missing", {"type": "object", "properties": {"a": {}}},
     [f"{P}.properties[a].type: Required value: must not be empty for specified object fields"]),
    ("items-type-missing", {"type": "object", "properties": {"a": {"type": "array", "items": {}}}},
     [f"{P}.properties[a].items.type: Required value: must not be empty for specified array items"]),
    ("items-missing", {"type": "object", "properties": {"a": {"type": "array"}}},
     [f"{P}.properties[a].items: Required value: must be specified"]),
    ("int-or-string-ok", {"type": "object", "properties": {"a": {"x-kubernetes-int-or-string": True}}}, []),
    ("int-or-string-anyOf-ok", {"type": "object", "properties": {"a": {
        "x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}}}, []),
    ("preserve-without-type-ok", {"type": "object", "properties": {"a": {"x-kubernetes-preserve-unknown-fields": True}}},
     []),
    ("type-in-anyOf", {"type": "object", "properties": {"a": {"type": "string", "anyOf": [{"type": "string"}]}}},
     [f"{P}.properties[a].anyOf[0].type: Forbidden: must be empty to be structural"]),
    ("description-in-allOf", {"type": "object", "properties": {"a": {"type": "string",
                                                                      "allOf": [{"description": "d"}]}}},
     [f"{P}.properties[a].allOf[0].description: Forbidden: must be empty to be structural"]),
    ("completeness", {"type": "object", "properties": {"a": {"type": "object", "anyOf": [
        {"properties": {"b": {"type": "string"}}}]}}},
     [f"{P}.properties[a].anyOf[0].properties[b].type: Forbidden: must be empty to be structural",
      f"{P}.properties[a].properties[b]: Required value: because it is defined in "
      f"{P}.properties[a].anyOf[0].properties[b]"]),
    ("metadata-restricted", {"type": "object", "properties": {"metadata": {"type": "object", "properties": {
        "labels": {"type": "object"}}}}},
     [f"{P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but "
      "metadata is implicitly specified"]),
    ("metadata-name-ok", {"type": "object", "properties": {"metadata": {"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 10}}}}}, []),
    ("additionalProperties-root", {"type": "object", "additionalProperties": {"type": "string"}},
     [f"{P}.additionalProperties: Forbidden: must not be used at the root"]),
    ("additionalProperties-and-properties", obj_schema(m={"type": "object", "properties": {"a": {"type": "string"}},
                                                        "additionalProperties": {"type": "string"}}),
     [f"{P}.properties[spec].properties[m].additionalProperties: Forbidden: additionalProperties and properties "
      "are mutual exclusive"]),
    ("pattern-invalid", obj_schema(a={"type": "string", "pattern": "a(?=b)"}),
     [f'{P}.properties[spec].properties[a].pattern: Invalid value: "a(?=b)": must be a valid regular expression, '
      "but isn't: error parsing regexp: invalid or unsupported Perl syntax: `(?=`"]),
    ("ref", obj_schema(a={"type": "string", "$ref": "#/x"}),
     [f"{P}.properties[spec].properties[a].$ref: Forbidden: $ref is not supported"]),
    ("unknown-type", obj_schema(a={"type": "date"}),
     [f'{P}.properties[spec].properties[a].type: Unsupported value: "date": supported values: "array", "boolean", '
      '"integer", "number", "object", "string"']),
    ("uniqueItems", obj_schema(a={"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
     [f"{P}.properties[spec].properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the "
      "runtime complexity becomes quadratic"]),
    ("embedded-needs-object", obj_schema(e={"x-kubernetes-embedded-resource": True,
                                            "x-kubernetes-preserve-unknown-fields": True}),
     [f"{P}.properties[spec].properties[e].type: Required value: must be object if x-kubernetes-embedded-resource "
      "is true"]),
    ("embedded-needs-properties", obj_schema(e={"type": "object", "x-kubernetes-embedded-resource": True}),
     [f"{P}.properties[spec].properties[e].properties: Required value: must not be empty if "
      "x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"]),
    ("preserve-false", obj_schema(a={"type": "object", "x-kubernetes-preserve-unknown-fields": False}),
     [f"{P}.properties[spec].properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true "
      "or undefined"]),
    ("list-type-unknown", obj_schema(a={"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "x"}),
     [f'{P}.properties[spec].properties[a].x-kubernetes-list-type: Unsupported value: "x": supported values: '
      '"atomic", "set", "map"']),
    ("list-map-no-keys", obj_schema(a={"type": "array", "items": {"type": "object"}, "x-kubernetes-list-type": "map"}),
     [f"{P}.properties[spec].properties[a].x-kubernetes-list-map-keys: Required value: must not be empty if "
      "x-kubernetes-list-type is map"]),
    ("list-map-key-not-property", obj_schema(a={
        "type": "array", "items": {"type": "object", "properties": {"b": {"type": "string"}}},
        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}),
     [f"{P}.properties[spec].properties[a].x-kubernetes-list-map-keys: Invalid value: "
      '[]string{"name"}: entries must all be names of item properties']),
    ("list-map-keys-without-map", obj_schema(a={"type": "array", "items": {"type": "string"},
                                                "x-kubernetes-list-map-keys": ["name"]}),
     [f"{P}.properties[spec].properties[a].x-kubernetes-list-type: Required value: must be map if "
      "x-kubernetes-list-map-keys is non-empty"]),
    ("list-type-on-object", obj_schema(a={"type": "object", "x-kubernetes-list-type": "set"}),
     [f'{P}.properties[spec].properties[a].type: Invalid value: "object": must be array if x-kubernetes-list-type '
      "is specified"]),
    ("map-type-unknown", obj_schema(a={"type": "object", "x-kubernetes-map-type": "x"}),
     [f'{P}.properties[spec].properties[a].x-kubernetes-map-type: Unsupported value: "x": supported values: '
      '"atomic", "granular"']),
    ("nullable-root", {"type": "object", "nullable": True}, [f"{P}.nullable: Forbidden: nullable cannot be true at "
                                                             "the root"]),
    ("default-wrong-type", obj_schema(a={"type": "integer", "default": "x"}),
     [f'{P}.properties[spec].properties[a].default: Invalid value: "string":  in body must be of type integer: '
      '"string"']),
    ("default-unpruned", obj_schema(a={"type": "object", "properties": {"b": {"type": "string"}},
                                       "default": {"c": "x"}}),
     [f"{P}.properties[spec].properties[a].default: Invalid value: "
      'map[string]interface {}{"c":"x"}: must not have unknown fields']),
    ("default-ok", obj_schema(a={"type": "integer", "default": 3, "minimum": 1}), []),
    ("cel-rule-missing", obj_schema(a={"type": "string", "x-kubernetes-validations": [{"rule": ""}]}),
     [f"{P}.properties[spec].properties[a].x-kubernetes-validations[0].rule: Required value: rule is not specified"]),
    ("cel-reason-unknown", obj_schema(a={"type": "string", "x-kubernetes-validations": [
        {"rule": "self != ''", "reason": "Nope"}]}),
     [f'{P}.properties[spec].properties[a].x-kubernetes-validations[0].reason: Unsupported value: "Nope": supported '
      'values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"']),
]


@pytest.mark.parametrize("schema,expected", [c[1:] for c in SCHEMA_CASES], ids=[c[0] for c in SCHEMA_CASES])
def test_check_schema(schema: JSON, expected: list[str]) -> None:
    before = copy.deepcopy(schema)
    assert msgs(st.check_schema(schema)) == expected
    assert schema == before


# --------------------------------------------------------------------------- OpenAPI

def test_openapi_for_kind_replaces_metadata() -> None:
    s = {"type": "object", "properties": {"metadata": {"type": "object"}, "spec": {
        "type": "object", "properties": {
            "p": {"x-kubernetes-int-or-string": True},
            "q": {"x-kubernetes-int-or-string": True, "anyOf": [{"minimum": 1}, {"maxLength": 3}]},
            "n": {"type": "integer", "minimum": 1, "enum": [1, 2]},
            "t": {"type": "object", "x-kubernetes-embedded-resource": True,
                  "x-kubernetes-preserve-unknown-fields": True}}}}}
    out = st.openapi_for_kind(s, "example.com", "v1", "Widget")
    assert out["properties"]["metadata"] == {
        "allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}],
        "description": "Standard object's metadata. More info: "
                       "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}
    assert out["properties"]["apiVersion"]["type"] == "string"
    spec = out["properties"]["spec"]["properties"]
    assert spec["p"]["anyOf"] == [{"type": "integer"}, {"type": "string"}]
    assert spec["q"]["allOf"] == [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]
    assert spec["q"]["anyOf"] == [{"minimum": 1}, {"maxLength": 3}]
    assert spec["n"] == {"type": "integer", "minimum": 1, "enum": [1, 2]}
    assert set(spec["t"]["properties"]) == {"apiVersion", "kind", "metadata"}
    assert spec["t"]["required"] == ["kind", "apiVersion"]
    assert out["x-kubernetes-group-version-kind"] == [{"group": "example.com", "kind": "Widget", "version": "v1"}]
    assert s["properties"]["metadata"] == {"type": "object"}
    assert "anyOf" not in s["properties"]["spec"]["properties"]["p"]


def test_openapi_for_kind_without_schema() -> None:
    assert st.openapi_for_kind(None, "g", "v1", "K") == {
        "type": "object", "x-kubernetes-group-version-kind": [{"group": "g", "kind": "K", "version": "v1"}]}

def test_check_schema_status_subresource_root_fields() -> None:
    ok = {"type": "object", "properties": {"status": {"type": "object"}}, "required": ["status"]}
    assert list(st.check_schema(ok, status_subresource=True)) == []
    bad = {"type": "object", "properties": {"status": {"type": "object"}},
           "anyOf": [{"required": ["status"]}]}
    res = st.check_schema(bad, status_subresource=True)
    assert [c["field"] for c in res] == [P]
    assert res[0]["message"].endswith("fields are allowed at the root of the schema if the status subresource is "
                                      "enabled")


def test_cel_parse_failure_is_a_warning() -> None:
    s = obj_schema(a={"type": "string", "x-kubernetes-validations": [{"rule": "self.?a"}]})
    res = st.check_schema(s)
    assert list(res) == [] and len(res.warnings) == 1
    assert st.validate_cel(s, {"spec": {"a": "x"}}) == []


def test_cel_extension_functions() -> None:
    s = obj_schema(n={"type": "string", "x-kubernetes-validations": [
        {"rule": "self.lowerAscii() == self", "message": "must be lower case"},
        {"rule": "self.split('-').size() <= 2", "message": "at most one dash"}]},
        xs={"type": "array", "items": {"type": "integer"}, "x-kubernetes-validations": [
            {"rule": "self.isSorted()", "message": "must be sorted"}]})
    assert msgs(st.validate_cel(s, {"spec": {"n": "a-b", "xs": [1, 2]}})) == []
    assert msgs(st.validate_cel(s, {"spec": {"n": "A-b-c", "xs": [2, 1]}})) == [
        'spec.n: Invalid value: "A-b-c": must be lower case',
        'spec.n: Invalid value: "A-b-c": at most one dash',
        "spec.xs: Invalid value: must be sorted"]


def test_cel_transition_rule_on_list_map_items() -> None:
    s = obj_schema(ps={"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                       "items": {"type": "object", "properties": {"name": {"type": "string"},
                                                                  "v": {"type": "integer"}},
                                 "x-kubernetes-validations": [{"rule": "self.v >= oldSelf.v",
                                                               "message": "v may not decrease"}]}})
    old = {"spec": {"ps": [{"name": "a", "v": 2}, {"name": "b", "v": 1}]}}
    new = {"spec": {"ps": [{"name": "b", "v": 0}, {"name": "a", "v": 3}, {"name": "c", "v": 0}]}}
    assert msgs(st.validate_cel(s, new, old)) == ["spec.ps[0]: Invalid value: v may not decrease"]


def test_validation_does_not_mutate_and_is_fast_enough() -> None:
    props = {f"f{i}": {"type": "string", "maxLength": 64} if i % 2 else {"type": "integer", "minimum": 0}
             for i in range(20)}
    s = obj_schema(**props)
    obj = {"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n"},
           "spec": {f"f{i}": ("v" if i % 2 else i) for i in range(20)}}
    before = copy.deepcopy(obj)
    assert st.validate_custom_resource(s, obj) == []
    assert obj == before


DEFAULT_CHECK_CASES = [
    ("top-level-metadata-default-forbidden", {"type": "object", "properties": {"metadata": {
        "type": "object", "properties": {"name": {"type": "string", "default": "x"}}}}},
     [f"{P}.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata"]),
    ("embedded-metadata-default-ok", obj_schema(e={"type": "object", "x-kubernetes-embedded-resource": True,
                                                   "properties": {"metadata": {"type": "object", "properties": {
                                                       "name": {"type": "string", "default": "x"}}}}}), []),
    ("root-default-of-object-unpruned-inside-preserve-ok", obj_schema(a={
        "type": "object", "x-kubernetes-preserve-unknown-fields": True, "default": {"free": 1}}), []),
    ("embedded-default-itself-not-checked", obj_schema(e={
        "type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True,
        "default": {"spec": {}}}), []),
    ("embedded-inside-default-needs-apiVersion-kind", obj_schema(a={
        "type": "object", "default": {"e": {"spec": {}}}, "properties": {"e": {
            "type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True}}}),
     [f"{P}.properties[spec].properties[a].default.e.apiVersion: Required value: must not be empty",
      f"{P}.properties[spec].properties[a].default.e.kind: Required value: must not be empty"]),
    ("items-default", obj_schema(xs={"type": "array", "items": {"type": "integer", "default": "a"}}),
     [f'{P}.properties[spec].properties[xs].items.default: Invalid value: "string":  in body must be of type '
      'integer: "string"']),
    ("default-violates-enum", obj_schema(a={"type": "string", "enum": ["x"], "default": "y"}),
     [f'{P}.properties[spec].properties[a].default: Unsupported value: "y": supported values: "x"']),
]


@pytest.mark.parametrize("schema,expected", [c[1:] for c in DEFAULT_CHECK_CASES],
                         ids=[c[0] for c in DEFAULT_CHECK_CASES])
def test_check_schema_defaults(schema: JSON, expected: list[str]) -> None:
    assert msgs(st.check_schema(schema)) == expected


def go_errors(errs: list[JSON]) -> set[str]:
    """The causes as Go's field.Error.Error() prints them (``<field>: <body>``, an empty
    field included), as a set: Kubernetes' TestValidateCustomResource compares sets."""
    return {f"{c['field']}: {c['message']}" for c in errs}


INT_OR_STRING_ANY_OF = {"properties": {"field": {"nullable": True, "x-kubernetes-int-or-string": True,
                                                 "anyOf": [{"type": "integer"}, {"type": "string"}]}}}
INT_OR_STRING_ALL_OF = {"properties": {"field": {"nullable": True, "x-kubernetes-int-or-string": True,
                                                 "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]}}}
ENUM_SCHEMA = {"properties": {"field": {"type": "object", "required": ["nestedint", "nestedstring"], "properties": {
    "nestedint": {"type": "integer", "enum": [1, 2]}, "nestedstring": {"type": "string", "enum": ["a", "b"]}}}}}

K8S_CASES = [
    ("not-nullable-null", {"properties": {"field": {"type": "object"}}}, {"field": None},
     {'field: Invalid value: "null": field in body must be of type object: "null"'}),
    ("nullable-no-type-anything", {"properties": {"field": {"nullable": True}}}, {"field": 1.2}, set()),
    ("int-or-string-null", {"properties": {"field": {"x-kubernetes-int-or-string": True}}}, {"field": None},
     {'field: Invalid value: "null": field in body must be of type integer,string: "null"'}),
    ("int-or-string-nullable-null", {"properties": {"field": {"x-kubernetes-int-or-string": True, "nullable": True}}},
     {"field": None}, set()),
    ("int-or-string-anyOf-boolean", INT_OR_STRING_ANY_OF, {"field": True},
     {': Invalid value: "": "field" must validate at least one schema (anyOf)',
      'field: Invalid value: "boolean": field in body must be of type integer,string: "boolean"',
      'field: Invalid value: "boolean": field in body must be of type integer: "boolean"'}),
    ("int-or-string-allOf-number", INT_OR_STRING_ALL_OF, {"field": 1.2},
     {': Invalid value: "": "field" must validate all the schemas (allOf). None validated',
      ': Invalid value: "": "field" must validate at least one schema (anyOf)',
      'field: Invalid value: "number": field in body must be of type integer,string: "number"',
      'field: Invalid value: "number": field in body must be of type integer: "number"'}),
    ("int-or-string-allOf-ok", INT_OR_STRING_ALL_OF, {"field": "foo"}, set()),
    ("required", {"required": ["field"], "properties": {"field": {"type": "object", "required": ["nested"],
                                                                  "properties": {"nested": {}}}}},
     {"test": "a"}, {"field: Required value"}),
    ("required-nested", {"required": ["field"], "properties": {"field": {"type": "object", "required": ["nested"],
                                                                         "properties": {"nested": {}}}}},
     {"field": {}}, {"field.nested: Required value"}),
    ("enum-required", ENUM_SCHEMA, {"field": {}}, {"field.nestedint: Required value",
                                                   "field.nestedstring: Required value"}),
    ("enum-wrong-types", ENUM_SCHEMA, {"field": {"nestedint": "x", "nestedstring": True}},
     {'field.nestedint: Invalid value: "string": field.nestedint in body must be of type integer: "string"',
      'field.nestedint: Unsupported value: "x": supported values: "1", "2"',
      'field.nestedstring: Invalid value: "boolean": field.nestedstring in body must be of type string: "boolean"',
      'field.nestedstring: Unsupported value: true: supported values: "a", "b"'}),
]


@pytest.mark.parametrize("schema,obj,expected", [c[1:] for c in K8S_CASES], ids=[c[0] for c in K8S_CASES])
def test_validate_custom_resource_as_kubernetes_tests(schema: JSON, obj: JSON, expected: set[str]) -> None:
    """The cases of apiserver/validation/validation_test.go TestValidateCustomResource."""
    assert go_errors(st.validate_values(schema, obj)) == expected


# pruning/algorithm_test.go TestPrune, as JSON schemas
_OBJ = {"type": "object"}
_PRESERVE = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
NESTED_PRESERVE_SCHEMA = {
    "type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {
        "alpha": {"type": "string"}, "beta": {"type": "number"},
        "pruning": {"type": "object", "properties": {"preserving": _PRESERVE, "pruning": _OBJ}},
        "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                       "properties": {"preserving": _PRESERVE, "pruning": _OBJ}},
        "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {
            "type": "object", "x-kubernetes-preserve-unknown-fields": True,
            "additionalProperties": {"type": "object", "properties": {"specified": _OBJ}}},
        "preservingAdditionalPropertiesKeyPruneValues": {
            "type": "object", "additionalProperties": {"type": "object", "properties": {"specified": _OBJ}}}}}
_U = {"unspecified": "bar"}
NESTED_PRESERVE_IN = {
    "unspecified": "bar", "alpha": "abc", "beta": 42.0, "unspecifiedObject": dict(_U),
    "pruning": {"unspecified": "bar", "unspecifiedObject": dict(_U), "pruning": dict(_U), "preserving": dict(_U)},
    "preserving": {"unspecified": "bar", "unspecifiedObject": dict(_U), "pruning": dict(_U), "preserving": dict(_U)},
    "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {
        "foo": {"specified": dict(_U), "unspecified": "bar"}},
    "preservingAdditionalPropertiesKeyPruneValues": {"foo": {"specified": dict(_U), "unspecified": "bar"}}}
NESTED_PRESERVE_OUT = {
    "unspecified": "bar", "alpha": "abc", "beta": 42.0, "unspecifiedObject": dict(_U),
    "pruning": {"pruning": {}, "preserving": dict(_U)},
    "preserving": {"unspecified": "bar", "unspecifiedObject": dict(_U), "pruning": {}, "preserving": dict(_U)},
    "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {"foo": {"specified": {}}},
    "preservingAdditionalPropertiesKeyPruneValues": {"foo": {"specified": {}}}}


def _res(**extra: Any) -> JSON:
    return {"apiVersion": "foo/v1", "kind": "Foo", "metadata": {"name": "instance", "unspecified": "bar"}, **extra}


EMBEDDED_SCHEMA = {"type": "object", "properties": {
    "pruned": {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {"spec": _OBJ}},
    "preserving": {"type": "object", "x-kubernetes-embedded-resource": True,
                   "x-kubernetes-preserve-unknown-fields": True},
    "nested": {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {"spec": {
        "type": "object", "properties": {"embedded": {
            "type": "object", "x-kubernetes-embedded-resource": True, "properties": {"spec": _OBJ}}}}}}}}


def _embedded_in() -> JSON:
    return _res(unspecified="bar",
                pruned=_res(unspecified="bar", spec=dict(_U)),
                preserving=_res(unspecified="bar", spec=dict(_U)),
                nested=_res(unspecified="bar", spec={"unspecified": "bar",
                                                     "embedded": _res(unspecified="bar", spec=dict(_U))}))


def _embedded_out(root: bool) -> JSON:
    inner = {"pruned": _res(spec={}), "preserving": _res(unspecified="bar", spec=dict(_U)),
             "nested": _res(spec={"embedded": _res(spec={})})}
    return _res(**inner) if root else inner


K8S_PRUNE_CASES = [
    ("scalar", {}, 4, False, 4),
    ("scalar-array", {"items": {}}, [1, 2], False, [1, 2]),
    ("object-array", {"items": {"properties": {"a": {}, "c": {}}}}, [{"a": 1}, {"b": 1}, {"a": 1, "b": 2, "c": 3}],
     False, [{"a": 1}, {}, {"a": 1, "c": 3}]),
    ("object-array-nil-schema", None, [{"a": 1}, {"b": 1}, {"a": 1, "b": 2, "c": 3}], False, [{}, {}, {}]),
    ("nested-preserve-unknown-fields", NESTED_PRESERVE_SCHEMA, NESTED_PRESERVE_IN, False, NESTED_PRESERVE_OUT),
    ("additionalProperties-schema", {"properties": {"a": {}, "c": {"additionalProperties": {"type": "integer"}}}},
     {"a": 1, "b": 1, "c": {"a": 1, "b": 2, "c": {"a": 1}}}, False, {"a": 1, "c": {"a": 1, "b": 2, "c": {}}}),
    ("additionalProperties-bool", {"properties": {"a": {}, "c": {"additionalProperties": False}}},
     {"a": 1, "b": 1, "c": {"a": 1, "b": 2, "c": {"a": 1}}}, False, {"a": 1, "c": {"a": 1, "b": 2, "c": {}}}),
    ("embedded-resource", EMBEDDED_SCHEMA, "embedded", False, _embedded_out(False)),
    ("embedded-resource-root", EMBEDDED_SCHEMA, "embedded", True, _embedded_out(True)),
]


@pytest.mark.parametrize("schema,obj,root,expected", [c[1:] for c in K8S_PRUNE_CASES],
                         ids=[c[0] for c in K8S_PRUNE_CASES])
def test_prune_as_kubernetes_tests(schema: JSON | None, obj: Any, root: bool, expected: Any) -> None:
    obj = _embedded_in() if obj == "embedded" else copy.deepcopy(obj)
    st.prune_unknown(schema, obj, is_resource_root=root)
    assert obj == expected


def test_prune_paths_of_embedded_resources() -> None:
    obj = _embedded_in()
    assert st.prune_unknown(EMBEDDED_SCHEMA, obj) == [
        "nested.spec.embedded.spec.unspecified", "nested.spec.embedded.unspecified", "nested.spec.unspecified",
        "nested.unspecified", "pruned.spec.unspecified", "pruned.unspecified", "unspecified"]


CEL_MORE_CASES = [
    ("scalar-value-shown", obj_schema(n={"type": "integer", "x-kubernetes-validations": [
        {"rule": "self > 1"}]}), {"spec": {"n": 0}}, None, ["spec.n: Invalid value: 0: failed rule: self > 1"]),
    ("fieldPath-map-key", obj_schema(m={"type": "object", "additionalProperties": {"type": "string"},
                                        "x-kubernetes-validations": [{"rule": "!('a.b' in self)",
                                                                      "fieldPath": "['a.b']"}]}),
     {"spec": {"m": {"a.b": "x"}}}, None, ["spec.m.[a.b]: Invalid value: failed rule: !('a.b' in self)"]),
    ("fieldPath-nested-property", {"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}},
        "x-kubernetes-validations": [{"rule": "self.a.b != 'x'", "fieldPath": ".a.b", "reason": "FieldValueRequired",
                                      "message": "b is bad"}]}}},
     {"spec": {"a": {"b": "x"}}}, None, ["spec.a.b: Required value: b is bad"]),
    ("reason-duplicate-scalar", obj_schema(n={"type": "string", "x-kubernetes-validations": [
        {"rule": "self != 'x'", "reason": "FieldValueDuplicate"}]}), {"spec": {"n": "x"}}, None,
     ['spec.n: Duplicate value: "x"']),
    ("messageExpression-not-string-falls-back", obj_schema(n={"type": "integer", "x-kubernetes-validations": [
        {"rule": "self > 1", "message": "too small", "messageExpression": "self"}]}), {"spec": {"n": 0}}, None,
     ["spec.n: Invalid value: 0: too small"]),
    ("error-uses-message", obj_schema(o={"type": "object", "properties": {"a": {"type": "integer"}},
                                         "x-kubernetes-validations": [{"rule": "self.a > 0", "message": "a!"}]}),
     {"spec": {"o": {}}}, None, ['spec.o: Invalid value: "object": no such key: a evaluating rule: a!']),
    ("root-metadata-name", {"type": "object", "x-kubernetes-validations": [
        {"rule": "self.metadata.name.startsWith('x')", "message": "name must start with x"},
        {"rule": "!has(self.metadata.labels)"}]},
     {"metadata": {"name": "y", "labels": {"a": "b"}}}, None, ["Invalid value: name must start with x"]),
    ("set-items-not-correlated", obj_schema(xs={"type": "array", "x-kubernetes-list-type": "set", "items": {
        "type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "immutable"}]}}),
     {"spec": {"xs": ["b"]}}, {"spec": {"xs": ["a"]}}, []),
    ("null-not-validated", obj_schema(n={"type": "string", "nullable": True, "x-kubernetes-validations": [
        {"rule": "self != ''"}]}), {"spec": {"n": None}}, None, []),
    ("transition-property-removed-skipped", obj_schema(n={"type": "string", "x-kubernetes-validations": [
        {"rule": "self == oldSelf", "message": "immutable"}]}), {"spec": {"n": "b"}}, {"spec": {}}, []),
    ("transition-property-changed", obj_schema(n={"type": "string", "x-kubernetes-validations": [
        {"rule": "self == oldSelf", "message": "immutable"}]}), {"spec": {"n": "b"}}, {"spec": {"n": "a"}},
     ['spec.n: Invalid value: "b": immutable']),
]


@pytest.mark.parametrize("schema,obj,old,expected", [c[1:] for c in CEL_MORE_CASES],
                         ids=[c[0] for c in CEL_MORE_CASES])
def test_cel_more(schema: JSON, obj: JSON, old: JSON | None, expected: list[str]) -> None:
    assert msgs(st.validate_cel(schema, obj, old)) == expected


_FP_SCHEMA = {"type": "object", "properties": {
    "a": {"type": "object", "properties": {"b": {"type": "string"}}},
    "m": {"type": "object", "additionalProperties": {"type": "string"}},
    "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "number"}}}}}}

FIELD_PATH_CASES = [
    ("property", ".a.b", None),
    ("map-key", ".m['x.y']", None),
    ("quoted-property", "['a']", None),
    ("not-a-field", ".a.c", "fieldPath must be a valid path"),
    ("index", ".list[0]", "fieldPath must be a valid path"),
    ("blank", "   ", "fieldPath must be non-empty if specified|fieldPath must be a valid path"),
    ("dot", ".", "fieldPath must be a valid path"),
    ("dot-dot", "..", "fieldPath must be a valid path"),
]


@pytest.mark.parametrize("fp,reason", [(".a.c", "does not refer to a valid field"),
                                       (".list[0]", "expected single quoted string but got 0"),
                                       ("   ", "expected [ or . but got:    "),
                                       (".", "unexpected end of JSON path"),
                                       ("..", "does not refer to a valid field"),
                                       (".m['a\\q']", "invalid string literal: invalid escape char \\q")],
                         ids=["not-a-field", "index", "blank", "dot", "dot-dot", "bad-escape"])
def test_valid_field_path_reasons(fp: str, reason: str) -> None:
    from controlplane.api.structural.cel import valid_field_path
    with pytest.raises(ValueError) as e:
        valid_field_path(fp, _FP_SCHEMA)
    assert str(e.value) == reason


@pytest.mark.parametrize("fp,expected", [c[1:] for c in FIELD_PATH_CASES], ids=[c[0] for c in FIELD_PATH_CASES])
def test_check_schema_cel_field_path(fp: str, expected: str | None) -> None:
    s = dict(_FP_SCHEMA, **{"x-kubernetes-validations": [{"rule": "true", "fieldPath": fp}]})
    res = st.check_schema(s)
    want = [] if expected is None else [
        f"{P}.x-kubernetes-validations[0].fieldPath: Invalid value: {json.dumps(fp)}: {m}" for m in expected.split("|")]
    assert msgs(res) == want


def test_check_schema_cel_message_expression_blank() -> None:
    s = obj_schema(a={"type": "string", "x-kubernetes-validations": [{"rule": "true", "messageExpression": "  "}]})
    assert msgs(st.check_schema(s)) == [
        f"{P}.properties[spec].properties[a].x-kubernetes-validations[0].messageExpression: Required value: "
        "messageExpression must be non-empty if specified"]


_MAPLIST = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}
SCHEMA_MORE_CASES = [
    ("oldSelf-in-atomic-list-items", obj_schema(xs={"type": "array", "items": {
        "type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}),
     [f'{P}.properties[spec].properties[xs].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": '
      f"oldSelf cannot be used on the uncorrelatable portion of the schema within {P}.properties[spec].properties[xs]"]),
    ("oldSelf-in-map-list-items-ok", obj_schema(xs=dict(_MAPLIST, items=dict(
        _MAPLIST["items"], **{"x-kubernetes-validations": [{"rule": "self == oldSelf"}]}))), []),
    ("optionalOldSelf-without-oldSelf", obj_schema(a={"type": "string", "x-kubernetes-validations": [
        {"rule": "self != ''", "optionalOldSelf": True}]}),
     [f"{P}.properties[spec].properties[a].x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not "
      "be set if oldSelf is not used in rule"]),
    ("rule-with-newline-needs-message", obj_schema(a={"type": "string", "x-kubernetes-validations": [
        {"rule": "self != ''\n&& self != 'x'"}]}),
     [f"{P}.properties[spec].properties[a].x-kubernetes-validations[0].message: Required value: message must be "
      "specified if rule contains line breaks"]),
    ("map-list-key-optional-without-default", obj_schema(xs=dict(_MAPLIST, items={
        "type": "object", "properties": {"name": {"type": "string"}}})),
     [f"{P}.properties[spec].properties[xs].items.properties[name].default: Required value: this property is in "
      "x-kubernetes-list-map-keys, so it must have a default or be a required property"]),
    ("set-items-nullable", obj_schema(xs={"type": "array", "x-kubernetes-list-type": "set",
                                          "items": {"type": "string", "nullable": True}}),
     [f"{P}.properties[spec].properties[xs].items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type "
      "is set"]),
    ("type-null", obj_schema(a={"type": "null"}),
     [f'{P}.properties[spec].properties[a].type: Unsupported value: "null": supported values: "array", "boolean", '
      '"integer", "number", "object", "string"',
      f"{P}.properties[spec].properties[a].type: Forbidden: type cannot be set to null, use nullable as an "
      "alternative"]),
    ("embedded-inside-metadata", {"type": "object", "properties": {"metadata": {"type": "object", "properties": {
        "name": {"type": "object", "x-kubernetes-embedded-resource": True,
                 "x-kubernetes-preserve-unknown-fields": True}}}}},
     [f"{P}.properties[metadata].properties[name].x-kubernetes-embedded-resource: Forbidden: must not be used inside "
      "of resource meta"]),
    ("default-in-embedded-metadata-additionalProperties", obj_schema(e={
        "type": "object", "x-kubernetes-embedded-resource": True, "properties": {"metadata": {
            "type": "object", "properties": {"labels": {"type": "object", "additionalProperties": {
                "type": "string", "default": "x"}}}}}}),
     [f"{P}.properties[spec].properties[e].properties[metadata].properties[labels].additionalProperties.default: "
      "Forbidden: must not be set inside additionalProperties applying to object metadata"]),
]


@pytest.mark.parametrize("schema,expected", [c[1:] for c in SCHEMA_MORE_CASES], ids=[c[0] for c in SCHEMA_MORE_CASES])
def test_check_schema_more(schema: JSON, expected: list[str]) -> None:
    assert msgs(st.check_schema(schema)) == expected


COERCE_CASES = [
    ("embedded-unknown-metadata-dropped", False,
     {"spec": {"tpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "unspecified": "x",
                                                                       "creationTimestamp": None}}}},
     {"spec": {"tpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}}}, [],
     ["spec.tpl.metadata.unspecified"]),
    ("root-metadata", True, {"metadata": {"name": "a", "foo": 1}, "spec": {}}, {"metadata": {"name": "a"}, "spec": {}},
     [], ["metadata.foo"]),
    ("root-untouched-when-not-root", False, {"metadata": {"name": "a", "foo": 1}}, {"metadata": {"name": "a", "foo": 1}},
     [], []),
    ("kind-not-string", False, {"spec": {"tpl": {"apiVersion": "v1", "kind": 1}}},
     {"spec": {"tpl": {"apiVersion": "v1", "kind": 1}}}, ["spec.tpl.kind: Invalid value: 1: must be a string"], []),
    ("metadata-field-wrong-type", False, {"spec": {"tpl": {"metadata": {"labels": {"a": 1}}}}},
     {"spec": {"tpl": {"metadata": {"labels": {"a": 1}}}}},
     ['spec.tpl.metadata: Invalid value: map[string]interface {}{"labels":map[string]interface {}{"a":1}}: json: '
      "cannot unmarshal object into Go struct field ObjectMeta.labels of type map[string]string"], []),
]


@pytest.mark.parametrize("root,obj,expected,errors,unknown", [c[1:] for c in COERCE_CASES],
                         ids=[c[0] for c in COERCE_CASES])
def test_coerce_metadata(root: bool, obj: JSON, expected: JSON, errors: list[str], unknown: list[str]) -> None:
    errs, paths = st.coerce_metadata(EMBEDDED, obj, is_resource_root=root)
    assert msgs(errs) == errors
    assert paths == unknown
    assert obj == expected


def test_coerce_metadata_drop_invalid() -> None:
    obj = {"spec": {"tpl": {"apiVersion": 1, "kind": "Pod", "metadata": {"name": "a", "generation": "x"}}}}
    errs, _ = st.coerce_metadata(EMBEDDED, obj, is_resource_root=False, drop_invalid=True)
    assert list(errs) == []
    assert obj == {"spec": {"tpl": {"kind": "Pod", "metadata": {"name": "a"}}}}


def test_cel_formats_typed() -> None:
    s = obj_schema(
        t={"type": "string", "format": "date-time",
           "x-kubernetes-validations": [{"rule": "self > timestamp('2020-01-01T00:00:00Z')", "message": "too old"}]},
        d={"type": "string", "format": "duration",
           "x-kubernetes-validations": [{"rule": "self <= duration('1h')", "message": "too long"}]})
    assert st.validate_cel(s, {"spec": {"t": "2024-05-01T00:00:00Z", "d": "30m"}}) == []
    assert msgs(st.validate_cel(s, {"spec": {"t": "2019-05-01T00:00:00Z", "d": "2h"}})) == [
        'spec.t: Invalid value: "2019-05-01T00:00:00Z": too old', 'spec.d: Invalid value: "2h": too long']


def test_cel_blocked_by_prior_errors() -> None:
    prior = [{"reason": "FieldValueRequired", "message": "Required value", "field": "metadata.name"}]
    res = st.validate_custom_resource(CEL_SCHEMA, {"spec": {"replicas": 0, "min": 1}}, prior=prior)
    assert msgs(res) == ["Invalid value: null: some validation rules were not checked because the object was "
                         "invalid; correct the existing errors to complete validation"]


CEL_LIBRARY_CASES = [
    ("quantity-gt", "quantity(self).isGreaterThan(quantity('1Gi'))", "2Gi", True),
    ("quantity-gt-false", "quantity(self).isGreaterThan(quantity('1Gi'))", "512Mi", False),
    ("quantity-compare", "quantity(self).compareTo(quantity('1000m')) == 0", "1", True),
    ("quantity-add", "quantity(self).add(quantity('500m')) == quantity('1.5')", "1", True),
    ("quantity-as-integer", "quantity(self).asInteger() == 2048", "2Ki", True),
    ("is-quantity", "isQuantity(self)", "bogus", False),
    ("url-scheme", "url(self).getScheme() == 'https'", "https://example.com:8443/a?b=c", True),
    ("url-hostname-port", "url(self).getHostname() == 'example.com' && url(self).getPort() == '8443'",
     "https://example.com:8443/a", True),
    ("url-query", "url(self).getQuery()['b'] == ['c']", "https://example.com/a?b=c", True),
    ("is-url", "isURL(self)", "not a url", False),
    ("ip-family", "ip(self).family() == 6", "::1", True),
    ("ip-loopback", "ip(self).isLoopback()", "127.0.0.1", True),
    ("is-ip", "isIP(self)", "300.1.1.1", False),
    ("cidr-contains", "cidr(self).containsIP('10.0.0.5')", "10.0.0.0/24", True),
    ("cidr-prefix", "cidr(self).prefixLength() == 24", "10.0.0.0/24", True),
    ("cidr-contains-cidr", "cidr(self).containsCIDR('10.0.0.0/25')", "10.0.0.0/24", True),
    ("lists-sum", "[1, 2, 3].sum() == 6 && [3, 1].min() == 1 && [3, 1].max() == 3", "x", True),
    ("regex-find", "self.find('[0-9]+') == '42'", "ab42cd", True),
    ("strings-replace", "self.replace('-', '_') == 'a_b'", "a-b", True),
]


@pytest.mark.parametrize("rule,value,ok", [c[1:] for c in CEL_LIBRARY_CASES], ids=[c[0] for c in CEL_LIBRARY_CASES])
def test_cel_kubernetes_libraries(rule: str, value: str, ok: bool) -> None:
    s = obj_schema(v={"type": "string", "x-kubernetes-validations": [{"rule": rule, "message": "no"}]})
    assert st.check_schema(s).warnings == []
    res = st.validate_cel(s, {"spec": {"v": value}})
    assert msgs(res) == ([] if ok else [f'spec.v: Invalid value: "{value}": no'])


# --------------------------------------------------------------------------- never a crash

_json = hs.recursive(
    hs.none() | hs.booleans() | hs.integers(-5, 5) | hs.floats(allow_nan=False, allow_infinity=False, width=32)
    | hs.sampled_from(["", "a", "object", "array", "string", "integer", "map", "set", "^a", "+", "date-time"]),
    lambda c: hs.lists(c, max_size=3) | hs.dictionaries(
        hs.sampled_from(["type", "properties", "items", "required", "enum", "default", "nullable",
                         "additionalProperties", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
                         "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
                         "x-kubernetes-int-or-string", "x-kubernetes-validations", "rule", "anyOf", "allOf",
                         "minimum", "maxLength", "pattern", "format", "metadata", "a", "spec"]), c, max_size=4),
    max_leaves=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=_json, obj=_json)
def test_malformed_schemas_and_objects_never_raise(schema: Any, obj: Any) -> None:
    s = schema if isinstance(schema, dict) else {"type": "object"}
    st.check_schema(s)
    o = copy.deepcopy(obj)
    st.prune(s, o)
    st.apply_defaults(s, o)
    st.coerce_metadata(s, o)
    st.validate_custom_resource(s, o, copy.deepcopy(obj))
    st.openapi_for_kind(s, "g", "v1", "K")
