"""rbac.authorization.k8s.io/v1 and apps/v1 ControllerRevision: defaults, validation causes, table rows."""

from __future__ import annotations

import copy

import pytest

from controlplane.api import tables
from controlplane.api.defaults import apply_defaults
from controlplane.api.groups import apps
from controlplane.api.resources import by_kind
from controlplane.api.validation import invalid_message, validate

NOW = 1_700_000_000.0
T0 = "2023-11-14T22:13:20Z"
G = "rbac.authorization.k8s.io"


def obj(kind: str, namespaced: bool = True, **fields) -> dict:
    md = {"name": "x", "creationTimestamp": T0}
    if namespaced:
        md["namespace"] = "default"
    return {"apiVersion": f"{G}/v1", "kind": kind, "metadata": md, **fields}


def messages(kind: str, o: dict, old: dict | None = None) -> list[str]:
    return [f"{c['field']}: {c['message']}" for c in validate(kind, o, old)]


RULE = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}


def test_valid_roles():
    assert validate("Role", obj("Role", rules=[RULE])) == []
    assert validate("ClusterRole", obj("ClusterRole", False, rules=[
        RULE, {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}])) == []


@pytest.mark.parametrize("kind, rule, expect", [
    ("Role", {"apiGroups": [""], "resources": ["pods"]},
     "rules[0].verbs: Required value: verbs must contain at least one value"),
    ("Role", {"verbs": ["get"], "resources": ["pods"]},
     "rules[0].apiGroups: Required value: resource rules must supply at least one api group"),
    ("Role", {"verbs": ["get"], "apiGroups": [""]},
     "rules[0].resources: Required value: resource rules must supply at least one resource"),
    ("Role", {"verbs": ["get"], "nonResourceURLs": ["/x"]},
     'rules[0].nonResourceURLs: Invalid value: ["/x"]: namespaced rules cannot apply to non-resource URLs'),
    ("ClusterRole", {"verbs": ["get"], "nonResourceURLs": ["/x"], "resources": ["pods"]},
     'rules[0].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both regular resources and '
     'non-resource URLs'),
], ids=["no-verbs", "no-api-groups", "no-resources", "namespaced-url", "url-and-resources"])
def test_policy_rule_causes(kind, rule, expect):
    assert messages(kind, obj(kind, kind == "Role", rules=[rule])) == [expect]


@pytest.mark.parametrize("name, detail", [(".", "may not be '.'"), ("..", "may not be '..'"),
                                          ("a/b", "may not contain '/'"), ("a%b", "may not contain '%'")],
                         ids=["dot", "dotdot", "slash", "percent"])
def test_rbac_name_rule(name, detail):
    o = obj("Role", rules=[RULE])
    o["metadata"]["name"] = name
    assert messages("Role", o) == [f'metadata.name: Invalid value: "{name}": {detail}']
    o["metadata"]["name"] = "system:controller:x"  # colons are fine for RBAC names
    assert validate("Role", o) == []


def test_aggregation_rule():
    agg = {"clusterRoleSelectors": [{"matchLabels": {"rbac.example.com/aggregate-to-x": "true"}}]}
    assert validate("ClusterRole", obj("ClusterRole", False, aggregationRule=agg)) == []
    assert messages("ClusterRole", obj("ClusterRole", False, aggregationRule={})) == [
        "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if "
        "aggregationRule is non-nil"]


def binding(kind: str, ref_kind: str = "Role", subjects=None) -> dict:
    o = obj(kind, kind == "RoleBinding", roleRef={"kind": ref_kind, "name": "r"},
            subjects=subjects if subjects is not None else [{"kind": "User", "name": "alice"}])
    apply_defaults(kind, o)
    return o


def test_binding_defaults():
    o = binding("RoleBinding", subjects=[{"kind": "User", "name": "a"}, {"kind": "Group", "name": "g"},
                                         {"kind": "ServiceAccount", "name": "s", "namespace": "ns"}])
    assert o["roleRef"]["apiGroup"] == G
    assert [s.get("apiGroup") for s in o["subjects"]] == [G, G, None]
    assert validate("RoleBinding", o) == []


@pytest.mark.parametrize("kind, ref_kind, subjects, expect", [
    ("ClusterRoleBinding", "Role", [], 'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"'),
    ("RoleBinding", "Secret", [], 'roleRef.kind: Unsupported value: "Secret": supported values: "Role", '
                                  '"ClusterRole"'),
    ("RoleBinding", "Role", [{"kind": "Robot", "name": "r2"}],
     'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"'),
    ("RoleBinding", "Role", [{"kind": "User"}], "subjects[0].name: Required value"),
    ("ClusterRoleBinding", "ClusterRole", [{"kind": "ServiceAccount", "name": "sa"}],
     "subjects[0].namespace: Required value"),
    ("RoleBinding", "Role", [{"kind": "ServiceAccount", "name": "sa", "apiGroup": "x"}],
     'subjects[0].apiGroup: Unsupported value: "x": supported values: ""'),
    ("RoleBinding", "Role", [{"kind": "User", "name": "u", "apiGroup": "x"}],
     f'subjects[0].apiGroup: Unsupported value: "x": supported values: "{G}"'),
    ("RoleBinding", "Role", [{"kind": "ServiceAccount", "name": "Bad_Name"}],
     'subjects[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case '
     "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
     "'example.com', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
], ids=["cluster-binding-to-role", "unknown-role-kind", "unknown-subject-kind", "subject-without-name",
        "cluster-sa-without-namespace", "sa-api-group", "user-api-group", "sa-name"])
def test_binding_causes(kind, ref_kind, subjects, expect):
    assert expect in messages(kind, binding(kind, ref_kind, subjects))


def test_role_ref_is_immutable_and_the_message_is_qualified():
    old = binding("RoleBinding")
    new = copy.deepcopy(old)
    new["roleRef"]["name"] = "other"
    causes = validate("RoleBinding", new, old)
    assert [c["field"] for c in causes] == ["roleRef"] and causes[0]["message"].endswith("cannot change roleRef")
    assert invalid_message("RoleBinding", "x", causes).startswith(f'RoleBinding.{G} "x" is invalid: roleRef: ')
    new = copy.deepcopy(old)
    new["subjects"].append({"kind": "Group", "name": "g", "apiGroup": G})
    assert validate("RoleBinding", new, old) == []


def test_role_tables_are_the_default_table_convertor():
    cols = tables.column_definitions("Role")
    assert [(c["name"], c["type"]) for c in cols] == [("Name", "string"), ("Created At", "date")]
    assert tables.table_row("ClusterRole", obj("ClusterRole", False), NOW)["cells"] == ["x", T0]


def test_binding_table_rows():
    o = binding("RoleBinding", subjects=[{"kind": "User", "name": "a"}, {"kind": "User", "name": "b"},
                                         {"kind": "Group", "name": "g"},
                                         {"kind": "ServiceAccount", "name": "s", "namespace": "ns"}])
    cols = tables.column_definitions("RoleBinding")
    assert [c["name"] for c in cols] == ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"]
    assert [c["priority"] for c in cols] == [0, 0, 0, 1, 1, 1]
    assert cols[3]["description"] == "Users in the roleBinding"
    assert tables.table_row("RoleBinding", o, NOW)["cells"] == ["x", "Role/r", "0s", "a, b", "g", "ns:s"]
    assert tables.column_definitions("ClusterRoleBinding")[4]["description"] == "Groups in the clusterRoleBinding"


def test_rbac_entries():
    for kind, namespaced in (("Role", True), ("ClusterRole", False), ("RoleBinding", True),
                             ("ClusterRoleBinding", False)):
        r = by_kind(kind)
        assert (r.group, r.version, r.namespaced, r.short_names, r.categories) == (G, "v1", namespaced, (), ())
        assert "status" not in r.subresources


# --------------------------------------------------------------------------- ControllerRevision

def revision(**fields) -> dict:
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": "web-5d8f", "namespace": "default", "creationTimestamp": T0,
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "web",
                                              "uid": "u", "controller": True}]},
            **fields}


def test_controller_revision_validation():
    assert validate("ControllerRevision", revision(data={"spec": {}}, revision=2)) == []
    assert messages("ControllerRevision", revision(revision=-1)) == [
        "data: Required value: data is mandatory", "revision: Invalid value: -1: must be greater than or equal to 0"]
    old = revision(data={"a": 1}, revision=1)
    new = revision(data={"a": 2}, revision=1)
    assert messages("ControllerRevision", new, old) == ['data: Invalid value: {"a":2}: field is immutable']


def test_controller_revision_table():
    cols = tables.column_definitions("ControllerRevision")
    assert [c["name"] for c in cols] == ["Name", "Controller", "Revision", "Age"]
    assert tables.table_row("ControllerRevision", revision(data={}, revision=3), NOW)["cells"] == [
        "web-5d8f", "daemonset.apps/web", 3, "0s"]
    orphan = revision(data={}, revision=1)
    orphan["metadata"]["ownerReferences"] = []
    assert apps.controller_of(orphan) == "<none>"
