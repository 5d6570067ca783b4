"""Object storage on etcd3, following Kubernetes' ``staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go``.

* Keys: ``/registry/<resource.etcd_dir>/<namespace>/<name>`` (cluster-scoped:
  ``/registry/<dir>/<name>``); values are the object as JSON.
* ``metadata.resourceVersion`` is the key's ``mod_revision``: set on every object
  read, stripped before every write (never trusted from the client).
* create = Txn(create_revision == 0 → put) → :class:`KeyExists` otherwise.
* :meth:`Store.guaranteed_update` = read, mutate, Txn(mod_revision == read) → retry on
  a lost race; a client precondition resourceVersion that differs → :class:`Conflict`.
* list at a revision with limit/continue; the continue token (base64 JSON
  ``{"v":"meta.k8s.io/v1","rv":R,"start":KEY}``, as ``storage/continue.go``) pins
  the list revision; a compacted revision → :class:`Expired`.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import inspect
import json
from typing import Any, AsyncIterator, Awaitable, Callable

from aetcd import rpc

from controlplane.storage.errors import Conflict, Expired, KeyExists, KeyNotFound, StorageError
from controlplane.storage.etcd import EtcdClient, WatchResponse, prefix_end

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


def decode(kv: Any) -> dict:
    """etcd KeyValue → object dict with ``metadata.resourceVersion = mod_revision``."""
    obj = json.loads(kv.value)
    obj.setdefault("metadata", {})["resourceVersion"] = str(kv.mod_revision)
    return obj


def encode(obj: dict) -> bytes:
    """Object dict → JSON bytes, without ``metadata.resourceVersion``."""
    md = dict(obj.get("metadata") or {})
    md.pop("resourceVersion", None)
    return json.dumps({**obj, "metadata": md}, separators=(",", ":")).encode()


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

    items: list[dict]
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
    object: dict
    prev: dict | None
    revision: int


Mutation = Callable[[dict], "dict | Awaitable[dict]"]


class Store:
    """Kubernetes object storage on one etcd endpoint (``http://host:port``)."""

    def __init__(self, endpoint: str, timeout: float = 10.0) -> None:
        self.etcd = EtcdClient(endpoint, timeout)

    async def close(self) -> None:
        await self.etcd.close()

    async def current_revision(self) -> int:
        """The etcd store's current revision (header of a count-only range)."""
        resp = await self.etcd.range(b"\0", b"\0", count_only=True)
        return resp.header.revision

    async def create(self, key: str, obj: dict) -> dict:
        """Store ``obj`` at ``key`` if absent; returns it with its resourceVersion. Raises KeyExists."""
        k = key.encode()
        resp = await self.etcd.txn(
            compare=[rpc.Compare(key=k, result=rpc.Compare.EQUAL, target=rpc.Compare.CREATE,
                                 create_revision=0)],
            success=[rpc.RequestOp(request_put=rpc.PutRequest(key=k, value=encode(obj)))])
        if not resp.succeeded:
            raise KeyExists(f"key {key} already exists", key)
        out = json.loads(encode(obj))
        out["metadata"]["resourceVersion"] = str(resp.header.revision)
        return out

    async def get(self, key: str, revision: int = 0) -> dict:
        """The object at ``key`` (at ``revision`` if > 0); raises KeyNotFound / Expired."""
        resp = await self.etcd.range(key.encode(), revision=revision)
        if not resp.kvs:
            raise KeyNotFound(f"key {key} not found", key)
        return decode(resp.kvs[0])

    async def list(self, prefix: str, revision: int = 0, limit: int = 0,
                   continue_token: str = "",
                   predicate: Callable[[dict], bool] | None = None) -> ListResult:
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
        items: list[dict] = []
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
                    obj = decode(kv)
                    if predicate is None or predicate(obj):
                        items.append(obj)
                if not resp.more:
                    return ListResult(items, rev)
                key = kvs[-1].key + b"\0"
        except Expired:
            if from_token:
                raise Expired(CONTINUE_EXPIRED, prefix) from None
            raise

    async def guaranteed_update(self, key: str, mutate: Mutation, *,
                                precondition_rv: str | None = None,
                                precondition_uid: str | None = None,
                                resource_plural: str = "", name: str = "",
                                group: str = "", create_if_missing: bool = False,
                                dry_run: bool = False) -> dict:
        """Read, ``mutate(copy)``, write with Txn(mod_revision unchanged); retry on a race.

        ``dry_run``: everything but the write; the result keeps the current resourceVersion
        (the dry-run store of ``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/dryrun.go``).

        ``mutate`` (sync or async) gets a deep copy of the current object (``{}`` when
        missing and ``create_if_missing``) and returns the new one; it may raise to abort.
        Returning an object equal to the current one skips the write (no new revision).
        Raises KeyNotFound, Conflict (precondition mismatch: the Kubernetes "object has
        been modified" message, or uid mismatch).
        """
        k = key.encode()
        while True:
            resp = await self.etcd.range(k)
            if resp.kvs:
                kv = resp.kvs[0]
                current = decode(kv)
                mod_rev = kv.mod_revision
            elif create_if_missing:
                current, mod_rev = {}, 0
            else:
                raise KeyNotFound(f"key {key} not found", key)
            md = current.get("metadata") or {}
            if precondition_uid and mod_rev and md.get("uid") != precondition_uid:
                raise Conflict(f"Precondition failed: UID in precondition: {precondition_uid}, "
                               f"UID in object meta: {md.get('uid', '')}", key)
            if precondition_rv and mod_rev and precondition_rv != str(mod_rev):
                what = f"{resource_plural}.{group}" if group else resource_plural
                raise Conflict(f'Operation cannot be fulfilled on {what} "{name}": the object has been '
                               "modified; please apply your changes to the latest version and try again",
                               key)
            new = mutate(json.loads(json.dumps(current)))
            if inspect.isawaitable(new):
                new = await new
            if mod_rev and encode(new) == encode(current):
                return current
            if dry_run:
                out = json.loads(encode(new))
                if mod_rev:
                    out["metadata"]["resourceVersion"] = str(mod_rev)
                return out
            cmp = rpc.Compare(key=k, result=rpc.Compare.EQUAL, target=rpc.Compare.MOD, mod_revision=mod_rev)
            txn = await self.etcd.txn([cmp], [rpc.RequestOp(request_put=rpc.PutRequest(key=k, value=encode(new)))])
            if txn.succeeded:
                out = json.loads(encode(new))
                out["metadata"]["resourceVersion"] = str(txn.header.revision)
                return out
            # lost a race with another writer: read again and retry

    async def delete(self, key: str, *, precondition_uid: str | None = None,
                     precondition_rv: str | None = None,
                     validate: Callable[[dict], None] | None = None,
                     resource_plural: str = "", name: str = "", group: str = "") -> dict:
        """Delete ``key`` if it still holds the version read; returns the deleted object.

        ``validate(current)`` may raise to abort. The returned object carries the
        resourceVersion it had. Raises KeyNotFound, Conflict.
        """
        k = key.encode()
        while True:
            resp = await self.etcd.range(k)
            if not resp.kvs:
                raise KeyNotFound(f"key {key} not found", key)
            kv = resp.kvs[0]
            current = decode(kv)
            md = current.get("metadata") or {}
            if precondition_uid and md.get("uid") != precondition_uid:
                raise Conflict(f"Precondition failed: UID in precondition: {precondition_uid}, "
                               f"UID in object meta: {md.get('uid', '')}", key)
            if precondition_rv and precondition_rv != str(kv.mod_revision):
                what = f"{resource_plural}.{group}" if group else resource_plural
                raise Conflict(f"Precondition failed: ResourceVersion in precondition: {precondition_rv}, "
                               f"ResourceVersion in object meta: {kv.mod_revision}", key)
            if validate is not None:
                validate(current)
            cmp = rpc.Compare(key=k, result=rpc.Compare.EQUAL, target=rpc.Compare.MOD,
                              mod_revision=kv.mod_revision)
            txn = await self.etcd.txn([cmp], [rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=k))])
            if txn.succeeded:
                return current

    async def compact(self, revision: int) -> None:
        """Compact etcd history up to ``revision`` (Kubernetes' compactor, every 5 minutes)."""
        await self.etcd.compact(revision)

    async def watch(self, prefix: str, start_revision: int,
                    progress_notify: bool = True,
                    control: asyncio.Queue | None = None) -> AsyncIterator[StoreEvent | int]:
        """Events of keys under ``prefix`` with revision >= ``start_revision``.

        Yields :class:`StoreEvent` objects, and a bare ``int`` revision for each
        progress notification (etcd promises no event below it is still to come).
        Raises Expired when ``start_revision`` is compacted, Unavailable on loss.
        Put :func:`progress_request` on ``control`` to ask etcd for a progress notification.
        Semantics of ``staging/src/k8s.io/apiserver/pkg/storage/etcd3/watcher.go``.
        """
        async for resp in self.etcd.watch(prefix.encode(), prefix_end(prefix.encode()),
                                          start_revision, progress_notify=progress_notify,
                                          control=control):
            if not resp.events:
                yield resp.revision
                continue
            for ev in resp.events:
                yield _store_event(ev)


def progress_request() -> Any:
    """A WatchRequest asking etcd for a progress notification (etcd >= 3.4)."""
    return rpc.WatchRequest(progress_request=rpc.WatchProgressRequest())


def _store_event(ev: Any) -> StoreEvent:
    kv = ev.kv
    key = kv.key.decode()
    prev = decode(ev.prev_kv) if ev.prev_kv and ev.prev_kv.value else None
    if ev.type == rpc.Event.DELETE:
        obj = json.loads(json.dumps(prev)) if prev else {"metadata": {}}
        obj.setdefault("metadata", {})["resourceVersion"] = str(kv.mod_revision)
        return StoreEvent("DELETED", key, obj, prev, kv.mod_revision)
    obj = decode(kv)
    typ = "ADDED" if kv.create_revision == kv.mod_revision else "MODIFIED"
    return StoreEvent(typ, key, obj, prev, kv.mod_revision)
