"""The built-in kinds' strategies: what each kind's ``strategy.go`` does beyond the generic store.

One :class:`~controlplane.api.registry.Strategy` per rule set, attached to the registry
entries by :mod:`controlplane.api.builtin` and run by the apiserver's generic strategy
(``components/apiserver/strategy.py``):

* :data:`POD` — PrepareForCreate resets status to ``Pending`` with the QoS class and the
  ``SchedulingGated`` condition (``pkg/registry/core/pod/strategy.go``
  ``PrepareForCreate``, ``applySchedulingGatedCondition``); graceful deletion from
  ``spec.terminationGracePeriodSeconds`` (``CheckGracefulDelete``);
* :data:`WORKLOAD` — the apps workloads and RCs: empty status on create, generation
  tracked (``pkg/registry/apps/*/strategy.go``, ``pkg/registry/core/replicationcontroller/strategy.go``);
* :data:`NAMESPACE` — status ``Active`` and the ``kubernetes`` finalizer on create
  (``pkg/registry/core/namespace/strategy.go``); an update deletes a namespace being
  deleted only once ``spec.finalizers`` is empty too (``ShouldDeleteNamespaceDuringUpdate``,
  ``pkg/registry/core/namespace/storage/storage.go``).

Pods track no generation in v1.32 (PodObservedGenerationTracking is v1.33); nodes,
services, config maps... use the generic strategy.
"""

from __future__ import annotations

from controlplane import apitime
from controlplane.api.registry import JSON, Strategy


def qos_class_on_create(pod: JSON) -> str:
    """Pod QoS class as PrepareForCreate computes it (``pkg/apis/core/helper/qos``), before
    defaulting: Guaranteed, Burstable or BestEffort from the cpu/memory requests and limits
    of all containers and init containers, compared as written."""
    spec = pod.get("spec") or {}
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    any_set, all_guaranteed = False, bool(containers)
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        if req or lim:
            any_set = True
        for r in ("cpu", "memory"):
            if r not in lim or (r in req and str(req[r]) != str(lim[r])):
                all_guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if all_guaranteed else "Burstable"


def prepare_pod_create(pod: JSON) -> None:
    """PrepareForCreate of pods: status ``{phase: Pending, qosClass}``, plus the
    PodScheduled=False/SchedulingGated condition when ``spec.schedulingGates`` is set."""
    pod["status"] = {"phase": "Pending", "qosClass": qos_class_on_create(pod)}
    if (pod.get("spec") or {}).get("schedulingGates"):
        pod["status"]["conditions"] = [{
            "type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
            "message": "Scheduling is blocked due to non-empty scheduling gates",
            "lastProbeTime": None, "lastTransitionTime": apitime.now()}]


def pod_grace_period(pod: JSON, requested: int | None) -> int:
    """Grace period (s) of a pod DELETE (``pkg/registry/core/pod/strategy.go`` CheckGracefulDelete).

    The request's ``gracePeriodSeconds`` (negative → 1), else
    ``spec.terminationGracePeriodSeconds`` (default 30); 0 for a pod not yet scheduled
    or already Succeeded/Failed, which is deleted at once.
    """
    spec = pod.get("spec") or {}
    if requested is not None:
        grace = 1 if requested < 0 else requested
    else:
        tg = spec.get("terminationGracePeriodSeconds")
        grace = 30 if tg is None else int(tg)
    phase = (pod.get("status") or {}).get("phase")
    if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
        return 0
    return grace


def prepare_workload_create(obj: JSON) -> None:
    """PrepareForCreate of the apps workloads and RCs: an empty status."""
    obj["status"] = {}


def prepare_namespace_create(ns: JSON) -> None:
    """PrepareForCreate of namespaces: status ``Active``, ``spec.finalizers: [kubernetes]``
    unless set."""
    ns["status"] = {"phase": "Active"}
    ns.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])


def namespace_finalized(ns: JSON) -> bool:
    """ShouldDeleteNamespaceDuringUpdate's extra condition: no ``spec.finalizers`` left."""
    return not (ns.get("spec") or {}).get("finalizers")


POD = Strategy(prepare_create=prepare_pod_create, grace_period=pod_grace_period)
WORKLOAD = Strategy(tracks_generation=True, prepare_create=prepare_workload_create)
NAMESPACE = Strategy(prepare_create=prepare_namespace_create, may_delete_during_update=namespace_finalized)
