"""Server-side apply: field sets, ownership, conflicts (409 with causes), force, removal."""

from __future__ import annotations

import json
import uuid

import pytest

from components.apiserver import fieldmanager as fm


def deploy(replicas=2, image="nginx:1.27", labels=None):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "labels": labels or {"app": "d"}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "d"}},
                     "template": {"metadata": {"labels": {"app": "d"}},
                                  "spec": {"containers": [{"name": "c", "image": image}]}}}}


def test_field_set_and_paths():
    fs = fm.field_set("Deployment", deploy())
    assert ("f:spec", "f:replicas") in fs
    c = ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"c"}')
    assert c + (".",) in fs and c + ("f:image",) in fs
    assert ("f:metadata", "f:labels", "f:app") in fs and not any(p[:2] == ("f:metadata", "f:name") for p in fs)
    assert fm.decode(fm.encode(fs)) == fs
    assert fm.pretty(c + ("f:image",)) == '.spec.template.spec.containers[name="c"].image'


def test_conflict_force_and_removal():
    cur = fm.apply("Deployment", {}, deploy(), "kubectl", "apps/v1", "t0", False)
    with pytest.raises(fm.ApplyConflict) as e:
        fm.apply("Deployment", json.loads(json.dumps(cur)), deploy(replicas=5), "other", "apps/v1", "t1", False)
    assert e.value.message() == 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas'
    assert e.value.causes() == [{"reason": "FieldManagerConflict", "message": 'conflict with "kubectl"',
                                 "field": ".spec.replicas"}]
    same = fm.apply("Deployment", json.loads(json.dumps(cur)), deploy(), "other", "apps/v1", "t1", False)
    assert {m["manager"] for m in same["metadata"]["managedFields"]} == {"kubectl", "other"}   # co-owned
    forced = fm.apply("Deployment", json.loads(json.dumps(cur)), deploy(replicas=5), "other", "apps/v1", "t1", True)
    assert forced["spec"]["replicas"] == 5
    kubectl = next(m for m in forced["metadata"]["managedFields"] if m["manager"] == "kubectl")
    assert "f:replicas" not in kubectl["fieldsV1"]["f:spec"]                                 # taken over
    # a label the manager stops applying goes away (nobody else owns it)
    two = fm.apply("Deployment", json.loads(json.dumps(cur)), deploy(labels={"app": "d", "x": "1"}),
                   "kubectl", "apps/v1", "t2", False)
    assert two["metadata"]["labels"] == {"app": "d", "x": "1"}
    one = fm.apply("Deployment", two, deploy(), "kubectl", "apps/v1", "t3", False)
    assert one["metadata"]["labels"] == {"app": "d"}


async def test_apply_over_http(api):
    ns = "t-" + uuid.uuid4().hex[:8]
    await api.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    url = f"/apis/apps/v1/namespaces/{ns}/deployments/d"
    ct = {"Content-Type": "application/apply-patch+yaml"}
    r = await api.patch(url, data=json.dumps(deploy()), headers=ct)
    assert r.status == 422 and "fieldManager: Required value" in (await r.json())["message"]
    r = await api.patch(url + "?fieldManager=kubectl", data=json.dumps(deploy()), headers=ct)
    created = await r.json()
    assert r.status == 201 and created["metadata"]["managedFields"][0]["manager"] == "kubectl"
    r = await api.patch(url + "?fieldManager=kubectl", data=json.dumps(deploy(replicas=3)), headers=ct)
    assert r.status == 200 and (await r.json())["spec"]["replicas"] == 3
    r = await api.patch(url + "?fieldManager=other", data=json.dumps(deploy(replicas=5)), headers=ct)
    body = await r.json()
    assert r.status == 409 and body["reason"] == "Conflict"
    assert body["message"] == 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas'
    assert body["details"]["causes"][0]["reason"] == "FieldManagerConflict"
    r = await api.patch(url + "?fieldManager=other&force=true", data=json.dumps(deploy(replicas=5)), headers=ct)
    assert r.status == 200 and (await r.json())["spec"]["replicas"] == 5
    # an ordinary update keeps managedFields (and records its own Update entry)
    r = await api.patch(url + "?fieldManager=ann", json={"metadata": {"annotations": {"a": "b"}}},
                        headers={"Content-Type": "application/merge-patch+json"})
    got = await r.json()
    assert {m["manager"] for m in got["metadata"]["managedFields"]} == {"kubectl", "other", "ann"}
    # a PUT that leaves managedFields out keeps them
    body = {k: v for k, v in got.items()}
    body["metadata"] = {k: v for k, v in got["metadata"].items() if k != "managedFields"}
    r = await api.put(url, json=body)
    put = await r.json()
    assert r.status == 200 and {m["manager"] for m in put["metadata"]["managedFields"]} == {"kubectl", "other", "ann"}
