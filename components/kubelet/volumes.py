"""The kubelet's volume manager, simulated: a pod's PersistentVolumeClaims must be bound
before its sandbox starts, and the node reports the volumes its pods use.

Facts from ``pkg/kubelet/volumemanager/volume_manager.go`` (WaitForAttachAndMount: the
``FailedMount`` event "Unable to attach or mount volumes: unmounted volumes=[...],
unattached volumes=[...], failed to process volumes=[...]: <errors>", the pod staying
Pending with its containers ContainerCreating, retried), ``populator/
desired_state_of_world_populator.go`` (createVolumeSpec / getPVCExtractPV / getPVSpec: the
claim and its volume read from the apiserver — "error processing PVC <ns>/<name>: ..." with
"failed to fetch PVC from API server", "can't start pod because PVC is being deleted",
"PVC is not bound", "failed to fetch PV <name> from API server") and
``pkg/kubelet/kubelet_node_status.go`` / ``nodestatus/setters.go`` (VolumesInUse;
``volumesAttached`` is written by the attach/detach controller in Kubernetes, here by the
kubelet with the same names). Unique volume names as ``GetUniqueVolumeNameFromSpec``:
``kubernetes.io/csi/<driver>^<volumeHandle>`` for CSI volumes, ``kubernetes.io/<plugin>/<pv>``
for the others (every bound volume is reported, attachable or not: nothing is attached for real).

Nothing is mounted: once every claim is Bound to an existing volume the pod proceeds.
"""

from __future__ import annotations

from typing import Any, Callable

from controlplane.api.resources import get
from controlplane.client.rest import ApiError
from controlplane.volume import pod_claim_names

PVCS = get("persistentvolumeclaims")
PVS = get("persistentvolumes")
FAILED_MOUNT = "FailedMount"
#: plugin names of the in-tree sources (``kubernetes.io/<plugin>``)
PLUGIN_NAMES = {"hostPath": "host-path", "local": "local-volume", "nfs": "nfs", "iscsi": "iscsi", "fc": "fc",
                "rbd": "rbd", "cephfs": "cephfs", "glusterfs": "glusterfs"}
#: retry of a pod whose volumes are not ready: first after this many seconds, doubling up to the max
RETRY_BASE, RETRY_MAX = 1.0, 30.0


def unique_volume_name(pv: dict[str, Any]) -> str:
    """The node-wide name of a PersistentVolume (see the module docstring)."""
    spec = pv.get("spec") or {}
    csi = spec.get("csi")
    if csi:
        return f"kubernetes.io/csi/{csi.get('driver')}^{csi.get('volumeHandle')}"
    name = (pv.get("metadata") or {}).get("name")
    source = next((k for k in spec if k in PLUGIN_NAMES), None)
    return f"kubernetes.io/{PLUGIN_NAMES.get(source or '', 'unknown')}/{name}"


def failed_mount_message(unmounted: list[str], errors: list[str]) -> str:
    """The FailedMount event's message (Go's ``%v`` of string slices)."""
    names = " ".join(unmounted)
    return (f"Unable to attach or mount volumes: unmounted volumes=[{names}], unattached volumes=[], "
            f"failed to process volumes=[{names}]: {'; '.join(errors)}")


class VolumeManager:
    """The volumes of one node's pods. ``client``: RestClient-like (``get``);
    ``on_change()``: called when the node's set of volumes in use changes (the node agent
    then reports its status early, so the Node is written on change only)."""

    def __init__(self, client: Any, on_change: Callable[[], None] | None = None) -> None:
        self.client = client
        self.on_change = on_change
        #: pod uid → unique volume names of its claims
        self.mounted: dict[str, set[str]] = {}
        self._attempts: dict[str, int] = {}

    def needs_mount(self, pod: dict[str, Any]) -> bool:
        """The pod has claims whose volumes this manager has not yet seen bound."""
        uid = (pod.get("metadata") or {}).get("uid", "")
        return uid not in self.mounted and bool(pod_claim_names(pod))

    async def mount(self, pod: dict[str, Any]) -> str | None:
        """Check every claim of ``pod``; None when all are bound (the volumes are then in use on
        the node), else the FailedMount message. Raises ApiError on other failures than 404."""
        md = pod.get("metadata") or {}
        ns, uid = md.get("namespace") or "default", md.get("uid", "")
        unmounted, errors, names = [], [], set()
        for vname, cname in pod_claim_names(pod):
            err, unique = await self._volume_of(ns, cname)
            if err is not None:
                unmounted.append(vname)
                errors.append(f"error processing PVC {ns}/{cname}: {err}")
            elif unique is not None:
                names.add(unique)
        if unmounted:
            self._attempts[uid] = self._attempts.get(uid, 0) + 1
            return failed_mount_message(unmounted, errors)
        self._attempts.pop(uid, None)
        before = self.in_use()
        self.mounted[uid] = names
        if self.in_use() != before and self.on_change is not None:
            self.on_change()
        return None

    def retry_after(self, pod: dict[str, Any]) -> float:
        """Seconds until the next try of a pod whose volumes were not ready (1 s doubling to 30 s)."""
        n = self._attempts.get((pod.get("metadata") or {}).get("uid", ""), 1)
        return float(min(RETRY_BASE * 2 ** max(n - 1, 0), RETRY_MAX))

    async def _volume_of(self, ns: str, cname: str) -> tuple[str | None, str | None]:
        try:
            pvc = await self.client.get(PVCS, cname, ns)
        except ApiError as e:
            if e.code == 404:
                return f"failed to fetch PVC from API server: {e.message}", None
            raise
        if (pvc.get("metadata") or {}).get("deletionTimestamp"):
            return "can't start pod because PVC is being deleted", None
        name = (pvc.get("spec") or {}).get("volumeName")
        if (pvc.get("status") or {}).get("phase") != "Bound" or not name:
            return "PVC is not bound", None
        try:
            pv = await self.client.get(PVS, name)
        except ApiError as e:
            if e.code == 404:
                return f"failed to fetch PV {name} from API server: {e.message}", None
            raise
        return None, unique_volume_name(pv)

    def release(self, uid: str) -> None:
        """The pod is gone or terminated: its volumes are no longer in use here."""
        self._attempts.pop(uid, None)
        before = self.in_use()
        if self.mounted.pop(uid, None) is not None and self.in_use() != before and self.on_change is not None:
            self.on_change()

    def in_use(self) -> list[str]:
        """Sorted unique names of the volumes the node's pods use."""
        return sorted(set().union(*self.mounted.values())) if self.mounted else []

    def node_status(self) -> dict[str, Any]:
        """``volumesInUse`` and ``volumesAttached`` for the node's status (None — removed by a
        merge patch — when empty)."""
        names = self.in_use()
        return {"volumesInUse": names or None,
                "volumesAttached": [{"name": n, "devicePath": ""} for n in names] or None}
