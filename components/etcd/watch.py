"""Watch: watchers, the per-stream send queue and the fan-out of committed revisions.

Shape follows etcd ``server/mvcc/watchable_store.go`` and ``server/etcdserver/api/v3rpc/watch.go``:

* a watcher is *synced* (it receives new revisions from :meth:`WatchHub.notify` as they commit) or
  *unsynced* (it is behind: its stream's sender catches it up from the store's history log,
  then flips it to synced in the same event-loop step, so nothing is missed or sent twice);
* every watcher remembers ``next_rev``, the first revision it has not been sent; a new watcher
  with a ``start_revision`` simply starts unsynced at that revision;
* the per-stream queue is bounded (``max_queue`` responses): when it is full, fan-out moves the
  watcher to unsynced instead of queueing more — etcd's slow-watcher handling — so a slow
  client neither stalls the server nor grows its memory;
* a start revision below the compaction point, or falling behind it while unsynced, ends the
  watcher with ``canceled=true`` and ``compact_revision``;
* ``notified_rev`` is the newest revision handed to watchers (with a data dir: the newest
  *durable* revision); headers of watch responses carry it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Callable

from aetcd.rpc import kv_pb2, rpc_pb2

from .mvcc import Change, Store, in_range

PUT = kv_pb2.Event.PUT
DELETE = kv_pb2.Event.DELETE
NOPUT = rpc_pb2.WatchCreateRequest.NOPUT
NODELETE = rpc_pb2.WatchCreateRequest.NODELETE

#: events per catch-up response (a revision is never split)
CATCHUP_EVENTS = 1000
#: revisions scanned per catch-up step (keeps one loop step short)
CATCHUP_REVS = 5000


class Watcher:
    """One watch: key range, options and delivery position (``next_rev``)."""

    __slots__ = ("id", "stream", "key", "end", "prev_kv", "no_put", "no_delete",
                 "progress_notify", "fragment", "next_rev", "synced")

    def __init__(self, wid: int, stream: "WatchStream", req: rpc_pb2.WatchCreateRequest) -> None:
        self.id = wid
        self.stream = stream
        self.key = req.key
        self.end = req.range_end
        self.prev_kv = req.prev_kv
        self.no_put = NOPUT in req.filters
        self.no_delete = NODELETE in req.filters
        self.progress_notify = req.progress_notify
        self.fragment = req.fragment
        self.next_rev = 0
        self.synced = False

    def add_events(self, resp: rpc_pb2.WatchResponse, changes: list[Change]) -> int:
        """Append this watcher's events of one revision to ``resp``; returns how many."""
        n = 0
        key, end = self.key, self.end
        for kv, prev in changes:
            k = kv.key
            if not end:
                if k != key:
                    continue
            elif not in_range(k, key, end):
                continue
            if kv.version:
                if self.no_put:
                    continue
                ev = resp.events.add(type=PUT, kv=kv)
            else:
                if self.no_delete:
                    continue
                ev = resp.events.add(type=DELETE, kv=kv)
            if self.prev_kv and prev is not None:
                ev.prev_kv.CopyFrom(prev)
            n += 1
        return n


class WatchHub:
    """All watch streams of one server; ``header(rev)`` builds a ResponseHeader."""

    def __init__(self, store: Store, header: Callable[[int], rpc_pb2.ResponseHeader],
                 max_queue: int = 1024, max_request_bytes: int = 1536 * 1024) -> None:
        self.store = store
        #: responses of ``fragment`` watchers bigger than this are split (etcd --max-request-bytes)
        self.max_request_bytes = max_request_bytes
        self.header = header
        self.max_queue = max_queue
        self.notified_rev = store.rev
        self.synced: dict[Watcher, None] = {}
        self.streams: set[WatchStream] = set()
        self.stopped = False

    def notify(self, revisions: list[tuple[int, list[Change]]]) -> None:
        """Fan committed revisions out to synced watchers (no awaits: called inside a loop step)."""
        if not revisions:
            return
        last = revisions[-1][0]
        self.notified_rev = last
        if not self.synced:
            return
        header = None
        nxt, max_queue = last + 1, self.max_queue
        # one pass over every synced watcher (an apiserver holds one per resource, ~50): the
        # range test inline, a response built only for a watcher one of the changes is for
        for w in list(self.synced):
            stream = w.stream
            if len(stream.queue) >= max_queue:
                del self.synced[w]
                w.synced = False
                stream.unsynced[w] = None
                stream.wake.set()
                continue
            first, w.next_rev = w.next_rev, nxt
            key, end = w.key, w.end
            resp = None
            for rev, changes in revisions:
                if rev < first:
                    continue
                for kv, _ in changes:
                    k = kv.key
                    if (k >= key if end == b"\0" else key <= k < end) if end else k == key:
                        break
                else:
                    continue  # nothing of this revision is in the watcher's range
                if resp is None:
                    resp = rpc_pb2.WatchResponse(watch_id=w.id)
                w.add_events(resp, changes)
            if resp is not None and resp.events:
                if header is None:
                    header = self.header(last)
                resp.header.CopyFrom(header)
                stream.push_events(w, resp)

    def progress(self) -> None:
        """Periodic progress notification to synced ``progress_notify`` watchers with idle streams."""
        rev = self.notified_rev
        for w in list(self.synced):
            if w.progress_notify and not w.stream.queue:
                w.stream.push(rpc_pb2.WatchResponse(header=self.header(rev), watch_id=w.id))

    def close_all(self) -> None:
        """The server is stopping: end every stream (they answer ``etcdserver: server stopped``)."""
        self.stopped = True
        for s in list(self.streams):
            s.close()


class WatchStream:
    """One ``Watch`` gRPC stream: receives create/cancel/progress requests, sends responses in order."""

    def __init__(self, hub: WatchHub) -> None:
        self.hub = hub
        self.queue: deque[rpc_pb2.WatchResponse] = deque()
        self.wake = asyncio.Event()
        self.watchers: dict[int, Watcher] = {}
        self.unsynced: dict[Watcher, None] = {}
        self.next_id = 0
        self.closed = False
        self.progress_pending = False

    def push(self, resp: rpc_pb2.WatchResponse) -> None:
        self.queue.append(resp)
        self.wake.set()

    def push_events(self, w: Watcher, resp: rpc_pb2.WatchResponse) -> None:
        """Queue an event response; for a ``fragment`` watcher, one bigger than the server's max
        request size is split into responses marked ``fragment=true`` but the last (etcd
        ``v3rpc/watch.go`` sendFragments; a single event is never split)."""
        limit = self.hub.max_request_bytes
        if not w.fragment or len(resp.events) < 2 or resp.ByteSize() < limit:
            self.push(resp)
            return
        events = list(resp.events)
        i = 0
        while i < len(events):
            part = rpc_pb2.WatchResponse(header=resp.header, watch_id=resp.watch_id, fragment=True)
            part.events.append(events[i])
            i += 1
            size = part.ByteSize()
            while i < len(events):
                size += events[i].ByteSize() + 5  # field tag + length prefix
                if size >= limit:
                    break
                part.events.append(events[i])
                i += 1
            if i == len(events):
                part.fragment = False
            self.push(part)

    def close(self) -> None:
        self.closed = True
        self.wake.set()

    # ------------------------------------------------------------------ requests
    def create(self, req: rpc_pb2.WatchCreateRequest) -> None:
        """Handle a WatchCreateRequest: created response first, then events. Source: etcd v3rpc/watch.go."""
        hub = self.hub
        wid = req.watch_id
        if wid:
            if wid in self.watchers:
                self.push(rpc_pb2.WatchResponse(
                    header=hub.header(hub.notified_rev), watch_id=wid, created=True, canceled=True,
                    cancel_reason="mvcc: duplicate watch ID provided on the WatchStream"))
                return
        else:
            while self.next_id in self.watchers:
                self.next_id += 1
            wid = self.next_id
            self.next_id += 1
        w = Watcher(wid, self, req)
        self.push(rpc_pb2.WatchResponse(header=hub.header(hub.notified_rev), watch_id=wid, created=True))
        start = req.start_revision
        compact = hub.store.compact_rev
        if 0 < start < compact:
            self.push(rpc_pb2.WatchResponse(header=hub.header(hub.notified_rev), watch_id=wid,
                                            canceled=True, compact_revision=compact))
            return
        self.watchers[wid] = w
        if start <= 0 or start > hub.notified_rev:
            w.next_rev = start if start > 0 else hub.notified_rev + 1
            w.synced = True
            hub.synced[w] = None
        else:
            w.next_rev = start
            self.unsynced[w] = None

    def cancel(self, wid: int) -> None:
        w = self.watchers.pop(wid, None)
        if w is None:
            return
        self._drop(w)
        self.push(rpc_pb2.WatchResponse(header=self.hub.header(self.hub.notified_rev),
                                        watch_id=wid, canceled=True))
        self._answer_pending()

    def request_progress(self) -> None:
        """progress_request: one response with watch_id -1 at the notified revision once every
        watcher of the stream is synced, queued after their events; nothing on a stream with no
        watchers. etcd 3.4.25+/3.5.8+ ``watchableStore.progressIfSync`` (``v3rpc/watch.go``);
        etcd >= 3.4.31/3.5.13 drops a request made while a watcher is unsynced instead of
        deferring it: clients ask again, so either way they get no answer that runs ahead of an
        event. Older etcd answered at once, ahead of events still queued (etcd issue 15220)."""
        if self.unsynced:
            self.progress_pending = True
        elif self.watchers:
            self.push(rpc_pb2.WatchResponse(header=self.hub.header(self.hub.notified_rev), watch_id=-1))

    def _answer_pending(self) -> None:
        """A deferred progress request, once no watcher is unsynced any more."""
        if self.progress_pending and not self.unsynced:
            self.progress_pending = False
            if self.watchers:
                self.push(rpc_pb2.WatchResponse(header=self.hub.header(self.hub.notified_rev), watch_id=-1))

    def _drop(self, w: Watcher) -> None:
        self.hub.synced.pop(w, None)
        self.unsynced.pop(w, None)

    # ------------------------------------------------------------------ catch-up
    def _catch_up(self) -> None:
        """Advance every unsynced watcher by one bounded step (no awaits)."""
        hub = self.hub
        store = hub.store
        upto = hub.notified_rev
        for w in list(self.unsynced):
            if len(self.queue) >= hub.max_queue:
                return
            if w.next_rev < store.compact_rev:
                self.watchers.pop(w.id, None)
                del self.unsynced[w]
                self.push(rpc_pb2.WatchResponse(header=hub.header(upto), watch_id=w.id,
                                                canceled=True, compact_revision=store.compact_rev))
                continue
            resp = rpc_pb2.WatchResponse(watch_id=w.id)
            n = scanned = 0
            last = w.next_rev - 1
            done = True
            for rev, changes in store.events_since(w.next_rev, upto):
                if n >= CATCHUP_EVENTS or scanned >= CATCHUP_REVS:
                    done = False
                    break
                n += w.add_events(resp, changes)
                scanned += 1
                last = rev
            if n:
                resp.header.CopyFrom(hub.header(upto))
                self.push_events(w, resp)
            if done:
                w.next_rev = upto + 1
                del self.unsynced[w]
                w.synced = True
                hub.synced[w] = None
            else:
                w.next_rev = last + 1
        self._answer_pending()

    # ------------------------------------------------------------------ loops
    async def _recv(self, request_iterator) -> None:
        try:
            async for req in request_iterator:
                which = req.WhichOneof("request_union")
                if which == "create_request":
                    self.create(req.create_request)
                elif which == "cancel_request":
                    self.cancel(req.cancel_request.watch_id)
                elif which == "progress_request":
                    self.request_progress()
        finally:
            self.close()

    async def run(self, request_iterator, context) -> None:
        """Serve the stream until the client goes away or the server stops."""
        self.hub.streams.add(self)
        reader = asyncio.ensure_future(self._recv(request_iterator))
        try:
            while True:
                if self.queue:
                    await context.write(self.queue.popleft())
                    continue
                if self.closed:
                    return
                if self.unsynced:
                    self._catch_up()
                    if self.queue or not self.unsynced:
                        continue
                    await asyncio.sleep(0)  # queue full of nothing? yield once and retry
                    continue
                self.wake.clear()
                await self.wake.wait()
        finally:
            reader.cancel()
            self.hub.streams.discard(self)
            for w in list(self.watchers.values()):
                self._drop(w)
            self.watchers.clear()
