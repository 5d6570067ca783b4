"""Defaulting of a custom resource from its schema's ``default`` values.

``staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting/algorithm.go``
(``Default``): an absent property, or a null in a non-nullable one, gets a deep copy of its
schema's default; defaulting then descends into every value (so defaults inside defaulted
objects apply too), into additionalProperties values and array items (a non-nullable null
item gets the items' default).

:data:`compile_defaulter` gives the same as a tree of closures built once per schema (by
identity), visiting only the parts of an object whose schema holds a default.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from controlplane.api.structural.compiled import IdentityCache

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


Defaulter = Callable[[Any], None]


def _compile(s: Any) -> Defaulter | None:
    """:func:`apply_defaults` for schema node ``s`` as a closure, or None when nothing in
    the subtree has a default (defaulting it changes nothing, so it is not walked)."""
    if not isinstance(s, dict):
        return None
    p = s.get("properties")
    props: JSON = p if isinstance(p, dict) else {}
    own = [(k, prop["default"], bool(prop.get("nullable"))) for k, prop in props.items()
           if isinstance(prop, dict) and prop.get("default") is not None]
    children = {k: fn for k, fn in ((k, _compile(prop)) for k, prop in props.items()) if fn is not None}
    ap = s.get("additionalProperties")
    ap_fn = _compile(ap) if isinstance(ap, dict) else None
    ap_default = ap.get("default") if isinstance(ap, dict) else None
    ap_nullable = bool(ap.get("nullable")) if isinstance(ap, dict) else False
    items = s.get("items")
    items_fn = _compile(items) if isinstance(items, dict) else None
    items_default = items.get("default") if isinstance(items, dict) else None
    items_nullable = bool(items.get("nullable")) if isinstance(items, dict) else False
    walk_keys = bool(children) or ap_fn is not None or ap_default is not None
    walk_items = items_fn is not None or items_default is not None
    if not (own or walk_keys or walk_items):
        return None

    def run(obj: Any) -> None:
        if isinstance(obj, dict):
            for k, d, nullable in own:
                if k not in obj or (obj[k] is None and not nullable):
                    obj[k] = copy.deepcopy(d)
            if not walk_keys:
                return
            for k in list(obj):
                v = obj[k]
                if k in props:
                    fn = children.get(k)
                    if fn is not None:
                        fn(v)
                elif isinstance(ap, dict):
                    if v is None and not ap_nullable and ap_default is not None:
                        obj[k] = copy.deepcopy(ap_default)
                    if ap_fn is not None:
                        ap_fn(v)
        elif isinstance(obj, list) and walk_items:
            for i, v in enumerate(obj):
                if v is None and not items_nullable and items_default is not None:
                    obj[i] = copy.deepcopy(items_default)
                if items_fn is not None:
                    items_fn(v)
    return run


def _compile_root(schema: Any) -> Defaulter | None:
    return _compile(schema)


#: the compiled defaulter of a schema (None: it has no defaults), memoized by identity
compile_defaulter: IdentityCache[Defaulter | None] = IdentityCache(_compile_root)
