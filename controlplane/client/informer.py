"""Informers: a reflector (list, then watch from the list's resourceVersion)
feeding a local store and event handlers, as client-go's ``tools/cache``.

* list → replace the store → ``on_add`` for new keys, ``on_delete`` for vanished ones;
* watch from the last seen resourceVersion; bookmarks advance it;
* on a closed stream or transport error: re-watch from the last resourceVersion
  (exponential back-off when it failed; a randomised ``timeoutSeconds`` per watch);
  on 410 Gone/Expired: relist (source:
  staging/src/k8s.io/client-go/tools/cache/reflector.go ListAndWatch).

Store keys are ``namespace/name`` (or ``name`` for cluster-scoped objects), as
client-go's ``MetaNamespaceKeyFunc``. Named indexes (client-go's ``Indexers`` /
``ByIndex``, staging/src/k8s.io/client-go/tools/cache/thread_safe_store.go) map
values computed from each object to the keys holding them; they change together
with the store, before any handler runs, so a handler never sees one without the other.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any, Callable, Hashable, Iterable, Protocol

import aiohttp

from controlplane.aio import Backoff, cancel_and_wait
from controlplane.api.resources import Resource
from controlplane.client.rest import ApiError, RestClient
from controlplane.compact import Sharer
from controlplane.log import event

log = logging.getLogger("informer")

Handler = Callable[..., Any]
IndexFunc = Callable[[dict[str, Any]], Iterable[Hashable]]


def key_of(obj: dict[str, Any]) -> str:
    """``namespace/name`` or ``name`` — client-go's MetaNamespaceKeyFunc."""
    md = obj.get("metadata") or {}
    ns = md.get("namespace")
    return f"{ns}/{md.get('name')}" if ns else str(md.get("name"))


def _sequence(fn: IndexFunc, obj: dict[str, Any] | None) -> tuple[Any, ...]:
    """``fn(obj)`` as a tuple; () for an absent object, and for an index function that fails,
    which indexes the object under nothing rather than stopping the reflector."""
    if obj is None:
        return ()
    try:
        return tuple(fn(obj))
    except Exception:
        log.exception("index function failed")
        return ()


def _set(values: tuple[Any, ...]) -> set[Hashable]:
    """``set(values)``; an unhashable value (a failing index function) indexes under nothing."""
    try:
        return set(values)
    except TypeError:
        log.exception("index function failed")
        return set()


def _values(fn: IndexFunc, obj: dict[str, Any]) -> set[Hashable]:
    """The index values of ``obj`` (see :func:`_sequence`, :func:`_set`)."""
    return _set(_sequence(fn, obj))


class Indices:
    """Named indexes over a store (client-go's ``threadSafeMap`` indices): for each
    name, index value → the store keys whose object yields it. Keys of one value
    keep the order in which they joined it. Callers report every store change
    through :meth:`changed` (or :meth:`rebuild` after replacing the store)."""

    def __init__(self) -> None:
        self._fns: dict[str, IndexFunc] = {}
        self._idx: dict[str, dict[Hashable, dict[str, None]]] = {}

    def __bool__(self) -> bool:
        return bool(self._fns)

    def add(self, name: str, fn: IndexFunc, store: dict[str, dict[str, Any]]) -> None:
        """Index ``store`` by ``fn`` under ``name``; a name already taken keeps its function."""
        if name in self._fns:
            return
        self._fns[name] = fn
        self._idx[name] = {}
        for k, obj in store.items():
            self._insert(name, k, _values(fn, obj))

    def keys(self, name: str, value: Hashable) -> list[str]:
        """Store keys whose object yields ``value`` under index ``name`` (KeyError: no such index)."""
        return list(self._idx[name].get(value, ()))

    def has(self, name: str, value: Hashable) -> bool:
        """True when some stored object yields ``value`` under index ``name``."""
        return value in self._idx[name]

    def changed(self, key: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        """The object under ``key`` went from ``old`` to ``new`` (None: absent). An index whose
        function yields equal sequences for both (most updates: a status write leaves a pod's
        node, owner and namespace) is left at once, without building the two sets."""
        for name, fn in self._fns.items():
            seq_before, seq_after = _sequence(fn, old), _sequence(fn, new)
            if seq_before == seq_after:
                continue
            before, after = _set(seq_before), _set(seq_after)
            if before == after:
                continue
            idx = self._idx[name]
            for v in before - after:
                keys = idx.get(v)
                if keys is not None:
                    keys.pop(key, None)
                    if not keys:
                        del idx[v]
            self._insert(name, key, after - before)

    def rebuild(self, store: dict[str, dict[str, Any]]) -> None:
        """Recompute every index from ``store`` (after a relist replaced it)."""
        for name, fn in self._fns.items():
            self._idx[name] = {}
            for k, obj in store.items():
                self._insert(name, k, _values(fn, obj))

    def _insert(self, name: str, key: str, values: Iterable[Hashable]) -> None:
        idx = self._idx[name]
        for v in values:
            keys = idx.get(v)
            if keys is None:
                idx[v] = {key: None}
            else:
                keys[key] = None


def drop_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` without ``metadata.managedFields``: the informer transform of kube-controller-manager
    and kube-scheduler (client-go ``WithTransform``; ``cmd/kube-controller-manager/app/
    controllermanager.go``). Controllers never read them, and a write that leaves them out keeps
    the stored ones."""
    md = obj.get("metadata")
    if isinstance(md, dict):
        md.pop("managedFields", None)
    return obj


def metadata_only(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` reduced to ``apiVersion``, ``kind`` and ``metadata`` (without managedFields): the
    transform of the garbage collector's monitors when the apiserver does not serve
    ``as=PartialObjectMetadata`` lists and watches (client-go's metadata informers,
    ``k8s.io/client-go/metadata/metadatainformer``, keep only a ``PartialObjectMetadata``)."""
    md = obj.get("metadata")
    out: dict[str, Any] = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"),
                           "metadata": dict(md) if isinstance(md, dict) else {}}
    out["metadata"].pop("managedFields", None)
    return out


class SharedIndexInformer(Protocol):
    """What controllers use of an informer (client-go's ``SharedIndexInformer`` interface,
    staging/src/k8s.io/client-go/tools/cache/shared_informer.go): :class:`Informer`, or an
    in-memory fake that delivers events itself."""

    resource: Resource
    store: dict[str, dict[str, Any]]

    @property
    def has_synced(self) -> bool: ...
    def add_handlers(self, on_add: Handler | None = None, on_update: Handler | None = None,
                     on_delete: Handler | None = None) -> None: ...
    def add_indexer(self, name: str, fn: IndexFunc) -> None: ...
    def index_keys(self, name: str, value: Hashable) -> list[str]: ...
    def by_index(self, name: str, value: Hashable) -> list[dict[str, Any]]: ...
    def in_index(self, name: str, value: Hashable) -> bool: ...
    def on_watch_started(self, fn: Handler) -> None: ...
    def start(self) -> object: ...
    async def wait_synced(self, timeout: float | None = 60.0) -> None: ...
    async def stop(self) -> None: ...


class Informer:
    """Keeps ``store`` (key → object) in sync with one resource on the apiserver.

    Handlers are plain callables, called in the event loop:
    ``on_add(obj)``, ``on_update(old, new)``, ``on_delete(obj)``; they should be
    quick (typically: enqueue a key). ``on_watch_started(resource_version)`` is
    called each time a list+watch cycle begins (step 1 of the trace).
    ``transform(obj) -> obj`` (client-go's ``SetTransform``) is applied to every listed
    or watched object before it is stored or handed to a handler. Stored objects are read-only
    and share their equal parts with the previous version of the same key or with the last object
    of the same owner (:class:`controlplane.compact.Sharer`): a handler that changes one must copy
    it first, as client-go's listers require.
    """

    def __init__(self, client: RestClient, resource: Resource, *, namespace: str | None = None,
                 label_selector: str | None = None, field_selector: str | None = None,
                 watch_timeout: int = 300, transform: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.client = client
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.watch_timeout = watch_timeout
        self.transform = transform
        self.store: dict[str, dict[str, Any]] = {}
        self.resource_version = ""
        #: the last 410 said our resourceVersion is gone: the next list is a quorum read
        self._rv_unavailable = False
        self._handlers: list[tuple[Handler | None, Handler | None, Handler | None]] = []
        self._started: list[Handler] = []
        self._indices = Indices()
        self._sharer = Sharer()
        self._synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # -- wiring ----------------------------------------------------------------
    def add_handlers(self, on_add: Handler | None = None, on_update: Handler | None = None,
                     on_delete: Handler | None = None) -> None:
        """Register event handlers (client-go's AddEventHandler): ``on_add(obj)``,
        ``on_update(old, new)``, ``on_delete(obj)``; any may be None."""
        self._handlers.append((on_add, on_update, on_delete))

    def add_indexer(self, name: str, fn: IndexFunc) -> None:
        """Maintain the index ``name``: ``fn(obj)`` gives the values ``obj`` is found
        under (client-go's AddIndexers; a name already taken keeps its function)."""
        self._indices.add(name, fn, self.store)

    def index_keys(self, name: str, value: Hashable) -> list[str]:
        """Keys of the cached objects found under ``value`` in index ``name`` (IndexKeys)."""
        return self._indices.keys(name, value)

    def by_index(self, name: str, value: Hashable) -> list[dict[str, Any]]:
        """The cached objects found under ``value`` in index ``name`` (ByIndex)."""
        store = self.store
        return [store[k] for k in self._indices.keys(name, value)]

    def in_index(self, name: str, value: Hashable) -> bool:
        """True when some cached object is found under ``value`` in index ``name``."""
        return self._indices.has(name, value)

    def on_watch_started(self, fn: Handler) -> None:
        """Call ``fn(resource_version)`` each time a list+watch cycle begins."""
        self._started.append(fn)

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached object under ``namespace/name`` (or ``name``), or None (the lister)."""
        return self.store.get(key)

    def list(self) -> Iterable[dict[str, Any]]:
        """Every cached object (a live view of the store: copy before awaiting)."""
        return self.store.values()

    @property
    def has_synced(self) -> bool:
        """True once the first list is in the store (client-go's HasSynced)."""
        return self._synced.is_set()

    async def wait_synced(self, timeout: float | None = 60.0) -> None:
        """Wait for the first list to be in the store, at most ``timeout`` seconds (None: however
        long it takes); raises TimeoutError."""
        await asyncio.wait_for(self._synced.wait(), timeout)

    def start(self) -> asyncio.Task[None]:
        """Start :meth:`run` as a task (once; later calls return the same task)."""
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name=f"informer-{self.resource.plural}")
        return self._task

    async def stop(self) -> None:
        """Cancel the list-watch task and wait for it to end."""
        await cancel_and_wait(self._task)

    # -- reflector -------------------------------------------------------------
    async def run(self) -> None:
        """List and watch forever (until cancelled).

        A watch that ends normally after delivering events or running a while (the server's
        ``timeoutSeconds``) is followed at once by the next, from the last resourceVersion; a
        failed or empty one waits an exponential back-off (0.1 s doubling to 5 s, jittered,
        one log line per attempt), so a server that keeps refusing or closing is never
        spun on; 410 Expired (a resourceVersion too old, e.g. after an apiserver restart)
        → relist first (``reflector.go`` ListAndWatch with its backoff manager)."""
        backoff = Backoff(0.1, 5.0)
        loop = asyncio.get_running_loop()
        need_list = True
        expired = False  # the last attempt ended in 410: another one in a row waits
        while True:
            try:
                if need_list:
                    await self._list()
                    need_list = False
                for fn in self._started:
                    fn(self.resource_version)
                began = loop.time()
                if await self._watch() or loop.time() - began >= 1.0:
                    backoff.reset()
                    expired = False
                    continue
                reason = {"code": 200, "error": "watch closed at once"}
            except asyncio.CancelledError:
                raise
            except ApiError as e:
                if e.code == 410:
                    need_list = True
                    self._rv_unavailable = True
                    if not expired:
                        expired = True
                        event(log, "informer.relist", resource=self.resource.plural, reason=e.reason)
                        continue
                reason = {"code": e.code, "error": e.message[:200]}
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError, ValueError) as e:
                reason = {"error": type(e).__name__}
            delay = backoff.next()
            event(log, "informer.disconnected", logging.WARNING, resource=self.resource.plural,
                  relist=need_list, retry_in=f"{delay:.2f}s", **reason)
            await asyncio.sleep(delay)

    def _list_resource_version(self) -> str:
        """The resourceVersion of the next list, as client-go's reflector picks it
        (``tools/cache/reflector.go`` ``relistResourceVersion``): ``"0"`` for the first (any
        resourceVersion: the apiserver answers from its watch cache, no etcd read), the last
        synced one for a relist, ``""`` (a quorum read) after a 410 said it is gone."""
        if self._rv_unavailable:
            return ""
        return self.resource_version or "0"

    async def _list(self) -> None:
        lst = await self.client.list(self.resource, self.namespace,
                                     label_selector=self.label_selector,
                                     field_selector=self.field_selector,
                                     resource_version=self._list_resource_version() or None, limit=500)
        self._rv_unavailable = False
        self.resource_version = (lst.get("metadata") or {}).get("resourceVersion", "")
        kind = self.resource.kind
        transform = self.transform
        fresh: dict[str, dict[str, Any]] = {}
        old = self.store
        sharer = self._sharer
        sharer.clear()
        for item in lst["items"]:
            item.setdefault("kind", kind)
            item.setdefault("apiVersion", self.resource.api_version)
            if transform is not None:
                item = transform(item)
            k = key_of(item)
            fresh[k] = sharer.store(item, old.get(k))
        self.store = fresh
        if self._indices:
            self._indices.rebuild(fresh)
        for k, obj in fresh.items():
            if k in old:
                if old[k].get("metadata", {}).get("resourceVersion") != \
                        obj.get("metadata", {}).get("resourceVersion"):
                    self._dispatch("update", old[k], obj)
            else:
                self._dispatch("add", obj)
        for k, obj in old.items():
            if k not in fresh:
                self._dispatch("delete", obj)
        self._synced.set()

    async def _watch(self) -> int:
        """One watch from the last resourceVersion; returns the number of events it carried.

        The server is asked to end it after ``watch_timeout`` to twice that (seconds, random:
        client-go's reflector ``minWatchTimeout * (1 + rand)``), so watches of many clients do
        not all end together and a stream never lives forever; bookmarks are requested, so a
        stream silent for :data:`~controlplane.client.rest.WATCH_IDLE_TIMEOUT` seconds is taken
        for a dead connection."""
        n = 0
        timeout = int(self.watch_timeout * (1.0 + random.random()))
        async for typ, obj in self.client.watch(
                self.resource, self.namespace, resource_version=self.resource_version,
                label_selector=self.label_selector, field_selector=self.field_selector,
                timeout_seconds=timeout):
            n += 1
            rv = (obj.get("metadata") or {}).get("resourceVersion")
            if rv:
                self.resource_version = rv
            if typ == "BOOKMARK":
                continue
            if self.transform is not None:
                obj = self.transform(obj)
            k = key_of(obj)
            if typ == "ADDED" or typ == "MODIFIED":
                old = self.store.get(k)
                self.store[k] = obj = self._sharer.store(obj, old)
                if self._indices:
                    self._indices.changed(k, old, obj)
                if old is None:
                    self._dispatch("add", obj)
                else:
                    self._dispatch("update", old, obj)
            elif typ == "DELETED":
                old = self.store.pop(k, None)
                self._sharer.forget(old)
                if self._indices and old is not None:
                    self._indices.changed(k, old, None)
                self._dispatch("delete", old or obj)
        return n

    def _dispatch(self, what: str, *objs: dict[str, Any]) -> None:
        idx = {"add": 0, "update": 1, "delete": 2}[what]
        for h in self._handlers:
            fn = h[idx]
            if fn is None:
                continue
            try:
                fn(*objs)
            except Exception:  # a handler bug must not kill the reflector
                log.exception("handler failed")
