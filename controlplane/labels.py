"""Label selectors and node selectors, as Kubernetes evaluates them (no registry needed).

* Label selector strings (``?labelSelector=``): ``a=b``, ``a==b``, ``a!=b``,
  ``a in (x,y)``, ``a notin (x)``, ``a``, ``!a``, ``a>1``, ``a<1``; commas AND them.
  Source: ``staging/src/k8s.io/apimachinery/pkg/labels/selector.go`` (Lexer, Parser,
  Requirement.Matches).
* ``metav1.LabelSelector`` dicts (``matchLabels`` + ``matchExpressions``):
  ``apimachinery/pkg/apis/meta/v1/helpers.go`` LabelSelectorAsSelector.
* ``v1.NodeSelector`` / ``NodeSelectorTerm`` (node affinity):
  ``staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go``.

This module sits below the resource registry: the per-kind printers and validators
(:mod:`controlplane.api.printers`, :mod:`controlplane.api.validators`) use it, and
:mod:`controlplane.selectors` re-exports it next to the field selectors, which need the
registry (each kind's selectable fields).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# --------------------------------------------------------------------------- label selectors

_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_INTEGER = re.compile(r"^[-+]?[0-9]+$")

# Operators as they appear in metav1/v1 types and selector strings.
EQUALS, DOUBLE_EQUALS, NOT_EQUALS = "=", "==", "!="
IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT = "in", "notin", "exists", "!", "gt", "lt"


def _label_key_error(key: str) -> str | None:
    """Why ``key`` is not a valid label key (qualified name), or None."""
    prefix, _, name = key.rpartition("/")
    if "/" in prefix:
        return f"invalid label key {key!r}: a qualified name must consist of alphanumeric characters"
    if key.count("/") == 1 and not prefix:
        return f"invalid label key {key!r}: prefix part must be non-empty"
    if prefix and (len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        return f"invalid label key {key!r}: prefix part must be a lowercase RFC 1123 subdomain"
    if not name or len(name) > 63 or not _QUALIFIED_NAME.match(name):
        return (f"invalid label key {key!r}: name part must consist of alphanumeric characters, '-', '_' "
                "or '.', and must start and end with an alphanumeric character (at most 63 characters)")
    return None


def _label_value_error(value: str) -> str | None:
    """Why ``value`` is not a valid label value, or None (empty is valid)."""
    if value and (len(value) > 63 or not _QUALIFIED_NAME.match(value)):
        return (f"invalid label value: {value!r}: a valid label must be an empty string or consist of "
                "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                "character (at most 63 characters)")
    return None


@dataclass(frozen=True)
class Requirement:
    """One label requirement: ``key``, operator (``=``, ``!=``, ``in``, ``notin``,
    ``exists``, ``!``, ``gt``, ``lt``) and values. Source: labels/selector.go Requirement."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        """Whether a label set satisfies this requirement (Requirement.Matches)."""
        has = self.key in labels
        op = self.operator
        if op in (EQUALS, DOUBLE_EQUALS, IN):
            return has and labels[self.key] in self.values
        if op in (NOT_EQUALS, NOT_IN):
            return not has or labels[self.key] not in self.values
        if op == EXISTS:
            return has
        if op == DOES_NOT_EXIST:
            return not has
        if op in (GT, LT):
            if not has or not _INTEGER.match(str(labels[self.key])):
                return False
            have, want = int(labels[self.key]), int(self.values[0])
            return have > want if op == GT else have < want
        return False

    def __str__(self) -> str:
        op = self.operator
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        if op in (IN, NOT_IN):
            return f"{self.key} {op} ({','.join(self.values)})"
        sym = {GT: ">", LT: "<"}.get(op, op)
        return f"{self.key}{sym}{self.values[0]}"


@dataclass(frozen=True)
class LabelSelector:
    """A conjunction of :class:`Requirement` s. ``nothing=True`` is the selector that
    matches no object (what a nil metav1.LabelSelector converts to).

    An empty requirement list matches everything (``labels.Everything()``).
    """

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: dict[str, str] | None) -> bool:
        """Whether ``labels`` (None = no labels) satisfies every requirement."""
        if self.nothing:
            return False
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def empty(self) -> bool:
        """True for the match-everything selector."""
        return not self.nothing and not self.requirements

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def make_requirement(key: str, operator: str, values: list[str] | tuple[str, ...] = ()) -> Requirement:
    """Build a validated :class:`Requirement` (labels.NewRequirement).

    Raises ValueError for an invalid key or value, a value count the operator does
    not allow (``in``/``notin`` need at least one, ``=``/``!=`` exactly one,
    ``exists``/``!`` none, ``gt``/``lt`` one integer).
    """
    err = _label_key_error(key)
    if err:
        raise ValueError(err)
    values = tuple(values)
    if operator in (IN, NOT_IN) and not values:
        raise ValueError(f"for 'in', 'notin' operators, values set can't be empty (key {key!r})")
    if operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS) and len(values) != 1:
        raise ValueError(f"exact-match compatibility requires one single value (key {key!r})")
    if operator in (EXISTS, DOES_NOT_EXIST) and values:
        raise ValueError(f"values set must be empty for exists and does not exist (key {key!r})")
    if operator in (GT, LT):
        if len(values) != 1 or not _INTEGER.match(values[0]):
            raise ValueError(f"for 'Gt', 'Lt' operators, exactly one integer value is required (key {key!r})")
    elif operator not in (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, EXISTS, DOES_NOT_EXIST):
        raise ValueError(f"operator {operator!r} is not recognized")
    else:
        for v in values:
            verr = _label_value_error(v)
            if verr:
                raise ValueError(verr)
    if operator == DOUBLE_EQUALS:
        operator = EQUALS
    return Requirement(key, operator, values)


_TOKEN = re.compile(r"\s*(==|!=|=|!|\(|\)|,|>|<|[^\s=!(),<>]+)")


def _tokenize(s: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    while pos < len(s):
        if s[pos:].strip() == "":
            break
        m = _TOKEN.match(s, pos)
        if not m:  # pragma: no cover - the pattern always matches non-blank input
            raise ValueError(f"unable to parse requirement: unexpected character at {pos} in {s!r}")
        tokens.append(m.group(1))
        pos = m.end()
    return tokens


def parse_label_selector(s: str | None) -> LabelSelector:
    """Parse a label selector string (``?labelSelector=``); ``""``/None select everything.

    Grammar (labels/selector.go): requirements separated by ``,``; each is ``key``,
    ``!key``, ``key=v``, ``key==v``, ``key!=v``, ``key in (v1,v2)``, ``key notin (v1)``,
    ``key>N``, ``key<N``. Raises ValueError with a message naming the problem, e.g.
    ``unable to parse requirement: found '(', expected: identifier``.
    """
    if s is None or not s.strip():
        return LabelSelector()
    toks = _tokenize(s)
    reqs: list[Requirement] = []
    i = 0

    def expect_ident(what: str) -> str:
        nonlocal i
        if i >= len(toks):
            raise ValueError(f"unable to parse requirement: found '', expected: {what}")
        t = toks[i]
        if t in ("==", "!=", "=", "!", "(", ")", ",", ">", "<"):
            raise ValueError(f"unable to parse requirement: found '{t}', expected: {what}")
        i += 1
        return t

    while True:
        if i < len(toks) and toks[i] == "!":
            i += 1
            key = expect_ident("identifier after '!'")
            reqs.append(make_requirement(key, DOES_NOT_EXIST))
        else:
            key = expect_ident("identifier")
            if i >= len(toks) or toks[i] == ",":
                reqs.append(make_requirement(key, EXISTS))
            else:
                op = toks[i]
                i += 1
                if op in ("=", "==", "!="):
                    value = ""
                    if i < len(toks) and toks[i] not in (",",):
                        value = expect_ident("identifier (label value)")
                    reqs.append(make_requirement(key, EQUALS if op != "!=" else NOT_EQUALS, [value]))
                elif op in (">", "<"):
                    value = expect_ident("integer value")
                    reqs.append(make_requirement(key, GT if op == ">" else LT, [value]))
                elif op in ("in", "notin"):
                    if i >= len(toks) or toks[i] != "(":
                        found = toks[i] if i < len(toks) else ""
                        raise ValueError(f"unable to parse requirement: found '{found}', expected: '('")
                    i += 1
                    values: list[str] = []
                    while True:
                        if i < len(toks) and toks[i] == ")":
                            # "in ()" or trailing "," → an empty value
                            if not values or toks[i - 1] == ",":
                                values.append("")
                            i += 1
                            break
                        if i < len(toks) and toks[i] == ",":
                            if not values or toks[i - 1] in (",", "("):
                                values.append("")
                            i += 1
                            continue
                        if i >= len(toks):
                            raise ValueError("unable to parse requirement: found '', expected: ')'")
                        values.append(expect_ident("',', ')' or identifier"))
                        if i < len(toks) and toks[i] not in (",", ")"):
                            raise ValueError(
                                f"unable to parse requirement: found '{toks[i]}', expected: ',' or ')'")
                    reqs.append(make_requirement(key, op, sorted(set(values))))
                else:
                    raise ValueError(
                        f"unable to parse requirement: found '{op}', expected: in, notin, =, ==, !=, gt, lt")
        if i >= len(toks):
            break
        if toks[i] != ",":
            raise ValueError(f"unable to parse requirement: found '{toks[i]}', expected: ','")
        i += 1
        if i >= len(toks):
            raise ValueError("unable to parse requirement: found '', expected: identifier after ','")
    return LabelSelector(tuple(sorted(reqs, key=lambda r: r.key)))


def selector_from_dict(sel: dict[str, Any] | None) -> LabelSelector:
    """Convert a metav1.LabelSelector dict to a :class:`LabelSelector`.

    ``None`` → matches nothing; ``{}`` → matches everything (LabelSelectorAsSelector).
    ``matchExpressions`` operators: ``In``, ``NotIn``, ``Exists``, ``DoesNotExist``.
    Raises ValueError for an unknown operator or invalid key/values.
    """
    if sel is None:
        return LabelSelector(nothing=True)
    reqs: list[Requirement] = []
    for k, v in sorted((sel.get("matchLabels") or {}).items()):
        reqs.append(make_requirement(k, EQUALS, [str(v)]))
    ops = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}
    for expr in sel.get("matchExpressions") or []:
        op = expr.get("operator")
        if op not in ops:
            raise ValueError(f"{op!r} is not a valid label selector operator")
        reqs.append(make_requirement(expr.get("key", ""), ops[op], list(expr.get("values") or [])))
    return LabelSelector(tuple(reqs))


def selector_to_string(sel: dict[str, Any] | None) -> str:
    """The string form of a metav1.LabelSelector, as ``FormatLabelSelector`` prints it
    (``app=web,tier in (a,b)``; ``<none>`` for nil or empty, as kubectl's SELECTOR column)."""
    if not sel:
        return "<none>"
    try:
        s = str(selector_from_dict(sel))
    except ValueError:
        return "<error>"
    return s or "<none>"


# --------------------------------------------------------------------------- node selectors

def _node_requirement_matches(expr: dict[str, Any], values_of: dict[str, Any]) -> bool:
    key = expr.get("key", "")
    op = expr.get("operator")
    vals = [str(v) for v in (expr.get("values") or [])]
    has = key in values_of
    if op == "In":
        return has and str(values_of[key]) in vals
    if op == "NotIn":
        return not has or str(values_of[key]) not in vals
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    if op in ("Gt", "Lt"):
        if not has or len(vals) != 1 or not _INTEGER.match(vals[0]) or not _INTEGER.match(str(values_of[key])):
            return False
        have, want = int(values_of[key]), int(vals[0])
        return have > want if op == "Gt" else have < want
    return False


def node_selector_term_matches(term: dict[str, Any], labels: dict[str, Any] | None, fields: dict[str, Any] | None) -> bool:
    """Whether one v1.NodeSelectorTerm matches a node's labels and fields.

    ``matchExpressions`` (In, NotIn, Exists, DoesNotExist, Gt, Lt) are evaluated on
    ``labels``; ``matchFields`` on ``fields`` (only ``metadata.name`` is supported by
    Kubernetes). All requirements are ANDed; a term with no requirements matches nothing
    (nodeaffinity.go: an empty term selects no objects).
    """
    exprs = term.get("matchExpressions") or []
    fexprs = term.get("matchFields") or []
    if not exprs and not fexprs:
        return False
    labels, fields = labels or {}, fields or {}
    return (all(_node_requirement_matches(e, labels) for e in exprs)
            and all(_node_requirement_matches(e, fields) for e in fexprs))


def node_selector_matches(node_selector: dict[str, Any] | None, node: dict[str, Any]) -> bool:
    """Whether a v1.NodeSelector (``nodeSelectorTerms``, ORed) matches a Node object.

    ``None`` matches every node (no constraint); an empty term list matches nothing.
    """
    if node_selector is None:
        return True
    meta = node.get("metadata") or {}
    labels = meta.get("labels") or {}
    fields = {"metadata.name": meta.get("name", "")}
    return any(node_selector_term_matches(t or {}, labels, fields)
               for t in node_selector.get("nodeSelectorTerms") or [])
