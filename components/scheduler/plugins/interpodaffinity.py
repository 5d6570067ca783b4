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

from components.scheduler.affinityindex import bump as _bump
from components.scheduler.framework import MAX_NODE_SCORE, SKIP, UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE, Status

NAME = "InterPodAffinity"
ERR_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
ERR_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
_PRE = "InterPodAffinity.prefilter"
_SCORE = "InterPodAffinity.prescore"


def matches_all_terms(terms, pod, ns_labels: dict | None = None) -> bool:
    """True when ``terms`` is non-empty and every term matches ``pod``."""
    return bool(terms) and all(t.matches(pod, ns_labels) for t in terms)


class InterPodAffinity:
    """The InterPodAffinity plugin. ``args``: InterPodAffinityArgs
    (``hardPodAffinityWeight`` 0..100, default 1; ``ignorePreferredTermsOfExistingPods``).

    PreFilter reads the cache's :class:`~components.scheduler.affinityindex.AffinityIndex`
    (counts per topology pair kept up to date as pods come and go) instead of walking
    every pod, so it costs one selector match per distinct term; Filter is a few dict
    lookups per node."""

    name = NAME

    def __init__(self, args: dict | None = None, handle=None) -> None:
        args = args or {}
        self.hard_pod_affinity_weight = int(args.get("hardPodAffinityWeight", 1))
        self.ignore_preferred_terms_of_existing_pods = bool(
            args.get("ignorePreferredTermsOfExistingPods", False))

    def events_to_register(self) -> list[tuple[str, str]]:
        return [("Pod", "Add"), ("Pod", "UpdatePodLabel"), ("Pod", "Delete"),
                ("Node", "Add"), ("Node", "UpdateNodeLabel"), ("Namespace", "Add"), ("Namespace", "Update")]

    # -- filter ---------------------------------------------------------------
    def pre_filter(self, state, pod, snapshot) -> Status | None:
        """State: (existing anti-affinity counts that forbid a domain, the incoming
        pod's affinity counts, [(term, counts)] for its anti-affinity terms)."""
        idx = snapshot.affinity_index
        ns_labels = snapshot.ns_labels(pod.namespace)
        matching = idx.existing_matching("required_anti_affinity", pod, ns_labels)
        if len(matching) == 1:
            existing = matching[0][1]  # shared, read only
        else:
            existing = {}
            for _, counts in matching:
                for pair, n in counts.items():
                    existing[pair] = existing.get(pair, 0) + n
        req_aff, req_anti = pod.required_affinity, pod.required_anti_affinity
        affinity = idx.matching_counts(req_aff) if req_aff else {}
        anti = [(t, idx.matching_counts((t,))) for t in req_anti]
        if not existing and not req_aff and not req_anti:
            return Status(SKIP)
        matches_own = bool(req_aff) and matches_all_terms(req_aff, pod, ns_labels)
        state[_PRE] = (existing, affinity, anti, matches_own, snapshot.ns_labels)
        return None

    # -- PreFilterExtensions (filtering.go AddPod/RemovePod, updateWithPod) ------------
    def pre_filter_add_pod(self, state, pod, pod_to_add, node) -> Status | None:
        """Count ``pod_to_add`` on ``node`` in the PreFilter state: its required
        anti-affinity terms that match the pod, the pod's required affinity (when it
        matches all the terms) and each of the pod's anti-affinity terms it matches."""
        self._update(state, pod, pod_to_add, node, 1)
        return None

    def pre_filter_remove_pod(self, state, pod, pod_to_remove, node) -> Status | None:
        """Stop counting ``pod_to_remove`` on ``node`` (preemption's victims)."""
        self._update(state, pod, pod_to_remove, node, -1)
        return None

    @staticmethod
    def _copy_state(pre):
        existing, affinity, anti, matches_own, ns_labels = pre
        return (dict(existing), dict(affinity), [(t, dict(c)) for t, c in anti], matches_own, ns_labels)

    def _update(self, state, pod, other, node, sign: int) -> None:
        labels = node.labels
        if not labels:
            return
        existing, affinity, anti, _, ns_labels = state.owns(_PRE, self._copy_state)
        pod_ns = ns_labels(pod.namespace)
        for t in other.required_anti_affinity:
            v = labels.get(t.topology_key)
            if v is not None and t.matches(pod, pod_ns):
                _bump(existing, (t.topology_key, v), sign)
        other_ns = ns_labels(other.namespace)
        if pod.required_affinity and matches_all_terms(pod.required_affinity, other, other_ns):
            for t in pod.required_affinity:
                v = labels.get(t.topology_key)
                if v is not None:
                    _bump(affinity, (t.topology_key, v), sign)
        for t, counts in anti:
            v = labels.get(t.topology_key)
            if v is not None and t.matches(other, other_ns):
                _bump(counts, (t.topology_key, v), sign)

    def filter(self, state, pod, node) -> Status | None:
        existing, affinity, anti, matches_own, _ = state[_PRE]
        # the first pod of a self-affine group: no pod anywhere matches its affinity
        # terms yet, and it matches them itself (filtering.go satisfyPodAffinity)
        self_affine = matches_own and not affinity
        labels = node.labels
        if pod.required_affinity:
            pods_exist = True
            for t in pod.required_affinity:
                v = labels.get(t.topology_key)
                if v is None:
                    return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_AFFINITY)
                if affinity.get((t.topology_key, v), 0) <= 0:
                    pods_exist = False
            if not pods_exist and not self_affine:
                return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_AFFINITY)
        for t, counts in anti:
            if counts:
                v = labels.get(t.topology_key)
                if v is not None and counts.get((t.topology_key, v), 0) > 0:
                    return Status(UNSCHEDULABLE, ERR_ANTI_AFFINITY)
        if existing:
            for pair in labels.items():
                if existing.get(pair, 0) > 0:
                    return Status(UNSCHEDULABLE, ERR_EXISTING_ANTI_AFFINITY)
        return None

    def filter_nodes(self, state, pod, nodes) -> list[Status | None]:
        """:meth:`filter` for many nodes (it has no side effects)."""
        f = self.filter
        return [f(state, pod, n) for n in nodes]

    # -- score ----------------------------------------------------------------
    def pre_score(self, state, pod, nodes, snapshot) -> Status | None:
        """Per topology key → value → summed weight (scoring.go PreScore): the pod's
        preferred terms over matching existing pods (+/− weight), existing pods'
        required affinity (× hardPodAffinityWeight) and preferred terms matching the pod."""
        has_constraints = bool(pod.preferred_affinity or pod.preferred_anti_affinity)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(SKIP)
        idx = snapshot.affinity_index
        topo: dict[str, dict[str, int]] = {}

        def add(counts, weight: int) -> None:
            for (key, value), n in counts.items():
                d = topo.setdefault(key, {})
                d[value] = d.get(value, 0) + weight * n

        for t in pod.preferred_affinity:
            add(idx.matching_counts((t,)), t.weight)
        for t in pod.preferred_anti_affinity:
            add(idx.matching_counts((t,)), -t.weight)
        ns_labels = snapshot.ns_labels(pod.namespace)
        if self.hard_pod_affinity_weight > 0:
            for t, counts in idx.existing_matching("required_affinity", pod, ns_labels):
                add(counts, self.hard_pod_affinity_weight)
        for t, counts in idx.existing_matching("preferred_affinity", pod, ns_labels):
            add(counts, t.weight)
        for t, counts in idx.existing_matching("preferred_anti_affinity", pod, ns_labels):
            add(counts, -t.weight)
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
