"""StatefulSet arithmetic on plain dicts: ordinals and identities, claims from
``volumeClaimTemplates``, the claims' retention ownerReferences, pod health, and
ControllerRevisions (their data, hash, name and equality).

Facts from ``pkg/controller/statefulset/stateful_set_utils.go`` (v1.32:
getParentNameAndOrdinal, getPodName, getPersistentVolumeClaimName, identityMatches,
storageMatches, updateStorage, initIdentity / updateIdentity, newVersionedStatefulSetPod,
getPatch / newRevision / ApplyRevision, nextRevision, inconsistentStatus,
completeRollingUpdate, isClaimOwnerUpToDate, updateClaimOwnerRefForSetAndPod,
hasStaleOwnerRef, getStatefulSetMaxUnavailable) and ``pkg/controller/history/controller_history.go``
(NewControllerRevision, HashControllerRevision, ControllerRevisionName, EqualRevision,
SortControllerRevisions). Every function takes and returns JSON objects (``dict``).
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

from controlplane import apitime
from controlplane.api import codec

from .controller_utils import is_pod_available, is_pod_ready, meta, new_controller_ref, pod_from_template
from .deployment_util import safe_encode_string

JSON = dict[str, Any]

#: pod label: the pod's own name (apps/v1 StatefulSetPodNameLabel)
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
#: pod label: the pod's ordinal (apps/v1 PodIndexLabel, feature PodIndexLabel, on since 1.28)
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
#: pod and ControllerRevision label: the revision's name / hash (StatefulSetRevisionLabel,
#: history.ControllerRevisionHashLabel)
REVISION_LABEL = "controller-revision-hash"
#: apps/v1 StatefulSet, the kind of the ownerReferences the controller writes
API_VERSION, KIND = "apps/v1", "StatefulSet"

RETAIN, DELETE = "Retain", "Delete"
ROLLING_UPDATE, ON_DELETE = "RollingUpdate", "OnDelete"
PARALLEL = "Parallel"

_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")
_INT32_MAX = 2**31 - 1


# -- ordinals and identity ---------------------------------------------------------

def parent_and_ordinal(pod: JSON) -> tuple[str, int]:
    """``(parent name, ordinal)`` parsed from ``<parent>-<ordinal>``; ``("", -1)`` when the
    name does not end in ``-<int32>`` (getParentNameAndOrdinal)."""
    m = _ORDINAL.match(meta(pod).get("name") or "")
    if not m or int(m.group(2)) > _INT32_MAX:
        return "", -1
    return m.group(1), int(m.group(2))


def ordinal(pod: JSON) -> int:
    """The pod's ordinal, -1 when unparsable (getOrdinal)."""
    return parent_and_ordinal(pod)[1]


def spec(obj: JSON) -> JSON:
    """``obj.spec`` (an empty dict when absent)."""
    s: JSON = obj.get("spec") or {}
    return s


def replicas(sts: JSON) -> int:
    """``spec.replicas`` (1 when unset, the apps/v1 default)."""
    r = spec(sts).get("replicas")
    return 1 if r is None else int(r)


def start_ordinal(sts: JSON) -> int:
    """``spec.ordinals.start``, 0 without it (getStartOrdinal; StatefulSetStartOrdinal is on)."""
    return int((spec(sts).get("ordinals") or {}).get("start") or 0)


def end_ordinal(sts: JSON) -> int:
    """The last ordinal in range: start + replicas - 1 (getEndOrdinal)."""
    return start_ordinal(sts) + replicas(sts) - 1


def in_ordinal_range(pod: JSON, sts: JSON) -> bool:
    """start <= ordinal <= end (podInOrdinalRange)."""
    o = ordinal(pod)
    return start_ordinal(sts) <= o <= end_ordinal(sts)


def is_member_of(sts: JSON, pod: JSON) -> bool:
    """The pod's name parses as ``<set>-<ordinal>`` (isMemberOf)."""
    return parent_and_ordinal(pod)[0] == meta(sts).get("name")


def pod_name(sts: JSON, ord_: int) -> str:
    """``<set>-<ordinal>`` (getPodName)."""
    return f"{meta(sts).get('name')}-{ord_}"


def claim_name(sts: JSON, template_name: str, ord_: int) -> str:
    """``<claim>-<set>-<ordinal>`` (getPersistentVolumeClaimName)."""
    return f"{template_name}-{meta(sts).get('name')}-{ord_}"


def _labels(obj: JSON) -> dict[str, str]:
    md = obj.setdefault("metadata", {})
    if md.get("labels") is None:
        md["labels"] = {}
    lb: dict[str, str] = md["labels"]
    return lb


def identity_matches(sts: JSON, pod: JSON) -> bool:
    """Name, namespace and the pod-name / pod-index labels are the set's (identityMatches)."""
    parent, o = parent_and_ordinal(pod)
    md, smd = meta(pod), meta(sts)
    labels = md.get("labels") or {}
    return (o >= 0 and parent == smd.get("name") and md.get("name") == pod_name(sts, o)
            and md.get("namespace") == smd.get("namespace")
            and labels.get(POD_NAME_LABEL) == md.get("name")
            and labels.get(POD_INDEX_LABEL) == str(o))


def update_identity(sts: JSON, pod: JSON) -> None:
    """Set name, namespace and the pod-name / pod-index labels from the ordinal (updateIdentity)."""
    o = ordinal(pod)
    md = pod.setdefault("metadata", {})
    md["name"] = pod_name(sts, o)
    md["namespace"] = meta(sts).get("namespace")
    lb = _labels(pod)
    lb[POD_NAME_LABEL] = md["name"]
    lb[POD_INDEX_LABEL] = str(o)


def claims_for(sts: JSON, pod: JSON) -> list[tuple[str, JSON]]:
    """``(template name, claim)`` for every ``volumeClaimTemplates`` entry, in template order:
    the template with the pod's claim name, the set's namespace and the set's
    ``selector.matchLabels`` added to its labels (getPersistentVolumeClaims)."""
    o = ordinal(pod)
    match = (spec(sts).get("selector") or {}).get("matchLabels") or {}
    out = []
    for tpl in spec(sts).get("volumeClaimTemplates") or []:
        claim = codec.clone(tpl)
        claim.pop("status", None)
        claim.setdefault("apiVersion", "v1")
        claim.setdefault("kind", "PersistentVolumeClaim")
        tname = (tpl.get("metadata") or {}).get("name") or ""
        md = claim.setdefault("metadata", {})
        md["name"] = claim_name(sts, tname, o)
        md["namespace"] = meta(sts).get("namespace")
        md.pop("creationTimestamp", None)
        _labels(claim).update(match)
        out.append((tname, claim))
    return out


def storage_matches(sts: JSON, pod: JSON) -> bool:
    """Every claim template has a pod volume of its name using the pod's claim (storageMatches)."""
    if ordinal(pod) < 0:
        return False
    vols = {v.get("name"): v for v in spec(pod).get("volumes") or []}
    for tname, claim in claims_for(sts, pod):
        v = vols.get(tname)
        if v is None or (v.get("persistentVolumeClaim") or {}).get("claimName") != meta(claim)["name"]:
            return False
    return True


def update_storage(sts: JSON, pod: JSON) -> None:
    """Replace the pod's volumes named like claim templates by ``persistentVolumeClaim``
    volumes of the pod's claims, keeping the others after them (updateStorage)."""
    claims = claims_for(sts, pod)
    names = {t for t, _ in claims}
    new = [{"name": t, "persistentVolumeClaim": {"claimName": meta(c)["name"]}} for t, c in claims]
    new += [v for v in spec(pod).get("volumes") or [] if v.get("name") not in names]
    if new:
        pod.setdefault("spec", {})["volumes"] = new


def new_pod(sts: JSON, ord_: int) -> JSON:
    """A pod of the set at ``ord_`` (newStatefulSetPod): GetPodFromTemplate with the set's
    controllerRef, name ``<set>-<ordinal>``, the identity labels, ``hostname`` = the pod's
    name, ``subdomain`` = ``spec.serviceName``, and the claim volumes."""
    pod = pod_from_template(spec(sts).get("template") or {}, sts, new_controller_ref(sts, API_VERSION, KIND))
    md = pod["metadata"]
    md.pop("generateName", None)
    md["name"] = pod_name(sts, ord_)
    update_identity(sts, pod)
    pod["spec"]["hostname"] = md["name"]
    if spec(sts).get("serviceName"):
        pod["spec"]["subdomain"] = spec(sts)["serviceName"]
    update_storage(sts, pod)
    return pod


def pod_revision(pod: JSON) -> str:
    """The pod's ``controller-revision-hash`` label, "" without one (getPodRevision)."""
    r: str = (meta(pod).get("labels") or {}).get(REVISION_LABEL) or ""
    return r


def partition(sts: JSON) -> int | None:
    """``updateStrategy.rollingUpdate.partition`` (0 when the struct has none), None without
    a ``rollingUpdate``."""
    ru = (spec(sts).get("updateStrategy") or {}).get("rollingUpdate")
    if ru is None:
        return None
    return int(ru.get("partition") or 0)


def strategy_type(sts: JSON) -> str:
    """``updateStrategy.type`` (RollingUpdate when unset)."""
    t: str = (spec(sts).get("updateStrategy") or {}).get("type") or ROLLING_UPDATE
    return t


def new_versioned_pod(current_set: JSON, update_set: JSON, current_rev: str, update_rev: str,
                      ord_: int) -> JSON:
    """A pod at the current revision when its ordinal is below the partition (or, for a
    RollingUpdate without ``rollingUpdate``, below start + status.currentReplicas), else at
    the update revision (newVersionedStatefulSetPod, Go's operator precedence included)."""
    part = partition(current_set)
    start = start_ordinal(current_set)
    cur_replicas = int((current_set.get("status") or {}).get("currentReplicas") or 0)
    if (strategy_type(current_set) == ROLLING_UPDATE and part is None and ord_ < start + cur_replicas) or \
            (part is not None and ord_ < start + part):
        pod = new_pod(current_set, ord_)
        _labels(pod)[REVISION_LABEL] = current_rev
        return pod
    pod = new_pod(update_set, ord_)
    _labels(pod)[REVISION_LABEL] = update_rev
    return pod


# -- pod state ---------------------------------------------------------------------

def phase(pod: JSON) -> str:
    """The pod's ``status.phase`` (``""`` when unset)."""
    p: str = (pod.get("status") or {}).get("phase") or ""
    return p


def is_created(pod: JSON) -> bool:
    """The apiserver gave the pod a phase (isCreated)."""
    return phase(pod) != ""


def is_terminating(pod: JSON) -> bool:
    """The pod has a deletionTimestamp (isTerminating)."""
    return bool(meta(pod).get("deletionTimestamp"))


def is_running_and_ready(pod: JSON) -> bool:
    """Phase Running and the Ready condition True (isRunningAndReady)."""
    return phase(pod) == "Running" and is_pod_ready(pod)


def is_running_and_available(pod: JSON, min_ready_seconds: int, now: float | None = None) -> bool:
    """Ready for ``min_ready_seconds`` (isRunningAndAvailable → podutil.IsPodAvailable)."""
    return is_pod_available(pod, min_ready_seconds, now)


def is_healthy(pod: JSON) -> bool:
    """Running, Ready and not terminating (isHealthy)."""
    return is_running_and_ready(pod) and not is_terminating(pod)


def max_unavailable(sts: JSON) -> int:
    """``rollingUpdate.maxUnavailable`` (an int or a percentage of replicas rounded down,
    default 1) and at least 1 (getStatefulSetMaxUnavailable). ValueError for a bad value."""
    v = ((spec(sts).get("updateStrategy") or {}).get("rollingUpdate") or {}).get("maxUnavailable")
    if v is None:
        v = 1
    if isinstance(v, str):
        if not v.endswith("%") or not v[:-1].isdigit():
            raise ValueError(f"invalid value for IntOrString: invalid value {v!r}")
        n = math.floor(int(v[:-1]) * replicas(sts) / 100)
    else:
        n = int(v)
    return max(n, 1)


# -- claims and their retention ownerReferences ----------------------------------------

def retention(sts: JSON) -> tuple[str, str]:
    """``(whenScaled, whenDeleted)`` of persistentVolumeClaimRetentionPolicy (Retain when unset)."""
    p = spec(sts).get("persistentVolumeClaimRetentionPolicy") or {}
    return p.get("whenScaled") or RETAIN, p.get("whenDeleted") or RETAIN


def _group(api_version: str | None) -> str:
    return (api_version or "").rsplit("/", 1)[0] if "/" in (api_version or "") else ""


def matches_ref(ref: JSON, obj: JSON, group: str, kind: str) -> bool:
    """The ref names ``obj`` by group, kind and name, whatever its uid (matchesRef)."""
    return _group(ref.get("apiVersion")) == group and ref.get("kind") == kind and \
        ref.get("name") == meta(obj).get("name")


def has_owner_ref(target: JSON, owner: JSON) -> bool:
    """Some ownerReference of ``target`` carries the owner's uid (hasOwnerRef)."""
    uid = meta(owner).get("uid")
    return any(r.get("uid") == uid for r in meta(target).get("ownerReferences") or [])


def has_stale_owner_ref(target: JSON, obj: JSON, group: str, kind: str) -> bool:
    """The first ref naming ``obj`` carries another uid (hasStaleOwnerRef)."""
    for r in meta(target).get("ownerReferences") or []:
        if matches_ref(r, obj, group, kind):
            return r.get("uid") != meta(obj).get("uid")
    return False


def has_unexpected_controller(claim: JSON, sts: JSON, pod: JSON) -> bool:
    """With a Delete policy, a controller ref that is neither the set nor the pod, or a ref
    to them with another uid (hasUnexpectedController)."""
    if retention(sts) == (RETAIN, RETAIN):
        return False
    for r in meta(claim).get("ownerReferences") or []:
        if matches_ref(r, sts, "apps", KIND):
            if r.get("uid") != meta(sts).get("uid"):
                return True
            continue
        if matches_ref(r, pod, "", "Pod"):
            if r.get("uid") != meta(pod).get("uid"):
                return True
            continue
        if r.get("controller"):
            return True
    return False


def has_non_controller_owner(claim: JSON, sts: JSON, pod: JSON) -> bool:
    """A ref to the set or the pod that is not a controller ref (hasNonControllerOwner)."""
    uids = {meta(sts).get("uid"), meta(pod).get("uid")}
    return any(r.get("uid") in uids and not r.get("controller")
               for r in meta(claim).get("ownerReferences") or [])


def claim_owner_up_to_date(claim: JSON, sts: JSON, pod: JSON) -> bool:
    """The claim's refs follow the retention policy (isClaimOwnerUpToDate): Retain/Retain no
    ref; whenDeleted Delete a ref to the set; whenScaled Delete a ref to the pod once it is
    out of range (and, with Delete/Delete, to the set while in range). A claim with a stale
    ref, or an unexpected controller and no ref to us, is left alone (True)."""
    if has_stale_owner_ref(claim, sts, "apps", KIND) or has_stale_owner_ref(claim, pod, "", "Pod"):
        return True
    if has_unexpected_controller(claim, sts, pod):
        return not (has_owner_ref(claim, sts) or has_owner_ref(claim, pod))
    if has_non_controller_owner(claim, sts, pod):
        return False
    scaled, deleted = retention(sts)
    on_set, on_pod = has_owner_ref(claim, sts), has_owner_ref(claim, pod)
    down = not in_ordinal_range(pod, sts)
    if scaled == DELETE and deleted == DELETE:
        return down != on_set and down == on_pod
    if scaled == DELETE:
        return not on_set and down == on_pod
    if deleted == DELETE:
        return on_set and not on_pod
    return not on_set and not on_pod


def update_claim_owner_refs(claim: JSON, sts: JSON, pod: JSON) -> None:
    """Rewrite the claim's refs to the set and the pod for the retention policy
    (updateClaimOwnerRefForSetAndPod): scrub ours, then add controller refs as
    :func:`claim_owner_up_to_date` expects (none when another controller owns it)."""
    md = claim.setdefault("metadata", {})
    unexpected = has_unexpected_controller(claim, sts, pod)
    refs = [r for r in md.get("ownerReferences") or []
            if not (matches_ref(r, sts, "apps", KIND) or matches_ref(r, pod, "", "Pod"))]
    if not unexpected:
        scaled, deleted = retention(sts)
        down = not in_ordinal_range(pod, sts)
        if scaled == DELETE and down:
            refs.append(new_controller_ref(pod, "v1", "Pod"))
        elif deleted == DELETE and (scaled == RETAIN or not down):
            refs.append(new_controller_ref(sts, API_VERSION, KIND))
    md["ownerReferences"] = refs or None
    if not refs:
        md.pop("ownerReferences")


# -- ControllerRevisions -----------------------------------------------------------

def fnv32(data: bytes) -> int:
    """FNV-1 32-bit hash (Go's hash/fnv New32, multiply then xor)."""
    h = 0x811C9DC5
    for b in data:
        h = (h * 0x01000193) & 0xFFFFFFFF
        h ^= b
    return h


def go_json(obj: Any) -> bytes:
    """``obj`` as Go's json.Marshal writes a ``map[string]interface{}``: keys sorted, no
    spaces, ``<``, ``>`` and ``&`` escaped."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").encode()


def revision_data(sts: JSON) -> JSON:
    """The patch a revision stores: ``{"spec": {"template": <template + "$patch": "replace">}}``
    (getPatch; the typed template encodes ``metadata.creationTimestamp`` as null)."""
    tpl = codec.clone(spec(sts).get("template") or {})
    tmd = tpl.setdefault("metadata", {})
    tmd.setdefault("creationTimestamp", None)
    tpl["$patch"] = "replace"
    return {"spec": {"template": tpl}}


def hash_revision(data: JSON, collision_count: int | None) -> str:
    """HashControllerRevision: FNV-32 of the data's bytes, then of the collision count in
    decimal, as the SafeEncodeString of the decimal sum."""
    raw = go_json(data)
    if collision_count is not None:
        raw += str(collision_count).encode()
    return safe_encode_string(str(fnv32(raw)))


def revision_name(set_name: str, hash_: str) -> str:
    """``<set>-<hash>``, the prefix cut at 223 characters (ControllerRevisionName)."""
    return f"{set_name[:223]}-{hash_}"


def new_revision(sts: JSON, revision: int, collision_count: int) -> JSON:
    """The ControllerRevision for the set's current template (newRevision): the template
    labels plus ``controller-revision-hash``, the set's annotations, the set's controllerRef,
    ``data`` (:func:`revision_data`) and ``revision``."""
    data = revision_data(sts)
    h = hash_revision(data, collision_count)
    labels = dict(((spec(sts).get("template") or {}).get("metadata") or {}).get("labels") or {})
    labels[REVISION_LABEL] = h
    md: JSON = {"name": revision_name(meta(sts).get("name") or "", h), "namespace": meta(sts).get("namespace"),
                "labels": labels, "ownerReferences": [new_controller_ref(sts, API_VERSION, KIND)]}
    if meta(sts).get("annotations"):
        md["annotations"] = dict(meta(sts)["annotations"])
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": md,
            "data": data, "revision": revision}


def apply_revision(sts: JSON, rev: JSON) -> JSON:
    """The set with the revision's template restored (ApplyRevision: the stored strategic
    patch replaces ``spec.template``)."""
    out = copy.deepcopy(sts)
    tpl = codec.clone(((rev.get("data") or {}).get("spec") or {}).get("template") or {})
    tpl.pop("$patch", None)
    out.setdefault("spec", {})["template"] = tpl
    return out


def equal_revision(a: JSON | None, b: JSON | None) -> bool:
    """Same data (EqualRevision; the hash labels are SafeEncoded, never parsed as ints)."""
    if a is None or b is None:
        return a is b
    return bool(a.get("data") == b.get("data"))


def sort_revisions(revs: list[JSON]) -> list[JSON]:
    """By revision, then creationTimestamp, then name (SortControllerRevisions)."""
    return sorted(revs, key=lambda r: (int(r.get("revision") or 0),
                                       apitime.time_or_none(meta(r).get("creationTimestamp")) or 0.0,
                                       meta(r).get("name") or ""))


def next_revision(revs: list[JSON]) -> int:
    """1 + the last (sorted) revision's number, 1 without any (nextRevision)."""
    return int(revs[-1].get("revision") or 0) + 1 if revs else 1


# -- status ------------------------------------------------------------------------

#: status fields compared by inconsistentStatus (observedGeneration compared with ">")
STATUS_FIELDS = ("replicas", "currentReplicas", "readyReplicas", "updatedReplicas", "currentRevision",
                 "availableReplicas", "updateRevision")


def inconsistent_status(sts: JSON, status: JSON) -> bool:
    """The computed status differs from the set's (inconsistentStatus)."""
    old = sts.get("status") or {}
    if int(status.get("observedGeneration") or 0) > int(old.get("observedGeneration") or 0):
        return True
    zero = {"currentRevision": "", "updateRevision": ""}
    return any((status.get(f) or zero.get(f, 0)) != (old.get(f) or zero.get(f, 0)) for f in STATUS_FIELDS)


def complete_rolling_update(sts: JSON, status: JSON) -> None:
    """A RollingUpdate with every replica updated and ready makes the update revision current
    (completeRollingUpdate)."""
    if strategy_type(sts) == ROLLING_UPDATE and status.get("updatedReplicas", 0) == status["replicas"] \
            and status.get("readyReplicas", 0) == status["replicas"]:
        status["currentReplicas"] = status.get("updatedReplicas", 0)
        status["currentRevision"] = status.get("updateRevision", "")


def status_json(status: JSON) -> JSON:
    """The status as apps/v1 encodes it: ``replicas`` and ``availableReplicas`` always,
    the other counters and revisions omitted when zero / empty, ``collisionCount`` kept."""
    out: JSON = {}
    for k, v in status.items():
        if k in ("replicas", "availableReplicas", "collisionCount") or v:
            out[k] = v
    return out
