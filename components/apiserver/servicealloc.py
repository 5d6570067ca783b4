"""ClusterIP and NodePort allocation for Services, after ``pkg/registry/core/service/storage/alloc.go``.

* ``spec.clusterIP`` unset on a ClusterIP/NodePort/LoadBalancer Service → a random free
  address of the service CIDR (``--service-cluster-ip-range``, default ``10.96.0.0/12``;
  the network and broadcast addresses and the first address — the ``kubernetes``
  Service's — are never handed out); ``"None"`` → headless, nothing allocated; an
  address given → it must be in the range and free. ``clusterIPs`` mirrors it.
* NodePort/LoadBalancer: every port without ``nodePort`` gets a random free port of
  ``--service-node-port-range`` (default 30000-32767); a given one must be in range and free.
* On update the allocated values carry over when the new object leaves them unset
  (``patchAllocatedValues``): ``kubectl apply`` sends no clusterIP; ports gain node ports
  when the type becomes NodePort/LoadBalancer. ExternalName Services hold neither.

"Allocated" = used by a Service in the watch cache, or handed out in the last
``hold`` seconds (a create still on its way to etcd). Errors are 422 Invalid causes with
the Kubernetes messages (``ipallocator``/``portallocator`` ErrNotInRange, ErrAllocated).

Several apiservers share the ranges through etcd (:meth:`ServiceAllocator.allocate_shared`):
each address or port newly handed out is also claimed by creating
``/registry/ranges/serviceips/<ip>`` / ``/registry/ranges/servicenodeports/<port>`` if absent,
bound to an etcd lease of ``hold`` seconds. The create is the lock, as the IPAddress
allocator's create of an ``IPAddress`` object named by the address is
(``pkg/registry/core/service/ipallocator/ipallocator.go`` Allocate: AlreadyExists = allocated;
the legacy allocator's compare-and-swap of one bitmap, ``/registry/ranges/serviceips``, plays
the same part): a value another replica claimed first is refused (a given one) or picked
again (a random one), after reading every claim. The claim only has to outlive the window in which the Service is
written but not yet in every replica's watch cache, so it expires instead of being released,
and no repair loop is needed for the claims of Services never written.
"""

from __future__ import annotations

import copy
import ipaddress
import random
import time
from typing import Any, Callable, Iterable

from aetcd import rpc

from components.apiserver import status as st
from controlplane.storage.etcd import prefix_end

ALLOCATING_TYPES = ("ClusterIP", "NodePort", "LoadBalancer")
#: where the apiservers claim addresses and node ports (a key per value, with a lease)
IP_CLAIMS = "/registry/ranges/serviceips/"
PORT_CLAIMS = "/registry/ranges/servicenodeports/"
NODE_PORT_TYPES = ("NodePort", "LoadBalancer")


def _invalid(message: str, field: str) -> dict:
    """A ``FieldValueInvalid`` StatusCause of ``field`` (``message`` is the whole error body)."""
    return st.cause("FieldValueInvalid", message, field)


class AllocationError(Exception):
    """A given clusterIP/nodePort that cannot be had: ``causes`` as StatusCause dicts; ``full``
    when no free value was left to pick."""

    def __init__(self, causes: list[dict], full: bool = False) -> None:
        super().__init__("; ".join(f"{c['field']}: {c['message']}" for c in causes))
        self.causes = causes
        self.full = full


def _random_scan(lo: int, hi: int, free: Callable[[int], bool]) -> int | None:
    """The first ``n`` in ``lo..hi`` (inclusive) with ``free(n)``, scanning from a random
    offset and wrapping; a few random probes first, so a large, sparsely used range costs no
    scan. None when no value is free."""
    if hi < lo:
        return None
    for _ in range(16):
        n = random.randint(lo, hi)
        if free(n):
            return n
    start = random.randint(lo, hi)
    for k in range(hi - lo + 1):
        n = lo + (start - lo + k) % (hi - lo + 1)
        if free(n):
            return n
    return None


def parse_port_range(text: str) -> tuple[int, int]:
    """``"30000-32767"`` → (30000, 32767); raises ValueError."""
    lo, _, hi = text.partition("-")
    a, b = int(lo), int(hi or lo)
    if not (0 < a <= b <= 65535):
        raise ValueError(f"invalid port range {text!r}")
    return a, b


class ServiceAllocator:
    """Allocates from ``cidr`` and ``node_ports``; ``services()`` yields the stored Services."""

    def __init__(self, cidr: str = "10.96.0.0/12", node_ports: str = "30000-32767",
                 services: Callable[[], Iterable[dict]] = lambda: (), hold: float = 30.0,
                 store: Any = None) -> None:
        self.net = ipaddress.ip_network(cidr, strict=False)
        self.port_range = parse_port_range(node_ports)
        self.services = services
        self.hold = hold
        #: the etcd :class:`controlplane.storage.store.Store` claims are made in (None: this
        #: process is the only allocator)
        self.store = store
        self._held_ips: dict[str, float] = {}
        self._held_ports: dict[int, float] = {}
        #: the claims in etcd at the last read (every replica's, replaced at each read: a claim
        #: an attempt made and then undid must not stay taken here)
        self._claimed_ips: set[str] = set()
        self._claimed_ports: set[int] = set()
        self._lease: tuple[int, float] = (0, 0.0)  # (etcd lease ID, monotonic time granted)

    @property
    def kubernetes_ip(self) -> str:
        """The first address of the range: the ``kubernetes`` Service's (``default``)."""
        return str(self.net.network_address + 1)

    # ----------------------------------------------------------------- usage
    def _used(self, skip_uid: str | None) -> tuple[set[str], set[int]]:
        now = time.monotonic()
        for held in (self._held_ips, self._held_ports):
            d: dict[Any, float] = held
            for k in [k for k, t in d.items() if now - t > self.hold]:
                del d[k]
        ips, ports = set(self._held_ips) | self._claimed_ips, set(self._held_ports) | self._claimed_ports
        for svc in self.services():
            md, spec = svc.get("metadata") or {}, svc.get("spec") or {}
            if skip_uid and md.get("uid") == skip_uid:
                continue
            for ip in spec.get("clusterIPs") or [spec.get("clusterIP")]:
                if ip and ip != "None":
                    ips.add(ip)
            for p in spec.get("ports") or []:
                if isinstance(p, dict) and p.get("nodePort"):
                    ports.add(p["nodePort"])
        return ips, ports

    def _pick_ip(self, used: set[str]) -> str:
        """A free address: a random offset, then the first free one scanning forward and
        wrapping (the bitmap allocator's ``randomScanStrategy``, ``pkg/registry/core/service/
        allocator/utils.go``), so replicas picking at once from a nearly full range rarely pick
        the same one. Raises :class:`AllocationError` when none is free."""
        first = int(self.net.network_address)
        lo, hi = 2, self.net.num_addresses - 2          # skip network, .1 (kubernetes), broadcast
        found = _random_scan(lo, hi, lambda off: str(ipaddress.ip_address(first + off)) not in used)
        if found is None:
            raise AllocationError([_invalid("failed to allocate a serviceIP: range is full", "spec.clusterIPs")],
                                  full=True)
        return str(ipaddress.ip_address(first + found))

    def _pick_port(self, used: set[int]) -> int:
        """A free node port, picked as :meth:`_pick_ip` picks; AllocationError when none is free."""
        lo, hi = self.port_range
        found = _random_scan(lo, hi, lambda p: p not in used)
        if found is None:
            raise AllocationError([_invalid("failed to allocate a nodePort: range is full", "spec.ports")], full=True)
        return found

    # ----------------------------------------------------------------- API
    def allocate(self, svc: dict, old: dict | None = None, dry_run: bool = False) -> None:
        """Fill ``svc``'s clusterIP(s) and node ports in place (create, or update from ``old``).

        Raises :class:`AllocationError` for a given address/port out of range or taken."""
        spec = svc.setdefault("spec", {})
        ospec = (old or {}).get("spec") or {}
        typ = spec.get("type") or "ClusterIP"
        uid = ((old or svc).get("metadata") or {}).get("uid")
        used_ips, used_ports = self._used(uid)
        causes: list[dict] = []
        if typ == "ExternalName":
            return
        # cluster IP
        ip = spec.get("clusterIP") or ""
        if not ip and ospec.get("clusterIP"):
            ip = ospec["clusterIP"]           # carried over (patchAllocatedValues)
        if ip == "None":
            spec["clusterIP"], spec["clusterIPs"] = "None", ["None"]
        elif typ in ALLOCATING_TYPES:
            if not ip:
                ip = self._pick_ip(used_ips)
                if not dry_run:
                    self._held_ips[ip] = time.monotonic()
            elif ip != ospec.get("clusterIP"):
                causes += self._check_ip(ip, used_ips)
            spec["clusterIP"], spec["clusterIPs"] = ip, [ip]
        # node ports
        old_ports = {(p.get("port"), p.get("protocol", "TCP")): p.get("nodePort")
                     for p in ospec.get("ports") or [] if isinstance(p, dict)}
        for i, p in enumerate(spec.get("ports") or []):
            if not isinstance(p, dict):
                continue
            if typ not in NODE_PORT_TYPES:
                continue
            np = p.get("nodePort")
            prev = old_ports.get((p.get("port"), p.get("protocol", "TCP")))
            if not np and prev:
                p["nodePort"] = prev
                continue
            if not np:
                np = self._pick_port(used_ports)
                used_ports.add(np)
                if not dry_run:
                    self._held_ports[np] = time.monotonic()
                p["nodePort"] = np
            elif np != prev:
                causes += self._check_port(np, used_ports, i)
                used_ports.add(np)
        if causes:
            raise AllocationError(causes)

    #: attempts at picking values no other replica claimed before giving up (a 422). Each lost
    #: attempt is a value another replica won, and a full range fails the pick itself, so the
    #: bound is only a guard; a nearly full range shared by busy replicas needs several.
    SHARED_ATTEMPTS = 64

    async def allocate_shared(self, svc: dict, old: dict | None = None, dry_run: bool = False) -> None:
        """:meth:`allocate`, then claim every newly allocated address and node port in etcd (see
        the module docstring); when a picked value was claimed by another apiserver, every claim
        is read (replacing the last read) and the allocation done again, a given one is refused as allocated. Without ``store`` (or
        on a dry run) the same as :meth:`allocate`. Raises :class:`AllocationError`, or
        StorageError when etcd cannot be reached."""
        if self.store is None or dry_run:
            if self.store is not None:  # a dry run claims nothing but answers values free in etcd
                await self._learn_claims()
            self.allocate(svc, old, dry_run)
            return
        given = copy.deepcopy(svc.get("spec") or {})
        fresh = False  # whether the claims were read since the last pick
        for _ in range(self.SHARED_ATTEMPTS):
            spec = svc["spec"] = copy.deepcopy(given)
            try:
                self.allocate(svc, old, dry_run)
            except AllocationError as e:
                if not e.full or fresh:
                    raise
                await self._learn_claims()  # full by an old read: other replicas' undone claims
                fresh = True
                continue
            if not await self._claim(spec, (old or {}).get("spec") or {}, given):
                return
            fresh = True  # _claim read every claim before answering "pick again"
        raise AllocationError([_invalid("failed to allocate a serviceIP: range is full", "spec.clusterIPs")])

    async def _claim(self, spec: dict, ospec: dict, given: dict) -> bool:
        """Claim the values ``spec`` holds that ``ospec`` did not; False when all were had, True
        when a picked one was taken (every claim read: pick again).
        AllocationError for a given one. On either failure the claims this attempt made are
        deleted and its picks no longer held here, so nothing leaks from the range."""
        ips = [ip for ip in spec.get("clusterIPs") or [] if ip and ip != "None"
               and ip not in (ospec.get("clusterIPs") or [])]
        old_ports = {p.get("nodePort") for p in ospec.get("ports") or [] if isinstance(p, dict)}
        ports = [(i, p["nodePort"]) for i, p in enumerate(spec.get("ports") or [])
                 if isinstance(p, dict) and p.get("nodePort") and p["nodePort"] not in old_ports]
        if not ips and not ports:
            return False
        given_ips = set(given.get("clusterIPs") or [given.get("clusterIP")])
        given_ports = {p.get("nodePort") for p in given.get("ports") or [] if isinstance(p, dict)}
        wanted: list[tuple[str, Any, str]] = [  # (claim key, value, field) in claim order
            *((f"{IP_CLAIMS}{ip}", ip, "spec.clusterIPs") for ip in ips),
            *((f"{PORT_CLAIMS}{port}", port, f"spec.ports[{i}].nodePort") for i, port in ports)]
        lease = await self._hold_lease()
        made: list[str] = []
        for key, value, field in wanted:
            if await self.store.reserve(key, b"", lease):
                made.append(key)
                continue
            await self._release(made, ips + [p for _, p in ports], given_ips | given_ports)
            if value in (given_ips if isinstance(value, str) else given_ports):
                msg = (f'Invalid value: ["{value}"]: failed to allocate IP {value}: provided IP is already allocated'
                       if isinstance(value, str) else f"Invalid value: {value}: provided port is already allocated")
                raise AllocationError([_invalid(msg, field)])
            await self._learn_claims()
            return True
        return False

    async def _release(self, keys: list[str], picked: list[Any], given: set[Any]) -> None:
        """Undo an attempt: delete its claim ``keys`` and forget the local hold of its picks."""
        for key in keys:
            await self.store.etcd.txn(compare=[], success=[rpc.RequestOp(
                request_delete_range=rpc.DeleteRangeRequest(key=key.encode()))])
        for v in picked:
            if v not in given:
                if isinstance(v, str):
                    self._held_ips.pop(v, None)
                else:
                    self._held_ports.pop(v, None)

    async def _learn_claims(self) -> None:
        """Take every address and port claimed in etcd now (one keys-only Range each) as the
        claimed sets, replacing the last read's, so the next pick avoids what the other replicas
        handed out and this one's cache lacks, and no longer avoids what they gave back."""
        ips: set[str] = set()
        ports: set[int] = set()
        for claims in (IP_CLAIMS, PORT_CLAIMS):
            prefix = claims.encode()
            resp = await self.store.etcd.range(prefix, prefix_end(prefix), keys_only=True)
            for kv in resp.kvs:
                value = kv.key[len(prefix):].decode()
                if claims == IP_CLAIMS:
                    ips.add(value)
                elif value.isdigit():
                    ports.add(int(value))
        self._claimed_ips, self._claimed_ports = ips, ports

    async def _hold_lease(self) -> int:
        """An etcd lease living at least ``hold`` seconds more: one granted for twice ``hold``
        is shared by the claims of ``hold`` seconds."""
        lease_id, granted = self._lease
        now = time.monotonic()
        if not lease_id or now - granted > self.hold:
            lease_id = await self.store.etcd.lease_grant(max(1, int(2 * self.hold)))
            self._lease = (lease_id, now)
        return lease_id

    def _check_ip(self, ip: str, used: set[str]) -> list[dict]:
        field = "spec.clusterIPs"
        try:
            addr = ipaddress.ip_address(ip)
        except ValueError:
            return [_invalid(f'Invalid value: ["{ip}"]: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)', field)]
        if addr not in self.net or addr in (self.net.network_address, self.net.broadcast_address):
            return [_invalid(f'Invalid value: ["{ip}"]: failed to allocate IP {ip}: the provided IP ({ip}) is '
                                f"not in the valid range. The range of valid IPs is {self.net}", field)]
        if ip in used:
            return [_invalid(f'Invalid value: ["{ip}"]: failed to allocate IP {ip}: provided IP is already allocated', field)]
        return []

    def _check_port(self, port: int, used: set[int], i: int) -> list[dict]:
        field = f"spec.ports[{i}].nodePort"
        lo, hi = self.port_range
        if not isinstance(port, int) or not lo <= port <= hi:
            return [_invalid(f"Invalid value: {port}: provided port is not in the valid range. "
                                f"The range of valid ports is {lo}-{hi}", field)]
        if port in used:
            return [_invalid(f"Invalid value: {port}: provided port is already allocated", field)]
        return []
