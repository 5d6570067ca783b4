"""The simulated usage rule (controlplane/usage.py) and ``metrics.k8s.io/v1beta1`` served from
the watch caches (controlplane/api/groups/metrics.py, components/apiserver/computed.py)."""

from __future__ import annotations

import pytest

from controlplane import usage
from controlplane.api.groups import metrics
from tests.support.apiserver import new_ns, watch_until

MI = 1024 * 1024


def _pod(name="web", *, ann=None, cpu="200m", mem="128Mi", phase="Running", running=("app",), node="n1",
         containers=("app",), uid="u-1", labels=None):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": uid, "annotations": ann or {},
                         "labels": labels or {"app": "web"}},
            "spec": {"nodeName": node, "containers": [
                {"name": c, "image": "x", "resources": {"requests": {"cpu": cpu, "memory": mem}} if cpu else {}}
                for c in containers]},
            "status": {"phase": phase, "containerStatuses": [
                {"name": c, "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}} if c in running
                 else {"waiting": {"reason": "ContainerCreating"}}} for c in containers]}}


@pytest.mark.parametrize("pod, expect", [
    (_pod(ann={"controlplane.io/cpu-usage": "250m", "controlplane.io/memory-usage": "64Mi"}),
     [("app", usage.Usage(250_000_000, 64 * MI))]),
    (_pod(containers=("app", "side"), running=("app", "side"),
          ann={"controlplane.io/cpu-usage": "100m", "controlplane.io/cpu-usage.side": "1",
               "controlplane.io/memory-usage": "10Mi"}),
     [("app", usage.Usage(100_000_000, 10 * MI)), ("side", usage.Usage(1_000_000_000, 10 * MI))]),
    (_pod(ann={"controlplane.io/memory-usage": "1000"}, cpu="1"),
     [("app", usage.Usage(usage.container_usage(_pod(cpu="1"), {"name": "app", "resources": {
         "requests": {"cpu": "1", "memory": "128Mi"}}}).cpu, 4096))]),
    (_pod(phase="Pending"), None),
    (_pod(running=()), None),
    (_pod(containers=("app", "late"), running=("app",), ann={"controlplane.io/cpu-usage": "5m",
                                                           "controlplane.io/memory-usage": "4Ki"}),
     [("app", usage.Usage(5_000_000, 4096))]),
], ids=["annotation-per-pod", "annotation-per-container-wins", "memory-rounded-to-pages", "pending-has-none",
        "nothing-running-has-none", "only-running-containers"])
def test_pod_usage_rule(pod, expect):
    assert usage.pod_usage(pod) == expect


def test_default_profile_is_a_jittered_fraction_of_the_request():
    a, b = usage.pod_usage(_pod(uid="a")), usage.pod_usage(_pod(uid="b"))
    assert a is not None and b is not None
    (_, ua), (_, ub) = a[0], b[0]
    assert ua != ub, "jitter by uid: top is not flat"
    for u in (ua, ub):
        assert 8_000_000 <= u.cpu < 12_000_000          # 5% of 200m, x [0.8, 1.2)
        assert 0.8 * 0.3 * 128 * MI <= u.memory < 1.2 * 0.3 * 128 * MI + 4096
        assert u.memory % 4096 == 0
    assert usage.pod_usage(_pod(uid="a")) == a, "deterministic"
    [(_, none)] = usage.pod_usage(_pod(cpu=None)) or []
    assert 0.8 * usage.DEFAULT_CPU <= none.cpu < 1.2 * usage.DEFAULT_CPU


def test_node_usage_sums_its_pods_plus_overhead():
    node = {"metadata": {"name": "n1", "uid": "node-uid"}}
    p1 = _pod("a", uid="1", ann={"controlplane.io/cpu-usage": "100m", "controlplane.io/memory-usage": "1Mi"})
    p2 = _pod("b", uid="2", ann={"controlplane.io/cpu-usage": "200m", "controlplane.io/memory-usage": "2Mi"})
    elsewhere = _pod("c", uid="3", node="n2", ann={"controlplane.io/cpu-usage": "1"})
    empty = usage.node_usage(node, [])
    assert usage.node_usage(node, [p1, p2, elsewhere]) == empty + usage.Usage(300_000_000, 3 * MI)
    assert 0.8 * usage.NODE_OVERHEAD_CPU <= empty.cpu < 1.2 * usage.NODE_OVERHEAD_CPU


@pytest.mark.parametrize("n, text", [(12345, "12345n"), (250_000_000, "250m"), (0, "0"), (2_000_000_000, "2")],
                         ids=["nanocores", "round-millicores", "zero", "cores"])
def test_cpu_text(n, text):
    assert metrics.cpu_text(n) == text


def test_sample_time_is_the_last_window_boundary():
    assert usage.sample_time(1000.0) == 990.0 and usage.sample_time(990.0) == 990.0


# --------------------------------------------------------------------------- served by the apiserver

async def _running_pod(api, ns, name, ann, cpu="200m"):
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name},
                                                            "annotations": ann},
            "spec": {"nodeName": "mnode", "containers": [{"name": "app", "image": "x", "resources": {
                "requests": {"cpu": cpu}}}]}}
    r = await api.post(f"/api/v1/namespaces/{ns}/pods", json=body)
    assert r.status == 201, await r.text()
    pod = await r.json()
    pod["status"] = {"phase": "Running", "containerStatuses": [
        {"name": "app", "ready": True, "restartCount": 0, "image": "x", "imageID": "", "started": True,
         "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]}
    r = await api.put(f"/api/v1/namespaces/{ns}/pods/{name}/status", json=pod)
    assert r.status == 200, await r.text()
    await watch_until(api, f"/api/v1/namespaces/{ns}/pods?fieldSelector=metadata.name={name}",
                      lambda o: (o.get("status") or {}).get("phase") == "Running")


async def _ready_node(api, name):
    r = await api.post("/api/v1/nodes", json={"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": name, "labels": {"kubernetes.io/hostname": name}}})
    assert r.status in (201, 409), await r.text()
    node = await (await api.get(f"/api/v1/nodes/{name}")).json()
    node["status"] = {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                      "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                                      "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    r = await api.put(f"/api/v1/nodes/{name}/status", json=node)
    assert r.status == 200, await r.text()
    await watch_until(api, f"/api/v1/nodes?fieldSelector=metadata.name={name}",
                      lambda o: bool((o.get("status") or {}).get("conditions")))


async def test_metrics_api_serves_pods_and_nodes_from_the_caches(api):
    ns = await new_ns(api)
    await _ready_node(api, "mnode")
    await _running_pod(api, ns, "hot", {"controlplane.io/cpu-usage": "150m", "controlplane.io/memory-usage": "64Mi"})
    await _running_pod(api, ns, "cold", {"controlplane.io/cpu-usage": "1m", "controlplane.io/memory-usage": "4Ki"})

    r = await api.get(f"/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods")
    assert r.status == 200
    body = await r.json()
    assert body["kind"] == "PodMetricsList" and body["metadata"] == {}
    assert [i["metadata"]["name"] for i in body["items"]] == ["cold", "hot"]
    hot = body["items"][1]
    assert hot["window"] == "15s" and hot["timestamp"].endswith("Z")
    assert hot["containers"] == [{"name": "app", "usage": {"cpu": "150m", "memory": "64Mi"}}]
    assert hot["metadata"]["labels"] == {"app": "hot"} and hot["metadata"]["namespace"] == ns

    r = await api.get(f"/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods?labelSelector=app%3Dcold")
    assert [i["metadata"]["name"] for i in (await r.json())["items"]] == ["cold"]
    r = await api.get(f"/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods/hot")
    assert r.status == 200 and (await r.json())["kind"] == "PodMetrics"
    r = await api.get(f"/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods/nope")
    assert r.status == 404
    assert (await r.json())["message"] == f'podmetrics.metrics.k8s.io "{ns}/nope" not found'

    r = await api.get("/apis/metrics.k8s.io/v1beta1/nodes/mnode")
    node = await r.json()
    assert r.status == 200 and node["kind"] == "NodeMetrics"
    assert node["metadata"]["labels"] == {"kubernetes.io/hostname": "mnode"}
    cpu = metrics.parse_quantity(node["usage"]["cpu"])
    assert cpu >= metrics.parse_quantity("151m"), "the node's pods plus its overhead"
    r = await api.get("/apis/metrics.k8s.io/v1beta1/nodes/ghost")
    assert r.status == 404 and (await r.json())["message"] == 'nodemetrics.metrics.k8s.io "ghost" not found'

    r = await api.get(f"/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods",
                      headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    table = await r.json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "cpu", "memory", "Window"]
    assert table["rows"][1]["cells"] == ["hot", "150m", "64Mi", "15s"]


@pytest.mark.parametrize("method, path", [
    ("post", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"),
    ("delete", "/apis/metrics.k8s.io/v1beta1/nodes/x"),
    ("get", "/apis/metrics.k8s.io/v1beta1/nodes?watch=true"),
], ids=["create", "delete", "watch"])
async def test_metrics_api_is_read_only(api, method, path):
    r = await getattr(api, method)(path)
    assert r.status == 405


async def test_metrics_group_in_discovery(api):
    groups = await (await api.get("/apis")).json()
    assert {"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"} in next(
        g for g in groups["groups"] if g["name"] == "metrics.k8s.io")["versions"]
    rl = await (await api.get("/apis/metrics.k8s.io/v1beta1")).json()
    assert {(r["name"], r["kind"], tuple(r["verbs"])) for r in rl["resources"]} == {
        ("nodes", "NodeMetrics", ("get", "list")), ("pods", "PodMetrics", ("get", "list"))}
    assert all("storageVersionHash" not in r for r in rl["resources"])
