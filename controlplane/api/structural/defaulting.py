"""Defaulting of a custom resource from its schema's ``default`` values.

``staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting/algorithm.go``
(``Default``): an absent property, or a null in a non-nullable one, gets a deep copy of its
schema's default; defaulting then descends into every value (so defaults inside defaulted
objects apply too), into additionalProperties values and array items (a non-nullable null
item gets the items' default).
"""

from __future__ import annotations

import copy
from typing import Any

JSON = dict[str, Any]


def _non_nullable_null(v: Any, s: Any) -> bool:
    return v is None and isinstance(s, dict) and not s.get("nullable")


def apply_defaults(schema: JSON | None, obj: Any) -> None:
    """Fill in ``obj``'s defaults from ``schema`` in place (a no-op for scalars and for a
    value the schema does not describe)."""
    if not isinstance(schema, dict):
        return
    if isinstance(obj, dict):
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        for k, prop in props.items():
            if not isinstance(prop, dict) or prop.get("default") is None:
                continue
            if k not in obj or _non_nullable_null(obj[k], prop):
                obj[k] = copy.deepcopy(prop["default"])
        ap = schema.get("additionalProperties")
        for k in list(obj):
            v = obj[k]
            if k in props:
                apply_defaults(props[k], v)
            elif isinstance(ap, dict):
                if _non_nullable_null(v, ap) and ap.get("default") is not None:
                    obj[k] = copy.deepcopy(ap["default"])
                apply_defaults(ap, v)
    elif isinstance(obj, list):
        items = schema.get("items")
        if not isinstance(items, dict):
            return
        for i, v in enumerate(obj):
            if _non_nullable_null(v, items) and items.get("default") is not None:
                obj[i] = copy.deepcopy(items["default"])
            apply_defaults(items, v)
