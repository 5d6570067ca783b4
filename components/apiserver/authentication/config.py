"""The authentication configuration of one apiserver (``pkg/kubeapiserver/authenticator/config.go``,
``pkg/kubeapiserver/options/authentication.go``).

:class:`Options` holds the flags; :func:`build` makes the authenticators from them:
``--anonymous-auth`` (default true), ``--token-auth-file``, ``--service-account-key-file``
(repeatable), ``--service-account-signing-key-file``, ``--service-account-issuer``
(repeatable: the first signs, all are accepted; default
``https://kubernetes.default.svc.cluster.local``), ``--api-audiences`` (default: the first
issuer, as kube-apiserver), ``--service-account-max-token-expiration`` (seconds, 0: none) and
``--service-account-extend-token-expiration`` (default true). Without a signing key file a key
pair is generated in memory at start, logged as ``serviceaccount.ephemeral_key``.
"""

from __future__ import annotations

import dataclasses
import logging

from components.apiserver.authentication.filter import Authentication
from components.apiserver.authentication.serviceaccount import (
    DEFAULT_ISSUER,
    Fetcher,
    Getter,
    KeySet,
    ServiceAccountAuthenticator,
    TokenIssuer,
)
from components.apiserver.authentication.tokenfile import TokenFile
from components.apiserver.authentication.tokenrequest import TokenRequests
from components.apiserver.authentication.union import RequestAuthenticator, TokenAuthenticator
from components.apiserver.authentication.x509 import ClientCertificates
from controlplane.log import event

log = logging.getLogger("apiserver.authn")


@dataclasses.dataclass
class Options:
    """The apiserver's authentication flags (module docstring)."""

    anonymous_auth: bool = True
    token_auth_file: str = ""
    service_account_key_files: tuple[str, ...] = ()
    service_account_signing_key_file: str = ""
    service_account_issuers: tuple[str, ...] = (DEFAULT_ISSUER,)
    api_audiences: tuple[str, ...] = ()
    service_account_max_token_expiration: int = 0
    service_account_extend_token_expiration: bool = True

    @property
    def audiences(self) -> tuple[str, ...]:
        """``--api-audiences``, else the first issuer."""
        return self.api_audiences or self.service_account_issuers[:1]


@dataclasses.dataclass
class Authn:
    """What :func:`build` gives the apiserver: the filter step and the TokenRequest issuer."""

    authentication: Authentication
    token_requests: TokenRequests
    keys: KeySet


def build(options: Options, getter: Getter, fetch: Fetcher | None = None) -> Authn:
    """The authenticators of ``options``; ``getter`` reads live objects (watch caches),
    ``fetch`` stored ones (TokenRequest's account and bound object). Raises ValueError /
    OSError for an unreadable token or key file."""
    auds = options.audiences
    tokens: list[TokenAuthenticator] = []
    if options.token_auth_file:
        tokens.append(TokenFile.from_file(options.token_auth_file, auds))
    keys = KeySet.load(options.service_account_signing_key_file, options.service_account_key_files)
    if keys.ephemeral:
        event(log, "serviceaccount.ephemeral_key", note="no --service-account-signing-key-file: service account "
              "tokens are signed with a key generated for this process and stop verifying when it exits")
    tokens.append(ServiceAccountAuthenticator(options.service_account_issuers, keys.verifying, auds, getter,
                                              fetch=fetch))
    authenticator = RequestAuthenticator(tokens, anonymous=options.anonymous_auth, certificates=ClientCertificates(),
                                         api_audiences=auds)
    issuer = TokenIssuer(options.service_account_issuers[0], keys)
    return Authn(Authentication(authenticator),
                 TokenRequests(issuer, getter, auds, options.service_account_max_token_expiration,
                               options.service_account_extend_token_expiration, fetch), keys)
