"""The requesting user of the request being served, as a context variable.

Kubernetes carries the user in the request's ``context.Context`` (``request.WithUser`` /
``request.UserFrom``, ``staging/src/k8s.io/apiserver/pkg/endpoints/request/context.go``), so
the storage layers below the handlers (admission: NodeRestriction; the RBAC storage's
escalation check, ``pkg/registry/rbac/*/policybased``) can read it. The authorization filter
sets :data:`CURRENT_REQUEST` for the request's task (asyncio copies it into tasks started from
it); :func:`current_user` reads the user the authentication filter stored on it.
"""

from __future__ import annotations

import contextvars

from aiohttp import web

from components.apiserver import auth

#: the request being served (None outside one)
CURRENT_REQUEST: contextvars.ContextVar[web.Request | None] = contextvars.ContextVar("current_request",
                                                                                    default=None)


def current_user() -> auth.UserInfo | None:
    """The running request's user, or None outside a request (the apiserver's own writes)."""
    request = CURRENT_REQUEST.get()
    return request_user(request) if request is not None else None


def request_user(request: web.Request) -> auth.UserInfo:
    """The user of ``request``: the one the authentication filter (authentication and
    impersonation, ``components/apiserver/authentication``) stored under
    :data:`components.apiserver.auth.USER` (:func:`components.apiserver.auth.request_user`)."""
    return auth.request_user(request)
