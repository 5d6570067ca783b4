"""``--authorization-mode``, the union of authorizers, and the authorization filter.

- :func:`parse_modes` — kube-apiserver's ``--authorization-mode`` (a comma list of
  ``AlwaysAllow``, ``AlwaysDeny``, ``Node``, ``RBAC``; ``pkg/kubeapiserver/authorizer/modes``).
- :class:`Union` — ``staging/src/k8s.io/apiserver/pkg/authorization/union``: the authorizers
  in order, the first Allow or Deny wins; no opinion joins the reasons with newlines.
- :class:`PrivilegedGroups` — ``authorizerfactory.NewPrivilegedGroups(system:masters)``,
  put first by ``pkg/kubeapiserver/authorizer/config.go``: the superuser group is always allowed.
- :class:`AlwaysDeny` — ``authorizerfactory.NewAlwaysDenyAuthorizer`` ("Everything is forbidden.").
- :func:`forbidden` — ``endpoints/handlers/responsewriters/errors.go`` ``Forbidden`` /
  ``forbiddenMessage`` + ``apierrors.NewForbidden``: the 403 Status
  (``pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the
  namespace "default"``; ``forbidden: User "x" cannot get path "/metrics"``).
- :class:`AuthorizationFilter` — ``endpoints/filters/authorization.go`` ``WithAuthorization``
  as an aiohttp middleware: the request kept in :data:`~.context.CURRENT_REQUEST` for the
  layers below (its user: :func:`~.context.current_user`), its attributes
  (:func:`~.attributes.request_attributes`), the decision, 403 unless allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from aiohttp import web

from components.apiserver import status as st
from components.apiserver.auth import ATTRIBUTES, DECISION, MASTERS, AlwaysAllow, Attributes, Authorizer, Decision
from components.apiserver.authorization import context
from components.apiserver.authorization.attributes import request_attributes

MODES = ("AlwaysAllow", "AlwaysDeny", "Node", "RBAC")
_ALLOWED = ("allow", "")
DEFAULT_MODE = "AlwaysAllow"


def parse_modes(value: str) -> list[str]:
    """The modes of a ``--authorization-mode`` value, in order. Raises ValueError as
    kube-apiserver's validation words it (unknown mode, a mode twice, none)."""
    modes = [m.strip() for m in (value or "").split(",") if m.strip()]
    if not modes:
        raise ValueError("at least one authorization-mode must be passed")
    for m in modes:
        if m not in MODES:
            raise ValueError(f'authorization-mode "{m}" is not a valid mode (supported: {", ".join(MODES)})')
    seen: set[str] = set()
    for m in modes:
        if m in seen:
            raise ValueError(f'authorization-mode "{m}" has mode specified more than once')
        seen.add(m)
    return modes


class AlwaysDeny:
    """``--authorization-mode=AlwaysDeny``: no opinion, "Everything is forbidden."."""

    def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
        return Decision.NO_OPINION, "Everything is forbidden."


class PrivilegedGroups:
    """Allow every request of a user in one of ``groups`` (``system:masters``)."""

    def __init__(self, *groups: str) -> None:
        self.groups = frozenset(groups)

    def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
        if self.groups.intersection(attributes.user.groups):
            return Decision.ALLOW, ""
        return Decision.NO_OPINION, ""


class Union:
    """The union of ``authorizers`` (first Allow/Deny wins)."""

    def __init__(self, authorizers: Sequence[Authorizer]) -> None:
        self.authorizers = tuple(authorizers)

    def authorize(self, attributes: Attributes) -> tuple[Decision, str]:
        reasons: list[str] = []
        for a in self.authorizers:
            decision, reason = a.authorize(attributes)
            if decision is not Decision.NO_OPINION:
                return decision, reason
            if reason:
                reasons.append(reason)
        return Decision.NO_OPINION, "\n".join(reasons)


def build(modes: Sequence[str], make: dict[str, Callable[[], Authorizer]]) -> Authorizer:
    """The authorizer of ``modes``: :class:`PrivilegedGroups` (``system:masters``) then one
    authorizer per mode, made by ``make[mode]()`` (``AlwaysAllow`` / ``AlwaysDeny`` built in);
    plain :class:`~components.apiserver.auth.AlwaysAllow` for ``["AlwaysAllow"]``."""
    if list(modes) == ["AlwaysAllow"]:
        return AlwaysAllow()
    builtin: dict[str, Callable[[], Authorizer]] = {"AlwaysAllow": AlwaysAllow, "AlwaysDeny": AlwaysDeny}
    return Union([PrivilegedGroups(MASTERS)] + [{**builtin, **make}[m]() for m in modes])


def forbidden_message(a: Attributes) -> str:
    """``forbiddenMessage``: what the user cannot do (``&``, ``<``, ``>`` escaped as
    ``Forbidden``'s sanitizer does)."""
    user = a.user.name
    if not a.resource_request:
        msg = f'User "{user}" cannot {a.verb} path "{a.path}"'
    else:
        resource = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
        where = f'in the namespace "{a.namespace}"' if a.namespace else "at the cluster scope"
        msg = f'User "{user}" cannot {a.verb} resource "{resource}" in API group "{a.api_group}" {where}'
    return msg.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class ForbiddenError(st.APIError):
    """A 403 whose Status always carries ``details`` (``{}`` for a non-resource request),
    as ``apierrors.NewForbidden`` sets a non-nil StatusDetails."""

    def body(self) -> dict[str, Any]:
        b: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                             "message": self.message, "reason": self.reason, "details": self.details or {},
                             "code": self.code}
        return b


def forbidden(a: Attributes, reason: str) -> st.APIError:
    """The 403 Forbidden Status of a denied request (see the module docstring)."""
    msg = forbidden_message(a)
    if reason:
        msg = f"{msg}: {reason}"
    group, resource, name = (a.api_group, a.resource, a.name) if a.resource_request else ("", "", "")
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    if resource:
        details["kind"] = resource
    if not resource:
        head = "forbidden"
    else:
        q = f"{resource}.{group}" if group else resource
        head = f'{q} "{name}" is forbidden' if name else f"{q} is forbidden"
    return ForbiddenError(403, "Forbidden", f"{head}: {msg}", details)


def attributes_decision(authorizer: Authorizer, request: web.Request) -> tuple[Decision, str, Attributes]:
    """The request's attributes (its user: :func:`~.context.request_user`; those the audit
    filter stored under :data:`~components.apiserver.auth.ATTRIBUTES` when made for that user)
    and ``authorizer``'s decision on them."""
    user = context.request_user(request)
    attrs = request.get(ATTRIBUTES)
    if attrs is None or attrs.user is not user:
        attrs = request_attributes(user, request.method, request.path, request.query)
    decision, reason = authorizer.authorize(attrs)
    return decision, reason, attrs


class AuthorizationFilter:
    """The authorization filter (``WithAuthorization``) as an aiohttp middleware: ``decide``
    (``request -> (decision, reason, attributes)``, by default :func:`attributes_decision`
    with ``authorizer``) decides every request but when ``authorizer`` is a plain AlwaysAllow."""

    def __init__(self, authorizer: Authorizer,
                 decide: Callable[[web.Request], tuple[Decision, str, Attributes]] | None = None) -> None:
        self.authorizer = authorizer
        self.decide = decide or (lambda request: attributes_decision(authorizer, request))
        self.always_allow = isinstance(authorizer, AlwaysAllow)

    @web.middleware
    async def middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        token = context.CURRENT_REQUEST.set(request)
        try:
            if not self.always_allow:
                decision, reason, attrs = self.decide(request)
                # the audit annotations (filters/authorization.go: decisionAllow / decisionForbid)
                request[DECISION] = ("allow" if decision is Decision.ALLOW else "forbid", reason)
                if decision is not Decision.ALLOW:
                    raise forbidden(attrs, reason)
            else:
                request[DECISION] = _ALLOWED
            resp: web.StreamResponse = await handler(request)
            return resp
        finally:
            context.CURRENT_REQUEST.reset(token)
