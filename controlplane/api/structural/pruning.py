"""Pruning of unknown fields, and of nulls the schema does not allow.

``staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning/algorithm.go``
(``PruneWithOptions``, ``prune``, ``skipPrune``) and
``.../schema/defaulting/prunenulls.go`` (``PruneNonNullableNullsWithoutDefaults``), as the
custom resource decoder runs them (``customresource_handler.go``, ``unstructuredSchemaCoercer``).
"""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]

_META_FIELDS = ("apiVersion", "kind", "metadata")


def _key(parent: str, k: str) -> str:
    return f"{parent}.{k}" if parent else k


def _props(s: JSON) -> JSON:
    p = s.get("properties")
    return p if isinstance(p, dict) else {}


def _additional(s: JSON) -> tuple[bool, Any]:
    """(additionalProperties present, its schema or None) — ``true`` has no schema."""
    ap = s.get("additionalProperties")
    if ap is None:
        return False, None
    if isinstance(ap, dict):
        return True, ap
    return True, None


def _prune(x: Any, s: JSON | None, parent: str, out: list[str]) -> None:
    if s is not None and s.get("x-kubernetes-preserve-unknown-fields"):
        _skip_prune(x, s, parent, out)
        return
    if isinstance(x, dict):
        if s is None:
            for k in list(x):
                out.append(_key(parent, k))
                del x[k]
            return
        embedded = bool(s.get("x-kubernetes-embedded-resource"))
        props = _props(s)
        has_ap, ap = _additional(s)
        for k in list(x):
            if embedded and k in _META_FIELDS:
                continue
            if k in props:
                v = x[k]
                if isinstance(v, (dict, list)):  # nothing to prune in a scalar
                    _prune(v, props[k] if isinstance(props[k], dict) else {}, _key(parent, k), out)
            elif has_ap:
                v = x[k]
                if isinstance(v, (dict, list)):
                    _prune(v, ap, _key(parent, k), out)
            else:
                if k not in _META_FIELDS or parent:
                    out.append(_key(parent, k))
                del x[k]
    elif isinstance(x, list):
        items = s.get("items") if s is not None else None
        for i, v in enumerate(x):
            _prune(v, items if isinstance(items, dict) else None, f"{parent}[{i}]", out)


def _skip_prune(x: Any, s: JSON, parent: str, out: list[str]) -> None:
    if isinstance(x, dict):
        embedded = bool(s.get("x-kubernetes-embedded-resource"))
        props = _props(s)
        has_ap, ap = _additional(s)
        for k in list(x):
            if embedded and k in _META_FIELDS:
                continue
            v = x[k]
            if not isinstance(v, (dict, list)):  # nothing to prune in a scalar
                continue
            if k in props:
                _prune(v, props[k] if isinstance(props[k], dict) else {}, _key(parent, k), out)
            elif has_ap:
                _prune(v, ap, _key(parent, k), out)
    elif isinstance(x, list):
        items = s.get("items")
        for i, v in enumerate(x):
            if isinstance(items, dict):
                _skip_prune(v, items, f"{parent}[{i}]", out)


def prune_unknown(schema: JSON | None, obj: Any, *, is_resource_root: bool = True) -> list[str]:
    """Drop the fields of ``obj`` (in place) that ``schema`` does not specify; the dotted
    paths dropped, sorted (``spec.x``, ``spec.items[0].y``). At the resource root (and in
    ``x-kubernetes-embedded-resource`` objects) apiVersion, kind and metadata are kept;
    ``x-kubernetes-preserve-unknown-fields`` keeps a level's unknown fields (specified ones
    below are still pruned); ``additionalProperties`` keeps every key."""
    s: JSON = dict(schema) if isinstance(schema, dict) else {}
    if is_resource_root and not s.get("x-kubernetes-embedded-resource"):
        s["x-kubernetes-embedded-resource"] = True
    out: list[str] = []
    _prune(obj, s, "", out)
    out.sort()
    return out


def prune_nulls(schema: JSON | None, obj: Any) -> None:
    """PruneNonNullableNullsWithoutDefaults: drop object fields whose value is null where
    the field's schema is not ``nullable`` and has no ``default`` (in place)."""
    if not isinstance(schema, dict):
        return
    if isinstance(obj, dict):
        props = _props(schema)
        _, ap = _additional(schema)
        for k in list(obj):
            sub = props.get(k) if k in props else ap
            if not isinstance(sub, dict):
                continue
            v = obj[k]
            if v is None:
                if not sub.get("nullable") and sub.get("default") is None:
                    del obj[k]
            elif isinstance(v, (dict, list)):  # a scalar holds no nulls
                prune_nulls(sub, v)
    elif isinstance(obj, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for v in obj:
                if isinstance(v, (dict, list)):
                    prune_nulls(items, v)


def prune(schema: JSON | None, obj: Any, *, is_resource_root: bool = True) -> list[str]:
    """What the custom resource decoder does before defaulting: :func:`prune_unknown` then
    :func:`prune_nulls`. Returns the pruned unknown fields' paths (the apiserver warns
    ``unknown field "spec.x"`` for each; strict field validation rejects them)."""
    out = prune_unknown(schema, obj, is_resource_root=is_resource_root)
    prune_nulls(schema, obj)
    return out
