"""The kubelet process: one node, or many hollow nodes sharing one process.

All nodes of the process share one HTTP client and ONE pods informer:

* one node: fieldSelector ``spec.nodeName=<node>`` (what a real kubelet watches);
* hollow nodes: fieldSelector ``spec.nodeName!=`` (every bound pod), dispatched
  locally by ``spec.nodeName`` to that node's pod workers — one watch stream
  instead of one per node, which is what lets 1,000 nodes live in one process
  (the kubemark "hollow node" idea, ``cmd/kubemark``).

The same holds for Nodes: ONE nodes informer (``metadata.name=<node>`` for one node, every Node
for hollow nodes, trimmed to name, podCIDRs and the Ready condition) tells each node its podCIDR
once the node IPAM controller writes it and shows a Ready condition someone else rewrote — no GET
per node (the kubelet's node lister). The leases and status reports of all nodes run on one
:class:`~components.kubelet.node.Heartbeats` timer heap.

Each node keeps its own state: :class:`~components.kubelet.node.NodeAgent`
(registration, lease, status), :class:`~components.kubelet.runtime.SimulatedRuntime`
(images, sandboxes, IPs) and :class:`~components.kubelet.pod_workers.PodWorkers`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from components.kubelet.checkpoint import Checkpoint
from components.kubelet.node import Heartbeats, NodeAgent, NodeConfig
from components.kubelet.pod_workers import STATUS_SYNC_PERIOD, PodWorkers
from components.kubelet.runtime import SimulatedRuntime
from components.kubelet.tokens import TokenManager
from components.kubelet.volumes import VolumeManager
from controlplane import gcpolicy
from controlplane.aio import Backoff
from controlplane.api.resources import NODES, PODS
from controlplane.client.events import EventRecorder
from controlplane.client.informer import Informer, drop_managed_fields
from controlplane.log import event
from controlplane.trace.emitter import TraceEmitter

log = logging.getLogger("kubelet")

#: hollow nodes' heartbeats go out in batches this many seconds apart (Heartbeats.batch_seconds)
HEARTBEAT_BATCH_SECONDS = 0.25
#: hollow nodes' status batches running at once (each one's requests go one after the other)
STATUS_BATCH_CONCURRENCY = 16


@dataclass
class Timings:
    """Simulated durations and heartbeat periods, in seconds (``status_report_seconds``: the
    kubelet's ``nodeStatusReportFrequency``, 5 min; ``sync_frequency_seconds``: ``--sync-frequency``,
    how often each pod is synced again, 1 min; 0: never)."""

    image_pull_seconds: float = 0.2
    container_start_seconds: float = 0.1
    lease_renew_seconds: float = 10.0
    status_report_seconds: float = 300.0
    backoff_base_seconds: float = 10.0
    backoff_max_seconds: float = 300.0
    image_backoff_seconds: float = 10.0
    image_backoff_max_seconds: float = 300.0
    sync_frequency_seconds: float = 60.0


class Kubelet:
    """Runs ``nodes`` (one or many :class:`NodeConfig`) against the apiserver behind
    ``client`` (a RestClient). ``trace`` toggles step records (steps 1 and 12).
    ``root_dir``: the kubelet's ``--root-dir``, where the runtime's state is checkpointed
    (``checkpoint.py``) so running containers survive a kubelet restart; None: none kept.
    ``gc_sweep_interval`` > 0 (seconds): once the pods informer has its first list, the objects
    cached by then and the survivors of every later full collection leave the cyclic GC while
    :meth:`run` runs, the young generation's threshold :data:`controlplane.gcpolicy.CLIENT_YOUNG_THRESHOLD`
    (:class:`controlplane.gcpolicy.GCFreezer`; 0: not)."""

    def __init__(self, client: Any, nodes: list[NodeConfig], timings: Timings | None = None,
                 trace: bool = True, register_concurrency: int = 32,
                 root_dir: str | None = None, service_account_tokens: bool = False,
                 event_qps: float = 50.0, event_burst: int = 100, gc_sweep_interval: float = 0.0) -> None:
        if not nodes:
            raise ValueError("at least one node is required")
        self.client = client
        self.configs = nodes
        self.gc_freezer = gcpolicy.freezer(gc_sweep_interval, gcpolicy.CLIENT_YOUNG_THRESHOLD)
        self.timings = timings or Timings()
        self.tracer = TraceEmitter(client, "kubelet", enabled=trace)
        self.agents: dict[str, NodeAgent] = {}
        self.workers: dict[str, PodWorkers] = {}
        self.register_concurrency = register_concurrency
        #: the recorders' client, rate-limited for the whole process (EventClient)
        self.events_client = EventClient(client, event_qps, event_burst)
        #: request the pods' projected service-account tokens (components/kubelet/tokens.py)
        self.service_account_tokens = service_account_tokens
        single = len(nodes) == 1
        self.field_selector = f"spec.nodeName={nodes[0].name}" if single else "spec.nodeName!="
        # managedFields dropped as kube-scheduler's and kube-controller-manager's informers do
        # (client-go WithTransform): the kubelet never reads them, and 5,000 hollow nodes' pods
        # would otherwise hold them all in this one process
        self.informer = Informer(client, PODS, field_selector=self.field_selector,
                                 transform=drop_managed_fields)
        self.node_informer = Informer(client, NODES, transform=trim_node,
                                      field_selector=f"metadata.name={nodes[0].name}" if single else None)
        self.heartbeats = Heartbeats(workers=1 if single else 64,
                                     spread=0.0 if single else self.timings.lease_renew_seconds,
                                     batch_seconds=0.0 if single else HEARTBEAT_BATCH_SECONDS)
        #: Nodes the informer showed before their agent was ready
        self._early: dict[str, dict] = {}
        self._announced = False
        self._names = {c.name for c in nodes}
        self.checkpoint: Checkpoint | None = None
        if root_dir:
            self.checkpoint = Checkpoint(root_dir)
            found = self.checkpoint.load()
            event(log, "kubelet.checkpoint", path=self.checkpoint.path,
                  state="restored" if found else "none (first start or node reboot)")

    def pods(self) -> list[dict]:
        """Every pod bound to this process's nodes, as the pod workers last saw it (``/pods``)."""
        return [p for w in self.workers.values() for p in w.pods()]

    async def _start_node(self, cfg: NodeConfig, sem: asyncio.Semaphore) -> None:
        t = self.timings
        recorder = EventRecorder(self.events_client, "kubelet", host=cfg.name)  # type: ignore[arg-type]
        runtime: SimulatedRuntime | None = None
        workers: PodWorkers | None = None

        def pod_cidr_set(cidr: str) -> None:
            if runtime is not None:
                runtime.update_pod_cidr(cidr)
            if workers is not None:
                workers.network_ready()

        agent = NodeAgent(self.client, cfg, recorder,
                          images=lambda: runtime.node_images() if runtime else [],
                          lease_renew_seconds=t.lease_renew_seconds,
                          status_report_seconds=t.status_report_seconds, on_pod_cidr=pod_cidr_set)
        retry = Backoff(0.1, 7.0)
        while True:   # registerWithAPIServer: retried with back-off until it succeeds
            try:
                async with sem:
                    await agent.register()  # may adopt the existing node's podCIDR
                break
            except asyncio.CancelledError:
                raise
            except Exception as e:
                wait = retry.next()
                event(log, "node.register_failed", logging.WARNING, node=cfg.name,
                      error=f"{type(e).__name__}: {e}"[:200], retry_in=f"{wait:.2f}s")
                await asyncio.sleep(wait)   # the back-off before the next attempt
        runtime = SimulatedRuntime(cfg.name, cfg.pod_cidr, t.image_pull_seconds,
                                   t.container_start_seconds)
        volumes = VolumeManager(self.client, on_change=agent.mark_changed)
        agent.volumes = volumes.node_status
        if self.checkpoint is not None:
            restored = self.checkpoint.attach(cfg.name, runtime)
            if restored:
                event(log, "kubelet.sandboxes_restored", node=cfg.name, sandboxes=restored)
                agent.mark_changed()   # the node's images
        self.agents[cfg.name] = agent
        tokens = None
        if self.service_account_tokens:
            tokens = TokenManager(self.client, lambda pod, msg: recorder.event(pod, "Warning", "FailedMount", msg))
        self.workers[cfg.name] = workers = PodWorkers(
            self.client, cfg.name, cfg.internal_ip or "", runtime, recorder, self.tracer,
            backoff_base=t.backoff_base_seconds, backoff_max=t.backoff_max_seconds,
            on_images_changed=agent.mark_changed, volumes=volumes,
            image_backoff_base=t.image_backoff_seconds, image_backoff_max=t.image_backoff_max_seconds,
            # a root dir without a checkpoint is a node reboot: nothing kept running
            adopt_from_status=self.checkpoint is None or self.checkpoint.found, tokens=tokens,
            sync_frequency=t.sync_frequency_seconds)
        early = self._early.pop(cfg.name, None)
        if early is not None:
            agent.observe(early)
        self.heartbeats.add(agent)

    async def start(self) -> None:
        """Start the nodes informer, register every node, then start the heartbeats and the pods
        informer."""
        self.node_informer.add_handlers(self._on_node, lambda old, new: self._on_node(new), None)
        self.node_informer.start()
        self._beats = [asyncio.create_task(self.heartbeats.run(), name="heartbeats"),
                       asyncio.create_task(self.sync_loop(), name="sync-loop"),
                       asyncio.create_task(self.status_loop(), name="status-manager")]
        sem = asyncio.Semaphore(self.register_concurrency)
        await asyncio.gather(*(self._start_node(cfg, sem) for cfg in self.configs))
        event(log, "kubelet.nodes_registered", nodes=len(self.agents))
        self.informer.add_handlers(self._on_add, self._on_update, self._on_delete)
        self.informer.on_watch_started(self._on_watch_started)
        self.informer.start()

    async def run(self) -> None:
        """Start and run until cancelled (the GC policy from the pods informer's first list on)."""
        await self.start()
        try:
            if self.gc_freezer is not None:
                # however long the first list takes (thousands of hollow nodes' pods): no deadline
                await self.informer.wait_synced(None)
                self.gc_freezer.start()  # the caches are full: what they hold lives long
            await asyncio.Event().wait()  # serve until cancelled
        finally:
            if self.gc_freezer is not None:
                await self.gc_freezer.stop()
            await self.stop()

    async def stop(self) -> None:
        for t in getattr(self, "_beats", []):
            t.cancel()
        await self.informer.stop()
        await self.node_informer.stop()
        for w in self.workers.values():
            await w.stop()
            if w.tokens is not None:
                w.tokens.close()
        if self.checkpoint is not None:
            try:
                self.checkpoint.flush()
            except OSError as e:
                event(log, "kubelet.checkpoint_failed", logging.WARNING, error=str(e)[:200])
        await self.tracer.flush()

    async def sync_loop(self) -> None:
        """Every second, start the pods whose periodic sync is due (``pkg/kubelet/kubelet.go``
        syncLoop: the 1 s ``syncTicker``, getPodsToSync). Runs until cancelled."""
        while True:
            await asyncio.sleep(1.0)   # the sync loop's ticker
            for w in self.workers.values():
                w.resync_due()

    async def status_loop(self) -> None:
        """Every :data:`~components.kubelet.pod_workers.STATUS_SYNC_PERIOD` seconds, a status batch
        (:meth:`sync_statuses`), on a task of its own as the status manager's goroutine
        (``status_manager.go`` Start: the syncPeriod ticker's syncBatch), so slow requests do
        not hold up the sync loop. Runs until cancelled."""
        while True:
            await asyncio.sleep(STATUS_SYNC_PERIOD)   # the status manager's ticker
            await self.sync_statuses()

    async def sync_statuses(self) -> int:
        """One status batch on every node with pods out of sync (:meth:`PodWorkers.sync_batch`);
        returns how many pods were synced. Errors are the batches' own (logged there). Logs one
        ``kubelet.status_batch`` line: nodes batched, pods synced, the GETs and writes it made."""
        pending = [w for w in self.workers.values() if w.unsynced()]
        if not pending:
            return 0
        gets, writes = (sum(w.batch_gets for w in pending), sum(w.batch_writes for w in pending))
        sem = asyncio.Semaphore(STATUS_BATCH_CONCURRENCY)

        async def one(w: PodWorkers) -> int:
            async with sem:
                return await w.sync_batch()

        synced = sum(await asyncio.gather(*(one(w) for w in pending)))
        event(log, "kubelet.status_batch", nodes=len(pending), synced=synced,
              gets=sum(w.batch_gets for w in pending) - gets, writes=sum(w.batch_writes for w in pending) - writes)
        return synced

    # -- informer handlers -------------------------------------------------------
    def _on_node(self, node: dict) -> None:
        name = (node.get("metadata") or {}).get("name") or ""
        agent = self.agents.get(name)
        if agent is not None:
            agent.observe(node)
        elif name in self._names:
            self._early[name] = node

    def reconcile(self) -> int:
        """Remove the restored sandboxes whose pod the apiserver no longer has (on this
        node): pods deleted while the kubelet was down. Returns how many."""
        uids: set[str] = set()
        for pod in self.informer.list():
            uids.add((pod.get("metadata") or {}).get("uid", ""))
        gone = 0
        for name, w in self.workers.items():
            for uid in [u for u in w.runtime.sandboxes if u not in uids]:
                w.runtime.stop_pod_sandbox(uid)
                gone += 1
                event(log, "kubelet.sandbox_orphaned", node=name, pod_uid=uid)
        return gone

    def _on_watch_started(self, rv: str) -> None:
        if not self._announced and self.checkpoint is not None and self.checkpoint.found:
            self.reconcile()
        if self._announced:
            event(log, "kubelet.watch_restarted", resource_version=rv)
            return
        self._announced = True
        names = list(self.agents)
        who = names[0] if len(names) == 1 else f"({len(names)} hollow nodes)"
        node_ref = {"kind": "Node", "metadata": {"name": names[0] if len(names) == 1 else ""}}
        self.tracer.emit(1, f"kubelet {who} watching pods with {self.field_selector}", node_ref,
                         detail=f"list+watch from resourceVersion {rv}", resource_version=rv)

    def _workers_for(self, pod: dict) -> PodWorkers | None:
        return self.workers.get((pod.get("spec") or {}).get("nodeName") or "")

    def _on_add(self, pod: dict) -> None:
        w = self._workers_for(pod)
        if w is not None:
            w.update_pod(pod)

    def _on_update(self, old: dict, new: dict) -> None:
        self._on_add(new)

    def _on_delete(self, pod: dict) -> None:
        w = self._workers_for(pod)
        if w is not None:
            w.remove_pod(pod)


def trim_node(node: dict) -> dict:
    """What the kubelets keep of a Node (the nodes informer's transform): name, resourceVersion,
    ``spec.podCIDR(s)`` and the Ready condition's status."""
    md, spec = node.get("metadata") or {}, node.get("spec") or {}
    ready = [{"type": "Ready", "status": c.get("status")}
             for c in (node.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"]
    return {"metadata": {"name": md.get("name"), "resourceVersion": md.get("resourceVersion")},
            "spec": {k: spec[k] for k in ("podCIDR", "podCIDRs") if k in spec},
            "status": {"conditions": ready}}


class EventClient:
    """The recorders' client: the kubelet's event client, whose creates are limited to ``qps``
    per second with bursts of ``burst`` (``--event-qps`` 50 / ``--event-burst`` 100, KubeletConfiguration
    eventRecordQPS / eventBurst; 0: no limit); every other attribute is ``client``'s. One per
    process: hollow nodes share it as they share the process, where kubemark gives each hollow
    kubelet its own (one process each). A deliberate scale choice, measured (bench/flow.py
    --nodes 1000 --pods 3000 --count-requests, load ~8): one client per node sent every node's 6
    start-up events and 4 events per pod, which doubled the time to a ready cluster (30 -> 61 s)
    and the bound -> Running p50 (26 -> 49 s), the events queueing ahead of status writes on the
    process's 64 request connections. A single node (``controlplane up``'s kubelets) is never
    limited in practice. Writes waiting beyond
    ``queue_size`` (1000, the event broadcaster's queue) are dropped — None returned, counted in
    :attr:`dropped` — as client-go drops events from a full queue (``watch.DropIfChannelFull``)."""

    def __init__(self, client: Any, qps: float = 50.0, burst: int = 100, queue_size: int = 1000) -> None:
        self._client = client
        self.qps, self.burst, self.queue_size = qps, max(burst, 1), queue_size
        self._tokens = float(self.burst)
        self._last = time.monotonic()
        self._waiting = 0
        self.dropped = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    async def _write(self, verb: str, *args: Any, **kw: Any) -> Any:
        if self.qps <= 0:
            return await getattr(self._client, verb)(*args, **kw)
        if self._waiting >= self.queue_size:
            self.dropped += 1
            if self.dropped % 1000 == 1:
                event(log, "kubelet.events_dropped", logging.WARNING, dropped=self.dropped,
                      reason=f"more than {self.queue_size} events waiting for --event-qps {self.qps:g}")
            return None
        # a token bucket (client-go flowcontrol.NewTokenBucketRateLimiter over x/time/rate):
        # each write reserves its token at once — the bucket may go below zero — and sleeps
        # once until that token exists (rate.Limiter.Wait / Reserve), so N waiting writes
        # are N timers, first come first served, not N pollers waking on every refill
        now = time.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps) - 1
        self._last = now
        if self._tokens >= 0:
            return await getattr(self._client, verb)(*args, **kw)
        self._waiting += 1
        try:
            await asyncio.sleep(-self._tokens / self.qps)   # the rate limiter's wait for its token
        except asyncio.CancelledError:
            self._tokens += 1   # the reservation given back (Reservation.Cancel)
            raise
        finally:
            self._waiting -= 1
        return await getattr(self._client, verb)(*args, **kw)

    async def create(self, *args: Any, **kw: Any) -> Any:
        return await self._write("create", *args, **kw)

    async def update(self, *args: Any, **kw: Any) -> Any:
        return await self._write("update", *args, **kw)

    async def patch(self, *args: Any, **kw: Any) -> Any:
        return await self._write("patch", *args, **kw)
