"""The apiserver's authentication flags (kube-apiserver's names, ``pkg/kubeapiserver/options/authentication.go``).

:func:`options` decorates the ``controlplane apiserver`` command with them; :func:`from_flags`
turns the parsed values into :class:`~components.apiserver.authentication.config.Options`,
reading the files once so that a bad one is a one-line usage error (exit 2) before start.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from components.apiserver.authentication.config import Options
from components.apiserver.authentication.serviceaccount import DEFAULT_ISSUER, KeySet
from components.apiserver.authentication.tokenfile import TokenFile
from controlplane.service import parse_duration

FLAGS = ("anonymous_auth", "token_auth_file", "service_account_key_file", "service_account_signing_key_file",
         "service_account_issuer", "api_audiences", "service_account_max_token_expiration",
         "service_account_extend_token_expiration")


def options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The authentication flags on a click command (their values arrive as the :data:`FLAGS` keywords)."""
    decorators = [
        click.option("--anonymous-auth", default=True, show_default=True, type=click.BOOL,
                     help="Requests without credentials are system:anonymous (system:unauthenticated); a failed "
                          "credential is 401 either way."),
        click.option("--token-auth-file", default="", help="Static bearer tokens: CSV token,user,uid,\"group1,group2\"."),
        click.option("--service-account-key-file", multiple=True,
                     help="PEM public (or private) keys verifying service-account tokens (repeatable)."),
        click.option("--service-account-signing-key-file", default="",
                     help="PEM private key signing service-account tokens (none: a key pair generated in memory at "
                          "start, valid for this process only)."),
        click.option("--service-account-issuer", multiple=True,
                     help=f"Token issuer (repeatable: the first signs, all are accepted; default {DEFAULT_ISSUER})."),
        click.option("--api-audiences", default="", help="Comma-separated audiences of the API (default: the issuer)."),
        click.option("--service-account-max-token-expiration", default="0",
                     help="Longest TokenRequest expiration (Go duration; 0: no limit)."),
        click.option("--service-account-extend-token-expiration", default=True, show_default=True, type=click.BOOL,
                     help="Pod-bound tokens of 3607 s (the kubelet's) are issued for a year, warned about after 3607 s."),
    ]
    for d in reversed(decorators):
        fn = d(fn)
    return fn


def from_flags(values: dict[str, Any]) -> Options:
    """:class:`Options` from the flag values; raises click.BadParameter for an unreadable file."""
    max_exp = parse_duration(str(values["service_account_max_token_expiration"]),
                             "--service-account-max-token-expiration")
    opts = Options(
        anonymous_auth=bool(values["anonymous_auth"]),
        token_auth_file=values["token_auth_file"] or "",
        service_account_key_files=tuple(values["service_account_key_file"] or ()),
        service_account_signing_key_file=values["service_account_signing_key_file"] or "",
        service_account_issuers=tuple(values["service_account_issuer"] or ()) or (DEFAULT_ISSUER,),
        api_audiences=tuple(a for a in (values["api_audiences"] or "").split(",") if a),
        service_account_max_token_expiration=int(max_exp),
        service_account_extend_token_expiration=bool(values["service_account_extend_token_expiration"]))
    if opts.token_auth_file:
        try:
            TokenFile.from_file(opts.token_auth_file)
        except (OSError, ValueError) as e:
            raise click.BadParameter(str(e), param_hint="--token-auth-file") from None
    if opts.service_account_signing_key_file or opts.service_account_key_files:
        try:
            KeySet.load(opts.service_account_signing_key_file, opts.service_account_key_files)
        except (OSError, ValueError) as e:
            raise click.BadParameter(str(e), param_hint="--service-account-key-file / "
                                                        "--service-account-signing-key-file") from None
    return opts
