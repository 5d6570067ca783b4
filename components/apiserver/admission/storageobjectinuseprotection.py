"""StorageObjectInUseProtection (``plugin/pkg/admission/storage/storageobjectinuseprotection/
admission.go``), mutating, PersistentVolume and PersistentVolumeClaim creates.

Every new claim gets the ``kubernetes.io/pvc-protection`` finalizer and every new volume
``kubernetes.io/pv-protection`` (appended once, after any the client set), so neither is
removed while in use: the controller-manager's pvc-protection and pv-protection controllers
take the finalizer away once no pod uses the claim / the volume is no longer Bound.
"""

from __future__ import annotations

from components.apiserver.admission import CREATE, Attributes, Plugin
from controlplane.volume import PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER

#: plural of the core resource → the finalizer its objects get
FINALIZERS = {"persistentvolumeclaims": PVC_PROTECTION_FINALIZER, "persistentvolumes": PV_PROTECTION_FINALIZER}


class StorageObjectInUseProtection(Plugin):
    """The ``StorageObjectInUseProtection`` admission plugin as this module's docstring describes it."""

    name = "StorageObjectInUseProtection"
    operations = frozenset({CREATE})
    mutating = True
    #: claims and volumes (``storageobjectinuseprotection/admission.go`` Admit: the
    #: ``persistentvolumes`` / ``persistentvolumeclaims`` resources, no subresource)
    admit_resources = frozenset({("", plural, "") for plural in FINALIZERS})

    async def admit(self, a: Attributes) -> None:
        if a.subresource or a.object is None or a.resource.group:
            return
        fin = FINALIZERS.get(a.resource.plural)
        if fin is None:
            return
        md = a.object.setdefault("metadata", {})
        if not isinstance(md, dict):
            return
        fins = md.get("finalizers")
        if not isinstance(fins, list):
            fins = []
        if fin not in fins:
            md["finalizers"] = [*fins, fin]
