"""The three PATCH flavours the apiserver accepts, on plain JSON values.

* ``application/merge-patch+json`` — :func:`json_merge_patch` (RFC 7386): maps merge
  recursively, ``null`` deletes, anything else (lists included) replaces.
* ``application/json-patch+json`` — :func:`json_patch` (RFC 6902): ``add``, ``remove``,
  ``replace``, ``move``, ``copy``, ``test`` on RFC 6901 JSON pointers.
* ``application/strategic-merge-patch+json`` — :func:`strategic_merge_patch`, what
  ``kubectl apply`` (client-side), ``edit``, ``label``... send: a merge patch where lists
  of objects with a *patch merge key* merge element by element, lists with the merge
  strategy of primitives (``finalizers``) take the union, and the directives ``$patch``
  (``replace``/``delete``/``merge``), ``$retainKeys``, ``$setElementOrder/<list>`` and
  ``$deleteFromPrimitiveList/<list>`` steer the merge. Source:
  ``staging/src/k8s.io/apimachinery/pkg/util/strategicpatch/patch.go`` and the
  ``patchStrategy``/``patchMergeKey`` struct tags of ``k8s.io/api/core/v1/types.go`` and
  ``k8s.io/api/apps/v1/types.go``, declared once in :mod:`controlplane.api.listfields`.
* :func:`apply_merge` — the merge of a server-side apply: the same rules, list elements
  identified by their ``+listMapKey`` keys (container ports by ``containerPort`` and
  ``protocol``) instead of the patch merge key.

All functions return new values and never mutate their inputs; errors raise
:class:`PatchError` (the apiserver answers 422/400 with its message).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from controlplane.api import codec, listfields

PATCH_DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
SET_ELEMENT_ORDER = "$setElementOrder/"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList/"


class PatchError(ValueError):
    """A patch that is malformed or cannot be applied to the target."""


# --------------------------------------------------------------------------- RFC 7386

def json_merge_patch(target: Any, patch: Any) -> Any:
    """Apply an RFC 7386 JSON merge patch; returns a new value.

    A non-object patch replaces the target; in an object patch ``null`` removes the
    key and other values merge recursively (lists replace).
    """
    if not isinstance(patch, dict):
        return _clone(patch)
    out = codec.clone(target) if isinstance(target, dict) else {}
    _merge_into(out, patch)
    return out


def _clone(v: Any) -> Any:
    return codec.clone(v) if isinstance(v, (dict, list)) else v


def _merge_into(out: dict[str, Any], patch: dict[str, Any]) -> None:
    """Merge ``patch`` into ``out`` (a private copy) in place: one copy per patch, not per level."""
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            cur = out.get(k)
            if not isinstance(cur, dict):
                cur = out[k] = {}
            _merge_into(cur, v)
        else:
            out[k] = _clone(v)


# --------------------------------------------------------------------------- RFC 6902

def _pointer(path: object) -> list[str]:
    if not isinstance(path, str):
        raise PatchError(f"invalid JSON pointer {path!r}: must be a string")
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}: must start with '/'")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _index(container: list[Any], token: str, path: str, allow_end: bool = False) -> int:
    if allow_end and token == "-":
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise PatchError(f"invalid array index {token!r} in path {path!r}")
    i = int(token)
    if i > len(container) or (i == len(container) and not allow_end):
        raise PatchError(f"array index {i} out of bounds in path {path!r}")
    return i


def _parent(doc: Any, tokens: list[str], path: str) -> Any:
    cur = doc
    for t in tokens[:-1]:
        if isinstance(cur, dict):
            if t not in cur:
                raise PatchError(f"path {path!r} not found: missing key {t!r}")
            cur = cur[t]
        elif isinstance(cur, list):
            cur = cur[_index(cur, t, path)]
        else:
            raise PatchError(f"path {path!r} not found: {t!r} is not inside an object or array")
    return cur


def _get(doc: Any, path: str) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return doc
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"path {path!r} not found: missing key {last!r}")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, path)]
    raise PatchError(f"path {path!r} not found")


def _add(doc: Any, path: str, value: Any) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, path, allow_end=True), value)
    else:
        raise PatchError(f"cannot add at {path!r}: parent is not an object or array")
    return doc


def _remove(doc: Any, path: str) -> tuple[Any, Any]:
    tokens = _pointer(path)
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"cannot remove {path!r}: path not found")
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, last, path))
    raise PatchError(f"cannot remove {path!r}: parent is not an object or array")


#: kube-apiserver's JSONPatchMaxCopyBytes (``pkg/server/config.go``, 3 MiB), the limit of
#: evanphx/json-patch's AccumulatedCopySizeLimit: what ``copy`` operations may add in total
JSON_PATCH_MAX_COPY_BYTES = 3 * 1024 * 1024


def json_patch(target: Any, ops: list[Any]) -> Any:
    """Apply an RFC 6902 JSON patch (a list of operations); returns a new value.

    Raises PatchError for a malformed operation, a missing path, an out-of-range index,
    a failed ``test`` (``testing value /x failed``) or ``copy`` operations adding more than
    :data:`JSON_PATCH_MAX_COPY_BYTES` of JSON in total (``Unable to complete the copy, the
    accumulated size increase of copy is N, greater than M``, evanphx/json-patch).
    """
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc = _clone(target)
    copied = 0
    for n, op in enumerate(ops):
        if not isinstance(op, dict):
            raise PatchError(f"operation {n} is not an object")
        kind = op.get("op")
        path = op.get("path")
        if path is None:
            raise PatchError(f"operation {n} ({kind}) is missing 'path'")
        if kind in ("add", "replace", "test") and "value" not in op:
            raise PatchError(f"operation {n} ({kind}) is missing 'value'")
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind == "remove":
            doc, _ = _remove(doc, path)
        elif kind == "replace":
            if not _pointer(path):
                doc = copy.deepcopy(op["value"])
                continue
            _get(doc, path)  # must exist
            doc, _ = _remove(doc, path)
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind in ("move", "copy"):
            frm = op.get("from")
            if frm is None:
                raise PatchError(f"operation {n} ({kind}) is missing 'from'")
            if kind == "move":
                if path != frm and str(path).startswith(str(frm) + "/"):
                    raise PatchError(f"cannot move {frm!r} into its own child {path!r}")
                doc, value = _remove(doc, frm)
            else:
                value = _get(doc, frm)
                copied += len(codec.dumps(value))
                if copied > JSON_PATCH_MAX_COPY_BYTES:
                    raise PatchError(f"Unable to complete the copy, the accumulated size increase of copy is "
                                     f"{copied}, greater than {JSON_PATCH_MAX_COPY_BYTES}")
                value = copy.deepcopy(value)
            doc = _add(doc, path, value)
        elif kind == "test":
            if _get(doc, path) != op["value"]:
                raise PatchError(f"testing value {path} failed")
        else:
            raise PatchError(f"unexpected kind of operation {kind!r} (operation {n})")
    return doc


# --------------------------------------------------------------------------- strategic merge

# The patchStrategy/patchMergeKey tags and the +listType/+listMapKey markers of every list
# field are declared once, per kind and path, in controlplane.api.listfields. A list field
# without a merge key that is not a set is replaced whole (tolerations, args, command...).
# Fields with patchStrategy "retainKeys" are honoured through the $retainKeys directive.


def merge_key(kind: str, path: str) -> str | None:
    """The patch merge key of the list at dotted ``path`` in ``kind``, or None
    (:func:`controlplane.api.listfields.merge_key`)."""
    return listfields.merge_key(kind, path)


def _list_keys(kind: str, path: str, apply: bool) -> tuple[str, ...] | None:
    """The keys that identify the elements of the list at ``path``: the patch merge key for a
    strategic merge, the list-map keys for a server-side apply; None: the list is replaced."""
    if apply:
        return listfields.map_keys(kind, path)
    key = listfields.merge_key(kind, path)
    return (key,) if key is not None else None


def _strip_directives(v: Any) -> Any:
    """A patch value added where the target had nothing: drop directives and nulls."""
    if isinstance(v, dict):
        if v.get(PATCH_DIRECTIVE) == "delete":
            return None
        out = {}
        for k, x in v.items():
            if x is None or k.startswith("$"):
                continue
            tx = type(x)
            if tx is str or tx is bool or tx is int or tx is float:
                out[k] = x  # what the call would return (most values: no call)
                continue
            sx = _strip_directives(x)
            if sx is not None:
                out[k] = sx
        return out
    if isinstance(v, list):
        items = [_strip_directives(x) for x in v
                 if not (isinstance(x, dict) and x.get(PATCH_DIRECTIVE) in ("delete", "replace", "merge")
                         and len(x) == 1)]
        return [x for x in items if x is not None]
    return v


def _reorder(items: list[Any], order: list[Any], key: str | None) -> list[Any]:
    """Apply a ``$setElementOrder`` list: listed elements in the given order, the
    others (server-only elements) after them in their previous order."""
    def ident(x: Any) -> Any:
        if key is not None and isinstance(x, dict):
            return x.get(key)
        return x
    wanted = [ident(o) for o in order]
    pos: dict[Any, int] = {}
    for i, w in enumerate(wanted):
        pos.setdefault(_hashable(w), i)
    listed = [x for x in items if _hashable(ident(x)) in pos]
    rest = [x for x in items if _hashable(ident(x)) not in pos]
    listed.sort(key=lambda x: pos[_hashable(ident(x))])
    return listed + rest


def _hashable(v: Any) -> Any:
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True)
    return v


def _merge_list(orig: list[Any], patch: list[Any], kind: str, path: str, apply: bool = False) -> list[Any]:
    keys = _list_keys(kind, path, apply)
    # A {"$patch": "replace"} element replaces the whole list with the other elements.
    if any(isinstance(x, dict) and x.get(PATCH_DIRECTIVE) == "replace" for x in patch):
        return [_strip_directives(x) for x in patch
                if not (isinstance(x, dict) and x.get(PATCH_DIRECTIVE) == "replace")]
    if listfields.is_set(kind, path):
        out = list(orig)
        for x in patch:
            if isinstance(x, dict):
                raise PatchError(f"{path}: expected a list of primitives, got an object element")
            if x not in out:
                out.append(x)
        return out
    if keys is None or not all(isinstance(x, dict) for x in patch) or not all(isinstance(x, dict) for x in orig):
        return [_strip_directives(x) for x in patch
                if not (isinstance(x, dict) and x.get(PATCH_DIRECTIVE) == "merge" and len(x) == 1)]
    defaults = listfields.key_defaults(kind, path) if apply else {}
    if len(keys) == 1:
        key0 = keys[0]
        default0 = defaults.get(key0)

        def ident(x: dict[str, Any]) -> tuple[Any, ...]:
            return (x.get(key0, default0),)
    else:
        def ident(x: dict[str, Any]) -> tuple[Any, ...]:
            return tuple([x.get(k, defaults.get(k)) for k in keys])

    out = list(orig)  # orig is part of strategic_merge_patch's private copy
    ids = [ident(o) for o in out]  # ident of each element of out, kept in step with it
    for x in patch:
        directive = x.get(PATCH_DIRECTIVE)
        if directive == "merge" and len(x) == 1:
            continue
        for k in keys:
            if k not in x and k not in defaults:
                raise PatchError(f"map: {x} does not contain declared merge key: {k}")
        want = ident(x)
        if directive == "delete":
            kept = [i for i, d in enumerate(ids) if d != want]
            if len(kept) != len(out):
                out, ids = [out[i] for i in kept], [ids[i] for i in kept]
            continue
        if directive not in (None, "merge", "replace"):
            raise PatchError(f"Unknown patch type: {directive} in map: {x}")
        idx = next((i for i, d in enumerate(ids) if d == want), None)
        if idx is None:
            out.append(_strip_directives(x))
            ids.append(ident(out[-1]))
            continue
        if directive == "replace":
            out[idx] = _strip_directives(x)
        else:
            out[idx] = _merge_map(out[idx], x, kind, path, apply)
        ids[idx] = ident(out[idx])
    return out


def _merge_map(orig: dict[str, Any], patch: dict[str, Any], kind: str, path: str, apply: bool = False) -> dict[str, Any]:
    directive = patch.get(PATCH_DIRECTIVE)
    if directive == "replace":
        replaced: dict[str, Any] = _strip_directives({k: v for k, v in patch.items() if k != PATCH_DIRECTIVE})
        return replaced
    if directive == "delete":
        return {}
    if directive not in (None, "merge"):
        raise PatchError(f"Unknown patch type: {directive} in map: {patch}")
    out = dict(orig)  # orig is part of strategic_merge_patch's private copy
    retain = patch.get(RETAIN_KEYS)
    if retain is not None:
        if not isinstance(retain, list):
            raise PatchError(f"{path or '<root>'}: $retainKeys must be a list of field names")
        for k in list(out):
            if k not in retain:
                del out[k]
    orders: dict[str, list[Any]] = {}
    for k, v in patch.items():
        if k.startswith("$"):  # a directive (field names never start so)
            if k in (PATCH_DIRECTIVE, RETAIN_KEYS):
                continue
            if k.startswith(SET_ELEMENT_ORDER):
                if not isinstance(v, list):
                    raise PatchError(f"{k}: must be a list")
                orders[k[len(SET_ELEMENT_ORDER):]] = v
                continue
            if k.startswith(DELETE_FROM_PRIMITIVE_LIST):
                field = k[len(DELETE_FROM_PRIMITIVE_LIST):]
                if not isinstance(v, list):
                    raise PatchError(f"{k}: must be a list")
                if isinstance(out.get(field), list):
                    out[field] = [x for x in out[field] if x not in v]
                continue
            raise PatchError(f"unknown directive {k!r}")
        sub = f"{path}.{k}" if path else k
        if v is None:
            out.pop(k, None)
        elif k not in out or out[k] is None:
            if isinstance(v, list) and (_list_keys(kind, sub, apply) or listfields.is_set(kind, sub)):
                out[k] = _merge_list([], v, kind, sub, apply)
            elif isinstance(v, dict):
                out[k] = _merge_map({}, v, kind, sub, apply)
            else:
                out[k] = _strip_directives(v)
        elif isinstance(v, dict) and isinstance(out[k], dict):
            out[k] = _merge_map(out[k], v, kind, sub, apply)
        elif isinstance(v, list) and isinstance(out[k], list):
            out[k] = _merge_list(out[k], v, kind, sub, apply)
        else:
            out[k] = _strip_directives(v)
    for field, order in orders.items():
        if isinstance(out.get(field), list):
            sub = f"{path}.{field}" if path else field
            out[field] = _reorder(out[field], order, merge_key(kind, sub))
    return out


def strategic_merge_patch(target: Any, patch: Any, kind: str) -> Any:
    """Apply a strategic merge patch to ``target`` (a ``kind`` object); returns a new value.

    Rules (patch.go): maps merge recursively and ``null`` deletes a key; a list with a
    patch merge key (:func:`merge_key`, e.g. containers by ``name``) merges element by
    element, ``{"<key>": ..., "$patch": "delete"}`` removes an element and a
    ``{"$patch": "replace"}`` element replaces the whole list; ``metadata.finalizers``
    merge as a set; other lists replace. ``$patch: replace|delete`` on a map replaces or
    empties it; ``$retainKeys`` drops the keys it does not list; ``$setElementOrder/<f>``
    orders list ``f``; ``$deleteFromPrimitiveList/<f>`` removes values from list ``f``.

    Raises PatchError for a non-object patch, an unknown directive, or a list element
    missing its merge key.
    """
    if not isinstance(patch, dict):
        raise PatchError("strategic merge patch must be a JSON object")
    if not isinstance(target, dict):
        target = {}
    return _merge_map(codec.clone(target), patch, kind, "")


def apply_merge(target: Any, config: Any, kind: str) -> Any:
    """Merge a server-side-apply configuration into ``target`` (a ``kind`` object); returns a new value.

    The rules of :func:`strategic_merge_patch`, except that list elements are identified by
    their server-side-apply keys (``+listMapKey``, :func:`controlplane.api.listfields.map_keys`,
    a missing key standing for its schema default): ``ports`` 5353/TCP and 5353/UDP of one
    container are two elements. Raises PatchError for a non-object configuration or a list
    element missing a key that has no default.
    """
    if not isinstance(config, dict):
        raise PatchError("an applied configuration must be a JSON object")
    if not isinstance(target, dict):
        target = {}
    return _merge_map(codec.clone(target), config, kind, "", True)
