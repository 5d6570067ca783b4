"""A CRD version's schema as ``/openapi/v3`` publishes it.

``staging/src/k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder/builder.go``
(``BuildOpenAPIV3``): the structural schema without value validations that clients cannot
use (allOf/anyOf/oneOf/not dropped, as ``ToKubeOpenAPI`` with the ``StripValueValidations``
post-processing... kept here: only the junctors are removed), ``metadata`` replaced by a
reference to ObjectMeta, ``apiVersion`` / ``kind`` described as for every kind, and the
``x-kubernetes-group-version-kind`` extension.
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
METADATA_DESCRIPTION = (
    "Standard object's metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")


def _strip(s: Any) -> Any:
    if not isinstance(s, dict):
        return s
    out = {k: v for k, v in s.items() if k not in ("allOf", "anyOf", "oneOf", "not")}
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _strip(v) for k, v in out["properties"].items()}
    if isinstance(out.get("items"), dict):
        out["items"] = _strip(out["items"])
    if isinstance(out.get("additionalProperties"), dict):
        out["additionalProperties"] = _strip(out["additionalProperties"])
    if out.get("x-kubernetes-int-or-string") and "type" not in out:
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    return out


def openapi_for_kind(schema: JSON | None, group: str = "", version: str = "", kind: str = "") -> JSON:
    """The OpenAPI v3 component schema of a custom resource kind: ``schema`` (deep-copied)
    with apiVersion/kind/metadata as every kind has them and, given ``kind``, the
    ``x-kubernetes-group-version-kind`` extension."""
    out = _strip(copy.deepcopy(schema)) if isinstance(schema, dict) else {"type": "object"}
    out.setdefault("type", "object")
    props = out.setdefault("properties", {})
    if not isinstance(props, dict):
        props = out["properties"] = {}
    props["apiVersion"] = {"description": API_VERSION_DESCRIPTION, "type": "string"}
    props["kind"] = {"description": KIND_DESCRIPTION, "type": "string"}
    props["metadata"] = {"allOf": [{"$ref": OBJECT_META_REF}], "default": {}, "description": METADATA_DESCRIPTION}
    if kind:
        out["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind, "version": version}]
    return out
