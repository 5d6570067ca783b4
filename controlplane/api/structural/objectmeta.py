"""Embedded resources (``x-kubernetes-embedded-resource``) inside a custom resource.

``staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta/validation.go``
(``Validate``, ``validateEmbeddedResource``): every embedded object needs ``apiVersion`` and
``kind`` (``Required value: must not be empty``), a parseable group/version, a kind that is
an RFC 1035 label once lower-cased, and ``metadata`` valid as ObjectMeta (a missing name is
allowed; the name rule is ``ValidatePathSegmentName``).
"""

from __future__ import annotations

from typing import Any

from controlplane.api import validators
from controlplane.api.structural.goformat import add_cause
from controlplane.api.validators import ErrorList

JSON = dict[str, Any]


def path_segment_name(name: str) -> list[str]:
    """``path.ValidatePathSegmentName``: a name usable as a URL path segment."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def _child(path: str, k: str) -> str:
    return f"{path}.{k}" if path else k


def _parse_group_version(gv: str) -> str | None:
    if gv == "v1" or gv.count("/") == 0:
        return None
    if gv.count("/") == 1:
        return None
    return f"unexpected GroupVersion string: {gv}"


def _embedded(path: str, x: JSON, errs: ErrorList) -> None:
    if "apiVersion" not in x:
        errs.required(_child(path, "apiVersion"), "must not be empty")
    if "kind" not in x:
        errs.required(_child(path, "kind"), "must not be empty")
    for k, v in x.items():
        if k == "apiVersion":
            if not isinstance(v, str):
                add_cause(errs, "invalid", _child(path, k), v, "must be a string")
            elif not v:
                add_cause(errs, "invalid", _child(path, k), v, "must not be empty")
            elif (e := _parse_group_version(v)) is not None:
                add_cause(errs, "invalid", _child(path, k), v, e)
        elif k == "kind":
            if not isinstance(v, str):
                add_cause(errs, "invalid", _child(path, k), v, "must be a string")
            elif not v:
                add_cause(errs, "invalid", _child(path, k), v, "must not be empty")
            elif problems := validators.is_dns1035_label(v.lower()):
                add_cause(errs, "invalid", _child(path, k), v,
                          "may have mixed case, but should otherwise match: " + ",".join(problems))
        elif k == "metadata":
            if not isinstance(v, dict):
                add_cause(errs, "invalid", _child(path, k), v, "must be an object")
                continue
            meta = dict(v)
            if not meta.get("name"):
                meta["name"] = "fakename"
            sub = ErrorList()
            validators.validate_object_meta(meta, sub, namespaced=bool(meta.get("namespace")),
                                            name_rule=path_segment_name)
            prefix = _child(path, "")
            for c in sub:
                c = dict(c)
                c["field"] = prefix + c["field"] if c.get("field") else _child(path, k)
                errs.append(c)


def _walk(path: str, obj: Any, s: Any, root: bool, errs: ErrorList) -> None:
    s = s if isinstance(s, dict) else {}
    if not root and isinstance(obj, dict) and s.get("x-kubernetes-embedded-resource"):
        _embedded(path, obj, errs)
    if isinstance(obj, list):
        for i, x in enumerate(obj):
            _walk(f"{path}[{i}]", x, s.get("items"), False, errs)
    elif isinstance(obj, dict):
        p = s.get("properties")
        props: JSON = p if isinstance(p, dict) else {}
        ap = s.get("additionalProperties")
        for k, v in obj.items():
            if k in props:
                _walk(_child(path, k), v, props[k], False, errs)
            elif ap is not None:
                _walk(_child(path, k), v, ap if isinstance(ap, dict) else None, False, errs)


def validate_embedded(schema: JSON | None, obj: Any, path: str = "", *, is_resource_root: bool = True) -> ErrorList:
    """The embedded resources' apiVersion/kind/metadata problems in ``obj`` (the root itself
    is not checked when ``is_resource_root``: the apiserver validates its ObjectMeta)."""
    errs = ErrorList()
    _walk(path, obj, schema, is_resource_root, errs)
    return errs
