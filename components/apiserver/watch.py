"""HTTP watch streams served from the watch cache (``endpoints/handlers/watch.go``).

``GET ...?watch=true&resourceVersion=RV[&allowWatchBookmarks=true][&timeoutSeconds=N]``:
200, chunked, one ``{"type":..., "object":...}`` JSON line per event, flushed per event.
RV unset or "0": synthetic ADDED for current objects, then live events; RV=N: events after N,
or one ERROR event (Status 410 Expired "too old resource version: N (M)") and close.
``sendInitialEvents=true&resourceVersionMatch=NotOlderThan`` (a streaming list, WatchList):
ADDED for the state not older than RV (RV unset: the current etcd revision), then — with
``allowWatchBookmarks`` — a BOOKMARK annotated ``k8s.io/initial-events-end: "true"`` at the
revision of that state, then changes; ``sendInitialEvents=false``: changes only.
BOOKMARK events (object = the kind's zero value with only ``metadata.resourceVersion``),
only when requested: every ``bookmark_interval`` seconds (60 by default, as the cacher)
and 2 s before the watch's deadline (``storage/cacher/cache_watcher.go`` nextBookmarkTime).
With the Table Accept each object is a one-row meta.k8s.io Table.
The stream lasts ``timeoutSeconds`` (default: ``--min-request-timeout`` randomised, see
:func:`watch_timeout`), also for a client that stops reading; on apiserver shutdown every
stream ends with its terminating chunk.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web

from components.apiserver import listoptions
from components.apiserver import semantics as sem
from components.apiserver import status as st
from components.apiserver.cache import CacheWatcher, TooOldResourceVersion, WatchCache, WatchEvent, cache_name
from components.apiserver.negotiation import TABLE_CT, include_object, parse_bool, parse_rv, wants_table, with_type
from components.apiserver.routing import RequestInfo
from controlplane.api import codec
from controlplane.log import event

log = logging.getLogger("apiserver.watch")


#: seconds a watch may take to write its terminating chunk once it ends (timeout,
#: shutdown); a client that does not take it by then is disconnected
END_GRACE = 5.0
#: seconds between BOOKMARK events by default: kube-apiserver's cacher sends one to each
#: watcher that asked for them about once a minute (``defaultBookmarkFrequency``,
#: ``storage/cacher/cacher.go``); ``--bookmark-interval`` sets it (tests: shorter)
BOOKMARK_INTERVAL = 60.0
#: the last bookmark of a watch comes this many seconds before its deadline
#: (``cacheWatcher.nextBookmarkTime``: "right before the watcher timeout ... 2s")
PRE_TIMEOUT_BOOKMARK = 2.0
#: a watcher written to less than COALESCE_AFTER seconds ago waits COALESCE seconds before its
#: next write, so that under a stream of events (a garbage collector's deletes, a ReplicaSet's
#: creates) each write carries every event of that moment; an event after a quiet spell is
#: written at once. The stream is the same JSON lines in the same order: clients decode a
#: JSON stream, chunk boundaries carry no meaning (kube-apiserver's watch encoder flushes per
#: event; its clients cannot tell)
COALESCE_AFTER = 0.005
COALESCE = 0.002


def watch_timeout(value: str | None, min_request_timeout: float) -> float:
    """The watch's duration in seconds from ``?timeoutSeconds=`` (a Go int64): N > 0 → N;
    unset or 0 → ``min_request_timeout`` × a random factor in [1, 2) so that clients'
    re-watches spread out; N < 0 → 0, the watch ends at once
    (``endpoints/handlers/get.go`` / ``rest.go`` ``getTimeout``). A value that is not an
    integer raises a 400 BadRequest with Go's ``strconv.ParseInt`` message."""
    v = value or ""
    if v:
        if not re.fullmatch(r"[+-]?[0-9]+", v):
            raise st.bad_request(f'strconv.ParseInt: parsing "{v}": invalid syntax')
        n = int(v)
        if not -(1 << 63) <= n < (1 << 63):
            raise st.bad_request(f'strconv.ParseInt: parsing "{v}": value out of range')
        if n:
            return max(float(n), 0.0)
    return min_request_timeout * (1.0 + random.random()) if min_request_timeout > 0 else 0.0


class WatchServer:
    """Serves watch requests of every resource from the watch caches.

    ``caches``: the live mapping :func:`~components.apiserver.cache.cache_name` → cache
    (owned by the server); ``current_revision()``: etcd's current revision, the state an
    unset ``resourceVersion`` waits for.
    ``min_request_timeout``: kube-apiserver's ``--min-request-timeout`` (seconds), the base
    of a watch's duration when the client gives no ``timeoutSeconds``. A watch ends at its
    deadline even when its client does not read: the write waiting for the socket is
    cancelled and, as the client is that far behind, its connection closed; otherwise the
    stream gets :data:`END_GRACE` seconds to end cleanly. :meth:`shutdown` ends every watch."""

    def __init__(self, caches: Mapping[str, WatchCache], current_revision: Callable[[], Awaitable[int]],
                 bookmark_interval: float = BOOKMARK_INTERVAL, min_request_timeout: float = 1800.0) -> None:
        self.caches = caches
        self.current_revision = current_revision
        self.bookmark_interval = bookmark_interval
        self.min_request_timeout = min_request_timeout
        self.watchers: set[CacheWatcher] = set()
        self.stopping = False

    @property
    def active(self) -> int:
        """Number of watch streams being served."""
        return len(self.watchers)

    async def shutdown(self, app: Any = None) -> None:
        """End every watch stream cleanly (the terminating chunk, no reset) and refuse new
        ones with 503, as kube-apiserver's watch handlers return when the server signals
        ``ShuttingDown`` (``endpoints/handlers/watch.go``). An aiohttp ``on_shutdown`` hook."""
        self.stopping = True
        for w in list(self.watchers):
            w.close()

    async def serve(self, request: web.Request, info: RequestInfo, matches) -> web.StreamResponse:
        resource = info.resource
        cache = self.caches.get(cache_name(resource))
        if cache is None:
            raise st.method_not_allowed()
        if self.stopping:
            raise st.unavailable("the apiserver is shutting down")
        rv = parse_rv(request.query.get("resourceVersion"))
        timeout = watch_timeout(request.query.get("timeoutSeconds"), self.min_request_timeout)
        bookmarks = parse_bool(request.query.get("allowWatchBookmarks"))
        _, send_initial = listoptions.parse(request.query, watch=True)
        table = wants_table(request)
        include = include_object(request) if table else "Metadata"
        if rv:
            if not await cache.wait_for_revision(rv) and send_initial:
                raise listoptions.too_large_resource_version(rv, cache.revision)
        elif request.query.get("resourceVersion", "") == "":
            # unset = "most recent": a consistent read, so the initial events include every
            # write acknowledged before this request (cacher ConsistentListFromCache)
            await cache.wait_for_revision(await self.current_revision())
        resp = web.StreamResponse(status=200, headers={"Content-Type": TABLE_CT if table else "application/json"})
        resp.enable_chunked_encoding()
        try:
            if send_initial:
                # streaming list: the state (not older than RV) as ADDED, then the bookmark
                # that ends the initial events, then changes (cacher.go Watch, WatchList)
                watcher, _ = cache.watch(matches, None, initial_events_end=bookmarks)
            elif send_initial is False:
                watcher, _ = cache.watch(matches, rv or cache.revision)  # changes only
            else:
                watcher, _ = cache.watch(matches, rv)
        except TooOldResourceVersion as e:
            await resp.prepare(request)
            await self._send(resp, "ERROR", st.expired(str(e)).body())
            await resp.write_eof()
            return resp
        self.watchers.add(watcher)
        event(log, "watch.start", resource=resource.plural, namespace=info.namespace or "", rv=rv,
              agent=request.headers.get("User-Agent", "").split(" ")[0])
        loop = asyncio.get_running_loop()
        writing: list = []  # non-empty while a write of events is under way (cut by the deadline?)
        try:
            await resp.prepare(request)
            try:
                # one deadline for waiting *and* writing: a client that stops reading blocks
                # resp.write (it awaits the socket's drain) and is cut off here all the same
                deadline = loop.time() + timeout
                async with asyncio.timeout_at(deadline):
                    await self._stream(resp, watcher, resource, cache, bookmarks, table, writing, include, deadline)
            except TimeoutError:
                pass
            # the end: a client far behind (writing paused: the socket and our buffer are
            # full) is dropped with what is queued for it; it re-watches from the last
            # resourceVersion it processed. Otherwise the terminating chunk (the last bookmark
            # came PRE_TIMEOUT_BOOKMARK seconds before the deadline).
            ended = not request.protocol.writing_paused
            if ended:
                try:
                    async with asyncio.timeout(END_GRACE):
                        await resp.write_eof()
                except TimeoutError:
                    ended = False
            if not ended:
                event(log, "watch.unresponsive", logging.WARNING, resource=resource.plural,
                      agent=request.headers.get("User-Agent", "").split(" ")[0])
                if request.transport is not None:
                    request.transport.abort()
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            cache.unwatch(watcher)
            self.watchers.discard(watcher)
        return resp

    def next_bookmark(self, now: float, deadline: float) -> float | None:
        """When the next BOOKMARK is due (loop time): ``bookmark_interval`` seconds after
        ``now``, but :data:`PRE_TIMEOUT_BOOKMARK` seconds before the watch's ``deadline`` if
        that comes first, as ``cacheWatcher.nextBookmarkTime`` (``storage/cacher/cache_watcher.go``)
        schedules them; None when nothing is due before the deadline. (Once the pre-timeout
        moment has passed, the cacher sends no more; here an interval shorter than what is left
        — a test's ``bookmark_interval`` — still applies.)"""
        due = now + self.bookmark_interval
        pre = deadline - PRE_TIMEOUT_BOOKMARK
        if now <= pre < due:
            due = pre
        return due if due < deadline else None

    async def _stream(self, resp: web.StreamResponse, watcher: CacheWatcher, resource: Any,
                      cache: Any, bookmarks: bool, table: bool, writing: list, include: str = "Metadata",
                      deadline: float = float("inf")) -> None:
        """Write the watcher's events until it is closed (too slow, relisted or shutdown);
        with ``bookmarks``, a BOOKMARK when one is due (:meth:`next_bookmark`; skipped when
        events are being sent then: they carry the progress themselves).

        ``writing`` holds one item while a write is under way (a write cut off by the watch's
        deadline leaves it there). A bookmark is sent only when nothing is pending for the
        watcher, so it never claims events that were not sent."""
        loop = asyncio.get_running_loop()
        next_bookmark = self.next_bookmark(loop.time(), deadline) if bookmarks else None
        last_write = -COALESCE_AFTER
        while True:
            wait = None if next_bookmark is None else max(next_bookmark - loop.time(), 0.0)
            evs = await watcher.drain(wait)
            if next_bookmark is not None and loop.time() >= next_bookmark:
                if not watcher.pending and evs is False:
                    await self._bookmark(resp, resource, cache.revision, table)
                next_bookmark = self.next_bookmark(loop.time(), deadline)
            if evs is False:
                continue
            if loop.time() - last_write < COALESCE_AFTER and evs[-1] is not None:
                # events are coming fast: wait COALESCE seconds for more and write them all at
                # once (one chunk, one TLS record and syscall instead of one per event)
                await asyncio.sleep(COALESCE)
                more = watcher.take()
                if more:
                    evs.extend(more)
            last_write = loop.time()
            # every pending event in one write (one chunk): under load fewer syscalls;
            # clients decode a JSON stream, chunk boundaries carry no meaning
            lines = []
            closed = False
            for ev in evs:
                if ev is None:
                    closed = True  # too slow, cache relisted or shutdown; the client re-watches
                    break
                lines.append(self._table_line(resource, ev, include) if table else event_line(resource, ev))
            if lines:
                writing.append(True)
                await resp.write(lines[0] if len(lines) == 1 else b"".join(lines))
                writing.clear()
            if closed:
                return

    async def _bookmark(self, resp: web.StreamResponse, resource: Any, rev: int, table: bool) -> None:
        if table:
            obj: dict = {"kind": "Table", "apiVersion": "meta.k8s.io/v1",
                         "metadata": {"resourceVersion": str(rev)}, "columnDefinitions": [], "rows": []}
        else:
            obj = {"kind": resource.kind, "apiVersion": resource.api_version,
                   "metadata": {"resourceVersion": str(rev)}}
        await self._send(resp, "BOOKMARK", obj)

    @staticmethod
    def _table_line(resource: Any, ev: WatchEvent, include: str = "Metadata") -> bytes:
        if ev.type == "BOOKMARK":
            return codec.dumps({"type": "BOOKMARK", "object": {
                "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": ev.object["metadata"],
                "columnDefinitions": [], "rows": []}}) + b"\n"
        obj = with_type(resource, ev.object)
        obj = sem.table(resource.facts_key, [obj], obj["metadata"].get("resourceVersion", ""), include_object=include)
        return codec.dumps({"type": ev.type, "object": obj}) + b"\n"

    @staticmethod
    async def _send(resp: web.StreamResponse, typ: str, obj: dict) -> None:
        await resp.write(codec.dumps({"type": typ, "object": obj}) + b"\n")


def event_line(resource: Any, ev: WatchEvent) -> bytes:
    """The JSON line of watch event ``ev``, encoded once and kept on the (shared) event; for a
    version converted from its storage version (``resource.converted``), the event's object
    converted and encoded for this watcher (the shared line is the storage version's)."""
    if getattr(resource, "converted", False) and ev.type != "BOOKMARK":
        return codec.dumps({"type": ev.type, "object": with_type(resource, resource.from_storage(ev.object))}) + b"\n"
    line = ev.line
    # a custom resource's served versions share one cache: a watch of another version than
    # the stored object's gets its own encoding (apiVersion rewritten), not the shared line
    other = bool(getattr(resource, "extra", {}).get("crd")) and (ev.object or {}).get("apiVersion") not in (
        None, resource.api_version)
    if line is None or other:
        line = codec.dumps({"type": ev.type, "object": with_type(resource, ev.object)}) + b"\n"
        if not other:
            ev.line = line
    return line
