"""Request negotiation: content types, body decoding, query parameters, warnings, responses.

What ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/negotiation`` (media types:
JSON, YAML, protobuf in; JSON and the meta.k8s.io ``Table`` rendering out — an Accept of
``as=PartialObjectMetadata`` is answered as plain JSON, as before)
and the request-reading parts of ``endpoints/handlers/rest.go`` (``limitedReadBody``,
``transformDecodeError``, ``summarizeData``, dryRun and fieldValidation checks) do, for
every handler: :mod:`components.apiserver.rest` and :mod:`components.apiserver.watch`
both use it. Errors are raised as :class:`~components.apiserver.status.APIError`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from components.apiserver import fieldmanager, protobuf
from components.apiserver import semantics as sem
from components.apiserver import status as st
from components.apiserver.semantics import decoder
from controlplane.api import codec
from controlplane.api.registry import kind_name

MAX_BODY = 3 * 1024 * 1024
TABLE_CT = "application/json;as=Table;v=v1;g=meta.k8s.io"
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


def include_object(request: web.Request) -> str:
    """``?includeObject=`` of a Table request: ``Metadata`` (default: each row's object is a
    PartialObjectMetadata), ``Object`` (the full object, which kubectl asks for with
    ``--sort-by`` and ``-o custom-columns``) or ``None``; anything else → 400 ``unrecognized includeObject
    value: "x"`` (``metav1.TableOptions`` / ``IncludeObjectPolicy``; ``asTable`` in
    ``endpoints/handlers/response.go``)."""
    v = request.query.get("includeObject", "")
    if v in ("", "Metadata"):
        return "Metadata"
    if v in ("Object", "None"):
        return v
    raise st.bad_request(f'unrecognized includeObject value: "{v}"')


def json_response(obj: Any, code: int = 200, content_type: str = "application/json") -> web.Response:
    """A response with ``obj`` as compact JSON (encoded once, by :mod:`controlplane.api.codec`)."""
    return web.Response(body=codec.dumps(obj), status=code, headers={"Content-Type": content_type})


def with_type(resource: Any, obj: dict) -> dict:
    """``obj`` with ``apiVersion`` and ``kind`` (defaulted from ``resource``) as its first keys.

    Never modifies ``obj`` (it may be the watch cache's copy); returns it as is when already so.
    A custom resource (``extra["crd"]``) is served in the version of the path: with
    ``conversion.strategy: None`` only ``apiVersion`` changes (``pkg/apiserver/conversion/nop_converter.go``).
    """
    convert = bool(resource.extra.get("crd")) if hasattr(resource, "extra") else False
    it = iter(obj)
    if next(it, None) == "apiVersion" and next(it, None) == "kind" and (
            not convert or obj.get("apiVersion") == resource.api_version):
        return obj
    av = resource.api_version if convert else obj.get("apiVersion") or resource.api_version
    out = {"apiVersion": av, "kind": obj.get("kind") or resource.kind}
    for k, v in obj.items():
        if k != "apiVersion" and k != "kind":
            out[k] = v
    return out


#: request storage key of the body :func:`read_body` read
REQUEST_BODY: Any = web.RequestKey("request_body", bytes) if hasattr(web, "RequestKey") else "request_body"


#: request storage key of the identifying metadata (namespace, name, uid, resourceVersion) of the
#: object a create's body decoded to, before anything changed it: what the audit event's
#: ``objectRef`` takes from the request object (``audit.LogRequestObject``) without decoding it again
REQUEST_METADATA: Any = web.RequestKey("request_metadata", dict) if hasattr(web, "RequestKey") else "request_metadata"
_IDENTIFYING = ("namespace", "name", "uid", "resourceVersion")


def keep_request_metadata(request: web.Request, obj: Any) -> None:
    """Store ``obj``'s identifying metadata under :data:`REQUEST_METADATA` (``obj``: the decoded
    body of a create, before defaulting or generateName)."""
    md = obj.get("metadata") if isinstance(obj, dict) else None
    if isinstance(md, dict):
        request[REQUEST_METADATA] = {k: md[k] for k in _IDENTIFYING if k in md}


async def read_body(request: web.Request) -> bytes:
    """The request body, at most :data:`MAX_BODY` bytes; more → 413 RequestEntityTooLarge
    (``limitedReadBody`` in ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go``)."""
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise st.too_large(f"limit is {MAX_BODY}")
    content = request.content
    # what arrived with the headers: the whole of a typical body, taken without a wait
    out = content.read_nowait()
    if not content.at_eof():
        data = bytearray(out)
        while len(data) <= MAX_BODY:
            chunk = await content.readany()
            if not chunk:
                break
            data += chunk
        out = bytes(data)
    if len(out) > MAX_BODY:
        raise st.too_large(f"limit is {MAX_BODY}")
    request[REQUEST_BODY] = out  # kept for the audit event's requestObject
    return out


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
        if codec.BOUNDED_LOADS:
            # orjson parsed it: finite numbers only and at most JSON_MAX_DEPTH (1024) levels,
            # within check_depth's MAX_DEPTH: the walk below could find nothing
            return value
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


def parse_bool(v: str | None) -> bool:
    """A boolean query parameter: ``1``, ``true`` or ``yes`` (any case) → True, else False."""
    return (v or "").lower() in ("1", "true", "yes")


def parse_rv(v: str | None) -> int | None:
    """``?resourceVersion=``: unset or "" → None, a non-negative integer → it; else 400
    ``invalid resource version "x"``."""
    if v in (None, ""):
        return None
    try:
        n = int(v)
        if n < 0:
            raise ValueError
        return n
    except ValueError:
        raise st.bad_request(f'invalid resource version "{v}"') from None



def warning_headers(request: web.Request, resp: web.StreamResponse) -> None:
    """Add the queued warnings (:func:`add_warning`) to ``resp`` as ``Warning: 299 - "text"``
    headers (quotes escaped), unless the response is already on its way."""
    if resp.prepared:
        return
    for w in request.get(WARNINGS) or ():
        resp.headers.add("Warning", '299 - "' + w.replace('"', '\\"') + '"')


def field_manager(request: web.Request) -> str:
    """The field manager of a write: ``?fieldManager=``, else from the User-Agent
    (:func:`components.apiserver.fieldmanager.manager_name`)."""
    return fieldmanager.manager_name(request.query.get("fieldManager"), request.headers.get("User-Agent"))


def unknown_fields(request: web.Request, unknown: list[str], strict_error: Callable[[str], Exception]) -> None:
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


def decode_typed(request: web.Request, kind: Any, obj: dict, api_version: str | None = None) -> None:
    """A create/update body into ``kind``'s Go types (:func:`controlplane.api.decoder.decode`,
    in place: unknown fields dropped). A value that does not decode → 400 BadRequest
    ``<Kind> in version "v1" cannot be handled as a <Kind>: json: cannot unmarshal ...``
    (``transformDecodeError``, handlers/rest.go); unknown fields per ``fieldValidation``.
    ``api_version``: the version whose schema applies (a kind served at several versions)."""
    def prefix() -> str:  # only on an error (a custom resource's key is its Resource: its kind is named)
        version = str(obj.get("apiVersion") or "").rsplit("/", 1)[-1]
        name = kind_name(kind)
        return f'{obj.get("kind") or name} in version "{version}" cannot be handled as a {name}: '
    try:
        unknown = decoder.decode(kind, obj, api_version=api_version)
    except decoder.DecodeError as e:
        raise st.bad_request(prefix() + e.message) from None
    unknown_fields(request, unknown, lambda m: st.bad_request(prefix() + m))


def list_predicate(resource: Any, query: Any, namespace: str | None) -> Callable[[dict], bool]:
    """``?labelSelector=`` and ``?fieldSelector=`` (and the namespace of the path) as a
    predicate over stored objects; a selector that does not parse, or names a field label
    the kind does not support, → 400 at once (``endpoints/handlers/get.go`` ListResource)."""
    try:
        ls = sem.parse_label_selector(query.get("labelSelector", ""))
        fs = sem.parse_field_selector(query.get("fieldSelector", ""))
    except ValueError as e:
        raise st.bad_request(str(e)) from None
    kind = resource.facts_key
    fsel = query.get("fieldSelector", "")

    def matches(obj: dict) -> bool:
        md = obj.get("metadata") or {}
        if namespace and resource.namespaced and md.get("namespace") != namespace:
            return False
        if not ls.matches(md.get("labels") or {}):
            return False
        return not fsel or fs.matches(sem.object_fields(kind, obj))
    if fsel:
        try:
            fs.matches(sem.object_fields(kind, {"metadata": {}}))
        except ValueError as e:
            raise st.bad_request(str(e)) from None
    return matches


def object_response(request: web.Request, resource: Any, obj: dict, code: int = 200) -> web.Response:
    """``obj`` (apiVersion/kind defaulted from ``resource``) as JSON, or as a one-row Table
    when the Accept header asks for one (``handlers/responsewriters`` + ``negotiation``)."""
    obj = with_type(resource, obj)
    if wants_table(request):
        return json_response(sem.table(resource.facts_key, [obj], obj["metadata"].get("resourceVersion", ""),
                                       include_object=include_object(request)), code, TABLE_CT)
    return json_response(obj, code)


def check_type(resource: Any, obj: Any) -> None:
    """A body's ``kind``/``apiVersion`` against the resource of the path, defaulting what is
    left out (``handlers/create.go`` decodes with defaultGVK = the scope's kind); not an
    object, another kind or another version → 400."""
    if not isinstance(obj, dict):
        raise st.bad_request("the body of the request was in an unknown format - expected an object")
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
