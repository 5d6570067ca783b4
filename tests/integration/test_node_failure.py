"""A node whose kubelet dies: with real processes and the real kubectl.

Processes: our etcd (memory only), the apiserver, the controller-manager with a 4 s
``--node-monitor-grace-period``, the scheduler and two kubelets renewing their Lease
every 0.5 s. A Deployment whose pods tolerate ``node.kubernetes.io/unreachable``
NoExecute for 2 s runs; the kubelet of the node running its first pod is SIGKILLed.
Expected, as in Kubernetes: the node turns Ready=Unknown (``kubectl get nodes`` says
NotReady) with the unreachable NoSchedule and NoExecute taints, the pods there are
marked with DisruptionTarget and deleted by the taint eviction controller, and the
ReplicaSet's replacements run on the surviving node. All waits are ``kubectl wait``
or output-line waits with timeouts.
"""

from __future__ import annotations

import json
import signal
import subprocess

import pytest

from tests.integration.conftest import NodeCluster

pytestmark = pytest.mark.integration

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 2}
      containers:
      - {name: c, image: nginx}
"""


@pytest.fixture()
def env(node_cluster):
    kubelets = {n: node_cluster.kubelet(n) for n in ("node01", "node02")}
    return node_cluster.server, kubelets, node_cluster.controller_manager, node_cluster.cache



def kubectl(server: str, cache: str, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return NodeCluster(server, None, cache).kubectl(*args, input=input)


def test_dead_kubelet_node_goes_unknown_tainted_and_pods_move(env):
    server, kubelets, cm_out, cache = env
    k = lambda *a, **kw: kubectl(server, cache, *a, **kw)
    k("wait", "--for=condition=Ready", "node/node01", "node/node02", "--timeout=60s")
    k("apply", "-f", "-", input=DEPLOYMENT)
    k("rollout", "status", "deployment/web", "--timeout=90s")
    pods = json.loads(k("get", "pods", "-l", "app=web", "-o", "json").stdout)["items"]
    assert len(pods) == 2
    victim = pods[0]["spec"]["nodeName"]
    survivor = "node02" if victim == "node01" else "node01"
    old = [p["metadata"]["name"] for p in pods if p["spec"]["nodeName"] == victim]
    ip_of = lambda items: sorted(p["status"]["podIP"] for p in items)

    # the endpoints controller: kubectl expose → Endpoints with both pods' IPs
    k("expose", "deployment/web", "--port", "80", "--target-port", "8080")
    k("wait", "--for=jsonpath={.subsets[0].addresses[1].ip}", "endpoints/web", "--timeout=30s")
    ep = json.loads(k("get", "endpoints", "web", "-o", "json").stdout)
    assert sorted(a["ip"] for a in ep["subsets"][0]["addresses"]) == ip_of(pods)
    assert ep["subsets"][0]["ports"] == [{"port": 8080, "protocol": "TCP"}]
    row = k("get", "endpoints", "web", "--no-headers").stdout.split()
    assert row[0] == "web" and sorted(row[1].split(",")) == sorted(f"{ip}:8080" for ip in ip_of(pods))
    # the serviceaccount controller: a default ServiceAccount in default
    k("get", "serviceaccount", "default")

    kubelets[victim].send_signal(signal.SIGKILL)
    kubelets[victim].wait(10)

    # the node lifecycle controller: Unknown conditions, taints, event
    k("wait", "--for=condition=Ready=Unknown", f"node/{victim}", "--timeout=60s")
    node = json.loads(k("get", "node", victim, "-o", "json").stdout)
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == "NodeStatusUnknown" and ready["message"] == "Kubelet stopped posting node status."
    k("wait", "--for=jsonpath={.spec.taints[1].effect}", f"node/{victim}", "--timeout=30s")
    rows = {line.split()[0]: line.split()[1] for line in k("get", "nodes", "--no-headers").stdout.splitlines()}
    assert rows == {victim: "NotReady", survivor: "Ready"}
    desc = k("describe", "node", victim).stdout
    assert "node.kubernetes.io/unreachable:NoExecute" in desc
    assert "node.kubernetes.io/unreachable:NoSchedule" in desc
    assert "NodeNotReady" in desc

    # the taint eviction controller: DisruptionTarget, then DELETE (graceful: the dead
    # kubelet never confirms, so the old pods stay Terminating, as in Kubernetes)
    for name in old:
        k("wait", "--for=condition=DisruptionTarget", f"pod/{name}", "--timeout=60s")
        k("wait", "--for=jsonpath={.metadata.deletionTimestamp}", f"pod/{name}", "--timeout=30s")
    events = k("get", "events", "--field-selector", "reason=TaintManagerEviction", "-o", "json").stdout
    msgs = {e["message"] for e in json.loads(events)["items"]}
    assert {f"Marking for deletion Pod default/{n}" for n in old} <= msgs

    # the ReplicaSet replaces them; the scheduler keeps off the tainted node
    k("wait", "--for=jsonpath={.status.readyReplicas}=2", "deployment/web", "--timeout=90s")
    live = [p for p in json.loads(k("get", "pods", "-l", "app=web", "-o", "json").stdout)["items"]
            if not p["metadata"].get("deletionTimestamp")]
    assert len(live) == 2
    assert {p["spec"]["nodeName"] for p in live} == {survivor}
    assert {p["status"]["phase"] for p in live} == {"Running"}
    # the endpoints follow: the terminating pods leave, the new ones come in (sorted by IP)
    for i, ip in enumerate(sorted(ip_of(live), key=lambda a: tuple(int(x) for x in a.split(".")))):
        k("wait", f"--for=jsonpath={{.subsets[0].addresses[{i}].ip}}={ip}", "endpoints/web", "--timeout=30s")
    ep = json.loads(k("get", "endpoints", "web", "-o", "json").stdout)
    assert sorted(a["ip"] for s in ep.get("subsets") or [] for a in s.get("addresses") or []) == ip_of(live)
    assert any("nodelifecycle.node_unknown" in line and victim in line for line in cm_out.lines)
