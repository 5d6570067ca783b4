"""Deletion lifecycle and update preconditions of the apiserver (in-process, real etcd).

Graceful pod deletion, GC finalizers from propagationPolicy, ShouldDeleteDuringUpdate,
namespace Terminating + /finalize, uid in PUT (409) vs PATCH (422), watch with RV unset.
"""

from __future__ import annotations

import asyncio
import json

from tests.support.apiserver import new_ns
from tests.unit.test_apiserver import API_OPTIONS, pod, pytestmark  # noqa: F401


def deploy(name):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


async def test_uid_in_put_is_a_precondition_and_in_patch_is_immutable(api):
    ns = await new_ns(api)
    p = await (await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("u"))).json()
    body = dict(p)
    body["metadata"] = {**p["metadata"], "uid": "00000000-0000-0000-0000-000000000000"}
    r = await api.put(f"/api/v1/namespaces/{ns}/pods/u", json=body)
    st = await r.json()
    assert r.status == 409 and st["reason"] == "Conflict" and "Precondition failed: UID in precondition" in st["message"]
    r = await api.patch(f"/api/v1/namespaces/{ns}/pods/u/status",
                        data=json.dumps({"metadata": {"uid": "other"}, "status": {"phase": "Running"}}),
                        headers={"Content-Type": "application/strategic-merge-patch+json"})
    st = await r.json()
    assert r.status == 422 and st["details"]["causes"][0]["field"] == "metadata.uid", st
    assert "field is immutable" in st["message"]
    # the same patch with the right uid goes through
    r = await api.patch(f"/api/v1/namespaces/{ns}/pods/u/status",
                        data=json.dumps({"metadata": {"uid": p["metadata"]["uid"]}, "status": {"phase": "Running"}}),
                        headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert r.status == 200 and (await r.json())["status"]["phase"] == "Running"


async def test_graceful_pod_deletion_then_force(api):
    ns = await new_ns(api)
    await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("g"))
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/g/binding",
                       json={"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "g"},
                             "target": {"kind": "Node", "name": "n1"}})
    assert r.status == 201
    r = await api.delete(f"/api/v1/namespaces/{ns}/pods/g")
    o = await r.json()
    assert r.status == 200 and o["metadata"]["deletionGracePeriodSeconds"] == 30 and o["metadata"]["deletionTimestamp"]
    # a longer grace period does not extend it; the object is unchanged
    r = await api.delete(f"/api/v1/namespaces/{ns}/pods/g", json={"gracePeriodSeconds": 60})
    assert (await r.json())["metadata"]["resourceVersion"] == o["metadata"]["resourceVersion"]
    r = await api.delete(f"/api/v1/namespaces/{ns}/pods/g", json={"gracePeriodSeconds": 0})
    assert r.status == 200
    assert (await api.get(f"/api/v1/namespaces/{ns}/pods/g")).status == 404


async def test_foreground_and_orphan_set_gc_finalizers(api):
    ns = await new_ns(api)
    base = f"/apis/apps/v1/namespaces/{ns}/deployments"
    for name, policy, fin in (("fg", "Foreground", "foregroundDeletion"), ("or", "Orphan", "orphan")):
        assert (await api.post(base, json=deploy(name))).status == 201
        r = await api.delete(f"{base}/{name}", json={"propagationPolicy": policy})
        o = await r.json()
        assert r.status == 200 and o["metadata"]["finalizers"] == [fin] and o["metadata"]["deletionTimestamp"]
        assert o["metadata"]["deletionGracePeriodSeconds"] == 0
        assert (await api.get(f"{base}/{name}")).status == 200
        # removing the last finalizer (as the garbage collector does) deletes it
        r = await api.patch(f"{base}/{name}", data=json.dumps({"metadata": {"finalizers": None}}),
                            headers={"Content-Type": "application/merge-patch+json"})
        assert r.status == 200
        assert (await api.get(f"{base}/{name}")).status == 404
    # Background: deleted at once
    assert (await api.post(base, json=deploy("bg"))).status == 201
    r = await api.delete(f"{base}/bg?propagationPolicy=Background")
    assert r.status == 200 and (await api.get(f"{base}/bg")).status == 404
    r = await api.delete(f"{base}/x?propagationPolicy=Sideways")
    assert r.status == 400


async def test_namespace_terminates_until_finalized(api):
    ns = await new_ns(api)
    await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("p"))
    r = await api.delete(f"/api/v1/namespaces/{ns}")
    o = await r.json()
    assert r.status == 200 and o["status"]["phase"] == "Terminating" and o["spec"]["finalizers"] == ["kubernetes"]
    # the apiserver no longer empties it itself: the pod and the namespace stay
    assert (await api.get(f"/api/v1/namespaces/{ns}/pods/p")).status == 200
    r = await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("q"))
    assert r.status == 403 and "being terminated" in (await r.json())["message"]
    # a second DELETE while spec.finalizers remain changes nothing
    r = await api.delete(f"/api/v1/namespaces/{ns}")
    assert (await r.json())["metadata"]["resourceVersion"] == o["metadata"]["resourceVersion"]
    # PUT /finalize only changes spec.finalizers; emptied → the namespace is deleted
    body = {**o, "spec": {"finalizers": []}, "metadata": {**o["metadata"], "labels": {"ignored": "yes"}}}
    r = await api.put(f"/api/v1/namespaces/{ns}/finalize", json=body)
    assert r.status == 200, await r.text()
    assert (await api.get(f"/api/v1/namespaces/{ns}")).status == 404
    assert (await api.patch("/api/v1/namespaces/default/finalize", data="{}",
                            headers={"Content-Type": "application/merge-patch+json"})).status == 405


async def test_finalize_keeps_other_finalizers(api):
    ns = await new_ns(api)
    o = await (await api.delete(f"/api/v1/namespaces/{ns}")).json()
    r = await api.put(f"/api/v1/namespaces/{ns}/finalize",
                      json={**o, "spec": {"finalizers": ["example.com/x"]}})
    assert r.status == 200 and (await r.json())["spec"]["finalizers"] == ["example.com/x"]
    assert (await api.get(f"/api/v1/namespaces/{ns}")).status == 200


async def test_watch_without_resource_version_sees_prior_writes(api):
    ns = await new_ns(api)
    for i in range(5):
        assert (await api.post(f"/api/v1/namespaces/{ns}/configmaps",
                               json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}})).status == 201
    r = await api.get(f"/api/v1/namespaces/{ns}/configmaps?watch=true&timeoutSeconds=1")
    names = []
    async def read():
        async for line in r.content:
            ev = json.loads(line)
            names.append(ev["object"]["metadata"]["name"])
            if len(names) == 5:
                return
    await asyncio.wait_for(read(), 5)
    assert names == [f"c{i}" for i in range(5)]
    r.close()


async def test_generation_only_for_workloads_as_kubernetes_1_32(api):
    ns = await new_ns(api)
    r = await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("g1"))
    assert r.status == 201
    assert "generation" not in (await r.json())["metadata"]
    r = await api.post(f"/api/v1/namespaces/{ns}/configmaps",
                       json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}})
    assert "generation" not in (await r.json())["metadata"]


async def test_delete_on_a_stale_read_keeps_a_removed_finalizer_removed(api, monkeypatch):
    """A DELETE decided on a copy read before a concurrent write must not write that copy's
    finalizers back: a finalizer removed meanwhile (a Job controller's, racing the kubelet's
    grace-0 delete) stays removed, and the object, now held by nothing, is deleted."""
    from controlplane.storage import store as store_mod
    ns = await new_ns(api)
    body = pod("f")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    await api.post(f"/api/v1/namespaces/{ns}/pods", json=body)
    await api.post(f"/api/v1/namespaces/{ns}/pods/f/binding",
                   json={"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "f"},
                         "target": {"kind": "Node", "name": "n1"}})
    r = await api.delete(f"/api/v1/namespaces/{ns}/pods/f")   # graceful: 30 s pending
    assert r.status == 200 and (await r.json())["metadata"]["deletionGracePeriodSeconds"] == 30
    stale = await (await api.get(f"/api/v1/namespaces/{ns}/pods/f")).json()
    r = await api.patch(f"/api/v1/namespaces/{ns}/pods/f", data=json.dumps({"metadata": {
        "$deleteFromPrimitiveList/finalizers": ["example.com/hold"]}}),
        headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert r.status == 200 and not (await r.json())["metadata"].get("finalizers")
    real_get = store_mod.Store.get

    async def get_stale(self, key, *a, **kw):   # the DELETE's read, taken before the patch
        return json.loads(json.dumps(stale)) if key.endswith(f"/{ns}/f") else await real_get(self, key, *a, **kw)
    monkeypatch.setattr(store_mod.Store, "get", get_stale)
    r = await api.delete(f"/api/v1/namespaces/{ns}/pods/f", json={"gracePeriodSeconds": 0})
    assert r.status == 200
    monkeypatch.setattr(store_mod.Store, "get", real_get)
    r = await api.get(f"/api/v1/namespaces/{ns}/pods/f")
    assert r.status == 404, await r.json()


async def _cm_in_cache(api, ns, name, body=None):
    """Create a ConfigMap and wait until the configmaps watch cache holds it; returns it."""
    r = await api.post(f"/api/v1/namespaces/{ns}/configmaps", json=body or {"metadata": {"name": name}})
    assert r.status == 201, await r.json()
    obj = await r.json()
    rs = api.server_obj.registry_store
    from controlplane.api.resources import get as get_res
    cache = rs.cache_for(get_res("configmaps"))
    assert await cache.wait_for_revision(int(obj["metadata"]["resourceVersion"]))
    return obj


async def test_delete_at_the_watch_caches_resource_version_needs_no_etcd_read(api, monkeypatch):
    from controlplane.storage import store as store_mod
    ns = await new_ns(api)
    obj = await _cm_in_cache(api, ns, "c")
    reads = []
    real_get = store_mod.Store.get

    async def counting_get(self, key, *a, **kw):
        reads.append(key)
        return await real_get(self, key, *a, **kw)
    monkeypatch.setattr(store_mod.Store, "get", counting_get)
    md = obj["metadata"]
    r = await api.delete(f"/api/v1/namespaces/{ns}/configmaps/c", json={
        "preconditions": {"uid": md["uid"], "resourceVersion": md["resourceVersion"]}})
    assert r.status == 200, await r.json()
    assert [k for k in reads if k.endswith(f"/{ns}/c")] == []
    assert (await api.get(f"/api/v1/namespaces/{ns}/configmaps/c")).status == 404


async def test_delete_with_an_older_resource_version_precondition_conflicts(api):
    ns = await new_ns(api)
    obj = await _cm_in_cache(api, ns, "c")
    r = await api.patch(f"/api/v1/namespaces/{ns}/configmaps/c", data=json.dumps({"data": {"k": "v"}}),
                        headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 200
    old = obj["metadata"]["resourceVersion"]
    r = await api.delete(f"/api/v1/namespaces/{ns}/configmaps/c", json={"preconditions": {"resourceVersion": old}})
    assert r.status == 409
    assert f"Precondition failed: ResourceVersion in precondition: {old}" in (await r.json())["message"]
    assert (await api.get(f"/api/v1/namespaces/{ns}/configmaps/c")).status == 200


async def test_delete_decided_on_a_stale_cached_copy_still_holds_its_precondition(api, monkeypatch):
    """The watch cache's copy at the precondition's revision, the object since changed and
    held by a finalizer: the DELETE must not mark it (409), as an etcd read would have found."""
    ns = await new_ns(api)
    obj = await _cm_in_cache(api, ns, "c", {"metadata": {"name": "c", "finalizers": ["example.com/hold"]}})
    stale = json.loads(json.dumps(obj))
    r = await api.patch(f"/api/v1/namespaces/{ns}/configmaps/c", data=json.dumps({"data": {"k": "v"}}),
                        headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 200
    rs = api.server_obj.registry_store
    monkeypatch.setattr(rs, "cached", lambda resource, key: stale if key.endswith(f"/{ns}/c") else None)
    r = await api.delete(f"/api/v1/namespaces/{ns}/configmaps/c", json={
        "preconditions": {"resourceVersion": stale["metadata"]["resourceVersion"]}})
    assert r.status == 409, await r.json()
    now = await (await api.get(f"/api/v1/namespaces/{ns}/configmaps/c")).json()
    assert not now["metadata"].get("deletionTimestamp")
