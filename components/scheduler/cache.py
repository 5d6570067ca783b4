"""The scheduler cache: nodes and the pods on them, including assumed pods.

Bound pods come from the pods informer; a pod the scheduler has just placed is
*assumed* onto its node at once (so the next cycle counts it) and confirmed when
the informer sees it bound, or forgotten when binding fails. Source:
``pkg/scheduler/backend/cache/cache.go`` (AssumePod, FinishBinding, ForgetPod,
AddPod, UpdatePod, RemovePod, AddNode, UpdateNode, RemoveNode) and
``pkg/scheduler/framework/types.go`` (NodeInfo).

The scheduling cycle is synchronous on the event loop, so a cycle sees a
consistent cache without copying it: :meth:`Cache.snapshot` hands out the live
NodeInfos plus a node list that is rebuilt only when nodes come or go.
"""

from __future__ import annotations

import logging
import weakref
from typing import Callable, Iterable

from components.scheduler.affinityindex import AffinityIndex, SelectorCounts
from components.scheduler.podinfo import PodInfo, Resources
from controlplane.log import event

log = logging.getLogger("scheduler.cache")


class ResourceState:
    """What the NodeResources plugins read of a node — its pod count, ``allocatable``,
    ``requested`` and ``non_zero_requested`` (``key``) —, one object shared by every
    node in the same state (see :meth:`NodeInfo.resource_state`): in a cycle, their
    Filter verdicts and scores are computed once per state, not once per node."""

    __slots__ = ("key", "__weakref__")

    def __init__(self, key: tuple) -> None:
        self.key = key

    def __repr__(self) -> str:
        return f"ResourceState{self.key}"


#: key → the live ResourceState with it (a state goes when no node holds it)
_RESOURCE_STATES: "weakref.WeakValueDictionary[tuple, ResourceState]" = weakref.WeakValueDictionary()


def _resources_key(r: Resources) -> tuple:
    return (r.milli_cpu, r.memory, r.ephemeral_storage, r.allowed_pods,
            tuple(sorted(r.scalar.items())) if r.scalar else ())


class NodeInfo:
    """One node and what is on it.

    ``node`` (dict), ``name``, ``labels``, ``taints``, ``unschedulable`` (spec),
    ``allocatable`` (:class:`Resources`), ``requested`` and ``non_zero_requested``
    (sums over ``pods``), ``pods`` (key → PodInfo), ``pods_with_affinity`` and
    ``pods_with_required_anti_affinity`` (keys), ``used_ports`` ((ip, proto, port) →
    count), ``images`` (normalised name → size in bytes), ``generation``;
    ``res_state``: the :class:`ResourceState` last computed by :meth:`resource_state`,
    None after any change.
    """

    def __init__(self, node: dict | None = None, name: str = "") -> None:
        self.pods: dict[str, PodInfo] = {}
        self.pods_with_affinity: set[str] = set()
        self.pods_with_required_anti_affinity: set[str] = set()
        self.requested = Resources()
        self.non_zero_requested = Resources()
        self.used_ports: dict[tuple[str, str, int], int] = {}
        self.generation = 0
        self.node: dict | None = None
        self.name = name
        self.labels: dict[str, str] = {}
        self.taints: list[dict] = []
        self.unschedulable = False
        self.allocatable = Resources()
        self.images: dict[str, int] = {}
        self.res_state: ResourceState | None = None
        if node is not None:
            self.set_node(node)

    def resource_state(self) -> ResourceState:
        """The node's :class:`ResourceState`, the same object for every node with the same
        pod count and resources (kept in ``res_state`` until the node or its pods change);
        read ``n.res_state or n.resource_state()`` in loops."""
        key = (len(self.pods), _resources_key(self.allocatable), _resources_key(self.requested),
               _resources_key(self.non_zero_requested))
        st = _RESOURCE_STATES.get(key)
        if st is None:
            st = _RESOURCE_STATES[key] = ResourceState(key)
        self.res_state = st
        return st

    def set_node(self, node: dict) -> None:
        """Take a Node's labels, taints, spec.unschedulable, allocatable and images.

        Raises ValueError on a malformed allocatable quantity."""
        md = node.get("metadata") or {}
        spec = node.get("spec") or {}
        status = node.get("status") or {}
        self.node = node
        self.name = md.get("name") or self.name
        self.labels = md.get("labels") or {}
        self.taints = spec.get("taints") or []
        self.unschedulable = bool(spec.get("unschedulable"))
        self.allocatable = Resources.from_list(status.get("allocatable") or status.get("capacity"))
        images: dict[str, int] = {}
        for img in status.get("images") or []:
            for n in img.get("names") or []:
                images[normalize_image(n)] = int(img.get("sizeBytes") or 0)
        self.images = images
        self.res_state = None
        self.generation += 1

    def add_pod(self, pi: PodInfo) -> None:
        """Count a pod on this node (requests, ports, affinity indexes)."""
        self.pods[pi.key] = pi
        self.requested.add(pi.requests)
        self.non_zero_requested.add(pi.non_zero_requests)
        if pi.has_affinity:
            self.pods_with_affinity.add(pi.key)
        if pi.required_anti_affinity:
            self.pods_with_required_anti_affinity.add(pi.key)
        for p in pi.host_ports:
            self.used_ports[p] = self.used_ports.get(p, 0) + 1
        self.res_state = None
        self.generation += 1

    def remove_pod(self, key: str) -> PodInfo | None:
        """Stop counting a pod; returns it, or None if it was not here."""
        pi = self.pods.pop(key, None)
        if pi is None:
            return None
        self.requested.add(pi.requests, -1)
        self.non_zero_requested.add(pi.non_zero_requests, -1)
        self.pods_with_affinity.discard(key)
        self.pods_with_required_anti_affinity.discard(key)
        for p in pi.host_ports:
            n = self.used_ports.get(p, 0) - 1
            if n > 0:
                self.used_ports[p] = n
            else:
                self.used_ports.pop(p, None)
        self.res_state = None
        self.generation += 1
        return pi

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"


def _same_placement(a: dict, b: dict) -> bool:
    """Whether pods ``a`` and ``b`` give the same PodInfo and index entries."""
    ma, mb = a.get("metadata") or {}, b.get("metadata") or {}
    return (ma.get("uid") == mb.get("uid") and ma.get("labels") == mb.get("labels")
            and ma.get("deletionTimestamp") == mb.get("deletionTimestamp")
            and a.get("spec") == b.get("spec"))


def normalize_image(name: str) -> str:
    """``nginx`` → ``nginx:latest``; names with a tag or digest are kept
    (imagelocality.normalizedImageName)."""
    last = name.rsplit("/", 1)[-1]
    if ":" not in last and "@" not in last:
        return name + ":latest"
    return name


class Snapshot:
    """What one scheduling cycle sees: ``nodes`` (list of NodeInfo, cache order),
    ``by_name`` and the nodes holding pods with (anti-)affinity. Source:
    ``pkg/scheduler/backend/cache/snapshot.go``."""

    def __init__(self, nodes: list[NodeInfo], by_name: dict[str, NodeInfo],
                 affinity_nodes: dict[str, NodeInfo] | None = None,
                 anti_affinity_nodes: dict[str, NodeInfo] | None = None,
                 image_node_counts: dict[str, int] | None = None,
                 affinity_index: AffinityIndex | None = None,
                 ns_labels: Callable[[str], dict[str, str]] | None = None,
                 selector_counts: SelectorCounts | None = None,
                 image_sizes: dict[str, dict[int, int]] | None = None) -> None:
        self.nodes = nodes
        self._selector_counts = selector_counts
        self._index = affinity_index
        #: namespace name -> its labels (namespaceSelector terms)
        self.ns_labels = ns_labels or (lambda ns: {})
        self.by_name = by_name
        self._affinity = affinity_nodes
        self._anti = anti_affinity_nodes
        if image_node_counts is None or image_sizes is None:
            image_node_counts, image_sizes = {}, {}
            for n in nodes:
                for i, size in n.images.items():
                    image_node_counts[i] = image_node_counts.get(i, 0) + 1
                    sizes = image_sizes.setdefault(i, {})
                    sizes[size] = sizes.get(size, 0) + 1
        #: normalised image name → number of nodes holding it
        self.image_node_counts = image_node_counts
        #: normalised image name → size in bytes → number of nodes holding it at that size
        self.image_sizes = image_sizes

    def have_pods_with_affinity(self) -> list[NodeInfo]:
        if self._affinity is None:
            return [n for n in self.nodes if n.pods_with_affinity]
        return [n for n in self._affinity.values() if n.node is not None]

    def have_pods_with_required_anti_affinity(self) -> list[NodeInfo]:
        if self._anti is None:
            return [n for n in self.nodes if n.pods_with_required_anti_affinity]
        return [n for n in self._anti.values() if n.node is not None]

    @property
    def affinity_index(self) -> AffinityIndex:
        """The cache's :class:`AffinityIndex`; a snapshot built by hand (tests) gets
        one computed from its nodes on first use."""
        if self._index is None:
            def all_pods():
                for n in self.nodes:
                    for pi in n.pods.values():
                        yield pi, n.labels
            idx = AffinityIndex(self.ns_labels, all_pods)
            for pi, labels in all_pods():
                if pi.has_affinity:
                    idx.pod_added(pi, labels)
            self._index = idx
        return self._index

    @property
    def selector_counts(self) -> SelectorCounts:
        """The cache's :class:`SelectorCounts` (built from the nodes for a snapshot
        made by hand)."""
        if self._selector_counts is None:
            self._selector_counts = SelectorCounts(
                lambda: ((pi, n.name) for n in self.nodes for pi in n.pods.values()),
                node_labels=lambda name: self.by_name[name].labels if name in self.by_name else None)
        return self._selector_counts

    def domain_values(self, key: str) -> dict[str, int]:
        """The values of node label ``key`` over the nodes → how many nodes have each
        (topology domains for PodTopologySpread); cached until :meth:`labels_changed`."""
        cache = self.__dict__.setdefault("_domains", {})
        d = cache.get(key)
        if d is None:
            d = {}
            for n in self.nodes:
                v = n.labels.get(key)
                if v is not None:
                    d[v] = d.get(v, 0) + 1
            cache[key] = d
        return d

    def labels_changed(self) -> None:
        """A node's labels changed: forget the cached :meth:`domain_values` and the
        nodes each node-affinity selector matches (plugins.nodeaffinity.matching_nodes)."""
        self.__dict__.pop("_domains", None)
        self.__dict__.pop("_node_affinity_matches", None)

    def get(self, name: str) -> NodeInfo | None:
        return self.by_name.get(name)

    def __len__(self) -> int:
        return len(self.nodes)


class Cache:
    """Nodes, bound pods and assumed pods. All methods are synchronous.

    Pods whose node is not (yet) known are kept on a placeholder NodeInfo (as
    kube-scheduler does) so that counts are right once the node arrives.
    """

    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        self._pod_node: dict[str, str] = {}       # pod key -> node name
        self._assumed: set[str] = set()
        self._binding_finished: set[str] = set()
        self._snapshot: Snapshot | None = None
        self._affinity_nodes: dict[str, NodeInfo] = {}
        self._anti_affinity_nodes: dict[str, NodeInfo] = {}
        self._image_counts: dict[str, int] = {}
        self._image_sizes: dict[str, dict[int, int]] = {}
        #: namespace name -> labels (from the namespaces informer)
        self._ns_labels: dict[str, dict[str, str]] = {}
        self.affinity_index = AffinityIndex(self.namespace_labels, self._all_counted_pods)
        self.selector_counts = SelectorCounts(self._all_placed_pods, node_labels=self._node_labels)

    def _node_labels(self, name: str) -> dict | None:
        ni = self._nodes.get(name)
        return ni.labels if ni is not None and ni.node is not None else None

    def _all_placed_pods(self):
        for ni in self._nodes.values():
            for pi in ni.pods.values():
                yield pi, ni.name

    def _all_counted_pods(self):
        for ni in self._nodes.values():
            if ni.node is not None:
                for pi in ni.pods.values():
                    yield pi, ni.labels

    # -- namespaces ------------------------------------------------------------
    def namespace_labels(self, name: str) -> dict[str, str]:
        """A namespace's labels, with ``kubernetes.io/metadata.name`` (which the
        apiserver sets on every namespace); {} for a namespace not seen."""
        return self._ns_labels.get(name) or {}

    def set_namespace(self, ns: dict) -> None:
        """A Namespace was added or updated (namespaceSelector in affinity terms)."""
        md = ns.get("metadata") or {}
        name = md.get("name") or ""
        labels = dict(md.get("labels") or {})
        labels.setdefault("kubernetes.io/metadata.name", name)
        if self._ns_labels.get(name) != labels:
            self._ns_labels[name] = labels
            self.affinity_index.namespaces_changed()

    def remove_namespace(self, name: str) -> None:
        if self._ns_labels.pop(name, None) is not None:
            self.affinity_index.namespaces_changed()

    # -- nodes -----------------------------------------------------------------
    def add_node(self, node: dict) -> NodeInfo:
        name = (node.get("metadata") or {}).get("name") or ""
        ni = self._nodes.get(name)
        if ni is None:
            ni = self._nodes[name] = NodeInfo(name=name)
        had_node = ni.node is not None
        old_images = ni.images if had_node else {}
        old_labels = ni.labels if had_node else {}
        ni.set_node(node)
        if old_labels != ni.labels or not had_node:
            self.selector_counts.nodes_changed()
        if old_labels != ni.labels and had_node and self._snapshot is not None:
            self._snapshot.labels_changed()
        if ni.pods and old_labels != ni.labels:
            self._relabel(ni, old_labels, ni.labels)
        if old_images != ni.images:
            self._count_images(old_images, -1)
            self._count_images(ni.images, 1)
        if not had_node:
            self._snapshot = None
        return ni

    def _count_images(self, images: dict[str, int], sign: int) -> None:
        for i, size in images.items():
            n = self._image_counts.get(i, 0) + sign
            if n > 0:
                self._image_counts[i] = n
            else:
                self._image_counts.pop(i, None)
            sizes = self._image_sizes.setdefault(i, {})
            n = sizes.get(size, 0) + sign
            if n > 0:
                sizes[size] = n
            else:
                sizes.pop(size, None)
                if not sizes:
                    del self._image_sizes[i]

    def _relabel(self, ni: NodeInfo, old: dict, new: dict) -> None:
        """Move the counts of ``ni``'s pods from the domains of ``old`` to ``new``."""
        for pi in ni.pods.values():
            self.affinity_index.pod_removed(pi, old)
            self.affinity_index.pod_added(pi, new)

    def _index(self, ni: NodeInfo) -> None:
        for idx, has in ((self._affinity_nodes, ni.pods_with_affinity),
                         (self._anti_affinity_nodes, ni.pods_with_required_anti_affinity)):
            if has:
                idx[ni.name] = ni
            else:
                idx.pop(ni.name, None)

    update_node = add_node

    def remove_node(self, name: str) -> None:
        ni = self._nodes.get(name)
        if ni is None:
            return
        if ni.node is not None:
            self._count_images(ni.images, -1)
            if ni.pods:
                self._relabel(ni, ni.labels, {})
        if ni.pods:  # keep a placeholder while pods still point at it
            ni.node = None
        else:
            del self._nodes[name]
        self._snapshot = None
        self.selector_counts.nodes_changed()

    def node_count(self) -> int:
        """How many nodes have a Node object: the snapshot's length (built only when a node
        was added or removed), so asking once per cycle costs no walk over the nodes."""
        return len(self.snapshot())

    # -- pods ------------------------------------------------------------------
    def _place(self, pi: PodInfo, node_name: str) -> None:
        ni = self._nodes.get(node_name)
        if ni is None:
            ni = self._nodes[node_name] = NodeInfo(name=node_name)
        ni.add_pod(pi)
        self._pod_node[pi.key] = node_name
        self.selector_counts.pod_added(pi, node_name)
        if ni.node is not None:
            self.affinity_index.pod_added(pi, ni.labels)
        if pi.has_affinity:
            self._index(ni)

    def _unplace(self, key: str) -> None:
        name = self._pod_node.pop(key, None)
        if name is None:
            return
        ni = self._nodes.get(name)
        if ni is not None:
            pi = ni.remove_pod(key)
            if pi is not None:
                self.selector_counts.pod_removed(pi, name)
            if pi is not None and ni.node is not None:
                self.affinity_index.pod_removed(pi, ni.labels)
            self._index(ni)
            if ni.node is None and not ni.pods:
                del self._nodes[name]
                self._affinity_nodes.pop(name, None)
                self._anti_affinity_nodes.pop(name, None)

    def assume_pod(self, pi: PodInfo, node_name: str) -> None:
        """Count ``pi`` on ``node_name`` before the binding is stored.

        Raises ValueError if the pod is already in the cache (cache.go AssumePod)."""
        if pi.key in self._pod_node:
            raise ValueError(f"pod {pi.key} is in the cache, so can't be assumed")
        self._place(pi, node_name)
        self._assumed.add(pi.key)

    def finish_binding(self, key: str) -> None:
        """The bind call returned; the pod stays assumed until the informer confirms it."""
        if key in self._assumed:
            self._binding_finished.add(key)

    def forget_pod(self, key: str) -> None:
        """Undo :meth:`assume_pod` (binding failed)."""
        if key in self._assumed:
            self._assumed.discard(key)
            self._binding_finished.discard(key)
            self._unplace(key)

    def is_assumed(self, key: str) -> bool:
        return key in self._assumed

    def add_pod(self, pod: dict) -> None:
        """A bound pod from the informer (confirms an assumed pod)."""
        pi = PodInfo(pod)
        if pi.key in self._assumed:
            self._assumed.discard(pi.key)
            self._binding_finished.discard(pi.key)
        if pi.key in self._pod_node:
            self._unplace(pi.key)
        self._place(pi, pi.node_name)

    def update_pod(self, old: dict, new: dict) -> None:
        """A bound pod changed. When nothing the cache derives from it changed (spec,
        labels, uid, deletionTimestamp — a kubelet's status update), the cached PodInfo
        just takes the new object; otherwise the pod is counted again (cache.go UpdatePod)."""
        key = PodInfo.key_of(new)
        name = self._pod_node.get(key)
        if name is not None and key not in self._assumed:
            ni = self._nodes.get(name)
            pi = ni.pods.get(key) if ni is not None else None
            if pi is not None and _same_placement(pi.pod, new):
                pi.pod = new
                return
        self.add_pod(new)

    def remove_pod(self, pod: dict) -> None:
        md = pod.get("metadata") or {}
        key = f"{md.get('namespace') or 'default'}/{md.get('name')}"
        self._assumed.discard(key)
        self._binding_finished.discard(key)
        self._unplace(key)

    def has_pod(self, key: str) -> bool:
        return key in self._pod_node

    def pod_node(self, key: str) -> str | None:
        return self._pod_node.get(key)

    # -- snapshot --------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The nodes a scheduling cycle considers (only those with a Node object)."""
        if self._snapshot is None:
            nodes = [n for n in self._nodes.values() if n.node is not None]
            self._snapshot = Snapshot(nodes, {n.name: n for n in nodes}, self._affinity_nodes,
                                      self._anti_affinity_nodes, self._image_counts,
                                      self.affinity_index, self.namespace_labels,
                                      self.selector_counts, self._image_sizes)
            event(log, "cache.snapshot", logging.DEBUG, nodes=len(nodes))
        return self._snapshot

    def nodes(self) -> Iterable[NodeInfo]:
        return self._nodes.values()
