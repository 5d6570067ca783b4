"""Run the embedded etcd: ``serve()`` for in-process use (tests), :class:`EtcdServer` handle.

Source of the behaviour: etcd ``embed`` (listeners from ``--listen-client-urls``, background
lease expiry every 500 ms as in ``lessor.runLoop``, progress notifications every
``--experimental-watch-progress-notify-interval``, default 10 minutes).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any
from urllib.parse import parse_qs, urlsplit

import grpc
from aetcd.rpc import rpc_pb2

from controlplane import log as cplog

from . import compactor
from .core import MAX_REQUEST_BYTES, QUOTA_BACKEND_BYTES, Core
from .errors import EtcdError
from .metrics import EtcdMetrics
from .services import ETCD_VERSION, add_services
from .transport import (
    HANDSHAKE_TIMEOUT,
    KEEPALIVE_INTERVAL,
    KEEPALIVE_MIN_TIME,
    KEEPALIVE_TIMEOUT,
    TEXT,
    GrpcServer,
    server_tls_context,
)

log = logging.getLogger("etcd")

#: etcd adds this to --max-request-bytes for the gRPC receive limit (embed/serve.go grpcOverheadBytes)
GRPC_OVERHEAD_BYTES = 512 * 1024
LEASE_TICK = 0.5
#: the gRPC transports: ours on asyncio (default) or grpcio's grpc.aio
TRANSPORTS = ("asyncio", "grpcio")


def parse_url(url: str) -> tuple[str, int]:
    """``http(s)://host:port`` -> (host, port). Raises ValueError for other schemes or no port."""
    u = urlsplit(url.strip())
    if u.scheme not in ("http", "https", ""):
        raise ValueError(f"unsupported URL scheme in {url!r} (only http:// and https:// are served)")
    host = u.hostname if u.scheme else url.rsplit(":", 1)[0]
    try:
        port = u.port if u.scheme else int(url.rsplit(":", 1)[1])
    except (ValueError, IndexError):
        raise ValueError(f"invalid port in URL {url!r}") from None
    if not host or port is None:
        raise ValueError(f"URL {url!r} needs a host and a port")
    return host, port


class EtcdServer:
    """A running embedded etcd. ``port`` is the first bound client port, ``client_urls`` the
    actual listen URLs, ``core`` the :class:`~.core.Core`. Stop with :meth:`stop`."""

    def __init__(self, core: Core, server, urls: list[str], ports: list[int],
                 tasks: list[asyncio.Task]) -> None:
        self.core = core
        self.grpc = server
        self.client_urls = urls
        self.ports = ports
        self.port = ports[0]
        self._tasks = tasks
        self._stopped = asyncio.Event()

    @property
    def endpoint(self) -> str:
        """``host:port`` of the first listener (for etcdctl --endpoints / aetcd)."""
        return urlsplit(self.client_urls[0]).netloc

    async def stop(self, grace: float = 1.0) -> None:
        """Stop serving, flush the WAL, write a snapshot. Idempotent."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        self.core.hub.close_all()
        await self.grpc.stop(grace)
        await self.core.close()
        cplog.event(log, "etcd.stopped", revision=self.core.store.committed, wal_groups=self.core.stats_groups,
                    wal_writes=self.core.stats_writes)


async def _lease_loop(core: Core) -> None:
    while True:
        await asyncio.sleep(LEASE_TICK)
        if core.expire_leases():
            fut = core.durable()
            if fut is not None:
                with contextlib.suppress(EtcdError):  # WAL write failed: rolled back, retried next tick
                    await fut


async def _progress_loop(core: Core, interval: float) -> None:
    while True:
        await asyncio.sleep(interval)
        core.hub.progress()


JSON = "application/json"
PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"  # the Prometheus text exposition format


def _http_get(core: Core, metrics: EtcdMetrics | None = None):
    """etcd's HTTP endpoints beside gRPC (etcd ``etcdserver/api/etcdhttp``): ``/health`` (ok unless
    an alarm is raised or the WAL failed; 503 then, see :func:`_health_reason`), ``/version``, and ``/metrics``
    (:mod:`.metrics`: etcd's own families in the Prometheus text format); anything else 404."""
    import json
    if metrics is None:
        metrics = EtcdMetrics(core, ETCD_VERSION)

    def dump(obj) -> bytes:
        return json.dumps(obj, separators=(",", ":")).encode()

    def get(target: str) -> tuple[bytes, str, str]:
        """``target`` (path and query) -> (body, HTTP status line, content type)."""
        path, _, query = target.partition("?")
        if path == "/version":
            return dump({"etcdserver": ETCD_VERSION, "etcdcluster": ETCD_VERSION.rsplit(".", 1)[0] + ".0"}), "200 OK", JSON
        if path == "/health":
            reason = _health_reason(core, parse_qs(query).get("exclude", []))
            body = dump({"health": "false" if reason else "true", "reason": reason})
            return body, "503 Service Unavailable" if reason else "200 OK", JSON
        if path == "/metrics":
            return metrics.text(), "200 OK", PROMETHEUS_TEXT
        return b"404 page not found\n", "404 Not Found", TEXT

    return get


def _health_reason(core: Core, excluded: list[str]) -> str:
    """Why ``/health`` is false, or "" (etcd 3.5 ``etcdhttp/health.go``: the first active alarm not
    in ``?exclude=`` gives ``ALARM NOSPACE`` / ``ALARM CORRUPT`` / ``ALARM UNKNOWN``; then the
    range check — ours fails only once a WAL failure stopped writes)."""
    for _, alarm in core.alarms:
        name = rpc_pb2.AlarmType.Name(alarm)
        if name not in excluded:
            return f"ALARM {name}" if alarm in (rpc_pb2.NOSPACE, rpc_pb2.CORRUPT) else "ALARM UNKNOWN"
    return core._broken or ""


def _grpcio_credentials(cert_file: str, key_file: str, trusted_ca_file: str, client_cert_auth: bool):
    """grpcio's server credentials for the same files (``grpc.ssl_server_credentials``)."""
    from controlplane.pki import read_bytes
    pair = (read_bytes(key_file, "--key-file") or b"", read_bytes(cert_file, "--cert-file") or b"")
    return grpc.ssl_server_credentials([pair],
                                       root_certificates=read_bytes(trusted_ca_file, "--trusted-ca-file"),
                                       require_client_auth=client_cert_auth)


async def serve(listen: list[str], data_dir: str | None = None, *, name: str = "default",
                advertise: list[str] | None = None, peer_urls: list[str] | None = None,
                auto_compaction_mode: str = "revision", auto_compaction_retention: str = "10000",
                max_request_bytes: int = MAX_REQUEST_BYTES,
                quota_backend_bytes: int = QUOTA_BACKEND_BYTES,
                progress_notify_interval: float = 600.0,
                snapshot_count: int | None = None, transport: str = "asyncio",
                grpc_keepalive_min_time: float = KEEPALIVE_MIN_TIME,
                grpc_keepalive_interval: float = KEEPALIVE_INTERVAL,
                grpc_keepalive_timeout: float = KEEPALIVE_TIMEOUT,
                handshake_timeout: float = HANDSHAKE_TIMEOUT, cert_file: str = "", key_file: str = "",
                trusted_ca_file: str = "", client_cert_auth: bool = False) -> EtcdServer:
    """Start an embedded etcd3 server and return its handle once it is serving.

    ``listen``: client URLs (``http://host:port``; port 0 picks a free port). ``data_dir``: None
    or ``""`` for memory only. ``advertise``: client URLs reported by MemberList (default: the
    actual listen URLs). ``transport``: ``asyncio`` (:mod:`.transport`, default) or ``grpcio``
    (grpc.aio). ``grpc_keepalive_*`` (seconds, etcd's ``--grpc-keepalive-*`` flags) and
    ``handshake_timeout`` (seconds to send the HTTP/2 preface or an HTTP/1.1 request head): the
    connection limits of :class:`~.transport.GrpcServer` (the keepalive ones also for grpcio).
    ``https://`` listen URLs serve TLS with ``cert_file`` / ``key_file``, and with
    ``client_cert_auth`` only to clients whose certificate ``trusted_ca_file`` signed (etcd's
    ``--cert-file``, ``--key-file``, ``--trusted-ca-file``, ``--client-cert-auth``;
    :func:`~.transport.server_tls_context`). Raises
    ValueError for bad URLs / compaction settings / an unknown transport / TLS files and
    :class:`~.wal.DataDirError` for an unusable data dir.
    """
    if transport not in TRANSPORTS:
        raise ValueError(f"unknown gRPC transport {transport!r} (one of: {', '.join(TRANSPORTS)})")
    retention = compactor.parse_retention(auto_compaction_mode, auto_compaction_retention)
    addrs = [parse_url(u) for u in listen]
    if not addrs:
        raise ValueError("no --listen-client-urls given")
    secure = [u.strip().startswith("https://") for u in listen]
    tls_context = None
    if any(secure):
        if not (cert_file and key_file):
            raise ValueError("https:// in --listen-client-urls needs --cert-file and --key-file")
        tls_context = server_tls_context(cert_file, key_file, trusted_ca_file, client_cert_auth)
    kwargs: dict[str, Any] = {"snapshot_count": snapshot_count} if snapshot_count else {}
    core = Core(name=name, data_dir=data_dir or None, max_request_bytes=max_request_bytes,
                quota_backend_bytes=quota_backend_bytes, **kwargs)
    core.recover()
    server: GrpcServer | grpc.aio.Server
    metrics = EtcdMetrics(core, ETCD_VERSION)
    if transport == "asyncio":
        server = GrpcServer(max_request_bytes + GRPC_OVERHEAD_BYTES, http_get=_http_get(core, metrics),
                            handshake_timeout=handshake_timeout, keepalive_min_time=grpc_keepalive_min_time,
                            keepalive_interval=grpc_keepalive_interval, keepalive_timeout=grpc_keepalive_timeout)
    else:
        server = grpc.aio.server(options=[
            ("grpc.max_receive_message_length", max_request_bytes + GRPC_OVERHEAD_BYTES),
            ("grpc.max_send_message_length", 2 ** 31 - 1),
            ("grpc.max_concurrent_streams", 2 ** 31 - 1),
            ("grpc.so_reuseport", 0),
            # etcd's --grpc-keepalive-* as grpc C-core's server options (0 = the option unset)
            *((k, int(v * 1000)) for k, v in (
                ("grpc.keepalive_time_ms", grpc_keepalive_interval),
                ("grpc.keepalive_timeout_ms", grpc_keepalive_timeout),
                ("grpc.http2.min_recv_ping_interval_without_data_ms", grpc_keepalive_min_time)) if v > 0),
        ])
    add_services(server, core, peer_urls)
    metrics.attach(core, server)
    urls, ports = [], []
    for (host, port), tls in zip(addrs, secure):
        bind_host = f"[{host}]" if ":" in host else host
        try:
            if not tls:
                bound = server.add_insecure_port(f"{bind_host}:{port}")
            elif isinstance(server, GrpcServer):
                assert tls_context is not None
                bound = server.add_secure_port(f"{bind_host}:{port}", tls_context)
            else:
                bound = server.add_secure_port(f"{bind_host}:{port}", _grpcio_credentials(
                    cert_file, key_file, trusted_ca_file, client_cert_auth))
        except (RuntimeError, OSError):
            bound = 0
        if not bound:
            raise ValueError(f"cannot listen on {host}:{port}")
        ports.append(bound)
        urls.append(f"{'https' if tls else 'http'}://{bind_host}:{bound}")
    core.client_urls = list(advertise) if advertise else urls
    await server.start()
    tasks = [asyncio.create_task(_lease_loop(core)),
             asyncio.create_task(_progress_loop(core, progress_notify_interval)),
             asyncio.create_task(compactor.run(core, auto_compaction_mode, retention))]
    cplog.event(log, "etcd.ready", listen=",".join(urls), member=name, data_dir=data_dir or "",
                revision=core.store.rev, transport=transport, auto_compaction=f"{auto_compaction_mode}:{auto_compaction_retention}")
    return EtcdServer(core, server, urls, ports, tasks)
