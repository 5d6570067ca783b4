"""PodTopologySpread (PreFilter, Filter, PreScore, Score), for explicit
``spec.topologySpreadConstraints`` (no cluster-default constraints).

Filter (``whenUnsatisfiable: DoNotSchedule``): for each constraint, placing the pod
in the node's domain must keep ``count(domain) + 1 - min(count over eligible
domains) <= maxSkew``; a node without the topology key is
UnschedulableAndUnresolvable "node(s) didn't match pod topology spread constraints
(missing required label)", a skew violation Unschedulable "node(s) didn't match pod
topology spread constraints". Score (``ScheduleAnyway``): fewer matching pods in the
node's domains is better (reverse-normalised). Eligible domains are those of nodes
passing the pod's nodeSelector/required node affinity (nodeAffinityPolicy Honor).
Source: pkg/scheduler/framework/plugins/podtopologyspread/{filtering.go,scoring.go}.
"""

from __future__ import annotations

from components.scheduler.framework import (SKIP, UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE,
                                            Status, default_normalize_score)
from controlplane.selectors import node_selector_term_matches, selector_from_dict

NAME = "PodTopologySpread"
ERR_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
ERR_CONSTRAINTS = "node(s) didn't match pod topology spread constraints"
_PRE = "PodTopologySpread.prefilter"
_SCORE = "PodTopologySpread.prescore"


def _node_eligible(pod, node) -> bool:
    spec = pod.pod.get("spec") or {}
    for k, v in (spec.get("nodeSelector") or {}).items():
        if node.labels.get(k) != v:
            return False
    req = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
           .get("requiredDuringSchedulingIgnoredDuringExecution"))
    if req is not None:
        fields = {"metadata.name": node.name}
        return any(node_selector_term_matches(t or {}, node.labels, fields)
                   for t in req.get("nodeSelectorTerms") or [])
    return True


def _counts(pod, snapshot, constraints):
    out = []
    for c in constraints:
        key = c.get("topologyKey") or ""
        sel = selector_from_dict(c.get("labelSelector"))
        counts: dict[str, int] = {}
        for n in snapshot.nodes:
            v = n.labels.get(key)
            if v is None or not _node_eligible(pod, n):
                continue
            counts.setdefault(v, 0)
            counts[v] += sum(1 for ep in n.pods.values()
                             if ep.namespace == pod.namespace and sel.matches(ep.labels))
        out.append((c, key, sel, counts))
    return out


class PodTopologySpread:
    name = NAME

    def __init__(self, args: dict | None = None, handle=None) -> None:
        pass

    def events_to_register(self) -> list[tuple[str, str]]:
        return [("Pod", "Add"), ("Pod", "UpdatePodLabel"), ("Pod", "Delete"), ("Node", "Add"),
                ("Node", "UpdateNodeLabel"), ("Node", "UpdateNodeTaint"), ("Node", "Delete")]

    @staticmethod
    def _constraints(pod, action: str) -> list[dict]:
        return [c for c in (pod.pod.get("spec") or {}).get("topologySpreadConstraints") or []
                if (c.get("whenUnsatisfiable") or "DoNotSchedule") == action]

    def pre_filter(self, state, pod, snapshot) -> Status | None:
        cs = self._constraints(pod, "DoNotSchedule")
        if not cs:
            return Status(SKIP)
        state[_PRE] = _counts(pod, snapshot, cs)
        return None

    def filter(self, state, pod, node) -> Status | None:
        for c, key, sel, counts in state[_PRE]:
            v = node.labels.get(key)
            if v is None:
                return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_MISSING_LABEL)
            self_match = 1 if sel.matches(pod.labels) else 0
            min_count = min(counts.values()) if counts else 0
            min_domains = c.get("minDomains")
            if min_domains and len(counts) < int(min_domains):
                min_count = 0
            skew = counts.get(v, 0) + self_match - min_count
            if skew > int(c.get("maxSkew") or 1):
                return Status(UNSCHEDULABLE, ERR_CONSTRAINTS)
        return None

    def pre_score(self, state, pod, nodes, snapshot) -> Status | None:
        cs = self._constraints(pod, "ScheduleAnyway")
        if not cs:
            return Status(SKIP)
        state[_SCORE] = _counts(pod, snapshot, cs)
        return None

    def score(self, state, pod, node) -> int:
        s = 0
        for c, key, sel, counts in state[_SCORE]:
            v = node.labels.get(key)
            if v is not None:
                s += counts.get(v, 0)
        return s

    def normalize_score(self, state, pod, scores: list[int]) -> None:
        default_normalize_score(scores, reverse=True)
