"""What several apiservers on one etcd share (issue 14 item 6), on a real etcd: the etcd client's
endpoint list, Service IP / node port claims, the lease endpoint reconciler, the compaction
claim."""

from __future__ import annotations

import asyncio
import types

import pytest
from aetcd import rpc

from components.apiserver import endpointlease
from components.apiserver.server import APIServer
from components.apiserver.servicealloc import AllocationError, ServiceAllocator
from controlplane import apitime
from controlplane.api import resources as R
from controlplane.storage import Expired, object_key, testing
from controlplane.storage.etcd import EtcdClient, grpc_target, parse_endpoints
from tests.support.etcd import free_port

needs_etcd = pytest.mark.skipif(not testing.available(), reason="needs /usr/bin/etcd")


@pytest.mark.parametrize("urls,targets,secure", [
    ("http://127.0.0.1:2379", ["127.0.0.1:2379"], False),
    ("http://127.0.0.1:1,http://127.0.0.1:2, http://127.0.0.1:3", ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"], False),
    ("https://10.0.0.1:2379,https://10.0.0.2", ["10.0.0.1:2379", "10.0.0.2:2379"], True),
])
def test_etcd_server_lists_parse(urls, targets, secure):
    assert parse_endpoints(urls) == (targets, secure)


@pytest.mark.parametrize("urls,error", [
    ("", "no URL"),
    ("http://a:1,https://b:2", "mixed"),
    ("ftp://a:1", "expected http://HOST:PORT"),
])
def test_bad_etcd_server_lists_are_refused(urls, error):
    with pytest.raises(ValueError, match=error):
        parse_endpoints(urls)


def test_grpc_target_is_the_endpoint_alone_or_a_static_address_list():
    assert grpc_target(["localhost:2379"]) == "localhost:2379"
    assert grpc_target(["127.0.0.1:1", "127.0.0.1:2"]) == "ipv4:127.0.0.1:1,127.0.0.1:2"
    assert grpc_target(["[::1]:1", "[::1]:2"]) == "ipv6:[::1]:1,[::1]:2"


@needs_etcd
async def test_a_client_of_several_members_reads_through_the_live_one_when_one_is_down():
    async with testing.EtcdProcess() as url:
        client = EtcdClient(f"http://127.0.0.1:{free_port()},{url}", timeout=5)
        try:
            for _ in range(4):  # round_robin: each read would reach the dead address in turn
                resp = await client.range(b"\0", b"\0", count_only=True)
                assert resp.header.revision >= 1
            assert (await client.status()).version
        finally:
            await client.close()


def svc(name: str, **spec) -> dict:
    return {"metadata": {"name": name, "uid": "u-" + name},
            "spec": {"type": "NodePort", "ports": [{"port": 80}], **spec}}


async def test_two_allocators_sharing_etcd_never_hand_out_the_same_address_or_port(store):
    # neither sees the other's Services (no watch cache here): only the claims in etcd keep them apart
    a, b = (ServiceAllocator("10.0.0.0/27", "30000-30028", store=store) for _ in range(2))
    made = [svc(f"s{i}") for i in range(13)]  # of 10.0.0.2 .. 10.0.0.30: 29 addresses
    await asyncio.gather(*((a if i % 2 else b).allocate_shared(s) for i, s in enumerate(made)))
    assert len({s["spec"]["clusterIP"] for s in made}) == 13
    assert len({s["spec"]["ports"][0]["nodePort"] for s in made}) == 13
    # a range filled through both replicas in turn is full for each
    c, d = (ServiceAllocator("10.1.0.0/29", "31000-31004", store=store) for _ in range(2))
    for i in range(5):  # 10.1.0.2 .. 10.1.0.6: 5 addresses
        await (c if i % 2 else d).allocate_shared(svc(f"t{i}"))
    with pytest.raises(AllocationError, match="range is full"):
        await c.allocate_shared(svc("one-too-many"))
    fresh = ServiceAllocator("10.0.0.0/24", store=store)
    with pytest.raises(AllocationError, match="provided IP is already allocated"):
        await fresh.allocate_shared(svc("given", type="ClusterIP", clusterIP=made[0]["spec"]["clusterIP"]))
    dry = svc("dry", type="ClusterIP")
    await fresh.allocate_shared(dry, dry_run=True)  # a dry run claims nothing
    assert (await store.etcd.range(f"/registry/ranges/serviceips/{dry['spec']['clusterIP']}".encode())).count == 0


async def test_two_allocators_sharing_etcd_fill_a_range_to_its_last_value_at_once(store):
    # every address and port but one handed out at once through both: the replicas keep losing
    # picks to each other in the end game and must pick again until the range is really full
    a, b = (ServiceAllocator("10.2.0.0/27", "32000-32028", store=store) for _ in range(2))
    made = [svc(f"f{i}") for i in range(28)]  # of 29 addresses and 29 ports
    await asyncio.gather(*((a if i % 2 else b).allocate_shared(s) for i, s in enumerate(made)))
    assert len({s["spec"]["clusterIP"] for s in made}) == 28
    assert len({s["spec"]["ports"][0]["nodePort"] for s in made}) == 28


async def test_a_claim_another_replica_undid_is_free_again_for_one_that_read_it(store):
    # B's attempt claimed 10.3.0.2 and gave it back (its node port was taken); A read the claims
    # in between. A fills the range all the same: the address is not held for the claims' lifetime
    a = ServiceAllocator("10.3.0.0/29", "32100-32110", store=store)  # 10.3.0.2 .. 10.3.0.6
    lease_id = await store.etcd.lease_grant(60)
    assert await store.reserve("/registry/ranges/serviceips/10.3.0.2", b"", lease_id)
    await a.allocate_shared(svc("probe", type="ClusterIP"), dry_run=True)  # reads the claims
    await store.etcd.txn(compare=[], success=[rpc.RequestOp(
        request_delete_range=rpc.DeleteRangeRequest(key=b"/registry/ranges/serviceips/10.3.0.2"))])
    made = [svc(f"g{i}", type="ClusterIP") for i in range(5)]
    for s in made:
        await a.allocate_shared(s)
    assert sorted(s["spec"]["clusterIP"] for s in made) == [f"10.3.0.{i}" for i in range(2, 7)]


def lease(addr: str, renewed: float, seconds: int = 15, identity: str = "kube-apiserver") -> dict:
    return {"metadata": {"labels": {endpointlease.IDENTITY_LABEL: identity},
                         "annotations": {endpointlease.ENDPOINT_ANNOTATION: addr}},
            "spec": {"renewTime": apitime.format_micro_time(renewed), "leaseDurationSeconds": seconds}}


def test_live_endpoints_are_the_unexpired_apiserver_leases():
    now = 1_800_000_000.0
    leases = [lease("127.0.0.1:6443", now - 1), lease("127.0.0.2:6443", now - 20),  # expired
              lease("127.0.0.3:6443", now - 1, identity="other"), lease("no-port", now)]
    assert endpointlease.live_endpoints(leases, now) == [("127.0.0.1", 6443)]


def test_endpoints_subsets_group_addresses_by_port():
    assert endpointlease.endpoints_subsets([("10.0.0.2", 6443), ("10.0.0.1", 6443), ("10.0.0.1", 6443),
                                            ("10.0.0.3", 7443)]) == [
        {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
         "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]},
        {"addresses": [{"ip": "10.0.0.3"}], "ports": [{"name": "https", "port": 7443, "protocol": "TCP"}]}]


async def test_the_kubernetes_endpoints_list_every_live_replica_and_lose_a_removed_one(store):
    one = endpointlease.LeaseEndpointReconciler(store, "127.0.0.1", 6443)
    two = endpointlease.LeaseEndpointReconciler(store, "127.0.0.2", 6443)
    await one.reconcile()
    assert sorted(await two.reconcile()) == [("127.0.0.1", 6443), ("127.0.0.2", 6443)]
    key = object_key(R.ENDPOINTS, "default", "kubernetes")
    ips = [a["ip"] for a in (await store.get(key))["subsets"][0]["addresses"]]
    assert ips == ["127.0.0.1", "127.0.0.2"]
    await two.remove()
    assert [a["ip"] for a in (await store.get(key))["subsets"][0]["addresses"]] == ["127.0.0.1"]
    await two.remove()  # again: nothing to delete, no error


async def test_of_two_apiservers_only_one_compacts_per_interval(store):
    a = b = types.SimpleNamespace(store=store)
    key = "/registry/configmaps/default/x"
    first = await store.create(key, {"metadata": {"name": "x"}})
    va, ra = await APIServer._compact_once(a, 0, 0)  # A claims the first tick (nothing compacted)
    vb, rb = await APIServer._compact_once(b, 0, 0)  # B's claim fails: it takes the key's version
    assert (va, vb) == (1, 1)
    await store.guaranteed_update(key, lambda o: {**o, "data": {"k": "v"}})
    vb, _ = await APIServer._compact_once(b, vb, rb)  # B's next tick wins and compacts to rb
    assert vb == 2
    with pytest.raises(Expired):
        await store.get(key, revision=int(first["metadata"]["resourceVersion"]))
    va, _ = await APIServer._compact_once(a, va, ra)  # A's tick of the same interval loses
    assert va == 2
