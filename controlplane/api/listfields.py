"""How every list field of the served kinds merges: declared once, as Kubernetes declares it in Go struct tags.

One :class:`ListField` per (Go type, field) — the ``patchStrategy`` / ``patchMergeKey``
tags (strategic merge patch) and the ``+listType`` / ``+listMapKey`` markers (server-side
apply) of ``staging/src/k8s.io/api/core/v1/types.go``, ``apps/v1/types.go`` and
``apimachinery/pkg/apis/meta/v1/types.go`` (Kubernetes v1.32). Three readers take their
answers from here, so they cannot disagree:

* :mod:`controlplane.api.patch` (strategic merge): :func:`merge_key`, :func:`is_set`;
* :mod:`controlplane.api.schemas` (OpenAPI v3 ``x-kubernetes-patch-merge-key``,
  ``x-kubernetes-patch-strategy``, ``x-kubernetes-list-type``, ``x-kubernetes-list-map-keys``):
  :func:`declared`;
* the apiserver's field manager (server-side apply list keys): :func:`map_keys`.

A list without ``+listType`` but with a merge key is, for server-side apply, a map keyed by
its merge key (kube-openapi ``pkg/schemaconv/smd.go``: ``x-kubernetes-patch-strategy: merge``
+ ``x-kubernetes-patch-merge-key`` → associative list); without either it is atomic. A map
key with a default in the schema (``protocol``: ``TCP``) stands for that default where an
element omits it (structured-merge-diff ``KeyForItem`` with defaulted keys).

Paths are dotted field names from the object root, list elements adding no segment:
``spec.template.spec.containers.ports``. :data:`KINDS` gives each kind's top-level Go
types, :data:`STRUCTS` the struct fields leading to lists; :func:`for_kind` walks them into
the per-kind table (``{path: ListField}``) the readers use. A kind added at run time (a
custom resource version, whose list types come from its schema's ``x-kubernetes-list-type``
/ ``x-kubernetes-list-map-keys``) is registered under its own key with :func:`register_kind`;
:data:`generation` grows with every registration, for readers that memoise.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class ListField:
    """The tags of one list field.

    ``merge_key``: ``patchMergeKey`` (None: no strategic-merge key); ``strategy``:
    ``patchStrategy`` (``merge``, ``merge,retainKeys`` or ""); ``list_type``: ``+listType``
    (``map``, ``set``, ``atomic`` or "" when undeclared); ``map_keys``: the ``+listMapKey``
    markers in declaration order; ``key_defaults``: schema defaults of map keys
    (``{"protocol": "TCP"}``); ``elem``: the Go struct type of the elements, if modelled.
    """

    merge_key: str | None = None
    strategy: str = ""
    list_type: str = ""
    map_keys: tuple[str, ...] = ()
    key_defaults: tuple[tuple[str, str], ...] = ()
    elem: str | None = None

    @property
    def apply_keys(self) -> tuple[str, ...] | None:
        """The keys server-side apply identifies elements by (None: not a map)."""
        if self.list_type == "map":
            return self.map_keys
        if not self.list_type and self.merge_key and "merge" in self.strategy:
            return (self.merge_key,)
        return None

    @property
    def is_set(self) -> bool:
        """A list of primitives merged as a set (``patchStrategy: merge`` without key, or ``+listType=set``)."""
        return self.merge_key is None and ("merge" in self.strategy or self.list_type == "set")


def _map(key: str, *keys: str, strategy: str = "merge", elem: str | None = None,
         defaults: tuple[tuple[str, str], ...] = ()) -> ListField:
    """``patchStrategy:"<strategy>" patchMergeKey:"<key>"`` + ``+listType=map`` with ``+listMapKey`` ``keys`` (default: ``key``)."""
    return ListField(key, strategy, "map", keys or (key,), defaults, elem)


def _merge(key: str, elem: str | None = None) -> ListField:
    """``patchStrategy:"merge" patchMergeKey:"<key>"`` without ``+listType``."""
    return ListField(key, "merge", "", (), (), elem)


ATOMIC = ListField(list_type="atomic")
#: public names of the helpers, for the API group modules' declarations (:func:`declare`)
map_list = _map
merge_list = _merge
_TCP = (("protocol", "TCP"),)

#: (Go type, JSON field) → the field's tags; struct-valued fields map to their Go type name
STRUCTS: dict[str, dict[str, ListField | str]] = {
    "ObjectMeta": {
        "ownerReferences": _map("uid"),                                     # +listType=map +listMapKey=uid
        "finalizers": ListField(None, "merge", "set"),                      # +listType=set
        "managedFields": ATOMIC,
    },
    "PodTemplateSpec": {"metadata": "ObjectMeta", "spec": "PodSpec"},
    "PodSpec": {
        "volumes": _map("name", strategy="merge,retainKeys", elem="Volume"),
        "initContainers": _map("name", elem="Container"),
        "containers": _map("name", elem="Container"),
        "ephemeralContainers": _map("name", elem="EphemeralContainer"),
        "imagePullSecrets": _map("name"),
        "hostAliases": _map("ip"),
        "tolerations": ATOMIC,
        "topologySpreadConstraints": _map("topologyKey", "topologyKey", "whenUnsatisfiable"),
        "resourceClaims": _map("name", strategy="merge,retainKeys"),
        "schedulingGates": _map("name"),
        "readinessGates": ATOMIC,
    },
    "Container": {
        "ports": _map("containerPort", "containerPort", "protocol", defaults=_TCP),
        "env": _map("name"),
        "volumeMounts": _map("mountPath"),
        "volumeDevices": _map("devicePath"),
        "envFrom": ATOMIC, "command": ATOMIC, "args": ATOMIC, "resizePolicy": ATOMIC,
    },
    "EphemeralContainer": {  # EphemeralContainerCommon: Container's fields and tags
        "ports": _map("containerPort", "containerPort", "protocol", defaults=_TCP),
        "env": _map("name"),
        "volumeMounts": _map("mountPath"),
        "volumeDevices": _map("devicePath"),
        "envFrom": ATOMIC, "command": ATOMIC, "args": ATOMIC, "resizePolicy": ATOMIC,
    },
    "PodStatus": {
        "conditions": _map("type"),
        "podIPs": _map("ip"),
        "hostIPs": _map("ip"),
        "containerStatuses": ATOMIC, "initContainerStatuses": ATOMIC, "ephemeralContainerStatuses": ATOMIC,
    },
    "DeploymentSpec": {"template": "PodTemplateSpec"},
    "DeploymentStatus": {"conditions": _merge("type")},
    "ReplicaSetSpec": {"template": "PodTemplateSpec"},
    "ReplicaSetStatus": {"conditions": _merge("type")},
    "ReplicationControllerSpec": {"template": "PodTemplateSpec"},
    "ReplicationControllerStatus": {"conditions": _merge("type")},
    "DaemonSetSpec": {"template": "PodTemplateSpec"},
    "DaemonSetStatus": {"conditions": _merge("type")},
    "StatefulSetSpec": {"template": "PodTemplateSpec",
                        "volumeClaimTemplates": ListField(list_type="atomic", elem="PersistentVolumeClaim")},
    "PersistentVolumeClaim": {"metadata": "ObjectMeta"},
    "Volume": {"ephemeral": "EphemeralVolumeSource"},
    "EphemeralVolumeSource": {"volumeClaimTemplate": "PersistentVolumeClaimTemplate"},
    "PersistentVolumeClaimTemplate": {"metadata": "ObjectMeta"},
    "StatefulSetStatus": {"conditions": _merge("type")},
    "ServiceSpec": {
        "ports": _map("port", "port", "protocol", defaults=_TCP),
        "clusterIPs": ATOMIC, "externalIPs": ATOMIC, "ipFamilies": ATOMIC, "loadBalancerSourceRanges": ATOMIC,
    },
    "ServiceStatus": {"conditions": _map("type")},
    "NodeSpec": {"taints": ATOMIC, "podCIDRs": ListField(None, "merge", "set")},
    "NodeStatus": {
        "conditions": _merge("type"),
        "addresses": _merge("type"),   # "the merge key is not sufficiently unique" (types.go)
        "images": ATOMIC, "volumesInUse": ATOMIC, "volumesAttached": ATOMIC,
    },
    "NamespaceSpec": {"finalizers": ATOMIC},
    "NamespaceStatus": {"conditions": _map("type")},
    "EndpointSubset": {"addresses": ATOMIC, "notReadyAddresses": ATOMIC, "ports": ATOMIC},
}

#: kind → its top-level fields' Go types (besides ``metadata``, always ObjectMeta) and lists
KINDS: dict[str, dict[str, ListField | str]] = {
    "Pod": {"spec": "PodSpec", "status": "PodStatus"},
    "Deployment": {"spec": "DeploymentSpec", "status": "DeploymentStatus"},
    "ReplicaSet": {"spec": "ReplicaSetSpec", "status": "ReplicaSetStatus"},
    "ReplicationController": {"spec": "ReplicationControllerSpec", "status": "ReplicationControllerStatus"},
    "DaemonSet": {"spec": "DaemonSetSpec", "status": "DaemonSetStatus"},
    "StatefulSet": {"spec": "StatefulSetSpec", "status": "StatefulSetStatus"},
    "Service": {"spec": "ServiceSpec", "status": "ServiceStatus"},
    "Node": {"spec": "NodeSpec", "status": "NodeStatus"},
    "Namespace": {"spec": "NamespaceSpec", "status": "NamespaceStatus"},
    "Endpoints": {"subsets": ListField(list_type="atomic", elem="EndpointSubset")},
    "ServiceAccount": {"secrets": _map("name"), "imagePullSecrets": ATOMIC},
    "PodTemplate": {"template": "PodTemplateSpec"},
}

_EMPTY: dict[str, ListField | str] = {}
#: how deep the walk follows struct fields: deep enough for the deepest built-in path
#: (CronJob spec.jobTemplate.spec.template.spec.volumes.ephemeral.volumeClaimTemplate.metadata.ownerReferences),
#: a bound only against recursive declarations
_MAX_DEPTH = 16


def declare(kinds: dict[str, dict[str, ListField | str]] | None = None,
            structs: dict[str, dict[str, ListField | str]] | None = None) -> None:
    """Add an API group's declarations (its Go structs' and kinds' list tags, as
    :data:`STRUCTS` and :data:`KINDS` hold them); called by the group modules of
    :mod:`controlplane.api.groups` when they are imported. The per-kind tables are rebuilt."""
    for name, fields in (structs or {}).items():
        STRUCTS.setdefault(name, {}).update(fields)
    for kind, fields in (kinds or {}).items():
        KINDS.setdefault(kind, {}).update(fields)
    for_kind.cache_clear()


def _walk(fields: dict[str, ListField | str], prefix: str, out: dict[str, ListField], depth: int) -> None:
    for name, f in fields.items():
        path = f"{prefix}.{name}" if prefix else name
        if isinstance(f, str):
            if depth < _MAX_DEPTH:
                _walk(STRUCTS[f], path, out, depth + 1)
            continue
        out[path] = f
        if f.elem is not None and depth < _MAX_DEPTH:
            _walk(STRUCTS.get(f.elem, _EMPTY), path, out, depth + 1)


#: list fields of kinds registered at run time, by key (:func:`register_kind`)
_DYNAMIC: dict[str, dict[str, ListField]] = {}
#: grows by one per :func:`register_kind` / :func:`unregister_kind`
generation = 0


def register_kind(key: str, fields: dict[str, ListField]) -> None:
    """Declare the list fields (dotted path → ListField) of a kind added at run time under
    ``key`` (a custom resource version: ``Resource.lists_key``); replaces an earlier one."""
    global generation
    _DYNAMIC[key] = dict(fields)
    generation += 1
    for_kind.cache_clear()


def unregister_kind(key: str) -> None:
    """Forget what :func:`register_kind` declared under ``key``."""
    global generation
    if _DYNAMIC.pop(key, None) is not None:
        generation += 1
        for_kind.cache_clear()


@cache
def for_kind(kind: str) -> dict[str, ListField]:
    """Every declared list field of ``kind`` by dotted path (``spec.containers.ports``)."""
    out: dict[str, ListField] = {}
    _walk({"metadata": "ObjectMeta", **KINDS.get(kind, {})}, "", out, 0)
    out.update(_DYNAMIC.get(kind, {}))
    return out


def declared(go_type: str, name: str) -> ListField | None:
    """The tags of field ``name`` of Go struct ``go_type`` (or of kind ``go_type``'s top level), None if none."""
    f = STRUCTS.get(go_type, {}).get(name)
    if f is None:
        f = KINDS.get(go_type, {}).get(name)
    return f if isinstance(f, ListField) else None


def lookup(kind: str, path: str) -> ListField | None:
    """The list field at dotted ``path`` of ``kind``, None if undeclared (a replaced, atomic list)."""
    return for_kind(kind).get(path)


def merge_key(kind: str, path: str) -> str | None:
    """The strategic-merge key (``patchMergeKey``) of the list at ``path`` in ``kind``, or None."""
    f = for_kind(kind).get(path)
    return f.merge_key if f is not None else None


def is_set(kind: str, path: str) -> bool:
    """Whether the list at ``path`` in ``kind`` is a list of primitives merged as a set."""
    f = for_kind(kind).get(path)
    return f is not None and f.is_set


def map_keys(kind: str, path: str) -> tuple[str, ...] | None:
    """The server-side-apply keys of the list at ``path`` in ``kind`` (None: atomic or set)."""
    f = for_kind(kind).get(path)
    return f.apply_keys if f is not None else None


def key_defaults(kind: str, path: str) -> dict[str, str]:
    """Schema defaults of the map keys of the list at ``path`` (``{"protocol": "TCP"}``)."""
    f = for_kind(kind).get(path)
    return dict(f.key_defaults) if f is not None else {}

