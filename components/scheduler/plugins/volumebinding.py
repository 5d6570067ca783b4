"""VolumeBinding (PreFilter, Filter, Reserve, PreBind): a pod's PersistentVolumeClaims must be
bound, or bindable on the node, before the pod is bound.

Facts from ``pkg/scheduler/framework/plugins/volumebinding/volume_binding.go`` (PreFilter:
a missing claim, a claim being deleted, or an unbound claim of an Immediate class makes the
pod UnschedulableAndUnresolvable; Filter: bound claims' volumes must be reachable from the
node, WaitForFirstConsumer claims need an Available volume reachable from the node or a class
that can provision there; Reserve: AssumePodVolumes; PreBind: BindPodVolumes, then wait until
the PV controller finished every binding, ``bindTimeoutSeconds`` 600) and ``binder.go``
(GetPodVolumeClaims, FindPodVolumes, findMatchingVolumes — claims in ascending size each
take the smallest fitting volume not chosen for another claim —, checkVolumeProvisions —
the class's provisioner is not ``kubernetes.io/no-provisioner`` and its allowedTopologies
match the node —, BindPodVolumes — a chosen volume's ``claimRef`` with
``pv.kubernetes.io/bound-by-controller``, a claim to provision annotated with
``volume.kubernetes.io/selected-node`` —, checkBindings; the reason strings).

The claims, volumes and classes are read from the scheduler's informers, ``handle.listers``
under ``persistentvolumeclaims``, ``persistentvolumes`` and ``storageclasses`` (a missing
lister is empty). Volumes chosen by pods still in their binding cycle are held in
:attr:`VolumeBinding.assumed` so two pods never take the same one.
"""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass, field
from typing import Any

from components.scheduler.framework import ERROR, SKIP, UNSCHEDULABLE_AND_UNRESOLVABLE, Status
from controlplane import volume as vol
from controlplane.api.resources import get
from controlplane.client.rest import ApiError

NAME = "VolumeBinding"
STATE_KEY = "PreFilter" + NAME
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
ERR_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
DEFAULT_BIND_TIMEOUT = 600.0

PVCS = get("persistentvolumeclaims")
PVS = get("persistentvolumes")


@dataclass
class PodVolumes:
    """What one node needs for the pod: (claim, volume name) pairs to bind and claims to provision."""

    static: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    provision: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class VolumeState:
    """PreFilter's result: the pod's bound claims, its WaitForFirstConsumer claims to bind
    (smallest request first), and per feasible node what binding them takes."""

    bound: list[dict[str, Any]]
    to_bind: list[dict[str, Any]]
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    chosen: PodVolumes | None = None


def _rv(obj: Any) -> int:
    s = str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "") if isinstance(obj, dict) else ""
    return int(s) if s.isdigit() else -1


class VolumeBinding:
    """The VolumeBinding plugin (see the module docstring). ``args``: ``bindTimeoutSeconds``."""

    name = NAME

    def __init__(self, args: dict | None = None, handle: Any = None) -> None:
        self.handle = handle
        args = args or {}
        try:
            self.bind_timeout = float(args.get("bindTimeoutSeconds", DEFAULT_BIND_TIMEOUT))
        except (TypeError, ValueError):
            raise ValueError("bindTimeoutSeconds must be a number") from None
        if self.bind_timeout < 0:
            raise ValueError("bindTimeoutSeconds must not be negative")
        #: how often PreBind looks at the informers for the finished bindings (seconds)
        self.poll_interval = 0.1
        #: volume name → claim key, for volumes chosen by pods in their binding cycle
        self.assumed: dict[str, str] = {}

    def events_to_register(self) -> list[tuple[str, str]]:
        return [("PersistentVolumeClaim", "Add"), ("PersistentVolumeClaim", "Update"),
                ("PersistentVolume", "Add"), ("PersistentVolume", "Update"),
                ("StorageClass", "Add"), ("StorageClass", "Update"),
                ("Node", "Add"), ("Node", "UpdateNodeLabel")]

    def _store(self, plural: str) -> dict[str, dict[str, Any]]:
        lister = (getattr(self.handle, "listers", None) or {}).get(plural)
        store: dict[str, dict[str, Any]] = getattr(lister, "store", None) or {}
        return store

    def _classes(self) -> dict[str, dict[str, Any]]:
        return {str((c.get("metadata") or {}).get("name")): c for c in list(self._store("storageclasses").values())}

    # -- scheduling cycle ------------------------------------------------------------------
    def pre_filter(self, state: Any, pod: Any, snapshot: Any) -> Status | None:
        claims = vol.pod_claim_names(pod.pod)
        if not claims:
            return Status(SKIP)
        pvcs, classes = self._store("persistentvolumeclaims"), self._classes()
        bound, to_bind, immediate = [], [], []
        for _vname, cname in claims:
            c = pvcs.get(f"{pod.namespace}/{cname}")
            if c is None:
                return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, f'persistentvolumeclaim "{cname}" not found')
            if (c.get("metadata") or {}).get("deletionTimestamp"):
                return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, f'persistentvolumeclaim "{cname}" is being deleted')
            if vol.is_claim_fully_bound(c):
                bound.append(c)
            elif vol.is_delay_binding_mode(c, classes) and not (c.get("spec") or {}).get("volumeName"):
                to_bind.append(c)
            else:
                immediate.append(c)
        if immediate:
            return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_UNBOUND_IMMEDIATE)
        to_bind.sort(key=vol.requested_bytes)
        state[STATE_KEY] = VolumeState(bound, to_bind)
        return None

    def filter(self, state: Any, pod: Any, node: Any) -> Status | None:
        s: VolumeState | None = state.get(STATE_KEY)
        if s is None:
            return None
        node_obj = node.node or {"metadata": {"name": node.name, "labels": node.labels}}
        pvs = self._store("persistentvolumes")
        for c in s.bound:
            pv = pvs.get(str((c.get("spec") or {}).get("volumeName")))
            if pv is None:
                return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_PV_NOT_EXIST)
            if not vol.node_affinity_matches(pv, node_obj):
                return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_NODE_CONFLICT)
        if not s.to_bind:
            return None
        out = PodVolumes()
        chosen = set(self.assumed)
        volumes = list(pvs.values())
        for c in s.to_bind:
            m = vol.find_matching_volume(c, volumes, node_obj, excluded=chosen, delay_binding=True)
            if m is not None:
                name = str((m.get("metadata") or {}).get("name"))
                chosen.add(name)
                out.static.append((c, name))
            else:
                out.provision.append(c)
        classes = self._classes()
        for c in out.provision:
            sc = classes.get(vol.claim_class(c))
            if sc is None or sc.get("provisioner") == vol.NOT_SUPPORTED_PROVISIONER or \
                    not vol.topology_terms_match(sc.get("allowedTopologies"), node.labels):
                return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_BIND_CONFLICT)
        s.by_node[node.name] = out
        return None

    def reserve(self, state: Any, pod: Any, node_name: str) -> Status | None:
        """AssumePodVolumes: hold the volumes chosen on ``node_name``."""
        s: VolumeState | None = state.get(STATE_KEY)
        if s is None or not s.to_bind:
            return None
        s.chosen = s.by_node.get(node_name) or PodVolumes(provision=list(s.to_bind))
        for c, name in s.chosen.static:
            self.assumed[name] = vol.claim_key(c)
        return None

    def unreserve(self, state: Any, pod: Any, node_name: str) -> None:
        s: VolumeState | None = state.get(STATE_KEY)
        if s is None or s.chosen is None:
            return
        self._release(s.chosen)

    def _release(self, chosen: PodVolumes) -> None:
        for c, name in chosen.static:
            if self.assumed.get(name) == vol.claim_key(c):
                del self.assumed[name]

    # -- binding cycle ---------------------------------------------------------------------
    async def pre_bind(self, state: Any, pod: Any, node_name: str) -> Status | None:
        """BindPodVolumes, then wait until every claim is bound (checkBindings)."""
        s: VolumeState | None = state.get(STATE_KEY)
        if s is None or not s.to_bind or s.chosen is None:
            return None
        chosen = s.chosen
        client = self.handle.client
        try:
            for c, name in chosen.static:
                pv = copy.deepcopy(self._store("persistentvolumes").get(name))
                if pv is None:
                    return Status(ERROR, f'binding volumes: persistentvolume "{name}" not found')
                pv["metadata"].setdefault("annotations", {})[vol.ANN_BOUND_BY_CONTROLLER] = "yes"
                pv.setdefault("spec", {})["claimRef"] = vol.claim_ref(c)
                await client.update(PVS, pv)
            written: dict[str, int] = {}
            for c in chosen.provision:
                cur = copy.deepcopy(self._store("persistentvolumeclaims").get(vol.claim_key(c)) or c)
                cur["metadata"].setdefault("annotations", {})[vol.ANN_SELECTED_NODE] = node_name
                out = await client.update(PVCS, cur)
                written[vol.claim_key(c)] = _rv(out)
            return await self._wait_bound(chosen, written)
        except ApiError as e:
            return Status(ERROR, f"binding volumes: {e.message}")
        finally:
            self._release(chosen)

    async def _wait_bound(self, chosen: PodVolumes, written: dict[str, int]) -> Status | None:
        """Poll the claims informer until every chosen claim is bound; ``written``: claim key →
        the resourceVersion our selected-node write returned (a claim the informer shows at
        that version or later without the annotation failed to provision)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.bind_timeout
        provisioned = set(written)
        keys = [vol.claim_key(c) for c, _ in chosen.static] + sorted(provisioned)
        while True:
            pvcs = self._store("persistentvolumeclaims")
            done = True
            for k in keys:
                c = pvcs.get(k)
                if c is None:
                    return Status(ERROR, f'binding volumes: persistentvolumeclaim "{k.split("/", 1)[1]}" not found')
                if k in provisioned and _rv(c) >= written[k] and not vol.is_claim_fully_bound(c) and \
                        vol.ANN_SELECTED_NODE not in vol.annotations_of(c):
                    return Status(ERROR, f'binding volumes: provisioning failed for PVC "{k.split("/", 1)[1]}"')
                done = done and vol.is_claim_fully_bound(c)
            if done:
                return None
            if loop.time() >= deadline:
                return Status(ERROR, "binding volumes: context deadline exceeded")
            await asyncio.sleep(self.poll_interval)
