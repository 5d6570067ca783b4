"""``controlplane controller-manager``: run the controllers against an apiserver.

    controlplane controller-manager --master http://127.0.0.1:6443 --controllers '*'
    controlplane controller-manager --kubeconfig ~/.kube/config --controllers '*,-garbagecollector'
    controlplane controller-manager --master URL --node-monitor-grace-period 4s --leader-elect

Controllers: deployment, replicaset, replicationcontroller, garbagecollector,
namespace, nodelifecycle, tainteviction, podgc, serviceaccount, endpoint. Durations
take Go syntax (``40s``, ``500ms``, ``1m``). With ``--leader-elect`` only the holder
of the Lease ``kube-system/kube-controller-manager`` starts its informers and
controllers (kube-controller-manager runs everything in OnStartedLeading); losing it
exits with status 1 ("leaderelection lost"); SIGTERM releases it. An unknown
controller, a bad duration or a bad URL is a one-line error with exit 2.
"""

from __future__ import annotations

import re

import click

from controlplane.cli.common import client_options, run_until_signalled, server_or_exit
from controlplane.client.rest import RestClient, wait_ready
from controlplane.log import event, setup


def parse_duration(value: str, flag: str) -> float:
    """A Go duration (``40s``, ``500ms``, ``1m``, ``1.5s``, ``1m30s``) in seconds;
    click.UsageError naming ``flag`` otherwise."""
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", value.strip())
    if not parts or "".join(n + u for n, u in parts) != value.strip():
        if re.fullmatch(r"\s*\d+(?:\.\d+)?\s*", value):
            return float(value)
        raise click.UsageError(f"invalid value {value!r} for {flag}: want a duration like 40s")
    return sum(float(n) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[u] for n, u in parts)


@click.command(name="controller-manager")
@client_options
@click.option("--controllers", default="*", show_default=True,
              help="Comma list: '*' for all, NAME to enable, -NAME to disable "
                   "(deployment, replicaset, replicationcontroller, garbagecollector, namespace, "
                   "nodelifecycle, tainteviction, podgc, serviceaccount, endpoint).")
@click.option("--node-monitor-period", default="5s", show_default=True, metavar="DURATION",
              help="how often node health is checked")
@click.option("--node-monitor-grace-period", default="40s", show_default=True, metavar="DURATION",
              help="how long a node may go without Lease renewal or heartbeat before it is Unknown")
@click.option("--node-startup-grace-period", default="60s", show_default=True, metavar="DURATION",
              help="the same, for a node that never posted Ready")
@click.option("--terminated-pod-gc-threshold", default=12500, type=click.IntRange(0), show_default=True,
              help="terminated pods kept before the pod GC deletes the oldest (0: never)")
@click.option("--leader-elect/--no-leader-elect", default=False, show_default=True,
              help="run the controllers only while holding the Lease")
@click.option("--leader-elect-lease-duration", default="15s", show_default=True, metavar="DURATION")
@click.option("--leader-elect-renew-deadline", default="10s", show_default=True, metavar="DURATION")
@click.option("--leader-elect-retry-period", default="2s", show_default=True, metavar="DURATION")
@click.option("--leader-elect-resource-name", default="kube-controller-manager", show_default=True)
@click.option("--leader-elect-resource-namespace", default="kube-system", show_default=True)
def command(kubeconfig: str | None, master: str | None, controllers: str, node_monitor_period: str,
            node_monitor_grace_period: str, node_startup_grace_period: str, terminated_pod_gc_threshold: int,
            leader_elect: bool, leader_elect_lease_duration: str, leader_elect_renew_deadline: str,
            leader_elect_retry_period: str, leader_elect_resource_name: str,
            leader_elect_resource_namespace: str) -> None:
    """Run the workload, garbage-collection, namespace, node-lifecycle, taint-eviction,
    pod-GC, service-account and endpoints controllers (kube-controller-manager)."""
    from controlplane.client.leaderelection import LeaderElector

    from .config import ControllerConfig
    from .manager import ControllerManager, run_manager, select_controllers
    server = server_or_exit(master, kubeconfig)
    try:
        names = select_controllers(controllers)
        config = ControllerConfig(
            node_monitor_period=parse_duration(node_monitor_period, "--node-monitor-period"),
            node_monitor_grace_period=parse_duration(node_monitor_grace_period, "--node-monitor-grace-period"),
            node_startup_grace_period=parse_duration(node_startup_grace_period, "--node-startup-grace-period"),
            terminated_pod_gc_threshold=terminated_pod_gc_threshold)
        le = dict(lease_duration=parse_duration(leader_elect_lease_duration, "--leader-elect-lease-duration"),
                  renew_deadline=parse_duration(leader_elect_renew_deadline, "--leader-elect-renew-deadline"),
                  retry_period=parse_duration(leader_elect_retry_period, "--leader-elect-retry-period"))
        if leader_elect:
            LeaderElector(None, leader_elect_resource_namespace, leader_elect_resource_name, "check", **le)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    log = setup("controller-manager")

    async def main() -> None:
        client = RestClient(server, "controller-manager")
        try:
            await wait_ready(client)
            mgr = ControllerManager(client, names, config=config)
            event(log, "controller-manager.starting", server=server, controllers=",".join(names),
                  leader_elect=leader_elect)
            elector = LeaderElector(client, leader_elect_resource_namespace, leader_elect_resource_name,
                                    **le) if leader_elect else None
            await run_manager(mgr, elector)
        finally:
            await client.close()

    run_until_signalled(main)
