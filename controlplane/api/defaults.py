"""Defaulting: the fields the apiserver fills in before validation and storage.

:func:`apply_defaults` mutates a wire-shaped object (plain JSON dict) in place, the
way the real apiserver does on create and update, with the defaulter of the kind's
registry entry (``REGISTRY.of_kind(kind).default``; the rules and their Kubernetes
sources are in :mod:`controlplane.api.defaulters`). A kind without one, or not served, is
left as sent, as a custom resource without structural defaults is. The helpers other
modules use are re-exported below.
"""

from __future__ import annotations

from controlplane.api.defaulters import (
    default_container,
    default_pod_spec,
    image_pull_policy,
    qos_class,
)
from controlplane.api.registry import JSON, KindKey
from controlplane.api.resources import REGISTRY

#: the public names (with those re-exported from the modules below)
__all__ = [
    "default_container", "default_pod_spec", "image_pull_policy", "qos_class",
    "apply_defaults",
]


def apply_defaults(kind: KindKey, obj: JSON) -> None:
    """Fill in the defaults of ``kind`` into ``obj`` (a wire-shaped dict), in place.

    Kinds without defaults (Event, ConfigMap, Lease, kinds added at run time...) are left
    untouched. Values a client set are never overwritten. Malformed sections (e.g. ``spec``
    not a dict) are left for validation to report.
    """
    if not isinstance(obj, dict):
        return
    r = REGISTRY.of_kind(kind)
    if r is None or r.default is None:
        return
    for key in ("spec", "status", "metadata"):
        if key in obj and obj[key] is not None and not isinstance(obj[key], dict):
            return  # validation will reject it
    r.default(obj)
