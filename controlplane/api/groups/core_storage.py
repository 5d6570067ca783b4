"""Core ``v1`` PersistentVolume, PersistentVolumeClaim and PodTemplate (Kubernetes v1.32).

Facts from ``pkg/apis/core/validation/validation.go`` (ValidatePersistentVolume /
ValidatePersistentVolumeUpdate: one volume source, immutable once created;
ValidatePersistentVolumeClaim / ValidatePersistentVolumeClaimUpdate: the spec is immutable
except ``resources.requests`` growth of a bound claim and setting ``volumeName`` once;
ValidatePodTemplate), ``pkg/apis/core/v1/defaults.go`` (a PV's reclaim policy Retain and
volumeMode Filesystem, phase Pending; a claim's volumeMode Filesystem, phase Pending),
``pkg/registry/core/{persistentvolume,persistentvolumeclaim,podtemplate}/strategy.go``
(``status`` subresources; status reset on create; a PV's ``lastPhaseTransitionTime`` set
when its phase changes; a PodTemplate's generation 1 on create, bumped when its template changes) and ``pkg/printers/internalversion/printers.go``
(printPersistentVolume, printPersistentVolumeClaim, printPodTemplate). Claims are bound
by the controller-manager's PV controller (``components/controller_manager/volume/``).

The update errors print Kubernetes' message without the ``cmp.Diff`` of the specs that
follows it there.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from controlplane import apitime
from controlplane.api import defaulters, listfields, validators
from controlplane.api.groups import columndocs
from controlplane.api.groups.common import (
    AGE_COL,
    NAME_COL,
    age,
    bump_generation_on,
    col,
    dig,
    immutable,
    name,
    objs,
    strs,
    sub,
)
from controlplane.api.quantity import format_quantity, parse_quantity
from controlplane.api.registry import JSON, KindSchema, Printer, Resource, Strategy
from controlplane.api.validators import ErrorList, go_repr

STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
_SHORT_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                ("ReadWriteOncePod", "RWOP"))

#: the volume sources of a PersistentVolumeSpec (PersistentVolumeSource, inlined)
PV_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd", "iscsi",
              "cinder", "cephfs", "fc", "flocker", "flexVolume", "azureFile", "vsphereVolume", "quobyte",
              "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO", "local", "storageos", "csi")

#: the in-tree volume sources of a PersistentVolumeSpec (kept for the API; no plugin runs here)
PV_SOURCE_TYPES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "AWSElasticBlockStoreVolumeSource": ('An AWS EBS disk (deprecated in-tree plugin).', {
        "fsType": ("string", 'Filesystem type to mount (e.g. ext4, xfs).'),
        "partition": ("int32", 'Partition of the volume to mount (0: the whole volume).'),
        "readOnly": ("boolean", 'Mount read-only.'),
        "volumeID": ("string", 'Unique ID of the volume in the backend.'),
    }),
    "AzureDiskVolumeSource": ('An Azure data disk (deprecated in-tree plugin).', {
        "cachingMode": ("string", 'Host caching mode: None, ReadOnly or ReadWrite.'),
        "diskName": ("string", 'Name of the data disk in blob storage.'),
        "diskURI": ("string", 'URI of the data disk in blob storage.'),
        "fsType": ("string", 'Filesystem type to mount (e.g. ext4, xfs).'),
        "kind": ("string", 'Shared, Dedicated or Managed (default).'),
        "readOnly": ("boolean", 'Mount read-only.'),
    }),
    "AzureFilePersistentVolumeSource": ('An Azure File share (deprecated in-tree plugin).', {
        "readOnly": ("boolean", 'Mount read-only.'),
        "secretName": ("string", 'Secret holding the storage account name and key.'),
        "secretNamespace": ("string", "Namespace of that Secret (the pod's by default)."),
        "shareName": ("string", 'Name of the Azure share.'),
    }),
    "CephFSPersistentVolumeSource": ('A Ceph filesystem mount (deprecated).', {
        "monitors": ("[]string", 'Ceph monitors.'),
        "path": ("string", 'Path within the volume.'),
        "readOnly": ("boolean", 'Mount read-only.'),
        "secretFile": ("string", 'Path to the key ring for the user.'),
        "secretRef": ("SecretReference", 'Secret with the credentials.'),
        "user": ("string", 'User name.'),
    }),
    "CinderPersistentVolumeSource": ('An OpenStack Cinder volume (deprecated in-tree plugin).', {
        "fsType": ("string", 'Filesystem type to mount (e.g. ext4, xfs).'),
        "readOnly": ("boolean", 'Mount read-only.'),
        "secretRef": ("SecretReference", 'Secret with the credentials.'),
        "volumeID": ("string", 'Unique ID of the volume in the backend.'),
    }),
    "FCVolumeSource": ('A Fibre Channel disk.', {
        "fsType": ("string", 'Filesystem type to mount (e.g. ext4, xfs).'),
        "lun": ("int32", 'Target LUN number.'),
        "readOnly": ("boolean", 'Mount read-only.'),
        "targetWWNs": ("[]string", 'Fibre Channel target worldwide names.'),
        "wwids": ("[]string", 'Fibre Channel volume world wide identifiers.'),
    }),
    "FlexPersistentVolumeSource": ('A volume of an exec-based FlexVolume driver (deprecated).', {
        "driver": ("string", 'Name of the driver.'),
        "fsType": ("string", 'Filesystem type to mount (e.g. ext4, xfs).'),
        "options": ("map[string]", 'Extra command options.'),
        "readOnly": ("boolean", 'Mount read-only.'),
        "secretRef": ("SecretReference", 'Secret with the credentials.'),
    }),
    "FlockerVolumeSource": ('A Flocker volume (deprecated).', {
        "datasetName": ("string", 'Name of the Flocker dataset (deprecated).'),
        "datasetUUID": ("string", 'UUID of the Flocker dataset.'),
    }),
    "GCEPersistentDiskVolumeSource": ('A GCE persistent disk (deprecated in-tree plugin).', {
        "fsType": ("string", 'Filesystem type to mount (e.g. ext4, xfs).'),
        "partition": ("int32", 'Partition of the volume to mount (0: the whole volume).'),
        "pdName": ("string", 'Name of the persistent disk.'),
        "readOnly": ("boolean", 'Mount read-only.'),
    }),
    "GlusterfsPersistentVolumeSource": ('A Glusterfs mount (deprecated).', {
        "endpoints": ("string", 'Endpoints object with the Glusterfs topology.'),
        "endpointsNamespace": ("string", 'Namespace of the endpoints.'),
        "path": ("string", 'Path within the volume.'),
        "readOnly": ("boolean", 'Mount read-only.'),
    }),
    "ISCSIPersistentVolumeSource": ('An iSCSI disk.', {
        "chapAuthDiscovery": ("boolean", 'Use iSCSI Discovery CHAP authentication.'),
        "chapAuthSession": ("boolean", 'Use iSCSI Session CHAP authentication.'),
        "fsType": ("string", 'Filesystem type to mount (e.g. ext4, xfs).'),
        "initiatorName": ("string", 'Custom iSCSI initiator name.'),
        "iqn": ("string", 'iSCSI qualified name of the target.'),
        "iscsiInterface": ("string", 'iSCSI interface name (default: tcp).'),
        "lun": ("int32", 'Target LUN number.'),
        "portals": ("[]string", 'Additional iSCSI target portals (ip:port).'),
        "readOnly": ("boolean", 'Mount read-only.'),
        "secretRef": ("SecretReference", 'Secret with the credentials.'),
        "targetPortal": ("string", 'iSCSI target portal (ip:port).'),
    }),
    "PhotonPersistentDiskVolumeSource": ('A Photon Controller disk (deprecated).', {
        "fsType": ("string", 'Filesystem type to mount (e.g. ext4, xfs).'),
        "pdID": ("string", 'ID of the Photon persistent disk.'),
    }),
    "PortworxVolumeSource": ('A Portworx volume (deprecated in-tree plugin).', {
        "fsType": ("string", 'Filesystem type to mount (e.g. ext4, xfs).'),
        "readOnly": ("boolean", 'Mount read-only.'),
        "volumeID": ("string", 'Unique ID of the volume in the backend.'),
    }),
    "QuobyteVolumeSource": ('A Quobyte mount (deprecated).', {
        "group": ("string", 'Group the volume is mapped to.'),
        "readOnly": ("boolean", 'Mount read-only.'),
        "registry": ("string", 'Quobyte registries (host:port, comma separated).'),
        "tenant": ("string", 'Tenant owning the volume.'),
        "user": ("string", 'User name.'),
        "volume": ("string", 'Volume (as its backend names it).'),
    }),
    "RBDPersistentVolumeSource": ('A Rados block device (deprecated).', {
        "fsType": ("string", 'Filesystem type to mount (e.g. ext4, xfs).'),
        "image": ("string", 'Rados image name.'),
        "keyring": ("string", 'Path to the RBD keyring.'),
        "monitors": ("[]string", 'Ceph monitors.'),
        "pool": ("string", 'Rados pool name.'),
        "readOnly": ("boolean", 'Mount read-only.'),
        "secretRef": ("SecretReference", 'Secret with the credentials.'),
        "user": ("string", 'User name.'),
    }),
    "ScaleIOPersistentVolumeSource": ('A ScaleIO volume (deprecated).', {
        "fsType": ("string", 'Filesystem type to mount (e.g. ext4, xfs).'),
        "gateway": ("string", 'Host address of the ScaleIO API gateway.'),
        "protectionDomain": ("string", 'ScaleIO protection domain.'),
        "readOnly": ("boolean", 'Mount read-only.'),
        "secretRef": ("SecretReference", 'Secret with the credentials.'),
        "sslEnabled": ("boolean", 'Use SSL with the gateway.'),
        "storageMode": ("string", 'ThickProvisioned or ThinProvisioned.'),
        "storagePool": ("string", 'ScaleIO storage pool.'),
        "system": ("string", 'Name of the ScaleIO storage system.'),
        "volumeName": ("string", 'Name of the volume in the backend.'),
    }),
    "StorageOSPersistentVolumeSource": ('A StorageOS volume (deprecated).', {
        "fsType": ("string", 'Filesystem type to mount (e.g. ext4, xfs).'),
        "readOnly": ("boolean", 'Mount read-only.'),
        "secretRef": ("ObjectReference", 'Secret with the credentials.'),
        "volumeName": ("string", 'Name of the volume in the backend.'),
        "volumeNamespace": ("string", 'Namespace of the volume in the backend.'),
    }),
    "VsphereVirtualDiskVolumeSource": ('A vSphere virtual disk (deprecated in-tree plugin).', {
        "fsType": ("string", 'Filesystem type to mount (e.g. ext4, xfs).'),
        "storagePolicyID": ("string", 'ID of the SPBM storage policy.'),
        "storagePolicyName": ("string", 'Name of the SPBM storage policy.'),
        "volumePath": ("string", 'Path identifying the vSphere volume.'),
    }),
    "ModifyVolumeStatus": ('The state of a volume modification (VolumeAttributesClass change).', {
        "status": ("string", 'State of the modification: Pending, InProgress or Infeasible.'),
        "targetVolumeAttributesClassName": ("string", 'VolumeAttributesClass being reconciled.'),
    }),
}

TYPES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    **PV_SOURCE_TYPES,
    "PersistentVolumeSpec": ("A persistent volume: its capacity, access modes, source and binding.", {
        "capacity": ("map[Quantity]", "The volume's resources; storage is required."),
        "accessModes": ("[]string", "ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod."),
        "claimRef": ("ObjectReference", "The claim bound to this volume (one half of the binding)."),
        "persistentVolumeReclaimPolicy": ("string", "Retain (default), Delete or Recycle: what happens on release."),
        "storageClassName": ("string", "StorageClass of the volume; empty: no class."),
        "mountOptions": ("[]string", "Mount options (not validated)."),
        "volumeMode": ("string", "Filesystem (default) or Block."),
        "nodeAffinity": ("VolumeNodeAffinity", "Nodes the volume can be used from."),
        "volumeAttributesClassName": ("string", "VolumeAttributesClass of the volume."),
        "hostPath": ("HostPathVolumeSource", "A directory on the node (testing only)."),
        "local": ("LocalVolumeSource", "A local disk, partition or directory of a node."),
        "nfs": ("NFSVolumeSource", "An NFS export."),
        "csi": ("CSIPersistentVolumeSource", "A volume of an external CSI driver."),
        "gcePersistentDisk": ("GCEPersistentDiskVolumeSource", "Deprecated in-tree GCE PD."),
        "awsElasticBlockStore": ("AWSElasticBlockStoreVolumeSource", "Deprecated in-tree AWS EBS."),
        "glusterfs": ("GlusterfsPersistentVolumeSource", "Deprecated Glusterfs volume."),
        "rbd": ("RBDPersistentVolumeSource", "Deprecated Rados block device."),
        "iscsi": ("ISCSIPersistentVolumeSource", "An iSCSI disk."),
        "cinder": ("CinderPersistentVolumeSource", "Deprecated in-tree Cinder volume."),
        "cephfs": ("CephFSPersistentVolumeSource", "Deprecated Ceph filesystem."),
        "fc": ("FCVolumeSource", "A Fibre Channel disk."),
        "flocker": ("FlockerVolumeSource", "Deprecated Flocker volume."),
        "flexVolume": ("FlexPersistentVolumeSource", "Deprecated exec-based volume plugin."),
        "azureFile": ("AzureFilePersistentVolumeSource", "Deprecated in-tree Azure File."),
        "vsphereVolume": ("VsphereVirtualDiskVolumeSource", "Deprecated in-tree vSphere disk."),
        "quobyte": ("QuobyteVolumeSource", "Deprecated Quobyte volume."),
        "azureDisk": ("AzureDiskVolumeSource", "Deprecated in-tree Azure Disk."),
        "photonPersistentDisk": ("PhotonPersistentDiskVolumeSource", "Deprecated Photon disk."),
        "portworxVolume": ("PortworxVolumeSource", "Deprecated in-tree Portworx volume."),
        "scaleIO": ("ScaleIOPersistentVolumeSource", "Deprecated ScaleIO volume."),
        "storageos": ("StorageOSPersistentVolumeSource", "Deprecated StorageOS volume."),
    }),
    "HostPathVolumeSource": ("A file or directory on the node.", {
        "path": ("string", "Path on the node."),
        "type": ("string", "What must exist at path: \"\", DirectoryOrCreate, Directory, FileOrCreate, File, "
                           "Socket, CharDevice or BlockDevice."),
    }),
    "LocalVolumeSource": ("A local volume of a node.", {
        "path": ("string", "Full path of the volume on the node."),
        "fsType": ("string", "Filesystem type of a block device."),
    }),
    "NFSVolumeSource": ("An NFS mount.", {
        "server": ("string", "Host name or IP of the NFS server."),
        "path": ("string", "Path exported by the server."),
        "readOnly": ("boolean", "Mount read-only."),
    }),
    "CSIPersistentVolumeSource": ("A volume managed by an external CSI driver.", {
        "driver": ("string", "Name of the driver. Required."),
        "volumeHandle": ("string", "The volume as the driver identifies it. Required."),
        "readOnly": ("boolean", "Publish read-only."),
        "fsType": ("string", "Filesystem type to mount."),
        "volumeAttributes": ("map[string]", "Attributes passed to the driver."),
        "controllerPublishSecretRef": ("SecretReference", "Secret for ControllerPublishVolume."),
        "nodeStageSecretRef": ("SecretReference", "Secret for NodeStageVolume."),
        "nodePublishSecretRef": ("SecretReference", "Secret for NodePublishVolume."),
        "controllerExpandSecretRef": ("SecretReference", "Secret for ControllerExpandVolume."),
        "nodeExpandSecretRef": ("SecretReference", "Secret for NodeExpandVolume."),
    }),
    "SecretReference": ("A Secret in any namespace.", {
        "name": ("string", "Name of the Secret."),
        "namespace": ("string", "Namespace of the Secret."),
    }),
    "VolumeNodeAffinity": ("Nodes a volume can be used from.", {
        "required": ("NodeSelector", "Terms the node must match."),
    }),
    "PersistentVolumeStatus": ("The observed state of a persistent volume.", {
        "phase": ("string", "Pending, Available, Bound, Released or Failed."),
        "message": ("string", "Why the volume is in this state."),
        "reason": ("string", "Short CamelCase reason of a failure."),
        "lastPhaseTransitionTime": ("Time", "When the phase last changed."),
    }),
    "PersistentVolumeClaimSpec": ("What a claim asks for: access modes, size, class, and the volume bound.", {
        "accessModes": ("[]string", "Access modes the volume must have; at least one."),
        "selector": ("LabelSelector", "Labels of the volumes that may be bound."),
        "resources": ("VolumeResourceRequirements", "Minimum (requests.storage, required) and maximum resources."),
        "volumeName": ("string", "The PersistentVolume bound to this claim."),
        "storageClassName": ("string", "StorageClass required; empty: no class."),
        "volumeMode": ("string", "Filesystem (default) or Block."),
        "dataSource": ("TypedLocalObjectReference", "A VolumeSnapshot or PVC to populate the volume from."),
        "dataSourceRef": ("TypedObjectReference", "Any populator object to fill the volume from."),
        "volumeAttributesClassName": ("string", "VolumeAttributesClass of the claim."),
    }),
    "VolumeResourceRequirements": ("The storage a claim requests.", {
        "limits": ("map[Quantity]", "Maximum amount of each resource."),
        "requests": ("map[Quantity]", "Minimum amount of each resource (storage)."),
    }),
    "TypedObjectReference": ("A reference to an object of a given kind, possibly in another namespace.", {
        "apiGroup": ("string", "API group of the referent (empty: the core group)."),
        "kind": ("string", "Kind of the referent."),
        "name": ("string", "Name of the referent."),
        "namespace": ("string", "Namespace of the referent (cross-namespace needs a ReferenceGrant)."),
    }),
    "PersistentVolumeClaimStatus": ("The observed state of a claim.", {
        "phase": ("string", "Pending, Bound or Lost."),
        "accessModes": ("[]string", "Access modes of the bound volume."),
        "capacity": ("map[Quantity]", "Resources of the bound volume."),
        "conditions": ("[]PersistentVolumeClaimCondition", "Resizing, FileSystemResizePending..."),
        "allocatedResources": ("map[Quantity]", "Resources allocated for a resize."),
        "allocatedResourceStatuses": ("map[string]", "State of each resize."),
        "currentVolumeAttributesClassName": ("string", "VolumeAttributesClass in use."),
        "modifyVolumeStatus": ("ModifyVolumeStatus", "State of a volume modification."),
    }),
    "PersistentVolumeClaimCondition": ("A condition of a claim.", {
        "type": ("string", "Type of the condition."),
        "status": ("string", "True, False or Unknown."),
        "lastProbeTime": ("Time", "Last probe of the condition."),
        "lastTransitionTime": ("Time", "Last change of status."),
        "reason": ("string", "Short CamelCase reason."),
        "message": ("string", "Human-readable detail."),
    }),
}

_ATOMIC = listfields.ATOMIC
listfields.declare(
    {"PersistentVolume": {"spec": "PersistentVolumeSpec"},
     "PersistentVolumeClaim": {"spec": "PersistentVolumeClaimSpec", "status": "PersistentVolumeClaimStatus"}},
    {"PersistentVolumeSpec": {"accessModes": _ATOMIC, "mountOptions": _ATOMIC},
     # the claim as a struct (StatefulSet spec.volumeClaimTemplates) has the kind's fields
     "PersistentVolumeClaim": {"spec": "PersistentVolumeClaimSpec", "status": "PersistentVolumeClaimStatus"},
     "PersistentVolumeClaimSpec": {"accessModes": _ATOMIC},
     "PersistentVolumeClaimStatus": {"accessModes": _ATOMIC,
                                     "conditions": listfields.ListField("type", "merge", "map", ("type",))}})

# --------------------------------------------------------------------------- defaults


def default_persistent_volume(obj: JSON) -> None:
    """SetDefaults_PersistentVolume: phase Pending, reclaim policy Retain, volumeMode Filesystem."""
    spec = obj.setdefault("spec", {})
    if isinstance(spec, dict):
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
        hp = spec.get("hostPath")
        if isinstance(hp, dict):
            hp.setdefault("type", "")
    status = obj.setdefault("status", {})
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Pending"


def default_persistent_volume_claim(obj: JSON) -> None:
    """SetDefaults_PersistentVolumeClaim(Spec): volumeMode Filesystem, phase Pending."""
    spec = obj.setdefault("spec", {})
    if isinstance(spec, dict):
        spec.setdefault("volumeMode", "Filesystem")
    status = obj.setdefault("status", {})
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Pending"


def default_pod_template(obj: JSON) -> None:
    """A PodTemplate's ``template.spec`` gets the pod spec defaults (SetDefaults_PodSpec)."""
    spec = dig(obj, "template", "spec")
    if isinstance(spec, dict):
        defaulters.default_pod_spec(spec)

# --------------------------------------------------------------------------- validation


def _quantity(v: object) -> Fraction | None:
    try:
        return parse_quantity(v)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        return None


def _validate_access_modes(modes: list[str], path: str, errs: ErrorList, required: str) -> None:
    if not modes:
        errs.required(path, required)
    for m in modes:
        if m not in ACCESS_MODES:
            errs.not_supported(path, m, ACCESS_MODES)
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.forbidden(path, "may not use ReadWriteOncePod with other access modes")


def _validate_class_name(v: object, path: str, errs: ErrorList) -> None:
    if v:
        for m in validators.is_dns1123_subdomain(str(v)):
            errs.invalid(path, v, m)


def validate_persistent_volume(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidatePersistentVolume (and ValidatePersistentVolumeUpdate on update)."""
    spec = sub(obj, "spec")
    _validate_access_modes(strs(spec.get("accessModes")), "spec.accessModes", errs, "")
    cap = spec.get("capacity")
    if not cap:
        errs.required("spec.capacity", "")
    if not isinstance(cap, dict) or "storage" not in cap or len(cap) > 1:
        shown = "core.ResourceList(nil)" if cap is None else "core.ResourceList{}" if cap == {} else go_repr(cap)
        errs.append({"reason": "FieldValueNotSupported", "field": "spec.capacity",
                     "message": f'Unsupported value: {shown}: supported values: "storage"'})
    if isinstance(cap, dict) and "storage" in cap:
        q = _quantity(cap["storage"])
        if q is not None and q < 0:
            errs.invalid("spec.capacity[storage]", cap["storage"], "must be greater than or equal to 0")
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy not in ("Delete", "Recycle", "Retain"):
        errs.not_supported("spec.persistentVolumeReclaimPolicy", policy, ["Delete", "Recycle", "Retain"])
    _validate_class_name(spec.get("storageClassName"), "spec.storageClassName", errs)
    mode = spec.get("volumeMode")
    if mode is not None and mode not in ("Block", "Filesystem"):
        errs.not_supported("spec.volumeMode", mode, ["Block", "Filesystem"])
    sources = [s for s in PV_SOURCES if spec.get(s) is not None]
    if not sources:
        errs.required("spec", "must specify a volume type")
    for s in sources[1:]:
        errs.forbidden(f"spec.{s}", "may not specify more than 1 volume type")
    hp = spec.get("hostPath")
    if isinstance(hp, dict) and not hp.get("path"):
        errs.required("spec.hostPath.path", "")
    local = spec.get("local")
    if isinstance(local, dict):
        if not local.get("path"):
            errs.required("spec.local.path", "")
        if spec.get("nodeAffinity") is None:
            errs.required("spec.nodeAffinity", "Local volume requires node affinity")
    nfs = spec.get("nfs")
    if isinstance(nfs, dict):
        if not nfs.get("server"):
            errs.required("spec.nfs.server", "")
        if not nfs.get("path"):
            errs.required("spec.nfs.path", "")
        elif not str(nfs["path"]).startswith("/"):
            errs.invalid("spec.nfs.path", nfs["path"], "must be an absolute path")
    csi = spec.get("csi")
    if isinstance(csi, dict):
        if not csi.get("driver"):
            errs.required("spec.csi.driver", "")
        if not csi.get("volumeHandle"):
            errs.required("spec.csi.volumeHandle", "")
    if old is None:
        return
    ospec = sub(old, "spec")
    if {s: spec.get(s) for s in PV_SOURCES} != {s: ospec.get(s) for s in PV_SOURCES}:
        errs.forbidden("spec.persistentvolumesource", "spec.persistentvolumesource is immutable after creation")
    immutable(errs, "volumeMode", spec.get("volumeMode"), ospec.get("volumeMode"))
    if ospec.get("nodeAffinity") is not None:
        immutable(errs, "nodeAffinity", spec.get("nodeAffinity"), ospec.get("nodeAffinity"))


def validate_persistent_volume_claim(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidatePersistentVolumeClaim (ValidatePersistentVolumeClaimSpec) and, on update,
    ValidatePersistentVolumeClaimUpdate: the spec is immutable except ``volumeName`` set
    once and ``resources.requests.storage`` of a Bound claim, which may only grow."""
    spec = sub(obj, "spec")
    _validate_access_modes(strs(spec.get("accessModes")), "spec.accessModes", errs,
                           "at least 1 access mode is required")
    validators.validate_label_selector(spec.get("selector"), "spec.selector", errs)
    requests = dig(spec, "resources", "requests")
    if not isinstance(requests, dict) or "storage" not in requests:
        errs.required("spec.resources[storage]", "")
    else:
        q = _quantity(requests["storage"])
        if q is not None and q <= 0:
            errs.invalid("spec.resources[storage]", str(requests["storage"]), "must be greater than zero")
    _validate_class_name(spec.get("storageClassName"), "spec.storageClassName", errs)
    mode = spec.get("volumeMode")
    if mode is not None and mode not in ("Block", "Filesystem"):
        errs.not_supported("spec.volumeMode", mode, ["Block", "Filesystem"])
    for ref in ("dataSource", "dataSourceRef"):
        src = spec.get(ref)
        if isinstance(src, dict):
            if not src.get("name"):
                errs.required(f"spec.{ref}.name", "")
            if not src.get("kind"):
                errs.required(f"spec.{ref}.kind", "")
    if old is None:
        return
    ospec = sub(old, "spec")
    new_cmp, old_cmp = dict(spec), dict(ospec)
    if not ospec.get("volumeName"):
        new_cmp["volumeName"] = ospec.get("volumeName")
        old_cmp["volumeName"] = ospec.get("volumeName")
    bound = dig(obj, "status", "phase") == "Bound"
    if bound and isinstance(new_cmp.get("resources"), dict):
        res = dict(new_cmp["resources"])
        reqs = dict(res.get("requests") or {})
        old_req = dig(ospec, "resources", "requests") or {}
        if "storage" in old_req:
            reqs["storage"] = old_req["storage"]
        else:
            reqs.pop("storage", None)
        res["requests"] = reqs
        new_cmp["resources"] = res
    if new_cmp != old_cmp:
        errs.forbidden("spec", "spec is immutable after creation except resources.requests for bound claims")
    new_size = _quantity(dig(spec, "resources", "requests", "storage"))
    old_size = _quantity(dig(ospec, "resources", "requests", "storage"))
    if new_size is not None and old_size is not None and new_size < old_size:
        errs.forbidden("spec.resources.requests.storage", "field can not be less than previous value")


def validate_pod_template(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidatePodTemplate (ValidatePodTemplateSpec at ``template``): its labels and
    annotations, the pod spec; no ephemeral containers."""
    tpl = sub(obj, "template")
    md = sub(tpl, "metadata")
    validators.validate_labels(md.get("labels"), "template.metadata.labels", errs)
    validators.validate_annotations(md.get("annotations"), "template.metadata.annotations", errs)
    spec = tpl.get("spec")
    validators.validate_pod_spec(spec if isinstance(spec, dict) else {}, "template.spec", errs)
    if isinstance(spec, dict) and spec.get("ephemeralContainers"):
        errs.forbidden("template.spec.ephemeralContainers", "ephemeral containers not allowed in pod template")

# --------------------------------------------------------------------------- printers


def access_modes_string(modes: list[str]) -> str:
    """GetAccessModesAsString: RWO, ROX, RWX, RWOP in that order, joined by ``,``."""
    return ",".join(short for mode, short in _SHORT_MODES if mode in modes)


def _storage(v: object) -> str:
    """Quantity.String() of a storage quantity (``""`` when unset)."""
    if v is None:
        return "0"
    try:
        return format_quantity(parse_quantity(v), binary=isinstance(v, str) and v.endswith("i"))  # type: ignore[arg-type]
    except (ValueError, TypeError):
        return str(v)


def volume_class(obj: JSON) -> str:
    """GetPersistentVolume(Claim)Class: the beta storage-class annotation, else spec.storageClassName."""
    ann = dig(obj, "metadata", "annotations") or {}
    if STORAGE_CLASS_ANNOTATION in ann:
        return str(ann[STORAGE_CLASS_ANNOTATION])
    return str(dig(obj, "spec", "storageClassName") or "")


def _phase(obj: JSON) -> str:
    if dig(obj, "metadata", "deletionTimestamp"):
        return "Terminating"
    return str(dig(obj, "status", "phase") or "")


def _pv_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec = sub(obj, "spec")
    claim = ""
    ref = spec.get("claimRef")
    if isinstance(ref, dict):
        claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}"
    return [name(obj), _storage(dig(spec, "capacity", "storage")), access_modes_string(strs(spec.get("accessModes"))),
            spec.get("persistentVolumeReclaimPolicy", ""), _phase(obj), claim, volume_class(obj),
            spec.get("volumeAttributesClassName") or "<unset>", dig(obj, "status", "reason") or "",
            age(obj, now), spec.get("volumeMode") or "<unset>"], None


def _pvc_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec = sub(obj, "spec")
    capacity = modes = ""
    if spec.get("volumeName"):
        modes = access_modes_string(strs(dig(obj, "status", "accessModes")))
        capacity = _storage(dig(obj, "status", "capacity", "storage"))
    return [name(obj), _phase(obj), spec.get("volumeName", ""), capacity, modes, volume_class(obj),
            spec.get("volumeAttributesClassName") or "<unset>", age(obj, now),
            spec.get("volumeMode") or "<unset>"], None


def _pod_template_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    tpl = sub(obj, "template")
    containers = objs(dig(tpl, "spec", "containers"))
    labels = dig(tpl, "metadata", "labels") or {}
    label_s = ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>"
    return [name(obj), ",".join(str(c.get("name", "")) for c in containers),
            ",".join(str(c.get("image", "")) for c in containers), label_s], None


PERSISTENT_VOLUME = Printer((
    NAME_COL,
    col("Capacity", description=columndocs.doc("PersistentVolumeSpec.capacity")),
    col("Access Modes", description=columndocs.doc("PersistentVolumeSpec.accessModes")),
    col("Reclaim Policy", description=columndocs.doc("PersistentVolumeSpec.persistentVolumeReclaimPolicy")),
    col("Status", description=columndocs.doc("PersistentVolumeStatus.phase")),
    col("Claim", description=columndocs.doc("PersistentVolumeSpec.claimRef")),
    col("StorageClass", description="StorageClass of the pv"),
    col("VolumeAttributesClass", description="VolumeAttributesClass of the pv"),
    col("Reason", description=columndocs.doc("PersistentVolumeStatus.reason")),
    AGE_COL,
    col("VolumeMode", description=columndocs.doc("PersistentVolumeSpec.volumeMode"), priority=1),
), _pv_row)
PERSISTENT_VOLUME_CLAIM = Printer((
    NAME_COL,
    col("Status", description=columndocs.doc("PersistentVolumeClaimStatus.phase")),
    col("Volume", description=columndocs.doc("PersistentVolumeClaimSpec.volumeName")),
    col("Capacity", description=columndocs.doc("PersistentVolumeClaimStatus.capacity")),
    col("Access Modes", description=columndocs.doc("PersistentVolumeClaimStatus.accessModes")),
    col("StorageClass", description="StorageClass of the pvc"),
    col("VolumeAttributesClass", description="VolumeAttributesClass of the pvc"),
    AGE_COL,
    col("VolumeMode", description=columndocs.doc("PersistentVolumeClaimSpec.volumeMode"), priority=1),
), _pvc_row)
POD_TEMPLATE = Printer((
    NAME_COL,
    col("Containers", description="Names of each container in the template."),
    col("Images", description="Images referenced by each container in the template."),
    col("Pod Labels", description="The labels for the pod template."),
), _pod_template_row)

# --------------------------------------------------------------------------- strategies


def _prepare_pv_create(obj: JSON) -> None:
    """PrepareForCreate: status reset to Pending with ``lastPhaseTransitionTime`` now."""
    obj["status"] = {"phase": "Pending", "lastPhaseTransitionTime": apitime.now()}


def _prepare_pv_update(new: JSON, old: JSON, subresource: str) -> None:
    """The status strategy's PrepareForUpdate: ``lastPhaseTransitionTime`` now when the phase changes."""
    if subresource != "status":
        return
    st, ost = new.get("status"), old.get("status") or {}
    if isinstance(st, dict) and st.get("phase") != ost.get("phase"):
        st["lastPhaseTransitionTime"] = apitime.now()


def _prepare_pvc_create(obj: JSON) -> None:
    """PrepareForCreate: an empty status (defaulting sets phase Pending)."""
    obj["status"] = {}


PV_STRATEGY = Strategy(prepare_create=_prepare_pv_create, prepare_update=_prepare_pv_update)
PVC_STRATEGY = Strategy(prepare_create=_prepare_pvc_create)
#: podTemplateStrategy: generation 1 on create, +1 when the template changes
POD_TEMPLATE_STRATEGY = Strategy(tracks_generation=True, prepare_update=bump_generation_on("template"))

ENTRIES: tuple[Resource, ...] = (
    Resource("", "v1", "persistentvolumes", "persistentvolume", "PersistentVolume", False, ("pv",), ("status",),
             printer=PERSISTENT_VOLUME,
             schema=KindSchema("PersistentVolume is a piece of storage provisioned by an administrator or a "
                               "provisioner, bound to at most one claim.", {
                                   "spec": ("PersistentVolumeSpec", "The volume: capacity, access modes, source."),
                                   "status": ("PersistentVolumeStatus", "Observed state (read-only).")}, TYPES),
             validate=validate_persistent_volume, default=default_persistent_volume, strategy=PV_STRATEGY),
    Resource("", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", True,
             ("pvc",), ("status",),
             printer=PERSISTENT_VOLUME_CLAIM,
             schema=KindSchema("PersistentVolumeClaim is a user's request for storage, bound to a PersistentVolume.", {
                 "spec": ("PersistentVolumeClaimSpec", "What is requested. Immutable after creation except "
                                                       "resources.requests of a bound claim."),
                 "status": ("PersistentVolumeClaimStatus", "Observed state (read-only).")}, TYPES),
             validate=validate_persistent_volume_claim, default=default_persistent_volume_claim,
             strategy=PVC_STRATEGY),
    Resource("", "v1", "podtemplates", "podtemplate", "PodTemplate", True,
             printer=POD_TEMPLATE,
             schema=KindSchema("PodTemplate is a stored template of pods.", {
                 "template": ("PodTemplateSpec", "The pods' metadata and spec.")}),
             validate=validate_pod_template, default=default_pod_template, strategy=POD_TEMPLATE_STRATEGY),
)
