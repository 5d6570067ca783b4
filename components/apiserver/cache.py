"""The watch cache ("cacher"), after ``staging/src/k8s.io/apiserver/pkg/storage/cacher/``.

One :class:`WatchCache` per resource: it lists the resource from etcd at revision R,
then keeps ONE etcd watch from R+1 that feeds

* the store (key → latest object),
* a bounded ring of recent events (each with revision, type, object, prev object),
* every :class:`CacheWatcher` (one per HTTP watch), each with its own bounded queue.
  A watcher that falls ``queue_size`` events behind is closed (its client reconnects),
  never stalling the others (``cache_watcher.go``).

A watch from resourceVersion N replays ring events with revision > N; N older than the
ring → :class:`TooOldResourceVersion` ("too old resource version: N (M)", 410, M the
oldest resourceVersion still served, :meth:`WatchCache.oldest_available`).
Selectors are applied per watcher: an object that stops matching after a MODIFIED is
sent as DELETED (previous object, new resourceVersion), one that starts matching as ADDED.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import Any, Callable, Literal

from controlplane.aio import Backoff, cancel_and_wait
from controlplane.compact import Sharer
from controlplane.log import event
from controlplane.storage.errors import Expired
from controlplane.storage.store import EventStream, Store, StoreEvent, collection_prefix

log = logging.getLogger("apiserver.cache")

#: seconds between progress requests (or Range proofs) while someone waits for a revision
#: (the cacher's ``progressRequester`` period, ``cacher/progress/watch_progress.go``)
PROGRESS_PERIOD = 0.1

Predicate = Callable[[dict], bool]


def cache_name(resource: Any) -> str:
    """The key of ``resource``'s watch cache: ``plural`` (core) or ``plural.group``."""
    return resource.plural if not resource.group else f"{resource.plural}.{resource.group}"


class TooOldResourceVersion(Exception):
    """A watch asked for events the ring no longer holds (answered as 410 Expired)."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")


class WatchEvent:
    """A watch event to send: ``type`` ADDED/MODIFIED/DELETED/BOOKMARK/ERROR, ``object``.

    One instance is shared by every watcher that gets the same event, so ``line`` (the
    encoded ``{"type":...,"object":...}`` JSON line, set by the first sender) is encoded
    once for all of them (the cacher's ``cachingObject``, ``cacher/caching_object.go``).
    """

    __slots__ = ("type", "object", "revision", "line")

    def __init__(self, type: str, object: dict, revision: int = 0) -> None:
        self.type = type
        self.object = object
        self.revision = revision
        self.line: bytes | None = None

    def __repr__(self) -> str:
        return f"WatchEvent({self.type!r}, rv={self.revision})"


def _wake(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(None)


class CacheWatcher:
    """One client's watch: a queue of pending events, closed past ``limit`` of them.

    ``matches(obj)`` is the client's filter (namespace, label and field selectors).
    Read with :meth:`next` (one event) or :meth:`drain` (all pending); ``None`` means the
    watcher was closed (overflow or shutdown). A plain deque with one waiter future:
    no task per event (``cacher/cache_watcher.go``: a buffered channel per watcher).
    """

    def __init__(self, matches: Predicate, limit: int) -> None:
        self.matches = matches
        self.limit = limit
        self.pending: collections.deque = collections.deque()
        self.closed = False
        self._waiter: asyncio.Future | None = None

    def put(self, ev: "WatchEvent | None") -> None:
        self.pending.append(ev)
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    def offer(self, ev: StoreEvent, shared: dict | None = None) -> bool:
        """Filter and enqueue ``ev``; returns whether something was sent.

        ``shared`` (one dict per store event) lets watchers share converted events."""
        if self.closed:
            return False
        out = convert(ev, self.matches, shared)
        if out is None:
            return False
        if len(self.pending) >= self.limit:
            self.close()
            return False
        self.put(out)
        return True

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.put(None)

    async def _wait(self, timeout: float | None) -> None:
        loop = asyncio.get_running_loop()
        fut = self._waiter = loop.create_future()
        handle = loop.call_later(timeout, _wake, fut) if timeout is not None else None
        try:
            await fut
        finally:
            self._waiter = None
            if handle is not None:
                handle.cancel()

    async def next(self, timeout: float | None) -> WatchEvent | None | bool:
        """The next event, ``None`` when closed, ``False`` on timeout (seconds)."""
        if not self.pending:
            await self._wait(timeout)
            if not self.pending:
                return False
        return self.pending.popleft()

    def take(self) -> list:
        """Every pending event now, without waiting (``[]`` when none)."""
        out = list(self.pending)
        self.pending.clear()
        return out

    async def drain(self, timeout: float | None) -> list | Literal[False]:
        """Every pending event (waiting up to ``timeout`` s for one); ``False`` on timeout.
        A ``None`` in the list means closed (nothing after it)."""
        if not self.pending:
            await self._wait(timeout)
            if not self.pending:
                return False
        out = list(self.pending)
        self.pending.clear()
        return out


def convert(ev: StoreEvent, matches: Predicate, shared: dict | None = None) -> WatchEvent | None:
    """The event a filtered watcher sees for ``ev`` (``cache_watcher.go`` convertToWatchEvent).

    With ``shared`` (a dict kept per store event), watchers seeing the same event get the
    same :class:`WatchEvent` instance."""
    if ev.type == "ADDED":
        return _event(shared, "ADDED", ev.object, ev.revision) if matches(ev.object) else None
    if ev.type == "DELETED":
        old = ev.prev or ev.object
        return _event(shared, "DELETED", ev.object, ev.revision) if matches(old) else None
    cur = matches(ev.object)
    was = ev.prev is not None and matches(ev.prev)
    if cur and was:
        return _event(shared, "MODIFIED", ev.object, ev.revision)
    if cur:
        return _event(shared, "ADDED", ev.object, ev.revision)
    if was and ev.prev is not None:
        if shared is not None and "DELETED" in shared:
            return shared["DELETED"]
        prev = dict(ev.prev)
        prev["metadata"] = {**prev.get("metadata", {}), "resourceVersion": str(ev.revision)}
        return _event(shared, "DELETED", prev, ev.revision)
    return None


def _event(shared: dict | None, typ: str, obj: dict, rev: int) -> WatchEvent:
    if shared is None:
        return WatchEvent(typ, obj, rev)
    out = shared.get(typ)
    if out is None:
        out = shared[typ] = WatchEvent(typ, obj, rev)
    return out


class WatchCache:
    """Cache of one resource (``controlplane.api.resources.Resource``) fed by one etcd watch.

    ``on_event(resource, store_event, delivered)`` is called for every etcd event after
    dispatch (``delivered`` = number of watchers that got it); used for the trace.
    """

    def __init__(self, store: Store, resource: Any, capacity: int = 10_000, queue_size: int = 1_000,
                 on_event: Callable[[Any, StoreEvent, int], None] | None = None) -> None:
        self.store = store
        self.resource = resource
        self.prefix = collection_prefix(resource)
        self.capacity = capacity
        self.queue_size = queue_size
        self.on_event = on_event
        self.objects: dict[str, dict] = {}
        #: structural sharing of each stored version with the previous one (or a sibling)
        self._sharer = Sharer()
        self.ring: collections.deque[StoreEvent] = collections.deque(maxlen=capacity)
        self.oldest = 0          # events with revision > oldest are all in the ring
        self._evicted = False    # an event left the ring since the last relist
        self.revision = 0        # everything up to here has been applied
        self.watchers: set[CacheWatcher] = set()
        self.ready = asyncio.Event()
        self._progress = asyncio.Condition()
        self._task: asyncio.Task | None = None
        self._stream: EventStream | None = None   # the current etcd watch attempt
        self._proof: asyncio.Task | None = None
        self._asked = float("-inf")  # loop time of the last progress question

    async def start(self) -> None:
        """List, then start the etcd watch task; returns once the cache is filled."""
        await self._relist()
        self._task = asyncio.create_task(self._run(), name=f"watchcache-{self.resource.plural}")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        await cancel_and_wait(self._proof)
        for w in list(self.watchers):
            w.close()

    async def _relist(self) -> None:
        res = await self.store.list(self.prefix)
        sharer = self._sharer
        sharer.clear()
        old = self.objects
        self.objects = {}
        for o in res.items:
            k = self._key(o)
            self.objects[k] = sharer.store(o, old.get(k))
        self.ring.clear()
        self.oldest = self.revision = res.revision
        self._evicted = False
        for w in list(self.watchers):  # they may have missed events: make them reconnect
            w.close()
        self.watchers.clear()
        self.ready.set()
        await self._notify()

    def _key(self, obj: dict) -> str:
        md = obj.get("metadata") or {}
        if self.resource.namespaced:
            return f"{self.prefix}{md.get('namespace', '')}/{md.get('name', '')}"
        return f"{self.prefix}{md.get('name', '')}"

    async def _run(self) -> None:
        """Feed the cache from etcd until cancelled: one :class:`EventStream` per attempt, each
        from the last applied revision + 1 (never etcd's current one), so a reconnect neither
        skips nor repeats an event. A compacted start revision (or etcd's history lost) →
        relist, closing every watcher (they re-watch and get 410 for revisions before the
        relist: the cacher's reflector relisting into ``watchCache.Replace``). Attempts are
        spaced by exponential back-off (0.1 s doubling to 5 s, reset once a stream works),
        one log line each."""
        backoff = Backoff(0.1, 5.0)
        loop = asyncio.get_running_loop()
        while True:
            stream = self.store.watch(self.prefix, self.revision + 1, previous=lambda k: self.objects.get(k))
            self._stream = stream
            began, got = loop.time(), False
            try:
                async for item in stream:
                    got = True
                    if isinstance(item, int):
                        await self._advance(item)
                        continue
                    self._apply(item)
                    await self._notify()
                error: Exception = RuntimeError("etcd watch ended")
            except asyncio.CancelledError:
                raise
            except Expired as e:
                event(log, "watchcache.relist", resource=self.resource.plural, reason=str(e)[:200])
                await self._relist_retrying(backoff)
                continue
            except Exception as e:  # etcd restart / connection loss: resume from our revision
                error = e
            finally:
                self._stream = None
                stream.close()
            if stream.created and (got or loop.time() - began > backoff.cap):
                backoff.reset()
            delay = backoff.next()
            event(log, "watchcache.watch_error", logging.WARNING, resource=self.resource.plural,
                  revision=self.revision, retry_in=f"{delay:.2f}s", error=str(error)[:200])
            await asyncio.sleep(delay)

    async def _relist_retrying(self, backoff: Backoff) -> None:
        while True:
            try:
                await self._relist()
                backoff.reset()
                return
            except Exception as e:
                delay = backoff.next()
                event(log, "watchcache.relist_error", logging.WARNING, resource=self.resource.plural,
                      retry_in=f"{delay:.2f}s", error=str(e)[:200])
                await asyncio.sleep(delay)

    async def _advance(self, rev: int) -> None:
        """Every event up to ``rev`` is applied (a progress notification or a Range proof)."""
        if rev > self.revision:
            self.revision = rev
            await self._notify()

    def _apply(self, ev: StoreEvent) -> None:
        if ev.revision <= self.revision and ev.type != "DELETED" and self.ring and \
                self.ring[-1].revision >= ev.revision:
            return  # duplicate after a re-watch
        if ev.type == "DELETED":
            self._sharer.forget(self.objects.pop(ev.key, None))
        else:
            # the new version holds the parts equal to its previous version (or, when ADDED, to
            # the last object of the same owner) as those very objects: a ring of 10,000 events
            # then costs what their differences cost, not 10,000 full copies
            ev.object = self.objects[ev.key] = self._sharer.store(ev.object, ev.prev)
        if len(self.ring) == self.ring.maxlen:
            self.oldest = self.ring[0].revision
            self._evicted = True
        self.ring.append(ev)
        self.revision = max(self.revision, ev.revision)
        delivered = 0
        shared: dict = {}
        for w in list(self.watchers):
            if w.offer(ev, shared):
                delivered += 1
            if w.closed:
                self.watchers.discard(w)
        if self.on_event is not None:
            try:
                self.on_event(self.resource, ev, delivered)
            except Exception:  # the trace must never break the cache
                log.exception("on_event failed")

    async def _notify(self) -> None:
        async with self._progress:
            self._progress.notify_all()

    async def wait_for_revision(self, rev: int, timeout: float = 3.0) -> bool:
        """Wait until the cache has applied every event up to revision ``rev``; False after
        ``timeout`` seconds.

        While waiting, every :data:`PROGRESS_PERIOD` the cache asks etcd whether an idle
        resource is current (the cacher's RequestWatchProgress): a progress request on the
        current stream when the server's answers are trusted (it may drop one while its
        watchers catch up, so it is asked again), otherwise a Range proving that nothing under
        the prefix changed (:meth:`Store.unchanged`, for etcd < 3.4.31 / 3.5.13). Neither moves
        the revision past an event the cache has not applied.
        """
        if self.revision >= rev:
            return True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.revision < rev:
            left = deadline - loop.time()
            if left <= 0:
                return False
            self._ask_progress()
            async with self._progress:
                try:
                    await asyncio.wait_for(self._progress.wait_for(lambda: self.revision >= rev),
                                           min(left, PROGRESS_PERIOD))
                except asyncio.TimeoutError:
                    pass
        return True

    def _ask_progress(self) -> None:
        """At most one question per :data:`PROGRESS_PERIOD`, however many wait."""
        stream = self._stream
        if stream is None or not stream.created:
            return  # reconnecting: the new stream starts from our revision anyway
        now = asyncio.get_running_loop().time()
        if now - self._asked < PROGRESS_PERIOD:
            return
        self._asked = now
        if stream.progress_supported:
            stream.request_progress()
        elif self._proof is None or self._proof.done():
            self._proof = asyncio.create_task(self._prove_current(), name=f"watchcache-proof-{self.resource.plural}")

    async def _prove_current(self) -> None:
        since, count = self.revision, len(self.objects)  # one state: no await in between
        try:
            rev = await self.store.unchanged(self.prefix, since, count)
        except Exception as e:
            event(log, "watchcache.progress_error", logging.WARNING, resource=self.resource.plural,
                  error=str(e)[:200])
            return
        if rev:
            await self._advance(rev)

    def list(self, matches: Predicate | None = None, namespace: str | None = None) -> tuple[list[dict], int]:
        """Current objects (sorted by key) passing ``matches``, and the cache revision."""
        items = []
        pre = f"{self.prefix}{namespace}/" if namespace and self.resource.namespaced else self.prefix
        for k in sorted(self.objects):
            if k.startswith(pre) and (matches is None or matches(self.objects[k])):
                items.append(self.objects[k])
        return items, self.revision

    def get(self, key: str) -> dict | None:
        return self.objects.get(key)

    def watch(self, matches: Predicate, resource_version: int | None,
              initial_events_end: bool = False) -> tuple[CacheWatcher, int]:
        """Register a watcher; returns it and the revision its initial events reach.

        ``resource_version`` None (or 0) → synthetic ADDED for every matching object;
        N → replay ring events with revision > N. Raises TooOldResourceVersion.
        Registration and the initial events happen with no await in between.
        ``initial_events_end``: after the synthetic ADDED events, a BOOKMARK at the cache
        revision annotated ``k8s.io/initial-events-end: "true"`` (WatchList, ``cacher.go``).
        """
        w = CacheWatcher(matches, self.queue_size + len(self.objects) + len(self.ring))
        if not resource_version:
            for k in sorted(self.objects):
                o = self.objects[k]
                if matches(o):
                    w.pending.append(WatchEvent("ADDED", o, int(o["metadata"]["resourceVersion"])))
            if initial_events_end:
                r = self.resource
                w.pending.append(WatchEvent("BOOKMARK", {
                    "kind": r.kind, "apiVersion": r.api_version,
                    "metadata": {"resourceVersion": str(self.revision),
                                 "annotations": {"k8s.io/initial-events-end": "true"}}}, self.revision))
        else:
            oldest = self.oldest_available()
            if resource_version < oldest:
                raise TooOldResourceVersion(resource_version, oldest)
            for ev in self.ring:
                if ev.revision > resource_version:
                    out = convert(ev, matches)
                    if out is not None:
                        w.pending.append(out)
        w.limit = self.queue_size + len(w.pending)
        self.watchers.add(w)
        return w, self.revision

    def oldest_available(self) -> int:
        """The oldest resourceVersion a watch may start from: the list's revision while no
        event has left the ring since the last relist, else the revision of the ring's first
        event minus one — what ``watchCache.getAllEventsSinceLocked``
        (``storage/cacher/watch_cache.go``) calls ``oldest - 1`` and prints in its 410
        ``too old resource version: N (oldest - 1)``."""
        if self._evicted and self.ring:
            return self.ring[0].revision - 1
        return self.oldest

    def unwatch(self, w: CacheWatcher) -> None:
        self.watchers.discard(w)
        w.closed = True
