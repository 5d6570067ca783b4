"""Discovery and OpenAPI documents built from ``controlplane.api.resources``.

Shapes: ``/version`` (version.Info), ``/api`` (APIVersions), ``/apis`` (APIGroupList),
``/api/v1`` and ``/apis/G/V`` (APIResourceList), as served by
``staging/src/k8s.io/apiserver/pkg/endpoints/discovery/``. ``/openapi/v3`` (root index
with ``serverRelativeURL``) and one document per group-version — the kinds' main fields
from :mod:`controlplane.api.schemas`, for ``kubectl explain`` — whose ``patch``
operations carry ``x-kubernetes-group-version-kind`` and a ``fieldValidation`` parameter,
which makes kubectl skip client-side validation and send ``fieldValidation=Strict``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
from collections.abc import Callable
from typing import Any, TypeVar

import controlplane
from components.apiserver import semantics as sem
from controlplane.api import codec
from controlplane.api import resources as R
from controlplane.api import schemas as schemas_table

_SUB_VERBS = {"status": ["get", "patch", "update"], "scale": ["get", "patch", "update"],
              "approval": ["get", "patch", "update"],
              "binding": ["create"], "eviction": ["create"], "log": ["get"], "finalize": ["update"],
              "exec": ["create", "get"], "attach": ["create", "get"], "portforward": ["create", "get"],
              "token": ["create"]}
_SUB_KIND = {"scale": ("Scale", "autoscaling", "v1"), "binding": ("Binding", "", "v1"),
             "eviction": ("Eviction", "policy", "v1"), "log": ("Pod", "", "v1"),
             "exec": ("PodExecOptions", "", "v1"), "attach": ("PodAttachOptions", "", "v1"),
             "portforward": ("PodPortForwardOptions", "", "v1"),
             "token": ("TokenRequest", "authentication.k8s.io", "v1")}


_T = TypeVar("_T")


def per_registry_generation(fn: Callable[..., _T]) -> Callable[..., _T]:
    """Memoize ``fn`` (by its arguments) until ``REGISTRY.generation`` changes: a resource
    added or removed at run time shows in discovery and OpenAPI at the next request (the
    apiserver's discovery manager rebuilds its documents on every ``AddGroupVersion`` /
    ``RemoveGroupVersion``, ``endpoints/discovery/aggregated/handler.go``). Results are
    shared and read-only. ``fn.cache_clear()`` empties the memo."""
    memo: dict[Any, _T] = {}
    seen = [-1]

    @functools.wraps(fn)
    def wrapper(*args: Any) -> _T:
        gen = R.REGISTRY.generation
        if gen != seen[0]:
            memo.clear()
            seen[0] = gen
        try:
            return memo[args]
        except KeyError:
            value = memo[args] = fn(*args)
            return value
    wrapper.cache_clear = memo.clear  # type: ignore[attr-defined]
    return wrapper


def version_info() -> dict[str, Any]:
    v = controlplane.KUBE_VERSION
    major, minor = v.lstrip("v").split(".")[:2]
    return {"major": major, "minor": minor, "gitVersion": v, "gitCommit": "controlplane",
            "gitTreeState": "clean", "buildDate": "2025-01-01T00:00:00Z", "goVersion": "go1.23.0",
            "compiler": "gc", "platform": f"linux/{'amd64' if platform.machine() in ('x86_64', 'AMD64') else 'arm64'}"}


def group_versions() -> dict[str, list[R.Resource]]:
    """groupVersion ("v1", "apps/v1") → resources, in registry order."""
    out: dict[str, list[R.Resource]] = {}
    for r in R.REGISTRY:
        out.setdefault(r.api_version, []).append(r)
    return out


def api_versions() -> dict:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}]}


def api_group_list() -> dict:
    groups: dict[str, list[str]] = {}
    for r in R.REGISTRY:
        if r.group:
            vs = groups.setdefault(r.group, [])
            if r.version not in vs:
                vs.append(r.version)
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
        {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in vs],
         "preferredVersion": {"groupVersion": f"{g}/{vs[0]}", "version": vs[0]}}
        for g, vs in groups.items()]}


def api_resource_list(group_version: str) -> dict | None:
    """APIResourceList of ``group_version``, or None if not served."""
    rs = group_versions().get(group_version)
    if rs is None:
        return None
    out = []
    for r in rs:
        e: dict[str, Any] = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
                             "kind": r.kind, "verbs": list(r.verbs)}
        if r.short_names:
            e["shortNames"] = list(r.short_names)
        if r.categories:
            e["categories"] = list(r.categories)
        if r.stored:
            # the hash of the version objects are stored at: the same for every served version
            # of one storage (none for the never-stored reviews), as storageversionhash.go computes it
            sv = R.REGISTRY.storage_of(r)
            e["storageVersionHash"] = hashlib.sha256(f"{sv.api_version}/{sv.kind}".encode()).hexdigest()[:11]
        out.append(e)
        for sub in r.subresources:
            s: dict[str, Any] = {"name": f"{r.plural}/{sub}", "singularName": "", "namespaced": r.namespaced,
                                 "kind": r.kind, "verbs": _SUB_VERBS.get(sub, ["get"])}
            if sub in _SUB_KIND:
                kind, g, v = _SUB_KIND[sub]
                s["kind"] = kind
                if g:
                    s["group"], s["version"] = g, v
            out.append(s)
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": out}


def _openapi_key(gv: str) -> str:
    return f"api/{gv}" if "/" not in gv else f"apis/{gv}"


@per_registry_generation
def openapi_doc(gv: str) -> dict | None:
    """(Built once per registry generation; read-only.) OpenAPI v3 document of one group-version (``api/v1``, ``apis/apps/v1``)."""
    rs = group_versions().get(gv)
    if rs is None:
        return None
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    custom = False
    fv = {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": True},
          "description": "Ignore, Warn or Strict: how unknown and duplicate fields are handled."}
    for r in rs:
        gvk = {"group": r.group, "version": r.version, "kind": r.kind}
        ref = f"io.k8s.controlplane.{r.group or 'core'}.{r.version}.{r.kind}"
        base = schemas_table.kind_schema(r.kind, r.api_version)
        if r.openapi_schema is not None:
            # a custom resource: its CRD version's openAPIV3Schema as the apiextensions-apiserver
            # publishes it (pkg/controller/openapi/builder: unfolded, metadata → ObjectMeta)
            base = sem.openapi_for_kind(r.openapi_schema, r.group, r.version, r.kind)
            custom = True
        schemas[ref] = {**base, "x-kubernetes-group-version-kind": [gvk]}
        item = r.path("{namespace}" if r.namespaced else None, "{name}")
        op = lambda verb, extra=(): {  # noqa: E731
            "operationId": f"{verb}{r.kind}", "x-kubernetes-action": verb,
            "x-kubernetes-group-version-kind": gvk, "parameters": [fv, *extra],
            "responses": {"200": {"description": "OK", "content": {"application/json": {
                "schema": {"$ref": f"#/components/schemas/{ref}"}}}}}}
        paths[item.lstrip("/") if False else item] = {"get": op("get"), "put": op("put"), "patch": op("patch"),
                                                      "delete": op("delete")}
        paths[r.path("{namespace}" if r.namespaced else None)] = {"get": op("list"), "post": op("post")}
    schemas.update(schemas_table.component_schemas())
    if custom:  # the ObjectMeta custom resource schemas refer to, under its Kubernetes name
        schemas[sem.OBJECT_META_SCHEMA] = schemas["io.k8s.controlplane.ObjectMeta"]
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": controlplane.KUBE_VERSION},
            "paths": paths, "components": {"schemas": schemas}}


@per_registry_generation
def openapi_root() -> dict:
    """``/openapi/v3`` index: ``{"paths": {"api/v1": {"serverRelativeURL": ...}, ...}}``."""
    out = {}
    for gv in group_versions():
        key = _openapi_key(gv)
        h = hashlib.sha512(json.dumps(openapi_doc(gv), sort_keys=True).encode()).hexdigest()[:32].upper()
        out[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={h}"}
    return {"paths": out}


def openapi_gv_from_path(path: str) -> str | None:
    """``api/v1`` → ``v1``; ``apis/apps/v1`` → ``apps/v1``; else None."""
    parts = path.strip("/").split("/")
    if len(parts) == 2 and parts[0] == "api":
        return parts[1]
    if len(parts) == 3 and parts[0] == "apis":
        return f"{parts[1]}/{parts[2]}"
    return None


#: Content type kubectl asks /openapi/v2 for (client-go discovery ``OpenAPISchema``).
OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


def _pb_field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field (wire type 2); payloads < 16 KiB."""
    n = len(payload)
    length = bytes([n]) if n < 0x80 else bytes([(n & 0x7F) | 0x80, n >> 7])
    return bytes([(number << 3) | 2]) + length + payload


def openapi_v2_protobuf() -> bytes:
    """A minimal OpenAPI v2 document, protobuf-encoded (gnostic ``openapi_v2.Document``:
    field 1 ``swagger``, field 2 ``info`` {1 ``title``, 2 ``version``}), with no
    definitions.

    kubectl downloads /openapi/v2 only for kinds that /openapi/v3 does not list
    (its client-side validation fallback, staging/src/k8s.io/kubectl/pkg/cmd/util/
    factory_client_access.go ``Validator``); a document with no definitions lets
    that validation pass, so an unknown kind gets kubectl's real "no matches for
    kind" error instead of "failed to download openapi".
    """
    info = _pb_field(1, b"Kubernetes") + _pb_field(2, controlplane.KUBE_VERSION.encode())
    return _pb_field(1, b"2.0") + _pb_field(2, info)


#: Content type of aggregated discovery (``apidiscovery.k8s.io/v2``), as kubectl asks for it.
AGGREGATED_CT = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def wants_aggregated(accept: str) -> bool:
    """Whether an Accept header asks for aggregated discovery v2 (before plain JSON)."""
    for part in accept.split(","):
        p = part.replace(" ", "")
        if "g=apidiscovery.k8s.io" in p and "v=v2" in p.split(";") and "as=APIGroupDiscoveryList" in p:
            return True
        if p.startswith("application/json") and "as=" not in p:
            return False
    return False


def _discovery_resource(r: R.Resource) -> dict[str, Any]:
    e: dict[str, Any] = {"resource": r.plural,
                         "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
                         "scope": "Namespaced" if r.namespaced else "Cluster",
                         "singularResource": r.singular, "verbs": list(r.verbs)}
    if r.short_names:
        e["shortNames"] = list(r.short_names)
    if r.categories:
        e["categories"] = list(r.categories)
    subs = []
    for sub in r.subresources:
        kind, g, v = _SUB_KIND.get(sub, (r.kind, r.group, r.version))
        subs.append({"subresource": sub, "responseKind": {"group": g, "version": v, "kind": kind},
                     "verbs": _SUB_VERBS.get(sub, ["get"])})
    if subs:
        e["subresources"] = subs
    return e


@per_registry_generation
def aggregated_etag(core: bool) -> str:
    """The ETag of :func:`aggregated_discovery`: the upper-case hex SHA-512 of the document,
    quoted (``endpoints/discovery/aggregated/etag.go`` calculateETag / ServeHTTPWithETag)."""
    return '"' + hashlib.sha512(codec.dumps(aggregated_discovery(core))).hexdigest().upper() + '"'


@per_registry_generation
def aggregated_discovery(core: bool) -> dict:
    """``/api`` (``core``) or ``/apis`` as an APIGroupDiscoveryList (aggregated discovery v2,
    ``staging/src/k8s.io/api/apidiscovery/v2/types.go``; KEP-3352): every group, version and
    resource in one document, so kubectl needs one request instead of one per group-version."""
    groups: dict[str, dict[str, list]] = {}
    for r in R.REGISTRY:
        if bool(r.group) == core:
            continue
        groups.setdefault(r.group, {}).setdefault(r.version, []).append(_discovery_resource(r))
    items = [{"metadata": {"name": g, "creationTimestamp": None},
              "versions": [{"version": v, "resources": rs, "freshness": "Current"} for v, rs in vs.items()]}
             for g, vs in groups.items()]
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {}, "items": items}
