"""The embedded etcd's own gRPC-over-HTTP/2 transport (``components/etcd/transport.py``).

What the etcdctl / aetcd / python-etcd3 / contract suites do not reach: the transport's status
codes (unknown method, receive limit, ``grpc-message`` percent-encoding), flow control with
responses far larger than the windows, stream cancellation, HTTP/2 frames on a raw socket,
etcd's HTTP/1.1 endpoints on the same port, and stopping with calls in flight.

Specs: RFC 9113 (HTTP/2), RFC 7541 (HPACK), grpc ``doc/PROTOCOL-HTTP2.md`` and etcd
(``server/embed/serve.go``, ``server/etcdserver/api/v3rpc``, ``server/etcdserver/api/etcdhttp``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import struct
import threading
import time
from urllib.parse import unquote

import grpc
import pytest
from aetcd.rpc import kv_pb2, rpc_pb2, rpc_pb2_grpc
from hpack import Decoder, Encoder

from components.etcd import transport
from components.etcd.server import GRPC_OVERHEAD_BYTES, serve

R = rpc_pb2
#: clients of big responses lift grpc's default 4 MiB receive limit, as etcd's clientv3 does
BIG = [("grpc.max_receive_message_length", -1)]


@pytest.fixture
async def etcd():
    server = await serve(["http://127.0.0.1:0"], None)
    yield server
    await server.stop()


@pytest.fixture
async def channel(etcd):
    ch = grpc.aio.insecure_channel(etcd.endpoint, options=BIG)
    yield ch
    await ch.close()


async def _rpc_error(call, timeout: float = 5.0) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await asyncio.wait_for(call, timeout)
    return e.value


async def _until(cond, timeout: float = 2.0) -> None:
    """Bounded poll of ``cond()`` (state changed by the server's own tasks, no event to await)."""
    async def loop():
        while not cond():
            await asyncio.sleep(0.005)
    await asyncio.wait_for(loop(), timeout)


async def _fill(kv, n: int, size: int, prefix: bytes = b"/big/") -> None:
    """``n`` keys of ``size``-byte values, 100 puts per Txn (under etcd's 128 ops / 1.5 MiB)."""
    for start in range(0, n, 100):
        ops = [R.RequestOp(request_put=R.PutRequest(key=prefix + b"%05d" % i, value=_value(i, size)))
               for i in range(start, min(n, start + 100))]
        await kv.Txn(R.TxnRequest(success=ops))


def _value(i: int, size: int) -> bytes:
    return (b"%05d" % i * (size // 5 + 1))[:size]


class _Stream:
    """A client-streaming call fed from a queue (``send``; ``end`` half-closes)."""

    def __init__(self, method) -> None:
        self.q: asyncio.Queue = asyncio.Queue()
        self.call = method(self._gen())

    async def _gen(self):
        while (req := await self.q.get()) is not None:
            yield req

    def send(self, req) -> None:
        self.q.put_nowait(req)

    def end(self) -> None:
        self.q.put_nowait(None)

    async def recv(self, timeout: float = 5.0):
        return await asyncio.wait_for(self.call.read(), timeout)


# ---------------------------------------------------------------------------------------- 1
async def test_unknown_method_and_service_are_unimplemented(channel):
    """A path no servicer registered ends as UNIMPLEMENTED (grpc PROTOCOL-HTTP2.md, status 12;
    grpc-go answers ``unknown method`` / ``unknown service`` the same way); the channel keeps working."""
    for path in ("/etcdserverpb.KV/Nope", "/etcdserverpb.Nope/Range"):
        nope = channel.unary_unary(path, request_serializer=R.RangeRequest.SerializeToString,
                                   response_deserializer=R.RangeResponse.FromString)
        err = await _rpc_error(nope(R.RangeRequest(key=b"k")))
        assert err.code() == grpc.StatusCode.UNIMPLEMENTED
        assert path in err.details()
    r = await rpc_pb2_grpc.KVStub(channel).Put(R.PutRequest(key=b"k", value=b"v"))
    assert r.header.revision == 2


async def test_request_size_limits_transport_then_etcd():
    """etcd's two limits (``server/embed/serve.go``: gRPC max receive = --max-request-bytes +
    grpcOverheadBytes 512 KiB; ``v3rpc`` / ``etcdserver``: ErrRequestTooLarge above
    --max-request-bytes): a message above the gRPC limit is RESOURCE_EXHAUSTED from the transport
    (grpc-go's ``received message larger than max``), one at the limit reaches etcd and is
    INVALID_ARGUMENT ``etcdserver: request is too large``. The connection survives both."""
    server = await serve(["http://127.0.0.1:0"], None, max_request_bytes=1024)
    limit = 1024 + GRPC_OVERHEAD_BYTES
    try:
        async with grpc.aio.insecure_channel(server.endpoint) as ch:
            kv = rpc_pb2_grpc.KVStub(ch)
            err = await _rpc_error(kv.Put(R.PutRequest(key=b"big", value=b"x" * (600 * 1024))))
            assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert err.details() == f"grpc: received message larger than max ({600 * 1024 + 9} vs. {limit})"

            def put_of_size(total: int) -> R.PutRequest:
                req = R.PutRequest(key=b"k", value=b"x" * total)
                while req.ByteSize() > total:
                    req.value = req.value[:-1]
                assert req.ByteSize() == total
                return req

            err = await _rpc_error(kv.Put(put_of_size(limit + 1)))
            assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            for size in (limit, 4096, 1025):
                err = await _rpc_error(kv.Put(put_of_size(size)))
                assert (err.code(), err.details()) == (grpc.StatusCode.INVALID_ARGUMENT,
                                                       "etcdserver: request is too large")
            ok = await kv.Put(put_of_size(1024))
            assert ok.header.revision == 2
    finally:
        await server.stop()


def test_trailers_percent_encode_grpc_message():
    """``grpc-message`` is Percent-Encoded (grpc PROTOCOL-HTTP2.md: bytes %x20-%x7E stay except
    ``%``; everything else, UTF-8 bytes included, is ``%XX``); the trailer block decodes with a
    fresh HPACK decoder (literals without indexing, RFC 7541 §6.2.2)."""
    message = "100% sûr: ключ «k» \t\r\nend ~!\"#$&'()*+,-./:;<=>?@[\\]^_`{|}"
    headers = dict(Decoder().decode(transport._trailers(grpc.StatusCode.NOT_FOUND, message), raw=True))
    assert headers[b"grpc-status"] == b"5"
    raw = headers[b"grpc-message"]
    assert all(0x20 <= b <= 0x7E for b in raw)
    assert b"100%25 s%C3%BBr" in raw and b"%09%0D%0Aend ~!\"#$&'()*+,-./:;<=>?@[\\]^_`{|}" in raw
    assert unquote(raw.decode("ascii"), errors="strict") == message
    assert dict(Decoder().decode(transport._trailers(grpc.StatusCode.UNKNOWN, ""), raw=True)) == {b"grpc-status": b"2"}


async def test_error_message_with_non_ascii_and_percent_round_trips(tmp_path):
    """An etcd error whose text carries the OS error (``etcdserver: WAL write failed: ...``, the
    path of a broken WAL, as etcd's ``ErrGRPC*`` carry Go error strings) reaches a grpc client
    unchanged through the percent-encoded ``grpc-message`` (grpc PROTOCOL-HTTP2.md)."""
    server = await serve(["http://127.0.0.1:0"], str(tmp_path))
    reason = "[Errno 28] 100% plein: '/données/wal/ключ'"

    def broken(data):
        raise OSError(reason)

    server.core.datadir.write_sync = broken
    try:
        async with grpc.aio.insecure_channel(server.endpoint) as ch:
            kv = rpc_pb2_grpc.KVStub(ch)
            err = await _rpc_error(kv.Put(R.PutRequest(key=b"k", value=b"v")))
            assert (err.code(), err.details()) == (grpc.StatusCode.UNAVAILABLE,
                                                   f"etcdserver: WAL write failed: {reason}")
            err = await _rpc_error(kv.Put(R.PutRequest(key=b"k", value=b"v")))  # call_sync path
            assert err.details() == f"etcdserver: WAL write failed: {reason}"
    finally:
        await server.stop()


# ---------------------------------------------------------------------------------------- 2
async def test_5mb_range_crosses_flow_control_windows(channel):
    """A ~5 MB Range response is far above HTTP/2's initial 65,535-byte windows and 16 KiB frames
    (RFC 9113 §6.9.2, §4.2): it must arrive complete, in order, byte for byte."""
    kv = rpc_pb2_grpc.KVStub(channel)
    await _fill(kv, 5000, 1024)
    r = await asyncio.wait_for(kv.Range(R.RangeRequest(key=b"/big/", range_end=b"/big0")), 10)
    assert r.ByteSize() > 5_000_000
    assert r.count == len(r.kvs) == 5000
    assert [kv.key for kv in r.kvs] == [b"/big/%05d" % i for i in range(5000)]
    assert all(kv.value == _value(i, 1024) for i, kv in enumerate(r.kvs))


async def test_20_concurrent_big_ranges_all_complete(channel):
    """20 concurrent ~1 MB Ranges on one connection share the connection window (RFC 9113 §6.9.1):
    every one completes with its own keys."""
    kv = rpc_pb2_grpc.KVStub(channel)
    await _fill(kv, 2000, 1024)

    async def one(j: int):
        start = j * 50
        r = await kv.Range(R.RangeRequest(key=b"/big/%05d" % start, range_end=b"/big0", limit=1000))
        assert [x.key for x in r.kvs] == [b"/big/%05d" % i for i in range(start, start + 1000)]
        assert all(x.value == _value(start + k, 1024) for k, x in enumerate(r.kvs))
        return len(r.kvs)

    got = await asyncio.wait_for(asyncio.gather(*(one(j) for j in range(20))), 20)
    assert got == [1000] * 20


# ---------------------------------------------------------------------------------------- 3
async def test_watch_events_then_client_cancel_drops_watcher(etcd, channel):
    """A Watch stream gets its events; the client's cancel (RST_STREAM CANCEL, RFC 9113 §6.4) ends
    the server's stream: the watcher leaves the hub (etcd ``v3rpc/watch.go`` closes the
    serverWatchStream when the stream context ends)."""
    kv, hub = rpc_pb2_grpc.KVStub(channel), etcd.core.hub
    w = _Stream(rpc_pb2_grpc.WatchStub(channel).Watch)
    w.send(R.WatchRequest(create_request=R.WatchCreateRequest(key=b"w", range_end=b"x")))
    assert (await w.recv()).created
    assert len(hub.streams) == 1 and len(hub.synced) == 1
    await kv.Put(R.PutRequest(key=b"w1", value=b"a"))
    await kv.Put(R.PutRequest(key=b"w2", value=b"b"))
    events = []
    while len(events) < 2:
        events += [(e.type, e.kv.key, e.kv.value) for e in (await w.recv()).events]
    assert events == [(kv_pb2.Event.PUT, b"w1", b"a"), (kv_pb2.Event.PUT, b"w2", b"b")]
    w.call.cancel()
    await _until(lambda: not hub.streams and not hub.synced)
    assert not any(c.streams for c in etcd.grpc.connections)
    assert (await kv.Put(R.PutRequest(key=b"w3", value=b"c"))).header.revision == 4


async def test_lease_keepalive_stream_answers_each_request(channel):
    """LeaseKeepAlive (bidirectional stream, etcd ``v3rpc/lease.go``): one response per request,
    in order, while the client keeps the stream open; half-close ends the call with OK."""
    lease = rpc_pb2_grpc.LeaseStub(channel)
    ids = [(await lease.LeaseGrant(R.LeaseGrantRequest(TTL=10 + i))).ID for i in range(3)]
    ka = _Stream(lease.LeaseKeepAlive)
    for n in range(10):
        lid = ids[n % 3]
        ka.send(R.LeaseKeepAliveRequest(ID=lid))
        resp = await ka.recv()
        assert (resp.ID, resp.TTL) == (lid, 10 + n % 3)
    ka.send(R.LeaseKeepAliveRequest(ID=424242))  # unknown lease: TTL 0 (lessor.renew)
    resp = await ka.recv()
    assert (resp.ID, resp.TTL) == (424242, 0)
    ka.end()
    assert await ka.recv() is grpc.aio.EOF
    assert await ka.call.code() == grpc.StatusCode.OK


async def test_snapshot_streams_many_chunks(channel):
    """Maintenance.Snapshot (etcd ``v3rpc/maintenance.go``): 32 KiB chunks, ``remaining_bytes``
    counting down to 0, the whole being the bbolt file + its SHA-256."""
    kv = rpc_pb2_grpc.KVStub(channel)
    await _fill(kv, 2000, 1024)
    blobs, remaining = [], []
    async for chunk in rpc_pb2_grpc.MaintenanceStub(channel).Snapshot(R.SnapshotRequest()):
        blobs.append(chunk.blob)
        remaining.append(chunk.remaining_bytes)
    data = b"".join(blobs)
    assert len(blobs) > 60 and all(len(b) == 32 * 1024 for b in blobs[:-1])
    assert remaining[0] == len(data) - len(blobs[0]) and remaining[-1] == 0
    assert remaining == sorted(remaining, reverse=True)
    assert len(data) > 2_000_000 and (len(data) - 32) % 512 == 0
    assert hashlib.sha256(data[:-32]).digest() == data[-32:]


# ---------------------------------------------------------------------------------------- 4
async def test_64_concurrent_puts_one_channel(channel):
    """64 unary calls multiplexed on one connection (RFC 9113 §5.1.2, concurrent streams): all
    succeed and each gets its own revision, 2..65 (etcd: one revision per Put)."""
    kv = rpc_pb2_grpc.KVStub(channel)
    got = await asyncio.wait_for(asyncio.gather(
        *(kv.Put(R.PutRequest(key=b"/c/%d" % i, value=b"%d" % i)) for i in range(64))), 10)
    assert sorted(r.header.revision for r in got) == list(range(2, 66))
    r = await kv.Range(R.RangeRequest(key=b"/c/", range_end=b"/c0"))
    assert sorted((x.key, x.mod_revision) for x in r.kvs) == sorted(
        (b"/c/%d" % i, got[i].header.revision) for i in range(64))


# ---------------------------------------------------------------------------------------- 5
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4


def _frame(ftype: int, flags: int, sid: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes((ftype, flags)) + struct.pack(">I", sid) + payload


class H2:
    """A bare HTTP/2 client on an asyncio stream: frames built with struct, headers with hpack."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.enc, self.dec = Encoder(), Decoder()

    @classmethod
    async def connect(cls, port: int, settings: bytes = b"") -> "H2":
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        h = cls(reader, writer)
        writer.write(PREFACE + _frame(SETTINGS, 0, 0, settings))
        return h

    def send(self, ftype: int, flags: int, sid: int, payload: bytes = b"") -> None:
        self.writer.write(_frame(ftype, flags, sid, payload))

    def request(self, sid: int, path: str, message: bytes | None = None, end_with_data: bool = True) -> None:
        block = self.enc.encode([(":method", "POST"), (":scheme", "http"), (":path", path),
                                 (":authority", "localhost"), ("content-type", "application/grpc"),
                                 ("te", "trailers")])
        self.send(HEADERS, END_HEADERS | (END_STREAM if message is None else 0), sid, block)
        if message is not None:
            grpc_msg = b"\x00" + struct.pack(">I", len(message)) + message
            self.send(DATA, END_STREAM if end_with_data else 0, sid, grpc_msg)

    async def read(self, timeout: float = 2.0):
        """The next frame as (type, flags, stream id, payload); HEADERS payload decoded to a dict."""
        head = await asyncio.wait_for(self.reader.readexactly(9), timeout)
        length = int.from_bytes(head[:3], "big")
        ftype, flags, sid = head[3], head[4], struct.unpack(">I", head[5:])[0] & 0x7FFFFFFF
        payload = await asyncio.wait_for(self.reader.readexactly(length), timeout)
        if ftype == HEADERS:
            payload = dict(self.dec.decode(payload, raw=True))
        return ftype, flags, sid, payload

    async def read_until(self, ftype: int, timeout: float = 2.0, flags: int | None = None):
        """Frames up to the first of ``ftype`` (with all of ``flags``); returns (skipped, that frame)."""
        skipped = []
        while True:
            f = await self.read(timeout)
            if f[0] == ftype and (flags is None or f[1] & flags == flags):
                return skipped, f
            skipped.append(f)

    async def handshake(self) -> list:
        """Read the server's side of the connection preface up to the ACK of our SETTINGS."""
        frames = []
        while True:
            f = await self.read()
            frames.append(f)
            if f[0] == SETTINGS and f[1] & ACK:
                return frames

    def close(self) -> None:
        self.writer.close()


async def test_raw_preface_settings_and_ping(etcd):
    """RFC 9113 §3.4: the server's preface is a SETTINGS frame; §6.5.3: our SETTINGS is ACKed
    (empty payload); §6.7: a PING is answered by a PING with ACK and the same 8 opaque bytes."""
    h = await H2.connect(etcd.port, struct.pack(">HI", 4, 1 << 20))  # INITIAL_WINDOW_SIZE
    frames = await h.handshake()
    first = frames[0]
    assert first[:3] == (SETTINGS, 0, 0) and len(first[3]) % 6 == 0
    settings = dict(struct.unpack_from(">HI", first[3], off) for off in range(0, len(first[3]), 6))
    assert settings[2] == 0  # SETTINGS_ENABLE_PUSH from a server: 0
    assert frames[-1] == (SETTINGS, ACK, 0, b"")
    assert all(f[0] in (SETTINGS, WINDOW_UPDATE) for f in frames)
    h.send(PING, 0, 0, b"\x01\x02\x03\x04\xfe\xff\x00\x7f")
    h.send(PING, ACK, 0, b"ignored!")  # a PING ACK is not answered
    h.send(PING, 0, 0, b"second!!")
    skipped, pong = await h.read_until(PING)
    assert pong == (PING, ACK, 0, b"\x01\x02\x03\x04\xfe\xff\x00\x7f")
    assert (await h.read()) == (PING, ACK, 0, b"second!!")
    h.close()


async def test_raw_unknown_path_gets_trailers_only(etcd):
    """grpc PROTOCOL-HTTP2.md Trailers-Only: one HEADERS with END_STREAM carrying ``:status 200``,
    ``content-type application/grpc`` and ``grpc-status 12``; the stream is then closed on both
    sides, so nothing more may be sent on it (RFC 9113 §5.1: no RST_STREAM on a closed stream)."""
    h = await H2.connect(etcd.port)
    await h.handshake()
    h.request(1, "/etcdserverpb.KV/Nope")  # END_STREAM on the HEADERS: no request message
    _, (ftype, flags, sid, headers) = await h.read_until(HEADERS)
    assert (ftype, sid) == (HEADERS, 1) and flags & END_STREAM and flags & END_HEADERS
    assert headers[b":status"] == b"200" and headers[b"content-type"] == b"application/grpc"
    assert headers[b"grpc-status"] == b"12"
    assert b"Nope" in headers[b"grpc-message"]
    h.send(PING, 0, 0, b"pingpong")
    assert (await h.read()) == (PING, ACK, 0, b"pingpong")  # not an RST_STREAM for stream 1
    h.close()


async def test_raw_unary_end_stream_in_separate_empty_data_frame(etcd, channel):
    """grpc PROTOCOL-HTTP2.md: EOS may come as an empty DATA frame with END_STREAM after the
    message (RFC 9113 §8.1 allows it); the call is answered with the response then trailers
    ``grpc-status 0``, DATA frames no bigger than the default 16,384 (RFC 9113 §4.2)."""
    kv = rpc_pb2_grpc.KVStub(channel)
    await kv.Put(R.PutRequest(key=b"k", value=b"v" * 40000))
    h = await H2.connect(etcd.port)
    await h.handshake()
    h.request(1, "/etcdserverpb.KV/Range", R.RangeRequest(key=b"k").SerializeToString(), end_with_data=False)
    h.send(DATA, END_STREAM, 1)
    _, (ftype, flags, sid, headers) = await h.read_until(HEADERS)
    assert sid == 1 and not flags & END_STREAM and headers[b":status"] == b"200"
    body = b""
    while True:
        ftype, flags, sid, payload = await h.read()
        if ftype == DATA:
            assert sid == 1 and len(payload) <= 16384
            body += payload
        elif ftype == HEADERS:
            assert flags & END_STREAM and payload == {b"grpc-status": b"0"}
            break
    assert body[0] == 0 and int.from_bytes(body[1:5], "big") == len(body) - 5
    r = R.RangeResponse.FromString(body[5:])
    assert r.kvs[0].value == b"v" * 40000
    h.close()


async def test_raw_small_stream_window_is_respected(etcd, channel):
    """Flow control (RFC 9113 §6.9): with our SETTINGS_INITIAL_WINDOW_SIZE of 100 the server sends
    at most 100 bytes of DATA on the stream until a WINDOW_UPDATE opens more."""
    kv = rpc_pb2_grpc.KVStub(channel)
    await kv.Put(R.PutRequest(key=b"k", value=b"v" * 1000))
    h = await H2.connect(etcd.port, struct.pack(">HI", 4, 100))
    await h.handshake()
    h.request(1, "/etcdserverpb.KV/Range", R.RangeRequest(key=b"k").SerializeToString())
    sent = 0
    h.send(PING, 0, 0, b"barrier!")  # answered after the server processed the request
    while True:
        ftype, flags, sid, payload = await h.read()
        if ftype == DATA:
            sent += len(payload)
        if ftype == PING:
            break
        assert not (ftype == HEADERS and flags & END_STREAM)
    assert sent == 100
    h.send(WINDOW_UPDATE, 0, 1, struct.pack(">I", 10_000))
    while True:
        ftype, flags, sid, payload = await h.read()
        if ftype == DATA:
            sent += len(payload)
        elif ftype == HEADERS and flags & END_STREAM:
            assert payload == {b"grpc-status": b"0"}
            break
    assert 1000 < sent < 1100
    h.close()


async def test_raw_goaway_when_server_stops():
    """RFC 9113 §6.8: a stopping server sends GOAWAY (NO_ERROR, last stream id = the highest it
    processed) and then closes the connection."""
    server = await serve(["http://127.0.0.1:0"], None)
    try:
        h = await H2.connect(server.port)
        await h.handshake()
        h.request(1, "/etcdserverpb.KV/Range", R.RangeRequest(key=b"k").SerializeToString())
        _, (_, _, sid, trailers) = await h.read_until(HEADERS, flags=END_STREAM)
        assert sid == 1 and trailers[b"grpc-status"] == b"0"
        await asyncio.wait_for(server.stop(), 3)
        _, (ftype, flags, sid, payload) = await h.read_until(GOAWAY)
        last, code = struct.unpack_from(">II", payload)
        assert sid == 0 and last == 1 and code == 0
        assert await asyncio.wait_for(h.reader.read(), 2) == b""  # then EOF
        h.close()
    finally:
        await server.stop()


# ---------------------------------------------------------------------------------------- 6
async def _http1(port: int, request: bytes) -> tuple[str, dict, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for i in range(0, len(request), 7):  # arrives in pieces: the server must wait for the head
        writer.write(request[i:i + 7])
        await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 2)  # Connection: close -> EOF
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    assert int(headers["content-length"]) == len(body)
    return lines[0], headers, body


async def test_http1_health_version_and_404_on_the_grpc_port(etcd):
    """etcd serves HTTP/1.1 beside gRPC on the client port (``server/etcdserver/api/etcdhttp``):
    ``/health`` -> 200 ``{"health":"true","reason":""}``, ``/version`` -> JSON with etcdserver,
    ``/metrics`` -> Prometheus text, anything else 404."""
    status, headers, body = await _http1(etcd.port, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == "HTTP/1.1 200 OK" and headers["content-type"] == "application/json"
    assert json.loads(body) == {"health": "true", "reason": ""}
    status, _, body = await _http1(etcd.port, b"GET /health?serializable=true HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == "HTTP/1.1 200 OK" and json.loads(body)["health"] == "true"
    status, _, body = await _http1(etcd.port, b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == "HTTP/1.1 200 OK" and json.loads(body)["etcdserver"].startswith("3.")
    status, _, body = await _http1(etcd.port, b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status.startswith("HTTP/1.1 404") and body == b"404 page not found\n"
    # /metrics in the Prometheus text format, with its content type (scrapers check it)
    status, headers, body = await _http1(etcd.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == "HTTP/1.1 200 OK" and headers["content-type"].startswith("text/plain; version=0.0.4")
    assert b"\netcd_server_has_leader 1\n" in body and b"etcd_debugging_mvcc_current_revision 1\n" in body
    # gRPC on the same port still works afterwards
    async with grpc.aio.insecure_channel(etcd.endpoint) as ch:
        assert (await rpc_pb2_grpc.KVStub(ch).Put(R.PutRequest(key=b"k", value=b"v"))).header.revision == 2


async def test_http1_with_curl(etcd):
    """The same ``/health`` through curl, a real HTTP/1.1 client."""
    import shutil

    if not shutil.which("curl"):
        pytest.skip("needs curl")
    proc = await asyncio.create_subprocess_exec(
        "curl", "-sS", "-m", "2", "-w", "\n%{http_code}", f"http://{etcd.endpoint}/health",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 3)
    assert proc.returncode == 0, err
    body, _, code = out.rpartition(b"\n")
    assert code == b"200" and json.loads(body) == {"health": "true", "reason": ""}


# ---------------------------------------------------------------------------------------- 7
async def test_stop_with_watch_open_and_unary_waiting(tmp_path, caplog):
    """``EtcdServer.stop(grace)`` while a Watch is open and a Put waits for its WAL group (a slow
    disk): the transport sends GOAWAY, waits at most ``grace`` for calls in flight, then closes
    the connections (grpc ``Server.stop(grace)``; RFC 9113 §6.8). The Put's client gets
    UNAVAILABLE (or CANCELLED) once the grace is over, the Watch ends, stop() returns, and
    nothing is logged with a traceback (neither by our loggers nor by asyncio's exception
    handler). The Watch ends with UNAVAILABLE ``etcdserver: server stopped`` (etcd's
    ErrGRPCStopped), so a client reconnects rather than taking it for a normal end."""
    caplog.set_level(logging.DEBUG)
    loop = asyncio.get_running_loop()
    loop_errors = []
    loop.set_exception_handler(lambda _loop, ctx: loop_errors.append(ctx))
    server = await serve(["http://127.0.0.1:0"], str(tmp_path))
    datadir = server.core.datadir
    real_write = datadir.write_sync
    entered, gate = asyncio.Event(), threading.Event()

    def slow_write(data):
        loop.call_soon_threadsafe(entered.set)
        assert gate.wait(5)
        real_write(data)

    ch = grpc.aio.insecure_channel(server.endpoint)
    stop = None
    try:
        kv = rpc_pb2_grpc.KVStub(ch)
        await kv.Put(R.PutRequest(key=b"a", value=b"1"))
        w = _Stream(rpc_pb2_grpc.WatchStub(ch).Watch)
        w.send(R.WatchRequest(create_request=R.WatchCreateRequest(key=b"a")))
        assert (await w.recv()).created
        datadir.write_sync = slow_write
        put = asyncio.ensure_future(kv.Put(R.PutRequest(key=b"a", value=b"2")))
        await asyncio.wait_for(entered.wait(), 2)
        assert not put.done()
        grace = 0.3
        t0 = time.monotonic()
        stop = asyncio.ensure_future(server.stop(grace=grace))
        err = await _rpc_error(put, timeout=2)
        assert err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
        assert grace - 0.05 <= time.monotonic() - t0 < grace + 0.5  # waited the grace, not more
        err = await _rpc_error(w.recv(timeout=2), timeout=3)  # the watch ends too
        assert (err.code(), err.details()) == (grpc.StatusCode.UNAVAILABLE, "etcdserver: server stopped")
        gate.set()  # the disk comes back: the WAL group completes, stop() flushes and snapshots
        await asyncio.wait_for(stop, 3)
    finally:
        gate.set()
        if stop is None:
            await server.stop()
        await ch.close()
        loop.set_exception_handler(None)
    assert not server.grpc.connections
    assert not loop_errors, loop_errors
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert not tracebacks and "Traceback" not in caplog.text, caplog.text


async def test_watcher_that_never_reads_stalls_nothing_and_stays_bounded(etcd, channel):
    """A slow watcher (issue 3; etcd ``mvcc/watchable_store.go`` moves a watcher whose channel is
    full to the unsynced set): a raw client opens a Watch, then neither reads nor opens its
    HTTP/2 window. 3,000 Puts of 1 KiB from another client all complete, the server holds at
    most ``max_queue`` responses plus one message beyond the window for that stream, and once
    the client opens its window it gets every event, in revision order, from history."""
    h = await H2.connect(etcd.port)
    await h.handshake()
    create = R.WatchRequest(create_request=R.WatchCreateRequest(key=b"/slow/", range_end=b"/slow0"))
    body = create.SerializeToString()
    block = h.enc.encode([(":method", "POST"), (":scheme", "http"), (":path", "/etcdserverpb.Watch/Watch"),
                          (":authority", "localhost"), ("content-type", "application/grpc"), ("te", "trailers")])
    h.send(HEADERS, END_HEADERS, 1, block)
    h.send(DATA, 0, 1, b"\x00" + struct.pack(">I", len(body)) + body)
    _, (_, _, _, payload) = await h.read_until(DATA)  # the ``created`` response: the watcher is in place
    assert R.WatchResponse.FromString(payload[5:]).created
    hub = etcd.core.hub
    kv = rpc_pb2_grpc.KVStub(channel)
    n, value = 3000, b"x" * 1024
    for start in range(0, n, 100):
        await asyncio.wait_for(asyncio.gather(*(kv.Put(R.PutRequest(key=b"/slow/%05d" % i, value=value))
                                                 for i in range(start, start + 100))), 10)
    stream = next(iter(hub.streams))
    assert len(stream.queue) <= hub.max_queue
    # beyond the window, the transport holds at most the one response being written (a catch-up
    # response batches events up to about max_request_bytes)
    held = sum(len(p) for c in etcd.grpc.connections for s in c.streams.values() for p in s.out)
    assert held <= hub.max_request_bytes + 64 * 1024
    # the client opens its windows and reads everything
    h.send(WINDOW_UPDATE, 0, 0, struct.pack(">I", 1 << 30))
    h.send(WINDOW_UPDATE, 0, 1, struct.pack(">I", 1 << 30))
    data, revs = b"", []
    while len(revs) < n:
        ftype, flags, sid, payload = await h.read(timeout=5)
        if ftype != DATA:
            continue
        data += payload
        while len(data) >= 5 and len(data) >= 5 + struct.unpack(">I", data[1:5])[0]:
            size = struct.unpack(">I", data[1:5])[0]
            resp = R.WatchResponse.FromString(data[5:5 + size])
            data = data[5 + size:]
            revs += [e.kv.mod_revision for e in resp.events]
    assert revs == list(range(2, n + 2))
    h.close()


@pytest.mark.parametrize("frame, code", [
    (_frame(WINDOW_UPDATE, 0, 0, b"\x00"), 6),            # §6.9: WINDOW_UPDATE is 4 bytes
    (_frame(PING, 0, 0, b"1234"), 6),                     # §6.7: PING is 8 bytes
    (_frame(RST_STREAM, 0, 1, b"\x00" * 8), 6),           # §6.4: RST_STREAM is 4 bytes
    (_frame(DATA, 0, 0, b"x"), 1),                        # §6.1: DATA on stream 0
    (_frame(HEADERS, END_HEADERS, 0, b"\x82"), 1),        # §6.2: HEADERS on stream 0
    (_frame(SETTINGS, 0, 3), 1),                          # §6.5: SETTINGS on a stream
    (_frame(DATA, 0x8, 1, b"\x05ab"), 1),                 # §6.1: padding longer than the frame
    (_frame(SETTINGS, 0, 0, b"\x00\x04\x00"), 6),         # §6.5: SETTINGS not a multiple of 6
    (_frame(SETTINGS, 0, 0, struct.pack(">HI", 5, 100)), 1),  # §6.5.2: MAX_FRAME_SIZE below 16384
    (_frame(CONTINUATION, END_HEADERS, 1, b"\x82"), 1),  # §6.10: CONTINUATION without HEADERS
    (_frame(HEADERS, END_HEADERS, 1, b"\xff\xff\xff\x7f"), 9),  # RFC 7541: a bad HPACK block
], ids=["WINDOW_UPDATE not 4 bytes", "PING not 8 bytes", "RST_STREAM not 4 bytes", "DATA on stream 0",
        "HEADERS on stream 0", "SETTINGS on a stream", "padding longer than the frame",
        "SETTINGS not a multiple of 6", "MAX_FRAME_SIZE below 16384", "CONTINUATION without HEADERS",
        "a bad HPACK block"])
async def test_malformed_frames_get_goaway_and_the_server_goes_on(etcd, channel, frame, code, caplog):
    """A malformed frame ends that connection with GOAWAY and the RFC 9113 error code
    (PROTOCOL_ERROR 1, FRAME_SIZE_ERROR 6, COMPRESSION_ERROR 9), logged as one WARNING line with
    no traceback; other clients are served as before."""
    h = await H2.connect(etcd.port)
    await h.handshake()
    h.writer.write(frame)
    _, goaway = await h.read_until(GOAWAY)
    assert struct.unpack(">I", goaway[3][4:8])[0] == code
    h.close()
    kv = rpc_pb2_grpc.KVStub(channel)
    assert (await kv.Put(R.PutRequest(key=b"k", value=b"v"))).header.revision >= 2
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


# ---------------------------------------------------------------------------------------- 8
def _events(caplog, name: str) -> list[logging.LogRecord]:
    """The records of structured event ``name`` (controlplane/log.py: message = name, fields aside)."""
    return [r for r in caplog.records if r.getMessage() == name]


async def _closed(reader: asyncio.StreamReader, timeout: float = 5.0) -> bytes:
    """Everything the server sends until it closes the connection (EOF or reset)."""
    got = b""
    try:
        while chunk := await asyncio.wait_for(reader.read(65536), timeout):
            got += chunk
    except ConnectionResetError:
        pass
    return got


@pytest.fixture
async def short_deadline():
    """A server whose new connections get 1.5 s for their handshake (grpc-go's default: 120 s)."""
    server = await serve(["http://127.0.0.1:0"], None, handshake_timeout=1.5)
    yield server
    await server.stop()


@pytest.mark.parametrize("sent,protocol", [
    (b"GET /health HTTP/1.1\r\nHost: x\r\n", "http/1.1"),  # a slowloris: the head never ends
    (b"PRI * HTTP/2.0\r\n", "unknown"),                     # half an HTTP/2 preface
    (PREFACE, "h2"),                                        # the preface, but never its SETTINGS
    (b"", "unknown"),                                       # nothing at all
], ids=["an HTTP/1.1 head that never ends", "half an HTTP/2 preface", "the preface without SETTINGS",
        "nothing at all"])
async def test_incomplete_handshake_is_closed_at_the_deadline(short_deadline, caplog, sent, protocol):
    """A connection that has not sent a whole HTTP/1.1 request head, or the HTTP/2 preface and its
    first SETTINGS frame (RFC 9113 §3.4), when the handshake timeout passes is closed without an
    answer beyond the server's preface (grpc-go's server ``ConnectionTimeout``), with one WARNING
    line naming the peer, the protocol seen and the bytes received."""
    caplog.set_level(logging.INFO)
    reader, writer = await asyncio.open_connection("127.0.0.1", short_deadline.port)
    writer.write(sent)
    got = await _closed(reader)
    if protocol == "h2":  # only the server's own preface: SETTINGS and the window it opens
        assert got[3] == SETTINGS and got[-9 - 4 + 3] == WINDOW_UPDATE
    else:
        assert got == b""
    writer.close()
    (record,) = _events(caplog, "etcd.connection.timeout")
    assert record.levelno == logging.WARNING
    assert record.fields["protocol"] == protocol and record.fields["received"] == len(sent)
    assert not short_deadline.grpc.connections


async def test_clients_past_the_handshake_deadline_are_unaffected(short_deadline, caplog):
    """The deadline covers the handshake only: a gRPC client's Watch opened before a slow
    connection is dropped still delivers events after it, unary calls on the same channel work,
    and a complete HTTP/1.1 ``GET /health`` is answered."""
    caplog.set_level(logging.INFO)
    async with grpc.aio.insecure_channel(short_deadline.endpoint) as ch:
        kv = rpc_pb2_grpc.KVStub(ch)
        w = _Stream(rpc_pb2_grpc.WatchStub(ch).Watch)
        w.send(R.WatchRequest(create_request=R.WatchCreateRequest(key=b"k")))
        assert (await w.recv()).created
        reader, writer = await asyncio.open_connection("127.0.0.1", short_deadline.port)
        writer.write(b"GET /health HTTP/1.1\r\n")
        assert await _closed(reader) == b""  # the slow one is gone: the deadline has passed
        writer.close()
        assert len(_events(caplog, "etcd.connection.timeout")) == 1
        rev = (await kv.Put(R.PutRequest(key=b"k", value=b"v"))).header.revision
        ev = await w.recv()
        assert [(e.kv.key, e.kv.mod_revision) for e in ev.events] == [(b"k", rev)]
        w.end()
    status, _, body = await _http1(short_deadline.port, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == "HTTP/1.1 200 OK" and json.loads(body)["health"] == "true"
    assert len(_events(caplog, "etcd.connection.timeout")) == 1


async def test_etcdctl_watch_outlives_the_handshake_deadline(short_deadline):
    """The real etcdctl: ``watch`` prints a Put made after another connection was dropped at the
    deadline (so after the watch's own connection passed it)."""
    import os
    import shutil

    if not shutil.which("etcdctl"):
        pytest.skip("needs etcdctl")
    proc = await asyncio.create_subprocess_exec(
        "etcdctl", f"--endpoints={short_deadline.endpoint}", "watch", "k",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env={**os.environ, "ETCDCTL_API": "3"})
    try:
        hub = short_deadline.core.hub
        await _until(lambda: any(s.watchers for s in hub.streams), timeout=10)  # etcdctl's watch is created
        reader, writer = await asyncio.open_connection("127.0.0.1", short_deadline.port)
        assert await _closed(reader) == b""
        writer.close()
        async with grpc.aio.insecure_channel(short_deadline.endpoint) as ch:
            await rpc_pb2_grpc.KVStub(ch).Put(R.PutRequest(key=b"k", value=b"after"))
        lines = [await asyncio.wait_for(proc.stdout.readline(), 5) for _ in range(3)]
        assert lines == [b"PUT\n", b"k\n", b"after\n"]
    finally:
        proc.kill()
        await proc.wait()


async def test_keepalive_ping_answered_keeps_the_connection_unanswered_closes_it(caplog):
    """grpc-go's server keepalive (etcd ``--grpc-keepalive-interval`` / ``--grpc-keepalive-timeout``):
    after the interval without a frame from the client the server sends a PING; a client that
    answers keeps its connection (and is pinged again), one that stays silent for the timeout
    after it is closed, with one WARNING line."""
    caplog.set_level(logging.INFO)
    server = await serve(["http://127.0.0.1:0"], None, grpc_keepalive_interval=0.3, grpc_keepalive_timeout=1.0)
    try:
        h = await H2.connect(server.port)
        await h.handshake()
        for _ in range(2):
            _, ping = await h.read_until(PING, timeout=5)
            assert ping[:3] == (PING, 0, 0) and len(ping[3]) == 8
            h.send(PING, ACK, 0, ping[3])
        assert not _events(caplog, "etcd.connection.keepalive_timeout")
        _, ping = await h.read_until(PING, timeout=5)  # not answered this time
        assert await _closed(h.reader) == b""
        h.close()
        (record,) = _events(caplog, "etcd.connection.keepalive_timeout")
        assert record.levelno == logging.WARNING
    finally:
        await server.stop()


async def _ping_flood(port: int) -> list:
    """One Range, then 4 PINGs in a row: the PING ACKs and the GOAWAY (code, debug data) seen
    until the server closes the connection."""
    h = await H2.connect(port)
    await h.handshake()
    h.request(1, "/etcdserverpb.KV/Range", R.RangeRequest(key=b"k").SerializeToString())
    await h.read_until(HEADERS, flags=END_STREAM)
    for i in range(4):
        h.send(PING, 0, 0, b"%8d" % i)
    seen = []
    try:
        while True:
            ftype, flags, _, payload = await h.read(timeout=5)
            if ftype == PING and flags & ACK:
                seen.append(("ack", payload))
            elif ftype == GOAWAY:
                seen.append(("goaway", struct.unpack(">I", payload[4:8])[0], payload[8:]))
    except (asyncio.IncompleteReadError, ConnectionResetError):
        pass
    h.close()
    return seen


async def test_too_many_pings_get_goaway_enhance_your_calm(etcd, channel):
    """grpc-go's keepalive enforcement (etcd ``--grpc-keepalive-min-time`` 5s, PermitWithoutStream
    false): every PING is answered, the first after a response resets the strikes, each later one
    within the limit (2 h with no stream open) is a strike, and the third strike ends the
    connection with GOAWAY ENHANCE_YOUR_CALM (0xb) and debug data ``too_many_pings``. Other
    clients are served as before."""
    seen = await _ping_flood(etcd.port)
    assert seen == [("ack", b"%8d" % i) for i in range(4)] + [("goaway", 0xB, b"too_many_pings")]
    kv = rpc_pb2_grpc.KVStub(channel)
    assert (await kv.Put(R.PutRequest(key=b"k", value=b"v"))).header.revision >= 2


@pytest.mark.realetcd
async def test_ping_flood_answered_as_by_a_real_etcd(etcd, tmp_path):
    """The same ping flood against /usr/bin/etcd (grpc-go's server) gets the same frames."""
    import os

    from tests.support.etcd import start_real

    if not os.path.exists("/usr/bin/etcd"):
        pytest.skip("/usr/bin/etcd missing")
    real = await start_real(str(tmp_path / "real"))
    try:
        theirs = await _ping_flood(int(real.endpoint.rsplit(":", 1)[1]))
    finally:
        await real.stop()
    assert await _ping_flood(etcd.port) == theirs
