"""Server-side apply: field ownership in ``metadata.managedFields`` and apply conflicts.

After ``staging/src/k8s.io/apimachinery/pkg/util/managedfields/`` and
structured-merge-diff, reduced to what ``kubectl apply --server-side`` needs:

* A field set is the set of leaf paths of an applied configuration: map keys, and list
  elements by their strategic-merge key (:func:`controlplane.api.patch.merge_key`, e.g.
  containers by name → ``k:{"name":"c"}``); other lists are atomic leaves. Encoded as
  ``fieldsV1`` (``{"f:spec":{"f:replicas":{}}}``; list elements carry ``".": {}``).
* An apply by manager M with ``force=false`` conflicts on every path in its
  configuration that another manager's entry owns and whose applied value differs from
  the current one → 409 Conflict, ``Apply failed with 1 conflict: conflict with "other":
  .spec.replicas`` (``internal/conflict.go`` NewConflictError; causes of type
  FieldManagerConflict). ``force=true`` takes those fields over.
* The new object is the current one with the configuration merged in (strategic merge),
  minus the fields M applied before and no longer applies (and nobody else owns); M's
  entry becomes ``{manager, operation: Apply, apiVersion, time, fieldsType: FieldsV1,
  fieldsV1}``.

Only Apply operations are tracked: ordinary creates/updates (operation Update) record
no entries — computing a field set on every write would cost every pod status write.
"""

from __future__ import annotations

import json
from typing import Any

from controlplane.api import patch as P

Path = tuple[str, ...]  # each element "f:<field>" or 'k:{"key":value}'


def _walk(kind: str, value: Any, path: Path, dotted: str, out: set[Path]) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _walk(kind, v, path + (f"f:{k}",), f"{dotted}.{k}" if dotted else k, out)
        return
    if isinstance(value, list) and value:
        key = P.merge_key(kind, dotted)
        if key and all(isinstance(e, dict) and key in e for e in value):
            for e in value:
                item = path + ("k:" + json.dumps({key: e[key]}, separators=(",", ":")),)
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


def pretty(path: Path) -> str:
    """``.spec.template.spec.containers[name="c"].image`` (structured-merge-diff's Path.String)."""
    s = ""
    for seg in path:
        if seg == ".":
            continue
        if seg.startswith("f:"):
            s += "." + seg[2:]
        else:
            kv = json.loads(seg[2:])
            s += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in kv.items()) + "]"
    return s


_MISSING = object()


def value_at(obj: Any, path: Path) -> Any:
    """The value at ``path`` in ``obj`` (``_MISSING`` when absent)."""
    node = obj
    for seg in path:
        if seg == ".":
            continue
        if seg.startswith("f:"):
            if not isinstance(node, dict) or seg[2:] not in node:
                return _MISSING
            node = node[seg[2:]]
        else:
            (k, v), = json.loads(seg[2:]).items()
            if not isinstance(node, list):
                return _MISSING
            node = next((e for e in node if isinstance(e, dict) and e.get(k) == v), _MISSING)
            if node is _MISSING:
                return _MISSING
    return node


def remove_at(obj: Any, path: Path) -> None:
    """Delete the field or list element at ``path`` (if present)."""
    segs = [s for s in path if s != "."]
    node = obj
    for i, seg in enumerate(segs):
        last = i == len(segs) - 1
        if seg.startswith("f:"):
            if not isinstance(node, dict) or seg[2:] not in node:
                return
            if last:
                del node[seg[2:]]
                return
            node = node[seg[2:]]
        else:
            (k, v), = json.loads(seg[2:]).items()
            if not isinstance(node, list):
                return
            idx = next((j for j, e in enumerate(node) if isinstance(e, dict) and e.get(k) == v), None)
            if idx is None:
                return
            if last:
                del node[idx]
                return
            node = node[idx]


def manager_label(entry: dict) -> str:
    """How a conflict names a manager (``internal/conflict.go`` printManager)."""
    s = json.dumps(entry.get("manager", ""))
    if entry.get("subresource"):
        s += f" with subresource {json.dumps(entry['subresource'])}"
    if entry.get("operation") == "Update":
        s += f" using {entry.get('apiVersion', '')}"
        if entry.get("time"):
            s += f" at {entry['time']}"
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
        return [{"reason": "FieldManagerConflict", "message": f"conflict with {m}", "field": pretty(p)}
                for m, p in self.conflicts]


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
            if value_at(current, p) != value_at(config, p):
                conflicts.append((manager_label(e), p))
                if force:
                    fs.discard(p)
    if conflicts and not force:
        raise ApplyConflict(conflicts)
    new = P.strategic_merge_patch(current, config, kind)
    owned_by_others = set().union(*(fs for _, fs in others)) if others else set()
    for p in sorted(mine_before - applied - owned_by_others, key=len, reverse=True):
        remove_at(new, p)
    out_entries = [{"manager": manager, "operation": "Apply", "apiVersion": api_version, "time": now,
                    "fieldsType": "FieldsV1", "fieldsV1": encode(applied)}]
    for e, fs in others:
        if fs:
            e["fieldsV1"] = encode(fs)
            out_entries.append(e)
    new.setdefault("metadata", {})["managedFields"] = out_entries
    return new
