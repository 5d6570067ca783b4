"""``controlplane up``: the whole control plane as separate OS processes.

Starts etcd (embedded, data in ``--data-dir``; or uses ``--etcd-servers``),
the apiserver (HTTPS, certificates in ``<data-dir>/pki``), the controller-manager,
the scheduler and one kubelet per node (node01 and node02 by default, as in the
seeds), each with its own kubeconfig and client certificate, writes
``<data-dir>/kubeconfig`` (the admin's), serves the live dashboard (:mod:`controlplane.dashboard`:
``--dashboard-port``, default 8080 or the next free port, printed as ``dashboard:
http://127.0.0.1:PORT/``; its log in ``<data-dir>/logs/dashboard.log``; ``--no-dashboard``),
prints how to use kubectl, reports and restarts any process that dies, and stops
everything cleanly on Ctrl-C or SIGTERM.

Every process is forked from a fork server (:mod:`controlplane.cli.zygote`, ``--no-fork-server``:
each started as ``python -m controlplane <service>`` instead; Linux only, elsewhere always so),
launched before anything else — before this command's own modules are imported and the
certificates written — so its imports run beside them on the other core, and etcd and the
apiserver are forked as soon as their modules are in, while the controller-manager's,
scheduler's and kubelet's are still loading.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
from typing import TYPE_CHECKING

import click

from controlplane.cli import zygote
from controlplane.cli.defaults import DEFAULT_AUTHORIZATION_MODE, DEFAULT_POD_NETWORK_CIDR

if TYPE_CHECKING:
    from controlplane.cli.cluster import LocalCluster, MetricsEndpoint


def parse_node_labels(values: tuple[str, ...]) -> dict[str, str]:
    """``("node01:kgc=a,x=y", ...)`` -> ``{"node01": "kgc=a,x=y"}``; raises click.BadParameter
    (exit 2) on a value without ``NODE:`` or without labels."""
    out: dict[str, str] = {}
    for v in values:
        node, sep, labels = v.partition(":")
        if not sep or not node or not labels:
            raise click.BadParameter(f"{v!r}: expected NODE:key=value[,key=value]",
                                     param_hint="--node-labels")
        out[node] = labels
    return out


def endpoints_text(endpoints: list[MetricsEndpoint], prometheus_file: str | None) -> str:
    """The endpoint table printed at start: one line per process, its /metrics and health URLs."""
    lines = ["\nmetrics and health endpoints:"]
    for e in endpoints:
        lines.append(f"  {e.service:<22} {e.url}/metrics   {e.health}")
    if prometheus_file:
        from controlplane.cli.cluster import short_path
        lines.append(f"  Prometheus scrape config: {short_path(os.path.abspath(prometheus_file))}")
    return "\n".join(lines)


@click.command("up")
@click.option("--data-dir", default=".controlplane", show_default=True,
              help="etcd data, logs and the kubeconfig live here")
@click.option("--etcd-servers", default=None, metavar="URLS",
              help="use this external etcd (e.g. http://127.0.0.1:2379) instead of starting ours")
@click.option("--etcd-port", default=2379, show_default=True, type=click.IntRange(0, 65535),
              help="client port of the embedded etcd (0: any free port)")
@click.option("--port", "apiserver_port", default=6443, show_default=True, type=click.IntRange(0, 65535),
              help="apiserver port on 127.0.0.1 (0: any free port)")
@click.option("--nodes", default="node01,node02", show_default=True,
              help="comma-separated node names, one kubelet each")
@click.option("--node-labels", multiple=True, metavar="NODE:k=v,...",
              help="extra labels for a node's kubelet, e.g. node01:kgc=a (repeatable)")
@click.option("--hollow-nodes", default=0, show_default=True, type=click.IntRange(0, 5000),
              help="also run N hollow nodes (hollow-0...) in one kubelet process")
@click.option("--config", "config_path", default=None, metavar="FILE",
              help="a declarative cluster config (kind: Cluster, apiVersion: controlplane.io/v1alpha1): "
                   "nodes with labels, taints and capacity, hollow-node pools, the scheduler's "
                   "KubeSchedulerConfiguration, controllers, admission plugins (docs/cluster-config.md)")
@click.option("--prometheus", "prometheus_file", default=None, metavar="FILE",
              help="write a Prometheus scrape config for every component's /metrics to FILE")
@click.option("--tracing-endpoint", default=None, metavar="HOST:PORT",
              help="every component sends OpenTelemetry spans (OTLP/HTTP) to this collector, all sampled")
@click.option("--dashboard-port", default=8080, show_default=True, type=click.IntRange(0, 65535),
              help="serve the live dashboard on 127.0.0.1:PORT (the next free port if taken; 0: any free port)")
@click.option("--no-dashboard", is_flag=True, help="do not serve the dashboard")
@click.option("--authorization-mode", default=DEFAULT_AUTHORIZATION_MODE, show_default=True, metavar="MODES",
              help="the apiserver's --authorization-mode, as kubeadm sets it (AlwaysAllow: no authorization)")
@click.option("--etcd-tls/--no-etcd-tls", default=False, show_default=True,
              help="the embedded etcd serves TLS with client-certificate auth (certificates in "
                   "<data-dir>/pki/etcd); off: plain HTTP on 127.0.0.1")
@click.option("--fork-server/--no-fork-server", default=True, show_default=True,
              help="import the services' modules once in a zygote process and fork each service from it "
                   "(Linux; each is still its own process, with the command line it would be started with); "
                   "--no-fork-server starts each as python -m controlplane SERVICE")
@click.option("--pod-network-cidr", default=DEFAULT_POD_NETWORK_CIDR, show_default=True, metavar="CIDR",
              help="the pods' range (kubeadm init's flag): the controller-manager gives each node a /24 of it")
@click.option("--apiserver-cert-extra-sans", default="", metavar="NAMES",
              help="comma-separated extra DNS names / IPs for the apiserver's serving certificate")
@click.option("--audit/--no-audit", default=True, show_default=True,
              help="the apiserver writes an audit log, <data-dir>/logs/audit.log (audit.k8s.io/v1 Events)")
@click.option("--audit-policy-file", default=None, metavar="FILE",
              help="the audit policy (default: <data-dir>/audit-policy.yaml, Metadata for every request "
                   "but health checks, leases and events)")
@click.option("--apiservers", default=1, show_default=True, type=click.IntRange(1, 16),
              help="apiserver replicas (apiserver-0...), each with its own watch cache, all on --port "
                   "(SO_REUSEPORT: the kernel spreads connections over them)")
@click.option("--etcd", "etcd_kind", default="embedded", show_default=True, type=click.Choice(["embedded", "real"]),
              help="the etcd to start: ours, or Debian's real etcd (/usr/bin/etcd, package etcd-server)")
@click.option("--etcd-members", default=1, show_default=True, type=click.IntRange(1, 7),
              help="members of the etcd cluster started (with --etcd real): etcd-0... with --initial-cluster")
@click.pass_context
def command(ctx: click.Context, data_dir: str, etcd_servers: str | None, etcd_port: int, apiserver_port: int,
            nodes: str, node_labels: tuple[str, ...], hollow_nodes: int, config_path: str | None,
            prometheus_file: str | None, tracing_endpoint: str | None, dashboard_port: int,
            no_dashboard: bool, authorization_mode: str | None, etcd_tls: bool, apiserver_cert_extra_sans: str,
            pod_network_cidr: str,
            audit: bool, audit_policy_file: str | None, apiservers: int, etcd_kind: str, etcd_members: int,
            fork_server: bool) -> None:
    """Start etcd, apiserver, controller-manager, scheduler and kubelets."""
    # what needs no module: checked before the fork server is launched
    if config_path is not None:
        for name in ("nodes", "node_labels", "hollow_nodes"):
            if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE:
                raise click.UsageError(f"--{name.replace('_', '-')} cannot be used with --config: "
                                       f"put the nodes in {config_path}")
    elif not any(n.strip() for n in nodes.split(",")) and not hollow_nodes:
        raise click.BadParameter("at least one node is needed", param_hint="--nodes")
    labels = parse_node_labels(node_labels)
    try:
        ipaddress.ip_network(pod_network_cidr, strict=False)
    except ValueError as e:
        raise click.BadParameter(f"{pod_network_cidr!r}: {e}", param_hint="--pod-network-cidr") from None
    # then the fork server: its imports (seconds of CPU) run while ours are done
    fork = zygote.Zygote() if fork_server and zygote.available() else None
    if fork is not None:
        fork.launch()
    try:
        _up(fork, data_dir, etcd_servers, etcd_port, apiserver_port, nodes, labels, hollow_nodes,
            config_path, prometheus_file, tracing_endpoint, dashboard_port, no_dashboard, authorization_mode,
            etcd_tls, apiserver_cert_extra_sans, pod_network_cidr, audit, audit_policy_file, apiservers,
            etcd_kind, etcd_members)
    finally:
        if fork is not None:
            fork.close()


def _up(fork: zygote.Zygote | None, data_dir: str, etcd_servers: str | None, etcd_port: int,
        apiserver_port: int, nodes: str, labels: dict[str, str], hollow_nodes: int, config_path: str | None,
        prometheus_file: str | None, tracing_endpoint: str | None, dashboard_port: int, no_dashboard: bool,
        authorization_mode: str | None, etcd_tls: bool, apiserver_cert_extra_sans: str, pod_network_cidr: str,
        audit: bool, audit_policy_file: str | None, apiservers: int, etcd_kind: str, etcd_members: int) -> None:
    from controlplane import log
    from controlplane.cli.cluster import LocalCluster, short_path
    from controlplane.cli.prometheus import write_scrape_config
    from controlplane.client.config import load_kubeconfig
    from controlplane.clusterconfig import ConfigError, load
    from controlplane.dashboard.server import serve_first_free
    from controlplane.service import run_until_signalled

    config = None
    if config_path is not None:
        try:
            config = load(config_path)
        except ConfigError as e:
            raise click.UsageError(str(e)) from None
        node_names = config.node_names
        hollow_nodes = config.hollow_node_count
    else:
        node_names = tuple(n.strip() for n in nodes.split(",") if n.strip())
    if not node_names and not hollow_nodes:
        raise click.BadParameter("at least one node is needed", param_hint="--nodes")

    async def main() -> None:
        try:
            cluster = make_cluster(fork)
        except RuntimeError as e:
            raise click.ClickException(str(e)) from None
        await run(cluster)

    def make_cluster(fork: zygote.Zygote | None) -> LocalCluster:
        return LocalCluster(data_dir, etcd_servers=etcd_servers, apiserver_port=apiserver_port,
                               etcd_port=etcd_port, nodes=node_names, node_labels=labels,
                               hollow_nodes=hollow_nodes, config=config, tracing_endpoint=tracing_endpoint,
                               authorization_mode=authorization_mode, pod_network_cidr=pod_network_cidr,
                               etcd_tls=etcd_tls, apiserver_cert_extra_sans=tuple(
                                   n.strip() for n in apiserver_cert_extra_sans.split(",") if n.strip()),
                               audit=audit, audit_policy_file=os.path.abspath(audit_policy_file)
                               if audit_policy_file else None,
                               apiservers=apiservers, etcd=etcd_kind, etcd_members=etcd_members,
                               say=lambda s: click.echo(f"controlplane: {s}", err=True), zygote=fork)

    async def run(cluster: LocalCluster) -> None:
        dash = None
        try:
            await cluster.start()
            if prometheus_file:
                try:
                    write_scrape_config(prometheus_file, cluster.endpoints, tls={
                        "ca_file": cluster.pki.ca_file, "cert_file": cluster.pki.path("admin"),
                        "key_file": cluster.pki.path("admin", "key")})
                except OSError as e:
                    raise RuntimeError(f"cannot write --prometheus {prometheus_file}: {e.strerror or e}") from None
            click.echo(endpoints_text(cluster.endpoints, prometheus_file), err=True)
            dash_line = ""
            if not no_dashboard:
                # the dashboard's own lines (its informers' reconnects) go to its log, not to ours
                log.setup("dashboard", path=os.path.join(cluster.data_dir, "logs", "dashboard.log"))
                try:
                    dash = await serve_first_free(load_kubeconfig(cluster.kubeconfig), dashboard_port)
                    dash_line = f"  dashboard: http://127.0.0.1:{dash[2]}/\n"
                except OSError as e:
                    dash_line = f"  (no dashboard: {e})\n"
            kc = short_path(cluster.kubeconfig)
            click.echo(
                f"\ncontrol plane is up: apiserver {cluster.server}, nodes {', '.join(node_names)}"
                f"{f' and {hollow_nodes} hollow nodes' if hollow_nodes else ''}\n"
                f"\n  export KUBECONFIG={os.path.abspath(cluster.kubeconfig)}\n"
                f"  kubectl get nodes\n"
                f"\n  (or: kubectl --kubeconfig {kc} get nodes)\n"
                f"  controlplane trace --kubeconfig {kc} --follow   # the 13-step records\n"
                f"{dash_line}"
                f"\nCtrl-C stops everything.", err=True)
            await cluster.supervise()
        except RuntimeError as e:
            if cluster.started:
                await asyncio.shield(cluster.stop())
            raise click.ClickException(str(e)) from None
        finally:
            if dash is not None:
                await dash[0].stop()
                await dash[1].cleanup()
            if cluster.started and any(s.proc and s.proc.returncode is None for s in cluster.services):
                click.echo("controlplane: stopping...", err=True)
                await asyncio.shield(cluster.stop())
                click.echo("controlplane: stopped", err=True)
            else:
                await cluster.stop()

    run_until_signalled(main)
