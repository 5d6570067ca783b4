"""PolicyRule matching and coverage, as Kubernetes' RBAC evaluates them.

- :func:`rule_allows` — ``plugin/pkg/auth/authorizer/rbac/rbac.go`` ``RuleAllows`` with the
  matchers of ``pkg/apis/rbac/v1/evaluation_helpers.go``: ``*`` verbs and groups; resources
  ``*``, ``<resource>/<subresource>`` and ``*/<subresource>``; resourceNames (none: every
  name); non-resource URLs ``*``, exact, or a ``prefix*``.
- :class:`Rule` — a PolicyRule compiled once (frozensets), what the RBAC index stores.
- :func:`covers` — ``pkg/registry/rbac/validation/policy_compact.go`` / ``policy_comparator.go``
  ``Covers``: whether a set of rules grants everything another grants (every broken-down
  sub-rule covered), with the missing sub-rules; used by the escalation check and the
  bootstrap-policy reconciliation. :func:`compact_string` prints a rule as ``CompactString``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from components.apiserver.auth import Attributes

JSON = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Rule:
    """One compiled ``rbac/v1`` PolicyRule."""

    verbs: frozenset[str]
    groups: frozenset[str] = frozenset()
    resources: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    urls: frozenset[str] = frozenset()
    #: the ``prefix`` of every ``prefix*`` URL
    url_prefixes: tuple[str, ...] = ()

    @classmethod
    def of(cls, rule: JSON) -> Rule:
        """Compile a PolicyRule JSON object (``verbs``, ``apiGroups``, ``resources``,
        ``resourceNames``, ``nonResourceURLs``)."""
        urls = frozenset(rule.get("nonResourceURLs") or ())
        return cls(frozenset(rule.get("verbs") or ()), frozenset(rule.get("apiGroups") or ()),
                   frozenset(rule.get("resources") or ()), frozenset(rule.get("resourceNames") or ()),
                   urls, tuple(u.rstrip("*") for u in urls if u.endswith("*")))

    def allows(self, a: Attributes) -> bool:
        """``RuleAllows(a, rule)``."""
        verbs = self.verbs
        if "*" not in verbs and a.verb not in verbs:
            return False
        if not a.resource_request:
            urls = self.urls
            if "*" in urls or a.path in urls:
                return True
            return any(a.path.startswith(p) for p in self.url_prefixes)
        groups = self.groups
        if "*" not in groups and a.api_group not in groups:
            return False
        res = self.resources
        if "*" not in res:
            sub = a.subresource
            if sub:
                if f"{a.resource}/{sub}" not in res and f"*/{sub}" not in res:
                    return False
            elif a.resource not in res:
                return False
        return not self.names or a.name in self.names

    def allows_but_name(self, a: Attributes) -> bool:
        """Whether the rule matches ``a`` in everything but the object's name (its
        ``resourceNames`` ignored): only then can the name change its verdict."""
        if not self.names:
            return self.allows(a)
        return dataclasses.replace(self, names=frozenset()).allows(a)


def rule_allows(a: Attributes, rule: JSON) -> bool:
    """``RuleAllows`` on a PolicyRule JSON object."""
    return Rule.of(rule).allows(a)


def rules_allow(a: Attributes, rules: Iterable[Rule]) -> bool:
    """``RulesAllow``: any of ``rules`` allows ``a``."""
    return any(r.allows(a) for r in rules)


# --------------------------------------------------------------------------- coverage


def breakdown(rule: JSON) -> list[JSON]:
    """``BreakdownRule``: one sub-rule per (group, resource, verb[, name]) and per (URL, verb)."""
    out: list[JSON] = []
    verbs = rule.get("verbs") or []
    names = rule.get("resourceNames") or []
    for g in rule.get("apiGroups") or []:
        for r in rule.get("resources") or []:
            for v in verbs:
                if names:
                    out += [{"apiGroups": [g], "resources": [r], "verbs": [v], "resourceNames": [n]} for n in names]
                else:
                    out.append({"apiGroups": [g], "resources": [r], "verbs": [v]})
    for u in rule.get("nonResourceURLs") or []:
        out += [{"nonResourceURLs": [u], "verbs": [v]} for v in verbs]
    return out


def _has_all(have: Sequence[str], want: Sequence[str]) -> bool:
    return set(want) <= set(have)


def _resource_covers_all(have: Sequence[str], want: Sequence[str]) -> bool:
    if "*" in have or _has_all(have, want):
        return True
    for path in want:
        if path in have:
            continue
        if "/" not in path:
            return False
        if "*/" + path.split("/", 1)[1] not in have:
            return False
    return True


def _url_covers(owner: str, sub: str) -> bool:
    return owner == sub or (owner.endswith("*") and sub.startswith(owner.rstrip("*")))


def rule_covers(owner: JSON, sub: JSON) -> bool:
    """``ruleCovers``: ``owner`` grants the (broken-down) ``sub``."""
    ov, og = owner.get("verbs") or [], owner.get("apiGroups") or []
    on = owner.get("resourceNames") or []
    sn = sub.get("resourceNames") or []
    verbs = "*" in ov or _has_all(ov, sub.get("verbs") or [])
    groups = "*" in og or _has_all(og, sub.get("apiGroups") or [])
    resources = _resource_covers_all(owner.get("resources") or [], sub.get("resources") or [])
    urls = all(any(_url_covers(o, s) for o in owner.get("nonResourceURLs") or [])
               for s in sub.get("nonResourceURLs") or [])
    names = not on if not sn else (not on or _has_all(on, sn))
    return verbs and groups and resources and names and urls


def covers(owner: Sequence[JSON], wanted: Sequence[JSON]) -> tuple[bool, list[JSON]]:
    """``Covers(ownerRules, servantRules)``: (covered, the sub-rules not covered)."""
    missing = [sub for rule in wanted for sub in breakdown(rule)
               if not any(rule_covers(o, sub) for o in owner)]
    return not missing, missing


def compact(rules: Sequence[JSON]) -> list[JSON]:
    """``CompactRules``: simple resource rules (one group, one resource, at most one name)
    of the same target merged into one with their verbs; others unchanged."""
    out: list[JSON] = []
    simple: dict[tuple[str, str, tuple[str, ...]], JSON] = {}
    for r in rules:
        g, res, names = r.get("apiGroups") or [], r.get("resources") or [], r.get("resourceNames") or []
        if len(g) == 1 and len(res) == 1 and len(names) <= 1 and not r.get("nonResourceURLs"):
            key = (g[0], res[0], tuple(names))
            if key in simple:
                for v in r.get("verbs") or []:
                    if v not in simple[key]["verbs"]:
                        simple[key]["verbs"].append(v)
                continue
            simple[key] = {**r, "verbs": list(r.get("verbs") or [])}
            out.append(simple[key])
        else:
            out.append(r)
    return out


def _go_q(values: Sequence[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    import json
    return "[" + " ".join(json.dumps(v) for v in values) + "]"


def compact_string(rule: JSON) -> str:
    """``CompactString``: ``{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}``."""
    parts = []
    for field, label in (("apiGroups", "APIGroups"), ("resources", "Resources"),
                         ("nonResourceURLs", "NonResourceURLs"), ("resourceNames", "ResourceNames"),
                         ("verbs", "Verbs")):
        if rule.get(field):
            parts.append(f"{label}:{_go_q(rule[field])}")
    return "{" + ", ".join(parts) + "}"


def go_quote_list(values: Sequence[str]) -> str:
    """Go's ``%q`` of a ``[]string`` (``["a" "b"]``), as error messages print groups."""
    return _go_q(values)
