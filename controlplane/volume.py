"""Persistent-volume facts shared by the PV controller (controller-manager) and the
scheduler's VolumeBinding plugin: the annotations, a claim's and a volume's class, the
binding mode of a claim's class, and the matching of a claim to the smallest volume that
fits it.

Facts from ``pkg/controller/volume/persistentvolume/util/util.go`` (FindMatchingVolume,
CheckVolumeModeMismatches, IsVolumeBoundToClaim, GetBindVolumeToClaim, the ``Ann*``
constants), ``pkg/controller/volume/persistentvolume/index.go`` (findByClaim: only volumes
whose access modes include every mode the claim asks for),
``staging/src/k8s.io/component-helpers/storage/volume/helpers.go`` (GetPersistentVolumeClass,
GetPersistentVolumeClaimClass, IsDelayBindingMode, CheckNodeAffinity) and
``pkg/apis/core/v1/helper`` (MatchTopologySelectorTerms).

All objects are plain JSON dicts (``dict[str, Any]``); sizes are bytes (ints).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from controlplane.api.quantity import to_bytes
from controlplane.labels import node_selector_term_matches, selector_from_dict

JSON = dict[str, Any]

#: claim: the binding finished (``pv.kubernetes.io/bind-completed``: "yes")
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
#: claim or volume: the controller (not a user) set ``volumeName`` / ``claimRef``
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
#: volume: the provisioner that created it
ANN_DYNAMICALLY_PROVISIONED = "pv.kubernetes.io/provisioned-by"
#: claim: the provisioner asked to provision it (and the beta key written beside it)
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
#: claim: the node the scheduler chose for a WaitForFirstConsumer claim
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
#: claim / volume: the beta class annotation, read before ``storageClassName``
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
#: a class whose volumes are never provisioned (local volumes)
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
#: the finalizers of StorageObjectInUseProtection
PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"

IMMEDIATE, WAIT_FOR_FIRST_CONSUMER = "Immediate", "WaitForFirstConsumer"


def _md(obj: Mapping[str, Any]) -> JSON:
    md: JSON = obj.get("metadata") or {}
    return md


def annotations_of(obj: Mapping[str, Any]) -> dict[str, str]:
    """``metadata.annotations`` ({} when absent)."""
    ann: dict[str, str] = _md(obj).get("annotations") or {}
    return ann


def claim_class(claim: Mapping[str, Any]) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation, else ``spec.storageClassName``, else ""."""
    ann = annotations_of(claim)
    if ANN_BETA_STORAGE_CLASS in ann:
        return str(ann[ANN_BETA_STORAGE_CLASS])
    return str((claim.get("spec") or {}).get("storageClassName") or "")


def volume_class(volume: Mapping[str, Any]) -> str:
    """GetPersistentVolumeClass: the beta annotation, else ``spec.storageClassName``, else ""."""
    return claim_class(volume)


def claim_key(claim: Mapping[str, Any]) -> str:
    """``namespace/name`` of a claim."""
    md = _md(claim)
    return f"{md.get('namespace') or ''}/{md.get('name') or ''}"


def claim_ref_key(volume: Mapping[str, Any]) -> str | None:
    """``namespace/name`` of the claim a volume's ``spec.claimRef`` names, or None."""
    ref = (volume.get("spec") or {}).get("claimRef")
    if not ref:
        return None
    return f"{ref.get('namespace') or ''}/{ref.get('name') or ''}"


def requested_bytes(claim: Mapping[str, Any]) -> int:
    """``spec.resources.requests.storage`` in bytes (0 when absent or unreadable)."""
    q = (((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")
    try:
        return to_bytes(q) if q is not None else 0
    except ValueError:
        return 0


def capacity_bytes(volume: Mapping[str, Any]) -> int:
    """``spec.capacity.storage`` in bytes (0 when absent or unreadable)."""
    q = ((volume.get("spec") or {}).get("capacity") or {}).get("storage")
    try:
        return to_bytes(q) if q is not None else 0
    except ValueError:
        return 0


def is_volume_bound_to_claim(volume: Mapping[str, Any], claim: Mapping[str, Any]) -> bool:
    """IsVolumeBoundToClaim: ``claimRef`` names the claim (and its uid, when the ref has one)."""
    ref = (volume.get("spec") or {}).get("claimRef")
    md = _md(claim)
    if not ref or ref.get("name") != md.get("name") or (ref.get("namespace") or "") != (md.get("namespace") or ""):
        return False
    return not ref.get("uid") or ref.get("uid") == md.get("uid")


def claim_ref(claim: Mapping[str, Any]) -> JSON:
    """The ObjectReference a volume's ``spec.claimRef`` holds for ``claim`` (GetBindVolumeToClaim:
    kind, namespace, name, uid, apiVersion, resourceVersion)."""
    md = _md(claim)
    ref: JSON = {"kind": "PersistentVolumeClaim", "namespace": md.get("namespace"), "name": md.get("name"),
                 "uid": md.get("uid"), "apiVersion": "v1"}
    if md.get("resourceVersion"):
        ref["resourceVersion"] = md["resourceVersion"]
    return ref


def volume_mode_mismatch(claim: Mapping[str, Any], volume: Mapping[str, Any]) -> bool:
    """CheckVolumeModeMismatches: the claim's and the volume's ``volumeMode`` differ
    (an unset mode is Filesystem)."""
    want = (claim.get("spec") or {}).get("volumeMode") or "Filesystem"
    have = (volume.get("spec") or {}).get("volumeMode") or "Filesystem"
    return bool(want != have)


def access_modes_fit(claim: Mapping[str, Any], volume: Mapping[str, Any]) -> bool:
    """index.go findByClaim: the volume offers every access mode the claim asks for."""
    want = set((claim.get("spec") or {}).get("accessModes") or [])
    have = set((volume.get("spec") or {}).get("accessModes") or [])
    return want <= have


def node_affinity_matches(volume: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """CheckNodeAffinity: the volume's ``spec.nodeAffinity.required`` terms (ORed) match the
    node's labels and ``metadata.name``; a volume without required affinity fits every node."""
    required = (((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required"))
    if not required:
        return True
    md = _md(node)
    labels, fields = md.get("labels") or {}, {"metadata.name": md.get("name") or ""}
    return any(node_selector_term_matches(t or {}, labels, fields) for t in required.get("nodeSelectorTerms") or [])


def topology_terms_match(terms: list[JSON] | None, labels: Mapping[str, Any]) -> bool:
    """MatchTopologySelectorTerms: no terms match everything; else some term's every
    ``matchLabelExpressions`` key has one of its values in ``labels``."""
    if not terms:
        return True
    for term in terms:
        exprs = term.get("matchLabelExpressions") or []
        if all(str(labels.get(e.get("key"), "\0")) in [str(v) for v in e.get("values") or []] for e in exprs):
            return True
    return False


def binding_mode(sc: Mapping[str, Any] | None) -> str:
    """A StorageClass's ``volumeBindingMode`` (Immediate when unset or no class)."""
    return str((sc or {}).get("volumeBindingMode") or IMMEDIATE)


def is_delay_binding_mode(claim: Mapping[str, Any], classes: Mapping[str, JSON]) -> bool:
    """IsDelayBindingMode: the claim's class (``classes``: name → StorageClass) exists and binds
    WaitForFirstConsumer. No class, or a missing one, binds Immediately."""
    name = claim_class(claim)
    return bool(name) and binding_mode(classes.get(name)) == WAIT_FOR_FIRST_CONSUMER


def is_claim_fully_bound(claim: Mapping[str, Any]) -> bool:
    """The scheduler's isPVCFullyBound: ``spec.volumeName`` set and ``bind-completed`` annotated."""
    return bool((claim.get("spec") or {}).get("volumeName")) and ANN_BIND_COMPLETED in annotations_of(claim)


def find_matching_volume(claim: Mapping[str, Any], volumes: Iterable[JSON], node: Mapping[str, Any] | None = None,
                         excluded: Iterable[str] = (), delay_binding: bool = False) -> JSON | None:
    """FindMatchingVolume: the volume for ``claim`` among ``volumes``, or None.

    A volume pre-bound to the claim (``claimRef`` names it) wins when it is big enough, of the
    claim's class and (with ``node``) reachable from the node. Otherwise the smallest volume
    that is Available, not pre-bound elsewhere, of the claim's class, volumeMode and access
    modes, matched by the claim's label ``selector``, at least as big as the request and
    reachable from ``node``; ``excluded`` names volumes already chosen for other claims (the
    scheduler's per-pod choice). ``delay_binding`` (the PV controller on a
    WaitForFirstConsumer claim, no node): only a pre-bound volume matches."""
    want = requested_bytes(claim)
    cls = claim_class(claim)
    skip = set(excluded)
    try:
        sel = selector_from_dict((claim.get("spec") or {}).get("selector"))
        has_selector = bool((claim.get("spec") or {}).get("selector"))
    except ValueError:
        return None
    best: JSON | None = None
    best_size = 0
    for pv in volumes:
        name = _md(pv).get("name") or ""
        if name in skip or not access_modes_fit(claim, pv) or volume_mode_mismatch(claim, pv):
            continue
        size = capacity_bytes(pv)
        affinity_ok = node is None or node_affinity_matches(pv, node)
        if is_volume_bound_to_claim(pv, claim):
            if size < want or volume_class(pv) != cls or not affinity_ok:
                continue
            return pv
        if node is None and delay_binding:
            continue
        if (pv.get("status") or {}).get("phase") != "Available" or (pv.get("spec") or {}).get("claimRef"):
            continue
        if _md(pv).get("deletionTimestamp"):
            continue
        if has_selector and not sel.matches(_md(pv).get("labels") or {}):
            continue
        if volume_class(pv) != cls or not affinity_ok:
            continue
        if size >= want and (best is None or size < best_size):
            best, best_size = pv, size
    return best


def pod_claim_names(pod: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(volume name, claim name)`` of each claim a pod's volumes use: ``persistentVolumeClaim``
    volumes and generic ephemeral volumes (whose claim is ``<pod>-<volume>``,
    ``ephemeral.VolumeClaimName``)."""
    out = []
    pod_name = _md(pod).get("name") or ""
    for v in (pod.get("spec") or {}).get("volumes") or []:
        src = v.get("persistentVolumeClaim")
        if src and src.get("claimName"):
            out.append((str(v.get("name") or ""), str(src["claimName"])))
        elif v.get("ephemeral") is not None:
            out.append((str(v.get("name") or ""), f"{pod_name}-{v.get('name')}"))
    return out
