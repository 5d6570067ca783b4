"""The etcd3 gRPC services (KV, Watch, Lease, Maintenance, Cluster, Auth) over a :class:`~.core.Core`.

Uses the servicer base classes and messages generated from etcd's ``rpc.proto`` that ship with
aetcd (``aetcd.rpc.rpc_pb2_grpc``). Errors leave as etcd's gRPC code + message
(:mod:`.errors`); every method this server does not provide answers UNIMPLEMENTED, as an etcd
built without it would.
"""

from __future__ import annotations

import functools
import inspect

import grpc
from aetcd.rpc import rpc_pb2, rpc_pb2_grpc

from . import errors
from .core import Core
from .watch import WatchStream

#: the version reported by Maintenance.Status: the etcd 3.5 API of aetcd's protos, with the
#: progress-request semantics of 3.5.13 (clients such as Kubernetes' apiserver gate
#: RequestWatchProgress on >= 3.5.13, ``storage/feature/feature_support_checker.go``)
ETCD_VERSION = "3.5.13"
DEFAULT_PEER_URL = "http://localhost:2380"


async def _unimplemented(self, request, context):
    await context.abort(grpc.StatusCode.UNIMPLEMENTED, "unknown method")


def _finish(cls):
    """Make every servicer method not defined by ``cls`` itself an async UNIMPLEMENTED."""
    for base in cls.__mro__[1:]:
        if not base.__name__.endswith("Servicer"):
            continue
        for name, fn in vars(base).items():
            if inspect.isfunction(fn) and not name.startswith("_") and name not in vars(cls):
                setattr(cls, name, _unimplemented)
    return cls


def _unary(method):
    """A write: run ``method(self, request) -> response``, answer once the WAL has it; map
    EtcdError to gRPC status. ``handler.call_sync`` is the same without a coroutine, for
    :mod:`.transport` (returns ``(response, awaitable | None)``, raises EtcdError)."""

    @functools.wraps(method)
    async def handler(self, request, context):
        try:
            resp = method(self, request)
            fut = self.core.durable()
            if fut is not None:
                await fut
            return resp
        except errors.EtcdError as e:
            await context.abort(e.code, e.message)

    def call_sync(self, request):
        return method(self, request), self.core.durable()

    setattr(handler, "call_sync", call_sync)  # read by transport._Method: the fast path without a Task
    return handler


def _read(method):
    """A read: ``method(self, request) -> response`` answered at once (``call_sync`` as in :func:`_unary`)."""

    @functools.wraps(method)
    async def handler(self, request, context):
        try:
            return method(self, request)
        except errors.EtcdError as e:
            await context.abort(e.code, e.message)

    def call_sync(self, request):
        return method(self, request), None

    setattr(handler, "call_sync", call_sync)  # read by transport._Method: the fast path without a Task
    return handler


@_finish
class KVService(rpc_pb2_grpc.KVServicer):
    """etcdserverpb.KV."""

    def __init__(self, core: Core) -> None:
        self.core = core

    @_read
    def Range(self, request):
        return self.core.range(request)

    @_unary
    def Put(self, request):
        return self.core.put(request)

    @_unary
    def DeleteRange(self, request):
        return self.core.delete_range(request)

    @_unary
    def Txn(self, request):
        return self.core.txn(request)

    @_unary
    def Compact(self, request):
        return self.core.compact(request)


@_finish
class WatchService(rpc_pb2_grpc.WatchServicer):
    """etcdserverpb.Watch: one :class:`~.watch.WatchStream` per gRPC stream."""

    def __init__(self, core: Core) -> None:
        self.core = core

    async def Watch(self, request_iterator, context):
        await WatchStream(self.core.hub).run(request_iterator, context)
        if self.core.hub.stopped:  # as etcd's ErrGRPCStopped: clients reconnect instead of ending
            await context.abort(errors.STOPPED.code, errors.STOPPED.message)


@_finish
class LeaseService(rpc_pb2_grpc.LeaseServicer):
    """etcdserverpb.Lease."""

    def __init__(self, core: Core) -> None:
        self.core = core

    @_unary
    def LeaseGrant(self, request):
        return self.core.lease_grant(request)

    @_unary
    def LeaseRevoke(self, request):
        return self.core.lease_revoke(request.ID)

    async def LeaseTimeToLive(self, request, context):
        await self.core.settled()
        return self.core.lease_ttl(request)

    async def LeaseLeases(self, request, context):
        await self.core.settled()
        return rpc_pb2.LeaseLeasesResponse(
            header=self.core.header(),
            leases=[rpc_pb2.LeaseStatus(ID=i) for i in self.core.lessor.leases])

    async def LeaseKeepAlive(self, request_iterator, context):
        core = self.core
        async for req in request_iterator:
            ttl = await core.lease_renew(req.ID)
            await context.write(rpc_pb2.LeaseKeepAliveResponse(header=core.header(), ID=req.ID, TTL=ttl))


@_finish
class MaintenanceService(rpc_pb2_grpc.MaintenanceServicer):
    """etcdserverpb.Maintenance: Status, Alarm, Snapshot (bbolt), Hash/HashKV (our own hash), Defragment (no-op)."""

    def __init__(self, core: Core) -> None:
        self.core = core

    async def Status(self, request, context):
        c = self.core
        size = c.store.size + 4096
        return rpc_pb2.StatusResponse(
            header=c.header(), version=ETCD_VERSION, dbSize=size, dbSizeInUse=size,
            leader=c.member_id, raftIndex=c.durable_index, raftTerm=c.raft_term,
            raftAppliedIndex=c.durable_index,
            errors=[f"memberID:{m} alarm:{rpc_pb2.AlarmType.Name(a)} " for m, a in c.alarms])

    async def Alarm(self, request, context):
        return self.core.alarm(request)

    async def Snapshot(self, request, context):
        """The backend database as bbolt, in 32 KiB chunks, the last one being its SHA-256
        (etcd ``v3rpc/maintenance.go``): ``etcdctl snapshot save/status/restore`` work on it."""
        data = await self.core.backend_snapshot()
        step = 32 * 1024
        for off in range(0, len(data), step):
            blob = data[off:off + step]
            await context.write(rpc_pb2.SnapshotResponse(header=self.core.header(), blob=blob,
                                                         remaining_bytes=len(data) - off - len(blob)))

    async def Hash(self, request, context):
        return rpc_pb2.HashResponse(header=self.core.header(), hash=self.core.hash_kv()[0])

    async def HashKV(self, request, context):
        try:
            h, compact = self.core.hash_kv(request.revision)
        except errors.EtcdError as e:
            await context.abort(e.code, e.message)
        return rpc_pb2.HashKVResponse(header=self.core.header(), hash=h, compact_revision=compact)

    async def Defragment(self, request, context):
        return rpc_pb2.DefragmentResponse(header=self.core.header())


@_finish
class ClusterService(rpc_pb2_grpc.ClusterServicer):
    """etcdserverpb.Cluster: MemberList of this single member."""

    def __init__(self, core: Core, peer_urls: list[str] | None = None) -> None:
        self.core = core
        self.peer_urls = peer_urls or [DEFAULT_PEER_URL]

    async def MemberList(self, request, context):
        c = self.core
        member = rpc_pb2.Member(ID=c.member_id, name=c.name, peerURLs=self.peer_urls,
                                clientURLs=c.client_urls)
        return rpc_pb2.MemberListResponse(header=c.header(), members=[member])


@_finish
class AuthService(rpc_pb2_grpc.AuthServicer):
    """etcdserverpb.Auth: auth is never enabled."""

    def __init__(self, core: Core) -> None:
        self.core = core

    async def AuthStatus(self, request, context):
        return rpc_pb2.AuthStatusResponse(header=self.core.header(), enabled=False)


class _GenericOnly:
    """A view of a ``grpc.aio.Server`` that takes the generated code's handlers as *generic* handlers only.

    grpc.aio's server loop waits (``asyncio.wait(FIRST_COMPLETED)``) on one pending call future
    per *registered* method, i.e. on ~42 futures for every incoming RPC — about half the server's
    CPU per Put at 64 concurrent clients. Generic handlers share one pending future; method lookup
    stays a dict lookup. (grpc ``_cython/_cygrpc/aio/server.pyx.pxi`` ``_server_main_loop``.)
    """

    def __init__(self, server: grpc.aio.Server) -> None:
        self.add_generic_rpc_handlers = server.add_generic_rpc_handlers

    def add_registered_method_handlers(self, service: str, handlers: dict) -> None:
        pass


def add_services(server, core: Core, peer_urls: list[str] | None = None) -> None:
    """Register every etcd3 service of ``core`` on ``server``: a :class:`~.transport.GrpcServer`,
    or a ``grpc.aio.Server`` (then as generic handlers, see :class:`_GenericOnly`)."""
    target = _GenericOnly(server) if isinstance(server, grpc.aio.Server) else server
    rpc_pb2_grpc.add_KVServicer_to_server(KVService(core), target)
    rpc_pb2_grpc.add_WatchServicer_to_server(WatchService(core), target)
    rpc_pb2_grpc.add_LeaseServicer_to_server(LeaseService(core), target)
    rpc_pb2_grpc.add_MaintenanceServicer_to_server(MaintenanceService(core), target)
    rpc_pb2_grpc.add_ClusterServicer_to_server(ClusterService(core, peer_urls), target)
    rpc_pb2_grpc.add_AuthServicer_to_server(AuthService(core), target)
