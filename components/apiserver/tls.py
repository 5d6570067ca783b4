"""The apiserver's TLS: its serving certificate, the client-certificate request, and where the
authentication filter finds the verified peer certificate.

kube-apiserver's ``SecureServingOptions`` (``staging/src/k8s.io/apiserver/pkg/server/options/serving.go``):
``--tls-cert-file`` / ``--tls-private-key-file`` name the serving certificate (its chain may follow
it in the same file); without them, ``MaybeDefaultWithSelfSignedCerts`` creates a self-signed CA and
a serving certificate in ``--cert-dir`` (``apiserver.crt`` / ``apiserver.key``) once and reuses
them. ``--client-ca-file`` makes the server *request* a client certificate
(``secure_serving.go``: ``tls.RequestClientCert``) without requiring one: requests without a
certificate go on to the other authenticators (tokens, anonymous).

One difference from Go: Go's server accepts any certificate and lets the x509 authenticator verify
it (a bad one is a 401); Python's ``ssl`` verifies a presented certificate during the handshake
(``CERT_OPTIONAL``), so a certificate the client CA did not sign ends the handshake instead. Every
certificate the application sees is therefore already verified against ``--client-ca-file``.

Reading it in a handler or middleware (the x509 authenticator,
``staging/src/k8s.io/apiserver/pkg/authentication/request/x509/x509.go`` reads
``req.TLS.PeerCertificates``): :func:`peer_certificate` returns the parsed leaf certificate, or None
on a plain-HTTP connection or when the client sent none. It is
``request.transport.get_extra_info("ssl_object").getpeercert(binary_form=True)`` (DER) parsed with
``cryptography``; ``get_extra_info("peercert")`` is the same certificate as Python's dict.
"""

from __future__ import annotations

import fcntl
import ipaddress
import os
import socket
import ssl
import tempfile
from typing import Any

from cryptography import x509

from controlplane import pki

#: the default ``--cert-dir`` (kube-apiserver's is ``/var/run/kubernetes``): one per user
DEFAULT_CERT_DIR = os.path.join(tempfile.gettempdir(), f"controlplane-apiserver-certs-{os.getuid()}")


def self_signed(cert_dir: str, bind_address: str, service_ip: str = pki.DEFAULT_SERVICE_IP) -> tuple[str, str]:
    """``MaybeDefaultWithSelfSignedCerts``: ``<cert-dir>/apiserver.crt`` / ``apiserver.key``, a
    serving certificate for the bind address, the loopback names, the host name and the
    ``kubernetes`` Service's names, signed by a CA of its own (``<cert-dir>/apiserver-ca.crt``),
    the certificate file holding the chain (leaf, then CA). Created once; reused while it names
    every wanted SAN. Returns ``(cert_path, key_path)``; OSError when the directory is unusable."""
    extra = [bind_address] if bind_address not in ("", "0.0.0.0", "::") else []
    names = pki.serving_names(socket.gethostname(), service_ip, extra)
    os.makedirs(cert_dir, mode=0o700, exist_ok=True)
    cert_path, key_path = os.path.join(cert_dir, "apiserver.crt"), os.path.join(cert_dir, "apiserver.key")
    with open(os.path.join(cert_dir, ".lock"), "a") as lock:  # apiservers starting together make one pair
        fcntl.flock(lock, fcntl.LOCK_EX)
        got = pki.read_pair(cert_path, key_path)
        have = pki.alt_names(_leaf(got.cert)) if got else set()
        if got is None or not set(_normal(names)) <= have:
            ca = pki.new_ca(f"{socket.gethostname()}-ca")
            pair = pki.issue(ca, socket.gethostname(), server_names=names, client=False, server=True)
            pki.write_file(os.path.join(cert_dir, "apiserver-ca.crt"), ca.cert, 0o644)
            pki.write_pair(cert_path, key_path, pki.KeyPair(pair.cert + ca.cert, pair.key))
    return cert_path, key_path


def _leaf(chain: bytes) -> bytes:
    end = b"-----END CERTIFICATE-----"
    return chain[:chain.index(end) + len(end)] + b"\n" if end in chain else chain


def _normal(names: list[str]) -> list[str]:
    out = []
    for n in names:
        try:
            out.append(str(ipaddress.ip_address(n)))
        except ValueError:
            out.append(n)
    return [n for n in out if n]


def server_context(cert_file: str, key_file: str, client_ca_file: str | None = None) -> ssl.SSLContext:
    """The serving ``SSLContext``: TLS 1.2+ (kube-apiserver's default ``--tls-min-version``), the
    certificate chain and key, HTTP/1.1 by ALPN, and with ``client_ca_file`` a client certificate
    requested (``CERT_OPTIONAL``) and verified against it. Raises ValueError (one line) when a file
    cannot be loaded."""
    return pki.server_context(cert_file, key_file, client_ca_file)


def peer_certificate(request: Any) -> x509.Certificate | None:
    """The verified client certificate of an aiohttp ``request``, parsed (``cryptography``
    ``x509.Certificate``: ``subject`` CN = user, O = groups), or None on plain HTTP or when the
    client presented none (the DER from
    :func:`components.apiserver.authentication.x509.peer_certificate`). See the module docstring
    for why it is always already verified."""
    from components.apiserver.authentication.x509 import peer_certificate as der_and_dict
    der = der_and_dict(request)[0]
    return x509.load_der_x509_certificate(der) if der else None
