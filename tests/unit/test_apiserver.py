"""The apiserver in-process (aiohttp test client) on a real etcd: REST verbs, watch, errors, trace."""

from __future__ import annotations

import pytest

from controlplane.storage import testing
from tests.support.apiserver import new_ns, read_events

pytestmark = pytest.mark.skipif(not testing.available(), reason="needs /usr/bin/etcd")

API_OPTIONS = {"bookmark_interval": 0.2}

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def pod(name, labels=None):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


async def test_discovery_and_version(api):
    v = await (await api.get("/version")).json()
    assert v["gitVersion"] == "v1.32.4" and v["minor"] == "32"
    core = await (await api.get("/api/v1")).json()
    names = {r["name"]: r for r in core["resources"]}
    assert names["pods"]["shortNames"] == ["po"] and "pods/binding" in names and "pods/status" in names
    apps = await (await api.get("/apis/apps/v1")).json()
    assert any(r["name"] == "deployments/scale" and r["kind"] == "Scale" for r in apps["resources"])
    root = await (await api.get("/openapi/v3")).json()
    doc = await (await api.get(root["paths"]["apis/apps/v1"]["serverRelativeURL"])).json()
    ops = [op for p in doc["paths"].values() for op in p.values()]
    assert any(o["x-kubernetes-group-version-kind"]["kind"] == "Deployment" and
               any(q["name"] == "fieldValidation" for q in o["parameters"]) for o in ops)
    assert (await api.get("/api/v1/frobs")).status == 404


async def test_create_get_errors(api):
    ns = await new_ns(api)
    r = await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("a"), headers={"User-Agent": "kubectl/v1.32.4 x"})
    assert r.status == 201
    a = await r.json()
    assert a["metadata"]["uid"] and a["metadata"]["resourceVersion"] and a["status"]["phase"] == "Pending"
    r = await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("a"))
    body = await r.json()
    assert r.status == 409 and body["reason"] == "AlreadyExists" and body["message"] == 'pods "a" already exists'
    r = await api.get(f"/api/v1/namespaces/{ns}/pods/zz")
    assert r.status == 404 and (await r.json())["message"] == 'pods "zz" not found'
    r = await api.post(f"/api/v1/namespaces/{ns}/pods", json={**pod("b"), "metadata": {"name": "b", "namespace": "x"}})
    assert r.status == 400 and "does not match the namespace" in (await r.json())["message"]
    r = await api.post("/api/v1/namespaces/nope/pods", json=pod("c"))
    assert r.status == 404 and (await r.json())["message"] == 'namespaces "nope" not found'
    r = await api.post(f"/api/v1/namespaces/{ns}/pods", data=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status == 400 and (await r.json())["kind"] == "Status"
    r = await api.post(f"/api/v1/namespaces/{ns}/pods?fieldValidation=Strict",
                       json={**pod("d"), "spec": {"containers": [{"name": "c", "image": "x"}], "foo": 1}})
    assert r.status == 400 and 'unknown field "spec.foo"' in (await r.json())["message"]
    r = await api.post(f"/api/v1/namespaces/{ns}/pods", json={**pod("g"), "metadata": {"generateName": "web-"}})
    assert r.status == 201 and len((await r.json())["metadata"]["name"]) == len("web-") + 5
    r = await api.post(f"/api/v1/namespaces/{ns}/pods", data=b"x" * (3 * 1024 * 1024 + 10),
                       headers={"Content-Type": "application/json"})
    assert r.status == 413
    recs = (await (await api.get("/debug/controlplane/trace")).json())["records"]
    mine = [x for x in recs if x["object"]["uid"] == a["metadata"]["uid"]]
    assert {2, 3} <= {x["step"] for x in mine}
    assert any(x["step"] == 2 and "kubectl/v1.32.4" in x["action"] for x in mine)


async def test_list_selectors_pages_table(api):
    ns = await new_ns(api)
    for i in range(4):
        await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod(f"p{i}", {"tier": "a" if i % 2 else "b"}))
    lst = await (await api.get(f"/api/v1/namespaces/{ns}/pods?labelSelector=tier%3Da")).json()
    assert lst["kind"] == "PodList" and [p["metadata"]["name"] for p in lst["items"]] == ["p1", "p3"]
    page = await (await api.get(f"/api/v1/namespaces/{ns}/pods?limit=3")).json()
    assert len(page["items"]) == 3 and page["metadata"]["continue"]
    rest = await (await api.get(f"/api/v1/namespaces/{ns}/pods?limit=3&continue={page['metadata']['continue']}")).json()
    assert [p["metadata"]["name"] for p in rest["items"]] == ["p3"]
    fs = await (await api.get(f"/api/v1/namespaces/{ns}/pods?fieldSelector=metadata.name%3Dp2")).json()
    assert [p["metadata"]["name"] for p in fs["items"]] == ["p2"]
    r = await api.get(f"/api/v1/namespaces/{ns}/pods?fieldSelector=spec.bogus%3Dx")
    assert r.status == 400
    r = await api.get(f"/api/v1/namespaces/{ns}/pods", headers={"Accept": TABLE})
    assert r.headers["Content-Type"].startswith("application/json;as=Table")
    t = await r.json()
    assert t["kind"] == "Table" and [c["name"] for c in t["columnDefinitions"]][:2] == ["Name", "Ready"]
    assert len(t["rows"]) == 4


async def test_update_patch_status_binding_delete(api):
    ns = await new_ns(api)
    p = await (await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("w"))).json()
    rv = p["metadata"]["resourceVersion"]
    r = await api.patch(f"/api/v1/namespaces/{ns}/pods/w", json={"metadata": {"labels": {"k": "v"}}},
                        headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 200 and (await r.json())["metadata"]["labels"] == {"k": "v"}
    stale = {**p, "metadata": {**p["metadata"], "resourceVersion": rv}}
    r = await api.put(f"/api/v1/namespaces/{ns}/pods/w", json=stale)
    body = await r.json()
    assert r.status == 409 and body["reason"] == "Conflict" and "the object has been modified" in body["message"]
    # main-resource PUT ignores status
    cur = await (await api.get(f"/api/v1/namespaces/{ns}/pods/w")).json()
    cur["status"]["phase"] = "Running"
    r = await api.put(f"/api/v1/namespaces/{ns}/pods/w", json=cur)
    assert (await r.json())["status"]["phase"] == "Pending"
    b = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "w"}, "target": {"kind": "Node", "name": "n1"}}
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/w/binding", json=b)
    assert r.status == 201 and (await r.json())["status"] == "Success"
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/w/binding", json=b)
    assert r.status == 409 and (await r.json())["message"] == 'pod w is already assigned to node "n1"'
    bound = await (await api.get(f"/api/v1/namespaces/{ns}/pods/w")).json()
    assert bound["spec"]["nodeName"] == "n1"
    assert any(c["type"] == "PodScheduled" and c["status"] == "True" for c in bound["status"]["conditions"])
    r = await api.patch(f"/api/v1/namespaces/{ns}/pods/w/status",
                        json={"status": {"phase": "Running"}, "spec": {"nodeName": "other"}},
                        headers={"Content-Type": "application/merge-patch+json"})
    got = await r.json()
    assert got["status"]["phase"] == "Running" and got["spec"]["nodeName"] == "n1"
    # graceful delete of a bound pod keeps it with deletionTimestamp
    r = await api.delete(f"/api/v1/namespaces/{ns}/pods/w")
    d = await r.json()
    assert r.status == 200 and d["metadata"]["deletionTimestamp"] and d["metadata"]["deletionGracePeriodSeconds"] == 30
    r = await api.delete(f"/api/v1/namespaces/{ns}/pods/w", json={"gracePeriodSeconds": 0})
    assert r.status == 200
    assert (await api.get(f"/api/v1/namespaces/{ns}/pods/w")).status == 404
    steps = {x["step"] for x in (await (await api.get("/debug/controlplane/trace")).json())["records"]
             if x["object"]["uid"] == p["metadata"]["uid"]}
    assert {10, 11, 13} <= steps


async def test_scale_and_generation(api):
    ns = await new_ns(api)
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
                    "template": {"metadata": {"labels": {"app": "d"}},
                                 "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    r = await api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=dep)
    assert r.status == 201, await r.text()
    r = await api.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/d/scale", json={"spec": {"replicas": 4}},
                        headers={"Content-Type": "application/merge-patch+json"})
    s = await r.json()
    assert s["kind"] == "Scale" and s["spec"]["replicas"] == 4 and s["status"]["selector"] == "app=d"
    d = await (await api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/d")).json()
    assert d["spec"]["replicas"] == 4 and d["metadata"]["generation"] == 2




async def test_watch_initial_live_selector_and_410(api):
    ns = await new_ns(api)
    await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("x", {"app": "a"}))
    w = await api.get(f"/api/v1/namespaces/{ns}/pods?watch=true&labelSelector=app%3Da&resourceVersion=0")
    assert w.status == 200
    [first] = await read_events(w, 1)
    assert first["type"] == "ADDED" and first["object"]["metadata"]["name"] == "x"
    await api.patch(f"/api/v1/namespaces/{ns}/pods/x", json={"metadata": {"labels": {"app": "b"}}},
                    headers={"Content-Type": "application/merge-patch+json"})
    [gone] = await read_events(w, 1)
    assert gone["type"] == "DELETED"  # stopped matching the selector
    await api.patch(f"/api/v1/namespaces/{ns}/pods/x", json={"metadata": {"labels": {"app": "a"}}},
                    headers={"Content-Type": "application/merge-patch+json"})
    [back] = await read_events(w, 1)
    assert back["type"] == "ADDED"
    w.close()
    # bookmarks + timeout
    w = await api.get(f"/api/v1/namespaces/{ns}/pods?watch=1&resourceVersion={back['object']['metadata']['resourceVersion']}"
                      "&allowWatchBookmarks=true&timeoutSeconds=1")
    evs = await read_events(w, 100)
    assert evs and all(e["type"] == "BOOKMARK" for e in evs)
    # too old: shrink the ring so revision 1 is gone
    cache = api.server_obj.cache_for(__import__("controlplane.api.resources", fromlist=["PODS"]).PODS)
    cache.oldest = cache.revision
    w = await api.get(f"/api/v1/namespaces/{ns}/pods?watch=1&resourceVersion=1")
    [err] = await read_events(w, 1)
    assert err["type"] == "ERROR" and err["object"]["code"] == 410 and "too old resource version: 1" in err["object"]["message"]


async def test_generate_name_collision_is_retried_with_a_new_suffix(api, monkeypatch):
    """RetryGenerateName (GA in 1.32): a generated name that exists is drawn again, up to 8 tries."""
    from components.apiserver import strategy
    ns = await new_ns(api)
    r = await api.post(f"/api/v1/namespaces/{ns}/configmaps",
                       json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-aaaaa"}})
    assert r.status == 201
    suffixes = iter(["aaaaa", "aaaaa", "bbbbb"])
    monkeypatch.setattr(strategy, "random_suffix", lambda n=5: next(suffixes))
    r = await api.post(f"/api/v1/namespaces/{ns}/configmaps",
                       json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "cm-"}})
    assert r.status == 201 and (await r.json())["metadata"]["name"] == "cm-bbbbb"
    monkeypatch.setattr(strategy, "random_suffix", lambda n=5: "aaaaa")
    r = await api.post(f"/api/v1/namespaces/{ns}/configmaps",
                       json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "cm-"}})
    assert r.status == 409 and (await r.json())["reason"] == "AlreadyExists"
