"""Resource quota usage, shared by the apiserver's ResourceQuota admission and the
controller-manager's resourcequota controller (``pkg/quota/v1/evaluator/core/pods.go``,
``staging/src/k8s.io/apiserver/pkg/quota/v1/generic/evaluator.go`` object counts,
``pkg/quota/v1/resources.go`` Add / LessThanOrEqual / Mask).

Usage is a mapping resource name → :class:`fractions.Fraction`. A pod is charged
``pods``, ``count/pods`` and, from its effective requests and limits (the sum over its
containers, or the largest init container when that is larger, plus ``spec.overhead``:
``resourcehelper.PodRequests``), ``requests.cpu`` (= ``cpu``), ``requests.memory``
(= ``memory``), ``limits.cpu``, ``limits.memory``, ``requests.ephemeral-storage``...;
a terminal pod (Succeeded / Failed) or one past its deletion grace period is not charged.
Any other object counts ``count/<plural>[.<group>]`` and, for the core kinds with a legacy
quota name, ``<plural>`` (services, configmaps, secrets, replicationcontrollers,
resourcequotas, persistentvolumeclaims). A Service is also charged (``services.go`` Usage)
``services.nodeports`` — its number of ports when of type NodePort or LoadBalancer (a
LoadBalancer with ``allocateLoadBalancerNodePorts: false``: only the ports that name a
``nodePort``), else 0 — and ``services.loadbalancers``, 1 for a LoadBalancer, else 0. A
PersistentVolumeClaim is also charged (``persistent_volume_claims.go`` Usage)
``requests.storage`` (its ``spec.resources.requests.storage`` rounded up to whole bytes, or
``status.allocatedResources.storage`` when larger) and, when it has a class,
``<class>.storageclass.storage.k8s.io/persistentvolumeclaims`` (1) and
``<class>.storageclass.storage.k8s.io/requests.storage``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from controlplane import apitime
from controlplane.api.quantity import format_quantity, parse_quantity

Usage = dict[str, Fraction]
#: core resources with a legacy (uncounted-prefix) quota name
LEGACY_COUNTED = frozenset({"services", "configmaps", "secrets", "replicationcontrollers", "resourcequotas",
                            "persistentvolumeclaims"})
#: what a Service is charged besides its counts (services.go serviceResources)
SERVICE_NODEPORTS, SERVICE_LOADBALANCERS = "services.nodeports", "services.loadbalancers"
#: the suffix of the per-class claim quota names (``V1ResourceByStorageClass``)
STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"
#: the beta annotation naming a claim's class, before spec.storageClassName
STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
#: the compute resources each container must state when a quota limits them (pods.go
#: podComputeAndObjectResources / the backward-compatibility requirement)
CONTAINER_REQUIRED = ("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory")


def count_name(plural: str, group: str) -> str:
    """``count/<plural>`` for the core group, ``count/<plural>.<group>`` otherwise."""
    return f"count/{plural}.{group}" if group else f"count/{plural}"


def _q(v: Any) -> Fraction:
    try:
        return parse_quantity(v)
    except (ValueError, TypeError):
        return Fraction(0)


def pod_resources(pod: dict[str, Any], section: str) -> Usage:
    """The pod's effective ``requests`` or ``limits`` (``section``): per resource, the larger
    of the containers' sum and the largest init container's, plus the overhead."""
    spec = pod.get("spec") or {}
    total: Usage = {}
    for c in spec.get("containers") or []:
        for k, v in (((c or {}).get("resources") or {}).get(section) or {}).items():
            total[k] = total.get(k, Fraction(0)) + _q(v)
    for c in spec.get("initContainers") or []:
        for k, v in (((c or {}).get("resources") or {}).get(section) or {}).items():
            if _q(v) > total.get(k, Fraction(0)):
                total[k] = _q(v)
    for k, v in (spec.get("overhead") or {}).items():
        if k in total or section == "requests":
            total[k] = total.get(k, Fraction(0)) + _q(v)
    return total


def pod_is_charged(pod: dict[str, Any], now: float | None = None) -> bool:
    """QuotaV1Pod: not terminal and not past its deletion grace period."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    md = pod.get("metadata") or {}
    ts = apitime.time_or_none(md.get("deletionTimestamp"))
    if ts is not None:
        grace = md.get("deletionGracePeriodSeconds") or 0
        if (apitime.clock() if now is None else now) > ts + grace:
            return False
    return True


def pod_usage(pod: dict[str, Any]) -> Usage:
    """What a pod is charged (module docstring)."""
    u: Usage = {"pods": Fraction(1), "count/pods": Fraction(1)}
    for k, v in pod_resources(pod, "requests").items():
        u[f"requests.{k}"] = v
        if k in ("cpu", "memory", "ephemeral-storage"):
            u[k] = v
    for k, v in pod_resources(pod, "limits").items():
        u[f"limits.{k}"] = v
    return u


def object_usage(plural: str, group: str, kind: str, obj: dict[str, Any]) -> Usage:
    """What one object of the resource is charged (a pod: :func:`pod_usage`)."""
    if kind == "Pod" and not group:
        return pod_usage(obj) if pod_is_charged(obj) else {}
    u: Usage = {count_name(plural, group): Fraction(1)}
    if not group and plural in LEGACY_COUNTED:
        u[plural] = Fraction(1)
    if kind == "Service" and not group:
        u.update(service_usage(obj))
    if kind == "PersistentVolumeClaim" and not group:
        u.update(claim_usage(obj))
    return u


def claim_usage(pvc: dict[str, Any]) -> Usage:
    """``requests.storage`` and the per-class names of a claim (module docstring)."""
    ann = (pvc.get("metadata") or {}).get("annotations") or {}
    cls = ann[STORAGE_CLASS_ANNOTATION] if STORAGE_CLASS_ANNOTATION in ann else \
        (pvc.get("spec") or {}).get("storageClassName")
    u: Usage = {}
    if cls:
        u[f"{cls}{STORAGE_CLASS_SUFFIX}persistentvolumeclaims"] = Fraction(1)
    storage = (((pvc.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")
    if storage is None:
        return u
    # getStorageUsage: whole bytes, and the allocated size when larger (RecoverVolumeExpansionFailure, beta)
    size = Fraction(math.ceil(_q(storage)))
    allocated = ((pvc.get("status") or {}).get("allocatedResources") or {}).get("storage")
    if allocated is not None and _q(allocated) > size:
        size = Fraction(math.ceil(_q(allocated)))
    u["requests.storage"] = size
    if cls:
        u[f"{cls}{STORAGE_CLASS_SUFFIX}requests.storage"] = size
    return u


def service_usage(svc: dict[str, Any]) -> Usage:
    """``services.nodeports`` and ``services.loadbalancers`` of a Service (module docstring)."""
    spec = svc.get("spec") or {}
    ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
    kind = spec.get("type")
    nodeports, lbs = 0, 0
    if kind == "NodePort":
        nodeports = len(ports)
    elif kind == "LoadBalancer":
        if spec.get("allocateLoadBalancerNodePorts") is False:
            nodeports = sum(1 for p in ports if p.get("nodePort"))
        else:
            nodeports = len(ports)
        lbs = 1
    return {SERVICE_NODEPORTS: Fraction(nodeports), SERVICE_LOADBALANCERS: Fraction(lbs)}


def subtract_non_negative(a: Usage, b: Usage) -> Usage:
    """``SubtractWithNonNegativeResult``: ``a - b`` per resource of ``a``, at least 0."""
    return {k: max(v - b.get(k, Fraction(0)), Fraction(0)) for k, v in a.items()}


def remove_zeros(u: Usage) -> Usage:
    """``RemoveZeros``: the entries that are not 0."""
    return {k: v for k, v in u.items() if v != 0}


def add(a: Usage, b: Usage) -> Usage:
    """The sum of two usages."""
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, Fraction(0)) + v
    return out


def parse(rl: dict[str, Any] | None) -> Usage:
    """A ResourceList (``{"pods": "2", "requests.cpu": "500m"}``) as a usage."""
    return {k: _q(v) for k, v in (rl or {}).items()}


def fmt(u: Usage, names: Any = None) -> dict[str, str]:
    """A usage as a ResourceList (canonical quantities; memory-like values in binary form
    when exact), limited to ``names`` when given."""
    keys = sorted(u) if names is None else sorted(names)
    out = {}
    for k in keys:
        v = u.get(k, Fraction(0))
        binary = ("memory" in k or "storage" in k) and v.denominator == 1 and v % 1024 == 0
        out[k] = format_quantity(v, binary=binary)
    return out


def pretty(rl: dict[str, str]) -> str:
    """``prettyPrint``: ``k=v`` pairs, sorted, comma-separated."""
    return ",".join(f"{k}={rl[k]}" for k in sorted(rl))


def matches_scopes(quota: dict[str, Any], obj: dict[str, Any], kind: str) -> bool:
    """Whether ``obj`` is tracked by ``quota``'s scopes and scopeSelector (BestEffort,
    NotBestEffort, Terminating, NotTerminating, PriorityClass; ``pods.go`` podMatchesScopeFunc).
    Scopes only track pods: with a scope, other kinds are not tracked."""
    spec = quota.get("spec") or {}
    scopes: list[tuple[Any, Any, list[Any]]] = [(s, "Exists", []) for s in spec.get("scopes") or []]
    for e in ((spec.get("scopeSelector") or {}).get("matchExpressions") or []):
        scopes.append((e.get("scopeName"), e.get("operator"), e.get("values") or []))
    if not scopes:
        return True
    if kind != "Pod":
        return False
    pspec = obj.get("spec") or {}
    for name, op, values in scopes:
        if name in ("BestEffort", "NotBestEffort"):
            best = not pod_resources(obj, "requests") and not pod_resources(obj, "limits")
            ok = best if name == "BestEffort" else not best
        elif name in ("Terminating", "NotTerminating"):
            term = pspec.get("activeDeadlineSeconds") is not None
            ok = term if name == "Terminating" else not term
        elif name == "PriorityClass":
            pc = pspec.get("priorityClassName") or ""
            ok = {"In": pc in values, "NotIn": pc not in values, "Exists": bool(pc),
                  "DoesNotExist": not pc}.get(str(op), False)
        else:
            ok = False
        if not ok:
            return False
    return True


def charged_names(plural: str, group: str, kind: str, names: set[str]) -> set[str]:
    """Which of the quota resource ``names`` objects of this resource are charged."""
    out = {quota_name for quota_name in names if quota_name == count_name(plural, group)}
    if kind == "Pod" and not group:
        out |= {n for n in names if n == "pods" or n.startswith(("requests.", "limits."))
                or n in ("cpu", "memory", "ephemeral-storage")}
    elif not group and plural in LEGACY_COUNTED and plural in names:
        out.add(plural)
    if kind == "Service" and not group:
        out |= {n for n in (SERVICE_NODEPORTS, SERVICE_LOADBALANCERS) if n in names}
    if kind == "PersistentVolumeClaim" and not group:
        out |= {n for n in names if n == "requests.storage" or (
            STORAGE_CLASS_SUFFIX in n and n.endswith(("/persistentvolumeclaims", "/requests.storage")))}
    return out


def namespace_usage(q: dict[str, Any], listings: Any, names: set[str]) -> Usage:
    """The usage of ``names`` in ``q``'s namespace, recalculated (the resourcequota
    controller's syncResourceQuota): ``listings`` yields ``(plural, group, kind, objects)``
    per resource; only objects ``q``'s scopes track count."""
    used: Usage = {n: Fraction(0) for n in names}
    for plural, group, kind, objects in listings:
        if not charged_names(plural, group, kind, names):
            continue
        for obj in objects:
            if not matches_scopes(q, obj, kind):
                continue
            for k, v in object_usage(plural, group, kind, obj).items():
                if k in used:
                    used[k] += v
    return used
