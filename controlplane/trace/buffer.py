"""The apiserver's in-memory store of step records, with live subscribers.

A bounded ring (oldest records drop first) plus a set of subscriber queues.
A subscriber that falls more than ``queue_size`` records behind is dropped
(its iterator ends) rather than stalling the writer or growing without bound.
"""

from __future__ import annotations

import asyncio
import collections
from typing import AsyncIterator, Callable

from controlplane.trace.record import StepRecord

#: records the apiserver's ring keeps (in memory only: a restart starts it afresh)
RING_CAPACITY = 100_000


class TraceBuffer:
    """Ring of the last ``capacity`` records; ``subscribe()`` follows new ones."""

    def __init__(self, capacity: int = RING_CAPACITY, queue_size: int = 10_000) -> None:
        self._ring: collections.deque[StepRecord] = collections.deque(maxlen=capacity)
        #: each subscriber's queue; None tells it that it was dropped (too slow)
        self._subs: set[asyncio.Queue[StepRecord | None]] = set()
        self._queue_size = queue_size

    def append(self, rec: StepRecord) -> None:
        """Store a record and hand it to every live subscriber (non-blocking)."""
        self._ring.append(rec)
        for q in list(self._subs):
            try:
                q.put_nowait(rec)
            except asyncio.QueueFull:
                self._subs.discard(q)
                q.put_nowait(None) if not q.full() else None

    def snapshot(self, since: float = 0.0,
                 predicate: Callable[[StepRecord], bool] | None = None) -> list[StepRecord]:
        """Records with ``time >= since`` (seconds since the epoch), oldest first."""
        return [r for r in self._ring if r.time >= since and (predicate is None or predicate(r))]

    async def subscribe(self) -> AsyncIterator[StepRecord]:
        """Yield every record appended from now on, until cancelled or dropped."""
        q: asyncio.Queue[StepRecord | None] = asyncio.Queue(self._queue_size)
        self._subs.add(q)
        try:
            while True:
                rec = await q.get()
                if rec is None:
                    return
                yield rec
        finally:
            self._subs.discard(q)
