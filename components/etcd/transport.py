"""gRPC over HTTP/2 (h2c), served on asyncio: the embedded etcd's client transport.

Why our own: grpc.aio's server costs ~9-10 thread switches per unary call (its completion queue
runs in a poller thread), which capped Put throughput at ~40-45 % of a real etcd on the same
machine (issue 3, ``bench/etcd.py``). This transport runs inside the event loop: one
``data_received`` parses every frame a read brings, a unary write is applied synchronously and
answered when its WAL group is durable, and the answers of one loop iteration leave in one
``write``. HPACK (header compression) is the ``hpack`` library's; the framing is ours.

Wire behaviour follows the specs: RFC 9113 (HTTP/2 framing, SETTINGS, flow control, PING,
RST_STREAM, GOAWAY), RFC 7541 (HPACK) and grpc's PROTOCOL-HTTP2.md (length-prefixed messages,
``grpc-status`` / ``grpc-message`` trailers, Trailers-Only responses). HTTP/1.1 requests on the
same port get etcd's ``/health`` and ``/version`` (etcd ``etcdserver/api/etcdhttp``), as etcd
serves gRPC and HTTP on one listener.

Handlers are the ones grpc's generated ``add_*Servicer_to_server`` register
(``grpc.RpcMethodHandler``): ``async def m(request, context)`` for unary responses, and
``async def m(request_or_iterator, context)`` using ``await context.write(msg)`` for streaming
responses. A unary handler may carry ``call_sync(request) -> (response, awaitable | None)``: it
then runs without a Task and its answer is sent once the awaitable (the WAL group) completes.
Errors: a handler raises :class:`RpcAbort` (``await context.abort(code, message)``) or any
exception with ``code`` (a ``grpc.StatusCode``) and ``message`` attributes.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
import struct
from collections import deque
from typing import Any, Callable
from urllib.parse import quote

import grpc
from hpack import Decoder
from hpack.exceptions import HPACKError
from hpack.hpack import encode_integer

from controlplane import log as cplog
from controlplane import pki

log = logging.getLogger("etcd")

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20
# SETTINGS identifiers (RFC 9113 §6.5.2)
S_HEADER_TABLE_SIZE, S_ENABLE_PUSH, S_MAX_CONCURRENT_STREAMS, S_INITIAL_WINDOW_SIZE, S_MAX_FRAME_SIZE, S_MAX_HEADER_LIST_SIZE = range(1, 7)
# error codes (RFC 9113 §7)
NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR, FRAME_SIZE_ERROR, CANCEL, COMPRESSION_ERROR = 0, 1, 2, 3, 6, 8, 9
ENHANCE_YOUR_CALM = 0xB
MAX_WINDOW = 2 ** 31 - 1
#: our receive windows: as large as allowed; refilled once half is used
RECV_WINDOW = MAX_WINDOW
OUR_MAX_FRAME = 1 << 20
MAX_HEADER_BLOCK = 1 << 20
TEXT = "text/plain; charset=utf-8"
#: grpc-go's server ConnectionTimeout default: the time a new connection gets for its handshake
HANDSHAKE_TIMEOUT = 120.0
#: etcd's --grpc-keepalive-min-time, --grpc-keepalive-interval, --grpc-keepalive-timeout defaults
KEEPALIVE_MIN_TIME, KEEPALIVE_INTERVAL, KEEPALIVE_TIMEOUT = 5.0, 7200.0, 20.0
#: grpc-go: pings from a client with no stream open are a strike unless 2 h apart; more than
#: 2 strikes end the connection with GOAWAY ENHANCE_YOUR_CALM "too_many_pings"
IDLE_PING_MIN_TIME, MAX_PING_STRIKES = 7200.0, 2
KEEPALIVE_PING = b"\x00" * 8

_FRAME = struct.Struct(">I")  # 24-bit length is read as 4 bytes with the type in the low byte


def _frame(ftype: int, flags: int, stream_id: int, payload: bytes = b"") -> bytes:
    n = len(payload)
    return bytes((n >> 16 & 0xFF, n >> 8 & 0xFF, n & 0xFF, ftype, flags)) + stream_id.to_bytes(4, "big") + payload


def _literal(name: bytes, value: bytes) -> bytes:
    """HPACK literal header field without indexing, new name (RFC 7541 §6.2.2): no table state."""
    return b"\x00" + encode_integer(len(name), 7) + name + encode_integer(len(value), 7) + value


#: ``:status: 200`` (static index 8) + ``content-type: application/grpc`` (name index 31, not indexed)
RESPONSE_HEADERS = b"\x88" + b"\x0f\x10" + encode_integer(16, 7) + b"application/grpc"
OK_TRAILERS = _literal(b"grpc-status", b"0")


def _trailers(code: grpc.StatusCode, message: str) -> bytes:
    block = _literal(b"grpc-status", str(code.value[0]).encode())
    if message:  # percent-encoded as PROTOCOL-HTTP2.md asks
        block += _literal(b"grpc-message", quote(message, safe=" !\"#$&'()*+,-./:;<=>?@[\\]^_`{|}~").encode())
    return block


class RpcAbort(Exception):
    """Raised by :meth:`Context.abort`: ends the call with ``code`` and ``message``."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _Stream:
    __slots__ = ("id", "method", "buf", "request", "window", "out", "trailers", "headers_sent", "task", "requests",
                 "drained", "recv_used", "closed", "ended")

    def __init__(self, sid: int, window: int) -> None:
        self.id = sid
        self.method: _Method | None = None
        self.buf = bytearray()
        self.request = None
        self.window = window          # what we may still send on this stream
        self.out: deque = deque()     # DATA payload waiting for flow-control window
        self.trailers: bytes | None = None
        self.headers_sent = False
        self.task: asyncio.Task | None = None
        self.requests: _Requests | None = None
        self.drained: asyncio.Future | None = None
        self.recv_used = 0
        self.closed = False           # we sent END_STREAM (or reset)
        self.ended = False            # the peer sent END_STREAM


class _Requests:
    """The request iterator of a client-streaming call: messages as they arrive, ends at END_STREAM."""

    def __init__(self) -> None:
        self.queue: deque = deque()
        self.ended = False
        self.waiter: asyncio.Future | None = None

    def push(self, msg) -> None:
        self.queue.append(msg)
        self._wake()

    def end(self) -> None:
        self.ended = True
        self._wake()

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def __aiter__(self):
        return self

    async def __anext__(self):
        while not self.queue:
            if self.ended:
                raise StopAsyncIteration
            self.waiter = asyncio.get_running_loop().create_future()
            await self.waiter
        return self.queue.popleft()


class Context:
    """What a handler gets as ``context`` (the subset of ``grpc.aio.ServicerContext`` used here)."""

    __slots__ = ("_conn", "_stream")

    def __init__(self, conn: "_Connection", stream: _Stream) -> None:
        self._conn = conn
        self._stream = stream

    async def abort(self, code: grpc.StatusCode, details: str = "") -> None:
        """End the call with ``code`` / ``details`` (grpc-status / grpc-message). Always raises RpcAbort."""
        raise RpcAbort(code, details)

    async def write(self, message) -> None:
        """Send one response message; returns once it is handed to the socket (flow control and
        the socket's write buffer permitting). Raises CancelledError if the stream is gone."""
        conn, s = self._conn, self._stream
        if s.closed:
            raise asyncio.CancelledError()
        conn.send_message(s, message)
        if s.out or conn.paused:
            s.drained = asyncio.get_running_loop().create_future()
            conn.drain_waiters.add(s)
            await s.drained

    def peer(self) -> str:
        """The client as grpc names it: ``ipv4:HOST:PORT``."""
        return self._conn.peer

    def invocation_metadata(self):
        """Request metadata: none is kept (the etcd services read none; auth is never enabled)."""
        return ()


class _Connection(asyncio.Protocol):
    """One client connection: HTTP/2 framing, flow control, streams, and the calls they carry."""

    def __init__(self, server: "GrpcServer") -> None:
        self.server = server
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.peer = ""
        self.buf = bytearray()
        self.preface = False
        self.http1 = False
        self.decoder = Decoder()
        self.decoder.max_header_list_size = MAX_HEADER_BLOCK
        self.streams: dict[int, _Stream] = {}
        self.last_stream = 0
        self.peer_window = 65535        # initial stream send window (peer's SETTINGS_INITIAL_WINDOW_SIZE)
        self.peer_max_frame = 16384
        self.send_window = 65535        # connection-level send window
        self.recv_used = 0              # connection-level bytes received since our last WINDOW_UPDATE
        self.blocked: dict[_Stream, None] = {}
        self.drain_waiters: set[_Stream] = set()
        self.paused = False
        self.wbuf: list[bytes] = []
        self.flush_pending = False
        self.header_block: tuple[int, int, bytearray] | None = None  # (stream id, flags, fragments)
        self.handshake_timer: asyncio.TimerHandle | None = None  # until the preface + SETTINGS / HTTP/1.1 head
        self.keepalive_timer: asyncio.TimerHandle | None = None
        self.last_read = 0.0            # loop time of the last bytes received
        self.received = 0               # bytes received (counted until the handshake is complete)
        self.ping_sent_at: float | None = None  # our keepalive PING awaiting activity
        self.last_ping: float | None = None     # the client's last PING (enforcement policy)
        self.ping_strikes = 0
        self.reset_strikes = False      # we sent HEADERS or DATA since the client's last PING

    # ------------------------------------------------------------ transport callbacks
    def connection_made(self, transport) -> None:
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.peer = f"ipv4:{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self.server.connections.add(self)
        self.last_read = self.loop.time()
        if self.server.handshake_timeout > 0:
            self.handshake_timer = self.loop.call_later(self.server.handshake_timeout, self._handshake_expired)

    def connection_lost(self, exc) -> None:
        self.server.connections.discard(self)
        for timer in (self.handshake_timer, self.keepalive_timer):
            if timer is not None:
                timer.cancel()
        self.handshake_timer = self.keepalive_timer = None
        for s in list(self.streams.values()):
            self._abandon(s)
        self.streams.clear()
        self._release_drain()

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._release_drain()

    def data_received(self, data: bytes) -> None:
        self.last_read = self.loop.time()
        if self.handshake_timer is not None:
            self.received += len(data)
        buf = self.buf
        buf += data
        if not self.preface:
            if self.http1:
                return self._http1(buf)
            if len(buf) < len(PREFACE):
                if not PREFACE.startswith(bytes(buf)):
                    self.http1 = True
                    return self._http1(buf)
                return
            if not buf.startswith(PREFACE):
                self.http1 = True
                return self._http1(buf)
            del buf[:len(PREFACE)]
            self.preface = True
            self._start()
        pos, n = 0, len(buf)
        try:
            while n - pos >= 9:
                length = buf[pos] << 16 | buf[pos + 1] << 8 | buf[pos + 2]
                if length > OUR_MAX_FRAME:
                    return self._goaway(FRAME_SIZE_ERROR, "frame too large")
                end = pos + 9 + length
                if end > n:
                    break
                ftype, flags = buf[pos + 3], buf[pos + 4]
                sid = _FRAME.unpack_from(buf, pos + 5)[0] & 0x7FFFFFFF
                payload = bytes(buf[pos + 9:end])
                pos = end
                if self.header_block is not None and ftype != CONTINUATION:
                    return self._goaway(PROTOCOL_ERROR, "expected CONTINUATION")
                if ftype in _FIXED_SIZE and length != _FIXED_SIZE[ftype]:
                    raise _ConnectionError(FRAME_SIZE_ERROR, f"frame type {ftype} of {length} bytes")
                if (sid == 0) != (ftype in _CONNECTION_FRAMES) and ftype <= CONTINUATION and ftype != WINDOW_UPDATE:
                    raise _ConnectionError(PROTOCOL_ERROR, f"frame type {ftype} on stream {sid}")
                if ftype == DATA:
                    self._on_data(sid, flags, payload)
                elif ftype == HEADERS:
                    self._on_headers(sid, flags, payload)
                elif ftype == CONTINUATION:
                    self._on_continuation(sid, flags, payload)
                elif ftype == WINDOW_UPDATE:
                    self._on_window_update(sid, payload)
                elif ftype == SETTINGS:
                    self._on_settings(flags, payload)
                elif ftype == PING:
                    if not flags & ACK:
                        self._write(_frame(PING, ACK, 0, payload))
                        if self._ping_policy_violated():
                            return self._goaway(ENHANCE_YOUR_CALM, "too_many_pings")
                elif ftype == RST_STREAM:
                    s = self.streams.pop(sid, None)
                    if s is not None:
                        self._abandon(s)
                # GOAWAY from the client: it opens no new stream; those in flight finish as usual
                # PRIORITY, PUSH_PROMISE (never sent to a server) and unknown types are ignored
        except _ConnectionError as e:
            return self._goaway(e.code, str(e))
        except (struct.error, IndexError, ValueError) as e:  # a malformed frame: end the connection
            return self._goaway(PROTOCOL_ERROR, f"malformed frame: {e}")
        except Exception as e:  # noqa: BLE001 - a bug of ours: this connection ends, the server goes on
            cplog.event(log, "etcd.http2.internal", logging.ERROR, peer=self.peer, error=f"{type(e).__name__}: {e}")
            return self._goaway(INTERNAL_ERROR, "internal error")
        finally:
            if pos:
                del buf[:pos]

    # ------------------------------------------------------------ frames in
    def _start(self) -> None:
        settings = struct.pack(">HIHIHI", S_ENABLE_PUSH, 0, S_INITIAL_WINDOW_SIZE, RECV_WINDOW,
                               S_MAX_FRAME_SIZE, OUR_MAX_FRAME)
        self._write(_frame(SETTINGS, 0, 0, settings))
        self._write(_frame(WINDOW_UPDATE, 0, 0, (RECV_WINDOW - 65535).to_bytes(4, "big")))

    def _on_settings(self, flags: int, payload: bytes) -> None:
        if self.handshake_timer is not None:  # the client's preface is complete (RFC 9113 §3.4)
            self.handshake_timer.cancel()
            self.handshake_timer = None
            if self.server.keepalive_interval > 0 and self.server.keepalive_timeout > 0:
                self.keepalive_timer = self.loop.call_later(self.server.keepalive_interval, self._keepalive_check)
        if flags & ACK:
            return
        if len(payload) % 6:
            raise _ConnectionError(FRAME_SIZE_ERROR, "bad SETTINGS length")
        for off in range(0, len(payload), 6):
            ident, value = struct.unpack_from(">HI", payload, off)
            if ident == S_INITIAL_WINDOW_SIZE:
                if value > MAX_WINDOW:
                    raise _ConnectionError(FLOW_CONTROL_ERROR, "window too large")
                delta, self.peer_window = value - self.peer_window, value
                for s in self.streams.values():
                    s.window += delta
            elif ident == S_MAX_FRAME_SIZE:
                if not 16384 <= value <= 2 ** 24 - 1:
                    raise _ConnectionError(PROTOCOL_ERROR, f"SETTINGS_MAX_FRAME_SIZE {value}")
                self.peer_max_frame = value
            elif ident == S_HEADER_TABLE_SIZE:
                pass  # we never index response headers, so the peer's table size doesn't matter
        self._write(_frame(SETTINGS, ACK, 0))
        self._pump_blocked()

    def _on_window_update(self, sid: int, payload: bytes) -> None:
        inc = _FRAME.unpack(payload)[0] & 0x7FFFFFFF
        if sid == 0:
            self.send_window += inc
            self._pump_blocked()
            return
        s = self.streams.get(sid)
        if s is not None:
            s.window += inc
            self._pump(s)

    def _on_headers(self, sid: int, flags: int, payload: bytes) -> None:
        payload = _unpad(flags, payload)
        if flags & PRIORITY_FLAG:
            payload = payload[5:]
        if not flags & END_HEADERS:
            self.header_block = (sid, flags, bytearray(payload))
            return
        self._headers_complete(sid, flags, payload)

    def _on_continuation(self, sid: int, flags: int, payload: bytes) -> None:
        if self.header_block is None or self.header_block[0] != sid:
            raise _ConnectionError(PROTOCOL_ERROR, "unexpected CONTINUATION")
        block = self.header_block[2]
        block += payload
        if len(block) > MAX_HEADER_BLOCK:
            raise _ConnectionError(PROTOCOL_ERROR, "header block too large")
        if flags & END_HEADERS:
            first_flags = self.header_block[1]
            self.header_block = None
            self._headers_complete(sid, first_flags, bytes(block))

    def _headers_complete(self, sid: int, flags: int, block: bytes) -> None:
        try:
            headers = self.decoder.decode(block, raw=True)
        except HPACKError as e:
            raise _ConnectionError(COMPRESSION_ERROR, f"HPACK: {e}") from None
        s = self.streams.get(sid)
        if s is not None:  # trailers from the client: end of its messages
            if flags & END_STREAM:
                self._end_of_requests(s)
            return
        if not sid & 1:
            raise _ConnectionError(PROTOCOL_ERROR, f"bad stream id {sid}")
        if sid <= self.last_stream:
            return  # trailers for a stream we already closed: nothing to do
        self.last_stream = sid
        s = _Stream(sid, self.peer_window)
        self.streams[sid] = s
        path = None
        for name, value in headers:
            if name == b":path":
                path = value
                break
        method = self.server.methods.get(path) if path is not None else None
        if self.server.stopping:
            s.ended = bool(flags & END_STREAM)  # then no RST_STREAM after our END_STREAM (RFC 9113 §5.1)
            return self._finish(s, grpc.StatusCode.UNAVAILABLE, "server is shutting down")
        if method is None:
            s.ended = bool(flags & END_STREAM)
            return self._finish(s, grpc.StatusCode.UNIMPLEMENTED, f"unknown method {path!r}")
        s.method = method
        if method.request_streaming:
            s.requests = _Requests()
            self._spawn(s, method.handler(s.requests, Context(self, s)))
        if flags & END_STREAM:
            self._end_of_requests(s)

    def _on_data(self, sid: int, flags: int, payload: bytes) -> None:
        size = len(payload)
        payload = _unpad(flags, payload)
        self.recv_used += size
        if self.recv_used > RECV_WINDOW // 2:
            self._write(_frame(WINDOW_UPDATE, 0, 0, self.recv_used.to_bytes(4, "big")))
            self.recv_used = 0
        s = self.streams.get(sid)
        if s is None or s.ended:
            return  # a stream we already answered or reset: its data only counts for the window
        s.recv_used += size
        if s.recv_used > RECV_WINDOW // 2:
            self._write(_frame(WINDOW_UPDATE, 0, sid, s.recv_used.to_bytes(4, "big")))
            s.recv_used = 0
        if s.request is not None:  # a second message on a unary call: ignored, the first one is answered
            if flags & END_STREAM:  # EOS may come in an empty DATA frame (PROTOCOL-HTTP2.md)
                self._end_of_requests(s)
            return
        buf = s.buf
        buf += payload
        limit = self.server.max_receive
        while len(buf) >= 5:
            size = _FRAME.unpack_from(buf, 1)[0]
            if size > limit:
                s.ended = True
                return self._finish(s, grpc.StatusCode.RESOURCE_EXHAUSTED,
                                    f"grpc: received message larger than max ({size} vs. {limit})")
            if len(buf) < 5 + size:
                break
            if buf[0]:
                s.ended = True
                return self._finish(s, grpc.StatusCode.UNIMPLEMENTED,
                                    "grpc: compressed request messages are not supported")
            raw = bytes(buf[5:5 + size])
            del buf[:5 + size]
            try:
                assert s.method is not None  # set with the stream's HEADERS
                msg = s.method.request_deserializer(raw)
            except Exception as e:  # noqa: BLE001 - a malformed message ends this call only
                s.ended = True
                return self._finish(s, grpc.StatusCode.INTERNAL, f"grpc: error unmarshalling request: {e}")
            if s.requests is not None:
                s.requests.push(msg)
            else:
                s.request = msg  # the unary request, run at END_STREAM
                break
        if flags & END_STREAM:
            self._end_of_requests(s)

    def _end_of_requests(self, s: _Stream) -> None:
        if s.ended:
            return
        s.ended = True
        if s.requests is not None:
            s.requests.end()
            return
        request = s.request
        if request is None:
            return self._finish(s, grpc.StatusCode.INTERNAL,
                                "grpc: truncated request message" if s.buf else
                                "grpc: the client sent no request message")
        method = s.method
        if method.call_sync is not None:
            try:
                response, pending = method.call_sync(request)
            except Exception as e:  # noqa: BLE001 - becomes the call's status
                return self._fail(s, e)
            if pending is None:
                return self._respond(s, response)
            s.task = pending  # cancelled with the stream; awaited by stop()
            pending.add_done_callback(lambda f: self._respond_after(s, response, f))
            return
        self._spawn(s, method.handler(request, Context(self, s)))

    # ------------------------------------------------------------ calls
    def _spawn(self, s: _Stream, coro) -> None:
        s.task = self.loop.create_task(coro)
        s.task.add_done_callback(lambda t: self._call_done(s, t))

    def _call_done(self, s: _Stream, task: asyncio.Task) -> None:
        if task.cancelled():
            if not s.closed and self.streams.get(s.id) is s:
                self._finish(s, grpc.StatusCode.CANCELLED, "the call was cancelled")
            return
        e = task.exception()
        if e is not None:
            return self._fail(s, e)
        result = task.result()
        assert s.method is not None  # a task runs only for a stream with a method
        if s.method.response_streaming:
            self._finish(s, grpc.StatusCode.OK, "")
        else:
            self._respond(s, result)

    def _respond_after(self, s: _Stream, response, fut: asyncio.Future) -> None:
        if fut.cancelled():
            return self._finish(s, grpc.StatusCode.CANCELLED, "the call was cancelled")
        e = fut.exception()
        if e is not None:
            return self._fail(s, e)
        self._respond(s, response)

    def _respond(self, s: _Stream, response) -> None:
        if s.closed or self.streams.get(s.id) is not s:
            return
        if response is None:
            return self._finish(s, grpc.StatusCode.INTERNAL, "grpc: the handler returned no response")
        self.send_message(s, response)
        self._finish(s, grpc.StatusCode.OK, "")

    def _fail(self, s: _Stream, e: BaseException) -> None:
        code, message = getattr(e, "code", None), getattr(e, "message", None)
        if not isinstance(code, grpc.StatusCode) or message is None:
            cplog.event(log, "etcd.rpc.error", logging.ERROR, error=f"{type(e).__name__}: {e}")
            code, message = grpc.StatusCode.UNKNOWN, f"Unexpected {type(e).__name__}: {e}"
        self._finish(s, code, message)

    def _abandon(self, s: _Stream) -> None:
        """The peer reset the stream or went away: stop its call, release its writer."""
        s.closed = True
        self.blocked.pop(s, None)
        if s.task is not None and not s.task.done():
            s.task.cancel()
        if s.requests is not None:
            s.requests.end()
        if s.drained is not None and not s.drained.done():
            s.drained.cancel()

    # ------------------------------------------------------------ frames out
    def send_message(self, s: _Stream, message) -> None:
        """Queue one response message on ``s`` (response HEADERS first if not sent yet) and send
        as much as the flow-control windows allow (RFC 9113 §6.9); the rest waits in ``s.out``."""
        data = s.method.response_serializer(message) if s.method else message
        if not s.headers_sent:
            s.headers_sent = True
            self._write(_frame(HEADERS, END_HEADERS, s.id, RESPONSE_HEADERS))
        self.reset_strikes = True
        s.out.append(b"\x00" + len(data).to_bytes(4, "big") + data)
        self._pump(s)

    def _finish(self, s: _Stream, code: grpc.StatusCode, message: str) -> None:
        """End the call with grpc-status ``code`` (after any queued DATA) and close our side."""
        if s.closed or s.trailers is not None:
            return
        if s.method is not None and self.server.on_handled is not None:
            self.server.on_handled(s.method.labels, code)
        block = OK_TRAILERS if code is grpc.StatusCode.OK else _trailers(code, message)
        if not s.headers_sent:  # Trailers-Only
            s.headers_sent = True
            block = RESPONSE_HEADERS + block
        s.trailers = block
        self.reset_strikes = True
        self._pump(s)

    def _pump(self, s: _Stream) -> None:
        out = s.out
        while out:
            room = min(s.window, self.send_window, self.peer_max_frame)
            if room <= 0:
                self.blocked[s] = None
                return
            piece = out[0]
            if len(piece) <= room:
                out.popleft()
            else:
                out[0] = piece[room:]
                piece = piece[:room]
            s.window -= len(piece)
            self.send_window -= len(piece)
            self._write(_frame(DATA, 0, s.id, piece))
        self.blocked.pop(s, None)
        if s.trailers is not None and not s.closed:
            s.closed = True
            self._write(_frame(HEADERS, END_HEADERS | END_STREAM, s.id, s.trailers))
            if s.ended:
                self.streams.pop(s.id, None)
            else:  # the client is still sending: tell it to stop (grpc-go does the same)
                self.streams.pop(s.id, None)
                self._write(_frame(RST_STREAM, 0, s.id, NO_ERROR.to_bytes(4, "big")))
            if s.task is not None and not s.task.done():
                s.task.cancel()
        if s.drained is not None and not self.paused:
            self._release(s)

    def _pump_blocked(self) -> None:
        for s in list(self.blocked):
            if self.send_window <= 0:
                return
            self._pump(s)

    def _release(self, s: _Stream) -> None:
        if s.drained is not None and not s.out:
            if not s.drained.done():
                s.drained.set_result(None)
            s.drained = None
            self.drain_waiters.discard(s)

    def _release_drain(self) -> None:
        for s in list(self.drain_waiters):
            if s.closed and s.drained is not None and not s.drained.done():
                s.drained.cancel()
                self.drain_waiters.discard(s)
            elif not self.paused:
                self._release(s)

    def _write(self, data: bytes) -> None:
        self.wbuf.append(data)
        if not self.flush_pending:
            self.flush_pending = True
            self.loop.call_soon(self._flush)

    def _flush(self) -> None:
        self.flush_pending = False
        if self.wbuf and self.transport is not None and not self.transport.is_closing():
            data = b"".join(self.wbuf)
            self.wbuf.clear()
            self.transport.write(data)
        else:
            self.wbuf.clear()

    def _goaway(self, code: int, reason: str) -> None:
        if code != NO_ERROR:
            cplog.event(log, "etcd.http2.error", logging.WARNING, peer=self.peer, code=code, reason=reason)
        self._write(_frame(GOAWAY, 0, 0, struct.pack(">II", self.last_stream, code) + reason.encode()))
        if code != NO_ERROR:
            self._flush()
            assert self.transport is not None  # frames arrive only after connection_made
            self.transport.close()

    # ------------------------------------------------------------ deadlines and keepalive
    def _handshake_expired(self) -> None:
        """No complete HTTP/2 preface + SETTINGS, nor a complete HTTP/1.1 request head, within
        the handshake timeout (grpc-go's ConnectionTimeout): drop the connection."""
        self.handshake_timer = None
        protocol = "http/1.1" if self.http1 else "h2" if self.preface else "unknown"
        cplog.event(log, "etcd.connection.timeout", logging.WARNING, peer=self.peer, protocol=protocol,
                    received=self.received, timeout=f"{self.server.handshake_timeout:g}s")
        self._abort()

    def _keepalive_check(self) -> None:
        """grpc-go's server keepalive (etcd's --grpc-keepalive-interval / -timeout): after
        ``interval`` without bytes from the client send a PING; no bytes within ``timeout``
        after it close the connection."""
        self.keepalive_timer = None
        if self.transport is None or self.transport.is_closing():
            return
        now, srv = self.loop.time(), self.server
        if self.ping_sent_at is not None:
            if self.last_read <= self.ping_sent_at:
                cplog.event(log, "etcd.connection.keepalive_timeout", logging.WARNING, peer=self.peer,
                            timeout=f"{srv.keepalive_timeout:g}s")
                return self._abort()
            self.ping_sent_at = None
        idle = now - self.last_read
        if idle >= srv.keepalive_interval:
            self.ping_sent_at = now
            self._write(_frame(PING, 0, 0, KEEPALIVE_PING))
            delay = srv.keepalive_timeout
        else:
            delay = srv.keepalive_interval - idle
        self.keepalive_timer = self.loop.call_later(delay, self._keepalive_check)

    def _ping_policy_violated(self) -> bool:
        """grpc-go's keepalive enforcement (etcd's --grpc-keepalive-min-time, PermitWithoutStream
        false): a client PING sooner than min-time after the previous one (2 h with no stream
        open) is a strike, unless we sent HEADERS or DATA since; more than 2 strikes violate it."""
        now, last = self.loop.time(), self.last_ping
        self.last_ping = now
        if self.reset_strikes:
            self.reset_strikes = False
            self.ping_strikes = 0
            return False
        if last is not None:
            min_time = self.server.keepalive_min_time if self.streams else IDLE_PING_MIN_TIME
            if now - last < min_time:
                self.ping_strikes += 1
        return self.ping_strikes > MAX_PING_STRIKES

    def _abort(self) -> None:
        for s in list(self.streams.values()):
            self._abandon(s)
        if self.transport is not None:
            self.transport.abort()

    def close(self) -> None:
        """Cancel every call on this connection, flush what is queued, close the socket."""
        for s in list(self.streams.values()):
            self._abandon(s)
        self._flush()
        if self.transport is not None:
            self.transport.close()

    # ------------------------------------------------------------ HTTP/1.1
    def _http1(self, buf: bytearray) -> None:
        """etcd's HTTP endpoints on the client port: ``GET /health``, ``/version``; else 404."""
        assert self.transport is not None  # bytes arrive only after connection_made
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            if len(buf) > 16384:
                self.transport.close()
            return
        if self.handshake_timer is not None:
            self.handshake_timer.cancel()
            self.handshake_timer = None
        line = bytes(buf[:buf.find(b"\r\n")]).decode("latin-1").split()
        target = line[1] if len(line) >= 2 else ""
        body, status, ctype = self.server.http_get(target)
        head = (f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
        self.transport.write(head + body)
        self.transport.close()


#: frames of a fixed payload size (RFC 9113 §6.3, 6.4, 6.7, 6.9): anything else is FRAME_SIZE_ERROR
_FIXED_SIZE = {PRIORITY: 5, RST_STREAM: 4, PING: 8, WINDOW_UPDATE: 4}
#: frames that belong to stream 0 (the others must name a stream); WINDOW_UPDATE goes either way
_CONNECTION_FRAMES = frozenset((SETTINGS, PING, GOAWAY))


def _unpad(flags: int, payload: bytes) -> bytes:
    """Strip PADDED padding (RFC 9113 §6.1): padding as long as the payload is a PROTOCOL_ERROR."""
    if not flags & PADDED:
        return payload
    if not payload or payload[0] >= len(payload):
        raise _ConnectionError(PROTOCOL_ERROR, "padding exceeds the frame")
    return payload[1:len(payload) - payload[0]]


class _ConnectionError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _raw(message: Any) -> Any:
    return message


class _Method:
    __slots__ = ("handler", "call_sync", "request_deserializer", "response_serializer",
                 "request_streaming", "response_streaming", "labels")

    def __init__(self, h: grpc.RpcMethodHandler, path: str = "") -> None:
        service, _, name = path.strip("/").rpartition("/")
        kind = ("bidi_stream" if h.response_streaming else "client_stream") if h.request_streaming else \
            ("server_stream" if h.response_streaming else "unary")
        #: (grpc_type, grpc_service, grpc_method) of grpc_server_handled_total (go-grpc-prometheus)
        self.labels = (kind, service, name)
        self.request_streaming = h.request_streaming
        self.response_streaming = h.response_streaming
        # a handler without (de)serializers takes and returns raw bytes, as in grpcio
        self.request_deserializer: Callable[[bytes], Any] = h.request_deserializer or _raw
        self.response_serializer: Callable[[Any], bytes] = h.response_serializer or _raw
        # grpc's stubs type handlers as the sync API's; the etcd servicers' are coroutine functions
        self.handler: Any = h.stream_stream or h.unary_stream or h.stream_unary or h.unary_unary
        sync = getattr(self.handler, "call_sync", None)
        self.call_sync = None
        if sync is not None and h.unary_unary is not None:
            owner = getattr(self.handler, "__self__", None)
            self.call_sync = sync.__get__(owner) if owner is not None else sync


def server_tls_context(cert_file: str, key_file: str, trusted_ca_file: str = "",
                       client_cert_auth: bool = False) -> ssl.SSLContext:
    """etcd's client TLS (``--cert-file``, ``--key-file``, ``--trusted-ca-file``,
    ``--client-cert-auth``; ``client/pkg/transport/listener.go`` ``TLSInfo.ServerConfig``): TLS 1.2+,
    ALPN ``h2`` (gRPC clients insist on it) and ``http/1.1`` (``/health``, ``/version``), and with
    ``client_cert_auth`` a client certificate signed by ``trusted_ca_file`` required
    (``tls.RequireAndVerifyClientCert``; a client without one fails the handshake). Raises
    ValueError naming a file that does not load."""
    if client_cert_auth and not trusted_ca_file:
        raise ValueError("--client-cert-auth needs --trusted-ca-file")
    return pki.server_context(cert_file, key_file, trusted_ca_file or None, require_client_cert=client_cert_auth,
                              alpn=("h2", "http/1.1"), flags=("--cert-file", "--key-file", "--trusted-ca-file"))


class GrpcServer:
    """A gRPC server on the running event loop. Register with grpc's generated
    ``add_*Servicer_to_server(servicer, server)``; :meth:`add_insecure_port` then :meth:`start`.

    ``max_receive``: the largest request message in bytes (larger ones end the call with
    RESOURCE_EXHAUSTED, as grpc does). ``http_get(target) -> (body, status line, content type)`` (target: path and query)
    answers HTTP/1.1 GETs on the same port.

    Connection limits, in seconds (0 = off): ``handshake_timeout`` for a new connection to send
    the HTTP/2 preface and its first SETTINGS frame, or a whole HTTP/1.1 request head (grpc-go's
    ``ConnectionTimeout``, 120 s; etcd puts no limit on its HTTP/1.1 listener, we use the same
    one); dropped connections log ``etcd.connection.timeout``. ``keepalive_interval`` /
    ``keepalive_timeout``: grpc-go's server keepalive (etcd's ``--grpc-keepalive-interval`` 2h,
    ``--grpc-keepalive-timeout`` 20s); ``keepalive_min_time``: its enforcement policy (etcd's
    ``--grpc-keepalive-min-time`` 5s; a client pinging more often gets GOAWAY ENHANCE_YOUR_CALM
    ``too_many_pings``, etcd ``server/embed/etcd.go`` ``serveClients``).
    """

    def __init__(self, max_receive: int, http_get=None, *, handshake_timeout: float = HANDSHAKE_TIMEOUT,
                 keepalive_min_time: float = KEEPALIVE_MIN_TIME, keepalive_interval: float = KEEPALIVE_INTERVAL,
                 keepalive_timeout: float = KEEPALIVE_TIMEOUT) -> None:
        self.max_receive = max_receive
        self.handshake_timeout = handshake_timeout
        self.keepalive_min_time = keepalive_min_time
        self.keepalive_interval = keepalive_interval
        self.keepalive_timeout = keepalive_timeout
        self.methods: dict[bytes, _Method] = {}
        self.connections: set[_Connection] = set()
        self.servers: list[asyncio.base_events.Server] = []
        self.binds: list[socket.socket] = []
        #: bound socket -> its TLS context (None: plain)
        self.tls: dict[socket.socket, ssl.SSLContext | None] = {}
        self.stopping = False
        self.http_get = http_get or (lambda path: (b"404 page not found\n", "404 Not Found", TEXT))
        #: ``on_handled(method labels, code)`` once per finished call (grpc_server_handled_total)
        self.on_handled: Callable[[tuple[str, str, str], grpc.StatusCode], None] | None = None

    # grpc's generated registration code calls one of these two
    def add_registered_method_handlers(self, service: str, handlers: dict) -> None:
        """``handlers``: method name -> ``grpc.RpcMethodHandler``, served at ``/SERVICE/METHOD``."""
        for name, h in handlers.items():
            self.methods[f"/{service}/{name}".encode()] = _Method(h, f"/{service}/{name}")

    def add_generic_rpc_handlers(self, handlers) -> None:
        """grpc's generic handlers (``grpc.method_handlers_generic_handler``): their method table is
        taken as is; a registered handler of the same path wins."""
        for gh in handlers:
            for path, h in getattr(gh, "_method_handlers", {}).items():
                self.methods.setdefault(path.encode(), _Method(h, path))

    def add_secure_port(self, address: str, context: ssl.SSLContext) -> int:
        """As :meth:`add_insecure_port`, serving TLS with ``context`` (:func:`server_tls_context`)."""
        port = self.add_insecure_port(address)
        self.tls[self.binds[-1]] = context
        return port

    def add_insecure_port(self, address: str) -> int:
        """Bind ``host:port`` now (port 0 picks one); returns the bound port. Raises OSError."""
        host, _, port = address.rpartition(":")
        host = host.strip("[]")
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, int(port)))
            sock.listen(1024)
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
        self.binds.append(sock)
        return sock.getsockname()[1]

    async def start(self) -> None:
        """Serve every bound port on the running loop (returns once listening)."""
        loop = asyncio.get_running_loop()
        for sock in self.binds:
            ctx = self.tls.get(sock)
            srv = await loop.create_server(lambda: _Connection(self), sock=sock, ssl=ctx,
                                           ssl_handshake_timeout=(self.handshake_timeout or None) if ctx else None)
            self.servers.append(srv)

    async def stop(self, grace: float | None = None) -> None:
        """Stop listening, send GOAWAY, let calls in flight end for up to ``grace`` seconds, then
        cancel the rest and close every connection."""
        self.stopping = True
        for srv in self.servers:
            srv.close()
        for c in list(self.connections):
            c._goaway(NO_ERROR, "server shutting down")
            c._flush()
        in_flight = [s.task for c in self.connections for s in c.streams.values() if s.task is not None]
        if in_flight and grace:
            await asyncio.wait(in_flight, timeout=grace)
        for c in list(self.connections):
            c.close()
        for srv in self.servers:
            await srv.wait_closed()
