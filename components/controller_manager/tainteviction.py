"""The taint eviction controller (the NoExecute taint manager): deletes pods from
nodes with NoExecute taints they do not tolerate.

Facts from ``pkg/controller/tainteviction/taint_eviction.go`` (processPodOnNode,
handlePodUpdate/handleNodeUpdate, addConditionAndDeletePod, emitPodDeletionEvent)
and ``timed_workers.go``:

* a pod on a node whose NoExecute taints are not all tolerated is deleted at once;
* when all are tolerated, the smallest ``tolerationSeconds`` of the matching
  tolerations decides: none → kept forever; otherwise the pod is deleted that many
  seconds after the controller first saw it under the taints (an already scheduled
  deletion keeps its start time);
* taints removed (or the pod gone) → the scheduled deletion is cancelled, with the
  Event "Cancelling deletion of Pod NS/NAME";
* a deletion: Event ``TaintManagerEviction`` "Marking for deletion Pod NS/NAME" from
  ``taint-eviction-controller``, the pod condition ``DisruptionTarget`` True (reason
  ``DeletionByTaintManager``, "Taint manager: deleting due to NoExecute taint"),
  then DELETE with the pod's own grace period.

Every pod gets 300 s tolerations of ``not-ready`` and ``unreachable`` from the
apiserver (DefaultTolerationSeconds), so by default pods leave a dead node after 5 min.
Pods already being deleted are left alone (their deletion is under way).
"""

from __future__ import annotations

import asyncio
import copy
import heapq
import logging
from dataclasses import dataclass

from controlplane import apitime
from controlplane.api.resources import NODES, PODS
from controlplane.client.informer import key_of
from controlplane.client.rest import ApiError
from controlplane.log import event

from .controller import Controller, ControllerContext
from .controller_utils import meta, pods_on_node
from .taints import matching_tolerations, min_toleration_seconds, no_execute_taints, set_pod_condition

log = logging.getLogger("controller-manager")

COMPONENT = "taint-eviction-controller"
DISRUPTION_REASON = "DeletionByTaintManager"
DISRUPTION_MESSAGE = "Taint manager: deleting due to NoExecute taint"


@dataclass
class ScheduledEviction:
    """A timed deletion (TimedWorker): ``created`` and ``fire_at`` in clock seconds."""

    created: float
    fire_at: float


class TaintEvictionController(Controller):
    """See the module docstring. Queue keys: ``node/<name>`` (re-check every pod on
    it), ``pod/<ns>/<name>`` (re-check one pod) and ``evict/<ns>/<name>`` (delete now).
    :meth:`fire_due` runs the timed deletions whose time has come (the run loop calls
    it; tests call it after advancing their clock)."""

    name = "tainteviction"
    workers = 4

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.clock = ctx.clock
        self.nodes = ctx.informers.informer(NODES)
        self.pods = ctx.informers.informer(PODS)
        self.recorder = ctx.recorder(COMPONENT)
        self.scheduled: dict[str, ScheduledEviction] = {}
        self._heap: list[tuple[float, str]] = []
        self._wake = asyncio.Event()
        self.nodes.add_handlers(self._node_changed, self._node_updated, None)
        self.pods.add_handlers(self._pod_changed, self._pod_updated, self._pod_deleted)

    # -- events --------------------------------------------------------------------------
    def _node_changed(self, node: dict) -> None:
        if no_execute_taints(node):
            self.enqueue(f"node/{meta(node).get('name')}")

    def _node_updated(self, old: dict, new: dict) -> None:
        if no_execute_taints(old) != no_execute_taints(new):
            self.enqueue(f"node/{meta(new).get('name')}")

    def _pod_changed(self, pod: dict) -> None:
        if (pod.get("spec") or {}).get("nodeName"):
            self.enqueue(f"pod/{key_of(pod)}")

    def _pod_updated(self, old: dict, new: dict) -> None:
        o, n = old.get("spec") or {}, new.get("spec") or {}
        if o.get("nodeName") != n.get("nodeName") or o.get("tolerations") != n.get("tolerations"):
            self._pod_changed(new)

    def _pod_deleted(self, pod: dict) -> None:
        self.scheduled.pop(key_of(pod), None)

    # -- decisions -----------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        what, _, rest = key.partition("/")
        if what == "node":
            for pod_key, _ in pods_on_node(self.pods, rest):
                await self.process_pod(pod_key)
        elif what == "pod":
            await self.process_pod(rest)
        elif what == "evict":
            await self.evict(rest)

    async def process_pod(self, pod_key: str) -> None:
        """processPodOnNode: evict now, schedule, keep or cancel the pod's deletion."""
        pod = self.pods.store.get(pod_key)
        if pod is None or meta(pod).get("deletionTimestamp"):
            self.scheduled.pop(pod_key, None)
            return
        node = self.nodes.store.get((pod.get("spec") or {}).get("nodeName") or "")
        taints = no_execute_taints(node)
        if not taints:
            self.cancel(pod_key)
            return
        ok, used = matching_tolerations(taints, (pod.get("spec") or {}).get("tolerations") or [])
        if not ok:
            self.scheduled.pop(pod_key, None)
            await self.evict(pod_key)
            return
        seconds = min_toleration_seconds(used)
        if seconds < 0:
            self.cancel(pod_key)
            return
        if pod_key in self.scheduled:
            return
        now = self.clock()
        self.schedule(pod_key, now, now + seconds)

    def schedule(self, pod_key: str, created: float, fire_at: float) -> None:
        """Delete ``pod_key`` at clock time ``fire_at``."""
        self.scheduled[pod_key] = ScheduledEviction(created, fire_at)
        heapq.heappush(self._heap, (fire_at, pod_key))
        self._wake.set()
        event(log, "tainteviction.scheduled", pod=pod_key, in_seconds=round(fire_at - created, 3))

    def cancel(self, pod_key: str) -> None:
        """Drop a scheduled deletion (cancelWorkWithEvent)."""
        if self.scheduled.pop(pod_key, None) is None:
            return
        pod = self.pods.store.get(pod_key)
        if pod is not None:
            self.recorder.event(pod, "Normal", "TaintManagerEviction", f"Cancelling deletion of Pod {pod_key}")
        event(log, "tainteviction.cancelled", pod=pod_key)

    async def fire_due(self) -> int:
        """Queue the deletions whose time has passed; returns how many."""
        now = self.clock()
        n = 0
        while self._heap and self._heap[0][0] <= now:
            fire_at, pod_key = heapq.heappop(self._heap)
            s = self.scheduled.get(pod_key)
            if s is None or s.fire_at != fire_at:
                continue   # cancelled or rescheduled
            del self.scheduled[pod_key]
            self.enqueue(f"evict/{pod_key}")
            n += 1
        return n

    async def evict(self, pod_key: str) -> None:
        """Event, DisruptionTarget condition, DELETE (addConditionAndDeletePod)."""
        pod = self.pods.store.get(pod_key)
        if pod is None or meta(pod).get("deletionTimestamp"):
            return
        ns, name = meta(pod).get("namespace"), meta(pod).get("name")
        self.recorder.event(pod, "Normal", "TaintManagerEviction", f"Marking for deletion Pod {pod_key}")
        body = copy.deepcopy(pod)
        if set_pod_condition(body, {"type": "DisruptionTarget", "status": "True", "reason": DISRUPTION_REASON,
                                    "message": DISRUPTION_MESSAGE}, apitime.format_time(self.clock())):
            try:
                await self.client.update_status(PODS, body)
            except ApiError as e:
                if e.code == 404:
                    return
                if e.code != 409:
                    raise
        try:
            await self.client.delete(PODS, name, ns, preconditions={"uid": meta(pod).get("uid")})
        except ApiError as e:
            if e.code not in (404, 409):
                raise
            return
        event(log, "tainteviction.deleted", pod=pod_key, node=(pod.get("spec") or {}).get("nodeName"))

    async def run(self, workers: int | None = None) -> None:
        """The workers plus the timer loop that fires scheduled deletions."""
        async def timers() -> None:
            while True:
                await self.fire_due()
                self._wake.clear()
                delay = max(0.0, self._heap[0][0] - self.clock()) if self._heap else None
                try:
                    await asyncio.wait_for(self._wake.wait(), delay)
                except asyncio.TimeoutError:
                    pass
        t = asyncio.create_task(timers(), name="tainteviction-timers")
        try:
            await super().run(workers)
        finally:
            t.cancel()
