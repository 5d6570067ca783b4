"""The informers' handlers: pods, nodes and namespaces feed the cache, the queue and
the nominator. Assigned pods go into the cache; unassigned pods a profile of ours
schedules go into the queue; every change that may make a parked pod schedulable
moves the pods waiting on that cluster event (``move_all_to_active_or_backoff``).

Source: ``pkg/scheduler/eventhandlers.go`` (addPodToSchedulingQueue,
updatePodInSchedulingQueue, deletePodFromSchedulingQueue, addPodToCache,
updatePodInCache, deletePodFromCache, addNodeToCache, updateNodeInCache,
deleteNodeFromCache, nodeSchedulingPropertiesChange, assignedPod, responsibleForPod).
Trace step 1 of seed 000 (the pods watch starts).
"""

from __future__ import annotations

import logging
from typing import Any

from components.scheduler.cache import Cache
from components.scheduler.config import scheduler_name_of
from components.scheduler.nominator import Nominator
from components.scheduler.podinfo import PodInfo, is_assigned, is_deleting
from components.scheduler.queue import SchedulingQueue
from components.scheduler.status import PodStatusWriter
from controlplane.log import event

log = logging.getLogger("scheduler")


class EventHandlers:
    """Informer handlers over ``cache``, ``queue`` and ``nominator``; ``profiles``:
    the scheduler names we schedule for (a container of names, e.g. the profiles
    dict); ``status`` writes SchedulingGated conditions; ``trace``: a TraceEmitter or
    None (step 1)."""

    def __init__(self, cache: Cache, queue: SchedulingQueue, nominator: Nominator,
                 profiles: Any, status: PodStatusWriter, trace: Any = None) -> None:
        self.cache = cache
        self.queue = queue
        self.nominator = nominator
        self.profiles = profiles
        self.status = status
        self.trace = trace
        self._step1_done = False

    def responsible_for(self, pod: dict) -> bool:
        """One of our profiles schedules ``pod`` (responsibleForPod)."""
        return scheduler_name_of(pod) in self.profiles

    def _update_nominated(self, pod: dict) -> None:
        self.nominator.update_from_pod(pod, self.responsible_for(pod))

    def _note_gated(self, pod: dict) -> None:
        qp = self.queue.pods.get(PodInfo.key_of(pod))
        if qp is not None and qp.gated:
            self.status.note_gated(qp.pod_info)

    # -- pods --------------------------------------------------------------------------
    def on_pod_add(self, pod: dict) -> None:
        self._update_nominated(pod)
        if is_assigned(pod):
            self.cache.add_pod(pod)
            self.queue.move_all_to_active_or_backoff("Pod", "Add")
        elif self.responsible_for(pod) and not is_deleting(pod):
            self.queue.add(pod)
            self._note_gated(pod)

    def on_pod_update(self, old: dict, new: dict) -> None:
        self._update_nominated(new)
        if is_assigned(new):
            if not is_assigned(old):
                self.queue.delete(new)
            self.cache.update_pod(old, new)
            if ((old.get("metadata") or {}).get("labels") or {}) != \
                    ((new.get("metadata") or {}).get("labels") or {}):
                self.queue.move_all_to_active_or_backoff("Pod", "UpdatePodLabel")
        elif is_deleting(new):
            self.queue.delete(new)
        elif self.responsible_for(new):
            self.queue.update(new, old)

    def on_pod_delete(self, pod: dict) -> None:
        self.nominator.delete(PodInfo.key_of(pod))
        if is_assigned(pod) or self.cache.has_pod(PodInfo(pod).key):
            self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff("Pod", "Delete")
        self.queue.delete(pod)

    def on_pods_watch_started(self, rv: str) -> None:
        """Trace step 1, once: the pods watch started at ``rv``."""
        if self.trace is not None and not self._step1_done:
            self._step1_done = True
            self.trace.emit(1, "scheduler informers watching pods and nodes",
                            {"kind": "Pod", "metadata": {"resourceVersion": rv}}, kind="Pod",
                            detail=f"list+watch pods (all namespaces) and nodes from resourceVersion {rv}")

    # -- nodes -------------------------------------------------------------------------
    def on_node_add(self, node: dict) -> None:
        try:
            self.cache.add_node(node)
        except ValueError as e:
            event(log, "node.invalid", logging.WARNING, node=(node.get("metadata") or {}).get("name"),
                  error=str(e))
            return
        self.queue.move_all_to_active_or_backoff("Node", "Add")

    def on_node_update(self, old: dict, new: dict) -> None:
        try:
            self.cache.update_node(new)
        except ValueError as e:
            event(log, "node.invalid", logging.WARNING, node=(new.get("metadata") or {}).get("name"),
                  error=str(e))
            return
        for action in node_update_actions(old, new):
            self.queue.move_all_to_active_or_backoff("Node", action)

    def on_node_delete(self, node: dict) -> None:
        self.cache.remove_node((node.get("metadata") or {}).get("name") or "")
        self.queue.move_all_to_active_or_backoff("Node", "Delete")

    # -- namespaces (labels for namespaceSelector terms) -------------------------------
    def on_namespace_add(self, ns: dict) -> None:
        self.cache.set_namespace(ns)
        self.queue.move_all_to_active_or_backoff("Namespace", "Add")

    def on_namespace_update(self, old: dict, new: dict) -> None:
        self.cache.set_namespace(new)
        if ((old.get("metadata") or {}).get("labels") or {}) != \
                ((new.get("metadata") or {}).get("labels") or {}):
            self.queue.move_all_to_active_or_backoff("Namespace", "Update")

    def on_namespace_delete(self, ns: dict) -> None:
        self.cache.remove_namespace((ns.get("metadata") or {}).get("name") or "")


def node_update_actions(old: dict, new: dict) -> list[str]:
    """Which scheduling-relevant parts of a Node changed: ``UpdateNodeLabel``,
    ``UpdateNodeTaint`` (taints or spec.unschedulable), ``UpdateNodeAllocatable``,
    ``UpdateNodeCondition`` (condition statuses only, not heartbeats). Source:
    pkg/scheduler/eventhandlers.go nodeSchedulingPropertiesChange."""
    om, nm = old.get("metadata") or {}, new.get("metadata") or {}
    os_, ns_ = old.get("spec") or {}, new.get("spec") or {}
    ost, nst = old.get("status") or {}, new.get("status") or {}
    out = []
    if (om.get("labels") or {}) != (nm.get("labels") or {}):
        out.append("UpdateNodeLabel")
    if (os_.get("taints") or []) != (ns_.get("taints") or []) or \
            bool(os_.get("unschedulable")) != bool(ns_.get("unschedulable")):
        out.append("UpdateNodeTaint")
    if (ost.get("allocatable") or {}) != (nst.get("allocatable") or {}):
        out.append("UpdateNodeAllocatable")

    def conds(st: dict) -> dict:
        return {c.get("type"): c.get("status") for c in st.get("conditions") or []}
    if conds(ost) != conds(nst):
        out.append("UpdateNodeCondition")
    return out
