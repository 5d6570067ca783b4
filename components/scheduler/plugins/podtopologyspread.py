"""PodTopologySpread (PreFilter, Filter, PreScore, Score).

Constraints are the pod's ``spec.topologySpreadConstraints``; a pod without any gets
the plugin's *default constraints* (``defaultingType: System``: maxSkew 3 on
``kubernetes.io/hostname`` and 5 on ``topology.kubernetes.io/zone``, ScheduleAnyway;
``List``: ``args.defaultConstraints``) with the selector of the Services,
ReplicationController, ReplicaSet or StatefulSet the pod belongs to — none, no
defaults (``helper/spread.go`` DefaultSelector).

Per constraint: the label selector plus ``matchLabelKeys`` (``key in (pod's value)``
for each key the pod has), ``minDomains``, ``nodeAffinityPolicy`` (Honor: only
nodes matching the pod's nodeSelector/required node affinity count; default Honor)
and ``nodeTaintsPolicy`` (Honor: only nodes whose NoSchedule/NoExecute taints the pod
tolerates; default Ignore). Only nodes with every constraint's topology key count.

Filter (``DoNotSchedule``): ``count(node's domain) + self-match − min over domains
<= maxSkew`` (min is 0 while there are fewer than ``minDomains`` domains); a node
without a topology key is UnschedulableAndUnresolvable "node(s) didn't match pod
topology spread constraints (missing required label)", a skew violation
Unschedulable "node(s) didn't match pod topology spread constraints".

Score (``ScheduleAnyway``): per constraint ``count × log(domains + 2) + maxSkew − 1``
(on hostname the count is the node's own), rounded; normalised as
``100 × (max + min − score) / max``; nodes lacking a topology key score 0 (when the
constraints are the pod's own).
Sources: pkg/scheduler/framework/plugins/podtopologyspread/{common.go,filtering.go,
scoring.go,plugin.go}, pkg/scheduler/framework/plugins/helper/spread.go.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

from components.scheduler.framework import MAX_NODE_SCORE, SKIP, UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE, Status
from components.scheduler.plugins.nodeaffinity import compile_required
from components.scheduler.podinfo import find_untolerated
from controlplane.selectors import IN, LabelSelector, Requirement, make_requirement, selector_from_dict

NAME = "PodTopologySpread"
ERR_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
ERR_CONSTRAINTS = "node(s) didn't match pod topology spread constraints"
_PRE = "PodTopologySpread.prefilter"
_PRE_EXT = "PodTopologySpread.prefilter.constraints"
_SCORE = "PodTopologySpread.prescore"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"

#: plugin.go systemDefaultConstraints
SYSTEM_DEFAULT_CONSTRAINTS = [
    {"topologyKey": HOSTNAME, "whenUnsatisfiable": "ScheduleAnyway", "maxSkew": 3},
    {"topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway", "maxSkew": 5},
]


@dataclass(frozen=True)
class Constraint:
    """One parsed constraint (common.go topologySpreadConstraint)."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int = 1
    honor_node_affinity: bool = True
    honor_node_taints: bool = False


def _parse(raw: dict, pod_labels: dict, selector: LabelSelector | None = None) -> Constraint:
    sel = selector if selector is not None else selector_from_dict(raw.get("labelSelector"))
    keys = raw.get("matchLabelKeys") or []
    if keys and not sel.nothing:
        extra = tuple(make_requirement(k, IN, [pod_labels[k]]) for k in keys if k in pod_labels)
        sel = LabelSelector(sel.requirements + extra)
    return Constraint(int(raw.get("maxSkew") or 1), raw.get("topologyKey") or "", sel,
                      int(raw.get("minDomains") or 1),
                      (raw.get("nodeAffinityPolicy") or "Honor") == "Honor",
                      (raw.get("nodeTaintsPolicy") or "Ignore") == "Honor")


def default_selector(pod, listers: dict) -> LabelSelector:
    """The union of the selectors of the Services selecting ``pod`` and of its
    controlling ReplicationController / ReplicaSet / StatefulSet (helper/spread.go
    DefaultSelector). ``listers``: plural → object with ``list()`` / ``get(key)``.
    Empty selector = the pod belongs to none of them."""
    labels = pod.labels
    merged: dict[str, str] = {}
    svc = listers.get("services")
    if svc is not None:
        for s in svc.list():
            md = s.get("metadata") or {}
            sel = (s.get("spec") or {}).get("selector")
            if (md.get("namespace") or "default") != pod.namespace or not sel:
                continue
            if all(labels.get(k) == v for k, v in sel.items()):
                merged.update(sel)
    reqs: list[Requirement] = [make_requirement(k, "=", [v]) for k, v in sorted(merged.items())]
    owner = next((o for o in (pod.pod.get("metadata") or {}).get("ownerReferences") or []
                  if o.get("controller")), None)
    if owner is not None:
        kind = owner.get("kind")
        group = (owner.get("apiVersion") or "").rpartition("/")[0]
        plural = {("", "ReplicationController"): "replicationcontrollers",
                  ("apps", "ReplicaSet"): "replicasets",
                  ("apps", "StatefulSet"): "statefulsets"}.get((group, kind))
        lister = listers.get(plural) if plural else None
        obj = lister.get(f"{pod.namespace}/{owner.get('name')}") if lister is not None else None
        if obj is not None:
            spec_sel = (obj.get("spec") or {}).get("selector")
            if plural == "replicationcontrollers":
                merged.update(spec_sel or {})
                reqs = [make_requirement(k, "=", [v]) for k, v in sorted(merged.items())]
            elif spec_sel is not None:
                try:
                    reqs.extend(selector_from_dict(spec_sel).requirements)
                except ValueError:
                    pass
    return LabelSelector(tuple(reqs))


def _min_count(c: Constraint, d: dict[str, int]) -> int:
    """The global minimum of matching pods over the eligible domains; 0 while there
    are fewer than ``minDomains`` domains (common.go minMatchNum)."""
    if len(d) < c.min_domains:
        return 0
    return min(d.values()) if d else 2 ** 31 - 1


class PodTopologySpread:
    """``args``: PodTopologySpreadArgs (``defaultingType`` System|List,
    ``defaultConstraints``); ``handle``: the scheduler (its ``listers`` feed the
    default selector)."""

    name = NAME

    def __init__(self, args: dict | None = None, handle=None) -> None:
        args = args or {}
        self.handle = handle
        dtype = args.get("defaultingType") or "System"
        if dtype not in ("System", "List"):
            raise ValueError(f"defaultingType: Unsupported value: {dtype!r}: supported values: "
                             '"System", "List"')
        if dtype == "System":
            if args.get("defaultConstraints"):
                raise ValueError("defaultConstraints: Invalid value: when .defaultingType is "
                                 '"System", .defaultConstraints must be empty')
            self.default_constraints = SYSTEM_DEFAULT_CONSTRAINTS
        else:
            self.default_constraints = list(args.get("defaultConstraints") or [])
        self.system_defaulted = dtype == "System"

    def events_to_register(self) -> list[tuple[str, str]]:
        return [("Pod", "Add"), ("Pod", "UpdatePodLabel"), ("Pod", "Delete"), ("Node", "Add"),
                ("Node", "UpdateNodeLabel"), ("Node", "UpdateNodeTaint"), ("Node", "Delete")]

    def constraints(self, pod, action: str) -> tuple[list[Constraint], bool]:
        """(the constraints for ``whenUnsatisfiable == action``, whether they are
        the plugin's defaults) — common.go getConstraints / buildDefaultConstraints."""
        own = (pod.pod.get("spec") or {}).get("topologySpreadConstraints") or []
        if own:
            return [_parse(c, pod.labels) for c in own
                    if (c.get("whenUnsatisfiable") or "DoNotSchedule") == action], False
        defaults = [c for c in self.default_constraints
                    if (c.get("whenUnsatisfiable") or "DoNotSchedule") == action]
        if not defaults:
            return [], True
        listers = getattr(self.handle, "listers", None) or {}
        sel = default_selector(pod, listers)
        if sel.empty():
            return [], True
        return [_parse(c, pod.labels, sel) for c in defaults], True

    @staticmethod
    def _node_policy(pod):
        """(has node affinity, the compiled required node affinity matcher) of ``pod``."""
        spec = pod.pod.get("spec") or {}
        req = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
               .get("requiredDuringSchedulingIgnoredDuringExecution"))
        has_affinity = bool(spec.get("nodeSelector")) or req is not None
        return has_affinity, compile_required(spec.get("nodeSelector") or {},
                                              None if req is None else req.get("nodeSelectorTerms") or [])

    def _domain_counts(self, pod, snapshot, cs: list[Constraint], require_all: bool = True,
                       skip_hostname: bool = False) -> list[dict[str, int]]:
        """Per constraint {domain value: matching pods} over the snapshot's nodes that
        count (all topology keys present when ``require_all``; the inclusion policies).
        Pod counts per node come from the cache's :class:`SelectorCounts`."""
        has_affinity, affinity = self._node_policy(pod)
        tolerations = pod.tolerations
        counts: list[dict[str, int]] = [{} for _ in cs]
        keys = [c.topology_key for c in cs]
        per_node: list[dict[str, int] | None] = [
            None if (skip_hostname and c.topology_key == HOSTNAME)
            else snapshot.selector_counts.counts(pod.namespace, c.selector) for c in cs]
        # the common cases, kept tight: no inclusion policy to apply, and each constraint's
        # nodes are those with its own key (one constraint, or the system defaults, which do
        # not require every key: hostname and zone on nodes that may lack a zone)
        simple = (len(cs) == 1 or not require_all) and not any(
            (c.honor_node_affinity and has_affinity) or c.honor_node_taints for c in cs)
        if simple:
            for i, c in enumerate(cs):
                if per_node[i] is None:
                    continue
                # every domain starts at 0; the cache keeps matching pods per domain
                d = counts[i] = dict.fromkeys(snapshot.domain_values(c.topology_key), 0)
                d.update(snapshot.selector_counts.domain_counts(pod.namespace, c.selector, c.topology_key))
            return counts
        for n in snapshot.nodes:
            labels = n.labels
            if require_all and any(k not in labels for k in keys):
                continue
            aff_ok = None
            taint_ok = None
            for i, c in enumerate(cs):
                v = labels.get(c.topology_key)
                node_counts = per_node[i]
                if v is None or node_counts is None:
                    continue
                if c.honor_node_affinity and has_affinity:
                    if aff_ok is None:
                        aff_ok = affinity(labels, n.name)
                    if not aff_ok:
                        continue
                if c.honor_node_taints:
                    if taint_ok is None:
                        taint_ok = find_untolerated(n.taints, tolerations, ("NoSchedule", "NoExecute")) is None
                    if not taint_ok:
                        continue
                d = counts[i]
                d[v] = d.get(v, 0) + node_counts.get(n.name, 0)
        return counts

    # -- filter ---------------------------------------------------------------
    def pre_filter(self, state, pod, snapshot) -> Status | None:
        """State: per constraint (topology key, {domain: count}, the highest count a
        domain may have for the pod to fit there = maxSkew − self-match + min)."""
        cs, _ = self.constraints(pod, "DoNotSchedule")
        if not cs:
            return Status(SKIP)
        counts = self._domain_counts(pod, snapshot, cs)
        pre = []
        self_matches = []
        for c, d in zip(cs, counts):
            self_match = 1 if c.selector.matches(pod.labels) else 0
            self_matches.append(self_match)
            pre.append((c.topology_key, d, c.max_skew - self_match + _min_count(c, d)))
        state[_PRE] = pre
        state[_PRE_EXT] = (cs, self_matches, self._node_policy(pod))
        return None

    # -- PreFilterExtensions (filtering.go AddPod/RemovePod, updateWithPod) ------------
    def pre_filter_add_pod(self, state, pod, pod_to_add, node) -> Status | None:
        """Count ``pod_to_add`` in ``node``'s domain of each DoNotSchedule constraint
        whose selector it matches, when it is in the pod's namespace and ``node`` counts
        for the constraint (all topology keys, the inclusion policies)."""
        self._update(state, pod, pod_to_add, node, 1)
        return None

    def pre_filter_remove_pod(self, state, pod, pod_to_remove, node) -> Status | None:
        """Stop counting ``pod_to_remove`` in ``node``'s domains (preemption's victims)."""
        self._update(state, pod, pod_to_remove, node, -1)
        return None

    def _update(self, state, pod, other, node, sign: int) -> None:
        if other.namespace != pod.namespace or \
                (other.pod.get("metadata") or {}).get("deletionTimestamp"):
            return  # terminating pods are not counted (countPodsMatchSelector)
        cs, self_matches, (has_affinity, affinity) = state[_PRE_EXT]
        labels = node.labels
        if any(c.topology_key not in labels for c in cs):
            return
        pre = None
        for i, c in enumerate(cs):
            if not c.selector.matches(other.labels):
                continue
            if c.honor_node_affinity and has_affinity and not affinity(labels, node.name):
                continue
            if c.honor_node_taints and find_untolerated(
                    node.taints, pod.tolerations, ("NoSchedule", "NoExecute")) is not None:
                continue
            if pre is None:
                pre = state.owns(_PRE, lambda p: [(k, dict(d), h) for k, d, h in p])
            key, d, _ = pre[i]
            v = labels[c.topology_key]
            d[v] = d.get(v, 0) + sign
            pre[i] = (key, d, c.max_skew - self_matches[i] + _min_count(c, d))

    def filter(self, state, pod, node) -> Status | None:
        labels = node.labels
        for key, d, highest in state[_PRE]:
            v = labels.get(key)
            if v is None:
                return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_MISSING_LABEL)
            if d.get(v, 0) > highest:
                return Status(UNSCHEDULABLE, ERR_CONSTRAINTS)
        return None

    def filter_nodes(self, state, pod, nodes) -> list[Status | None]:
        """:meth:`filter` for many nodes (it has no side effects)."""
        f = self.filter
        return [f(state, pod, n) for n in nodes]

    # -- score ----------------------------------------------------------------
    def pre_score(self, state, pod, nodes, snapshot) -> Status | None:
        cs, defaulted = self.constraints(pod, "ScheduleAnyway")
        if not cs:
            return Status(SKIP)
        require_all = not (defaulted and self.system_defaulted)
        # domain counts over all nodes, domains (and weights) over the filtered ones
        all_counts = self._domain_counts(pod, snapshot, cs, require_all, skip_hostname=True)
        ignored: set[str] = set()
        sizes: list[set[str]] = [set() for _ in cs]
        if require_all:
            for n in nodes:
                if any(c.topology_key not in n.labels for c in cs):
                    ignored.add(n.name)
                    continue
                for i, c in enumerate(cs):
                    v = n.labels.get(c.topology_key)
                    if v is not None:
                        sizes[i].add(v)
        # each non-hostname key's value per filtered node, kept for score_nodes (same list)
        values: list[list[str | None] | None] = [None] * len(cs)
        if not require_all:   # no node ignored: each key's values over the filtered nodes (hostname's: counted)
            for i, c in enumerate(cs):
                if c.topology_key != HOSTNAME:
                    key = c.topology_key
                    vals = values[i] = [n.labels.get(key) for n in nodes]
                    distinct = set(vals)
                    distinct.discard(None)
                    sizes[i] = distinct  # type: ignore[assignment]
        weights = []
        for i, c in enumerate(cs):   # the filtered nodes are distinct: len(nodes) names
            size = len(nodes) - len(ignored) if c.topology_key == HOSTNAME else len(sizes[i])
            weights.append(math.log(size + 2))
        # on hostname the count is the node's own: matching pods per node from the
        # cache's SelectorCounts (live, read only during this cycle)
        per_node = [snapshot.selector_counts.counts(pod.namespace, c.selector)
                    if c.topology_key == HOSTNAME else None for c in cs]
        state[_SCORE] = (cs, all_counts, weights, ignored, per_node, (nodes, values))
        return None

    def score(self, state, pod, node) -> int:
        cs, counts, weights, ignored, per_node, _ = state[_SCORE]
        if node.name in ignored:
            return -1
        s = 0.0
        for c, d, w, pn in zip(cs, counts, weights, per_node):
            v = node.labels.get(c.topology_key)
            if v is None:
                continue
            cnt = pn.get(node.name, 0) if pn is not None else d.get(v, 0)
            s += cnt * w + (c.max_skew - 1)
        return int(math.floor(s + 0.5))

    def score_nodes(self, state, pod, nodes) -> list[int]:
        """:meth:`score` for many nodes (the same sums, in the same order), a constraint
        at a time: per domain value its term ``count × weight + maxSkew − 1`` is taken once
        per pod, per node a lookup (hostname: the node's own count); a constraint a node
        lacks the key of adds 0.0, which leaves the float sum as scoring.go's
        (scoring.go Score: scoreForCount summed over the constraints, math.Round)."""
        cs, counts, weights, ignored, per_node, (pre_nodes, values) = state[_SCORE]
        if not nodes:
            return []
        total: list[float] | None = None
        for i, (c, d, w, pn) in enumerate(zip(cs, counts, weights, per_node)):
            key = c.topology_key
            extra = c.max_skew - 1
            if pn is not None:   # the node's own count
                get = pn.get
                terms = [get(n.name, 0) * w + extra if n.labels.get(key) is not None else 0.0 for n in nodes]
            else:   # the term per domain value, once
                vals = values[i] if nodes is pre_nodes else None
                if vals is None:
                    vals = [n.labels.get(key) for n in nodes]
                table: dict[str | None, float] = {v: d.get(v, 0) * w + extra for v in set(vals) if v is not None}
                table[None] = 0.0
                terms = list(map(table.__getitem__, vals))
            total = terms if total is None else list(map(operator.add, total, terms))
        if total is None:
            total = [0.0] * len(nodes)
        floor = math.floor
        rounded = {s: int(floor(s + 0.5)) for s in set(total)}
        out = list(map(rounded.__getitem__, total))
        if ignored:
            for j, n in enumerate(nodes):
                if n.name in ignored:
                    out[j] = -1
        return out

    def normalize_score(self, state, pod, scores: list[int]) -> None:
        """``100 × (max + min − s) / max``; ignored nodes (score −1) get 0; all 100
        when the maximum is 0 (scoring.go NormalizeScore)."""
        if not scores:
            return
        lo = min(scores)
        if lo >= 0:   # no node ignored (the system defaults): one pass
            hi = max(scores)
            if hi == 0:
                scores[:] = [MAX_NODE_SCORE] * len(scores)
            else:
                top = hi + lo
                norm = {s: MAX_NODE_SCORE * (top - s) // hi for s in set(scores)}
                scores[:] = map(norm.__getitem__, scores)
            return
        valid = [s for s in scores if s >= 0]
        if not valid:
            for i in range(len(scores)):
                scores[i] = 0
            return
        lo, hi = min(valid), max(valid)
        for i, s in enumerate(scores):
            if s < 0:
                scores[i] = 0
            elif hi == 0:
                scores[i] = MAX_NODE_SCORE
            else:
                scores[i] = MAX_NODE_SCORE * (hi + lo - s) // hi
