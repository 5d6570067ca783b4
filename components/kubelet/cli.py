"""``controlplane kubelet``: one node, or many hollow nodes, on a simulated runtime.

    controlplane kubelet --master http://127.0.0.1:6443 --node-name node01 --node-labels kgc=a
    controlplane kubelet --master URL --hollow-nodes 100 --node-name-prefix hollow-
    controlplane kubelet --master URL --node-name node01 --root-dir /var/lib/controlplane/kubelet/node01

Every option is also read from ``CONTROLPLANE_KUBELET_<OPTION>``. ``--healthz-port`` (10248) serves
``/healthz``, ``--read-only-port`` (10255) ``/metrics``, ``/healthz`` and ``/pods``
(:mod:`components.kubelet.server`); ``0`` disables either, and a port already taken (several kubelets
on one machine) is logged and left out.
"""

from __future__ import annotations

import os

import click

from components.kubelet.node import (
    MAX_NODE_INDEX,
    NodeConfig,
    node_index_from_name,
    parse_labels,
    parse_reserved,
    parse_taints,
    resources,
)
from controlplane.api.quantity import parse_quantity
from controlplane.api.validation import is_dns1123_subdomain, is_qualified_name, is_valid_label_value
from controlplane.clusterconfig import expand
from controlplane.log import event, setup
from controlplane.service import (
    Seconds,
    client_options,
    config_or_exit,
    gc_options,
    parse_duration,
    run_until_signalled,
    tracing_options,
)

#: durations that may be 0 (instant) and those that pace a loop (0 would spin it)
_SECONDS = Seconds(min=0)
_PERIOD = Seconds(min=0, min_open=True)


@click.command("kubelet")
@client_options
@click.option("--node-name", default="node01", show_default=True, help="name of the node to run")
@click.option("--node-labels", default="", metavar="K=V,...",
              help="extra labels at registration (hollow nodes: values may use {index} and {index%N})")
@click.option("--register-with-taints", default="", metavar="K=V:EFFECT,...",
              help="taints the node registers with (hollow nodes: values may use {index})")
@click.option("--kube-reserved", default="", metavar="cpu=Q,memory=Q,ephemeral-storage=Q",
              help="resources reserved from allocatable")
@click.option("--hollow-nodes", default=0, type=click.IntRange(0, 5000), show_default=True,
              help="run N hollow nodes named PREFIX0..PREFIX{N-1} instead of --node-name")
@click.option("--node-name-prefix", default="hollow-", show_default=True)
@click.option("--node-index", default=None, type=click.IntRange(0, MAX_NODE_INDEX),
              help="index for the InternalIP 192.168.<i/100>.<100+i%100> (default: from the name; "
                   "hollow nodes start at 100)")
@click.option("--pod-cidr", default=None,
              help="the node's pod CIDR, for a kubelet without a controller-manager allocating them "
                   "(single node; default: the spec.podCIDR the node IPAM controller writes)")
@click.option("--cpu", default="4", show_default=True)
@click.option("--memory", default="8Gi", show_default=True)
@click.option("--pods", default="110", show_default=True)
@click.option("--ephemeral-storage", default="100Gi", show_default=True)
@click.option("--image-pull-seconds", default=0.2, type=_SECONDS, show_default=True)
@click.option("--container-start-seconds", default=0.1, type=_SECONDS, show_default=True)
@click.option("--lease-renew-seconds", default=10.0, type=_PERIOD, show_default=True)
@click.option("--node-status-report-frequency", default="5m0s", show_default=True, metavar="DURATION",
              help="how often the node status is reported when it has not changed (nodeStatusReportFrequency; "
                   "the Lease is the heartbeat)")
@click.option("--sync-frequency", default="1m0s", show_default=True, metavar="DURATION",
              help="how often each pod is synced again, whatever happened to it (KubeletConfiguration "
                   "syncFrequency); each sync waits up to half of it more (jitter)")
@click.option("--crashloop-backoff-seconds", default=10.0, type=_PERIOD,
              show_default=True, help="first restart back-off (doubles up to 300 s)")
@click.option("--image-pull-backoff-seconds", default=10.0, type=_PERIOD, show_default=True,
              help="first image pull back-off (doubles up to --image-pull-backoff-max-seconds)")
@click.option("--image-pull-backoff-max-seconds", default=300.0, type=_PERIOD, show_default=True)
@click.option("--event-qps", default=50.0, type=click.FloatRange(0), show_default=True,
              help="event creations per second, for the whole process (0: no limit; KubeletConfiguration eventRecordQPS)")
@click.option("--event-burst", default=100, type=click.IntRange(1), show_default=True,
              help="events created at once before --event-qps applies (eventBurst)")
@click.option("--root-dir", default=None, metavar="DIR",
              help="where the runtime's state is kept so containers outlive a kubelet restart "
                   "(deleting it reboots the node); default: none kept")
@click.option("--trace/--no-trace", default=True, show_default=True, help="send step records")
@click.option("--service-account-tokens", default="auto", show_default=True,
              type=click.Choice(["auto", "request", "off"]),
              help="request a bound token (TokenRequest) for each pod's projected service-account token volume, "
                   "refreshed at 80% of its life; off: none; auto: request for a single node, off for hollow "
                   "nodes (each token is a signature in the apiserver; components/kubelet/tokens.py)")
@tracing_options("kubelet")
@gc_options
@click.option("--healthz-port", default=10248, show_default=True, type=click.IntRange(0, 65535),
              help="port of /healthz (0 disables)")
@click.option("--healthz-bind-address", default="127.0.0.1", show_default=True, metavar="IP",
              help="address of the healthz port")
@click.option("--read-only-port", default=10255, show_default=True, type=click.IntRange(0, 65535),
              help="port of the read-only endpoints /metrics, /healthz, /pods (0 disables)")
@click.option("--address", default="0.0.0.0", show_default=True, metavar="IP",
              help="address of the read-only port")
def command(kubeconfig: str | None, master: str | None, node_name: str, node_labels: str,
            register_with_taints: str, kube_reserved: str, hollow_nodes: int, node_name_prefix: str,
            node_index: int | None, pod_cidr: str | None,
            cpu: str, memory: str, pods: str, ephemeral_storage: str, image_pull_seconds: float,
            container_start_seconds: float, lease_renew_seconds: float,
            node_status_report_frequency: str, sync_frequency: str, crashloop_backoff_seconds: float,
            image_pull_backoff_seconds: float, image_pull_backoff_max_seconds: float,
            event_qps: float, event_burst: int, root_dir: str | None, trace: bool, service_account_tokens: str,
            healthz_port: int, healthz_bind_address: str, read_only_port: int, address: str,
            gc_sweep_interval: float) -> None:
    """Run a kubelet (node registration, lease, pod lifecycle) on a simulated runtime."""
    client_config = config_or_exit(master, kubeconfig)
    server = client_config.host
    try:
        labels = parse_labels(node_labels)
        taints = parse_taints(register_with_taints)
        res: dict = dict(cpu=cpu, memory=memory, pods=pods, ephemeral_storage=ephemeral_storage,
                         reserved=parse_reserved(kube_reserved))
        node_status_report_seconds = parse_duration(node_status_report_frequency, "--node-status-report-frequency")
        if node_status_report_seconds <= 0:
            raise ValueError(f"invalid value {node_status_report_frequency!r} for --node-status-report-frequency: "
                             "must be greater than zero")
        sync_frequency_seconds = parse_duration(sync_frequency, "--sync-frequency")
        if sync_frequency_seconds <= 0:
            raise ValueError(f"invalid value {sync_frequency!r} for --sync-frequency: must be greater than zero")
        if hollow_nodes:
            start = 100 if node_index is None else node_index
            if start + hollow_nodes - 1 > MAX_NODE_INDEX:
                raise ValueError(f"--node-index {start} + --hollow-nodes {hollow_nodes} exceeds {MAX_NODE_INDEX}")
            nodes = [NodeConfig(name=f"{node_name_prefix}{i}", index=start + i,
                                labels={k: expand(v, i) for k, v in labels.items()},
                                taints=[{**t, "value": expand(t["value"], i)} if "value" in t else t for t in taints],
                                **res)
                     for i in range(hollow_nodes)]
            labels = nodes[0].labels
        else:
            idx = node_index_from_name(node_name) if node_index is None else node_index
            nodes = [NodeConfig(name=node_name, index=idx, labels=labels, taints=taints,
                                pod_cidr=pod_cidr, **res)]
        for cfg in nodes[:1] + nodes[-1:]:   # the names follow one pattern
            problems = is_dns1123_subdomain(cfg.name)
            if problems:   # the apiserver's Node name rule (ValidateNodeName)
                raise ValueError(f"invalid node name {cfg.name!r}: {problems[0]}")
        for key, value in labels.items():
            problems = is_qualified_name(key) + is_valid_label_value(value)
            if problems:   # metav1validation.ValidateLabels
                raise ValueError(f"invalid --node-labels {key}={value}: {problems[0]}")
        for opt, val in (("--cpu", cpu), ("--memory", memory), ("--pods", pods),
                         ("--ephemeral-storage", ephemeral_storage)):
            try:
                q = parse_quantity(val)
            except ValueError as e:
                raise ValueError(f"invalid {opt} {val!r}: {e}") from None
            if q < 0:   # apimachinery ValidateNonnegativeQuantity
                raise ValueError(f"invalid {opt} {val!r}: must be greater than or equal to 0")
            if opt == "--pods" and (q.denominator != 1 or q > 2 ** 31 - 1):   # kubelet's int32 maxPods
                raise ValueError(f"invalid {opt} {val!r}: must be a whole number of at most {2 ** 31 - 1}")
        resources(nodes[0])
        if root_dir:
            try:
                os.makedirs(root_dir, exist_ok=True)
            except OSError as e:
                raise ValueError(f"cannot use --root-dir {root_dir!r}: {e.strerror or e}") from None
        if pod_cidr:
            from components.kubelet.ipam import IPAM
            IPAM(pod_cidr)
    except ValueError as e:
        raise click.UsageError(str(e)) from None

    log = setup("kubelet")

    async def main() -> None:
        from components.kubelet.kubelet import Kubelet, Timings
        from components.kubelet.server import health_checks, serve_kubelet
        from controlplane.client.rest import RestClient, wait_ready
        from controlplane.metrics import stop_all

        timings = Timings(image_pull_seconds=image_pull_seconds,
                          container_start_seconds=container_start_seconds,
                          lease_renew_seconds=lease_renew_seconds,
                          status_report_seconds=node_status_report_seconds,
                          sync_frequency_seconds=sync_frequency_seconds,
                          backoff_base_seconds=crashloop_backoff_seconds,
                          image_backoff_seconds=image_pull_backoff_seconds,
                          image_backoff_max_seconds=max(image_pull_backoff_max_seconds,
                                                        image_pull_backoff_seconds))
        async with RestClient(client_config, "kubelet") as client:
            kubelet = Kubelet(client, nodes, timings, trace=trace, root_dir=root_dir,
                              event_qps=event_qps, event_burst=event_burst, gc_sweep_interval=gc_sweep_interval,
                              service_account_tokens=service_account_tokens == "request"
                              or (service_account_tokens == "auto" and not hollow_nodes))
            endpoints = await serve_kubelet(health_checks(lambda: True), kubelet.pods,
                                            healthz_address=healthz_bind_address, healthz_port=healthz_port,
                                            address=address, read_only_port=read_only_port)
            try:
                await wait_ready(client)
                event(log, "kubelet.starting", server=server, nodes=len(nodes),
                      first=nodes[0].name, pod_cidr=nodes[0].pod_cidr or "(from the node)")
                await kubelet.run()
            finally:
                await stop_all(endpoints)

    run_until_signalled(main)
