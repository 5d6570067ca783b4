"""The ``kubernetes`` Service's Endpoints kept by every apiserver replica through Leases.

kube-apiserver's lease endpoint reconciler (``pkg/controlplane/reconcilers/lease.go``,
``--endpoint-reconciler-type=lease``, the default): each replica keeps a record of its own
address in etcd with a TTL (``masterLeaseTTL`` 15 s, renewed every
``EndpointReconcilerConfig.Interval`` 10 s), lists every live record and writes the
``default/kubernetes`` Endpoints with exactly those addresses when they differ; on shutdown it
removes its own record and reconciles once more (``RemoveEndpoints``), so the Endpoints list
every live replica and no dead one for longer than the TTL.

The records here are ``coordination.k8s.io/v1`` Leases ``kube-apiserver-<id>`` in
``kube-system`` (as the apiserver identity Leases of ``pkg/controlplane/apiserver/
controller/apiserverleasegc`` are named and labelled, ``apiserver.kubernetes.io/identity:
kube-apiserver``), the replica's address in the annotation :data:`ENDPOINT_ANNOTATION`; a Lease
is live while ``renewTime + leaseDurationSeconds`` is in the future. Replicas sharing one
address and port (SO_REUSEPORT) are one Endpoints address.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from components.apiserver import strategy
from controlplane import apitime
from controlplane.api import resources as R
from controlplane.log import event
from controlplane.storage.errors import KeyExists, KeyNotFound, StorageError
from controlplane.storage.store import Store, collection_prefix, object_key

log = logging.getLogger("apiserver")

#: seconds a replica's Lease lives without renewal (``masterLeaseTTL``, ``DefaultEndpointReconcilerTTL``)
LEASE_TTL = 15
#: seconds between renewals and reconciles (``DefaultEndpointReconcilerInterval``)
INTERVAL = 10.0
#: the label of every apiserver identity Lease (``apiserverleasegc``)
IDENTITY_LABEL = "apiserver.kubernetes.io/identity"
#: where a Lease records its replica's ``ip:port``
ENDPOINT_ANNOTATION = "controlplane.io/apiserver-endpoint"


def new_identity() -> str:
    """A replica's Lease name, unique per process start: ``kube-apiserver-<10 hex>``."""
    return f"kube-apiserver-{uuid.uuid4().hex[:10]}"


def endpoints_subsets(endpoints: list[tuple[str, int]]) -> list[dict[str, Any]]:
    """Endpoints ``subsets`` for ``(ip, port)`` pairs: one subset per port, its addresses
    sorted (the reconciler's ``endpointsv1.RepackSubsets`` order), the port named ``https``."""
    by_port: dict[int, set[str]] = {}
    for ip, port in endpoints:
        by_port.setdefault(port, set()).add(ip)
    return [{"addresses": [{"ip": ip} for ip in sorted(ips)],
             "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}
            for port, ips in sorted(by_port.items())]


def live_endpoints(leases: list[dict[str, Any]], now: float) -> list[tuple[str, int]]:
    """The ``(ip, port)`` of every apiserver Lease in ``leases`` still live at ``now`` (seconds
    since the epoch); Leases without the label or the annotation are not apiservers'."""
    out = []
    for lease in leases:
        md = lease.get("metadata") or {}
        spec = lease.get("spec") or {}
        addr = (md.get("annotations") or {}).get(ENDPOINT_ANNOTATION, "")
        if (md.get("labels") or {}).get(IDENTITY_LABEL) != "kube-apiserver" or ":" not in addr:
            continue
        renewed = apitime.time_or_none(spec.get("renewTime"))
        if renewed is None or renewed + int(spec.get("leaseDurationSeconds") or 0) <= now:
            continue
        host, _, port = addr.rpartition(":")
        try:
            out.append((host, int(port)))
        except ValueError:
            continue
    return out


class LeaseEndpointReconciler:
    """Keeps this replica's Lease ``identity`` (address ``host:port``) and the ``kubernetes``
    Endpoints in ``store``. :meth:`reconcile` once; :meth:`run` every :data:`INTERVAL` s until
    cancelled; :meth:`remove` at shutdown. StorageError from etcd is logged, never raised by
    :meth:`run`."""

    def __init__(self, store: Store, host: str, port: int, identity: str | None = None,
                 ttl: int = LEASE_TTL, interval: float = INTERVAL) -> None:
        self.store = store
        self.host, self.port = host, port
        self.identity = identity or new_identity()
        self.ttl, self.interval = ttl, interval
        self.leases = R.get("leases", "coordination.k8s.io")
        self.key = object_key(self.leases, "kube-system", self.identity)

    def _lease(self) -> dict[str, Any]:
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.identity, "namespace": "kube-system",
                             "labels": {IDENTITY_LABEL: "kube-apiserver"},
                             "annotations": {ENDPOINT_ANNOTATION: f"{self.host}:{self.port}"}},
                "spec": {"holderIdentity": self.identity, "leaseDurationSeconds": self.ttl,
                         "renewTime": apitime.now_micro()}}

    async def renew(self) -> None:
        """Create this replica's Lease, or move its ``renewTime`` to now."""
        want = self._lease()
        try:
            strategy.prepare_for_create("Lease", want, "kube-system", True)
            await self.store.create(self.key, want)
            return
        except KeyExists:
            pass

        def renewed(cur: dict[str, Any]) -> dict[str, Any]:
            cur["spec"] = {**(cur.get("spec") or {}), **want["spec"]}
            return cur
        await self.store.guaranteed_update(self.key, renewed, create_if_missing=False)

    async def reconcile(self, include_self: bool = True) -> list[tuple[str, int]]:
        """Renew (unless ``include_self`` is False), list the live Leases and write the Endpoints
        when their addresses differ; returns the endpoints written."""
        if include_self:
            await self.renew()
        leases = (await self.store.list(collection_prefix(self.leases, "kube-system"))).items
        eps = live_endpoints(leases, apitime.clock())
        if include_self and (self.host, self.port) not in eps:
            eps.append((self.host, self.port))
        subsets = endpoints_subsets(eps)
        key = object_key(R.ENDPOINTS, "default", "kubernetes")
        obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Endpoints",
                               "metadata": {"name": "kubernetes", "namespace": "default",
                                            "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
                               "subsets": subsets}
        try:
            strategy.prepare_for_create("Endpoints", obj, "default", True)
            await self.store.create(key, obj)
            return eps
        except KeyExists:
            pass

        def refresh(cur: dict[str, Any]) -> dict[str, Any]:
            cur["subsets"] = subsets
            return cur
        await self.store.guaranteed_update(key, refresh)  # an equal result is not written
        return eps

    async def run(self) -> None:
        """Reconcile every :data:`INTERVAL` seconds until cancelled (the first one at once)."""
        while True:
            try:
                await self.reconcile()
            except StorageError as e:
                event(log, "apiserver.endpoint_reconcile_error", logging.WARNING, error=str(e)[:200])
            await asyncio.sleep(self.interval)  # the reconciler's period

    async def remove(self) -> None:
        """Delete this replica's Lease and write the Endpoints without it (shutdown)."""
        try:
            await self.store.delete(self.key)
        except KeyNotFound:
            pass
        except StorageError as e:
            event(log, "apiserver.endpoint_remove_error", logging.WARNING, error=str(e)[:200])
            return
        try:
            await self.reconcile(include_self=False)
        except StorageError as e:
            event(log, "apiserver.endpoint_remove_error", logging.WARNING, error=str(e)[:200])
