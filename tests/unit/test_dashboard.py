"""The dashboard server against a real apiserver (on a test etcd): its state comes from
list-watches and the trace stream, changes reach the browser as server-sent events, and a
pod's scheduler table is the one ``controlplane explain`` prints (by the pod's uid)."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp.test_utils import TestClient, TestServer

from controlplane.dashboard.server import Dashboard, node_view, pod_view
from controlplane.trace.record import make_record
from tests.support.apiserver import new_ns


def node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kgc": "a"}},
            "spec": {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]}}


def pod(name: str, ns: str, node: str = "") -> dict:
    spec = {"containers": [{"name": "c", "image": "nginx"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}, "spec": spec}


async def sse_events(resp, want, timeout: float = 10.0) -> list[tuple[str, dict]]:
    """Read server-sent events until ``want(events)`` holds."""
    got: list[tuple[str, dict]] = []
    kind, data = "", ""

    async def read() -> None:
        nonlocal kind, data
        async for raw in resp.content:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data += line[6:]
            elif line == "" and kind:
                got.append((kind, json.loads(data)))
                kind, data = "", ""
                if want(got):
                    return
    await asyncio.wait_for(read(), timeout)
    return got


@pytest.fixture
async def dash(api):
    ns = await new_ns(api)
    nname = f"node-{ns}"
    assert (await api.post("/api/v1/nodes", json=node(nname))).status == 201
    created = await (await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("web", ns))).json()
    rec = make_record(9, "scheduler", "filtered 1 nodes → 1 feasible; picked node01; assumed", created, data={
        "recorded": True, "selectedNode": nname, "filterPlugins": ["TaintToleration"], "scorePlugins": [],
        "filter": {nname: {"TaintToleration": "passed"}}, "score": {}, "finalScore": {}, "total": {},
        "weights": {}})
    assert (await api.post("/debug/controlplane/trace", json={"records": [rec.to_dict()]})).status == 200
    d = Dashboard(str(api.make_url("")).rstrip("/"))
    await d.start()
    browser = TestClient(TestServer(d.app))
    await browser.start_server()
    for inf in d.informers.values():
        await inf.wait_synced(10)
    yield browser, d, created, ns, nname
    await browser.close()
    await d.stop()


async def test_state_has_nodes_with_labels_and_taints_pods_and_records(dash):
    browser, d, created, ns, nname = dash
    resp = await browser.get("/api/stream")
    assert resp.headers["Content-Type"] == "text/event-stream"
    evs = await sse_events(resp, lambda evs: any(k == "state" for k, _ in evs))
    state = evs[0][1]
    resp.close()
    n = next(n for n in state["nodes"] if n["name"] == nname)
    assert n["labels"]["kgc"] == "a"
    assert n["taints"] == [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    mine = [p for p in state["pods"] if p["namespace"] == ns]
    assert [p["name"] for p in mine] == ["web"] and mine[0]["phase"] == "Pending"
    assert any(r["step"] == 9 and r["object"]["uid"] == created["metadata"]["uid"] for r in state["records"])
    page = await (await browser.get("/")).text()
    assert "/static/seq.js" in page and "/static/app.js" in page
    assert "window.CP_STEPS" in await (await browser.get("/steps.js")).text()
    for asset in ("seq.js", "app.js", "style.css"):
        assert (await browser.get(f"/static/{asset}")).status == 200


async def test_changes_are_pushed_as_server_sent_events(api, dash):
    browser, d, _, ns, nname = dash
    resp = await browser.get("/api/stream")
    await sse_events(resp, lambda evs: evs[-1][0] == "state")
    await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("second", ns))
    await api.patch(f"/api/v1/nodes/{nname}", data=json.dumps({"metadata": {"labels": {"kgc": "b"}}}),
                    headers={"Content-Type": "application/merge-patch+json"})
    evs = await sse_events(resp, lambda evs: any(
        c.get("kind") == "pod" and c["object"]["name"] == "second" for _, c in evs) and any(
        c.get("kind") == "node" and c["object"]["name"] == nname and c["object"]["labels"].get("kgc") == "b"
        for _, c in evs))
    resp.close()
    assert all(k == "change" for k, _ in evs)


async def test_explain_is_the_current_pods_table_and_events(api, dash):
    browser, d, created, ns, nname = dash
    body = await (await browser.get("/api/explain", params={"namespace": ns, "name": "web"})).json()
    assert body["pod"]["uid"] == created["metadata"]["uid"]
    assert body["table"]["header"][:2] == ["NODE", "TaintToleration"] and body["table"]["chosen"] == nname
    assert body["table"]["rows"][0][-1] == "<= chosen" and body["bypassed"] is None


async def test_explain_of_a_pod_bound_by_node_name_says_bypassed(api, dash):
    browser, d, _, ns, nname = dash
    seen = asyncio.Event()
    d.informers["pod"].add_handlers(on_add=lambda p: seen.set() if p["name"] == "pinned" else None)
    await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("pinned", ns, nname))
    await asyncio.wait_for(seen.wait(), 10)
    body = await (await browser.get("/api/explain", params={"namespace": ns, "name": "pinned"})).json()
    assert body["table"] is None and "scheduler was bypassed" in body["bypassed"]


@pytest.mark.parametrize("obj,view", [
    pytest.param({"metadata": {"name": "n"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]},
                  "spec": {"unschedulable": True}},
                 {"name": "n", "labels": {}, "taints": [], "ready": "True", "unschedulable": True}, id="node"),
])
def test_node_view(obj, view):
    assert node_view(obj) == view


def test_pod_view_shows_unschedulable_message_and_terminating():
    p = {"metadata": {"name": "p", "namespace": "default", "uid": "u", "deletionTimestamp": "x"},
         "spec": {"containers": [{"name": "c"}]},
         "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                        "message": "0/2 nodes are available"}]}}
    v = pod_view(p)
    assert v["deleting"] and v["scheduled"] == "0/2 nodes are available" and v["ready"] == "0/1"


async def test_serve_takes_the_next_free_port_when_its_own_is_taken(api):
    import socket

    from controlplane.dashboard.server import serve_first_free
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        d, runner, bound = await serve_first_free(str(api.make_url("")).rstrip("/"), port)
        try:
            assert bound != port and port < bound < port + 20
        finally:
            await d.stop()
            await runner.cleanup()
