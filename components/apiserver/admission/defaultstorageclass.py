"""DefaultStorageClass (``plugin/pkg/admission/storage/storageclass/setdefault/admission.go``,
``pkg/volume/util/storageclass.go`` GetDefaultClass), mutating, PersistentVolumeClaim creates.

A claim that names no class (no ``spec.storageClassName`` key, not even ``""``, and no
``volume.beta.kubernetes.io/storage-class`` annotation: ``PersistentVolumeClaimHasClass``)
gets the name of the default StorageClass: one annotated
``storageclass.kubernetes.io/is-default-class: "true"`` (or the beta
``storageclass.beta.kubernetes.io/is-default-class``). With several defaults the newest
(``metadata.creationTimestamp``) wins, ties broken by the smaller name; with none the claim
is left as it is.
"""

from __future__ import annotations

from typing import Any

from components.apiserver.admission import CREATE, Attributes, Plugin
from controlplane import apitime
from controlplane.api import resources as R
from controlplane.api.groups import core_storage, storage


def default_class(classes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """GetDefaultClass: among the classes marked default, the newest by creationTimestamp
    (then the smallest name), or None when none is."""
    defaults = [c for c in classes if storage.is_default_class(c)]
    if not defaults:
        return None

    def order(c: dict[str, Any]) -> tuple[float, str]:
        md = c.get("metadata") or {}
        ts = apitime.time_or_none(md.get("creationTimestamp"))
        return (-(ts if ts is not None else 0.0), str(md.get("name") or ""))
    return min(defaults, key=order)


def has_class(pvc: dict[str, Any]) -> bool:
    """PersistentVolumeClaimHasClass: the beta annotation, or a ``storageClassName`` key
    (even ``""``, which asks for no class)."""
    ann = (pvc.get("metadata") or {}).get("annotations") or {}
    if core_storage.STORAGE_CLASS_ANNOTATION in ann:
        return True
    spec = pvc.get("spec") or {}
    return isinstance(spec, dict) and spec.get("storageClassName") is not None


class DefaultStorageClass(Plugin):
    """The ``DefaultStorageClass`` admission plugin as this module's docstring describes it (its Kubernetes source, what it admits or refuses and with which Status)."""

    name = "DefaultStorageClass"
    operations = frozenset({CREATE})
    mutating = True
    #: claims only (``setdefault/admission.go`` Admit: returns for a resource other than
    #: ``persistentvolumeclaims`` or any subresource)
    admit_resources = frozenset({("", "persistentvolumeclaims", "")})

    async def admit(self, a: Attributes) -> None:
        if a.subresource or a.object is None or a.resource.group or a.resource.plural != "persistentvolumeclaims":
            return
        if has_class(a.object):
            return
        sc = default_class(self.ctx.list(R.get("storageclasses", storage.GROUP)))
        if sc is None:
            return
        spec = a.object.setdefault("spec", {})
        if isinstance(spec, dict):
            spec["storageClassName"] = (sc.get("metadata") or {}).get("name", "")
