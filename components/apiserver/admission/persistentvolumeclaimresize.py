"""PersistentVolumeClaimResize (``plugin/pkg/admission/storage/persistentvolume/resize/admission.go``),
validating, PersistentVolumeClaim updates (main resource only).

Growing ``spec.resources.requests.storage`` is allowed only for a claim that was Bound
(403 ``Only bound persistent volume claims can be expanded``) and whose class — the same
before and after, not empty, read from the beta ``volume.beta.kubernetes.io/storage-class``
annotation or ``spec.storageClassName`` — exists with ``allowVolumeExpansion: true`` (403
``only dynamically provisioned pvc can be resized and the storageclass that provisions the
pvc must support resize``). Keeping or shrinking the size is left to validation.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from components.apiserver.admission import UPDATE, Attributes, Plugin, forbidden
from controlplane.api import resources as R
from controlplane.api.groups import core_storage, storage
from controlplane.api.quantity import parse_quantity

NOT_BOUND = "Only bound persistent volume claims can be expanded"
NOT_EXPANDABLE = ("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc "
                  "must support resize")


def requested_storage(pvc: dict[str, Any]) -> Fraction:
    """``spec.resources.requests.storage`` as a number (0 when absent or unreadable, as a
    missing entry of a Go ResourceList reads as the zero Quantity)."""
    v = (((pvc.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")
    try:
        return parse_quantity(v) if v is not None else Fraction(0)
    except (ValueError, TypeError):
        return Fraction(0)


class PersistentVolumeClaimResize(Plugin):
    """The ``PersistentVolumeClaimResize`` admission plugin as this module's docstring describes it (its Kubernetes source, what it admits or refuses and with which Status)."""

    name = "PersistentVolumeClaimResize"
    operations = frozenset({UPDATE})
    validating = True
    #: claims only (``resize/admission.go`` Validate: returns for a resource other than
    #: ``persistentvolumeclaims`` or any subresource)
    validate_resources = frozenset({("", "persistentvolumeclaims", "")})

    async def validate(self, a: Attributes) -> None:
        if a.subresource or a.object is None or a.old_object is None:
            return
        if a.resource.group or a.resource.plural != "persistentvolumeclaims":
            return
        if requested_storage(a.object) <= requested_storage(a.old_object):
            return
        if (a.old_object.get("status") or {}).get("phase") != "Bound":
            raise forbidden(a, NOT_BOUND)
        if not await self._allow_resize(a.object, a.old_object):
            raise forbidden(a, NOT_EXPANDABLE)

    async def _allow_resize(self, pvc: dict[str, Any], old: dict[str, Any]) -> bool:
        name, old_name = core_storage.volume_class(pvc), core_storage.volume_class(old)
        if not name or not old_name or name != old_name:
            return False
        sc = await self.ctx.lookup(R.get("storageclasses", storage.GROUP), None, name)
        return bool(sc is not None and sc.get("allowVolumeExpansion") is True)
