"""NodeResourcesFit (Filter, Score) and NodeResourcesBalancedAllocation (Score).

Fit: the pod's effective requests (see :func:`podinfo.pod_requests`) plus what the
node's pods request must stay within allocatable, for cpu, memory,
ephemeral-storage, the pod count and each extended resource the pod asks for;
reasons ``Insufficient <resource>`` / ``Too many pods``. Score (LeastAllocated,
cpu and memory weight 1): mean of ``(allocatable - requested) * 100 / allocatable``
using non-zero requests. BalancedAllocation: ``(1 - std(requested/allocatable)) * 100``
using actual requests; skipped for pods that request nothing.
Sources: pkg/scheduler/framework/plugins/noderesources/{fit.go,least_allocated.go,
balanced_allocation.go,resource_allocation.go}.
"""

from __future__ import annotations

import math

from components.scheduler.framework import MAX_NODE_SCORE, SKIP, UNSCHEDULABLE, Status

FIT = "NodeResourcesFit"
BALANCED = "NodeResourcesBalancedAllocation"

#: default scoring resources and weights (apis/config/v1 defaults.go)
DEFAULT_RESOURCES = (("cpu", 1), ("memory", 1))


def insufficient_resources(pod, node) -> list[str]:
    """The reasons ``pod`` does not fit ``node`` by resources (fit.go fitsRequest);
    empty when it fits."""
    alloc, used, req = node.allocatable, node.requested, pod.requests
    if (len(node.pods) < alloc.allowed_pods and used.milli_cpu + req.milli_cpu <= alloc.milli_cpu
            and used.memory + req.memory <= alloc.memory
            and used.ephemeral_storage + req.ephemeral_storage <= alloc.ephemeral_storage
            and not req.scalar):
        return []  # fast path: fits
    reasons: list[str] = []
    if len(node.pods) + 1 > alloc.allowed_pods:
        reasons.append("Too many pods")
    req = pod.requests
    if req.is_zero():
        return reasons
    used = node.requested
    if req.milli_cpu and alloc.milli_cpu < req.milli_cpu + used.milli_cpu:
        reasons.append("Insufficient cpu")
    if req.memory and alloc.memory < req.memory + used.memory:
        reasons.append("Insufficient memory")
    if req.ephemeral_storage and alloc.ephemeral_storage < req.ephemeral_storage + used.ephemeral_storage:
        reasons.append("Insufficient ephemeral-storage")
    for name, q in req.scalar.items():
        if q and alloc.scalar.get(name, 0) < q + used.scalar.get(name, 0):
            reasons.append(f"Insufficient {name}")
    return reasons


def least_requested_score(requested: int, capacity: int) -> int:
    """``(capacity - requested) * 100 // capacity``; 0 when over capacity or no capacity."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


class NodeResourcesFit:
    """The NodeResourcesFit Filter/Score plugin: requests must fit the node's allocatable;
    the score is LeastAllocated over ``scoringStrategy.resources`` (default cpu and memory,
    weight 1; the strategy's ``type`` is not read); see the module docstring."""

    name = FIT

    def __init__(self, args: dict | None = None, handle=None) -> None:
        args = args or {}
        strategy = args.get("scoringStrategy") or {}
        self.resources = tuple((r["name"], int(r.get("weight", 1)))
                               for r in strategy.get("resources") or []) or DEFAULT_RESOURCES

    def events_to_register(self) -> list[tuple[str, str]]:
        return [("Pod", "Delete"), ("Pod", "UpdatePodScaleDown"), ("Node", "Add"),
                ("Node", "UpdateNodeAllocatable")]

    def filter(self, state, pod, node) -> Status | None:
        reasons = insufficient_resources(pod, node)
        if reasons:
            return Status(UNSCHEDULABLE, *reasons)
        return None

    def score(self, state, pod, node) -> int:
        alloc, used, req = node.allocatable, node.non_zero_requested, pod.non_zero_requests
        total = weights = 0
        for name, w in self.resources:
            cap = alloc.get(name)
            if cap == 0:
                continue
            total += least_requested_score(used.get(name) + req.get(name), cap) * w
            weights += w
        return total // weights if weights else 0


    def score_nodes(self, state, pod, nodes) -> list[int]:
        """:meth:`score` for many nodes; inlined for the default cpu+memory case."""
        if self.resources != DEFAULT_RESOURCES:
            return [self.score(state, pod, n) for n in nodes]
        pc, pm = pod.non_zero_requests.milli_cpu, pod.non_zero_requests.memory
        out = []
        for n in nodes:
            a, u = n.allocatable, n.non_zero_requested
            total = weights = 0
            cap = a.milli_cpu
            if cap:
                r = u.milli_cpu + pc
                total += (cap - r) * MAX_NODE_SCORE // cap if r <= cap else 0
                weights += 1
            cap = a.memory
            if cap:
                r = u.memory + pm
                total += (cap - r) * MAX_NODE_SCORE // cap if r <= cap else 0
                weights += 1
            out.append(total // weights if weights else 0)
        return out


class NodeResourcesBalancedAllocation:
    """The NodeResourcesBalancedAllocation PreScore/Score plugin: favours nodes whose
    cpu and memory fractions stay close to each other after placing the pod (see the
    module docstring)."""

    name = BALANCED

    def __init__(self, args: dict | None = None, handle=None) -> None:
        args = args or {}
        self.resources = tuple(r["name"] for r in args.get("resources") or []) or \
            tuple(n for n, _ in DEFAULT_RESOURCES)

    def events_to_register(self) -> list[tuple[str, str]]:
        return [("Pod", "Delete"), ("Node", "Add"), ("Node", "UpdateNodeAllocatable")]

    def pre_score(self, state, pod, nodes, snapshot) -> Status | None:
        if all(pod.requests.get(n) == 0 for n in self.resources):
            return Status(SKIP)  # best-effort pod
        return None

    def score_nodes(self, state, pod, nodes) -> list[int]:
        """:meth:`score` for many nodes; inlined for the default cpu+memory case."""
        if self.resources != ("cpu", "memory"):
            return [self.score(state, pod, n) for n in nodes]
        pc, pm = pod.requests.milli_cpu, pod.requests.memory
        out = []
        append = out.append
        for n in nodes:
            a = n.allocatable
            ac, am = a.milli_cpu, a.memory
            if ac and am:  # two fractions: std = |f1 - f2| / 2; one or none: 0
                u = n.requested
                fc = (u.milli_cpu + pc) / ac
                fm = (u.memory + pm) / am
                d = (fc if fc < 1.0 else 1.0) - (fm if fm < 1.0 else 1.0)
                append(int((1 - (d if d >= 0 else -d) / 2) * MAX_NODE_SCORE))
            else:
                append(MAX_NODE_SCORE)
        return out

    def score(self, state, pod, node) -> int:
        fractions = []
        for name in self.resources:
            cap = node.allocatable.get(name)
            if cap == 0:
                continue
            fractions.append(min((node.requested.get(name) + pod.requests.get(name)) / cap, 1.0))
        if len(fractions) == 2:
            std = abs(fractions[0] - fractions[1]) / 2
        elif len(fractions) > 2:
            mean = sum(fractions) / len(fractions)
            std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
        else:
            std = 0.0
        return int((1 - std) * MAX_NODE_SCORE)
