"""Client certificates (``staging/src/k8s.io/apiserver/pkg/authentication/request/x509``).

The TLS layer (``--client-ca-file``) has verified the chain; this reads the verified peer
certificate of the connection and maps it as ``CommonNameUserConversion``: the subject's
Common Name is the user, each Organization a group, and the extra
``authentication.kubernetes.io/credential-id`` is ``X509SHA256=<hex SHA-256 of the DER>``.
A certificate whose extended key usage does not allow client authentication is refused
(``x509: certificate specifies an incompatible key usage``), as the verifier's
``KeyUsages: [ClientAuth]``. No certificate: no opinion.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from components.apiserver.auth import UserInfo
from components.apiserver.authentication.serviceaccount import CREDENTIAL_ID_KEY


class CertificateError(Exception):
    """A presented certificate that does not authenticate (Go's x509 error text)."""


def peer_certificate(request: Any) -> tuple[bytes | None, dict[str, Any] | None]:
    """The verified peer certificate of ``request``'s TLS connection: ``(der, peercert)`` —
    the DER bytes from the ssl object (``getpeercert(binary_form=True)``), or else ssl's dict
    form (``get_extra_info("peercert")``, asked only without DER: making it parses the
    certificate on every call); ``(None, None)`` on a plain connection or without one."""
    transport = getattr(request, "transport", None)
    if transport is None:
        return None, None
    der = None
    ssl_obj = transport.get_extra_info("ssl_object")
    if ssl_obj is not None:
        try:
            der = ssl_obj.getpeercert(binary_form=True)
        except (ValueError, AttributeError):
            der = None
    if der:
        return der, None
    peercert = transport.get_extra_info("peercert")
    return None, peercert or None


#: distinct client certificates whose user is remembered (a cluster's components, nodes and admins)
USER_CACHE_SIZE = 4096


@functools.lru_cache(maxsize=USER_CACHE_SIZE)
def user_from_der(der: bytes) -> UserInfo:
    """CN → name, O → groups, credential-id (raises :class:`CertificateError`).

    Memoized on the DER bytes (a pure function of them; a refused certificate is not
    remembered): a client keeps presenting the same certificate on every request of its
    keep-alive connections, and parsing it cost ~1/20 of a small request's CPU. The TLS
    handshake verified it against the client CA already."""
    try:
        cert = x509.load_der_x509_certificate(der)
    except ValueError as e:
        raise CertificateError(f"x509: malformed certificate: {e}") from None
    try:
        eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        if ExtendedKeyUsageOID.CLIENT_AUTH not in eku and ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE not in eku:
            raise CertificateError("x509: certificate specifies an incompatible key usage")
    except x509.ExtensionNotFound:
        pass
    cn = [str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    orgs = tuple(str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
    if not cn or not cn[0]:
        raise CertificateError("x509: certificate has no common name")
    return UserInfo(cn[0], "", orgs, {CREDENTIAL_ID_KEY: ("X509SHA256=" + hashlib.sha256(der).hexdigest(),)})


def user_from_peercert(peercert: dict[str, Any]) -> UserInfo:
    """The same from ssl's ``getpeercert()`` dict (no DER: no credential-id)."""
    cn, orgs = "", []
    for rdn in peercert.get("subject") or ():
        for key, value in rdn:
            if key == "commonName" and not cn:
                cn = str(value)
            elif key == "organizationName":
                orgs.append(str(value))
    if not cn:
        raise CertificateError("x509: certificate has no common name")
    return UserInfo(cn, "", tuple(orgs))


#: certificates whose user is remembered at most (cleared when full)
USERS_CACHE_SIZE = 10_000


class ClientCertificates:
    """The x509 request authenticator: :meth:`authenticate` → user or None. The user of a
    certificate is remembered by its DER bytes (the TLS handshake verified the chain; the
    mapping of a certificate never changes), so it is parsed once, not per request."""

    def __init__(self) -> None:
        self._users: dict[bytes, UserInfo] = {}

    def authenticate(self, request: Any) -> UserInfo | None:
        der, peercert = peer_certificate(request)
        if der is not None:
            user = self._users.get(der)
            if user is None:
                user = user_from_der(der)  # CertificateError is not remembered
                if len(self._users) >= USERS_CACHE_SIZE:
                    self._users.clear()
                self._users[der] = user
            return user
        if peercert is not None:
            return user_from_peercert(peercert)
        return None
