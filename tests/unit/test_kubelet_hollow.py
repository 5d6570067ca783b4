"""Many hollow nodes in one Kubelet: one pods watch, dispatched by spec.nodeName."""

from __future__ import annotations

import asyncio
import copy

from components.kubelet.kubelet import Kubelet, Timings
from components.kubelet.node import NodeConfig
from controlplane.api.resources import NODES, PODS
from controlplane.client.testing import FakeClient


async def test_hollow_nodes_register_and_pods_reach_their_node():
    api = FakeClient()
    nodes = [NodeConfig(name=f"hollow-{i}", index=100 + i) for i in range(20)]
    k = Kubelet(api, nodes, Timings(image_pull_seconds=0.0, container_start_seconds=0.0))
    assert k.field_selector == "spec.nodeName!="
    sem = asyncio.Semaphore(8)
    await asyncio.gather(*(k._start_node(cfg, sem) for cfg in nodes))
    assert sorted(n["metadata"]["name"] for n in api.all(NODES)) == sorted(c.name for c in nodes)
    assert api.stored(NODES, "hollow-3")["spec"]["podCIDR"] == "10.244.103.0/24"
    addrs = {api.stored(NODES, c.name)["status"]["addresses"][0]["address"] for c in nodes}
    assert len(addrs) == 20  # distinct InternalIPs

    pod = {"kind": "Pod", "apiVersion": "v1",
           "metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
           "spec": {"nodeName": "hollow-3", "containers": [{"name": "c", "image": "nginx"}]},
           "status": {"phase": "Pending"}}
    api.seed(PODS, pod)
    k._on_add(copy.deepcopy(pod))
    k._on_add({**copy.deepcopy(pod), "metadata": {**pod["metadata"], "name": "q", "uid": "uid-q"},
               "spec": {**pod["spec"], "nodeName": "elsewhere"}})  # not ours: ignored
    await k.workers["hollow-3"].wait_idle()
    st = api.stored(PODS, "p", "default")["status"]
    assert st["phase"] == "Running" and st["podIP"] == "10.244.103.2"
    assert st["hostIP"] == "192.168.1.103"
    assert all(not w.pods() for n, w in k.workers.items() if n != "hollow-3")
    await k.stop()
