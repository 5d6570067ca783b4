"""The generic registry store: storage semantics of every resource, no HTTP.

As ``genericregistry.Store`` (``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``)
with ``rest.BeforeCreate`` / ``rest.BeforeUpdate`` / ``rest.BeforeDelete``
(``pkg/registry/rest/{create,update,delete}.go``): create / get / list / update /
server-side apply / delete / deletecollection on a :class:`~controlplane.api.resources.Resource`,
running the strategy (:mod:`components.apiserver.strategy`), defaulting, the admission
chain (:mod:`components.apiserver.admission`: mutating plugins after defaulting, validating
plugins after validation, as ``handlers/create.go`` / ``update.go`` / ``delete.go`` call
them), validation, Service IP/port allocation, managedFields
(:mod:`components.apiserver.fieldmanager`), tracing and logging. ``pods/binding``
(``pkg/registry/core/pod/storage/storage.go`` assignPod) and the ``scale`` subresource too.

There is **one create pipeline** (:meth:`RegistryStore.create`): a POST and a server-side
apply of an absent object (``PATCH`` with ``application/apply-patch+yaml``) both go
through it, so both are traced, logged, admitted and get managedFields the same
way; they differ only in the managedFields operation (``Update`` for a POST, ``Apply`` for
an apply, as ``fieldmanager.go`` records them).

The HTTP handlers (:mod:`components.apiserver.rest`) decode the request and encode the
answer; everything here takes and returns plain objects (``dict[str, Any]``) and raises
:class:`~components.apiserver.status.APIError` for what is answered as a Status.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import Any

from components.apiserver import admission as adm
from components.apiserver import fieldmanager, listoptions, servicealloc, strategy
from components.apiserver import semantics as sem
from components.apiserver import status as st
from components.apiserver.cache import WatchCache, cache_name
from components.apiserver.semantics import decoder
from components.apiserver.servicealloc import ServiceAllocator
from components.apiserver.tracing import Tracer
from controlplane import apitime, otel
from controlplane.api import codec
from controlplane.api import resources as R
from controlplane.api.groups import apiextensions
from controlplane.log import event
from controlplane.storage.errors import Conflict, Expired, KeyExists, KeyNotFound, TooLargeResourceVersion
from controlplane.storage.store import Store, collection_prefix, object_key

log = logging.getLogger("apiserver.rest")

#: Creates tried with a fresh generateName suffix before AlreadyExists is answered
#: (``store.go`` maxNameGenerationCreateAttempts; feature RetryGenerateName, GA in 1.32).
MAX_NAME_GENERATION_ATTEMPTS = 8

#: Objects as stored (``list`` is also :meth:`RegistryStore.list`, hence the alias).
Objects = list[dict[str, Any]]

#: A mutation of an update: the current object (a private copy) → the new object.
Mutation = Callable[[dict[str, Any]], Any]


class APIErrorFromPatch(Exception):
    """A patch that could not be applied (answered 422). ``generic``: a JSON patch (RFC 6902)
    failure, answered with a generic message instead of the reason."""

    def __init__(self, message: str, generic: bool = False) -> None:
        super().__init__(message)
        self.generic = generic


class _DeleteInstead(Exception):
    """Raised inside an update's mutation: the object is to be deleted, not written."""


@dataclasses.dataclass
class CreateOptions:
    """How a create was asked for.

    ``manager``: the field manager. ``apply_config``: the server-side apply configuration
    when the create is an apply (managedFields get one ``Apply`` entry with its fields),
    None for a POST (one ``Update`` entry with every field set, ``record_create``).
    ``user_agent``: for the trace. ``verb``: the HTTP verb, for the trace (``POST``/``PATCH``).
    ``dry_run``: ``dryRun=All`` (checked, not written). ``api_version``: the version the
    request was made at, recorded in managedFields ("": the resource's; a version converted
    to its storage version records its own, as ``fieldmanager.go`` records the request's)."""

    manager: str
    apply_config: dict[str, Any] | None = None
    user_agent: str = ""
    verb: str = "POST"
    dry_run: bool = False
    api_version: str = ""
    #: the requesting user ``{"username", "uid", "groups", "extra"}`` (the strategy's
    #: ``set_requestor``: a CSR's spec); None: not told
    user: dict[str, Any] | None = None


@dataclasses.dataclass
class ListResult:
    """A list's items (read-only), its revision and extra list metadata (``continue``,
    ``remainingItemCount``)."""

    items: list[dict[str, Any]]
    revision: int
    meta: dict[str, Any]


class RegistryStore:
    """Storage semantics on top of ``store`` (etcd) and the watch caches.

    ``caches``: the live mapping of :func:`~components.apiserver.cache.cache_name` → cache
    (owned by the server, which adds and drops entries as resources come and go).
    ``tracer``: records the trace steps of workload objects. ``service_allocator``: ClusterIP
    and NodePort allocation of Services (None: none). ``admission``: the admission chain
    (:mod:`components.apiserver.admission`; None: kube-apiserver's default plugins)."""

    def __init__(self, store: Store, caches: Mapping[str, WatchCache], tracer: Tracer,
                 service_allocator: ServiceAllocator | None = None, admission: adm.Chain | None = None) -> None:
        self.store = store
        self.caches = caches
        self.tracer = tracer
        self.service_allocator = service_allocator
        self.admission = admission if admission is not None else adm.default_chain(adm.Context(store, caches))

    # ------------------------------------------------------------------ helpers
    def cache_for(self, resource: Any) -> WatchCache | None:
        """The watch cache of ``resource``, or None (not started, or a Binding)."""
        return self.caches.get(cache_name(resource))

    def cached(self, resource: Any, key: str) -> dict[str, Any] | None:
        """The watch cache's copy of ``key`` (read-only; may be stale), to save a read before a
        conditional write (the cacher's GuaranteedUpdate passes it as cachedExistingObject)."""
        cache = self.cache_for(resource)
        return cache.get(key) if cache is not None else None

    async def get(self, resource: Any, namespace: str | None, name: str) -> dict[str, Any]:
        """The stored object; 404 NotFound when absent (``store.go`` Get)."""
        try:
            return await self.store.get(object_key(resource, namespace, name))
        except KeyNotFound:
            raise st.not_found(resource, name) from None

    @staticmethod
    def validate(resource: Any, obj: dict[str, Any], old: dict[str, Any] | None = None) -> None:
        """The kind's validation (``strategy.Validate`` / ``ValidateUpdate``); 422 Invalid."""
        causes = sem.validate(resource.facts_key, obj, old)
        if causes:
            name = (obj.get("metadata") or {}).get("name", "")
            raise st.invalid_fields(resource.kind, resource.group, name, st.error_list(causes),
                                    sem.invalid_message(resource.facts_key, name, causes))

    async def allocate(self, resource: Any, obj: dict[str, Any], old: dict[str, Any] | None, dry: bool) -> None:
        """Services: ClusterIP / NodePort allocation (:mod:`components.apiserver.servicealloc`); 422."""
        if resource.kind != "Service" or self.service_allocator is None:
            return
        try:
            await self.service_allocator.allocate_shared(obj, old, dry_run=dry)
        except servicealloc.AllocationError as e:
            name = (obj.get("metadata") or {}).get("name", "")
            raise st.invalid_fields("Service", "", name, st.error_list(e.causes),
                                    sem.invalid_message("Service", name, e.causes)) from None

    def check_crd_terminating(self, resource: Any, verb: str) -> None:
        """A custom resource whose CRD is being deleted takes no new objects: 405
        MethodNotAllowed ``create not allowed while custom resource definition is terminating``
        (``customresource_handler.go`` ServeHTTP)."""
        crd_name = resource.extra.get("crd") if hasattr(resource, "extra") else None
        if not crd_name:
            return
        cache = self.caches.get(cache_name(apiextensions.CUSTOMRESOURCEDEFINITIONS))
        crd = cache.get(object_key(apiextensions.CUSTOMRESOURCEDEFINITIONS, None, crd_name)) if cache else None
        term = apiextensions.condition(crd, "Terminating") if crd is not None else None
        if crd is not None and ((crd.get("metadata") or {}).get("deletionTimestamp")
                                or (term is not None and term.get("status") == "True")):
            raise st.APIError(405, "MethodNotAllowed",
                              f"{verb} not allowed while custom resource definition is terminating",
                              {"group": resource.group, "kind": resource.plural})

    @staticmethod
    def request_namespace(resource: Any, namespace: str | None, obj: dict[str, Any]) -> str | None:
        """The namespace of a create: the request's, else the body's; a body namespace other
        than the request's, or none at all for a namespaced resource → 400
        (``rest.EnsureObjectNamespaceMatchesRequestNamespace``)."""
        if not resource.namespaced:
            return namespace
        body_ns = (obj.get("metadata") or {}).get("namespace")
        if body_ns and namespace and body_ns != namespace:
            raise st.bad_request("the namespace of the provided object does not match the namespace "
                                 "sent on the request")
        namespace = namespace or body_ns
        if not namespace:
            raise st.bad_request("a namespace is required to create " + resource.plural)
        return namespace

    # ------------------------------------------------------------------ create
    async def create(self, resource: Any, namespace: str | None, obj: dict[str, Any],
                     opts: CreateOptions) -> dict[str, Any]:
        """Create ``obj`` (decoded, kind checked) in ``namespace``; returns the stored object
        (under ``dryRun``: the object as it would be stored, without resourceVersion).

        The one create pipeline (``store.go`` Create with ``rest.BeforeCreate``): namespace of
        the request, strategy ``PrepareForCreate`` (uid, creationTimestamp, status reset; a
        ``generateName`` name), trace step "received", defaulting, managedFields (``Update``
        entry or, for an apply, ``Apply`` entry), mutating admission, validation (422),
        validating admission (NamespaceLifecycle 404 / 403, LimitRanger, ResourceQuota... 403),
        Service allocation (422), the write (409 AlreadyExists; a generated name that
        collides is retried with a new suffix, :data:`MAX_NAME_GENERATION_ATTEMPTS` times),
        trace step "stored" and the ``object.created`` log event."""
        md = obj.setdefault("metadata", {})
        self.check_crd_terminating(resource, "create")
        namespace = self.request_namespace(resource, namespace, obj)
        generated = not md.get("name") and bool(md.get("generateName"))
        strategy.prepare_for_create(resource.facts_key, obj, namespace, resource.namespaced, opts.user)
        otel.stamp_traceparent(obj)  # the creating request's span, when traced (controlplane/otel.py)
        name = obj["metadata"].get("name", "")
        self.tracer.on_create_received(resource, obj, opts.user_agent, opts.verb)
        sem.apply_defaults(resource.facts_key, obj)
        now = apitime.now()
        if opts.apply_config is not None:
            obj["metadata"]["managedFields"] = [{
                "manager": opts.manager, "operation": "Apply", "apiVersion": opts.api_version or resource.api_version,
                "time": now,
                "fieldsType": "FieldsV1",
                "fieldsV1": fieldmanager.encode(fieldmanager.field_set(resource.lists_key, opts.apply_config))}]
        else:
            # the creator owns every field it set (operation Update; handlers/create.go runs the
            # field manager on every create): managedFields in the body are not kept
            fieldmanager.record_create(resource.lists_key, obj, opts.manager, opts.api_version or resource.api_version, now,
                                       strategy.resets_status(resource.facts_key))
        attrs = adm.Attributes(adm.CREATE, resource, namespace, name, obj, dry_run=opts.dry_run)
        await self.admission.admit(attrs)
        strat = strategy.kind_strategy(resource.facts_key)
        prepare = strat.prepare_create
        if prepare is not None:
            # kube-apiserver runs PrepareForCreate (rest.BeforeCreate) after mutating admission:
            # the status it derives (a pod's qosClass) sees what admission added (LimitRanger)
            prepare(obj)
            if opts.user is not None and strat.set_requestor is not None:
                strat.set_requestor(obj, opts.user)
            # what it cleared and defaulting sets (a PVC's status.phase Pending) is back as the
            # stored object is read: kube-apiserver's storage codec decodes with defaulting
            sem.apply_defaults(resource.facts_key, obj)
        self.validate(resource, obj)
        await self.admission.validate(attrs)
        await self.allocate(resource, obj, None, opts.dry_run)
        if opts.dry_run:
            return await self._dry_create(resource, object_key(resource, namespace, name), obj)
        for attempt in range(1, MAX_NAME_GENERATION_ATTEMPTS + 1):
            try:
                created = await self.store.create(object_key(resource, namespace, name), obj)
                break
            except KeyExists:
                if not generated or attempt == MAX_NAME_GENERATION_ATTEMPTS:
                    raise st.already_exists(resource, name) from None
                # generateName collided: a new suffix, as the generic registry store retries
                name = obj["metadata"]["name"] = obj["metadata"]["generateName"] + strategy.random_suffix()
        self.tracer.on_created(resource, created, opts.user_agent)
        # per-object lines at DEBUG: kube-apiserver logs no line per write at its default
        # verbosity (the audit log has one per request), and at INFO they cost ~2 % of a write
        event(log, "object.created", logging.DEBUG, resource=resource.plural, object=f"{namespace or ''}/{name}",
              rv=created["metadata"]["resourceVersion"])
        return created

    async def _dry_create(self, resource: Any, key: str, obj: dict[str, Any]) -> dict[str, Any]:
        """``dryRun=All`` create: the existence check and the object as it would be stored, no write."""
        try:
            await self.store.get(key)
        except KeyNotFound:
            obj["metadata"].pop("resourceVersion", None)
            return obj
        raise st.already_exists(resource, obj["metadata"].get("name", ""))

    # ------------------------------------------------------------------ list
    async def list(self, resource: Any, namespace: str | None, matches: Callable[[dict[str, Any]], bool],
                   rv: str, rv_n: int | None, match: str | None, limit: int, cont: str) -> ListResult:
        """The objects ``matches`` accepts, served as ``cacher.go`` shouldDelegateList and the
        etcd3 store's GetList decide: RV "0" → the watch cache as it is; RV N (NotOlderThan,
        the default match) without limit → the cache once it has reached N (504 when it does
        not in time); Exact N → etcd at revision N (410 when compacted); RV unset, a limit or
        a continue token → etcd (a consistent read). A bad continue token → 400. ``rv``: the
        ``resourceVersion`` parameter as sent, ``rv_n`` its value (None when unset)."""
        meta: dict[str, Any] = {}
        cache = self.cache_for(resource)
        from_cache = cache is not None and not cont and match != listoptions.EXACT and (
            rv == "0" or (rv_n is not None and not limit))
        if cache is not None and from_cache:
            if rv_n and not await cache.wait_for_revision(rv_n):
                raise listoptions.too_large_resource_version(rv_n, cache.revision)
            items, rev = cache.list(matches, namespace)
            return ListResult(items, rev, meta)
        exact = (rv_n or 0) if match == listoptions.EXACT else 0
        try:
            res = await self.store.list(collection_prefix(resource, namespace), revision=exact,
                                        limit=limit, continue_token=cont, predicate=matches)
        except ValueError as e:
            raise st.bad_request(str(e)) from None
        except Expired as e:
            raise st.expired("The resourceVersion for the provided list is too old." if exact and not cont
                             else str(e)) from None
        except TooLargeResourceVersion:
            raise listoptions.too_large_resource_version(exact, await self.store.current_revision()) from None
        if res.continue_token:
            meta["continue"] = res.continue_token
            if res.remaining is not None:
                meta["remainingItemCount"] = res.remaining
        return ListResult(res.items, res.revision, meta)

    # ------------------------------------------------------------------ update
    async def update(self, resource: Any, namespace: str | None, name: str, make_new: Mutation, *,
                     subresource: str = "", precondition_rv: str | None = None,
                     precondition_uid: str | None = None, manager: str | None = None,
                     dry_run: bool = False, api_version: str = "") -> dict[str, Any]:
        """Guaranteed update of the item (``store.go`` Update): ``make_new(current) -> new``
        then strategy ``PrepareForUpdate``, defaulting, mutating admission, validation,
        validating admission, Service allocation (main resource) and managedFields; returns
        the stored object.

        ``precondition_rv`` / ``precondition_uid`` (a PUT body's, ``rest.DefaultUpdatedObjectInfo.
        Preconditions``) mismatching → 409. An object being deleted whose update leaves no
        finalizers is deleted instead (``ShouldDeleteDuringUpdate``). ``manager``: the field
        manager of an Update operation, whose changes are recorded in managedFields
        (:func:`fieldmanager.record_update`); None for an apply, which sets them itself. 404
        when the object is absent."""
        sub = subresource
        deleting: dict[str, Any] = {}
        key = object_key(resource, namespace, name)

        async def mutate(cur: dict[str, Any]) -> dict[str, Any]:
            # cur is the store's private copy; make_new (the PUT body, or a patch function,
            # which returns a new value) leaves it untouched for the checks against "old"
            new = make_new(cur)
            if not isinstance(new, dict):
                raise st.bad_request("the patched object is not an object")
            new.setdefault("apiVersion", resource.api_version)
            new.setdefault("kind", resource.kind)
            nmd = new.get("metadata")
            cur_mf = (cur.get("metadata") or {}).get("managedFields")
            sent = nmd.get("managedFields") if isinstance(nmd, dict) else None
            if isinstance(nmd, dict) and ((sub and manager is not None) or not fieldmanager.valid_entries(sent)):
                # a subresource write always starts from the stored entries; a main-resource
                # write that leaves them out (or sends unreadable ones) keeps them, [] resets
                # them (fieldmanager.go decodeLiveOrNew)
                if cur_mf:
                    nmd["managedFields"] = cur_mf
                else:
                    nmd.pop("managedFields", None)
            strategy.prepare_for_update(resource.facts_key, new, cur, sub)
            new["metadata"].pop("resourceVersion", None)
            sem.apply_defaults(resource.facts_key, new)
            attrs = adm.Attributes(adm.UPDATE, resource, namespace, name, new, cur, sub, dry_run)
            await self.admission.admit(attrs)
            self.validate(resource, new, cur)
            await self.admission.validate(attrs)
            if sub == "":
                await self.allocate(resource, new, cur, dry_run)
            if manager is not None:
                if new["metadata"].get("managedFields") == []:
                    del new["metadata"]["managedFields"]
                fieldmanager.record_update(resource.lists_key, cur, new, manager, api_version or resource.api_version,
                                           apitime.now(), sub,
                                           strategy.resets_status(resource.facts_key))
            if strategy.should_delete_during_update(resource.facts_key, new, cur):
                deleting["rv"] = cur["metadata"].get("resourceVersion")
                deleting["obj"] = new
                raise _DeleteInstead()
            return new
        try:
            updated = await self.store.guaranteed_update(
                key, mutate, precondition_rv=precondition_rv, precondition_uid=precondition_uid,
                resource_plural=resource.plural, group=resource.group, name=name, dry_run=dry_run,
                cached=self.cached(resource, key))
        except KeyNotFound:
            raise st.not_found(resource, name) from None
        except Conflict as e:
            raise st.conflict(resource, name, str(e)) from None
        except _DeleteInstead:
            out: dict[str, Any] = deleting["obj"]
            out["metadata"]["resourceVersion"] = deleting["rv"]
            if dry_run:
                return out
            try:
                await self.store.delete(key, precondition_rv=deleting["rv"])
            except KeyNotFound:
                pass  # another finalizer removal raced us to the deletion
            except Conflict:
                raise st.conflict_modified(resource, name) from None
            event(log, "object.deleted", logging.DEBUG, resource=resource.plural,
                  object=f"{namespace or ''}/{name}", reason="finalizers-emptied")
            return out
        if resource.kind == "Pod" and sub == "status":
            self.tracer.on_pod_status(updated)
        return updated

    async def apply(self, resource: Any, namespace: str | None, name: str, config: dict[str, Any], *,
                    manager: str, force: bool, user_agent: str = "", dry_run: bool = False,
                    check_patched: Callable[[dict[str, Any]], None] | None = None,
                    api_version: str = "") -> tuple[dict[str, Any], bool]:
        """Server-side apply of ``config`` (decoded, kind checked) by ``manager``; returns
        (object, created). An absent object is created through :meth:`create` (one
        ``Apply`` managedFields entry); otherwise the configuration is merged
        (:func:`fieldmanager.apply`; conflicts → 409 with FieldManagerConflict causes unless
        ``force``) and written by :meth:`update`. ``check_patched(new)`` decodes the merged
        object (422 for what does not decode). A merge that fails → 422."""
        now = apitime.now()
        try:
            await self.store.get(object_key(resource, namespace, name))
        except KeyNotFound:
            obj = codec.clone(config)
            obj.setdefault("metadata", {})["name"] = name
            if resource.namespaced:
                # the path's namespace wins over the configuration's, as it always has here
                # (Kubernetes' patch.go checkName would answer 400 for a different one)
                obj["metadata"]["namespace"] = namespace
            decoder.decode(resource.facts_key, obj)  # an apply's configuration, checked: drops nothing else
            created = await self.create(resource, namespace, obj, CreateOptions(
                manager, apply_config=config, user_agent=user_agent, verb="PATCH", dry_run=dry_run,
                api_version=api_version))
            return created, True

        def make_new(cur: dict[str, Any]) -> dict[str, Any]:
            try:
                new = fieldmanager.apply(resource.lists_key, cur, config, manager, api_version or resource.api_version,
                                         now, force)
            except sem.PatchError as e:
                raise APIErrorFromPatch(str(e)) from None
            if isinstance(new, dict) and check_patched is not None:
                check_patched(new)
            return new
        try:
            return await self.update(resource, namespace, name, make_new, dry_run=dry_run), False
        except fieldmanager.ApplyConflict as e:
            raise st.APIError(409, "Conflict", e.message(), {"causes": e.causes()}) from None
        except APIErrorFromPatch as e:
            raise st.APIError(422, "Invalid", str(e)) from None

    # ------------------------------------------------------------------ delete
    async def delete(self, resource: Any, namespace: str | None, name: str, opts: dict[str, Any]) -> dict[str, Any]:
        """Delete one object, or start its graceful / finalizer deletion; returns the object.

        As ``Store.Delete`` in ``store.go`` with ``rest.BeforeDelete`` (``pkg/registry/rest/delete.go``):
        preconditions (uid, resourceVersion → 409); pods get a grace period
        (``pkg/registry/core/pod/strategy.go`` CheckGracefulDelete: the request's, else
        spec.terminationGracePeriodSeconds; 0 when unscheduled or finished) → deletionTimestamp
        = now + grace, and the kubelet finishes with gracePeriodSeconds=0; a pending graceful
        deletion may only be shortened. propagationPolicy / orphanDependents set the ``orphan``
        / ``foregroundDeletion`` finalizers (deletionFinalizersForGarbageCollection) that the
        controller-manager's garbage collector acts on; an object with finalizers is only
        marked (deletionTimestamp, deletionGracePeriodSeconds 0) and goes when the last
        finalizer is removed. ``opts``: DeleteOptions (``dryRun`` a bool). 404 when absent.
        A resourceVersion precondition equal to the watch cache's copy saves the etcd read
        (:meth:`_at_precondition`); the preconditions are checked again on the object written.
        """
        key = object_key(resource, namespace, name)
        pre = opts.get("preconditions") or {}
        cur = self._at_precondition(resource, key, pre)  # read-only: the cache's own object
        shared = cur is not None
        if cur is None:
            try:
                cur = await self.store.get(key)
            except KeyNotFound:
                raise st.not_found(resource, name) from None
        md = cur.get("metadata") or {}
        if pre.get("uid") and pre["uid"] != md.get("uid"):
            raise st.conflict(resource, name, f"Precondition failed: UID in precondition: {pre['uid']}, "
                                              f"UID in object meta: {md.get('uid')}")
        if pre.get("resourceVersion") and pre["resourceVersion"] != md.get("resourceVersion"):
            raise st.conflict(resource, name, f"Precondition failed: ResourceVersion in precondition: "
                                              f"{pre['resourceVersion']}, ResourceVersion in object meta: "
                                              f"{md.get('resourceVersion')}")
        reason = strategy.kind_strategy(resource.facts_key).delete_forbidden
        if reason is not None and reason(cur) is not None:
            raise st.forbidden(resource, name, str(reason(cur)))
        await self.admission.validate(adm.Attributes(adm.DELETE, resource, namespace, name, None, cur,
                                                     dry_run=bool(opts.get("dryRun"))))
        if opts.get("dryRun"):
            return codec.clone(cur) if shared else cur  # dryRun=All: checks done, nothing written
        if resource.kind == "Namespace":
            return await self._delete_namespace(resource, codec.clone(cur) if shared else cur, opts)
        graceful, grace = False, 0
        if md.get("deletionTimestamp"):
            prev = md.get("deletionGracePeriodSeconds")
            if prev:
                req = opts.get("gracePeriodSeconds")
                if req is None or req >= prev:
                    # graceful deletion pending: nothing changes (finalizers neither)
                    return codec.clone(cur) if shared else cur
                graceful, grace = True, max(req, 0)
        else:
            grace = strategy.grace_period(resource.facts_key, cur, opts.get("gracePeriodSeconds"))
            graceful = grace > 0
        fins_old = list(md.get("finalizers") or [])
        fins = strategy.gc_finalizers(fins_old, opts)
        if (graceful and grace > 0) or fins:
            def mark(o: dict[str, Any]) -> dict[str, Any]:
                # the finalizers of the object being written, not of the (possibly stale) copy
                # the decision was made on: a finalizer removed meanwhile stays removed
                m = o["metadata"]
                rv = pre.get("resourceVersion")
                if rv and rv != m.get("resourceVersion"):
                    # the preconditions hold on the object written (preconditions.Check in
                    # GuaranteedUpdate), not only on the copy read first
                    raise Conflict(f"Precondition failed: ResourceVersion in precondition: {rv}, "
                                   f"ResourceVersion in object meta: {m.get('resourceVersion')}", key)
                now_fins = strategy.gc_finalizers(list(m.get("finalizers") or []), opts)
                if not now_fins and not (graceful and grace > 0):
                    raise _DeleteInstead()   # nothing holds it any more: delete it outright
                if now_fins:
                    m["finalizers"] = now_fins
                else:
                    m.pop("finalizers", None)
                now = apitime.clock()
                if graceful:
                    m["deletionTimestamp"] = apitime.format_time(now + grace)
                    m["deletionGracePeriodSeconds"] = grace
                elif not m.get("deletionTimestamp"):
                    m["deletionTimestamp"] = apitime.format_time(now)
                    m["deletionGracePeriodSeconds"] = 0
                return o
            try:
                out = await self.store.guaranteed_update(key, mark, precondition_uid=md.get("uid"), cached=cur)
            except KeyNotFound:
                raise st.not_found(resource, name) from None
            except Conflict as e:
                raise st.conflict(resource, name, str(e)) from None
            except _DeleteInstead:
                out = None
            if out is not None:
                event(log, "object.deleting", logging.DEBUG, resource=resource.plural,
                      object=f"{namespace or ''}/{name}",
                      grace=grace if graceful else 0,
                      finalizers=",".join((out.get("metadata") or {}).get("finalizers") or []))
                return out
            # the current object lost its last finalizer: delete it, read afresh
            read_from: dict[str, Any] | None = None
        else:
            read_from = cur
        try:
            deleted = await self.store.delete(key, precondition_uid=md.get("uid"), cached=read_from,
                                              precondition_rv=pre.get("resourceVersion") or None)
        except KeyNotFound:
            raise st.not_found(resource, name) from None
        except Conflict as e:
            raise st.conflict(resource, name, str(e)) from None
        event(log, "object.deleted", logging.DEBUG, resource=resource.plural, object=f"{namespace or ''}/{name}")
        return deleted

    def _at_precondition(self, resource: Any, key: str, pre: dict[str, Any]) -> dict[str, Any] | None:
        """The watch cache's object (read-only: the writes below copy it once, as
        :meth:`Store.delete` returns a copy of a ``cached`` object) when it is at the DELETE's
        resourceVersion precondition (the GC's deletes carry one), else None (read from etcd).

        Kubernetes' ``Store.Delete`` reads the object from etcd, then the cacher passes its copy
        to the conditional delete. When the cache's copy is at the precondition's revision,
        the etcd read can only return that object or a newer one (which fails the precondition),
        and every write that follows is conditional on that revision (``mod_revision`` compare),
        so deciding on the copy answers as the etcd read would and saves one round trip."""
        rv = pre.get("resourceVersion")
        if not rv:
            return None
        c = self.cached(resource, key)
        if c is None or (c.get("metadata") or {}).get("resourceVersion") != rv:
            return None
        return c

    async def _delete_namespace(self, resource: Any, ns: dict[str, Any], opts: dict[str, Any]) -> dict[str, Any]:
        """First DELETE marks the namespace Terminating (deletionTimestamp, status.phase); the
        controller-manager's namespace controller empties it and removes the ``kubernetes``
        finalizer through ``/finalize``, which deletes it. A later DELETE deletes it once
        spec.finalizers is empty (``pkg/registry/core/namespace/storage/storage.go`` Delete).
        """
        md = ns.get("metadata") or {}
        name = md.get("name", "")
        key = object_key(resource, None, name)
        if not md.get("deletionTimestamp"):
            def mark(o: dict[str, Any]) -> dict[str, Any]:
                m = o["metadata"]
                m.setdefault("deletionTimestamp", apitime.now())
                o.setdefault("status", {})["phase"] = "Terminating"
                fins = strategy.gc_finalizers(list(m.get("finalizers") or []), opts)
                if fins:
                    m["finalizers"] = fins
                else:
                    m.pop("finalizers", None)
                return o
            try:
                out = await self.store.guaranteed_update(key, mark, precondition_uid=md.get("uid"))
            except KeyNotFound:
                raise st.not_found(resource, name) from None
            event(log, "namespace.terminating", namespace=name)
            return out
        if (ns.get("spec") or {}).get("finalizers") or md.get("finalizers"):
            return ns
        try:
            deleted = await self.store.delete(key, precondition_uid=md.get("uid"))
        except KeyNotFound:
            raise st.not_found(resource, name) from None
        event(log, "object.deleted", resource="namespaces", object=name)
        return deleted

    async def delete_collection(self, resource: Any, namespace: str | None,
                                matches: Callable[[dict[str, Any]], bool],
                                opts: dict[str, Any]) -> tuple[Objects, int]:
        """Delete every object ``matches`` accepts (``store.go`` DeleteCollection: list, then
        :meth:`delete` each; one already gone is skipped); returns (deleted objects, revision
        of the list)."""
        res = await self.store.list(collection_prefix(resource, namespace), predicate=matches)
        out: Objects = []
        for o in res.items:
            md = o["metadata"]
            try:
                out.append(await self.delete(resource, md.get("namespace"), md["name"], opts))
            except st.APIError as e:
                if e.code != 404:
                    raise
        return out, res.revision

    # ------------------------------------------------------------------ pods/binding, scale
    async def bind(self, namespace: str | None, name: str, node: str, annotations: dict[str, Any] | None,
                   uid: str | None, dry_run: bool = False) -> dict[str, Any]:
        """Set the pod's spec.nodeName once and its PodScheduled condition True (``pod/storage/
        storage.go`` assignPod); the Binding's annotations are copied. 409 when the pod is
        being deleted or already bound, 404 when absent. Returns the pod."""
        pods = R.PODS
        key = object_key(pods, namespace, name)

        def assign(pod: dict[str, Any]) -> dict[str, Any]:
            md = pod["metadata"]
            if md.get("deletionTimestamp"):
                raise st.conflict(pods, name, f"pod {name} is being deleted, cannot be assigned to a host")
            spec = pod.setdefault("spec", {})
            if spec.get("nodeName"):
                raise st.conflict(pods, name, f'pod {name} is already assigned to node "{spec["nodeName"]}"')
            spec["nodeName"] = node
            if annotations:
                md.setdefault("annotations", {}).update(annotations)
            status = pod.setdefault("status", {})
            conds = status.setdefault("conditions", [])
            now = apitime.now()
            for c in conds:
                if c.get("type") == "PodScheduled":
                    c.update({"status": "True", "lastTransitionTime": now})
                    c.pop("reason", None)
                    c.pop("message", None)
                    break
            else:
                conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                              "lastTransitionTime": now})
            return pod
        try:
            pod = await self.store.guaranteed_update(key, assign, precondition_uid=uid,
                                                     resource_plural="pods", name=name,
                                                     cached=self.cached(pods, key), dry_run=dry_run)
        except KeyNotFound:
            raise st.not_found(pods, name) from None
        except Conflict as e:
            raise st.conflict(pods, name, str(e)) from None
        if not dry_run:
            self.tracer.on_bound(pod)
            event(log, "pod.bound", logging.DEBUG, pod=f"{namespace}/{name}", node=node,
                  rv=pod["metadata"]["resourceVersion"])
        return pod

    @staticmethod
    def scale_of(resource: Any, obj: dict[str, Any]) -> dict[str, Any]:
        """The autoscaling/v1 Scale of a workload (``pkg/registry/apps/deployment/storage``
        ScaleREST: spec.replicas, status.replicas and the selector as a string); a custom
        resource's from its CRD's scale paths (:func:`controlplane.api.groups.apiextensions.custom_scale`)."""
        if apiextensions.scale_paths(resource) is not None:
            return apiextensions.custom_scale(resource, obj)
        md = obj["metadata"]
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        sel = spec.get("selector") or {}
        if isinstance(sel, dict) and ("matchLabels" in sel or "matchExpressions" in sel):
            try:
                from controlplane.selectors import selector_to_string
                sel_s = selector_to_string(sel)
            except Exception:
                sel_s = ",".join(f"{k}={v}" for k, v in (sel.get("matchLabels") or {}).items())
        else:
            sel_s = ",".join(f"{k}={v}" for k, v in (sel or {}).items())
        return {"kind": "Scale", "apiVersion": "autoscaling/v1",
                "metadata": {k: md[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                             if k in md},
                "spec": {"replicas": int(spec.get("replicas", 1) if spec.get("replicas") is not None else 1)},
                "status": {"replicas": int(status.get("replicas", 0) or 0), "selector": sel_s}}

    async def update_scale(self, resource: Any, namespace: str | None, name: str,
                           make_scale: Mutation, manager: str, dry_run: bool = False) -> dict[str, Any]:
        """Write spec.replicas from ``make_scale(current Scale) -> Scale``; replicas must be a
        non-negative integer (422). generation +1 when it changes; the writer owns
        spec.replicas (a managedFields entry with subresource ``scale``:
        managedfields.ScaleHandler ToParent). Returns the new Scale; 404 when absent."""
        key = object_key(resource, namespace, name)

        def mutate(cur: dict[str, Any]) -> dict[str, Any]:
            scale = make_scale(self.scale_of(resource, cur))
            if not isinstance(scale, dict):
                raise st.bad_request("the body must be a Scale")
            rep = (scale.get("spec") or {}).get("replicas")
            if not isinstance(rep, int) or rep < 0:
                errs = st.error_list([st.cause("FieldValueInvalid", "must be greater than or equal to 0",
                                               "spec.replicas")])
                raise st.invalid_fields("Scale", "autoscaling", name, errs,
                                        f'Scale.autoscaling "{name}" is invalid: spec.replicas: Invalid value: '
                                        f'{rep}: must be greater than or equal to 0')
            new = codec.clone(cur)
            paths = apiextensions.scale_paths(resource)
            if paths is not None:
                if apiextensions.get_path(new, paths["specReplicasPath"]) != rep:
                    apiextensions.set_path(new, paths["specReplicasPath"], rep)
                    new["metadata"]["generation"] = int(new["metadata"].get("generation") or 0) + 1
                    self.validate(resource, new, cur)  # the custom resource's schema holds (ScaleREST Update)
                    fieldmanager.record_update(resource.lists_key, cur, new, manager, resource.api_version,
                                               apitime.now(), "scale")
                return new
            if new.get("spec", {}).get("replicas") != rep:
                new.setdefault("spec", {})["replicas"] = rep
                new["metadata"]["generation"] = int(new["metadata"].get("generation") or 0) + 1
                fieldmanager.record_update(resource.lists_key, cur, new, manager, resource.api_version,
                                           apitime.now(), "scale")
            return new
        try:
            out = await self.store.guaranteed_update(key, mutate, resource_plural=resource.plural,
                                                     cached=self.cached(resource, key),
                                                     group=resource.group, name=name, dry_run=dry_run)
        except KeyNotFound:
            raise st.not_found(resource, name) from None
        return self.scale_of(resource, out)
