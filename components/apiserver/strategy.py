"""Per-kind create/update rules, as the registry strategies in ``pkg/registry/*/*/strategy.go``.

One generic table instead of per-kind copies:

* ``STATUS_SUBRESOURCE`` kinds: a write to the main resource keeps the stored status,
  a write to ``/status`` keeps the stored spec (``PrepareForUpdate`` / status strategies).
* create resets status for pods (``Pending``), workloads (empty) and namespaces (``Active``).
* ``metadata.generation`` starts at 1 and is bumped when ``spec`` changes.

(Unknown fields and wrong types are the decoder's business: :mod:`controlplane.api.decoder`.)
"""

from __future__ import annotations

import copy
import secrets
import uuid

from controlplane import apitime
from controlplane.api import resources

#: kinds whose status is only written through the /status subresource: derived from the
#: registry (the resources serving a ``status`` subresource), never listed here
STATUS_SUBRESOURCE = frozenset(r.kind for r in resources.BUILTIN if "status" in r.subresources)

#: metadata fields a client may not change on update (copied from the stored object).
#: ``uid`` is only filled in when the request leaves it empty; a different uid is
#: then rejected by validation as immutable (``rest.BeforeUpdate`` in
#: ``staging/src/k8s.io/apiserver/pkg/registry/rest/update.go``).
_IMMUTABLE_META = ("creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                   "generation", "selfLink")

#: kinds whose strategy keeps ``metadata.generation`` (set to 1 on create, bumped when
#: the spec changes) in Kubernetes v1.32: the apps workloads and RCs
#: (pkg/registry/apps/*/strategy.go, pkg/registry/core/replicationcontroller/strategy.go).
#: Pods gain it only in v1.33 (PodObservedGenerationTracking); nodes, services,
#: namespaces, config maps... never.
GENERATION_KINDS = frozenset({"Deployment", "ReplicaSet", "ReplicationController",
                              "StatefulSet", "DaemonSet"})

def random_suffix(n: int = 5) -> str:
    """generateName suffix: ``n`` chars from Kubernetes' alphabet (``apimachinery/pkg/util/rand``)."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(secrets.choice(alphabet) for _ in range(n))


def _qos_class(pod: dict) -> str:
    """Pod QoS class (``pkg/apis/core/helper/qos``): Guaranteed, Burstable or BestEffort."""
    containers = list((pod.get("spec") or {}).get("containers") or []) + \
        list((pod.get("spec") or {}).get("initContainers") or [])
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


def prepare_for_create(kind: str, obj: dict, namespace: str | None, namespaced: bool) -> None:
    """Server-set metadata and status reset on create (mutates ``obj``)."""
    md = obj.setdefault("metadata", {})
    if not md.get("name") and md.get("generateName"):
        md["name"] = md["generateName"] + random_suffix()
    if namespaced:
        md["namespace"] = namespace
    else:
        md.pop("namespace", None)
    md["uid"] = str(uuid.uuid4())
    md["creationTimestamp"] = apitime.now()
    md.pop("resourceVersion", None)
    md.pop("deletionTimestamp", None)
    md.pop("deletionGracePeriodSeconds", None)
    md.pop("selfLink", None)
    if kind in GENERATION_KINDS:
        md["generation"] = 1
    if kind == "Pod":
        obj["status"] = {"phase": "Pending", "qosClass": _qos_class(obj)}
        if (obj.get("spec") or {}).get("schedulingGates"):
            # pkg/registry/core/pod/strategy.go applySchedulingGatedCondition
            obj["status"]["conditions"] = [{
                "type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
                "lastProbeTime": None, "lastTransitionTime": apitime.now()}]
    elif kind in ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet"):
        obj["status"] = {}
    elif kind == "Namespace":
        obj["status"] = {"phase": "Active"}
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])


def prepare_for_update(kind: str, new: dict, old: dict, subresource: str = "") -> None:
    """Keep server-owned fields of ``old`` in ``new`` (mutates ``new``).

    Main resource: status kept for :data:`STATUS_SUBRESOURCE` kinds; generation +1 when
    spec changed. ``status`` subresource: spec (and ownership metadata) kept.
    """
    md = new.setdefault("metadata", {})
    omd = old.get("metadata") or {}
    if not md.get("uid") and omd.get("uid"):
        md["uid"] = omd["uid"]
    for f in _IMMUTABLE_META:
        if f in omd:
            md[f] = copy.deepcopy(omd[f])
        else:
            md.pop(f, None)
    md["name"] = omd.get("name")
    if "namespace" in omd:
        md["namespace"] = omd["namespace"]
    if subresource == "finalize":
        # namespaces/NAME/finalize: only spec.finalizers changes
        # (``pkg/registry/core/namespace/strategy.go`` namespaceFinalizeStrategy)
        fins = (new.get("spec") or {}).get("finalizers") if isinstance(new.get("spec"), dict) else None
        new.clear()
        new.update(copy.deepcopy(old))
        spec = new.setdefault("spec", {})
        if fins:
            spec["finalizers"] = list(fins)
        else:
            spec.pop("finalizers", None)
        return
    if subresource == "status":
        if "spec" in old:
            new["spec"] = copy.deepcopy(old["spec"])
        else:
            new.pop("spec", None)
        for f in ("ownerReferences", "finalizers"):
            if f in omd:
                md[f] = copy.deepcopy(omd[f])
        return
    if kind in STATUS_SUBRESOURCE:
        if "status" in old:
            new["status"] = copy.deepcopy(old["status"])
        else:
            new.pop("status", None)
    if kind in GENERATION_KINDS and new.get("spec") != old.get("spec") and "generation" in omd:
        md["generation"] = int(omd.get("generation") or 0) + 1


#: finalizers the garbage collector acts on (``staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go``)
FINALIZER_ORPHAN = "orphan"
FINALIZER_FOREGROUND = "foregroundDeletion"


def gc_finalizers(finalizers: list[str], opts: dict) -> list[str]:
    """Finalizers after a DELETE with ``opts`` (DeleteOptions as a dict).

    ``orphanDependents`` (deprecated bool) wins over ``propagationPolicy``; with neither,
    an ``orphan`` / ``foregroundDeletion`` finalizer already present is kept (the default
    policy of every served kind is Background). Orphan adds ``orphan`` and drops
    ``foregroundDeletion``, Foreground the reverse, Background drops both
    (``deletionFinalizersForGarbageCollection`` in ``pkg/registry/generic/registry/store.go``).
    """
    fins = list(finalizers)
    orphan, policy = opts.get("orphanDependents"), opts.get("propagationPolicy")
    if orphan is not None:
        want_orphan, want_fg = bool(orphan), False
    elif policy:
        want_orphan, want_fg = policy == "Orphan", policy == "Foreground"
    else:
        want_orphan, want_fg = FINALIZER_ORPHAN in fins, FINALIZER_FOREGROUND in fins
    fins = [f for f in fins if f not in (FINALIZER_ORPHAN, FINALIZER_FOREGROUND)]
    if want_orphan:
        fins.append(FINALIZER_ORPHAN)
    elif want_fg:
        fins.append(FINALIZER_FOREGROUND)
    return fins


def pod_grace_period(pod: dict, requested: int | None) -> int:
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


def should_delete_during_update(kind: str, new: dict, old: dict) -> bool:
    """An update that leaves an object being deleted with no finalizers deletes it.

    Generic rule (``ShouldDeleteDuringUpdate`` in ``pkg/registry/generic/registry/store.go``):
    the new object has no finalizers and the stored one has a deletionTimestamp with a
    grace period of 0 or none. Namespaces also need an empty ``spec.finalizers``
    (``ShouldDeleteNamespaceDuringUpdate``, ``pkg/registry/core/namespace/storage/storage.go``).
    """
    nmd, omd = new.get("metadata") or {}, old.get("metadata") or {}
    if nmd.get("finalizers") or not omd.get("deletionTimestamp"):
        return False
    if omd.get("deletionGracePeriodSeconds"):
        return False
    if kind == "Namespace" and ((new.get("spec") or {}).get("finalizers")):
        return False
    return True
