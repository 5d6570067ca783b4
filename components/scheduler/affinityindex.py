"""Incremental inter-pod affinity counts kept by the scheduler cache.

kube-scheduler's InterPodAffinity PreFilter walks every pod with affinity terms on
every cycle (``pkg/scheduler/framework/plugins/interpodaffinity/filtering.go``
getExistingAntiAffinityCounts / getIncomingAffinityAntiAffinityCounts) and relies on
Go's parallelism. Here the same counts are maintained as pods come and go, so one
cycle costs one selector match per *distinct* term rather than per pod:

* :attr:`AffinityIndex.existing` — per kind (``required_anti_affinity``,
  ``required_affinity``, ``preferred_affinity``, ``preferred_anti_affinity``), each
  distinct :class:`~components.scheduler.podinfo.AffinityTerm` of pods in the cache →
  ``{(topologyKey, value): number of pods with that term in that domain}``.
* :meth:`AffinityIndex.matching_counts` — for an incoming pod's term set (all terms
  must match, as for required affinity; one term for anti-affinity and preferred
  terms): ``{(topologyKey, value): number of pods matching}``. Built by one scan the
  first time a term set is asked for, then kept up to date (at most
  ``max_term_sets`` term sets, least recently used dropped).

Pods count in the domain of their node's labels; pods on a node the cache has no
Node object for count nowhere (the snapshot only holds real nodes). Node label
changes re-count that node's pods; namespace label changes drop the
``matching_counts`` sets (they are rebuilt on demand).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Hashable, Iterable, TypeVar

from components.scheduler.podinfo import AffinityTerm, PodInfo
from controlplane.selectors import LabelSelector

Pair = tuple[str, str]
Counts = dict[Pair, int]
K = TypeVar("K", bound=Hashable)

#: PodInfo attribute names of the term kinds counted in :attr:`AffinityIndex.existing`
KINDS = ("required_anti_affinity", "required_affinity", "preferred_affinity",
         "preferred_anti_affinity")


def bump(counts: dict[K, int], pair: K, n: int) -> None:
    """Add ``n`` to ``counts[pair]``, dropping the entry when it reaches 0 (as
    kube-scheduler's topologyToMatchedTermCount.update)."""
    v = counts.get(pair, 0) + n
    if v > 0:
        counts[pair] = v
    else:
        counts.pop(pair, None)


_bump = bump


class AffinityIndex:
    """Counts per topology pair, maintained incrementally.

    ``ns_labels(namespace) -> dict``: the labels of a namespace (for terms with a
    namespaceSelector); ``all_pods() -> iterable of (PodInfo, node labels)``: every
    counted pod, for the first build of a term set.
    """

    def __init__(self, ns_labels: Callable[[str], dict],
                 all_pods: Callable[[], Iterable[tuple[PodInfo, dict]]],
                 max_term_sets: int = 256) -> None:
        self.ns_labels = ns_labels
        self.all_pods = all_pods
        self.max_term_sets = max_term_sets
        self.existing: dict[str, dict[AffinityTerm, Counts]] = {k: {} for k in KINDS}
        self._matching: OrderedDict[tuple[AffinityTerm, ...], Counts] = OrderedDict()

    # -- maintenance ----------------------------------------------------------------
    def pod_added(self, pi: PodInfo, labels: dict, sign: int = 1) -> None:
        """Count ``pi`` in the domains of ``labels`` (its node's labels; ``sign`` -1
        un-counts)."""
        if not labels:
            return
        if pi.has_affinity:
            for kind in KINDS:
                terms = getattr(pi, kind)
                if not terms:
                    continue
                idx = self.existing[kind]
                for t in terms:
                    v = labels.get(t.topology_key)
                    if v is None:
                        continue
                    counts = idx.get(t)
                    if counts is None:
                        if sign < 0:
                            continue
                        counts = idx[t] = {}
                    _bump(counts, (t.topology_key, v), sign)
                    if not counts:
                        del idx[t]
        if self._matching:
            nsl = None
            for terms, counts in self._matching.items():
                if nsl is None and any(t.ns_selector is not None for t in terms):
                    nsl = self.ns_labels(pi.namespace)
                if all(t.matches(pi, nsl) for t in terms):
                    for t in terms:
                        v = labels.get(t.topology_key)
                        if v is not None:
                            _bump(counts, (t.topology_key, v), sign)

    def pod_removed(self, pi: PodInfo, labels: dict) -> None:
        """Undo :meth:`pod_added` for the same ``labels``."""
        self.pod_added(pi, labels, -1)

    def namespaces_changed(self) -> None:
        """Namespace labels changed: forget the term sets that depend on them."""
        for terms in [k for k in self._matching if any(t.ns_selector is not None for t in k)]:
            del self._matching[terms]

    # -- queries --------------------------------------------------------------------
    def matching_counts(self, terms: Iterable[AffinityTerm]) -> Counts:
        """``{(topologyKey, value): n}`` over pods matching *all* ``terms``, each such
        pod counted once for each term's topology key. The returned dict is live:
        callers must not change it."""
        key = tuple(terms)
        counts = self._matching.get(key)
        if counts is not None:
            self._matching.move_to_end(key)
            return counts
        counts = {}
        need_ns = any(t.ns_selector is not None for t in key)
        for pi, labels in self.all_pods():
            if not labels:
                continue
            nsl = self.ns_labels(pi.namespace) if need_ns else None
            if all(t.matches(pi, nsl) for t in key):
                for t in key:
                    v = labels.get(t.topology_key)
                    if v is not None:
                        _bump(counts, (t.topology_key, v), 1)
        self._matching[key] = counts
        if len(self._matching) > self.max_term_sets:
            self._matching.popitem(last=False)
        return counts

    def existing_matching(self, kind: str, pod: PodInfo, ns_labels: dict | None) -> list[tuple[AffinityTerm, Counts]]:
        """The existing pods' terms of ``kind`` that ``pod`` matches, with their counts
        (live dicts: do not change them)."""
        return [(t, c) for t, c in self.existing[kind].items() if t.matches(pod, ns_labels)]


class SelectorCounts:
    """Pods per node matching a (namespace, label selector), for PodTopologySpread:
    ``counts(namespace, selector) -> {node name: n}`` over pods in ``namespace``, not
    being deleted, matching ``selector`` (podtopologyspread common.go
    countPodsMatchSelector). Built by one scan on first use, then kept up to date by
    :meth:`pod_added` / :meth:`pod_removed` (at most ``max_keys`` selectors, least
    recently used dropped). The returned dicts are live: do not change them."""

    def __init__(self, all_pods: Callable[[], Iterable[tuple[PodInfo, str]]], max_keys: int = 256,
                 node_labels: Callable[[str], dict | None] | None = None) -> None:
        """``node_labels(node name)``: the labels of a node the scheduler has a Node
        object for, else None (:meth:`domain_counts` counts only such nodes)."""
        self.all_pods = all_pods
        self.max_keys = max_keys
        self.node_labels = node_labels or (lambda name: None)
        self._by_key: OrderedDict[tuple[str, LabelSelector], dict[str, int]] = OrderedDict()
        self._domains: OrderedDict[tuple[str, LabelSelector, str], dict[str, int]] = OrderedDict()

    @staticmethod
    def _counts(pi: PodInfo) -> bool:
        return not (pi.pod.get("metadata") or {}).get("deletionTimestamp")

    def pod_added(self, pi: PodInfo, node_name: str, sign: int = 1) -> None:
        if not (self._by_key or self._domains) or not self._counts(pi):
            return
        for (ns, sel), d in self._by_key.items():
            if ns == pi.namespace and sel.matches(pi.labels):
                n = d.get(node_name, 0) + sign
                if n > 0:
                    d[node_name] = n
                else:
                    d.pop(node_name, None)
        labels = None
        for (ns, sel, key), d in self._domains.items():
            if ns == pi.namespace and sel.matches(pi.labels):
                if labels is None:
                    labels = self.node_labels(node_name) or {}
                v = labels.get(key)
                if v is not None:
                    bump(d, v, sign)

    def pod_removed(self, pi: PodInfo, node_name: str) -> None:
        self.pod_added(pi, node_name, -1)

    def nodes_changed(self) -> None:
        """A node came, went or changed labels: forget the :meth:`domain_counts`."""
        self._domains.clear()

    def domain_counts(self, namespace: str, selector: LabelSelector, key: str) -> dict[str, int]:
        """``{value of node label key: matching pods}`` over the nodes with a Node object
        (only domains holding matching pods appear). Built from :meth:`counts` on first
        use, then kept up to date; live: do not change it."""
        k = (namespace, selector, key)
        d = self._domains.get(k)
        if d is not None:
            self._domains.move_to_end(k)
            return d
        d = {}
        for name, n in self.counts(namespace, selector).items():
            labels = self.node_labels(name)
            if labels:
                v = labels.get(key)
                if v is not None:
                    d[v] = d.get(v, 0) + n
        self._domains[k] = d
        if len(self._domains) > self.max_keys:
            self._domains.popitem(last=False)
        return d

    def counts(self, namespace: str, selector: LabelSelector) -> dict[str, int]:
        key = (namespace, selector)
        d = self._by_key.get(key)
        if d is not None:
            self._by_key.move_to_end(key)
            return d
        d = {}
        if not selector.nothing:
            for pi, node_name in self.all_pods():
                if pi.namespace == namespace and self._counts(pi) and selector.matches(pi.labels):
                    d[node_name] = d.get(node_name, 0) + 1
        self._by_key[key] = d
        if len(self._by_key) > self.max_keys:
            self._by_key.popitem(last=False)
        return d
