"""managedFields of Update operations (create / PUT / PATCH / subresources), as Kubernetes
records them, and server-side apply conflicts with Update owners.

Spec sources: ``staging/src/k8s.io/apimachinery/pkg/util/managedfields/internal/``
(structuredmerge.go Update, managedfieldsupdater.go, stripmeta.go, managedfields.go
BuildManagerIdentifier / sortEncodedManagedFields, conflict.go printManager, fieldmanager.go
decodeLiveOrNew), ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go``
(managerOrUserAgent / prefixFromUserAgent) and structured-merge-diff ``merge/update.go``.
"""

from __future__ import annotations

import copy
import re

import pytest

from components.apiserver import fieldmanager as fm
from controlplane.storage import testing
from tests.support.apiserver import new_ns

RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
KUBECTL_CREATE = {"User-Agent": "kubectl-create/v1.32.4 (linux/amd64) kubernetes/59526cd"}
#: what kubectl v1.32 sends with ``kubectl scale`` (no ?fieldManager=: kubectl/pkg/cmd/scale/scale.go)
KUBECTL_SCALE = {"User-Agent": "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07"}
MERGE = {"Content-Type": "application/merge-patch+json"}


def deploy(replicas=1, image="nginx:1.27"):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "nginx", "image": image}]}}}}


def entries(obj):
    return {(e["manager"], e["operation"], e.get("subresource", "")): e
            for e in obj["metadata"].get("managedFields") or []}


def paths(entry):
    return fm.decode(entry["fieldsV1"])


# ------------------------------------------------------------------ pure functions

def test_manager_name_from_user_agent_or_field_manager():
    """prefixFromUserAgent: the part before the first "/", printable only, <= 128 bytes;
    ``?fieldManager=`` wins (handlers/create.go managerOrUserAgent)."""
    assert fm.manager_name(None, KUBECTL_CREATE["User-Agent"]) == "kubectl-create"
    assert fm.manager_name("", "kube-scheduler/v1.32.4 (linux/amd64) kubernetes/abc/leader-election") \
        == "kube-scheduler"
    assert fm.manager_name("mine", "kubectl/v1.32.4") == "mine"
    assert fm.manager_name(None, "a\tb\x00c/1") == "abc"
    assert fm.manager_name(None, "x" * 200) == "x" * 128
    assert fm.manager_name(None, "é" * 100) == "é" * 64          # 2 bytes each: 128 bytes
    assert fm.manager_name(None, None) == ""


def test_create_owns_every_set_field_but_server_metadata_and_status():
    """A create gives its manager one Update entry with every field of the object, minus
    apiVersion/kind, the stripped metadata (stripmeta.go) and status (reset fields)."""
    obj = deploy()
    obj["metadata"].update({"namespace": "d", "uid": "u", "resourceVersion": "5", "generation": 1,
                            "creationTimestamp": "2025-01-01T00:00:00Z", "annotations": {"a": "b"}})
    obj["status"] = {"replicas": 0}
    fm.record_create("Deployment", obj, "kubectl-create", "apps/v1", "2025-01-01T00:00:00Z", True)
    [e] = obj["metadata"]["managedFields"]
    assert list(e) == ["manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1"]
    assert (e["manager"], e["operation"], e["apiVersion"], e["fieldsType"]) == \
        ("kubectl-create", "Update", "apps/v1", "FieldsV1")
    c = ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"nginx"}')
    assert paths(e) == {("f:metadata", "f:labels", "f:app"), ("f:metadata", "f:annotations", "f:a"),
                        ("f:spec", "f:replicas"), ("f:spec", "f:selector", "f:matchLabels", "f:app"),
                        ("f:spec", "f:template", "f:metadata", "f:labels", "f:app"),
                        c + (".",), c + ("f:name",), c + ("f:image",)}
    # a kind without a status subresource owns its whole body
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}
    fm.record_create("ConfigMap", cm, "m", "v1", "t", False)
    assert paths(cm["metadata"]["managedFields"][0]) == {("f:data", "f:k")}


def test_update_takes_changed_fields_from_everyone_and_removal_leaves_every_set():
    """merge.Updater.Update: the writer gets Modified ∪ Added, which leave every other set
    (Update and Apply entries alike, no conflict); Removed leaves all sets; empty entries
    are dropped; the writer's time moves only when it took fields."""
    cur = fm.apply("Deployment", {}, deploy(), "kubectl", "apps/v1", "2025-01-01T00:00:00Z", False)
    cur["metadata"]["labels"]["tier"] = "x"
    fm.record_update("Deployment", deploy(), cur, "labeler", "apps/v1", "2025-01-01T00:00:01Z")
    old = copy.deepcopy(cur)
    new = copy.deepcopy(cur)
    new["spec"]["replicas"] = 3                                  # owned by the applier: taken
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
    del new["metadata"]["labels"]["tier"]                       # the labeler's only field: gone
    new["spec"]["template"]["spec"]["containers"].append({"name": "side", "image": "busybox"})
    fm.record_update("Deployment", old, new, "editor", "apps/v1", "2025-01-01T00:00:02Z")
    got = entries(new)
    assert set(got) == {("kubectl", "Apply", ""), ("editor", "Update", "")}   # labeler dropped
    side = ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"side"}')
    nginx = ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"nginx"}')
    assert paths(got["editor", "Update", ""]) == {("f:spec", "f:replicas"), nginx + ("f:image",),
                                                  side + (".",), side + ("f:name",), side + ("f:image",)}
    applier = paths(got["kubectl", "Apply", ""])
    assert ("f:spec", "f:replicas") not in applier and nginx + ("f:image",) not in applier
    assert nginx + ("f:name",) in applier and got["kubectl", "Apply", ""]["time"] == "2025-01-01T00:00:00Z"
    # Apply entries sort first, then Update entries by time (sortEncodedManagedFields)
    assert [e["manager"] for e in new["metadata"]["managedFields"]] == ["kubectl", "editor"]

    # a removal only: the remover records nothing, the owner loses the field, no time moves
    again = copy.deepcopy(new)
    again["spec"]["template"]["spec"]["containers"].pop()
    fm.record_update("Deployment", new, again, "pruner", "apps/v1", "2025-01-01T00:00:09Z")
    got = entries(again)
    assert set(got) == {("kubectl", "Apply", ""), ("editor", "Update", "")}
    assert not any(p[:5] == side for p in paths(got["editor", "Update", ""]))
    assert got["editor", "Update", ""]["time"] == "2025-01-01T00:00:02Z"


def test_unchanged_write_leaves_entries_alone():
    """A write that changes no owned field leaves managedFields as they are (the same
    list), so the store still sees a no-op; a status-only change touches only status paths."""
    obj = deploy()
    fm.record_create("Deployment", obj, "kubectl-create", "apps/v1", "t0", True)
    same = copy.deepcopy(obj)
    mf = same["metadata"]["managedFields"]
    same["metadata"]["resourceVersion"] = "9"                    # stripped: not a field
    fm.record_update("Deployment", obj, same, "other", "apps/v1", "t1")
    assert same["metadata"]["managedFields"] is mf
    changed, removed = fm.diff_fields("Deployment", obj, {**obj, "status": {"replicas": 1}}, "status", True)
    assert (changed, removed) == ({"f:status": {"f:replicas": {}}}, None)
    # the main resource of a kind with /status never owns status
    assert fm.diff_fields("Deployment", obj, {**obj, "status": {"replicas": 1}}, "", True) == (None, None)


def fields_entry(fields: object, operation: str = "Update") -> list:
    return [{"manager": "m", "operation": operation, "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": fields}]


@pytest.mark.parametrize("fields, ok", [
    ({"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"k:{\"name\":\"c\"}": {".": {}, "f:image": {}}}}, True),
    ({"f:spec": {"f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}}}}}, True),
    ({"f:spec": {"f:args": {"i:0": {}, "v:\"x\"": {}}}}, True),
    ({}, True),
    ({"f:spec": {"k:[1]": {}}}, False),
    ({"f:spec": {"i:1.5": {}}}, False),
    ({"f:spec": {"k:{\"a\":": {}}}, False),
    ({"f:spec": {"x:y": {}}}, False),
    ({"f:spec": {"f:replicas": 3}}, False),
    ({"f:spec": []}, False),
    ("f:spec", False),
], ids=["field-and-keyed-item", "multi-key-item", "index-and-value", "empty", "key-not-an-object",
        "index-not-an-int", "key-not-json", "unknown-prefix", "leaf-not-an-object", "node-a-list",
        "tree-a-string"])
def test_valid_entries_reads_fieldsv1_segments(fields, ok):
    """Entries whose fieldsV1 keys structured-merge-diff cannot read are refused (the stored
    ones are kept: fieldmanager.go decodeLiveOrNew); asked twice, the same answer (the segment
    memo)."""
    assert fm.valid_entries(fields_entry(fields)) is ok
    assert fm.valid_entries(fields_entry(fields)) is ok


def test_valid_segment_memo_is_bounded(monkeypatch):
    """The segment memo keeps short segments only and starts afresh when full; answers are
    the same either way."""
    monkeypatch.setattr(fm, "_VALID_SEGMENTS", {})
    monkeypatch.setattr(fm, "_VALID_SEGMENTS_MAX", 2)
    long_key = 'k:{"name":"' + "x" * 300 + '"}'
    assert fm._valid_segment(long_key) is True
    assert long_key not in fm._VALID_SEGMENTS
    for seg, ok in (('k:{"a":1}', True), ("i:x", False), ('v:"s"', True), ('k:{"a":1}', True)):
        assert fm._valid_segment(seg) is ok
        assert len(fm._VALID_SEGMENTS) <= 2


@pytest.mark.parametrize("value", [None, {}, [{}], [{"operation": "Patch", "fieldsV1": {}}]],
                         ids=["absent", "not-a-list", "no-operation", "unknown-operation"])
def test_valid_entries_needs_a_list_of_operations(value):
    """managedFields must be a list of entries with an Apply or Update operation."""
    assert fm.valid_entries(value) is False


def test_manager_label_never_prints_the_time():
    """printManager formats the manager identifier, which has no time (BuildManagerIdentifier)."""
    e = fm.update_entry("kubectl-scale", "apps/v1", "2025-01-01T00:00:00Z", {}, "scale")
    assert fm.manager_label(e) == '"kubectl-scale" with subresource "scale" using apps/v1'
    assert fm.manager_label({"manager": "kubectl", "operation": "Apply"}) == '"kubectl"'


# ------------------------------------------------------------------ over HTTP

pytestmark_http = pytest.mark.skipif(not testing.available(), reason="needs /usr/bin/etcd")


@pytestmark_http
async def test_create_scale_then_apply_conflicts_with_the_scaler(api):
    """kubectl create deployment (``?fieldManager=kubectl-create``) → its Update entry;
    kubectl scale (PATCH /scale, manager "kubectl" from the User-Agent) takes spec.replicas
    in an entry with subresource "scale"; an apply by "kubectl" of another replica count
    conflicts with that Update entry (another manager identifier: BuildManagerIdentifier) →
    409 'conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas';
    with force=true the applier takes it."""
    ns = await new_ns(api)
    base = f"/apis/apps/v1/namespaces/{ns}/deployments"
    r = await api.post(base + "?fieldManager=kubectl-create", json=deploy(), headers=KUBECTL_SCALE)
    created = await r.json()
    assert r.status == 201, created
    [e] = created["metadata"]["managedFields"]
    assert (e["manager"], e["operation"], e["apiVersion"], e["fieldsType"]) == \
        ("kubectl-create", "Update", "apps/v1", "FieldsV1")
    assert RFC3339.match(e["time"]) and "subresource" not in e
    assert e["fieldsV1"]["f:spec"]["f:replicas"] == {} and "f:status" not in e["fieldsV1"]
    assert set(e["fieldsV1"]["f:metadata"]) == {"f:labels"}                 # no name/uid/...
    # the defaulted fields belong to the creator too (the decoded object is defaulted)
    assert "f:strategy" in e["fieldsV1"]["f:spec"]

    r = await api.patch(f"{base}/web/scale", json={"spec": {"replicas": 3}}, headers={**MERGE, **KUBECTL_SCALE})
    assert r.status == 200 and (await r.json())["spec"]["replicas"] == 3
    scaled = await (await api.get(f"{base}/web")).json()
    got = entries(scaled)
    assert set(got) == {("kubectl-create", "Update", ""), ("kubectl", "Update", "scale")}
    assert got["kubectl", "Update", "scale"]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in got["kubectl-create", "Update", ""]["fieldsV1"]["f:spec"]

    apply_ct = {"Content-Type": "application/apply-patch+yaml"}
    r = await api.patch(f"{base}/web?fieldManager=kubectl", json=deploy(replicas=2), headers=apply_ct)
    body = await r.json()
    assert r.status == 409 and body["reason"] == "Conflict"
    assert body["message"] == ('Apply failed with 1 conflict: conflict with "kubectl" with subresource '
                               '"scale" using apps/v1: .spec.replicas')
    assert body["details"]["causes"] == [{"reason": "FieldManagerConflict", "field": ".spec.replicas",
                                          "message": 'conflict with "kubectl" with subresource "scale" '
                                                     'using apps/v1'}]
    # the same value as the creator's fields: co-owned, no conflict on them
    r = await api.patch(f"{base}/web?fieldManager=kubectl&force=true", json=deploy(replicas=2), headers=apply_ct)
    forced = await r.json()
    assert r.status == 200 and forced["spec"]["replicas"] == 2
    got = entries(forced)
    assert ("kubectl", "Update", "scale") not in got                       # its only field taken
    assert ("f:spec", "f:replicas") in paths(got["kubectl", "Apply", ""])
    assert [e["operation"] for e in forced["metadata"]["managedFields"]] == ["Apply", "Update"]


@pytestmark_http
async def test_status_patch_owns_status_only_and_no_op_writes_nothing(api):
    """A pods/status patch by the kubelet records an entry with subresource "status" and
    status paths only (conditions keyed by type); the same patch again is a no-op (same
    resourceVersion, same entries); a binding records nothing."""
    ns = await new_ns(api)
    pods = f"/api/v1/namespaces/{ns}/pods"
    r = await api.post(pods, json={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                   "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}},
                       headers={"User-Agent": "kube-controller-manager/v1.32.4"})
    assert r.status == 201
    r = await api.post(f"{pods}/p/binding", json={"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
                                                  "target": {"kind": "Node", "name": "n1"}},
                       headers={"User-Agent": "kube-scheduler/v1.32.4"})
    assert r.status == 201
    bound = await (await api.get(f"{pods}/p")).json()
    assert set(entries(bound)) == {("kube-controller-manager", "Update", "")}
    status = {"status": {"phase": "Running", "podIP": "10.0.0.5",
                         "conditions": [{"type": "Ready", "status": "True"}]}}
    kubelet = {**MERGE, "User-Agent": "kubelet/v1.32.4 (linux/amd64) kubernetes/59526cd"}
    r = await api.patch(f"{pods}/p/status", json=status, headers=kubelet)
    pod = await r.json()
    assert r.status == 200
    e = entries(pod)["kubelet", "Update", "status"]
    assert e["subresource"] == "status" and list(e["fieldsV1"]) == ["f:status"]
    assert {("f:status", "f:phase"), ("f:status", "f:podIP"),
            ("f:status", "f:conditions", 'k:{"type":"Ready"}', "."),
            ("f:status", "f:conditions", 'k:{"type":"Ready"}', "f:status")} <= paths(e)
    # the creator never owned status (reset on create), so nothing was taken from it
    assert "f:status" not in entries(pod)["kube-controller-manager", "Update", ""]["fieldsV1"]
    r = await api.patch(f"{pods}/p/status", json=status, headers=kubelet)
    again = await r.json()
    assert again["metadata"]["resourceVersion"] == pod["metadata"]["resourceVersion"]
    assert again["metadata"]["managedFields"] == pod["metadata"]["managedFields"]


@pytestmark_http
async def test_update_steals_and_put_resets_or_keeps_entries(api):
    """?fieldManager= names the writer; a label changed by another manager moves to it and
    a removed label leaves every set; a PUT without managedFields keeps them, with
    ``managedFields: []`` resets them (fieldmanager.go decodeLiveOrNew/isResetManagedFields)."""
    ns = await new_ns(api)
    url = f"/api/v1/namespaces/{ns}/configmaps/c"
    r = await api.post(f"/api/v1/namespaces/{ns}/configmaps?fieldManager=maker",
                       json={"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "c", "labels": {"a": "1", "b": "2"}}, "data": {"k": "v"}})
    assert r.status == 201
    assert set(entries(await r.json())) == {("maker", "Update", "")}
    r = await api.patch(url + "?fieldManager=editor", json={"metadata": {"labels": {"a": "9", "b": None}}},
                        headers=MERGE)
    cm = await r.json()
    got = entries(cm)
    assert paths(got["editor", "Update", ""]) == {("f:metadata", "f:labels", "f:a")}
    assert paths(got["maker", "Update", ""]) == {("f:data", "f:k")}

    body = {k: v for k, v in cm.items()}
    body["metadata"] = {k: v for k, v in cm["metadata"].items() if k != "managedFields"}
    body["data"] = {"k": "w"}
    r = await api.put(url + "?fieldManager=putter", json=body)
    put = await r.json()
    assert r.status == 200
    assert set(entries(put)) == {("editor", "Update", ""), ("putter", "Update", "")}   # maker lost data.k
    body = dict(put)
    body["metadata"] = {**put["metadata"], "managedFields": []}
    body["data"] = {"k": "x"}
    r = await api.put(url + "?fieldManager=resetter", json=body)
    reset = await r.json()
    assert r.status == 200
    assert [(e["manager"], paths(e)) for e in reset["metadata"]["managedFields"]] == \
        [("resetter", {("f:data", "f:k")})]
