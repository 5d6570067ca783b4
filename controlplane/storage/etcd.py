"""A thin asyncio etcd3 gRPC client on ``aetcd.rpc`` stubs (KV, Watch, Maintenance).

We call the generated stubs directly instead of aetcd's high-level ``Client``
because the storage layer needs response headers (revisions), ``Compare`` on
``create_revision``/``mod_revision`` in one Txn, and watch responses without
events (progress notifications, ``compact_revision`` on cancel). The gRPC API is
``api/etcdserverpb/rpc.proto`` in etcd-io/etcd; errors follow
``api/v3rpc/rpctypes/error.go``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import json
import socket
from typing import Any, AsyncIterator
from urllib.parse import urlparse

from aetcd import rpc

from controlplane.storage.errors import Expired, StorageError, TooLargeResourceVersion, Unavailable
from controlplane.storage.h2grpc import H2Channel

RANGE, TXN, WATCH = "/etcdserverpb.KV/Range", "/etcdserverpb.KV/Txn", "/etcdserverpb.Watch/Watch"


def parse_endpoint(url: str) -> str:
    """``http(s)://host:port`` (or ``host:port``) → gRPC target ``host:port``.

    Raises ValueError for anything else.
    """
    return _parse(url)[0]


def _parse(url: str) -> tuple[str, bool]:
    u = url.strip()
    if "://" not in u:
        u = "http://" + u
    p = urlparse(u)
    if p.scheme not in ("http", "https") or not p.hostname or p.path not in ("", "/"):
        raise ValueError(f"invalid etcd server URL {url!r}: expected http://HOST:PORT")
    try:
        port = p.port or 2379
    except ValueError:
        raise ValueError(f"invalid etcd server URL {url!r}: bad port") from None
    return f"{p.hostname}:{port}", p.scheme == "https"


def parse_endpoints(urls: str) -> tuple[list[str], bool]:
    """``"http://a:2379,http://b:2379"`` → (``["a:2379", "b:2379"]``, secure). Every URL of
    the list must use the same scheme (etcd's clientv3 takes one transport for all endpoints).
    Raises ValueError for an empty list, a bad URL or mixed schemes."""
    parsed = [_parse(u) for u in urls.split(",") if u.strip()]
    if not parsed:
        raise ValueError(f"invalid etcd server URL list {urls!r}: no URL")
    if len({secure for _, secure in parsed}) > 1:
        raise ValueError(f"invalid etcd server URL list {urls!r}: http:// and https:// mixed")
    return [t for t, _ in parsed], parsed[0][1]


def grpc_target(targets: list[str]) -> str:
    """The gRPC target for ``host:port`` endpoints: the one endpoint as it is, or several as one
    static address list (gRPC's ``ipv4:a:p,b:p`` / ``ipv6:[a]:p,...`` scheme), a host name
    resolved once here. Raises ValueError when a name does not resolve or families mix."""
    if len(targets) == 1:
        return targets[0]
    addrs: list[str] = []
    families = set()
    for t in targets:
        host, _, port = t.rpartition(":")
        host = host.strip("[]")
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            try:
                ip = ipaddress.ip_address(socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)[0][4][0])
            except (OSError, IndexError) as e:
                raise ValueError(f"etcd server {t!r} does not resolve: {e}") from None
        families.add(ip.version)
        addrs.append(f"[{ip}]:{port}" if ip.version == 6 else f"{ip}:{port}")
    if len(families) > 1:
        raise ValueError(f"etcd servers {','.join(targets)}: IPv4 and IPv6 mixed")
    return f"ipv{families.pop()}:{','.join(addrs)}"


#: how many times a repeatable call (Range, Status) is sent again on UNAVAILABLE, to the next
#: live member (clientv3's retry interceptor: ``defaultRepeatablePolicy`` retries reads;
#: Txn / Put are not retried, as ``nonRepeatable``, since the first may have been applied)
READ_RETRIES = 3


@dataclasses.dataclass(frozen=True)
class EtcdTLS:
    """The apiserver's ``--etcd-cafile`` / ``--etcd-certfile`` / ``--etcd-keyfile``
    (``staging/src/k8s.io/apiserver/pkg/storage/storagebackend/config.go`` ``TransportConfig``):
    paths of PEM files; an empty one is not used (no CA: the system's roots)."""

    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""

    def credentials(self) -> Any:
        """``grpc.ssl_channel_credentials`` from the files; ValueError naming an unreadable one."""
        import grpc

        from controlplane.pki import read_bytes
        return grpc.ssl_channel_credentials(root_certificates=read_bytes(self.ca_file, "--etcd-cafile"),
                                            private_key=read_bytes(self.key_file, "--etcd-keyfile"),
                                            certificate_chain=read_bytes(self.cert_file, "--etcd-certfile"))


def prefix_end(prefix: bytes) -> bytes:
    """The etcd ``range_end`` covering every key that starts with ``prefix``."""
    b = bytearray(prefix)
    for i in range(len(b) - 1, -1, -1):
        if b[i] < 0xFF:
            b[i] += 1
            return bytes(b[: i + 1])
    return b"\0"


def translate(e: Exception, key: str = "") -> Exception:
    """Map a gRPC error to a storage error (compacted → Expired, future → TooLarge...)."""
    if isinstance(e, rpc.AioRpcError):
        details = e.details() or ""
        code = e.code()
        if "compacted" in details:
            return Expired(details, key)
        if "future revision" in details:
            return TooLargeResourceVersion(details, key)
        if code in (rpc.StatusCode.UNAVAILABLE, rpc.StatusCode.DEADLINE_EXCEEDED):
            return Unavailable(f"etcd unavailable: {details}", key)
        if code == rpc.StatusCode.RESOURCE_EXHAUSTED and details.endswith("database space exceeded"):
            return StorageError(details, key)  # etcd's own text, as kube-apiserver answers it (500)
        return StorageError(f"etcd error {code.name}: {details}", key)
    return e


@dataclasses.dataclass
class WatchResponse:
    """One etcd watch response: ``events`` (``rpc.Event`` list) at ``revision``.

    ``events == []`` is a progress notification: every event of the watched range up to
    ``revision`` has been yielded before it.
    """

    revision: int
    events: list[rpc.Event]


def progress_trustworthy(version: str) -> bool:
    """Whether an etcd server of ``version`` answers a progress request only when every watcher
    of the stream is synced, in order with their events.

    Older servers answer at once with their current revision, possibly ahead of events still
    to be sent (etcd issues 15220 and 17507, fixed in 3.4.31 and 3.5.13); the rule is
    Kubernetes' ``storage/feature/feature_support_checker.go``. An unparsable version → False.
    """
    try:
        major, minor, patch = (int(p) for p in version.split("-")[0].split(".")[:3])
    except ValueError:
        return False
    v = (major, minor, patch)
    return v >= (3, 4, 31) and not (3, 5, 0) <= v < (3, 5, 13)


class EtcdClient:
    """Connection to etcd: one endpoint (``http://host:port``, or ``https://`` with ``tls``: a gRPC
    secure channel verified against ``tls.ca_file``, presenting ``tls.cert_file`` / ``key_file``)
    or a comma-separated list of a cluster's members (``--etcd-servers a,b,c``); call
    :meth:`close` when done.

    Several endpoints are one gRPC channel with a static address list and the ``round_robin``
    policy, as etcd's clientv3 (3.5) balances its endpoints (``client/v3/internal/resolver``):
    calls are spread over the members whose connection is READY, a member that dies leaves the
    rotation (its calls in flight fail UNAVAILABLE) and rejoins when it answers again. A read
    that fails UNAVAILABLE is sent again (:data:`READ_RETRIES`, on another member); a write is
    not, and a watch ends with Unavailable so its caller resumes from its last revision (on
    another member).

    Every :meth:`watch` is a new :class:`WatchStream`: one gRPC call per watch attempt."""

    #: the gRPC channel's options
    OPTIONS = [
        ("grpc.max_receive_message_length", 64 * 1024 * 1024),
        ("grpc.max_send_message_length", 16 * 1024 * 1024),
        # a restarted etcd is reconnected to within 2 s (gRPC's default back-off grows to 120 s)
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.min_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 2000),
        # a half-dead connection fails its calls (and their watches) after 30 s + 10 s: the
        # apiserver's etcd client keepalive (``storagebackend/factory/etcd3.go``)
        ("grpc.keepalive_time_ms", 30_000),
        ("grpc.keepalive_timeout_ms", 10_000),
    ]

    def __init__(self, endpoint: str, timeout: float = 10.0, tls: EtcdTLS | None = None) -> None:
        self.targets, secure = parse_endpoints(endpoint)
        self.target = grpc_target(self.targets)
        self.timeout = timeout
        options: list[tuple[str, Any]] = list(self.OPTIONS)
        if len(self.targets) > 1:
            options += [("grpc.service_config", json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})),
                        # the certificate is checked against the first member's name, as clientv3
                        # dials every endpoint with its own host as the TLS server name
                        ("grpc.default_authority", self.targets[0])]
        if secure:  # as etcd's clientv3: the URL's scheme decides (``client/v3/internal/endpoint``)
            creds = (tls or EtcdTLS()).credentials()
            self.channel = rpc.secure_channel(self.target, creds, options=options)
        else:
            self.channel = rpc.insecure_channel(self.target, options=options)
        self.kv = rpc.KVStub(self.channel)
        self.watch_stub = rpc.WatchStub(self.channel)
        self.maintenance = rpc.MaintenanceStub(self.channel)
        self.lease = rpc.LeaseStub(self.channel)
        self._progress_ok: bool | None = None
        #: Range, Txn and Watch of a single plaintext endpoint: our asyncio HTTP/2 client (no
        #: poller thread: a third of grpc.aio's CPU per call); the other calls stay on grpc
        self._unary: H2Channel | None = None if secure or len(self.targets) > 1 else H2Channel(self.target)

    async def close(self) -> None:
        if self._unary is not None:
            await self._unary.close()
        await self.channel.close()

    async def status(self, timeout: float | None = None) -> rpc.StatusResponse:
        """Maintenance.Status (used to probe reachability); raises Unavailable."""
        for attempt in range(READ_RETRIES + 1):
            try:
                return await self.maintenance.Status(rpc.StatusRequest(), timeout=timeout or self.timeout)
            except rpc.AioRpcError as e:
                if not self._retry(e, attempt):
                    raise translate(e) from None
        raise AssertionError("unreachable")

    def _retry(self, e: rpc.AioRpcError, attempt: int) -> bool:
        """Whether a repeatable call that failed with ``e`` is sent again: UNAVAILABLE with more
        than one member to try, :data:`READ_RETRIES` times at most."""
        return len(self.targets) > 1 and attempt < READ_RETRIES and e.code() == rpc.StatusCode.UNAVAILABLE

    async def range(self, key: bytes, range_end: bytes = b"", revision: int = 0, limit: int = 0,
                    count_only: bool = False, keys_only: bool = False,
                    min_mod_revision: int = 0) -> rpc.RangeResponse:
        """KV.Range; raises Expired / TooLargeResourceVersion / Unavailable.

        ``min_mod_revision`` drops keys modified before it from ``kvs`` (``count`` still counts
        every key of the range, as etcd's ``applierV3backend.Range``)."""
        req = rpc.RangeRequest(key=key, range_end=range_end, revision=revision, limit=limit,
                               count_only=count_only, keys_only=keys_only,
                               min_mod_revision=min_mod_revision)
        for attempt in range(READ_RETRIES + 1):
            try:
                if self._unary is not None:
                    return await self._unary.call(RANGE, req, rpc.RangeResponse.FromString, self.timeout)
                return await self.kv.Range(req, timeout=self.timeout)
            except rpc.AioRpcError as e:
                if not self._retry(e, attempt):
                    raise translate(e, key.decode(errors="replace")) from None
        raise AssertionError("unreachable")

    async def txn(self, compare: list[rpc.Compare], success: list[rpc.RequestOp],
                  failure: list[rpc.RequestOp] | None = None) -> rpc.TxnResponse:
        """KV.Txn with ``rpc.Compare`` / ``rpc.RequestOp`` lists."""
        req = rpc.TxnRequest(compare=compare, success=success, failure=failure or [])
        try:
            if self._unary is not None:
                return await self._unary.call(TXN, req, rpc.TxnResponse.FromString, self.timeout)
            return await self.kv.Txn(req, timeout=self.timeout)
        except rpc.AioRpcError as e:
            raise translate(e) from None

    async def lease_grant(self, ttl: int) -> int:
        """Lease.LeaseGrant of ``ttl`` seconds; the lease's ID. Raises Unavailable / StorageError."""
        try:
            resp = await self.lease.LeaseGrant(rpc.LeaseGrantRequest(TTL=ttl), timeout=self.timeout)
        except rpc.AioRpcError as e:
            raise translate(e) from None
        lease_id: int = resp.ID
        return lease_id

    async def compact(self, revision: int) -> None:
        """KV.Compact at ``revision``; an already-compacted revision is not an error."""
        try:
            await self.kv.Compact(rpc.CompactionRequest(revision=revision), timeout=self.timeout)
        except rpc.AioRpcError as e:
            err = translate(e)
            if not isinstance(err, Expired):
                raise err from None

    async def progress_supported(self) -> bool:
        """Whether this etcd's answers to progress requests can be trusted
        (:func:`progress_trustworthy` of Maintenance.Status's version); asked once, again after
        :meth:`forget_server` (the server may have been replaced). Raises Unavailable."""
        if self._progress_ok is None:
            self._progress_ok = progress_trustworthy((await self.status()).version)
        return self._progress_ok

    def forget_server(self) -> None:
        """The connection was lost: ask the server's version again next time."""
        self._progress_ok = None

    def watch(self, key: bytes, range_end: bytes, start_revision: int,
              progress_notify: bool = True, prev_kv: bool = True) -> "WatchStream":
        """A new :class:`WatchStream` (its own gRPC call) for ``[key, range_end)`` from
        ``start_revision``; the call starts when iteration starts."""
        return WatchStream(self, rpc.WatchCreateRequest(
            key=key, range_end=range_end, start_revision=start_revision,
            progress_notify=progress_notify, prev_kv=prev_kv))


class WatchStream:
    """One etcd ``Watch`` gRPC call carrying one watcher; one per watch attempt.

    ``async for resp in stream`` yields :class:`WatchResponse` (events, or a progress
    notification at a revision all of whose events were yielded before). Each stream has its
    own request queue, so nothing sent for one call can reach another; when iteration ends
    (error, caller stopping, :meth:`close`) the request iterator is ended and the call cancelled.

    Progress notifications yielded are only those etcd orders after the watcher's events:
    periodic ones (``progress_notify``, watch_id = ours: sent to synced watchers only, through
    the watcher's own channel) and, from a server whose answers can be trusted
    (:meth:`EtcdClient.progress_supported`), answers to :meth:`request_progress` (watch_id -1:
    sent once every watcher of the stream is synced). An old server's answer (at its current
    revision, maybe ahead of events still queued: etcd issue 15220) is dropped. Sources:
    ``server/etcdserver/api/v3rpc/watch.go`` and ``server/storage/mvcc/watchable_store.go``
    (``progressIfSync``), 3.4 and 3.5.

    Raises Expired when etcd cancels the watch for compaction (``compact_revision``) or when
    etcd's revision is below the start revision (its history was lost: the caller relists),
    Unavailable on connection loss or when the stream ends, StorageError when etcd refuses the
    watch.
    """

    def __init__(self, client: EtcdClient, create: rpc.WatchCreateRequest) -> None:
        self.client = client
        self.create = create
        self.watch_id: int | None = None   # set by the created response
        self.created_revision = 0          # etcd's revision when the watcher was created
        self.synced = False                # known to be caught up with etcd's revision
        self.progress_ok = False           # the server's progress answers are trusted
        self.closed = False
        #: the requests to send on the call (create, progress); None ends them
        self._requests: asyncio.Queue[rpc.WatchRequest | None] = asyncio.Queue()
        self._call: Any = None  # the gRPC stream-stream call (aetcd ships no types)

    @property
    def created(self) -> bool:
        return self.watch_id is not None

    def request_progress(self) -> bool:
        """Ask etcd for a progress notification on this stream; False (nothing sent) when the
        stream is closed, its watcher not created yet, or the server's answer would not be
        trusted. The server answers once its watchers are synced, or (etcd >= 3.4.31 / 3.5.13)
        drops the request if they are not: callers ask again while they wait."""
        if self.closed or not self.created or not self.progress_ok:
            return False
        self._requests.put_nowait(rpc.WatchRequest(progress_request=rpc.WatchProgressRequest()))
        return True

    def close(self) -> None:
        """End the request iterator and cancel the call (idempotent)."""
        if self.closed:
            return
        self.closed = True
        self._requests.put_nowait(None)
        if self._call is not None:
            self._call.cancel()

    async def _request_iter(self) -> AsyncIterator[rpc.WatchRequest]:
        while True:
            r = await self._requests.get()
            if r is None:
                return
            yield r

    def __aiter__(self) -> AsyncIterator[WatchResponse]:
        return self._responses()

    async def _responses(self) -> AsyncIterator[WatchResponse]:
        key = self.create.key.decode(errors="replace")
        start = self.create.start_revision
        try:
            if self.closed:
                return
            self.progress_ok = await self.client.progress_supported()
            self._requests.put_nowait(rpc.WatchRequest(create_request=self.create))
            unary = self.client._unary
            self._call = unary.stream(WATCH, rpc.WatchResponse.FromString, self._request_iter()) if unary is not None \
                else self.client.watch_stub.Watch(self._request_iter())
            async for resp in self._call:
                if resp.created and self.watch_id is None:
                    if resp.canceled:
                        raise StorageError(f"etcd watch canceled: {resp.cancel_reason}", key)
                    self.watch_id = resp.watch_id
                    self.created_revision = rev = resp.header.revision
                    if start and rev < start - 1:
                        raise Expired(f"etcd is at revision {rev}, before the watch's start "
                                      f"revision {start}: its history was lost", key, rev)
                    # etcd creates the watcher synced when it starts after the current revision
                    self.synced = start == 0 or start > rev
                    continue
                if resp.compact_revision:
                    raise Expired(f"etcdserver: mvcc: required revision has been compacted "
                                  f"(compact revision {resp.compact_revision})", key, resp.compact_revision)
                if resp.canceled:
                    raise StorageError(f"etcd watch canceled: {resp.cancel_reason}", key)
                if resp.events:
                    if resp.events[-1].kv.mod_revision >= self.created_revision:
                        self.synced = True
                    yield WatchResponse(revision=resp.header.revision, events=list(resp.events))
                elif resp.watch_id == self.watch_id or (resp.watch_id == -1 and self.progress_ok):
                    self.synced = True
                    yield WatchResponse(revision=resp.header.revision, events=[])
            raise Unavailable("etcd watch stream ended", key)
        except rpc.AioRpcError as e:
            err = translate(e, key)
            if isinstance(err, Unavailable):
                self.client.forget_server()
            raise err from None
        finally:
            self.close()
