"""The apiserver's HTTP listener: connection timeouts and graceful shutdown.

kube-apiserver's ``http.Server`` (``staging/src/k8s.io/apiserver/pkg/server/secure_serving.go``)
sets ``ReadHeaderTimeout: 32s`` ("just shy of requestTimeoutUpperBound"), ``IdleTimeout: 90s``
and ``MaxHeaderBytes: 1 MiB``; there is no flag for any. A request line and headers larger than
that (plus Go's 4 KiB read slack) are answered ``431 Request Header Fields Too Large`` and the
connection closed, as Go's server does. Go closes a connection whose request
headers are not complete within ReadHeaderTimeout without answering, so a client that
sends headers slowly (slowloris) or never sends a request cannot hold a connection.

aiohttp has the idle timeout (``keepalive_timeout``) but no header read timeout, so
:class:`HeaderTimeout` adds it: a thin protocol in front of aiohttp's per-connection
``RequestHandler`` that starts a timer when a request may begin (the connection opens,
or the first byte arrives after a response) and closes the transport when it fires;
:func:`track_requests` (a middleware) stops the timer when aiohttp hands the parsed
request to the application and lets a new one start once the handler is done.

:func:`listen` serves an aiohttp application with both timeouts; :meth:`Listener.stop`
stops accepting, runs the application's ``on_shutdown`` hooks (the watch server ends its
streams there, as kube-apiserver's watch handlers return on ``ServerShuttingDownCh``), then
waits up to ``shutdown_timeout`` seconds for in-flight requests.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from typing import Any

from aiohttp import web

from controlplane.log import event

log = logging.getLogger("apiserver")

#: seconds for a request's headers to arrive (``ReadHeaderTimeout``, secure_serving.go)
READ_HEADER_TIMEOUT = 32.0
#: seconds a kept-alive connection may wait for its next request (``IdleTimeout``)
IDLE_TIMEOUT = 90.0
#: bytes of request line and headers at most (``MaxHeaderBytes: 1 << 20``, secure_serving.go);
#: Go's server reads up to this plus 4096 (``initialReadLimitSize``) before it answers 431
MAX_HEADER_BYTES = 1 << 20
HEADER_READ_LIMIT = MAX_HEADER_BYTES + 4096
#: what Go's ``net/http`` writes, then closes, when the head is larger (server.go ``errTooLarge``)
TOO_LARGE = (b"HTTP/1.0 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
             b"Connection: close\r\n\r\n431 Request Header Fields Too Large")


class HeaderTimeout(asyncio.Protocol):
    """One connection: forwards every transport callback to ``inner`` (aiohttp's
    ``RequestHandler``) and closes the connection when a request's headers have not
    arrived ``timeout`` seconds after the connection opened or, on a kept-alive
    connection, after the first byte of the next request."""

    __slots__ = ("inner", "timeout", "transport", "handle", "busy", "seen", "limit")

    def __init__(self, inner: asyncio.Protocol, timeout: float, limit: int = HEADER_READ_LIMIT) -> None:
        self.inner = inner
        self.timeout = timeout
        self.transport: asyncio.Transport | None = None
        self.handle: asyncio.TimerHandle | None = None
        self.busy = False  # a request is with the application
        self.seen = 0  # bytes received since the request began, until the application has it
        self.limit = limit

    def _arm(self) -> None:
        self.seen = 0
        self.handle = asyncio.get_running_loop().call_later(self.timeout, self._expired)

    def _disarm(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None

    def _expired(self) -> None:
        self.handle = None
        t = self.transport
        if t is not None and not t.is_closing():
            peer = t.get_extra_info("peername")
            event(log, "http.header_timeout", logging.DEBUG, peer=f"{peer[0]}:{peer[1]}" if peer else "",
                  seconds=self.timeout)
            t.close()

    def request_started(self) -> None:
        """The request's headers were parsed and the application has it."""
        self._disarm()
        self.busy = True

    def request_finished(self) -> None:
        """The application is done with the request: the next byte starts the timer."""
        self.busy = False

    # -- asyncio.Protocol, forwarded
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self._arm()
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if not self.busy:
            if self.handle is None:
                self._arm()
            self.seen += len(data)
            if self.seen > self.limit:  # the head is too large: Go's 431, then the connection closes
                t = self.transport
                self._disarm()
                if t is not None and not t.is_closing():
                    event(log, "http.header_too_large", logging.DEBUG, bytes=self.seen)
                    t.write(TOO_LARGE)
                    t.close()
                return
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.transport = None
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


@web.middleware
async def track_requests(request: web.Request, handler) -> web.StreamResponse:
    """Tell the connection's :class:`HeaderTimeout` (when it has one) that a request is
    being handled, and when it is done."""
    t = request.transport
    conn = t.get_protocol() if t is not None else None
    if not isinstance(conn, HeaderTimeout):
        return await handler(request)
    conn.request_started()
    try:
        return await handler(request)
    finally:
        conn.request_finished()


class Listener:
    """A listening socket serving ``runner``'s application; see :func:`listen`."""

    def __init__(self, runner: web.AppRunner, server: asyncio.AbstractServer) -> None:
        self.runner = runner
        self.server = server
        sockets: Any = getattr(server, "sockets", None)  # asyncio.Server (AbstractServer declares none)
        self.port: int = sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Stop accepting, run the app's shutdown hooks, wait for in-flight requests
        (at most the runner's ``shutdown_timeout``), then close every connection."""
        self.server.close()
        await self.runner.cleanup()


async def listen(app: web.Application, host: str, port: int, *,
                 read_header_timeout: float = READ_HEADER_TIMEOUT,
                 idle_timeout: float = IDLE_TIMEOUT, shutdown_timeout: float = 2.0,
                 ssl_context: ssl.SSLContext | None = None, reuse_port: bool = False) -> Listener:
    """Serve ``app`` on ``host:port`` (0 = a free port; the chosen one is ``.port``), over TLS
    with ``ssl_context`` (:func:`components.apiserver.tls.server_context`; the header timeout
    then also bounds the TLS handshake, which Go's ``ReadHeaderTimeout`` covers too), else plain
    HTTP. Timeouts in seconds. ``reuse_port``: SO_REUSEPORT (kube-apiserver's
    ``--permit-port-sharing``, ``secure_serving.go`` ``PermitPortSharing``), so several apiservers
    bind the same port and the kernel hashes each new connection to one of them. Raises OSError
    when the address cannot be bound."""
    # aiohttp's own limits (8190 bytes a line or a header, 400 past them) above Go's total, so
    # what Go accepts passes and a larger head gets Go's 431 from HeaderTimeout
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=shutdown_timeout,
                           keepalive_timeout=idle_timeout, max_line_size=HEADER_READ_LIMIT + 4096,
                           max_field_size=HEADER_READ_LIMIT + 4096)
    await runner.setup()
    factory = runner.server
    assert factory is not None
    try:
        server = await asyncio.get_running_loop().create_server(
            lambda: HeaderTimeout(factory(), read_header_timeout), host, port, reuse_address=True,
            reuse_port=reuse_port or None, ssl=ssl_context, ssl_handshake_timeout=read_header_timeout if ssl_context else None)
    except BaseException:
        await runner.cleanup()
        raise
    return Listener(runner, server)
