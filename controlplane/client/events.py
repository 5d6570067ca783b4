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

from controlplane.api.resources import EVENTS, by_kind
from controlplane.client.rest import ApiError, RestClient

log = logging.getLogger("events")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class EventRecorder:
    """``event(obj, type, reason, message)`` writes a core/v1 Event.

    ``component`` becomes ``source.component`` / ``reportingComponent``
    (``default-scheduler``, ``kubelet``, ``deployment-controller``); ``host``
    becomes ``source.host`` (kubelets set their node name).
    """

    def __init__(self, client: RestClient, component: str, host: str | None = None) -> None:
        self.client = client
        self.component = component
        self.host = host
        self._seen: dict[tuple, dict] = {}
        self._tasks: set[asyncio.Task] = set()

    def event(self, obj: dict, type_: str, reason: str, message: str,
              field_path: str | None = None) -> None:
        """Fire and forget: schedule the write and return at once."""
        t = asyncio.get_running_loop().create_task(
            self._write(obj, type_, reason, message, field_path))
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)

    async def flush(self) -> None:
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _write(self, obj: dict, type_: str, reason: str, message: str,
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
        key = (md.get("uid"), reason, message, field_path)
        now = _now()
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
