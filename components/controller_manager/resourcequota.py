"""The resourcequota controller (``pkg/controller/resourcequota/resource_quota_controller.go``):
keeps every ResourceQuota's ``status.hard`` equal to ``spec.hard`` and ``status.used`` equal
to what its namespace uses (:func:`controlplane.quota.namespace_usage` over the shared
informers' stores), written through ``/status`` when it differs.

A quota is synced when it is added or its hard limits change (not on its own status
writes: admission's charges would be recounted before the informers see the charged
object), when an object it may count is deleted or a pod turns terminal (the replenishment
controller: usage given back), and every ``resource_quota_sync_period`` seconds
(``--resource-quota-sync-period``, 5 min). The apiserver's ResourceQuota admission charges creates as they happen; this
controller gives back what deletions release and corrects what admission could not know.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from controlplane import quota
from controlplane.api.resources import get
from controlplane.client.rest import ApiError
from controlplane.log import event

from .controller import Controller, ControllerContext
from .controller_utils import meta

log = logging.getLogger("controller-manager")

RESOURCEQUOTAS = get("resourcequotas")
#: the resources whose objects this controller counts (what the informers watch)
COUNTED = (get("pods"), get("services"), get("configmaps"), get("secrets"), get("replicationcontrollers"),
           RESOURCEQUOTAS, get("deployments", "apps"), get("replicasets", "apps"), get("statefulsets", "apps"),
           get("daemonsets", "apps"))
#: --resource-quota-sync-period
SYNC_PERIOD = 300.0


class ResourceQuotaController(Controller):
    """See the module docstring. Queue keys are ``namespace/name`` of quotas."""

    name = "resourcequota"
    workers = 1

    def __init__(self, ctx: ControllerContext, sync_period: float = SYNC_PERIOD) -> None:
        super().__init__(ctx)
        self.sync_period = sync_period
        self.quotas = ctx.informers.informer(RESOURCEQUOTAS)
        self.watched = {r.plural + "." + r.group: ctx.informers.informer(r) for r in COUNTED}
        self.quotas.add_handlers(self._quota_changed, self._quota_updated, None)
        for r in COUNTED:
            if r is RESOURCEQUOTAS:
                continue
            on_update = self._pod_updated if r.kind == "Pod" else None
            self.watched[r.plural + "." + r.group].add_handlers(None, on_update, self._object_changed)

    def _quota_updated(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        hard = (new.get("spec") or {}).get("hard")
        if hard != (old.get("spec") or {}).get("hard") or hard != (new.get("status") or {}).get("hard"):
            self._quota_changed(new)

    def _pod_updated(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        if quota.pod_is_charged(old) and not quota.pod_is_charged(new):
            self._object_changed(new)

    def _quota_changed(self, q: dict[str, Any]) -> None:
        md = meta(q)
        self.enqueue(f"{md.get('namespace')}/{md.get('name')}")

    def _object_changed(self, obj: dict[str, Any]) -> None:
        ns = meta(obj).get("namespace")
        for q in list(self.quotas.store.values()):
            if meta(q).get("namespace") == ns:
                self._quota_changed(q)

    def usage(self, q: dict[str, Any], names: set[str]) -> quota.Usage:
        """``q``'s namespace usage from the informers' stores."""
        ns = meta(q).get("namespace")
        listings = ((r.plural, r.group, r.kind,
                     [o for o in self.watched[r.plural + "." + r.group].store.values() if meta(o).get("namespace") == ns])
                    for r in COUNTED)
        return quota.namespace_usage(q, listings, names)

    async def sync(self, key: str) -> None:
        q = self.quotas.store.get(key)
        if q is None:
            return
        hard = dict((q.get("spec") or {}).get("hard") or {})
        used = quota.fmt(self.usage(q, set(hard)), set(hard))
        status = q.get("status") or {}
        if status.get("hard") == hard and status.get("used") == used:
            return
        new = dict(q)
        new["status"] = {"hard": hard, "used": used}
        try:
            await self.client.update_status(RESOURCEQUOTAS, new)
        except ApiError as e:
            if e.code == 404:
                return
            raise  # 409: the queue retries with the newer copy
        event(log, "resourcequota.synced", quota=key, used=quota.pretty(used))

    async def run(self, workers: int | None = None) -> None:
        """The workers, plus a full resync every ``sync_period`` seconds."""
        async def resync() -> None:
            while True:
                await asyncio.sleep(self.sync_period)  # the resync period, not synchronisation
                for q in list(self.quotas.store.values()):
                    self._quota_changed(q)
        t = asyncio.create_task(resync(), name="resourcequota-resync")
        try:
            await super().run(workers)
        finally:
            t.cancel()
