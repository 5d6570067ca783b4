"""The pvc-protection and pv-protection controllers: a claim a pod still uses, or a volume
still bound to a claim, is not removed while the ``kubernetes.io/pvc-protection`` /
``kubernetes.io/pv-protection`` finalizer (added on create by the apiserver's
StorageObjectInUseProtection admission plugin) holds it.

Facts from ``pkg/controller/volume/pvcprotection/pvc_protection_controller.go`` (processPVC:
add the finalizer when missing, remove it from a claim being deleted once no scheduled pod
references it — checked in the informer's cache, then by a live list of the namespace's
pods, ``askAPIServer``; podUsesPVC: a scheduled pod's ``persistentVolumeClaim`` volume, or a
generic ephemeral volume of a pod not yet shut down; pod events enqueue the pod's claims) and
``pkg/controller/volume/pvprotection/pv_protection_controller.go`` (processPV: the finalizer
goes once the volume is not Bound).
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from controlplane import volume as vol
from controlplane.api.resources import PODS, get
from controlplane.client.rest import ApiError
from controlplane.log import event

from ..controller import Controller, ControllerContext
from ..controller_utils import meta

log = logging.getLogger("controller-manager")

PVCS = get("persistentvolumeclaims")
PVS = get("persistentvolumes")


def pod_uses_claim(pod: dict[str, Any], claim_name: str) -> bool:
    """podUsesPVC: a scheduled pod references the claim through a ``persistentVolumeClaim``
    volume, or through a generic ephemeral volume while the pod is not shut down."""
    if not (pod.get("spec") or {}).get("nodeName"):
        return False
    shut_down = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
    for v in (pod.get("spec") or {}).get("volumes") or []:
        src = v.get("persistentVolumeClaim")
        if src and src.get("claimName") == claim_name:
            return True
        if v.get("ephemeral") is not None and not shut_down and \
                f"{meta(pod).get('name')}-{v.get('name')}" == claim_name:
            return True
    return False


def _with_finalizer(obj: dict[str, Any], finalizer: str, present: bool) -> dict[str, Any]:
    new = copy.deepcopy(obj)
    fins = [f for f in new["metadata"].get("finalizers") or [] if f != finalizer]
    if present:
        fins.append(finalizer)
    if fins:
        new["metadata"]["finalizers"] = fins
    else:
        new["metadata"].pop("finalizers", None)
    return new


def needs_finalizer_work(obj: dict[str, Any], finalizer: str) -> bool:
    """A live object lacking ``finalizer`` (to add) or a deleted one holding it (to remove)."""
    has = finalizer in (meta(obj).get("finalizers") or [])
    return has if meta(obj).get("deletionTimestamp") else not has


class PVCProtectionController(Controller):
    """See the module docstring. Queue keys are claim ``namespace/name``."""

    name = "pvc-protection"
    workers = 1

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.claims = ctx.informers.informer(PVCS)
        self.pods = ctx.informers.informer(PODS)
        self.claims.add_handlers(self._claim_changed, lambda old, new: self._claim_changed(new), None)
        self.pods.add_handlers(self._pod_changed, lambda old, new: self._pod_changed(new), self._pod_changed)

    def _claim_changed(self, claim: dict[str, Any]) -> None:
        if needs_finalizer_work(claim, vol.PVC_PROTECTION_FINALIZER):
            self.enqueue(vol.claim_key(claim))

    def _pod_changed(self, pod: dict[str, Any]) -> None:
        ns = meta(pod).get("namespace") or ""
        for _vol_name, claim in vol.pod_claim_names(pod):
            if f"{ns}/{claim}" in self.claims.store:
                self.enqueue(f"{ns}/{claim}")

    def _in_use(self, pods: list[dict[str, Any]], ns: str, name: str) -> bool:
        return any(meta(p).get("namespace") == ns and pod_uses_claim(p, name) for p in pods)

    async def sync(self, key: str) -> None:
        claim = self.claims.store.get(key)
        if claim is None:
            return
        ns, name = str(meta(claim).get("namespace") or ""), str(meta(claim).get("name") or "")
        fins = meta(claim).get("finalizers") or []
        if not meta(claim).get("deletionTimestamp"):
            if vol.PVC_PROTECTION_FINALIZER not in fins:
                await self.client.update(PVCS, _with_finalizer(claim, vol.PVC_PROTECTION_FINALIZER, True))
                event(log, "pvc.protection_added", claim=key)
            return
        if vol.PVC_PROTECTION_FINALIZER not in fins:
            return
        if self._in_use(list(self.pods.store.values()), ns, name):
            return
        live = (await self.client.list(PODS, ns)).get("items") or []
        if self._in_use(live, ns, name):
            return
        try:
            await self.client.update(PVCS, _with_finalizer(claim, vol.PVC_PROTECTION_FINALIZER, False))
        except ApiError as e:
            if e.code != 404:
                raise
        event(log, "pvc.protection_removed", claim=key)


class PVProtectionController(Controller):
    """See the module docstring. Queue keys are volume names."""

    name = "pv-protection"
    workers = 1

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.volumes = ctx.informers.informer(PVS)
        self.volumes.add_handlers(self._volume_changed, lambda old, new: self._volume_changed(new), None)

    def _volume_changed(self, pv: dict[str, Any]) -> None:
        if needs_finalizer_work(pv, vol.PV_PROTECTION_FINALIZER):
            self.enqueue(str(meta(pv).get("name")))

    async def sync(self, key: str) -> None:
        pv = self.volumes.store.get(key)
        if pv is None:
            return
        fins = meta(pv).get("finalizers") or []
        if not meta(pv).get("deletionTimestamp"):
            if vol.PV_PROTECTION_FINALIZER not in fins:
                await self.client.update(PVS, _with_finalizer(pv, vol.PV_PROTECTION_FINALIZER, True))
                event(log, "pv.protection_added", volume=key)
            return
        if vol.PV_PROTECTION_FINALIZER not in fins or (pv.get("status") or {}).get("phase") == "Bound":
            return
        try:
            await self.client.update(PVS, _with_finalizer(pv, vol.PV_PROTECTION_FINALIZER, False))
        except ApiError as e:
            if e.code != 404:
                raise
        event(log, "pv.protection_removed", volume=key)
