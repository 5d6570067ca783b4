"""The namespace controller: empties a namespace that is being deleted, then
removes the ``kubernetes`` finalizer so the apiserver can delete it
(``pkg/controller/namespace/deletion/namespaced_resources_deleter.go``).

For a namespace with a deletionTimestamp whose ``spec.finalizers`` still holds
``kubernetes``: list every namespaced resource of the registry (and the custom resources
discovery names) in it and delete
each object; while anything is left (pods in their grace period), check again
later; when empty, ``PUT /api/v1/namespaces/NAME/finalize`` without the finalizer.
"""

from __future__ import annotations

import copy
import logging

from controlplane.api.resources import NAMESPACES, REGISTRY, Resource
from controlplane.client.rest import ApiError
from controlplane.log import event

from .controller import Controller, ControllerContext
from .controller_utils import meta, name_of

log = logging.getLogger("controller-manager")

FINALIZER = "kubernetes"
#: seconds between checks while a namespace still has content
RECHECK_SECONDS = 1.0


def deletable_resources() -> list[Resource]:
    """Namespaced resources that can be listed and deleted (not ``bindings``)."""
    return [r for r in REGISTRY if r.namespaced and "list" in r.verbs and "delete" in r.verbs]


async def discovered_resources(client) -> list[Resource]:
    """Namespaced resources the apiserver serves in groups the built-in registry does not
    have (custom resources), at each group's preferred version, from discovery
    (``namespaced_resources_deleter.go`` deletes what ``ServerPreferredNamespacedResources``
    lists); [] when discovery does not answer."""
    builtin_groups = {r.group for r in REGISTRY}
    try:
        groups = await client.request("GET", "/apis")
        out: list[Resource] = []
        for g in (groups or {}).get("groups") or [] if isinstance(groups, dict) else []:
            gv = (g.get("preferredVersion") or {}).get("groupVersion") or ""
            if "/" not in gv or g.get("name") in builtin_groups:
                continue
            group, version = gv.split("/", 1)
            lst = await client.request("GET", f"/apis/{gv}")
            for e in (lst or {}).get("resources") or [] if isinstance(lst, dict) else []:
                verbs = tuple(e.get("verbs") or ())
                if "/" in e.get("name", "/") or not e.get("namespaced") or "list" not in verbs \
                        or "delete" not in verbs:
                    continue
                out.append(Resource(group, version, e["name"], e.get("singularName") or "", e.get("kind") or "",
                                    True, verbs=verbs))
        return out
    except ApiError as e:
        event(log, "namespace.discovery_failed", logging.WARNING, error=str(e)[:160])
        return []


class NamespaceController(Controller):
    """See the module docstring."""

    name = "namespace"
    workers = 2

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.namespaces = ctx.informers.informer(NAMESPACES)
        self.namespaces.add_handlers(self._changed, lambda old, new: self._changed(new), None)

    def _changed(self, ns: dict) -> None:
        if meta(ns).get("deletionTimestamp"):
            self.enqueue(name_of(ns))

    async def sync(self, key: str) -> None:
        ns = self.namespaces.store.get(key)
        if ns is None or not meta(ns).get("deletionTimestamp"):
            return
        if FINALIZER not in ((ns.get("spec") or {}).get("finalizers") or []):
            return
        remaining = 0
        seen = set()
        for res in deletable_resources() + await discovered_resources(self.client):
            if res.etcd_dir in seen and res.group:
                continue
            seen.add(res.etcd_dir)
            try:
                lst = await self.client.list(res, key)
            except ApiError as e:
                if e.code in (404, 405):
                    continue
                raise
            for obj in lst.get("items") or []:
                remaining += 1
                if meta(obj).get("deletionTimestamp"):
                    continue
                try:
                    await self.client.delete(res, meta(obj)["name"], key)
                except ApiError as e:
                    if e.code != 404:
                        raise
        if remaining:
            event(log, "namespace.content_remaining", namespace=key, objects=remaining)
            self.queue.add_after(key, RECHECK_SECONDS)
            return
        body = copy.deepcopy(ns)
        body.setdefault("spec", {})["finalizers"] = [f for f in body["spec"].get("finalizers") or []
                                                     if f != FINALIZER]
        try:
            await self.client.update(NAMESPACES, body, "finalize")
        except ApiError as e:
            if e.code != 404:
                raise
        event(log, "namespace.finalized", namespace=key)
