"""Contract: the same scripted gRPC sequence against the embedded etcd and a real etcd gives the same answers."""

import asyncio
import os

import grpc
import pytest
from aetcd.rpc import rpc_pb2 as R
from aetcd.rpc import rpc_pb2_grpc

from components.etcd.server import serve
from tests.support.etcd import start_real

pytestmark = [pytest.mark.realetcd,
              pytest.mark.skipif(not os.path.exists("/usr/bin/etcd"), reason="/usr/bin/etcd missing")]


async def script(endpoint: str) -> list:
    """Run a fixed sequence; return comparable outcomes (values, revisions, errors, watch events)."""
    out = []
    async with grpc.aio.insecure_channel(endpoint) as ch:
        kv, watch = rpc_pb2_grpc.KVStub(ch), rpc_pb2_grpc.WatchStub(ch)

        async def call(coro):
            try:
                r = await coro
                out.append(("ok", r.header.revision))
                return r
            except grpc.aio.AioRpcError as e:
                out.append(("err", e.code().name, e.details()))
                return None

        await call(kv.Put(R.PutRequest(key=b"/c/a", value=b"1")))
        r = await call(kv.Put(R.PutRequest(key=b"/c/a", value=b"2", prev_kv=True)))
        out.append(("prev", r.prev_kv.value, r.prev_kv.version))
        await call(kv.Put(R.PutRequest(key=b"/c/b", value=b"x")))
        r = await call(kv.Range(R.RangeRequest(key=b"/c/", range_end=b"/c0", limit=1)))
        out.append(("range", [(k.key, k.create_revision, k.mod_revision, k.version) for k in r.kvs], r.count, r.more))
        r = await call(kv.Txn(R.TxnRequest(
            compare=[R.Compare(key=b"/c/a", target=R.Compare.VALUE, result=R.Compare.EQUAL, value=b"2")],
            success=[R.RequestOp(request_delete_range=R.DeleteRangeRequest(key=b"/c/", range_end=b"/c0", prev_kv=True)),
                     R.RequestOp(request_put=R.PutRequest(key=b"/d", value=b"y"))])))
        out.append(("txn", r.succeeded, r.responses[0].response_delete_range.deleted))
        await call(kv.Txn(R.TxnRequest(success=[R.RequestOp(request_put=R.PutRequest(key=b"k")),
                                                R.RequestOp(request_put=R.PutRequest(key=b"k"))])))
        await call(kv.Put(R.PutRequest(key=b"", value=b"v")))
        await call(kv.Put(R.PutRequest(key=b"k", lease=99)))
        await call(kv.Range(R.RangeRequest(key=b"/c/a", revision=100)))
        await call(kv.Compact(R.CompactionRequest(revision=3)))
        await call(kv.Range(R.RangeRequest(key=b"/c/a", revision=2)))
        await call(kv.Compact(R.CompactionRequest(revision=3)))
        r = await call(kv.Range(R.RangeRequest(key=b"/c/a", revision=3)))
        out.append(("at3", [k.value for k in r.kvs]))

        reqs: asyncio.Queue = asyncio.Queue()

        async def gen():
            while (q := await reqs.get()) is not None:
                yield q

        stream = watch.Watch(gen())
        reqs.put_nowait(R.WatchRequest(create_request=R.WatchCreateRequest(key=b"/", range_end=b"\0", start_revision=3, prev_kv=True)))
        resp = await asyncio.wait_for(stream.read(), 10)
        events = [("created", resp.created, resp.watch_id)]
        while len(events) < 5:  # put /c/b, then the txn: delete /c/a, delete /c/b, put /d
            resp = await asyncio.wait_for(stream.read(), 10)
            events += [(e.type, e.kv.key, e.kv.mod_revision, e.prev_kv.value) for e in resp.events]
        reqs.put_nowait(R.WatchRequest(create_request=R.WatchCreateRequest(key=b"/", start_revision=2)))
        resp = await asyncio.wait_for(stream.read(), 10)
        events.append(("created2", resp.created, resp.watch_id))
        resp = await asyncio.wait_for(stream.read(), 10)
        events.append(("compacted", resp.canceled, resp.compact_revision))
        reqs.put_nowait(None)
        stream.cancel()
        out.append(events)
    return out


async def test_embedded_matches_real_etcd(tmp_path):
    real = await start_real(str(tmp_path / "real"))
    try:
        want = await script(real.endpoint)
    finally:
        await real.stop()
    emb = await serve(["http://127.0.0.1:0"], None)
    try:
        got = await script(emb.endpoint)
    finally:
        await emb.stop()
    assert got == want
