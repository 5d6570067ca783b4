"""VolumeRestrictions (PreFilter, Filter, PreFilter extensions): a claim with the
``ReadWriteOncePod`` access mode serves one pod in the whole cluster; while another pod uses
it, no node fits (Unschedulable, so preemption may free it).

Facts from ``pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go``
(PreFilter: a missing claim is UnschedulableAndUnresolvable ``persistentvolumeclaim "<name>"
not found``; the number of other pods using the pod's ReadWriteOncePod claims is counted, and
with none the plugin skips; Filter: ``ErrReasonReadWriteOncePodConflict``; AddPod / RemovePod
adjust the count for preemption's dry run). The in-tree disk conflicts (GCE PD, AWS EBS, RBD,
iSCSI on one node) are not checked. Claims are read from ``handle.listers``
(``persistentvolumeclaims``).
"""

from __future__ import annotations

from typing import Any

from components.scheduler.framework import SKIP, UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE, Status
from controlplane.volume import pod_claim_names

NAME = "VolumeRestrictions"
STATE_KEY = "PreFilter" + NAME
ERR_RWOP_CONFLICT = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"


def _claim_keys(pod: dict[str, Any], namespace: str) -> set[str]:
    return {f"{namespace}/{c}" for _, c in pod_claim_names(pod)}


class VolumeRestrictions:
    """The VolumeRestrictions plugin (see the module docstring)."""

    name = NAME

    def __init__(self, args: dict | None = None, handle: Any = None) -> None:
        self.handle = handle

    def events_to_register(self) -> list[tuple[str, str]]:
        return [("Pod", "Delete"), ("PersistentVolumeClaim", "Add"), ("PersistentVolumeClaim", "Update")]

    def _claims(self) -> dict[str, dict[str, Any]]:
        lister = (getattr(self.handle, "listers", None) or {}).get("persistentvolumeclaims")
        store: dict[str, dict[str, Any]] = getattr(lister, "store", None) or {}
        return store

    def pre_filter(self, state: Any, pod: Any, snapshot: Any) -> Status | None:
        names = pod_claim_names(pod.pod)
        if not names:
            return Status(SKIP)
        claims = self._claims()
        rwop = set()
        for _vname, cname in names:
            key = f"{pod.namespace}/{cname}"
            c = claims.get(key)
            if c is None:
                return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, f'persistentvolumeclaim "{cname}" not found')
            if "ReadWriteOncePod" in ((c.get("spec") or {}).get("accessModes") or []):
                rwop.add(key)
        if not rwop:
            return Status(SKIP)
        count = 0
        for node in snapshot.nodes:
            for key, other in node.pods.items():
                if key != pod.key and _claim_keys(other.pod, other.namespace) & rwop:
                    count += 1
        if count == 0:
            return Status(SKIP)
        state[STATE_KEY] = (frozenset(rwop), count)
        return None

    def _update(self, state: Any, pod: Any, other: Any, sign: int) -> None:
        rwop, count = state[STATE_KEY]   # a tuple: replaced, never changed in place
        if other.key != pod.key and _claim_keys(other.pod, other.namespace) & rwop:
            state[STATE_KEY] = (rwop, count + sign)

    def pre_filter_add_pod(self, state: Any, pod: Any, pod_to_add: Any, node: Any) -> Status | None:
        self._update(state, pod, pod_to_add, 1)
        return None

    def pre_filter_remove_pod(self, state: Any, pod: Any, pod_to_remove: Any, node: Any) -> Status | None:
        self._update(state, pod, pod_to_remove, -1)
        return None

    def filter(self, state: Any, pod: Any, node: Any) -> Status | None:
        s = state.get(STATE_KEY)
        if s is not None and s[1] > 0:
            return Status(UNSCHEDULABLE, ERR_RWOP_CONFLICT)
        return None
