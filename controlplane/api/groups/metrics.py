"""``metrics.k8s.io/v1beta1``: NodeMetrics and PodMetrics, read-only and never stored.

On a real cluster metrics-server serves this group behind the aggregator
(``sigs.k8s.io/metrics-server/pkg/api``: ``node.go``, ``pod.go``, ``table.go``; types
``k8s.io/metrics/pkg/apis/metrics/v1beta1/types.go``). Here the apiserver serves it itself: each
entry's ``compute`` derives the objects, on every GET, from the watch caches of ``nodes`` and
``pods`` and the simulated runtime's usage rule (:mod:`controlplane.usage`). Verbs ``get`` and
``list`` (label and field selectors on ``metadata``), as metrics-server's discovery lists them.

Shapes as metrics-server answers:

* ``metadata``: ``name`` (and ``namespace``), ``creationTimestamp`` the time of the request,
  ``labels`` those of the node / pod;
* ``timestamp``: the sample's time, ``window``: ``"15s"`` (a ``metav1.Duration``);
* ``usage`` (a node) or ``containers[].usage`` (a pod): ``cpu`` in cores as a canonical
  quantity of nanocores (``"12345n"``, or ``"250m"`` when it is round), ``memory`` in bytes
  (``"65540Ki"``, whole pages);
* lists ``NodeMetricsList`` / ``PodMetricsList`` with empty ``metadata``, sorted by name
  (pods by namespace, then name).

Only Ready nodes and Running pods with a running container have metrics (a node not
reporting, a pod Pending or finished is left out of lists; a GET answers 404
``nodemetrics.metrics.k8s.io "<name>" not found`` / ``podmetrics.metrics.k8s.io
"<namespace>/<name>" not found``, components/apiserver/computed.py). Tables: ``Name``, ``cpu``,
``memory``, ``Window`` (a pod's usage summed over its containers), as metrics-server's
``addNodeMetricsToTable`` / ``addPodMetricsToTable`` (which leave the last three columns
without a description; every column here has one).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from controlplane import apitime, usage
from controlplane.api.quantity import format_quantity, parse_quantity
from controlplane.api.registry import JSON, KindSchema, Printer, Resource, SourceLister

GROUP = "metrics.k8s.io"
VERSION = "v1beta1"
API_VERSION = f"{GROUP}/{VERSION}"
#: ``window`` of every sample, as metav1.Duration prints it
WINDOW = apitime.format_duration(usage.WINDOW)

TYPES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "ContainerMetrics": ("ContainerMetrics sets resource usage metrics of a container.", {
        "name": ("string", "Container name corresponding to the one from pod.spec.containers."),
        "usage": ("map[Quantity]", "The memory usage is the memory working set."),
    }),
}

_TIMESTAMP = ("Time", "The following fields define time interval from which metrics were collected from the "
                      "interval [Timestamp-Window, Timestamp].")
_WINDOW = ("string", "Window is the length of the interval the metrics were collected over (a duration).")

NODE_SCHEMA = KindSchema("NodeMetrics sets resource usage metrics of a node.", {
    "timestamp": _TIMESTAMP,
    "window": _WINDOW,
    "usage": ("map[Quantity]", "The memory usage is the memory working set."),
}, TYPES)
POD_SCHEMA = KindSchema("PodMetrics sets resource usage metrics of a pod.", {
    "timestamp": _TIMESTAMP,
    "window": _WINDOW,
    "containers": ("[]ContainerMetrics", "Metrics for all containers are collected within the same time window."),
}, TYPES)


def cpu_text(nanocores: int) -> str:
    """``nanocores`` as metrics-server's cpu quantity (``resource.NewScaledQuantity(n, -9)``
    printed canonically): ``"12345n"``, ``"250m"``, ``"0"``."""
    return format_quantity(Fraction(nanocores, 10**9))


def memory_text(nbytes: int) -> str:
    """``nbytes`` as a BinarySI quantity (``"65540Ki"``; ``"64Mi"`` when it is round)."""
    return format_quantity(nbytes, binary=True)


def _usage(u: usage.Usage) -> JSON:
    return {"cpu": cpu_text(u.cpu), "memory": memory_text(u.memory)}


def _meta(obj: JSON, now: float) -> JSON:
    md = obj.get("metadata") or {}
    out: JSON = {"name": md.get("name", "")}
    if md.get("namespace"):
        out["namespace"] = md["namespace"]
    out["creationTimestamp"] = apitime.format_time(now)
    if md.get("labels"):
        out["labels"] = dict(md["labels"])
    return out


def _node_ready(node: JSON) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [] if isinstance(c, dict))


def node_metrics(objects: SourceLister, namespace: str | None, now: float) -> list[JSON]:
    """The NodeMetrics of every Ready node (sorted by name) at ``now`` (epoch seconds)."""
    pods = list(objects("pods"))
    ts = apitime.format_time(usage.sample_time(now))
    out = []
    for node in sorted(objects("nodes"), key=lambda n: str((n.get("metadata") or {}).get("name", ""))):
        if not _node_ready(node):
            continue
        out.append({"kind": "NodeMetrics", "apiVersion": API_VERSION, "metadata": _meta(node, now),
                    "timestamp": ts, "window": WINDOW, "usage": _usage(usage.node_usage(node, pods))})
    return out


def pod_metrics(objects: SourceLister, namespace: str | None, now: float) -> list[JSON]:
    """The PodMetrics of every Running pod with a running container (in ``namespace``, or
    all), sorted by namespace and name, at ``now`` (epoch seconds)."""
    ts = apitime.format_time(usage.sample_time(now))
    out = []
    pods = [p for p in objects("pods") if not namespace or (p.get("metadata") or {}).get("namespace") == namespace]
    for pod in sorted(pods, key=lambda p: (str(p["metadata"].get("namespace", "")), str(p["metadata"].get("name")))):
        containers = usage.pod_usage(pod)
        if containers is None:
            continue
        out.append({"kind": "PodMetrics", "apiVersion": API_VERSION, "metadata": _meta(pod, now),
                    "timestamp": ts, "window": WINDOW,
                    "containers": [{"name": name, "usage": _usage(u)} for name, u in containers]})
    return out


# --------------------------------------------------------------------------- tables

COLUMNS = (
    {"name": "Name", "type": "string", "format": "name", "description": "Name of the resource", "priority": 0},
    {"name": "cpu", "type": "string", "format": "quantity", "description": "CPU usage (cores)", "priority": 0},
    {"name": "memory", "type": "string", "format": "quantity", "description": "Memory working set", "priority": 0},
    {"name": "Window", "type": "string", "format": "duration",
     "description": "The length of the interval the usage was measured over", "priority": 0},
)


def _sum(usages: list[Any]) -> tuple[str, str]:
    cpu, mem = Fraction(0), Fraction(0)
    for u in usages:
        u = u if isinstance(u, dict) else {}
        cpu += parse_quantity(str(u.get("cpu", "0")))
        mem += parse_quantity(str(u.get("memory", "0")))
    return format_quantity(cpu), format_quantity(mem, binary=True)


def _node_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    cpu, mem = _sum([obj.get("usage")])
    return [(obj.get("metadata") or {}).get("name", ""), cpu, mem, obj.get("window", "")], None


def _pod_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    cpu, mem = _sum([c.get("usage") for c in obj.get("containers") or [] if isinstance(c, dict)])
    return [(obj.get("metadata") or {}).get("name", ""), cpu, mem, obj.get("window", "")], None


_READ = ("get", "list")

ENTRIES: tuple[Resource, ...] = (
    Resource(GROUP, VERSION, "nodes", "", "NodeMetrics", False, (), (), (), _READ,
             printer=Printer(COLUMNS, _node_row), schema=NODE_SCHEMA, compute=node_metrics),
    Resource(GROUP, VERSION, "pods", "", "PodMetrics", True, (), (), (), _READ,
             printer=Printer(COLUMNS, _pod_row), schema=POD_SCHEMA, compute=pod_metrics),
)
