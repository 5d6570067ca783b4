"""Kubelet node registration, take-over, status patch and lease, against a fake apiserver."""

from __future__ import annotations

import copy

import pytest

from components.kubelet.node import (
    NodeAgent,
    NodeConfig,
    build_node,
    node_index_from_name,
    parse_labels,
    pod_cidr_for,
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
    cfg = NodeConfig(name="node01", index=1, labels={"kgc": "a"})
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


def test_helpers_and_bad_input():
    assert node_index_from_name("node01") == 1 and node_index_from_name("node02") == 2
    assert 1 <= node_index_from_name("master") <= 250
    assert pod_cidr_for(300) == "10.245.44.0/24"
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

    async def request(method, path, params=None, body=None, **kw):
        assert (method, path, params) == ("GET", "/api/v1/nodes/node01", {"resourceVersion": "0"})
        return copy.deepcopy(api.stored(NODES, "node01"))
    api.request = request
    agent = NodeAgent(api, NodeConfig(name="node01", index=1))
    await agent.register()
    await agent.update_status()
    await agent.check_status_drift()
    assert not agent._changed.is_set(), "a Ready node needs no extra report"
    for c in api.stored(NODES, "node01")["status"]["conditions"]:
        if c["type"] == "Ready":
            c["status"], c["reason"] = "Unknown", "NodeStatusUnknown"
    await agent.check_status_drift()
    assert agent._changed.is_set()
    await agent.update_status()
    ready = next(c for c in api.stored(NODES, "node01")["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True"
