"""Generic REST handlers for every resource of ``controlplane.api.resources``.

One handler set, driven by the resource table (no per-kind copies), following
``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/`` (create.go, get.go, update.go,
patch.go, delete.go, watch.go) and ``pkg/registry/generic/registry/store.go``:
create / get / list / watch / update / patch / delete / deletecollection, the
``status`` and ``scale`` subresources and ``pods/binding`` (``pkg/registry/core/pod/storage/storage.go``).
Every body is decoded into its kind's Go types before anything else looks at it
(:mod:`controlplane.api.decoder`: wrong types and out-of-range integers answer 400, or 422
for a patched object, in the Go decoder's words; unknown fields are dropped per
``fieldValidation``), so nothing stored can break a reader.
Errors are raised as :class:`~components.apiserver.status.APIError` (answered as Status).
"""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from aiohttp import web

from components.apiserver import fieldmanager, listoptions, podlog, protobuf, servicealloc, strategy
from components.apiserver import semantics as sem
from components.apiserver import status as st
from components.apiserver.routing import RequestInfo
from components.apiserver.semantics import decoder
from controlplane import apitime
from controlplane.api import codec
from controlplane.api import resources as R
from controlplane.log import event
from controlplane.storage import (
    Conflict,
    Expired,
    KeyExists,
    KeyNotFound,
    TooLargeResourceVersion,
    collection_prefix,
    object_key,
)

if TYPE_CHECKING:
    from components.apiserver.server import APIServer

log = logging.getLogger("apiserver.rest")

#: Creates tried with a fresh generateName suffix before AlreadyExists is answered
#: (``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``
#: maxNameGenerationCreateAttempts; feature RetryGenerateName, GA in 1.32).
MAX_NAME_GENERATION_ATTEMPTS = 8

MAX_BODY = 3 * 1024 * 1024
TABLE_CT = "application/json;as=Table;v=v1;g=meta.k8s.io"
_SCALE, _EVICTION = SimpleNamespace(kind="Scale"), SimpleNamespace(kind="Eviction")
#: maxJSONPatchOperations of handlers/patch.go (413 beyond)
MAX_JSON_PATCH_OPS = 10000
#: deepest nesting of a patch body (no served type nests more than ~30 levels)
PATCH_MAX_DEPTH = 100
PATCH_TYPES = ("application/merge-patch+json", "application/strategic-merge-patch+json",
               "application/json-patch+json", "application/apply-patch+yaml")


def wants_table(request: web.Request) -> bool:
    """Accept asks for meta.k8s.io Table (``as=Table;...;g=meta.k8s.io``) before plain JSON."""
    for part in request.headers.get("Accept", "").split(","):
        p = part.replace(" ", "")
        if "as=Table" in p and "g=meta.k8s.io" in p:
            return True
        if p.startswith("application/json") and "as=" not in p:
            return False
    return False


def json_response(obj: Any, code: int = 200, content_type: str = "application/json") -> web.Response:
    """A response with ``obj`` as compact JSON (encoded once, by :mod:`controlplane.api.codec`)."""
    return web.Response(body=codec.dumps(obj), status=code, headers={"Content-Type": content_type})


def _with_type(resource: Any, obj: dict) -> dict:
    """``obj`` with ``apiVersion`` and ``kind`` (defaulted from ``resource``) as its first keys.

    Never modifies ``obj`` (it may be the watch cache's copy); returns it as is when already so."""
    it = iter(obj)
    if next(it, None) == "apiVersion" and next(it, None) == "kind":
        return obj
    out = {"apiVersion": obj.get("apiVersion") or resource.api_version, "kind": obj.get("kind") or resource.kind}
    for k, v in obj.items():
        if k != "apiVersion" and k != "kind":
            out[k] = v
    return out


async def read_body(request: web.Request) -> bytes:
    """The request body, at most :data:`MAX_BODY` bytes; more → 413 RequestEntityTooLarge
    (``limitedReadBody`` in ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go``)."""
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise st.too_large(f"limit is {MAX_BODY}")
    data = bytearray()
    async for chunk in request.content.iter_chunked(65536):
        data += chunk
        if len(data) > MAX_BODY:
            raise st.too_large(f"limit is {MAX_BODY}")
    return bytes(data)


def body_content_type(request: web.Request) -> str:
    """The request's Content-Type; absent → "" (decoded as JSON, the first supported media
    type, as ``negotiation.NegotiateInputSerializer``) — aiohttp would say octet-stream."""
    return request.headers.get("Content-Type", "")


class BodyError(Exception):
    """A body that does not parse; ``message`` in the Go decoder's words (JSON: ``invalid
    character...`` / ``exceeded max depth``; YAML: ``yaml: line N: ...``)."""

    def __init__(self, message: str, yaml_body: bool = False) -> None:
        super().__init__(message)
        self.message, self.yaml = message, yaml_body


JSON_TYPES = ("application/json", "", "application/merge-patch+json", "application/strategic-merge-patch+json",
              "application/json-patch+json", "*/*")


def parse_body(raw: bytes, content_type: str) -> Any:
    """JSON, YAML or Kubernetes protobuf body → Python value (JSON types only).

    Raises :class:`BodyError` for a body that does not parse or nests deeper than Go's
    JSON decoder allows (10000, :data:`controlplane.api.decoder.MAX_DEPTH`), 415 for an
    unknown media type, 400 for bad protobuf."""
    ct = content_type.split(";")[0].strip().lower()
    if ct in JSON_TYPES:
        try:
            value = codec.loads(raw)
        except ValueError as e:
            raise BodyError(_json_error(e, raw)) from None
    elif ct == protobuf.CONTENT_TYPE:
        try:
            return protobuf.decode(raw)
        except protobuf.UnsupportedKind as e:
            raise st.APIError(415, "UnsupportedMediaType", str(e)) from None
        except protobuf.ProtobufError as e:
            raise st.bad_request(str(e)) from None
        except (ValueError, TypeError, IndexError, KeyError, AttributeError) as e:
            # a field of the wrong wire type or a string that is not UTF-8 deep in the message
            raise st.bad_request(f"the body of the request was in an unknown format - protobuf decoding "
                                 f"failed: {type(e).__name__}: {e}"[:300]) from None
    elif ct in ("application/yaml", "application/apply-patch+yaml"):
        try:
            value = codec.load_yaml(raw)
        except ValueError as e:
            raise BodyError(str(e), yaml_body=True) from None
    else:
        raise st.unsupported_media_type(ct)
    try:
        decoder.check_depth(value)
    except decoder.DecodeError as e:
        raise BodyError(e.message, yaml_body=ct not in JSON_TYPES) from None
    return value


def _json_error(e: ValueError, raw: bytes) -> str:
    """orjson's parse error; its nesting limit (1024 levels, below Go's 10000) in the words
    of Go's scanner: ``invalid character '[' exceeded max depth``."""
    text = str(e)
    if not raw.strip():
        return "unexpected end of JSON input"
    if "depth limit exceeded" in text or "recursion limit" in text.lower():
        return f"invalid character '{_too_deep_char(raw, JSON_MAX_DEPTH)}' exceeded max depth"
    return text


#: orjson's nesting limit (Go's scanner allows 10000)
JSON_MAX_DEPTH = 1024


def _too_deep_char(raw: bytes, limit: int) -> str:
    """The bracket (``[`` or ``{``) that opens level ``limit + 1`` of the JSON text ``raw``
    (strings skipped), which Go's scanner names in its depth error; ``[`` if none is found."""
    depth, in_str, esc = 0, False, False
    for b in raw:
        if in_str:
            if esc:
                esc = False
            elif b == 0x5C:  # backslash
                esc = True
            elif b == 0x22:
                in_str = False
        elif b == 0x22:
            in_str = True
        elif b in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return chr(b)
        elif b in (0x5D, 0x7D):
            depth -= 1
    return "["


def decode_body(raw: bytes, content_type: str) -> Any:
    """:func:`parse_body`, a parse error answered 400 BadRequest with the decoder's message."""
    if not raw.strip():
        raise st.bad_request("the body of the request was in an unknown format - empty body")
    try:
        return parse_body(raw, content_type)
    except BodyError as e:
        raise st.bad_request(e.message) from None


def summarize(data: bytes, n: int = 30) -> str:
    """A body's start as ``summarizeData`` in handlers/rest.go prints it: JSON objects as
    text, anything else as hex; `` ...`` when cut."""
    if not data:
        return "<empty>"
    cut = " ..." if len(data) > n else ""
    if data[:1] == b"{":
        return data[:n].decode(errors="replace") + cut
    return data[:n].hex() + cut


_FIND_KIND = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'


def decode_object_body(raw: bytes, content_type: str, resource: Any) -> dict:
    """A create/update body → object; what does not parse or carries no object answers 400
    as ``transformDecodeError`` (handlers/rest.go) words it: ``the object provided is
    unrecognized (must be of type Pod): couldn't get version/kind; json parse error: ...``."""
    def unrecognized(msg: str) -> st.APIError:
        return st.bad_request(f"the object provided is unrecognized (must be of type {resource.kind}): "
                              f"{msg} ({summarize(raw)})")
    try:
        obj = parse_body(raw, content_type)
    except BodyError as e:
        raise unrecognized(e.message if e.yaml else f"couldn't get version/kind; json parse error: {e.message}") \
            from None
    if not isinstance(obj, dict):
        raise unrecognized("couldn't get version/kind; json parse error: json: cannot unmarshal "
                           f"{decoder.json_kind(obj)} into Go value of type {_FIND_KIND}")
    for f in ("apiVersion", "kind"):
        if obj.get(f) is not None and not isinstance(obj[f], str):
            raise unrecognized(f"couldn't get version/kind; json parse error: json: cannot unmarshal "
                               f"{decoder.json_kind(obj[f])} into Go struct field .{f} of type string")
    return obj


def field_validation(request: web.Request) -> str:
    """The ``fieldValidation`` directive: Ignore, Warn (default) or Strict; else 400."""
    v = request.query.get("fieldValidation", "")
    if v in ("", "Warn"):
        return "Warn"
    if v in ("Ignore", "Strict"):
        return v
    raise st.bad_request(f'fieldValidation: Unsupported value: "{v}": supported values: "Ignore", "Strict", "Warn"')


#: request storage key of the queued Warning texts
WARNINGS: Any = web.RequestKey("warnings", list) if hasattr(web, "RequestKey") else "warnings"


def add_warning(request: web.Request, text: str) -> None:
    """Queue a ``Warning: 299 - "text"`` response header (RFC 7234, as the apiserver's warning recorder)."""
    if WARNINGS not in request:
        request[WARNINGS] = []
    if text not in request[WARNINGS]:
        request[WARNINGS].append(text)


def dry_run(request: web.Request) -> bool:
    """``dryRun=All`` → True; absent → False; any other value → 400 (``handlers/rest.go`` dryRun check)."""
    vals = request.query.getall("dryRun", [])
    for v in vals:
        if v != "All":
            raise st.bad_request(f'Invalid dry run value: "{v}" (only "All" is supported)')
    return bool(vals)


def _bool(v: str | None) -> bool:
    return (v or "").lower() in ("1", "true", "yes")


def _parse_rv(v: str | None) -> int | None:
    if v in (None, ""):
        return None
    try:
        n = int(v)
        if n < 0:
            raise ValueError
        return n
    except ValueError:
        raise st.bad_request(f'invalid resource version "{v}"') from None


class RestHandlers:
    """The REST verbs on top of the server's store, watch caches and tracer."""

    def __init__(self, server: "APIServer") -> None:
        self.s = server

    # ---------------------------------------------------------------- helpers
    def _matcher(self, resource: Any, request: web.Request, namespace: str | None):
        try:
            ls = sem.parse_label_selector(request.query.get("labelSelector", ""))
            fs = sem.parse_field_selector(request.query.get("fieldSelector", ""))
        except ValueError as e:
            raise st.bad_request(str(e)) from None
        kind = resource.kind
        fsel = request.query.get("fieldSelector", "")

        def matches(obj: dict) -> bool:
            md = obj.get("metadata") or {}
            if namespace and resource.namespaced and md.get("namespace") != namespace:
                return False
            if not ls.matches(md.get("labels") or {}):
                return False
            return not fsel or fs.matches(sem.object_fields(kind, obj))
        # surface unsupported field labels as 400 at once, as the apiserver does
        if fsel:
            try:
                fs.matches(sem.object_fields(kind, {"metadata": {}}))
            except ValueError as e:
                raise st.bad_request(str(e)) from None
        return matches

    def _cached(self, resource: Any, key: str) -> dict | None:
        """The watch cache's copy of ``key`` (read-only; may be stale), to save a read before a
        conditional write (the cacher's GuaranteedUpdate passes it as cachedExistingObject)."""
        cache = self.s.cache_for(resource)
        return cache.get(key) if cache is not None else None

    @staticmethod
    def _manager(request: web.Request) -> str:
        """The field manager of a write: ``?fieldManager=``, else from the User-Agent."""
        return fieldmanager.manager_name(request.query.get("fieldManager"), request.headers.get("User-Agent"))

    def _key(self, info: RequestInfo, name: str | None = None) -> str:
        return object_key(info.resource, info.namespace, name or info.name)

    async def _get_current(self, info: RequestInfo) -> dict:
        try:
            return await self.s.store.get(self._key(info))
        except KeyNotFound:
            raise st.not_found(info.resource, info.name) from None

    @staticmethod
    def _unknown_fields(request: web.Request, unknown: list[str], strict_error) -> None:
        """Unknown fields (already dropped) per ``fieldValidation``: ``Strict`` → raise
        ``strict_error("strict decoding error: unknown field ...")``, ``Warn`` (default) → a
        ``Warning`` response header each, ``Ignore`` → nothing (``handlers/rest.go``
        fieldValidation, ``runtime.NewStrictDecodingError``)."""
        directive = field_validation(request)
        if not unknown or directive == "Ignore":
            return
        if directive == "Strict":
            raise strict_error("strict decoding error: " + ", ".join(f'unknown field "{u}"' for u in unknown))
        for u in unknown:
            add_warning(request, f'unknown field "{u}"')

    def _decode_typed(self, request: web.Request, kind: str, obj: dict) -> None:
        """A create/update body into ``kind``'s Go types (:func:`controlplane.api.decoder.decode`,
        in place: unknown fields dropped). A value that does not decode → 400 BadRequest
        ``<Kind> in version "v1" cannot be handled as a <Kind>: json: cannot unmarshal ...``
        (``transformDecodeError``, handlers/rest.go); unknown fields per ``fieldValidation``."""
        version = str(obj.get("apiVersion") or "").rsplit("/", 1)[-1]
        prefix = f'{obj.get("kind") or kind} in version "{version}" cannot be handled as a {kind}: '
        try:
            unknown = decoder.decode(kind, obj)
        except decoder.DecodeError as e:
            raise st.bad_request(prefix + e.message) from None
        self._unknown_fields(request, unknown, lambda m: st.bad_request(prefix + m))

    def _decode_patched(self, request: web.Request, kind: str, new: dict, ct: str, patch: Any) -> None:
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
            unknown = decoder.decode(kind, new)
        except decoder.DecodeError as e:
            raise invalid(e.message) from None
        self._unknown_fields(request, unknown, invalid)

    def _check_patch_depth(self, request: web.Request, kind: str, patch: Any, ct: str) -> None:
        """No served type nests more than :data:`PATCH_MAX_DEPTH` levels, and merging walks a
        patch recursively: a deeper merge / strategic merge patch is decoded first (in place,
        its ``null`` deletions kept) — a value of the wrong type answers as the patched object
        would (422 on field ``patch``), unknown fields are dropped before the merge (or refused
        with ``fieldValidation=Strict``), as the decoder would drop them from the result.
        Anything still that deep (a JSON patch's values) → 400 ``exceeded max depth``."""
        if decoder.depth(patch) <= PATCH_MAX_DEPTH:
            return
        if isinstance(patch, dict):
            def invalid(detail: str) -> st.APIError:
                return _patch_invalid(decoder.go_format(patch), detail)
            try:
                unknown = decoder.decode(kind, patch, prune=True, readonly=True)
            except decoder.DecodeError as e:
                raise invalid(e.message) from None
            self._unknown_fields(request, unknown, invalid)
            if decoder.depth(patch) <= PATCH_MAX_DEPTH:
                return
        raise st.bad_request(f"invalid character '{{' exceeded max depth of {PATCH_MAX_DEPTH} for a patch")

    @staticmethod
    def _decode_apply(resource: Any, info: RequestInfo, config: dict) -> None:
        """A server-side apply configuration against ``resource``'s types, unchanged: a value
        of the wrong type or a field the type does not have → 400 ``failed to create typed
        patch object (<ns>/<name>; <group>/<version>, Kind=<Kind>): .<path>: ...`` as the
        structured-merge-diff type converter words it (``fieldmanager/internal/structuredmerge.go``)."""
        where = f"{info.namespace or ''}/{info.name}; {resource.group}/{resource.version}, Kind={resource.kind}"
        try:
            unknown = decoder.decode(resource.kind, config, prune=False, readonly=True)
        except decoder.DecodeError as e:
            raise st.bad_request(f"failed to create typed patch object ({where}): .{e.path}: "
                                 f"{_smd_message(e)}") from None
        if unknown:
            raise st.bad_request(f"failed to create typed patch object ({where}): .{unknown[0]}: "
                                 "field not declared in schema")

    def _validate(self, resource: Any, obj: dict, old: dict | None = None) -> None:
        causes = sem.validate(resource.kind, obj, old)
        if causes:
            name = (obj.get("metadata") or {}).get("name", "")
            raise st.invalid(resource.kind, resource.group, name, causes,
                             sem.invalid_message(resource.kind, name, causes))

    def _allocate(self, resource: Any, obj: dict, old: dict | None, dry: bool) -> None:
        """Services: ClusterIP / NodePort allocation (:mod:`components.apiserver.servicealloc`); 422."""
        if resource.kind != "Service" or self.s.service_allocator is None:
            return
        try:
            self.s.service_allocator.allocate(obj, old, dry_run=dry)
        except servicealloc.AllocationError as e:
            name = (obj.get("metadata") or {}).get("name", "")
            raise st.invalid("Service", "", name, e.causes, sem.invalid_message("Service", name, e.causes)) from None

    def _check_type(self, resource: Any, obj: Any) -> None:
        if not isinstance(obj, dict):
            raise st.bad_request("the body of the request was in an unknown format - expected an object")
        # the request path gives the default group/version/kind: a body may leave them out
        # (handlers/create.go decodes with defaultGVK = the scope's kind)
        if not obj.get("kind"):
            obj["kind"] = resource.kind
        if not obj.get("apiVersion") and obj["kind"] == resource.kind:
            obj["apiVersion"] = resource.api_version
        kind, av = obj.get("kind"), obj.get("apiVersion")
        if kind != resource.kind or (av and av != resource.api_version):
            raise st.bad_request(f"the API version in the data ({av}) does not match the expected API version "
                                 f"({resource.api_version})" if kind == resource.kind else
                                 f"the kind in the data ({kind}) does not match the expected kind "
                                 f"({resource.kind}) of {resource.plural}")

    async def _check_namespace(self, resource: Any, namespace: str, name: str) -> None:
        """NamespaceLifecycle admission: the namespace must exist and not be Terminating."""
        ns = self.s.caches["namespaces"].get(object_key(R.NAMESPACES, None, namespace)) \
            if "namespaces" in self.s.caches else None
        if ns is None:
            try:
                ns = await self.s.store.get(object_key(R.NAMESPACES, None, namespace))
            except KeyNotFound:
                raise st.not_found(R.NAMESPACES, namespace) from None
        if (ns.get("status") or {}).get("phase") == "Terminating" or (ns.get("metadata") or {}).get("deletionTimestamp"):
            raise st.forbidden(resource, name, f"unable to create new content in namespace {namespace} "
                                               "because it is being terminated")

    # ---------------------------------------------------------------- collection
    async def list_or_watch(self, request: web.Request, info: RequestInfo) -> web.StreamResponse:
        if info.watch_path or _bool(request.query.get("watch")):
            return await self.s.watch.serve(request, info, self._matcher(info.resource, request, info.namespace))
        resource = info.resource
        matches = self._matcher(resource, request, info.namespace)
        rv = request.query.get("resourceVersion", "")
        rv_n = _parse_rv(rv)
        match, _ = listoptions.parse(request.query, watch=False)
        limit_s = request.query.get("limit", "") or "0"
        try:
            limit = max(int(limit_s), 0)
        except ValueError:
            raise st.bad_request(f"invalid limit: {limit_s!r}") from None
        cont = request.query.get("continue", "")
        meta: dict[str, Any] = {}
        cache = self.s.caches.get(resource.plural if not resource.group else f"{resource.plural}.{resource.group}")
        # where the list is served from (cacher.go shouldDelegateList / etcd3 store GetList):
        # RV "0" → the watch cache as it is; RV N (NotOlderThan, the default match) without
        # limit → the cache once it has reached N; Exact N → etcd at revision N; RV unset,
        # a limit or a continue token → etcd (a consistent read)
        from_cache = cache is not None and not cont and match != listoptions.EXACT and (
            rv == "0" or (rv_n is not None and not limit))
        if from_cache:
            if rv_n and not await cache.wait_for_revision(rv_n):
                raise listoptions.too_large_resource_version(rv_n, cache.revision)
            items, rev = cache.list(matches, info.namespace)
        else:
            exact = rv_n if match == listoptions.EXACT else 0
            try:
                res = await self.s.store.list(collection_prefix(resource, info.namespace), revision=exact or 0,
                                              limit=limit, continue_token=cont, predicate=matches)
            except ValueError as e:
                raise st.bad_request(str(e)) from None
            except Expired as e:
                raise st.expired("The resourceVersion for the provided list is too old." if exact and not cont
                                 else str(e)) from None
            except TooLargeResourceVersion:
                raise listoptions.too_large_resource_version(exact, await self.s.store.current_revision()) from None
            items, rev = res.items, res.revision
            if res.continue_token:
                meta["continue"] = res.continue_token
                if res.remaining is not None:
                    meta["remainingItemCount"] = res.remaining
        meta = {"resourceVersion": str(rev), **meta}
        if wants_table(request):
            t = sem.table(resource.kind, items, str(rev))
            t.setdefault("metadata", {}).update(meta)
            return json_response(t, content_type=TABLE_CT)
        return json_response({"kind": f"{resource.kind}List", "apiVersion": resource.api_version,
                              "metadata": meta, "items": [_with_type(resource, o) for o in items]})

    async def create(self, request: web.Request, info: RequestInfo) -> web.Response:
        resource = info.resource
        if resource.kind == "Binding" or info.subresource == "binding":
            return await self.bind(request, info, decode_object_body(await read_body(request),
                                                                     body_content_type(request), R.get("bindings")))
        obj = decode_object_body(await read_body(request), body_content_type(request), resource)
        self._check_type(resource, obj)
        self._decode_typed(request, resource.kind, obj)
        md = obj.setdefault("metadata", {})
        if resource.namespaced:
            body_ns = md.get("namespace")
            if body_ns and info.namespace and body_ns != info.namespace:
                raise st.bad_request("the namespace of the provided object does not match the namespace "
                                     "sent on the request")
            info.namespace = info.namespace or body_ns
            if not info.namespace:
                raise st.bad_request("a namespace is required to create " + resource.plural)
        ua = request.headers.get("User-Agent", "")
        generated = not md.get("name") and bool(md.get("generateName"))
        strategy.prepare_for_create(resource.kind, obj, info.namespace, resource.namespaced)
        name = obj["metadata"].get("name", "")
        self.s.tracer.on_create_received(resource, obj, ua)
        sem.apply_defaults(resource.kind, obj)
        # the creator owns every field it set (operation Update; handlers/create.go runs the
        # field manager on every create): managedFields in the body are not kept
        fieldmanager.record_create(resource.kind, obj, self._manager(request), resource.api_version,
                                   apitime.now(), resource.kind in strategy.STATUS_SUBRESOURCE)
        self._validate(resource, obj)
        if resource.namespaced:
            await self._check_namespace(resource, info.namespace, name)
        self._allocate(resource, obj, None, dry_run(request))
        if dry_run(request):
            return await self._dry_create(request, resource, object_key(resource, info.namespace, name), obj)
        for attempt in range(1, MAX_NAME_GENERATION_ATTEMPTS + 1):
            try:
                created = await self.s.store.create(object_key(resource, info.namespace, name), obj)
                break
            except KeyExists:
                if not generated or attempt == MAX_NAME_GENERATION_ATTEMPTS:
                    raise st.already_exists(resource, name) from None
                # generateName collided: a new suffix, as the generic registry store retries
                name = obj["metadata"]["name"] = obj["metadata"]["generateName"] + strategy.random_suffix()
        self.s.tracer.on_created(resource, created, ua)
        event(log, "object.created", resource=resource.plural, object=f"{info.namespace or ''}/{name}",
              rv=created["metadata"]["resourceVersion"])
        return self._object_response(request, resource, created, 201)

    async def _dry_create(self, request: web.Request, resource: Any, key: str, obj: dict) -> web.Response:
        """``dryRun=All`` create: the existence check and the object as it would be stored, no write."""
        try:
            await self.s.store.get(key)
        except KeyNotFound:
            obj["metadata"].pop("resourceVersion", None)
            return self._object_response(request, resource, obj, 201)
        raise st.already_exists(resource, obj["metadata"].get("name", ""))

    def _object_response(self, request: web.Request, resource: Any, obj: dict, code: int = 200) -> web.Response:
        obj = _with_type(resource, obj)
        if wants_table(request):
            return json_response(sem.table(resource.kind, [obj], obj["metadata"].get("resourceVersion", "")),
                                 code, TABLE_CT)
        return json_response(obj, code)

    # ---------------------------------------------------------------- item
    async def get(self, request: web.Request, info: RequestInfo) -> web.Response:
        _parse_rv(request.query.get("resourceVersion"))
        obj = await self._get_current(info)
        if info.subresource == "scale":
            return json_response(self._scale_of(info.resource, obj))
        return self._object_response(request, info.resource, obj)

    async def update(self, request: web.Request, info: RequestInfo) -> web.Response:
        resource = info.resource
        if info.subresource == "scale":
            scale = decode_object_body(await read_body(request), body_content_type(request), _SCALE)
            self._decode_typed(request, "Scale", scale)
            return await self._update_scale(request, info, lambda cur: scale)
        obj = decode_object_body(await read_body(request), body_content_type(request), resource)
        self._check_type(resource, obj)
        self._decode_typed(request, resource.kind, obj)
        md = obj.get("metadata") or {}
        if md.get("name") != info.name:
            raise st.bad_request(f"the name of the object ({md.get('name') or ''}) does not match the name on the "
                                 f"URL ({info.name})")
        if resource.namespaced and md.get("namespace") and md["namespace"] != info.namespace:
            raise st.bad_request("the namespace of the provided object does not match the namespace sent on "
                                 "the request")
        return await self._write(request, info, lambda cur: codec.clone(obj), md.get("resourceVersion") or None,
                                 precondition_uid=md.get("uid") or None, manager=self._manager(request))

    async def _write(self, request: web.Request, info: RequestInfo, make_new, precondition_rv: str | None,
                     code: int = 200, precondition_uid: str | None = None,
                     manager: str | None = None) -> web.Response:
        """Guaranteed update of the item: ``make_new(current) -> new`` then strategy, defaults, validation.

        ``precondition_uid`` (a PUT body's uid, ``rest.DefaultUpdatedObjectInfo.Preconditions``)
        mismatching → 409. An object being deleted whose update leaves no finalizers is
        deleted instead (``ShouldDeleteDuringUpdate``, ``pkg/registry/generic/registry/store.go``).
        ``manager``: the field manager of an Update operation, whose changes are recorded in
        managedFields (:func:`fieldmanager.record_update`); None for an apply, which sets them itself.
        """
        resource, sub = info.resource, info.subresource or ""
        deleting: dict = {}
        dry = dry_run(request)

        def mutate(cur: dict) -> dict:
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
            strategy.prepare_for_update(resource.kind, new, cur, sub)
            new["metadata"].pop("resourceVersion", None)
            sem.apply_defaults(resource.kind, new)
            self._validate(resource, new, cur)
            if sub == "":
                self._allocate(resource, new, cur, dry)
            if manager is not None:
                if new["metadata"].get("managedFields") == []:
                    del new["metadata"]["managedFields"]
                fieldmanager.record_update(resource.kind, cur, new, manager, resource.api_version,
                                           apitime.now(), sub,
                                           resource.kind in strategy.STATUS_SUBRESOURCE)
            if strategy.should_delete_during_update(resource.kind, new, cur):
                deleting["rv"] = cur["metadata"].get("resourceVersion")
                deleting["obj"] = new
                raise _DeleteInstead()
            return new
        try:
            updated = await self.s.store.guaranteed_update(
                self._key(info), mutate, precondition_rv=precondition_rv, precondition_uid=precondition_uid,
                resource_plural=resource.plural, group=resource.group, name=info.name, dry_run=dry,
                cached=self._cached(info.resource, self._key(info)))
        except KeyNotFound:
            raise st.not_found(resource, info.name) from None
        except Conflict as e:
            raise st.conflict(resource, info.name, str(e)) from None
        except _DeleteInstead:
            if dry:
                out = deleting["obj"]
                out["metadata"]["resourceVersion"] = deleting["rv"]
                return self._object_response(request, resource, out, code)
            try:
                await self.s.store.delete(self._key(info), precondition_rv=deleting["rv"])
            except KeyNotFound:
                pass  # another finalizer removal raced us to the deletion
            except Conflict:
                raise st.conflict_modified(resource, info.name) from None
            event(log, "object.deleted", resource=resource.plural,
                  object=f"{info.namespace or ''}/{info.name}", reason="finalizers-emptied")
            updated = deleting["obj"]
            updated["metadata"]["resourceVersion"] = deleting["rv"]
        if resource.kind == "Pod" and sub == "status":
            self.s.tracer.on_pod_status(updated)
        return self._object_response(request, resource, updated, code)

    async def patch(self, request: web.Request, info: RequestInfo) -> web.Response:
        resource = info.resource
        ct = request.content_type.lower()
        if ct not in PATCH_TYPES:
            raise st.unsupported_media_type(ct)
        raw = await read_body(request)
        if not raw.strip():
            raise st.bad_request("the body of the request was in an unknown format - empty body")
        try:
            patch = parse_body(raw, ct)
        except BodyError as e:
            # handlers/patch.go: apply → "error decoding YAML: ...", merge → "error decoding
            # patch: ...", JSON and strategic merge patches → the decoder's error as it is
            prefix = {"application/apply-patch+yaml": "error decoding YAML: ",
                      "application/merge-patch+json": "error decoding patch: "}.get(ct, "")
            raise st.bad_request(prefix + e.message) from None
        kind = "Scale" if info.subresource == "scale" else resource.kind
        if ct == "application/json-patch+json" and isinstance(patch, list) and len(patch) > MAX_JSON_PATCH_OPS:
            raise st.too_large(f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPS}, "
                               f"got {len(patch)}")
        if ct != "application/apply-patch+yaml":  # an apply's configuration is checked as it is
            self._check_patch_depth(request, kind, patch, ct)

        def apply(cur: dict) -> dict:
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

        def apply_checked(cur: dict) -> dict:
            new = apply(cur)
            if isinstance(new, dict):
                self._decode_patched(request, kind, new, ct, patch)
            return new
        try:
            if info.subresource == "scale":
                return await self._update_scale(request, info, apply_checked)
            if ct == "application/apply-patch+yaml":
                return await self._server_side_apply(request, info, patch)
            return await self._write(request, info, apply_checked, precondition, manager=self._manager(request))
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
        (required), ``?force=true`` to take conflicting fields over; conflicts → 409 with
        FieldManagerConflict causes (:mod:`components.apiserver.fieldmanager`)."""
        resource = info.resource
        manager = request.query.get("fieldManager", "")
        if not manager:
            raise st.invalid("PatchOptions", "meta.k8s.io", "", [{
                "reason": "FieldValueRequired", "message": "Required value: is required for apply patch",
                "field": "fieldManager"}], 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
                                          "is required for apply patch")
        force = _bool(request.query.get("force"))
        self._check_type(resource, config)
        self._decode_apply(resource, info, config)
        cmd = config.get("metadata") or {}
        if cmd.get("name") and cmd["name"] != info.name:
            raise st.bad_request(f"the name of the object ({cmd['name']}) does not match the name on the URL "
                                 f"({info.name})")
        now = apitime.now()
        try:
            await self.s.store.get(self._key(info))
        except KeyNotFound:
            obj = codec.clone(config)
            obj.setdefault("metadata", {})["name"] = info.name
            obj["metadata"]["managedFields"] = [{
                "manager": manager, "operation": "Apply", "apiVersion": resource.api_version, "time": now,
                "fieldsType": "FieldsV1", "fieldsV1": fieldmanager.encode(fieldmanager.field_set(resource.kind, config))}]
            return await self._create_from(request, info, obj)

        def make_new(cur: dict) -> dict:
            try:
                new = fieldmanager.apply(resource.kind, cur, config, manager, resource.api_version, now, force)
            except sem.PatchError as e:
                raise APIErrorFromPatch(str(e)) from None
            if isinstance(new, dict):
                self._decode_patched(request, resource.kind, new, "application/apply-patch+yaml", config)
            return new
        try:
            return await self._write(request, info, make_new, None)
        except fieldmanager.ApplyConflict as e:
            raise st.APIError(409, "Conflict", e.message(), {"causes": e.causes()}) from None
        except APIErrorFromPatch as e:
            raise st.APIError(422, "Invalid", str(e)) from None

    async def _create_from(self, request: web.Request, info: RequestInfo, obj: dict) -> web.Response:
        resource = info.resource
        decoder.decode(resource.kind, obj)  # an apply's configuration, checked: drops nothing else
        strategy.prepare_for_create(resource.kind, obj, info.namespace, resource.namespaced)
        sem.apply_defaults(resource.kind, obj)
        self._validate(resource, obj)
        if resource.namespaced:
            await self._check_namespace(resource, info.namespace, info.name)
        self._allocate(resource, obj, None, dry_run(request))
        if dry_run(request):
            return await self._dry_create(request, resource, self._key(info), obj)
        try:
            created = await self.s.store.create(self._key(info), obj)
        except KeyExists:
            raise st.already_exists(resource, info.name) from None
        return self._object_response(request, resource, created, 201)

    # ---------------------------------------------------------------- delete
    def _delete_options(self, body: Any, request: web.Request) -> dict:
        """DeleteOptions from the body and the query; a body that does not decode into
        DeleteOptions → 400 with the decoder's message (``handlers/delete.go``)."""
        if not isinstance(body, dict):
            raise st.bad_request(f"json: cannot unmarshal {decoder.json_kind(body)} into Go value of type "
                                 "v1.DeleteOptions")
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
            opts["orphanDependents"] = _bool(q["orphanDependents"])
        if opts.get("orphanDependents") is not None and opts.get("propagationPolicy"):
            raise st.invalid("DeleteOptions", "", "", [{"reason": "FieldValueInvalid", "field": "propagationPolicy",
                             "message": "orphanDependents and deletionPropagation cannot be both set"}],
                             "DeleteOptions is invalid: propagationPolicy: Invalid value: "
                             f"\"{opts['propagationPolicy']}\": orphanDependents and deletionPropagation "
                             "cannot be both set")
        pol = opts.get("propagationPolicy")
        if pol not in (None, "Orphan", "Background", "Foreground"):
            raise st.bad_request(f"propagationPolicy: Unsupported value: \"{pol}\"")
        return opts

    async def delete(self, request: web.Request, info: RequestInfo) -> web.Response:
        raw = await read_body(request)
        body = decode_body(raw, "application/json") if raw.strip() else {}
        opts = self._delete_options(body, request)
        opts["dryRun"] = dry_run(request) or bool(opts.get("dryRun"))
        obj = await self._delete_one(info, info.name, opts)
        return self._object_response(request, info.resource, obj)

    async def _delete_one(self, info: RequestInfo, name: str, opts: dict) -> dict:
        """Delete one object, or start its graceful / finalizer deletion; returns the object.

        As ``Store.Delete`` in ``pkg/registry/generic/registry/store.go`` with
        ``rest.BeforeDelete`` (``pkg/registry/rest/delete.go``): preconditions (uid,
        resourceVersion → 409); pods get a grace period (``pkg/registry/core/pod/strategy.go``
        CheckGracefulDelete: the request's, else spec.terminationGracePeriodSeconds; 0 when
        unscheduled or finished) → deletionTimestamp = now + grace, and the kubelet finishes
        with gracePeriodSeconds=0; a pending graceful deletion may only be shortened.
        propagationPolicy / orphanDependents set the ``orphan`` / ``foregroundDeletion``
        finalizers (deletionFinalizersForGarbageCollection) that the controller-manager's
        garbage collector acts on; an object with finalizers is only marked (deletionTimestamp,
        deletionGracePeriodSeconds 0) and goes when the last finalizer is removed.
        """
        resource = info.resource
        key = object_key(resource, info.namespace, name)
        pre = opts.get("preconditions") or {}
        try:
            cur = await self.s.store.get(key)
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
        if opts.get("dryRun"):
            return cur  # dryRun=All: checks done, nothing written
        if resource.kind == "Namespace":
            return await self._delete_namespace(info, cur, opts)
        graceful, grace = False, 0
        if md.get("deletionTimestamp"):
            prev = md.get("deletionGracePeriodSeconds")
            if prev:
                req = opts.get("gracePeriodSeconds")
                if req is None or req >= prev:
                    return cur  # graceful deletion pending: nothing changes (finalizers neither)
                graceful, grace = True, max(req, 0)
        elif resource.kind == "Pod":
            grace = strategy.pod_grace_period(cur, opts.get("gracePeriodSeconds"))
            graceful = grace > 0
        fins_old = list(md.get("finalizers") or [])
        fins = strategy.gc_finalizers(fins_old, opts)
        if (graceful and grace > 0) or fins:
            def mark(o: dict) -> dict:
                m = o["metadata"]
                if fins:
                    m["finalizers"] = fins
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
                out = await self.s.store.guaranteed_update(key, mark, precondition_uid=md.get("uid"), cached=cur)
            except KeyNotFound:
                raise st.not_found(resource, name) from None
            except Conflict as e:
                raise st.conflict(resource, name, str(e)) from None
            event(log, "object.deleting", resource=resource.plural, object=f"{info.namespace or ''}/{name}",
                  grace=grace if graceful else 0, finalizers=",".join(fins))
            return out
        try:
            deleted = await self.s.store.delete(key, precondition_uid=md.get("uid"), cached=cur)
        except KeyNotFound:
            raise st.not_found(resource, name) from None
        except Conflict as e:
            raise st.conflict(resource, name, str(e)) from None
        event(log, "object.deleted", resource=resource.plural, object=f"{info.namespace or ''}/{name}")
        return deleted

    async def _delete_namespace(self, info: RequestInfo, ns: dict, opts: dict) -> dict:
        """First DELETE marks the namespace Terminating (deletionTimestamp, status.phase); the
        controller-manager's namespace controller empties it and removes the ``kubernetes``
        finalizer through ``/finalize``, which deletes it. A later DELETE deletes it once
        spec.finalizers is empty (``pkg/registry/core/namespace/storage/storage.go`` Delete).
        """
        md = ns.get("metadata") or {}
        if not md.get("deletionTimestamp"):
            def mark(o: dict) -> dict:
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
                out = await self.s.store.guaranteed_update(self._key(info, md.get("name")), mark,
                                                           precondition_uid=md.get("uid"))
            except KeyNotFound:
                raise st.not_found(info.resource, md.get("name", "")) from None
            event(log, "namespace.terminating", namespace=md.get("name"))
            return out
        if (ns.get("spec") or {}).get("finalizers") or md.get("finalizers"):
            return ns
        try:
            deleted = await self.s.store.delete(self._key(info, md.get("name")), precondition_uid=md.get("uid"))
        except KeyNotFound:
            raise st.not_found(info.resource, md.get("name", "")) from None
        event(log, "object.deleted", resource="namespaces", object=md.get("name"))
        return deleted

    async def delete_collection(self, request: web.Request, info: RequestInfo) -> web.Response:
        raw = await read_body(request)
        body = decode_body(raw, "application/json") if raw.strip() else {}
        opts = self._delete_options(body, request)
        opts["dryRun"] = dry_run(request) or bool(opts.get("dryRun"))
        matches = self._matcher(info.resource, request, info.namespace)
        res = await self.s.store.list(collection_prefix(info.resource, info.namespace), predicate=matches)
        out = []
        for o in res.items:
            md = o["metadata"]
            sub = RequestInfo(info.group, info.version, info.resource, md.get("namespace"), md["name"])
            try:
                out.append(_with_type(info.resource, await self._delete_one(sub, md["name"], opts)))
            except st.APIError as e:
                if e.code != 404:
                    raise
        return json_response({"kind": f"{info.resource.kind}List", "apiVersion": info.resource.api_version,
                              "metadata": {"resourceVersion": str(res.revision)}, "items": out})

    # ---------------------------------------------------------------- binding / scale
    async def bind(self, request: web.Request, info: RequestInfo, binding: Any) -> web.Response:
        """``POST pods/NAME/binding`` or ``POST bindings``: set spec.nodeName once (assignPod)."""
        if not isinstance(binding, dict) or binding.get("kind", "Binding") != "Binding":
            raise st.bad_request("the body must be a Binding")
        self._decode_typed(request, "Binding", binding)
        bmd = binding.get("metadata") or {}
        name = info.name or bmd.get("name")
        if info.name and bmd.get("name") and bmd["name"] != info.name:
            raise st.bad_request(f"the name of the object ({bmd['name']}) does not match the name on the URL "
                                 f"({info.name})")
        target = binding.get("target") or {}
        node = target.get("name")
        if not node or target.get("kind", "Node") not in ("Node", ""):
            raise st.invalid("Binding", "", name or "", [{"reason": "FieldValueRequired",
                             "message": "Required value", "field": "target.name"}],
                             f'Binding "{name}" is invalid: target.name: Required value')
        pods = R.PODS
        key = object_key(pods, info.namespace, name)
        dry = dry_run(request)

        def assign(pod: dict) -> dict:
            md = pod["metadata"]
            if md.get("deletionTimestamp"):
                raise st.conflict(pods, name, f"pod {name} is being deleted, cannot be assigned to a host")
            spec = pod.setdefault("spec", {})
            if spec.get("nodeName"):
                raise st.conflict(pods, name, f'pod {name} is already assigned to node "{spec["nodeName"]}"')
            spec["nodeName"] = node
            if bmd.get("annotations"):
                md.setdefault("annotations", {}).update(bmd["annotations"])
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
            pod = await self.s.store.guaranteed_update(key, assign, precondition_uid=bmd.get("uid"),
                                                       resource_plural="pods", name=name,
                                                       cached=self._cached(pods, key), dry_run=dry)
        except KeyNotFound:
            raise st.not_found(pods, name) from None
        except Conflict as e:
            raise st.conflict(pods, name, str(e)) from None
        if dry:
            return json_response(st.success(code=201), 201)  # dryRun=All: checked, not written
        self.s.tracer.on_bound(pod)
        event(log, "pod.bound", pod=f"{info.namespace}/{name}", node=node, rv=pod["metadata"]["resourceVersion"])
        return json_response(st.success(code=201), 201)

    async def evict(self, request: web.Request, info: RequestInfo) -> web.Response:
        """``POST pods/NAME/eviction`` with a policy/v1 Eviction: delete the pod with the
        Eviction's ``deleteOptions``; 201 Success Status (``pkg/registry/core/pod/storage/eviction.go``).
        PodDisruptionBudgets are not served, so every eviction is allowed."""
        body = decode_object_body(await read_body(request), body_content_type(request), _EVICTION)
        if body.get("kind", "Eviction") != "Eviction":
            raise st.bad_request("the body of the request must be an Eviction (policy/v1)")
        self._decode_typed(request, "Eviction", body)
        ename = (body.get("metadata") or {}).get("name") if isinstance(body.get("metadata"), dict) else None
        if ename and ename != info.name:
            raise st.bad_request("name in URL does not match name in Eviction object")
        dopts = body.get("deleteOptions") or {}
        if not isinstance(dopts, dict):
            raise st.bad_request("deleteOptions must be an object")
        opts = self._delete_options(dopts, request)
        opts["dryRun"] = dry_run(request) or bool(dopts.get("dryRun"))
        await self._delete_one(info, info.name, opts)
        event(log, "pod.evicted", pod=f"{info.namespace}/{info.name}", dry_run=opts["dryRun"])
        return json_response(st.success(code=201), 201)

    async def pod_log(self, request: web.Request, info: RequestInfo) -> web.Response:
        """``GET pods/NAME/log``: text/plain, synthesized (see :mod:`components.apiserver.podlog`)."""
        pod = await self._get_current(info)
        text = podlog.render(pod, request.query)
        return web.Response(text=text, content_type="text/plain", charset="utf-8")

    @staticmethod
    def _scale_of(resource: Any, obj: dict) -> dict:
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

    async def _update_scale(self, request: web.Request, info: RequestInfo, make_scale) -> web.Response:
        resource = info.resource
        holder: dict = {}
        manager = self._manager(request)

        def mutate(cur: dict) -> dict:
            scale = make_scale(self._scale_of(resource, cur))
            if not isinstance(scale, dict):
                raise st.bad_request("the body must be a Scale")
            rep = (scale.get("spec") or {}).get("replicas")
            if not isinstance(rep, int) or rep < 0:
                raise st.invalid("Scale", "autoscaling", info.name, [{"reason": "FieldValueInvalid",
                                 "message": "must be greater than or equal to 0", "field": "spec.replicas"}],
                                 f'Scale.autoscaling "{info.name}" is invalid: spec.replicas: Invalid value: '
                                 f'{rep}: must be greater than or equal to 0')
            holder["rv"] = (scale.get("metadata") or {}).get("resourceVersion")
            new = codec.clone(cur)
            if new.get("spec", {}).get("replicas") != rep:
                new.setdefault("spec", {})["replicas"] = rep
                new["metadata"]["generation"] = int(new["metadata"].get("generation") or 0) + 1
                # the scale writer owns spec.replicas (entry with subresource "scale":
                # managedfields.ScaleHandler ToParent)
                fieldmanager.record_update(resource.kind, cur, new, manager, resource.api_version,
                                           apitime.now(), "scale")
            return new
        try:
            out = await self.s.store.guaranteed_update(self._key(info), mutate, resource_plural=resource.plural,
                                                       cached=self._cached(resource, self._key(info)),
                                                       group=resource.group, name=info.name,
                                                       dry_run=dry_run(request))
        except KeyNotFound:
            raise st.not_found(resource, info.name) from None
        return json_response(self._scale_of(resource, out))


class _DeleteInstead(Exception):
    """Raised inside an update's mutation: the object is to be deleted, not written."""


class APIErrorFromPatch(Exception):
    """A patch that could not be applied (answered 422). ``generic``: a JSON patch (RFC 6902)
    failure, answered with :data:`JSON_PATCH_REJECTED` instead of the reason."""

    def __init__(self, message: str, generic: bool = False) -> None:
        super().__init__(message)
        self.generic = generic


# metav1 StatusError text of errors.NewGenericServerResponse(422, ...) (apimachinery
# pkg/api/errors/errors.go): what a JSON patch that does not apply is answered with
JSON_PATCH_REJECTED = "the server rejected our request due to an error in our request"


def _patch_invalid(value: str, detail: str) -> st.APIError:
    """422 Invalid on field ``patch`` (errors.NewInvalid with an empty GroupKind and name, as
    handlers/patch.go answers a patched object that does not decode): `` "" is invalid: patch:
    Invalid value: "<value>": <detail>``."""
    msg = f"Invalid value: {sem.go_repr(value)}: {detail}"
    return st.APIError(422, "Invalid", f' "" is invalid: patch: {msg}',
                       {"causes": [{"reason": "FieldValueInvalid", "message": msg, "field": "patch"}]})


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
