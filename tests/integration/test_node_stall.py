"""A stalled kubelet (SIGSTOP) beyond the node grace period, then resumed (SIGCONT).

Processes: our etcd (memory only), the apiserver, the controller-manager with a 4 s
``--node-monitor-grace-period``, the scheduler and two kubelets renewing their Lease
every 0.5 s. Two Deployments run on node01 (node02 joins later): ``stay`` tolerates
``node.kubernetes.io/unreachable`` NoExecute for ever, ``move`` for 2 s. The kubelet
of node01 is stopped. Expected, as in Kubernetes: node01 turns Ready=Unknown, every
pod there is marked Ready=False (MarkPodsNotReady), ``move``'s pod is evicted and
replaced on node02. After SIGCONT node01 is Ready again, the evicted pod is gone and
``stay``'s pods are Ready=True again — written back by the kubelet, which compares
its status with the apiserver's, not with what it sent last
(``pkg/kubelet/status/status_manager.go``). Every wait is ``kubectl wait`` with a
timeout.
"""

from __future__ import annotations

import json
import signal
import subprocess

import pytest

from tests.integration.conftest import NodeCluster

pytestmark = pytest.mark.integration

DEPLOYMENTS = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: stay}
spec:
  replicas: 2
  selector: {matchLabels: {app: stay}}
  template:
    metadata: {labels: {app: stay}}
    spec:
      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}
      containers:
      - {name: c, image: nginx}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: move}
spec:
  replicas: 1
  selector: {matchLabels: {app: move}}
  template:
    metadata: {labels: {app: move}}
    spec:
      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 2}
      containers:
      - {name: c, image: nginx}
"""


@pytest.fixture()
def env(node_cluster):
    return node_cluster.server, node_cluster.kubelet, node_cluster.cache



def kubectl(server: str, cache: str, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return NodeCluster(server, None, cache).kubectl(*args, input=input)


def test_stalled_kubelet_pods_evicted_then_remaining_pods_ready_again(env):
    server, kubelet, cache = env
    k = lambda *a, **kw: kubectl(server, cache, *a, **kw)
    pods_of = lambda app: json.loads(k("get", "pods", "-l", f"app={app}", "-o", "json").stdout)["items"]
    stalled = kubelet("node01")
    k("wait", "--for=condition=Ready", "node/node01", "--timeout=60s")
    k("apply", "-f", "-", input=DEPLOYMENTS)
    k("rollout", "status", "deployment/stay", "--timeout=90s")
    k("rollout", "status", "deployment/move", "--timeout=90s")
    stay = [p["metadata"]["name"] for p in pods_of("stay")]
    [moved] = [p["metadata"]["name"] for p in pods_of("move")]
    assert {p["spec"]["nodeName"] for p in pods_of("stay") + pods_of("move")} == {"node01"}
    kubelet("node02")
    k("wait", "--for=condition=Ready", "node/node02", "--timeout=60s")

    stalled.send_signal(signal.SIGSTOP)
    k("wait", "--for=condition=Ready=Unknown", "node/node01", "--timeout=60s")
    for name in stay:
        k("wait", "--for=condition=Ready=false", f"pod/{name}", "--timeout=60s")
    # move's pod: tolerated 2 s, then evicted (Terminating: the stopped kubelet cannot confirm)
    k("wait", "--for=jsonpath={.metadata.deletionTimestamp}", f"pod/{moved}", "--timeout=60s")
    k("wait", "--for=jsonpath={.status.readyReplicas}=1", "deployment/move", "--timeout=90s")
    live = [p for p in pods_of("move") if not p["metadata"].get("deletionTimestamp")]
    assert [p["spec"]["nodeName"] for p in live] == ["node02"]
    # stay's pods tolerate the taint for ever: still there, still bound to node01
    assert sorted(p["metadata"]["name"] for p in pods_of("stay")) == sorted(stay)

    stalled.send_signal(signal.SIGCONT)
    k("wait", "--for=condition=Ready", "node/node01", "--timeout=60s")
    for name in stay:
        k("wait", "--for=condition=Ready", f"pod/{name}", "--timeout=60s")
    k("wait", "--for=delete", f"pod/{moved}", "--timeout=60s")
    k("wait", "--for=jsonpath={.status.readyReplicas}=2", "deployment/stay", "--timeout=60s")
    pods = pods_of("stay")
    assert sorted(p["metadata"]["name"] for p in pods) == sorted(stay)
    assert {p["spec"]["nodeName"] for p in pods} == {"node01"}
    assert all({c["type"]: c["status"] for c in p["status"]["conditions"]}["ContainersReady"] == "True"
               for p in pods)
