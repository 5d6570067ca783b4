"""NodeAffinity (Filter, Score): ``spec.nodeSelector`` and required node affinity
filter; preferred terms score the sum of the weights of the terms a node matches,
normalised by the best node. The selector and terms are compiled once per pod in
PreFilter/PreScore into closures over label dicts (as kube-scheduler builds its
RequiredNodeAffinity once per pod), not re-read per node. Source: pkg/scheduler/framework/plugins/nodeaffinity/
node_affinity.go; component-helpers scheduling/corev1/nodeaffinity."""

from __future__ import annotations

import json
import re
from typing import Callable

from components.scheduler.framework import SKIP, UNSCHEDULABLE_AND_UNRESOLVABLE, Status, default_normalize_score

_INTEGER = re.compile(r"^-?\d+$")
Matcher = Callable[[dict, str], bool]


def compile_requirement(expr: dict, field: bool = False) -> Callable[[dict, str], bool]:
    """One NodeSelectorRequirement as ``f(labels, node_name) -> bool`` (In, NotIn,
    Exists, DoesNotExist, Gt, Lt; ``field`` = a matchFields requirement on
    ``metadata.name``). Semantics of ``controlplane.selectors.node_selector_term_matches``."""
    key = expr.get("key", "")
    op = expr.get("operator")
    vals = frozenset(str(v) for v in (expr.get("values") or []))
    if field:
        if key != "metadata.name":
            return lambda labels, name: op in ("NotIn", "DoesNotExist")
        if op == "In":
            return lambda labels, name: name in vals
        if op == "NotIn":
            return lambda labels, name: name not in vals
        return lambda labels, name: op == "Exists"
    if op == "In":
        return lambda labels, name: labels.get(key) in vals
    if op == "NotIn":
        return lambda labels, name: labels.get(key) not in vals
    if op == "Exists":
        return lambda labels, name: key in labels
    if op == "DoesNotExist":
        return lambda labels, name: key not in labels
    if op in ("Gt", "Lt") and len(vals) == 1 and _INTEGER.match(next(iter(vals))):
        want = int(next(iter(vals)))
        gt = op == "Gt"

        def cmp(labels: dict, name: str) -> bool:
            v = labels.get(key)
            if v is None or not _INTEGER.match(str(v)):
                return False
            return int(v) > want if gt else int(v) < want
        return cmp
    return lambda labels, name: False


def compile_term(term: dict) -> Matcher:
    """A NodeSelectorTerm (requirements ANDed; an empty term matches nothing)."""
    reqs = [compile_requirement(e) for e in term.get("matchExpressions") or []] + \
        [compile_requirement(e, True) for e in term.get("matchFields") or []]
    if not reqs:
        return lambda labels, name: False
    if len(reqs) == 1:
        return reqs[0]
    return lambda labels, name: all(r(labels, name) for r in reqs)


def compile_required(node_selector: dict, terms: list | None) -> Matcher:
    """``spec.nodeSelector`` AND (any of the required terms, when given)."""
    sel = tuple(node_selector.items())
    compiled = None if terms is None else [compile_term(t or {}) for t in terms]

    def match(labels: dict, name: str) -> bool:
        for k, v in sel:
            if labels.get(k) != v:
                return False
        if compiled is None:
            return True
        for t in compiled:
            if t(labels, name):
                return True
        return False
    return match

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
_KEY = "NodeAffinity.pre"
#: the snapshot attribute caching, per required selector, the names of the nodes it matches
_CACHE = "_node_affinity_matches"
#: distinct selectors cached per snapshot before the cache starts over
_CACHE_MAX = 256


def matching_nodes(snapshot, node_selector: dict, terms: list | None) -> frozenset[str]:
    """The names of ``snapshot``'s nodes that ``spec.nodeSelector`` AND the required
    terms match, computed once per distinct selector and kept on the snapshot until a
    node comes, goes or changes its labels (``Snapshot.labels_changed``): the pods of a
    workload share their selector, so each pod's Filter is one set lookup per node.
    kube-scheduler compiles the selector once per pod in PreFilter and matches each
    node's labels in Filter (node_affinity.go PreFilter, Filter); the verdicts are the same."""
    cache = snapshot.__dict__.setdefault(_CACHE, {})
    key = json.dumps([node_selector, terms], sort_keys=True, separators=(",", ":"))
    hit = cache.get(key)
    if hit is None:
        match = compile_required(node_selector, terms)
        hit = frozenset(n.name for n in snapshot.nodes if match(n.labels, n.name))
        if len(cache) >= _CACHE_MAX:
            cache.clear()
        cache[key] = hit
    return hit


class NodeAffinity:
    """The NodeAffinity PreFilter/Filter/PreScore/Score plugin (see the module docstring);
    ``args``: NodeAffinityArgs (``addedAffinity``)."""

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
        terms = None if req is None else (req.get("nodeSelectorTerms") or [])
        if hasattr(snapshot, "nodes") and hasattr(snapshot, "__dict__"):
            state[_KEY] = matching_nodes(snapshot, sel, terms)
        else:  # no snapshot to cache on: match each node's labels
            state[_KEY] = compile_required(sel, terms)
        #: one rejection per cycle, shared by the nodes it rejects (nothing changes a Status's reasons)
        state[_KEY + ".rejected"] = Status(UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return None

    def filter(self, state, pod, node) -> Status | None:
        ok = state[_KEY]
        if node.name in ok if isinstance(ok, frozenset) else ok(node.labels, node.name):
            return None
        return state[_KEY + ".rejected"]

    def filter_nodes(self, state, pod, nodes) -> list[Status | None]:
        """:meth:`filter` for many nodes."""
        ok = state[_KEY]
        rejected = state[_KEY + ".rejected"]
        if isinstance(ok, frozenset):
            return [None if n.name in ok else rejected for n in nodes]
        return [None if ok(n.labels, n.name) else rejected for n in nodes]

    def pre_score(self, state, pod, nodes, snapshot) -> Status | None:
        spec = pod.pod.get("spec") or {}
        pref = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("preferredDuringSchedulingIgnoredDuringExecution")) or []
        terms = [(int(t.get("weight") or 0), t.get("preference") or {}) for t in pref]
        terms = [(w, t) for w, t in terms if w]
        if not terms:
            return Status(SKIP)
        state[_KEY + ".score"] = [(w, compile_term(t)) for w, t in terms]
        return None

    def score(self, state, pod, node) -> int:
        labels, name = node.labels, node.name
        return sum(w for w, t in state[_KEY + ".score"] if t(labels, name))

    def normalize_score(self, state, pod, scores: list[int]) -> None:
        default_normalize_score(scores)
