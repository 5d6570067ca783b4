"""The controller-manager process: shared informers, the enabled controllers and
their workers, and the step-1 trace record (kube-controller-manager's
``cmd/kube-controller-manager/app/controllermanager.go``: one SharedInformerFactory
started after every controller registered its handlers; ``--controllers`` takes
``*`` (all on by default), ``name`` and ``-name``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from controlplane import gcpolicy
from controlplane.client.events import EventRecorder
from controlplane.client.factory import SharedInformers
from controlplane.client.informer import Informer, SharedIndexInformer, metadata_only
from controlplane.log import event
from controlplane.trace.emitter import TraceEmitter

from .clusterroleaggregation import ClusterRoleAggregationController
from .config import ControllerConfig
from .controller import Controller, ControllerContext
from .cronjob import CronJobController
from .daemonset import DaemonSetController
from .deployment import DeploymentController
from .disruption import DisruptionController
from .endpoint import EndpointController
from .endpointslice import EndpointSliceController
from .garbagecollector import GarbageCollector
from .job import JobController
from .namespace import NamespaceController
from .nodeipam.controller import NodeIpamController
from .nodelifecycle import NodeLifecycleController
from .podautoscaler import HorizontalPodAutoscalerController
from .podgc import PodGCController
from .replicaset import REPLICASET_KIND, REPLICATIONCONTROLLER_KIND, ReplicaController
from .resourcequota import ResourceQuotaController
from .rootcacertpublisher import RootCACertPublisher
from .serviceaccount import ServiceAccountsController
from .statefulset import StatefulSetController
from .tainteviction import TaintEvictionController
from .ttlafterfinished import TTLAfterFinishedController
from .volume.persistentvolume import PersistentVolumeController
from .volume.protection import PVCProtectionController, PVProtectionController

log = logging.getLogger("controller-manager")

#: controller name → constructor, in start order
CONTROLLERS: dict[str, Callable[[ControllerContext], Controller]] = {
    "deployment": DeploymentController,
    "replicaset": lambda ctx: ReplicaController(ctx, REPLICASET_KIND),
    "replicationcontroller": lambda ctx: ReplicaController(ctx, REPLICATIONCONTROLLER_KIND),
    "garbagecollector": GarbageCollector,
    "namespace": NamespaceController,
    "nodeipam": NodeIpamController,
    "nodelifecycle": NodeLifecycleController,
    "tainteviction": TaintEvictionController,
    "podgc": PodGCController,
    "serviceaccount": ServiceAccountsController,
    "endpoint": EndpointController,
    "endpointslice": EndpointSliceController,
    "resourcequota": ResourceQuotaController,
    "disruption": DisruptionController,
    "root-ca-cert-publisher": RootCACertPublisher,
    "statefulset": StatefulSetController,
    "cronjob": CronJobController,
    "job": JobController,
    "ttl-after-finished": TTLAfterFinishedController,
    "daemonset": DaemonSetController,
    "persistentvolume-binder": PersistentVolumeController,
    "pvc-protection": PVCProtectionController,
    "pv-protection": PVProtectionController,
    "horizontalpodautoscaling": HorizontalPodAutoscalerController,
    "clusterrole-aggregation": ClusterRoleAggregationController,
}


def select_controllers(spec: str) -> list[str]:
    """Names enabled by a ``--controllers`` value: comma-separated ``*``, ``name``,
    ``-name`` (a ``-name`` always wins). Raises ValueError naming an unknown controller."""
    items = [s.strip() for s in (spec or "*").split(",") if s.strip()]
    for s in items:
        n = s.lstrip("-")
        if n != "*" and n not in CONTROLLERS:
            raise ValueError(f"unknown controller {n!r} (known: {', '.join(CONTROLLERS)})")
    off = {s[1:] for s in items if s.startswith("-")}
    on = set(CONTROLLERS) if "*" in items else {s for s in items if not s.startswith("-")}
    return [n for n in CONTROLLERS if n in on and n not in off]


class ControllerManager:
    """Builds and runs the enabled controllers against ``client``.

    ``informers``/``tracer``/``recorder_factory`` default to the real ones; tests
    may inject fakes; ``config`` holds the time/threshold settings (defaults as
    kube-controller-manager). :meth:`run` returns only when cancelled.
    ``gc_sweep_interval`` > 0 (seconds): once every informer synced, the cached objects leave
    the cyclic GC while :meth:`run` runs, the young generation's threshold
    :data:`controlplane.gcpolicy.CLIENT_YOUNG_THRESHOLD` (:class:`controlplane.gcpolicy.GCFreezer`; 0: not).
    """

    def __init__(self, client: Any, controllers: list[str], *,
                 informers: SharedInformers[SharedIndexInformer] | None = None,
                 tracer: Any = None, recorder_factory: Callable[[str], Any] | None = None,
                 config: ControllerConfig | None = None, gc_sweep_interval: float = 0.0) -> None:
        self.client = client
        self.gc_freezer = gcpolicy.freezer(gc_sweep_interval, gcpolicy.CLIENT_YOUNG_THRESHOLD)
        self.informers = informers or SharedInformers(client)
        self.tracer = tracer or TraceEmitter(client, "controller-manager")
        # the garbage collector's metadata-only monitors (real informers only; the fakes share)
        metadata = None if informers is not None else (
            lambda res: Informer(client, res, transform=metadata_only))
        self.ctx = ControllerContext(client, self.informers, self.tracer,
                                     recorder_factory or (lambda c: EventRecorder(client, c)),
                                     config or ControllerConfig(), metadata_informer=metadata)
        self.controllers: list[Controller] = []
        #: the resources whose informers each controller (same index) asked for while it was
        #: built: what it waits for before its workers run
        self.needs: list[list[Any]] = []
        for n in controllers:
            with self.informers.recording() as used:
                self.controllers.append(CONTROLLERS[n](self.ctx))
            self.needs.append(used)
        self._watching: set[str] = set()
        self._step1_done = False
        for res in self.informers.resources:
            self.informers.informer(res).on_watch_started(
                lambda rv, r=res: self._watch_started(r.plural, rv))

    def _watch_started(self, plural: str, rv: str) -> None:
        self._watching.add(plural)
        event(log, "informer.watching", resource=plural, rv=rv)
        if not self._step1_done and len(self._watching) == len(self.informers.resources):
            self._step1_done = True
            order = [r.plural for r in self.informers.resources]
            self.tracer.emit(1, "controller-manager informers watching " + ", ".join(order), None,
                             kind="", detail="controllers: " + ", ".join(c.name for c in self.controllers))

    async def run(self) -> None:
        """Start informers, then run each controller's workers once the informers it uses have
        their first list — not every informer's: kube-controller-manager starts each controller
        in its own goroutine, whose ``Run`` waits ``cache.WaitForNamedCacheSync`` for its own
        informers (``pkg/controller/nodeipam``: nodes; ``serviceaccounts_controller.go``: service
        accounts and namespaces), so the node IPAM and service-account controllers start while
        the other caches are still listing. ``controller-manager.synced`` is logged once all are."""
        self.informers.start()
        tasks = [asyncio.create_task(self._run_controller(c, needs), name=f"controller-{c.name}")
                 for c, needs in zip(self.controllers, self.needs)]
        tasks.append(asyncio.create_task(self._all_synced(), name="controller-manager-synced"))
        try:
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:
                t.cancel()
            if self.gc_freezer is not None:
                await self.gc_freezer.stop()
            await self.informers.stop()

    async def _run_controller(self, c: Controller, needs: list[Any]) -> None:
        await asyncio.gather(*(self.informers.informer(r).wait_synced(300) for r in needs))
        await c.run()

    async def _all_synced(self) -> None:
        await self.informers.wait_synced(timeout=300)
        event(log, "controller-manager.synced", resources=",".join(r.plural for r in self.informers.resources))
        if self.gc_freezer is not None:  # the caches are full: what they hold lives long
            self.gc_freezer.start()


async def run_manager(mgr: ControllerManager, elector: Any = None) -> None:
    """Run ``mgr``; with ``elector`` (a :class:`controlplane.client.leaderelection.LeaderElector`
    on ``kube-system/kube-controller-manager``) only while holding the Lease, as
    kube-controller-manager runs its informers and controllers in OnStartedLeading
    (``cmd/kube-controller-manager/app/controllermanager.go``). Raises RuntimeError
    "leaderelection lost" when the Lease is lost; cancelling releases it."""
    if elector is None:
        await mgr.run()
        return
    await elector.run(mgr.run)
    if elector.lost.is_set():
        raise RuntimeError("leaderelection lost")
