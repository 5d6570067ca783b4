"""Connection-level limits of the apiserver (``components/apiserver/serving.py``, ``watch.py``).

kube-apiserver's ``http.Server`` closes a connection whose request headers are not complete
within ``ReadHeaderTimeout`` (32 s, ``secure_serving.go``); a watch ends at its
``timeoutSeconds`` (``endpoints/handlers/watch.go``), here also when the client stopped
reading; on shutdown every watch stream ends cleanly. The server is served by
:func:`components.apiserver.serving.listen` with a 1 s header timeout so that the tests
run quickly; every wait is bounded and waits on what the server does (EOF, a log event).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import uuid

import aiohttp
import pytest
from aiohttp import web

from components.apiserver import serving
from components.apiserver import status as st
from components.apiserver.server import APIServer
from components.apiserver.watch import watch_timeout

HEADER_TIMEOUT = 1.0
#: the bound on every wait: the timeout plus a generous margin for a loaded CI machine
MARGIN = 15.0


@pytest.fixture
async def served(etcd_url):
    server = APIServer(etcd_url)
    await server.start()
    listener = await serving.listen(server.app, "127.0.0.1", 0, read_header_timeout=HEADER_TIMEOUT)
    session = aiohttp.ClientSession(f"http://127.0.0.1:{listener.port}")
    yield server, listener, session
    await session.close()
    await listener.stop()
    await server.stop()


async def read_until_closed(reader: asyncio.StreamReader, timeout: float) -> bytes:
    """Everything the server sends until it closes the connection (a reset counts as closed)."""
    out = b""
    async with asyncio.timeout(timeout):
        while True:
            try:
                chunk = await reader.read(65536)
            except ConnectionResetError:
                return out
            if not chunk:
                return out
            out += chunk


def watch_request(path: str, port: int) -> bytes:
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json\r\n\r\n").encode()


async def test_partial_request_header_is_closed_after_the_header_timeout(served):
    _, listener, _ = served
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(b"GET /api HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # the headers never end
    await writer.drain()
    assert await read_until_closed(reader, HEADER_TIMEOUT + MARGIN) == b""  # closed, no answer
    writer.close()


async def test_request_head_larger_than_max_header_bytes_is_431_and_closed(served):
    _, listener, _ = served
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    big = "a" * (serving.MAX_HEADER_BYTES // 2)
    writer.write(f"GET /api HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: {big}\r\nX-B: {big}\r\nX-C: {big}\r\n\r\n".encode())
    await writer.drain()
    out = await read_until_closed(reader, MARGIN)
    assert out.startswith(b"HTTP/1.0 431 Request Header Fields Too Large\r\n")
    assert out.endswith(b"\r\n\r\n431 Request Header Fields Too Large")
    writer.close()


async def test_header_longer_than_aiohttps_default_but_within_max_header_bytes_is_served(served):
    _, listener, session = served
    # a label selector of 20 KiB: aiohttp's default 8190-byte line limit would answer 400
    selector = ",".join(f"k{i}=v" for i in range(4000))
    async with session.get(f"/api/v1/namespaces/default/pods?labelSelector={selector}",
                           headers={"X-Big": "b" * 100_000}) as r:
        assert r.status == 200, await r.text()


async def test_connection_that_sends_nothing_is_closed_after_the_header_timeout(served):
    _, listener, _ = served
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    assert await read_until_closed(reader, HEADER_TIMEOUT + MARGIN) == b""
    writer.close()


async def test_watch_longer_than_the_header_timeout_runs_to_its_end_on_a_kept_alive_connection(served):
    """The header timer stops once a request is with the handler: a 2 s watch outlives the
    1 s header timeout, ends with its terminating chunk, and the same connection serves
    the next request."""
    server, listener, _ = served
    ns = await new_ns(served[2])
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(watch_request(f"/api/v1/namespaces/{ns}/configmaps?watch=true&timeoutSeconds=2", listener.port))
    await writer.drain()
    async with asyncio.timeout(2 + MARGIN):
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and b"Transfer-Encoding: chunked" in head
        assert await reader.readuntil(b"0\r\n\r\n") == b"0\r\n\r\n"  # the terminating chunk
    writer.write(b"GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    await writer.drain()
    async with asyncio.timeout(MARGIN):
        assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
    writer.close()


async def test_idle_kept_alive_connection_is_closed_after_the_idle_timeout():
    """``IdleTimeout`` (90 s in kube-apiserver) after a response; here 1 s, on a bare app."""
    async def ok(request: web.Request) -> web.Response:
        return web.Response(text="ok")
    app = web.Application(middlewares=[serving.track_requests])
    app.router.add_get("/", ok)
    listener = await serving.listen(app, "127.0.0.1", 0, read_header_timeout=60.0, idle_timeout=1.0)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        await writer.drain()
        response = await read_until_closed(reader, 1.0 + MARGIN)
        assert response.startswith(b"HTTP/1.1 200") and response.endswith(b"ok")
        writer.close()
    finally:
        await listener.stop()


async def new_ns(session: aiohttp.ClientSession) -> str:
    ns = "t-" + uuid.uuid4().hex[:8]
    async with session.post("/api/v1/namespaces", json={"metadata": {"name": ns}}) as r:
        assert r.status == 201
    return ns


async def _registered_watchers(session: aiohttp.ClientSession, kind: str) -> int:
    async with session.get("/metrics") as r:
        text = await r.text()
    total = 0
    for line in text.splitlines():
        if line.startswith("apiserver_registered_watchers{") and f'kind="{kind}"' in line:
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


def _max_send_buffer() -> int:
    """The largest TCP send buffer the kernel grows a socket to (bytes)."""
    try:
        with open("/proc/sys/net/ipv4/tcp_wmem") as f:
            return int(f.read().split()[2])
    except (OSError, ValueError, IndexError):
        return 4 << 20


class _EventSeen(logging.Handler):
    """Sets ``seen`` when a log event named ``name`` is emitted."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name_ = name
        self.seen = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage() == self.name_:
            self.seen.set()


async def test_watch_of_a_client_that_never_reads_is_closed_at_its_timeout(served):
    """A client that stops reading blocks the stream's writes on a full socket; at
    ``timeoutSeconds`` the write is cancelled, the connection dropped and the watcher leaves
    the cache."""
    server, listener, session = served
    ns = await new_ns(served[2])
    big = "x" * 400_000
    # initial ADDED events beyond what the kernel's socket buffers can hold (~10 MB)
    for i in range(max(24, 3 * _max_send_buffer() // len(big))):
        async with session.post(f"/api/v1/namespaces/{ns}/configmaps",
                                json={"metadata": {"name": f"big-{i}"}, "data": {"v": big}}) as r:
            assert r.status == 201
    before = await _registered_watchers(session, "ConfigMap")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", listener.port))
    reader, writer = await asyncio.open_connection(sock=sock)
    handler = _EventSeen("watch.unresponsive")
    logging.getLogger("apiserver.watch").addHandler(handler)
    try:
        writer.write(watch_request(f"/api/v1/namespaces/{ns}/configmaps?watch=true&resourceVersion=0"
                                   f"&timeoutSeconds=2", listener.port))
        await writer.drain()
        async with asyncio.timeout(2 + MARGIN):
            await handler.seen.wait()  # and meanwhile this client reads nothing
    finally:
        logging.getLogger("apiserver.watch").removeHandler(handler)
    assert server.watch.active == 0
    assert await _registered_watchers(session, "ConfigMap") == before
    body = await read_until_closed(reader, MARGIN)
    assert not body.endswith(b"0\r\n\r\n")  # cut off, not ended: the client never read it
    writer.close()


async def test_shutdown_ends_watch_streams_with_the_terminating_chunk(served):
    """SIGTERM's path (:meth:`serving.Listener.stop`): kube-apiserver's watch handlers
    return when the server shuts down, so a client sees its watch end, not a reset."""
    server, listener, _ = served
    ns = await new_ns(served[2])
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(watch_request(f"/api/v1/namespaces/{ns}/configmaps?watch=true", listener.port))
    await writer.drain()
    async with asyncio.timeout(MARGIN):
        assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
    assert server.watch.active == 1
    stopping = asyncio.create_task(listener.stop())
    body = await read_until_closed(reader, MARGIN)
    await stopping
    assert body.endswith(b"0\r\n\r\n")
    assert server.watch.active == 0
    writer.close()


async def test_timeout_seconds_that_is_not_an_integer_is_400(served):
    _, _, session = served
    async with session.get("/api/v1/configmaps?watch=true&timeoutSeconds=abc") as r:
        assert r.status == 400
        body = await r.json()
    assert body["reason"] == "BadRequest"
    assert body["message"] == 'strconv.ParseInt: parsing "abc": invalid syntax'


async def test_negative_timeout_seconds_ends_the_watch_at_once(served):
    _, _, session = served
    ns = await new_ns(session)
    async with asyncio.timeout(MARGIN):
        async with session.get(f"/api/v1/namespaces/{ns}/configmaps?watch=true&timeoutSeconds=-1") as r:
            assert r.status == 200
            assert await r.read() == b""


def test_watch_timeout_follows_timeout_seconds_then_min_request_timeout_randomised():
    assert watch_timeout("7", 1800) == 7.0
    assert watch_timeout("+7", 1800) == 7.0
    assert watch_timeout("-3", 1800) == 0.0
    for v in (None, "", "0"):
        assert 1800 <= watch_timeout(v, 1800) < 3600
    assert watch_timeout(None, 0) == 0.0
    for bad, why in (("1.5", "invalid syntax"), ("1e3", "invalid syntax"), (" 5", "invalid syntax"),
                     ("9223372036854775808", "value out of range")):
        with pytest.raises(st.APIError) as e:
            watch_timeout(bad, 1800)
        assert e.value.code == 400 and e.value.body()["message"].endswith(why)
