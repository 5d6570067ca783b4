"""The RBAC authorizer on an index of Roles, ClusterRoles, RoleBindings and ClusterRoleBindings.

As ``plugin/pkg/auth/authorizer/rbac/rbac.go`` (``RBACAuthorizer.Authorize``) over
``pkg/registry/rbac/validation/rule.go`` (``DefaultRuleResolver.VisitRulesFor``): the
ClusterRoleBindings, then the namespace's RoleBindings, whose subjects include the user
(``appliesTo``: a User by name, a Group by one of the user's groups, a ServiceAccount by
``system:serviceaccount:<ns>:<name>``, its namespace defaulting to the binding's), each
rule of the role they reference; the first rule that allows the request decides
(``RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "z"``); otherwise no
opinion, with the resolution errors (a missing role) as the reason.

Unlike Kubernetes' listers, which are scanned per request, the bindings are indexed by
subject (``("User", name)`` / ``("Group", name)``; ServiceAccounts as their user name), so
a decision visits only the bindings that apply to the user; decisions are memoized per
(user, attributes) until the policy changes (:attr:`RBACIndex.generation`). The index is
kept from the watch caches: :meth:`RBACIndex.replace` fills a kind, :meth:`RBACIndex.apply`
applies one watch event (see :class:`CacheFeed`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any

from components.apiserver.auth import Attributes, Decision, UserInfo, memo_key
from components.apiserver.authorization.rules import Rule

JSON = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"
SA_PREFIX = "system:serviceaccount:"
#: the four kinds by their watch-cache names
KINDS = {"roles." + GROUP: "Role", "clusterroles." + GROUP: "ClusterRole",
         "rolebindings." + GROUP: "RoleBinding", "clusterrolebindings." + GROUP: "ClusterRoleBinding"}
#: memoized decisions kept at most (cleared when full)
MEMO_SIZE = 50_000

SubjectKey = tuple[str, str]


def service_account_username(namespace: str, name: str) -> str:
    """``serviceaccount.MakeUsername``: ``system:serviceaccount:<ns>:<name>``."""
    return f"{SA_PREFIX}{namespace}:{name}"


def describe_subject(s: JSON, binding_namespace: str) -> str:
    """``describeSubject``: ``User "x"``, ``Group "x"``, ``ServiceAccount "name/ns"``."""
    kind, name = s.get("kind", ""), s.get("name", "")
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{s.get("namespace") or binding_namespace}"'
    return f'{kind} "{name}"'


def subject_key(s: JSON, binding_namespace: str) -> SubjectKey | None:
    """The index key of a binding subject, or None when it can never apply (a ServiceAccount
    of a ClusterRoleBinding without a namespace, an unknown kind)."""
    kind, name = s.get("kind"), s.get("name") or ""
    if kind == "User":
        return ("User", name)
    if kind == "Group":
        return ("Group", name)
    if kind == "ServiceAccount":
        ns = s.get("namespace") or binding_namespace
        return ("User", service_account_username(ns, name)) if ns else None
    return None


def user_keys(user: UserInfo) -> tuple[SubjectKey, ...]:
    """The subject keys a user matches: its name and each of its groups."""
    return (("User", user.name),) + tuple(("Group", g) for g in user.groups)


@dataclasses.dataclass(frozen=True)
class Binding:
    """One RoleBinding (``namespace`` set) or ClusterRoleBinding."""

    name: str
    namespace: str
    role_kind: str
    role_name: str
    #: (subject key, description) per subject that can apply, in order
    subjects: tuple[tuple[SubjectKey, str], ...]

    @classmethod
    def of(cls, obj: JSON) -> Binding:
        md = obj.get("metadata") or {}
        ns = md.get("namespace") or ""
        ref = obj.get("roleRef") or {}
        subjects = []
        for s in obj.get("subjects") or []:
            key = subject_key(s, ns)
            if key is not None:
                subjects.append((key, describe_subject(s, ns)))
        return cls(md.get("name", ""), ns, ref.get("kind", ""), ref.get("name", ""), tuple(subjects))

    def describe(self, subject: str) -> str:
        """``clusterRoleBindingDescriber`` / ``roleBindingDescriber``."""
        if self.namespace:
            return f'RoleBinding "{self.name}/{self.namespace}" of {self.role_kind} "{self.role_name}" to {subject}'
        return f'ClusterRoleBinding "{self.name}" of {self.role_kind} "{self.role_name}" to {subject}'


def _key(obj: JSON) -> tuple[str, str]:
    md = obj.get("metadata") or {}
    return (md.get("namespace") or "", md.get("name") or "")


class RBACIndex:
    """The four RBAC kinds, indexed for :class:`RBACAuthorizer` (see the module docstring)."""

    def __init__(self) -> None:
        #: (namespace, name) → compiled rules ("" namespace: ClusterRoles)
        self.roles: dict[tuple[str, str], tuple[Rule, ...]] = {}
        self.cluster_roles: dict[str, tuple[Rule, ...]] = {}
        #: the raw rules, for rules reviews and the escalation check
        self.raw_roles: dict[tuple[str, str], list[JSON]] = {}
        self.raw_cluster_roles: dict[str, list[JSON]] = {}
        self.cluster_bindings: dict[str, Binding] = {}
        self.bindings: dict[tuple[str, str], Binding] = {}
        #: subject key → ClusterRoleBindings naming it
        self.by_subject: dict[SubjectKey, dict[str, Binding]] = {}
        #: (namespace, subject key) → RoleBindings naming it
        self.by_ns_subject: dict[tuple[str, SubjectKey], dict[str, Binding]] = {}
        #: bumped on every change (memoized decisions are dropped)
        self.generation = 0

    # ----------------------------------------------------------------- updates
    def apply(self, kind: str, type_: str, obj: JSON, old: JSON | None = None) -> None:
        """One watch event (``ADDED`` / ``MODIFIED`` / ``DELETED``) of ``kind`` (Role,
        ClusterRole, RoleBinding, ClusterRoleBinding)."""
        ns, name = _key(obj)
        self.generation += 1
        if kind in ("Role", "ClusterRole"):
            rules = [r for r in obj.get("rules") or [] if isinstance(r, dict)]
            compiled = tuple(Rule.of(r) for r in rules)
            if kind == "ClusterRole":
                if type_ == "DELETED":
                    self.cluster_roles.pop(name, None)
                    self.raw_cluster_roles.pop(name, None)
                else:
                    self.cluster_roles[name], self.raw_cluster_roles[name] = compiled, rules
            elif type_ == "DELETED":
                self.roles.pop((ns, name), None)
                self.raw_roles.pop((ns, name), None)
            else:
                self.roles[(ns, name)], self.raw_roles[(ns, name)] = compiled, rules
            return
        if kind == "ClusterRoleBinding":
            prev = self.cluster_bindings.pop(name, None)
            if prev is not None:
                for key, _ in prev.subjects:
                    self.by_subject.get(key, {}).pop(name, None)
            if type_ != "DELETED":
                b = self.cluster_bindings[name] = Binding.of(obj)
                for key, _ in b.subjects:
                    self.by_subject.setdefault(key, {})[name] = b
            return
        if kind == "RoleBinding":
            prev = self.bindings.pop((ns, name), None)
            if prev is not None:
                for key, _ in prev.subjects:
                    self.by_ns_subject.get((ns, key), {}).pop(name, None)
            if type_ != "DELETED":
                b = self.bindings[(ns, name)] = Binding.of(obj)
                for key, _ in b.subjects:
                    self.by_ns_subject.setdefault((ns, key), {})[name] = b

    def replace(self, kind: str, objects: Iterable[JSON]) -> None:
        """Every object of ``kind`` at once (a watch cache's (re)list)."""
        if kind == "ClusterRole":
            self.cluster_roles, self.raw_cluster_roles = {}, {}
        elif kind == "Role":
            self.roles, self.raw_roles = {}, {}
        elif kind == "ClusterRoleBinding":
            self.cluster_bindings, self.by_subject = {}, {}
        elif kind == "RoleBinding":
            self.bindings, self.by_ns_subject = {}, {}
        for obj in objects:
            self.apply(kind, "ADDED", obj)
        self.generation += 1

    # ----------------------------------------------------------------- queries
    def role_rules(self, b: Binding) -> tuple[tuple[Rule, ...] | None, list[JSON] | None]:
        """The compiled and raw rules of the role ``b`` references (None, None: not found)."""
        if b.role_kind == "ClusterRole":
            return self.cluster_roles.get(b.role_name), self.raw_cluster_roles.get(b.role_name)
        if b.role_kind == "Role" and b.namespace:
            return self.roles.get((b.namespace, b.role_name)), self.raw_roles.get((b.namespace, b.role_name))
        return None, None

    def applicable(self, user: UserInfo, namespace: str) -> Iterator[tuple[Binding, str]]:
        """(binding, subject description) of every binding that applies to ``user``:
        the ClusterRoleBindings, then the RoleBindings of ``namespace``; each binding once."""
        keys = user_keys(user)
        seen: set[str] = set()
        for key in keys:
            for name, b in self.by_subject.get(key, {}).items():
                if name not in seen:
                    seen.add(name)
                    yield b, next(d for k, d in b.subjects if k in keys)
        if namespace:
            seen.clear()
            for key in keys:
                for name, b in self.by_ns_subject.get((namespace, key), {}).items():
                    if name not in seen:
                        seen.add(name)
                        yield b, next(d for k, d in b.subjects if k in keys)

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[JSON], list[str]]:
        """``RulesFor``: every rule granted to ``user`` in ``namespace`` (cluster-wide ones
        included) and the resolution errors (missing roles)."""
        rules: list[JSON] = []
        errors: list[str] = []
        for b, _ in self.applicable(user, namespace):
            _, raw = self.role_rules(b)
            if raw is None:
                errors.append(not_found(b))
                continue
            rules.extend(raw)
        return rules, errors

    def role_reference_rules(self, kind: str, name: str, namespace: str) -> list[JSON]:
        """``GetRoleReferenceRules``: the rules of the referenced role. Raises LookupError
        (``clusterrole.rbac.authorization.k8s.io "x" not found``) when it does not exist."""
        raw = self.raw_cluster_roles.get(name) if kind == "ClusterRole" else self.raw_roles.get((namespace, name))
        if raw is None:
            raise LookupError(f'{kind.lower()}.{GROUP} "{name}" not found')
        return raw


def not_found(b: Binding) -> str:
    return f'{b.role_kind.lower()}.{GROUP} "{b.role_name}" not found'


def aggregate(errors: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message, or ``[a, b]``."""
    uniq = list(dict.fromkeys(errors))
    return uniq[0] if len(uniq) == 1 else "[" + ", ".join(uniq) + "]"


class RBACAuthorizer:
    """``--authorization-mode=RBAC`` on an :class:`RBACIndex`."""

    def __init__(self, index: RBACIndex | None = None) -> None:
        self.index = index or RBACIndex()
        self._memo: dict[Any, tuple[Decision, str]] = {}
        self._memo_generation = -1
        #: the rules with resourceNames of every role at :attr:`_memo_generation`
        self._named_rules: tuple[Rule, ...] = ()
        #: (verb, group, resource, subresource) → whether some rule with resourceNames matches it
        self._name_matters: dict[tuple[str, str, str, str], bool] = {}

    def authorize(self, a: Attributes) -> tuple[Decision, str]:
        """Allow with the binding that allowed, or no opinion (reason: resolution errors).

        Decisions are memoized per user and attributes; the object's name is part of the key
        only when some rule with ``resourceNames`` (of any role) would match the request but for
        its name: otherwise no rule's verdict depends on the name (``RuleAllows`` checks
        resourceNames last, ``pkg/apis/rbac/v1/evaluation_helpers.go``), so requests on
        different objects (a garbage collector's deletes) share one decision, reason included."""
        idx = self.index
        if idx.generation != self._memo_generation:
            self._memo.clear()
            self._name_matters.clear()
            self._named_rules = tuple(r for rules in (*idx.cluster_roles.values(), *idx.roles.values())
                                      for r in rules if r.names)
            self._memo_generation = idx.generation
        name = a.name
        if name and a.resource_request:
            nk = (a.verb, a.api_group, a.resource, a.subresource)
            matters = self._name_matters.get(nk)
            if matters is None:
                matters = self._name_matters[nk] = any(r.allows_but_name(a) for r in self._named_rules)
            if not matters:
                name = ""
        key = memo_key(a, name)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        out = self._decide(a)
        if len(self._memo) >= MEMO_SIZE:
            self._memo.clear()
        self._memo[key] = out
        return out

    def _decide(self, a: Attributes) -> tuple[Decision, str]:
        errors: list[str] = []
        for b, subject in self.index.applicable(a.user, a.namespace):
            rules, _ = self.index.role_rules(b)
            if rules is None:
                errors.append(not_found(b))
                continue
            for r in rules:
                if r.allows(a):
                    return Decision.ALLOW, "RBAC: allowed by " + b.describe(subject)
        return Decision.NO_OPINION, ("RBAC: " + aggregate(errors)) if errors else ""

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[JSON], list[JSON], bool, str]:
        """``RulesFor`` for a rules review: (resource rules, non-resource rules, incomplete,
        evaluation error) as ``authorization/v1`` ResourceRule / NonResourceRule objects."""
        rules, errors = self.index.rules_for(user, namespace)
        res, nonres = split_rules(rules)
        return res, nonres, bool(errors), aggregate(errors) if errors else ""


def split_rules(rules: Iterable[JSON]) -> tuple[list[JSON], list[JSON]]:
    """PolicyRules as a rules review's ``resourceRules`` and ``nonResourceRules``
    (``pkg/registry/authorization/selfsubjectrulesreview/rest.go``)."""
    res: list[JSON] = []
    nonres: list[JSON] = []
    for r in rules:
        if r.get("resources"):
            rr: JSON = {"verbs": list(r.get("verbs") or []), "apiGroups": list(r.get("apiGroups") or []),
                        "resources": list(r["resources"])}
            if r.get("resourceNames"):
                rr["resourceNames"] = list(r["resourceNames"])
            res.append(rr)
        if r.get("nonResourceURLs"):
            nonres.append({"verbs": list(r.get("verbs") or []), "nonResourceURLs": list(r["nonResourceURLs"])})
    return res, nonres


class CacheFeed:
    """Keeps an :class:`RBACIndex` from the apiserver's watch caches: ``sync(caches)`` fills a
    kind whose cache is new or was relisted (its ``objects`` dict replaced), ``on_event``
    applies each watch event (the server calls it for every cache event)."""

    def __init__(self, index: RBACIndex) -> None:
        self.index = index
        #: the objects dict of each cache when last filled from (a relist replaces it)
        self._seen: dict[str, Any] = {}

    def sync(self, caches: Any) -> None:
        seen = self._seen
        for name, kind in KINDS.items():
            c = caches.get(name)
            if c is not None and seen.get(name) is not c.objects:
                seen[name] = c.objects
                self.index.replace(kind, list(c.objects.values()))

    def on_event(self, cache_name: str, type_: str, obj: JSON, old: JSON | None) -> None:
        kind = KINDS.get(cache_name)
        if kind is not None:
            self.index.apply(kind, type_, obj, old)
