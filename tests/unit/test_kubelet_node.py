"""Kubelet node registration, take-over, status patch and lease, against a fake apiserver."""

from __future__ import annotations

import asyncio
import copy
import time

import pytest

from components.kubelet.node import (
    Heartbeats,
    NodeAgent,
    NodeConfig,
    build_node,
    internal_ip_for,
    node_index_from_name,
    parse_labels,
    resources,
)
from controlplane import KUBE_VERSION
from controlplane.api.resources import LEASES, NAMESPACES, NODES
from controlplane.client.testing import FakeClient


def fake_api() -> FakeClient:
    """The apiserver with only the default namespace (a lease's namespace must exist)."""
    api = FakeClient(require_namespaces=True)
    api.seed(NAMESPACES, {"metadata": {"name": "default"}})
    return api


def verbs(api: FakeClient) -> list[tuple]:
    """``(verb, resource, name)`` of every write, and a patch's subresource and top-level keys."""
    return [(a.verb, a.resource, a.name) + ((a.subresource, tuple(a.patch)) if a.verb == "patch" else ())
            for a in api.writes()]


def test_build_node_shape():
    cfg = NodeConfig(name="node01", index=1, labels={"kgc": "a"}, pod_cidr="10.244.1.0/24")
    n = build_node(cfg, [])
    labels = n["metadata"]["labels"]
    assert labels == {"kubernetes.io/hostname": "node01", "kubernetes.io/os": "linux",
                      "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                      "beta.kubernetes.io/arch": "amd64", "kgc": "a"}
    assert n["spec"] == {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"]}
    st = n["status"]
    assert st["addresses"] == [{"type": "InternalIP", "address": "192.168.0.101"},
                               {"type": "Hostname", "address": "node01"}]
    assert st["capacity"]["cpu"] == "4" and st["capacity"]["memory"] == "8388608Ki"
    assert st["capacity"]["pods"] == "110"
    assert st["allocatable"]["memory"] == f"{8388608 - 102400}Ki"
    assert st["nodeInfo"]["kubeletVersion"] == KUBE_VERSION
    assert st["nodeInfo"]["containerRuntimeVersion"].startswith("containerd://")
    conds = {c["type"]: c for c in st["conditions"]}
    assert conds["Ready"]["status"] == "True" and conds["Ready"]["reason"] == "KubeletReady"
    assert conds["Ready"]["message"] == "kubelet is posting ready status"
    for t in ("MemoryPressure", "DiskPressure", "PIDPressure"):
        assert conds[t]["status"] == "False" and conds[t]["lastHeartbeatTime"]


def test_node_without_pod_cidr_registers_not_ready_for_the_network():
    n = build_node(NodeConfig(name="node01", index=1), [])
    assert "podCIDR" not in n["spec"] and "podCIDRs" not in n["spec"]
    ready = next(c for c in n["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "KubeletNotReady")
    assert "NetworkReady=false reason:NetworkPluginNotReady" in ready["message"]


def test_helpers_and_bad_input():
    assert node_index_from_name("node01") == 1 and node_index_from_name("node02") == 2
    assert node_index_from_name("hollow-4999") == 4999 and node_index_from_name("n25600") == 25600
    assert 1 <= node_index_from_name("master") <= 250
    assert internal_ip_for(5099) == "192.168.50.199"
    assert internal_ip_for(25_599) == "192.168.255.199" and internal_ip_for(25_600) == "172.16.0.1"
    assert len({internal_ip_for(i) for i in range(0, 30_000)}) == 30_000
    with pytest.raises(ValueError):
        internal_ip_for(-1)
    assert parse_labels("kgc=a, foo=bar") == {"kgc": "a", "foo": "bar"}
    with pytest.raises(ValueError):
        parse_labels("novalue")
    with pytest.raises(ValueError):
        resources(NodeConfig(name="n", memory="8Xi"))
    assert resources(NodeConfig(name="n", cpu="1500m"))[0]["cpu"] == "1500m"


async def test_register_creates_node_then_lease_created_and_renewed():
    api = fake_api()
    agent = NodeAgent(api, NodeConfig(name="node01", index=1))
    node = await agent.register()
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "node01"
    assert ("create", "nodes", "node01") in verbs(api)
    await agent.renew_lease()  # namespace missing → created, then the lease
    assert [n["metadata"]["name"] for n in api.all(NAMESPACES)] == ["default", "kube-node-lease"]
    lease = api.stored(LEASES, "node01", "kube-node-lease")
    assert lease["spec"]["holderIdentity"] == "node01" and lease["spec"]["leaseDurationSeconds"] == 40
    assert lease["metadata"]["ownerReferences"][0] == {"apiVersion": "v1", "kind": "Node",
                                                       "name": "node01", "uid": node["metadata"]["uid"]}
    first = lease["spec"]["renewTime"]
    await agent.renew_lease()
    assert verbs(api)[-1][0] == "update" and api.stored(LEASES, "node01", "kube-node-lease")["spec"]["renewTime"] >= first
    # someone else bumped the lease: conflict → re-read and renew
    api.stored(LEASES, "node01", "kube-node-lease")["metadata"]["resourceVersion"] = "999"
    await agent.renew_lease()
    assert api.stored(LEASES, "node01", "kube-node-lease")["spec"]["holderIdentity"] == "node01"


async def test_take_over_keeps_user_labels_and_pod_cidr_and_patches_status_only():
    api = fake_api()
    api.seed(NODES, {"apiVersion": "v1", "kind": "Node",
                           "metadata": {"name": "node01", "uid": "u", "resourceVersion": "1",
                                        "labels": {"kubernetes.io/hostname": "node01", "disktype": "ssd"}},
                           "spec": {"podCIDR": "10.244.7.0/24"},
                           "status": {"conditions": [{"type": "Ready", "status": "True",
                                                      "lastTransitionTime": "2025-01-01T00:00:00Z"}]}})
    agent = NodeAgent(api, NodeConfig(name="node01", index=1))
    await agent.register()
    node = api.stored(NODES, "node01")
    assert node["metadata"]["labels"]["disktype"] == "ssd"
    assert node["metadata"]["labels"]["kubernetes.io/os"] == "linux"
    assert agent.cfg.pod_cidr == "10.244.7.0/24" and node["spec"]["podCIDR"] == "10.244.7.0/24"
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    assert ready["lastTransitionTime"] == "2025-01-01T00:00:00Z"
    # a later status update (after `kubectl label`) touches only status
    node["metadata"]["labels"]["kgc"] = "b"
    await agent.update_status()
    assert verbs(api)[-1][3] == "status" and verbs(api)[-1][4] == ("status",)
    assert api.stored(NODES, "node01")["metadata"]["labels"]["kgc"] == "b"


async def test_status_marked_unknown_by_the_node_controller_is_reported_again():
    api = fake_api()
    agent = NodeAgent(api, NodeConfig(name="node01", index=1, pod_cidr="10.244.1.0/24"))
    await agent.register()
    agent.observe(copy.deepcopy(api.stored(NODES, "node01")))
    assert not agent.changed, "a Ready node needs no extra report"
    for c in api.stored(NODES, "node01")["status"]["conditions"]:
        if c["type"] == "Ready":
            c["status"], c["reason"] = "Unknown", "NodeStatusUnknown"
    agent.observe(copy.deepcopy(api.stored(NODES, "node01")))
    assert agent.changed
    await agent.tick()
    ready = next(c for c in api.stored(NODES, "node01")["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True"


async def test_pod_cidr_written_by_the_controller_manager_makes_the_node_ready():
    api = fake_api()
    got: list[str] = []
    agent = NodeAgent(api, NodeConfig(name="node01", index=1), on_pod_cidr=got.append)
    await agent.register()
    assert [a.verb for a in api.writes()] == ["create"], "the registration carried the status"
    node = await api.patch(NODES, "node01", {"spec": {"podCIDR": "10.64.3.0/24", "podCIDRs": ["10.64.3.0/24"]}})
    agent.observe(node)
    assert got == ["10.64.3.0/24"] and agent.changed
    await agent.tick()
    ready = next(c for c in api.stored(NODES, "node01")["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("True", "KubeletReady")


async def test_ticks_renew_the_lease_and_report_status_only_when_changed_or_due():
    api = fake_api()
    agent = NodeAgent(api, NodeConfig(name="node01", index=1, pod_cidr="10.244.1.0/24"),
                      lease_renew_seconds=10.0, status_report_seconds=300.0)
    await agent.register()
    api.clear_actions()
    nxt = await agent.tick()
    assert [(a.verb, a.resource) for a in api.writes()][-1] == ("create", "leases")
    assert not any(a.resource == "nodes" for a in api.writes()), "no status report before it is due"
    assert nxt == agent.lease_due and 9.0 <= nxt - agent.last_status <= 11.0, "next: the lease (10 s ±10 %)"
    agent.lease_due = 0.0
    agent.last_status -= 301   # nodeStatusReportFrequency passed
    await agent.tick()
    assert [(a.verb, a.resource, a.subresource) for a in api.writes()][-2:] == [
        ("update", "leases", ""), ("patch", "nodes", "status")]


async def test_heartbeats_run_many_agents_from_one_loop():
    api = fake_api()
    agents = [NodeAgent(api, NodeConfig(name=f"n{i}", index=i, pod_cidr=f"10.244.{i}.0/24"),
                        lease_renew_seconds=3600.0) for i in range(50)]
    for a in agents:
        await a.register()
    all_leases, reported = asyncio.Event(), asyncio.Event()

    def watch(action):   # a reactor that only observes: the tracker still answers
        if action.resource == "leases" and len(api.all(LEASES)) == 49:
            all_leases.set()
        if action.resource == "nodes" and action.subresource == "status" and action.name == "n7":
            reported.set()
        return False, None
    api.prepend_reactor("*", "*", watch)
    beats = Heartbeats(workers=4)
    for a in agents:
        beats.add(a)
    task = asyncio.create_task(beats.run())
    try:
        await asyncio.wait_for(all_leases.wait(), 10)
        agents[7].mark_changed()
        await asyncio.wait_for(reported.wait(), 10)
    finally:
        task.cancel()
    assert len(api.all(LEASES)) >= 49
    assert [a.name for a in api.writes() if a.resource == "nodes" and a.subresource == "status"] == ["n7"]


async def test_heartbeats_with_batch_seconds_hand_out_due_agents_together():
    api = fake_api()
    agents = [NodeAgent(api, NodeConfig(name=f"b{i}", index=i, pod_cidr=f"10.244.{i}.0/24"),
                        lease_renew_seconds=3600.0) for i in range(20)]
    for a in agents:
        await a.register()
    renewed: list[float] = []
    all_leases = asyncio.Event()

    def watch(action):   # observes only: the tracker still answers
        if action.resource == "leases":
            renewed.append(time.monotonic())
            if len(renewed) == 20:
                all_leases.set()
        return False, None
    api.prepend_reactor("*", "*", watch)
    beats = Heartbeats(workers=4, spread=1.0, batch_seconds=0.5)
    for a in agents:
        beats.add(a)
    t0 = time.monotonic()
    task = asyncio.create_task(beats.run())
    try:
        await asyncio.wait_for(all_leases.wait(), 10)
    finally:
        task.cancel()
    # 20 first ticks spread over 1 s go out only at the batches, 0.5 s apart from the start
    # (one by one, uniformly spread, they would fall anywhere)
    late = [round((t - t0) % 0.5, 3) for t in renewed]
    assert all(x < 0.1 for x in late), late
