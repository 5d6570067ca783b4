"""The node lifecycle controller: notices nodes whose kubelet stopped reporting,
marks them Unknown, taints them and marks their pods not Ready.

Facts from ``pkg/controller/nodelifecycle/node_lifecycle_controller.go``
(monitorNodeHealth, tryUpdateNodeHealth, doNoScheduleTaintingPass,
processTaintBaseEviction) and ``pkg/controller/util/node/controller_utils.go``
(MarkPodsNotReady, RecordNodeStatusChange):

* Health is judged on this controller's own clock: a node's *probe time* is reset
  whenever its Ready condition's ``lastHeartbeatTime`` changes or its Lease
  ``kube-node-lease/<node>`` gets a new ``renewTime`` (the kubelet renews it every
  10 s). Every ``node_monitor_period`` (5 s), a node whose probe time is older than
  ``node_monitor_grace_period`` (40 s; ``node_startup_grace_period`` 60 s for one that
  never posted Ready) gets its Ready, MemoryPressure, DiskPressure and PIDPressure
  conditions set to ``Unknown`` (reason ``NodeStatusUnknown``, message "Kubelet
  stopped posting node status."; missing ones are added with ``NodeStatusNeverUpdated``)
  by a PATCH of ``nodes/NAME/status``.
* When Ready leaves True: Event ``NodeNotReady`` "Node NAME status is now:
  NodeNotReady" from ``node-controller``, and every pod on the node gets its Ready
  condition set to False (PUT ``pods/NAME/status``).
* Taints follow the conditions (TaintNodesByCondition and taint-based eviction):
  Ready False → ``node.kubernetes.io/not-ready`` NoSchedule + NoExecute; Ready
  Unknown → ``node.kubernetes.io/unreachable`` NoSchedule + NoExecute (NoExecute
  with ``timeAdded``); MemoryPressure/DiskPressure/PIDPressure/NetworkUnavailable
  True → the matching NoSchedule taint; ``spec.unschedulable`` →
  ``node.kubernetes.io/unschedulable`` NoSchedule. They are removed when the
  condition clears (a Ready node carries none of the Ready taints).

Not modelled: zones and the per-zone eviction rate limiter (taints are applied at once).
"""

from __future__ import annotations

import asyncio
import copy
import logging
import random
from dataclasses import dataclass

from controlplane import apitime
from controlplane.api.resources import LEASES, NODES, PODS
from controlplane.client.rest import ApiError
from controlplane.log import event

from .controller import Controller, ControllerContext
from .controller_utils import meta, name_of, pods_on_node
from .taints import (
    NO_EXECUTE,
    NO_SCHEDULE,
    TAINT_DISK_PRESSURE,
    TAINT_MEMORY_PRESSURE,
    TAINT_NETWORK_UNAVAILABLE,
    TAINT_NOT_READY,
    TAINT_PID_PRESSURE,
    TAINT_UNREACHABLE,
    TAINT_UNSCHEDULABLE,
    set_pod_condition,
)

log = logging.getLogger("controller-manager")

LEASE_NAMESPACE = "kube-node-lease"
COMPONENT = "node-controller"
#: the conditions the kubelet owns and this controller turns Unknown
KUBELET_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
UNKNOWN_REASON = "NodeStatusUnknown"
UNKNOWN_MESSAGE = "Kubelet stopped posting node status."
NEVER_REASON = "NodeStatusNeverUpdated"
NEVER_MESSAGE = "Kubelet never posted node status."
#: controller_utils.go UpdateTaintBackoff: attempts, and the base of each jittered wait (seconds)
TAINT_UPDATE_STEPS = 5
TAINT_UPDATE_BACKOFF = 0.1

#: condition type → (status that taints, taint key), NoSchedule (TaintNodesByCondition)
_NO_SCHEDULE_BY_CONDITION = {
    "Ready": {"False": TAINT_NOT_READY, "Unknown": TAINT_UNREACHABLE},
    "MemoryPressure": {"True": TAINT_MEMORY_PRESSURE},
    "DiskPressure": {"True": TAINT_DISK_PRESSURE},
    "PIDPressure": {"True": TAINT_PID_PRESSURE},
    "NetworkUnavailable": {"True": TAINT_NETWORK_UNAVAILABLE},
}
#: (key, effect) pairs this controller owns on a node
MANAGED_TAINTS = frozenset(
    {(k, NO_SCHEDULE) for m in _NO_SCHEDULE_BY_CONDITION.values() for k in m.values()}
    | {(TAINT_UNSCHEDULABLE, NO_SCHEDULE), (TAINT_NOT_READY, NO_EXECUTE), (TAINT_UNREACHABLE, NO_EXECUTE)})


def condition(node: dict, typ: str) -> dict | None:
    """The node's condition of type ``typ`` (None when absent)."""
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == typ:
            return c
    return None


def desired_taints(node: dict) -> set[tuple[str, str]]:
    """The ``(key, effect)`` controller taints the node's conditions call for."""
    out: set[tuple[str, str]] = set()
    for typ, by_status in _NO_SCHEDULE_BY_CONDITION.items():
        c = condition(node, typ)
        key = by_status.get((c or {}).get("status", ""))
        if key:
            out.add((key, NO_SCHEDULE))
    ready = (condition(node, "Ready") or {}).get("status")
    if ready == "False":
        out.add((TAINT_NOT_READY, NO_EXECUTE))
    elif ready == "Unknown":
        out.add((TAINT_UNREACHABLE, NO_EXECUTE))
    if (node.get("spec") or {}).get("unschedulable"):
        out.add((TAINT_UNSCHEDULABLE, NO_SCHEDULE))
    return out


def reconcile_taints(node: dict, now: str) -> list[dict] | None:
    """The node's new ``spec.taints``: other owners' taints kept, managed ones kept
    (with their timeAdded) when still wanted, missing ones added (NoExecute with
    ``timeAdded`` = ``now``). None when nothing changes."""
    current = list((node.get("spec") or {}).get("taints") or [])
    want = desired_taints(node)
    kept = [t for t in current if (t.get("key"), t.get("effect")) not in MANAGED_TAINTS
            or (t.get("key"), t.get("effect")) in want]
    have = {(t.get("key"), t.get("effect")) for t in kept}
    for key, effect in sorted(want - have):
        t = {"key": key, "effect": effect}
        if effect == NO_EXECUTE:
            t["timeAdded"] = now
        kept.append(t)
    return None if kept == current else kept


def unknown_conditions(node: dict, now: str) -> list[dict] | None:
    """The node's conditions with the kubelet's four set to Unknown (tryUpdateNodeHealth);
    None when they already are."""
    conds = copy.deepcopy((node.get("status") or {}).get("conditions") or [])
    by_type = {c.get("type"): c for c in conds}
    changed = False
    for typ in KUBELET_CONDITIONS:
        c = by_type.get(typ)
        if c is None:
            conds.append({"type": typ, "status": "Unknown", "reason": NEVER_REASON, "message": NEVER_MESSAGE,
                          "lastHeartbeatTime": meta(node).get("creationTimestamp") or now,
                          "lastTransitionTime": now})
            changed = True
        elif c.get("status") != "Unknown":
            c.update(status="Unknown", reason=UNKNOWN_REASON, message=UNKNOWN_MESSAGE, lastTransitionTime=now)
            changed = True
    return conds if changed else None


@dataclass
class NodeHealth:
    """What this controller last saw of a node (nodeHealthData): the Ready heartbeat
    and Lease renewTime it compares, and when either last changed (its own clock)."""

    probe_time: float
    heartbeat: str | None
    lease_renew: str | None


class NodeLifecycleController(Controller):
    """See the module docstring. Queue keys: ``taints/<node>`` (reconcile the node's
    taints) and ``pods-not-ready/<node>`` (MarkPodsNotReady)."""

    #: seconds: the base of the jittered wait between taint patches that conflicted (tests: 0)
    taint_update_backoff = TAINT_UPDATE_BACKOFF

    name = "nodelifecycle"
    workers = 2

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.clock = ctx.clock
        self.config = ctx.config
        self.nodes = ctx.informers.informer(NODES)
        self.leases = ctx.informers.informer(LEASES)
        self.pods = ctx.informers.informer(PODS)
        self.recorder = ctx.recorder(COMPONENT)
        self.health: dict[str, NodeHealth] = {}
        self.nodes.add_handlers(self._node_changed, lambda old, new: self._node_changed(new),
                                self._node_deleted)
        self.pods.add_handlers(self._pod_changed, lambda old, new: self._pod_changed(new), None)

    # -- events --------------------------------------------------------------------------
    def _node_changed(self, node: dict) -> None:
        self.enqueue(f"taints/{meta(node).get('name')}")

    def _node_deleted(self, node: dict) -> None:
        self.health.pop(name_of(node), None)

    def _pod_changed(self, pod: dict) -> None:
        """A pod bound to a node that is not Ready must not be Ready (processPod)."""
        node_name = (pod.get("spec") or {}).get("nodeName")
        if not node_name or meta(pod).get("deletionTimestamp"):
            return
        node = self.nodes.store.get(node_name)
        ready = (condition(node, "Ready") or {}).get("status") if node else None
        pod_ready = next((c.get("status") for c in (pod.get("status") or {}).get("conditions") or []
                          if c.get("type") == "Ready"), None)
        if ready in ("False", "Unknown") and pod_ready == "True":
            self.enqueue(f"pods-not-ready/{node_name}")

    # -- health --------------------------------------------------------------------------
    def _observe(self, node: dict) -> NodeHealth:
        """Update and return the node's health record from the cached Node and Lease."""
        name = name_of(node)
        now = self.clock()
        heartbeat = (condition(node, "Ready") or {}).get("lastHeartbeatTime")
        lease = self.leases.store.get(f"{LEASE_NAMESPACE}/{name}")
        renew = ((lease or {}).get("spec") or {}).get("renewTime")
        h = self.health.get(name)
        if h is None:
            h = self.health[name] = NodeHealth(now, heartbeat, renew)
            return h
        if heartbeat != h.heartbeat:
            h.heartbeat, h.probe_time = heartbeat, now
        if renew and renew != h.lease_renew:
            h.lease_renew, h.probe_time = renew, now
        return h

    async def monitor_node_health(self) -> None:
        """One pass over every cached node (monitorNodeHealth): mark stale nodes
        Unknown, queue taint reconciliation, and react to Ready leaving True."""
        for name, node in list(self.nodes.store.items()):
            try:
                await self._monitor_one(node)
            except (ApiError, OSError) as e:
                event(log, "nodelifecycle.update_failed", logging.WARNING, node=name, error=str(e)[:200])
            self.enqueue(f"taints/{name}")

    async def _monitor_one(self, node: dict) -> None:
        name = name_of(node)
        h = self._observe(node)
        observed = (condition(node, "Ready") or {}).get("status")
        grace = self.config.node_monitor_grace_period if observed is not None \
            else self.config.node_startup_grace_period
        now = self.clock()
        if now <= h.probe_time + grace:
            return
        conds = unknown_conditions(node, apitime.format_time(now))
        if conds is None:
            return
        await self.client.patch(NODES, name, {"status": {"conditions": conds}}, subresource="status")
        event(log, "nodelifecycle.node_unknown", node=name, silent_seconds=round(now - h.probe_time, 1),
              grace=grace)
        if observed == "True":
            self.recorder.event(_node_ref(name), "Normal", "NodeNotReady",
                                f"Node {name} status is now: NodeNotReady")
            self.enqueue(f"pods-not-ready/{name}")

    # -- queue work ----------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        what, _, name = key.partition("/")
        if what == "taints":
            await self._sync_taints(name)
        elif what == "pods-not-ready":
            await self.mark_pods_not_ready(name)

    async def _sync_taints(self, name: str) -> None:
        """Patch the node's managed taints, the node's resourceVersion as the precondition, retried
        on conflict against a fresh read of the node (controller_utils.go SwapNodeControllerTaint /
        AddOrUpdateTaintOnNode: RetryOnConflict with UpdateTaintBackoff, 5 steps of 100 ms with
        jitter 1.0; the first read from the cache, the retries from the apiserver). A node whose
        kubelet and node IPAM write at the same moment then converges in one sync instead of a
        chain of 409s through the queue. Raises the last ApiError when all 5 conflict."""
        node = self.nodes.store.get(name)
        for step in range(TAINT_UPDATE_STEPS):
            if node is None:
                return
            taints = reconcile_taints(node, apitime.format_time(self.clock()))
            if taints is None:
                return
            try:
                await self.client.patch(NODES, name, {"metadata": {"resourceVersion": meta(node).get("resourceVersion")},
                                                      "spec": {"taints": taints or None}})
            except ApiError as e:
                if e.code != 409 or step == TAINT_UPDATE_STEPS - 1:
                    raise
                await asyncio.sleep(self.taint_update_backoff * (1 + random.random()))   # the backoff's jittered step
                try:
                    node = await self.client.get(NODES, name)
                except ApiError as ge:
                    if ge.code == 404:
                        return
                    raise
                continue
            event(log, "nodelifecycle.taints", node=name,
                  taints=",".join(f"{t['key']}:{t['effect']}" for t in taints) or "-")
            return

    async def mark_pods_not_ready(self, node_name: str) -> None:
        """Set the Ready condition of every pod on ``node_name`` to False
        (MarkPodsNotReady; PUT of the status with the cached resourceVersion, so a
        conflict is retried from the queue)."""
        node = self.nodes.store.get(node_name)
        if node is None or (condition(node, "Ready") or {}).get("status") == "True":
            return
        now = apitime.format_time(self.clock())
        failed = None
        for _, pod in pods_on_node(self.pods, node_name):
            ready = next((c for c in (pod.get("status") or {}).get("conditions") or []
                          if c.get("type") == "Ready"), None)
            if ready is None or ready.get("status") == "False":
                continue
            body = copy.deepcopy(pod)
            set_pod_condition(body, {"type": "Ready", "status": "False"}, now)
            try:
                await self.client.update_status(PODS, body)
            except ApiError as e:
                if e.code != 404:
                    failed = e
                continue
            event(log, "nodelifecycle.pod_not_ready", pod=f"{meta(pod).get('namespace')}/{meta(pod).get('name')}",
                  node=node_name)
        if failed is not None:
            raise failed

    async def run(self, workers: int | None = None) -> None:
        """The workers plus the monitor loop, every ``node_monitor_period`` seconds."""
        async def monitor() -> None:
            while True:
                try:
                    await self.monitor_node_health()
                except Exception as e:  # a failed pass is retried next period
                    event(log, "nodelifecycle.monitor_failed", logging.WARNING, error=str(e)[:200])
                await asyncio.sleep(self.config.node_monitor_period)  # the monitor period, not synchronisation
        t = asyncio.create_task(monitor(), name="nodelifecycle-monitor")
        try:
            await super().run(workers)
        finally:
            t.cancel()


def _node_ref(name: str) -> dict:
    """The event target as RecordNodeStatusChange names it: kind Node, uid = name."""
    return {"kind": "Node", "apiVersion": "v1", "metadata": {"name": name, "uid": name, "namespace": ""}}
