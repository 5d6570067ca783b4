"""ServiceAccount (``plugin/pkg/admission/serviceaccount/admission.go``), mutating, pod creates:

* ``spec.serviceAccountName`` defaults to ``default`` (``spec.serviceAccount``, its deprecated
  twin, follows it as the v1 conversion does);
* unless the pod (``spec.automountServiceAccountToken``), else its ServiceAccount, says
  false, the pod gets the projected volume ``kube-api-access-<5 random chars>`` — a bound
  service account token (``token``, expirationSeconds 3607:
  ``serviceaccount.WarnOnlyBoundTokenExpirationSeconds``), ``ca.crt`` from the
  ``kube-root-ca.crt`` ConfigMap and the pod's ``namespace`` from the downward API — mounted
  read-only at ``/var/run/secrets/kubernetes.io/serviceaccount`` in every container and init
  container that mounts nothing there yet.

Deviation: a ServiceAccount that does not exist (yet) is not an error here (kube-apiserver
answers 403 ``error looking up service account``): in this emulator the apiserver serves pods
without a controller-manager creating the ``default`` accounts; the pod then counts as
automounting.
"""

from __future__ import annotations

import random
from typing import Any

from components.apiserver.admission import CREATE, POD_ONLY, Attributes, Plugin
from controlplane.api import resources as R

DEFAULT_SERVICE_ACCOUNT = "default"
#: ServiceAccountVolumeName, the prefix of the generated volume name
VOLUME_PREFIX = "kube-api-access-"
#: DefaultAPITokenMountPath
MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
#: WarnOnlyBoundTokenExpirationSeconds: one hour and seven seconds
TOKEN_EXPIRATION_SECONDS = 3607
#: the ConfigMap the root-ca-cert-publisher keeps in every namespace
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
#: the alphabet of apimachinery's ``utilrand.String`` (no vowels, no confusable digits)
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def token_volume(name: str) -> dict[str, Any]:
    """The projected service account token volume named ``name``."""
    return {"name": name, "projected": {
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
            {"configMap": {"name": ROOT_CA_CONFIGMAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                         "fieldPath": "metadata.namespace"}}]}},
        ],
        "defaultMode": 420}}


def _is_token_volume(v: Any) -> bool:
    srcs = ((v or {}).get("projected") or {}).get("sources") or [] if isinstance(v, dict) else []
    return isinstance(v, dict) and str(v.get("name", "")).startswith(VOLUME_PREFIX) and any(
        isinstance(s, dict) and "serviceAccountToken" in s for s in srcs)


def mount_token(spec: dict[str, Any], rng: random.Random | None = None) -> str | None:
    """Add the token volume and its mounts to ``spec`` (in place); returns the volume name,
    or None when every container already mounts something at :data:`MOUNT_PATH`."""
    containers = [c for key in ("initContainers", "containers") for c in (spec.get(key) or [])
                  if isinstance(c, dict)]
    needing = [c for c in containers
               if not any(isinstance(m, dict) and m.get("mountPath") == MOUNT_PATH for m in c.get("volumeMounts") or [])]
    if not needing:
        return None
    volumes: list[Any] = spec["volumes"] if isinstance(spec.get("volumes"), list) else []
    existing = next((v for v in volumes if _is_token_volume(v)), None)
    if existing is not None:
        name = str(existing["name"])
    else:
        taken = {v.get("name") for v in volumes if isinstance(v, dict)}
        r = rng or random
        while True:
            name = VOLUME_PREFIX + "".join(r.choice(_ALPHANUMS) for _ in range(5))
            if name not in taken:
                break
        volumes.append(token_volume(name))
        spec["volumes"] = volumes
    for c in needing:
        mounts: list[Any] = c["volumeMounts"] if isinstance(c.get("volumeMounts"), list) else []
        mounts.append({"name": name, "readOnly": True, "mountPath": MOUNT_PATH})
        c["volumeMounts"] = mounts
    return name


class ServiceAccount(Plugin):
    """The ``ServiceAccount`` admission plugin as this module's docstring describes it (its Kubernetes source, what it admits or refuses and with which Status)."""

    name = "ServiceAccount"
    operations = frozenset({CREATE})
    mutating = True
    #: pods only (``serviceaccount/admission.go`` Admit: ``shouldIgnore`` — a subresource, or
    #: a resource other than ``pods``)
    admit_resources = POD_ONLY

    async def admit(self, a: Attributes) -> None:
        if not a.is_pod() or a.object is None or not isinstance(a.object.get("spec"), dict):
            return
        spec = a.object["spec"]
        sa_name = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_SERVICE_ACCOUNT
        spec["serviceAccountName"] = spec["serviceAccount"] = sa_name
        automount = spec.get("automountServiceAccountToken")
        if automount is None:
            sa = self.ctx.get(R.get("serviceaccounts"), a.namespace, sa_name)
            automount = (sa or {}).get("automountServiceAccountToken")
        if automount is False:
            return
        mount_token(spec)
