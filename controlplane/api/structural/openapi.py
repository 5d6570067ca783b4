"""A CRD version's schema as ``/openapi/v3`` publishes it.

``staging/src/k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder/builder.go``
(``BuildOpenAPIV3`` / ``buildKubeNative``): the structural schema unfolded
(``schema/unfold.go``: ``x-kubernetes-int-or-string`` gets ``anyOf: [{type: integer},
{type: string}]``, or that anyOf first in ``allOf`` when the schema has its own anyOf),
value validations kept (v3 can express them), ``metadata`` replaced by a reference to
ObjectMeta with its description, ``apiVersion`` / ``kind`` as TypeMeta describes them, the
same for every ``x-kubernetes-embedded-resource`` (which also requires apiVersion and
kind), and the ``x-kubernetes-group-version-kind`` extension.
"""

from __future__ import annotations

import copy
from typing import Any

JSON = dict[str, Any]

OBJECT_META_REF = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

API_VERSION_DESCRIPTION = (
    "APIVersion defines the versioned schema of this representation of an object. Servers should convert "
    "recognized schemas to the latest internal value, and may reject unrecognized values. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources")
KIND_DESCRIPTION = (
    "Kind is a string value representing the REST resource this object represents. Servers may infer this "
    "from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds")
EMBEDDED_API_VERSION_DESCRIPTION = (
    "apiVersion defines the versioned schema of this representation of an object. Servers should convert "
    "recognized schemas to the latest internal value, and may reject unrecognized values. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources")
EMBEDDED_KIND_DESCRIPTION = (
    "kind is a string value representing the type of this object. Servers may infer this from the endpoint "
    "the client submits requests to. Cannot be updated. In CamelCase. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds")
METADATA_DESCRIPTION = (
    "Standard object's metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")

_INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]


def _metadata_ref() -> JSON:
    return {"allOf": [{"$ref": OBJECT_META_REF}], "description": METADATA_DESCRIPTION}


def unfold(s: Any) -> Any:
    """Structural.Unfold on a schema dict (in place; returns it)."""
    if not isinstance(s, dict):
        return s
    for k in ("properties",):
        if isinstance(s.get(k), dict):
            for v in s[k].values():
                unfold(v)
    unfold(s.get("items"))
    unfold(s.get("additionalProperties"))
    if s.get("x-kubernetes-int-or-string"):
        any_of = s.get("anyOf")
        a = s.get("allOf")
        all_of: list[Any] = a if isinstance(a, list) else []
        if any_of == _INT_OR_STRING or (all_of and isinstance(all_of[0], dict)
                                        and all_of[0].get("anyOf") == _INT_OR_STRING):
            return s
        if not any_of:
            s["anyOf"] = copy.deepcopy(_INT_OR_STRING)
        else:
            s["allOf"] = [{"anyOf": copy.deepcopy(_INT_OR_STRING)}] + all_of
    return s


def _embedded(s: Any) -> None:
    """addEmbeddedProperties: TypeMeta and the ObjectMeta reference in every embedded resource."""
    if not isinstance(s, dict):
        return
    if isinstance(s.get("properties"), dict):
        for v in s["properties"].values():
            _embedded(v)
    _embedded(s.get("items"))
    _embedded(s.get("additionalProperties"))
    if s.get("x-kubernetes-embedded-resource"):
        props = s.setdefault("properties", {})
        props["apiVersion"] = {"description": EMBEDDED_API_VERSION_DESCRIPTION, "type": "string"}
        props["kind"] = {"description": EMBEDDED_KIND_DESCRIPTION, "type": "string"}
        props["metadata"] = _metadata_ref()
        req = s.setdefault("required", [])
        for k in ("kind", "apiVersion"):
            if k not in req:
                req.append(k)


def openapi_for_kind(schema: JSON | None, group: str = "", version: str = "", kind: str = "") -> JSON:
    """The OpenAPI v3 component schema of a custom resource kind: ``schema`` (deep-copied,
    unfolded) with apiVersion/kind/metadata as every kind has them and, given ``kind``, the
    ``x-kubernetes-group-version-kind`` extension. A missing schema publishes as
    ``{"type": "object"}`` (no properties, so clients accept any field)."""
    if not isinstance(schema, dict):
        out: JSON = {"type": "object"}
    else:
        out = unfold(copy.deepcopy(schema))
        props = out.setdefault("properties", {})
        if not isinstance(props, dict):
            props = out["properties"] = {}
        props["metadata"] = _metadata_ref()
        props["apiVersion"] = {"description": API_VERSION_DESCRIPTION, "type": "string"}
        props["kind"] = {"description": KIND_DESCRIPTION, "type": "string"}
        for v in props.values():
            _embedded(v)
    if kind:
        out["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind, "version": version}]
    return out
