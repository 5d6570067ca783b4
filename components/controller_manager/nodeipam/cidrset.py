"""The set of node CIDRs carved out of one cluster CIDR, as
``pkg/controller/nodeipam/ipam/cidrset/cidr_set.go`` (``CidrSet``) keeps it.

A cluster CIDR of prefix length ``c`` split into node CIDRs of prefix length ``n`` holds
``2 ** (n - c)`` node CIDRs, numbered from 0 by their position in the cluster CIDR. The set
tracks which numbers are used:

* :meth:`CIDRSet.allocate_next` takes the first free one from ``next_candidate`` on (round
  robin: after a release the freed block is only reused once the scan wraps around, as Go's
  ``nextCandidate``), raising :class:`CIDRRangeNoCIDRsRemaining` when none is left;
* :meth:`CIDRSet.occupy` marks every node CIDR a given CIDR covers (a node's existing podCIDR at
  start, or the service range filtered out), succeeding when already used;
* :meth:`CIDRSet.release` frees them.

An IPv6 cluster CIDR may be split at most 16 bits deeper (``clusterSubnetMaxDiff``: Go's bitmap is
uncompressed); IPv4 has no such limit in Go. Here the used numbers are a Python ``set``, so memory
follows what is allocated, not the range. Addresses are Python :mod:`ipaddress` objects.
"""

from __future__ import annotations

import ipaddress
from typing import Union

IPNetwork = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]

#: the most bits an IPv6 node CIDR may be deeper than its cluster CIDR (cidr_set.go clusterSubnetMaxDiff)
CLUSTER_SUBNET_MAX_DIFF = 16


class CIDRRangeNoCIDRsRemaining(RuntimeError):
    """No node CIDR is left in the cluster CIDR (Go's ``ErrCIDRRangeNoCIDRsRemaining``)."""

    def __init__(self) -> None:
        super().__init__("CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range")


class CIDRSetSubNetTooBig(ValueError):
    """An IPv6 node mask more than 16 bits deeper than the cluster's (``ErrCIDRSetSubNetTooBig``)."""

    def __init__(self) -> None:
        super().__init__("New CIDR set failed; the node CIDR size is too big")


def parse_cidr(text: str) -> IPNetwork:
    """``"10.244.0.0/16"`` → the network, host bits cleared as Go's ``net.ParseCIDR`` does
    (``"10.244.1.7/16"`` is ``10.244.0.0/16``). Raises ValueError ``invalid CIDR address: TEXT``."""
    if "/" not in text:
        raise ValueError(f"invalid CIDR address: {text}")
    try:
        return ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        raise ValueError(f"invalid CIDR address: {text}") from None


class CIDRSet:
    """The node CIDRs of ``cluster_cidr`` (a network or its text) with prefix length
    ``node_mask_size``. Raises ValueError when the node mask is shorter than the cluster's or
    longer than the family allows, :class:`CIDRSetSubNetTooBig` for too deep an IPv6 split."""

    def __init__(self, cluster_cidr: IPNetwork | str, node_mask_size: int) -> None:
        net = parse_cidr(cluster_cidr) if isinstance(cluster_cidr, str) else cluster_cidr
        if not net.prefixlen <= node_mask_size <= net.max_prefixlen:
            raise ValueError(f"node CIDR mask size {node_mask_size} must be between the cluster CIDR's "
                             f"{net.prefixlen} and {net.max_prefixlen}")
        if net.version == 6 and node_mask_size - net.prefixlen > CLUSTER_SUBNET_MAX_DIFF:
            raise CIDRSetSubNetTooBig()
        self.cluster_cidr = net
        self.node_mask_size = node_mask_size
        self.max_cidrs = 1 << (node_mask_size - net.prefixlen)
        self.next_candidate = 0
        self._shift = net.max_prefixlen - node_mask_size
        self._base = int(net.network_address)
        self._used: set[int] = set()

    @property
    def allocated(self) -> int:
        """How many node CIDRs are in use."""
        return len(self._used)

    def index_to_cidr(self, index: int) -> IPNetwork:
        """Node CIDR number ``index`` (0 ≤ index < max_cidrs)."""
        addr = self._base | (index << self._shift)
        return ipaddress.ip_network((addr, self.node_mask_size))

    def allocate_next(self) -> IPNetwork:
        """Mark the next free node CIDR used and return it; raises
        :class:`CIDRRangeNoCIDRsRemaining` when every one is used."""
        if len(self._used) >= self.max_cidrs:
            raise CIDRRangeNoCIDRsRemaining()
        candidate = self.next_candidate
        while candidate in self._used:
            candidate = (candidate + 1) % self.max_cidrs
        self.next_candidate = (candidate + 1) % self.max_cidrs
        self._used.add(candidate)
        return self.index_to_cidr(candidate)

    def _indices(self, cidr: IPNetwork | str) -> range:
        """The node CIDR numbers ``cidr`` covers (cidr_set.go getBeginningAndEndIndices): all of
        them when it contains the cluster CIDR. ValueError when it is outside the cluster CIDR."""
        net = parse_cidr(cidr) if isinstance(cidr, str) else cidr
        cluster = self.cluster_cidr
        if net.version != cluster.version or not (net.subnet_of(cluster) or cluster.subnet_of(net)):  # type: ignore[arg-type]
            raise ValueError(f"cidr {net} is out the range of cluster cidr {cluster}")
        if net.prefixlen <= cluster.prefixlen:
            return range(0, self.max_cidrs)
        begin = (int(net.network_address) ^ self._base) >> self._shift
        end = (int(net.broadcast_address) ^ self._base) >> self._shift
        return range(begin, end + 1)

    def occupy(self, cidr: IPNetwork | str) -> None:
        """Mark every node CIDR ``cidr`` covers used (already used ones stay so). ValueError when
        ``cidr`` is malformed or outside the cluster CIDR."""
        self._used.update(self._indices(cidr))

    def release(self, cidr: IPNetwork | str) -> None:
        """Free every node CIDR ``cidr`` covers. ValueError as :meth:`occupy`."""
        self._used.difference_update(self._indices(cidr))

    def is_used(self, cidr: IPNetwork | str) -> bool:
        """Whether every node CIDR ``cidr`` covers is in use."""
        return all(i in self._used for i in self._indices(cidr))
