"""Sending a component's step records to the apiserver.

Components record the steps that happen in them (seed 000: 1, 5, 6, 9, 10, 12)
and send them in small batches to ``POST /debug/controlplane/trace``, where the
apiserver keeps them with its own (2, 3, 4, 7, 8, 10, 11, 13). Each record is
also logged as one structured line. Sending is best effort: a failure is logged
and the batch dropped, never blocking the component.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from controlplane.client.rest import ApiError
from controlplane.log import event
from controlplane.trace.record import StepRecord, make_record

log = logging.getLogger("trace")

PATH = "/debug/controlplane/trace"
#: records per POST: a batch of the scheduler's (some 9 KB each with 100 nodes) stays far
#: below the apiserver's 3 MiB body limit
MAX_BATCH_RECORDS = 64


class TraceEmitter:
    """``emit(step, action, obj, detail)`` records a step now and ships it soon.

    ``client`` is a :class:`controlplane.client.rest.RestClient`; records are
    batched for up to ``flush_interval`` seconds (default 20 ms).
    """

    def __init__(self, client: Any, component: str, flush_interval: float = 0.02,
                 enabled: bool = True) -> None:
        self.client = client
        self.component = component
        self.flush_interval = flush_interval
        self.enabled = enabled
        self._pending: list[StepRecord] = []
        self._task: asyncio.Task[None] | None = None

    def emit(self, step: int, action: str, obj: dict[str, Any] | None = None, detail: str = "",
             kind: str | None = None, resource_version: str | None = None,
             data: dict[str, Any] | None = None) -> StepRecord:
        """Record a step now (``data``: optional structured detail) and ship it soon."""
        rec = make_record(step, self.component, action, obj, detail, kind, resource_version, data)
        event(log, "trace.step", step=step, action=action,
              object=f"{rec.object.get('kind')}/{rec.object.get('namespace')}/{rec.object.get('name')}",
              rv=rec.resourceVersion, **({"detail": detail} if detail else {}))
        if self.enabled:
            self._pending.append(rec)
            if self._task is None or self._task.done():
                self._task = asyncio.get_running_loop().create_task(self._flush_soon())
        return rec

    async def _flush_soon(self) -> None:
        # Records emitted while a batch is in flight are sent by the next turn of
        # this loop, so none is left behind when emitting stops.
        while self._pending:
            await asyncio.sleep(self.flush_interval)  # batching window, not synchronisation
            await self.flush()

    async def flush(self) -> None:
        """Send what is pending now, at most :data:`MAX_BATCH_RECORDS` records per POST; a POST
        the apiserver refuses as too large (413: its request bodies stop at 3 MiB,
        ``components/apiserver/negotiation.py`` MAX_BODY) is sent again as two halves, so a
        backlog of large records (the scheduler's, with its filter and score details) is not
        dropped whole."""
        batch, self._pending = self._pending, []
        for i in range(0, len(batch), MAX_BATCH_RECORDS):
            await self._send([r.to_dict() for r in batch[i:i + MAX_BATCH_RECORDS]])

    async def _send(self, records: list[dict[str, Any]]) -> None:
        try:
            await self.client.request("POST", PATH, body={"records": records}, timeout=5)
        except ApiError as e:
            if e.code == 413 and len(records) > 1:
                half = len(records) // 2
                await self._send(records[:half])
                await self._send(records[half:])
                return
            event(log, "trace.send_failed", logging.WARNING, records=len(records), error=str(e)[:200])
        except Exception as e:  # best effort
            event(log, "trace.send_failed", logging.WARNING, records=len(records), error=str(e)[:200])
