"""The ``pods/eviction`` subresource with PodDisruptionBudgets
(``pkg/registry/core/pod/storage/eviction.go`` EvictionREST.Create).

A pod that is already terminal, still Pending or being deleted is deleted at once
(canIgnorePDB). Otherwise the namespace's PodDisruptionBudgets selecting it decide: none →
deleted; more than one → 500 ``This pod has more than one PodDisruptionBudget, which the
eviction subresource does not support.``; one → its status must allow a disruption
(checkAndDecrement): a budget whose status trails its generation → 429 (cause ``The
disruption budget <x> is still being processed by the server.``); ``disruptionsAllowed`` 0
→ 429 ``Cannot evict pod as it would violate the pod's disruption budget.`` with a
``DisruptionBudget`` cause ``The disruption budget <x> needs <d> healthy pods and has <c>
currently``; else ``disruptionsAllowed`` is decremented and the pod recorded in
``disruptedPods`` (one optimistic status update; not under dry run), then the pod is
deleted. An unready pod may go without using the budget when the budget is met
(``unhealthyPodEvictionPolicy`` IfHealthyBudget, the default) or always (AlwaysAllow).
"""

from __future__ import annotations

from typing import Any

from components.apiserver import status as st
from controlplane import apitime
from controlplane.api import resources as R
from controlplane.api.groups import policy
from controlplane.labels import selector_from_dict
from controlplane.storage.errors import Conflict, KeyNotFound
from controlplane.storage.store import collection_prefix, object_key

EVICTION_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget."
#: MaxDisruptedPodSize
MAX_DISRUPTED_POD_SIZE = 2000


def too_many_requests(cause: str, retry_after: int = 0) -> st.APIError:
    """``errors.NewTooManyRequests`` with one ``DisruptionBudget`` cause."""
    details: dict[str, Any] = {"causes": [{"reason": "DisruptionBudget", "message": cause}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return st.APIError(429, "TooManyRequests", EVICTION_MESSAGE, details)


def can_ignore_pdb(pod: dict[str, Any]) -> bool:
    """canIgnorePDB: terminal, Pending, or already being deleted."""
    return bool((pod.get("metadata") or {}).get("deletionTimestamp")) or \
        (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed", "Pending")


def pod_ready(pod: dict[str, Any]) -> bool:
    """The pod's Ready condition is True."""
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def matching_pdbs(pdbs: list[dict[str, Any]], pod: dict[str, Any]) -> list[dict[str, Any]]:
    """The budgets whose selector selects ``pod`` (a null selector selects nothing)."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    out = []
    for pdb in pdbs:
        try:
            sel = selector_from_dict((pdb.get("spec") or {}).get("selector"))
        except ValueError:
            continue
        if sel.matches(labels):
            out.append(pdb)
    return out


def disruption_allowed_condition(pdb: dict[str, Any], now: str) -> None:
    """UpdateDisruptionAllowedCondition (``pkg/apis/policy/helper``)."""
    status = pdb.setdefault("status", {})
    allowed = int(status.get("disruptionsAllowed") or 0) > 0
    cond = {"type": "DisruptionAllowed", "status": "True" if allowed else "False",
            "reason": "SufficientPods" if allowed else "InsufficientPods", "message": "",
            "observedGeneration": int(status.get("observedGeneration") or 0), "lastTransitionTime": now}
    conds = [c for c in status.get("conditions") or [] if c.get("type") != "DisruptionAllowed"]
    old = next((c for c in status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None)
    if old is not None and old.get("status") == cond["status"]:
        cond["lastTransitionTime"] = old.get("lastTransitionTime", now)
    status["conditions"] = conds + [cond]


async def check_budget(store: Any, namespace: str, pod: dict[str, Any], dry_run: bool) -> None:
    """Raise the eviction's APIError when the budgets forbid evicting ``pod``; consume one
    disruption otherwise (see the module docstring). ``store``: the storage."""
    if can_ignore_pdb(pod):
        return
    res = await store.list(collection_prefix(policy.PODDISRUPTIONBUDGETS, namespace))
    pdbs = matching_pdbs(res.items, pod)
    if not pdbs:
        return
    if len(pdbs) > 1:
        raise st.APIError(500, "InternalError", "This pod has more than one PodDisruptionBudget, which the "
                                                "eviction subresource does not support.")
    pdb = pdbs[0]
    name = str((pdb.get("metadata") or {}).get("name", ""))
    pod_name = str((pod.get("metadata") or {}).get("name", ""))

    def decrement(cur: dict[str, Any]) -> dict[str, Any]:
        status = cur.get("status") or {}
        spec = cur.get("spec") or {}
        if not pod_ready(pod):
            if spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow":
                raise _NoCharge()
            if int(status.get("currentHealthy") or 0) >= int(status.get("desiredHealthy") or 0) and \
                    int(status.get("desiredHealthy") or 0) > 0:
                raise _NoCharge()
        if int(status.get("observedGeneration") or 0) < int((cur.get("metadata") or {}).get("generation") or 0):
            raise too_many_requests(f"The disruption budget {name} is still being processed by the server.", 10)
        allowed = int(status.get("disruptionsAllowed") or 0)
        if allowed < 0:
            raise st.forbidden(policy.PODDISRUPTIONBUDGETS, name, "pdb disruptions allowed is negative")
        if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_POD_SIZE:
            raise st.forbidden(policy.PODDISRUPTIONBUDGETS, name, "DisruptedPods map too big - too many "
                                                                  "evictions not confirmed by PDB controller")
        if allowed == 0:
            raise too_many_requests(f"The disruption budget {name} needs {int(status.get('desiredHealthy') or 0)} "
                                    f"healthy pods and has {int(status.get('currentHealthy') or 0)} currently")
        status["disruptionsAllowed"] = allowed - 1
        now = apitime.now()
        if allowed - 1 == 0:
            cur["status"] = status
            disruption_allowed_condition(cur, now)
        status = cur.get("status") or status
        dp = dict(status.get("disruptedPods") or {})
        dp[pod_name] = now
        status["disruptedPods"] = dp
        cur["status"] = status
        return cur
    try:
        await store.guaranteed_update(object_key(policy.PODDISRUPTIONBUDGETS, namespace, name), decrement,
                                      resource_plural="poddisruptionbudgets", group="policy", name=name,
                                      dry_run=dry_run)
    except _NoCharge:
        return
    except KeyNotFound:
        return
    except Conflict as e:
        raise st.conflict(policy.PODDISRUPTIONBUDGETS, name, str(e)) from None


class _NoCharge(Exception):
    """The pod may be evicted without using the budget."""


async def pod_for_eviction(store: Any, namespace: str, name: str) -> dict[str, Any]:
    """The pod to evict; 404 when absent."""
    try:
        pod: dict[str, Any] = await store.get(object_key(R.PODS, namespace, name))
    except KeyNotFound:
        raise st.not_found(R.PODS, name) from None
    return pod
