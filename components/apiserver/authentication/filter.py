"""The authentication step of the apiserver's filter chain, and the TokenReview answer.

:class:`Authentication` is what :mod:`components.apiserver.server`'s middleware calls on every
request, before priority and fairness (``DefaultBuildHandlerChain``: authentication → audit →
impersonation → priority and fairness → authorization):

1. ``filters/authentication.go`` ``WithAuthentication``: the
   :class:`~components.apiserver.authentication.union.RequestAuthenticator` gives the user, or
   the request is answered 401 with ``{"kind":"Status","apiVersion":"v1","metadata":{},
   "status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}``
   (``Unauthorized``, ``apierrors.NewUnauthorized``) — an invalid bearer token included, with
   anonymous on. A request a bearer token authenticated has its ``Authorization`` header
   removed from what later stages see.
2. ``filters/impersonation.go``: ``Impersonate-*`` headers switch the user, each impersonation
   authorized (:mod:`.impersonation`: 403 / 500), and the headers are removed.

:meth:`Authentication.token_review` answers a TokenReview as ``pkg/registry/authentication/
tokenreview/storage.go``: the token is authenticated as a bearer token of a request without
other credentials (audiences: the review's, else the API audiences); ``status.authenticated``,
``status.user`` (username, uid, groups, extra), ``status.audiences`` and, when the token
failed, ``status.error`` (``invalid bearer token`` for a token no authenticator knows).
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

from components.apiserver import status as st
from components.apiserver.auth import REQUESTOR, AlwaysAllow, Authorizer, UserInfo
from components.apiserver.authentication import impersonation
from components.apiserver.authentication.union import (
    INVALID_BEARER_TOKEN,
    RequestAuthenticator,
    Unauthenticated,
    with_authenticated_group,
)
from controlplane.log import event

log = logging.getLogger("apiserver.authn")


def unauthorized() -> st.APIError:
    """``apierrors.NewUnauthorized("Unauthorized")``."""
    return st.APIError(401, "Unauthorized", "Unauthorized")


class Authentication:
    """The authentication + impersonation steps (module docstring).

    ``authorizer``: consulted for each impersonation (``auth.Authorizer``; AlwaysAllow until
    an authorization mode is configured; the attribute may be replaced at run time)."""

    def __init__(self, authenticator: RequestAuthenticator, authorizer: Authorizer | None = None) -> None:
        self.authenticator = authenticator
        self.authorizer: Authorizer = authorizer if authorizer is not None else AlwaysAllow()

    async def authenticate(self, request: web.Request) -> tuple[UserInfo, web.Request]:
        """The user ``request`` acts as, and the request later stages see (a clone without the
        consumed ``Authorization`` / ``Impersonate-*`` headers when there were any). Raises
        :class:`~components.apiserver.status.APIError` 401 (not authenticated), 403 (an
        impersonation not allowed) or 500 (impersonation headers without a user)."""
        try:
            user, used_token = await self.authenticator.authenticate(request)
        except Unauthenticated as e:
            event(log, "authn.failed", logging.INFO, path=request.path, error=str(e)[:200])
            raise unauthorized() from None
        headers = request.headers
        impersonating = impersonation.is_impersonating(headers)
        if not used_token and not impersonating:
            return user, request
        if impersonating:
            reqs = impersonation.requests_from_headers(headers, headers.getall)
            if reqs:
                request[REQUESTOR] = user  # the audit event's user (copied into the clone below)
                new = impersonation.impersonate(user, reqs, self.authorizer,
                                                bool(headers.getall(impersonation.GROUP_HEADER, [])))
                event(log, "authn.impersonating", logging.DEBUG, user=user.name, as_user=new.name)
                user = new
        kept: CIMultiDict[str] = CIMultiDict()
        for k, v in headers.items():
            lk = k.lower()
            if (used_token and lk == "authorization") or (impersonating and lk.startswith("impersonate-")):
                continue
            kept.add(k, v)
        return user, request.clone(headers=kept)

    async def token_review(self, obj: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
        """A TokenReview's answer (module docstring). Raises ValueError (400) without a token."""
        spec = obj.get("spec") or {}
        token = spec.get("token") or ""
        if not token:
            raise ValueError("token is required for TokenReview in authentication.k8s.io")
        auds = list(spec.get("audiences") or ()) or list(self.authenticator.api_audiences)
        out = copy.deepcopy(obj)
        status: dict[str, Any] = {}
        got = None
        try:
            got = await self.authenticator.authenticate_token(token, auds or None)
            if got is None:
                status["error"] = INVALID_BEARER_TOKEN
        except Unauthenticated as e:
            status["error"] = str(e)
        if got is not None:
            u, resp_auds = with_authenticated_group(got[0]), got[1]
            if auds and resp_auds and not set(auds) & set(resp_auds):
                raise st.internal("error validating audiences")
            out["status"] = {"authenticated": True, "user": u.as_dict(),
                             **({"audiences": list(resp_auds)} if resp_auds else {})}
            return out
        out["status"] = {"user": {}, **status}
        return out
