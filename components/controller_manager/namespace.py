"""The namespace controller: empties a namespace that is being deleted, then removes the
``kubernetes`` finalizer so the apiserver can delete it (``pkg/controller/namespace``:
``namespace_controller.go``, ``deletion/namespaced_resources_deleter.go``,
``deletion/status_condition_utils.go``).

One sync of a namespace with a deletionTimestamp whose ``spec.finalizers`` still holds
``kubernetes`` (``namespacedResourcesDeleter.Delete``):

1. ``status.phase`` is made ``Terminating`` if it is not yet (the apiserver's DELETE already
   sets it).
2. ``deleteAllContent``: for every namespaced resource with the ``delete`` verb — the
   registry's built-in ones and what discovery lists in other groups (custom resources) —
   ``deleteAllContentForGroupVersionResource``: an estimate of the graceful termination still
   to come (pods only: the largest ``terminationGracePeriodSeconds`` of the non-terminal pods,
   0 once that much time has passed since the namespace's deletionTimestamp), then one
   ``deletecollection`` with ``propagationPolicy: Background`` (or, where the resource has no
   ``deletecollection`` verb, a list and one DELETE per object), then a list to check what is
   left. Objects left with finalizers count as normal (estimate ``finalizerEstimateSeconds``,
   15 s); objects left without finalizers and without an estimate are an error
   (``unexpected items still remain in namespace: NS for gvr: GVR``). Errors of one resource
   do not stop the others. Up to :data:`CONTENT_DELETERS` resources are emptied concurrently.
3. The namespace's five deletion conditions (``NamespaceDeletionDiscoveryFailure``,
   ``NamespaceDeletionGroupVersionParsingFailure``, ``NamespaceDeletionContentFailure``,
   ``NamespaceContentRemaining``, ``NamespaceFinalizersRemaining``) are written to
   ``status.conditions`` when they change, with Kubernetes' reasons and messages
   (``Some resources are remaining: pods. has 1 resource instances``…), so
   ``kubectl describe ns`` shows why a namespace is stuck.
4. Nothing left: ``PUT /api/v1/namespaces/NAME/finalize`` without ``kubernetes``, in the same
   sync (a namespace whose objects all went at once — ConfigMaps, ServiceAccounts,
   Deployments with background propagation — is finalized without waiting).

Timing (the emulator's one deviation, for test suites that delete a namespace per test):
Kubernetes re-checks a namespace with content left after ``estimate/2 + 1`` seconds (16 s for
pods with the default 30 s grace period; its informer events wait
``namespaceDeletionGracePeriod``, 5 s, for HA apiservers). Here a namespace with content left
is re-checked after at most :data:`RECHECK_SECONDS`, and at once when a pod in it is deleted
(the pods informer, which the controller-manager shares anyway), since a pod ended by its
kubelet is what a terminating namespace usually waits for. What is deleted, in which order,
and what the namespace's status says are as Kubernetes'.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from dataclasses import dataclass, field

from controlplane import apitime
from controlplane.api.resources import NAMESPACES, PODS, REGISTRY, Resource
from controlplane.client.rest import ApiError
from controlplane.log import event

from .controller import Controller, ControllerContext
from .controller_utils import meta, name_of

log = logging.getLogger("controller-manager")

#: client-go's NamespaceIndex: objects by ``metadata.namespace`` (MetaNamespaceIndexFunc)
NAMESPACE_INDEX = "namespace"

FINALIZER = "kubernetes"
#: the estimate for objects held by finalizers (namespaced_resources_deleter.go finalizerEstimateSeconds)
FINALIZER_ESTIMATE_SECONDS = 15
#: resources emptied at once in one pass (Kubernetes goes through them one by one, in the
#: random order of a Go map: no order is promised, so they may as well overlap)
CONTENT_DELETERS = 16
#: the longest wait, in seconds, before a namespace with content left is checked again
RECHECK_SECONDS = 1.0

#: the condition types the deleter maintains, in Kubernetes' order (status_condition_utils.go conditionTypes)
CONDITION_TYPES = ("NamespaceDeletionDiscoveryFailure", "NamespaceDeletionGroupVersionParsingFailure",
                   "NamespaceDeletionContentFailure", "NamespaceContentRemaining", "NamespaceFinalizersRemaining")
#: reason and message of each condition type while it is False (okReasons, okMessages)
OK = {
    "NamespaceDeletionDiscoveryFailure": ("ResourcesDiscovered", "All resources successfully discovered"),
    "NamespaceDeletionGroupVersionParsingFailure": ("ParsedGroupVersions", "All legacy kube types successfully parsed"),
    "NamespaceDeletionContentFailure": ("ContentDeleted",
                                        "All content successfully deleted, may be waiting on finalization"),
    "NamespaceContentRemaining": ("ContentRemoved", "All content successfully removed"),
    "NamespaceFinalizersRemaining": ("ContentRemoved", "All content successfully removed"),
}


def deletable_resources() -> list[Resource]:
    """The registry's namespaced resources with the ``delete`` verb (discovery's
    ``SupportsAllVerbs{delete}`` filter), ``bindings`` and other create-only ones left out."""
    return [r for r in REGISTRY if r.namespaced and "delete" in r.verbs]


async def discovered_resources(client) -> list[Resource]:
    """Namespaced resources the apiserver serves in groups the built-in registry does not
    have (custom resources), at each group's preferred version, from discovery
    (``namespaced_resources_deleter.go`` deletes what ``ServerPreferredNamespacedResources``
    lists). Raises :class:`ApiError` when discovery does not answer."""
    builtin_groups = {r.group for r in REGISTRY}
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
            if "/" in e.get("name", "/") or not e.get("namespaced") or "delete" not in verbs:
                continue
            out.append(Resource(group, version, e["name"], e.get("singularName") or "", e.get("kind") or "",
                                True, verbs=verbs))
    return out


def _namespace_of(obj: dict) -> tuple[str, ...]:
    ns = meta(obj).get("namespace")
    return (ns,) if ns else ()


def _gvr(res: Resource) -> str:
    """``resource.group`` as Kubernetes prints a GroupResource in the conditions' messages."""
    return f"{res.plural}.{res.group}"


@dataclass
class ContentLeft:
    """What one ``deleteAllContent`` pass left behind: the estimate in seconds, objects left
    per resource (``pods.``: 2), objects per finalizer, and the errors met."""

    estimate: int = 0
    per_resource: dict[str, int] = field(default_factory=dict)
    per_finalizer: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    discovery_error: str | None = None


def deletion_conditions(left: ContentLeft) -> dict[str, tuple[str, str, str]]:
    """The deleter's condition of each type after a pass, ``type -> (status, reason,
    message)`` (``namespaceConditionUpdater``: ``ProcessDiscoverResourcesErr``,
    ``ProcessContentTotals``, ``makeDeleteContentCondition``; the "ok" variant otherwise)."""
    out = {t: ("False", *OK[t]) for t in CONDITION_TYPES}
    if left.discovery_error:
        out["NamespaceDeletionDiscoveryFailure"] = ("True", "DiscoveryFailed", left.discovery_error)
    if left.errors:
        msgs = sorted(left.errors)
        out["NamespaceDeletionContentFailure"] = (
            "True", "ContentDeletionFailed",
            f"Failed to delete all resource types, {len(msgs)} remaining: {', '.join(msgs)}")
    remaining = sorted(f"{gvr} has {n} resource instances" for gvr, n in left.per_resource.items() if n)
    if remaining:
        out["NamespaceContentRemaining"] = ("True", "SomeResourcesRemain",
                                            f"Some resources are remaining: {', '.join(remaining)}")
    finalizers = sorted(f"{f} in {n} resource instances" for f, n in left.per_finalizer.items() if n)
    if finalizers:
        out["NamespaceFinalizersRemaining"] = ("True", "SomeFinalizerRemain",
                                               f"Some finalizers are remaining: {', '.join(finalizers)}")
    return out


def apply_conditions(ns: dict, wanted: dict[str, tuple[str, str, str]]) -> bool:
    """Write ``wanted`` into ``ns.status.conditions`` in place (``updateConditions``: a missing
    type is appended; a changed one keeps its lastTransitionTime unless its status flips).
    Returns whether anything changed."""
    conditions = ns.setdefault("status", {}).setdefault("conditions", [])
    changed = False
    for t in CONDITION_TYPES:
        status, reason, message = wanted[t]
        cur = next((c for c in conditions if c.get("type") == t), None)
        if cur is None:
            conditions.append({"type": t, "status": status, "lastTransitionTime": apitime.now(),
                               "reason": reason, "message": message})
            changed = True
        elif (cur.get("status"), cur.get("reason"), cur.get("message")) != (status, reason, message):
            if cur.get("status") != status:
                cur["lastTransitionTime"] = apitime.now()
            cur.update(status=status, reason=reason, message=message)
            changed = True
    return changed


class NamespaceController(Controller):
    """See the module docstring."""

    name = "namespace"
    workers = 2

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.namespaces = ctx.informers.informer(NAMESPACES)
        self.namespaces.add_handlers(self._changed, lambda old, new: self._changed(new), None)
        self.pods = ctx.informers.informer(PODS)
        self.pods.add_indexer(NAMESPACE_INDEX, _namespace_of)
        self.pods.add_handlers(None, None, self._pod_deleted)
        #: resource -> verb not served (405/404 answered): operationNotSupportedCache
        self._not_supported: set[tuple[str, str]] = set()

    def _changed(self, ns: dict) -> None:
        if meta(ns).get("deletionTimestamp"):
            self.enqueue(name_of(ns))

    def _pod_deleted(self, pod: dict) -> None:
        ns = self.namespaces.store.get(meta(pod).get("namespace") or "")
        if ns is not None and meta(ns).get("deletionTimestamp"):
            self.enqueue(name_of(ns))

    async def sync(self, key: str) -> None:
        ns = self.namespaces.store.get(key)
        if ns is None or not meta(ns).get("deletionTimestamp"):
            return
        if FINALIZER not in ((ns.get("spec") or {}).get("finalizers") or []):
            return
        ns = copy.deepcopy(ns)
        if (ns.get("status") or {}).get("phase") != "Terminating":
            ns.setdefault("status", {})["phase"] = "Terminating"
            ns = await self._update_status(ns) or ns
        left = await self.delete_all_content(key, apitime.parse_time(meta(ns)["deletionTimestamp"]))
        if apply_conditions(ns, deletion_conditions(left)):
            await self._update_status(ns)
        if left.errors or left.discovery_error:
            raise RuntimeError(f"deletion of namespace {key} failed: "
                               f"{'; '.join(filter(None, [left.discovery_error, *left.errors]))}")
        if left.estimate > 0 or any(left.per_resource.values()):
            # Kubernetes waits estimate/2 + 1 s here; see the module docstring
            event(log, "namespace.content_remaining", namespace=key, estimate_seconds=left.estimate,
                  objects=sum(left.per_resource.values()))
            self.queue.add_after(key, RECHECK_SECONDS)
            return
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": copy.deepcopy(meta(ns)),
                "spec": {"finalizers": [f for f in (ns.get("spec") or {}).get("finalizers") or []
                                        if f != FINALIZER]}}
        try:
            await self.client.update(NAMESPACES, body, "finalize")
        except ApiError as e:
            if e.code != 404:
                raise
        event(log, "namespace.finalized", namespace=key)

    async def _update_status(self, ns: dict) -> dict | None:
        """PUT the namespace's status; the stored object, or None when it is gone or changed
        meanwhile (the next event syncs again)."""
        try:
            return await self.client.update_status(NAMESPACES, ns)
        except ApiError as e:
            if e.code not in (404, 409):
                raise
            return None

    async def delete_all_content(self, namespace: str, deleted_at: float) -> ContentLeft:
        """``deleteAllContent`` for ``namespace`` (deletionTimestamp ``deleted_at``, epoch
        seconds): see the module docstring. Never raises for one resource's failure; they are
        collected in the returned :class:`ContentLeft`."""
        left = ContentLeft()
        resources = deletable_resources()
        try:
            resources += await discovered_resources(self.client)
        except ApiError as e:
            left.discovery_error = f"Discovery failed for some groups: {e}"[:300]
        seen: set[str] = set()
        todo: list[Resource] = []
        for res in resources:
            if res.etcd_dir in seen and res.group:
                continue
            seen.add(res.etcd_dir)
            todo.append(res)
        limit = asyncio.Semaphore(CONTENT_DELETERS)

        async def one(res: Resource) -> None:
            async with limit:
                try:
                    await self._delete_gvr(res, namespace, deleted_at, left)
                except ApiError as e:
                    left.errors.append(f"{_gvr(res)}: {e}"[:300])

        await asyncio.gather(*(one(r) for r in todo))
        return left

    async def _delete_gvr(self, res: Resource, namespace: str, deleted_at: float, left: ContentLeft) -> None:
        """``deleteAllContentForGroupVersionResource`` for one resource, into ``left``."""
        estimate = 0
        if (res.group, res.plural) == ("", "pods"):
            estimate = self._pods_estimate(namespace, deleted_at)
        if "deletecollection" in res.verbs and (res.plural, "deletecollection") not in self._not_supported:
            try:
                await self.client.delete_collection(res, namespace, propagation_policy="Background")
            except ApiError as e:
                if e.code not in (404, 405):
                    raise
                self._not_supported.add((res.plural, "deletecollection"))
                await self._delete_each(res, namespace)
        else:
            await self._delete_each(res, namespace)
        items = await self._list(res, namespace)
        if not items:
            return
        finalizers: dict[str, int] = {}
        for obj in items:
            for f in meta(obj).get("finalizers") or []:
                finalizers[f] = finalizers.get(f, 0) + 1
        left.per_resource[_gvr(res)] = len(items)
        for f, n in finalizers.items():
            left.per_finalizer[f] = left.per_finalizer.get(f, 0) + n
        if estimate:
            left.estimate = max(left.estimate, estimate)
        elif finalizers:
            left.estimate = max(left.estimate, FINALIZER_ESTIMATE_SECONDS)
        else:
            left.errors.append(f"unexpected items still remain in namespace: {namespace} for gvr: "
                               f"{res.group}/{res.version}, Resource={res.plural}")

    def _pods_estimate(self, namespace: str, deleted_at: float) -> int:
        """``estimateGracefulTerminationForPods`` from the pods informer: the largest
        ``terminationGracePeriodSeconds`` of the namespace's non-terminal pods, 0 once that
        many seconds have passed since the namespace's deletion."""
        estimate = 0
        for pod in self.pods.by_index(NAMESPACE_INDEX, namespace):
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
            if isinstance(grace, int) and grace > estimate:
                estimate = grace
        return 0 if self.ctx.clock() - deleted_at >= estimate else estimate

    async def _list(self, res: Resource, namespace: str) -> list[dict] | None:
        """The resource's objects in ``namespace``; None where list is not served."""
        if "list" not in res.verbs or (res.plural, "list") in self._not_supported:
            return None
        try:
            return (await self.client.list(res, namespace)).get("items") or []
        except ApiError as e:
            if e.code not in (404, 405):
                raise
            self._not_supported.add((res.plural, "list"))
            return None

    async def _delete_each(self, res: Resource, namespace: str) -> None:
        """``deleteEachItem``: list, then DELETE each object with background propagation."""
        for obj in await self._list(res, namespace) or []:
            try:
                await self.client.delete(res, meta(obj)["name"], namespace, propagation_policy="Background")
            except ApiError as e:
                if e.code not in (404, 405):
                    raise
