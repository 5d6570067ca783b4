"""The node IPAM controller with the range allocator: every Node gets ``spec.podCIDR`` /
``spec.podCIDRs`` from ``--cluster-cidr`` (``pkg/controller/nodeipam/node_ipam_controller.go``,
``pkg/controller/nodeipam/ipam/range_allocator.go``; flags and checks from
``cmd/kube-controller-manager/app/core.go`` startNodeIpamController).

* Only with ``--allocate-node-cidrs`` (kube-controller-manager's default is false; kubeadm passes
  ``--allocate-node-cidrs=true --cluster-cidr=<podSubnet>`` when a pod subnet is set, and
  ``controlplane up`` does the same). Without it the controller does nothing, as kcm skips it.
* One :class:`~components.controller_manager.nodeipam.cidrset.CIDRSet` per cluster CIDR (one, or an
  IPv4 and an IPv6 one for dual stack), node masks from ``--node-cidr-mask-size`` (single stack) or
  ``--node-cidr-mask-size-ipv4`` (24) / ``--node-cidr-mask-size-ipv6`` (64).
* ``--service-cluster-ip-range`` (and a secondary range) is occupied wherever it overlaps a cluster
  CIDR (filterOutServiceRange), so no node gets service addresses.
* Before the first allocation every Node's existing ``spec.podCIDRs`` is occupied (the allocator is
  built from the node list); afterwards a Node added or updated with podCIDRs occupies them, one
  without is queued; a deleted Node's CIDRs are released (ReleaseCIDR), reused once the round-robin
  scan comes back to them.
* A queued node gets the next free CIDR of each set, written by a strategic merge PATCH
  ``{"spec": {"podCIDR": first, "podCIDRs": [...]}}`` (``pkg/util/node`` PatchNodeCIDRs). A failed
  PATCH releases the CIDRs (the node is retried by the queue's back-off); a node that vanished
  meanwhile releases them and is done.
* A full range: the Event ``CIDRNotAvailable`` ("Node NAME status is now: CIDRNotAvailable", type
  Normal, source ``cidrAllocator``: ``RecordNodeStatusChange``) and a retry with back-off. The range
  allocator writes no node condition (``NetworkUnavailable`` is the cloud allocator's / route
  controller's); the node stays without podCIDR and its kubelet reports the network not ready.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from controlplane.api.resources import NODES
from controlplane.client.rest import ApiError
from controlplane.log import event

from ..controller import Controller, ControllerContext
from ..controller_utils import meta
from .cidrset import CIDRRangeNoCIDRsRemaining, CIDRSet, IPNetwork, parse_cidr

log = logging.getLogger("controller-manager")

#: the defaults of --node-cidr-mask-size-ipv4 / -ipv6 (pkg/controller/nodeipam/config/v1alpha1)
DEFAULT_MASK_IPV4 = 24
DEFAULT_MASK_IPV6 = 64


@dataclass(frozen=True)
class IPAMConfig:
    """The checked node IPAM settings: ``cluster_cidrs`` (one network, or an IPv4 and an IPv6 one),
    the node mask size of each, and the service ranges to leave out."""

    cluster_cidrs: tuple[IPNetwork, ...]
    node_mask_sizes: tuple[int, ...]
    service_cidrs: tuple[IPNetwork, ...] = ()


def _cidrs(text: str, flag: str) -> list[IPNetwork]:
    out = []
    for part in (p.strip() for p in text.split(",")):
        try:
            out.append(parse_cidr(part))
        except ValueError as e:
            raise ValueError(f"{flag}: {e}") from None
    return out


def parse_ipam_config(cluster_cidr: str, node_cidr_mask_size: int = 0, node_cidr_mask_size_ipv4: int = 0,
                      node_cidr_mask_size_ipv6: int = 0, service_cluster_ip_range: str = "") -> IPAMConfig:
    """Check the flags as kube-controller-manager does (processCIDRs, setNodeCIDRMaskSizes,
    NewNodeIpamController); 0 means a mask flag was not given. Raises ValueError with one line:
    a missing or malformed ``--cluster-cidr``, two CIDRs of one family or more than two, a mask
    flag of the wrong stack, a node mask shorter than the cluster's or too deep for IPv6."""
    if not cluster_cidr.strip():
        raise ValueError("--cluster-cidr is required with --allocate-node-cidrs")
    cidrs = _cidrs(cluster_cidr, "--cluster-cidr")
    if len(cidrs) > 2:
        raise ValueError(f"--cluster-cidr: len of clusters cidrs is:{len(cidrs)} > more than max allowed of 2")
    dual = len(cidrs) == 2
    if dual and cidrs[0].version == cidrs[1].version:
        raise ValueError("--cluster-cidr: len of ClusterCIDRs==2 and they are not configured as dual stack "
                         "(at least one from each IPFamily")
    if dual and node_cidr_mask_size:
        raise ValueError("usage of --node-cidr-mask-size is not allowed with dual-stack clusters")
    sizes = []
    for net in cidrs:
        if node_cidr_mask_size:
            size = node_cidr_mask_size
        elif net.version == 4:
            size = node_cidr_mask_size_ipv4 or DEFAULT_MASK_IPV4
        else:
            size = node_cidr_mask_size_ipv6 or DEFAULT_MASK_IPV6
        if size < net.prefixlen:
            raise ValueError(f"--cluster-cidr {net}: mask size of cluster CIDR must be less than or equal to "
                             f"--node-cidr-mask-size configured for CIDR family (got {size})")
        CIDRSet(net, size)   # the remaining checks (too deep, beyond the family's bits)
        sizes.append(size)
    services = _cidrs(service_cluster_ip_range, "--service-cluster-ip-range") if service_cluster_ip_range else []
    return IPAMConfig(tuple(cidrs), tuple(sizes), tuple(services))


def _node_ref(node: dict) -> dict:
    md = meta(node)
    return {"kind": "Node", "apiVersion": "v1", "metadata": {"name": md.get("name"), "uid": md.get("uid", "")}}


def pod_cidrs(node: dict) -> list[str]:
    """``spec.podCIDRs`` (or the single ``spec.podCIDR`` of an older writer)."""
    spec = node.get("spec") or {}
    return list(spec.get("podCIDRs") or ([spec["podCIDR"]] if spec.get("podCIDR") else []))


class NodeIpamController(Controller):
    """See the module docstring. Queue keys are node names. ``sets``: one CIDRSet per cluster CIDR
    (empty when ``--allocate-node-cidrs`` is off)."""

    name = "nodeipam"
    workers = 10   # cidrUpdateWorkers is 30 in Go; the writes here are cheaper to queue

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        cfg = ctx.config.node_ipam
        self.enabled = cfg is not None
        self.sets: list[CIDRSet] = []
        self.nodes = ctx.informers.informer(NODES)
        self.recorder = ctx.recorder("cidrAllocator")
        #: node name → the CIDRs written for it that the informer does not show yet
        self.assigned: dict[str, list[str]] = {}
        self._initialized = False
        if cfg is None:
            return
        self.sets = [CIDRSet(net, size) for net, size in zip(cfg.cluster_cidrs, cfg.node_mask_sizes)]
        for svc in cfg.service_cidrs:
            for s in self.sets:
                net = s.cluster_cidr
                if svc.version == net.version and (svc.subnet_of(net) or net.subnet_of(svc)):  # type: ignore[arg-type]
                    s.occupy(svc)
        self.nodes.add_handlers(self._on_node, lambda old, new: self._on_node(new), self._on_delete)

    # -- informer side -------------------------------------------------------------
    def _occupy(self, node: dict) -> None:
        """Mark the node's podCIDRs used; a CIDR outside every set (another configuration's) is
        logged and left alone (Go refuses to start on it)."""
        for idx, cidr in enumerate(pod_cidrs(node)):
            if idx >= len(self.sets):
                break
            try:
                self.sets[idx].occupy(cidr)
            except ValueError as e:
                event(log, "nodeipam.occupy_failed", logging.WARNING, node=meta(node).get("name"), error=str(e))

    def _on_node(self, node: dict) -> None:
        name = meta(node).get("name") or ""
        if pod_cidrs(node):
            self.assigned.pop(name, None)
            if self._initialized:
                self._occupy(node)
        else:
            self.enqueue(name)

    def _on_delete(self, node: dict) -> None:
        name = meta(node).get("name") or ""
        for idx, cidr in enumerate(pod_cidrs(node) or self.assigned.get(name) or []):
            if idx < len(self.sets):
                try:
                    self.sets[idx].release(cidr)
                    event(log, "nodeipam.released", node=name, cidr=cidr)
                except ValueError:
                    pass
        self.assigned.pop(name, None)

    def initialize(self) -> None:
        """Occupy every stored Node's podCIDRs (once, before the first allocation)."""
        if not self._initialized:
            self._initialized = True
            for node in list(self.nodes.store.values()):
                self._occupy(node)

    async def run(self, workers: int | None = None) -> None:
        """Occupy every podCIDR the Nodes already hold, then run ``workers`` workers until
        cancelled; with ``--allocate-node-cidrs`` false, log ``nodeipam.disabled`` and return
        (kube-controller-manager starts no range allocator then, ``nodeipam/node_ipam_controller.go``)."""
        if not self.enabled:
            event(log, "nodeipam.disabled", reason="--allocate-node-cidrs is false")
            return
        self.initialize()
        await super().run(workers)

    # -- the worker ----------------------------------------------------------------
    async def sync(self, key: str) -> None:
        """Give Node ``key`` (its name) one CIDR per configured cluster CIDR, written as
        ``spec.podCIDR`` / ``spec.podCIDRs`` by a strategic-merge PATCH; a Node that has them, or is
        gone, is left alone; a full range records ``CIDRNotAvailable`` (range_allocator.go
        AllocateOrOccupyCIDR)."""
        self.initialize()
        node = self.nodes.store.get(key)
        if node is None or pod_cidrs(node) or key in self.assigned:
            return
        allocated: list[IPNetwork] = []
        try:
            for s in self.sets:
                allocated.append(s.allocate_next())
        except CIDRRangeNoCIDRsRemaining:
            self._release(allocated)
            self.recorder.event(_node_ref(node), "Normal", "CIDRNotAvailable",
                                f"Node {key} status is now: CIDRNotAvailable")
            event(log, "nodeipam.cidr_not_available", logging.WARNING, node=key)
            raise
        cidrs = [str(c) for c in allocated]
        try:
            await self.client.patch(NODES, key, {"spec": {"podCIDR": cidrs[0], "podCIDRs": cidrs}},
                                    patch_type="strategic")
        except ApiError as e:
            self._release(allocated)
            if e.code == 404:
                return
            raise
        except Exception:
            self._release(allocated)
            raise
        self.assigned[key] = cidrs
        event(log, "nodeipam.allocated", node=key, cidrs=",".join(cidrs))

    def _release(self, cidrs: list[IPNetwork]) -> None:
        for s, c in zip(self.sets, cidrs):
            s.release(c)
