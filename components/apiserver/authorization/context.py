"""The requesting user of the request being served, as a context variable.

Kubernetes carries the user in the request's ``context.Context`` (``request.WithUser`` /
``request.UserFrom``, ``staging/src/k8s.io/apiserver/pkg/endpoints/request/context.go``), so
the storage layers below the handlers (admission: NodeRestriction; the RBAC storage's
escalation check, ``pkg/registry/rbac/*/policybased``) can read it. The authorization filter
sets :data:`CURRENT_REQUEST` for the request's task (asyncio copies it into tasks started from
it); :func:`current_user` resolves the user from it when asked, so a request nobody asks
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


def current_user() -> auth.UserInfo | None:
    """The running request's user, or None outside a request (the apiserver's own writes)."""
    request = CURRENT_REQUEST.get()
    return request_user(request) if request is not None else None


#: users made from impersonation headers, by the headers' values (bounded: cleared when full)
_USERS: dict[tuple[Any, ...], auth.UserInfo] = {}
_USERS_SIZE = 10_000
_EXTRA = "impersonate-extra-"


def user_from_headers(headers: Mapping[str, str], header_values: Any = None) -> auth.UserInfo:
    """The user of a request without an authentication filter: anonymous, or the impersonated
    user of the ``Impersonate-*`` headers (``filters/impersonation.go``), exactly as
    :func:`components.apiserver.reviews.request_user` reads them; one :class:`UserInfo` per
    distinct header values (requests of one client share it)."""
    name = headers.get("Impersonate-User")
    if not name:
        return auth.ANONYMOUS_USER
    groups = tuple(header_values("Impersonate-Group", ())) if header_values is not None else \
        ((headers.get("Impersonate-Group"),) if headers.get("Impersonate-Group") else ())
    extra_keys = tuple(k for k in headers if len(k) > len(_EXTRA) and k.lower().startswith(_EXTRA))
    key = (name, groups, headers.get("Impersonate-Uid"), extra_keys,
           tuple(tuple(header_values(k, ())) if header_values is not None else headers.get(k) for k in extra_keys))
    user = _USERS.get(key)
    if user is None:
        from components.apiserver import reviews
        u = reviews.request_user(headers, header_values)
        user = auth.UserInfo(u["username"], u.get("uid") or "", tuple(u.get("groups") or ()),
                             {k: tuple(v) for k, v in (u.get("extra") or {}).items()})
        if len(_USERS) >= _USERS_SIZE:
            _USERS.clear()
        _USERS[key] = user
    return user


def request_user(request: web.Request) -> auth.UserInfo:
    """The user of ``request``: the one the authentication filter stored under
    :data:`components.apiserver.auth.USER`, else (no authentication filter ran) the
    impersonated or anonymous user of its headers."""
    user = request.get(auth.USER)
    if isinstance(user, auth.UserInfo):
        return user
    return user_from_headers(request.headers, request.headers.getall)
