"""The requesting user of the request being served, as a context variable.

Kubernetes carries the user in the request's ``context.Context`` (``request.WithUser`` /
``request.UserFrom``, ``staging/src/k8s.io/apiserver/pkg/endpoints/request/context.go``), so
the storage layers below the handlers (admission: NodeRestriction; the RBAC storage's
escalation check, ``pkg/registry/rbac/*/policybased``) can read it. The authorization filter
sets :data:`CURRENT_REQUEST` for the request's task (asyncio copies it into tasks started from
it); :func:`current_user` resolves the user from it on first use, so a request nobody asks
about costs no header parsing.
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from components.apiserver import auth

#: the request being served (None outside one)
CURRENT_REQUEST: contextvars.ContextVar[web.Request | None] = contextvars.ContextVar("current_request",
                                                                                    default=None)
#: where :func:`request_user` keeps a request's resolved user
_RESOLVED: Any = web.RequestKey("authz_user", object) if hasattr(web, "RequestKey") else "authz_user"


def current_user() -> auth.UserInfo | None:
    """The running request's user, or None outside a request (the apiserver's own writes)."""
    request = CURRENT_REQUEST.get()
    return request_user(request) if request is not None else None


def user_from_headers(headers: Mapping[str, str], header_values: Any = None) -> auth.UserInfo:
    """The user of a request without an authentication filter: anonymous, or the impersonated
    user of the ``Impersonate-*`` headers (``filters/impersonation.go``; see
    :func:`components.apiserver.reviews.request_user`)."""
    from components.apiserver import reviews
    u = reviews.request_user(headers, header_values)
    return auth.UserInfo(u["username"], u.get("uid") or "", tuple(u.get("groups") or ()),
                         {k: tuple(v) for k, v in (u.get("extra") or {}).items()})


def request_user(request: web.Request) -> auth.UserInfo:
    """The user of ``request``: the one the authentication filter stored under
    :data:`components.apiserver.auth.USER`, else (no authentication filter ran) the
    impersonated or anonymous user of its headers."""
    user = request.get(auth.USER)
    if isinstance(user, auth.UserInfo):
        return user
    resolved = request.get(_RESOLVED)
    if isinstance(resolved, auth.UserInfo):
        return resolved
    resolved = user_from_headers(request.headers, request.headers.getall)
    request[_RESOLVED] = resolved
    return resolved
