"""Label, field and node selectors, as Kubernetes evaluates them.

* Label selector strings, ``metav1.LabelSelector`` dicts and node selectors: in
  :mod:`controlplane.labels` (which needs no registry), re-exported here.
* Field selector strings (``?fieldSelector=``): ``k=v``, ``k==v``, ``k!=v``, comma AND,
  backslash escapes. Source: ``staging/src/k8s.io/apimachinery/pkg/fields/selector.go``.
  The selectable fields per kind (:func:`selectable_fields`, :func:`object_fields`) are
  the registry entries' ``selectable_fields`` (each registry's ``ToSelectableFields`` /
  ``GetAttrs``, e.g. ``pkg/registry/core/pod/strategy.go``, and the field label
  conversion functions in ``pkg/apis/core/v1/conversion.go``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from controlplane.api.registry import FieldFn, KindKey
from controlplane.api.resources import REGISTRY
from controlplane.labels import (
    DOES_NOT_EXIST,
    DOUBLE_EQUALS,
    EQUALS,
    EXISTS,
    GT,
    IN,
    LT,
    NOT_EQUALS,
    NOT_IN,
    LabelSelector,
    Requirement,
    make_requirement,
    node_selector_matches,
    node_selector_term_matches,
    parse_label_selector,
    selector_from_dict,
    selector_to_string,
)

#: the public names (with those re-exported from the modules below)
__all__ = [
    "DOES_NOT_EXIST", "DOUBLE_EQUALS", "EQUALS", "EXISTS", "GT", "IN", "LT", "LabelSelector", "NOT_EQUALS",
    "NOT_IN", "Requirement", "make_requirement", "node_selector_matches", "node_selector_term_matches",
    "parse_label_selector", "selector_from_dict", "selector_to_string", "FieldSelector",
    "parse_field_selector", "selectable_fields", "object_fields",
]

# --------------------------------------------------------------------------- field selectors

@dataclass(frozen=True)
class FieldSelector:
    """A conjunction of ``(field, op, value)`` requirements, ``op`` in ``=``, ``!=``.

    ``requirements`` keeps the parse order. Source: fields/selector.go.
    """

    requirements: tuple[tuple[str, str, str], ...] = ()

    def matches(self, fields: dict[str, str]) -> bool:
        """Whether an object's selectable ``fields`` satisfy every requirement.

        Raises ValueError(``field label not supported: <field>``) when a requirement
        names a field absent from ``fields`` (i.e. not selectable for that kind).
        """
        for f, op, v in self.requirements:
            if f not in fields:
                raise ValueError(f"field label not supported: {f}")
            have = fields[f]
            if (have == v) != (op == "="):
                return False
        return True

    def check(self, kind: str) -> None:
        """Raise ValueError(``field label not supported: <field>``) if a requirement
        names a field that ``kind`` cannot be selected by (see :func:`selectable_fields`)."""
        allowed = selectable_fields(kind)
        for f, _, _ in self.requirements:
            if f not in allowed:
                raise ValueError(f"field label not supported: {f}")

    def value_for(self, field_name: str) -> str | None:
        """The value an ``=`` requirement demands for ``field_name`` (e.g. ``spec.nodeName``
        for a kubelet's pod watch), or None."""
        for f, op, v in self.requirements:
            if f == field_name and op == "=":
                return v
        return None

    def empty(self) -> bool:
        """True when there are no requirements (matches everything)."""
        return not self.requirements

    def __str__(self) -> str:
        return ",".join(f"{f}{op}{_escape(v)}" for f, op, v in self.requirements)


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _split_unescaped(s: str, sep: str) -> list[str]:
    parts, cur, i = [], [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            cur.append(s[i:i + 2])
            i += 2
            continue
        if c == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    return parts


def _unescape(v: str) -> str:
    out, i = [], 0
    while i < len(v):
        c = v[i]
        if c == "\\":
            if i + 1 >= len(v):
                raise ValueError(f"invalid field selector value {v!r}: trailing backslash")
            nxt = v[i + 1]
            if nxt not in "\\,=!":
                raise ValueError(f"invalid field selector value {v!r}: invalid escape sequence \\{nxt}")
            out.append(nxt)
            i += 2
            continue
        if c in ",=":
            raise ValueError(f"invalid field selector value {v!r}: unescaped {c!r}")
        out.append(c)
        i += 1
    return "".join(out)


def parse_field_selector(s: str | None) -> FieldSelector:
    """Parse a field selector string (``?fieldSelector=``); ``""``/None select everything.

    Terms ``k=v``, ``k==v``, ``k!=v`` separated by ``,``; ``\\,``, ``\\=`` and ``\\\\``
    escape inside values. Raises ValueError (``invalid selector: '<term>'; can't understand
    '<term>'``) for a term with no operator or an empty field name.
    """
    if s is None or not s.strip():
        return FieldSelector()
    reqs: list[tuple[str, str, str]] = []
    for term in _split_unescaped(s, ","):
        if not term:
            continue
        op_pos, op = None, None
        i = 0
        while i < len(term):
            if term[i] == "\\":
                i += 2
                continue
            if term.startswith("!=", i):
                op_pos, op = i, "!="
                break
            if term.startswith("==", i):
                op_pos, op = i, "=="
                break
            if term[i] == "=":
                op_pos, op = i, "="
                break
            i += 1
        if op is None or op_pos is None:
            raise ValueError(f"invalid selector: '{s}'; can't understand '{term}'")
        key = term[:op_pos].strip()
        if not key:
            raise ValueError(f"invalid selector: '{s}'; can't understand '{term}'")
        value = _unescape(term[op_pos + len(op):])
        reqs.append((key, "!=" if op == "!=" else "=", value))
    return FieldSelector(tuple(reqs))


def _extractors(kind: KindKey) -> Mapping[str, FieldFn]:
    r = REGISTRY.of_kind(kind)
    return r.selectable_fields if r is not None else {}


def selectable_fields(kind: KindKey) -> tuple[str, ...]:
    """The field labels ``kind`` can be selected by: metadata.name, metadata.namespace and
    those its registry entry declares (``Resource.selectable_fields``; none for a kind
    added at run time or not served)."""
    return ("metadata.name", "metadata.namespace", *_extractors(kind))


def object_fields(kind: KindKey, obj: dict[str, Any]) -> dict[str, str]:
    """The selectable fields of ``obj`` as strings, per kind (GetAttrs/ToSelectableFields).

    All kinds: ``metadata.name``, ``metadata.namespace``; then each field its registry
    entry declares, e.g. Pod spec.nodeName, spec.restartPolicy, spec.schedulerName,
    spec.serviceAccountName, spec.hostNetwork, status.phase, status.podIP,
    status.nominatedNodeName; Event involvedObject.*, reason, reportingComponent, source,
    type; Node spec.unschedulable; Namespace status.phase; ReplicaSet /
    ReplicationController status.replicas; Secret type (:mod:`controlplane.api.builtin`).
    Missing values are ``""``.
    """
    meta = obj.get("metadata") or {}
    out = {"metadata.name": str(meta.get("name") or ""), "metadata.namespace": str(meta.get("namespace") or "")}
    for label, extract in _extractors(kind).items():
        out[label] = extract(obj)
    return out
