"""Embedded resources (``x-kubernetes-embedded-resource``) inside a custom resource.

``staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta/validation.go``
(``Validate``, ``validateEmbeddedResource``): every embedded object needs ``apiVersion`` and
``kind`` (``Required value: must not be empty``), a parseable group/version, a kind that is
an RFC 1035 label once lower-cased, and ``metadata`` valid as ObjectMeta (a missing name is
allowed; the name rule is ``ValidatePathSegmentName``).
"""

from __future__ import annotations

from collections.abc import Callable
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


# --------------------------------------------------------------------------- coercion

def _go_json_kind(v: Any) -> str:
    """encoding/json's name of a JSON value's kind in UnmarshalTypeError."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_str_map(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(x, str) for x in v.values())


def _is_str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _is_obj_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, dict) for x in v)


#: ObjectMeta's JSON fields (``k8s.io/apimachinery/pkg/apis/meta/v1/types.go``) → (Go type,
#: check of a non-null value); kept here rather than read from controlplane.api.schemas so
#: that this package stays importable from below the registry's upper layers
_META_FIELD_TYPES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "name": ("string", _is_str), "generateName": ("string", _is_str), "namespace": ("string", _is_str),
    "selfLink": ("string", _is_str), "uid": ("types.UID", _is_str), "resourceVersion": ("string", _is_str),
    "generation": ("int64", _is_int), "creationTimestamp": ("v1.Time", _is_str),
    "deletionTimestamp": ("v1.Time", _is_str), "deletionGracePeriodSeconds": ("int64", _is_int),
    "labels": ("map[string]string", _is_str_map), "annotations": ("map[string]string", _is_str_map),
    "ownerReferences": ("[]v1.OwnerReference", _is_obj_list), "finalizers": ("[]string", _is_str_list),
    "managedFields": ("[]v1.ManagedFieldsEntry", _is_obj_list),
}


def _coerce_meta(meta: JSON, mpath: str, drop_invalid: bool, unknown: list[str]) -> str | None:
    """Round-trip ``meta`` through ObjectMeta in place: unknown fields dropped (their paths
    into ``unknown``), a null creationTimestamp dropped; the first value of the wrong type
    is an error (or dropped when ``drop_invalid``)."""
    types = _META_FIELD_TYPES
    for k in list(meta):
        v = meta[k]
        if k not in types:
            unknown.append(f"{mpath}.{k}")
            del meta[k]
            continue
        goname, ok = types[k]
        if v is None:
            continue
        if not ok(v):
            if drop_invalid:
                del meta[k]
                continue
            return (f"json: cannot unmarshal {_go_json_kind(v)} into Go struct field ObjectMeta.{k} "
                    f"of type {goname}")
    if meta.get("creationTimestamp") is None:
        meta.pop("creationTimestamp", None)
    return None


def coerce_metadata(schema: JSON | None, obj: Any, path: str = "", *, is_resource_root: bool = True,
                    drop_invalid: bool = False) -> tuple[ErrorList, list[str]]:
    """objectmeta.Coerce (``schema/objectmeta/coerce.go``, ``algorithm.go``): in every
    embedded resource apiVersion and kind must be strings and metadata must decode as
    ObjectMeta, whose unknown fields are dropped in place.

    ``is_resource_root``: ``obj`` is a whole resource, whose own metadata is coerced too
    (the custom resource decoder does this for the root with GetObjectMeta/SetObjectMeta);
    ``drop_invalid``: drop values of the wrong type instead of failing (as reading from
    storage does). Returns (the first error as a one-cause ErrorList, or empty; the dotted
    paths of the unknown metadata fields dropped, which the apiserver warns about).
    """
    errs = ErrorList()
    unknown: list[str] = []

    def walk(x: Any, s: Any, p: str, root: bool) -> bool:
        s = s if isinstance(s, dict) else {}
        if isinstance(x, dict):
            if root or s.get("x-kubernetes-embedded-resource"):
                for k in ("apiVersion", "kind"):
                    if k in x and not isinstance(x[k], str):
                        if drop_invalid:
                            del x[k]
                        else:
                            add_cause(errs, "invalid", _child(p, k), x[k], "must be a string")
                            return False
                if "metadata" in x:
                    m = x["metadata"]
                    mpath = _child(p, "metadata")
                    if m is None:
                        pass
                    elif not isinstance(m, dict):
                        if drop_invalid:
                            del x["metadata"]
                        else:
                            add_cause(errs, "invalid", mpath, m,
                                      f"json: cannot unmarshal {_go_json_kind(m)} into Go value of type "
                                      "v1.ObjectMeta")
                            return False
                    else:
                        e = _coerce_meta(m, mpath, drop_invalid, unknown)
                        if e is not None:
                            add_cause(errs, "invalid", mpath, m, e)
                            return False
            props = s.get("properties") if isinstance(s.get("properties"), dict) else {}
            ap = s.get("additionalProperties")
            for k, v in list(x.items()):
                if k in props:
                    if not walk(v, props[k], _child(p, k), False):
                        return False
                elif ap is not None:
                    if not walk(v, ap if isinstance(ap, dict) else None, _child(p, k), False):
                        return False
        elif isinstance(x, list):
            for i, v in enumerate(x):
                if not walk(v, s.get("items"), f"{p}[{i}]", False):
                    return False
        return True

    walk(obj, schema, path, is_resource_root)
    return errs, unknown
