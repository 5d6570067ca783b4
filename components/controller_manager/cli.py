"""``controlplane controller-manager``: run the controllers against an apiserver.

    controlplane controller-manager --master http://127.0.0.1:6443 --controllers '*'
    controlplane controller-manager --kubeconfig ~/.kube/config --controllers '*,-garbagecollector'
    controlplane controller-manager --master URL --node-monitor-grace-period 4s --leader-elect

Controllers: every name of ``manager.CONTROLLERS`` (``--help`` lists them), as kube-controller-manager's
``--controllers``. Durations
take Go syntax (``40s``, ``500ms``, ``1m``). With ``--leader-elect`` only the holder
of the Lease ``kube-system/kube-controller-manager`` starts its informers and
controllers (kube-controller-manager runs everything in OnStartedLeading); losing it
exits with status 1 ("leaderelection lost"); SIGTERM releases it. ``--port`` (10252; 0 disables)
serves ``/metrics`` (the controllers' ``workqueue_*``, ``rest_client_*``), ``/healthz``, ``/livez``
and ``/readyz`` over plain HTTP, kube-controller-manager's deprecated insecure port (its HTTPS
``--secure-port`` 10257 waits for TLS here). An unknown
controller, a bad duration or a bad URL is a one-line error with exit 2.
"""

from __future__ import annotations

import click

from controlplane.client.rest import RestClient, wait_ready
from controlplane.log import event, setup
from controlplane.metrics import HealthChecks, make_app, serve
from controlplane.service import (
    LeaderElection,
    client_options,
    config_or_exit,
    gc_options,
    insecure_serving_options,
    leader_election_options,
    parse_duration,
    run_until_signalled,
    tracing_options,
)


def read_root_ca(path: str) -> str:
    """The ``--root-ca-file`` bundle (PEM text; "" without the flag). ValueError (one line) when it
    cannot be read or holds no certificate."""
    if not path:
        return ""
    try:
        with open(path) as f:
            pem = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"--root-ca-file {path!r}: {getattr(e, 'strerror', None) or e}") from None
    if "-----BEGIN CERTIFICATE-----" not in pem:
        raise ValueError(f"--root-ca-file {path!r}: no PEM certificate in it")
    return pem


@click.command(name="controller-manager")
@client_options
@click.option("--controllers", default="*", show_default=True,
              help="Comma list: '*' for all, NAME to enable, -NAME to disable "
                   "(deployment, replicaset, replicationcontroller, garbagecollector, namespace, nodelifecycle, "
                   "nodeipam, tainteviction, podgc, serviceaccount, endpoint, endpointslice, resourcequota, disruption, "
                   "root-ca-cert-publisher, statefulset, daemonset, job, ttl-after-finished, cronjob, "
                   "pv-protection, pvc-protection, persistentvolume-binder, "
                   "horizontalpodautoscaling, clusterrole-aggregation).")
@click.option("--node-monitor-period", default="5s", show_default=True, metavar="DURATION",
              help="how often node health is checked")
@click.option("--node-monitor-grace-period", default="40s", show_default=True, metavar="DURATION",
              help="how long a node may go without Lease renewal or heartbeat before it is Unknown")
@click.option("--node-startup-grace-period", default="60s", show_default=True, metavar="DURATION",
              help="the same, for a node that never posted Ready")
@click.option("--terminated-pod-gc-threshold", default=12500, type=click.IntRange(0), show_default=True,
              help="terminated pods kept before the pod GC deletes the oldest (0: never)")
@click.option("--max-endpoints-per-slice", default=100, type=click.IntRange(1, 1000), show_default=True,
              help="the most endpoints the EndpointSlice controller puts in one slice")
@click.option("--horizontal-pod-autoscaler-sync-period", default="15s", show_default=True, metavar="DURATION",
              help="how often each HorizontalPodAutoscaler is reconciled")
@click.option("--horizontal-pod-autoscaler-downscale-stabilization", default="5m0s", show_default=True,
              metavar="DURATION", help="how far back the highest recommendation bounds a scale-down")
@click.option("--horizontal-pod-autoscaler-tolerance", default=0.1, type=click.FloatRange(0), show_default=True,
              help="the usage ratio's distance from 1.0 below which the HPA does not scale")
@click.option("--horizontal-pod-autoscaler-cpu-initialization-period", default="5m0s", show_default=True,
              metavar="DURATION", help="after a pod starts, how long its cpu samples may be skipped as not ready")
@click.option("--horizontal-pod-autoscaler-initial-readiness-delay", default="30s", show_default=True,
              metavar="DURATION", help="after a pod starts, how long its readiness counts as initial")
@click.option("--allocate-node-cidrs", type=bool, default=False, is_flag=False, flag_value=True, show_default=True,
              metavar="BOOL", help="allocate and set each Node's spec.podCIDR(s) from --cluster-cidr (nodeipam)")
@click.option("--cluster-cidr", default="", metavar="CIDR[,CIDR]",
              help="the pods' range, split into node CIDRs (IPv4, IPv6, or one of each for dual stack)")
@click.option("--node-cidr-mask-size", default=0, type=click.IntRange(0, 128), metavar="BITS",
              help="prefix length of each node's CIDR, single-stack clusters (default 24 for IPv4, 64 for IPv6)")
@click.option("--node-cidr-mask-size-ipv4", default=0, type=click.IntRange(0, 32), metavar="BITS",
              help="prefix length of each node's IPv4 CIDR (default 24)")
@click.option("--node-cidr-mask-size-ipv6", default=0, type=click.IntRange(0, 128), metavar="BITS",
              help="prefix length of each node's IPv6 CIDR (default 64)")
@click.option("--service-cluster-ip-range", default="", metavar="CIDR[,CIDR]",
              help="the Services' range, left out of the node CIDRs where it overlaps --cluster-cidr")
@click.option("--root-ca-file", default="", metavar="PATH",
              help="CA bundle published as kube-root-ca.crt in every namespace (default: a placeholder CA)")
@leader_election_options("kube-controller-manager", "run the controllers only while holding the Lease")
@insecure_serving_options("controller-manager")
@gc_options
@tracing_options("controller-manager")
def command(kubeconfig: str | None, master: str | None, controllers: str, node_monitor_period: str,
            node_monitor_grace_period: str, node_startup_grace_period: str, terminated_pod_gc_threshold: int,
            max_endpoints_per_slice: int, horizontal_pod_autoscaler_sync_period: str,
            horizontal_pod_autoscaler_downscale_stabilization: str, horizontal_pod_autoscaler_tolerance: float,
            horizontal_pod_autoscaler_cpu_initialization_period: str,
            horizontal_pod_autoscaler_initial_readiness_delay: str, allocate_node_cidrs: bool,
            cluster_cidr: str, node_cidr_mask_size: int, node_cidr_mask_size_ipv4: int,
            node_cidr_mask_size_ipv6: int, service_cluster_ip_range: str, root_ca_file: str,
            leader_election: LeaderElection, port: int, address: str, gc_sweep_interval: float) -> None:
    """Run the workload, garbage-collection, namespace, node-lifecycle, taint-eviction,
    pod-GC, service-account and endpoints controllers (kube-controller-manager)."""
    from .config import ControllerConfig
    from .manager import ControllerManager, run_manager, select_controllers
    from .nodeipam.controller import parse_ipam_config
    client_config = config_or_exit(master, kubeconfig)
    server = client_config.host
    try:
        names = select_controllers(controllers)
        node_ipam = parse_ipam_config(cluster_cidr, node_cidr_mask_size, node_cidr_mask_size_ipv4,
                                      node_cidr_mask_size_ipv6, service_cluster_ip_range) \
            if allocate_node_cidrs and "nodeipam" in names else None
        config = ControllerConfig(
            node_monitor_period=parse_duration(node_monitor_period, "--node-monitor-period"),
            node_monitor_grace_period=parse_duration(node_monitor_grace_period, "--node-monitor-grace-period"),
            node_startup_grace_period=parse_duration(node_startup_grace_period, "--node-startup-grace-period"),
            terminated_pod_gc_threshold=terminated_pod_gc_threshold,
            max_endpoints_per_slice=max_endpoints_per_slice, root_ca=read_root_ca(root_ca_file),
            node_ipam=node_ipam,
            horizontal_pod_autoscaler_sync_period=parse_duration(
                horizontal_pod_autoscaler_sync_period, "--horizontal-pod-autoscaler-sync-period"),
            horizontal_pod_autoscaler_downscale_stabilization=parse_duration(
                horizontal_pod_autoscaler_downscale_stabilization, "--horizontal-pod-autoscaler-downscale-stabilization"),
            horizontal_pod_autoscaler_tolerance=horizontal_pod_autoscaler_tolerance,
            horizontal_pod_autoscaler_cpu_initialization_period=parse_duration(
                horizontal_pod_autoscaler_cpu_initialization_period,
                "--horizontal-pod-autoscaler-cpu-initialization-period"),
            horizontal_pod_autoscaler_initial_readiness_delay=parse_duration(
                horizontal_pod_autoscaler_initial_readiness_delay, "--horizontal-pod-autoscaler-initial-readiness-delay"))
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    log = setup("controller-manager")

    async def main() -> None:
        health = HealthChecks()
        endpoint = await serve("controller-manager", address, port, make_app(health))
        client = RestClient(client_config, "controller-manager")
        try:
            await wait_ready(client)
            mgr = ControllerManager(client, names, config=config, gc_sweep_interval=gc_sweep_interval)
            event(log, "controller-manager.starting", server=server, controllers=",".join(names),
                  leader_elect=leader_election.enabled)
            elector = leader_election.elector(client) if leader_election.enabled else None
            if elector is not None:
                health.add("leaderElection", elector.healthy)
            await run_manager(mgr, elector)
        finally:
            await client.close()
            await endpoint.stop()

    run_until_signalled(main)
