"""Object storage on etcd3, following Kubernetes' ``staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go``.

* Keys: ``/registry/<resource.etcd_dir>/<namespace>/<name>`` (cluster-scoped:
  ``/registry/<dir>/<name>``); values are the object as JSON.
* ``metadata.resourceVersion`` is the key's ``mod_revision``: set on every object
  read, stripped before every write (never trusted from the client).
* create = Txn(create_revision == 0 → put) → :class:`KeyExists` otherwise.
* :meth:`Store.guaranteed_update` = read, mutate, Txn(mod_revision == read) → retry on
  a lost race; a client precondition resourceVersion that differs → :class:`Conflict`.
  Given the watch cache's copy (``cached``) it skips the read: one round trip, whose
  Txn failure branch returns the current value for the retry (``etcd3/store.go``
  GuaranteedUpdate with ``cachedExistingObject``, ``getCurrentState`` from the Txn response).
* list at a revision with limit/continue; the continue token (base64 JSON
  ``{"v":"meta.k8s.io/v1","rv":R,"start":KEY}``, as ``storage/continue.go``) pins
  the list revision; a compacted revision → :class:`Expired`.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import inspect
import json
import logging
import time
from typing import Any, AsyncIterator, Awaitable, Callable, Coroutine, ParamSpec, TypeVar

from aetcd import rpc

from controlplane import otel
from controlplane.api import codec
from controlplane.log import event
from controlplane.storage.errors import Conflict, CorruptObject, Expired, KeyExists, KeyNotFound
from controlplane.storage.etcd import EtcdClient, EtcdTLS, WatchStream, prefix_end

_log = logging.getLogger("storage")

REGISTRY = "/registry"

#: Message of Kubernetes' expired-continue error (apimachinery errors for a compacted list).
CONTINUE_EXPIRED = ("The provided continue parameter is too old to display a consistent list result. "
                    "You can start a new list without the continue parameter, or use the continue token "
                    "in this response to retrieve the remainder of the results. Continuing with the "
                    "provided token results in an inconsistent list - objects that were created, modified, "
                    "or deleted between the time the first chunk was returned and now may show up in the list.")


def object_key(resource: Any, namespace: str | None, name: str) -> str:
    """Key of one object of ``resource`` (a :class:`controlplane.api.resources.Resource`)."""
    if resource.namespaced:
        return f"{REGISTRY}/{resource.etcd_dir}/{namespace}/{name}"
    return f"{REGISTRY}/{resource.etcd_dir}/{name}"


def collection_prefix(resource: Any, namespace: str | None = None) -> str:
    """Key prefix (ending in ``/``) of all objects of ``resource`` (in ``namespace`` if given)."""
    if resource.namespaced and namespace:
        return f"{REGISTRY}/{resource.etcd_dir}/{namespace}/"
    return f"{REGISTRY}/{resource.etcd_dir}/"


def decode(kv: Any) -> dict[str, Any]:
    """etcd KeyValue → object dict with ``metadata.resourceVersion = mod_revision``.

    Raises CorruptObject for a value that is not a JSON object (``NewCorruptObjError``)."""
    try:
        obj: dict[str, Any] = codec.loads(kv.value)
        md = obj.get("metadata")
        if md is None:
            md = obj["metadata"] = {}
        md["resourceVersion"] = str(kv.mod_revision)
    except (ValueError, AttributeError, TypeError) as e:
        raise CorruptObject(kv.key.decode(errors="replace"), e) from None
    return obj


def decode_or_skip(kv: Any) -> dict[str, Any] | None:
    """:func:`decode`, or None (one WARNING line naming the key) for a value that is not a
    JSON object: a list answers for the other objects, as the etcd3 store's corrupt-object
    handling does (``staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go``)."""
    try:
        obj = decode(kv)
    except CorruptObject as e:
        event(_log, "storage.undecodable_object", logging.WARNING, key=e.key,
              error=f"{type(e.error).__name__}: {e.error}"[:200])
        return None
    return obj


def encode(obj: dict[str, Any]) -> bytes:
    """Object dict → JSON bytes, without ``metadata.resourceVersion``."""
    md = obj.get("metadata") or {}
    if "resourceVersion" in md:
        md = dict(md)
        del md["resourceVersion"]
        return codec.dumps({**obj, "metadata": md})
    return codec.dumps(obj)


def _with_rv(obj: dict[str, Any], rv: int) -> dict[str, Any]:
    """``obj`` (a private copy the caller gives up) with ``metadata.resourceVersion = rv``."""
    md = obj.get("metadata")
    obj["metadata"] = md = dict(md) if isinstance(md, dict) else {}
    md["resourceVersion"] = str(rv)
    return obj


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal objects, ignoring ``metadata.resourceVersion`` (an update that changes nothing)."""
    ma, mb = a.get("metadata") or {}, b.get("metadata") or {}
    if ma.get("resourceVersion") != mb.get("resourceVersion"):
        ma, mb = dict(ma), dict(mb)
        ma.pop("resourceVersion", None)
        mb.pop("resourceVersion", None)
    return ma == mb and {k: v for k, v in a.items() if k != "metadata"} == \
        {k: v for k, v in b.items() if k != "metadata"}


def encode_continue(rv: int, start_key: str, prefix: str) -> str:
    """Continue token for the next page from ``start_key`` (relative to ``prefix``) at revision ``rv``."""
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start_key[len(prefix):]})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token: str, prefix: str) -> tuple[int, str]:
    """Continue token → (revision, absolute start key); raises ValueError if malformed."""
    try:
        pad = "=" * (-len(token) % 4)
        d = json.loads(base64.urlsafe_b64decode(token + pad))
        if d.get("v") != "meta.k8s.io/v1":
            raise ValueError
        rv, start = int(d["rv"]), str(d["start"])
    except Exception:
        raise ValueError("continue key is not valid: incorrect encoded start resourceVersion "
                         "(version meta.k8s.io/v1)") from None
    if start.startswith("/") or ".." in start.split("/"):
        raise ValueError("continue key is not valid: key cannot be absolute or contain '..'")
    return rv, prefix + start


@dataclasses.dataclass
class ListResult:
    """A page of objects read at one etcd ``revision``.

    ``continue_token`` is "" on the last page; ``remaining`` counts objects after it.
    """

    items: list[dict[str, Any]]
    revision: int
    continue_token: str = ""
    remaining: int | None = None


@dataclasses.dataclass
class StoreEvent:
    """One object change from an etcd watch: ``type`` ADDED/MODIFIED/DELETED.

    ``object`` is the new state (for DELETED: the last state, with ``resourceVersion``
    = the deletion revision, as Kubernetes' watcher does); ``prev`` the previous one.
    """

    type: str
    key: str
    object: dict[str, Any]
    prev: dict[str, Any] | None
    revision: int


Mutation = Callable[[dict[str, Any]], "dict[str, Any] | Awaitable[dict[str, Any]]"]


_P = ParamSpec("_P")
_T = TypeVar("_T")


def key_type(key: str) -> str:
    """The ``type`` label of ``etcd_request_duration_seconds`` for a key or prefix: the resource's
    directory under ``/registry`` (``/registry/pods/ns/x`` → ``pods``)."""
    parts = key.split("/", 3)
    return parts[2] if len(parts) > 2 and parts[1] == REGISTRY[1:] else ""


#: the span of each traced storage operation (``storage/etcd3/store.go``: ``tracing.Start(ctx,
#: "Create etcd3", ...)``, ``"GuaranteedUpdate etcd3"``, ``"Delete etcd3"``)
_SPANS = {"create": "Create etcd3", "update": "GuaranteedUpdate etcd3", "delete": "Delete etcd3"}


def _recorded(operation: str) -> Callable[[Callable[_P, Coroutine[Any, Any, _T]]],
                                          Callable[_P, Coroutine[Any, Any, _T]]]:
    """Time a Store method (its first argument after self is the key or prefix) into
    :attr:`Store.observe` as ``(operation, type, seconds)`` — ``etcd3/metrics``
    ``RecordEtcdRequest(verb, resource, err, startTime)``; failed requests count too — and, when
    tracing is on (:mod:`controlplane.otel`), run a create / update / delete in its etcd3 span
    (attributes ``key``, ``resource``)."""
    span_name = _SPANS.get(operation)

    def decorate(fn: Callable[_P, Coroutine[Any, Any, _T]]) -> Callable[_P, Coroutine[Any, Any, _T]]:
        @functools.wraps(fn)
        async def timed(*args: _P.args, **kwargs: _P.kwargs) -> _T:
            store = args[0]
            assert isinstance(store, Store)
            if span_name is not None and otel.enabled():
                key = str(args[1])
                with otel.span(span_name, attributes={"key": key, "resource": key_type(key)}):
                    return await _observed(store, operation, args[1], fn(*args, **kwargs))
            return await _observed(store, operation, args[1], fn(*args, **kwargs))
        return timed
    return decorate


async def _observed(store: "Store", operation: str, key: object, call: Coroutine[Any, Any, _T]) -> _T:
    if store.observe is None:
        return await call
    t0 = time.monotonic()
    try:
        return await call
    finally:
        store.observe(operation, key_type(str(key)), time.monotonic() - t0)


class Store:
    """Kubernetes object storage on one etcd endpoint (``http://host:port``).

    ``observe(operation, type, seconds)``, when set, is called after every create / get / list /
    update / delete (the apiserver's ``etcd_request_duration_seconds``)."""

    def __init__(self, endpoint: str, timeout: float = 10.0, tls: EtcdTLS | None = None) -> None:
        self.etcd = EtcdClient(endpoint, timeout, tls)
        self.observe: Callable[[str, str, float], None] | None = None

    async def close(self) -> None:
        await self.etcd.close()

    async def current_revision(self) -> int:
        """The etcd store's current revision (header of a count-only range)."""
        resp = await self.etcd.range(b"\0", b"\0", count_only=True)
        rev: int = resp.header.revision
        return rev

    @_recorded("create")
    async def create(self, key: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Store ``obj`` at ``key`` if absent; returns it with its resourceVersion. Raises KeyExists.

        ``obj`` becomes the returned object (its ``metadata`` dict is replaced, not changed)."""
        k = key.encode()
        resp = await self.etcd.txn(
            compare=[rpc.Compare(key=k, result=rpc.Compare.EQUAL, target=rpc.Compare.CREATE,
                                 create_revision=0)],
            success=[rpc.RequestOp(request_put=rpc.PutRequest(key=k, value=encode(obj)))])
        if not resp.succeeded:
            raise KeyExists(f"key {key} already exists", key)
        return _with_rv(obj, resp.header.revision)

    async def reserve(self, key: str, value: bytes, lease: int) -> bool:
        """Create ``key`` = ``value`` bound to etcd lease ``lease`` (it goes when the lease
        expires) if absent, in one Txn; False when the key exists. Raises Unavailable."""
        k = key.encode()
        resp = await self.etcd.txn(
            compare=[rpc.Compare(key=k, result=rpc.Compare.EQUAL, target=rpc.Compare.CREATE,
                                 create_revision=0)],
            success=[rpc.RequestOp(request_put=rpc.PutRequest(key=k, value=value, lease=lease))])
        ok: bool = resp.succeeded
        return ok

    @_recorded("get")
    async def get(self, key: str, revision: int = 0) -> dict[str, Any]:
        """The object at ``key`` (at ``revision`` if > 0); raises KeyNotFound / Expired."""
        resp = await self.etcd.range(key.encode(), revision=revision)
        if not resp.kvs:
            raise KeyNotFound(f"key {key} not found", key)
        return decode(resp.kvs[0])

    @_recorded("list")
    async def list(self, prefix: str, revision: int = 0, limit: int = 0,
                   continue_token: str = "",
                   predicate: Callable[[dict[str, Any]], bool] | None = None) -> ListResult:
        """Objects under ``prefix`` at ``revision`` (0 = latest), at most ``limit`` (0 = all).

        With ``continue_token`` the revision comes from the token; a compacted one raises
        Expired with :data:`CONTINUE_EXPIRED`. ``predicate`` filters objects (the page
        is filled up to ``limit`` matching objects, as the etcd3 store does).
        Raises ValueError for a malformed token.
        """
        start = prefix
        from_token = bool(continue_token)
        if continue_token:
            revision, start = decode_continue(continue_token, prefix)
        end = prefix_end(prefix.encode())
        items: list[dict[str, Any]] = []
        key = start.encode()
        rev = revision
        try:
            while True:
                batch = max(limit - len(items), 0) + 1 if limit else 0
                if limit and batch < 64 and predicate is not None:
                    batch = 64
                resp = await self.etcd.range(key, end, revision=rev, limit=batch)
                rev = rev or resp.header.revision
                kvs = list(resp.kvs)
                for i, kv in enumerate(kvs):
                    if limit and len(items) >= limit:
                        # more matching objects may follow: continue from this key
                        token = encode_continue(rev, kv.key.decode(), prefix)
                        remaining = None if predicate else len(kvs) - i + (resp.count - len(kvs))
                        return ListResult(items, rev, token, remaining)
                    obj = decode_or_skip(kv)
                    if obj is not None and (predicate is None or predicate(obj)):
                        items.append(obj)
                if not resp.more:
                    return ListResult(items, rev)
                key = kvs[-1].key + b"\0"
        except Expired:
            if from_token:
                raise Expired(CONTINUE_EXPIRED, prefix) from None
            raise

    @_recorded("update")
    async def guaranteed_update(self, key: str, mutate: Mutation, *,
                                precondition_rv: str | None = None,
                                precondition_uid: str | None = None,
                                resource_plural: str = "", name: str = "",
                                group: str = "", create_if_missing: bool = False,
                                dry_run: bool = False, cached: dict[str, Any] | None = None) -> dict[str, Any]:
        """Read, ``mutate(copy)``, write with Txn(mod_revision unchanged); retry on a race.

        ``cached``: the watch cache's copy of the object (never modified here), used instead
        of a read: the Txn then succeeds at once when it is current, and its failure branch
        returns the current value (one round trip either way). While the state used may be
        stale, a failed precondition, a raising ``mutate`` or an unchanged result are
        re-checked on the current value before they count (``etcd3/store.go``
        GuaranteedUpdate, ``origStateIsCurrent``).

        ``dry_run``: everything but the write; the result keeps the current resourceVersion
        (the dry-run store of ``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/dryrun.go``).

        ``mutate`` (sync or async) gets a deep copy of the current object (``{}`` when
        missing and ``create_if_missing``) and returns the new one; it may raise to abort.
        Returning an object equal to the current one skips the write (no new revision).
        Raises KeyNotFound, Conflict (precondition mismatch: the Kubernetes "object has
        been modified" message, or uid mismatch).
        """
        k = key.encode()
        current: dict[str, Any] | None = None
        mod_rev = 0
        is_current = False
        if cached is not None and (cached.get("metadata") or {}).get("resourceVersion"):
            current, mod_rev = cached, int(cached["metadata"]["resourceVersion"])
        else:
            current, mod_rev = self._state(await self.etcd.range(k), key, create_if_missing)
            is_current = True
        while True:
            md = current.get("metadata") or {}
            try:
                if precondition_uid and mod_rev and md.get("uid") != precondition_uid:
                    raise Conflict(f"Precondition failed: UID in precondition: {precondition_uid}, "
                                   f"UID in object meta: {md.get('uid', '')}", key)
                if precondition_rv and mod_rev and precondition_rv != str(mod_rev):
                    what = f"{resource_plural}.{group}" if group else resource_plural
                    raise Conflict(f'Operation cannot be fulfilled on {what} "{name}": the object has been '
                                   "modified; please apply your changes to the latest version and try again",
                                   key)
                new = mutate(codec.clone(current))
                if inspect.isawaitable(new):
                    new = await new
            except Exception:
                if is_current:
                    raise
                current, mod_rev = self._state(await self.etcd.range(k), key, create_if_missing)
                is_current = True
                continue
            if mod_rev and _same(new, current):
                if is_current:
                    return codec.clone(current) if cached is current else current
                current, mod_rev = self._state(await self.etcd.range(k), key, create_if_missing)
                is_current = True
                continue
            if dry_run:
                md = dict(new.get("metadata") or {})
                md.pop("resourceVersion", None)
                if mod_rev:
                    md["resourceVersion"] = str(mod_rev)
                return {**new, "metadata": md}
            cmp = rpc.Compare(key=k, result=rpc.Compare.EQUAL, target=rpc.Compare.MOD, mod_revision=mod_rev)
            txn = await self.etcd.txn([cmp], [rpc.RequestOp(request_put=rpc.PutRequest(key=k, value=encode(new)))],
                                      [rpc.RequestOp(request_range=rpc.RangeRequest(key=k))])
            if txn.succeeded:
                return _with_rv(new, txn.header.revision)
            # lost a race with another writer (or the cached copy was stale): the failure
            # branch read the current value; retry on it
            current, mod_rev = self._state(txn.responses[0].response_range, key, create_if_missing)
            is_current = True

    @staticmethod
    def _state(resp: Any, key: str, create_if_missing: bool) -> tuple[dict[str, Any], int]:
        """(object, mod_revision) of a Range response; ({}, 0) or KeyNotFound when absent."""
        if resp.kvs:
            return decode(resp.kvs[0]), resp.kvs[0].mod_revision
        if create_if_missing:
            return {}, 0
        raise KeyNotFound(f"key {key} not found", key)

    @_recorded("delete")
    async def delete(self, key: str, *, precondition_uid: str | None = None,
                     precondition_rv: str | None = None,
                     validate: Callable[[dict[str, Any]], None] | None = None,
                     resource_plural: str = "", name: str = "", group: str = "",
                     cached: dict[str, Any] | None = None) -> dict[str, Any]:
        """Delete ``key`` if it still holds the version read; returns the deleted object.

        ``validate(current)`` may raise to abort. The returned object carries the
        resourceVersion it had. ``cached`` (the watch cache's copy, not modified) saves
        the read as in :meth:`guaranteed_update`; checks failing on it are re-done on the
        current value (``etcd3/store.go`` conditionalDelete). Raises KeyNotFound, Conflict.
        """
        k = key.encode()
        if cached is not None and (cached.get("metadata") or {}).get("resourceVersion"):
            current, mod_rev, is_current = cached, int(cached["metadata"]["resourceVersion"]), False
        else:
            current, mod_rev = self._state(await self.etcd.range(k), key, False)
            is_current = True
        while True:
            md = current.get("metadata") or {}
            try:
                if precondition_uid and md.get("uid") != precondition_uid:
                    raise Conflict(f"Precondition failed: UID in precondition: {precondition_uid}, "
                                   f"UID in object meta: {md.get('uid', '')}", key)
                if precondition_rv and precondition_rv != str(mod_rev):
                    raise Conflict(f"Precondition failed: ResourceVersion in precondition: {precondition_rv}, "
                                   f"ResourceVersion in object meta: {mod_rev}", key)
                if validate is not None:
                    validate(current)
            except Exception:
                if is_current:
                    raise
                current, mod_rev = self._state(await self.etcd.range(k), key, False)
                is_current = True
                continue
            cmp = rpc.Compare(key=k, result=rpc.Compare.EQUAL, target=rpc.Compare.MOD, mod_revision=mod_rev)
            txn = await self.etcd.txn([cmp], [rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=k))],
                                      [rpc.RequestOp(request_range=rpc.RangeRequest(key=k))])
            if txn.succeeded:
                return codec.clone(current) if current is cached else current
            current, mod_rev = self._state(txn.responses[0].response_range, key, False)
            is_current = True

    async def compact(self, revision: int) -> None:
        """Compact etcd history up to ``revision`` (Kubernetes' compactor, every 5 minutes)."""
        await self.etcd.compact(revision)

    def watch(self, prefix: str, start_revision: int, progress_notify: bool = True,
              previous: Callable[[str], dict[str, Any] | None] | None = None) -> "EventStream":
        """A new :class:`EventStream` of the keys under ``prefix`` from ``start_revision``
        (one etcd watch call; make a new one for every attempt).

        ``previous(key)``: the caller's copy of the key's last state (a watch cache's store),
        used as ``prev`` instead of asking etcd for ``prev_kv`` (half the decoding, as the
        cacher takes the previous object from its own store, ``cacher/watch_cache.go``).
        Semantics of ``staging/src/k8s.io/apiserver/pkg/storage/etcd3/watcher.go``.
        """
        return EventStream(self.etcd.watch(prefix.encode(), prefix_end(prefix.encode()), start_revision,
                                           progress_notify=progress_notify, prev_kv=previous is None),
                           previous)

    async def unchanged(self, prefix: str, since: int, count: int) -> int:
        """etcd's current revision R if no key under ``prefix`` changed in ``(since, R]``, else 0.

        ``count`` is the number of keys under ``prefix`` at revision ``since``. One keys-only
        Range at the current revision: no key modified after ``since`` and the same number of
        keys means nothing was put or deleted (a key deleted and created again has a newer
        mod_revision). Proves a watch cache current without trusting a progress notification
        (for etcd servers whose progress answers can run ahead of their events).
        Raises Unavailable.
        """
        resp = await self.etcd.range(prefix.encode(), prefix_end(prefix.encode()), keys_only=True,
                                     min_mod_revision=since + 1, limit=1)
        if resp.kvs or resp.count != count:
            return 0
        rev: int = resp.header.revision
        return rev


class EventStream:
    """One watch attempt on the keys under a prefix (from :meth:`Store.watch`).

    ``async for item in stream`` yields :class:`StoreEvent` objects, and a bare ``int``
    revision R for each progress notification (every event up to R has been yielded).
    :meth:`request_progress` asks for one (see :meth:`controlplane.storage.etcd.WatchStream.request_progress`);
    :meth:`close` tears the call down. Raises Expired (start revision compacted, or etcd's
    history lost), Unavailable (connection lost, stream ended).
    """

    def __init__(self, stream: WatchStream, previous: Callable[[str], dict[str, Any] | None] | None) -> None:
        self.stream = stream
        self.previous = previous

    def request_progress(self) -> bool:
        return self.stream.request_progress()

    @property
    def created(self) -> bool:
        return self.stream.created

    @property
    def progress_supported(self) -> bool:
        """True when :meth:`request_progress` can be answered (the server is trusted)."""
        return self.stream.progress_ok

    def close(self) -> None:
        self.stream.close()

    async def __aenter__(self) -> "EventStream":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()

    def __aiter__(self) -> AsyncIterator[StoreEvent | int]:
        return self._items()

    async def _items(self) -> AsyncIterator[StoreEvent | int]:
        previous = self.previous
        try:
            async for resp in self.stream:
                if not resp.events:
                    yield resp.revision
                    continue
                for ev in resp.events:
                    try:
                        se = _store_event(ev, previous)
                    except CorruptObject as e:
                        # a value that is not a JSON object: skipped (one WARNING naming the key),
                        # as a list skips it (decode_or_skip); the watch goes on
                        event(_log, "storage.undecodable_object", logging.WARNING, key=e.key,
                              error=f"{type(e.error).__name__}: {e.error}"[:200])
                        continue
                    yield se
        finally:
            self.stream.close()


def _store_event(ev: Any, previous: Callable[[str], dict[str, Any] | None] | None = None) -> StoreEvent:
    kv = ev.kv
    key = kv.key.decode()
    if previous is not None:
        prev = previous(key)
    else:
        prev = decode(ev.prev_kv) if ev.prev_kv and ev.prev_kv.value else None
    if ev.type == rpc.Event.DELETE:
        obj = _with_rv(dict(prev), kv.mod_revision) if prev else {"metadata": {}}
        return StoreEvent("DELETED", key, obj, prev, kv.mod_revision)
    obj = decode(kv)
    typ = "ADDED" if kv.create_revision == kv.mod_revision else "MODIFIED"
    return StoreEvent(typ, key, obj, prev, kv.mod_revision)
