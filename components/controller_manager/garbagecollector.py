"""The garbage collector: deletes objects whose owners are gone, and carries out
Foreground and Orphan deletion of owners.

Simplified from ``pkg/controller/garbagecollector/`` (garbagecollector.go
attemptToDeleteItem, processDeletingDependentsItem, orphanDependents): instead
of a full dependency graph built from every resource, the graph is two indexes on
the shared informer caches of the resources the controller-manager watches
(Deployments, ReplicaSets, ReplicationControllers, DaemonSets, ControllerRevisions,
Pods): uid → object, and
owner uid → dependents, kept with the caches (so an event costs O(its owners),
not a scan of every cached object).

* Background (kubectl's default): when an owner disappears, each dependent whose
  owners are all absent (GET 404 or a different uid) is deleted with
  ``propagationPolicy: Background``; a dependent with other live owners only loses
  the dangling ownerReferences.
* Foreground: an owner with a deletionTimestamp and the ``foregroundDeletion``
  finalizer has its dependents deleted (Foreground too); once none remain the
  finalizer is removed and the apiserver finishes the deletion.
* Orphan: an owner with the ``orphan`` finalizer has its ownerReferences removed
  from its dependents, then the finalizer removed.
"""

from __future__ import annotations

import copy
import logging

from controlplane.api.resources import (
    DEPLOYMENTS,
    PODS,
    REPLICASETS,
    REPLICATIONCONTROLLERS,
    Resource,
    by_kind,
    get,
)
from controlplane.client.rest import ApiError
from controlplane.log import event

from .controller import Controller, ControllerContext
from .controller_utils import meta

log = logging.getLogger("controller-manager")

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"

#: resources whose objects the collector tracks as owners and dependents
WATCHED: tuple[Resource, ...] = (DEPLOYMENTS, REPLICASETS, REPLICATIONCONTROLLERS, PODS,
                                 get("daemonsets", "apps"), get("controllerrevisions", "apps"))


#: informer index names: an object's own uid, and the uids its ownerReferences point to
UID_INDEX = "gc-uid"
OWNER_UID_INDEX = "gc-owner-uid"


def _uid_values(obj: dict) -> tuple:
    return (meta(obj).get("uid"),)


def _owner_uid_values(obj: dict) -> list:
    return [r.get("uid") for r in meta(obj).get("ownerReferences") or []]


def _item(res: Resource, obj: dict) -> str:
    md = meta(obj)
    return f"{res.group}|{res.plural}|{md.get('namespace') or ''}|{md.get('name')}|{md.get('uid')}"


class GarbageCollector(Controller):
    """See the module docstring. Queue items are ``group|plural|namespace|name|uid``."""

    name = "garbagecollector"
    workers = 10

    def __init__(self, ctx: ControllerContext, resources: tuple[Resource, ...] = WATCHED) -> None:
        super().__init__(ctx)
        self.resources = resources
        self._by_plural = {(r.group, r.plural): r for r in resources}
        self._watched = [(res, ctx.informers.informer(res)) for res in resources]
        for res, inf in self._watched:
            inf.add_indexer(UID_INDEX, _uid_values)
            inf.add_indexer(OWNER_UID_INDEX, _owner_uid_values)
            inf.add_handlers(lambda o, r=res: self._changed(r, o),
                             lambda old, new, r=res: self._changed(r, new),
                             lambda o, r=res: self._deleted(r, o))

    # -- graph queries on the caches -------------------------------------------------
    def dependents(self, uid: str | None) -> list[tuple[Resource, dict]]:
        """Cached objects with an ownerReference to ``uid`` (from the informers'
        owner-uid index, as the graph builder's ``uidToNode`` dependents; none for None,
        an object without a uid)."""
        return [(res, obj) for res, inf in self._watched for obj in inf.by_index(OWNER_UID_INDEX, uid)]

    def _cached(self, uid: str | None) -> bool:
        """Some watched cache holds an object with this uid (the uid index)."""
        return any(inf.in_index(UID_INDEX, uid) for _, inf in self._watched)

    # -- events ------------------------------------------------------------------------
    def _changed(self, res: Resource, obj: dict) -> None:
        md = meta(obj)
        fins = md.get("finalizers") or []
        if md.get("deletionTimestamp") and (FOREGROUND in fins or ORPHAN in fins):
            self.enqueue(_item(res, obj))
        refs = md.get("ownerReferences") or []
        if refs and not all(self._cached(r.get("uid")) for r in refs):
            self.enqueue(_item(res, obj))   # maybe dangling: verified in sync
        if md.get("deletionTimestamp"):
            self._owners_waiting(obj)

    def _deleted(self, res: Resource, obj: dict) -> None:
        uid = meta(obj).get("uid")
        for dres, dep in self.dependents(uid):
            self.enqueue(_item(dres, dep))
        self._owners_waiting(obj)

    def _owners_waiting(self, obj: dict) -> None:
        """Re-check owners in foreground deletion when one of their dependents goes."""
        for ref in meta(obj).get("ownerReferences") or []:
            for res in self.resources:
                if res.kind != ref.get("kind"):
                    continue
                key = f"{meta(obj).get('namespace')}/{ref.get('name')}" if res.namespaced else ref.get("name")
                owner = self.informers.store(res).get(key)
                if owner is not None and meta(owner).get("deletionTimestamp"):
                    self.enqueue(_item(res, owner))

    def scan(self) -> None:
        """Queue every cached object that has owners (after the first sync)."""
        for res in self.resources:
            for obj in list(self.informers.store(res).values()):
                if meta(obj).get("ownerReferences") or meta(obj).get("deletionTimestamp"):
                    self._changed(res, obj)

    # -- sync ----------------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        """Process one object: finish its foreground/orphan deletion, or collect it."""
        group, plural, ns, name, uid = key.split("|")
        res = self._by_plural.get((group, plural))
        if res is None:
            return
        obj = self.informers.store(res).get(f"{ns}/{name}" if ns else name)
        if obj is None or meta(obj).get("uid") != uid:
            return
        obj = copy.deepcopy(obj)
        fins = meta(obj).get("finalizers") or []
        if meta(obj).get("deletionTimestamp"):
            if ORPHAN in fins:
                await self._orphan_dependents(res, obj)
                return
            if FOREGROUND in fins:
                await self._delete_dependents(res, obj)
                return
        await self._attempt_to_delete(res, obj)

    async def _owner_state(self, ns: str | None, ref: dict) -> str:
        """``absent``, ``waiting`` (foreground-deleting) or ``solid`` — by a live GET."""
        try:
            res = by_kind(ref.get("kind", ""), ref.get("apiVersion"))
        except KeyError:
            return "solid"   # a kind we do not serve: never collect on its account
        try:
            owner = await self.client.get(res, ref.get("name"), ns if res.namespaced else None)
        except ApiError as e:
            if e.code == 404:
                return "absent"
            raise
        omd = meta(owner)
        if omd.get("uid") != ref.get("uid"):
            return "absent"
        if omd.get("deletionTimestamp") and FOREGROUND in (omd.get("finalizers") or []):
            return "waiting"
        return "solid"

    async def _attempt_to_delete(self, res: Resource, obj: dict) -> None:
        md = meta(obj)
        refs = md.get("ownerReferences") or []
        if not refs:
            return
        states = {r.get("uid"): await self._owner_state(md.get("namespace"), r) for r in refs}
        absent = [r for r in refs if states[r.get("uid")] == "absent"]
        solid = [r for r in refs if states[r.get("uid")] == "solid"]
        waiting = [r for r in refs if states[r.get("uid")] == "waiting"]
        if not absent and not waiting:
            return
        if solid:
            if absent:
                keep = [r for r in refs if r not in absent]
                await self._patch_refs(res, obj, keep)
            return
        if md.get("deletionTimestamp"):
            return
        fins = md.get("finalizers") or []
        policy = "Orphan" if ORPHAN in fins else ("Foreground" if waiting or FOREGROUND in fins
                                                  else "Background")
        try:
            await self.client.delete(res, md["name"], md.get("namespace"), propagation_policy=policy,
                                     preconditions={"uid": md.get("uid")})
        except ApiError as e:
            if e.code not in (404, 409):
                raise
            return
        event(log, "gc.deleted", object=f"{res.kind}/{md.get('namespace')}/{md.get('name')}",
              policy=policy, owners=",".join(f"{r.get('kind')}/{r.get('name')}" for r in refs))

    async def _patch_refs(self, res: Resource, obj: dict, refs: list[dict]) -> None:
        md = meta(obj)
        try:
            await self.client.patch(res, md["name"], {"metadata": {"ownerReferences": refs or None}},
                                    md.get("namespace"))
        except ApiError as e:
            if e.code != 404:
                raise

    async def _remove_finalizer(self, res: Resource, obj: dict, finalizer: str) -> None:
        md = meta(obj)
        left = [f for f in md.get("finalizers") or [] if f != finalizer]
        try:
            await self.client.patch(res, md["name"], {"metadata": {"finalizers": left or None}},
                                    md.get("namespace"))
        except ApiError as e:
            if e.code != 404:
                raise
        event(log, "gc.finalizer_removed", object=f"{res.kind}/{md.get('namespace')}/{md.get('name')}",
              finalizer=finalizer)

    async def _delete_dependents(self, res: Resource, owner: dict) -> None:
        deps = self.dependents(meta(owner).get("uid"))
        blocking = [(r, o) for r, o in deps
                    if any(ref.get("uid") == meta(owner).get("uid") and ref.get("blockOwnerDeletion")
                           for ref in meta(o).get("ownerReferences") or [])]
        for dres, dep in deps:
            dmd = meta(dep)
            if dmd.get("deletionTimestamp"):
                continue
            try:
                await self.client.delete(dres, dmd["name"], dmd.get("namespace"),
                                         propagation_policy="Foreground",
                                         preconditions={"uid": dmd.get("uid")})
            except ApiError as e:
                if e.code not in (404, 409):
                    raise
        if not blocking:
            await self._remove_finalizer(res, owner, FOREGROUND)

    async def _orphan_dependents(self, res: Resource, owner: dict) -> None:
        uid = meta(owner).get("uid")
        for dres, dep in self.dependents(uid):
            keep = [r for r in meta(dep).get("ownerReferences") or [] if r.get("uid") != uid]
            await self._patch_refs(dres, dep, keep)
        await self._remove_finalizer(res, owner, ORPHAN)
