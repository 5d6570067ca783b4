"""Pod IP address management for one simulated node (host-local IPAM).

A node owns ``spec.podCIDR`` (e.g. ``10.244.1.0/24``); each pod sandbox gets the
lowest free address, skipping the network address, the gateway (``.1``, taken by
the bridge in the CNI ``bridge`` + ``host-local`` setup) and the broadcast address.
Source of the convention: containernetworking/plugins ``plugins/ipam/host-local``
(range start = network + 2 when a gateway is set).
"""

from __future__ import annotations

import ipaddress


class IPExhausted(RuntimeError):
    """No free address is left in the node's pod CIDR."""


class NetworkNotReady(RuntimeError):
    """The node has no pod CIDR yet (the node IPAM controller has not written ``spec.podCIDR``)."""


class IPAM:
    """Allocates pod IPs from one IPv4 CIDR.

    ``allocate(owner)`` → ``"10.244.1.2"`` (idempotent per owner, e.g. a pod uid);
    ``release(owner)``; ``reserve(owner, ip)`` marks an address in use (adoption
    after a kubelet restart). Raises ValueError for a malformed CIDR and
    :class:`IPExhausted` when the range is full. ``cidr`` None or "": no range yet —
    ``allocate`` raises :class:`NetworkNotReady` and ``reserve`` refuses until :meth:`set_cidr`.
    """

    def __init__(self, cidr: str | None) -> None:
        self._by_owner: dict[str, str] = {}
        self._used: set[str] = set()
        self._next = 0  # offset hint from the first allocatable address
        self.network: ipaddress.IPv4Network | None = None
        self.cidr = ""
        if cidr:
            self.set_cidr(cidr)

    @property
    def ready(self) -> bool:
        """Whether the node's pod CIDR is known."""
        return self.network is not None

    def set_cidr(self, cidr: str) -> None:
        """Use ``cidr`` from now on (the node's podCIDR, once written); addresses already handed
        out stay theirs. ValueError for a malformed CIDR."""
        try:
            self.network = ipaddress.IPv4Network(cidr, strict=False)
        except ValueError as e:
            raise ValueError(f"invalid pod CIDR {cidr!r}: {e}") from None
        self.cidr = str(self.network)
        self.gateway = self.network.network_address + 1

    @property
    def capacity(self) -> int:
        """Number of allocatable addresses (excludes network, gateway, broadcast)."""
        return max(self.network.num_addresses - 3, 0) if self.network is not None else 0

    def allocate(self, owner: str) -> str:
        if owner in self._by_owner:
            return self._by_owner[owner]
        if self.network is None:
            raise NetworkNotReady("the node has no pod CIDR yet")
        first = int(self.network.network_address) + 2
        n = self.capacity
        for i in range(n):
            off = (self._next + i) % n
            ip = str(ipaddress.IPv4Address(first + off))
            if ip not in self._used:
                self._used.add(ip)
                self._by_owner[owner] = ip
                self._next = (off + 1) % n if n else 0
                return ip
        raise IPExhausted(f"no free IP address in pod CIDR {self.cidr}")

    def reserve(self, owner: str, ip: str) -> bool:
        """Mark ``ip`` as used by ``owner``; False if it is outside the CIDR or taken."""
        try:
            addr = ipaddress.IPv4Address(ip)
        except ValueError:
            return False
        if self.network is None or addr not in self.network or (ip in self._used and self._by_owner.get(owner) != ip):
            return False
        self._used.add(ip)
        self._by_owner[owner] = ip
        return True

    def release(self, owner: str) -> str | None:
        ip = self._by_owner.pop(owner, None)
        if ip is not None:
            self._used.discard(ip)
        return ip

    def in_use(self) -> int:
        return len(self._used)
