"""The simulated runtime's resource usage: what each running container "uses".

No process runs behind a simulated container, so its CPU and memory usage is a rule of the
simulated runtime, computed from the pod object alone (deterministic: the same pod gives the
same numbers in every process). The apiserver serves it as ``metrics.k8s.io/v1beta1``
(metrics-server's NodeMetrics / PodMetrics, ``sigs.k8s.io/metrics-server``), which
``kubectl top`` and the HorizontalPodAutoscaler controller read.

The rule, per container of a pod in phase ``Running`` whose status shows it ``running``
(containers waiting or terminated use nothing, and a pod not Running has no metrics, as
metrics-server reports only Running pods; restartable init containers — sidecars — count
when running):

* **annotations** on the pod set usage explicitly, as quantities:
  ``controlplane.io/cpu-usage.<container>`` / ``controlplane.io/memory-usage.<container>``
  for one container, else ``controlplane.io/cpu-usage`` / ``controlplane.io/memory-usage``
  for every container of the pod (e.g. ``"250m"``, ``"64Mi"``). ``kubectl annotate pod``
  is the simulated load: no jitter is added to an explicit value;
* otherwise the **default profile**: :data:`DEFAULT_CPU_FRACTION` of the container's cpu
  request (else of its limit, else :data:`DEFAULT_CPU`) and :data:`DEFAULT_MEMORY_FRACTION`
  of its memory request (else limit, else :data:`DEFAULT_MEMORY`), each times a
  deterministic jitter factor in [0.8, 1.2) drawn from the pod uid and container name, so
  ``kubectl top`` is not flat (an idle php-apache with a 200m request shows about 10m, 5%).

Memory is rounded up to whole 4 KiB pages (cAdvisor's working set is counted in pages), so
a value prints in ``Ki`` as metrics-server's do; the jitter is fine enough that a default
cpu value prints in nanocores (``"10466823n"``), as cAdvisor's rates do. A node uses the sum of its pods plus a
system overhead (:data:`NODE_OVERHEAD_CPU`, :data:`NODE_OVERHEAD_MEMORY`: about what the
kubelet, the container runtime and systemd take on an idle kind node), jittered by node uid.

Samples: metrics-server scrapes every ``--metric-resolution`` (15 s by default since v0.5;
its ``window`` is the time between the two samples a rate is computed from). A sample here is
taken at the last multiple of :data:`WINDOW` seconds (:func:`sample_time`), with ``window``
15 s: the HPA's readiness rule (a metric older than one window after a pod turned Ready is
ignored, ``pkg/controller/podautoscaler/replica_calculator.go`` groupPods) then works as on
a real cluster.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable

from controlplane.api.quantity import parse_quantity

JSON = dict[str, Any]

#: the pod annotations of the rule (``<name>.<container>`` for one container)
CPU_ANNOTATION = "controlplane.io/cpu-usage"
MEMORY_ANNOTATION = "controlplane.io/memory-usage"

#: seconds between samples, and each sample's ``window`` (metrics-server's default resolution)
WINDOW = 15.0
#: the default profile's share of a container's request (or limit)
DEFAULT_CPU_FRACTION = Fraction(5, 100)
DEFAULT_MEMORY_FRACTION = Fraction(30, 100)
#: the default profile of a container with no request and no limit: nanocores, bytes
DEFAULT_CPU = 2_000_000
DEFAULT_MEMORY = 16 * 1024 * 1024
#: what a node's system daemons use besides its pods: nanocores, bytes
NODE_OVERHEAD_CPU = 60_000_000
NODE_OVERHEAD_MEMORY = 300 * 1024 * 1024
#: memory is counted in pages
PAGE = 4096


@dataclass(frozen=True)
class Usage:
    """One container's (or node's) usage: ``cpu`` in nanocores, ``memory`` in bytes."""

    cpu: int
    memory: int

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.cpu + other.cpu, self.memory + other.memory)


def sample_time(now: float) -> float:
    """The time of the latest sample at ``now`` (epoch seconds): the last multiple of :data:`WINDOW`."""
    return math.floor(now / WINDOW) * WINDOW


def _jitter(*parts: str) -> Fraction:
    """A factor in [0.8, 1.2) fixed by ``parts`` (a pod uid and a container name)."""
    h = int.from_bytes(hashlib.sha256("/".join(parts).encode()).digest()[:8], "big")
    return Fraction(8, 10) + Fraction(h % 400_000_000, 1_000_000_000)


def _pages(b: Fraction | int) -> int:
    return math.ceil(Fraction(b) / PAGE) * PAGE


def _quantity(v: object) -> Fraction | None:
    if v is None:
        return None
    try:
        return parse_quantity(str(v))
    except ValueError:
        return None


def _explicit(annotations: JSON, name: str, container: str) -> Fraction | None:
    q = _quantity(annotations.get(f"{name}.{container}"))
    return q if q is not None else _quantity(annotations.get(name))


def container_usage(pod: JSON, container: JSON) -> Usage:
    """The usage of ``container`` (a ``spec.containers[]`` item) of ``pod`` by the rule above,
    whether or not it runs (:func:`pod_usage` picks the running ones)."""
    md = pod.get("metadata") or {}
    ann = md.get("annotations") or {}
    name = str(container.get("name") or "")
    res = container.get("resources") or {}
    req, lim = res.get("requests") or {}, res.get("limits") or {}
    jitter = _jitter(str(md.get("uid") or md.get("name") or ""), name)

    cpu_q = _explicit(ann, CPU_ANNOTATION, name)
    if cpu_q is not None:
        cpu = math.ceil(cpu_q * 10**9)
    else:
        base = _quantity(req.get("cpu")) or _quantity(lim.get("cpu"))
        cpu = math.ceil((base * 10**9 * DEFAULT_CPU_FRACTION if base else DEFAULT_CPU) * jitter)
    mem_q = _explicit(ann, MEMORY_ANNOTATION, name)
    if mem_q is not None:
        mem = _pages(mem_q)
    else:
        base = _quantity(req.get("memory")) or _quantity(lim.get("memory"))
        mem = _pages((base * DEFAULT_MEMORY_FRACTION if base else DEFAULT_MEMORY) * jitter)
    return Usage(max(cpu, 0), max(mem, 0))


def _running(statuses: object) -> set[str]:
    return {str(s.get("name")) for s in statuses or [] if isinstance(s, dict)
            and "running" in (s.get("state") or {})} if isinstance(statuses, list) else set()


def pod_usage(pod: JSON) -> list[tuple[str, Usage]] | None:
    """``(container name, usage)`` of each running container of ``pod`` (spec order, then the
    running sidecars), or None when the pod has no metrics: not in phase Running, being
    deleted with no container running, or no container running at all."""
    st = pod.get("status") or {}
    if st.get("phase") != "Running":
        return None
    spec = pod.get("spec") or {}
    running = _running(st.get("containerStatuses"))
    out = [(str(c.get("name")), container_usage(pod, c)) for c in spec.get("containers") or []
           if isinstance(c, dict) and c.get("name") in running]
    sidecars = _running(st.get("initContainerStatuses"))
    out += [(str(c.get("name")), container_usage(pod, c)) for c in spec.get("initContainers") or []
            if isinstance(c, dict) and c.get("restartPolicy") == "Always" and c.get("name") in sidecars]
    return out or None


def node_usage(node: JSON, pods: Iterable[JSON]) -> Usage:
    """The usage of ``node``: the sum of its running pods' containers (``pods`` may hold any
    pods; those bound elsewhere are skipped) plus the jittered system overhead."""
    md = node.get("metadata") or {}
    name = md.get("name")
    jitter = _jitter(str(md.get("uid") or name or ""), "system")
    total = Usage(math.ceil(NODE_OVERHEAD_CPU * jitter), _pages(NODE_OVERHEAD_MEMORY * jitter))
    for pod in pods:
        if (pod.get("spec") or {}).get("nodeName") != name:
            continue
        for _, u in pod_usage(pod) or []:
            total = total + u
    return total
