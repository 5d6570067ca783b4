"""The resource registry as the single source of per-kind facts (controlplane.api.registry,
controlplane.api.builtin, controlplane.api.resources): add/remove/subscribe/generation,
lookups, a kind added at run time getting the generic behaviour everywhere, and every
built-in entry carrying the facts it should."""

from __future__ import annotations

import copy

import pytest

from components.apiserver import strategy
from controlplane.api import decoder, schemas
from controlplane.api.builtin import BUILTIN
from controlplane.api.defaults import apply_defaults
from controlplane.api.registry import DEFAULT_STRATEGY, Registry, Resource
from controlplane.api.resources import REGISTRY
from controlplane.api.tables import column_definitions, table, table_row
from controlplane.api.validation import validate
from controlplane.apitime import format_time, parse_time
from controlplane.selectors import object_fields, parse_field_selector, selectable_fields

NOW = parse_time("2024-01-10T12:00:00Z")

WIDGETS = Resource("example.com", "v1", "widgets", "widget", "Widget", True, ("wd",), ("status",))
GADGETS = Resource("example.com", "v1", "gadgets", "gadget", "Gadget", False)


@pytest.fixture
def runtime_kinds():
    """WIDGETS (namespaced, with a status subresource) and GADGETS (cluster-scoped) served
    by the process registry for one test, as a CRD would be; removed afterwards."""
    REGISTRY.add(WIDGETS)
    REGISTRY.add(GADGETS)
    yield
    REGISTRY.remove("example.com", "v1", "widgets")
    REGISTRY.remove("example.com", "v1", "gadgets")


def widget(name="w1", ns="default", **extra):
    return {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": ns, "creationTimestamp": format_time(NOW - 200)}, **extra}


# --------------------------------------------------------------------------- the Registry type

def test_add_remove_subscribe_generation():
    reg = Registry(BUILTIN)
    seen: list[tuple[str, str]] = []
    unsubscribe = reg.subscribe(lambda t, r: seen.append((t, r.plural)))
    assert reg.generation == 0 and len(reg) == len(BUILTIN)
    reg.add(WIDGETS)
    assert WIDGETS in reg and reg.generation == 1
    assert reg.remove("example.com", "v1", "widgets") is WIDGETS
    assert WIDGETS not in reg and reg.generation == 2
    assert reg.remove("example.com", "v1", "widgets") is None  # nothing to remove: no event
    assert reg.generation == 2
    unsubscribe()
    reg.add(WIDGETS)
    assert seen == [("ADDED", "widgets"), ("DELETED", "widgets")]
    assert reg.generation == 3
    unsubscribe()  # twice is harmless


def test_add_replaces_the_entry_at_the_same_group_version_plural():
    reg = Registry()
    reg.add(WIDGETS)
    v2 = Resource("example.com", "v1", "widgets", "widget", "Widget", False)
    reg.add(v2)
    assert len(reg) == 1 and reg.lookup("example.com", "v1", "widgets") is v2
    assert reg.by_kind("Widget") is v2


def test_lookup_by_group_version_plural():
    reg = Registry(BUILTIN)
    assert reg.lookup("apps", "v1", "deployments").kind == "Deployment"
    assert reg.lookup("", "v1", "pods").kind == "Pod"
    assert reg.lookup("apps", "v2", "deployments") is None
    assert reg.lookup("", "v1", "deployments") is None


def test_get_by_plural_and_group():
    reg = Registry(BUILTIN)
    assert reg.get("deployments", "apps").kind == "Deployment"
    assert reg.get("events").group == "" and reg.get("events", "events.k8s.io").group == "events.k8s.io"
    with pytest.raises(KeyError):
        reg.get("deployments")


def test_lookup_by_kind_and_version():
    reg = Registry(BUILTIN)
    assert reg.by_kind("Event").api_version == "v1"  # the first registered Event
    assert reg.by_kind("Event", "events.k8s.io/v1").group == "events.k8s.io"
    assert reg.of_kind("Pod") is reg.get("pods")
    assert reg.of_kind("Widget") is None
    with pytest.raises(KeyError):
        reg.by_kind("Widget")
    with pytest.raises(KeyError):
        reg.by_kind("Pod", "apps/v1")
    reg.add(WIDGETS)
    assert reg.of_kind("Widget") is WIDGETS and reg.by_kind("Widget", "example.com/v1") is WIDGETS
    reg.remove("example.com", "v1", "widgets")
    assert reg.of_kind("Widget") is None


# --------------------------------------------------------------------------- a kind added at run time

def test_runtime_kind_table_has_name_and_age(runtime_kinds):
    t = table("Widget", [widget()], "7", now=NOW)
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "Age"]
    assert t["rows"][0]["cells"] == ["w1", "3m20s"]
    assert t["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_runtime_kind_validated_for_object_meta_only(runtime_kinds):
    assert validate("Widget", widget(spec={"anything": [1, 2]})) == []
    assert [c["field"] for c in validate("Widget", widget(name="Bad_Name"))] == ["metadata.name"]
    assert [c["field"] for c in validate("Widget", widget(ns=""))] == ["metadata.namespace"]
    # the cluster-scoped runtime kind forbids a namespace, as its scope says
    gadget = {"metadata": {"name": "g1", "namespace": "default"}}
    assert [(c["field"], c["reason"]) for c in validate("Gadget", gadget)] == [
        ("metadata.namespace", "FieldValueForbidden")]
    assert validate("Gadget", {"metadata": {"name": "g1"}}) == []


def test_runtime_kind_not_defaulted(runtime_kinds):
    obj = widget(spec={"replicas": None})
    before = copy.deepcopy(obj)
    apply_defaults("Widget", obj)
    assert obj == before


def test_runtime_kind_field_selectable_by_name_and_namespace(runtime_kinds):
    assert selectable_fields("Widget") == ("metadata.name", "metadata.namespace")
    assert object_fields("Widget", widget()) == {"metadata.name": "w1", "metadata.namespace": "default"}
    assert parse_field_selector("metadata.name=w1").matches(object_fields("Widget", widget()))
    with pytest.raises(ValueError, match="field label not supported: status.phase"):
        parse_field_selector("status.phase=Running").check("Widget")


def test_runtime_kind_generic_strategy_with_status_subresource(runtime_kinds):
    assert strategy.kind_strategy("Widget") is DEFAULT_STRATEGY
    obj = widget(spec={"size": 1}, status={"ready": True})
    strategy.prepare_for_create("Widget", obj, "default", True)
    assert obj["status"] == {"ready": True}  # no PrepareForCreate status reset
    assert "generation" not in obj["metadata"]
    old = copy.deepcopy(obj)
    new = copy.deepcopy(obj)
    new["spec"], new["status"] = {"size": 2}, {"ready": False}
    strategy.prepare_for_update("Widget", new, old)
    assert new["spec"] == {"size": 2} and new["status"] == {"ready": True}  # status kept
    assert strategy.resets_status("Widget") and not strategy.resets_status("Gadget")
    assert strategy.grace_period("Widget", obj, None) == 0


def test_runtime_kind_without_schema_has_no_typed_decoding(runtime_kinds):
    assert schemas.kind_fields("Widget") is None
    assert decoder.kind_spec("Widget") is None
    assert schemas.kind_schema("Widget", "example.com/v1")["properties"].keys() == {"apiVersion", "kind", "metadata"}


def test_removed_runtime_kind_falls_back_like_an_unknown_kind():
    REGISTRY.add(GADGETS)
    assert validate("Gadget", {"metadata": {"name": "g1"}}) == []
    REGISTRY.remove("example.com", "v1", "gadgets")
    # not served any more: counted as namespaced, as any unknown kind
    assert [c["field"] for c in validate("Gadget", {"metadata": {"name": "g1"}})] == ["metadata.namespace"]


def test_process_registry_tells_subscribers(runtime_kinds):
    seen: list[tuple[str, str]] = []
    unsubscribe = REGISTRY.subscribe(lambda t, r: seen.append((t, r.kind)))
    try:
        gen = REGISTRY.generation
        REGISTRY.remove("example.com", "v1", "gadgets")
        REGISTRY.add(GADGETS)
        assert seen == [("DELETED", "Gadget"), ("ADDED", "Gadget")]
        assert REGISTRY.generation == gen + 2
    finally:
        unsubscribe()


def test_unknown_kind_falls_back():
    obj = {"metadata": {"name": "x", "namespace": "default", "creationTimestamp": format_time(NOW - 5)}}
    assert [c["name"] for c in column_definitions("NoSuchKind")] == ["Name", "Age"]
    assert table_row("NoSuchKind", obj, NOW)["cells"] == ["x", "5s"]
    assert validate("NoSuchKind", obj) == []
    before = copy.deepcopy(obj)
    apply_defaults("NoSuchKind", obj)
    assert obj == before
    assert selectable_fields("NoSuchKind") == ("metadata.name", "metadata.namespace")
    assert strategy.kind_strategy("NoSuchKind") is DEFAULT_STRATEGY
    assert not strategy.resets_status("NoSuchKind") and not strategy.tracks_generation("NoSuchKind")
    assert schemas.kind_fields("NoSuchKind") is None


# --------------------------------------------------------------------------- every built-in entry

BUILTIN_IDS = [f"{r.plural}.{r.group or 'core'}" for r in BUILTIN]


def minimal(r: Resource) -> dict:
    meta = {"name": "x", "creationTimestamp": format_time(NOW - 60)}
    if r.namespaced:
        meta["namespace"] = "default"
    return {"apiVersion": r.api_version, "kind": r.kind, "metadata": meta}


def test_builtin_is_what_the_process_registry_starts_with():
    assert tuple(REGISTRY)[:len(BUILTIN)] == BUILTIN


WITH_STATUS = [r for r in BUILTIN if r.status_subresource]
#: kinds whose main-resource PrepareForUpdate also keeps the stored spec (csrStrategy: the request is immutable)
SPEC_KEPT = {"CertificateSigningRequest"}


@pytest.mark.parametrize("r", WITH_STATUS, ids=[f"{r.plural}.{r.group or 'core'}" for r in WITH_STATUS])
def test_builtin_status_subresource_strategy_resets_status_and_spec(r):
    old = {**minimal(r), "spec": {"a": 1}, "status": {"s": "stored"}}
    new = {**minimal(r), "spec": {"a": 2}, "status": {"s": "sent"}}
    strategy.prepare_for_update(r.kind, new, old)
    assert new["status"] == {"s": "stored"} and new["spec"] == ({"a": 1} if r.kind in SPEC_KEPT else {"a": 2})
    new = {**minimal(r), "spec": {"a": 2}, "status": {"s": "sent"}}
    strategy.prepare_for_update(r.kind, new, old, "status")
    assert new["spec"] == {"a": 1} and new["status"] == {"s": "sent"}
    assert strategy.resets_status(r.kind)


@pytest.mark.parametrize("r", BUILTIN, ids=BUILTIN_IDS)
def test_builtin_rows_have_a_cell_per_column_on_a_minimal_object(r):
    cols = column_definitions(r.kind)
    assert cols[0]["name"] in ("Name", "Last Seen")
    for obj in (minimal(r), {}):
        cells = table_row(r.kind, obj, NOW)["cells"]
        assert len(cells) == len(cols), (r.kind, cells)
    if r.printer is not None:
        assert len(r.printer.row(minimal(r), NOW)[0]) == len(r.printer.columns)
        assert all(c["description"] for c in r.printer.columns)


@pytest.mark.parametrize("r", BUILTIN, ids=BUILTIN_IDS)
def test_builtin_schema_resolves(r):
    assert r.schema is not None and r.schema.description
    for typ, desc in r.schema.fields.values():
        decoder._spec(typ)  # every referenced type is known (raises KeyError otherwise)
        assert desc
    assert decoder.kind_spec(r.kind)[0] == "struct"
    s = schemas.kind_schema(r.kind, r.api_version)
    assert s["description"] == r.schema.description
    assert set(s["properties"]) == {"apiVersion", "kind", "metadata", *r.schema.fields}
    refs = [p["allOf"][0]["$ref"].rsplit(".", 1)[-1] for p in s["properties"].values() if "allOf" in p]
    assert all(t in schemas.struct_types() for t in refs)  # shared types and the group modules' own


@pytest.mark.parametrize("r", BUILTIN, ids=BUILTIN_IDS)
def test_builtin_validates_and_defaults_without_raising(r):
    obj = minimal(r)
    apply_defaults(r.kind, obj)
    assert isinstance(validate(r.kind, obj), list)
    assert isinstance(validate(r.kind, obj, old=copy.deepcopy(obj)), list)


@pytest.mark.parametrize("r", BUILTIN, ids=BUILTIN_IDS)
def test_builtin_selectable_fields_extract_strings(r):
    fields = object_fields(r.kind, minimal(r))
    assert set(fields) == set(selectable_fields(r.kind))
    assert all(isinstance(v, str) for v in fields.values())
    assert set(r.selectable_fields) <= set(fields)


REVIEW_KINDS = ("SubjectAccessReview", "SelfSubjectAccessReview", "LocalSubjectAccessReview",
                "SelfSubjectRulesReview", "TokenReview", "SelfSubjectReview")
#: the kinds whose facts are pinned here: those declared in builtin.py itself and the batch,
#: rbac, apps, autoscaling, review and admission-policy groups (the other API group modules' kinds have their own tests)
HOUSE_KINDS = {"Namespace", "Node", "Pod", "Binding", "Event", "ReplicationController", "Service", "Endpoints",
               "ConfigMap", "Secret", "ServiceAccount", "Deployment", "ReplicaSet", "DaemonSet", "StatefulSet",
               "Lease", "Job", "CronJob", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding",
               "ControllerRevision", "HorizontalPodAutoscaler", *REVIEW_KINDS,
               "LimitRange", "ResourceQuota", "PriorityClass", "RuntimeClass", "PodDisruptionBudget"}


def test_builtin_facts_of_the_kinds_that_have_them():
    by = {r.kind: r for r in BUILTIN if r.kind in HOUSE_KINDS}
    assert {k for k, r in by.items() if r.strategy.tracks_generation} == {
        "Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet", "Job", "CronJob",
        "PodDisruptionBudget"}
    assert {k for k, r in by.items() if r.strategy.delete_forbidden is not None} == {"PriorityClass"}
    assert {k for k, r in by.items() if r.strategy.grace_period is not None} == {"Pod"}
    assert {k for k, r in by.items() if r.printer is None} == {"Binding", *REVIEW_KINDS}
    assert {k for k, r in by.items() if r.validate is not None} == {
        "Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ReplicationController", "Node",
        "Service", "ConfigMap", "Secret", "Job", "CronJob", "Role", "ClusterRole", "RoleBinding",
        "ClusterRoleBinding", "ControllerRevision", "HorizontalPodAutoscaler", "SubjectAccessReview",
        "SelfSubjectAccessReview", "LocalSubjectAccessReview", "LimitRange", "ResourceQuota", "PriorityClass",
        "RuntimeClass", "PodDisruptionBudget"}
    assert {k for k, r in by.items() if r.default is not None} == {
        "Pod", "Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet", "Namespace",
        "Service", "Secret", "Node", "Job", "CronJob", "RoleBinding", "ClusterRoleBinding",
        "HorizontalPodAutoscaler", "LimitRange", "PriorityClass"}
    assert {k for k, r in by.items() if r.selectable_fields} == {
        "Pod", "Event", "Node", "Namespace", "ReplicaSet", "ReplicationController", "Secret", "Job"}
    assert {k for k, r in by.items() if r.name_rule is not None} == {
        "Namespace", "Service", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}
    assert {k for k, r in by.items() if not r.stored} == set(REVIEW_KINDS)
    # the two Event versions share one set of facts
    core, events = REGISTRY.get("events"), REGISTRY.get("events", "events.k8s.io")
    assert core.printer is events.printer and core.schema is events.schema
    assert core.selectable_fields is events.selectable_fields


def test_apiextensions_facts():
    crd = REGISTRY.get("customresourcedefinitions", "apiextensions.k8s.io")
    assert crd in BUILTIN and not crd.namespaced
    assert (crd.short_names, crd.subresources, crd.categories) == (("crd", "crds"), ("status",), ("api-extensions",))
    assert crd.strategy.tracks_generation and crd.strategy.prepare_create is not None
    assert crd.validate is not None and crd.default is not None and crd.printer is not None
    assert [c["name"] for c in crd.printer.columns] == ["Name", "Created At"]


def test_builtin_create_strategies():
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}],
                                               "schedulingGates": [{"name": "g"}]}, "status": {"phase": "Running"}}
    strategy.prepare_for_create("Pod", pod, "default", True)
    assert pod["status"]["phase"] == "Pending" and pod["status"]["qosClass"] == "BestEffort"
    assert pod["status"]["conditions"][0]["reason"] == "SchedulingGated"
    assert "generation" not in pod["metadata"]
    dep = {"metadata": {"name": "d"}, "spec": {}, "status": {"replicas": 3}}
    strategy.prepare_for_create("Deployment", dep, "default", True)
    assert dep["status"] == {} and dep["metadata"]["generation"] == 1
    ns = {"metadata": {"name": "n"}}
    strategy.prepare_for_create("Namespace", ns, None, False)
    assert ns["status"] == {"phase": "Active"} and ns["spec"] == {"finalizers": ["kubernetes"]}
    cm = {"metadata": {"name": "c"}, "data": {"a": "b"}}
    strategy.prepare_for_create("ConfigMap", cm, "default", True)
    assert "status" not in cm and "generation" not in cm["metadata"]


def test_builtin_delete_strategies():
    bound = {"spec": {"nodeName": "n1", "terminationGracePeriodSeconds": 12}, "status": {"phase": "Running"}}
    assert strategy.grace_period("Pod", bound, None) == 12
    assert strategy.grace_period("Pod", bound, -5) == 1
    assert strategy.grace_period("Pod", {"spec": {}}, None) == 0
    assert strategy.grace_period("ConfigMap", bound, 30) == 0
    deleting = {"metadata": {"deletionTimestamp": "2024-01-10T12:00:00Z"}}
    assert strategy.should_delete_during_update("ConfigMap", {"metadata": {}}, deleting)
    assert not strategy.should_delete_during_update(
        "Namespace", {"metadata": {}, "spec": {"finalizers": ["kubernetes"]}}, deleting)
    assert strategy.should_delete_during_update("Namespace", {"metadata": {}, "spec": {}}, deleting)


# --------------------------------------------------------------------------- layering

LAYERED = ["controlplane.api.registry", "controlplane.labels", "controlplane.api.printers",
           "controlplane.api.validators", "controlplane.api.defaulters", "controlplane.api.strategies",
           "controlplane.api.builtin", "controlplane.api.resources", "controlplane.api.tables",
           "controlplane.api.validation", "controlplane.api.defaults", "controlplane.api.schemas",
           "controlplane.api.decoder", "controlplane.selectors"]


@pytest.mark.parametrize("module", LAYERED)
def test_module_imports_alone(module):
    """Each module of the registry's layers imports in a fresh interpreter (no circle
    that only works in one import order)."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_no_import_cycle_in_controlplane():
    """No module of controlplane/ reaches itself through its imports (function-level ones
    included): registry ← per-kind rules ← builtin ← resources ← kind-keyed entry points."""
    grimp = pytest.importorskip("grimp")
    g = grimp.build_graph("controlplane", include_external_packages=False)
    cycles = sorted((a, b) for a in g.modules for b in g.find_modules_directly_imported_by(a)
                    if g.chain_exists(importer=b, imported=a))
    assert cycles == []
    assert not g.chain_exists(importer="controlplane.api.builtin", imported="controlplane.api.resources")
    assert not g.chain_exists(importer="controlplane.api.registry", imported="controlplane.api.builtin")
