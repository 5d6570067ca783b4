"""Field ownership in ``metadata.managedFields``: every write (Update) and server-side apply.

After ``staging/src/k8s.io/apimachinery/pkg/util/managedfields/internal/`` and
structured-merge-diff, reduced to what ``kubectl`` shows and ``kubectl apply --server-side``
needs:

* A field set is a set of leaf paths: map keys, and list elements by their
  server-side-apply keys (``+listMapKey``, :func:`controlplane.api.listfields.map_keys`,
  keys sorted by name, a missing key standing for its default: containers by name →
  ``k:{"name":"c"}``, container ports → ``k:{"containerPort":53,"protocol":"UDP"}``);
  other lists are atomic leaves. Encoded as ``fieldsV1``
  (``{"f:spec":{"f:replicas":{}}}``; list elements carry ``".": {}``). Never owned:
  ``apiVersion``, ``kind`` and ``metadata`` name, namespace, uid, resourceVersion,
  creationTimestamp, generation, selfLink, managedFields (``internal/stripmeta.go``).
* Update (create, PUT, PATCH other than apply) by manager M — ``?fieldManager=`` (kubectl
  sends ``kubectl-create``, ``kubectl-edit``, ``kubectl-label``...), else the User-Agent up
  to its first "/" (``handlers/create.go`` ``prefixFromUserAgent``: ``kube-scheduler``;
  ``kubectl scale`` sends no fieldManager, so ``kubectl``) — records one entry ``{manager: M, operation:
  Update, apiVersion, time, fieldsType: FieldsV1, fieldsV1[, subresource]}`` per (manager,
  apiVersion, subresource) (``managedfields.go`` BuildManagerIdentifier). A create gives M
  every field of the object; an update walks the old and new objects together (identical
  subtrees skipped at once) and gives M the fields it changed or added; those are taken
  from every other entry, Update and Apply alike, without conflict, and fields the write
  removed leave every set (``merge.Updater.Update``, ``internal/managedfieldsupdater.go``:
  M's time moves only when it took fields). Entries left empty are dropped; entries are
  sorted Apply first, then by time, manager, apiVersion, subresource
  (``sortEncodedManagedFields``). ``status`` counts only for ``/status`` writes of kinds
  with that subresource (the strategies' GetResetFields); a ``/scale`` write owns
  ``spec.replicas`` with ``subresource: scale`` (``managedfields.ScaleHandler``). A write
  to a subresource always starts from the stored entries; a main-resource PUT may set
  them (``[]`` resets them, leaving them out keeps them: ``fieldmanager.go``
  decodeLiveOrNew). Bindings and deletions record nothing (they bypass the field manager).
* An apply by manager M with ``force=false`` conflicts on every path in its
  configuration that another manager's entry (Apply or Update) owns and whose applied
  value differs from the current one → 409 Conflict, ``Apply failed with 1 conflict:
  conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas``
  (``internal/conflict.go`` NewConflictError / printManager; causes of type
  FieldManagerConflict). ``force=true`` takes those fields over.
* The new object is the current one with the configuration merged in (strategic merge),
  minus the fields M applied before and no longer applies (and nobody else owns); M's
  entry becomes ``{manager, operation: Apply, apiVersion, time, fieldsType: FieldsV1,
  fieldsV1}``.

Update tracking works on ``fieldsV1`` trees directly (no path sets): the diff of a write
is itself a pair of small trees (changed, removed), and entries are rebuilt only along
the paths they share with it, so a pod status patch costs a walk of the status only
(~5 µs); a create reuses the tree of an identical ``spec`` (pods of one template). Trees
are shared, never modified in place. Simplifications: ``"."`` marks list elements only
(not maps), lists without list-map keys are atomic, no cap of 10 Update managers
(``capmanagers.go``), fields set by defaulting or admission count as the writer's.
"""

from __future__ import annotations

import json
from typing import Any

from components.apiserver import status as st
from controlplane.api import codec, listfields
from controlplane.api import patch as P

Path = tuple[str, ...]  # each element "f:<field>" or 'k:{"key":value}'


def _walk(kind: str, value: Any, path: Path, dotted: str, out: set[Path]) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _walk(kind, v, path + (f"f:{k}",), f"{dotted}.{k}" if dotted else k, out)
        return
    if isinstance(value, list) and value:
        lk = _list_key(kind, dotted, value)
        if lk is not None:
            for e in value:
                item = path + (_seg(lk, e),)
                out.add(item + (".",))
                for k, v in e.items():
                    _walk(kind, v, item + (f"f:{k}",), f"{dotted}.{k}", out)
            return
    out.add(path)


def field_set(kind: str, config: dict) -> set[Path]:
    """Leaf paths of an applied configuration (apiVersion/kind/name/namespace/status left out)."""
    out: set[Path] = set()
    for k, v in config.items():
        if k in ("apiVersion", "kind", "status"):
            continue
        if k == "metadata":
            md = v if isinstance(v, dict) else {}
            for mk in ("labels", "annotations"):
                if isinstance(md.get(mk), dict):
                    for lk, lv in md[mk].items():
                        out.add(("f:metadata", f"f:{mk}", f"f:{lk}"))
            continue
        _walk(kind, v, (f"f:{k}",), k, out)
    return out


def encode(paths: set[Path]) -> dict:
    """Field set → ``fieldsV1`` tree."""
    tree: dict = {}
    for p in sorted(paths):
        node = tree
        for seg in p:
            node = node.setdefault(seg, {})
    return tree


def decode(tree: Any, prefix: Path = ()) -> set[Path]:
    """``fieldsV1`` tree → field set (leaves and ``"."`` markers)."""
    out: set[Path] = set()
    if not isinstance(tree, dict):
        return out
    for seg, sub in tree.items():
        p = prefix + (seg,)
        if isinstance(sub, dict) and sub:
            out |= decode(sub, p)
        else:
            out.add(p)
    return out


def valid_entries(entries: Any) -> bool:
    """Whether ``entries`` (a managedFields list) can be read: objects with an ``Apply`` or
    ``Update`` operation and ``fieldsV1`` tries whose keys are ``.``, ``f:<name>``,
    ``k:<JSON object>``, ``v:<JSON value>`` or ``i:<index>`` (structured-merge-diff's
    fieldpath serialization). An update sending others keeps the stored ones, as
    ``decodeLiveOrNew`` (``fieldmanager.go``) falls back to the live object's."""
    if not isinstance(entries, list):
        return False
    for e in entries:
        if not isinstance(e, dict) or e.get("operation") not in ("Apply", "Update"):
            return False
        stack = [e.get("fieldsV1") or {}]
        while stack:
            node = stack.pop()
            if not isinstance(node, dict):
                return False
            for seg, sub in node.items():
                if seg[:2] != "f:" and not _valid_segment(seg):
                    return False
                if type(sub) is not dict:
                    stack.append(sub)  # not a dict: refused when popped
                elif sub:
                    stack.append(sub)  # the empty leaves ({}) have nothing to check
    return True


#: :func:`_valid_segment` of the ``k:``/``v:``/``i:`` segments seen (a pure function of the
#: text; the segments of one cluster's objects repeat: ``k:{"type":"Ready"}``), bounded in
#: number (emptied when full) and in length (a client's odd segment never holds much memory)
_VALID_SEGMENTS: dict[str, bool] = {}
_VALID_SEGMENTS_MAX = 4096
_VALID_SEGMENT_LEN = 256


def _valid_segment(seg: str) -> bool:
    if seg == "." or seg.startswith("f:"):
        return True
    ok = _VALID_SEGMENTS.get(seg)
    if ok is not None:
        return ok
    if seg.startswith(("k:", "v:", "i:")):
        try:
            v = json.loads(seg[2:])
        except ValueError:
            ok = False
        else:
            ok = isinstance(v, dict) if seg[0] == "k" else (isinstance(v, int) if seg[0] == "i" else True)
    else:
        ok = False
    if len(seg) <= _VALID_SEGMENT_LEN:
        if len(_VALID_SEGMENTS) >= _VALID_SEGMENTS_MAX:
            _VALID_SEGMENTS.clear()  # one-off segments (pod IPs) filled it: start afresh
        _VALID_SEGMENTS[seg] = ok
    return ok


def pretty(path: Path) -> str:
    """``.spec.template.spec.containers[name="c"].image`` (structured-merge-diff's Path.String)."""
    s = ""
    for seg in path:
        if seg == ".":
            continue
        if seg.startswith("f:"):
            s += "." + seg[2:]
        else:
            try:
                kv = json.loads(seg[2:])
            except ValueError:
                kv = seg
            if isinstance(kv, dict):
                s += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in kv.items()) + "]"
            else:
                s += f"[{seg}]"
    return s


_MISSING = object()


def _match(seg: str, kind: str, dotted: str) -> Any:
    """A predicate on list elements for the ``k:`` segment ``seg`` of the list at ``dotted``."""
    want = json.loads(seg[2:])
    defaults = listfields.key_defaults(kind, dotted)

    def match(e: Any) -> bool:
        return isinstance(e, dict) and all(e.get(k, defaults.get(k)) == v for k, v in want.items())
    return match


def value_at(obj: Any, path: Path, kind: str = "") -> Any:
    """The value at ``path`` in ``obj`` (a ``kind`` object; ``_MISSING`` when absent)."""
    node = obj
    dotted = ""
    for seg in path:
        if seg == ".":
            continue
        if seg.startswith("f:"):
            if not isinstance(node, dict) or seg[2:] not in node:
                return _MISSING
            node = node[seg[2:]]
            dotted = f"{dotted}.{seg[2:]}" if dotted else seg[2:]
        else:
            if not isinstance(node, list):
                return _MISSING
            match = _match(seg, kind, dotted)
            node = next((e for e in node if match(e)), _MISSING)
            if node is _MISSING:
                return _MISSING
    return node


def remove_at(obj: Any, path: Path, kind: str = "") -> None:
    """Delete the field or list element at ``path`` (if present) of ``obj`` (a ``kind`` object)."""
    segs = [s for s in path if s != "."]
    node = obj
    dotted = ""
    for i, seg in enumerate(segs):
        last = i == len(segs) - 1
        if seg.startswith("f:"):
            if not isinstance(node, dict) or seg[2:] not in node:
                return
            if last:
                del node[seg[2:]]
                return
            node = node[seg[2:]]
            dotted = f"{dotted}.{seg[2:]}" if dotted else seg[2:]
        else:
            if not isinstance(node, list):
                return
            match = _match(seg, kind, dotted)
            idx = next((j for j, e in enumerate(node) if match(e)), None)
            if idx is None:
                return
            if last:
                del node[idx]
                return
            node = node[idx]


def manager_label(entry: dict) -> str:
    """How a conflict names a manager (``internal/conflict.go`` printManager). It prints the
    manager identifier (``BuildManagerIdentifier``), which never holds the time: an Update
    owner reads ``"kubectl-scale" with subresource "scale" using apps/v1``, no ``at ...``."""
    s = json.dumps(entry.get("manager", ""))
    if entry.get("subresource"):
        s += f" with subresource {json.dumps(entry['subresource'])}"
    if entry.get("operation") == "Update":
        s += f" using {entry.get('apiVersion', '')}"
    return s


class ApplyConflict(Exception):
    """Conflicts as (manager label, path) pairs."""

    def __init__(self, conflicts: list[tuple[str, Path]]) -> None:
        self.conflicts = conflicts
        super().__init__(self.message())

    def message(self) -> str:
        if len(self.conflicts) == 1:
            m, p = self.conflicts[0]
            return f"Apply failed with 1 conflict: conflict with {m}: {pretty(p)}"
        by: dict[str, list[Path]] = {}
        for m, p in self.conflicts:
            by.setdefault(m, []).append(p)
        lines = []
        for m in sorted(by):
            lines.append(f"conflicts with {m}:")
            lines += [f"- {pretty(p)}" for p in by[m]]
        return f"Apply failed with {len(self.conflicts)} conflicts: " + "\n".join(lines)

    def causes(self) -> list[dict]:
        """One ``FieldManagerConflict`` StatusCause per conflict (``internal/conflict.go``)."""
        return st.error_list(st.cause("FieldManagerConflict", f"conflict with {m}", pretty(p))
                             for m, p in self.conflicts)


def apply(kind: str, current: dict, config: dict, manager: str, api_version: str, now: str,
          force: bool) -> dict:
    """The object after manager ``manager`` applies ``config`` to ``current`` (a private copy
    may be modified). Raises :class:`ApplyConflict` unless ``force``."""
    applied = field_set(kind, config)
    md = current.setdefault("metadata", {})
    entries = [dict(e) for e in md.get("managedFields") or [] if isinstance(e, dict)]
    mine_before: set[Path] = set()
    others: list[tuple[dict, set[Path]]] = []
    for e in entries:
        fs = decode(e.get("fieldsV1"))
        if e.get("manager") == manager and e.get("operation") == "Apply" and not e.get("subresource"):
            mine_before = fs
        else:
            others.append((e, fs))
    conflicts: list[tuple[str, Path]] = []
    for e, fs in others:
        for p in sorted(applied & fs):
            if p[-1] == ".":
                continue
            if value_at(current, p, kind) != value_at(config, p, kind):
                conflicts.append((manager_label(e), p))
                if force:
                    fs.discard(p)
    if conflicts and not force:
        raise ApplyConflict(conflicts)
    new = P.apply_merge(current, config, kind)
    owned_by_others = set().union(*(fs for _, fs in others)) if others else set()
    for p in sorted(mine_before - applied - owned_by_others, key=len, reverse=True):
        remove_at(new, p, kind)
    out_entries = [{"manager": manager, "operation": "Apply", "apiVersion": api_version, "time": now,
                    "fieldsType": "FieldsV1", "fieldsV1": encode(applied)}]
    for e, fs in others:
        if fs:
            e["fieldsV1"] = encode(fs)
            out_entries.append(e)
    out_entries.sort(key=_sort_key)
    new.setdefault("metadata", {})["managedFields"] = out_entries
    return new


# --------------------------------------------------------------------------- Update operations

#: metadata fields nobody owns (``internal/stripmeta.go``)
STRIP_META = frozenset({"name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName",
                        "generation", "managedFields", "resourceVersion"})
_STRIP_TOP = frozenset({"apiVersion", "kind"})
#: ``validation.FieldManagerMaxLength``
FIELD_MANAGER_MAX_LENGTH = 128


def manager_name(field_manager: str | None, user_agent: str | None) -> str:
    """``?fieldManager=`` if given, else the User-Agent up to its first "/", printable
    characters only, at most 128 bytes (``handlers/create.go`` managerOrUserAgent /
    prefixFromUserAgent): ``kubectl-create/v1.32.4 (linux/amd64) ...`` → ``kubectl-create``."""
    if field_manager:
        return field_manager
    prefix = (user_agent or "").split("/", 1)[0]
    if prefix.isprintable() and (len(prefix) <= FIELD_MANAGER_MAX_LENGTH // 4
                                 or len(prefix.encode()) <= FIELD_MANAGER_MAX_LENGTH):
        return prefix  # the usual case: nothing to drop or cut
    out, n = [], 0
    for ch in prefix:
        if not ch.isprintable():
            continue
        size = len(ch.encode())
        if n + size > FIELD_MANAGER_MAX_LENGTH:
            break
        out.append(ch)
        n += size
    return "".join(out)


_SEG_CACHE: dict[tuple[str, Any], str] = {}


def _item_seg(key: str, value: Any) -> str:
    """``k:{"name":"c"}`` for a list element keyed by ``key`` (memoised for str/int values)."""
    tv = type(value)
    if tv is not str and tv is not int:
        return "k:" + json.dumps({key: value}, separators=(",", ":"))
    seg = _SEG_CACHE.get((key, value))
    if seg is None:
        seg = "k:" + json.dumps({key: value}, separators=(",", ":"))
        if len(_SEG_CACHE) < 4096:
            _SEG_CACHE[(key, value)] = seg
    return seg


#: a list's server-side-apply keys and their defaults
ListKey = tuple[tuple[str, ...], dict]
_LIST_KEYS: dict[tuple[str, str], ListKey | None] = {}
_LIST_KEYS_GENERATION = 0


def _apply_keys(kind: str, dotted: str) -> ListKey | None:
    """:func:`controlplane.api.listfields.map_keys` (and the keys' defaults), memoised
    (paths of served kinds: bounded); None for an atomic list."""
    global _LIST_KEYS_GENERATION
    if _LIST_KEYS_GENERATION != listfields.generation:  # a custom resource's list types changed
        _LIST_KEYS.clear()
        _LIST_KEYS_GENERATION = listfields.generation
    try:
        return _LIST_KEYS[(kind, dotted)]
    except KeyError:
        keys = listfields.map_keys(kind, dotted)
        lk = _LIST_KEYS[(kind, dotted)] = (keys, listfields.key_defaults(kind, dotted)) if keys else None
        return lk


def list_keys(kind: str, dotted: str) -> tuple[str, ...] | None:
    """The keys server-side apply identifies the elements of the list at ``dotted`` of
    ``kind`` by (``("containerPort", "protocol")``), None for an atomic list or a set."""
    lk = _apply_keys(kind, dotted)
    return lk[0] if lk is not None else None


def _keyed(value: list, lk: ListKey) -> bool:
    keys, defaults = lk
    if len(keys) == 1 and not defaults:
        k = keys[0]
        for e in value:
            if type(e) is not dict or k not in e:
                return False
        return True
    for e in value:
        if type(e) is not dict:
            return False
        for k in keys:
            if k not in e and k not in defaults:
                return False
    return True


_MULTI_SEG_CACHE: dict[tuple, str] = {}


def _seg(lk: ListKey, e: dict) -> str:
    """The ``k:`` segment of list element ``e`` (keys sorted by name, defaults filled in;
    memoised for str/int key values)."""
    keys, defaults = lk
    if len(keys) == 1:
        k = keys[0]
        return _item_seg(k, e[k] if k in e else defaults[k])
    values = tuple([e[k] if k in e else defaults.get(k) for k in keys])
    try:
        seg = _MULTI_SEG_CACHE.get((keys, values))
    except TypeError:  # an object or list as a key value: not memoised
        seg = None
    if seg is None:
        seg = "k:" + json.dumps(dict(sorted(zip(keys, values))), separators=(",", ":"))
        if len(_MULTI_SEG_CACHE) < 4096 and all(type(v) is str or type(v) is int for v in values):
            _MULTI_SEG_CACHE[(keys, values)] = seg
    return seg


def _list_key(kind: str, dotted: str, value: list) -> ListKey | None:
    """The keys of a list whose elements all carry them (else None: atomic)."""
    lk = _apply_keys(kind, dotted)
    return lk if lk is not None and _keyed(value, lk) else None


def _fields(kind: str, value: dict, dotted: str, out: dict) -> dict:
    """Add the ``fieldsV1`` entries of the fields of the map at ``dotted`` (never "") to ``out``.

    The hot loop of a create (every field of the object): scalars and empty values cost no
    call, only non-empty maps and lists recurse."""
    for k, v in value.items():
        t = type(v)
        if t is dict:
            out["f:" + k] = _fields(kind, v, f"{dotted}.{k}", {}) if v else {}
        elif t is list and v:
            out["f:" + k] = _list_fields(kind, v, f"{dotted}.{k}")
        else:
            out["f:" + k] = {}
    return out


def _list_fields(kind: str, value: list, dotted: str) -> dict:
    """A non-empty list: its elements by merge key (``".": {}`` and their fields), else a leaf."""
    lk = _list_key(kind, dotted, value)
    if lk is None:
        return {}
    out: dict = {}
    keys = lk[0]
    if len(keys) == 1 and not lk[1]:
        k = keys[0]
        for e in value:
            out[_item_seg(k, e[k])] = _fields(kind, e, dotted, {".": {}})
        return out
    for e in value:
        out[_seg(lk, e)] = _fields(kind, e, dotted, {".": {}})
    return out


def _leaves(kind: str, value: Any, dotted: str) -> dict:
    """The ``fieldsV1`` subtree of ``value`` (``{}`` for a leaf), as :func:`field_set` walks it."""
    t = type(value)
    if t is dict:
        return _fields(kind, value, dotted, {})
    if t is list and value:
        return _list_fields(kind, value, dotted)
    return {}


def _owned(kind: str, obj: dict, subresource: str, reset_status: bool) -> list[str]:
    """Top-level fields a write to ``subresource`` may own (``GetResetFields`` of the strategies)."""
    if subresource == "status":
        return ["status"]
    return [k for k in obj if k not in _STRIP_TOP and not (reset_status and k == "status")]


#: ``fieldsV1`` subtrees of created objects' ``spec`` by (kind, JSON text): the pods of one
#: template share their spec, so such a create costs one C-speed encoding instead of a walk.
#: Cached subtrees end up shared between objects: like every tree here they are never
#: modified in place (:func:`_subtract` / :func:`_union` copy).
_CREATED: dict[tuple[str, bytes], dict] = {}
_CREATED_MAX = 256


def created_fields(kind: str, obj: dict, reset_status: bool) -> dict:
    """``fieldsV1`` of a created object: every field but the stripped metadata, and but
    ``status`` when ``reset_status`` (kinds with a status subresource)."""
    tree: dict = {}
    for k in _owned(kind, obj, "", reset_status):
        v = obj[k]
        t = type(v)
        if k == "metadata" and t is dict:
            md = {"f:" + mk: _leaves(kind, mv, "metadata." + mk) for mk, mv in v.items() if mk not in STRIP_META}
            if md:
                tree["f:metadata"] = md
        elif k == "spec" and t is dict and v:
            ck = (kind, codec.dumps(v))
            sub = _CREATED.get(ck)
            if sub is None:
                sub = _leaves(kind, v, k)
                if len(_CREATED) >= _CREATED_MAX:
                    _CREATED.clear()
                _CREATED[ck] = sub
            tree["f:spec"] = sub
        else:
            tree["f:" + k] = _leaves(kind, v, k)
    return tree


def _put(tree: dict | None, seg: str, sub: dict | None) -> dict | None:
    """``tree`` with ``sub`` under ``seg`` (a new dict if ``tree`` is None); unchanged if ``sub`` is None."""
    if sub is None:
        return tree
    if tree is None:
        tree = {}
    tree[seg] = sub
    return tree


def _diff(kind: str, ov: Any, nv: Any, dotted: str, skip: frozenset = frozenset()) -> tuple[dict | None, dict | None]:
    """(changed, removed) ``fieldsV1`` subtrees between two values known to differ; None
    where nothing is, ``{}`` where the value itself (a leaf) is. Maps and keyed lists are
    compared entry by entry (structured-merge-diff ``Compare``: Modified ∪ Added, Removed);
    other values are leaves."""
    to, tn = type(ov), type(nv)
    if to is dict and tn is dict:
        c: dict | None = None
        r: dict | None = None
        for k, v in nv.items():
            if k in skip:
                continue
            o = ov.get(k, _MISSING)
            if o is v:
                continue
            cc: dict | None
            rr: dict | None
            if o is _MISSING:
                cc, rr = _leaves(kind, v, f"{dotted}.{k}"), None
            elif o == v:
                continue
            else:
                cc, rr = _diff(kind, o, v, f"{dotted}.{k}")
            c, r = _put(c, "f:" + k, cc), _put(r, "f:" + k, rr)
        for k, o in ov.items():
            if k not in nv and k not in skip:
                r = _put(r, "f:" + k, _leaves(kind, o, f"{dotted}.{k}"))
        return c, r
    if to is list and tn is list:
        lk = _apply_keys(kind, dotted)
        if lk is None:
            return {}, None  # an atomic list changed: a leaf
        if _keyed(nv, lk) and _keyed(ov, lk):
            old_items = {_seg(lk, e): e for e in ov}
            c = r = None
            seen = set()
            for e in nv:
                seg = _seg(lk, e)
                seen.add(seg)
                o = old_items.get(seg, _MISSING)
                if o is e or o == e:
                    continue
                if o is _MISSING:
                    cc, rr = _fields(kind, e, dotted, {".": {}}), None
                else:
                    cc, rr = _diff(kind, o, e, dotted)
                c, r = _put(c, seg, cc), _put(r, seg, rr)
            for seg, o in old_items.items():
                if seg not in seen:
                    r = _put(r, seg, _fields(kind, o, dotted, {".": {}}))
            return c, r
    # a leaf changed, or a value changed shape: the new value's fields replace the old ones
    changed = _leaves(kind, nv, dotted)
    removed = _leaves(kind, ov, dotted) if (to is dict or to is list) and ov else None
    return changed, (removed or None)


def diff_fields(kind: str, old: dict, new: dict, subresource: str = "",
                reset_status: bool = False) -> tuple[dict | None, dict | None]:
    """(changed, removed) ``fieldsV1`` trees of a write of ``old`` → ``new`` through
    ``subresource`` ("" for the main resource); None where empty."""
    if subresource == "scale":
        o = (old.get("spec") or {}).get("replicas", _MISSING)
        n = (new.get("spec") or {}).get("replicas", _MISSING)
        return ({"f:spec": {"f:replicas": {}}} if o != n and n is not _MISSING else None), None
    c: dict | None = None
    r: dict | None = None
    if subresource == "status":
        keys: Any = ("status",)
    else:
        keys = [k for k in new if k not in _STRIP_TOP and not (reset_status and k == "status")]
        keys += [k for k in old if k not in new and k not in _STRIP_TOP and not (reset_status and k == "status")]
    for k in keys:
        o, n = old.get(k, _MISSING), new.get(k, _MISSING)
        if o is n:
            continue
        if o is _MISSING:
            cc, rr = _leaves(kind, n, k), None
        elif n is _MISSING:
            cc, rr = None, _leaves(kind, o, k)
        elif o == n:
            continue
        elif k == "metadata" and type(o) is dict and type(n) is dict:
            cc, rr = _diff(kind, o, n, k, STRIP_META)
        else:
            cc, rr = _diff(kind, o, n, k)
        if k == "metadata" and (o is _MISSING or n is _MISSING):
            cc = {s: t for s, t in (cc or {}).items() if s[2:] not in STRIP_META} or None
            rr = {s: t for s, t in (rr or {}).items() if s[2:] not in STRIP_META} or None
        c, r = _put(c, "f:" + k, cc), _put(r, "f:" + k, rr)
    return c, r


def _subtract(a: dict, b: dict) -> dict:
    """``a`` without ``b``'s paths (a leaf of ``b`` takes ``a``'s whole subtree there);
    emptied maps are pruned. Returns ``a`` itself when nothing is taken (never mutates)."""
    out: dict | None = None
    for k, bv in b.items():
        av = a.get(k)
        if av is None:
            continue
        if bv:
            if not av:
                continue  # a owns the node itself, b only paths below it
            nv = _subtract(av, bv)
            if nv is av:
                continue
        else:
            nv = None
        if out is None:
            out = dict(a)
        if nv:
            out[k] = nv
        else:
            del out[k]
    return a if out is None else out


def _union(a: dict, b: dict) -> dict:
    """``a`` with ``b``'s paths added. Returns ``a`` itself when nothing is new (never mutates)."""
    out: dict | None = None
    for k, bv in b.items():
        av = a.get(k)
        if av is None:
            nv = bv
        elif bv and av:
            nv = _union(av, bv)
            if nv is av:
                continue
        elif bv:
            nv = bv  # a owned the (then empty) node, now b owns what is below it
        else:
            continue
        if out is None:
            out = dict(a)
        out[k] = nv
    return a if out is None else out


def _sort_key(e: dict) -> tuple:
    return (e.get("operation", ""), e.get("time") or "", e.get("manager", ""), e.get("apiVersion", ""),
            e.get("subresource", ""))


def update_entry(manager: str, api_version: str, now: str, fields: dict, subresource: str = "") -> dict:
    """A ``ManagedFieldsEntry`` of operation Update (keys in the order the apiserver writes them)."""
    e = {"manager": manager, "operation": "Update", "apiVersion": api_version, "time": now,
         "fieldsType": "FieldsV1", "fieldsV1": fields}
    if subresource:
        e["subresource"] = subresource
    return e


def record_create(kind: str, obj: dict, manager: str, api_version: str, now: str, reset_status: bool) -> None:
    """Give ``manager`` every field of the object being created (sets its managedFields)."""
    fields = created_fields(kind, obj, reset_status)
    md = obj.setdefault("metadata", {})
    if fields:
        md["managedFields"] = [update_entry(manager, api_version, now, fields)]
    else:
        md.pop("managedFields", None)


def record_update(kind: str, old: dict, new: dict, manager: str, api_version: str, now: str,
                  subresource: str = "", reset_status: bool = False) -> None:
    """Update ``new["metadata"]["managedFields"]`` (entries as ``new`` carries them) for the
    write ``old`` → ``new`` by ``manager``: it takes the fields it changed or added from
    everyone, removed fields leave every set, empty entries go. Nothing changes when the
    write changes no owned field (so a no-op write stays a no-op)."""
    changed, removed = diff_fields(kind, old, new, subresource, reset_status)
    if changed is None and removed is None:
        return
    md = new["metadata"]
    entries = md.get("managedFields") or []
    out: list = []
    mine: dict | None = None
    touched = False
    for e in entries:
        if not isinstance(e, dict):
            touched = True
            continue
        if (e.get("operation") == "Update" and e.get("manager", "") == manager
                and (e.get("subresource") or "") == subresource and e.get("apiVersion") == api_version):
            mine = e
            continue
        t: dict = e["fieldsV1"] if isinstance(e.get("fieldsV1"), dict) else {}
        t2 = t
        if removed is not None:
            t2 = _subtract(t2, removed)
        if changed is not None:
            t2 = _subtract(t2, changed)
        if t2 is t:
            out.append(e)
        else:
            touched = True
            if t2:
                out.append({**e, "fieldsV1": t2})
    base: dict = mine["fieldsV1"] if mine is not None and isinstance(mine.get("fieldsV1"), dict) else {}
    t = _subtract(base, removed) if removed is not None else base
    if changed is not None:
        out.append(update_entry(manager, api_version, now, _union(t, changed), subresource))
        touched = True
    elif mine is not None:
        if t is not base:
            touched = True
        if t:
            out.append(mine if t is base else {**mine, "fieldsV1": t})
    if not touched:
        return
    if out:
        out.sort(key=_sort_key)
        md["managedFields"] = out
    else:
        md.pop("managedFields", None)
