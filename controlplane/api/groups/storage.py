"""``storage.k8s.io/v1``: StorageClass, CSIDriver, CSINode, VolumeAttachment (Kubernetes v1.32).

Facts from ``pkg/apis/storage/validation/validation.go`` (ValidateStorageClass /
ValidateStorageClassUpdate: provisioner, parameters, reclaimPolicy and volumeBindingMode
fixed once created; ValidateCSIDriver / Update; ValidateCSINode; ValidateVolumeAttachment /
Update: spec immutable), ``pkg/apis/storage/v1/defaults.go`` (reclaimPolicy Delete,
volumeBindingMode Immediate; a CSIDriver's attachRequired true, podInfoOnMount false,
storageCapacity false, requiresRepublish false, seLinuxMount false, fsGroupPolicy
ReadWriteOnceWithFSType, volumeLifecycleModes [Persistent]),
``pkg/registry/storage/*/strategy.go`` (VolumeAttachment: ``status`` subresource, status
reset on create) and ``pkg/printers/internalversion/printers.go`` (printStorageClass,
printCSIDriver, printCSINode, printVolumeAttachment). No provisioner or attacher acts on
them: they are stored. A VolumeAttachment's ``inlineVolumeSpec`` is a PersistentVolumeSpec
(the struct :mod:`controlplane.api.groups.core_storage` declares).
"""

from __future__ import annotations

from typing import Any

from controlplane.api import listfields, validators
from controlplane.api.groups import columndocs
from controlplane.api.groups.common import (
    AGE_COL,
    NAME_COL,
    age,
    col,
    dig,
    immutable,
    invalid_raw,
    name,
    objs,
    strs,
    sub,
)
from controlplane.api.registry import JSON, KindSchema, Printer, Resource, Strategy
from controlplane.api.validators import ErrorList, go_repr

GROUP = "storage.k8s.io"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
BETA_DEFAULT_CLASS_ANNOTATION = "storageclass.beta.kubernetes.io/is-default-class"

TYPES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "TopologySelectorTerm": ("A topology domain: every requirement must hold.", {
        "matchLabelExpressions": ("[]TopologySelectorLabelRequirement", "Label requirements on the topology."),
    }),
    "TopologySelectorLabelRequirement": ("A topology label and the values it may have.", {
        "key": ("string", "The label key."),
        "values": ("[]string", "The allowed values (any one matches)."),
    }),
    "CSIDriverSpec": ("What a CSI driver needs from Kubernetes.", {
        "attachRequired": ("boolean", "The driver needs an attach step (ControllerPublishVolume); default true. "
                                      "Immutable."),
        "podInfoOnMount": ("boolean", "Pass pod information (name, namespace, uid) to NodePublishVolume; default false."),
        "volumeLifecycleModes": ("[]string", "Persistent and/or Ephemeral: the volume kinds the driver supports. "
                                             "Immutable."),
        "storageCapacity": ("boolean", "Scheduling considers the capacity the driver reports; default false."),
        "fsGroupPolicy": ("string", "File, None or ReadWriteOnceWithFSType (default): whether fsGroup ownership "
                                    "changes apply."),
        "tokenRequests": ("[]TokenRequest", "Service account tokens passed to NodePublishVolume."),
        "requiresRepublish": ("boolean", "Call NodePublishVolume periodically; default false."),
        "seLinuxMount": ("boolean", "The driver supports mounting with an SELinux context option; default false."),
    }),
    "TokenRequest": ("A service account token for a CSI driver.", {
        "audience": ("string", "Audience of the token."),
        "expirationSeconds": ("int64", "Validity of the token in seconds (at least 600)."),
    }),
    "CSINodeSpec": ("The CSI drivers installed on a node.", {
        "drivers": ("[]CSINodeDriver", "The drivers registered by the node's kubelet."),
    }),
    "CSINodeDriver": ("A CSI driver on a node.", {
        "name": ("string", "Name of the driver (as its CSIDriver)."),
        "nodeID": ("string", "The node as the driver knows it."),
        "topologyKeys": ("[]string", "Topology label keys the driver supports."),
        "allocatable": ("VolumeNodeResources", "Volumes the driver can attach on the node."),
    }),
    "VolumeNodeResources": ("Per-node volume limits of a driver.", {
        "count": ("int32", "Maximum number of unique volumes the driver can attach on the node."),
    }),
    "VolumeAttachmentSpec": ("Which volume to attach to which node, and by which attacher.", {
        "attacher": ("string", "The volume driver that handles the attachment (its CSI name)."),
        "source": ("VolumeAttachmentSource", "The volume to attach."),
        "nodeName": ("string", "The node to attach it to."),
    }),
    "VolumeAttachmentSource": ("A volume: a PersistentVolume by name or an inline spec (exactly one).", {
        "persistentVolumeName": ("string", "Name of the PersistentVolume."),
        "inlineVolumeSpec": ("PersistentVolumeSpec", "An inline volume (CSI migration of in-tree volumes)."),
    }),
    "VolumeAttachmentStatus": ("The outcome of attaching and detaching.", {
        "attached": ("boolean", "The volume is attached (set by the attacher)."),
        "attachmentMetadata": ("map[string]", "Information from the attach step, passed to mounts."),
        "attachError": ("VolumeError", "Last error of attaching."),
        "detachError": ("VolumeError", "Last error of detaching."),
    }),
    "VolumeError": ("An error of the attacher.", {
        "time": ("Time", "When the error happened."),
        "message": ("string", "What went wrong."),
    }),
}

_ATOMIC = listfields.ATOMIC
listfields.declare(
    {"StorageClass": {"mountOptions": _ATOMIC, "allowedTopologies": _ATOMIC},
     "CSIDriver": {"spec": "CSIDriverSpec"},
     "CSINode": {"spec": "CSINodeSpec"}},
    {"CSIDriverSpec": {"volumeLifecycleModes": listfields.ListField(None, "", "set"), "tokenRequests": _ATOMIC},
     "CSINodeSpec": {"drivers": listfields.ListField("name", "merge", "map", ("name",), (), "CSINodeDriver")},
     "CSINodeDriver": {"topologyKeys": _ATOMIC}})

# --------------------------------------------------------------------------- defaults


def default_storage_class(obj: JSON) -> None:
    """SetDefaults_StorageClass: reclaimPolicy Delete, volumeBindingMode Immediate."""
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")


def default_csi_driver(obj: JSON) -> None:
    """SetDefaults_CSIDriver."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    for f, v in (("attachRequired", True), ("podInfoOnMount", False), ("storageCapacity", False),
                 ("fsGroupPolicy", "ReadWriteOnceWithFSType"), ("requiresRepublish", False),
                 ("seLinuxMount", False)):
        spec.setdefault(f, v)
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]

# --------------------------------------------------------------------------- validation


def csi_driver_name_problems(v: str) -> list[str]:
    """ValidateCSIDriverName as a name rule: at most 63 characters, an RFC 1123 subdomain
    once lower-cased (the CSIDriver's metadata.name)."""
    out = ["must be no more than 63 characters"] if len(v) > 63 else []
    return out + validators.is_dns1123_subdomain(v.lower())


def validate_csi_driver_name(v: str, path: str, errs: ErrorList) -> None:
    """ValidateCSIDriverName: required, at most 63 characters, an RFC 1123 subdomain (lower-cased)."""
    if not v:
        errs.required(path, v)
        return
    if len(v) > 63:
        errs.too_long(path, 63)
    for m in validators.is_dns1123_subdomain(v.lower()):
        errs.invalid(path, v, m)


def validate_storage_class(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateStorageClass and, on update, ValidateStorageClassUpdate."""
    prov = str(obj.get("provisioner") or "")
    if not prov:
        errs.required("provisioner", prov)
    else:
        for m in validators.is_qualified_name(prov.lower()):
            errs.invalid("provisioner", prov.lower(), m)
    params = obj.get("parameters")
    if isinstance(params, dict):
        if len(params) > 512:
            errs.too_long("parameters", 512)
        else:
            total = 0
            for k, v in params.items():
                if not k:
                    errs.invalid("parameters", "", "field can not be empty.")
                total += len(k) + len(str(v))
            if total > 256 * 1024:
                errs.too_long("parameters", 256 * 1024)
    rp = obj.get("reclaimPolicy")
    if rp not in ("Delete", "Retain"):
        errs.not_supported("reclaimPolicy", rp, ["Delete", "Retain"])
    mode = obj.get("volumeBindingMode")
    if mode is None:
        errs.required("volumeBindingMode", "")
    elif mode not in ("Immediate", "WaitForFirstConsumer"):
        errs.not_supported("volumeBindingMode", mode, ["Immediate", "WaitForFirstConsumer"])
    for i, term in enumerate(objs(obj.get("allowedTopologies"))):
        exprs = objs(term.get("matchLabelExpressions"))
        tp = f"allowedTopologies[{i}].matchLabelExpressions"
        if not exprs:
            errs.required(tp, "must have at least one label requirement")
        for j, e in enumerate(exprs):
            for m in validators.is_qualified_name(str(e.get("key") or "")):
                errs.invalid(f"{tp}[{j}].key", e.get("key") or "", m)
            if not e.get("values"):
                errs.required(f"{tp}[{j}].values", "must have at least one value")
    if old is None:
        return
    if obj.get("parameters") != old.get("parameters"):
        errs.forbidden("parameters", "updates to parameters are forbidden.")
    if obj.get("provisioner") != old.get("provisioner"):
        errs.forbidden("provisioner", "updates to provisioner are forbidden.")
    if obj.get("reclaimPolicy") != old.get("reclaimPolicy"):
        errs.forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden.")
    immutable(errs, "volumeBindingMode", obj.get("volumeBindingMode"), old.get("volumeBindingMode"))


def validate_csi_driver(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateCSIDriver / ValidateCSIDriverUpdate: fsGroupPolicy and volumeLifecycleModes
    values, token requests (unique audiences, 10 minutes to 2^32 seconds); attachRequired
    and volumeLifecycleModes immutable."""
    spec = sub(obj, "spec")
    if spec.get("attachRequired") is None:
        errs.required("spec.attachRequired", "")
    pol = spec.get("fsGroupPolicy")
    if pol is not None and pol not in ("File", "None", "ReadWriteOnceWithFSType"):
        errs.not_supported("spec.fsGroupPolicy", pol, ["File", "None", "ReadWriteOnceWithFSType"])
    for i, m in enumerate(strs(spec.get("volumeLifecycleModes"))):
        if m not in ("Ephemeral", "Persistent"):
            errs.not_supported(f"spec.volumeLifecycleModes[{i}]", m, ["Ephemeral", "Persistent"])
    seen: set[str] = set()
    for i, t in enumerate(objs(spec.get("tokenRequests"))):
        aud = str(t.get("audience") or "")
        if aud in seen:
            errs.duplicate(f"spec.tokenRequests[{i}].audience", aud)
        seen.add(aud)
        exp = t.get("expirationSeconds")
        if isinstance(exp, int):
            if exp < 600:
                errs.invalid(f"spec.tokenRequests[{i}].expirationSeconds", exp,
                             "may not specify a duration less than 10 minutes")
            elif exp > 1 << 32:
                errs.invalid(f"spec.tokenRequests[{i}].expirationSeconds", exp,
                             "may not specify a duration larger than 2^32 seconds")
    if old is not None:
        ospec = sub(old, "spec")
        immutable(errs, "spec.attachRequired", spec.get("attachRequired"), ospec.get("attachRequired"))
        immutable(errs, "spec.volumeLifecycleModes", spec.get("volumeLifecycleModes"),
                  ospec.get("volumeLifecycleModes"))


def validate_csi_node(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateCSINode: each driver's name (unique), nodeID (required, at most 192
    characters), topologyKeys (qualified names), allocatable.count (not negative)."""
    seen: set[str] = set()
    for i, d in enumerate(objs(sub(obj, "spec").get("drivers"))):
        dp = f"spec.drivers[{i}]"
        dname = str(d.get("name") or "")
        validate_csi_driver_name(dname, f"{dp}.name", errs)
        if dname in seen:
            errs.duplicate(f"{dp}.name", dname)
        seen.add(dname)
        node_id = str(d.get("nodeID") or "")
        if not node_id:
            errs.required(f"{dp}.nodeID", "nodeID must be provided")
        elif len(node_id) > 192:
            errs.invalid(f"{dp}.nodeID", node_id, "must be 192 characters or less")
        for j, k in enumerate(strs(d.get("topologyKeys"))):
            for m in validators.is_qualified_name(k):
                errs.invalid(f"{dp}.topologyKeys[{j}]", k, m)
        count = dig(d, "allocatable", "count")
        if isinstance(count, int) and count < 0:
            errs.invalid(f"{dp}.allocatable.count", count, "must be greater than or equal to 0")


def validate_volume_attachment(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateVolumeAttachment / ValidateVolumeAttachmentUpdate: attacher (a CSI driver
    name), exactly one source, nodeName required; the spec is immutable."""
    spec = sub(obj, "spec")
    validate_csi_driver_name(str(spec.get("attacher") or ""), "spec.attacher", errs)
    src = sub(spec, "source")
    pv, inline = src.get("persistentVolumeName"), src.get("inlineVolumeSpec")
    if pv is None and inline is None:
        errs.required("spec.source", "must specify exactly one of inlineVolumeSpec and persistentVolumeName")
    elif pv is not None and inline is not None:
        errs.forbidden("spec.source", "must specify exactly one of inlineVolumeSpec and persistentVolumeName")
    elif pv is not None and not pv:
        errs.required("spec.source.persistentVolumeName", "must specify non empty persistentVolumeName")
    node = str(spec.get("nodeName") or "")
    if not node:
        errs.required("spec.nodeName", "")
    else:
        for m in validators.is_dns1123_subdomain(node):
            errs.invalid("spec.nodeName", node, m)
    if old is not None and obj.get("spec") != old.get("spec"):
        invalid_raw(errs, "spec", go_repr(obj.get("spec")), "field is immutable")

# --------------------------------------------------------------------------- printers


def is_default_class(obj: JSON) -> bool:
    """IsDefaultAnnotation: the (beta) is-default-class annotation is ``true``."""
    ann = dig(obj, "metadata", "annotations") or {}
    return bool(ann.get(DEFAULT_CLASS_ANNOTATION) == "true" or ann.get(BETA_DEFAULT_CLASS_ANNOTATION) == "true")


def _storage_class_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    n = name(obj) + (" (default)" if is_default_class(obj) else "")
    return [n, obj.get("provisioner", ""), obj.get("reclaimPolicy") or "Delete",
            obj.get("volumeBindingMode") or "Immediate", bool(obj.get("allowVolumeExpansion") or False),
            age(obj, now)], None


def _csi_driver_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec = sub(obj, "spec")
    attach = spec.get("attachRequired")
    modes = ",".join(strs(spec.get("volumeLifecycleModes"))) or "<none>"
    tokens = "<unset>"
    if spec.get("tokenRequests") is not None:
        tokens = ",".join(str(t.get("audience") or "") for t in objs(spec.get("tokenRequests")))
    return [name(obj), True if attach is None else bool(attach), bool(spec.get("podInfoOnMount")),
            bool(spec.get("storageCapacity")), tokens, bool(spec.get("requiresRepublish")), modes,
            age(obj, now)], None


def _csi_node_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    return [name(obj), len(objs(sub(obj, "spec").get("drivers"))), age(obj, now)], None


def _volume_attachment_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec = sub(obj, "spec")
    return [name(obj), spec.get("attacher", ""), dig(spec, "source", "persistentVolumeName") or "",
            spec.get("nodeName", ""), bool(dig(obj, "status", "attached")), age(obj, now)], None


STORAGE_CLASS = Printer((
    NAME_COL,
    col("Provisioner", description=columndocs.doc("StorageClass.provisioner")),
    col("ReclaimPolicy", description=columndocs.doc("StorageClass.reclaimPolicy")),
    col("VolumeBindingMode", description=columndocs.doc("StorageClass.volumeBindingMode")),
    col("AllowVolumeExpansion", description=columndocs.doc("StorageClass.allowVolumeExpansion")),
    AGE_COL), _storage_class_row)
CSI_DRIVER = Printer((
    NAME_COL,
    col("AttachRequired", "boolean", columndocs.doc("CSIDriverSpec.attachRequired")),
    col("PodInfoOnMount", "boolean", columndocs.doc("CSIDriverSpec.podInfoOnMount")),
    col("StorageCapacity", "boolean", columndocs.doc("CSIDriverSpec.storageCapacity")),
    col("TokenRequests", description=columndocs.doc("CSIDriverSpec.tokenRequests")),
    col("RequiresRepublish", "boolean", columndocs.doc("CSIDriverSpec.requiresRepublish")),
    col("Modes", description=columndocs.doc("CSIDriverSpec.volumeLifecycleModes")),
    AGE_COL), _csi_driver_row)
CSI_NODE = Printer((
    NAME_COL, col("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node"),
    AGE_COL), _csi_node_row)
VOLUME_ATTACHMENT = Printer((
    NAME_COL,
    col("Attacher", description=columndocs.doc("VolumeAttachmentSpec.attacher"), format_="name"),
    col("PV", description=columndocs.doc("VolumeAttachmentSource.persistentVolumeName")),
    col("Node", description=columndocs.doc("VolumeAttachmentSpec.nodeName")),
    col("Attached", "boolean", columndocs.doc("VolumeAttachmentStatus.attached")),
    AGE_COL), _volume_attachment_row)


def _prepare_volume_attachment_create(obj: JSON) -> None:
    """PrepareForCreate: an empty status (``attached: false``)."""
    obj["status"] = {"attached": False}


VOLUME_ATTACHMENT_STRATEGY = Strategy(prepare_create=_prepare_volume_attachment_create)

ENTRIES: tuple[Resource, ...] = (
    Resource(GROUP, "v1", "storageclasses", "storageclass", "StorageClass", False, ("sc",),
             printer=STORAGE_CLASS,
             schema=KindSchema("StorageClass describes a class of dynamically provisioned PersistentVolumes: the "
                               "provisioner and its parameters. Fixed once created, except allowVolumeExpansion, "
                               "mountOptions and allowedTopologies.", {
                                   "provisioner": ("string", "The volume plugin that provisions volumes. Required."),
                                   "parameters": ("map[string]", "Parameters for the provisioner (at most 512)."),
                                   "reclaimPolicy": ("string", "Delete (default) or Retain: the reclaim policy of "
                                                               "the provisioned volumes."),
                                   "mountOptions": ("[]string", "Mount options of the provisioned volumes."),
                                   "allowVolumeExpansion": ("boolean", "Claims of this class may be resized."),
                                   "volumeBindingMode": ("string", "Immediate (default) or WaitForFirstConsumer: "
                                                                   "when claims are provisioned and bound."),
                                   "allowedTopologies": ("[]TopologySelectorTerm", "Topologies volumes may be "
                                                                                   "provisioned in.")}, TYPES),
             validate=validate_storage_class, default=default_storage_class),
    Resource(GROUP, "v1", "csidrivers", "csidriver", "CSIDriver", False,
             printer=CSI_DRIVER,
             schema=KindSchema("CSIDriver describes a CSI volume driver installed in the cluster; its name is the "
                               "driver's.", {"spec": ("CSIDriverSpec", "What the driver needs.")}, TYPES),
             validate=validate_csi_driver, name_rule=csi_driver_name_problems, default=default_csi_driver),
    Resource(GROUP, "v1", "csinodes", "csinode", "CSINode", False,
             printer=CSI_NODE,
             schema=KindSchema("CSINode holds the CSI drivers installed on a node (named as the node).", {
                 "spec": ("CSINodeSpec", "The drivers.")}, TYPES),
             validate=validate_csi_node),
    Resource(GROUP, "v1", "volumeattachments", "volumeattachment", "VolumeAttachment", False, (), ("status",),
             printer=VOLUME_ATTACHMENT,
             schema=KindSchema("VolumeAttachment asks to attach a volume to a node, or detach it; the attacher "
                               "reports the outcome in status.", {
                                   "spec": ("VolumeAttachmentSpec", "The volume and the node. Immutable."),
                                   "status": ("VolumeAttachmentStatus", "The outcome (set by the attacher).")},
                               TYPES),
             validate=validate_volume_attachment, strategy=VOLUME_ATTACHMENT_STRATEGY),
)
