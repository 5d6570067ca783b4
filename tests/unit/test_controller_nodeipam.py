"""The node IPAM controller: the CIDR set (allocate, occupy, release, a full range), the range
allocator on the fake API (existing podCIDRs occupied at start, a deleted node's CIDR reused,
CIDRNotAvailable), and the flags' checks (pkg/controller/nodeipam, cmd/kube-controller-manager)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from components.controller_manager.cli import command
from components.controller_manager.config import ControllerConfig
from components.controller_manager.nodeipam.cidrset import (
    CIDRRangeNoCIDRsRemaining,
    CIDRSet,
    CIDRSetSubNetTooBig,
)
from components.controller_manager.nodeipam.controller import NodeIpamController, parse_ipam_config
from components.controller_manager.testing import fake_context, settle
from controlplane.api.resources import NODES


def test_cidrset_allocates_in_order_from_the_cluster_cidr():
    s = CIDRSet("10.244.0.0/16", 24)
    assert s.max_cidrs == 256
    assert [str(s.allocate_next()) for _ in range(3)] == ["10.244.0.0/24", "10.244.1.0/24", "10.244.2.0/24"]
    assert s.allocated == 3


def test_cidrset_occupied_blocks_are_skipped():
    s = CIDRSet("10.244.0.0/16", 24)
    s.occupy("10.244.0.0/24")
    s.occupy("10.244.1.0/24")
    s.occupy("10.244.1.0/24")   # occupying twice counts once
    assert s.allocated == 2
    assert str(s.allocate_next()) == "10.244.2.0/24"


def test_cidrset_a_larger_range_occupies_every_node_cidr_it_covers():
    s = CIDRSet("10.0.0.0/8", 24)
    s.occupy("10.96.0.0/12")   # a service range inside the cluster CIDR
    assert s.allocated == 4096 and s.is_used("10.100.3.0/24") and not s.is_used("10.95.255.0/24")


def test_cidrset_released_block_is_reused_after_the_round_robin_wraps():
    s = CIDRSet("10.244.0.0/30", 31)
    a, b = s.allocate_next(), s.allocate_next()
    s.release(a)
    assert s.allocated == 1 and str(s.allocate_next()) == str(a)
    with pytest.raises(CIDRRangeNoCIDRsRemaining, match="no remaining CIDRs"):
        s.allocate_next()
    assert str(b) == "10.244.0.2/31"


def test_cidrset_full_range_raises():
    s = CIDRSet("10.244.0.0/23", 24)
    s.allocate_next()
    s.allocate_next()
    with pytest.raises(CIDRRangeNoCIDRsRemaining):
        s.allocate_next()


def test_cidrset_outside_the_cluster_cidr_is_refused():
    s = CIDRSet("10.244.0.0/16", 24)
    with pytest.raises(ValueError, match="out the range"):
        s.occupy("192.168.0.0/24")


def test_cidrset_ipv6():
    s = CIDRSet("fd00:10:244::/56", 64)
    assert s.max_cidrs == 256 and str(s.allocate_next()) == "fd00:10:244::/64"
    assert str(s.allocate_next()) == "fd00:10:244:1::/64"
    with pytest.raises(CIDRSetSubNetTooBig):
        CIDRSet("fd00::/40", 64)


def test_5000_nodes_fit_the_default_range_of_controlplane_up():
    from controlplane.cli.cluster import DEFAULT_POD_NETWORK_CIDR, DEFAULT_SERVICE_CIDR
    cfg = parse_ipam_config(DEFAULT_POD_NETWORK_CIDR, service_cluster_ip_range=DEFAULT_SERVICE_CIDR)
    assert cfg.node_mask_sizes == (24,)
    assert CIDRSet(cfg.cluster_cidrs[0], 24).max_cidrs >= 5000


@pytest.mark.parametrize("args, message", [
    pytest.param(("",), "--cluster-cidr is required", id="no-cluster-cidr"),
    pytest.param(("10.244.0.0",), "invalid CIDR address: 10.244.0.0", id="not-a-cidr"),
    pytest.param(("10.244.0.0/16", 8), "must be less than or equal to --node-cidr-mask-size", id="mask-too-short"),
    pytest.param(("10.244.0.0/16,10.245.0.0/16",), "not configured as dual stack", id="two-ipv4"),
    pytest.param(("10.244.0.0/16,fd00::/56,10.1.0.0/16",), "more than max allowed of 2", id="three"),
    pytest.param(("10.244.0.0/16,fd00::/56", 24), "not allowed with dual-stack", id="mask-with-dual-stack"),
    pytest.param(("fd00::/32",), "node CIDR size is too big", id="ipv6-too-deep"),
])
def test_bad_ipam_flags(args, message):
    with pytest.raises(ValueError, match=message):
        parse_ipam_config(*args)


def test_dual_stack_config():
    cfg = parse_ipam_config("10.244.0.0/16,fd00:10:244::/56", node_cidr_mask_size_ipv6=64)
    assert cfg.node_mask_sizes == (24, 64)


@pytest.mark.parametrize("argv, message", [
    pytest.param(["--allocate-node-cidrs"], "--cluster-cidr is required", id="missing-cluster-cidr"),
    pytest.param(["--allocate-node-cidrs=true", "--cluster-cidr", "10.0.0.0/33"], "invalid CIDR address",
                 id="bad-cidr"),
    pytest.param(["--allocate-node-cidrs=true", "--cluster-cidr", "10.0.0.0/16", "--node-cidr-mask-size", "8"],
                 "mask size of cluster CIDR", id="bad-mask"),
])
def test_bad_flags_are_one_line_usage_errors(argv, message):
    r = CliRunner().invoke(command, ["--master", "https://127.0.0.1:1", *argv])
    assert r.exit_code == 2
    errors = [line for line in r.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and message in errors[0]


def _env(cluster_cidr="10.244.0.0/16", **kw):
    cfg = ControllerConfig(node_ipam=parse_ipam_config(cluster_cidr, **kw))
    client, ctx, events = fake_context(cfg)
    return client, ctx, events


def _node(name, cidr=None):
    return {"metadata": {"name": name}, "spec": {"podCIDR": cidr, "podCIDRs": [cidr]} if cidr else {}}


async def test_nodes_get_distinct_pod_cidrs_and_existing_ones_are_occupied():
    client, ctx, _ = _env()
    client.seed(NODES, _node("old", "10.244.0.0/24"))
    c = NodeIpamController(ctx)
    c.initialize()
    for n in ("a", "b"):
        await client.create(NODES, _node(n))
    await settle(c)
    specs = {n: client.stored(NODES, n)["spec"] for n in ("old", "a", "b")}
    assert specs["a"] == {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"]}
    assert specs["b"]["podCIDRs"] == ["10.244.2.0/24"]
    patch = next(a for a in client.actions("patch", "nodes"))
    assert patch.patch_type == "strategic" and patch.patch == {"spec": {"podCIDR": "10.244.1.0/24",
                                                                        "podCIDRs": ["10.244.1.0/24"]}}


async def test_a_deleted_nodes_cidr_is_released_and_reused():
    client, ctx, _ = _env("10.244.0.0/23")   # room for two nodes
    c = NodeIpamController(ctx)
    c.initialize()
    for n in ("a", "b"):
        await client.create(NODES, _node(n))
    await settle(c)
    freed = client.stored(NODES, "a")["spec"]["podCIDR"]
    await client.delete(NODES, "a")
    await client.create(NODES, _node("c"))
    await settle(c)
    assert client.stored(NODES, "c")["spec"]["podCIDR"] == freed


async def test_full_range_records_cidr_not_available_and_leaves_the_node_without():
    client, ctx, events = _env("10.244.0.0/24")   # one node CIDR
    c = NodeIpamController(ctx)
    c.max_retries = 0
    c.initialize()
    await client.create(NODES, _node("a"))
    await client.create(NODES, _node("b"))
    await settle(c)
    assert client.stored(NODES, "a")["spec"]["podCIDR"] == "10.244.0.0/24"
    assert "podCIDR" not in client.stored(NODES, "b")["spec"]
    assert [(e.component, e.name, e.type, e.reason, e.message) for e in events] == [
        ("cidrAllocator", "b", "Normal", "CIDRNotAvailable", "Node b status is now: CIDRNotAvailable")]


async def test_service_range_is_left_out():
    client, ctx, _ = _env("10.0.0.0/23", service_cluster_ip_range="10.0.0.0/24")
    c = NodeIpamController(ctx)
    c.initialize()
    await client.create(NODES, _node("a"))
    await settle(c)
    assert client.stored(NODES, "a")["spec"]["podCIDR"] == "10.0.1.0/24"


async def test_dual_stack_node_gets_one_cidr_of_each_family():
    client, ctx, _ = _env("10.244.0.0/16,fd00:10:244::/56")
    c = NodeIpamController(ctx)
    c.initialize()
    await client.create(NODES, _node("a"))
    await settle(c)
    spec = client.stored(NODES, "a")["spec"]
    assert spec["podCIDR"] == "10.244.0.0/24" and spec["podCIDRs"] == ["10.244.0.0/24", "fd00:10:244::/64"]


async def test_disabled_without_allocate_node_cidrs():
    client, ctx, _ = fake_context(ControllerConfig())
    c = NodeIpamController(ctx)
    await client.create(NODES, _node("a"))
    await c.run()   # returns at once
    assert not c.enabled and "podCIDR" not in client.stored(NODES, "a")["spec"]
