"""The audit policy: ``--audit-policy-file``, an ``audit.k8s.io/v1`` ``Policy``, and its evaluation.

As ``staging/src/k8s.io/apiserver/pkg/audit/policy`` (``reader.go``, ``checker.go``) and
``pkg/apis/audit/validation``:

- :func:`load_policy` / :func:`parse_policy` read the file (YAML or JSON): ``apiVersion``
  ``audit.k8s.io/v1`` and ``kind: Policy``, every rule validated (a level of ``None``,
  ``Metadata``, ``Request``, ``RequestResponse``; non-resource URLs beginning with ``/`` and a
  ``*`` only at the end; no rule on both resources and non-resource URLs; known ``omitStages``;
  ``resourceNames`` only with ``resources``) and at least one rule ("loaded illegal policy with
  0 rules"). Errors raise :class:`PolicyError` with Kubernetes' field-error words.
- :meth:`Policy.evaluate` — ``EvaluatePolicyRule``: the **first** rule that matches the
  request's authorizer attributes gives the level, its ``omitStages`` joined with the policy's,
  and ``omitManagedFields`` (the rule's when set, else the policy's); no rule → level ``None``.
  A rule matches when each of its non-empty lists does: ``users`` (the user name),
  ``userGroups`` (any group), ``verbs``; then, when it names ``namespaces`` or ``resources``,
  only resource requests (``namespaces``: ``""`` for cluster-scoped ones; ``resources``: the
  group equal, no resources = all of it, else ``resource``, ``resource/subresource``, ``*``,
  ``*/subresource`` or ``resource/*``, with ``resourceNames`` limiting the names); else, when it
  names ``nonResourceURLs``, only non-resource requests (``*``, the exact path, or a prefix
  ending in ``*``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from typing import Any

from components.apiserver.auth import Attributes, memo_key
from controlplane import yamlfile

GROUP_VERSION = "audit.k8s.io/v1"
LEVELS = ("None", "Metadata", "Request", "RequestResponse")
STAGES = ("RequestReceived", "ResponseStarted", "ResponseComplete", "Panic")
#: a level's rank: Metadata < Request < RequestResponse (``Level.Less``)
RANK = {lv: i for i, lv in enumerate(LEVELS)}
#: remembered policy decisions at most (:meth:`Policy.evaluate`)
POLICY_MEMO_SIZE = 10_000
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class PolicyError(ValueError):
    """A policy that does not load (one line, Kubernetes' wording)."""


@dataclasses.dataclass(frozen=True)
class GroupResources:
    """One ``resources`` entry of a PolicyRule (audit/v1 ``GroupResources``): the API ``group``
    ("" the core group), ``resources`` (plural, ``pods/log`` or ``*/status`` forms; empty: all)
    and ``resourceNames`` (empty: all)."""
    group: str = ""
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Rule:
    """One ``PolicyRule``."""

    level: str
    users: tuple[str, ...] = ()
    user_groups: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    resources: tuple[GroupResources, ...] = ()
    namespaces: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool | None = None

    def matches(self, a: Attributes) -> bool:
        """``ruleMatches`` (module docstring)."""
        if self.users and a.user.name not in self.users:
            return False
        if self.user_groups and not any(g in self.user_groups for g in a.user.groups):
            return False
        if self.verbs and a.verb not in self.verbs:
            return False
        if self.namespaces or self.resources:
            return self._matches_resource(a)
        if self.non_resource_urls:
            return not a.resource_request and any(_path_matches(a.path, s) for s in self.non_resource_urls)
        return True

    def _matches_resource(self, a: Attributes) -> bool:
        if not a.resource_request:
            return False
        if self.namespaces and a.namespace not in self.namespaces:
            return False
        if not self.resources:
            return True
        combined = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
        for gr in self.resources:
            if gr.group != a.api_group:
                continue
            if not gr.resources:
                return True
            if gr.resource_names and a.name not in gr.resource_names:
                continue
            for res in gr.resources:
                if res == combined or res == "*":
                    return True
                if a.subresource and res.startswith("*/") and a.subresource == res[2:]:
                    return True
                if res.endswith("/*") and a.resource == res[:-2]:
                    return True
        return False


def _path_matches(path: str, spec: str) -> bool:
    return spec == "*" or spec == path or (spec.endswith("*") and path.startswith(spec.rstrip("*")))


@dataclasses.dataclass(frozen=True)
class RequestAuditConfig:
    """What the policy decided for one request: its level, the stages not logged, and whether
    managedFields are dropped from the logged objects."""

    level: str
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool = False


NONE = RequestAuditConfig("None")


@dataclasses.dataclass(frozen=True)
class Policy:
    """A loaded ``Policy`` (:func:`parse_policy`)."""

    rules: tuple[Rule, ...]
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool = False
    #: evaluate's answers by what the rules read of the attributes (cleared when full)
    _memo: dict[tuple[Any, ...], RequestAuditConfig] = dataclasses.field(
        default_factory=dict, compare=False, hash=False, repr=False)

    @functools.cached_property
    def _names_matter(self) -> bool:
        """Whether some rule names objects (``resourceNames``): only then is the name a key."""
        return any(gr.resource_names for r in self.rules for gr in r.resources)

    def evaluate(self, a: Attributes) -> RequestAuditConfig:
        """The request's :class:`RequestAuditConfig`: the first matching rule's (module docstring).
        Memoized on what the rules read (user, groups, verb, namespace, group, resource,
        subresource; the name only when a rule has ``resourceNames``; a non-resource path)."""
        key = memo_key(a, a.name if self._names_matter else "")
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        out = self._evaluate(a)
        if len(self._memo) >= POLICY_MEMO_SIZE:
            self._memo.clear()
        self._memo[key] = out
        return out

    def _evaluate(self, a: Attributes) -> RequestAuditConfig:
        for r in self.rules:
            if r.matches(a):
                omf = self.omit_managed_fields if r.omit_managed_fields is None else r.omit_managed_fields
                return RequestAuditConfig(r.level, r.omit_stages | self.omit_stages, omf)
        return RequestAuditConfig("None", self.omit_stages, self.omit_managed_fields)


def _strings(v: Any, path: str) -> tuple[str, ...]:
    if v is None:
        return ()
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise PolicyError(f"failed decoding: {path}: expected a list of strings")
    return tuple(v)


def _stages(v: Any, path: str, errors: list[str]) -> frozenset[str]:
    stages = _strings(v, path)
    for i, s in enumerate(stages):
        if s not in STAGES:
            errors.append(f'{path}[{i}]: Invalid value: "{s}": allowed stages are {",".join(STAGES)}')
    return frozenset(stages)


def parse_policy(doc: Any) -> Policy:
    """The :class:`Policy` of a decoded document. Raises :class:`PolicyError`."""
    if not isinstance(doc, dict):
        raise PolicyError("failed decoding: the policy is not an object")
    gv, kind = doc.get("apiVersion"), doc.get("kind")
    if gv != GROUP_VERSION or kind != "Policy":
        group, _, version = str(gv or "").rpartition("/")
        raise PolicyError(f"unknown group version field {group}/{version}, Kind={kind or ''} in policy"
                          if gv else "failed decoding: Object 'apiVersion' is missing")
    errors: list[str] = []
    raw_rules = doc.get("rules") or []
    if not isinstance(raw_rules, list):
        raise PolicyError("failed decoding: rules: expected a list")
    rules: list[Rule] = []
    for i, r in enumerate(raw_rules):
        p = f"rules[{i}]"
        if not isinstance(r, dict):
            raise PolicyError(f"failed decoding: {p}: expected an object")
        level = r.get("level") or ""
        if level == "":
            errors.append(f"{p}.level: Required value")
        elif level not in LEVELS:
            errors.append(f'{p}.level: Unsupported value: "{level}": supported values: '
                          + ", ".join(f'"{lv}"' for lv in LEVELS))
        urls = _strings(r.get("nonResourceURLs"), f"{p}.nonResourceURLs")
        for j, u in enumerate(urls):
            if u == "*":
                continue
            if not u.startswith("/"):
                errors.append(f'{p}.nonResourceURLs[{j}]: Invalid value: "{u}": non-resource URL rules must '
                              "begin with a '/' character")
            if u and "*" in u[:-1]:
                errors.append(f'{p}.nonResourceURLs[{j}]: Invalid value: "{u}": non-resource URL wildcards '
                              "'*' must be the final character of the rule")
        groups: list[GroupResources] = []
        for gr in r.get("resources") or []:
            if not isinstance(gr, dict):
                raise PolicyError(f"failed decoding: {p}.resources: expected objects")
            g = gr.get("group") or ""
            if g and (len(g) > 253 or not _DNS1123_SUBDOMAIN.match(g)):
                errors.append(f'{p}.resources.group: Invalid value: "{g}": a lowercase RFC 1123 subdomain must '
                              "consist of lower case alphanumeric characters, '-' or '.', and must start and "
                              "end with an alphanumeric character")
            res = _strings(gr.get("resources"), f"{p}.resources.resources")
            names = _strings(gr.get("resourceNames"), f"{p}.resources.resourceNames")
            if names and not res:
                errors.append(f"{p}.resources.resourceNames: Invalid value: {json.dumps(list(names))}: "
                              "using resourceNames requires at least one resource")
            groups.append(GroupResources(g, res, names))
        namespaces = _strings(r.get("namespaces"), f"{p}.namespaces")
        if urls and (groups or namespaces):
            errors.append(f"{p}.nonResourceURLs: Invalid value: {json.dumps(list(urls))}: rules cannot apply "
                          "to both regular resources and non-resource URLs")
        omf = r.get("omitManagedFields")
        rules.append(Rule(level, _strings(r.get("users"), f"{p}.users"),
                          _strings(r.get("userGroups"), f"{p}.userGroups"), _strings(r.get("verbs"), f"{p}.verbs"),
                          tuple(groups), namespaces, urls, _stages(r.get("omitStages"), f"{p}.omitStages", errors),
                          bool(omf) if omf is not None else None))
    top = _stages(doc.get("omitStages"), "omitStages", errors)
    if errors:
        raise PolicyError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    if not rules:
        raise PolicyError("loaded illegal policy with 0 rules")
    return Policy(tuple(rules), top, bool(doc.get("omitManagedFields")))


def load_policy(path: str) -> Policy:
    """The policy of file ``path`` (``LoadPolicyFromFile``). Raises :class:`PolicyError`
    (``failed to read file path "…"``, a decoding error or the validation's, ``: from file …``)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise PolicyError(f'failed to read file path "{path}": {e.strerror or e}') from None
    try:
        docs = [d for d in yamlfile.load_all(data, path) if d is not None]
    except ValueError as e:
        raise PolicyError(f"failed decoding: {e}: from file {path}") from None
    if len(docs) != 1:
        raise PolicyError(f"failed decoding: expected one Policy document, found {len(docs)}: from file {path}")
    try:
        return parse_policy(docs[0])
    except PolicyError as e:
        raise PolicyError(f"{e}: from file {path}") from None
