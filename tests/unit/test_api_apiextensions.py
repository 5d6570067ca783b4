"""The pure parts of controlplane.api.groups.apiextensions: kubectl's JSONPath subset, printer
cells (tableconvertor.go cellForJSONValue), version priority, defaulting, list types from a
schema and the Resources a CRD becomes."""

from __future__ import annotations

import pytest

from controlplane.api.groups import apiextensions as ax

OBJ = {"metadata": {"name": "w", "creationTimestamp": "2026-01-01T00:00:00Z"},
       "spec": {"size": 3, "tags": ["a", "b"], "a.b": 1},
       "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Other", "status": "False"}]}}

PATHS = {
    "field": (".spec.size", [3]),
    "braces": ("{.spec.size}", [3]),
    "index": (".spec.tags[1]", ["b"]),
    "all": (".spec.tags[*]", ["a", "b"]),
    "quoted-key": (".spec['a.b']", [1]),
    "filter": ('.status.conditions[?(@.type=="Ready")].status', ["True"]),
    "missing": (".spec.nothing", []),
    "out-of-range": (".spec.tags[5]", []),
    "not-a-path": ("spec.size", []),
}


@pytest.mark.parametrize("case", list(PATHS), ids=list(PATHS))
def test_jsonpath(case):
    path, want = PATHS[case]
    assert ax.jsonpath(OBJ, path) == want


CELLS = {
    "integer-from-float": ("integer", 3.0, 3),
    "integer-from-string": ("integer", "3", None),
    "number": ("number", 2, 2.0),
    "boolean": ("boolean", True, True),
    "string": ("string", "x", "x"),
    "string-from-number": ("string", 5, "5"),
    "date": ("date", "2026-01-01T00:00:00Z", "10s"),
    "date-invalid": ("date", "yesterday", "<invalid>"),
    "none": ("integer", None, None),
}


@pytest.mark.parametrize("case", list(CELLS), ids=list(CELLS))
def test_printer_cells(case):
    type_, value, want = CELLS[case]
    now = 1767225610.0  # 2026-01-01T00:00:10Z
    assert ax.printer_cell(type_, value, now) == want


def test_version_priority_orders_as_kubernetes():
    names = ["v1alpha1", "foo", "v2beta1", "v1", "v1beta2", "v2", "v1beta1", "bar"]
    assert sorted(names, key=ax.version_priority) == ["v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1",
                                                     "bar", "foo"]


def test_crd_defaults():
    crd = {"spec": {"names": {"kind": "Widget", "plural": "widgets"}}}
    ax.default_crd(crd)
    assert crd["spec"]["names"]["singular"] == "widget" and crd["spec"]["names"]["listKind"] == "WidgetList"
    assert crd["spec"]["conversion"] == {"strategy": "None"}


def test_schema_list_fields():
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "proto"],
                  "items": {"type": "object", "properties": {
                      "hosts": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}},
        "plain": {"type": "array", "items": {"type": "string"}}}}}}
    lf = ax.schema_list_fields(schema)
    assert lf["spec.ports"].apply_keys == ("name", "proto")
    assert lf["spec.ports.hosts"].list_type == "set" and lf["spec.plain"].list_type == "atomic"


def test_custom_resources_of_a_crd():
    crd = {"metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Cluster",
                    "names": {"plural": "widgets", "kind": "Widget"},
                    "versions": [{"name": "v1beta1", "served": True, "storage": False},
                                 {"name": "v1", "served": True, "storage": True,
                                  "subresources": {"status": {}}},
                                 {"name": "v0", "served": False, "storage": False}]},
           "status": {"acceptedNames": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                                        "listKind": "WidgetList", "shortNames": ["wd"], "categories": ["all"]}}}
    rs = ax.custom_resources(crd)
    assert [r.version for r in rs] == ["v1", "v1beta1"]
    v1 = rs[0]
    assert (v1.namespaced, v1.short_names, v1.categories, v1.subresources) == (False, ("wd",), ("all",), ("status",))
    assert v1.extra["etcd_dir"] == "example.com/widgets" and v1.facts_key is v1
    assert [c["name"] for c in v1.printer.columns] == ["Name", "Age"]
