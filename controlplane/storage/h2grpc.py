"""gRPC calls over one HTTP/2 (h2c) connection, on asyncio: the etcd client's KV and Watch.

Why our own: a grpc.aio unary call costs ~100-120 us of CPU in the caller (its completion queue
is polled by a thread: several thread switches per call), about a tenth of what the apiserver
spends on a whole request, and a watch response read from a grpc.aio stream 150-220 us. Here a
call is one HEADERS + DATA write and its answers are parsed in ``data_received``, inside the
event loop (the same reasoning as the embedded etcd's server transport,
``components/etcd/transport.py``).

Wire behaviour follows RFC 9113 (HTTP/2: preface, SETTINGS, flow control both ways, PING,
RST_STREAM, GOAWAY, CONTINUATION), RFC 7541 (HPACK: request headers are sent as literals
without indexing, so the encoder keeps no table; responses are decoded with the ``hpack``
library's decoder) and grpc's PROTOCOL-HTTP2.md (length-prefixed messages, ``grpc-timeout``,
``grpc-status`` / percent-encoded ``grpc-message`` trailers, Trailers-Only responses).

Failures are raised as ``grpc.aio.AioRpcError`` with the codes grpc would give, so callers
translate them as before: no connection / connection lost → UNAVAILABLE; the call's deadline
→ DEADLINE_EXCEEDED (the stream is reset; a connection that received nothing during the call
is then dropped, as grpc's keepalive would find it dead); RST_STREAM from the server →
CANCELLED / INTERNAL. A call the server says it did not process (RST_STREAM REFUSED_STREAM, a
stream above a GOAWAY's last one, or one still waiting for SETTINGS_MAX_CONCURRENT_STREAMS
room) is sent again, on a new connection after a GOAWAY, up to :data:`REFUSED_RETRIES` times
(grpc's transparent retry), then UNAVAILABLE. A connection with calls open that receives
nothing for :data:`KEEPALIVE_TIME` s is pinged and dropped when the PING goes unanswered for
:data:`KEEPALIVE_TIMEOUT` s (grpc's keepalive: a watch on a half-dead connection ends).
The connection is made on the first call and again on the first call after it is lost.
"""

from __future__ import annotations

import asyncio
import struct
from collections import deque
from typing import Any, Callable
from urllib.parse import unquote

import grpc
from grpc.aio import AioRpcError, Metadata
from hpack import Decoder
from hpack.exceptions import HPACKError
from hpack.hpack import encode_integer

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20
S_HEADER_TABLE_SIZE, S_ENABLE_PUSH, S_MAX_CONCURRENT_STREAMS, S_INITIAL_WINDOW_SIZE, S_MAX_FRAME_SIZE = range(1, 6)
NO_ERROR, PROTOCOL_ERROR, REFUSED_STREAM, CANCEL = 0, 1, 7, 8
MAX_WINDOW = 2 ** 31 - 1
#: our receive windows (connection and stream): as large as allowed, refilled once half is used
RECV_WINDOW = MAX_WINDOW
#: the largest frame we accept (SETTINGS_MAX_FRAME_SIZE): large answers in few frames
OUR_MAX_FRAME = 1 << 20
#: the largest response message accepted (grpc.max_receive_message_length of EtcdClient.OPTIONS)
MAX_RECEIVE = 64 * 1024 * 1024
#: times a call the server did not process is sent again before it fails UNAVAILABLE
REFUSED_RETRIES = 3
#: seconds between keepalive PINGs of a connection with calls open and nothing received, and
#: the seconds their answer may take (EtcdClient.OPTIONS: the apiserver's etcd keepalive)
KEEPALIVE_TIME, KEEPALIVE_TIMEOUT = 30.0, 10.0
KEEPALIVE_PING = b"keepaliv"
#: seconds a connection attempt may take (grpc's minimum connect timeout, 20 s; a call's
#: deadline ends it sooner)
CONNECT_TIMEOUT = 20.0

_U32 = struct.Struct(">I")
_CODES = {c.value[0]: c for c in grpc.StatusCode}


def _frame(ftype: int, flags: int, stream_id: int, payload: bytes = b"") -> bytes:
    n = len(payload)
    return bytes((n >> 16 & 0xFF, n >> 8 & 0xFF, n & 0xFF, ftype, flags)) + stream_id.to_bytes(4, "big") + payload


def _literal(name: bytes, value: bytes) -> bytes:
    """HPACK literal header field without indexing, new name (RFC 7541 §6.2.2)."""
    return b"\x00" + encode_integer(len(name), 7) + name + encode_integer(len(value), 7) + value


def _indexed_name(index: int, value: bytes) -> bytes:
    """HPACK literal without indexing, name from the static table (RFC 7541 §6.2.2)."""
    return bytes(encode_integer(index, 4)) + encode_integer(len(value), 7) + value


def rpc_error(code: grpc.StatusCode, details: str) -> AioRpcError:
    """grpc.aio's own error type for ``code`` / ``details``, as grpc.aio raises it (so callers'
    ``except AioRpcError`` and :func:`controlplane.storage.etcd.translate` see no difference)."""
    return AioRpcError(code, Metadata(), Metadata(), details, None)


class _Refused(Exception):
    """The peer did not process the call (REFUSED_STREAM, above a GOAWAY's last stream)."""


class _Deadline(Exception):
    """A call's deadline passed (set on its future by the timer)."""


def _expire(fut: asyncio.Future[Any]) -> None:
    if not fut.done():
        fut.set_exception(_Deadline())


class _Call:
    __slots__ = ("id", "future", "headers", "parts", "size", "status", "message", "window", "out", "got_headers",
                 "ending", "ended", "stream", "recv_used")

    def __init__(self, sid: int, future: asyncio.Future[Any], headers: bytes) -> None:
        self.id = sid                  # 0 until its stream is opened
        self.future = future
        self.headers = headers
        self.parts: list[bytes] = []   # the response's DATA payloads
        self.size = 0
        self.status: int | None = None
        self.message = ""
        self.window = 0                # what we may still send on this stream
        self.out = bytearray()         # request bytes waiting for flow-control window
        self.got_headers = False
        self.ending = True             # END_STREAM goes with the last byte of ``out``
        self.ended = False             # END_STREAM sent
        self.stream: StreamCall | None = None  # a streaming call's response side
        self.recv_used = 0             # bytes received since our last stream WINDOW_UPDATE


class _Connection(asyncio.Protocol):
    """One HTTP/2 connection carrying calls (odd stream ids from 1)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.decoder = Decoder()
        self.calls: dict[int, _Call] = {}
        self.next_id = 1
        self.max_streams = MAX_WINDOW   # the peer's SETTINGS_MAX_CONCURRENT_STREAMS
        self.waiting: deque[_Call] = deque()  # calls beyond it, started as others end
        self.peer_window = 65535        # the peer's SETTINGS_INITIAL_WINDOW_SIZE
        self.peer_max_frame = 16384
        self.send_window = 65535        # connection-level send window
        self.recv_used = 0
        self.header_block: tuple[int, int, bytearray] | None = None
        self.usable = True              # False once lost, GOAWAY'd or exhausted
        self.received = 0               # bytes received so far (liveness after a deadline)
        self.loop = asyncio.get_running_loop()
        self.lost: asyncio.Future[Any] = self.loop.create_future()
        self.wbuf: list[bytes] = []     # frames of this loop iteration, written in one send
        #: decoded response header blocks by their bytes, valid while the HPACK dynamic table
        #: is unchanged (steady state: every answer's headers and trailers are the same bytes)
        self.blocks: dict[bytes, Any] = {}
        self.keepalive_timer: asyncio.TimerHandle | None = None
        self.ping_timer: asyncio.TimerHandle | None = None
        self.seen = 0                   # ``received`` at the last keepalive check

    # ------------------------------------------------------------ transport callbacks
    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        settings = struct.pack(">HIHIHI", S_ENABLE_PUSH, 0, S_INITIAL_WINDOW_SIZE, RECV_WINDOW,
                               S_MAX_FRAME_SIZE, OUR_MAX_FRAME)
        transport.write(PREFACE + _frame(SETTINGS, 0, 0, settings)
                        + _frame(WINDOW_UPDATE, 0, 0, (RECV_WINDOW - 65535).to_bytes(4, "big")))
        self.keepalive_timer = self.loop.call_later(KEEPALIVE_TIME, self._keepalive)

    def _keepalive(self) -> None:
        """Every :data:`KEEPALIVE_TIME` s with calls open and nothing received meanwhile, a PING;
        no answer within :data:`KEEPALIVE_TIMEOUT` s ends the connection (its calls fail
        UNAVAILABLE): grpc's keepalive with the apiserver's etcd client settings."""
        self.keepalive_timer = self.loop.call_later(KEEPALIVE_TIME, self._keepalive)
        if self.calls and self.received == self.seen and self.ping_timer is None and self.usable:
            self.write(_frame(PING, 0, 0, KEEPALIVE_PING))
            self.ping_timer = self.loop.call_later(KEEPALIVE_TIMEOUT, self._ping_timeout)
        self.seen = self.received

    def _ping_timeout(self) -> None:
        self.ping_timer = None
        self._abort(NO_ERROR, "keepalive ping not answered")

    def write(self, data: bytes) -> None:
        """Queue ``data``; everything queued in one loop iteration leaves in one send."""
        if not self.wbuf:
            self.loop.call_soon(self._flush)
        self.wbuf.append(data)

    def _flush(self) -> None:
        data = b"".join(self.wbuf)
        self.wbuf.clear()
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.usable = False
        for timer in (self.keepalive_timer, self.ping_timer):
            if timer is not None:
                timer.cancel()
        self.keepalive_timer = self.ping_timer = None
        self._fail_all(grpc.StatusCode.UNAVAILABLE, f"etcd connection lost: {exc}" if exc else "etcd connection closed")
        if not self.lost.done():
            self.lost.set_result(None)

    def _fail_all(self, code: grpc.StatusCode, details: str, above: int = 0, refused: bool = False) -> None:
        """Fail the calls on streams above ``above`` and those waiting for one; ``refused``:
        the peer says it never processed them (they are sent again)."""
        failed = [self.calls.pop(s) for s in [s for s in self.calls if s > above]]
        waiting = list(self.waiting)
        self.waiting.clear()
        for c in failed:
            if not c.future.done():
                c.future.set_exception(_Refused(details) if refused else rpc_error(code, details))
        for c in waiting:  # never sent
            if not c.future.done():
                c.future.set_exception(_Refused(details))

    def close(self) -> None:
        """Send what is buffered, then close the connection; no new call starts on it."""
        self.usable = False
        if self.transport is not None:
            if self.wbuf:
                self._flush()
            self.transport.close()

    def _abort(self, code: int, reason: str) -> None:
        """A protocol error: GOAWAY and drop the connection; its calls fail UNAVAILABLE."""
        self.usable = False
        if self.transport is not None:
            self._flush()
            self.transport.write(_frame(GOAWAY, 0, 0, struct.pack(">II", 0, code) + reason.encode()))
            self.transport.abort()
        self._fail_all(grpc.StatusCode.UNAVAILABLE, f"etcd connection error: {reason}")

    # ------------------------------------------------------------ calls
    def start(self, c: _Call) -> None:
        """Open a stream for ``c`` now, or once SETTINGS_MAX_CONCURRENT_STREAMS allows."""
        if len(self.calls) >= self.max_streams:
            self.waiting.append(c)
        else:
            self._open(c)

    def _open(self, c: _Call) -> None:
        """Send ``c``'s HEADERS on a new stream (ids in the order streams are opened) and what
        flow control allows of its message."""
        c.id = sid = self.next_id
        self.next_id += 2
        if self.next_id > MAX_WINDOW:
            self.usable = False  # stream ids exhausted: the next call opens a new connection
        c.window = self.peer_window
        self.calls[sid] = c
        self.write(_frame(HEADERS, END_HEADERS, sid, c.headers))
        self._pump(c)

    def _ended(self, sid: int) -> _Call | None:
        """Forget stream ``sid``; a waiting call takes its place."""
        c = self.calls.pop(sid, None)
        if c is not None:
            while self.waiting and len(self.calls) < self.max_streams and self.usable:
                self._open(self.waiting.popleft())
        return c

    def _pump(self, c: _Call) -> None:
        """Send what flow control allows of ``c``'s request; END_STREAM with the last byte."""
        out = c.out
        while out:
            n = min(len(out), c.window, self.send_window, self.peer_max_frame)
            if n <= 0:
                return
            chunk = bytes(out[:n])
            del out[:n]
            c.window -= n
            self.send_window -= n
            last = not out and c.ending
            c.ended = c.ended or last
            self.write(_frame(DATA, END_STREAM if last else 0, c.id, chunk))
        if c.ending and not c.ended:  # a streaming call's half-close: an empty DATA
            c.ended = True
            self.write(_frame(DATA, END_STREAM, c.id))

    def cancel(self, c: _Call) -> None:
        """The caller gave up (deadline, cancellation): reset the stream."""
        if not c.id:
            if c in self.waiting:
                self.waiting.remove(c)
        elif self._ended(c.id) is not None and self.usable:
            self.write(_frame(RST_STREAM, 0, c.id, _U32.pack(CANCEL)))

    # ------------------------------------------------------------ frames in
    def data_received(self, data: bytes) -> None:
        self.received += len(data)
        buf = self.buf
        buf += data
        pos, n = 0, len(buf)
        try:
            while n - pos >= 9:
                length = buf[pos] << 16 | buf[pos + 1] << 8 | buf[pos + 2]
                if length > OUR_MAX_FRAME:
                    return self._abort(PROTOCOL_ERROR, "frame too large")
                end = pos + 9 + length
                if end > n:
                    break
                ftype, flags = buf[pos + 3], buf[pos + 4]
                sid = _U32.unpack_from(buf, pos + 5)[0] & 0x7FFFFFFF
                payload = bytes(buf[pos + 9:end])
                pos = end
                if self.header_block is not None and ftype != CONTINUATION:
                    return self._abort(PROTOCOL_ERROR, "expected CONTINUATION")
                if ftype == DATA:
                    self._on_data(sid, flags, payload)
                elif ftype == HEADERS:
                    if flags & PADDED:
                        payload = payload[1:len(payload) - payload[0]]
                    if flags & PRIORITY_FLAG:
                        payload = payload[5:]
                    if flags & END_HEADERS:
                        self._on_header_block(sid, flags, payload)
                    else:
                        self.header_block = (sid, flags, bytearray(payload))
                elif ftype == CONTINUATION:
                    hb = self.header_block
                    if hb is None or hb[0] != sid:
                        return self._abort(PROTOCOL_ERROR, "unexpected CONTINUATION")
                    hb[2].extend(payload)
                    if flags & END_HEADERS:
                        self.header_block = None
                        self._on_header_block(sid, hb[1], bytes(hb[2]))
                elif ftype == SETTINGS:
                    if not flags & ACK:
                        self._on_settings(payload)
                elif ftype == WINDOW_UPDATE:
                    self._on_window_update(sid, payload)
                elif ftype == PING:
                    if not flags & ACK:
                        self.write(_frame(PING, ACK, 0, payload))
                    elif self.ping_timer is not None:
                        self.ping_timer.cancel()
                        self.ping_timer = None
                elif ftype == RST_STREAM:
                    c = self._ended(sid)
                    if c is not None and not c.future.done():
                        err = _U32.unpack(payload)[0]
                        text = f"stream reset by etcd (HTTP/2 error {err})"
                        c.future.set_exception(_Refused(text) if err == REFUSED_STREAM else rpc_error(
                            grpc.StatusCode.CANCELLED if err == CANCEL else grpc.StatusCode.INTERNAL, text))
                elif ftype == GOAWAY:
                    last = _U32.unpack_from(payload, 0)[0] & 0x7FFFFFFF
                    self.usable = False  # no new streams; those up to ``last`` may still finish
                    self._fail_all(grpc.StatusCode.UNAVAILABLE, "etcd sent GOAWAY", above=last, refused=True)
                # PRIORITY, PUSH_PROMISE (disabled) and unknown frame types are ignored
        except (struct.error, IndexError, ValueError, HPACKError) as e:
            return self._abort(PROTOCOL_ERROR, f"malformed frame: {e}")
        finally:
            if pos:
                del buf[:pos]

    def _on_settings(self, payload: bytes) -> None:
        for off in range(0, len(payload) - len(payload) % 6, 6):
            ident, value = struct.unpack_from(">HI", payload, off)
            if ident == S_INITIAL_WINDOW_SIZE:
                delta, self.peer_window = value - self.peer_window, value
                for c in self.calls.values():
                    c.window += delta
            elif ident == S_MAX_FRAME_SIZE:
                self.peer_max_frame = value
            elif ident == S_MAX_CONCURRENT_STREAMS:
                self.max_streams = value
        self.write(_frame(SETTINGS, ACK, 0))
        self._pump_all()

    def _on_window_update(self, sid: int, payload: bytes) -> None:
        inc = _U32.unpack(payload)[0] & 0x7FFFFFFF
        if sid == 0:
            self.send_window += inc
            self._pump_all()
            return
        c = self.calls.get(sid)
        if c is not None:
            c.window += inc
            self._pump(c)

    def _pump_all(self) -> None:
        for c in list(self.calls.values()):
            if c.out:
                self._pump(c)

    def _on_data(self, sid: int, flags: int, payload: bytes) -> None:
        size = len(payload)
        if flags & PADDED:
            payload = payload[1:len(payload) - payload[0]]
        self.recv_used += size
        if self.recv_used > RECV_WINDOW // 2:
            self.write(_frame(WINDOW_UPDATE, 0, 0, self.recv_used.to_bytes(4, "big")))
            self.recv_used = 0
        c = self.calls.get(sid)
        if c is None:
            return  # a call we gave up on: its data only counts for the window
        if c.stream is not None:
            c.recv_used += size
            if c.recv_used > RECV_WINDOW // 2:
                self.write(_frame(WINDOW_UPDATE, 0, sid, c.recv_used.to_bytes(4, "big")))
                c.recv_used = 0
            c.stream.feed(payload)
            if flags & END_STREAM:
                self._finish(c, None)
            return
        c.parts.append(payload)  # one response per call (< RECV_WINDOW / 2): no stream WINDOW_UPDATE
        c.size += len(payload)
        if c.size > MAX_RECEIVE + 5:
            self.cancel(c)
            if not c.future.done():
                c.future.set_exception(rpc_error(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                                 f"Received message larger than max ({c.size - 5} vs. {MAX_RECEIVE})"))
            return
        if flags & END_STREAM:
            self._finish(c, None)

    def _on_header_block(self, sid: int, flags: int, block: bytes) -> None:
        headers: Any = self.blocks.get(block)
        if headers is None:  # every other block decoded, in order: the table stays in step
            table = self.decoder.header_table
            before = (table.maxsize, tuple(table.dynamic_entries))
            headers = self.decoder.decode(block)
            if (table.maxsize, tuple(table.dynamic_entries)) == before:
                if len(self.blocks) < 64:
                    self.blocks[block] = headers
            else:
                self.blocks.clear()
        c = self.calls.get(sid)
        if c is None:
            return
        for name, value in headers:
            if name == "grpc-status":
                c.status = int(value)
            elif name == "grpc-message":
                c.message = unquote(value)
            elif name == ":status" and value != "200" and c.status is None:
                c.status = -int(value)
        c.got_headers = True
        if flags & END_STREAM:
            self._finish(c, headers)

    def _finish(self, c: _Call, trailers: Any) -> None:
        self._ended(c.id)
        if c.future.done():
            return
        status = c.status
        if status is None:
            c.future.set_exception(rpc_error(grpc.StatusCode.INTERNAL, "server closed the stream without sending trailers"))
        elif status < 0:  # a non-200 HTTP status (grpc's http2 status mapping, PROTOCOL-HTTP2.md)
            code = {-400: grpc.StatusCode.INTERNAL, -401: grpc.StatusCode.UNAUTHENTICATED,
                    -403: grpc.StatusCode.PERMISSION_DENIED, -404: grpc.StatusCode.UNIMPLEMENTED,
                    -429: grpc.StatusCode.UNAVAILABLE, -502: grpc.StatusCode.UNAVAILABLE,
                    -503: grpc.StatusCode.UNAVAILABLE, -504: grpc.StatusCode.UNAVAILABLE}.get(
                        status, grpc.StatusCode.UNKNOWN)
            c.future.set_exception(rpc_error(code, f"Received http2 header with status: {-status}"))
        elif status:
            c.future.set_exception(rpc_error(_CODES.get(status, grpc.StatusCode.UNKNOWN), c.message))
        else:
            c.future.set_result(c.parts[0] if len(c.parts) == 1 else b"".join(c.parts))


class StreamCall:
    """A streaming call (``H2Channel.stream``): the request messages come from an async
    iterator, sent as it yields them (END_STREAM when it ends); ``async for`` yields the decoded
    responses; ends with StopAsyncIteration on grpc-status 0, else raises AioRpcError (UNAVAILABLE
    on connection loss). :meth:`cancel` resets the stream; reading then raises CancelledError,
    as a cancelled grpc.aio call does."""

    def __init__(self, channel: "H2Channel", path: str, decode: Callable[[Any], Any], requests: Any) -> None:
        self.channel = channel
        self.path = path
        self.decode = decode
        self.requests = requests
        self.buf = bytearray()
        self.messages: deque[Any] = deque()
        self.waiter: asyncio.Future[Any] | None = None
        self._cancelled = False
        self._call: _Call | None = None
        self._conn: _Connection | None = None
        self._feeder: asyncio.Task[Any] | None = None
        self._error: BaseException | None = None

    def feed(self, payload: bytes) -> None:
        """DATA ``payload`` (bytes) of the response stream: buffered until whole gRPC messages
        (5-byte length prefix + body) can be handed to the iterator."""
        buf = self.buf
        buf += payload
        got = False
        while len(buf) >= 5:
            size = _U32.unpack_from(buf, 1)[0]
            if len(buf) < 5 + size:
                break
            if buf[0]:
                self._error = rpc_error(grpc.StatusCode.INTERNAL, "compressed response message")
                if self._call is not None and self._conn is not None:
                    self._conn.cancel(self._call)
                break
            try:
                self.messages.append(self.decode(bytes(buf[5:5 + size])))
            except Exception as e:  # noqa: BLE001 - a message that does not parse ends the call
                self._error = rpc_error(grpc.StatusCode.INTERNAL, f"error parsing response: {e}")
                if self._call is not None and self._conn is not None:
                    self._conn.cancel(self._call)
                break
            del buf[:5 + size]
            got = True
        if got or self._error is not None:
            self.wake()

    def _ended(self, fut: asyncio.Future[Any]) -> None:
        """The call ended (trailers, reset, connection lost): wake the reader; the future's
        exception counts as retrieved (it is raised to the reader, or nobody reads any more)."""
        if not fut.cancelled():
            fut.exception()
        self.wake()

    def wake(self) -> None:
        """Resume the iterator waiting for a message or the stream's end."""
        w = self.waiter
        if w is not None and not w.done():
            w.set_result(None)

    async def _start(self) -> None:
        conn = await self.channel._connection()
        if self._cancelled:
            raise asyncio.CancelledError()
        fut = conn.loop.create_future()
        fut.add_done_callback(self._ended)
        c = _Call(0, fut, self.channel._stream_headers(self.path))
        c.ending = False
        c.stream = self
        self._conn, self._call = conn, c
        conn.start(c)
        self._feeder = asyncio.ensure_future(self._feed_requests())

    async def _feed_requests(self) -> None:
        conn, c = self._conn, self._call
        assert conn is not None and c is not None
        try:
            async for msg in self.requests:
                body = msg.SerializeToString()
                c.out += b"\x00" + len(body).to_bytes(4, "big") + body
                if c.id:
                    conn._pump(c)
            c.ending = True
            if c.id:
                conn._pump(c)
        except asyncio.CancelledError:
            pass

    def __aiter__(self) -> "StreamCall":
        return self

    async def __anext__(self) -> Any:
        if self._call is None:
            await self._start()
        c = self._call
        assert c is not None
        while True:
            if self._cancelled:
                raise asyncio.CancelledError()
            if self.messages:
                return self.messages.popleft()
            if self._error is not None:
                raise self._error
            fut = c.future
            if fut.done():
                exc = fut.exception()
                if isinstance(exc, _Refused):
                    raise rpc_error(grpc.StatusCode.UNAVAILABLE, str(exc))
                if exc is not None:
                    raise exc
                raise StopAsyncIteration
            self.waiter = c.future.get_loop().create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None

    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called (grpc.aio ``Call.cancelled``)."""
        return self._cancelled

    def cancel(self) -> bool:
        """End the stream (RST_STREAM CANCEL) and its request feeder; False when already
        cancelled (grpc.aio ``Call.cancel``)."""
        if self._cancelled:
            return False
        self._cancelled = True
        if self._feeder is not None:
            self._feeder.cancel()
        if self._conn is not None and self._call is not None:
            self._conn.cancel(self._call)
        self.wake()
        return True


class H2Channel:
    """gRPC calls to ``target`` (``host:port``, plaintext h2c) on one shared connection.

    ``await call(path, request, decode, timeout)``: a unary call, ``request`` a protobuf message,
    ``decode`` the response type's ``FromString``; raises ``grpc.aio.AioRpcError``.
    :meth:`stream`: a streaming call (:class:`StreamCall`)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.host, _, port = target.rpartition(":")
        self.port = int(port)
        self._conn: _Connection | None = None
        self._connecting: asyncio.Future[Any] | None = None
        self._headers: dict[tuple[str, int], bytes] = {}
        self._authority = _indexed_name(1, target.encode())
        self.closed = False

    async def _connection(self) -> _Connection:
        conn = self._conn
        if conn is not None and conn.usable:
            return conn
        if self.closed:
            raise rpc_error(grpc.StatusCode.UNAVAILABLE, "channel closed")
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(self._connect())
        fut = self._connecting
        try:
            return await asyncio.shield(fut)
        finally:
            if fut.done() and self._connecting is fut:
                self._connecting = None

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            _, conn = await asyncio.wait_for(loop.create_connection(_Connection, self.host.strip("[]"), self.port),
                                             CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as e:  # (asyncio's TCP transports set TCP_NODELAY)
            why = str(e) if isinstance(e, OSError) else f"timed out after {CONNECT_TIMEOUT:g} s"
            raise rpc_error(grpc.StatusCode.UNAVAILABLE, f"failed to connect to {self.target}: {why}") from None
        self._conn = conn
        return conn

    def _header_block(self, path: str, timeout_ms: int) -> bytes:
        key = (path, timeout_ms)
        block = self._headers.get(key)
        if block is None:
            if len(self._headers) > 64:
                self._headers.clear()
            # :method POST (static 3), :scheme http (static 6), :path, :authority,
            # content-type (static 31) application/grpc, te: trailers, grpc-timeout
            block = (b"\x83\x86" + _indexed_name(4, path.encode()) + self._authority
                     + _indexed_name(31, b"application/grpc") + _literal(b"te", b"trailers")
                     + _literal(b"grpc-timeout", b"%dm" % timeout_ms))
            self._headers[key] = block
        return block

    def _stream_headers(self, path: str) -> bytes:
        return (b"\x83\x86" + _indexed_name(4, path.encode()) + self._authority
                + _indexed_name(31, b"application/grpc") + _literal(b"te", b"trailers"))

    def stream(self, path: str, decode: Callable[[Any], Any], requests: Any) -> StreamCall:
        """A streaming call of ``path`` (started when iterated): request messages from the async
        iterator ``requests``, responses decoded with ``decode``."""
        return StreamCall(self, path, decode, requests)

    async def call(self, path: str, request: Any, decode: Callable[[Any], Any], timeout: float) -> Any:
        """One unary call of ``path`` (e.g. ``/etcdserverpb.KV/Range``): ``request`` a protobuf
        message, ``decode`` the response type's ``FromString``, ``timeout`` seconds for the
        whole call (connecting included; sent as ``grpc-timeout``). A call the server refused
        unprocessed is sent again (grpc's transparent retry). Raises grpc.aio's AioRpcError:
        the server's status, DEADLINE_EXCEEDED, UNAVAILABLE (connection lost or refused),
        INTERNAL (a malformed or compressed message)."""
        body = request.SerializeToString()
        message = b"\x00" + len(body).to_bytes(4, "big") + body
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        attempt = 0
        while True:
            conn = self._conn
            if conn is None or not conn.usable:
                try:
                    conn = await asyncio.wait_for(self._connection(), max(deadline - loop.time(), 0.0))
                except TimeoutError:
                    raise rpc_error(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded") from None
            fut = loop.create_future()
            before = conn.received
            left = deadline - loop.time()
            c = _Call(0, fut, self._header_block(path, max(int(left * 1000), 1)))
            c.out += message
            conn.start(c)
            timer = loop.call_at(deadline, _expire, fut)
            try:
                raw = await fut
                break
            except _Refused as e:  # never processed: sent again (grpc's transparent retry)
                attempt += 1
                if attempt > REFUSED_RETRIES:
                    raise rpc_error(grpc.StatusCode.UNAVAILABLE, str(e)) from None
            except _Deadline:
                conn.cancel(c)
                if conn.received == before:  # nothing at all came back: the connection is dead
                    conn.close()
                raise rpc_error(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded") from None
            except asyncio.CancelledError:
                conn.cancel(c)
                raise
            finally:
                timer.cancel()
        size = int.from_bytes(raw[1:5], "big")
        if len(raw) < 5 + size or raw[0]:
            raise rpc_error(grpc.StatusCode.INTERNAL, "malformed or compressed response message")
        return decode(memoryview(raw)[5:5 + size])

    async def close(self) -> None:
        """Close the connection (waiting at most 1 s for it to go); later calls fail UNAVAILABLE."""
        self.closed = True
        if self._connecting is not None:
            self._connecting.cancel()
        conn = self._conn
        self._conn = None
        if conn is not None:
            conn.close()
            try:
                await asyncio.wait_for(asyncio.shield(conn.lost), 1.0)
            except (TimeoutError, asyncio.CancelledError):
                pass
