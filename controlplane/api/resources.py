"""The resource registry: every kind the control plane serves, in one table.

One :class:`Resource` per REST resource gives everything both sides need to
address it: group, version, plural (URL segment), kind, scope and short names.
The apiserver builds discovery, routes and storage keys from this table; clients
build request paths from it. Source of the names, short names and scopes:
``kubectl api-resources`` on a v1.32 cluster; the URL layout is described in
kubernetes/website ``content/en/docs/reference/using-api/api-concepts.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from controlplane.api import listfields


@dataclass(frozen=True)
class Resource:
    """One REST resource, e.g. ``pods`` in the core group ``v1``.

    ``group`` is ``""`` for the core (legacy) group. ``subresources`` lists the
    subresource names served under an item (``status``, ``binding``, ``scale``). How its
    list fields merge (strategic-merge keys, server-side-apply list-map keys) is
    :attr:`list_fields`, declared in :mod:`controlplane.api.listfields`.
    """

    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = (
        "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch",
    )
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def list_fields(self) -> dict[str, listfields.ListField]:
        """Every declared list field of this kind by dotted path (:func:`controlplane.api.listfields.for_kind`)."""
        return listfields.for_kind(self.kind)

    @property
    def api_version(self) -> str:
        """``v1`` for core, ``apps/v1`` otherwise."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def prefix(self) -> str:
        """URL prefix of the group-version: ``/api/v1`` or ``/apis/apps/v1``."""
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    @property
    def etcd_dir(self) -> str:
        """Storage directory under ``/registry`` (``pods``, ``deployments``...).

        Kubernetes keeps most resources at ``/registry/<plural>``; core events
        and events.k8s.io share ``/registry/events``; nodes are ``/registry/minions``
        in real clusters but we keep the plural for readability.
        """
        return self.extra.get("etcd_dir", self.plural)

    def path(self, namespace: str | None = None, name: str | None = None,
             subresource: str | None = None) -> str:
        """The REST path of the collection, an item or an item's subresource.

        Raises ValueError when a namespaced item is addressed without a namespace.
        """
        p = self.prefix
        if self.namespaced and namespace:
            p += f"/namespaces/{namespace}"
        elif self.namespaced and name:
            raise ValueError(f"{self.plural} {name!r}: a namespace is required")
        p += f"/{self.plural}"
        if name:
            p += f"/{name}"
            if subresource:
                p += f"/{subresource}"
        return p


_ALL = "all"

#: The built-in resources, as kube-apiserver v1.32 serves them (the subset we build).
BUILTIN: tuple[Resource, ...] = (
    Resource("", "v1", "namespaces", "namespace", "Namespace", False, ("ns",), ("status", "finalize")),
    Resource("", "v1", "nodes", "node", "Node", False, ("no",), ("status",)),
    Resource("", "v1", "pods", "pod", "Pod", True, ("po",), ("status", "binding", "eviction", "log", "exec", "attach", "portforward"), (_ALL,)),
    Resource("", "v1", "bindings", "binding", "Binding", True, (), (), (), ("create",)),
    Resource("", "v1", "events", "event", "Event", True, ("ev",)),
    Resource("", "v1", "replicationcontrollers", "replicationcontroller", "ReplicationController", True,
             ("rc",), ("status", "scale"), (_ALL,)),
    Resource("", "v1", "services", "service", "Service", True, ("svc",), ("status",), (_ALL,)),
    Resource("", "v1", "endpoints", "endpoints", "Endpoints", True, ("ep",)),
    Resource("", "v1", "configmaps", "configmap", "ConfigMap", True, ("cm",)),
    Resource("", "v1", "secrets", "secret", "Secret", True),
    Resource("", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", True, ("sa",)),
    Resource("apps", "v1", "deployments", "deployment", "Deployment", True, ("deploy",),
             ("status", "scale"), (_ALL,)),
    Resource("apps", "v1", "replicasets", "replicaset", "ReplicaSet", True, ("rs",),
             ("status", "scale"), (_ALL,)),
    Resource("apps", "v1", "daemonsets", "daemonset", "DaemonSet", True, ("ds",), ("status",), (_ALL,)),
    Resource("apps", "v1", "statefulsets", "statefulset", "StatefulSet", True, ("sts",),
             ("status", "scale"), (_ALL,)),
    Resource("events.k8s.io", "v1", "events", "event", "Event", True, (), (),
             (), extra={"etcd_dir": "events"}),
    Resource("coordination.k8s.io", "v1", "leases", "lease", "Lease", True),
)

class Registry:
    """The served resources: built-in entries plus those added at run time (CRDs).

    Iterating gives the entries in registration order. :meth:`add` and :meth:`remove`
    change the set and tell every subscriber (:meth:`subscribe`) with
    ``callback("ADDED" | "DELETED", resource)``, so the apiserver can add or drop
    routes, discovery documents, OpenAPI and watch caches. :attr:`generation` grows by
    one per change (discovery and OpenAPI caches key on it). Lookups raise KeyError
    for what is not served. The shape follows kube-apiserver's
    ``k8s.io/apiserver/pkg/server`` (``InstallAPIGroup``) plus the apiextensions
    ``DynamicServingInfo`` that serves custom resources as they are established.
    """

    def __init__(self, resources: tuple[Resource, ...] = ()) -> None:
        self._entries: dict[tuple[str, str, str], Resource] = {}
        self._subscribers: list[Callable[[str, Resource], None]] = []
        self.generation = 0
        for r in resources:
            self._entries[(r.group, r.version, r.plural)] = r

    def __iter__(self) -> Iterator[Resource]:
        return iter(tuple(self._entries.values()))

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, r: object) -> bool:
        return isinstance(r, Resource) and self._entries.get((r.group, r.version, r.plural)) is r

    def lookup(self, group: str, version: str, plural: str) -> Resource | None:
        """The resource served at ``/apis/<group>/<version>/<plural>``, or None."""
        return self._entries.get((group, version, plural))

    def get(self, plural: str, group: str = "") -> Resource:
        """The first served version of ``group``/``plural``; raises KeyError if not served."""
        for r in self._entries.values():
            if r.plural == plural and r.group == group:
                return r
        raise KeyError(f"{plural}.{group}" if group else plural)

    def by_kind(self, kind: str, api_version: str | None = None) -> Resource:
        """The resource of ``kind`` (at ``api_version``, if given); raises KeyError."""
        for r in self._entries.values():
            if r.kind == kind and (api_version is None or r.api_version == api_version):
                return r
        raise KeyError(kind)

    def add(self, resource: Resource) -> None:
        """Serve ``resource`` (replacing an entry at the same group/version/plural)."""
        key = (resource.group, resource.version, resource.plural)
        self._entries[key] = resource
        self._changed("ADDED", resource)

    def remove(self, group: str, version: str, plural: str) -> Resource | None:
        """Stop serving ``group/version/plural``; returns the removed entry or None."""
        r = self._entries.pop((group, version, plural), None)
        if r is not None:
            self._changed("DELETED", r)
        return r

    def subscribe(self, callback: Callable[[str, Resource], None]) -> Callable[[], None]:
        """Call ``callback(type, resource)`` on every change; returns the unsubscribe function."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    def _changed(self, type_: str, resource: Resource) -> None:
        self.generation += 1
        for cb in list(self._subscribers):
            cb(type_, resource)


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
