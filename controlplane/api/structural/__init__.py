"""Structural OpenAPI v3 schemas as the apiextensions-apiserver handles them: pure functions
(no HTTP, no apiserver) that the CustomResourceDefinition support calls.

* :func:`check_schema` — whether a CRD version's ``openAPIV3Schema`` is acceptable
  (``pkg/apis/apiextensions/validation/validation.go``, ``pkg/apiserver/schema/validation.go``,
  ``schema/defaulting/validation.go``); causes as Kubernetes words them, warnings for CEL
  rules that cannot be evaluated here;
* :func:`prune` — unknown fields dropped (``schema/pruning/algorithm.go``), paths returned;
* :func:`coerce_metadata` — the root's and embedded resources' metadata round-tripped
  through ObjectMeta (``schema/objectmeta/coerce.go``): unknown metadata fields dropped;
* :func:`apply_defaults` — defaults filled in (``schema/defaulting/algorithm.go``);
* :func:`validate` — value validation (kube-openapi via ``pkg/apiserver/validation``) and
  embedded resources' apiVersion/kind/metadata (``schema/objectmeta/validation.go``);
* :func:`validate_list_types` — ``x-kubernetes-list-type`` set/map uniqueness
  (``schema/listtype/validation.go``);
* :func:`cel_rules` / :func:`validate_cel` — ``x-kubernetes-validations``
  (``schema/cel/validation.go``) with cel-python;
* :func:`validate_custom_resource` — all of the above in the order of the custom resource
  strategy's ``Validate`` (``pkg/registry/customresource/strategy.go``);
* :func:`openapi_for_kind` — the schema as ``/openapi/v3`` publishes it.

Schemas are the JSON dicts a CRD holds (``JSONSchemaProps``); objects are decoded JSON.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controlplane.api.structural.compiled import keywords
from controlplane.api.structural.defaulting import compile_defaulter
from controlplane.api.structural.listtype import validate_list_types
from controlplane.api.structural.objectmeta import coerce_metadata, validate_embedded
from controlplane.api.structural.openapi import openapi_for_kind
from controlplane.api.structural.pruning import prune as _prune
from controlplane.api.structural.pruning import prune_nulls, prune_unknown
from controlplane.api.structural.schemacheck import SchemaErrors, check_schema
from controlplane.api.structural.values import validate_values
from controlplane.api.validators import ErrorList

if TYPE_CHECKING:
    from controlplane.api.structural.cel import CelRule, cel_rules, validate_cel

JSON = dict[str, Any]

#: names served from :mod:`controlplane.api.structural.cel`, imported on first use: cel-python
#: costs a third of the import time of a process that never evaluates a rule (the kubelet, the
#: scheduler, the controller-manager)
_LAZY_CEL = ("CelRule", "cel_rules", "validate_cel")


def __getattr__(name: str) -> Any:
    """``CelRule`` / ``cel_rules`` / ``validate_cel`` from :mod:`.cel`, imported on first use
    (PEP 562); AttributeError for any other missing name."""
    if name in _LAZY_CEL:
        from controlplane.api.structural import cel
        return getattr(cel, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: the reasons that stop CEL evaluation (``hasBlockingErr`` in the custom resource strategy)
BLOCKING_REASONS = frozenset({"FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong",
                              "FieldValueTooMany", "FieldValueTypeInvalid"})
CEL_NOT_CHECKED = ("some validation rules were not checked because the object was invalid; "
                   "correct the existing errors to complete validation")


def validate(schema: JSON, obj: Any, path: str = "") -> ErrorList:
    """Value validation of ``obj`` against ``schema`` plus the embedded resources' checks:
    StatusCause dicts (``{"reason", "message", "field"}``), empty when valid; fields are
    prefixed by ``path``. Does not check the root's ObjectMeta (the apiserver does) nor list
    types or CEL rules (:func:`validate_custom_resource` runs all)."""
    errs = validate_values(schema, obj, path)
    if "x-kubernetes-embedded-resource" in keywords(schema):  # nothing to check without one
        errs.extend(validate_embedded(schema, obj, path, is_resource_root=True))
    return errs


def apply_defaults(schema: JSON, obj: Any) -> None:
    """Fill in the schema's ``default`` values into ``obj`` in place (absent properties and
    non-nullable nulls, nested objects and array items included)."""
    defaulter = compile_defaulter(schema)  # None: a schema without defaults changes nothing
    if defaulter is not None:
        defaulter(obj)


def prune(schema: JSON, obj: Any, *, is_resource_root: bool = True) -> list[str]:
    """Drop ``obj``'s unknown fields (and non-nullable nulls without a default) in place;
    returns the sorted dotted paths of the unknown fields dropped (``spec.x``,
    ``spec.items[0].y``); apiVersion/kind/metadata are kept at the resource root and in
    embedded resources."""
    return _prune(schema, obj, is_resource_root=is_resource_root)


def validate_custom_resource(schema: JSON, obj: Any, old: Any = None, path: str = "", *,
                             prior: list[JSON] | None = None) -> ErrorList:
    """The custom resource strategy's schema checks, in its order: value validation,
    embedded resources, list types, then the CEL rules (skipped with one ``Invalid value:
    null: some validation rules were not checked ...`` cause when an earlier error is of a
    blocking kind: NotSupported, Required, TooLong, TooMany, TypeInvalid). ``old``: the
    stored object on update (transition rules). ``prior``: causes the caller already found
    for this object (its ObjectMeta's), which count for the blocking check but are not
    repeated in the result."""
    errs = validate(schema, obj, path)
    used = keywords(schema)
    if "x-kubernetes-list-type=set" in used or "x-kubernetes-list-type=map" in used:
        errs.extend(validate_list_types(schema, obj, path))
    if any(c.get("reason") in BLOCKING_REASONS for c in [*(prior or []), *errs]):
        errs.invalid("", None, CEL_NOT_CHECKED)
    elif "x-kubernetes-validations" in used:
        from controlplane.api.structural.cel import validate_cel
        errs.extend(validate_cel(schema, obj, old, path))
    return errs


__all__ = [
    "BLOCKING_REASONS", "CEL_NOT_CHECKED", "CelRule", "SchemaErrors", "apply_defaults", "cel_rules",
    "check_schema", "coerce_metadata", "openapi_for_kind", "prune", "prune_nulls", "prune_unknown", "validate",
    "validate_cel", "validate_custom_resource", "validate_embedded", "validate_list_types",
    "validate_values",
]
