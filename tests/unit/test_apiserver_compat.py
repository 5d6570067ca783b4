"""Client-compatibility regressions (issue 11, item 4): what kube-apiserver v1.32 answers
and the in-process apiserver must answer the same way."""

from __future__ import annotations

import asyncio
import collections
import json

import pytest

from tests.support.apiserver import new_ns, read_events


# ---------------------------------------------------------------- trailing slashes
@pytest.mark.parametrize("path,field", [("/version/", "gitVersion"), ("/api/", "versions"),
                                        ("/apis/", "groups"), ("/version", "gitVersion")],
                         ids=["version", "api", "apis", "version-no-slash"])
async def test_discovery_roots_with_trailing_slash(api, path, field):
    r = await api.get(path)
    assert r.status == 200
    assert field in await r.json()


async def test_kr8s_client_constructs(api):
    kr8s = pytest.importorskip("kr8s")
    client = await kr8s.asyncio.api(url=str(api.make_url("")).rstrip("/"))
    version = await client.version()
    assert version["major"] == "1"
    ns = await new_ns(api)
    pods = [p async for p in client.get("pods", namespace=ns)]
    assert pods == []


# ---------------------------------------------------------------- includeObject
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}


@pytest.mark.parametrize("include,want", [("Object", "ConfigMap"), ("Metadata", "PartialObjectMetadata"),
                                          ("", "PartialObjectMetadata"), ("None", None)],
                         ids=["object", "metadata", "default", "none"])
async def test_table_include_object(api, include, want):
    ns = await new_ns(api)
    r = await api.post(f"/api/v1/namespaces/{ns}/configmaps",
                       json={"metadata": {"name": "c"}, "data": {"k": "v"}})
    assert r.status == 201
    q = f"?includeObject={include}" if include else ""
    for path in (f"/api/v1/namespaces/{ns}/configmaps{q}", f"/api/v1/namespaces/{ns}/configmaps/c{q}"):
        t = await (await api.get(path, headers=TABLE)).json()
        row = t["rows"][0]
        if want is None:
            assert "object" not in row
        else:
            assert row["object"]["kind"] == want
        if want == "ConfigMap":
            assert row["object"]["data"] == {"k": "v"} and row["object"]["apiVersion"] == "v1"


async def test_table_include_object_bad_value(api):
    ns = await new_ns(api)
    r = await api.get(f"/api/v1/namespaces/{ns}/configmaps?includeObject=All", headers=TABLE)
    assert r.status == 400
    assert (await r.json())["message"] == 'unrecognized includeObject value: "All"'


# ---------------------------------------------------------------- watch: 410 text and bookmarks


async def _cm(api, ns, name):
    r = await api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": name}})
    assert r.status == 201
    return int((await r.json())["metadata"]["resourceVersion"])


async def test_watch_too_old_prints_oldest_available_minus_one(api):
    from controlplane.api import resources as R
    ns = await new_ns(api)
    cache = api.server_obj.cache_for(R.get("configmaps"))
    cache.ring = collections.deque(cache.ring, maxlen=2)
    first = await _cm(api, ns, "a")
    await _cm(api, ns, "b")
    third = await _cm(api, ns, "c")
    await cache.wait_for_revision(third)
    assert [e.revision for e in cache.ring][-1] == third
    oldest = cache.ring[0].revision  # "a" left the ring: b is the oldest event kept
    w = await api.get(f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={first - 1}")
    [err] = await read_events(w, 1)
    assert err["type"] == "ERROR" and err["object"]["code"] == 410
    assert err["object"]["message"] == f"too old resource version: {first - 1} ({oldest - 1})"
    # the oldest available itself is served: every event after it
    w = await api.get(f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={oldest - 1}&timeoutSeconds=1")
    evs = await read_events(w, 10)
    assert [e["object"]["metadata"]["name"] for e in evs] == ["b", "c"]


async def test_watch_too_old_after_relist_prints_list_revision(api):
    from controlplane.api import resources as R
    ns = await new_ns(api)
    cache = api.server_obj.cache_for(R.get("configmaps"))
    await _cm(api, ns, "a")
    relisted = cache.oldest = cache.revision  # as after a relist at this revision
    w = await api.get(f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion=1")
    [err] = await read_events(w, 1)
    # the list's revision, not the cache's current one (other writes may have moved it since)
    assert err["object"]["message"] == f"too old resource version: 1 ({relisted})"


@pytest.mark.parametrize("now,deadline,want", [(0.0, 1000.0, 60.0), (0.0, 30.0, 28.0), (0.0, 1.5, None),
                                               (10.0, 12.0, 10.0), (28.5, 30.0, None)],
                         ids=["every-minute", "before-timeout", "too-short", "right-now", "after-the-last"])
def test_next_bookmark_schedule(now, deadline, want):
    from components.apiserver.watch import WatchServer
    ws = WatchServer({}, None)  # type: ignore[arg-type]
    assert ws.bookmark_interval == 60.0
    assert ws.next_bookmark(now, deadline) == want


async def test_bookmark_before_timeout_carries_only_resource_version(api):
    ns = await new_ns(api)
    rv = await _cm(api, ns, "a")
    w = await api.get(f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={rv}"
                      "&allowWatchBookmarks=true&timeoutSeconds=3")
    evs = await read_events(w, 10)
    assert [e["type"] for e in evs] == ["BOOKMARK"]  # one, 2 s before the deadline; none each second
    obj = evs[0]["object"]
    assert obj["kind"] == "ConfigMap" and obj["apiVersion"] == "v1"
    assert int(obj["metadata"]["resourceVersion"]) >= rv
    assert set(obj["metadata"]) <= {"resourceVersion", "creationTimestamp"}


# ---------------------------------------------------------------- pod update: the spec diff
POD_FORBIDDEN_FIRST_LINE = (
    "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
    "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
    "previously negative)")


async def test_pod_update_of_immutable_field_prints_spec_diff(api):
    ns = await new_ns(api)
    r = await api.post(f"/api/v1/namespaces/{ns}/pods",
                       json={"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    assert r.status == 201
    aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}
    r = await api.patch(f"/api/v1/namespaces/{ns}/pods/p", json={"spec": {"affinity": aff}},
                        headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 422
    body = await r.json()
    [cause] = body["details"]["causes"]
    assert cause["field"] == "spec" and cause["reason"] == "FieldValueForbidden"
    msg = body["message"]
    assert msg.startswith(f'Pod "p" is invalid: {POD_FORBIDDEN_FIRST_LINE}\n')
    diff = msg.split("\n")[1:]
    assert diff[0] == "  core.PodSpec{" and diff[-1] == "  }"
    assert "- \tAffinity: nil," in diff
    assert any(line.startswith("+ \tAffinity: {\"nodeAffinity\"") for line in diff)
    assert "changed:" not in msg


def test_spec_diff_walks_nested_objects_and_lists():
    from controlplane.api.validators import spec_diff
    old = {"containers": [{"name": "a", "image": "x"}], "nodeName": "n"}
    new = {"containers": [{"name": "a", "image": "x", "ports": [{"containerPort": 80}]}], "nodeName": "n"}
    assert spec_diff(old, new, "core.PodSpec").split("\n") == [
        "  core.PodSpec{",
        "  \tContainers: {",
        "  \t\t{",
        "  \t\t\t... // 2 identical fields",
        "- \t\t\tPorts: nil,",
        "+ \t\t\tPorts: [{\"containerPort\": 80}],",
        "  \t\t},",
        "  \t},",
        "  \t... // 1 identical field",
        "  }",
    ]


# ---------------------------------------------------------------- pods/log?follow=true
def _status(state, cid="containerd://1", restarts=0, last=None):
    cs = {"name": "c", "ready": True, "restartCount": restarts, "image": "nginx", "imageID": "",
          "containerID": cid, "state": state}
    if last:
        cs["lastState"] = last
    return {"status": {"phase": "Running", "containerStatuses": [cs]}}


RUNNING = {"running": {"startedAt": "2026-01-01T00:00:00Z"}}
TERMINATED = {"terminated": {"exitCode": 3, "reason": "Error", "startedAt": "2026-01-01T00:00:00Z",
                             "finishedAt": "2026-01-01T00:01:00Z", "containerID": "containerd://1"}}


async def _running_pod(api):
    ns = await new_ns(api)
    r = await api.post(f"/api/v1/namespaces/{ns}/pods", json={"metadata": {"name": "p"}, "spec": {
        "nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]}})
    assert r.status == 201
    await _set_status(api, ns, _status(RUNNING))
    return ns


async def _set_status(api, ns, body):
    r = await api.patch(f"/api/v1/namespaces/{ns}/pods/p/status", json=body,
                        headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 200, await r.text()


async def _line(resp, timeout=5.0):
    return (await asyncio.wait_for(resp.content.readline(), timeout)).decode()


@pytest.mark.parametrize("end", ["terminated", "restarted", "deleted"])
async def test_log_follow_streams_until_the_container_ends(api, end):
    ns = await _running_pod(api)
    resp = await api.get(f"/api/v1/namespaces/{ns}/pods/p/log?follow=true")
    assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/plain")
    assert (await _line(resp)).startswith('container "c" started')
    # still open: nothing more until the pod changes
    pending = asyncio.ensure_future(resp.content.readline())
    done, _ = await asyncio.wait([pending], timeout=0.3)
    assert not done
    if end == "terminated":
        await _set_status(api, ns, _status(TERMINATED))
    elif end == "restarted":
        await _set_status(api, ns, _status({"running": {"startedAt": "2026-01-01T00:02:00Z"}},
                                           cid="containerd://2", restarts=1, last=TERMINATED))
    else:
        r = await api.delete(f"/api/v1/namespaces/{ns}/pods/p?gracePeriodSeconds=0")
        assert r.status == 200
    rest = (await asyncio.wait_for(pending, 5.0)).decode() + (await asyncio.wait_for(resp.content.read(), 5.0)).decode()
    if end == "deleted":
        assert rest == ""
    else:
        assert rest == 'container "c" terminated: exitCode 3, reason Error\n'


async def test_log_without_follow_returns_at_once(api):
    ns = await _running_pod(api)
    resp = await api.get(f"/api/v1/namespaces/{ns}/pods/p/log")
    text = await asyncio.wait_for(resp.text(), 5.0)
    assert text.startswith('container "c" started') and text.count("\n") == 1


# ---------------------------------------------------------------- unknown fields, every write path
MERGE = {"Content-Type": "application/merge-patch+json"}
SMP = {"Content-Type": "application/strategic-merge-patch+json"}
JSONPATCH = {"Content-Type": "application/json-patch+json"}


def _deploy(name="d"):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": {
        "replicas": 1, "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {
            "containers": [{"name": "c", "image": "nginx"}],
            "volumes": [{"name": "v", "configMap": {"name": "cm"}}]}}}}


def _warnings(r):
    return r.headers.getall("Warning", [])


WRITES = ["create", "update", "merge-patch", "strategic-merge-patch", "json-patch"]


async def _write(api, ns, how, validation=""):
    """One write carrying an unknown field deep in a volume source (once free-form) and one
    in the status; returns the response."""
    q = f"?fieldValidation={validation}" if validation else ""
    base = f"/apis/apps/v1/namespaces/{ns}/deployments"
    if how == "create":
        obj = _deploy()
        obj["spec"]["template"]["spec"]["volumes"][0]["configMap"]["bogus"] = 1
        obj["status"] = {"replicas": 1, "notAField": "x"}
        return await api.post(base + q, json=obj)
    r = await api.post(base, json=_deploy())
    assert r.status == 201
    cur = await r.json()
    if how == "update":
        cur["spec"]["template"]["spec"]["volumes"][0]["configMap"]["bogus"] = 1
        cur["status"] = {"replicas": 1, "notAField": "x"}
        return await api.put(f"{base}/d{q}", json=cur)
    if how == "json-patch":
        return await api.patch(f"{base}/d{q}", headers=JSONPATCH, json=[
            {"op": "add", "path": "/spec/template/spec/volumes/0/configMap/bogus", "value": 1},
            {"op": "add", "path": "/status", "value": {"replicas": 1, "notAField": "x"}}])
    patch = {"spec": {"template": {"spec": {"volumes": [{"name": "v", "configMap": {"name": "cm", "bogus": 1}}]}}},
             "status": {"replicas": 1, "notAField": "x"}}
    return await api.patch(f"{base}/d{q}", json=patch, headers=MERGE if how == "merge-patch" else SMP)


@pytest.mark.parametrize("how", WRITES)
async def test_unknown_fields_are_dropped_and_warned(api, how):
    ns = await new_ns(api)
    r = await _write(api, ns, how)
    assert r.status in (200, 201), await r.text()
    warned = " ".join(_warnings(r))
    assert "unknown field" in warned and "bogus" in warned and "notAField" in warned
    stored = await (await api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/d")).json()
    assert stored["spec"]["template"]["spec"]["volumes"][0]["configMap"] == {"name": "cm", "defaultMode": 420}
    assert "notAField" not in (stored.get("status") or {})
    # a later write no longer warns: nothing unknown was kept
    r = await api.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/d", json={"metadata": {"labels": {"a": "b"}}},
                        headers=MERGE)
    assert r.status == 200 and _warnings(r) == []


@pytest.mark.parametrize("how", WRITES)
async def test_unknown_fields_with_strict_are_refused(api, how):
    ns = await new_ns(api)
    r = await _write(api, ns, how, "Strict")
    assert r.status == (400 if how in ("create", "update") else 422)
    assert "strict decoding error: unknown field" in (await r.json())["message"]


async def test_unknown_fields_in_apply_are_refused(api):
    ns = await new_ns(api)
    obj = _deploy()
    obj["spec"]["template"]["spec"]["volumes"][0]["configMap"]["bogus"] = 1
    r = await api.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/d?fieldManager=m", data=json.dumps(obj),
                        headers={"Content-Type": "application/apply-patch+yaml"})
    assert r.status == 400
    assert (await r.json())["message"].endswith(
        ".spec.template.spec.volumes[0].configMap.bogus: field not declared in schema")


# ---------------------------------------------------------------- zero values Go omits
async def test_status_zero_counts_are_omitted(api):
    ns = await new_ns(api)
    r = await api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=_deploy())
    assert r.status == 201
    r = await api.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/d/status", headers=MERGE, json={"status": {
        "replicas": 1, "readyReplicas": 0, "availableReplicas": 0, "updatedReplicas": 1, "collisionCount": 0,
        "conditions": []}})
    assert r.status == 200
    status = (await r.json())["status"]
    # value fields tagged omitempty go; collisionCount is a pointer (*int32): its 0 stays
    assert status == {"replicas": 1, "updatedReplicas": 1, "collisionCount": 0}
    stored = await (await api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/d")).json()
    assert stored["status"] == status
    assert stored["spec"]["replicas"] == 1  # a pointer: kept whatever its value


async def test_spec_pointer_zero_is_kept(api):
    ns = await new_ns(api)
    obj = _deploy()
    obj["spec"]["replicas"] = 0
    r = await api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=obj)
    assert (await r.json())["spec"]["replicas"] == 0


async def test_empty_list_after_patch_delete_is_omitted(api):
    ns = await new_ns(api)
    r = await api.post(f"/api/v1/namespaces/{ns}/pods", json={"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]}})
    assert r.status == 201
    r = await api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json={**_deploy(), "spec": {
        **_deploy()["spec"], "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [
            {"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]}}}})
    assert r.status == 201
    r = await api.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/d", headers=SMP, json={"spec": {"template": {
        "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80, "$patch": "delete"}]}]}}}})
    assert r.status == 200, await r.text()
    [c] = (await r.json())["spec"]["template"]["spec"]["containers"]
    assert "ports" not in c


async def test_table_watch_include_object(api):
    ns = await new_ns(api)
    rv = await _cm(api, ns, "a")
    w = await api.get(f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={rv}&includeObject=Object",
                      headers=TABLE)
    r = await api.patch(f"/api/v1/namespaces/{ns}/configmaps/a", json={"data": {"k": "v"}}, headers=MERGE)
    assert r.status == 200
    [ev] = await read_events(w, 1)
    assert ev["type"] == "MODIFIED" and ev["object"]["kind"] == "Table"
    assert ev["object"]["rows"][0]["object"]["data"] == {"k": "v"}
    w.close()
