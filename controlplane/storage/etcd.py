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
from typing import AsyncIterator
from urllib.parse import urlparse

from aetcd import rpc

from controlplane.storage.errors import Expired, StorageError, TooLargeResourceVersion, Unavailable


def parse_endpoint(url: str) -> str:
    """``http://host:port`` (or ``host:port``) → gRPC target ``host:port``.

    Raises ValueError for anything else (https is not supported yet).
    """
    u = url.strip()
    if "://" not in u:
        u = "http://" + u
    p = urlparse(u)
    if p.scheme != "http" or not p.hostname or p.path not in ("", "/"):
        raise ValueError(f"invalid etcd server URL {url!r}: expected http://HOST:PORT")
    try:
        port = p.port or 2379
    except ValueError:
        raise ValueError(f"invalid etcd server URL {url!r}: bad port") from None
    return f"{p.hostname}:{port}"


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

    ``events == []`` is a progress notification. ``compact_revision`` > 0 means the
    watch was cancelled because its start revision was compacted.
    """

    revision: int
    events: list
    compact_revision: int = 0
    canceled: bool = False


class EtcdClient:
    """Connection to one etcd endpoint (``http://host:port``); call :meth:`close` when done."""

    def __init__(self, endpoint: str, timeout: float = 10.0) -> None:
        self.target = parse_endpoint(endpoint)
        self.timeout = timeout
        self.channel = rpc.insecure_channel(self.target, options=[
            ("grpc.max_receive_message_length", 64 * 1024 * 1024),
            ("grpc.max_send_message_length", 16 * 1024 * 1024),
        ])
        self.kv = rpc.KVStub(self.channel)
        self.watch_stub = rpc.WatchStub(self.channel)
        self.maintenance = rpc.MaintenanceStub(self.channel)

    async def close(self) -> None:
        await self.channel.close()

    async def status(self, timeout: float | None = None) -> rpc.StatusResponse:
        """Maintenance.Status (used to probe reachability); raises Unavailable."""
        try:
            return await self.maintenance.Status(rpc.StatusRequest(), timeout=timeout or self.timeout)
        except rpc.AioRpcError as e:
            raise translate(e) from None

    async def range(self, key: bytes, range_end: bytes = b"", revision: int = 0, limit: int = 0,
                    count_only: bool = False) -> rpc.RangeResponse:
        """KV.Range; raises Expired / TooLargeResourceVersion / Unavailable."""
        req = rpc.RangeRequest(key=key, range_end=range_end, revision=revision, limit=limit,
                               count_only=count_only)
        try:
            return await self.kv.Range(req, timeout=self.timeout)
        except rpc.AioRpcError as e:
            raise translate(e, key.decode(errors="replace")) from None

    async def txn(self, compare: list, success: list, failure: list | None = None) -> rpc.TxnResponse:
        """KV.Txn with ``rpc.Compare`` / ``rpc.RequestOp`` lists."""
        req = rpc.TxnRequest(compare=compare, success=success, failure=failure or [])
        try:
            return await self.kv.Txn(req, timeout=self.timeout)
        except rpc.AioRpcError as e:
            raise translate(e) from None

    async def compact(self, revision: int) -> None:
        """KV.Compact at ``revision``; an already-compacted revision is not an error."""
        try:
            await self.kv.Compact(rpc.CompactionRequest(revision=revision), timeout=self.timeout)
        except rpc.AioRpcError as e:
            err = translate(e)
            if not isinstance(err, Expired):
                raise err from None

    async def watch(self, key: bytes, range_end: bytes, start_revision: int,
                    progress_notify: bool = True, prev_kv: bool = True,
                    control: asyncio.Queue | None = None) -> AsyncIterator[WatchResponse]:
        """Stream watch responses for ``[key, range_end)`` from ``start_revision``.

        ``control``, if given, receives extra ``rpc.WatchRequest`` messages to send on the
        stream (e.g. a progress request, answered by an empty response at the current revision).

        Yields :class:`WatchResponse` (including empty progress notifications).
        Raises Expired when etcd cancels the watch for compaction, Unavailable on
        connection loss. Stops when the caller stops iterating.
        """
        requests: asyncio.Queue = control if control is not None else asyncio.Queue()
        while not requests.empty():  # stale requests of a previous stream
            requests.get_nowait()
        requests.put_nowait(rpc.WatchRequest(create_request=rpc.WatchCreateRequest(
            key=key, range_end=range_end, start_revision=start_revision,
            progress_notify=progress_notify, prev_kv=prev_kv)))

        async def request_iter():
            while True:
                r = await requests.get()
                if r is None:
                    return
                yield r

        call = self.watch_stub.Watch(request_iter())
        try:
            async for resp in call:
                if resp.compact_revision:
                    raise Expired(f"etcdserver: mvcc: required revision has been compacted "
                                  f"(compact revision {resp.compact_revision})",
                                  key.decode(errors="replace"), resp.compact_revision)
                if resp.canceled:
                    raise StorageError(f"etcd watch canceled: {resp.cancel_reason}")
                if resp.created and not resp.events:
                    continue
                yield WatchResponse(revision=resp.header.revision, events=list(resp.events))
            raise Unavailable("etcd watch stream ended")
        except rpc.AioRpcError as e:
            raise translate(e) from None
        finally:
            call.cancel()
