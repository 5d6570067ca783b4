"""The kubelet's metrics (``pkg/kubelet/metrics/metrics.go``) on the process's registry
(:data:`controlplane.metrics.REGISTRY`), served on ``--read-only-port`` by :mod:`.server`.

* ``kubelet_running_pods`` (gauge): pods with a running sandbox, over every node of the process;
* ``kubelet_running_containers{container_state}`` (gauge): containers by state ``created`` /
  ``running`` / ``exited`` (both read from the simulated runtimes at scrape time);
* ``kubelet_pod_start_sli_duration_seconds`` (histogram, the kubelet's bounds 0.5 s … 3600 s): from
  the pod's creationTimestamp until all its containers were started, image pulls excluded
  (``pkg/kubelet/util/pod_startup_latency_tracker.go``), once per pod.
"""

from __future__ import annotations

import weakref
from typing import Any, Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from controlplane import metrics as m

POD_START_SLI_BUCKETS = (0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900,
                         1200, 1800, 2700, 3600)
CONTAINER_STATES = ("created", "running", "exited")

#: every SimulatedRuntime of the process (weakly: unit tests build many)
RUNTIMES: "weakref.WeakSet[Any]" = weakref.WeakSet()

pod_start_sli = m.histogram(
    "kubelet_pod_start_sli_duration_seconds", "Duration in seconds to start a pod, excluding time to pull images "
    "and run init containers, measured from pod creation timestamp to when all its containers are reported as "
    "started and observed via watch", (), POD_START_SLI_BUCKETS)


class _RuntimeGauges(Collector):
    def collect(self) -> Iterator[GaugeMetricFamily]:
        pods = 0
        states = dict.fromkeys(CONTAINER_STATES, 0)
        for rt in list(RUNTIMES):
            for sb in rt.sandboxes.values():
                pods += 1
                for c in sb.containers.values():
                    states[c.state if c.state in states else "exited"] += 1
        yield GaugeMetricFamily("kubelet_running_pods", "Number of pods that have a running pod sandbox", value=pods)
        g = GaugeMetricFamily("kubelet_running_containers", "Number of containers currently running",
                              labels=("container_state",))
        for state in CONTAINER_STATES:
            g.add_metric((state,), states[state])
        yield g


m.REGISTRY.register(_RuntimeGauges())
