"""The simulated dynamic provisioner: what an external provisioner (the CSI
external-provisioner sidecar, or kind's local-path-provisioner) would create for a claim,
made by the controller-manager itself, as KWOK simulates one.

Facts from kubernetes-csi/external-provisioner ``pkg/controller/controller.go`` (Provision:
PV name ``pvc-<claim uid>``, capacity = the request, the class's reclaimPolicy and
mountOptions, the claim's access modes and volumeMode, ``claimRef`` pre-binding,
``pv.kubernetes.io/provisioned-by``, node affinity from the accessible topology) and
``pkg/controller/volume/persistentvolume/pv_controller.go`` (provisionClaimOperationExternal).

A class whose provisioner is :data:`HOSTPATH_PROVISIONER` gets a ``hostPath`` volume under
:data:`HOSTPATH_ROOT` pinned to the selected node (``kubernetes.io/hostname``), as
local-path-provisioner does; any other provisioner gets a ``csi`` volume with the
provisioner as driver and the class's parameters (``csi.storage.k8s.io/*`` keys left out)
as ``volumeAttributes``, pinned by the class's ``allowedTopologies`` to what the selected
node has.
"""

from __future__ import annotations

from typing import Any

from controlplane import volume as vol

JSON = dict[str, Any]

#: the default class's provisioner: hostPath volumes on the chosen node
HOSTPATH_PROVISIONER = "controlplane.io/hostpath"
HOSTPATH_ROOT = "/var/lib/controlplane/volumes"
HOSTNAME_LABEL = "kubernetes.io/hostname"
#: the external-provisioner's identity attribute in a CSI volume's attributes
PROVISIONER_IDENTITY = "storage.kubernetes.io/csiProvisionerIdentity"


def volume_name(claim: JSON) -> str:
    """``pvc-<claim uid>`` (the external-provisioner's makeVolumeName with prefix ``pvc``)."""
    return f"pvc-{(claim.get('metadata') or {}).get('uid')}"


def node_affinity(sc: JSON, node: JSON | None) -> JSON | None:
    """The provisioned volume's ``nodeAffinity``: with a selected ``node``, the class's
    ``allowedTopologies`` keys at the node's values, or — for the hostPath provisioner without
    topologies — ``kubernetes.io/hostname`` In [the node] (a CSI class without topologies stays
    unpinned); without a node, the allowed topologies themselves; None when nothing pins it."""
    terms = sc.get("allowedTopologies") or []
    if node is not None:
        md = node.get("metadata") or {}
        labels = md.get("labels") or {}
        keys = [e.get("key") for t in terms for e in t.get("matchLabelExpressions") or []]
        exprs = [{"key": k, "operator": "In", "values": [labels[k]]} for k in dict.fromkeys(keys) if k in labels]
        if not exprs and sc.get("provisioner") == HOSTPATH_PROVISIONER:
            exprs = [{"key": HOSTNAME_LABEL, "operator": "In", "values": [labels.get(HOSTNAME_LABEL, md.get("name"))]}]
        return {"required": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}} if exprs else None
    if not terms:
        return None
    return {"required": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": e.get("key"), "operator": "In", "values": list(e.get("values") or [])}
                              for e in t.get("matchLabelExpressions") or []]} for t in terms]}}


def provisioned_volume(claim: JSON, sc: JSON, node: JSON | None) -> JSON:
    """The PersistentVolume provisioned for ``claim`` of class ``sc`` (``node``: the
    selected node of a WaitForFirstConsumer claim, or None)."""
    md = claim.get("metadata") or {}
    spec = claim.get("spec") or {}
    sc_md = sc.get("metadata") or {}
    provisioner = str(sc.get("provisioner") or "")
    name = volume_name(claim)
    pv_spec: JSON = {
        "capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {}).get("storage", "0")},
        "accessModes": list(spec.get("accessModes") or []),
        "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
        "storageClassName": sc_md.get("name"),
        "volumeMode": spec.get("volumeMode") or "Filesystem",
        "claimRef": vol.claim_ref(claim),
    }
    if sc.get("mountOptions"):
        pv_spec["mountOptions"] = list(sc["mountOptions"])
    if provisioner == HOSTPATH_PROVISIONER:
        pv_spec["hostPath"] = {"path": f"{HOSTPATH_ROOT}/{name}_{md.get('namespace')}_{md.get('name')}",
                               "type": "DirectoryOrCreate"}
    else:
        params = sc.get("parameters") or {}
        attrs = {k: str(v) for k, v in params.items() if not k.startswith("csi.storage.k8s.io/")}
        attrs[PROVISIONER_IDENTITY] = f"controlplane-{provisioner}"
        csi: JSON = {"driver": provisioner, "volumeHandle": name, "volumeAttributes": attrs}
        fstype = params.get("csi.storage.k8s.io/fstype") or params.get("fsType")
        if fstype:
            csi["fsType"] = str(fstype)
        pv_spec["csi"] = csi
    affinity = node_affinity(sc, node)
    if affinity is not None:
        pv_spec["nodeAffinity"] = affinity
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {vol.ANN_DYNAMICALLY_PROVISIONED: provisioner}},
            "spec": pv_spec}
