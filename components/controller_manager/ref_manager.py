"""Claiming dependents by controllerRef: adopt orphans that match the owner's
selector, release owned objects that no longer match, leave others' objects alone
(``pkg/controller/controller_ref_manager.go`` BaseControllerRefManager.ClaimObject,
PodControllerRefManager, ReplicaSetControllerRefManager).

One generic mechanism for any owner/dependent pair (ReplicaSet → Pod,
ReplicationController → Pod, Deployment → ReplicaSet).
"""

from __future__ import annotations

import logging
from typing import Any

from controlplane.api.resources import Resource
from controlplane.client.rest import ApiError
from controlplane.log import event

from .controller_utils import controller_ref, meta, new_controller_ref

log = logging.getLogger("controller-manager")


class RefManager:
    """Claims objects of ``dependent`` for ``owner`` (kind/apiVersion given).

    ``selector`` has ``matches(labels)``. Writes are merge patches of
    ``metadata.ownerReferences`` on the dependent.
    """

    def __init__(self, client: Any, owner: dict, api_version: str, kind: str,
                 selector: Any, dependent: Resource) -> None:
        self.client = client
        self.owner = owner
        self.kind = kind
        self.api_version = api_version
        self.selector = selector
        self.dependent = dependent
        self._can_adopt: bool | None = None

    async def _owner_can_adopt(self) -> bool:
        """Recheck with a fresh GET that the owner still exists with the same uid and
        is not being deleted (RecheckDeletionTimestamp)."""
        if self._can_adopt is None:
            md = meta(self.owner)
            res_ns = md.get("namespace")
            try:
                from controlplane.api.resources import by_kind
                fresh = await self.client.get(by_kind(self.kind, self.api_version), md["name"], res_ns)
                fm = meta(fresh)
                self._can_adopt = fm.get("uid") == md.get("uid") and not fm.get("deletionTimestamp")
            except ApiError:
                self._can_adopt = False
        return self._can_adopt

    async def claim(self, objects: list[dict]) -> list[dict]:
        """The objects this owner controls after adoption/release (ClaimObject)."""
        md = meta(self.owner)
        uid = md.get("uid")
        owner_deleting = bool(md.get("deletionTimestamp"))
        claimed: list[dict] = []
        for obj in objects:
            ref = controller_ref(obj)
            if ref is not None and ref.get("uid") != uid:
                continue  # someone else's
            matches = self.selector.matches(meta(obj).get("labels") or {})
            if ref is not None:
                if matches:
                    claimed.append(obj)
                elif not owner_deleting:
                    await self._release(obj)
                continue
            # an orphan
            if owner_deleting or not matches or meta(obj).get("deletionTimestamp"):
                continue
            if not await self._owner_can_adopt():
                continue
            adopted = await self._adopt(obj)
            if adopted is not None:
                claimed.append(adopted)
        return claimed

    async def _adopt(self, obj: dict) -> dict | None:
        md = meta(obj)
        refs = list(md.get("ownerReferences") or [])
        refs.append(new_controller_ref(self.owner, self.api_version, self.kind))
        try:
            out = await self.client.patch(self.dependent, md["name"],
                                          {"metadata": {"ownerReferences": refs}},
                                          md.get("namespace"))
        except ApiError as e:
            if e.code == 404:
                return None
            raise
        event(log, "controller.adopted", owner=f"{self.kind}/{meta(self.owner).get('name')}",
              dependent=f"{self.dependent.kind}/{md.get('name')}")
        return out

    async def _release(self, obj: dict) -> None:
        md = meta(obj)
        uid = meta(self.owner).get("uid")
        refs = [r for r in md.get("ownerReferences") or [] if r.get("uid") != uid]
        try:
            await self.client.patch(self.dependent, md["name"],
                                    {"metadata": {"ownerReferences": refs or None}},
                                    md.get("namespace"))
        except ApiError as e:
            if e.code not in (404, 422):
                raise
        event(log, "controller.released", owner=f"{self.kind}/{meta(self.owner).get('name')}",
              dependent=f"{self.dependent.kind}/{md.get('name')}")
