"""What the scheduler writes on pods besides the binding: the ``PodScheduled``
condition, ``status.nominatedNodeName``, the events ``Scheduled``,
``FailedScheduling`` and ``Preempted``, the victims' ``DisruptionTarget`` condition and
DELETE, and (``--record-results``) the kube-scheduler-simulator result annotations.

The API writes run as background tasks (:meth:`PodStatusWriter.spawn`); the
scheduling cycle never waits for them. A failed write is logged
(``pod.status_patch_failed`` and friends) and left to the next attempt.

Sources: ``pkg/scheduler/schedule_one.go`` (handleSchedulingFailure, updatePod),
``pkg/scheduler/framework/preemption/preemption.go`` (prepareCandidate),
``pkg/scheduler/util/utils.go`` (PatchPodStatus, DeletePod, ClearNominatedNodeName),
``pkg/registry/core/pod/strategy.go`` (applySchedulingGatedCondition).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Coroutine

from components.scheduler.podinfo import PodInfo
from controlplane import apitime
from controlplane.api.resources import PODS
from controlplane.log import event

log = logging.getLogger("scheduler")

#: PodScheduled=False reason and message of a pod with scheduling gates (core/v1 PodReasonSchedulingGated)
SCHEDULING_GATED = "SchedulingGated"
SCHEDULING_GATED_MSG = "Scheduling is blocked due to non-empty scheduling gates"




class PodStatusWriter:
    """Pod writes through ``client`` (a RestClient, or None: write nothing) and events
    through ``recorder`` (an EventRecorder, component ``default-scheduler``, or None).
    ``tasks``: the background writes in flight."""

    def __init__(self, client: Any, recorder: Any = None) -> None:
        self.client = client
        self.recorder = recorder
        self.tasks: set[asyncio.Task] = set()

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` as a background task (dropped, unawaited, outside an event loop)."""
        try:
            t = asyncio.get_running_loop().create_task(coro)
        except RuntimeError:
            coro.close()
            return
        self.tasks.add(t)
        t.add_done_callback(self.tasks.discard)

    # -- events ------------------------------------------------------------------------
    def scheduled(self, pi: PodInfo, node: str) -> None:
        """Event ``Scheduled`` "Successfully assigned NS/NAME to NODE"."""
        if self.recorder is not None:
            self.recorder.event(pi.pod, "Normal", "Scheduled",
                                f"Successfully assigned {pi.namespace}/{pi.name} to {node}")

    def failed_scheduling(self, pi: PodInfo, msg: str) -> None:
        """Event ``FailedScheduling`` (Warning) with the failure message."""
        if self.recorder is not None:
            self.recorder.event(pi.pod, "Warning", "FailedScheduling", msg)

    # -- PodScheduled ------------------------------------------------------------------
    def note_gated(self, pi: PodInfo) -> None:
        """A gated pod that carries no PodScheduled condition yet gets
        PodScheduled=False, reason ``SchedulingGated``, message "Scheduling is blocked
        due to non-empty scheduling gates" (what kube-apiserver's pod strategy writes on
        create, applySchedulingGatedCondition; written here when the apiserver did not,
        so ``kubectl get pods`` shows SchedulingGated)."""
        if self.client is None:
            return
        conds = (pi.pod.get("status") or {}).get("conditions") or []
        if any(c.get("type") == "PodScheduled" for c in conds):
            return
        self.spawn(self._patch_gated(pi))

    async def _patch_gated(self, pi: PodInfo) -> None:
        cond = {"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                "lastTransitionTime": apitime.now(), "reason": SCHEDULING_GATED, "message": SCHEDULING_GATED_MSG}
        try:
            await self.client.patch(PODS, pi.name, {"status": {"conditions": [cond]}}, pi.namespace,
                                    patch_type="strategic", subresource="status")
        except Exception as e:  # gone meanwhile
            event(log, "pod.status_patch_failed", logging.WARNING, pod=pi.key, error=str(e)[:200])

    async def patch_failure(self, pi: PodInfo, current: dict, reason: str, msg: str,
                            nominated_node: str | None = None) -> None:
        """PodScheduled=False with ``reason`` (``Unschedulable``, ``SchedulerError``) and
        ``msg``, plus ``status.nominatedNodeName`` when preemption nominated a node — a
        strategic-merge patch of pods/status, skipped when ``current`` (the informer's
        pod) already says so; the lastTransitionTime of an earlier False condition is
        kept (schedule_one.go updatePod)."""
        conds = (current.get("status") or {}).get("conditions") or []
        old = next((c for c in conds if c.get("type") == "PodScheduled"), None)
        have_nom = (current.get("status") or {}).get("nominatedNodeName") or ""
        same_cond = old and old.get("status") == "False" and old.get("reason") == reason \
            and old.get("message") == msg
        if self.client is not None and not (same_cond and (not nominated_node or nominated_node == have_nom)):
            cond = {"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                    "lastTransitionTime": (old or {}).get("lastTransitionTime")
                    if old and old.get("status") == "False" else apitime.now(),
                    "reason": reason, "message": msg}
            status: dict[str, Any] = {"conditions": [cond]}
            if nominated_node:
                status["nominatedNodeName"] = nominated_node
            try:
                await self.client.patch(PODS, pi.name, {"status": status}, pi.namespace,
                                        patch_type="strategic", subresource="status")
            except Exception as e:  # the pod may be gone; the next attempt retries
                event(log, "pod.status_patch_failed", logging.WARNING, pod=pi.key, error=str(e)[:200])

    # -- preemption (preemption.go prepareCandidate) -------------------------------------
    def preempt(self, victim: PodInfo, pod: PodInfo, node: str, scheduler_name: str) -> None:
        """In the background: the victim gets a DisruptionTarget condition (reason
        ``PreemptionByScheduler``), a DELETE and a ``Preempted`` event "Preempted by pod
        <uid> on node <node>"."""
        self.spawn(self._preempt_victim(victim, pod, node, scheduler_name))

    async def _preempt_victim(self, victim: PodInfo, pod: PodInfo, node: str, scheduler_name: str) -> None:
        if self.client is None:
            return
        cond = {"type": "DisruptionTarget", "status": "True", "lastTransitionTime": apitime.now(),
                "reason": "PreemptionByScheduler",
                "message": f"{scheduler_name}: preempting to accommodate a higher priority pod"}
        try:
            await self.client.patch(PODS, victim.name, {"status": {"conditions": [cond]}},
                                    victim.namespace, patch_type="strategic", subresource="status")
            await self.client.delete(PODS, victim.name, victim.namespace)
        except Exception as e:  # already gone, or the next attempt retries
            event(log, "pod.preempt_failed", logging.WARNING, victim=victim.key, error=str(e)[:200])
            return
        event(log, "pod.preempted", victim=victim.key, preemptor=pod.key, node=node)
        if self.recorder is not None:
            self.recorder.event(victim.pod, "Normal", "Preempted",
                                f"Preempted by pod {pod.uid} on node {node}")

    def clear_nomination(self, pi: PodInfo) -> None:
        """In the background: ``status.nominatedNodeName`` → null (merge patch)."""
        self.spawn(self._clear_nomination(pi))

    async def _clear_nomination(self, pi: PodInfo) -> None:
        if self.client is None:
            return
        try:
            await self.client.patch(PODS, pi.name, {"status": {"nominatedNodeName": None}},
                                    pi.namespace, patch_type="merge", subresource="status")
        except Exception as e:
            event(log, "pod.nomination_clear_failed", logging.WARNING, pod=pi.key, error=str(e)[:200])

    # -- result annotations (--record-results) -------------------------------------------
    async def patch_annotations(self, pi: PodInfo, ann: dict, current: dict | None = None) -> None:
        """Merge-patch ``ann`` into the pod's annotations unless ``current`` (default:
        ``pi.pod``) already has them all."""
        if not ann or self.client is None:
            return
        have = ((current or pi.pod).get("metadata") or {}).get("annotations") or {}
        if all(have.get(k) == v for k, v in ann.items()):
            return
        try:
            await self.client.patch(PODS, pi.name, {"metadata": {"annotations": ann}}, pi.namespace,
                                    patch_type="merge")
        except Exception as e:
            event(log, "pod.annotate_failed", logging.WARNING, pod=pi.key, error=str(e)[:200])
