"""Recording core/v1 Events, as client-go's ``tools/record`` EventRecorder.

``kubectl describe`` lists events by ``involvedObject`` (name, namespace, uid),
so each event names its object fully. Every event goes through an
:class:`EventCorrelator` first, as ``recordToSink`` does (``tools/record/events_cache.go``):

* **aggregation** (EventAggregator, EventAggregatorByReasonFunc): events that differ
  only in their message — same source, object, type, reason, reporting controller and
  instance — are counted; from the 10th distinct message within 10 minutes of the
  last one, they are recorded as one event whose message is
  ``(combined from similar events): <message>``;
* **de-duplication** (eventLogger): a repeat of an event already written (same key,
  message included, or the same aggregate) is a PATCH of that Event's ``count``,
  ``lastTimestamp`` and ``message`` (a create again when it is gone);
* **spam filter** (EventSourceObjectSpamFilter): a token bucket per source + object,
  burst 25, refilled one event every 5 minutes; an event beyond it is not written.

Each cache holds at most 4,096 keys, least recently used dropped (``maxLruCacheEntries``).
Failures to record are logged, never raised: events are best effort.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from controlplane import apitime
from controlplane.api.resources import EVENTS, by_kind
from controlplane.client.rest import ApiError, RestClient

log = logging.getLogger("events")

#: an event waiting for a writer: (the Event, a patch for an existing one or None)
_Pending = tuple[dict[str, Any], "dict[str, Any] | None"]

#: events_cache.go's defaults
LRU_ENTRIES = 4096
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL_SECONDS = 600.0
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
AGGREGATE_PREFIX = "(combined from similar events): "

_K = TypeVar("_K")
_V = TypeVar("_V")


class _LRU(Generic[_K, _V]):
    """groupcache's ``lru.Cache``: at most ``size`` keys, the least recently used dropped."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._d: collections.OrderedDict[_K, _V] = collections.OrderedDict()

    def get(self, key: _K) -> _V | None:
        v = self._d.get(key)
        if v is not None:
            self._d.move_to_end(key)
        return v

    def add(self, key: _K, value: _V) -> None:
        self._d[key] = value
        self._d.move_to_end(key)
        if len(self._d) > self.size:
            self._d.popitem(last=False)

    def __len__(self) -> int:
        return len(self._d)


def _object_key(ev: dict[str, Any]) -> tuple[str, ...]:
    src, io = ev.get("source") or {}, ev.get("involvedObject") or {}
    return (src.get("component", ""), src.get("host", ""), io.get("kind", ""), io.get("namespace", ""),
            io.get("name", ""), io.get("uid", ""), io.get("apiVersion", ""))


def spam_key(ev: dict[str, Any]) -> tuple[str, ...]:
    """``getSpamKey``: source and involved object."""
    return _object_key(ev)


def event_key(ev: dict[str, Any], obj: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """``getEventKey``: source, involved object (with fieldPath), type, reason, message.
    ``obj``: the event's :func:`spam_key`, when already known."""
    return (*(obj or _object_key(ev)), (ev.get("involvedObject") or {}).get("fieldPath", ""),
            ev.get("type", ""), ev.get("reason", ""), ev.get("message", ""))


def aggregate_key(ev: dict[str, Any], obj: tuple[str, ...] | None = None) -> tuple[tuple[str, ...], str]:
    """``EventAggregatorByReasonFunc``: (the group's key, the event's message). ``obj``: the
    event's :func:`spam_key`, when already known."""
    return ((*(obj or _object_key(ev)), ev.get("type", ""), ev.get("reason", ""), ev.get("reportingComponent", ""),
             ev.get("reportingInstance", "")), ev.get("message", ""))


class _Bucket:
    """A token bucket (``flowcontrol.NewTokenBucketRateLimiter``), full at first."""

    __slots__ = ("tokens", "at")

    def __init__(self, burst: int, now: float) -> None:
        self.tokens = float(burst)
        self.at = now

    def try_accept(self, qps: float, burst: int, now: float) -> bool:
        self.tokens = min(float(burst), self.tokens + (now - self.at) * qps)
        self.at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


class EventCorrelator:
    """client-go's ``EventCorrelator`` with its default options (module docstring).

    :meth:`correlate` takes a new Event (a dict with ``source``, ``involvedObject``,
    ``type``, ``reason``, ``message``, ``reportingComponent``, ``reportingInstance``)
    and returns ``(event, patch)``: the Event to create (``patch`` None), or the one
    already written with its new ``count`` and the merge patch to send; or None when
    the spam filter drops it. :meth:`update_state` records what the apiserver
    answered. ``clock``: seconds, monotonic (``time.monotonic`` by default)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._aggregates: _LRU[tuple[str, ...], tuple[set[str], float]] = _LRU(LRU_ENTRIES)
        #: event key → (count, firstTimestamp, name, resourceVersion)
        self._log: _LRU[tuple[str, ...], tuple[int, str, str, str]] = _LRU(LRU_ENTRIES)
        self._spam: _LRU[tuple[str, ...], _Bucket] = _LRU(LRU_ENTRIES)

    def _aggregate(self, ev: dict[str, Any], now: float,
                   obj: tuple[str, ...]) -> tuple[dict[str, Any], tuple[str, ...]]:
        akey, local = aggregate_key(ev, obj)
        rec = self._aggregates.get(akey)
        if rec is None or now - rec[1] > AGGREGATE_INTERVAL_SECONDS:
            rec = (set(), now)
        keys = rec[0]
        keys.add(local)
        self._aggregates.add(akey, (keys, now))
        if len(keys) < AGGREGATE_MAX_EVENTS:
            return ev, event_key(ev, obj)
        keys.pop()  # the set never grows past the maximum
        stamp = ev.get("lastTimestamp") or apitime.now()
        agg = {**ev, "metadata": {"name": f"{(ev.get('involvedObject') or {}).get('name')}.{time.time_ns():x}",
                                  "namespace": (ev.get("metadata") or {}).get("namespace")},
               "message": AGGREGATE_PREFIX + ev.get("message", ""), "count": 1,
               "firstTimestamp": stamp, "lastTimestamp": stamp}
        return agg, akey

    def correlate(self, ev: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
        """See the class docstring."""
        now = self.clock()
        # source and involved object: the spam key, and the start of the other two keys (an
        # aggregate or a repeat keeps both)
        skey = spam_key(ev)
        ev, key = self._aggregate(ev, now, skey)
        patch = None
        last = self._log.get(key)
        if last is not None and last[0] > 0:
            count, first, name, rv = last
            ev = {**ev, "metadata": {**(ev.get("metadata") or {}), "name": name,
                                     **({"resourceVersion": rv} if rv else {})},
                  "firstTimestamp": first, "count": count + 1}
            # what CreateTwoWayMergePatch finds between the event with count, lastTimestamp
            # and message zeroed and the event itself
            patch = {"count": ev["count"], "lastTimestamp": ev.get("lastTimestamp"), "message": ev.get("message")}
        md = ev.get("metadata") or {}
        self._log.add(key, (int(ev.get("count") or 1), ev.get("firstTimestamp") or "", md.get("name", ""),
                            md.get("resourceVersion", "")))
        bucket = self._spam.get(skey)
        if bucket is None:
            bucket = _Bucket(SPAM_BURST, now)
        accepted = bucket.try_accept(SPAM_QPS, SPAM_BURST, now)
        self._spam.add(skey, bucket)
        if not accepted:
            return None
        return ev, patch

    def update_state(self, ev: dict[str, Any]) -> None:
        """``updateState``: remember the apiserver's copy of ``ev`` (name, count,
        resourceVersion) under its event key."""
        md = ev.get("metadata") or {}
        self._log.add(event_key(ev), (int(ev.get("count") or 1), ev.get("firstTimestamp") or "",
                                             md.get("name", ""), md.get("resourceVersion", "")))


class EventRecorder:
    """``event(obj, type, reason, message)`` writes a core/v1 Event.

    ``component`` becomes ``source.component`` / ``reportingComponent``
    (``default-scheduler``, ``kubelet``, ``deployment-controller``); ``host``
    becomes ``source.host`` (kubelets set their node name).
    """

    def __init__(self, client: RestClient, component: str, host: str | None = None, *,
                 max_in_flight: int | None = None, queue_size: int = 1000,
                 correlator: EventCorrelator | None = None) -> None:
        """``max_in_flight``: None = one task per event (default); N = a queue of at
        most ``queue_size`` events written by N background writers, so a burst of
        events never takes every connection from the component's other requests (the
        scheduler's bindings). A full queue drops the event with a warning, as
        client-go's event broadcaster does (``watch.DropIfChannelFull``, queue 1000).
        ``correlator``: the :class:`EventCorrelator` (a new one by default)."""
        self.client = client
        self.component = component
        self.host = host
        self.correlator = correlator or EventCorrelator()
        self._tasks: set[asyncio.Task[None]] = set()
        self.max_in_flight = max_in_flight
        self._queue: asyncio.Queue[_Pending] | None = asyncio.Queue(queue_size) if max_in_flight else None
        self._writers: list[asyncio.Task[None]] = []
        #: event name -> the writes of it waiting for the one in flight to end (:meth:`_write`)
        self._in_flight: dict[str, list[asyncio.Future[None]]] = {}
        self.dropped = 0
        #: events the spam filter kept from the apiserver
        self.filtered = 0

    def event(self, obj: dict[str, Any], type_: str, reason: str, message: str,
              field_path: str | None = None) -> None:
        """Fire and forget: correlate (module docstring), schedule the write and return at once."""
        out = self.correlator.correlate(self._make(obj, type_, reason, message, field_path))
        if out is None:
            self.filtered += 1
            return
        if self._queue is not None:
            if not self._writers:
                loop = asyncio.get_running_loop()
                self._writers = [loop.create_task(self._writer()) for _ in range(self.max_in_flight or 1)]
            try:
                self._queue.put_nowait(out)
            except asyncio.QueueFull:
                self.dropped += 1
                log.warning("event dropped (queue full): %s %s", reason,
                            (obj.get("metadata") or {}).get("name"))
            return
        t = asyncio.get_running_loop().create_task(self._write(*out))
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)

    async def _writer(self) -> None:
        assert self._queue is not None
        while True:
            item = await self._queue.get()
            try:
                await self._write(*item)
            finally:
                self._queue.task_done()

    async def flush(self) -> None:
        """Wait until every event recorded so far has been written (or failed)."""
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        if self._queue is not None and self._writers:
            await self._queue.join()

    def _make(self, obj: dict[str, Any], type_: str, reason: str, message: str,
              field_path: str | None) -> dict[str, Any]:
        """The new Event about ``obj`` (``makeEvent``), named ``<object>.<unix ns in hex>``."""
        md = obj.get("metadata") or {}
        kind = obj.get("kind") or ""
        involved: dict[str, Any] = {
            "kind": kind, "namespace": md.get("namespace", ""), "name": md.get("name"),
            "uid": md.get("uid"), "apiVersion": obj.get("apiVersion") or _api_version(kind),
            "resourceVersion": md.get("resourceVersion", ""),
        }
        if field_path:
            involved["fieldPath"] = field_path
        now = apitime.now()
        return {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{md.get('name')}.{time.time_ns():x}",
                         "namespace": md.get("namespace") or "default"},
            "involvedObject": involved, "reason": reason, "message": message, "type": type_,
            "source": {"component": self.component, **({"host": self.host} if self.host else {})},
            "firstTimestamp": now, "lastTimestamp": now, "count": 1,
            "reportingComponent": self.component, "reportingInstance": self.host or "",
        }

    async def _write(self, ev: dict[str, Any], patch: dict[str, Any] | None) -> None:
        """``recordEvent``: PATCH an event seen before (create it again if it is gone),
        else create it; then remember the apiserver's answer.

        Writes of one Event (same name) go one after another: client-go's broadcaster hands
        every event to its sink's one goroutine (``tools/record/event.go`` StartRecordingToSink,
        recordToSink), so a count patch never overtakes the create of the event it patches.
        Sent concurrently, the patch found nothing (404), created the event itself and one of
        the two creates failed 409 AlreadyExists, its count lost."""
        name = ev["metadata"]["name"]
        waiting = self._in_flight.get(name)
        if waiting is None:
            self._in_flight[name] = []  # this write goes now; later ones of the name wait in the list
        else:
            turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            waiting.append(turn)
            try:
                await turn
            except asyncio.CancelledError:
                if turn.done() and not turn.cancelled():  # our turn had come: pass it on
                    self._next_turn(name)
                raise
        md = ev["metadata"]
        ns = md.get("namespace") or "default"
        try:
            out = None
            if patch is not None:
                try:
                    out = await self.client.patch(EVENTS, md["name"], patch, ns, patch_type="strategic")
                except ApiError as e:
                    if e.code != 404:
                        raise
            if out is None:
                md.pop("resourceVersion", None)
                out = await self.client.create(EVENTS, ev, ns)
            if isinstance(out, dict) and out.get("metadata"):
                self.correlator.update_state(out)
        except (ApiError, OSError, asyncio.TimeoutError, Exception) as e:  # best effort
            log.warning("event not recorded: %s %s: %s", ev.get("reason"),
                        (ev.get("involvedObject") or {}).get("name"), e)
        finally:
            self._next_turn(name)

    def _next_turn(self, name: str) -> None:
        """The write of ``name`` in flight ended: start the next one waiting (first come, first
        served; cancelled ones skipped), else forget the name."""
        waiting = self._in_flight[name]
        while waiting:
            turn = waiting.pop(0)
            if not turn.done():
                turn.set_result(None)
                return
        del self._in_flight[name]


def _api_version(kind: str) -> str:
    try:
        return by_kind(kind).api_version
    except KeyError:
        return "v1"
