"""Settings of the controllers that depend on time or thresholds, with
kube-controller-manager's defaults (``pkg/controller/apis/config/v1alpha1/defaults.go``,
``pkg/controller/nodelifecycle/config/v1alpha1/defaults.go``,
``pkg/controller/podgc/config/v1alpha1/defaults.go``,
``cmd/kube-controller-manager/app/core.go`` startPodGCController).

All durations are seconds (floats).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .nodeipam.controller import IPAMConfig


@dataclass
class ControllerConfig:
    """``--node-monitor-period`` (5 s): how often node health is checked;
    ``--node-monitor-grace-period`` (40 s): how long a node may go without a Lease
    renewal or a Ready heartbeat before its conditions become Unknown;
    ``--node-startup-grace-period`` (60 s): the same for a node that never posted Ready;
    ``--terminated-pod-gc-threshold`` (12500; 0 disables): terminated pods kept;
    ``pod_gc_period`` (20 s, gcCheckPeriod) and ``pod_gc_quarantine`` (40 s,
    quarantineTime: how long a node must stay missing before its pods are orphans);
    ``--max-endpoints-per-slice`` (100, from 1 to 1000; ``pkg/controller/endpointslice/config``):
    endpoints per EndpointSlice; ``root_ca``: the ``--root-ca-file`` bundle (PEM);
    ``--horizontal-pod-autoscaler-sync-period`` (15 s): how often each HPA is reconciled;
    ``--horizontal-pod-autoscaler-downscale-stabilization`` (5 m): the scale-down window of an
    HPA without a behavior (or a scale-down rule without one);
    ``--horizontal-pod-autoscaler-tolerance`` (0.1): the usage ratio's dead band around 1;
    ``--horizontal-pod-autoscaler-cpu-initialization-period`` (5 m) and
    ``--horizontal-pod-autoscaler-initial-readiness-delay`` (30 s): when a pod's cpu sample is
    skipped as not ready (``pkg/controller/podautoscaler/config/v1alpha1/defaults.go``);
    ``node_ipam``: see :mod:`components.controller_manager.nodeipam.controller`."""

    node_monitor_period: float = 5.0
    node_monitor_grace_period: float = 40.0
    node_startup_grace_period: float = 60.0
    terminated_pod_gc_threshold: int = 12500
    pod_gc_period: float = 20.0
    pod_gc_quarantine: float = 40.0
    max_endpoints_per_slice: int = 100
    #: ``--root-ca-file``: the CA bundle the root-ca-cert-publisher puts in every namespace's
    #: ``kube-root-ca.crt`` (PEM text; "" = none given, a placeholder CA)
    root_ca: str = ""
    horizontal_pod_autoscaler_sync_period: float = 15.0
    horizontal_pod_autoscaler_downscale_stabilization: float = 300.0
    horizontal_pod_autoscaler_tolerance: float = 0.1
    horizontal_pod_autoscaler_cpu_initialization_period: float = 300.0
    horizontal_pod_autoscaler_initial_readiness_delay: float = 30.0
    #: the node IPAM controller's checked flags (``--allocate-node-cidrs``, ``--cluster-cidr``,
    #: ``--node-cidr-mask-size*``, ``--service-cluster-ip-range``); None: no CIDRs allocated
    node_ipam: IPAMConfig | None = None

    def __post_init__(self) -> None:
        for name in ("node_monitor_period", "node_monitor_grace_period", "node_startup_grace_period",
                     "pod_gc_period", "horizontal_pod_autoscaler_sync_period"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name.replace('_', '-')} must be greater than zero")
        if self.pod_gc_quarantine < 0 or self.terminated_pod_gc_threshold < 0:
            raise ValueError("pod GC settings must not be negative")
        if min(self.horizontal_pod_autoscaler_downscale_stabilization, self.horizontal_pod_autoscaler_tolerance,
               self.horizontal_pod_autoscaler_cpu_initialization_period,
               self.horizontal_pod_autoscaler_initial_readiness_delay) < 0:
            raise ValueError("horizontal-pod-autoscaler settings must not be negative")
        if not 1 <= self.max_endpoints_per_slice <= 1000:
            raise ValueError("max-endpoints-per-slice must be between 1 and 1000")
