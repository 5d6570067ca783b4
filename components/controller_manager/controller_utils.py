"""Helpers every workload controller shares: pod state, controllerRefs, pods from
templates, slow-start batches and the ranking of pods for deletion.

Facts from ``pkg/controller/controller_utils.go`` (FilterActivePods, GetPodFromTemplate,
slowStartBatch via ``replica_set.go``, ActivePodsWithRanks, pod-deletion-cost) and
``pkg/api/v1/pod/util.go`` (IsPodReady, IsPodAvailable).
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any, Awaitable, Callable, Iterable

from controlplane import apitime
from controlplane.api import codec

#: the first slow-start batch (controller_utils.go SlowStartInitialBatchSize)
SLOW_START_INITIAL_BATCH_SIZE = 1
#: at most this many creations/deletions per sync (replicaset BurstReplicas)
BURST_REPLICAS = 500
#: pod annotation lowering or raising a pod's deletion priority (KEP-2255)
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"

#: the pods informer's index of ``spec.nodeName`` (``nodeNameKeyIndex`` of
#: ``pkg/controller/nodelifecycle/node_lifecycle_controller.go``, which the node-lifecycle and
#: taint-eviction controllers read through ``getPodsAssignedToNode``)
POD_NODE_INDEX = "spec.nodeName"

#: the pods informer's index of their controllerRef's uid, orphans under
#: ``ORPHAN_POD_INDEX_KEY/<namespace>`` (``PodControllerUIDIndex`` / ``OrphanPodIndexKeyForNamespace``
#: of ``pkg/controller/controller_utils.go``, read by the ReplicaSet controller's ``FilterPodsByOwner``)
POD_CONTROLLER_UID_INDEX = "podControllerUID"
ORPHAN_POD_INDEX_KEY = "_ORPHAN_POD"

#: pod phase (None: not reported) -> its rank when picking pods to delete
_PHASE_ORDINAL: dict[str | None, int] = {"Pending": 0, "Unknown": 1, "Running": 2}


def meta(obj: dict) -> dict:
    """``obj.metadata`` (an empty dict when absent)."""
    return obj.get("metadata") or {}


def name_of(obj: dict) -> str:
    """``obj.metadata.name``; "" when absent (never, for an object the apiserver stored)."""
    name: str = meta(obj).get("name") or ""
    return name


def is_pod_active(pod: dict) -> bool:
    """Not Succeeded/Failed and not being deleted (controller_utils.go IsPodActive)."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not meta(pod).get("deletionTimestamp")


def _pod_node_name(pod: dict) -> tuple[str, ...]:
    node = (pod.get("spec") or {}).get("nodeName")
    return (node,) if node else ()


def pods_on_node(pods: Any, node_name: str) -> list[tuple[str, dict]]:
    """``(key, pod)`` of the cached pods bound to ``node_name``, from the ``spec.nodeName`` index
    of the pods informer ``pods`` (added on first use; shared by every controller asking):
    O(pods on the node) instead of a walk over every cached pod (``getPodsAssignedToNode``)."""
    pods.add_indexer(POD_NODE_INDEX, _pod_node_name)
    store = pods.store
    return [(k, store[k]) for k in pods.index_keys(POD_NODE_INDEX, node_name) if k in store]


def _pod_controller_uid(pod: dict) -> tuple:
    ref = controller_ref(pod)
    if ref is not None:
        return (ref.get("uid"),)
    return (f"{ORPHAN_POD_INDEX_KEY}/{meta(pod).get('namespace') or ''}",)


def index_pods_by_controller(pods: Any) -> None:
    """Add the ``podControllerUID`` index to the pods informer ``pods`` (once; shared)."""
    pods.add_indexer(POD_CONTROLLER_UID_INDEX, _pod_controller_uid)


def controlled_pods(pods: Any, uid: str | None) -> list[tuple[str, dict]]:
    """``(key, pod)`` of the cached pods whose controllerRef has ``uid``, in the order they
    joined the index (:func:`index_pods_by_controller`, added on first use)."""
    index_pods_by_controller(pods)
    store = pods.store
    return [(k, store[k]) for k in pods.index_keys(POD_CONTROLLER_UID_INDEX, uid) if k in store]


def pods_by_owner(pods: Any, uid: str | None, namespace: str | None) -> list[tuple[str, dict]]:
    """``(key, pod)`` of the cached pods controlled by ``uid``, then the orphans of
    ``namespace`` (which the owner may adopt): the pods an owner's claim looks at, found in
    O(those pods) instead of a walk over every cached pod (replica_set.go ``FilterPodsByOwner``)."""
    out = controlled_pods(pods, uid)
    store = pods.store
    out.extend((k, store[k]) for k in pods.index_keys(
        POD_CONTROLLER_UID_INDEX, f"{ORPHAN_POD_INDEX_KEY}/{namespace or ''}") if k in store)
    return out


def ready_condition(pod: dict) -> dict | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c
    return None


def is_pod_ready(pod: dict) -> bool:
    """The pod's Ready condition is True (pkg/api/v1/pod/util.go IsPodReady)."""
    c = ready_condition(pod)
    return bool(c and c.get("status") == "True")


def is_pod_available(pod: dict, min_ready_seconds: int, now: float | None = None) -> bool:
    """Ready for at least ``min_ready_seconds`` (pod/util.go IsPodAvailable)."""
    if not is_pod_ready(pod):
        return False
    if not min_ready_seconds:
        return True
    t = apitime.time_or_none((ready_condition(pod) or {}).get("lastTransitionTime"))
    return t is not None and t + min_ready_seconds < (now if now is not None else time.time())


def controller_ref(obj: dict) -> dict | None:
    """The ownerReference with ``controller: true``, or None (metav1.GetControllerOf)."""
    for ref in meta(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def resolve_controller_ref(obj: dict, kind: str, owners: dict) -> str | None:
    """The ``namespace/name`` key of the cached owner of ``kind`` that ``obj``'s controllerRef
    names, or None when the ref is of another kind, the owner is not in ``owners`` (an informer
    store by key) or has another uid (every controller's ``resolveControllerRef``, e.g.
    ``pkg/controller/daemon/daemon_controller.go``)."""
    ref = controller_ref(obj)
    if ref is None or ref.get("kind") != kind:
        return None
    key = f"{meta(obj).get('namespace')}/{ref.get('name')}"
    owner = owners.get(key)
    if owner is None or meta(owner).get("uid") != ref.get("uid"):
        return None
    return key


def selecting_owners(obj: dict, owners: Iterable[dict]) -> list[str]:
    """Keys of the ``owners`` in ``obj``'s namespace whose non-empty ``spec.selector`` matches
    its labels (an orphan's possible controllers: ``getPodDaemonSets``, ``getStatefulSetsForPod``)."""
    from controlplane.labels import selector_from_dict
    ns, labels = meta(obj).get("namespace"), meta(obj).get("labels") or {}
    out = []
    for o in list(owners):
        if meta(o).get("namespace") != ns:
            continue
        try:
            sel = selector_from_dict((o.get("spec") or {}).get("selector"))
        except ValueError:
            continue
        if not sel.empty() and sel.matches(labels):
            out.append(f"{meta(o).get('namespace')}/{meta(o).get('name')}")
    return out


def pod_service_memberships(pod: dict, old: dict | None, services: Iterable[dict]) -> list[str]:
    """Keys of the ``services`` in the pod's namespace whose ``spec.selector`` matches the pod's
    labels, or its ``old`` labels on an update (``GetPodServiceMemberships``,
    ``staging/src/k8s.io/endpointslice/util``; the Endpoints and EndpointSlice controllers'
    pod handlers). A Service without a selector selects nothing."""
    from controlplane.labels import selector_from_dict
    ns = meta(pod).get("namespace")
    label_sets = [meta(pod).get("labels") or {}]
    if old is not None:
        label_sets.append(meta(old).get("labels") or {})
    out = []
    for svc in list(services):
        sel = (svc.get("spec") or {}).get("selector")
        if meta(svc).get("namespace") != ns or not sel:
            continue
        s = selector_from_dict({"matchLabels": sel})
        if any(s.matches(lb) for lb in label_sets):
            out.append(f"{meta(svc).get('namespace')}/{meta(svc).get('name')}")
    return out


def new_controller_ref(owner: dict, api_version: str, kind: str) -> dict:
    """``{apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true}``
    (metav1.NewControllerRef)."""
    md = meta(owner)
    return {"apiVersion": api_version, "kind": kind, "name": md.get("name"), "uid": md.get("uid"),
            "controller": True, "blockOwnerDeletion": True}


def pod_from_template(template: dict, owner: dict, ref: dict) -> dict:
    """A new pod for ``owner`` (GetPodFromTemplate): template labels, annotations and
    finalizers, ``generateName: <owner>-`` (the apiserver appends 5 random
    characters), the controllerRef, and the template's spec."""
    tmd = template.get("metadata") or {}
    md: dict = {"generateName": f"{meta(owner).get('name')}-", "ownerReferences": [ref]}
    if meta(owner).get("namespace"):
        md["namespace"] = meta(owner)["namespace"]
    for k in ("labels", "annotations", "finalizers"):
        if tmd.get(k):
            md[k] = codec.clone(tmd[k])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md,
            "spec": codec.clone(template.get("spec") or {})}


async def slow_start_batch(count: int, initial_batch_size: int,
                           fn: Callable[[], Awaitable[None]]) -> tuple[int, Exception | None]:
    """Call ``fn`` ``count`` times in batches of 1, 2, 4, ... run concurrently,
    stopping after the first batch with a failure (replica_set.go slowStartBatch).

    Returns ``(successes, first_error)``: a quota or webhook failure costs one
    call, not ``count``.
    """
    remaining, successes = count, 0
    batch = min(remaining, initial_batch_size)
    while batch > 0:
        results = await asyncio.gather(*(fn() for _ in range(batch)), return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        successes += batch - len(errors)
        if errors:
            if any(isinstance(e, asyncio.CancelledError) for e in errors):
                raise asyncio.CancelledError()
            return successes, errors[0] if isinstance(errors[0], Exception) else Exception(str(errors[0]))
        remaining -= batch
        batch = min(2 * batch, remaining)
    return successes, None


def _log_bucket(since: float | None, now: float) -> float:
    """log2 of an age in nanoseconds, truncated (logarithmic scale-down buckets);
    -1 for non-positive ages."""
    if since is None:
        return -1
    d = (now - since) * 1e9
    return -1 if d <= 0 else int(math.log2(d))


def deletion_rank_key(pod: dict, rank: int, now: float) -> tuple:
    """Sort key: pods earlier in the order are deleted first (ActivePodsWithRanks.Less,
    with LogarithmicScaleDown on, the default since 1.22):

    1. unscheduled < scheduled; 2. Pending < Unknown < Running; 3. not ready < ready;
    4. lower pod-deletion-cost first; 5. more related pods on the same node first;
    6. ready for less time first; 7. more container restarts first;
    8. no creationTimestamp first, then newer before older.
    """
    md = meta(pod)
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    ready = is_pod_ready(pod)
    try:
        cost = int((md.get("annotations") or {}).get(POD_DELETION_COST, 0))
    except ValueError:
        cost = 0
    ready_since = apitime.time_or_none((ready_condition(pod) or {}).get("lastTransitionTime")) if ready else None
    restarts = max([c.get("restartCount", 0) for c in status.get("containerStatuses") or []] or [0])
    created = apitime.time_or_none(md.get("creationTimestamp"))
    return (
        1 if spec.get("nodeName") else 0,
        _PHASE_ORDINAL.get(status.get("phase"), 0),
        1 if ready else 0,
        cost,
        -rank,
        _log_bucket(ready_since, now) if ready else 0,
        -restarts,
        (0, 0) if created is None else (1, _log_bucket(created, now)),
    )


def pods_to_delete(pods: list[dict], related: Iterable[dict], diff: int,
                   now: float | None = None) -> list[dict]:
    """The ``diff`` pods to delete first among ``pods`` (replica_set.go getPodsToDelete):
    each pod is ranked by how many ``related`` active pods share its node."""
    now = time.time() if now is None else now
    per_node: dict[str, int] = {}
    for p in related:
        node = (p.get("spec") or {}).get("nodeName")
        if node and is_pod_active(p):
            per_node[node] = per_node.get(node, 0) + 1
    def key(p: dict) -> tuple:
        node = (p.get("spec") or {}).get("nodeName")
        return deletion_rank_key(p, per_node.get(node, 0) if node else 0, now)
    return sorted(pods, key=key)[:diff]
