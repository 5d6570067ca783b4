"""The etcd client's own unary gRPC-over-HTTP/2 path (``controlplane/storage/h2grpc.py``).

Against the embedded etcd: Range / Txn answers and errors equal grpc.aio's. Against a scripted
HTTP/2 peer: flow control with small windows (RFC 9113 §6.9), CONTINUATION and HPACK dynamic
table references in answers (RFC 7541), Trailers-Only errors with percent-encoded
``grpc-message`` (grpc ``doc/PROTOCOL-HTTP2.md``), GOAWAY / RST_STREAM / connection loss as
UNAVAILABLE, the deadline as DEADLINE_EXCEEDED, and reconnection on the next call.
"""

from __future__ import annotations

import asyncio
import struct

import grpc
import pytest
from aetcd import rpc
from hpack import Encoder

from components.etcd.server import serve
from controlplane.storage import h2grpc
from controlplane.storage.errors import Expired, StorageError, TooLargeResourceVersion, Unavailable
from controlplane.storage.etcd import EtcdClient, prefix_end
from controlplane.storage.h2grpc import PREFACE, H2Channel

DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
RANGE = "/etcdserverpb.KV/Range"


@pytest.fixture
async def etcd():
    server = await serve(["http://127.0.0.1:0"], None)
    yield server
    await server.stop()


def _clients(endpoint: str, timeout: float = 5.0) -> tuple[EtcdClient, EtcdClient]:
    fast = EtcdClient("http://" + endpoint, timeout=timeout)
    slow = EtcdClient("http://" + endpoint, timeout=timeout)
    slow._unary = None  # grpc.aio for every call
    assert fast._unary is not None
    return fast, slow


def _put(key: bytes, value: bytes) -> rpc.RequestOp:
    return rpc.RequestOp(request_put=rpc.PutRequest(key=key, value=value))


def _strip(resp):
    resp.header.Clear()
    for r in getattr(resp, "responses", []):
        r.response_range.header.Clear()
    return resp


async def test_range_and_txn_answers_equal_grpc(etcd):
    """Puts of values far larger than a frame (1.4 MiB), a range over them, a Txn whose compare
    fails (failure branch answered): the same messages as over grpc.aio."""
    fast, slow = _clients(etcd.endpoint)
    try:
        big = bytes(range(256)) * (1400 * 4)
        for c, tag in ((fast, b"f"), (slow, b"s")):
            for i in range(3):
                assert (await c.txn([], [_put(b"/big/%s/%d" % (tag, i), big)])).succeeded
        a, b = await fast.range(b"/big/", b"/big0"), await slow.range(b"/big/", b"/big0")
        assert a == b and a.count == 6 and all(kv.value == big for kv in a.kvs)
        cmp = rpc.Compare(key=b"/big/f/0", result=rpc.Compare.CompareResult.EQUAL,
                          target=rpc.Compare.CompareTarget.MOD, mod_revision=1)
        fail = [rpc.RequestOp(request_range=rpc.RangeRequest(key=b"/big/f/0"))]
        ra, rb = await fast.txn([cmp], [], fail), await slow.txn([cmp], [], fail)
        assert not ra.succeeded and _strip(ra) == _strip(rb)
        answers = await asyncio.gather(*(fast.range(b"/big/f/%d" % (i % 3), keys_only=True) for i in range(64)))
        assert [r.kvs[0].key for r in answers] == [b"/big/f/%d" % (i % 3) for i in range(64)]
    finally:
        await fast.close()
        await slow.close()


async def test_etcd_errors_keep_their_codes_and_messages(etcd):
    """A compacted revision → Expired, a future one → TooLargeResourceVersion, a request over
    the server's receive limit → the same StorageError text as over grpc.aio."""
    fast, slow = _clients(etcd.endpoint)
    try:
        for i in range(4):
            await fast.txn([], [_put(b"/k", b"%d" % i)])
        rev = (await fast.range(b"/k")).header.revision
        await fast.compact(rev - 1)
        for c in (fast, slow):
            with pytest.raises(Expired, match="required revision has been compacted"):
                await c.range(b"/k", revision=rev - 2)
            with pytest.raises(TooLargeResourceVersion, match="future revision"):
                await c.range(b"/k", revision=rev + 10)
        texts = []
        for c in (fast, slow):
            with pytest.raises(StorageError) as e:
                await c.txn([], [_put(b"/huge", b"z" * (2 * 1024 * 1024 + 100))])
            texts.append(str(e.value))
        assert texts[0] == texts[1] and "RESOURCE_EXHAUSTED" in texts[0]
    finally:
        await fast.close()
        await slow.close()


async def test_no_server_is_unavailable():
    """Nothing listening: the call fails at once with Unavailable (as grpc's fail-fast calls)."""
    srv = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    srv.close()
    await srv.wait_closed()
    c = EtcdClient(f"http://127.0.0.1:{port}", timeout=2.0)
    try:
        with pytest.raises(Unavailable, match="failed to connect"):
            await c.range(b"/k")
    finally:
        await c.close()


class Peer:
    """A scripted HTTP/2 server: ``answer(peer, sid, message)`` is awaited for each complete
    request (HEADERS + DATA up to END_STREAM); ``settings`` are sent first."""

    def __init__(self, answer, settings: bytes = b"", on_message=None) -> None:
        self.answer = answer
        self.on_message = on_message  # (peer, sid, message) for each request message, if set
        self.settings = settings
        self.connections = 0
        self.frames: list[tuple[int, int, int, int]] = []  # (type, flags, stream, length) received
        self.writer: asyncio.StreamWriter | None = None
        self.encoder = Encoder()
        self.recv_window = 65535
        self.window_updates: list[int] = []
        self.ended = asyncio.Event()  # a connection's reading ended (the client closed it)

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return "127.0.0.1:%d" % self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        self.server.close()
        if self.writer is not None:
            self.writer.close()

    def send(self, ftype: int, flags: int, sid: int, payload: bytes = b"") -> None:
        n = len(payload)
        assert self.writer is not None
        self.writer.write(bytes((n >> 16, n >> 8 & 0xFF, n & 0xFF, ftype, flags)) + sid.to_bytes(4, "big") + payload)

    def headers(self, sid: int, headers: list, end_stream: bool = False, split: bool = False) -> None:
        block = self.encoder.encode(headers)
        if split:  # HEADERS then CONTINUATION
            self.send(HEADERS, END_STREAM if end_stream else 0, sid, block[:3])
            self.send(CONTINUATION, END_HEADERS, sid, block[3:])
        else:
            self.send(HEADERS, END_HEADERS | (END_STREAM if end_stream else 0), sid, block)

    def ok(self, sid: int, message: bytes, split: bool = False) -> None:
        self.headers(sid, [(":status", "200"), ("content-type", "application/grpc")], split=split)
        self.send(DATA, 0, sid, b"\x00" + len(message).to_bytes(4, "big") + message)
        self.headers(sid, [("grpc-status", "0")], end_stream=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writer = writer
        self.encoder = Encoder()  # each connection has its own HPACK table
        try:
            assert await reader.readexactly(len(PREFACE)) == PREFACE
            self.send(SETTINGS, 0, 0, self.settings)
            bodies: dict[int, bytearray] = {}
            while True:
                head = await reader.readexactly(9)
                length = int.from_bytes(head[:3], "big")
                ftype, flags, sid = head[3], head[4], int.from_bytes(head[5:], "big") & 0x7FFFFFFF
                payload = await reader.readexactly(length)
                self.frames.append((ftype, flags, sid, length))
                if ftype == HEADERS:
                    bodies[sid] = bytearray()
                elif ftype == DATA and sid in bodies:
                    bodies[sid] += payload
                    if self.on_message is not None and len(payload) >= 5:
                        await self.on_message(self, sid, payload[5:])
                    self.recv_window -= length
                    if self.window_updates:  # give back what was read (stream and connection)
                        inc = self.window_updates.pop(0)
                        self.send(WINDOW_UPDATE, 0, sid, inc.to_bytes(4, "big"))
                        self.send(WINDOW_UPDATE, 0, 0, inc.to_bytes(4, "big"))
                    await writer.drain()
                if ftype in (HEADERS, DATA) and flags & END_STREAM:
                    await self.answer(self, sid, bytes(bodies.pop(sid))[5:])
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            self.ended.set()


def _range_answer(count: int) -> bytes:
    return rpc.RangeResponse(count=count).SerializeToString()


async def _call(ch: H2Channel, key: bytes = b"k", timeout: float = 2.0):
    return await ch.call(RANGE, rpc.RangeRequest(key=key), rpc.RangeResponse.FromString, timeout)


async def test_request_waits_for_flow_control_windows():
    """A peer announcing a 1,000-byte stream window: the request's DATA never exceeds what the
    windows allow and the rest leaves as the peer's WINDOW_UPDATEs arrive; END_STREAM on the last."""
    got = []

    async def answer(peer, sid, message):
        got.append(message)
        peer.ok(sid, _range_answer(1))

    peer = Peer(answer, settings=struct.pack(">HI", 4, 1000))
    peer.window_updates = [1000] * 100
    ch = H2Channel(await peer.start())
    try:
        assert (await _call(ch)).count == 1  # the peer's SETTINGS are in once it answered
        key = bytes(range(256)) * 40   # 10 KiB
        r = await _call(ch, key)
        assert r.count == 1 and rpc.RangeRequest.FromString(got[1]).key == key
        data = [f for f in peer.frames if f[0] == DATA and f[2] == 3]
        assert max(f[3] for f in data) <= 1000 and len(data) > 10
        assert [f[1] & END_STREAM for f in data] == [0] * (len(data) - 1) + [END_STREAM]
    finally:
        await ch.close()
        await peer.stop()


async def test_answers_with_continuation_and_indexed_headers_decode():
    """Answers whose header blocks use HPACK's dynamic table (the encoder indexes, so the second
    answer's bytes only reference entries) and one split into HEADERS + CONTINUATION."""
    async def answer(peer, sid, message):
        peer.ok(sid, _range_answer(sid), split=sid == 3)

    peer = Peer(answer)
    ch = H2Channel(await peer.start())
    try:
        assert [(await _call(ch)).count for _ in range(4)] == [1, 3, 5, 7]
    finally:
        await ch.close()
        await peer.stop()


async def test_trailers_only_error_keeps_code_and_decoded_message():
    """A Trailers-Only answer (grpc-status 9, percent-encoded grpc-message) is that code with the
    decoded text; the connection serves the next call."""
    async def answer(peer, sid, message):
        if sid == 1:
            peer.headers(sid, [(":status", "200"), ("content-type", "application/grpc"),
                               ("grpc-status", "9"), ("grpc-message", "etcdserver: bad%20thing%25")], end_stream=True)
        else:
            peer.ok(sid, _range_answer(2))

    peer = Peer(answer)
    ch = H2Channel(await peer.start())
    try:
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await _call(ch)
        assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert e.value.details() == "etcdserver: bad thing%"
        assert (await _call(ch)).count == 2 and peer.connections == 1
    finally:
        await ch.close()
        await peer.stop()


async def test_refused_stream_and_goaway_are_sent_again():
    """Calls the server did not process are sent again (grpc's transparent retry): after an
    RST_STREAM REFUSED_STREAM on the same connection, after a GOAWAY whose last stream is below
    the call's on a new one."""
    seen = []

    async def answer(peer, sid, message):
        seen.append((peer.connections, sid))
        if peer.connections == 1 and sid == 1:
            peer.send(RST_STREAM, 0, sid, (7).to_bytes(4, "big"))
        elif peer.connections == 1:
            peer.send(GOAWAY, 0, 0, struct.pack(">II", 1, 0))
        else:
            peer.ok(sid, _range_answer(5))

    peer = Peer(answer)
    ch = H2Channel(await peer.start())
    try:
        assert (await _call(ch)).count == 5
        assert seen == [(1, 1), (1, 3), (2, 1)]
    finally:
        await ch.close()
        await peer.stop()


async def test_refused_every_time_is_unavailable():
    async def answer(peer, sid, message):
        peer.send(RST_STREAM, 0, sid, (7).to_bytes(4, "big"))

    peer = Peer(answer)
    ch = H2Channel(await peer.start())
    try:
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await _call(ch)
        assert e.value.code() == grpc.StatusCode.UNAVAILABLE
        assert len([f for f in peer.frames if f[0] == HEADERS]) == 4
    finally:
        await ch.close()
        await peer.stop()


async def test_max_concurrent_streams_is_respected():
    """SETTINGS_MAX_CONCURRENT_STREAMS 2: of six concurrent calls two streams are open at a
    time, the others wait and start as those end (stream ids still increasing)."""
    held: list[int] = []
    pair = asyncio.Event()

    async def answer(peer, sid, message):
        if sid == 1:  # the first call: the peer's SETTINGS are in once it is answered
            peer.ok(sid, _range_answer(sid))
            return
        held.append(sid)
        if len(held) == 2:
            pair.set()

    peer = Peer(answer, settings=struct.pack(">HI", 3, 2))
    ch = H2Channel(await peer.start())
    try:
        assert (await _call(ch)).count == 1
        calls = [asyncio.create_task(_call(ch)) for _ in range(6)]
        waiting = []
        for _ in range(3):
            await asyncio.wait_for(pair.wait(), 2.0)
            pair.clear()
            assert ch._conn is not None and len(ch._conn.calls) == 2
            waiting.append(len(ch._conn.waiting))
            for s in held:
                peer.ok(s, _range_answer(s))
            held.clear()
        answers = await asyncio.gather(*calls)
        assert sorted(r.count for r in answers) == [3, 5, 7, 9, 11, 13] and waiting == [4, 2, 0]
    finally:
        await ch.close()
        await peer.stop()


async def test_connection_lost_mid_call_is_unavailable_then_reconnects():
    async def answer(peer, sid, message):
        if peer.connections == 1:
            peer.writer.close()
        else:
            peer.ok(sid, _range_answer(4))

    peer = Peer(answer)
    ch = H2Channel(await peer.start())
    try:
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await _call(ch)
        assert e.value.code() == grpc.StatusCode.UNAVAILABLE
        assert (await _call(ch)).count == 4 and peer.connections == 2
    finally:
        await ch.close()
        await peer.stop()


async def test_deadline_resets_the_stream_and_drops_a_silent_connection():
    """No answer within the deadline: DEADLINE_EXCEEDED, the stream reset (RST_STREAM CANCEL)
    and, as nothing at all came back during the call, the connection dropped: the next call
    opens a new one."""
    async def answer(peer, sid, message):
        if peer.connections == 2 or sid == 1:
            peer.ok(sid, _range_answer(6))

    peer = Peer(answer)
    ch = H2Channel(await peer.start())
    try:
        assert (await _call(ch)).count == 6
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await _call(ch, timeout=0.2)
        assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert (await _call(ch)).count == 6 and peer.connections == 2
        assert (RST_STREAM, 0, 3, 4) in peer.frames
    finally:
        await ch.close()
        await peer.stop()


async def _events(it, n: int) -> list:
    out: list = []
    while len(out) < n:
        resp = await it.__anext__()
        out += [(e.type, e.kv.key, e.kv.mod_revision, e.kv.value) for e in resp.events]
    return out


async def test_watch_events_equal_grpc(etcd):
    """A Watch over our HTTP/2 client and one over grpc.aio see the same events (puts of values
    larger than a frame, deletes), and a progress request is answered on ours."""
    fast, slow = _clients(etcd.endpoint)
    try:
        big = bytes(range(256)) * 200
        for i in range(30):
            await fast.txn([], [_put(b"/w/%d" % (i % 7), big if i % 5 == 0 else b"%d" % i)])
        await fast.txn([], [rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=b"/w/1"))])
        streams = [c.watch(b"/w/", prefix_end(b"/w/"), 1) for c in (fast, slow)]
        its = [st.__aiter__() for st in streams]
        a, b = await asyncio.wait_for(asyncio.gather(*(_events(it, 31) for it in its)), 10)
        assert a == b and len(a) == 31 and a[0][3] == big and a[-1][0] == rpc.Event.DELETE
        assert streams[0].request_progress()
        resp = await asyncio.wait_for(its[0].__anext__(), 10)
        assert resp.events == [] and resp.revision == a[-1][2]
        for st in streams:
            st.close()
    finally:
        await fast.close()
        await slow.close()


async def test_stream_ending_with_an_error_status_raises_it():
    async def answer(peer, sid, message):
        pass

    async def on_message(peer, sid, message):
        peer.headers(sid, [(":status", "200"), ("content-type", "application/grpc")])
        peer.send(DATA, 0, sid, b"\x00" + len(message).to_bytes(4, "big") + message)
        peer.headers(sid, [("grpc-status", "14"), ("grpc-message", "going%20away")], end_stream=True)

    peer = Peer(answer, on_message=on_message)
    ch = H2Channel(await peer.start())

    async def requests():
        yield rpc.WatchRequest(progress_request=rpc.WatchProgressRequest())

    try:
        call = ch.stream("/etcdserverpb.Watch/Watch", rpc.WatchRequest.FromString, requests())
        assert (await asyncio.wait_for(call.__anext__(), 5)).HasField("progress_request")
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await asyncio.wait_for(call.__anext__(), 5)
        assert e.value.code() == grpc.StatusCode.UNAVAILABLE and e.value.details() == "going away"
    finally:
        await ch.close()
        await peer.stop()


async def test_stream_cancel_resets_it_and_reading_raises_cancelled():
    """Each request message is echoed; after cancel() the peer gets RST_STREAM CANCEL, the
    request iterator is no longer read, and reading raises CancelledError (as grpc.aio)."""
    async def answer(peer, sid, message):
        pass

    async def on_message(peer, sid, message):
        if not peer.frames or sum(1 for f in peer.frames if f[0] == DATA and f[2] == sid) == 1:
            peer.headers(sid, [(":status", "200"), ("content-type", "application/grpc")])
        peer.send(DATA, 0, sid, b"\x00" + len(message).to_bytes(4, "big") + message)

    peer = Peer(answer, on_message=on_message)
    ch = H2Channel(await peer.start())
    queue: asyncio.Queue = asyncio.Queue()

    async def requests():
        while True:
            yield await queue.get()

    try:
        call = ch.stream("/etcdserverpb.Watch/Watch", rpc.WatchRequest.FromString, requests())
        queue.put_nowait(rpc.WatchRequest(cancel_request=rpc.WatchCancelRequest(watch_id=1)))
        first = asyncio.ensure_future(call.__anext__())
        assert (await asyncio.wait_for(first, 5)).cancel_request.watch_id == 1
        queue.put_nowait(rpc.WatchRequest(cancel_request=rpc.WatchCancelRequest(watch_id=2)))
        assert (await asyncio.wait_for(call.__anext__(), 5)).cancel_request.watch_id == 2
        assert call.cancel() and call.cancelled()
        with pytest.raises(asyncio.CancelledError):
            await call.__anext__()
        await ch.close()  # the RST_STREAM leaves before the connection closes
        await asyncio.wait_for(peer.ended.wait(), 5)
        assert (RST_STREAM, 0, 1, 4) in peer.frames
    finally:
        await ch.close()
        await peer.stop()


async def test_unanswered_keepalive_ends_an_idle_stream_unavailable(monkeypatch):
    """A stream open on a connection that stays silent: after KEEPALIVE_TIME a PING, no answer
    within KEEPALIVE_TIMEOUT ends the connection and the stream fails UNAVAILABLE."""
    monkeypatch.setattr(h2grpc, "KEEPALIVE_TIME", 0.05)
    monkeypatch.setattr(h2grpc, "KEEPALIVE_TIMEOUT", 0.05)

    async def answer(peer, sid, message):
        pass

    peer = Peer(answer)
    ch = H2Channel(await peer.start())

    async def requests():
        yield rpc.WatchRequest(progress_request=rpc.WatchProgressRequest())
        await asyncio.Event().wait()

    try:
        call = ch.stream("/etcdserverpb.Watch/Watch", rpc.WatchRequest.FromString, requests())
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await asyncio.wait_for(call.__anext__(), 5)
        assert e.value.code() == grpc.StatusCode.UNAVAILABLE and "keepalive" in (e.value.details() or "")
        assert any(f[0] == PING for f in peer.frames)
        call.cancel()
    finally:
        await ch.close()
        await peer.stop()
