"""NodeAffinity (Filter, Score): ``spec.nodeSelector`` and required node affinity
filter; preferred terms score the sum of the weights of the terms a node matches,
normalised by the best node. Source: pkg/scheduler/framework/plugins/nodeaffinity/
node_affinity.go; component-helpers scheduling/corev1/nodeaffinity."""

from __future__ import annotations

from components.scheduler.framework import (SKIP, UNSCHEDULABLE_AND_UNRESOLVABLE, Status,
                                            default_normalize_score)
from controlplane.selectors import node_selector_term_matches

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
_KEY = "NodeAffinity.pre"


class NodeAffinity:
    name = NAME

    def __init__(self, args: dict | None = None, handle=None) -> None:
        pass

    def events_to_register(self) -> list[tuple[str, str]]:
        return [("Node", "Add"), ("Node", "UpdateNodeLabel")]

    def pre_filter(self, state, pod, snapshot) -> Status | None:
        spec = pod.pod.get("spec") or {}
        sel = spec.get("nodeSelector") or {}
        req = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
               .get("requiredDuringSchedulingIgnoredDuringExecution"))
        if not sel and req is None:
            return Status(SKIP)
        state[_KEY] = (sel, None if req is None else (req.get("nodeSelectorTerms") or []))
        return None

    def filter(self, state, pod, node) -> Status | None:
        sel, terms = state[_KEY]
        labels = node.labels
        for k, v in sel.items():
            if labels.get(k) != v:
                return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        if terms is not None:
            fields = {"metadata.name": node.name}
            if not any(node_selector_term_matches(t or {}, labels, fields) for t in terms):
                return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return None

    def pre_score(self, state, pod, nodes, snapshot) -> Status | None:
        spec = pod.pod.get("spec") or {}
        pref = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("preferredDuringSchedulingIgnoredDuringExecution")) or []
        terms = [(int(t.get("weight") or 0), t.get("preference") or {}) for t in pref]
        terms = [(w, t) for w, t in terms if w]
        if not terms:
            return Status(SKIP)
        state[_KEY + ".score"] = terms
        return None

    def score(self, state, pod, node) -> int:
        fields = {"metadata.name": node.name}
        return sum(w for w, t in state[_KEY + ".score"]
                   if node_selector_term_matches(t, node.labels, fields))

    def normalize_score(self, state, pod, scores: list[int]) -> None:
        default_normalize_score(scores)
