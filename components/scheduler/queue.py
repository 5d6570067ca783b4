"""The scheduling queue: activeQ, backoffQ and unschedulable pods.

* activeQ: a heap ordered by the profile's QueueSort ``less`` (PrioritySort: higher
  priority, then earlier arrival); :meth:`SchedulingQueue.pop` waits on it.
* backoffQ: pods that failed and wait ``initial * 2**(attempts-1)`` seconds (1 s → 10 s
  by default) before they are active again; flushed exactly when the earliest expires.
* unschedulable pods: parked until a cluster event one of their rejecting plugins
  registered for (node added, node labels/taints/allocatable changed, pod deleted,
  pod labels changed...) moves them to backoffQ/activeQ; pods parked longer than
  ``max_in_unschedulable`` (5 min) are flushed periodically.
* a failure whose cycle started before the latest move request goes to backoffQ,
  not to the unschedulable set (moveRequestCycle), so no event is lost.
* PreEnqueue: every move into activeQ first asks the profile's PreEnqueue plugins
  (``pre_enqueue``); a rejected pod is kept among the unschedulable pods as *gated*
  (``QueuedPodInfo.gated``, ``unschedulable_plugins`` = the rejecting plugin), moved by
  no cluster event, and tried again when the pod itself is updated (moveToActiveQ).

Source: pkg/scheduler/backend/queue/scheduling_queue.go (PriorityQueue),
pkg/scheduler/framework/types.go (QueuedPodInfo), pkg/scheduler/framework/events.go.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import time
from typing import Any, Callable

from components.scheduler.podinfo import PodInfo
from controlplane.log import event

log = logging.getLogger("scheduler.queue")

ACTIVE, BACKOFF, UNSCHEDULABLE, IN_FLIGHT = "activeQ", "backoffQ", "unschedulable", "inFlight"
GATED = "gated"


class QueuedPodInfo:
    """A pod in the queue: ``pod_info``, ``timestamp`` (last enqueue, monotonic s),
    ``initial_attempt_timestamp``, ``attempts``, ``unschedulable_plugins`` (names of
    the plugins that rejected it last time), ``where``, ``gated`` (a PreEnqueue plugin
    keeps it out of activeQ; ``gating_message`` says why)."""

    __slots__ = ("pod_info", "timestamp", "initial_attempt_timestamp", "attempts",
                 "unschedulable_plugins", "where", "seq", "updated_in_flight", "gated",
                 "gating_message")

    def __init__(self, pod_info: PodInfo, now: float) -> None:
        self.pod_info = pod_info
        self.timestamp = now
        self.initial_attempt_timestamp = now
        self.attempts = 0
        self.unschedulable_plugins: set[str] = set()
        self.where = ""
        self.seq = 0
        self.updated_in_flight = False
        self.gated = False
        self.gating_message = ""

    @property
    def key(self) -> str:
        return self.pod_info.key


class _HeapItem:
    __slots__ = ("qp", "seq", "less")

    def __init__(self, qp: QueuedPodInfo, seq: int, less: Callable) -> None:
        self.qp, self.seq, self.less = qp, seq, less

    def __lt__(self, other: "_HeapItem") -> bool:
        if self.less(self.qp, other.qp):
            return True
        if self.less(other.qp, self.qp):
            return False
        return self.seq < other.seq


def _default_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    pa, pb = a.pod_info.priority, b.pod_info.priority
    return pa > pb or (pa == pb and a.timestamp < b.timestamp)


class SchedulingQueue:
    """All pods waiting to be scheduled. Synchronous mutators (safe from informer
    handlers); :meth:`pop` is the only coroutine.

    ``less``: QueueSort function; ``initial_backoff`` / ``max_backoff`` (seconds);
    ``max_in_unschedulable`` (seconds); ``plugins_for_event``: (resource, action) →
    plugin names that registered for it; ``clock``: monotonic seconds;
    ``pre_enqueue``: PodInfo → Status of the pod's profile's PreEnqueue plugins (None:
    every pod may enter activeQ).
    """

    def __init__(self, less: Callable | None = None, *, initial_backoff: float = 1.0,
                 max_backoff: float = 10.0, max_in_unschedulable: float = 300.0,
                 plugins_for_event: dict[tuple[str, str], set[str]] | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 pre_enqueue: Callable[[PodInfo], Any] | None = None) -> None:
        self.less = less or _default_less
        self.pre_enqueue = pre_enqueue
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_in_unschedulable = max_in_unschedulable
        self.plugins_for_event = plugins_for_event or {}
        self.clock = clock
        self.pods: dict[str, QueuedPodInfo] = {}      # every known pod, wherever it is
        self._active: list[_HeapItem] = []
        self._backoff: list[tuple[float, int, str]] = []
        self.unschedulable: dict[str, QueuedPodInfo] = {}
        self.scheduling_cycle = 0
        self.move_request_cycle = -1
        self._seq = 0
        self._ready: asyncio.Event | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = float("inf")
        self._closed = False

    # -- helpers -----------------------------------------------------------------
    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _wake(self) -> None:
        if self._ready is None:
            self._ready = asyncio.Event()
        self._ready.set()

    def backoff_duration(self, qp: QueuedPodInfo) -> float:
        """``initial * 2**(attempts-1)`` capped at ``max_backoff`` (calculateBackoffDuration)."""
        d = self.initial_backoff
        for _ in range(1, max(qp.attempts, 1)):
            d *= 2
            if d >= self.max_backoff:
                return self.max_backoff
        return min(d, self.max_backoff)

    def backoff_expiry(self, qp: QueuedPodInfo) -> float:
        return qp.timestamp + self.backoff_duration(qp)

    def is_backing_off(self, qp: QueuedPodInfo) -> bool:
        return qp.attempts > 0 and self.backoff_expiry(qp) > self.clock()

    def _to_active(self, qp: QueuedPodInfo) -> None:
        if self.pre_enqueue is not None:
            st = self.pre_enqueue(qp.pod_info)
            if st is not None and not st.is_success():
                was_gated = qp.gated
                qp.gated, qp.gating_message = True, st.message()
                qp.unschedulable_plugins = {st.plugin} if st.plugin else set()
                qp.where = UNSCHEDULABLE
                self.unschedulable[qp.key] = qp
                if not was_gated:
                    event(log, "queue.gated", pod=qp.key, plugin=st.plugin or "-", message=st.message())
                return
            if qp.gated:
                qp.gated, qp.gating_message = False, ""
                qp.unschedulable_plugins = set()
                event(log, "queue.ungated", pod=qp.key)
        qp.where = ACTIVE
        qp.seq = self._next_seq()
        heapq.heappush(self._active, _HeapItem(qp, qp.seq, self.less))
        self._wake()

    def _to_backoff(self, qp: QueuedPodInfo) -> None:
        qp.where = BACKOFF
        qp.seq = self._next_seq()
        at = self.backoff_expiry(qp)
        heapq.heappush(self._backoff, (at, qp.seq, qp.key))
        self._arm_timer(at)

    def _to_backoff_or_active(self, qp: QueuedPodInfo) -> None:
        if self.is_backing_off(qp):
            self._to_backoff(qp)
        else:
            self._to_active(qp)

    def _arm_timer(self, at: float) -> None:
        if at >= self._timer_at:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = at
        self._timer = loop.call_later(max(at - self.clock(), 0), self._on_timer)

    def _on_timer(self) -> None:
        self._timer, self._timer_at = None, float("inf")
        self.flush_backoff_completed()
        if self._backoff:
            self._arm_timer(self._backoff[0][0])

    # -- producers ---------------------------------------------------------------
    def add(self, pod: dict) -> None:
        """A new unscheduled pod → activeQ (PriorityQueue.Add)."""
        pi = PodInfo(pod)
        qp = self.pods.get(pi.key)
        if qp is not None:
            self.update(pod)
            return
        qp = QueuedPodInfo(pi, self.clock())
        self.pods[pi.key] = qp
        self._to_active(qp)
        event(log, "queue.add", logging.DEBUG, pod=pi.key, queue=qp.where)

    def update(self, pod: dict, old: dict | None = None) -> None:
        """An unscheduled pod changed. Parked pods whose change matters are retried;
        others just get the new object (PriorityQueue.Update)."""
        pi = PodInfo(pod)
        qp = self.pods.get(pi.key)
        if qp is None:
            self.add(pod)
            return
        qp.pod_info = pi
        if qp.where == IN_FLIGHT:
            qp.updated_in_flight = True
        elif qp.where == UNSCHEDULABLE and (old is None or is_pod_updated(old, pod)):
            del self.unschedulable[pi.key]
            if qp.gated:  # never tried: straight to activeQ if PreEnqueue now passes
                self._to_active(qp)
            else:
                self._to_backoff_or_active(qp)

    def delete(self, pod: dict) -> None:
        md = pod.get("metadata") or {}
        key = f"{md.get('namespace') or 'default'}/{md.get('name')}"
        qp = self.pods.pop(key, None)
        if qp is not None:
            self.unschedulable.pop(key, None)
            qp.where = ""  # lazily dropped from the heaps

    def add_unschedulable_if_not_present(self, qp: QueuedPodInfo, pod_scheduling_cycle: int,
                                         error: bool = False) -> None:
        """Requeue a pod whose cycle failed: to backoffQ when it failed with an error,
        was updated meanwhile, or a move request came during its cycle; else park it."""
        if self.pods.get(qp.key) is not qp:
            return  # deleted while in flight
        qp.timestamp = self.clock()
        if error or qp.updated_in_flight or self.move_request_cycle >= pod_scheduling_cycle:
            qp.updated_in_flight = False
            self._to_backoff(qp)
            where = BACKOFF
        else:
            qp.where = UNSCHEDULABLE
            self.unschedulable[qp.key] = qp
            where = UNSCHEDULABLE
        event(log, "queue.requeue", pod=qp.key, queue=where, attempts=qp.attempts,
              plugins=",".join(sorted(qp.unschedulable_plugins)) or "-")

    def done(self, key: str) -> None:
        """The pod left the scheduler (bound): forget it."""
        qp = self.pods.get(key)
        if qp is not None and qp.where == IN_FLIGHT:
            del self.pods[key]

    # -- moves -------------------------------------------------------------------
    def move_all_to_active_or_backoff(self, resource: str, action: str,
                                      pre_check: Callable[[QueuedPodInfo], bool] | None = None) -> int:
        """A cluster event (``resource``, ``action``) happened: retry parked pods one of
        whose rejecting plugins registered for it (pods with no recorded plugin always
        move). Returns how many moved (MoveAllToActiveOrBackoffQueue)."""
        interested = self.plugins_for_event.get((resource, action), set()) | \
            self.plugins_for_event.get((resource, "*"), set())
        moved = 0
        for key, qp in list(self.unschedulable.items()):
            if qp.gated or (qp.unschedulable_plugins and not (qp.unschedulable_plugins & interested)):
                continue
            if pre_check is not None and not pre_check(qp):
                continue
            del self.unschedulable[key]
            self._to_backoff_or_active(qp)
            moved += 1
        self.move_request_cycle = self.scheduling_cycle
        if moved:
            event(log, "queue.move", event_=f"{resource}/{action}", moved=moved)
        return moved

    def flush_backoff_completed(self) -> None:
        now = self.clock()
        while self._backoff and self._backoff[0][0] <= now:
            _, seq, key = heapq.heappop(self._backoff)
            qp = self.pods.get(key)
            if qp is not None and qp.where == BACKOFF and qp.seq == seq:
                self._to_active(qp)

    def flush_unschedulable_left_over(self) -> int:
        """Move pods parked longer than ``max_in_unschedulable``; returns how many."""
        now = self.clock()
        moved = 0
        for key, qp in list(self.unschedulable.items()):
            if not qp.gated and now - qp.timestamp > self.max_in_unschedulable:
                del self.unschedulable[key]
                self._to_backoff_or_active(qp)
                moved += 1
        return moved

    async def run_flushers(self, interval: float = 30.0) -> None:
        """Periodic flush of long-parked pods (flushUnschedulablePodsLeftover, every 30 s)."""
        while not self._closed:
            await asyncio.sleep(interval)  # periodic housekeeping, not synchronisation
            self.flush_unschedulable_left_over()

    # -- consumer ----------------------------------------------------------------
    def pop_nowait(self) -> QueuedPodInfo | None:
        """The head of activeQ (marked in flight, attempts + 1), or None."""
        while self._active:
            item = heapq.heappop(self._active)
            qp = item.qp
            if qp.where != ACTIVE or qp.seq != item.seq or self.pods.get(qp.key) is not qp:
                continue
            qp.where = IN_FLIGHT
            qp.attempts += 1
            self.scheduling_cycle += 1
            return qp
        return None

    async def pop(self) -> QueuedPodInfo:
        """Wait for and return the next pod to schedule; raises CancelledError on close."""
        if self._ready is None:
            self._ready = asyncio.Event()
        while True:
            qp = self.pop_nowait()
            if qp is not None:
                return qp
            if self._closed:
                raise asyncio.CancelledError
            self._ready.clear()
            await self._ready.wait()

    def close(self) -> None:
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
        self._wake()

    def pending(self) -> dict[str, int]:
        """Counts per sub-queue (as the scheduler_pending_pods metric; gated pods are
        counted under ``gated``, not ``unschedulable``)."""
        c = {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, IN_FLIGHT: 0, GATED: 0}
        for qp in self.pods.values():
            if qp.where == UNSCHEDULABLE and qp.gated:
                c[GATED] += 1
            elif qp.where in c:
                c[qp.where] += 1
        return c


_IGNORED_ANNOTATION_PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"


def is_pod_updated(old: dict, new: dict) -> bool:
    """Whether an update matters for scheduling: ignores resourceVersion, generation,
    managedFields, status and the scheduler's own result annotations (isPodUpdated)."""
    def strip(p: dict) -> dict:
        md = dict(p.get("metadata") or {})
        for k in ("resourceVersion", "generation", "managedFields"):
            md.pop(k, None)
        ann = {k: v for k, v in (md.get("annotations") or {}).items()
               if not k.startswith(_IGNORED_ANNOTATION_PREFIX)}
        md["annotations"] = ann
        return {"metadata": md, "spec": p.get("spec")}
    return strip(old) != strip(new)

