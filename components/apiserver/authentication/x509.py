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
    the DER bytes from the ssl object (``getpeercert(binary_form=True)``) and ssl's dict form
    (``get_extra_info("peercert")``); ``(None, None)`` on a plain connection or without one."""
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
    peercert = transport.get_extra_info("peercert")
    return der or None, peercert or None


@functools.lru_cache(maxsize=1024)
def user_from_der(der: bytes) -> UserInfo:
    """CN → name, O → groups, credential-id (raises :class:`CertificateError`).

    A pure function of the DER bytes, so it is memoized per certificate (the TLS layer
    verifies the chain per connection; parsing the same certificate on every request of
    a keep-alive connection was a tenth of the apiserver's CPU). Errors are not cached."""
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


class ClientCertificates:
    """The x509 request authenticator: :meth:`authenticate` → user or None."""

    def authenticate(self, request: Any) -> UserInfo | None:
        der, peercert = peer_certificate(request)
        if der is not None:
            return user_from_der(der)
        if peercert is not None:
            return user_from_peercert(peercert)
        return None
