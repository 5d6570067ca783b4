"""``controlplane scheduler``: kube-scheduler's loop against our apiserver.

    controlplane scheduler [--kubeconfig K | --master URL] [--config FILE]
                           [--record-results/--no-record-results] [--explain-max-nodes 100]
                           [--leader-elect]
                           [--leader-elect-lease-duration 15s] [--leader-elect-renew-deadline 10s]
                           [--leader-elect-retry-period 2s] [--leader-elect-resource-name kube-scheduler]
                           [--leader-elect-resource-namespace kube-system]
                           [--port 10251] [--address 0.0.0.0]

``--port`` serves ``/metrics`` (:mod:`components.scheduler.metrics`), ``/healthz``, ``/livez`` and
``/readyz`` over plain HTTP (kube-scheduler's deprecated insecure port; its HTTPS ``--secure-port``
10259 waits for TLS here); ``0`` disables.

With ``--leader-elect`` the informers run in every replica but only the holder of the
Lease (``kube-system/kube-scheduler``) schedules; losing the Lease exits with status 1
("leaderelection lost"), as kube-scheduler does; SIGTERM releases it.

Informers on nodes and pods (all namespaces) feed the cache and the queue; see
:mod:`components.scheduler.scheduler`. Bad flags or config → one line, exit 2.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace

import click

from components.scheduler.config import ConfigError, load_config
from components.scheduler.scheduler import Scheduler
from controlplane import gcpolicy
from controlplane.api.resources import NAMESPACES, NODES, PODS, REPLICASETS, REPLICATIONCONTROLLERS, get
from controlplane.client.events import EventRecorder
from controlplane.client.factory import SharedInformers
from controlplane.client.rest import ClientConfig, RestClient, wait_ready
from controlplane.log import event, setup
from controlplane.metrics import HealthChecks, make_app, serve
from controlplane.service import (
    LeaderElection,
    client_options,
    config_or_exit,
    gc_options,
    insecure_serving_options,
    leader_election_options,
    run_until_signalled,
    tracing_options,
)
from controlplane.trace.emitter import TraceEmitter

#: per-node verdicts and scores in step-9 records only up to this many nodes: the record
#: grows ~140 bytes per node per attempt (70 KB at 500 nodes), all sent to the apiserver
DEFAULT_EXPLAIN_MAX_NODES = 100


async def run_scheduler(server: "str | ClientConfig", config, record_results: bool,
                        leader_elect: "bool | LeaderElection",
                        explain_max_nodes: int = DEFAULT_EXPLAIN_MAX_NODES,
                        address: str = "0.0.0.0", port: int = 0, gc_sweep_interval: float = 0.0) -> None:
    """Connect, start the informers, wait for them to sync, then schedule forever (only
    while holding the Lease when leader election is on). Raises RuntimeError
    "leaderelection lost" when the Lease is lost. ``explain_max_nodes``: the largest
    cluster whose per-node verdicts and scores go into each step-9 record. ``address`` /
    ``port``: where ``/metrics`` and the health checks are served from the start (0: not);
    ``/readyz`` passes once the informers synced (``sched-handler-sync``).
    ``gc_sweep_interval`` > 0 (seconds): once the informers synced, their objects leave the
    cyclic GC until the scheduler returns, the young generation's threshold
    :data:`controlplane.gcpolicy.CLIENT_YOUNG_THRESHOLD` (:class:`controlplane.gcpolicy.GCFreezer`; 0: not)."""
    le = (leader_elect if isinstance(leader_elect, LeaderElection)
          else LeaderElection(bool(leader_elect), resource_name="kube-scheduler"))
    log = logging.getLogger("scheduler")
    synced = asyncio.Event()
    health = HealthChecks()
    health.add("sched-handler-sync", synced.is_set, readyz_only=True)
    endpoint = await serve("scheduler", address, port, make_app(health))
    try:
        await _run(server, config, record_results, le, explain_max_nodes, log, synced, health,
                   gcpolicy.freezer(gc_sweep_interval, gcpolicy.CLIENT_YOUNG_THRESHOLD))
    finally:
        await endpoint.stop()


async def _run(server: "str | ClientConfig", config, record_results: bool, le: LeaderElection, explain_max_nodes: int,
               log: logging.Logger, synced: asyncio.Event, health: HealthChecks,
               freezer: gcpolicy.GCFreezer | None = None) -> None:
    async with RestClient(server, "scheduler") as client:
        server = client.server
        await wait_ready(client)
        informers = SharedInformers(client)
        nodes, pods = informers.informer(NODES), informers.informer(PODS)
        # events through 4 writers: a burst of Scheduled events leaves connections for bindings
        sched = Scheduler(client, config, recorder=EventRecorder(client, "default-scheduler", max_in_flight=4),
                          trace=TraceEmitter(client, "scheduler"), record_results=record_results,
                          explain_max_nodes=explain_max_nodes, pod_lister=pods.get)
        for res in SPREAD_SELECTOR_SOURCES:  # PodTopologySpread default constraints
            sched.listers[res.plural] = informers.informer(res)
        for res in VOLUME_SOURCES:  # VolumeBinding; their changes retry the pods it rejected
            inf = sched.listers[res.plural] = informers.informer(res)
            inf.add_handlers(lambda obj, k=res.kind: sched.queue.move_all_to_active_or_backoff(k, "Add"),
                             lambda old, new, k=res.kind: sched.queue.move_all_to_active_or_backoff(k, "Update"),
                             None)
        namespaces = informers.informer(NAMESPACES)
        namespaces.add_handlers(sched.on_namespace_add, sched.on_namespace_update,
                                sched.on_namespace_delete)
        nodes.add_handlers(sched.on_node_add, sched.on_node_update, sched.on_node_delete)
        pods.add_handlers(sched.on_pod_add, sched.on_pod_update, sched.on_pod_delete)
        pods.on_watch_started(sched.on_pods_watch_started)
        tasks = [namespaces.start(), nodes.start(), *(i.start() for i in sched.listers.values())]
        await namespaces.wait_synced()
        for i in sched.listers.values():
            await i.wait_synced()
        await nodes.wait_synced()
        tasks.append(pods.start())
        await pods.wait_synced()
        synced.set()
        if freezer is not None:  # the caches are full: what they hold lives long
            freezer.start()
        event(log, "scheduler.started", server=server, profiles=",".join(sched.profiles),
              nodes=sched.cache.node_count(), leader_elect=le.enabled)
        try:
            if not le.enabled:
                await sched.run()
                return
            elector = le.elector(client)
            health.add("leaderElection", elector.healthy)
            await elector.run(sched.run)
            if elector.lost.is_set():
                raise RuntimeError("leaderelection lost")
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if freezer is not None:
                await freezer.stop()


#: the owners whose selectors make PodTopologySpread's default selector (helper/spread.go)
SPREAD_SELECTOR_SOURCES = (get("services"), REPLICATIONCONTROLLERS, REPLICASETS, get("statefulsets", "apps"))
#: what the VolumeBinding plugin reads (eventhandlers.go addAllEventHandlers: PVs, PVCs, StorageClasses)
VOLUME_SOURCES = (get("persistentvolumeclaims"), get("persistentvolumes"), get("storageclasses", "storage.k8s.io"))


@click.command("scheduler")
@client_options
@click.option("--config", "config_path", default=None, metavar="FILE",
              help="KubeSchedulerConfiguration YAML (kubescheduler.config.k8s.io/v1)")
@click.option("--record-results/--no-record-results", default=False, show_default=True,
              help="also write kube-scheduler-simulator result annotations on each pod "
                   "(the step-9 trace record always has them; see `controlplane explain`)")
@click.option("--explain-max-nodes", default=DEFAULT_EXPLAIN_MAX_NODES, show_default=True,
              type=click.IntRange(0), help="record per-node filter verdicts and scores in the "
              "step-9 trace record (`controlplane explain pod`) only while the cluster has at "
              "most this many nodes")
@leader_election_options("kube-scheduler", "schedule only while holding the Lease "
                         "(see --leader-elect-resource-*)")
@insecure_serving_options("scheduler")
@gc_options
@tracing_options("scheduler")
def command(kubeconfig: str | None, master: str | None, config_path: str | None,
            record_results: bool, explain_max_nodes: int, leader_election: LeaderElection,
            port: int, address: str, gc_sweep_interval: float) -> None:
    """Run the scheduler: filter, score and bind pending pods."""
    client_config = config_or_exit(master, kubeconfig)
    try:
        config = load_config(config_path)
    except ConfigError as e:
        raise click.UsageError(str(e)) from None
    le = leader_election
    if config.leader_elect and not le.enabled:   # leaderElection.leaderElect in --config
        le = replace(le, enabled=True)
        le.check()
    setup("scheduler")
    run_until_signalled(lambda: run_scheduler(client_config, config, record_results, le, explain_max_nodes,
                                              address, port, gc_sweep_interval))
