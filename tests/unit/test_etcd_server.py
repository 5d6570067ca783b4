"""The embedded etcd over gRPC: KV, Txn, Watch, Lease, errors — with etcd's raw stubs and aetcd."""

import asyncio

import aetcd
import grpc
import pytest
from aetcd.rpc import kv_pb2, rpc_pb2, rpc_pb2_grpc

from components.etcd.server import serve

R = rpc_pb2


@pytest.fixture(params=["asyncio", "grpcio"])
async def etcd(request):
    """The embedded etcd on each gRPC transport: ours (default) and grpc.aio (--grpc-transport grpcio)."""
    server = await serve(["http://127.0.0.1:0"], None, progress_notify_interval=0.2, transport=request.param)
    yield server
    await server.stop()


@pytest.fixture
async def stubs(etcd):
    channel = grpc.aio.insecure_channel(etcd.endpoint)
    yield (rpc_pb2_grpc.KVStub(channel), rpc_pb2_grpc.WatchStub(channel), rpc_pb2_grpc.LeaseStub(channel),
           channel)
    await channel.close()


async def test_put_get_prefix_delete_with_aetcd(etcd):
    async with aetcd.Client("127.0.0.1", etcd.port) as c:
        r = await c.put(b"/registry/pods/a", b"1")
        assert r.header.revision == 2
        await c.put(b"/registry/pods/b", b"2")
        await c.put(b"/registry/podsX", b"x")
        got = await c.get(b"/registry/pods/a")
        assert got.value == b"1" and got.mod_revision == 2
        rng = await c.get_prefix(b"/registry/pods/")
        assert [kv.key for kv in rng] == [b"/registry/pods/a", b"/registry/pods/b"]
        d = await c.delete_prefix(b"/registry/pods/", prev_kv=True)
        assert d.deleted == 2 and d.header.revision == 5
        assert await c.get(b"/registry/pods/a") is None


async def test_txn_create_if_absent_is_one_revision(stubs):
    kv = stubs[0]
    req = R.TxnRequest(
        compare=[R.Compare(key=b"k", target=R.Compare.MOD, result=R.Compare.EQUAL, mod_revision=0)],
        success=[R.RequestOp(request_put=R.PutRequest(key=b"k", value=b"v")),
                 R.RequestOp(request_put=R.PutRequest(key=b"k2", value=b"v")),
                 R.RequestOp(request_range=R.RangeRequest(key=b"k"))],
        failure=[R.RequestOp(request_range=R.RangeRequest(key=b"k"))])
    r = await kv.Txn(req)
    assert r.succeeded and r.header.revision == 2
    assert r.responses[2].response_range.kvs[0].value == b"v"  # reads see the txn's own writes
    r = await kv.Txn(req)
    assert not r.succeeded and r.header.revision == 2
    assert r.responses[0].response_range.kvs[0].mod_revision == 2


async def test_txn_compare_targets_and_nested(stubs):
    kv = stubs[0]
    await kv.Put(R.PutRequest(key=b"a", value=b"abc"))
    C = R.Compare
    cases = [
        (C(key=b"a", target=C.VALUE, result=C.EQUAL, value=b"abc"), True),
        (C(key=b"a", target=C.VALUE, result=C.GREATER, value=b"abb"), True),
        (C(key=b"a", target=C.VERSION, result=C.LESS, version=1), False),
        (C(key=b"a", target=C.CREATE, result=C.NOT_EQUAL, create_revision=2), False),
        (C(key=b"missing", target=C.VALUE, result=C.NOT_EQUAL, value=b"x"), False),
        (C(key=b"missing", target=C.VERSION, result=C.EQUAL, version=0), True),
        (C(key=b"a", range_end=b"b", target=C.LEASE, result=C.EQUAL, lease=0), True),
    ]
    for cmp, want in cases:
        r = await kv.Txn(R.TxnRequest(compare=[cmp]))
        assert r.succeeded is want, cmp
    nested = R.TxnRequest(success=[R.RequestOp(request_txn=R.TxnRequest(
        compare=[C(key=b"a", target=C.VERSION, result=C.EQUAL, version=1)],
        success=[R.RequestOp(request_put=R.PutRequest(key=b"n", value=b"1"))]))])
    r = await kv.Txn(nested)
    assert r.responses[0].response_txn.succeeded and r.header.revision == 3


async def test_errors_match_etcd(stubs):
    kv, _, lease, _ = stubs

    async def err(call):
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await call
        return e.value.code(), e.value.details()

    assert await err(kv.Put(R.PutRequest(key=b"", value=b"v"))) == (
        grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: key is not provided")
    ops = [R.RequestOp(request_put=R.PutRequest(key=b"k%d" % i)) for i in range(129)]
    assert await err(kv.Txn(R.TxnRequest(success=ops))) == (
        grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: too many operations in txn request")
    dup = [R.RequestOp(request_put=R.PutRequest(key=b"k")), R.RequestOp(request_put=R.PutRequest(key=b"k"))]
    assert await err(kv.Txn(R.TxnRequest(success=dup))) == (
        grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: duplicate key given in txn request")
    assert await err(kv.Put(R.PutRequest(key=b"k", lease=12345))) == (
        grpc.StatusCode.NOT_FOUND, "etcdserver: requested lease not found")
    assert await err(kv.Range(R.RangeRequest(key=b"k", revision=50))) == (
        grpc.StatusCode.OUT_OF_RANGE, "etcdserver: mvcc: required revision is a future revision")
    await kv.Put(R.PutRequest(key=b"k", value=b"1"))
    await kv.Put(R.PutRequest(key=b"k", value=b"2"))
    await kv.Compact(R.CompactionRequest(revision=3))
    assert await err(kv.Range(R.RangeRequest(key=b"k", revision=2))) == (
        grpc.StatusCode.OUT_OF_RANGE, "etcdserver: mvcc: required revision has been compacted")
    assert await err(kv.Put(R.PutRequest(key=b"big", value=b"x" * (1536 * 1024 + 10)))) == (
        grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: request is too large")
    assert await err(lease.LeaseRevoke(R.LeaseRevokeRequest(ID=777))) == (
        grpc.StatusCode.NOT_FOUND, "etcdserver: requested lease not found")
    code, _ = await err(rpc_pb2_grpc.MaintenanceStub(stubs[3]).MoveLeader(R.MoveLeaderRequest(targetID=1)))
    assert code == grpc.StatusCode.UNIMPLEMENTED


class WatchClient:
    """A raw Watch stream: send requests, await responses with a timeout."""

    def __init__(self, stub):
        self.requests: asyncio.Queue = asyncio.Queue()
        self.call = stub.Watch(self._gen())

    async def _gen(self):
        while True:
            req = await self.requests.get()
            if req is None:
                return
            yield req

    def send(self, req):
        self.requests.put_nowait(req)

    async def recv(self, timeout=5.0):
        return await asyncio.wait_for(self.call.read(), timeout)

    def close(self):
        self.requests.put_nowait(None)
        self.call.cancel()


async def test_watch_replay_then_live_without_gaps_or_duplicates(stubs):
    kv, watch = stubs[0], stubs[1]
    for i in range(3):
        await kv.Put(R.PutRequest(key=b"/p/%d" % i, value=b"v"))       # revs 2,3,4
    w = WatchClient(watch)
    w.send(R.WatchRequest(create_request=R.WatchCreateRequest(
        key=b"/p/", range_end=b"/p0", start_revision=3, prev_kv=True)))
    created = await w.recv()
    assert created.created and created.watch_id == 0
    revs = []
    await kv.Put(R.PutRequest(key=b"/p/1", value=b"v2"))                # rev 5 (live)
    await kv.DeleteRange(R.DeleteRangeRequest(key=b"/p/", range_end=b"/p0"))  # rev 6: three deletes
    while len(revs) < 6:
        resp = await w.recv()
        assert resp.watch_id == 0
        revs += [(e.type, e.kv.mod_revision) for e in resp.events]
    PUT, DEL = kv_pb2.Event.PUT, kv_pb2.Event.DELETE
    assert revs == [(PUT, 3), (PUT, 4), (PUT, 5), (DEL, 6), (DEL, 6), (DEL, 6)]
    w.close()


async def test_watch_delete_batch_arrives_whole_with_prev_kv_and_filters(stubs):
    kv, watch = stubs[0], stubs[1]
    w = WatchClient(watch)
    w.send(R.WatchRequest(create_request=R.WatchCreateRequest(
        key=b"a", range_end=b"\0", prev_kv=True, filters=[R.WatchCreateRequest.NOPUT])))
    assert (await w.recv()).created
    await kv.Put(R.PutRequest(key=b"a1", value=b"x"))
    await kv.Put(R.PutRequest(key=b"a2", value=b"y"))
    await kv.DeleteRange(R.DeleteRangeRequest(key=b"a", range_end=b"\0"))
    resp = await w.recv()
    assert [(e.type, e.kv.key, e.prev_kv.value) for e in resp.events] == [
        (kv_pb2.Event.DELETE, b"a1", b"x"), (kv_pb2.Event.DELETE, b"a2", b"y")]
    w.close()


async def test_watch_compacted_cancel_progress_and_cancel(stubs):
    kv, watch = stubs[0], stubs[1]
    for i in range(4):
        await kv.Put(R.PutRequest(key=b"c", value=b"%d" % i))
    await kv.Compact(R.CompactionRequest(revision=4))
    w = WatchClient(watch)
    w.send(R.WatchRequest(create_request=R.WatchCreateRequest(key=b"c", start_revision=2)))
    assert (await w.recv()).created
    resp = await w.recv()
    assert resp.canceled and resp.compact_revision == 4
    w.send(R.WatchRequest(create_request=R.WatchCreateRequest(key=b"c", progress_notify=True, watch_id=7)))
    created = await w.recv()
    assert created.created and created.watch_id == 7
    progress = await w.recv()  # periodic notification (interval 0.2 s in this fixture)
    assert progress.watch_id == 7 and not progress.events and progress.header.revision == 5
    w.send(R.WatchRequest(progress_request=R.WatchProgressRequest()))
    while True:
        resp = await w.recv()
        if resp.watch_id == -1:
            break
    assert resp.header.revision == 5
    w.send(R.WatchRequest(cancel_request=R.WatchCancelRequest(watch_id=7)))
    while True:
        resp = await w.recv()
        if resp.canceled:
            break
    assert resp.watch_id == 7
    w.close()


async def test_slow_watch_stream_catches_up_in_order(etcd, stubs):
    kv, watch = stubs[0], stubs[1]
    etcd.core.hub.max_queue = 4  # force the slow-watcher path
    w = WatchClient(watch)
    w.send(R.WatchRequest(create_request=R.WatchCreateRequest(key=b"s", range_end=b"t")))
    assert (await w.recv()).created
    for i in range(50):
        await kv.Put(R.PutRequest(key=b"s", value=b"%d" % i))
    seen = []
    while len(seen) < 50:
        seen += [int(e.kv.value) for e in (await w.recv()).events]
    assert seen == list(range(50))
    w.close()


async def test_lease_grant_ttl_keepalive_expiry_deletes_keys_in_one_revision(stubs):
    kv, watch, lease, _ = stubs
    g = await lease.LeaseGrant(R.LeaseGrantRequest(TTL=2))
    assert g.TTL == 2 and g.ID > 0
    await kv.Put(R.PutRequest(key=b"l1", value=b"v", lease=g.ID))
    await kv.Put(R.PutRequest(key=b"l2", value=b"v", lease=g.ID))
    ttl = await lease.LeaseTimeToLive(R.LeaseTimeToLiveRequest(ID=g.ID, keys=True))
    assert ttl.grantedTTL == 2 and sorted(ttl.keys) == [b"l1", b"l2"] and 0 <= ttl.TTL <= 2
    ka = lease.LeaseKeepAlive(iter([R.LeaseKeepAliveRequest(ID=g.ID)]))
    async for resp in ka:
        assert resp.ID == g.ID and resp.TTL == 2
    leases = await lease.LeaseLeases(R.LeaseLeasesRequest())
    assert [l.ID for l in leases.leases] == [g.ID]
    w = WatchClient(watch)
    w.send(R.WatchRequest(create_request=R.WatchCreateRequest(key=b"l", range_end=b"m")))
    assert (await w.recv()).created
    resp = await w.recv(timeout=6)  # expiry: both deletes in one revision
    assert [e.type for e in resp.events] == [kv_pb2.Event.DELETE] * 2
    assert resp.events[0].kv.mod_revision == resp.events[1].kv.mod_revision == 4
    ttl = await lease.LeaseTimeToLive(R.LeaseTimeToLiveRequest(ID=g.ID))
    assert ttl.TTL == -1
    w.close()


async def test_aetcd_watch_and_lease_helpers(etcd):
    async with aetcd.Client("127.0.0.1", etcd.port) as c:
        lease = await c.lease(30)
        await c.put(b"w", b"0", lease=lease)
        assert await lease.granted_ttl() == 30
        assert await lease.keys() == [b"w"]
        events = []
        done = asyncio.Event()

        async def consume():
            async for ev in await c.watch(b"w", start_revision=2):
                events.append((ev.kind, ev.kv.value))
                if len(events) == 2:
                    done.set()
                    return

        task = asyncio.create_task(consume())
        await c.put(b"w", b"1")
        await asyncio.wait_for(done.wait(), 5)
        task.cancel()
        assert [v for _, v in events] == [b"0", b"1"]
        assert await lease.keys() == []  # a put without the lease detached the key
        await c.put(b"w", b"2", lease=lease)
        await lease.revoke()
        assert await c.get(b"w") is None


async def test_alarms_nospace_blocks_writes_until_disarmed_and_hash(stubs):
    kv, _, lease, channel = stubs
    m = rpc_pb2_grpc.MaintenanceStub(channel)
    A = R.AlarmRequest
    r = await m.Alarm(A(action=A.ACTIVATE, memberID=0, alarm=R.NOSPACE))
    assert [(a.memberID, a.alarm) for a in r.alarms] == [(0, R.NOSPACE)]
    await m.Alarm(A(action=A.ACTIVATE, memberID=7, alarm=R.NOSPACE))
    got = await m.Alarm(A(action=A.GET, alarm=R.NONE))
    assert sorted(a.memberID for a in got.alarms) == [0, 7]
    status = await m.Status(R.StatusRequest())
    assert len(status.errors) == 2 and "NOSPACE" in status.errors[0]
    for call in (kv.Put(R.PutRequest(key=b"k", value=b"v")),
                 kv.Txn(R.TxnRequest(success=[R.RequestOp(request_put=R.PutRequest(key=b"k"))])),
                 lease.LeaseGrant(R.LeaseGrantRequest(TTL=5))):
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await call
        assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert e.value.details() == "etcdserver: mvcc: database space exceeded"
    await kv.Range(R.RangeRequest(key=b"k"))  # reads and deletes still work
    await kv.DeleteRange(R.DeleteRangeRequest(key=b"k"))
    for member in (0, 7):
        r = await m.Alarm(A(action=A.DEACTIVATE, memberID=member, alarm=R.NOSPACE))
        assert len(r.alarms) == 1
    assert not (await m.Alarm(A(action=A.GET))).alarms
    put = await kv.Put(R.PutRequest(key=b"k", value=b"v"))
    h1 = (await m.Hash(R.HashRequest())).hash
    hkv = await m.HashKV(R.HashKVRequest(revision=put.header.revision))
    assert hkv.hash == h1 and hkv.compact_revision == 0
    await kv.Put(R.PutRequest(key=b"k", value=b"w"))
    assert (await m.Hash(R.HashRequest())).hash != h1
    assert (await m.HashKV(R.HashKVRequest(revision=put.header.revision))).hash == h1
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await m.HashKV(R.HashKVRequest(revision=999))
    assert e.value.code() == grpc.StatusCode.OUT_OF_RANGE


async def test_watch_fragment_splits_big_responses_like_etcd():
    server = await serve(["http://127.0.0.1:0"], None, max_request_bytes=1024)
    try:
        async with grpc.aio.insecure_channel(server.endpoint) as ch:
            kv, watch = rpc_pb2_grpc.KVStub(ch), rpc_pb2_grpc.WatchStub(ch)
            for i in range(6):
                await kv.Put(R.PutRequest(key=b"/f/%d" % i, value=b"x" * 400))
            results = {}
            for fragment in (False, True):
                reqs: asyncio.Queue = asyncio.Queue()

                async def gen():
                    while (q := await reqs.get()) is not None:
                        yield q

                stream = watch.Watch(gen())
                reqs.put_nowait(R.WatchRequest(create_request=R.WatchCreateRequest(
                    key=b"/f/", range_end=b"/f0", start_revision=2, fragment=fragment)))
                assert (await asyncio.wait_for(stream.read(), 5)).created
                got = []
                while sum(len(r.events) for r in got) < 6:
                    got.append(await asyncio.wait_for(stream.read(), 5))
                reqs.put_nowait(None)
                stream.cancel()
                results[fragment] = got
            assert len(results[False]) == 1  # replay batches revisions into one response
            parts = results[True]
            assert len(parts) > 1 and [p.fragment for p in parts] == [True] * (len(parts) - 1) + [False]
            assert all(p.ByteSize() <= 1024 + 600 for p in parts)
            assert [e.kv.key for p in parts for e in p.events] == [b"/f/%d" % i for i in range(6)]
    finally:
        await server.stop()
