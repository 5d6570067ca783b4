"""The node IPAM controller with real processes and the real kubectl: an etcd, the apiserver, a
controller-manager running only ``nodeipam`` with ``--cluster-cidr 10.200.0.0/23
--node-cidr-mask-size 25`` (four node CIDRs) and one kubelet process of three hollow nodes.

Expected, as in Kubernetes: each node gets a distinct ``spec.podCIDR`` from the cluster CIDR and
turns Ready once it has one; a deleted node's CIDR goes back to the pool and, once the round-robin
scan wraps, is the one a new node gets. All waits are ``kubectl wait`` or output-line waits."""

from __future__ import annotations

import ipaddress
import json

import pytest

from tests.integration.conftest import NodeCluster, spawn, start_etcd_and_apiserver, stop

pytestmark = pytest.mark.integration

CLUSTER = ipaddress.ip_network("10.200.0.0/23")


@pytest.fixture()
def cluster(tmp_path):
    procs: list = []
    try:
        server = start_etcd_and_apiserver(procs)
        cm, cm_out = spawn("controller-manager", "--master", server, "--controllers", "nodeipam",
                           "--allocate-node-cidrs=true", "--cluster-cidr", str(CLUSTER),
                           "--node-cidr-mask-size", "25")
        procs.append(cm)
        cm_out.wait_for("controller-manager.synced", 30)
        k, k_out = spawn("kubelet", "--master", server, "--hollow-nodes", "3", "--node-name-prefix", "ipam-",
                         "--healthz-port", "0", "--read-only-port", "0", "--no-trace")
        procs.append(k)
        k_out.wait_for("kubelet.nodes_registered", 60)
        yield NodeCluster(server, cm_out, str(tmp_path / "kc"), procs)
    finally:
        for p in reversed(procs):
            stop(p)


def pod_cidr(c: NodeCluster, node: str) -> str:
    return json.loads(c.kubectl("get", "node", node, "-o", "json").stdout)["spec"]["podCIDR"]


def test_nodes_get_distinct_cidrs_and_a_deleted_nodes_cidr_is_reused(cluster):
    c = cluster
    nodes = ["node/ipam-0", "node/ipam-1", "node/ipam-2"]
    c.kubectl("wait", "--for=condition=Ready", *nodes, "--timeout=60s")
    cidrs = {n: pod_cidr(c, n.split("/")[1]) for n in nodes}
    assert len(set(cidrs.values())) == 3
    for cidr in cidrs.values():
        net = ipaddress.ip_network(cidr)
        assert net.prefixlen == 25 and net.subnet_of(CLUSTER)
    # the fourth and last CIDR goes to a Node created by hand
    c.kubectl("create", "-f", "-", input='{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "extra"}}')
    c.kubectl("wait", "--for=jsonpath={.spec.podCIDR}", "node/extra", "--timeout=30s")
    last = pod_cidr(c, "extra")
    assert last not in cidrs.values()
    # a deleted node's CIDR is released and handed to the next node
    freed = cidrs["node/ipam-1"]
    c.kubectl("delete", "node", "ipam-1", "--wait=true")
    c.kubectl("create", "-f", "-", input='{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "late"}}')
    c.kubectl("wait", f"--for=jsonpath={{.spec.podCIDR}}={freed}", "node/late", "--timeout=30s")
