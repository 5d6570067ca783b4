"""Validation of API objects, with Kubernetes' field paths and messages.

:func:`validate` returns a list of StatusCause dicts ``{"reason", "message", "field"}``
(empty when the object is valid) that the apiserver puts into a 422 ``Invalid`` Status;
:func:`invalid_message` builds that Status' message, which kubectl prints after
``The``: ``Pod "bad1" is invalid: spec.containers[0].image: Required value``.

What a kind is checked for comes from its registry entry (``REGISTRY.of_kind``): its scope
and name rule (ObjectMeta, as ``ValidateObjectMeta`` with the strategy's nameFn) and its
validator (the strategy's ``Validate``/``ValidateUpdate``); a kind without a validator, or
not served, gets ObjectMeta validation only, as a custom resource without a schema does.
The rules live in :mod:`controlplane.api.validators` (sources named there); the names
below re-export the ones other modules use.
"""

from __future__ import annotations

from typing import Any

from controlplane.api import validators
from controlplane.api.registry import JSON, KindKey, kind_name
from controlplane.api.resources import REGISTRY
from controlplane.api.validators import (
    DNS1035_LABEL_ERR,
    DNS1123_LABEL_ERR,
    DNS1123_SUBDOMAIN_ERR,
    ErrorList,
    go_repr,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    validate_annotations,
    validate_labels,
    validate_pod_spec,
)


def validate_object_meta(kind: KindKey, meta: object, errs: ErrorList, old_meta: JSON | None = None) -> None:
    """ValidateObjectMeta of ``kind``'s ``metadata`` into ``errs``: the scope and name rule
    its registry entry declares (a kind not served counts as namespaced, RFC 1123 subdomain
    names)."""
    r = REGISTRY.of_kind(kind)
    validators.validate_object_meta(
        meta, errs, old_meta, namespaced=True if r is None else r.namespaced,
        name_rule=(r.name_rule if r is not None and r.name_rule is not None else validators.is_dns1123_subdomain))

#: the public names (with those re-exported from the modules below)
__all__ = [
    "DNS1035_LABEL_ERR", "DNS1123_LABEL_ERR", "DNS1123_SUBDOMAIN_ERR", "ErrorList", "go_repr",
    "is_dns1035_label", "is_dns1123_label", "is_dns1123_subdomain", "is_qualified_name",
    "is_valid_label_value", "validate_annotations", "validate_labels", "validate_pod_spec",
    "validate_object_meta", "validate", "invalid_message",
]


def validate(kind: KindKey, obj: JSON, old: JSON | None = None) -> list[JSON]:
    """Validate ``obj`` of ``kind`` (after defaulting); ``old`` is the stored object on
    update (enables immutability rules such as ValidatePodUpdate).

    Returns a list of StatusCause dicts ``{"reason": "FieldValueRequired" | ...,
    "message": "Required value", "field": "spec.containers[0].image"}``; empty when
    valid. Never raises on malformed input: wrong types become causes.
    """
    errs = ErrorList()
    if not isinstance(obj, dict):
        errs.invalid("", obj, "must be an object")
        return list(errs)
    try:
        validate_object_meta(kind, obj.get("metadata"), errs,
                             (old or {}).get("metadata") if isinstance(old, dict) else None)
        r = REGISTRY.of_kind(kind)
        if r is not None and r.validate is not None:
            r.validate(obj, old if isinstance(old, dict) else None, errs)
    except (AttributeError, TypeError, KeyError, ValueError, IndexError) as e:
        # a value of a type the rules did not expect (the apiserver decodes bodies into
        # the kinds' types first, so only direct callers get here): invalid, never a crash
        errs.type_invalid("", type(e).__name__, "a field of this object has a value of the wrong type")
    return list(errs)


def invalid_message(kind: KindKey, name: str, causes: list[dict[str, Any]]) -> str:
    """The message of a 422 Invalid Status (apimachinery errors.NewInvalid).

    ``<Kind[.group]> "<name>" is invalid: <errors>`` where one error prints as
    ``field: message`` and several as ``[e1, e2]`` (duplicates dropped, as
    ErrorList.ToAggregate does). The group suffix comes from the resource registry:
    ``Deployment.apps "web" is invalid: ...``.
    """
    qualified = kind_name(kind)
    r = REGISTRY.of_kind(kind)
    if r is not None and r.group:
        qualified = f"{kind_name(kind)}.{r.group}"
    msgs: list[str] = []
    for c in causes:
        m = f"{c['field']}: {c['message']}" if c.get("field") else str(c.get("message", ""))
        if m not in msgs:
            msgs.append(m)
    if not msgs:
        agg = "<nil>"
    elif len(msgs) == 1:
        agg = msgs[0]
    else:
        agg = "[" + ", ".join(msgs) + "]"
    return f'{qualified} "{name}" is invalid: {agg}'
