"""NodeResourcesFit (Filter, Score) and NodeResourcesBalancedAllocation (Score).

Fit: the pod's effective requests (see :func:`podinfo.pod_requests`) plus what the
node's pods request must stay within allocatable, for cpu, memory,
ephemeral-storage, the pod count and each extended resource the pod asks for;
reasons ``Insufficient <resource>`` / ``Too many pods``.

Fit's Score follows ``pluginConfig[NodeResourcesFit].args.scoringStrategy``:

* ``LeastAllocated`` (default; cpu and memory weight 1): per resource
  ``(allocatable - requested) * 100 // allocatable``;
* ``MostAllocated``: per resource ``min(requested, allocatable) * 100 // allocatable``
  (bin packing);
* ``RequestedToCapacityRatio``: per resource the broken-linear ``shape`` (utilization
  0..100 → score 0..10, scaled ×10) at ``requested * 100 // allocatable``; only
  resources scoring > 0 count, and the mean is rounded.

"requested" is what the node's pods request plus the pod's request, with the
non-zero defaults (100m / 200Mi) for cpu and memory; resources the node does not
offer are left out, and so are extended resources the pod does not request. The
node's score is the weighted mean over ``scoringStrategy.resources``.
BalancedAllocation: ``(1 - std(requested/allocatable)) * 100`` using actual
requests; skipped for pods that request nothing.

Sources: pkg/scheduler/framework/plugins/noderesources/{fit.go,least_allocated.go,
most_allocated.go,requested_to_capacity_ratio.go,balanced_allocation.go,
resource_allocation.go}, plugins/helper/shape_score.go; args defaults and
validation: pkg/scheduler/apis/config/v1/defaults.go (SetDefaults_NodeResourcesFitArgs),
pkg/scheduler/apis/config/validation/validation_pluginargs.go (ValidateNodeResourcesFitArgs).
"""

from __future__ import annotations

import math
from typing import Callable

from components.scheduler.framework import MAX_NODE_SCORE, SKIP, UNSCHEDULABLE, Status
from components.scheduler.podinfo import CPU, EPHEMERAL, MEMORY, PODS
from controlplane.api.validation import ErrorList

FIT = "NodeResourcesFit"
BALANCED = "NodeResourcesBalancedAllocation"

#: default scoring resources and weights (apis/config/v1 defaults.go)
DEFAULT_RESOURCES = (("cpu", 1), ("memory", 1))

LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO = (
    "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
#: scoringStrategy.type values, sorted as field.NotSupported lists them
SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)
#: the top of a RequestedToCapacityRatio shape's score axis (config.MaxCustomPriorityScore)
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100


def insufficient_resources(pod, node) -> list[str]:
    """The reasons ``pod`` does not fit ``node`` by resources (fit.go fitsRequest);
    empty when it fits."""
    alloc, used, req = node.allocatable, node.requested, pod.requests
    reasons: list[str] = []
    if len(node.pods) + 1 > alloc.allowed_pods:
        reasons.append("Too many pods")
    if req.is_zero():
        return reasons
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
    """``(capacity - requested) * 100 // capacity``; 0 when over capacity or no capacity
    (least_allocated.go leastRequestedScore)."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    """``min(requested, capacity) * 100 // capacity``; 0 without capacity
    (most_allocated.go mostRequestedScore: requests above capacity count as full)."""
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def broken_linear(shape: list[tuple[int, int]]) -> Callable[[int], int]:
    """``f(utilization) -> score`` through the ``(utilization, score)`` points (sorted by
    utilization): the first score below the first point, the last above the last,
    integer-linear in between (helper/shape_score.go BuildBrokenLinearFunction)."""
    def f(p: int) -> int:
        for i, (u, sc) in enumerate(shape):
            if p <= u:
                if i == 0:
                    return sc
                u0, s0 = shape[i - 1]
                return s0 + _go_div((sc - s0) * (p - u0), u - u0)
        return shape[-1][1]
    return f


def _go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Go's ``/`` (a falling shape)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def requested_to_capacity_ratio_score(shape: list[tuple[int, int]]) -> Callable[[int, int], int]:
    """Per-resource score for RequestedToCapacityRatio: ``shape`` points have scores
    0..10, scaled to 0..100; a resource at or over capacity (or with none) scores
    ``f(100)``, else ``f(requested * 100 // capacity)``
    (requested_to_capacity_ratio.go buildRequestedToCapacityRatioScorerFunction)."""
    f = broken_linear([(int(u), int(sc) * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE))
                       for u, sc in shape])

    def score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return f(MAX_UTILIZATION)
        return f(requested * MAX_UTILIZATION // capacity)
    return score


def validate_fit_args(args: dict) -> ErrorList:
    """NodeResourcesFitArgs errors (causes with ``field`` relative to ``args`` and
    ``message``), after v1 defaulting (no scoringStrategy → LeastAllocated with cpu
    and memory; no resources → cpu and memory; weight 0 → 1). Checks, as
    ValidateNodeResourcesFitArgs: ``scoringStrategy.type`` supported, each
    ``resources[i].weight`` in (0, 100], and for RequestedToCapacityRatio a
    ``requestedToCapacityRatio.shape`` of points with utilization in [0, 100] strictly
    increasing and score in [0, 10] (``requestedToCapacityRatio`` forbidden otherwise)."""
    errs = ErrorList()
    if not isinstance(args, dict):
        errs.type_invalid("", args, "expected a NodeResourcesFitArgs mapping")
        return errs
    strategy = args.get("scoringStrategy")
    if strategy is None:
        return errs
    if not isinstance(strategy, dict):
        errs.type_invalid("scoringStrategy", strategy, "expected a mapping")
        return errs
    path = "scoringStrategy"
    typ = strategy.get("type", "")
    if typ not in SCORING_STRATEGY_TYPES:
        errs.not_supported(f"{path}.type", typ, list(SCORING_STRATEGY_TYPES))
    resources = strategy.get("resources") or []
    if not isinstance(resources, list):
        errs.type_invalid(f"{path}.resources", resources, "expected a list")
        resources = []
    for i, r in enumerate(resources):
        if not isinstance(r, dict) or not isinstance(r.get("name"), str) or not r.get("name"):
            errs.required(f"{path}.resources[{i}].name")
            continue
        w = r.get("weight") or 0
        if not isinstance(w, int) or isinstance(w, bool):
            errs.type_invalid(f"{path}.resources[{i}].weight", w, "expected an integer")
        elif w != 0 and not 0 < w <= 100:  # 0 is defaulted to 1
            errs.invalid(f"{path}.resources[{i}].weight", w,
                         f"resource weight of {r['name']} not in valid range (0, 100]")
    rtcr = strategy.get("requestedToCapacityRatio")
    if typ == REQUESTED_TO_CAPACITY_RATIO:
        if rtcr is None:
            errs.required(f"{path}.requestedToCapacityRatio",
                          "must be specified when type is RequestedToCapacityRatio")
        else:
            _validate_shape((rtcr or {}).get("shape") if isinstance(rtcr, dict) else None,
                            f"{path}.requestedToCapacityRatio.shape", errs)
    elif rtcr is not None:
        errs.forbidden(f"{path}.requestedToCapacityRatio",
                       "must be nil when type is not RequestedToCapacityRatio")
    return errs


def _validate_shape(shape: object, path: str, errs: ErrorList) -> None:
    if not shape or not isinstance(shape, list):
        errs.required(path, "at least one point must be specified")
        return
    points = []
    for i, pt in enumerate(shape):
        u = pt.get("utilization", 0) if isinstance(pt, dict) else None
        sc = pt.get("score", 0) if isinstance(pt, dict) else None
        if not isinstance(u, int) or not isinstance(sc, int):
            errs.type_invalid(f"{path}[{i}]", pt, "expected {utilization: int, score: int}")
            return
        points.append((u, sc))
    for i in range(1, len(points)):
        if points[i - 1][0] >= points[i][0]:
            errs.invalid(f"{path}[{i}].utilization", points[i][0], "values must be sorted in increasing order")
            break
    for i, (u, sc) in enumerate(points):
        if not 0 <= u <= MAX_UTILIZATION:
            errs.invalid(f"{path}[{i}].utilization", u, f"not in valid range [0, {MAX_UTILIZATION}]")
        if not 0 <= sc <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.invalid(f"{path}[{i}].score", sc, f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]")


def aggregate(errs: ErrorList) -> str:
    """One line as ``ErrorList.ToAggregate().Error()``: one error as it is, several as
    ``[e1, e2]``; each ``<field>: <message>``."""
    msgs = [f"{e['field']}: {e['message']}" if e["field"] else e["message"] for e in errs]
    return msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"


def allocatable_and_requested(pod, node, name: str) -> tuple[int, int]:
    """``(allocatable, requested)`` of one resource for scoring ``pod`` on ``node``:
    cpu and memory with the non-zero request defaults, ephemeral-storage and extended
    resources as requested; ``(0, 0)`` for an extended resource the pod does not ask
    for (left out of the score) (resource_allocation.go calculateResourceAllocatableRequest)."""
    if name in (CPU, MEMORY):
        return node.allocatable.get(name), node.non_zero_requested.get(name) + pod.non_zero_requests.get(name)
    if name == PODS:  # not a scored resource
        return 0, 0
    req = pod.requests.get(name)
    if name != EPHEMERAL and req == 0:
        return 0, 0
    return node.allocatable.get(name), node.requested.get(name) + req


class PerResourceState:
    """``memo(nodes, batch)`` is ``batch(nodes)`` — per-node verdicts or scores that depend
    only on the nodes' pod counts and resources — with ``batch`` called for one node of
    each distinct :class:`~components.scheduler.cache.ResourceState`, its answer shared
    by the others (nodes in the same state give the same answer). Nodes whose states
    hardly repeat (pods of all sizes) are worth no lookups: after a call finding over
    90 % of the states distinct, the next :attr:`SKIP` calls go straight to ``batch``."""

    SKIP = 16
    __slots__ = ("skip",)

    def __init__(self) -> None:
        self.skip = 0

    def __call__(self, nodes: list, batch: Callable[[list], list]) -> list:
        if self.skip:
            self.skip -= 1
            return batch(nodes)
        states = [n.res_state or n.resource_state() for n in nodes]
        first = dict(zip(states, nodes))
        if len(first) * 10 > len(states) * 9:
            self.skip = self.SKIP
            return batch(nodes)
        memo = dict(zip(first, batch(list(first.values()))))
        return list(map(memo.__getitem__, states))


class NodeResourcesFit:
    """Filter: :func:`insufficient_resources`. Score: the ``scoringStrategy`` (see the
    module docstring). ``args``: NodeResourcesFitArgs dict; raises ValueError with
    kube-scheduler's validation message for bad args."""

    name = FIT

    def __init__(self, args: dict | None = None, handle=None) -> None:
        args = args or {}
        errs = validate_fit_args(args)
        if errs:
            raise ValueError(aggregate(errs))
        strategy = args.get("scoringStrategy") or {}
        self.strategy = strategy.get("type") or LEAST_ALLOCATED
        self.resources = tuple((r["name"], int(r.get("weight") or 1))
                               for r in strategy.get("resources") or []) or DEFAULT_RESOURCES
        if self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            shape = [(p.get("utilization", 0), p.get("score", 0))
                     for p in strategy["requestedToCapacityRatio"]["shape"]]
            self._resource_score = requested_to_capacity_ratio_score(shape)
        elif self.strategy == MOST_ALLOCATED:
            self._resource_score = most_requested_score
        else:
            self._resource_score = least_requested_score
        self._filter_memo = PerResourceState()
        self._score_memo = PerResourceState()

    def events_to_register(self) -> list[tuple[str, str]]:
        return [("Pod", "Delete"), ("Pod", "UpdatePodScaleDown"), ("Node", "Add"),
                ("Node", "UpdateNodeAllocatable")]

    def filter(self, state, pod, node) -> Status | None:
        """None when ``pod`` fits ``node``, else an Unschedulable Status with
        :func:`insufficient_resources`' reasons (fit.go Filter / fitsRequest). The common
        case, fitting with no extended resources, is decided here without that call."""
        alloc, used, req = node.allocatable, node.requested, pod.requests
        if (len(node.pods) < alloc.allowed_pods and used.milli_cpu + req.milli_cpu <= alloc.milli_cpu
                and used.memory + req.memory <= alloc.memory
                and used.ephemeral_storage + req.ephemeral_storage <= alloc.ephemeral_storage
                and not req.scalar):
            return None
        reasons = insufficient_resources(pod, node)
        if reasons:
            return Status(UNSCHEDULABLE, *reasons)
        return None

    def filter_nodes(self, state, pod, nodes) -> list[Status | None]:
        """:meth:`filter` for many nodes, once per distinct resource state (:class:`PerResourceState`)."""
        return self._filter_memo(nodes, lambda ns: self._filter_nodes(state, pod, ns))

    def _filter_nodes(self, state, pod, nodes) -> list[Status | None]:
        """:meth:`filter` for each of ``nodes``, its fast path inlined."""
        req = pod.requests
        f = self.filter
        if req.scalar:
            return [f(state, pod, n) for n in nodes]
        rc, rm, re = req.milli_cpu, req.memory, req.ephemeral_storage
        return [None if (len(n.pods) < (a := n.allocatable).allowed_pods
                         and (u := n.requested).milli_cpu + rc <= a.milli_cpu
                         and u.memory + rm <= a.memory
                         and u.ephemeral_storage + re <= a.ephemeral_storage)
                else f(state, pod, n) for n in nodes]

    def score(self, state, pod, node) -> int:
        """0..100: the weighted mean of the per-resource scores (floored; rounded
        for RequestedToCapacityRatio, which leaves out resources scoring 0)."""
        rtcr = self.strategy == REQUESTED_TO_CAPACITY_RATIO
        total = weights = 0
        for name, w in self.resources:
            cap, req = allocatable_and_requested(pod, node, name)
            if cap == 0:
                continue
            s = self._resource_score(req, cap)
            if rtcr and s <= 0:
                continue
            total += s * w
            weights += w
        if not weights:
            return 0
        if rtcr:  # math.Round: halves away from zero (scores are >= 0)
            return (2 * total + weights) // (2 * weights)
        return total // weights

    def score_nodes(self, state, pod, nodes) -> list[int]:
        """:meth:`score` for many nodes, once per distinct resource state (:class:`PerResourceState`)."""
        return self._score_memo(nodes, lambda ns: self._score_nodes(state, pod, ns))

    def _score_nodes(self, state, pod, nodes) -> list[int]:
        """:meth:`score` for each of ``nodes``; inlined for the default LeastAllocated cpu+memory case."""
        if self.resources != DEFAULT_RESOURCES or self.strategy != LEAST_ALLOCATED:
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
        self._score_memo = PerResourceState()

    def events_to_register(self) -> list[tuple[str, str]]:
        return [("Pod", "Delete"), ("Node", "Add"), ("Node", "UpdateNodeAllocatable")]

    def pre_score(self, state, pod, nodes, snapshot) -> Status | None:
        if all(pod.requests.get(n) == 0 for n in self.resources):
            return Status(SKIP)  # best-effort pod
        return None

    def score_nodes(self, state, pod, nodes) -> list[int]:
        """:meth:`score` for many nodes, once per distinct resource state (:class:`PerResourceState`)."""
        return self._score_memo(nodes, lambda ns: self._score_nodes(state, pod, ns))

    def _score_nodes(self, state, pod, nodes) -> list[int]:
        """:meth:`score` for each of ``nodes``; inlined for the default cpu+memory case."""
        if self.resources != ("cpu", "memory"):
            return [self.score(state, pod, n) for n in nodes]
        pc, pm = pod.requests.milli_cpu, pod.requests.memory
        out: list[int] = []
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
