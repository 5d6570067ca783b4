"""VolumeZone (PreFilter, Filter): the zone and region labels of the volumes a pod's bound
claims use must match the node's.

Facts from ``pkg/scheduler/framework/plugins/volumezone/volume_zone.go`` (the topology labels
``topology.kubernetes.io/zone`` / ``region`` and their ``failure-domain.beta.kubernetes.io``
forerunners; a volume's value may list several zones joined by ``__``
(``volumehelpers.LabelZonesToSet``); an unbound claim of a WaitForFirstConsumer class is left to
VolumeBinding; a node without any topology label fits; ``ErrReasonConflict``; a missing claim or
volume is UnschedulableAndUnresolvable). Objects are read from ``handle.listers``.
"""

from __future__ import annotations

from typing import Any

from components.scheduler.framework import SKIP, UNSCHEDULABLE_AND_UNRESOLVABLE, Status
from controlplane import volume as vol

NAME = "VolumeZone"
STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"
TOPOLOGY_LABELS = ("topology.kubernetes.io/zone", "topology.kubernetes.io/region",
                   "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region")


class VolumeZone:
    """The VolumeZone plugin (see the module docstring)."""

    name = NAME

    def __init__(self, args: dict | None = None, handle: Any = None) -> None:
        self.handle = handle

    def events_to_register(self) -> list[tuple[str, str]]:
        return [("PersistentVolumeClaim", "Add"), ("PersistentVolumeClaim", "Update"),
                ("PersistentVolume", "Add"), ("PersistentVolume", "Update"),
                ("StorageClass", "Add"), ("Node", "Add"), ("Node", "UpdateNodeLabel")]

    def _store(self, plural: str) -> dict[str, dict[str, Any]]:
        lister = (getattr(self.handle, "listers", None) or {}).get(plural)
        store: dict[str, dict[str, Any]] = getattr(lister, "store", None) or {}
        return store

    def pre_filter(self, state: Any, pod: Any, snapshot: Any) -> Status | None:
        names = vol.pod_claim_names(pod.pod)
        if not names:
            return Status(SKIP)
        claims, pvs = self._store("persistentvolumeclaims"), self._store("persistentvolumes")
        classes = {str((c.get("metadata") or {}).get("name")): c for c in self._store("storageclasses").values()}
        constraints: list[tuple[str, set[str]]] = []
        for _vname, cname in names:
            c = claims.get(f"{pod.namespace}/{cname}")
            if c is None:
                return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, f'persistentvolumeclaim "{cname}" not found')
            pv_name = (c.get("spec") or {}).get("volumeName")
            if not pv_name:
                cls = vol.claim_class(c)
                if not cls:
                    return Status(UNSCHEDULABLE_AND_UNRESOLVABLE,
                                  "PersistentVolumeClaim had no pv name and storageClass name")
                if cls not in classes:
                    return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, f'storageclass.storage.k8s.io "{cls}" not found')
                if vol.is_delay_binding_mode(c, classes):
                    continue   # unbound volumes are VolumeBinding's
                return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolume had no name")
            pv = pvs.get(pv_name)
            if pv is None:
                return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, f'persistentvolume "{pv_name}" not found')
            labels = (pv.get("metadata") or {}).get("labels") or {}
            for k in TOPOLOGY_LABELS:
                if k in labels:
                    constraints.append((k, set(str(labels[k]).split("__"))))
        if not constraints:
            return Status(SKIP)
        state[STATE_KEY] = constraints
        return None

    def filter(self, state: Any, pod: Any, node: Any) -> Status | None:
        constraints = state.get(STATE_KEY)
        if not constraints or not any(k in node.labels for k in TOPOLOGY_LABELS):
            return None
        for k, values in constraints:
            if node.labels.get(k) not in values:
                return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return None
