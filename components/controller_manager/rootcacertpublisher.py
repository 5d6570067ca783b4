"""The root-ca-cert-publisher controller (``pkg/controller/certificates/rootcacertpublisher/
publisher.go``): every active namespace has a ``kube-root-ca.crt`` ConfigMap whose
``ca.crt`` is the cluster's root CA bundle (created when missing, recreated when deleted,
put back when changed), with the ``kubernetes.io/description`` annotation Kubernetes sets.
Pods read it through the projected volume the ServiceAccount admission plugin mounts.

The bundle is kube-controller-manager's ``--root-ca-file`` (``controlplane up`` passes the
cluster CA, ``<data-dir>/pki/ca.crt``). Without it the bundle is a placeholder self-signed
certificate (``CN=controlplane-placeholder-ca``) generated with the ``cryptography`` library
once per cluster — the one already published in ``kube-system`` is reused, so restarts keep it.
"""

from __future__ import annotations

import datetime
import logging
from typing import Any

from controlplane.api.resources import NAMESPACES, get
from controlplane.client.rest import ApiError
from controlplane.log import event

from .controller import Controller, ControllerContext
from .controller_utils import meta, name_of

log = logging.getLogger("controller-manager")

CONFIGMAPS = get("configmaps")
NAME = "kube-root-ca.crt"
DATA_KEY = "ca.crt"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
               "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
               "distributions of Kubernetes clusters.")
#: where the cluster's bundle is read back from after a restart
HOME_NAMESPACE = "kube-system"


def placeholder_ca_pem() -> str:
    """A new self-signed CA certificate, PEM-encoded (EC P-256, valid ten years)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "controlplane-placeholder-ca")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode()


class RootCACertPublisher(Controller):
    """See the module docstring. Queue keys are namespace names."""

    name = "root-ca-cert-publisher"
    workers = 1

    def __init__(self, ctx: ControllerContext, ca_pem: str | None = None) -> None:
        super().__init__(ctx)
        self._pem = ca_pem if ca_pem is not None else (ctx.config.root_ca or None)
        self.namespaces = ctx.informers.informer(NAMESPACES)
        self.configmaps = ctx.informers.informer(CONFIGMAPS)
        self.namespaces.add_handlers(lambda ns: self.enqueue(name_of(ns)),
                                     lambda old, new: self.enqueue(name_of(new)), None)
        self.configmaps.add_handlers(None, lambda old, new: self._cm_changed(new), self._cm_changed)

    def _cm_changed(self, cm: dict[str, Any]) -> None:
        if meta(cm).get("name") == NAME and meta(cm).get("namespace"):
            self.enqueue(str(meta(cm)["namespace"]))

    def ca_pem(self) -> str:
        """The cluster's bundle: given (``--root-ca-file``), else already published in kube-system, else new."""
        if self._pem is None:
            home = self.configmaps.store.get(f"{HOME_NAMESPACE}/{NAME}")
            pem = ((home or {}).get("data") or {}).get(DATA_KEY)
            self._pem = pem if pem else placeholder_ca_pem()
        return self._pem

    def desired(self, namespace: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": NAME, "namespace": namespace,
                             "annotations": {"kubernetes.io/description": DESCRIPTION}},
                "data": {DATA_KEY: self.ca_pem()}}

    async def sync(self, key: str) -> None:
        ns = self.namespaces.store.get(key)
        if ns is None or meta(ns).get("deletionTimestamp") or \
                (ns.get("status") or {}).get("phase", "Active") != "Active":
            return
        want = self.desired(key)
        cur = self.configmaps.store.get(f"{key}/{NAME}")
        if cur is None:
            try:
                await self.client.create(CONFIGMAPS, want, key)
            except ApiError as e:
                if e.code in (409, 403, 404):
                    return  # exists (our cache is behind), or the namespace is going away
                raise
            event(log, "rootcacert.published", namespace=key)
            return
        if (cur.get("data") or {}) == want["data"] and \
                (meta(cur).get("annotations") or {}).get("kubernetes.io/description") == DESCRIPTION:
            return
        new = dict(cur)
        new["data"] = want["data"]
        new["metadata"] = dict(meta(cur))
        new["metadata"]["annotations"] = {**(meta(cur).get("annotations") or {}),
                                          "kubernetes.io/description": DESCRIPTION}
        try:
            await self.client.update(CONFIGMAPS, new)
        except ApiError as e:
            if e.code == 404:
                self.enqueue(key)
                return
            raise
        event(log, "rootcacert.updated", namespace=key)
