"""InterPodAffinity (PreFilter, Filter, PreScore, Score).

Filter, with counts per topology pair (topologyKey, value) built in PreFilter:

* the pod's required affinity: every term's topology key must be on the node and
  its domain must hold a pod matching *all* the terms — unless no pod in the
  cluster matches and the pod matches its own terms (the first pod of a
  self-affine group) → else UnschedulableAndUnresolvable
  "node(s) didn't match pod affinity rules";
* the pod's required anti-affinity: no matching pod in the node's domain of any
  term → else Unschedulable "node(s) didn't match pod anti-affinity rules";
* existing pods' required anti-affinity terms that match this pod forbid their
  domains → Unschedulable "node(s) didn't satisfy existing pods anti-affinity rules".

Score: per topology domain, + weight for each existing pod matching a preferred
affinity term of the pod, − weight for preferred anti-affinity; symmetric terms of
existing pods (their required affinity counts ``hardPodAffinityWeight`` = 1, their
preferred terms their weight); normalised min–max to 0..100.
Sources: pkg/scheduler/framework/plugins/interpodaffinity/{filtering.go,scoring.go,plugin.go}.
"""

from __future__ import annotations

from components.scheduler.framework import (MAX_NODE_SCORE, SKIP, UNSCHEDULABLE,
                                            UNSCHEDULABLE_AND_UNRESOLVABLE, Status)

NAME = "InterPodAffinity"
ERR_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
ERR_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
_PRE = "InterPodAffinity.prefilter"
_SCORE = "InterPodAffinity.prescore"


def matches_all_terms(terms, pod) -> bool:
    """True when ``terms`` is non-empty and every term matches ``pod``."""
    return bool(terms) and all(t.matches(pod) for t in terms)


def _bump(counts: dict, labels: dict, key: str, value: int = 1) -> None:
    v = labels.get(key)
    if v is not None:
        pair = (key, v)
        counts[pair] = counts.get(pair, 0) + value


class InterPodAffinity:
    name = NAME

    def __init__(self, args: dict | None = None, handle=None) -> None:
        args = args or {}
        self.hard_pod_affinity_weight = int(args.get("hardPodAffinityWeight", 1))
        self.ignore_preferred_terms_of_existing_pods = bool(
            args.get("ignorePreferredTermsOfExistingPods", False))

    def events_to_register(self) -> list[tuple[str, str]]:
        return [("Pod", "Add"), ("Pod", "UpdatePodLabel"), ("Pod", "Delete"),
                ("Node", "Add"), ("Node", "UpdateNodeLabel")]

    # -- filter ---------------------------------------------------------------
    def pre_filter(self, state, pod, snapshot) -> Status | None:
        existing: dict[tuple[str, str], int] = {}
        for node in snapshot.have_pods_with_required_anti_affinity():
            for key in node.pods_with_required_anti_affinity:
                ep = node.pods[key]
                for t in ep.required_anti_affinity:
                    if t.matches(pod):
                        _bump(existing, node.labels, t.topology_key)
        affinity: dict[tuple[str, str], int] = {}
        anti: dict[tuple[str, str], int] = {}
        req_aff, req_anti = pod.required_affinity, pod.required_anti_affinity
        if req_aff or req_anti:
            for node in snapshot.nodes:
                labels = node.labels
                for ep in node.pods.values():
                    if req_aff and matches_all_terms(req_aff, ep):
                        for t in req_aff:
                            _bump(affinity, labels, t.topology_key)
                    for t in req_anti:
                        if t.matches(ep):
                            _bump(anti, labels, t.topology_key)
        if not existing and not req_aff and not req_anti:
            return Status(SKIP)
        state[_PRE] = (existing, {k: v for k, v in affinity.items() if v},
                       {k: v for k, v in anti.items() if v})
        return None

    def filter(self, state, pod, node) -> Status | None:
        existing, affinity, anti = state[_PRE]
        labels = node.labels
        if pod.required_affinity:
            pods_exist = True
            for t in pod.required_affinity:
                v = labels.get(t.topology_key)
                if v is None:
                    return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_AFFINITY)
                if affinity.get((t.topology_key, v), 0) <= 0:
                    pods_exist = False
            if not pods_exist and not (not affinity
                                       and matches_all_terms(pod.required_affinity, pod)):
                return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_AFFINITY)
        if anti:
            for t in pod.required_anti_affinity:
                v = labels.get(t.topology_key)
                if v is not None and anti.get((t.topology_key, v), 0) > 0:
                    return Status(UNSCHEDULABLE, ERR_ANTI_AFFINITY)
        if existing:
            for pair in labels.items():
                if existing.get(pair, 0) > 0:
                    return Status(UNSCHEDULABLE, ERR_EXISTING_ANTI_AFFINITY)
        return None

    # -- score ----------------------------------------------------------------
    def pre_score(self, state, pod, nodes, snapshot) -> Status | None:
        has_constraints = bool(pod.preferred_affinity or pod.preferred_anti_affinity)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(SKIP)
        topo: dict[str, dict[str, int]] = {}

        def process(terms, target, labels, sign: int, weight: int | None = None) -> None:
            for t in terms:
                if t.matches(target):
                    v = labels.get(t.topology_key)
                    if v is not None:
                        d = topo.setdefault(t.topology_key, {})
                        d[v] = d.get(v, 0) + sign * (t.weight if weight is None else weight)

        all_nodes = snapshot.nodes if has_constraints else snapshot.have_pods_with_affinity()
        for node in all_nodes:
            labels = node.labels
            if not labels:
                continue
            keys = node.pods.keys() if has_constraints else node.pods_with_affinity
            for key in list(keys):
                ep = node.pods[key]
                process(pod.preferred_affinity, ep, labels, 1)
                process(pod.preferred_anti_affinity, ep, labels, -1)
                if self.hard_pod_affinity_weight > 0:
                    process(ep.required_affinity, pod, labels, 1, self.hard_pod_affinity_weight)
                process(ep.preferred_affinity, pod, labels, 1)
                process(ep.preferred_anti_affinity, pod, labels, -1)
        if not topo:
            return Status(SKIP)
        state[_SCORE] = topo
        return None

    def score(self, state, pod, node) -> int:
        topo = state[_SCORE]
        s = 0
        for key, values in topo.items():
            v = node.labels.get(key)
            if v is not None:
                s += values.get(v, 0)
        return s

    def normalize_score(self, state, pod, scores: list[int]) -> None:
        if not scores:
            return
        lo, hi = min(scores), max(scores)
        diff = hi - lo
        for i, s in enumerate(scores):
            scores[i] = int(MAX_NODE_SCORE * ((s - lo) / diff)) if diff > 0 else 0
