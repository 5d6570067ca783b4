"""The access reviews answered by the configured authorizers.

As ``pkg/registry/authorization/{subjectaccessreview,localsubjectaccessreview,
selfsubjectaccessreview,selfsubjectrulesreview}/rest.go`` with
``pkg/registry/authorization/util/helpers.go`` (``AuthorizationAttributesFrom``,
``ResourceAttributesFrom``, ``NonResourceAttributesFrom``):

- SubjectAccessReview / LocalSubjectAccessReview: the spec's user, groups, uid, extra and
  resource or non-resource attributes, authorized; ``status`` = ``{allowed, denied?, reason?,
  evaluationError?}``;
- SelfSubjectAccessReview: the same for the requesting user;
- SelfSubjectRulesReview: every rule the requesting user holds in ``spec.namespace``
  (the rule resolvers of the modes: AlwaysAllow ``*``, AlwaysDeny nothing, RBAC its bindings,
  Node incomplete for nodes): ``{resourceRules, nonResourceRules, incomplete, evaluationError?}``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, Protocol

from components.apiserver.auth import Attributes, Authorizer, Decision, UserInfo

JSON = dict[str, Any]


class RuleResolver(Protocol):
    """``authorizer.RuleResolver``: (resource rules, non-resource rules, incomplete, error)."""

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[JSON], list[JSON], bool, str]: ...


class AllowAllRules:
    """AlwaysAllow's ``RulesFor``: everything."""

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[JSON], list[JSON], bool, str]:
        return ([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                [{"verbs": ["*"], "nonResourceURLs": ["*"]}], False, "")


class NoRules:
    """AlwaysDeny's ``RulesFor``: nothing."""

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[JSON], list[JSON], bool, str]:
        return [], [], False, ""


def attributes_from_spec(user: UserInfo, spec: JSON) -> Attributes:
    """``ResourceAttributesFrom`` / ``NonResourceAttributesFrom`` for ``user``."""
    ra = spec.get("resourceAttributes")
    if isinstance(ra, dict):
        return Attributes(user, ra.get("verb") or "", True, namespace=ra.get("namespace") or "",
                          api_group=ra.get("group") or "", api_version=ra.get("version") or "",
                          resource=ra.get("resource") or "", subresource=ra.get("subresource") or "",
                          name=ra.get("name") or "")
    nra = spec.get("nonResourceAttributes") or {}
    return Attributes(user, nra.get("verb") or "", False, path=nra.get("path") or "")


def spec_user(spec: JSON) -> UserInfo:
    """The user a SubjectAccessReview asks about."""
    extra = {k: tuple(v or ()) for k, v in (spec.get("extra") or {}).items()}
    return UserInfo(spec.get("user") or "", spec.get("uid") or "", tuple(spec.get("groups") or ()), extra)


class AccessReviewer:
    """Answers the four reviews with ``authorizer`` and the modes' ``resolvers``."""

    def __init__(self, authorizer: Authorizer, resolvers: Sequence[RuleResolver]) -> None:
        self.authorizer = authorizer
        self.resolvers = tuple(resolvers)

    def access(self, obj: JSON, user: UserInfo, self_review: bool) -> JSON:
        """SubjectAccessReview / LocalSubjectAccessReview (``self_review`` False: the spec's
        user) or SelfSubjectAccessReview (the requesting ``user``)."""
        out = copy.deepcopy(obj)
        spec = out.get("spec") or {}
        who = user if self_review else spec_user(spec)
        decision, reason = self.authorizer.authorize(attributes_from_spec(who, spec))
        status: JSON = {"allowed": decision is Decision.ALLOW}
        if decision is Decision.DENY:
            status["denied"] = True
        if reason:
            status["reason"] = reason
        out["status"] = status
        return out

    def rules(self, obj: JSON, user: UserInfo) -> JSON:
        """SelfSubjectRulesReview. Raises ValueError (400 "no namespace on request") without
        ``spec.namespace``."""
        ns = (obj.get("spec") or {}).get("namespace") or ""
        if not ns:
            raise ValueError("no namespace on request")
        res: list[JSON] = []
        nonres: list[JSON] = []
        incomplete = False
        errors: list[str] = []
        for r in self.resolvers:
            rr, nr, inc, err = r.rules_for(user, ns)
            res += rr
            nonres += nr
            incomplete = incomplete or inc
            if err:
                errors.append(err)
        out = copy.deepcopy(obj)
        status: JSON = {"resourceRules": res, "nonResourceRules": nonres, "incomplete": incomplete}
        if errors:
            status["evaluationError"] = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        out["status"] = status
        return out

    def review(self, kind: str, obj: JSON, user: UserInfo) -> JSON:
        """The answer to a review of ``kind``."""
        if kind == "SelfSubjectRulesReview":
            return self.rules(obj, user)
        return self.access(obj, user, kind == "SelfSubjectAccessReview")
