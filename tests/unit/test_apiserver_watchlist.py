"""Streaming lists (sendInitialEvents + initial-events-end bookmark), resourceVersionMatch, 422s."""

from __future__ import annotations

import pytest

from controlplane.storage import testing
from tests.support.apiserver import new_ns
from tests.support.apiserver import read_events as _read

pytestmark = pytest.mark.skipif(not testing.available(), reason="needs /usr/bin/etcd")

API_OPTIONS = {"bookmark_interval": 30}


async def create_pod(api, ns, name) -> dict:
    r = await api.post(f"/api/v1/namespaces/{ns}/pods", json={
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    assert r.status == 201, await r.text()
    return await r.json()





async def read_events_strict(resp, n, timeout=5.0):
    """The next ``n`` events; an ended stream fails the test."""
    return await _read(resp, n, timeout, strict=True)


WATCHLIST = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"


async def test_streaming_list_ends_initial_events_with_a_bookmark(api):
    ns = await new_ns(api)
    pods = [await create_pod(api, ns, f"p{i}") for i in range(3)]
    w = await api.get(f"/api/v1/namespaces/{ns}/pods?{WATCHLIST}&timeoutSeconds=30")
    assert w.status == 200
    evs = await read_events_strict(w, 4)
    assert [e["type"] for e in evs] == ["ADDED"] * 3 + ["BOOKMARK"]
    assert sorted(e["object"]["metadata"]["name"] for e in evs[:3]) == ["p0", "p1", "p2"]
    bm = evs[3]["object"]
    assert bm["kind"] == "Pod" and bm["apiVersion"] == "v1"
    assert bm["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(bm["metadata"]["resourceVersion"]) >= int(pods[-1]["metadata"]["resourceVersion"])
    await create_pod(api, ns, "later")                       # then changes
    (ev,) = await read_events_strict(w, 1)
    assert ev["type"] == "ADDED" and ev["object"]["metadata"]["name"] == "later"
    w.close()


async def test_send_initial_events_false_streams_changes_only(api):
    ns = await new_ns(api)
    await create_pod(api, ns, "old")
    w = await api.get(f"/api/v1/namespaces/{ns}/pods?watch=1&sendInitialEvents=false"
                      f"&resourceVersionMatch=NotOlderThan&timeoutSeconds=30")
    assert w.status == 200
    await create_pod(api, ns, "new")
    (ev,) = await read_events_strict(w, 1)
    assert ev["type"] == "ADDED" and ev["object"]["metadata"]["name"] == "new"
    w.close()


@pytest.mark.parametrize("query,message", [
    ("watch=1&sendInitialEvents=true",
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires '
     "setting resourceVersionMatch to NotOlderThan"),
    ("watch=1&resourceVersionMatch=NotOlderThan",
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden '
     "for watch unless sendInitialEvents is provided"),
    ("watch=1&sendInitialEvents=true&resourceVersionMatch=Exact",
     'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting '
     'resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: '
     '"NotOlderThan"]'),
    ("sendInitialEvents=true",
     'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list'),
    ("resourceVersionMatch=Exact",
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden '
     "unless resourceVersion is provided"),
    ("resourceVersionMatch=Exact&resourceVersion=0",
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is '
     'forbidden for resourceVersion "0"'),
], ids=["watch list without resourceVersionMatch", "watch with resourceVersionMatch alone",
        "watch list with resourceVersionMatch Exact", "list with sendInitialEvents",
        "resourceVersionMatch without resourceVersion", "resourceVersionMatch Exact at resourceVersion 0"])
async def test_invalid_list_options_are_422(api, query, message):
    r = await api.get(f"/api/v1/namespaces/default/pods?{query}")
    assert r.status == 422
    body = await r.json()
    assert body["reason"] == "Invalid" and body["message"] == message
    assert body["details"]["kind"] == "ListOptions" and body["details"]["group"] == "meta.k8s.io"
    assert body["details"]["causes"][0]["field"].startswith(("resourceVersionMatch", "sendInitialEvents"))


async def test_list_resource_version_match(api):
    ns = await new_ns(api)
    a = await create_pod(api, ns, "a")
    rv_a = a["metadata"]["resourceVersion"]
    await create_pod(api, ns, "b")
    r = await api.get(f"/api/v1/namespaces/{ns}/pods?resourceVersion={rv_a}&resourceVersionMatch=Exact")
    body = await r.json()
    assert r.status == 200 and body["metadata"]["resourceVersion"] == rv_a
    assert [p["metadata"]["name"] for p in body["items"]] == ["a"]          # the state at rv_a
    r = await api.get(f"/api/v1/namespaces/{ns}/pods?resourceVersion={rv_a}&resourceVersionMatch=NotOlderThan")
    body = await r.json()
    assert r.status == 200 and int(body["metadata"]["resourceVersion"]) > int(rv_a)
    assert [p["metadata"]["name"] for p in body["items"]] == ["a", "b"]     # not older: the latest
    r = await api.get(f"/api/v1/namespaces/{ns}/pods?resourceVersion=999999999&resourceVersionMatch=Exact")
    body = await r.json()
    assert r.status == 504 and body["reason"] == "Timeout"
    assert body["message"].startswith("Too large resource version: 999999999, current: ")
    assert body["details"]["retryAfterSeconds"] == 1
