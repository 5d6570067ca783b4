"""The resource registry: every kind the control plane serves, in one table.

One :class:`~controlplane.api.registry.Resource` per REST resource gives everything both
sides need to address it (group, version, plural URL segment, kind, scope, short names)
and, for the apiserver, every fact about its kind (printer, schema, validation,
defaulting, selectable fields, strategy). :data:`REGISTRY` holds the built-in entries
(declared in :mod:`controlplane.api.builtin`) plus those added at run time. The
apiserver builds discovery, routes and storage keys from it and finds each kind's facts
in it; clients build request paths from it. The URL layout is described in
kubernetes/website ``content/en/docs/reference/using-api/api-concepts.md``.

Layering (no import circle): :mod:`~controlplane.api.registry` (the types) ←
the per-kind rules (printers, validators, defaulters, strategies) ←
:mod:`~controlplane.api.builtin` ← this module ← the kind-keyed entry points
(:mod:`~controlplane.api.tables`, :mod:`~controlplane.api.validation`,
:mod:`~controlplane.api.defaults`, :mod:`~controlplane.api.schemas`,
:mod:`controlplane.selectors`).
"""

from __future__ import annotations

from controlplane.api.builtin import BUILTIN
from controlplane.api.registry import KindSchema, Printer, Registry, Resource, Strategy

#: the public names (with those re-exported from the modules below)
__all__ = [
    "BUILTIN", "KindSchema", "Printer", "Registry", "Resource", "Strategy", "REGISTRY", "get", "by_kind",
    "NAMESPACES", "NODES", "PODS", "EVENTS", "REPLICATIONCONTROLLERS", "DEPLOYMENTS", "REPLICASETS", "LEASES",
    "SERVICES", "ENDPOINTS",
]

#: The process's registry of served resources (built-in entries first).
REGISTRY = Registry(BUILTIN)


def get(plural: str, group: str = "") -> Resource:
    """Look a resource up by plural and group in :data:`REGISTRY`; raises KeyError if not served."""
    return REGISTRY.get(plural, group)


def by_kind(kind: str, api_version: str | None = None) -> Resource:
    """Look a resource up by kind (and apiVersion, if given) in :data:`REGISTRY`; raises KeyError."""
    return REGISTRY.by_kind(kind, api_version)


# Handy aliases used across components.
NAMESPACES = get("namespaces")
NODES = get("nodes")
PODS = get("pods")
EVENTS = get("events")
REPLICATIONCONTROLLERS = get("replicationcontrollers")
DEPLOYMENTS = get("deployments", "apps")
REPLICASETS = get("replicasets", "apps")
LEASES = get("leases", "coordination.k8s.io")
SERVICES = get("services")
ENDPOINTS = get("endpoints")
