"""HTTP watch streams served from the watch cache (``endpoints/handlers/watch.go``).

``GET ...?watch=true&resourceVersion=RV[&allowWatchBookmarks=true][&timeoutSeconds=N]``:
200, chunked, one ``{"type":..., "object":...}`` JSON line per event, flushed per event.
RV unset or "0": synthetic ADDED for current objects, then live events; RV=N: events after N,
or one ERROR event (Status 410 Expired "too old resource version: N (M)") and close.
``sendInitialEvents=true&resourceVersionMatch=NotOlderThan`` (a streaming list, WatchList):
ADDED for the state not older than RV (RV unset: the current etcd revision), then — with
``allowWatchBookmarks`` — a BOOKMARK annotated ``k8s.io/initial-events-end: "true"`` at the
revision of that state, then changes; ``sendInitialEvents=false``: changes only.
BOOKMARK events (object = the kind with only ``metadata.resourceVersion``) every
``bookmark_interval`` seconds and when the timeout ends, only when requested.
With the Table Accept each object is a one-row meta.k8s.io Table.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from aiohttp import web

from controlplane.api import codec
from controlplane.log import event

from components.apiserver import listoptions
from components.apiserver import semantics as sem
from components.apiserver import status as st
from components.apiserver.cache import TooOldResourceVersion, WatchEvent
from components.apiserver.rest import TABLE_CT, _bool, _parse_rv, _with_type, wants_table
from components.apiserver.routing import RequestInfo

if TYPE_CHECKING:
    from components.apiserver.server import APIServer

log = logging.getLogger("apiserver.watch")


class WatchServer:
    """Serves watch requests of every resource from ``server.caches``."""

    def __init__(self, server: "APIServer", bookmark_interval: float = 1.0,
                 default_timeout: float = 1800.0) -> None:
        self.s = server
        self.bookmark_interval = bookmark_interval
        self.default_timeout = default_timeout
        self.active = 0

    async def serve(self, request: web.Request, info: RequestInfo, matches) -> web.StreamResponse:
        resource = info.resource
        cache = self.s.cache_for(resource)
        if cache is None:
            raise st.method_not_allowed()
        rv = _parse_rv(request.query.get("resourceVersion"))
        try:
            timeout = float(request.query.get("timeoutSeconds") or self.default_timeout)
        except ValueError:
            raise st.bad_request(f"invalid timeoutSeconds: {request.query.get('timeoutSeconds')!r}") from None
        bookmarks = _bool(request.query.get("allowWatchBookmarks"))
        _, send_initial = listoptions.parse(request.query, watch=True)
        table = wants_table(request)
        if rv:
            if not await cache.wait_for_revision(rv) and send_initial:
                raise listoptions.too_large_resource_version(rv, cache.revision)
        elif request.query.get("resourceVersion", "") == "":
            # unset = "most recent": a consistent read, so the initial events include every
            # write acknowledged before this request (cacher ConsistentListFromCache)
            await cache.wait_for_revision(await self.s.store.current_revision())
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
        await resp.prepare(request)
        self.active += 1
        event(log, "watch.start", resource=resource.plural, namespace=info.namespace or "", rv=rv,
              agent=request.headers.get("User-Agent", "").split(" ")[0])
        deadline = time.monotonic() + timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                wait = min(left, self.bookmark_interval) if bookmarks else left
                evs = await watcher.drain(wait)
                if evs is False:
                    if bookmarks and not watcher.pending:
                        await self._bookmark(resp, resource, cache.revision, table)
                    continue
                # every pending event in one write (one chunk): under load fewer syscalls;
                # clients decode a JSON stream, chunk boundaries carry no meaning
                lines = []
                closed = False
                for ev in evs:
                    if ev is None:
                        closed = True  # too slow or cache relisted; the client re-watches
                        break
                    lines.append(self._table_line(resource, ev) if table else event_line(resource, ev))
                if lines:
                    await resp.write(lines[0] if len(lines) == 1 else b"".join(lines))
                if closed:
                    break
            if bookmarks and not watcher.closed and not watcher.pending:
                # only when every event up to the cache's revision was written: a client
                # resuming from this bookmark must not skip events still queued
                await self._bookmark(resp, resource, cache.revision, table)
            await resp.write_eof()
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            cache.unwatch(watcher)
            self.active -= 1
        return resp

    async def _bookmark(self, resp: web.StreamResponse, resource: Any, rev: int, table: bool) -> None:
        if table:
            obj: dict = {"kind": "Table", "apiVersion": "meta.k8s.io/v1",
                         "metadata": {"resourceVersion": str(rev)}, "columnDefinitions": [], "rows": []}
        else:
            obj = {"kind": resource.kind, "apiVersion": resource.api_version,
                   "metadata": {"resourceVersion": str(rev)}}
        await self._send(resp, "BOOKMARK", obj)

    @staticmethod
    def _table_line(resource: Any, ev: WatchEvent) -> bytes:
        if ev.type == "BOOKMARK":
            return codec.dumps({"type": "BOOKMARK", "object": {
                "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": ev.object["metadata"],
                "columnDefinitions": [], "rows": []}}) + b"\n"
        obj = _with_type(resource, ev.object)
        obj = sem.table(resource.kind, [obj], obj["metadata"].get("resourceVersion", ""))
        return codec.dumps({"type": ev.type, "object": obj}) + b"\n"

    @staticmethod
    async def _send(resp: web.StreamResponse, typ: str, obj: dict) -> None:
        await resp.write(codec.dumps({"type": typ, "object": obj}) + b"\n")


def event_line(resource: Any, ev: WatchEvent) -> bytes:
    """The JSON line of watch event ``ev``, encoded once and kept on the (shared) event."""
    line = ev.line
    if line is None:
        line = ev.line = codec.dumps({"type": ev.type, "object": _with_type(resource, ev.object)}) + b"\n"
    return line
