"""The test harness's certificates: one cluster PKI per test session (:class:`controlplane.pki.PKI`
in a temporary directory), so every apiserver the tests start serves HTTPS with a certificate of
the same CA and every client (kubectl, the components, RestClient, urllib) trusts it and
authenticates as the admin (``kubernetes-admin``, ``system:masters``).

:func:`harness` returns the session's :class:`Harness`; :meth:`Harness.kubeconfig` is an admin
kubeconfig whose server ``--master`` / ``kubectl --server`` override (client-go's
``BuildConfigFromFlags`` keeps the CA and the credentials), which the integration conftest exports
as ``$KUBECONFIG`` for every process it starts.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import ssl
import tempfile

import yaml

from controlplane import pki
from controlplane.client.config import ClientConfig


class Harness:
    """The session PKI in ``dir``: the CA, the apiserver's serving pair and the admin's client pair."""

    def __init__(self, directory: str) -> None:
        self.dir = directory
        self.pki = pki.PKI(os.path.join(directory, "pki"))
        self.ca = self.pki.ca()
        self.pki.apiserver()
        self.admin = self.pki.admin()
        self.ca_file = self.pki.ca_file
        self.cert_file, self.key_file = self.pki.path("admin"), self.pki.path("admin", "key")
        self.kubeconfig = os.path.join(directory, "kubeconfig")
        pki.write_kubeconfig(self.kubeconfig, self.kubeconfig_text("https://127.0.0.1:6443"))

    def kubeconfig_text(self, server: str, namespace: str | None = "default", client_cert: bool = True) -> str:
        """An admin kubeconfig for ``server`` (CA and client certificate embedded); without
        ``client_cert``, the CA alone (an anonymous client that verifies the server)."""
        if not client_cert:
            # kubectl prompts for a user name on a TLS cluster whose user has no credential at all;
            # a bare user name (basic auth, which Kubernetes no longer serves) is ignored by the
            # apiserver: the request is system:anonymous
            doc = yaml.safe_load(pki.kubeconfig(server, user="anonymous", ca=self.ca.cert, namespace=namespace))
            doc["users"][0]["user"] = {"username": "anonymous"}
            return str(yaml.safe_dump(doc, sort_keys=False))
        return pki.kubeconfig(server, user=pki.ADMIN_USER, ca=self.ca.cert, client=self.admin, namespace=namespace)

    def apiserver_args(self) -> list[str]:
        """The apiserver's TLS flags: serving pair and client CA."""
        return ["--tls-cert-file", self.pki.path("apiserver"), "--tls-private-key-file",
                self.pki.path("apiserver", "key"), "--client-ca-file", self.ca_file]

    def ssl_context(self, client_cert: bool = True) -> ssl.SSLContext:
        """A client context trusting the CA and, with ``client_cert``, presenting the admin's certificate."""
        ctx = ssl.create_default_context(cafile=self.ca_file)
        if client_cert:
            ctx.load_cert_chain(self.cert_file, self.key_file)
        return ctx

    def client_config(self, url: str) -> ClientConfig:
        """A :class:`ClientConfig` for ``url`` as the admin."""
        return ClientConfig(host=url, ca_data=self.ca.cert, cert_data=self.admin.cert, key_data=self.admin.key)


@functools.cache
def harness() -> Harness:
    """The session's :class:`Harness` (created on first use, removed at exit)."""
    d = tempfile.mkdtemp(prefix="controlplane-test-pki-")
    atexit.register(shutil.rmtree, d, True)
    return Harness(d)
