"""Deployment arithmetic on plain dicts: pod-template-hash, ReplicaSet naming and
annotations, maxSurge/maxUnavailable, rolling-update and proportional scaling
plans, status and conditions.

Facts from ``pkg/controller/deployment/util/deployment_util.go`` (ResolveFenceposts,
NewRSNewReplicas, SetNewReplicaSetAnnotations, DeploymentComplete,
DeploymentProgressing, GetProportion, FindNewReplicaSet, EqualIgnoreHash),
``pkg/controller/deployment/rolling.go`` (reconcileNewReplicaSet,
reconcileOldReplicaSets, cleanupUnhealthyReplicas,
scaleDownOldReplicaSetsForRollingUpdate), ``sync.go`` (calculateStatus, scale,
cleanupDeployment) and ``pkg/controller/controller_utils.go`` (ComputeHash).

Every "scale" function here returns a plan — a list of ``(rs, old, new)`` replicas — and
updates ``spec.replicas`` on the caller's copies, so the controller can apply it
and tests can check it.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

from controlplane import apitime
from controlplane.api import schemas
from controlplane.api.quantity import parse_quantity

from .controller_utils import meta

POD_TEMPLATE_HASH = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
#: deployment annotations not copied to its ReplicaSets (annotationsToSkip)
ANNOTATIONS_TO_SKIP = {"kubectl.kubernetes.io/last-applied-configuration", REVISION,
                       REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS}

#: rand.SafeEncodeString's alphabet (no vowels, no 0/1/3 — avoids words)
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


# -- hashing -----------------------------------------------------------------------

def fnv32a(data: bytes) -> int:
    """FNV-1a 32-bit hash (Go's hash/fnv New32a)."""
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode_string(s: str) -> str:
    """Map each byte to the alphabet by ``byte % 27`` (apimachinery util/rand SafeEncodeString)."""
    return "".join(_ALPHANUMS[b % len(_ALPHANUMS)] for b in s.encode())


#: struct types a pod template embeds by value (not through a pointer): their zero value
#: ``{}`` and an absent field are the same Go value (``resources: {}`` as kubectl's Go
#: encoding sends it, the template's ``metadata``/``spec``; ``k8s.io/api/core/v1/types.go``)
VALUE_STRUCTS = frozenset({"ObjectMeta", "PodSpec", "ResourceRequirements", "VolumeResourceRequirements",
                           "PersistentVolumeClaimSpec", "NodeSelectorTerm", "PodAffinityTerm"})


def _normalize(v: Any, typ: str) -> Any:
    """``v`` as the Go value of schema type ``typ`` re-encodes it; None for the zero value
    of a field that then compares equal to an absent one."""
    if v is None:
        return None  # null: a nil pointer, nil map/slice or zero Time — as if absent
    t = schemas.base_type(typ)
    if t.startswith("[]"):
        if not isinstance(v, list):
            return v
        return [_normalize(x, t[2:]) for x in v] or None  # nil and empty slices are equal
    if t.startswith("map["):
        if not isinstance(v, dict):
            return v
        elem = t[len("map["):-1]
        return {k: _normalize(x, elem) for k, x in v.items()} or None
    if t == "Quantity":
        try:
            return str(parse_quantity(v))  # Semantic.DeepEqual compares quantities by value
        except (ValueError, ArithmeticError, TypeError):
            return v
    fields = schemas.TYPES.get(t)
    if fields is None or not isinstance(v, dict):
        return v
    out: dict[str, Any] = {}
    for k, x in v.items():
        ftyp = fields[1].get(k, ("", ""))[0]
        nx = _normalize(x, ftyp) if ftyp else x
        if nx is None or (schemas.omits_zero(ftyp) and
                          (nx is False or nx == "" or nx == 0 and not isinstance(nx, bool))):
            continue
        out[k] = nx
    if not out and t in VALUE_STRUCTS:
        return None
    return out


def normalize_template(template: dict) -> dict:
    """A pod template as the Go struct ``PodTemplateSpec`` holds it, for comparing and
    hashing: ``null`` fields (kubectl's ``creationTimestamp: null``), empty maps and lists,
    zero values of ``omitempty`` fields and empty value structs (``resources: {}``) are
    dropped, quantities compared by value — what ``apiequality.Semantic.DeepEqual``
    treats as equal (nil and empty maps/slices alike, ``Quantity.Cmp``). A pointer
    struct set to ``{}`` (``emptyDir: {}``) stays, as a non-nil pointer differs from nil."""
    return _normalize(copy.deepcopy(template or {}), "PodTemplateSpec") or {}


def compute_hash(template: dict, collision_count: int | None = None) -> str:
    """The ``pod-template-hash`` of a pod template (controller_utils.go ComputeHash):
    FNV-32a of the template, then 8 bytes of the collision count (little-endian
    uint32) when set, printed in decimal and safe-encoded — 8 to 10 characters like
    ``99655c7fd``. Kubernetes hashes Go's spew dump of the typed struct, so templates that
    decode to the same struct hash alike; we hash canonical JSON (sorted keys) of
    :func:`normalize_template`, which gives the same equality (``creationTimestamp: null``
    or ``resources: {}`` change nothing) but a different value than a real cluster."""
    data = json.dumps(normalize_template(template), sort_keys=True, separators=(",", ":")).encode()
    if collision_count is not None:
        data += int(collision_count & 0xFFFFFFFF).to_bytes(4, "little") + b"\0\0\0\0"
    return safe_encode_string(str(fnv32a(data)))


def strip_hash(template: dict) -> dict:
    """:func:`normalize_template` without the ``pod-template-hash`` label."""
    t = normalize_template(template)
    labels = (t.get("metadata") or {}).get("labels")
    if labels is not None:
        labels.pop(POD_TEMPLATE_HASH, None)
        if not labels:
            t["metadata"].pop("labels")
        if not t["metadata"]:
            t.pop("metadata")
    return t


def equal_ignore_hash(a: dict, b: dict) -> bool:
    """Templates equal apart from the pod-template-hash label (EqualIgnoreHash: Semantic.DeepEqual
    of the two ``PodTemplateSpec`` structs, compared here as :func:`normalize_template` gives them)."""
    return strip_hash(a) == strip_hash(b)


# -- replicas helpers -----------------------------------------------------------------

def replicas(obj: dict | None) -> int:
    if obj is None:
        return 0
    v = (obj.get("spec") or {}).get("replicas")
    return 1 if v is None else int(v)


def st(obj: dict | None, field: str) -> int:
    return int(((obj or {}).get("status") or {}).get(field) or 0)


def revision(obj: dict) -> int:
    try:
        return int((meta(obj).get("annotations") or {}).get(REVISION, 0))
    except ValueError:
        return 0


def by_creation(rss: list[dict]) -> list[dict]:
    """Oldest first; name breaks ties (ReplicaSetsByCreationTimestamp)."""
    return sorted(rss, key=lambda r: (apitime.time_or_none(meta(r).get("creationTimestamp")) or 0,
                                      meta(r).get("name", "")))


def scaled_value(v: Any, total: int, round_up: bool) -> int:
    """An int-or-percent against ``total`` (intstr.GetScaledValueFromIntOrPercent).

    Raises ValueError for a malformed percent string."""
    if v is None:
        return 0
    if isinstance(v, int):
        return v
    s = str(v)
    if not s.endswith("%"):
        try:
            return int(s)
        except ValueError:
            raise ValueError("invalid value for IntOrString: invalid type: string is not a percentage") from None
    pct = int(s[:-1])
    x = pct * total / 100
    return math.ceil(x) if round_up else math.floor(x)


def resolve_fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    """``(surge, unavailable)``: surge rounds up, unavailable down; both 0 → unavailable 1."""
    surge = scaled_value(max_surge, desired, True)
    unavailable = scaled_value(max_unavailable, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _rolling(d: dict) -> dict | None:
    strategy = (d.get("spec") or {}).get("strategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return None
    return strategy.get("rollingUpdate") or {"maxSurge": "25%", "maxUnavailable": "25%"}


def max_surge(d: dict) -> int:
    ru = _rolling(d)
    if ru is None:
        return 0
    return resolve_fenceposts(ru.get("maxSurge", "25%"), ru.get("maxUnavailable", "25%"), replicas(d))[0]


def max_unavailable(d: dict) -> int:
    ru = _rolling(d)
    if ru is None or replicas(d) == 0:
        return 0
    _, u = resolve_fenceposts(ru.get("maxSurge", "25%"), ru.get("maxUnavailable", "25%"), replicas(d))
    return min(u, replicas(d))


# -- the new ReplicaSet -------------------------------------------------------------

def find_new_replica_set(d: dict, rss: list[dict]) -> dict | None:
    """The oldest ReplicaSet whose template equals the deployment's (FindNewReplicaSet)."""
    tpl = (d.get("spec") or {}).get("template") or {}
    for rs in by_creation(rss):
        if equal_ignore_hash((rs.get("spec") or {}).get("template") or {}, tpl):
            return rs
    return None


def new_rs_new_replicas(d: dict, all_rss: list[dict], new_rs: dict) -> int:
    """How many replicas the new RS may have now (NewRSNewReplicas)."""
    if _rolling(d) is None:
        return replicas(d)
    current = sum(replicas(r) for r in all_rss)
    max_total = replicas(d) + max_surge(d)
    if current >= max_total:
        return replicas(new_rs)
    up = min(max_total - current, replicas(d) - replicas(new_rs))
    return replicas(new_rs) + up


def new_replica_set(d: dict, template_hash: str, revision_: int, count: int) -> dict:
    """The ReplicaSet object a Deployment creates (getNewReplicaSet): name
    ``<deploy>-<hash>``, template/selector/labels plus ``pod-template-hash``, the
    controllerRef, copied annotations plus revision/desired/max replicas."""
    md, spec = meta(d), d.get("spec") or {}
    tpl = copy.deepcopy(spec.get("template") or {})
    tpl.setdefault("metadata", {}).setdefault("labels", {})[POD_TEMPLATE_HASH] = template_hash
    selector = copy.deepcopy(spec.get("selector") or {})
    selector.setdefault("matchLabels", {})[POD_TEMPLATE_HASH] = template_hash
    ann = {k: v for k, v in (md.get("annotations") or {}).items() if k not in ANNOTATIONS_TO_SKIP}
    ann.update({REVISION: str(revision_), DESIRED_REPLICAS: str(replicas(d)),
                MAX_REPLICAS: str(replicas(d) + max_surge(d))})
    rs_spec: dict = {"replicas": count, "selector": selector, "template": tpl}
    if spec.get("minReadySeconds"):
        rs_spec["minReadySeconds"] = spec["minReadySeconds"]
    return {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": f"{md.get('name')}-{template_hash}", "namespace": md.get("namespace"),
                     "labels": dict(tpl["metadata"]["labels"]), "annotations": ann,
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                          "name": md.get("name"), "uid": md.get("uid"),
                                          "controller": True, "blockOwnerDeletion": True}]},
        "spec": rs_spec,
    }


#: maxRevHistoryLengthInChars (deployment_controller.go)
MAX_REV_HISTORY_LENGTH = 2000


def set_new_replica_set_annotations(d: dict, rs: dict, new_revision: int, exists: bool,
                                    limit: int = MAX_REV_HISTORY_LENGTH) -> bool:
    """SetNewReplicaSetAnnotations (deployment_util.go), on ``rs`` in place; True if any
    annotation changed: the deployment's annotations but :data:`ANNOTATIONS_TO_SKIP` are
    copied; the revision is raised to ``new_revision`` when lower, and a revision it already
    had is appended to ``deployment.kubernetes.io/revision-history`` (a rollback to this RS;
    the oldest entries dropped to keep it within ``limit`` characters); a new RS
    (``exists`` False) also gets the desired/max replicas annotations."""
    ann = rs.setdefault("metadata", {}).get("annotations")
    if ann is None:
        ann = rs["metadata"]["annotations"] = {}
    changed = False
    for k, v in (meta(d).get("annotations") or {}).items():
        if k in ANNOTATIONS_TO_SKIP or ann.get(k) == v:
            continue
        ann[k] = v
        changed = True
    old_text = ann.get(REVISION)
    had = old_text is not None
    try:
        old_rev = int(old_text) if old_text else 0
    except ValueError:
        return False  # "Updating replica set revision OldRevision not int"
    if old_rev < new_revision:
        ann[REVISION] = str(new_revision)
        changed = True
        if had:
            history = ann.get(REVISION_HISTORY, "")
            olds = history.split(",")
            if not olds[0]:
                ann[REVISION_HISTORY] = old_text or ""
            else:
                total, start = len(history) + len(old_text or "") + 1, 0
                while total > limit and start < len(olds):
                    total -= len(olds[start]) + 1
                    start += 1
                if total <= limit:
                    ann[REVISION_HISTORY] = ",".join(olds[start:] + [old_text or ""])
    if not exists and replicas_annotations_need_update(rs, replicas(d), replicas(d) + max_surge(d)):
        set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d))
        changed = True
    return changed


def replicas_annotations_need_update(rs: dict, desired: int, max_: int) -> bool:
    ann = meta(rs).get("annotations") or {}
    return ann.get(DESIRED_REPLICAS) != str(desired) or ann.get(MAX_REPLICAS) != str(max_)


def set_replicas_annotations(rs: dict, desired: int, max_: int) -> None:
    ann = rs.setdefault("metadata", {}).setdefault("annotations", {})
    ann[DESIRED_REPLICAS], ann[MAX_REPLICAS] = str(desired), str(max_)


# -- rolling update plans -------------------------------------------------------------

#: ``(rs, old_replicas, new_replicas)`` steps, in order
Plan = list[tuple[dict, int, int]]


def plan_scale(plan: Plan, rs: dict, n: int) -> None:
    """Add ``(rs, its current replicas, n)`` to ``plan`` and set ``rs.spec.replicas = n`` in the
    local copy (the controller then writes each planned change: scaleReplicaSetAndRecordEvent)."""
    plan.append((rs, replicas(rs), n))
    rs.setdefault("spec", {})["replicas"] = n


def reconcile_new_replica_set(d: dict, all_rss: list[dict], new_rs: dict) -> Plan:
    """Scale the new RS towards the desired count within maxSurge (rolling.go)."""
    plan: Plan = []
    if replicas(new_rs) == replicas(d):
        return plan
    if replicas(new_rs) > replicas(d):
        plan_scale(plan, new_rs, replicas(d))
        return plan
    n = new_rs_new_replicas(d, all_rss, new_rs)
    if n != replicas(new_rs):
        plan_scale(plan, new_rs, n)
    return plan


def reconcile_old_replica_sets(d: dict, all_rss: list[dict], old_rss: list[dict],
                               new_rs: dict | None) -> Plan:
    """Scale old RSs down without going below ``replicas - maxUnavailable`` available
    pods: first their unhealthy replicas, then available ones, oldest first."""
    plan: Plan = []
    if sum(replicas(r) for r in old_rss) == 0:
        return plan
    all_pods = sum(replicas(r) for r in all_rss)
    min_available = replicas(d) - max_unavailable(d)
    new_unavailable = replicas(new_rs) - st(new_rs, "availableReplicas")
    max_scaled_down = all_pods - min_available - new_unavailable
    if max_scaled_down <= 0:
        return plan
    # cleanupUnhealthyReplicas
    cleaned = 0
    for rs in by_creation(old_rss):
        if cleaned >= max_scaled_down:
            break
        if replicas(rs) == 0 or replicas(rs) == st(rs, "availableReplicas"):
            continue
        n = min(max_scaled_down - cleaned, replicas(rs) - st(rs, "availableReplicas"))
        plan_scale(plan, rs, replicas(rs) - n)
        cleaned += n
    # scaleDownOldReplicaSetsForRollingUpdate
    available = sum(st(r, "availableReplicas") for r in all_rss)
    if available <= min_available:
        return plan
    total = available - min_available
    done = 0
    for rs in by_creation(old_rss):
        if done >= total:
            break
        if replicas(rs) == 0:
            continue
        n = min(replicas(rs), total - done)
        plan_scale(plan, rs, replicas(rs) - n)
        done += n
    return plan


def _round_half_away(x: float) -> int:
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def proportional_scale(d: dict, new_rs: dict | None, old_rss: list[dict]) -> Plan:
    """``sync.go scale``: one active RS takes the new size; a saturated new RS lets
    the old ones go to 0; otherwise the difference is spread in proportion to each
    RS's share of its ``max-replicas`` annotation (GetReplicaSetProportion), the leftover
    to the largest. In that last case every active RS is in the plan, its size changed
    or not, as ``scale`` calls scaleReplicaSet for each: the controller then rewrites the
    ``desired-replicas``/``max-replicas`` annotations even when no size changes (without
    it a stale ``desired-replicas`` makes every later sync a scaling event again)."""
    plan: Plan = []
    active = [r for r in ([new_rs] if new_rs else []) + old_rss if replicas(r) > 0]
    if len(active) <= 1:
        target = active[0] if active else (new_rs or (by_creation(old_rss)[-1] if old_rss else None))
        if target is not None and replicas(target) != replicas(d):
            plan_scale(plan, target, replicas(d))
        return plan
    if new_rs is not None and replicas(new_rs) == replicas(d) and \
            (meta(new_rs).get("annotations") or {}).get(DESIRED_REPLICAS) == str(replicas(d)) and \
            st(new_rs, "availableReplicas") == replicas(d):
        for r in old_rss:
            if replicas(r):
                plan_scale(plan, r, 0)
        return plan
    if _rolling(d) is None:
        return plan
    total = sum(replicas(r) for r in active)
    allowed = replicas(d) + max_surge(d) if replicas(d) > 0 else 0
    to_add = allowed - total
    if to_add > 0:  # ReplicaSetsBySizeNewer: larger first, the newer of equal sizes first
        order = sorted(list(reversed(by_creation(active))), key=lambda r: -replicas(r))
    elif to_add < 0:  # ReplicaSetsBySizeOlder
        order = sorted(by_creation(active), key=lambda r: -replicas(r))
    else:
        order = active
    added = 0
    sizes: dict[int, int] = {}
    for r in order:
        prop = 0
        if replicas(r) and to_add != added:
            if replicas(d) == 0:
                frac = -replicas(r)
            else:
                ann = (meta(r).get("annotations") or {}).get(MAX_REPLICAS)
                annotated = int(ann) if ann and ann.isdigit() else 0
                if annotated == 0:  # no (or a zero) annotation: the deployment's current size
                    annotated = st(d, "replicas")
                frac = _round_half_away(replicas(r) * (replicas(d) + max_surge(d)) / annotated) - replicas(r) \
                    if annotated else 0
            left = to_add - added
            prop = min(frac, left) if to_add > 0 else max(frac, left)
        sizes[id(r)] = replicas(r) + prop
        added += prop
    if order and to_add != added:
        sizes[id(order[0])] = max(sizes[id(order[0])] + to_add - added, 0)
    for r in order:  # every active RS, resized or not: scaleReplicaSet also refreshes annotations
        plan_scale(plan, r, sizes[id(r)])
    return plan


def cleanup_plan(d: dict, old_rss: list[dict]) -> list[dict]:
    """Old ReplicaSets to delete beyond ``revisionHistoryLimit`` (cleanupDeployment):
    lowest revision first, only fully scaled down and observed ones."""
    limit = (d.get("spec") or {}).get("revisionHistoryLimit")
    if limit is None:
        return []
    alive = [r for r in old_rss if not meta(r).get("deletionTimestamp")]
    diff = len(alive) - int(limit)
    if diff <= 0:
        return []
    out = []
    for rs in sorted(by_creation(alive), key=revision)[:diff]:
        if st(rs, "replicas") != 0 or replicas(rs) != 0 or \
                meta(rs).get("generation", 0) > st(rs, "observedGeneration"):
            continue
        out.append(rs)
    return out


# -- status and conditions -----------------------------------------------------------

def get_condition(status: dict, type_: str) -> dict | None:
    for c in status.get("conditions") or []:
        if c.get("type") == type_:
            return c
    return None


def set_condition(status: dict, type_: str, cstatus: str, reason: str, message: str,
                  now: str | None = None) -> None:
    """SetDeploymentCondition: same status+reason → unchanged; same status keeps
    lastTransitionTime; always replaces the condition otherwise."""
    now = now or apitime.now()
    cur = get_condition(status, type_)
    if cur is not None and cur.get("status") == cstatus and cur.get("reason") == reason:
        return
    cond = {"type": type_, "status": cstatus, "lastUpdateTime": now, "lastTransitionTime": now,
            "reason": reason, "message": message}
    if cur is not None and cur.get("status") == cstatus:
        cond["lastTransitionTime"] = cur.get("lastTransitionTime", now)
    others = [c for c in status.get("conditions") or [] if c.get("type") != type_]
    status["conditions"] = others + [cond]


PAUSED_REASON = "DeploymentPaused"
RESUMED_REASON = "DeploymentResumed"
TIMED_OUT_REASON = "ProgressDeadlineExceeded"
NEW_RS_AVAILABLE_REASON = "NewReplicaSetAvailable"


def has_progress_deadline(d: dict) -> bool:
    """HasProgressDeadline: ``progressDeadlineSeconds`` set and not MaxInt32."""
    deadline = (d.get("spec") or {}).get("progressDeadlineSeconds")
    return deadline is not None and deadline != 2**31 - 1


def paused_conditions(d: dict) -> dict | None:
    """checkPausedConditions (sync.go): the status with Progressing ``Unknown``
    ``DeploymentPaused`` "Deployment is paused" when the Deployment is paused, or
    ``Unknown`` ``DeploymentResumed`` "Deployment is resumed" when it no longer is; None
    when nothing changes (no progress deadline, already so, or already timed out)."""
    if not has_progress_deadline(d):
        return None
    status = d.get("status") or {}
    cond = get_condition(status, "Progressing")
    if cond is not None and cond.get("reason") == TIMED_OUT_REASON:
        return None
    paused_exists = cond is not None and cond.get("reason") == PAUSED_REASON
    paused = bool((d.get("spec") or {}).get("paused"))
    if paused == paused_exists:
        return None
    status = copy.deepcopy(status)
    if paused:
        set_condition(status, "Progressing", "Unknown", PAUSED_REASON, "Deployment is paused")
    else:
        set_condition(status, "Progressing", "Unknown", RESUMED_REASON, "Deployment is resumed")
    return status


def calculate_status(d: dict, all_rss: list[dict], new_rs: dict | None) -> dict:
    """Deployment status from its ReplicaSets (sync.go calculateStatus), with the
    Available condition ("Deployment has minimum availability.")."""
    status = copy.deepcopy(d.get("status") or {})
    available = sum(st(r, "availableReplicas") for r in all_rss)
    status.update({
        "observedGeneration": meta(d).get("generation", 0),
        "replicas": sum(st(r, "replicas") for r in all_rss),
        "updatedReplicas": st(new_rs, "replicas"),
        "readyReplicas": sum(st(r, "readyReplicas") for r in all_rss),
        "availableReplicas": available,
        "unavailableReplicas": max(replicas(d) - available, 0),
    })
    for k in ("readyReplicas", "availableReplicas", "unavailableReplicas", "updatedReplicas", "replicas"):
        if not status[k]:
            status.pop(k)  # zero values are omitted on the wire (omitempty)
    if available >= replicas(d) - max_unavailable(d):
        set_condition(status, "Available", "True", "MinimumReplicasAvailable",
                      "Deployment has minimum availability.")
    else:
        set_condition(status, "Available", "False", "MinimumReplicasUnavailable",
                      "Deployment does not have minimum availability.")
    return status


def deployment_complete(d: dict, status: dict) -> bool:
    n = replicas(d)
    return (status.get("updatedReplicas", 0) == n and status.get("replicas", 0) == n
            and status.get("availableReplicas", 0) == n
            and status.get("observedGeneration", 0) >= meta(d).get("generation", 0))


def deployment_progressing(d: dict, status: dict) -> bool:
    old = d.get("status") or {}
    old_old = old.get("replicas", 0) - old.get("updatedReplicas", 0)
    new_old = status.get("replicas", 0) - status.get("updatedReplicas", 0)
    return (status.get("updatedReplicas", 0) > old.get("updatedReplicas", 0) or new_old < old_old
            or status.get("readyReplicas", 0) > old.get("readyReplicas", 0)
            or status.get("availableReplicas", 0) > old.get("availableReplicas", 0))


def rollout_status(d: dict, all_rss: list[dict], new_rs: dict | None, now: float) -> dict:
    """Status with the Progressing condition (progress.go syncRolloutStatus):
    NewReplicaSetAvailable "ReplicaSet \\"X\\" has successfully progressed.",
    ReplicaSetUpdated "ReplicaSet \\"X\\" is progressing.", ProgressDeadlineExceeded
    "ReplicaSet \\"X\\" has timed out progressing."."""
    status = calculate_status(d, all_rss, new_rs)
    deadline = (d.get("spec") or {}).get("progressDeadlineSeconds")
    if deadline is None or deadline >= 2**31 - 1:
        status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != "Progressing"]
        return status
    cur = get_condition(status, "Progressing")
    complete_already = status.get("replicas") == status.get("updatedReplicas") and cur is not None \
        and cur.get("reason") == "NewReplicaSetAvailable"
    if complete_already:
        return status
    name = meta(new_rs).get("name") if new_rs else None
    if deployment_complete(d, status):
        msg = f'ReplicaSet "{name}" has successfully progressed.' if name else \
            f'Deployment "{meta(d).get("name")}" has successfully progressed.'
        set_condition(status, "Progressing", "True", "NewReplicaSetAvailable", msg)
    elif deployment_progressing(d, status):
        msg = f'ReplicaSet "{name}" is progressing.' if name else \
            f'Deployment "{meta(d).get("name")}" is progressing.'
        if cur is not None and cur.get("status") == "True":
            status["conditions"] = [c for c in status["conditions"] if c.get("type") != "Progressing"]
        set_condition(status, "Progressing", "True", "ReplicaSetUpdated", msg)
        if cur is not None and cur.get("status") == "True":
            progressing = get_condition(status, "Progressing")
            assert progressing is not None  # set_condition just put it there
            progressing["lastTransitionTime"] = cur.get("lastTransitionTime")
    elif cur is not None and cur.get("reason") != NEW_RS_AVAILABLE_REASON:
        # DeploymentTimedOut: from the condition's lastUpdateTime (progress seen, a new RS,
        # or a resume), whatever its status
        since = apitime.time_or_none(cur.get("lastUpdateTime"))
        if since is not None and since + int(deadline) < now:
            msg = f'ReplicaSet "{name}" has timed out progressing.' if name else \
                f'Deployment "{meta(d).get("name")}" has timed out progressing.'
            set_condition(status, "Progressing", "False", "ProgressDeadlineExceeded", msg)
    return status
