"""Randomized model test: the same random operation sequences on the embedded etcd and on a real
etcd 3.4 must give the same answers (values, revisions, counts, errors and watch events).

Hypothesis draws sequences of put / delete (key or prefix) / txn (compares + nested ops) / range
(at past revisions, limits, sorting, keys/count only) / compact, then opens watches from past
revisions and collects their events. Both servers start empty and receive exactly the same
requests, so absolute revisions must agree. Default: a small profile (``CP_ETCD_MODEL_EXAMPLES``,
default 12) that runs in CI in a few seconds; raise it for a deep run.
"""

from __future__ import annotations

import asyncio
import os

import grpc
import pytest
from aetcd.rpc import rpc_pb2 as R
from aetcd.rpc import rpc_pb2_grpc

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st

from components.etcd.server import serve  # noqa: E402
from tests.support.etcd import start_real  # noqa: E402

pytestmark = [pytest.mark.realetcd,
              pytest.mark.skipif(not os.path.exists("/usr/bin/etcd"), reason="/usr/bin/etcd missing")]

EXAMPLES = int(os.environ.get("CP_ETCD_MODEL_EXAMPLES", "12"))
PREFIX = b"/m/"
KEYS = [PREFIX + k for k in (b"a", b"ab", b"b", b"c")]
VALUES = [b"", b"x", b"y", b"zz"]
SENTINEL = PREFIX + b"~end"

keys = st.sampled_from(KEYS)
values = st.sampled_from(VALUES)
back = st.integers(0, 6)  # revisions before the current one

put_op = st.tuples(st.just("put"), keys, values, st.booleans())
delete_op = st.tuples(st.just("delete"), keys, st.booleans(), st.booleans())  # key, as prefix, prev_kv
range_op = st.tuples(st.just("range"), keys, st.booleans(), back, st.integers(0, 3),
                     st.sampled_from(list(R.RangeRequest.SortTarget.values())),
                     st.sampled_from(list(R.RangeRequest.SortOrder.values())), st.booleans(), st.booleans())
compare = st.tuples(keys, st.sampled_from(["value", "version", "mod", "create"]),
                    st.sampled_from([R.Compare.EQUAL, R.Compare.NOT_EQUAL, R.Compare.GREATER, R.Compare.LESS]),
                    values, st.integers(0, 3), back)
txn_leaf = st.one_of(put_op, delete_op, range_op)
txn_op = st.tuples(st.just("txn"), st.lists(compare, max_size=2), st.lists(txn_leaf, max_size=3),
                   st.lists(txn_leaf, max_size=2))
compact_op = st.tuples(st.just("compact"), back)
ops = st.lists(st.one_of(put_op, put_op, delete_op, range_op, txn_op, compact_op), min_size=1, max_size=14)
watches = st.lists(st.tuples(st.sampled_from(KEYS + [PREFIX]), st.integers(0, 20), st.booleans()), max_size=2)


def _kv(kv) -> tuple:
    return (kv.key, kv.value, kv.create_revision, kv.mod_revision, kv.version, kv.lease)


def _end(key: bytes, prefix: bool) -> bytes:
    return key[:-1] + bytes([key[-1] + 1]) if prefix else b""


class Runner:
    """Turns drawn ops into requests for one server and normalises its answers."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.kv = rpc_pb2_grpc.KVStub(channel)
        self.watch = rpc_pb2_grpc.WatchStub(channel)
        self.rev = 1

    def _request(self, op) -> R.RequestOp:
        kind = op[0]
        if kind == "put":
            return R.RequestOp(request_put=R.PutRequest(key=op[1], value=op[2], prev_kv=op[3]))
        if kind == "delete":
            return R.RequestOp(request_delete_range=R.DeleteRangeRequest(
                key=op[1], range_end=_end(op[1], op[2]), prev_kv=op[3]))
        _, key, prefix, b, limit, target, order, keys_only, count_only = op
        return R.RequestOp(request_range=R.RangeRequest(
            key=key, range_end=_end(key, prefix), revision=max(0, self.rev - b) if b else 0, limit=limit,
            sort_target=target, sort_order=order, keys_only=keys_only, count_only=count_only))

    def _compare(self, c) -> R.Compare:
        key, target, result, value, version, b = c
        cmp = R.Compare(key=key, result=result)
        if target == "value":
            cmp.target, cmp.value = R.Compare.VALUE, value
        elif target == "version":
            cmp.target, cmp.version = R.Compare.VERSION, version
        elif target == "mod":
            cmp.target, cmp.mod_revision = R.Compare.MOD, max(0, self.rev - b)
        else:
            cmp.target, cmp.create_revision = R.Compare.CREATE, max(0, self.rev - b)
        return cmp

    @staticmethod
    def _response(which: str, r) -> tuple:
        if which in ("request_put", "response_put"):
            return ("put", r.header.revision, _kv(r.prev_kv) if r.HasField("prev_kv") else None)
        if which in ("request_delete_range", "response_delete_range"):
            return ("delete", r.header.revision, r.deleted, [_kv(kv) for kv in r.prev_kvs])
        if which in ("request_range", "response_range"):
            return ("range", r.header.revision, [_kv(kv) for kv in r.kvs], r.count, r.more)
        return ("txn", r.header.revision, r.succeeded,
                [Runner._response(x.WhichOneof("response"), getattr(x, x.WhichOneof("response")))
                 for x in r.responses])

    async def run(self, op) -> tuple:
        try:
            kind = op[0]
            if kind == "compact":
                r = await self.kv.Compact(R.CompactionRequest(revision=max(1, self.rev - op[1]), physical=True))
                out = ("compact", r.header.revision)
            elif kind == "txn":
                r = await self.kv.Txn(R.TxnRequest(compare=[self._compare(c) for c in op[1]],
                                                   success=[self._request(o) for o in op[2]],
                                                   failure=[self._request(o) for o in op[3]]))
                out = self._response("txn", r)
            else:
                req = self._request(op)
                which = req.WhichOneof("request")
                call = {"request_put": self.kv.Put, "request_delete_range": self.kv.DeleteRange,
                        "request_range": self.kv.Range}[which]
                r = await call(getattr(req, which))
                out = self._response(which, r)
            self.rev = max(self.rev, r.header.revision)
            return out
        except grpc.aio.AioRpcError as e:
            return ("error", e.code().name, e.details())

    async def watch_events(self, key: bytes, start_back: int, prev_kv: bool, until: int) -> list:
        """Events of a watch on ``[key, SENTINEL]`` from revision ``until - start_back`` until the
        sentinel's event (revision ``until``) arrives, or the cancel (compacted start)."""
        reqs: asyncio.Queue = asyncio.Queue()

        async def gen():
            while (q := await reqs.get()) is not None:
                yield q

        stream = self.watch.Watch(gen())
        reqs.put_nowait(R.WatchRequest(create_request=R.WatchCreateRequest(
            key=key, range_end=SENTINEL + b"\0", start_revision=max(1, until - start_back), prev_kv=prev_kv)))
        out = []
        try:
            created = await asyncio.wait_for(stream.read(), 10)
            out.append(("created", created.created))
            while True:
                resp = await asyncio.wait_for(stream.read(), 10)
                if resp.canceled:
                    out.append(("canceled", resp.compact_revision))
                    return out
                for ev in resp.events:
                    out.append((ev.type, _kv(ev.kv), _kv(ev.prev_kv) if ev.HasField("prev_kv") else None))
                    if ev.kv.key == SENTINEL and ev.kv.mod_revision == until:
                        return out
        finally:
            reqs.put_nowait(None)
            stream.cancel()

    async def scenario(self, drawn_ops, drawn_watches) -> list:
        out = [await self.run(op) for op in drawn_ops]
        # a sentinel write marks the end for every watch (it is inside every watched range)
        r = await self.kv.Put(R.PutRequest(key=SENTINEL, value=b"end"))
        until = r.header.revision
        self.rev = until
        for key, start_back, prev_kv in drawn_watches:
            out.append(await self.watch_events(key, start_back, prev_kv, until))
        return out


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    loop = asyncio.new_event_loop()
    tmp = tmp_path_factory.mktemp("model")

    async def start():
        real = await start_real(str(tmp / "real"))
        emb = await serve(["http://127.0.0.1:0"], str(tmp / "emb"))
        return emb, real, grpc.aio.insecure_channel(emb.endpoint), grpc.aio.insecure_channel(real.endpoint)

    emb, real, ch_emb, ch_real = loop.run_until_complete(start())
    try:
        yield loop, Runner(ch_emb), Runner(ch_real)
    finally:
        async def stop():
            await ch_emb.close()
            await ch_real.close()
            await emb.stop()
            await real.stop()
        loop.run_until_complete(stop())
        loop.close()


@settings(max_examples=EXAMPLES, deadline=None, derandomize=os.environ.get("CP_ETCD_MODEL_RANDOM") != "1",
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(drawn_ops=ops, drawn_watches=watches)
def test_random_sequences_match_real_etcd(servers, drawn_ops, drawn_watches):
    loop, ours, theirs = servers
    want = loop.run_until_complete(asyncio.wait_for(theirs.scenario(drawn_ops, drawn_watches), 60))
    got = loop.run_until_complete(asyncio.wait_for(ours.scenario(drawn_ops, drawn_watches), 60))
    assert got == want
