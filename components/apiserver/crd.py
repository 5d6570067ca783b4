"""The apiextensions controllers of the apiserver: CRD names, establishing, serving, cleanup.

One :class:`CRDController` follows the CustomResourceDefinition watch cache and, per CRD,
does what the apiextensions-apiserver's controllers do:

* naming (``pkg/controller/status/naming_controller.go``): the requested names (plural,
  singular, short names, kind, listKind) are checked against the names other CRDs of the
  group have accepted and the built-in resources of the group; ``status.acceptedNames``
  and the ``NamesAccepted`` condition (``NoConflicts`` / ``PluralConflict``,
  ``SingularConflict``, ``ShortNamesConflict``, ``KindConflict``, ``ListKindConflict``:
  ``"<name>" is already in use``); ``Established`` False ``Installing`` meanwhile;
* serving (``pkg/apiserver/customresource_handler.go``): one registry entry per served
  version (:func:`controlplane.api.groups.apiextensions.custom_resources`) added to
  ``REGISTRY``, replaced when the CRD's spec or accepted names change;
* establishing (``pkg/controller/establish/establishing_controller.go``): once served (the
  watch caches started), ``Established`` True ``InitialNamesAccepted``;
* finalizing (``pkg/controller/finalizer/crd_finalizer.go``): a CRD being deleted gets
  ``Terminating`` True ``InstanceDeletionInProgress``, every custom resource is deleted,
  then ``Terminating`` False ``InstanceDeletionCompleted`` and the
  ``customresourcecleanup.apiextensions.k8s.io`` finalizer is removed, which deletes the
  CRD; its entries leave ``REGISTRY`` once the instances are gone, before the finalizer is
  removed (so a client that saw the CRD deleted finds discovery and routes without it).

Writes go through the :class:`~components.apiserver.registrystore.RegistryStore` as the
field manager ``kube-apiserver``. Work is keyed by CRD name and serialised (one worker).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from components.apiserver import status as st
from components.apiserver.cache import cache_name
from components.apiserver.registrystore import RegistryStore
from controlplane import aio
from controlplane.api import listfields
from controlplane.api import resources as R
from controlplane.api.groups import apiextensions as ax
from controlplane.log import event
from controlplane.storage.store import collection_prefix, object_key

log = logging.getLogger("apiserver.crd")

CRDS = ax.CUSTOMRESOURCEDEFINITIONS
MANAGER = "kube-apiserver"
#: seconds before a CRD whose instances are not all gone yet is looked at again
REQUEUE_DELAY = 0.5
#: the longest back-off of a CRD whose sync keeps failing (seconds)
MAX_REQUEUE_DELAY = 30.0


def accepted_names_ok(crd: dict[str, Any]) -> bool:
    """Whether the CRD's NamesAccepted condition is True."""
    c = ax.condition(crd, "NamesAccepted")
    return c is not None and c.get("status") == "True"


class CRDController:
    """Keeps ``REGISTRY`` and the CRDs' status in step with the stored CRDs (module docstring).

    ``store``: the registry store (writes); ``caches``: the server's watch caches (the CRD
    cache is read); ``settled()``: waits until the watch caches of resources added so far
    are started (:meth:`components.apiserver.server.APIServer.resources_settled`)."""

    def __init__(self, store: RegistryStore, caches: dict[str, Any],
                 settled: Callable[[], Awaitable[None]]) -> None:
        self.store = store
        self.caches = caches
        self.settled = settled
        #: CRD name → (fingerprint of what is served, entries served)
        self.served: dict[str, tuple[Any, list[R.Resource]]] = {}
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._queued: set[str] = set()
        self._failures: dict[str, int] = {}
        self._tasks: list[asyncio.Task] = []

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._follow(), name="crd-follow"),
                       asyncio.create_task(self._work(), name="crd-worker")]

    async def stop(self) -> None:
        """Stop following and stop serving what this controller added to ``REGISTRY``."""
        for t in self._tasks:
            await aio.cancel_and_wait(t)
        self._tasks = []
        for name in list(self.served):
            self._unserve(name)

    def enqueue(self, name: str) -> None:
        if name not in self._queued:
            self._queued.add(name)
            self._queue.put_nowait(name)

    def _cache(self) -> Any:
        return self.caches.get(cache_name(CRDS))

    async def _follow(self) -> None:
        """Every CRD event (and, after a closed watch, every CRD) queues its name."""
        while True:
            cache = self._cache()
            if cache is None:
                await asyncio.sleep(0.1)  # the CRD cache is started by APIServer.start
                continue
            w, _ = cache.watch(lambda o: True, None)
            try:
                while True:
                    ev = await w.next(None)
                    if ev is None:
                        break  # closed: watch again from the current state
                    if ev is False or ev.type == "BOOKMARK":
                        continue
                    name = (ev.object.get("metadata") or {}).get("name")
                    if name:
                        self.enqueue(name)
                        self._requeue_group(cache, ev.object, name)
            finally:
                cache.unwatch(w)

    def _requeue_group(self, cache: Any, crd: dict[str, Any], name: str) -> None:
        """Names freed or taken by one CRD change what the others of its group may accept:
        each of them is looked at again (naming_controller.go requeues the group's CRDs)."""
        group = (crd.get("spec") or {}).get("group")
        for o in cache.list()[0]:
            other = (o.get("metadata") or {}).get("name")
            if other and other != name and (o.get("spec") or {}).get("group") == group \
                    and not accepted_names_ok(o):
                self.enqueue(other)

    async def _work(self) -> None:
        while True:
            name = await self._queue.get()
            self._queued.discard(name)
            delay = REQUEUE_DELAY
            try:
                again = await self.sync(name)
                self._failures.pop(name, None)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # a failed sync is retried with back-off, as the controllers' rate-limited queues
                n = self._failures[name] = self._failures.get(name, 0) + 1
                delay = min(REQUEUE_DELAY * 2 ** n, MAX_REQUEUE_DELAY)
                event(log, "crd.sync_failed", logging.WARNING, crd=name, error=f"{type(e).__name__}: {e}"[:200],
                      retry_in=delay)
                again = True
            if again:
                asyncio.get_running_loop().call_later(delay, self.enqueue, name)

    # ------------------------------------------------------------------ one CRD
    def _current(self, name: str) -> dict[str, Any] | None:
        cache = self._cache()
        return cache.get(object_key(CRDS, None, name)) if cache is not None else None

    async def sync(self, name: str) -> bool:
        """Bring CRD ``name`` to its state; returns True when it must be looked at again."""
        crd = self._current(name)
        if crd is None:
            self._unserve(name)
            return False
        if (crd.get("metadata") or {}).get("deletionTimestamp"):
            term = ax.condition(crd, "Terminating") or {}
            if name not in self.served and ax.established(crd) and accepted_names_ok(crd) \
                    and term.get("reason") != "InstanceDeletionCompleted" \
                    and ax.CLEANUP_FINALIZER in (crd["metadata"].get("finalizers") or []):
                self._serve(crd)  # still served while its instances are deleted (e.g. after a restart)
            return await self._finalize(crd)
        names, accepted, est = self.names_and_conditions(crd)
        if names != ((crd.get("status") or {}).get("acceptedNames") or {}) or not self._same(crd, accepted, est):
            await self._write_status(name, lambda c: self._set_names(c, names, accepted, est))
            return False  # the status write comes back as an event
        if accepted["status"] != "True" and not ax.established(crd):
            # never established: not served. An established CRD whose new names conflict
            # keeps being served under its accepted names, as the apiextensions-apiserver does
            self._unserve(name)
            return False
        storage = ax.storage_version(crd)
        stored = list((crd.get("status") or {}).get("storedVersions") or [])
        if storage and storage not in stored:
            # a new storage version joins storedVersions (customresourcedefinition/strategy.go
            # PrepareForUpdate; done here since a main-resource write keeps the status)
            await self._write_status(name, lambda c: c.setdefault("status", {}).__setitem__(
                "storedVersions", stored + [storage]))
            return False
        self._serve(crd)
        if not ax.established(crd):
            await self.settled()
            await self._write_status(name, lambda c: ax.set_condition(c, {
                "type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted"}))
            event(log, "crd.established", crd=name)
        return False

    @staticmethod
    def _same(crd: dict[str, Any], accepted: dict[str, Any], est: dict[str, Any]) -> bool:
        def same(cur: dict[str, Any] | None, want: dict[str, Any]) -> bool:
            return cur is not None and all(cur.get(k) == want.get(k) for k in ("status", "reason", "message"))
        return same(ax.condition(crd, "NamesAccepted"), accepted) and same(ax.condition(crd, "Established"), est)

    @staticmethod
    def _set_names(crd: dict[str, Any], names: dict[str, Any], accepted: dict[str, Any],
                   est: dict[str, Any]) -> None:
        crd.setdefault("status", {})["acceptedNames"] = names
        ax.set_condition(crd, accepted)
        ax.set_condition(crd, est)

    def names_and_conditions(self, crd: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """calculateNamesAndConditions (naming_controller.go): the accepted names and the
        NamesAccepted and Established conditions of ``crd``."""
        spec = crd.get("spec") or {}
        group = spec.get("group", "")
        me = (crd.get("metadata") or {}).get("name")
        used_resources: set[str] = set()
        used_kinds: set[str] = set()
        cache = self._cache()
        others = cache.list()[0] if cache is not None else []
        for o in others:
            if (o.get("metadata") or {}).get("name") == me or (o.get("spec") or {}).get("group") != group:
                continue
            acc = (o.get("status") or {}).get("acceptedNames") or {}
            used_resources.update(x for x in [acc.get("plural"), acc.get("singular"), *(acc.get("shortNames") or [])]
                                  if x)
            used_kinds.update(x for x in (acc.get("kind"), acc.get("listKind")) if x)
        for r in R.REGISTRY:
            if r.group == group and not r.extra.get("crd"):
                used_resources.update([r.plural, r.singular, *r.short_names])
                used_kinds.update([r.kind, r.kind + "List"])
        req = spec.get("names") or {}
        acc = dict((crd.get("status") or {}).get("acceptedNames") or {})
        new = dict(acc)
        cond = {"type": "NamesAccepted", "status": "Unknown", "reason": "", "message": ""}

        def fresh(requested: Any, accepted: Any, used: set[str]) -> str | None:
            if requested == accepted or requested not in used:
                return None
            return f'"{requested}" is already in use'

        def check(field: str, used: set[str], reason: str) -> None:
            err = fresh(req.get(field), acc.get(field), used)
            if err:
                cond.update(status="False", reason=reason, message=err)
            elif req.get(field) is not None:
                new[field] = req.get(field)
        check("plural", used_resources, "PluralConflict")
        check("singular", used_resources, "SingularConflict")
        short_err = None
        for s in req.get("shortNames") or []:
            if s not in (acc.get("shortNames") or []) and s in used_resources:
                short_err = f'"{s}" is already in use'
        if short_err:
            cond.update(status="False", reason="ShortNamesConflict", message=short_err)
        elif req.get("shortNames"):
            new["shortNames"] = list(req["shortNames"])
        else:
            new.pop("shortNames", None)
        check("kind", used_kinds, "KindConflict")
        check("listKind", used_kinds, "ListKindConflict")
        if req.get("categories"):
            new["categories"] = list(req["categories"])
        else:
            new.pop("categories", None)
        if cond["status"] == "Unknown":
            cond.update(status="True", reason="NoConflicts", message="no conflicts found")
        est = {"type": "Established", "status": "False", "reason": "NotAccepted",
               "message": "not all names are accepted"}
        old = ax.condition(crd, "Established")
        if old is not None:
            est = {k: old.get(k, "") for k in ("type", "status", "reason", "message")}
        if est["status"] != "True" and cond["status"] == "True":
            est = {"type": "Established", "status": "False", "reason": "Installing",
                   "message": "the initial names have been accepted"}
        return new, cond, est

    async def _write_status(self, name: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any] | None:
        def mutate(cur: dict[str, Any]) -> dict[str, Any]:
            change(cur)
            return cur
        try:
            return await self.store.update(CRDS, None, name, mutate, subresource="status", manager=MANAGER)
        except st.APIError as e:
            if e.code == 404:
                return None
            raise

    # ------------------------------------------------------------------ serving
    def _serve(self, crd: dict[str, Any]) -> None:
        name = crd["metadata"]["name"]
        fingerprint = (repr(crd.get("spec")), repr((crd.get("status") or {}).get("acceptedNames")))
        prev = self.served.get(name)
        if prev is not None and prev[0] == fingerprint:
            return
        entries = ax.custom_resources(crd)
        keep = {(r.group, r.version, r.plural) for r in entries}
        for r in (prev[1] if prev else []):
            if (r.group, r.version, r.plural) not in keep:
                R.REGISTRY.remove(r.group, r.version, r.plural)
                listfields.unregister_kind(r.lists_key)
        for r in entries:
            listfields.register_kind(r.lists_key, ax.schema_list_fields(r.openapi_schema))
            R.REGISTRY.add(r)
        self.served[name] = (fingerprint, entries)
        event(log, "crd.served", crd=name, versions=",".join(r.version for r in entries))

    def _unserve(self, name: str) -> None:
        prev = self.served.pop(name, None)
        for r in (prev[1] if prev else []):
            if R.REGISTRY.lookup(r.group, r.version, r.plural) is r:
                R.REGISTRY.remove(r.group, r.version, r.plural)
                listfields.unregister_kind(r.lists_key)
        if prev:
            event(log, "crd.unserved", crd=name)

    # ------------------------------------------------------------------ deletion
    async def _finalize(self, crd: dict[str, Any]) -> bool:
        """crd_finalizer.go sync: Terminating, delete the instances, remove the finalizer."""
        name = crd["metadata"]["name"]
        if ax.CLEANUP_FINALIZER not in (crd["metadata"].get("finalizers") or []):
            return False  # other finalizers: not ours to wait for
        term = ax.condition(crd, "Terminating")
        if term is None:
            await self._write_status(name, lambda c: ax.set_condition(c, {
                "type": "Terminating", "status": "True", "reason": "InstanceDeletionInProgress",
                "message": "CustomResource deletion is in progress"}))
            return False  # the status write comes back as an event
        if term.get("status") == "True":
            if ax.established(crd):
                if await self._delete_instances(crd):
                    return True  # instances left (finalizers of their own, or just created): again
                done = {"type": "Terminating", "status": "False", "reason": "InstanceDeletionCompleted",
                        "message": "removed all instances"}
            else:
                done = {"type": "Terminating", "status": "False", "reason": "NeverEstablished",
                        "message": "resource was never established"}
            await self._write_status(name, lambda c: ax.set_condition(c, done))
        # the instances are gone: stop serving before the CRD itself goes, so whoever sees
        # it deleted (kubectl delete waits for that) finds the routes and discovery gone too
        self._unserve(name)

        def drop(cur: dict[str, Any]) -> dict[str, Any]:
            md = cur.setdefault("metadata", {})
            md["finalizers"] = [f for f in (md.get("finalizers") or []) if f != ax.CLEANUP_FINALIZER]
            if not md["finalizers"]:
                del md["finalizers"]
            return cur
        try:
            await self.store.update(CRDS, None, name, drop, manager=MANAGER)
        except st.APIError as e:
            if e.code != 404:
                raise
        event(log, "crd.finalized", crd=name)
        return False

    async def _delete_instances(self, crd: dict[str, Any]) -> int:
        """Delete every custom resource of ``crd``; returns how many are still there."""
        entries = self.served.get(crd["metadata"]["name"], (None, ax.custom_resources(crd)))[1]
        if not entries:
            return 0
        r = entries[0]
        res = await self.store.store.list(collection_prefix(r))
        for o in res.items:
            md = o.get("metadata") or {}
            if md.get("deletionTimestamp"):
                continue
            try:
                await self.store.delete(r, md.get("namespace"), md.get("name", ""), {})
            except st.APIError as e:
                if e.code != 404:
                    raise
        left = await self.store.store.list(collection_prefix(r))
        return len(left.items)
