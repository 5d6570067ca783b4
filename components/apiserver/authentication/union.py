"""The request authenticator, in kube-apiserver's order (``pkg/kubeapiserver/authenticator/config.go``).

``union.New(x509, bearertoken(tokenunion(tokenfile, serviceaccounts)))`` wrapped in
``group.NewAuthenticatedGroupAdder`` (``system:authenticated`` appended when missing) and, with
``--anonymous-auth`` (the default), ``union.NewFailOnError(…, anonymous)``: a request that
presents no credential is ``system:anonymous`` in ``system:unauthenticated``, but one whose
credential fails (an unknown or invalid bearer token, a refused certificate) is refused — the
filter answers 401 — even with anonymous on. Without anonymous, no credential is a 401 too.

The bearer token (``request/bearertoken``): ``Authorization: Bearer <token>`` (scheme case
insensitive); an empty token or another scheme is no credential; a token no authenticator
knows fails with ``invalid bearer token``. The token authenticators (:meth:`authenticate_token`,
also what a TokenReview asks) are tried in order; the first that knows the token answers; their
errors are joined as ``utilerrors.NewAggregate`` prints them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from components.apiserver.auth import ANONYMOUS_USER, AUTHENTICATED, UserInfo
from components.apiserver.authentication.x509 import CertificateError, ClientCertificates

INVALID_BEARER_TOKEN = "invalid bearer token"


class Unauthenticated(Exception):
    """The request does not authenticate (401 ``Unauthorized``); the text is for the log."""


class TokenAuthenticator(Protocol):
    """``authenticator.Token``: ``(user, audiences)``, None when the token is not its, or an
    exception (its text the reason) when it is but does not authenticate."""

    async def authenticate_token(self, token: str, audiences: Sequence[str] | None = None
                                 ) -> tuple[UserInfo, tuple[str, ...]] | None: ...


def aggregate(errors: Sequence[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message as it is, several as ``[a, b]``."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def with_authenticated_group(user: UserInfo) -> UserInfo:
    """``AuthenticatedGroupAdder``: ``system:authenticated`` appended unless present."""
    if AUTHENTICATED in user.groups:
        return user
    return UserInfo(user.name, user.uid, (*user.groups, AUTHENTICATED), user.extra)


def bearer_token(headers: Mapping[str, str]) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None (no credential)."""
    value = (headers.get("Authorization") or "").strip()
    if not value:
        return None
    parts = value.split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


class RequestAuthenticator:
    """x509, then the bearer token authenticators, then anonymous (module docstring).

    ``certificates``: None when no ``--client-ca-file`` is configured (no x509 step);
    ``tokens``: the token authenticators in order; ``api_audiences``: ``--api-audiences``."""

    def __init__(self, tokens: Sequence[TokenAuthenticator] = (), *, anonymous: bool = True,
                 certificates: ClientCertificates | None = None, api_audiences: Sequence[str] = ()) -> None:
        self.tokens = list(tokens)
        self.anonymous = anonymous
        self.certificates = certificates
        self.api_audiences = tuple(api_audiences)

    async def authenticate_token(self, token: str, audiences: Sequence[str] | None = None
                                 ) -> tuple[UserInfo, tuple[str, ...]] | None:
        """``tokenunion``: the first authenticator's answer; None when none knows the token;
        raises :class:`Unauthenticated` with the aggregated errors when one failed it."""
        errors: list[str] = []
        for a in self.tokens:
            try:
                got = await a.authenticate_token(token, audiences)
            except Exception as e:  # the authenticator's reason, as Go's returned error
                errors.append(str(e))
                continue
            if got is not None:
                return got
        if errors:
            raise Unauthenticated(aggregate(errors))
        return None

    def needs_work(self, request: Any) -> bool:
        """Whether ``request`` presents a credential (a bearer token or a TLS connection):
        without one it is anonymous (or 401) at once, with no await."""
        if self.certificates is not None and getattr(request, "transport", None) is not None \
                and request.transport.get_extra_info("ssl_object") is not None:
            return True
        return "Authorization" in request.headers

    async def authenticate(self, request: Any) -> tuple[UserInfo, bool]:
        """The user of ``request`` (an aiohttp request: ``headers``, ``transport``) and whether
        a bearer token authenticated it (the filter then drops the Authorization header).
        Raises :class:`Unauthenticated`."""
        if not self.needs_work(request):
            return self.no_credentials(), False
        errors: list[str] = []
        if self.certificates is not None:
            try:
                user = self.certificates.authenticate(request)
            except CertificateError as e:
                errors.append(str(e))
                user = None
            if user is not None:
                return self._accepted(with_authenticated_group(user), ()), False
        token = bearer_token(request.headers) if self.tokens else None
        if token is not None:
            try:
                got = await self.authenticate_token(token, self.api_audiences or None)
            except Unauthenticated as e:
                errors.append(str(e))
                got = None
            if got is not None:
                return self._accepted(with_authenticated_group(got[0]), got[1]), True
            if not errors:
                errors.append(INVALID_BEARER_TOKEN)
        if errors:
            raise Unauthenticated(aggregate(errors))
        return self.no_credentials(), False

    def no_credentials(self) -> UserInfo:
        """Anonymous, or :class:`Unauthenticated` with ``--anonymous-auth=false``."""
        if self.anonymous:
            return ANONYMOUS_USER
        raise Unauthenticated("no credentials")

    def _accepted(self, user: UserInfo, audiences: Sequence[str]) -> UserInfo:
        """``audiencesAreAcceptable`` (filters/authentication.go)."""
        if self.api_audiences and audiences and not set(audiences) & set(self.api_audiences):
            raise Unauthenticated(f"unable to match the audience: {list(audiences)} , accepted: "
                                  f"{list(self.api_audiences)}")
        return user
