"""The HorizontalPodAutoscaler's replica calculation for resource metrics, as pure functions
(``pkg/controller/podautoscaler/replica_calculator.go``, ``metrics/utilization.go`` and the
resource metrics client ``metrics/client.go`` getPodMetrics, Kubernetes v1.32).

Values are milli-units (``Quantity.MilliValue``: millicores for cpu, milli-bytes for memory),
times are epoch seconds. Errors are :class:`CalculationError` with Kubernetes' messages.

* :func:`pod_metrics_info` — a ``PodMetricsList``'s items as ``pod name → PodMetric``
  (the sum over the pod's containers; a pod missing the resource in one container, or with no
  containers, has no metric);
* :func:`group_pods` — groupPods: deleted and Failed pods are ignored; Pending pods are
  unready; pods without a metric are missing; for cpu, a pod is unready when it has no Ready
  condition or start time, or — within ``cpu_initialization_period`` of its start — when it is
  not Ready or its metric was sampled less than one window after its readiness last changed, or
  — after that period — when it is not Ready and never was (its readiness last changed within
  ``delay_of_initial_readiness_status`` of its start);
* :class:`ReplicaCalculator` — GetResourceReplicas (a Utilization target: percentage of the
  pods' requests) and GetRawResourceReplicas (an AverageValue target): no change within the
  tolerance; missing pods count as using 100% of their request (the target for AverageValue,
  ``max(100, target)``% for Utilization) on a scale-down and 0 on a scale-up; unready pods count
  as 0 on a scale-up; and no change when those assumptions would reverse the direction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

from controlplane import apitime
from controlplane.api.quantity import parse_quantity

JSON = dict[str, Any]

#: --horizontal-pod-autoscaler-tolerance, -cpu-initialization-period, -initial-readiness-delay
DEFAULT_TOLERANCE = 0.1
DEFAULT_CPU_INITIALIZATION_PERIOD = 300.0
DEFAULT_DELAY_OF_INITIAL_READINESS_STATUS = 30.0


class CalculationError(Exception):
    """A replica count could not be computed (the message is Kubernetes' error text)."""


@dataclass(frozen=True)
class PodMetric:
    """One pod's metric: ``value`` in milli-units, sampled at ``timestamp`` over ``window`` s."""

    value: int
    timestamp: float = 0.0
    window: float = 0.0


def _milli(q: object) -> int:
    return math.ceil(parse_quantity(str(q)) * 1000)


def pod_metrics_info(items: Iterable[JSON], resource: str) -> dict[str, PodMetric]:
    """getPodMetrics: ``PodMetrics`` objects (metrics.k8s.io/v1beta1) as ``name → PodMetric``."""
    out: dict[str, PodMetric] = {}
    for m in items:
        containers = m.get("containers") or []
        total, missing = 0, not containers
        for c in containers:
            v = (c.get("usage") or {}).get(resource)
            if v is None:
                missing = True
                break
            total += _milli(v)
        if missing:
            continue
        ts = apitime.time_or_none(m.get("timestamp")) or 0.0
        try:
            window = apitime.parse_duration(str(m.get("window") or "0s"))
        except ValueError:
            window = 0.0
        out[str((m.get("metadata") or {}).get("name"))] = PodMetric(total, ts, window)
    return out


def _ready_condition(pod: JSON) -> JSON | None:
    return next((c for c in (pod.get("status") or {}).get("conditions") or []
                 if isinstance(c, dict) and c.get("type") == "Ready"), None)


def group_pods(pods: Iterable[JSON], metrics: dict[str, PodMetric], resource: str, cpu_initialization_period: float,
               delay_of_initial_readiness_status: float, now: float
               ) -> tuple[int, set[str], set[str], set[str]]:
    """groupPods: ``(ready pod count, unready, missing, ignored)`` pod names (module docstring)."""
    ready, unready, missing, ignored = 0, set(), set(), set()
    for pod in pods:
        md, st = pod.get("metadata") or {}, pod.get("status") or {}
        name = str(md.get("name"))
        if md.get("deletionTimestamp") or st.get("phase") == "Failed":
            ignored.add(name)
            continue
        if st.get("phase") == "Pending":
            unready.add(name)
            continue
        metric = metrics.get(name)
        if metric is None:
            missing.add(name)
            continue
        if resource == "cpu":
            cond = _ready_condition(pod)
            start = apitime.time_or_none(st.get("startTime"))
            if cond is None or start is None:
                is_unready = True
            else:
                transition = apitime.time_or_none(cond.get("lastTransitionTime")) or 0.0
                if start + cpu_initialization_period > now:
                    is_unready = cond.get("status") == "False" or metric.timestamp < transition + metric.window
                else:
                    is_unready = cond.get("status") == "False" and start + delay_of_initial_readiness_status > transition
            if is_unready:
                unready.add(name)
                continue
        ready += 1
    return ready, unready, missing, ignored


def pod_requests(pods: Iterable[JSON], container: str, resource: str) -> dict[str, int]:
    """calculatePodRequests: each pod's request of ``resource`` (milli-units), summed over its
    containers and restartable init containers (only ``container`` when given). Raises
    CalculationError ``missing request for cpu in container app of Pod web`` when one has none."""
    out: dict[str, int] = {}
    for pod in pods:
        spec, name = pod.get("spec") or {}, str((pod.get("metadata") or {}).get("name"))
        containers = list(spec.get("containers") or []) + [
            c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
        total = 0
        for c in containers:
            if container and c.get("name") != container:
                continue
            req = ((c.get("resources") or {}).get("requests") or {}).get(resource)
            if req is None:
                raise CalculationError(f"missing request for {resource} in container {c.get('name')} of Pod {name}")
            total += _milli(req)
        out[name] = total
    return out


def utilization_ratio(metrics: dict[str, PodMetric], requests: dict[str, int], target: int
                      ) -> tuple[float, int, int]:
    """GetResourceUtilizationRatio: ``(usage ratio, utilization %, raw average value)`` over the
    pods with both a metric and a request. Raises CalculationError when none matches."""
    total = requested = n = 0
    for name, m in metrics.items():
        if name not in requests:
            continue
        total += m.value
        requested += requests[name]
        n += 1
    if requested == 0:
        raise CalculationError("no metrics returned matched known pods")
    utilization = total * 100 // requested  # Go's int64 division (non-negative values)
    return utilization / target, utilization, total // n


def usage_ratio(metrics: dict[str, PodMetric], target: int) -> tuple[float, int]:
    """GetMetricUsageRatio: ``(usage ratio, average usage)`` of the metrics against ``target``."""
    avg = sum(m.value for m in metrics.values()) // len(metrics)
    return avg / target, avg


@dataclass
class ReplicaCalculator:
    """ReplicaCalculator with ``tolerance`` and the cpu readiness settings (seconds)."""

    tolerance: float = DEFAULT_TOLERANCE
    cpu_initialization_period: float = DEFAULT_CPU_INITIALIZATION_PERIOD
    delay_of_initial_readiness_status: float = DEFAULT_DELAY_OF_INITIAL_READINESS_STATUS

    def _grouped(self, pods: list[JSON], metrics: dict[str, PodMetric], resource: str, now: float
                 ) -> tuple[int, set[str], set[str]]:
        if not pods:
            raise CalculationError("no pods returned by selector while calculating replica count")
        ready, unready, missing, ignored = group_pods(pods, metrics, resource, self.cpu_initialization_period,
                                                      self.delay_of_initial_readiness_status, now)
        for name in ignored | unready:
            metrics.pop(name, None)
        return ready, unready, missing

    def resource_replicas(self, current: int, target_utilization: int, resource: str, pods: list[JSON],
                          metrics: dict[str, PodMetric], now: float, container: str = ""
                          ) -> tuple[int, int, int]:
        """GetResourceReplicas: ``(replicas, utilization %, raw average milli-value)``. ``metrics``
        (from :func:`pod_metrics_info`; changed in place) must not be empty: the metrics client
        answers ``no metrics returned from resource metrics API`` before."""
        metrics = dict(metrics)
        ready, unready, missing = self._grouped(pods, metrics, resource, now)
        requests = pod_requests(pods, container, resource)
        if not metrics:
            raise CalculationError("did not receive metrics for targeted pods (pods might be unready)")
        ratio, utilization, raw = utilization_ratio(metrics, requests, target_utilization)
        scale_up_with_unready = bool(unready) and ratio > 1.0
        if not scale_up_with_unready and not missing:
            if abs(1.0 - ratio) <= self.tolerance:
                return current, utilization, raw
            return math.ceil(ratio * ready), utilization, raw
        if missing:
            if ratio < 1.0:
                fallback = max(100, target_utilization)
                for name in missing:
                    metrics[name] = PodMetric(int(requests[name] * fallback / 100))
            elif ratio > 1.0:
                for name in missing:
                    metrics[name] = PodMetric(0)
        if scale_up_with_unready:
            for name in unready:
                metrics[name] = PodMetric(0)
        new_ratio, _, _ = utilization_ratio(metrics, requests, target_utilization)
        return self._rebalanced(current, ratio, new_ratio, len(metrics)), utilization, raw

    def raw_resource_replicas(self, current: int, target_value: int, resource: str, pods: list[JSON],
                              metrics: dict[str, PodMetric], now: float) -> tuple[int, int]:
        """GetRawResourceReplicas (calcPlainMetricReplicas): ``(replicas, average milli-value)``
        for an AverageValue target of ``target_value`` milli-units."""
        metrics = dict(metrics)
        ready, unready, missing = self._grouped(pods, metrics, resource, now)
        if not metrics:
            raise CalculationError("did not receive metrics for targeted pods (pods might be unready)")
        ratio, avg = usage_ratio(metrics, target_value)
        scale_up_with_unready = bool(unready) and ratio > 1.0
        if not scale_up_with_unready and not missing:
            if abs(1.0 - ratio) <= self.tolerance:
                return current, avg
            return math.ceil(ratio * ready), avg
        if missing:
            for name in missing:
                metrics[name] = PodMetric(target_value if ratio < 1.0 else 0)
        if scale_up_with_unready:
            for name in unready:
                metrics[name] = PodMetric(0)
        new_ratio, _ = usage_ratio(metrics, target_value)
        return self._rebalanced(current, ratio, new_ratio, len(metrics)), avg

    def _rebalanced(self, current: int, ratio: float, new_ratio: float, n: int) -> int:
        """The proposal after the missing / unready pods were filled in: none when within the
        tolerance or when the direction would change (of the ratio, or of the count)."""
        if abs(1.0 - new_ratio) <= self.tolerance or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
            return current
        replicas = math.ceil(new_ratio * n)
        if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
            return current
        return replicas
