"""``controlplane scheduler``: kube-scheduler's loop against our apiserver.

    controlplane scheduler [--kubeconfig K | --master URL] [--config FILE]
                           [--record-results/--no-record-results] [--leader-elect]

Informers on nodes and pods (all namespaces) feed the cache and the queue; see
:mod:`components.scheduler.scheduler`. Bad flags or config → one line, exit 2.
"""

from __future__ import annotations

import asyncio
import logging

import click

from components.scheduler.config import ConfigError, load_config
from components.scheduler.scheduler import Scheduler
from controlplane.api.resources import NODES, PODS
from controlplane.cli.common import client_options, run_until_signalled, server_or_exit
from controlplane.client.events import EventRecorder
from controlplane.client.informer import Informer
from controlplane.client.rest import RestClient, wait_ready
from controlplane.log import event, setup
from controlplane.trace.emitter import TraceEmitter


async def run_scheduler(server: str, config, record_results: bool, leader_elect: bool) -> None:
    """Connect, start the informers, wait for them to sync, then schedule forever."""
    log = logging.getLogger("scheduler")
    async with RestClient(server, "scheduler") as client:
        await wait_ready(client)
        nodes = Informer(client, NODES)
        pods = Informer(client, PODS)
        sched = Scheduler(client, config, recorder=EventRecorder(client, "default-scheduler"),
                          trace=TraceEmitter(client, "scheduler"), record_results=record_results,
                          pod_lister=pods.get)
        nodes.add_handlers(sched.on_node_add, sched.on_node_update, sched.on_node_delete)
        pods.add_handlers(sched.on_pod_add, sched.on_pod_update, sched.on_pod_delete)
        pods.on_watch_started(sched.on_pods_watch_started)
        tasks = [nodes.start()]
        await nodes.wait_synced()
        tasks.append(pods.start())
        await pods.wait_synced()
        event(log, "scheduler.started", server=server, profiles=",".join(sched.profiles),
              nodes=sched.cache.node_count(), leader_elect=leader_elect)
        try:
            await sched.run()
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


@click.command("scheduler")
@client_options
@click.option("--config", "config_path", default=None, metavar="FILE",
              help="KubeSchedulerConfiguration YAML (kubescheduler.config.k8s.io/v1)")
@click.option("--record-results/--no-record-results", default=True, show_default=True,
              help="write kube-scheduler-simulator result annotations on each pod")
@click.option("--leader-elect/--no-leader-elect", default=False, show_default=True,
              help="leader election on Lease kube-system/kube-scheduler (not implemented yet: ignored)")
def command(kubeconfig: str | None, master: str | None, config_path: str | None,
            record_results: bool, leader_elect: bool) -> None:
    """Run the scheduler: filter, score and bind pending pods."""
    server = server_or_exit(master, kubeconfig)
    try:
        config = load_config(config_path)
    except ConfigError as e:
        raise click.UsageError(str(e)) from None
    setup("scheduler")
    run_until_signalled(lambda: run_scheduler(server, config, record_results,
                                              leader_elect or config.leader_elect))
