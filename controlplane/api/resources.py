"""The resource registry: every kind the control plane serves, in one table.

One :class:`Resource` per REST resource gives everything both sides need to
address it: group, version, plural (URL segment), kind, scope and short names.
The apiserver builds discovery, routes and storage keys from this table; clients
build request paths from it. Source of the names, short names and scopes:
``kubectl api-resources`` on a v1.32 cluster; the URL layout is described in
kubernetes/website ``content/en/docs/reference/using-api/api-concepts.md``.
"""

from __future__ import annotations

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

RESOURCES: tuple[Resource, ...] = (
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

_BY_KEY: dict[tuple[str, str], Resource] = {(r.group, r.plural): r for r in RESOURCES}


def get(plural: str, group: str = "") -> Resource:
    """Look a resource up by plural and group; raises KeyError if not served."""
    return _BY_KEY[(group, plural)]


def by_kind(kind: str, api_version: str | None = None) -> Resource:
    """Look a resource up by kind (and apiVersion, if given); raises KeyError."""
    for r in RESOURCES:
        if r.kind == kind and (api_version is None or r.api_version == api_version):
            return r
    raise KeyError(kind)


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
