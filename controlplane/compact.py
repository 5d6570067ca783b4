"""Holding many API objects compactly: structural sharing between versions and siblings.

A cache (the apiserver's watch cache, an informer's store) decodes every version of every object
from JSON afresh, so two versions of a pod that differ in one status field hold two full copies
of its spec, and 10,000 pods of one ReplicaSet hold 10,000 equal copies of the same containers,
labels, tolerations and owner references. :func:`share` makes a freshly decoded object reuse the
equal parts of an older one — the previous version of the same object, or a sibling made from
the same template — so equal sub-trees (and strings) are held once. Kubernetes gets the same effect
in Go from its watch cache keeping the decoded previous object beside the new one and from
client-go informers' transforms (``cache.TransformFunc``) shrinking what is stored; in Python,
where each decoded dict, list and string is its own heap object, sharing is what halves the cost.

Cached objects are read-only by contract (every writer copies first: ``copy.deepcopy`` or a
fresh dict per level it changes), which is what makes sharing safe: a shared sub-tree is never
changed in place.
"""

from __future__ import annotations

from typing import Any

_MISSING: Any = object()


def share(new: Any, old: Any) -> Any:
    """``new`` with every value equal to the value at the same place in ``old`` replaced by
    ``old``'s own object (dict values by key, list items by position, recursively); returns
    ``new`` itself, changed in place (or ``old`` when the two are equal as a whole).

    ``new`` must be private to the caller (just decoded); ``old`` is only read. The result is
    equal to ``new`` as it was: only object identity changes.
    """
    if new is old:
        return new
    tn = type(new)
    if tn is not type(old):
        return new
    if tn is dict:
        if new == old:
            return old
        _share_dict(new, old)
        return new
    if tn is list:
        if new == old:
            return old
        _share_list(new, old)
        return new
    if tn is str and new == old:
        return old
    return new


def _share_dict(new: dict[str, Any], old: dict[str, Any]) -> None:
    for k, v in new.items():
        o = old.get(k, _MISSING)
        if o is _MISSING or o is v:
            continue
        t = type(v)
        if t is not type(o):
            continue
        if t is dict:
            if v == o:
                new[k] = o      # same key: no resize while iterating
            else:
                _share_dict(v, o)
        elif t is list:
            if v == o:
                new[k] = o
            else:
                _share_list(v, o)
        elif t is str and v == o:
            new[k] = o


def _share_list(new: list[Any], old: list[Any]) -> None:
    n = min(len(new), len(old))
    for i in range(n):
        v, o = new[i], old[i]
        if v is o:
            continue
        t = type(v)
        if t is not type(o):
            continue
        if t is dict:
            if v == o:
                new[i] = o
            else:
                _share_dict(v, o)
        elif t is list:
            if v == o:
                new[i] = o
            else:
                _share_list(v, o)
        elif t is str and v == o:
            new[i] = o


def sibling_key(obj: dict[str, Any]) -> tuple[str, str] | None:
    """The key of the objects ``obj`` is likely to share most with: its namespace and its
    controller's uid (pods of one ReplicaSet), or its namespace alone for an object without an
    owner (the Events of one namespace, the Nodes: made by the same writers, so their reasons,
    sources, labels and capacities repeat); None for an object without metadata."""
    md = obj.get("metadata")
    if not isinstance(md, dict):
        return None
    refs = md.get("ownerReferences")
    if isinstance(refs, list) and refs and isinstance(refs[0], dict):
        return (str(md.get("namespace", "")), str(refs[0].get("uid", "")))
    return (str(md.get("namespace", "")), "")


class Sharer:
    """Shares each object a cache stores with what it already holds (:func:`share`): a new
    version with the previous version of the same key, a first version (ADDED) with the last
    object stored under the same :func:`sibling_key` — the previous pod of its ReplicaSet.

    ``siblings`` keeps one object per owner (dropped by :meth:`forget` when that object is
    deleted, so it never keeps a deleted object alive for long).
    """

    __slots__ = ("siblings",)

    def __init__(self) -> None:
        self.siblings: dict[tuple[str, str], dict[str, Any]] = {}

    def store(self, new: dict[str, Any], prev: dict[str, Any] | None) -> dict[str, Any]:
        """``new`` (private to the caller) sharing what it can with ``prev`` or a sibling."""
        sk = sibling_key(new)
        if prev is not None:
            out = share(new, prev)
        else:
            sib = self.siblings.get(sk) if sk is not None else None
            out = share(new, sib) if sib is not None else new
        if sk is not None:
            self.siblings[sk] = out
        return out  # type: ignore[no-any-return]

    def forget(self, obj: dict[str, Any] | None) -> None:
        """``obj`` was deleted: stop keeping it as its owner's sibling."""
        if obj is None:
            return
        sk = sibling_key(obj)
        if sk is not None and self.siblings.get(sk) is obj:
            del self.siblings[sk]

    def clear(self) -> None:
        """Drop every kept sibling: the cache was replaced wholesale (a relist after a 410 Gone),
        so the old objects must not stay alive as templates for the new ones."""
        self.siblings.clear()
