"""Many hollow nodes in one Kubelet: one pods watch, dispatched by spec.nodeName."""

from __future__ import annotations

import asyncio
import copy

from components.kubelet.kubelet import Kubelet, Timings
from components.kubelet.node import NodeConfig
from controlplane.api.resources import EVENTS, NODES, PODS
from controlplane.client.testing import FakeClient


async def test_hollow_nodes_register_and_pods_reach_their_node():
    api = FakeClient()
    nodes = [NodeConfig(name=f"hollow-{i}", index=100 + i) for i in range(20)]
    k = Kubelet(api, nodes, Timings(image_pull_seconds=0.0, container_start_seconds=0.0))
    assert k.field_selector == "spec.nodeName!="
    sem = asyncio.Semaphore(8)
    await asyncio.gather(*(k._start_node(cfg, sem) for cfg in nodes))
    assert sorted(n["metadata"]["name"] for n in api.all(NODES)) == sorted(c.name for c in nodes)
    assert "podCIDR" not in api.stored(NODES, "hollow-3")["spec"], "the node IPAM controller's to write"
    for i, cfg in enumerate(nodes):   # as the node IPAM controller does; seen on the nodes informer
        cidr = f"10.64.{i}.0/24"
        k._on_node(await api.patch(NODES, cfg.name, {"spec": {"podCIDR": cidr, "podCIDRs": [cidr]}}))
    assert k.agents["hollow-3"].cfg.pod_cidr == "10.64.3.0/24" and k.agents["hollow-3"].changed
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
    assert st["phase"] == "Running" and st["podIP"] == "10.64.3.2"
    assert st["hostIP"] == "192.168.1.103"
    assert all(not w.pods() for n, w in k.workers.items() if n != "hollow-3")
    await k.stop()


async def test_a_pod_waits_for_the_network_until_its_node_has_a_pod_cidr():
    api = FakeClient()
    nodes = [NodeConfig(name="hollow-0", index=100)]
    k = Kubelet(api, nodes, Timings(image_pull_seconds=0.0, container_start_seconds=0.0), trace=False)
    await k._start_node(nodes[0], asyncio.Semaphore(1))
    pod = {"kind": "Pod", "apiVersion": "v1",
           "metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
           "spec": {"nodeName": "hollow-0", "containers": [{"name": "c", "image": "nginx"}]},
           "status": {"phase": "Pending"}}
    api.seed(PODS, pod)
    k._on_add(copy.deepcopy(pod))
    await k.workers["hollow-0"].wait_idle()
    assert "podIP" not in api.stored(PODS, "p", "default").get("status", {})
    await k.workers["hollow-0"].recorder.flush()
    assert any(e.get("reason") == "NetworkNotReady" and e["message"].startswith("network is not ready: ")
               for e in api.all(EVENTS))
    k._on_node(await api.patch(NODES, "hollow-0", {"spec": {"podCIDR": "10.64.9.0/24",
                                                           "podCIDRs": ["10.64.9.0/24"]}}))
    await k.workers["hollow-0"].wait_idle()
    st = api.stored(PODS, "p", "default")["status"]
    assert st["phase"] == "Running" and st["podIP"] == "10.64.9.2"
    await k.stop()
