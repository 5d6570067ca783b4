"""A rate-limited work queue of keys, as client-go's ``util/workqueue``.

Guarantees (client-go semantics): a key is never processed by two workers at
once; a key added while it is being processed is re-queued once ``done`` is
called; adding a key that is already waiting is a no-op (deduplication).
``add_rate_limited`` delays a key by a per-item exponential backoff
(``base_delay * 2**failures``, capped at ``max_delay`` seconds) until ``forget``.
Source: staging/src/k8s.io/client-go/util/workqueue/{queue.go,default_rate_limiters.go}.

A named queue reports client-go's workqueue metrics (``workqueue/metrics.go``, the provider
kube-controller-manager registers from ``component-base/metrics/prometheus/workqueue``) on
:data:`controlplane.metrics.REGISTRY`, labelled ``name``: ``workqueue_depth`` (gauge),
``workqueue_adds_total``, ``workqueue_retries_total`` (counters), ``workqueue_queue_duration_seconds``
(added → handed to a worker) and ``workqueue_work_duration_seconds`` (handed → done), histograms
with the bounds 10 ns·10^i, i < 10.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any, Generic, Hashable, TypeVar

from controlplane import metrics as m

#: the queue's key type (controllers queue ``namespace/name`` strings)
K = TypeVar("K", bound=Hashable)


_DURATION_BUCKETS = m.exponential_buckets(10e-9, 10, 10)
_depth = m.Children(m.gauge("workqueue_depth", "Current depth of workqueue", ("name",)))
_adds = m.Children(m.counter("workqueue_adds_total", "Total number of adds handled by workqueue", ("name",)))
_retries = m.Children(m.counter("workqueue_retries_total", "Total number of retries handled by workqueue",
                                ("name",)))
_queue_duration = m.Children(m.histogram(
    "workqueue_queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested.",
    ("name",), _DURATION_BUCKETS))
_work_duration = m.Children(m.histogram(
    "workqueue_work_duration_seconds", "How long in seconds processing an item from workqueue takes.",
    ("name",), _DURATION_BUCKETS))


class _QueueMetrics:
    """One named queue's children of the workqueue families (client-go's ``defaultQueueMetrics``)."""

    __slots__ = ("depth", "adds", "retries", "queue_duration", "work_duration", "added_at", "started_at")

    def __init__(self, name: str) -> None:
        key = (name,)
        self.depth: Any = _depth.get(key)
        self.adds: Any = _adds.get(key)
        self.retries: Any = _retries.get(key)
        self.queue_duration: Any = _queue_duration.get(key)
        self.work_duration: Any = _work_duration.get(key)
        self.added_at: dict[Any, float] = {}
        self.started_at: dict[Any, float] = {}


class ShutDown(Exception):
    """Raised by :meth:`WorkQueue.get` after :meth:`WorkQueue.shutdown`."""


class WorkQueue(Generic[K]):
    """client-go's rate-limited work queue (``staging/src/k8s.io/client-go/util/workqueue``:
    queue.go's dirty/processing sets, default_rate_limiters.go's per-item exponential
    backoff): a key waits at most once, is never handed to two workers at once, and a
    key added while it is processed is queued again by :meth:`done`.

    ``base_delay`` / ``max_delay``: seconds of the per-key backoff of
    :meth:`add_rate_limited` (``base_delay * 2**failures``, capped). ``name``: the ``name`` label
    of the queue's metrics (the controller's name, as client-go's ``TypedRateLimitingQueueConfig.Name``);
    "" reports none.
    """

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0, name: str = "") -> None:
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._failures: dict[K, int] = {}
        #: workers blocked in :meth:`get`, oldest first; :meth:`add` resolves one directly
        #: (no task per add: a burst of 10,000 adds wakes at most as many workers as wait)
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._shutdown = False
        self._base = base_delay
        self._max = max_delay
        self._timers: set[asyncio.TimerHandle] = set()
        self._metrics = _QueueMetrics(name) if name else None

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, key: K) -> None:
        """Queue ``key`` unless it is already waiting; safe from sync callbacks."""
        if self._shutdown or key in self._dirty:
            return
        qm = self._metrics
        if qm is not None:
            qm.adds.inc()
            qm.depth.inc()
            qm.added_at.setdefault(key, time.monotonic())
        self._dirty.add(key)
        if key not in self._processing:
            self._queue.append(key)
            self._notify()

    def add_after(self, key: K, delay: float) -> None:
        """Queue ``key`` after ``delay`` seconds."""
        if delay <= 0:
            self.add(key)
            return
        loop = asyncio.get_running_loop()
        handle: asyncio.TimerHandle

        def fire() -> None:
            self._timers.discard(handle)
            self.add(key)

        handle = loop.call_later(delay, fire)
        self._timers.add(handle)

    def add_rate_limited(self, key: K) -> None:
        """Queue ``key`` after its exponential backoff; the failure count grows."""
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        if self._metrics is not None:
            self._metrics.retries.inc()
        self.add_after(key, min(self._base * (2 ** n), self._max))

    def forget(self, key: K) -> None:
        """Reset ``key``'s backoff (call after a successful sync)."""
        self._failures.pop(key, None)

    def num_requeues(self, key: K) -> int:
        """How many times ``key`` was re-queued with backoff since its last :meth:`forget`."""
        return self._failures.get(key, 0)

    async def get(self) -> K:
        """Wait for the next key and mark it processing; raises ShutDown."""
        while not self._queue and not self._shutdown:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            try:
                await fut
            except asyncio.CancelledError:
                try:
                    self._waiters.remove(fut)
                except ValueError:
                    # woken, then cancelled: hand the wake-up on so the key is not stranded
                    if self._queue:
                        self._notify()
                raise
        if self._shutdown and not self._queue:
            raise ShutDown()
        key = self._queue.popleft()
        self._processing.add(key)
        self._dirty.discard(key)
        qm = self._metrics
        if qm is not None:
            now = time.monotonic()
            qm.depth.dec()
            added = qm.added_at.pop(key, None)
            if added is not None:
                qm.queue_duration.observe(now - added)
            qm.started_at[key] = now
        return key

    def done(self, key: K) -> None:
        """Mark ``key`` processed; re-queue it if it was added meanwhile."""
        self._processing.discard(key)
        qm = self._metrics
        if qm is not None:
            started = qm.started_at.pop(key, None)
            if started is not None:
                qm.work_duration.observe(time.monotonic() - started)
        if key in self._dirty:
            self._queue.append(key)
            self._notify()

    def shutdown(self) -> None:
        """Stop accepting keys, cancel pending delayed adds and wake every waiter;
        :meth:`get` raises ShutDown once the queue is empty."""
        self._shutdown = True
        for h in self._timers:
            h.cancel()
        self._timers.clear()
        self._notify(all_=True)

    def _notify(self, all_: bool = False) -> None:
        """Wake the oldest waiting worker (every one with ``all_``)."""
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                if not all_:
                    return
