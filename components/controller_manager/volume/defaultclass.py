"""The default StorageClass of a ``controlplane up`` cluster, written once at start.

As kind's ``standard`` class (kind's ``pkg/cluster/internal/create/actions/installstorage``,
applied by kind at cluster creation and kept by the addon manager's ``EnsureExists`` mode):
``standard``, annotated ``storageclass.kubernetes.io/is-default-class: "true"``, binding
WaitForFirstConsumer, reclaim policy Delete, provisioned by the controller-manager's
simulated hostPath provisioner (:data:`.provisioner.HOSTPATH_PROVISIONER`).

Written by the controller-manager's PV controller when it starts (not by the apiserver:
kube-apiserver bootstraps only its own objects — APF, priority classes, RBAC —, while the
default class is an add-on that only means something where a provisioner runs, and the
provisioner here is the PV controller's; ``--controllers=-persistentvolume-binder`` leaves
the cluster without both). Created only when no class is marked default, so a user's own
default is never doubled; an existing ``standard`` is left as it is.
"""

from __future__ import annotations

import logging
from typing import Any

from controlplane.api.groups import storage as storage_group
from controlplane.api.resources import get
from controlplane.client.rest import ApiError
from controlplane.log import event

from .provisioner import HOSTPATH_PROVISIONER

log = logging.getLogger("controller-manager")

NAME = "standard"
STORAGECLASSES = get("storageclasses", storage_group.GROUP)


def default_class() -> dict[str, Any]:
    """The StorageClass object written at start."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": NAME,
                         "annotations": {storage_group.DEFAULT_CLASS_ANNOTATION: "true"},
                         "labels": {"addonmanager.kubernetes.io/mode": "EnsureExists"}},
            "provisioner": HOSTPATH_PROVISIONER, "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer"}


async def ensure_default_class(client: Any, classes: list[dict[str, Any]]) -> bool:
    """Create :func:`default_class` unless one of ``classes`` (the informer's) is marked
    default or named ``standard``; a 409 (created meanwhile) is fine. Returns whether it
    was created. Raises ApiError for other refusals."""
    if any(storage_group.is_default_class(c) or (c.get("metadata") or {}).get("name") == NAME for c in classes):
        return False
    try:
        await client.create(STORAGECLASSES, default_class())
    except ApiError as e:
        if e.code == 409:
            return False
        raise
    event(log, "storageclass.default_created", name=NAME, provisioner=HOSTPATH_PROVISIONER)
    return True
