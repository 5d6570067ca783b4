"""HTTP handlers of every resource of ``controlplane.api.resources``, on the registry store.

One handler set, driven by the resource table (no per-kind copies), following
``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/`` (create.go, get.go, update.go,
patch.go, delete.go; watch.go is :mod:`components.apiserver.watch`): each handler reads
the request (:mod:`components.apiserver.negotiation`: body, content type, query), calls
the storage semantics of :class:`~components.apiserver.registrystore.RegistryStore`
(``genericregistry.Store``) and writes the answer. :meth:`RestHandlers.serve` dispatches
one request on its :class:`~components.apiserver.routing.RequestInfo`.
Every body is decoded into its kind's Go types before anything else looks at it
(:mod:`controlplane.api.decoder`: wrong types and out-of-range integers answer 400, or 422
for a patched object, in the Go decoder's words; unknown fields are dropped per
``fieldValidation``), so nothing stored can break a reader.
Errors are raised as :class:`~components.apiserver.status.APIError` (answered as Status).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from aiohttp import web

from components.apiserver import auth, computed, discovery, eviction, listoptions, podlog, reviews, strategy
from components.apiserver import negotiation as neg
from components.apiserver import semantics as sem
from components.apiserver import status as st
from components.apiserver.cache import TooOldResourceVersion, WatchEvent, cache_name
from components.apiserver.registrystore import APIErrorFromPatch, CreateOptions, RegistryStore
from components.apiserver.routing import RequestInfo
from components.apiserver.semantics import decoder
from components.apiserver.watch import WatchServer
from controlplane.api import codec
from controlplane.api import resources as R
from controlplane.log import event

log = logging.getLogger("apiserver.rest")

_SCALE, _EVICTION = SimpleNamespace(kind="Scale"), SimpleNamespace(kind="Eviction")
_TOKEN_REQUEST = SimpleNamespace(kind="TokenRequest")

#: pod subresources that Kubernetes proxies to the kubelet as a stream (SPDY / WebSocket)
STREAMING_SUBRESOURCES = ("exec", "attach", "portforward")


class RestHandlers:
    """The REST verbs of every resource.

    Collaborators: ``store`` (the storage semantics), ``watch`` (watch streams from the
    watch caches), ``ready()`` (False while the watch caches are not filled: 503) and
    ``authn`` (:class:`components.apiserver.authentication.config.Authn`: TokenReview
    answers and the ``serviceaccounts/token`` subresource; None: neither is served by it)."""

    def __init__(self, store: RegistryStore, watch: WatchServer, ready: Callable[[], bool],
                 authn: Any = None, reviewer: Any = None) -> None:
        self.store = store
        self.watch = watch
        self.ready = ready
        self.authn = authn
        #: answers the authorization.k8s.io reviews with the configured authorizers
        #: (:class:`components.apiserver.authorization.reviews.AccessReviewer`); None: the
        #: registry entries' own (always-allow) answers
        self.reviewer = reviewer

    # ---------------------------------------------------------------- routing
    async def serve(self, request: web.Request, info: RequestInfo) -> web.StreamResponse:
        """Dispatch one API request on its RequestInfo (parsed once, by the server's
        middleware): group-version discovery, the collection verbs, the item verbs and the
        subresources. The streaming subresources pods/exec, attach and portforward (kubelet
        connections in Kubernetes: ``pkg/registry/core/pod/rest/subresources.go``) answer 400
        with a Status saying why: no process runs behind a simulated container."""
        m = request.method
        if info.resource is None:
            if m != "GET":
                raise st.method_not_allowed()
            doc = discovery.api_resource_list(info.group_version)
            if doc is None:
                raise st.not_found_path()
            return neg.json_response(doc)
        r = info.resource
        if r.computed:
            # a read-only resource computed from the watch caches (components.apiserver.computed)
            if not self.ready():
                raise st.unavailable("the apiserver is not ready: waiting for etcd")
            return computed.serve(request, info, self.store.caches)
        if not r.stored:
            # a create-only review, never stored (components.apiserver.reviews): POST only
            if m != "POST" or info.name is not None or info.watch_path:
                raise st.method_not_allowed()
            return await self.review(request, info)
        if not self.ready():
            raise st.unavailable("the apiserver is not ready: waiting for etcd")
        if info.name is None:
            if m == "GET":
                if r.kind == "Binding":
                    raise st.method_not_allowed()
                return await self.list_or_watch(request, info)
            if m == "POST":
                return await self.create(request, info)
            if m == "DELETE" and r.kind != "Binding":
                return await self.delete_collection(request, info)
            raise st.method_not_allowed()
        if info.watch_path:
            request = request.clone(rel_url=request.rel_url.update_query({"fieldSelector": _name_sel(request, info)}))
            return await self.list_or_watch(request, dataclasses.replace(info, name=None))
        sub = info.subresource
        if sub == "binding":
            if m != "POST":
                raise st.method_not_allowed()
            return await self.create(request, info)
        if sub == "finalize":
            if m != "PUT":
                raise st.method_not_allowed()
            return await self.update(request, info)
        if sub == "eviction":
            if m != "POST":
                raise st.method_not_allowed()
            return await self.evict(request, info)
        if sub == "token" and self.authn is not None:
            if m != "POST":
                raise st.method_not_allowed()
            return await self.token_request(request, info)
        if sub == "log":
            if m != "GET":
                raise st.method_not_allowed()
            return await self.pod_log(request, info)
        if sub in STREAMING_SUBRESOURCES:
            if m not in ("GET", "POST"):
                raise st.method_not_allowed()
            await self.get(request, info)  # 404 for a pod that doesn't exist, as the real path
            raise st.bad_request(
                f"pods/{sub} is not available in controlplane: the container runtime is simulated, "
                f"so no process runs in container(s) of pod {info.name!r} (kubectl logs and describe work)")
        if sub not in (None, "status", "scale", "approval"):
            raise st.method_not_allowed()
        if m == "GET":
            return await self.get(request, info)
        if m == "PUT":
            return await self.update(request, info)
        if m == "PATCH":
            return await self.patch(request, info)
        if m == "DELETE" and sub is None:
            return await self.delete(request, info)
        raise st.method_not_allowed()

    # ---------------------------------------------------------------- decoding helpers
    def _decode_patched(self, request: web.Request, kind: str, new: dict, ct: str, patch: Any,
                        api_version: str | None = None) -> None:
        """A patched object (JSON, merge or strategic merge patch) into ``kind``'s Go types, in
        place. What does not decode → 422 Invalid on field ``patch`` whose value is the patched
        JSON (JSON / merge patch) or the patch as Go's ``%+v`` prints it (strategic merge), as
        ``jsonPatcher.applyPatchToCurrentObject`` / ``applyPatchToObject`` (handlers/patch.go;
        the detail is the JSON decoder's words also for strategic merge, whose unstructured
        converter words it a little differently); unknown fields with ``fieldValidation=Strict``
        the same, with the strict decoding error."""
        def invalid(detail: str) -> st.APIError:
            smp = ct == "application/strategic-merge-patch+json"
            return _patch_invalid(decoder.go_format(patch) if smp else codec.dumps(new).decode(), detail)
        try:
            unknown = decoder.decode(kind, new, api_version=api_version)
        except decoder.DecodeError as e:
            raise invalid(e.message) from None
        neg.unknown_fields(request, unknown, invalid)

    def _check_patch_depth(self, request: web.Request, kind: str, patch: Any, ct: str,
                           api_version: str | None = None) -> None:
        """No served type nests more than :data:`~components.apiserver.negotiation.PATCH_MAX_DEPTH` levels, and merging walks a
        patch recursively: a deeper merge / strategic merge patch is decoded first (in place,
        its ``null`` deletions kept) — a value of the wrong type answers as the patched object
        would (422 on field ``patch``), unknown fields are dropped before the merge (or refused
        with ``fieldValidation=Strict``), as the decoder would drop them from the result.
        Anything still that deep (a JSON patch's values) → 400 ``exceeded max depth``."""
        if decoder.depth_at_most(patch, neg.PATCH_MAX_DEPTH):
            return
        if isinstance(patch, dict):
            def invalid(detail: str) -> st.APIError:
                return _patch_invalid(decoder.go_format(patch), detail)
            try:
                unknown = decoder.decode(kind, patch, prune=True, readonly=True, api_version=api_version)
            except decoder.DecodeError as e:
                raise invalid(e.message) from None
            neg.unknown_fields(request, unknown, invalid)
            if decoder.depth_at_most(patch, neg.PATCH_MAX_DEPTH):
                return
        raise st.bad_request(f"invalid character '{{' exceeded max depth of {neg.PATCH_MAX_DEPTH} for a patch")

    @staticmethod
    def _decode_apply(resource: Any, info: RequestInfo, config: dict) -> None:
        """A server-side apply configuration against ``resource``'s types, unchanged: a value
        of the wrong type or a field the type does not have → 400 ``failed to create typed
        patch object (<ns>/<name>; <group>/<version>, Kind=<Kind>): .<path>: ...`` as the
        structured-merge-diff type converter words it (``fieldmanager/internal/structuredmerge.go``)."""
        where = f"{info.namespace or ''}/{info.name}; {resource.group}/{resource.version}, Kind={resource.kind}"
        try:
            unknown = decoder.decode(resource.facts_key, config, prune=False, readonly=True,
                                     api_version=_version_of(resource))
        except decoder.DecodeError as e:
            raise st.bad_request(f"failed to create typed patch object ({where}): .{e.path}: "
                                 f"{_smd_message(e)}") from None
        if unknown:
            raise st.bad_request(f"failed to create typed patch object ({where}): .{unknown[0]}: "
                                 "field not declared in schema")

    # ---------------------------------------------------------------- collection
    async def list_or_watch(self, request: web.Request, info: RequestInfo) -> web.StreamResponse:
        """``GET`` of a collection: a watch (``?watch=true`` or a ``/watch/`` path), else a
        list (``handlers/get.go`` ListResource) as JSON or a Table."""
        matches = neg.list_predicate(info.resource, request.query, info.namespace)
        if info.watch_path or neg.parse_bool(request.query.get("watch")):
            return await self.watch.serve(request, info, matches)
        resource = info.resource
        rv = request.query.get("resourceVersion", "")
        rv_n = neg.parse_rv(rv)
        match, _ = listoptions.parse(request.query, watch=False)
        limit_s = request.query.get("limit", "") or "0"
        try:
            limit = max(int(limit_s), 0)
        except ValueError:
            raise st.bad_request(f"invalid limit: {limit_s!r}") from None
        cont = request.query.get("continue", "")
        res = await self.store.list(_stored(resource), info.namespace, matches, rv, rv_n, match, limit, cont)
        meta = {"resourceVersion": str(res.revision), **res.meta}
        if neg.wants_table(request):
            t = sem.table(resource.facts_key, [neg.with_type(resource, o) for o in res.items], str(res.revision),
                          include_object=neg.include_object(request))
            t.setdefault("metadata", {}).update(meta)
            return neg.json_response(t, content_type=neg.TABLE_CT)
        return neg.json_response({"kind": _list_kind(resource), "apiVersion": resource.api_version,
                                  "metadata": meta,
                                  "items": [neg.with_type(resource, _served(resource, o)) for o in res.items]})

    async def create(self, request: web.Request, info: RequestInfo) -> web.Response:
        """``POST`` of a collection (``handlers/create.go``): 201 with the created object; a
        Binding (``POST bindings`` or ``pods/NAME/binding``) binds the pod."""
        resource = info.resource
        if resource.kind == "Binding" or info.subresource == "binding":
            binding = neg.decode_object_body(await neg.read_body(request), neg.body_content_type(request),
                                             R.get("bindings"))
            neg.keep_request_metadata(request, binding)
            return await self.bind(request, info, binding)
        obj = neg.decode_object_body(await neg.read_body(request), neg.body_content_type(request), resource)
        neg.keep_request_metadata(request, obj)
        neg.check_type(resource, obj)
        neg.decode_typed(request, resource.facts_key, obj, _version_of(resource))
        created = await self.store.create(_stored(resource), info.namespace, _to_storage(resource, obj), CreateOptions(
            neg.field_manager(request), user_agent=request.headers.get("User-Agent", ""), verb="POST",
            dry_run=neg.dry_run(request), api_version=_version_of(resource) or "",
            user=auth.request_user(request).as_dict()))
        for w in strategy.warnings(resource.facts_key, created, None):
            neg.add_warning(request, w)
        return _respond(request, resource, created, 201)

    async def review(self, request: web.Request, info: RequestInfo) -> web.Response:
        """``POST`` of a create-only review (:mod:`components.apiserver.reviews`): decoded as
        a create is, validated, answered by the entry's review function; 201, nothing stored."""
        resource = info.resource
        obj = neg.decode_object_body(await neg.read_body(request), neg.body_content_type(request), resource)
        neg.check_type(resource, obj)
        neg.decode_typed(request, resource.facts_key, obj)
        who = auth.request_user(request)
        review = None
        if resource.kind == "TokenReview" and self.authn is not None:
            review = self.authn.authentication.token_review
        elif self.reviewer is not None and resource.group == "authorization.k8s.io":
            reviewer, kind = self.reviewer, resource.kind

            async def review(o: dict[str, Any], _user: dict[str, Any]) -> dict[str, Any]:
                out: dict[str, Any] = reviewer.review(kind, o, who)
                return out
        return neg.object_response(request, resource,
                                   await reviews.answer(resource, info.namespace, obj, who.as_dict(), review), 201)

    async def token_request(self, request: web.Request, info: RequestInfo) -> web.Response:
        """``POST serviceaccounts/NAME/token`` with a TokenRequest
        (:mod:`components.apiserver.authentication.tokenrequest`): 201 with the token."""
        body = neg.decode_object_body(await neg.read_body(request), neg.body_content_type(request), _TOKEN_REQUEST)
        if body.get("kind", "TokenRequest") != "TokenRequest":
            raise st.bad_request("the body of the request must be a TokenRequest (authentication.k8s.io/v1)")
        neg.decode_typed(request, "TokenRequest", body)
        body.setdefault("kind", "TokenRequest")
        body.setdefault("apiVersion", "authentication.k8s.io/v1")
        out, warnings = await self.authn.token_requests.create(info.namespace or "", info.name or "", body)
        for w in warnings:
            neg.add_warning(request, w)
        return neg.json_response(out, 201)

    # ---------------------------------------------------------------- item
    async def get(self, request: web.Request, info: RequestInfo) -> web.Response:
        """``GET`` of an item or its ``scale`` (``handlers/get.go``)."""
        neg.parse_rv(request.query.get("resourceVersion"))
        obj = await self.store.get(_stored(info.resource), info.namespace, info.name or "")
        if info.subresource == "scale":
            return neg.json_response(self.store.scale_of(info.resource, obj))
        return _respond(request, info.resource, obj)

    async def update(self, request: web.Request, info: RequestInfo) -> web.Response:
        """``PUT`` of an item, its ``status``, ``scale`` or ``finalize`` (``handlers/update.go``):
        the body's name and namespace must be the path's (400); its resourceVersion and uid are
        preconditions (409)."""
        resource, name = info.resource, info.name or ""
        if info.subresource == "scale":
            scale = neg.decode_object_body(await neg.read_body(request), neg.body_content_type(request), _SCALE)
            neg.decode_typed(request, "Scale", scale)
            return neg.json_response(await self.store.update_scale(
                resource, info.namespace, name, lambda cur: scale, neg.field_manager(request),
                neg.dry_run(request)))
        obj = neg.decode_object_body(await neg.read_body(request), neg.body_content_type(request), resource)
        neg.check_type(resource, obj)
        neg.decode_typed(request, resource.facts_key, obj, _version_of(resource))
        obj = _to_storage(resource, obj)
        md = obj.get("metadata") or {}
        if md.get("name") != info.name:
            raise st.bad_request(f"the name of the object ({md.get('name') or ''}) does not match the name on the "
                                 f"URL ({info.name})")
        if resource.namespaced and md.get("namespace") and md["namespace"] != info.namespace:
            raise st.bad_request("the namespace of the provided object does not match the namespace sent on "
                                 "the request")
        updated = await self.store.update(_stored(resource), info.namespace, name, lambda cur: codec.clone(obj),
                                          subresource=info.subresource or "",
                                          precondition_rv=md.get("resourceVersion") or None,
                                          precondition_uid=md.get("uid") or None,
                                          manager=neg.field_manager(request), dry_run=neg.dry_run(request),
                                          api_version=_version_of(resource) or "")
        for w in strategy.warnings(resource.facts_key, updated, updated):
            neg.add_warning(request, w)
        return _respond(request, resource, updated)

    async def patch(self, request: web.Request, info: RequestInfo) -> web.Response:
        """``PATCH`` of an item, its ``status`` or its ``scale`` (``handlers/patch.go``): JSON patch,
        merge patch, strategic merge patch, or server-side apply; 415 for another Content-Type,
        413 beyond :data:`~components.apiserver.negotiation.MAX_JSON_PATCH_OPS` operations, 422
        for a patch that does not apply or a patched object that does not decode."""
        resource, name = info.resource, info.name or ""
        ct = request.content_type.lower()
        if ct not in neg.PATCH_TYPES:
            raise st.unsupported_media_type(ct)
        if ct == "application/strategic-merge-patch+json" and resource.extra.get("crd") \
                and info.subresource != "scale":
            # custom resources have no Go struct to read patch strategies from (handlers/patch.go
            # with the CR handler's patch types: negotiation.NewUnsupportedMediaTypeError)
            raise st.APIError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                              "accepted media types include: application/json-patch+json, "
                              "application/merge-patch+json, application/apply-patch+yaml")
        raw = await neg.read_body(request)
        if not raw.strip():
            raise st.bad_request("the body of the request was in an unknown format - empty body")
        try:
            patch = neg.parse_body(raw, ct)
        except neg.BodyError as e:
            # handlers/patch.go: apply → "error decoding YAML: ...", merge → "error decoding
            # patch: ...", JSON and strategic merge patches → the decoder's error as it is
            prefix = {"application/apply-patch+yaml": "error decoding YAML: ",
                      "application/merge-patch+json": "error decoding patch: "}.get(ct, "")
            raise st.bad_request(prefix + e.message) from None
        kind = "Scale" if info.subresource == "scale" else resource.facts_key
        if ct == "application/json-patch+json" and isinstance(patch, list) and len(patch) > neg.MAX_JSON_PATCH_OPS:
            raise st.too_large(f"The allowed maximum operations in a JSON patch is {neg.MAX_JSON_PATCH_OPS}, "
                               f"got {len(patch)}")
        if ct != "application/apply-patch+yaml":  # an apply's configuration is checked as it is
            self._check_patch_depth(request, kind, patch, ct, _version_of(resource))

        def apply(cur: dict[str, Any]) -> Any:
            try:
                if ct == "application/json-patch+json":
                    if not isinstance(patch, list):
                        raise st.bad_request(f"json: cannot unmarshal {decoder.json_kind(patch)} into Go value of "
                                             "type jsonpatch.Patch")
                    try:
                        return sem.json_patch(cur, patch)
                    except sem.PatchError as e:
                        raise APIErrorFromPatch(str(e), generic=True) from None
                if not isinstance(patch, dict):
                    raise st.bad_request("the body of the request was in an unknown format - expected an object")
                if ct == "application/strategic-merge-patch+json":
                    return sem.strategic_merge_patch(cur, patch, kind)
                return sem.json_merge_patch(cur, patch)
            except sem.PatchError as e:
                raise APIErrorFromPatch(str(e)) from None
        precondition = None
        if isinstance(patch, dict):
            precondition = ((patch.get("metadata") or {}) if isinstance(patch.get("metadata"), dict)
                            else {}).get("resourceVersion")

        def apply_checked(cur: dict[str, Any]) -> Any:
            if info.subresource != "scale":
                cur = _served(resource, cur)
            new = apply(cur)
            if isinstance(new, dict):
                self._decode_patched(request, kind, new, ct, patch, _version_of(resource))
                if info.subresource != "scale":
                    new = _to_storage(resource, new)
            return new
        try:
            if info.subresource == "scale":
                return neg.json_response(await self.store.update_scale(
                    resource, info.namespace, name, apply_checked, neg.field_manager(request), neg.dry_run(request)))
            if ct == "application/apply-patch+yaml":
                return await self._server_side_apply(request, info, patch)
            updated = await self.store.update(_stored(resource), info.namespace, name, apply_checked,
                                              subresource=info.subresource or "", precondition_rv=precondition,
                                              manager=neg.field_manager(request), dry_run=neg.dry_run(request),
                                              api_version=_version_of(resource) or "")
            for w in strategy.warnings(resource.facts_key, updated, updated):
                neg.add_warning(request, w)
            return _respond(request, resource, updated)
        except APIErrorFromPatch as e:
            if e.generic:
                # a JSON patch that does not apply (failed test, missing path, unknown op): the real
                # apiserver answers a generic 422 and keeps the reason to itself
                # (handlers/patch.go jsonPatcher.applyJSPatch → errors.NewGenericServerResponse)
                event(log, "patch.json_patch_rejected", resource=resource.plural,
                      object=f"{info.namespace or ''}/{info.name}", error=str(e))
                raise st.APIError(422, "Invalid", JSON_PATCH_REJECTED) from None
            raise st.APIError(422, "Invalid", str(e)) from None


    async def _server_side_apply(self, request: web.Request, info: RequestInfo, config: Any) -> web.Response:
        """``PATCH`` with ``application/apply-patch+yaml``: server-side apply by ``?fieldManager``
        (required, 422), ``?force=true`` to take conflicting fields over; conflicts → 409 with
        FieldManagerConflict causes (:mod:`components.apiserver.fieldmanager`). An absent object
        is created (201) through the same pipeline as a POST."""
        resource, name = info.resource, info.name or ""
        manager = request.query.get("fieldManager", "")
        if not manager:
            errs = st.error_list()
            errs.required("fieldManager", "is required for apply patch")
            raise st.invalid_fields("PatchOptions", "meta.k8s.io", "", errs,
                                    'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
                                    "is required for apply patch")
        force = neg.parse_bool(request.query.get("force"))
        neg.check_type(resource, config)
        self._decode_apply(resource, info, config)
        cmd = config.get("metadata") or {}
        if cmd.get("name") and cmd["name"] != info.name:
            raise st.bad_request(f"the name of the object ({cmd['name']}) does not match the name on the URL "
                                 f"({info.name})")

        def check_patched(new: dict[str, Any]) -> None:
            self._decode_patched(request, resource.facts_key, new, "application/apply-patch+yaml", config)
        # a served version converted from its storage version: the configuration is applied
        # in the storage version's form (its fields converted, as the apply of a v1 object
        # is converted to the internal version in Kubernetes)
        obj, created = await self.store.apply(_stored(resource), info.namespace, name, _to_storage(resource, config),
                                              manager=manager, force=force,
                                              user_agent=request.headers.get("User-Agent", ""),
                                              dry_run=neg.dry_run(request), check_patched=check_patched,
                                              api_version=_version_of(resource) or "")
        for w in strategy.warnings(resource.facts_key, obj, None if created else obj):
            neg.add_warning(request, w)
        return _respond(request, resource, obj, 201 if created else 200)

    # ---------------------------------------------------------------- delete
    def _delete_options(self, body: Any, request: web.Request) -> dict[str, Any]:
        """DeleteOptions from the body and the query; a body that does not decode into
        DeleteOptions → 400 with the decoder's message (``handlers/delete.go``)."""
        if not isinstance(body, dict):
            raise st.bad_request(f"json: cannot unmarshal {decoder.json_kind(body)} into Go value of type "
                                 "v1.DeleteOptions")
        if not _plain_delete_options(body):
            try:
                decoder.decode("DeleteOptions", body)
            except decoder.DecodeError as e:
                raise st.bad_request(e.message) from None
        opts = dict(body)
        q = request.query
        if "gracePeriodSeconds" in q:
            opts["gracePeriodSeconds"] = q["gracePeriodSeconds"]
        if "propagationPolicy" in q:
            opts["propagationPolicy"] = q["propagationPolicy"]
        if opts.get("gracePeriodSeconds") is not None:
            try:
                opts["gracePeriodSeconds"] = int(opts["gracePeriodSeconds"])
            except (TypeError, ValueError):
                raise st.bad_request(f"invalid gracePeriodSeconds: {opts['gracePeriodSeconds']!r}") from None
        if "orphanDependents" in q:
            opts["orphanDependents"] = neg.parse_bool(q["orphanDependents"])
        if opts.get("orphanDependents") is not None and opts.get("propagationPolicy"):
            errs = st.error_list([st.cause("FieldValueInvalid",
                                           "orphanDependents and deletionPropagation cannot be both set",
                                           "propagationPolicy")])
            raise st.invalid_fields("DeleteOptions", "", "", errs,
                                    "DeleteOptions is invalid: propagationPolicy: Invalid value: "
                                    f"\"{opts['propagationPolicy']}\": orphanDependents and deletionPropagation "
                                    "cannot be both set")
        pol = opts.get("propagationPolicy")
        if pol not in (None, "Orphan", "Background", "Foreground"):
            raise st.bad_request(f"propagationPolicy: Unsupported value: \"{pol}\"")
        return opts

    async def _read_delete_options(self, request: web.Request) -> dict[str, Any]:
        raw = await neg.read_body(request)
        body = neg.decode_body(raw, "application/json") if raw.strip() else {}
        opts = self._delete_options(body, request)
        opts["dryRun"] = neg.dry_run(request) or bool(opts.get("dryRun"))
        return opts

    async def delete(self, request: web.Request, info: RequestInfo) -> web.Response:
        """``DELETE`` of an item with DeleteOptions (``handlers/delete.go``); the object as it
        is then (being deleted, or deleted)."""
        opts = await self._read_delete_options(request)
        obj = await self.store.delete(_stored(info.resource), info.namespace, info.name or "", opts)
        return _respond(request, info.resource, obj)

    async def delete_collection(self, request: web.Request, info: RequestInfo) -> web.Response:
        """``DELETE`` of a collection (``handlers/delete.go`` DeleteCollection): a List of what
        was deleted."""
        opts = await self._read_delete_options(request)
        matches = neg.list_predicate(info.resource, request.query, info.namespace)
        out, rev = await self.store.delete_collection(_stored(info.resource), info.namespace, matches, opts)
        return neg.json_response({"kind": _list_kind(info.resource), "apiVersion": info.resource.api_version,
                                  "metadata": {"resourceVersion": str(rev)},
                                  "items": [neg.with_type(info.resource, _served(info.resource, o)) for o in out]})

    # ---------------------------------------------------------------- binding / eviction / log
    async def bind(self, request: web.Request, info: RequestInfo, binding: Any) -> web.Response:
        """``POST pods/NAME/binding`` or ``POST bindings``: set spec.nodeName once (assignPod);
        201 Success Status."""
        if not isinstance(binding, dict) or binding.get("kind", "Binding") != "Binding":
            raise st.bad_request("the body must be a Binding")
        neg.decode_typed(request, "Binding", binding)
        bmd = binding.get("metadata") or {}
        name = info.name or bmd.get("name")
        if info.name and bmd.get("name") and bmd["name"] != info.name:
            raise st.bad_request(f"the name of the object ({bmd['name']}) does not match the name on the URL "
                                 f"({info.name})")
        target = binding.get("target") or {}
        node = target.get("name")
        if not node or target.get("kind", "Node") not in ("Node", ""):
            errs = st.error_list()
            errs.required("target.name")
            raise st.invalid_fields("Binding", "", name or "", errs,
                                    f'Binding "{name}" is invalid: target.name: Required value')
        await self.store.bind(info.namespace, str(name), node, bmd.get("annotations"), bmd.get("uid"),
                              neg.dry_run(request))
        return neg.json_response(st.success(code=201), 201)

    async def evict(self, request: web.Request, info: RequestInfo) -> web.Response:
        """``POST pods/NAME/eviction`` with a policy/v1 Eviction: delete the pod with the
        Eviction's ``deleteOptions``; 201 Success Status (``pkg/registry/core/pod/storage/eviction.go``)
        once the pod's PodDisruptionBudget allows it (:mod:`components.apiserver.eviction`:
        429 when it does not)."""
        body = neg.decode_object_body(await neg.read_body(request), neg.body_content_type(request), _EVICTION)
        if body.get("kind", "Eviction") != "Eviction":
            raise st.bad_request("the body of the request must be an Eviction (policy/v1)")
        neg.decode_typed(request, "Eviction", body)
        ename = (body.get("metadata") or {}).get("name") if isinstance(body.get("metadata"), dict) else None
        if ename and ename != info.name:
            raise st.bad_request("name in URL does not match name in Eviction object")
        dopts = body.get("deleteOptions") or {}
        if not isinstance(dopts, dict):
            raise st.bad_request("deleteOptions must be an object")
        opts = self._delete_options(dopts, request)
        opts["dryRun"] = neg.dry_run(request) or bool(dopts.get("dryRun"))
        pod = await eviction.pod_for_eviction(self.store.store, info.namespace or "", info.name or "")
        await eviction.check_budget(self.store.store, info.namespace or "", pod, opts["dryRun"])
        await self.store.delete(info.resource, info.namespace, info.name or "", opts)
        event(log, "pod.evicted", pod=f"{info.namespace}/{info.name}", dry_run=opts["dryRun"])
        return neg.json_response(st.success(code=201), 201)

    async def pod_log(self, request: web.Request, info: RequestInfo) -> web.StreamResponse:
        """``GET pods/NAME/log``: text/plain, synthesized (see :mod:`components.apiserver.podlog`);
        with ``?follow=true`` a chunked stream kept open while the container runs
        (:class:`~components.apiserver.podlog.LogFollower`, fed by the pods watch cache)."""
        pod = await self.store.get(info.resource, info.namespace, info.name or "")
        if not podlog.follows(request.query):
            text = podlog.render(pod, request.query)
            return web.Response(text=text, content_type="text/plain", charset="utf-8")
        follower = podlog.LogFollower(pod, request.query)
        first = follower.initial()  # 400s (waiting container, bad options) before the stream starts
        cache = self.watch.caches.get(cache_name(info.resource))
        rv = int(pod["metadata"].get("resourceVersion") or 0)
        uid = pod["metadata"].get("uid")
        resp = web.StreamResponse(status=200, headers={"Content-Type": "text/plain; charset=utf-8"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        if first:
            await resp.write(first)
        if cache is None or follower.exhausted or follower.update(pod)[1]:
            await resp.write_eof()
            return resp
        await cache.wait_for_revision(rv)
        ns, name = info.namespace, info.name

        def this_pod(o: dict) -> bool:
            md = o.get("metadata") or {}
            return md.get("name") == name and md.get("namespace") == ns and md.get("uid") == uid
        try:
            watcher, _ = cache.watch(this_pod, rv)
        except TooOldResourceVersion:
            await resp.write_eof()
            return resp
        self.watch.watchers.add(watcher)
        try:
            while True:
                ev = await watcher.next(None)
                if not isinstance(ev, WatchEvent) or ev.type == "DELETED":
                    break
                data, ended = follower.update(ev.object)
                if data:
                    await resp.write(data)
                if ended:
                    break
            await resp.write_eof()
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            cache.unwatch(watcher)
            self.watch.watchers.discard(watcher)
        return resp


def _stored(resource: Any) -> Any:
    """The entry whose objects ``resource`` serves (its storage version's, for a converted one)."""
    return R.REGISTRY.storage_of(resource) if resource.converted else resource


def _version_of(resource: Any) -> str | None:
    """The apiVersion whose schema decodes ``resource``'s bodies when it is not its kind's
    first entry (a converted version), else None (the kind's)."""
    return resource.api_version if resource.converted else None


def _served(resource: Any, obj: dict[str, Any]) -> dict[str, Any]:
    """A stored object as ``resource`` serves it (converted from the storage version)."""
    return resource.from_storage(obj) if resource.converted else obj


def _to_storage(resource: Any, obj: dict[str, Any]) -> dict[str, Any]:
    """A body of ``resource`` in its storage version's form."""
    return resource.to_storage(obj) if resource.converted else obj


def _respond(request: web.Request, resource: Any, stored: dict[str, Any], code: int = 200) -> web.Response:
    """A stored object as the answer of a request to ``resource``: converted to its version,
    or a one-row Table (printed from the stored form, which the kind's printer reads)."""
    if resource.converted and not neg.wants_table(request):
        return neg.object_response(request, resource, _served(resource, stored), code)
    return neg.object_response(request, _stored(resource) if resource.converted else resource, stored, code)


_DELETE_OPTION_STRINGS = frozenset(("kind", "apiVersion", "propagationPolicy"))
_PRECONDITIONS = frozenset(("uid", "resourceVersion"))


def _plain_delete_options(body: dict[str, Any]) -> bool:
    """Whether ``body`` is DeleteOptions the Go decoder would take as they are (no unknown
    field, no null, every value of its field's type: strings, an int64 ``gracePeriodSeconds``,
    a bool ``orphanDependents``, a ``[]string`` ``dryRun``, ``preconditions`` of strings), so
    decoding can be skipped: what clients send (kubectl, the garbage collector's
    ``{"preconditions": {...}, "propagationPolicy": ...}``) decodes to itself."""
    for k, v in body.items():
        if k in _DELETE_OPTION_STRINGS:
            if type(v) is not str:
                return False
        elif k == "preconditions":
            if type(v) is not dict or not all(pk in _PRECONDITIONS and type(pv) is str for pk, pv in v.items()):
                return False
        elif k == "gracePeriodSeconds":
            if type(v) is not int or not -(1 << 63) <= v < (1 << 63):
                return False
        elif k == "orphanDependents":
            if type(v) is not bool:
                return False
        elif k == "dryRun":
            if type(v) is not list or not all(type(x) is str for x in v):
                return False
        else:
            return False
    return True


def _list_kind(resource: Any) -> str:
    """The kind of a list: ``<Kind>List``, or a CRD's ``names.listKind``."""
    return str(resource.extra.get("list_kind") or f"{resource.kind}List")


def _name_sel(request: web.Request, info: RequestInfo) -> str:
    base = request.query.get("fieldSelector", "")
    sel = f"metadata.name={info.name}"
    return f"{base},{sel}" if base else sel


# metav1 StatusError text of errors.NewGenericServerResponse(422, ...) (apimachinery
# pkg/api/errors/errors.go): what a JSON patch that does not apply is answered with
JSON_PATCH_REJECTED = "the server rejected our request due to an error in our request"


def _patch_invalid(value: str, detail: str) -> st.APIError:
    """422 Invalid on field ``patch`` (errors.NewInvalid with an empty GroupKind and name, as
    handlers/patch.go answers a patched object that does not decode): `` "" is invalid: patch:
    Invalid value: "<value>": <detail>``."""
    errs = st.error_list()
    errs.invalid("patch", value, detail)
    return st.APIError(422, "Invalid", f' "" is invalid: patch: {errs[0]["message"]}', {"causes": errs})


_SMD_KINDS = {"string": "string", "bool": "boolean", "int32": "numeric (int or float)",
              "int64": "numeric (int or float)", "float64": "numeric (int or float)"}


def _smd_message(e: Any) -> str:
    """A decode error in structured-merge-diff's words (``expected string, got object``)."""
    if not e.expected or e.expected in ("resource.Quantity", "[]uint8", "v1.Time", "v1.MicroTime") \
            or e.message.startswith(("parsing time", "illegal base64")):
        return e.message
    if e.expected in _SMD_KINDS:
        want = _SMD_KINDS[e.expected]
    elif e.expected.startswith("[]"):
        want = "list"
    else:
        want = "map"
    if e.expected in ("int32", "int64") and e.got == "number":
        return f"value out of range for {e.expected}"
    return f"expected {want}, got {e.got}"
