"""The garbage collector: deletes objects whose owners are gone, and carries out
Foreground and Orphan deletion of owners, for every kind the apiserver serves —
custom resources included (``pkg/controller/garbagecollector/``: garbagecollector.go,
graph_builder.go, operations.go).

* **Monitors** (graph_builder.go ``syncMonitors``, garbagecollector.go ``GetDeletableResources``):
  one informer on every resource whose verbs include ``list``, ``watch`` and ``delete`` except
  the ignored ``events`` (core and ``events.k8s.io``): the built-in ones from the registry, the
  custom ones from discovery (``/apis``, then each non built-in group's versions, monitored at
  the preferred version). Discovery is polled every :data:`DISCOVERY_RESYNC_SECONDS` (the
  ``garbageCollector.Sync(ctx, discoveryClient, 30*time.Second)`` of kube-controller-manager's
  ``startGarbageCollectorController``): a CRD added later is monitored without a restart, and
  the monitor of a removed one is stopped. A resource another controller already watches
  shares that informer (``ObjectOrMetadataInformerFactory``); the others get a metadata-only
  informer (``ControllerContext.metadata_informer``): the apiserver answers
  ``as=PartialObjectMetadata`` with full objects, so it lists and watches them and keeps only
  ``apiVersion``/``kind``/``metadata`` (:func:`controlplane.client.informer.metadata_only`).
* **The uid graph** (graph_builder.go ``uidToNode``): two indexes on every monitor's cache —
  an object's own uid, and the uids its ownerReferences point to — so an event costs O(its
  owners). Owners' ``apiVersion``/``kind`` are resolved through the registry and discovery
  (the GC's RESTMapper); a kind that is not served raises :class:`RestMappingError` and the
  item is retried later (``attemptToDeleteWorker``: the CRD may be discovered at the next sync).
* **attemptToDelete** (``attemptToDeleteItem``): the item is decided on the monitor's copy,
  its writes conditional on that copy's resourceVersion, and read live only when that meets a
  409 or the item was never observed (Kubernetes always reads it live; see
  :meth:`GarbageCollector._attempt_to_delete`); its owners are
  classified by a live GET (``isDangling``: absent, or present with another uid → dangling;
  remembered in an absent-owner cache of 500 entries, ``NewReferenceCache(500)``). With a
  solid owner, only the dangling / waiting references are removed; with an owner waiting in
  foreground deletion and dependents of its own, the item is deleted ``Foreground``; otherwise
  it is deleted with the policy its own finalizers name (``orphan`` → Orphan,
  ``foregroundDeletion`` → Foreground, else Background), with uid and resourceVersion
  preconditions (``deleteObject``).
* **Foreground** (``processDeletingDependentsItem``): an owner with a deletionTimestamp and the
  ``foregroundDeletion`` finalizer has its dependents queued; when none with
  ``blockOwnerDeletion`` remains, the finalizer is removed.
* **attemptToOrphan** (``orphanDependents``): an owner with the ``orphan`` finalizer has the
  ownerReferences to it removed from its dependents, then the finalizer removed. Both queues
  share the controller's one work queue: attemptToOrphan keys carry the ``orphan:`` prefix.
* **Invalid namespaces** (graph_builder.go ``addDependentToOwners`` /
  ``reportInvalidNamespaceOwnerRef``): a dependent whose ownerReference's uid is an observed
  namespaced object of another namespace (a namespaced dependent in another namespace, or a
  cluster-scoped dependent) gets a Warning ``OwnerRefInvalidNamespace`` event and is queued;
  the owner is then looked up in the dependent's own namespace (so it is absent, and the
  dependent collected when no other owner holds it). A cluster-scoped dependent naming a
  namespaced kind is never collected (``namespacedOwnerOfClusterScopedObjectErr``).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections import OrderedDict
from typing import Any

from controlplane.api.resources import REGISTRY, Resource
from controlplane.client.informer import SharedIndexInformer
from controlplane.client.rest import ApiError
from controlplane.log import event

from .controller import Controller, ControllerContext
from .controller_utils import meta

log = logging.getLogger("controller-manager")

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
#: the event source of the collector's events (garbagecollector.go NewGarbageCollector)
COMPONENT = "garbage-collector-controller"
#: seconds between discovery syncs of the monitored resources
DISCOVERY_RESYNC_SECONDS = 30.0
#: seconds the workers wait for the monitors' first lists before they start anyway
#: (bounded as garbagecollector.go Sync bounds its WaitForNamedCacheSync by the period,
#: waitForStopOrTimeout: one resource that cannot be listed does not stop the collector)
SYNC_TIMEOUT_SECONDS = 30.0
#: a CRD event triggers a discovery sync this many seconds later (coalescing a burst)
CRD_RESYNC_DELAY_SECONDS = 0.2
CRD_KEY = ("apiextensions.k8s.io", "customresourcedefinitions")
#: resources never monitored (graph_builder.go ignoredResources)
IGNORED_RESOURCES = frozenset({("", "events"), ("events.k8s.io", "events")})
#: entries of the absent-owner cache (garbagecollector.go NewReferenceCache(500))
ABSENT_OWNER_CACHE_SIZE = 500
#: the key prefix of attemptToOrphan items in the work queue
ORPHAN_PREFIX = "orphan:"

#: informer index names: an object's own uid, and the uids its ownerReferences point to
UID_INDEX = "gc-uid"
OWNER_UID_INDEX = "gc-owner-uid"


class RestMappingError(Exception):
    """An ownerReference's apiVersion/kind is not served (garbagecollector.go restMappingError)."""

    def __init__(self, kind: str, version: str) -> None:
        super().__init__(f"unable to get REST mapping for {kind}/{version}.")


class _Stale(Exception):
    """A write decided on a cached copy met 409 Conflict: the copy was not the current object."""


class NamespacedOwnerOfClusterScopedObject(Exception):
    """A cluster-scoped object names a namespaced owner: never resolves, the item is dropped."""


def _uid_values(obj: dict) -> tuple:
    return (meta(obj).get("uid"),)


def _owner_uid_values(obj: dict) -> list:
    return [r.get("uid") for r in meta(obj).get("ownerReferences") or []]


def _item(res: Resource, obj: dict) -> str:
    md = meta(obj)
    return f"{res.group}|{res.plural}|{md.get('namespace') or ''}|{md.get('name')}|{md.get('uid')}"


def _deleting_dependents(obj: dict) -> bool:
    md = meta(obj)
    return bool(md.get("deletionTimestamp")) and FOREGROUND in (md.get("finalizers") or [])


def _starts(old: dict | None, new: dict, finalizer: str) -> bool:
    """graph_builder.go deletionStartsWithFinalizer."""
    md = meta(new)
    if not md.get("deletionTimestamp") or finalizer not in (md.get("finalizers") or []):
        return False
    if old is None:
        return True
    omd = meta(old)
    return not omd.get("deletionTimestamp") or finalizer not in (omd.get("finalizers") or [])


def _identity(ref: dict, namespace: str) -> str:
    """graph.go objectReference.String()."""
    return (f"[{ref.get('apiVersion')}/{ref.get('kind')}, namespace: {namespace}, name: {ref.get('name')}, "
            f"uid: {ref.get('uid')}]")


def builtin_monitored() -> list[Resource]:
    """The registry's resources the collector monitors: verbs list, watch and delete, not
    ignored, one per group/resource (the version that stores its objects)."""
    out: dict[tuple[str, str], Resource] = {}
    for r in REGISTRY:
        if "/" in r.plural or (r.group, r.plural) in IGNORED_RESOURCES or not r.stored:
            continue
        if not {"list", "watch", "delete"} <= set(r.verbs):
            continue
        if r.storage_version and r.storage_version != r.version:
            continue
        out.setdefault((r.group, r.plural), r)
    return list(out.values())


class GarbageCollector(Controller):
    """See the module docstring. attemptToDelete keys are ``group|plural|namespace|name|uid``;
    attemptToOrphan keys the same with the ``orphan:`` prefix. ``resources``: the built-in
    resources to monitor (default :func:`builtin_monitored`)."""

    name = "garbagecollector"
    #: --concurrent-gc-syncs (kube-controller-manager default 20)
    workers = 20
    #: a failed item is retried until it succeeds (attemptToDeleteWorker requeueItem)
    max_retries = sys.maxsize
    #: an owner kind not discovered yet (logged at V(5) by attemptToDeleteWorker)
    expected_errors = (RestMappingError,)

    def __init__(self, ctx: ControllerContext, resources: tuple[Resource, ...] | None = None) -> None:
        super().__init__(ctx)
        self.recorder = ctx.recorder(COMPONENT)
        self.builtin = list(resources) if resources is not None else builtin_monitored()
        self._make_metadata = ctx.metadata_informer
        self._monitors: dict[Resource, SharedIndexInformer] = {}
        self._own: set[Resource] = set()
        self._by_plural: dict[tuple[str, str], Resource] = {}
        self._mapping: dict[tuple[str, str], Resource] = {(r.api_version, r.kind): r for r in REGISTRY}
        self._custom_mapping: dict[tuple[str, str], Resource] = {}
        self._absent: OrderedDict[tuple[str, ...], None] = OrderedDict()
        self._running = False
        self._resync_soon: asyncio.Future[None] | None = None
        if self._make_metadata is None:
            # the fakes: monitors at once, on the context's informers
            self._sync_monitors(self.builtin)

    # -- monitors --------------------------------------------------------------------------
    def _add_monitor(self, res: Resource) -> None:
        if self._make_metadata is None or res in self.informers.resources:
            inf: SharedIndexInformer = self.informers.informer(res)
        else:
            inf = self._make_metadata(res)
            self._own.add(res)
        inf.add_indexer(UID_INDEX, _uid_values)
        inf.add_indexer(OWNER_UID_INDEX, _owner_uid_values)
        inf.add_handlers(lambda o, r=res: self._observe(r, None, o, True),
                         lambda old, new, r=res: self._observe(r, old, new, False),
                         lambda o, r=res: self._deleted(r, o))
        if (res.group, res.plural) == CRD_KEY:
            # a CRD added, established or removed changes discovery: sync the monitors now
            # rather than at the next 30 s resync (an addition to garbagecollector.go's periodic
            # Sync, so an owner of a just-created kind is collected as soon as it is deleted)
            inf.add_handlers(lambda o: self._discovery_changed(), lambda old, new: self._discovery_changed(),
                             lambda o: self._discovery_changed())
        self._monitors[res] = inf
        self._by_plural[(res.group, res.plural)] = res
        if res in self._own:
            if self._running:
                inf.start()
        elif inf.has_synced:
            for obj in list(inf.store.values()):   # already filled: replay into the graph
                self._observe(res, None, obj, False)

    def _discovery_changed(self) -> None:
        """Schedule one discovery sync soon (coalesced: several CRD events make one sync)."""
        if not self._running or (self._resync_soon is not None and not self._resync_soon.done()):
            return

        async def soon() -> None:
            await asyncio.sleep(CRD_RESYNC_DELAY_SECONDS)   # coalesce a burst of CRD events
            try:
                await self.resync_monitors()
            except Exception as e:  # never fatal: the periodic sync tries again
                event(log, "gc.resync_failed", logging.WARNING, error=str(e)[:160])
        self._resync_soon = asyncio.ensure_future(soon())

    def _sync_monitors(self, wanted: list[Resource]) -> list[Resource]:
        """Add monitors for the resources of ``wanted`` not monitored yet; returns the others
        now monitored that ``wanted`` lacks (graph_builder.go syncMonitors)."""
        keys = {(r.group, r.plural): r for r in wanted}
        for r in wanted:
            cur = self._by_plural.get((r.group, r.plural))
            if cur is None:
                self._add_monitor(r)
                if self._running:
                    event(log, "gc.monitor_started", resource=f"{r.plural}.{r.group}" if r.group else r.plural)
        return [r for r in self._monitors if (r.group, r.plural) not in keys]

    async def _remove_monitor(self, res: Resource) -> None:
        inf = self._monitors.pop(res, None)
        self._by_plural.pop((res.group, res.plural), None)
        if inf is not None and res in self._own:
            self._own.discard(res)
            await inf.stop()

    @property
    def monitored(self) -> list[Resource]:
        """The resources monitored now."""
        return list(self._monitors)

    async def discover(self) -> tuple[list[Resource], dict[tuple[str, str], Resource]] | None:
        """Custom resources from discovery: ``(monitored, mapping)`` — the resources of every
        non built-in group at its preferred version with verbs list, watch and delete, and
        ``(apiVersion, kind)`` → resource for every served version; None when discovery does
        not answer (the monitors are then kept as they are)."""
        builtin_groups = {r.group for r in REGISTRY}
        monitored: list[Resource] = []
        mapping: dict[tuple[str, str], Resource] = {}
        try:
            groups = await self.client.request("GET", "/apis")
            if not isinstance(groups, dict):
                return [], {}
            for g in groups.get("groups") or []:
                if g.get("name") in builtin_groups:
                    continue
                preferred = (g.get("preferredVersion") or {}).get("groupVersion") or ""
                versions = [v.get("groupVersion") or "" for v in g.get("versions") or []] or [preferred]
                for gv in versions:
                    if "/" not in gv:
                        continue
                    group, version = gv.split("/", 1)
                    lst = await self.client.request("GET", f"/apis/{gv}")
                    for e in (lst or {}).get("resources") or [] if isinstance(lst, dict) else []:
                        if "/" in e.get("name", "/"):
                            continue
                        verbs = tuple(e.get("verbs") or ())
                        res = Resource(group, version, e["name"], e.get("singularName") or "",
                                       e.get("kind") or "", bool(e.get("namespaced")), verbs=verbs)
                        mapping[(gv, res.kind)] = res
                        if gv == preferred and {"list", "watch", "delete"} <= set(verbs) \
                                and (group, res.plural) not in IGNORED_RESOURCES:
                            monitored.append(res)
        except Exception as e:  # discovery down: the monitors stay as they are
            event(log, "gc.discovery_failed", logging.WARNING, error=str(e)[:160])
            return None
        return monitored, mapping

    async def resync_monitors(self) -> None:
        """One discovery sync: monitor the built-in and discovered resources, stop the
        monitors of resources no longer served (garbagecollector.go Sync)."""
        found = await self.discover()
        if found is None:
            self._sync_monitors(self.builtin + [r for r in self._monitors if r not in self.builtin])
            return
        custom, mapping = found
        self._custom_mapping = mapping
        stale = self._sync_monitors(self.builtin + custom)
        for res in stale:
            event(log, "gc.monitor_stopped", resource=f"{res.plural}.{res.group}")
            await self._remove_monitor(res)

    def _resource_for(self, api_version: str, kind: str) -> Resource:
        res = self._mapping.get((api_version, kind)) or self._custom_mapping.get((api_version, kind))
        if res is None:
            for r in self._monitors:   # a custom resource found before its mapping
                if r.api_version == api_version and r.kind == kind:
                    return r
            raise RestMappingError(kind, api_version)
        return res

    # -- graph queries on the caches -------------------------------------------------
    def dependents(self, uid: str | None) -> list[tuple[Resource, dict]]:
        """Cached objects with an ownerReference to ``uid`` (from the monitors' owner-uid
        index, as the graph builder's ``uidToNode`` dependents; none for None, an object
        without a uid)."""
        if uid is None:
            return []
        out: list[tuple[Resource, dict]] = []
        for res, inf in self._monitors.items():   # no await: the dict cannot change meanwhile
            if inf.in_index(OWNER_UID_INDEX, uid):
                out.extend((res, obj) for obj in inf.by_index(OWNER_UID_INDEX, uid))
        return out

    def observed(self, uid: str | None) -> tuple[Resource, dict] | None:
        """The cached object with this uid and its resource (an observed graph node)."""
        for res, inf in list(self._monitors.items()):
            if inf.in_index(UID_INDEX, uid):
                objs = inf.by_index(UID_INDEX, uid)
                if objs:
                    return res, objs[0]
        return None

    # -- events (graph_builder.go processGraphChanges) ---------------------------------
    def _observe(self, res: Resource, old: dict | None, new: dict, added: bool) -> None:
        if res not in self._monitors:
            return
        md = meta(new)
        if old is not None and not md.get("deletionTimestamp"):
            # graph_builder.go processGraphChanges: an update whose ownerReferences are unchanged
            # (referencesDiffs finds nothing) and that starts no deletion leaves the graph alone
            refs = md.get("ownerReferences")
            old_refs = meta(old).get("ownerReferences")
            if refs is old_refs or refs == old_refs:
                return
        ns = md.get("namespace") or ""
        if added and ns:
            # bad child → good parent: dependents elsewhere naming this namespaced object
            for dres, dep in self.dependents(md.get("uid")):
                if (meta(dep).get("namespace") or "") != ns:
                    self._report_invalid_namespace(dres, dep, md.get("uid"))
                    self.enqueue(_item(dres, dep))
        old_refs = {r.get("uid"): r for r in (meta(old).get("ownerReferences") or [] if old else [])}
        new_refs = {r.get("uid"): r for r in md.get("ownerReferences") or []}
        for u, r in old_refs.items():   # addUnblockedOwnersToDeleteQueue
            if r.get("blockOwnerDeletion") and not (new_refs.get(u) or {}).get("blockOwnerDeletion"):
                self._enqueue_uid(u)
        verify = False
        for u, r in new_refs.items():   # addDependentToOwners
            if u in old_refs:
                continue
            owner = self.observed(u)
            if owner is None:
                verify = True   # a "virtual" owner: its existence is verified
                continue
            ores, oobj = owner
            ons = meta(oobj).get("namespace") or ""
            if ons and ons != ns:
                self._report_invalid_namespace(res, new, u)
                verify = True
            elif (r.get("name") != meta(oobj).get("name") or r.get("kind") != ores.kind
                  or r.get("apiVersion") != ores.api_version):
                verify = True
        if verify:
            self.enqueue(_item(res, new))
        if _starts(old, new, ORPHAN):   # processTransitions
            self.enqueue(ORPHAN_PREFIX + _item(res, new))
            return
        if _starts(old, new, FOREGROUND):
            for dres, dep in self.dependents(md.get("uid")):
                self.enqueue(_item(dres, dep))
            self.enqueue(_item(res, new))

    def _deleted(self, res: Resource, obj: dict) -> None:
        if res not in self._monitors:
            return
        md = meta(obj)
        deps = self.dependents(md.get("uid"))
        if deps:
            self._absent_add(res.api_version, res.kind, md.get("name") or "", md.get("uid") or "",
                             md.get("namespace") or "")
        for dres, dep in deps:
            self.enqueue(_item(dres, dep))
        for ref in md.get("ownerReferences") or []:
            owner = self.observed(ref.get("uid"))
            if owner is not None and _deleting_dependents(owner[1]):
                self.enqueue(_item(*owner))

    def _enqueue_uid(self, uid: str | None) -> None:
        owner = self.observed(uid)
        if owner is not None:
            self.enqueue(_item(*owner))

    def _report_invalid_namespace(self, res: Resource, dep: dict, owner_uid: str | None) -> None:
        """graph_builder.go reportInvalidNamespaceOwnerRef."""
        md = meta(dep)
        ref = next((r for r in md.get("ownerReferences") or [] if r.get("uid") == owner_uid), None)
        if ref is None:
            return
        ns = md.get("namespace") or ""
        involved = {"apiVersion": res.api_version, "kind": res.kind,
                    "metadata": {"name": md.get("name"), "namespace": ns, "uid": md.get("uid")}}
        self.recorder.event(involved, "Warning", "OwnerRefInvalidNamespace",
                            f'ownerRef {_identity(ref, ns)} does not exist in namespace "{ns}"')

    def scan(self) -> None:
        """Put every monitored cached object through the graph (after the first sync)."""
        for res, inf in list(self._monitors.items()):
            for obj in list(inf.store.values()):
                self._observe(res, None, obj, False)

    # -- the absent-owner cache ------------------------------------------------------------
    def _absent_add(self, *key: str) -> None:
        self._absent[key] = None
        self._absent.move_to_end(key)
        while len(self._absent) > ABSENT_OWNER_CACHE_SIZE:
            self._absent.popitem(last=False)

    # -- running -------------------------------------------------------------------------
    async def run(self, workers: int | None = None) -> None:
        """Sync the monitors with discovery, wait for them, put the caches through the
        graph, then run the workers and a discovery sync every
        :data:`DISCOVERY_RESYNC_SECONDS`."""
        self._running = True
        await self.resync_monitors()
        for res in list(self._own):
            self._monitors[res].start()
        waits = [asyncio.ensure_future(inf.wait_synced(SYNC_TIMEOUT_SECONDS)) for inf in self._monitors.values()]
        _, pending = await asyncio.wait(waits, timeout=SYNC_TIMEOUT_SECONDS)
        for w in pending:
            w.cancel()
        for w in waits:
            if w.done() and not w.cancelled():
                w.exception()   # retrieved: a monitor that failed to sync only logs below
        unsynced = [r.plural for r, inf in self._monitors.items() if not inf.has_synced]
        if unsynced:
            event(log, "gc.monitors_not_synced", logging.WARNING, resources=",".join(unsynced))
        self.scan()
        event(log, "gc.monitors_synced", resources=len(self._monitors) - len(unsynced))

        async def resync() -> None:
            while True:
                await asyncio.sleep(DISCOVERY_RESYNC_SECONDS)
                try:
                    await self.resync_monitors()
                except Exception as e:  # never fatal: the next sync tries again
                    event(log, "gc.resync_failed", logging.WARNING, error=str(e)[:160])

        task = asyncio.create_task(resync(), name="gc-discovery-resync")
        try:
            await super().run(workers)
        finally:
            task.cancel()
            if self._resync_soon is not None:
                self._resync_soon.cancel()
            for res in list(self._own):
                await self._remove_monitor(res)

    # -- sync ----------------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        """Process one attemptToDelete or attemptToOrphan item."""
        orphan = key.startswith(ORPHAN_PREFIX)
        group, plural, ns, name, uid = key.removeprefix(ORPHAN_PREFIX).split("|")
        res = self._by_plural.get((group, plural))
        if res is None:
            return
        if orphan:
            await self._attempt_to_orphan(res, ns, name, uid)
            return
        try:
            await self._attempt_to_delete(res, ns, name, uid)
        except NamespacedOwnerOfClusterScopedObject:
            return   # will not resolve on retry: forgotten (attemptToDeleteWorker)

    async def _get(self, res: Resource, name: str, ns: str) -> dict | None:
        try:
            return await self.client.get(res, name, ns or None)
        except ApiError as e:
            if e.code == 404:
                return None
            raise

    def _virtual_delete(self, res: Resource, ns: str, name: str, uid: str) -> None:
        """The item is gone (enqueueVirtualDeleteEvent): its dependents see an absent owner."""
        deps = self.dependents(uid)
        if deps:
            self._absent_add(res.api_version, res.kind, name, uid, ns if res.namespaced else "")
        for dres, dep in deps:
            self.enqueue(_item(dres, dep))

    async def _attempt_to_delete(self, res: Resource, ns: str, name: str, uid: str) -> None:
        """garbagecollector.go attemptToDeleteItem, on the monitor's cached copy first.

        Kubernetes reads the item live (``getObject``) before deciding. Here the decision is
        first made on the monitor's copy, and every write it leads to carries that copy's
        ``resourceVersion`` (the delete's preconditions, the ownerReferences patch): a write
        that succeeds acted on the current object, exactly as after a live read. A stale copy
        gets 409 Conflict and the item is then decided again on a live read (the Kubernetes
        path). Collecting N dependents of a deleted owner is N DELETEs instead of N GETs and
        N DELETEs. An item the monitor has not observed (a virtual node) is read live."""
        inf = self._monitors.get(res)
        cached = inf.store.get(f"{ns}/{name}" if ns else name) if inf is not None else None
        if cached is not None and meta(cached).get("uid") == uid:
            if meta(cached).get("deletionTimestamp") and not _deleting_dependents(cached):
                return
            if meta(cached).get("resourceVersion"):
                try:
                    await self._attempt_on(res, cached, live=False)
                    return
                except _Stale:
                    pass   # the copy was older than the object: decide on a live read
        latest = await self._get(res, name, ns)
        if latest is None or meta(latest).get("uid") != uid:
            self._virtual_delete(res, ns, name, uid)
            return
        await self._attempt_on(res, latest, live=True)

    async def _attempt_on(self, res: Resource, latest: dict, live: bool) -> None:
        """The decision of attemptToDeleteItem on ``latest``; with ``live`` False (a cached
        copy) a 409 on a write raises :class:`_Stale`."""
        uid = meta(latest).get("uid")
        if _deleting_dependents(latest):
            await self._process_deleting_dependents(res, latest)
            return
        refs = meta(latest).get("ownerReferences") or []
        if not refs:
            return
        solid, dangling, waiting = await self._classify(latest, refs)
        if solid:
            if not dangling and not waiting:
                return
            drop = {r.get("uid") for r in dangling + waiting}
            await self._patch_refs(res, latest, [r for r in refs if r.get("uid") not in drop], live)
            return
        if waiting and self.dependents(uid):
            for _, dep in self.dependents(uid):
                if _deleting_dependents(dep):
                    # a possible cycle: the references become non-blocking first
                    await self._patch_refs(res, latest, [{**r, "blockOwnerDeletion": False} for r in refs], live)
                    break
            await self._delete_object(res, latest, "Foreground", live)
            return
        fins = meta(latest).get("finalizers") or []
        policy = "Orphan" if ORPHAN in fins else "Foreground" if FOREGROUND in fins else "Background"
        await self._delete_object(res, latest, policy, live)

    async def _classify(self, item: dict, refs: list[dict]) -> tuple[list[dict], list[dict], list[dict]]:
        """(solid, dangling, waitingForDependentsDeletion) — classifyReferences."""
        solid: list[dict] = []
        dangling: list[dict] = []
        waiting: list[dict] = []
        for r in refs:
            gone, owner = await self._is_dangling(item, r)
            if gone:
                dangling.append(r)
            elif owner is not None and _deleting_dependents(owner):
                waiting.append(r)
            else:
                solid.append(r)
        return solid, dangling, waiting

    async def _is_dangling(self, item: dict, ref: dict) -> tuple[bool, dict | None]:
        """garbagecollector.go isDangling: the owner is looked up in the item's namespace."""
        ns = meta(item).get("namespace") or ""
        av, kind, name, uid = (ref.get("apiVersion") or "", ref.get("kind") or "", ref.get("name") or "",
                               ref.get("uid") or "")
        if (av, kind, name, uid, "") in self._absent or (av, kind, name, uid, ns) in self._absent:
            return True, None
        ores = self._resource_for(av, kind)
        if not ns and ores.namespaced:
            event(log, "gc.cluster_scoped_namespaced_owner", object=meta(item).get("name"), owner=f"{kind}/{name}")
            raise NamespacedOwnerOfClusterScopedObject(kind)
        owner = await self._get(ores, name, ns if ores.namespaced else "")
        if owner is None or meta(owner).get("uid") != uid:
            self._absent_add(av, kind, name, uid, ns if ores.namespaced else "")
            return True, None
        return False, owner

    async def _delete_object(self, res: Resource, obj: dict, policy: str, live: bool = True) -> None:
        """garbagecollector.go deleteObject: uid and resourceVersion preconditions; on a
        conflict with unchanged ownerReferences, again with the uid alone. ``obj`` a cached
        copy (``live`` False): a conflict raises :class:`_Stale`."""
        md = meta(obj)
        pre: dict[str, Any] = {"uid": md.get("uid")}
        if md.get("resourceVersion"):
            pre["resourceVersion"] = md["resourceVersion"]
        try:
            await self.client.delete(res, md["name"], md.get("namespace"), propagation_policy=policy,
                                     preconditions=pre)
        except ApiError as e:
            if e.code == 404:
                return
            if e.code != 409 or "resourceVersion" not in pre:
                raise
            if not live:
                raise _Stale() from None
            cur = await self._get(res, md["name"], md.get("namespace") or "")
            if cur is None or meta(cur).get("uid") != md.get("uid"):
                return
            if (meta(cur).get("ownerReferences") or []) != (md.get("ownerReferences") or []):
                raise
            try:
                await self.client.delete(res, md["name"], md.get("namespace"), propagation_policy=policy,
                                         preconditions={"uid": md.get("uid")})
            except ApiError as e2:
                if e2.code != 404:
                    raise
                return
        if log.isEnabledFor(logging.DEBUG):   # attemptToDeleteItem logs "Deleting item" at V(2)
            event(log, "gc.deleted", logging.DEBUG, object=f"{res.kind}/{md.get('namespace')}/{md.get('name')}",
                  policy=policy, owners=",".join(f"{r.get('kind')}/{r.get('name')}"
                                                 for r in md.get("ownerReferences") or []))

    async def _patch_refs(self, res: Resource, obj: dict, refs: list[dict], live: bool = True) -> None:
        """A JSON merge patch of ``ownerReferences`` at the object's resourceVersion
        (operations.go GenerateDeleteOwnerRefJSONMergePatch); 404 is fine; a conflict on a
        cached copy (``live`` False) raises :class:`_Stale`."""
        md = meta(obj)
        body = {"metadata": {"ownerReferences": refs or None, "uid": md.get("uid"),
                             "resourceVersion": md.get("resourceVersion")}}
        try:
            await self.client.patch(res, md["name"], body, md.get("namespace"))
        except ApiError as e:
            if e.code == 409 and not live:
                raise _Stale() from None
            if e.code != 404:
                raise

    async def _remove_finalizer(self, res: Resource, obj: dict, finalizer: str) -> None:
        """operations.go removeFinalizer: read the latest, patch the finalizers without it."""
        md = meta(obj)
        latest = await self._get(res, md["name"], md.get("namespace") or "")
        if latest is None or meta(latest).get("uid") != md.get("uid"):
            return
        fins = meta(latest).get("finalizers") or []
        if finalizer not in fins:
            return
        left = [f for f in fins if f != finalizer]
        try:
            await self.client.patch(res, md["name"], {"metadata": {
                "finalizers": left or None, "resourceVersion": meta(latest).get("resourceVersion")}},
                md.get("namespace"))
        except ApiError as e:
            if e.code != 404:
                raise
        event(log, "gc.finalizer_removed", object=f"{res.kind}/{md.get('namespace')}/{md.get('name')}",
              finalizer=finalizer)

    async def _process_deleting_dependents(self, res: Resource, owner: dict) -> None:
        """garbagecollector.go processDeletingDependentsItem."""
        uid = meta(owner).get("uid")
        blocking = [(r, o) for r, o in self.dependents(uid)
                    if any(ref.get("uid") == uid and ref.get("blockOwnerDeletion")
                           for ref in meta(o).get("ownerReferences") or [])]
        if not blocking:
            await self._remove_finalizer(res, owner, FOREGROUND)
            return
        for dres, dep in blocking:
            if not _deleting_dependents(dep):
                self.enqueue(_item(dres, dep))

    async def _attempt_to_orphan(self, res: Resource, ns: str, name: str, uid: str) -> None:
        """garbagecollector.go attemptToOrphanWorker / orphanDependents."""
        inf = self._monitors.get(res)
        owner = inf.store.get(f"{ns}/{name}" if ns else name) if inf is not None else None
        if owner is None or meta(owner).get("uid") != uid:
            return
        for dres, dep in self.dependents(uid):
            dmd = meta(dep)
            latest = await self._get(dres, dmd["name"], dmd.get("namespace") or "")
            if latest is None or meta(latest).get("uid") != dmd.get("uid"):
                continue
            refs = meta(latest).get("ownerReferences") or []
            keep = [r for r in refs if r.get("uid") != uid]
            if len(keep) != len(refs):
                await self._patch_refs(dres, latest, keep)
        await self._remove_finalizer(res, owner, ORPHAN)
