"""Recording core/v1 Events, as client-go's ``tools/record`` EventRecorder.

``kubectl describe`` lists events by ``involvedObject`` (name, namespace, uid),
so each event names its object fully. Repeats of the same (object, reason,
message) within the recorder's life bump ``count`` and ``lastTimestamp`` instead
of creating a new Event (client-go's EventCorrelator aggregation, simplified).
Failures to record are logged, never raised: events are best effort.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from controlplane import apitime
from controlplane.api.resources import EVENTS, by_kind
from controlplane.client.rest import ApiError, RestClient

log = logging.getLogger("events")

#: an event waiting for a writer: (object, type, reason, message, fieldPath)
_Pending = tuple[dict[str, Any], str, str, str, "str | None"]


class EventRecorder:
    """``event(obj, type, reason, message)`` writes a core/v1 Event.

    ``component`` becomes ``source.component`` / ``reportingComponent``
    (``default-scheduler``, ``kubelet``, ``deployment-controller``); ``host``
    becomes ``source.host`` (kubelets set their node name).
    """

    def __init__(self, client: RestClient, component: str, host: str | None = None, *,
                 max_in_flight: int | None = None, queue_size: int = 1000) -> None:
        """``max_in_flight``: None = one task per event (default); N = a queue of at
        most ``queue_size`` events written by N background writers, so a burst of
        events never takes every connection from the component's other requests (the
        scheduler's bindings). A full queue drops the event with a warning, as
        client-go's event broadcaster does (``watch.DropIfChannelFull``, queue 1000)."""
        self.client = client
        self.component = component
        self.host = host
        #: (uid, reason, message, fieldPath) -> the Event last written for it
        self._seen: dict[tuple[str | None, str, str, str | None], dict[str, Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.max_in_flight = max_in_flight
        self._queue: asyncio.Queue[_Pending] | None = asyncio.Queue(queue_size) if max_in_flight else None
        self._writers: list[asyncio.Task[None]] = []
        self.dropped = 0

    def event(self, obj: dict[str, Any], type_: str, reason: str, message: str,
              field_path: str | None = None) -> None:
        """Fire and forget: schedule the write and return at once."""
        if self._queue is not None:
            if not self._writers:
                loop = asyncio.get_running_loop()
                self._writers = [loop.create_task(self._writer()) for _ in range(self.max_in_flight or 1)]
            try:
                self._queue.put_nowait((obj, type_, reason, message, field_path))
            except asyncio.QueueFull:
                self.dropped += 1
                log.warning("event dropped (queue full): %s %s", reason,
                            (obj.get("metadata") or {}).get("name"))
            return
        t = asyncio.get_running_loop().create_task(
            self._write(obj, type_, reason, message, field_path))
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

    async def _write(self, obj: dict[str, Any], type_: str, reason: str, message: str,
                     field_path: str | None) -> None:
        md = obj.get("metadata") or {}
        kind = obj.get("kind") or ""
        ns = md.get("namespace") or "default"
        involved: dict[str, Any] = {
            "kind": kind, "namespace": md.get("namespace", ""), "name": md.get("name"),
            "uid": md.get("uid"), "apiVersion": obj.get("apiVersion") or _api_version(kind),
            "resourceVersion": md.get("resourceVersion", ""),
        }
        if field_path:
            involved["fieldPath"] = field_path
        uid: str | None = md.get("uid")
        key = (uid, reason, message, field_path)
        now = apitime.now()
        try:
            prev = self._seen.get(key)
            if prev is not None:
                prev["count"] = prev.get("count", 1) + 1
                prev["lastTimestamp"] = now
                self._seen[key] = await self.client.update(EVENTS, prev)
                return
            ev = {
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": f"{md.get('name')}.{time.time_ns():x}", "namespace": ns},
                "involvedObject": involved, "reason": reason, "message": message, "type": type_,
                "source": {"component": self.component, **({"host": self.host} if self.host else {})},
                "firstTimestamp": now, "lastTimestamp": now, "count": 1,
                "reportingComponent": self.component, "reportingInstance": self.host or "",
            }
            self._seen[key] = await self.client.create(EVENTS, ev, ns)
            if len(self._seen) > 4096:
                self._seen.pop(next(iter(self._seen)))
        except (ApiError, OSError, asyncio.TimeoutError, Exception) as e:  # best effort
            log.warning("event not recorded: %s %s: %s", reason, md.get("name"), e)


def _api_version(kind: str) -> str:
    try:
        return by_kind(kind).api_version
    except KeyError:
        return "v1"
