"""``controlplane/client/rest.py``'s timeouts against a server that accepts connections but does
not answer (client-go's ``rest.Config.Timeout`` / kubectl's ``--request-timeout``): an ordinary
request ends with :class:`RequestTimeout`; endless streams (a watch, the trace's follow) are
bounded until their headers arrive, then read for as long as they last."""

from __future__ import annotations

import asyncio
import json

import pytest

from controlplane.api.resources import PODS
from controlplane.client import rest
from controlplane.client.rest import RequestTimeout, RestClient


class Server:
    """A raw HTTP server: requests whose path contains ``hang`` are read and never answered,
    those with ``quick`` get ``{}`` at once; any other (``/stream``, a watch) gets its headers at once, then one JSON line once :attr:`release` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.writers: list[asyncio.StreamWriter] = []
        self.accepted = asyncio.Condition()

    async def connections(self, n: int) -> None:
        """Wait until ``n`` connections were accepted."""
        async with self.accepted:
            await self.accepted.wait_for(lambda: len(self.writers) >= n)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        async with self.accepted:
            self.accepted.notify_all()
        head = await reader.readuntil(b"\r\n\r\n")
        target = head.split(b" ")[1]
        if b"hang" in target:
            await reader.read()  # until the client gives up
            return
        if b"quick" in target:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
            await writer.drain()
            return
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        await self.release.wait()
        line = json.dumps({"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": "p"}}}).encode() + b"\n"
        writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(line), line))
        await writer.drain()


@pytest.fixture
async def server():
    s = Server()
    srv = await asyncio.start_server(s.handle, "127.0.0.1", 0)
    s.url = f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}"
    yield s
    for w in s.writers:
        w.close()
    srv.close()


async def test_a_request_without_an_answer_raises_request_timeout(server):
    async with RestClient(server.url, "test", timeout=0.3) as client:
        with pytest.raises(RequestTimeout) as e:
            await asyncio.wait_for(client.request("GET", "/hang"), 10)
    assert e.value.timeout == 0.3 and e.value.url == server.url + "/hang"
    assert isinstance(e.value, TimeoutError) and "no answer within 0.3s" in str(e.value)


async def test_a_stream_without_headers_raises_request_timeout(server):
    async with RestClient(server.url, "test", timeout=0.3) as client:
        with pytest.raises(RequestTimeout):
            await asyncio.wait_for(client.open_stream("/hang-stream"), 10)


async def test_streams_outlive_the_request_timeout_once_their_headers_arrived(server):
    """A watch and an open stream whose first line comes after another request of the same
    client timed out (so after the request timeout) still deliver it."""
    async with RestClient(server.url, "test", timeout=0.3) as client:
        stream = await client.open_stream("/stream")
        events = []

        async def watch():
            async for ev in client.watch(PODS, "default", timeout_seconds=60):
                events.append(ev)
        watching = asyncio.ensure_future(watch())
        with pytest.raises(RequestTimeout):
            await client.request("GET", "/hang")
        server.release.set()
        async with stream:
            line = await asyncio.wait_for(stream.content.readline(), 10)
        assert json.loads(line)["type"] == "ADDED"
        await asyncio.wait_for(watching, 10)
        assert events == [("ADDED", {"kind": "Pod", "metadata": {"name": "p"}})]


async def test_timeout_0_means_none(server):
    """kubectl's ``--request-timeout 0``: no timeout (here the answer comes after another
    client's request timed out)."""
    async with RestClient(server.url, "test", timeout=0) as client, \
            RestClient(server.url, "test", timeout=0.3) as other:
        get = asyncio.ensure_future(client.request("GET", "/stream"))
        with pytest.raises(RequestTimeout):
            await other.request("GET", "/hang")
        assert not get.done()
        server.release.set()
        body = await asyncio.wait_for(get, 10)
    assert body["type"] == "ADDED"


async def test_open_watches_leave_the_request_connections_free(server, monkeypatch):
    """More watches than the requests' pool holds stay open while a request is answered: a
    watch holds a connection of its own, never one of :data:`rest.REQUEST_CONNECTIONS`."""
    monkeypatch.setattr(rest, "REQUEST_CONNECTIONS", 2)
    async with RestClient(server.url, "test", timeout=5) as client:
        events: list = []

        async def watch() -> None:
            async for ev in client.watch(PODS, "default", timeout_seconds=60):
                events.append(ev)
        watches = [asyncio.ensure_future(watch()) for _ in range(3)]
        await asyncio.wait_for(server.connections(3), 10)   # every watch has its connection
        assert await asyncio.wait_for(client.request("GET", "/quick"), 10) == {}
        server.release.set()
        await asyncio.wait_for(asyncio.gather(*watches), 10)
    assert len(events) == 3


async def test_idle_connections_are_kept_for_reuse_until_before_the_apiserver_drops_them(server):
    """Pool connections idle for less than :data:`rest.IDLE_CONNECTION_SECONDS` (60 s, not
    aiohttp's 15 s) are reused, and the client lets go of them before the apiserver's idle
    timeout closes them on its side."""
    from components.apiserver import serving

    async with RestClient(server.url, "test", timeout=5) as client:
        for session in (client.session, client.watch_session):
            assert session.connector is not None
            assert session.connector._keepalive_timeout == rest.IDLE_CONNECTION_SECONDS == 60.0
    assert rest.IDLE_CONNECTION_SECONDS < serving.IDLE_TIMEOUT
