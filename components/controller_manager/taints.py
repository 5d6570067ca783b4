"""Taint and toleration helpers the node controllers share.

Facts from ``staging/src/k8s.io/api/core/v1/toleration.go`` (ToleratesTaint),
``staging/src/k8s.io/api/core/v1/well_known_taints.go`` (the taint keys) and
``pkg/controller/tainteviction/taint_eviction.go`` (getMatchingTolerations,
getMinTolerationTime).
"""

from __future__ import annotations

#: well-known taint keys (well_known_taints.go)
TAINT_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
TAINT_MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
TAINT_DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
TAINT_PID_PRESSURE = "node.kubernetes.io/pid-pressure"
TAINT_NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"
TAINT_OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"

NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"


def tolerates(toleration: dict, taint: dict) -> bool:
    """Whether one v1.Toleration tolerates one v1.Taint (ToleratesTaint): an empty
    toleration effect matches every effect, an empty key with ``Exists`` every key;
    ``Equal`` (the default operator) also compares values."""
    eff = toleration.get("effect") or ""
    if eff and eff != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    return op == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def matching_tolerations(taints: list[dict], tolerations: list[dict]) -> tuple[bool, list[dict]]:
    """``(all_tolerated, used)``: whether every taint is tolerated, and the
    tolerations that matched (the first match per taint), as getMatchingTolerations."""
    used: list[dict] = []
    for taint in taints:
        tol = next((t for t in tolerations if tolerates(t, taint)), None)
        if tol is None:
            return False, []
        used.append(tol)
    return True, used


def min_toleration_seconds(tolerations: list[dict]) -> float:
    """The smallest ``tolerationSeconds`` among ``tolerations`` (negative counts as 0);
    -1 when none sets it, meaning "tolerate forever" (getMinTolerationTime)."""
    best = -1.0
    for t in tolerations:
        s = t.get("tolerationSeconds")
        if s is None:
            continue
        s = max(0.0, float(s))
        if best < 0 or s < best:
            best = s
    return best


def no_execute_taints(node: dict | None) -> list[dict]:
    """The node's taints with effect NoExecute ([] for None)."""
    return [t for t in ((node or {}).get("spec") or {}).get("taints") or [] if t.get("effect") == NO_EXECUTE]


def set_pod_condition(pod: dict, cond: dict, now: str) -> bool:
    """Add or update ``cond`` (by type) in ``pod.status.conditions``; the transition
    time changes only when the status does (podutil.UpdatePodCondition). True when
    something changed."""
    conds = pod.setdefault("status", {}).setdefault("conditions", [])
    for i, c in enumerate(conds):
        if c.get("type") != cond["type"]:
            continue
        new = {**c, **cond}
        new["lastTransitionTime"] = now if c.get("status") != cond.get("status") else \
            c.get("lastTransitionTime") or now
        if new == c:
            return False
        conds[i] = new
        return True
    conds.append({**cond, "lastTransitionTime": now})
    return True
