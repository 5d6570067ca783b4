"""``controlplane scheduler``: kube-scheduler's loop against our apiserver.

    controlplane scheduler [--kubeconfig K | --master URL] [--config FILE]
                           [--record-results/--no-record-results] [--explain-max-nodes 100]
                           [--leader-elect]
                           [--leader-elect-lease-duration 15s] [--leader-elect-renew-deadline 10s]
                           [--leader-elect-retry-period 2s] [--leader-elect-resource-name kube-scheduler]
                           [--leader-elect-resource-namespace kube-system]

With ``--leader-elect`` the informers run in every replica but only the holder of the
Lease (``kube-system/kube-scheduler``) schedules; losing the Lease exits with status 1
("leaderelection lost"), as kube-scheduler does; SIGTERM releases it.

Informers on nodes and pods (all namespaces) feed the cache and the queue; see
:mod:`components.scheduler.scheduler`. Bad flags or config → one line, exit 2.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass

import click

from components.scheduler.config import ConfigError, load_config
from components.scheduler.scheduler import Scheduler
from controlplane.api.resources import NAMESPACES, NODES, PODS, REPLICASETS, REPLICATIONCONTROLLERS, get
from controlplane.cli.common import client_options, run_until_signalled, server_or_exit
from controlplane.client.events import EventRecorder
from controlplane.client.leaderelection import LeaderElector
from controlplane.client.informer import Informer
from controlplane.client.rest import RestClient, wait_ready
from controlplane.log import event, setup
from controlplane.trace.emitter import TraceEmitter


#: per-node verdicts and scores in step-9 records only up to this many nodes: the record
#: grows ~140 bytes per node per attempt (70 KB at 500 nodes), all sent to the apiserver
DEFAULT_EXPLAIN_MAX_NODES = 100


@dataclass
class LeaderElection:
    """``--leader-elect*`` settings: durations in seconds, the Lease's name/namespace."""

    enabled: bool = False
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


async def run_scheduler(server: str, config, record_results: bool,
                        leader_elect: "bool | LeaderElection",
                        explain_max_nodes: int = DEFAULT_EXPLAIN_MAX_NODES) -> None:
    """Connect, start the informers, wait for them to sync, then schedule forever (only
    while holding the Lease when leader election is on). Raises RuntimeError
    "leaderelection lost" when the Lease is lost. ``explain_max_nodes``: the largest
    cluster whose per-node verdicts and scores go into each step-9 record."""
    le = leader_elect if isinstance(leader_elect, LeaderElection) else LeaderElection(bool(leader_elect))
    log = logging.getLogger("scheduler")
    async with RestClient(server, "scheduler") as client:
        await wait_ready(client)
        nodes = Informer(client, NODES)
        pods = Informer(client, PODS)
        # events through 4 writers: a burst of Scheduled events leaves connections for bindings
        sched = Scheduler(client, config, recorder=EventRecorder(client, "default-scheduler", max_in_flight=4),
                          trace=TraceEmitter(client, "scheduler"), record_results=record_results,
                          explain_max_nodes=explain_max_nodes, pod_lister=pods.get)
        for res in SPREAD_SELECTOR_SOURCES:  # PodTopologySpread default constraints
            sched.listers[res.plural] = Informer(client, res)
        namespaces = Informer(client, NAMESPACES)
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
        event(log, "scheduler.started", server=server, profiles=",".join(sched.profiles),
              nodes=sched.cache.node_count(), leader_elect=le.enabled)
        try:
            if not le.enabled:
                await sched.run()
                return
            elector = LeaderElector(client, le.resource_namespace, le.resource_name,
                                    lease_duration=le.lease_duration, renew_deadline=le.renew_deadline,
                                    retry_period=le.retry_period)
            await elector.run(sched.run)
            if elector.lost.is_set():
                raise RuntimeError("leaderelection lost")
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


#: the owners whose selectors make PodTopologySpread's default selector (helper/spread.go)
SPREAD_SELECTOR_SOURCES = (get("services"), REPLICATIONCONTROLLERS, REPLICASETS, get("statefulsets", "apps"))


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
@click.option("--leader-elect/--no-leader-elect", default=False, show_default=True,
              help="schedule only while holding the Lease (see --leader-elect-resource-*)")
@click.option("--leader-elect-lease-duration", default="15s", show_default=True, metavar="DURATION")
@click.option("--leader-elect-renew-deadline", default="10s", show_default=True, metavar="DURATION")
@click.option("--leader-elect-retry-period", default="2s", show_default=True, metavar="DURATION")
@click.option("--leader-elect-resource-name", default="kube-scheduler", show_default=True)
@click.option("--leader-elect-resource-namespace", default="kube-system", show_default=True)
def command(kubeconfig: str | None, master: str | None, config_path: str | None,
            record_results: bool, explain_max_nodes: int, leader_elect: bool,
            leader_elect_lease_duration: str,
            leader_elect_renew_deadline: str, leader_elect_retry_period: str,
            leader_elect_resource_name: str, leader_elect_resource_namespace: str) -> None:
    """Run the scheduler: filter, score and bind pending pods."""
    server = server_or_exit(master, kubeconfig)
    try:
        config = load_config(config_path)
    except ConfigError as e:
        raise click.UsageError(str(e)) from None
    le = LeaderElection(leader_elect or config.leader_elect,
                        _seconds(leader_elect_lease_duration, "--leader-elect-lease-duration"),
                        _seconds(leader_elect_renew_deadline, "--leader-elect-renew-deadline"),
                        _seconds(leader_elect_retry_period, "--leader-elect-retry-period"),
                        leader_elect_resource_name, leader_elect_resource_namespace)
    if le.enabled:
        try:
            LeaderElector(None, le.resource_namespace, le.resource_name, "check",
                          lease_duration=le.lease_duration, renew_deadline=le.renew_deadline,
                          retry_period=le.retry_period)
        except ValueError as e:
            raise click.UsageError(str(e)) from None
    setup("scheduler")
    use_uvloop()
    run_until_signalled(lambda: run_scheduler(server, config, record_results, le, explain_max_nodes))


def use_uvloop() -> bool:
    """Make new event loops uvloop's when it is installed (less per-request overhead in
    aiohttp's client); returns whether it did. As ``controlplane etcd``/``apiserver``."""
    try:
        import uvloop
    except ImportError:
        return False
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return True


def _seconds(value: str, flag: str) -> float:
    """A Go duration (``15s``, ``500ms``, ``1m``, ``1.5s``) in seconds; UsageError otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)(ms|s|m|h)?\s*", value)
    if not m:
        raise click.UsageError(f"invalid value {value!r} for {flag}: want a duration like 15s")
    n = float(m.group(1))
    return n * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]
