"""The seam between authentication and authorization in the apiserver's filter chain.

kube-apiserver's handler chain (``staging/src/k8s.io/apiserver/pkg/server/config.go``
``DefaultBuildHandlerChain``) runs, from the outside in: request info → authentication
(``endpoints/filters/authentication.go``: the user, or 401) → audit → impersonation
(``filters/impersonation.go``) → priority and fairness → authorization
(``filters/authorization.go``: :class:`Attributes` from the user and the RequestInfo, then the
configured authorizers in order, or 403) → the REST handlers.

This module holds only the shapes both sides share:

- :class:`UserInfo` — ``user.Info`` (``staging/src/k8s.io/apiserver/pkg/authentication/user``):
  name, uid, groups, extra. The authentication filter stores the request's user under
  :data:`USER`; everything after it (authorization, reviews, audit, managedFields) reads it there.
- :class:`Attributes` — ``authorizer.AttributesRecord`` (``pkg/authorization/authorizer``).
- :class:`Authorizer` and :class:`Decision` — ``authorizer.Authorizer`` / ``Decision``
  (DecisionDeny, DecisionAllow, DecisionNoOpinion), and :class:`AlwaysAllow`, kube-apiserver's
  default ``--authorization-mode``.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Protocol

from aiohttp import web

ANONYMOUS = "system:anonymous"
UNAUTHENTICATED = "system:unauthenticated"
AUTHENTICATED = "system:authenticated"
MASTERS = "system:masters"
NODES = "system:nodes"

#: request storage key of the authenticated (or impersonated) :class:`UserInfo`
USER: Any = web.RequestKey("user", object) if hasattr(web, "RequestKey") else "user"
#: request storage key of the authenticated user when the request impersonates another (the
#: audit event's ``user``; :data:`USER` is then the impersonated one)
REQUESTOR: Any = web.RequestKey("requestor", object) if hasattr(web, "RequestKey") else "requestor"
#: request storage key of the authorization filter's ``(decision, reason)``: ``("allow" |
#: "forbid", reason)``, the audit annotations ``authorization.k8s.io/decision`` / ``reason``
DECISION: Any = web.RequestKey("authz_decision", object) if hasattr(web, "RequestKey") else "authz_decision"
#: request storage key of the request's :class:`Attributes` once made (by the audit filter, for
#: the authenticated user), so the authorization filter does not parse the path again when it
#: authorizes the same user (``GetAuthorizerAttributes`` is called by both filters in Kubernetes)
ATTRIBUTES: Any = web.RequestKey("authz_attributes", object) if hasattr(web, "RequestKey") else "authz_attributes"


@dataclasses.dataclass(frozen=True)
class UserInfo:
    """``user.DefaultInfo``: who a request acts as."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The ``{"username", "uid", "groups", "extra"}`` shape of ``authentication.k8s.io/v1``
        ``UserInfo`` (TokenReview / SelfSubjectReview status)."""
        out: dict[str, Any] = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out


ANONYMOUS_USER = UserInfo(ANONYMOUS, groups=(UNAUTHENTICATED,))


@dataclasses.dataclass(frozen=True)
class Attributes:
    """``authorizer.AttributesRecord``: what one request asks to do.

    ``verb`` is the API verb for a resource request (get, list, watch, create, update, patch,
    delete, deletecollection; impersonate, bind, escalate, use …) or the lower-case HTTP method
    for a non-resource request; ``path`` is set for non-resource requests (``/healthz``, ``/api``)."""

    user: UserInfo
    verb: str
    resource_request: bool
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""
    #: the list/watch's parsed ``fieldSelector`` requirements ``(field, operator, value)``
    #: (operator ``=`` / ``!=``), for authorizers that scope by field (the Node authorizer's
    #: ``spec.nodeName=<node>``; ``GetFieldSelector``, Kubernetes 1.31+)
    field_selector: tuple[tuple[str, str, str], ...] = ()


def memo_key(a: Attributes, name: str) -> tuple[Any, ...]:
    """What a policy over ``a`` can read, as a hashable key for memoized decisions (the RBAC
    authorizer's, the audit policy's): user name and groups, verb, namespace, group, resource,
    subresource, ``name`` (the caller passes "" when no rule of its policy names objects), and
    the path of a non-resource request (a resource request's path only repeats the others)."""
    u = a.user
    return (u.name, u.groups, a.verb, a.resource_request, a.namespace, a.api_group, a.resource,
            a.subresource, name, "" if a.resource_request else a.path)


class Decision(enum.Enum):
    DENY = "deny"
    ALLOW = "allow"
    NO_OPINION = "no-opinion"


class Authorizer(Protocol):
    """``authorizer.Authorizer``: ``authorize(attributes) -> (decision, reason)``; the reason is
    a short human text, shown in 403 messages and SubjectAccessReview status."""

    def authorize(self, attributes: Attributes) -> tuple[Decision, str]: ...


class AlwaysAllow:
    """``--authorization-mode=AlwaysAllow`` (``pkg/authorization/authorizerfactory/builtin.go``)."""

    def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
        return Decision.ALLOW, ""


def request_user(request: web.Request) -> UserInfo:
    """The user the authentication filter stored on ``request`` (anonymous before it ran)."""
    user = request.get(USER)
    return user if isinstance(user, UserInfo) else ANONYMOUS_USER
