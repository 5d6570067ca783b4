"""The PersistentVolume controller (``persistentvolume-binder``): binds claims to volumes,
provisions volumes for claims of a StorageClass (simulated, :mod:`.provisioner`), and
releases, deletes or fails volumes whose claim went away.

Facts from ``pkg/controller/volume/persistentvolume/pv_controller.go`` (syncClaim,
syncUnboundClaim, syncBoundClaim, syncVolume, bind, bindVolumeToClaim, bindClaimToVolume,
updateClaimStatus, updateVolumePhase, unbindVolume, reclaimVolume, provisionClaim,
provisionClaimOperationExternal, the event reasons and messages),
``pv_controller_base.go`` (two informers feeding a claim queue and a volume queue, one
worker each, a resync of every claim and volume each ``--pvclaimbinder-sync-period``,
15 s; an own cache of the objects it wrote so a stale informer copy is never acted on)
and ``index.go`` / ``util/util.go`` (the matching, in :mod:`controlplane.volume`).

Phases: a claim is Pending until bound, Bound, or Lost when its volume went; a volume is
Pending until first synced, then Available, Bound, Released when its claim is gone, or
Failed when its reclaim policy cannot be carried out. Queue keys are ``claim:<ns>/<name>``
and ``volume:<name>``.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any

from controlplane import volume as vol
from controlplane.api.groups import storage as storage_group
from controlplane.api.resources import NODES, get
from controlplane.client.rest import ApiError
from controlplane.log import event

from ..controller import Controller, ControllerContext
from ..controller_utils import meta
from . import defaultclass, provisioner

log = logging.getLogger("controller-manager")

PVCS = get("persistentvolumeclaims")
PVS = get("persistentvolumes")
STORAGECLASSES = get("storageclasses", storage_group.GROUP)
COMPONENT = "persistentvolume-controller"
#: --pvclaimbinder-sync-period
SYNC_PERIOD = 15.0

# event reasons (pkg/controller/volume/events/event.go)
FAILED_BINDING = "FailedBinding"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
EXTERNAL_PROVISIONING = "ExternalProvisioning"
PROVISIONING = "Provisioning"
PROVISIONING_SUCCEEDED = "ProvisioningSucceeded"
PROVISIONING_FAILED = "ProvisioningFailed"
VOLUME_MISMATCH = "VolumeMismatch"
CLAIM_LOST = "ClaimLost"
CLAIM_MISBOUND = "ClaimMisbound"
VOLUME_FAILED_DELETE = "VolumeFailedDelete"
VOLUME_FAILED_RECYCLE = "VolumeFailedRecycle"
VOLUME_DELETE = "VolumeDelete"

MSG_NO_CLASS = "no persistent volumes available for this claim and no storage class is set"
MSG_WFFC = "waiting for first consumer to be created before binding"


def external_provisioning_message(name: str) -> str:
    """The ExternalProvisioning event's message (provisionClaimOperationExternal)."""
    return (f"Waiting for a volume to be created either by the external provisioner '{name}' or manually by "
            "the system administrator. If volume creation is delayed, please verify that the provisioner is "
            "running and correctly registered.")


def _rv(obj: dict[str, Any] | None) -> int:
    s = str(meta(obj or {}).get("resourceVersion") or "")
    return int(s) if s.isdigit() else -1


def _newest(store: dict[str, dict[str, Any]], written: dict[str, dict[str, Any]], key: str
            ) -> dict[str, Any] | None:
    """A copy of the informer's object, or of what the controller wrote when that is newer
    (storeObjectUpdate); a written copy the informer caught up with is forgotten. None when the
    informer has no such object (deleted)."""
    cached = store.get(key)
    mine = written.get(key)
    if mine is not None and cached is not None and _rv(mine) > _rv(cached):
        return copy.deepcopy(mine)
    if mine is not None:
        written.pop(key, None)
    return copy.deepcopy(cached) if cached is not None else None


def mismatch_reason(claim: dict[str, Any], volume: dict[str, Any]) -> str | None:
    """checkVolumeSatisfyClaim: why the requested ``volume`` cannot serve ``claim``, or None."""
    if vol.capacity_bytes(volume) < vol.requested_bytes(claim):
        return "requested PV is too small"
    if vol.volume_class(volume) != vol.claim_class(claim):
        return "storageClassName does not match"
    if vol.volume_mode_mismatch(claim, volume):
        return "incompatible volumeMode"
    if not vol.access_modes_fit(claim, volume):
        return "incompatible accessMode"
    return None


class PersistentVolumeController(Controller):
    """See the module docstring. One worker (the claim and volume workers of Kubernetes
    run one goroutine each; here one queue holds both kinds of key)."""

    name = "persistentvolume-binder"
    workers = 1

    def __init__(self, ctx: ControllerContext, sync_period: float = SYNC_PERIOD) -> None:
        super().__init__(ctx)
        self.sync_period = sync_period
        self.claims = ctx.informers.informer(PVCS)
        self.volumes = ctx.informers.informer(PVS)
        self.classes = ctx.informers.informer(STORAGECLASSES)
        self.nodes = ctx.informers.informer(NODES)
        self.recorder = ctx.recorder(COMPONENT)
        #: what this controller wrote last, newer than the informers until they catch up
        self._written_claims: dict[str, dict[str, Any]] = {}
        self._written_volumes: dict[str, dict[str, Any]] = {}
        self.claims.add_handlers(self._claim_changed, lambda old, new: self._claim_changed(new),
                                 self._claim_deleted)
        self.volumes.add_handlers(self._volume_changed, lambda old, new: self._volume_changed(new),
                                  self._volume_deleted)
        self.classes.add_handlers(self._class_changed, lambda old, new: self._class_changed(new), None)

    # -- handlers ------------------------------------------------------------------------
    def _claim_changed(self, claim: dict[str, Any]) -> None:
        self.enqueue("claim:" + vol.claim_key(claim))

    def _claim_deleted(self, claim: dict[str, Any]) -> None:
        key = vol.claim_key(claim)
        self._written_claims.pop(key, None)
        name = (claim.get("spec") or {}).get("volumeName")
        if name:
            self.enqueue("volume:" + name)
        for pv in list(self.volumes.store.values()):
            if vol.claim_ref_key(pv) == key:
                self.enqueue("volume:" + str(meta(pv).get("name")))

    def _volume_changed(self, pv: dict[str, Any]) -> None:
        self.enqueue("volume:" + str(meta(pv).get("name")))
        ref = vol.claim_ref_key(pv)
        if ref is not None:
            self.enqueue("claim:" + ref)
        elif (pv.get("status") or {}).get("phase") == "Available":
            self._enqueue_pending_claims(vol.volume_class(pv))

    def _volume_deleted(self, pv: dict[str, Any]) -> None:
        self._written_volumes.pop(str(meta(pv).get("name")), None)
        ref = vol.claim_ref_key(pv)
        if ref is not None:
            self.enqueue("claim:" + ref)

    def _class_changed(self, sc: dict[str, Any]) -> None:
        self._enqueue_pending_claims(str(meta(sc).get("name") or ""))

    def _enqueue_pending_claims(self, cls: str | None = None) -> None:
        for c in list(self.claims.store.values()):
            if vol.ANN_BIND_COMPLETED not in vol.annotations_of(c) and (cls is None or vol.claim_class(c) == cls):
                self.enqueue("claim:" + vol.claim_key(c))

    # -- the controller's view: the informers, or what it wrote when newer ----------------
    def claim(self, key: str) -> dict[str, Any] | None:
        """A copy of the claim ``namespace/name`` as this controller knows it, or None."""
        return _newest(self.claims.store, self._written_claims, key)

    def volume(self, name: str) -> dict[str, Any] | None:
        """A copy of the volume ``name`` as this controller knows it, or None."""
        return _newest(self.volumes.store, self._written_volumes, name)

    def all_volumes(self) -> list[dict[str, Any]]:
        return [v for n in list(self.volumes.store) if (v := self.volume(n)) is not None]

    def class_map(self) -> dict[str, dict[str, Any]]:
        return {str(meta(c).get("name")): c for c in list(self.classes.store.values())}

    # -- the loop ------------------------------------------------------------------------
    async def run(self, workers: int | None = None) -> None:
        """Write the default StorageClass when none is marked default, resync every claim and
        volume each :attr:`sync_period` seconds, run the worker."""
        try:
            await defaultclass.ensure_default_class(self.client, list(self.classes.store.values()))
        except ApiError as e:
            event(log, "storageclass.default_failed", logging.WARNING, error=e.message[:200])
        resync = asyncio.create_task(self._resync_loop(), name="pv-controller-resync")
        try:
            await super().run(workers)
        finally:
            resync.cancel()

    async def _resync_loop(self) -> None:
        while True:
            await asyncio.sleep(self.sync_period)
            self.resync()

    def resync(self) -> None:
        """Enqueue every claim and volume (the periodic resync)."""
        for c in list(self.claims.store.values()):
            self.enqueue("claim:" + vol.claim_key(c))
        for name in list(self.volumes.store):
            self.enqueue("volume:" + name)

    async def sync(self, key: str) -> None:
        kind, _, rest = key.partition(":")
        if kind == "claim":
            claim = self.claim(rest)
            if claim is not None:
                await self.sync_claim(claim)
        elif kind == "volume":
            pv = self.volume(rest)
            if pv is not None:
                await self.sync_volume(pv)

    # -- claims --------------------------------------------------------------------------
    async def sync_claim(self, claim: dict[str, Any]) -> None:
        """syncClaim: a claim the controller has not finished binding, or a bound one."""
        if vol.ANN_BIND_COMPLETED not in vol.annotations_of(claim):
            await self.sync_unbound_claim(claim)
        else:
            await self.sync_bound_claim(claim)

    async def sync_unbound_claim(self, claim: dict[str, Any]) -> None:
        """syncUnboundClaim: find (or provision) a volume for a claim, or bind the one it names."""
        name = (claim.get("spec") or {}).get("volumeName")
        if not name:
            classes = self.class_map()
            delay = vol.is_delay_binding_mode(claim, classes)
            pv = vol.find_matching_volume(claim, self.all_volumes(), delay_binding=delay)
            if pv is not None:
                await self.bind(pv, claim)
                return
            if delay and vol.ANN_SELECTED_NODE not in vol.annotations_of(claim):
                self.recorder.event(claim, "Normal", WAIT_FOR_FIRST_CONSUMER, MSG_WFFC)
            elif vol.claim_class(claim):
                await self.provision_claim(claim, classes)
                return
            else:
                self.recorder.event(claim, "Normal", FAILED_BINDING, MSG_NO_CLASS)
            await self.update_claim_status(claim, "Pending", None)
            return
        pv = self.volume(name)
        if pv is None:
            await self.update_claim_status(claim, "Pending", None)
            return
        ref = (pv.get("spec") or {}).get("claimRef")
        if not ref:
            why = mismatch_reason(claim, pv)
            if why is not None:
                self.recorder.event(claim, "Warning", VOLUME_MISMATCH,
                                    f'Cannot bind to requested volume "{name}": {why}')
                await self.update_claim_status(claim, "Pending", None)
                return
            await self.bind(pv, claim)
        elif vol.is_volume_bound_to_claim(pv, claim):
            await self.bind(pv, claim)
        else:
            if vol.ANN_BOUND_BY_CONTROLLER not in vol.annotations_of(claim):
                self.recorder.event(claim, "Warning", FAILED_BINDING,
                                    "volume \"%s\" already bound to a different claim." % name)
            await self.update_claim_status(claim, "Pending", None)

    async def sync_bound_claim(self, claim: dict[str, Any]) -> None:
        """syncBoundClaim: keep a bound claim Bound, or mark it Lost."""
        name = (claim.get("spec") or {}).get("volumeName")
        if not name:
            await self._lose(claim, "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
            return
        pv = self.volume(name)
        if pv is None:
            await self._lose(claim, "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
            return
        if not (pv.get("spec") or {}).get("claimRef"):
            await self.bind(pv, claim)
        elif vol.is_volume_bound_to_claim(pv, claim):
            await self.update_claim_status(claim, "Bound", pv)
        else:
            await self._lose(claim, "Two claims are bound to the same volume, this one is bound incorrectly",
                             CLAIM_MISBOUND)

    async def _lose(self, claim: dict[str, Any], message: str, reason: str = CLAIM_LOST) -> None:
        if (claim.get("status") or {}).get("phase") != "Lost":
            self.recorder.event(claim, "Warning", reason, message)
        await self.update_claim_status(claim, "Lost", None)

    async def provision_claim(self, claim: dict[str, Any], classes: dict[str, dict[str, Any]]) -> None:
        """provisionClaim with the class's provisioner simulated: annotate the claim with its
        provisioner (ExternalProvisioning event), then create ``pvc-<uid>`` pre-bound to it
        (Provisioning / ProvisioningSucceeded events from the provisioner)."""
        cls_name = vol.claim_class(claim)
        sc = classes.get(cls_name)
        if sc is None:
            self.recorder.event(claim, "Warning", PROVISIONING_FAILED,
                                f'storageclass.storage.k8s.io "{cls_name}" not found')
            await self.update_claim_status(claim, "Pending", None)
            return
        prov = str(sc.get("provisioner") or "")
        if prov == vol.NOT_SUPPORTED_PROVISIONER:
            self.recorder.event(claim, "Warning", PROVISIONING_FAILED,
                                "Failed to create provisioner: no provisionable volume plugin matched")
            await self.update_claim_status(claim, "Pending", None)
            return
        pv_name = provisioner.volume_name(claim)
        if self.volume(pv_name) is not None:
            return   # provisioned already; binding follows its add event
        ann = vol.annotations_of(claim)
        if ann.get(vol.ANN_STORAGE_PROVISIONER) != prov or ann.get(vol.ANN_BETA_STORAGE_PROVISIONER) != prov:
            new = copy.deepcopy(claim)
            a = new["metadata"].setdefault("annotations", {})
            a[vol.ANN_STORAGE_PROVISIONER] = a[vol.ANN_BETA_STORAGE_PROVISIONER] = prov
            claim = await self._write_claim(new)
            self.recorder.event(claim, "Normal", EXTERNAL_PROVISIONING, external_provisioning_message(prov))
        node = None
        selected = vol.annotations_of(claim).get(vol.ANN_SELECTED_NODE)
        if selected:
            node = self.nodes.store.get(selected)
        if (sc.get("volumeBindingMode") == vol.WAIT_FOR_FIRST_CONSUMER) and node is None:
            return   # the provisioner waits for the scheduler's node
        await self.update_claim_status(claim, "Pending", None)
        pv = provisioner.provisioned_volume(claim, sc, node)
        prec = self.ctx.recorder(prov)
        prec.event(claim, "Normal", PROVISIONING,
                   f'External provisioner is provisioning volume for claim "{vol.claim_key(claim)}"')
        try:
            created = await self.client.create(PVS, pv)
        except ApiError as e:
            if e.code != 409:
                prec.event(claim, "Warning", PROVISIONING_FAILED, f"failed to provision volume with StorageClass "
                           f'"{cls_name}": {e.message}')
                raise
            return
        self._written_volumes[pv_name] = created
        event(log, "pv.provisioned", claim=vol.claim_key(claim), volume=pv_name, provisioner=prov,
              node=selected or "")
        prec.event(claim, "Normal", PROVISIONING_SUCCEEDED, f"Successfully provisioned volume {pv_name}")

    # -- binding -------------------------------------------------------------------------
    async def bind(self, pv: dict[str, Any], claim: dict[str, Any]) -> None:
        """bind: the volume's claimRef, its phase Bound, the claim's volumeName and
        annotations, the claim's status Bound (with the volume's capacity and access modes)."""
        pv = await self.bind_volume_to_claim(pv, claim)
        pv = await self.update_volume_phase(pv, "Bound")
        claim = await self.bind_claim_to_volume(claim, pv)
        await self.update_claim_status(claim, "Bound", pv)
        event(log, "pvc.bound", claim=vol.claim_key(claim), volume=meta(pv).get("name"))

    async def bind_volume_to_claim(self, pv: dict[str, Any], claim: dict[str, Any]) -> dict[str, Any]:
        """bindVolumeToClaim / GetBindVolumeToClaim: ``claimRef`` → the claim (uid included);
        ``bound-by-controller`` when the controller, not a user, chose the pair."""
        ref = (pv.get("spec") or {}).get("claimRef")
        want = vol.claim_ref(claim)
        if ref and vol.is_volume_bound_to_claim(pv, claim) and ref.get("uid") == want["uid"]:
            return pv
        new = copy.deepcopy(pv)
        if not vol.is_volume_bound_to_claim(pv, claim):
            new["metadata"].setdefault("annotations", {})[vol.ANN_BOUND_BY_CONTROLLER] = "yes"
        new.setdefault("spec", {})["claimRef"] = want
        return await self._write_volume(new)

    async def bind_claim_to_volume(self, claim: dict[str, Any], pv: dict[str, Any]) -> dict[str, Any]:
        """bindClaimToVolume: ``spec.volumeName`` (``bound-by-controller`` when the controller
        set it) and ``bind-completed``."""
        name = meta(pv).get("name")
        ann = vol.annotations_of(claim)
        if (claim.get("spec") or {}).get("volumeName") == name and vol.ANN_BIND_COMPLETED in ann:
            return claim
        new = copy.deepcopy(claim)
        a = new["metadata"].setdefault("annotations", {})
        if (new.get("spec") or {}).get("volumeName") != name:
            new.setdefault("spec", {})["volumeName"] = name
            a[vol.ANN_BOUND_BY_CONTROLLER] = "yes"
        a[vol.ANN_BIND_COMPLETED] = "yes"
        return await self._write_claim(new)

    async def update_claim_status(self, claim: dict[str, Any], phase: str,
                                  pv: dict[str, Any] | None) -> dict[str, Any]:
        """updateClaimStatus: the phase; Bound copies the volume's access modes and capacity,
        any other phase clears them. Nothing is written when nothing changes."""
        st = dict(claim.get("status") or {})
        new_st = dict(st, phase=phase)
        if pv is not None:
            new_st["accessModes"] = list((pv.get("spec") or {}).get("accessModes") or [])
            new_st["capacity"] = dict((pv.get("spec") or {}).get("capacity") or {})
        else:
            new_st.pop("accessModes", None)
            new_st.pop("capacity", None)
        if new_st == st:
            return claim
        new = copy.deepcopy(claim)
        new["status"] = new_st
        out = await self.client.update_status(PVCS, new)
        self._written_claims[vol.claim_key(out)] = out
        if st.get("phase") != phase:
            event(log, "pvc.phase", claim=vol.claim_key(out), phase=phase)
        return out

    async def update_volume_phase(self, pv: dict[str, Any], phase: str, message: str = "") -> dict[str, Any]:
        """updateVolumePhase: ``status.phase`` (and ``message``) when it differs."""
        st = dict(pv.get("status") or {})
        if st.get("phase") == phase and (st.get("message") or "") == message:
            return pv
        new = copy.deepcopy(pv)
        new_st = dict(st, phase=phase)
        if message:
            new_st["message"] = message
        else:
            new_st.pop("message", None)
        new["status"] = new_st
        out = await self.client.update_status(PVS, new)
        self._written_volumes[str(meta(out).get("name"))] = out
        event(log, "pv.phase", volume=meta(out).get("name"), phase=phase)
        return out

    async def _write_claim(self, claim: dict[str, Any]) -> dict[str, Any]:
        out = await self.client.update(PVCS, claim)
        self._written_claims[vol.claim_key(out)] = out
        return out

    async def _write_volume(self, pv: dict[str, Any]) -> dict[str, Any]:
        out = await self.client.update(PVS, pv)
        self._written_volumes[str(meta(out).get("name"))] = out
        return out

    # -- volumes -------------------------------------------------------------------------
    async def sync_volume(self, pv: dict[str, Any]) -> None:
        """syncVolume: Available without a claim; Bound to its claim; Released (then
        reclaimed) when the claim is gone; unbound again when the claim chose another one."""
        spec = pv.get("spec") or {}
        ref = spec.get("claimRef")
        phase = (pv.get("status") or {}).get("phase")
        if not ref or not ref.get("uid"):
            if phase != "Available" and not meta(pv).get("deletionTimestamp"):
                await self.update_volume_phase(pv, "Available")
            if ref:
                self.enqueue("claim:" + str(vol.claim_ref_key(pv)))
            return
        key = str(vol.claim_ref_key(pv))
        claim = self.claim(key)
        if claim is not None and meta(claim).get("uid") != ref.get("uid"):
            claim = None
        if claim is None:
            if phase not in ("Released", "Failed"):
                if await self._claim_exists(ref):
                    return   # our cache is behind
                pv = await self.update_volume_phase(pv, "Released")
            await self.reclaim_volume(pv)
            return
        cspec = claim.get("spec") or {}
        if not cspec.get("volumeName"):
            self.enqueue("claim:" + key)     # binding not finished: syncClaim completes it
            return
        if cspec.get("volumeName") == meta(pv).get("name"):
            await self.update_volume_phase(pv, "Bound")
            return
        # the claim is bound to another volume
        ann = vol.annotations_of(pv)
        if vol.ANN_DYNAMICALLY_PROVISIONED in ann and spec.get("persistentVolumeReclaimPolicy") == "Delete":
            if phase not in ("Released", "Failed"):
                pv = await self.update_volume_phase(pv, "Released")
            await self.reclaim_volume(pv)
            return
        await self.unbind_volume(pv)

    async def _claim_exists(self, ref: dict[str, Any]) -> bool:
        try:
            live = await self.client.get(PVCS, ref.get("name"), ref.get("namespace"))
        except ApiError as e:
            if e.code == 404:
                return False
            raise
        return bool(meta(live).get("uid") == ref.get("uid"))

    async def unbind_volume(self, pv: dict[str, Any]) -> None:
        """unbindVolume: a controller binding loses its claimRef; a user's pre-binding keeps the
        claim's name (only the uid goes); the volume becomes Available."""
        new = copy.deepcopy(pv)
        ann = new["metadata"].get("annotations") or {}
        if vol.ANN_BOUND_BY_CONTROLLER in ann:
            new["spec"].pop("claimRef", None)
        else:
            new["spec"]["claimRef"] = {k: v for k, v in new["spec"]["claimRef"].items()
                                       if k not in ("uid", "resourceVersion")}
        ann.pop(vol.ANN_BOUND_BY_CONTROLLER, None)
        out = await self._write_volume(new)
        await self.update_volume_phase(out, "Available")

    async def reclaim_volume(self, pv: dict[str, Any]) -> None:
        """reclaimVolume: Retain keeps a Released volume; Delete deletes one this controller
        provisioned (an in-tree volume it cannot delete fails, VolumeFailedDelete); Recycle
        is not supported (VolumeFailedRecycle)."""
        if meta(pv).get("deletionTimestamp") or (pv.get("status") or {}).get("phase") == "Failed":
            return
        policy = (pv.get("spec") or {}).get("persistentVolumeReclaimPolicy") or "Retain"
        name = str(meta(pv).get("name"))
        if policy == "Retain":
            return
        if policy == "Recycle":
            msg = "No recycler plugin found for the volume!"
            self.recorder.event(pv, "Warning", VOLUME_FAILED_RECYCLE, msg)
            await self.update_volume_phase(pv, "Failed", msg)
            return
        if vol.ANN_DYNAMICALLY_PROVISIONED not in vol.annotations_of(pv):
            msg = f'error getting deleter volume plugin for volume "{name}": no deletable volume plugin matched'
            self.recorder.event(pv, "Warning", VOLUME_FAILED_DELETE, msg)
            await self.update_volume_phase(pv, "Failed", msg)
            return
        try:
            await self.client.delete(PVS, name, preconditions={"uid": meta(pv).get("uid")})
        except ApiError as e:
            if e.code not in (404, 409):
                raise
        event(log, "pv.deleted", volume=name, reason="reclaimPolicy Delete")
