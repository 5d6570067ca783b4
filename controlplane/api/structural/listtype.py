"""``x-kubernetes-list-type`` set/map uniqueness of a custom resource's lists.

``staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype/validation.go``
(``ValidateListSetsAndMaps``): a ``set`` may not hold one value twice, a ``map`` no two items
with the same key values (a missing key counts as the key's default, or as "unspecified");
each repeated value is reported once, at the index of its second occurrence, as
``spec.xs[2]: Duplicate value: "a"`` (map keys as ``map[string]interface {}{"name":"a"}``);
a map item that is not an object is ``Invalid value: ...: must be an object for an array of
list-type map``.
"""

from __future__ import annotations

import json
from typing import Any

from controlplane.api.structural.goformat import add_cause
from controlplane.api.validators import ErrorList

JSON = dict[str, Any]


class _Unspecified:
    pass


_UNSPECIFIED = _Unspecified()


def _hashable(v: Any) -> Any:
    if isinstance(v, (dict, list)):
        return ("compound", json.dumps(v, sort_keys=True, separators=(",", ":")))
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, (int, float)):
        return ("num", type(v).__name__, v)
    if v is _UNSPECIFIED:
        return ("unspecified",)
    return ("s", type(v).__name__, v)


def _non_unique(keys: list[Any]) -> list[int]:
    seen: dict[Any, int] = {}
    out: list[int] = []
    for i, k in enumerate(keys):
        h = _hashable(k)
        n = seen.get(h, 0)
        seen[h] = n + 1
        if n == 1:
            out.append(i)
    return out


def _d(v: Any) -> JSON:
    return v if isinstance(v, dict) else {}


def _idx(path: str, i: int) -> str:
    return f"{path}[{i}]"


def _child(path: str, k: str) -> str:
    return f"{path}.{k}" if path else k


def _list_map(path: str, s: JSON, obj: list[Any], errs: ErrorList) -> None:
    for i, x in enumerate(obj):
        if x is not None and not isinstance(x, dict):
            add_cause(errs, "invalid", _idx(path, i), x, "must be an object for an array of list-type map")
            return
    if len(obj) <= 1:
        return
    keys = [k for k in s.get("x-kubernetes-list-map-keys") or [] if isinstance(k, str)]
    items = _d(s.get("items"))
    props = _d(items.get("properties"))

    def key_of(x: Any, k: str) -> Any:
        if isinstance(x, dict) and k in x:
            return x[k]
        d = _d(props.get(k)).get("default")
        return d if d is not None else _UNSPECIFIED

    if len(keys) == 1:
        k0 = keys[0]
        for i in _non_unique([key_of(x, k0) for x in obj]):
            x = obj[i]
            add_cause(errs, "duplicate", _idx(path, i), {k0: x.get(k0) if isinstance(x, dict) else None})
        return
    for i in _non_unique([[key_of(x, k) for k in keys] for x in obj]):
        x = obj[i]
        add_cause(errs, "duplicate", _idx(path, i),
                  {k: x[k] for k in keys if isinstance(x, dict) and k in x})


def _walk(path: str, s: Any, obj: Any, errs: ErrorList) -> None:
    if not isinstance(s, dict):
        return
    if isinstance(obj, list):
        lt = s.get("x-kubernetes-list-type")
        if lt == "set" and len(obj) > 1:
            for i in _non_unique(obj):
                add_cause(errs, "duplicate", _idx(path, i), obj[i])
        elif lt == "map":
            _list_map(path, s, obj, errs)
        items = s.get("items")
        if isinstance(items, dict):
            for i, x in enumerate(obj):
                _walk(_idx(path, i), items, x, errs)
    elif isinstance(obj, dict):
        props = _d(s.get("properties"))
        ap = s.get("additionalProperties")
        for k, v in obj.items():
            if k in props:
                _walk(_child(path, k), props[k], v, errs)
            elif isinstance(ap, dict):
                _walk(_child(path, k), ap, v, errs)


def validate_list_types(schema: JSON | None, obj: Any, path: str = "") -> ErrorList:
    """The duplicate items of ``obj``'s ``set`` and ``map`` lists (StatusCauses, fields under
    ``path``); empty when every list is unique."""
    errs = ErrorList()
    _walk(path, schema, obj, errs)
    return errs
