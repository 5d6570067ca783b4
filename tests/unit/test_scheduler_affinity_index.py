"""The incremental inter-pod affinity index and namespaceSelector terms.

Restates kube-scheduler's behaviour: ``pkg/scheduler/framework/types.go``
(AffinityTerm.Matches: the listed namespaces ∪ namespaces matching the
namespaceSelector; neither → the pod's own namespace; ``{}`` → all) and
``plugins/interpodaffinity/filtering.go`` (counts per topology pair). The index
must always equal a fresh scan of the cache, whatever happened before.
"""

from __future__ import annotations

import random

import pytest

from components.scheduler.affinityindex import KINDS
from components.scheduler.cache import Cache, Snapshot
from components.scheduler.framework import CycleState, Status
from components.scheduler.plugins.interpodaffinity import (
    ERR_ANTI_AFFINITY,
    ERR_EXISTING_ANTI_AFFINITY,
    InterPodAffinity,
)
from components.scheduler.podinfo import PodInfo
from components.scheduler.scheduler import Scheduler
from controlplane.selectors import selector_from_dict


def node(name: str, zone: str) -> dict:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": zone}},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def pod(name: str, ns: str = "default", labels: dict | None = None, node_name: str = "",
        anti: list | None = None, aff: list | None = None, pref: list | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "nginx"}]}
    a: dict = {}
    if anti:
        a["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": anti}
    if aff:
        a["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": aff}
    if pref:
        a.setdefault("podAffinity", {})["preferredDuringSchedulingIgnoredDuringExecution"] = pref
    if a:
        spec["affinity"] = a
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "namespace": ns, "labels": labels or {}, "uid": f"{ns}-{name}"},
            "spec": spec}


def term(key: str = "zone", ns: list | None = None, ns_sel: dict | None = None, **labels) -> dict:
    t: dict = {"labelSelector": {"matchLabels": labels}, "topologyKey": key}
    if ns is not None:
        t["namespaces"] = ns
    if ns_sel is not None:
        t["namespaceSelector"] = ns_sel
    return t


# -- AffinityTerm namespaces -----------------------------------------------------------
NS_LABELS = {"team-a": {"team": "a"}, "team-b": {"team": "b"}, "default": {}}


@pytest.mark.parametrize("raw, target_ns, want", [
    (term(app="x"), "default", True),                                  # own namespace only
    (term(app="x"), "team-a", False),
    (term(ns_sel={}, app="x"), "team-b", True),                        # {} = every namespace
    (term(ns_sel={"matchLabels": {"team": "a"}}, app="x"), "team-a", True),
    (term(ns_sel={"matchLabels": {"team": "a"}}, app="x"), "team-b", False),
    (term(ns_sel={"matchLabels": {"team": "a"}}, app="x"), "default", False),  # not own ns either
    (term(ns=["team-b"], ns_sel={"matchLabels": {"team": "a"}}, app="x"), "team-b", True),  # union
    (term(ns=["team-b"], ns_sel={"matchLabels": {"team": "a"}}, app="x"), "team-a", True),
    (term(ns=["team-b"], app="x"), "default", False),                   # names given: own ns not added
    (term(ns_sel={"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}, app="x"),
     "default", True),
], ids=["own namespace by default", "another namespace by default", "empty namespaceSelector: every namespace",
        "namespaceSelector matches", "namespaceSelector does not match",
        "namespaceSelector alone leaves out the own namespace", "names and selector: a listed name",
        "names and selector: a selected namespace", "names given: the own namespace is not added",
        "DoesNotExist selector matches an unlabelled namespace"])
def test_affinity_term_namespaces(raw, target_ns, want):
    owner = PodInfo(pod("owner", "default", anti=[raw]))
    t = owner.required_anti_affinity[0]
    target = PodInfo(pod("t", target_ns, {"app": "x"}))
    assert t.matches(target, NS_LABELS.get(target_ns)) is want
    other = PodInfo(pod("o", target_ns, {"app": "y"}))
    assert t.matches(other, NS_LABELS.get(target_ns)) is False  # the label selector still applies


# -- the index equals a fresh scan -------------------------------------------------------
def fresh(cache: Cache):
    nodes = [n for n in cache.nodes() if n.node is not None]
    return Snapshot(nodes, {n.name: n for n in nodes}, ns_labels=cache.namespace_labels).affinity_index


def test_index_matches_a_fresh_scan_after_random_changes():
    rng = random.Random(7)
    cache = Cache()
    for ns in ("a", "b"):
        cache.set_namespace({"metadata": {"name": ns, "labels": {"team": ns}}})
    zones = ["z1", "z2", "z3"]
    for i in range(6):
        cache.add_node(node(f"n{i}", zones[i % 3]))
    term_pool = [term(app="web"), term("kubernetes.io/hostname", app="db"),
                 term(ns_sel={"matchLabels": {"team": "b"}}, app="web"), term(ns_sel={}, app="db")]
    queries = [tuple(PodInfo(pod("q", "a", aff=[t])).required_affinity) for t in term_pool]
    live: dict[str, dict] = {}
    sels = [(ns, selector_from_dict({"matchLabels": {"app": app}})) for ns in ("a", "b") for app in ("web", "db")]
    for ns, sel in sels:
        cache.selector_counts.counts(ns, sel)
    for q in queries:  # build the lazily maintained term sets before the changes
        cache.affinity_index.matching_counts(q)
    for step in range(300):
        op = rng.random()
        if op < 0.45 or not live:
            name = f"p{step}"
            ns = rng.choice(["a", "b"])
            kw = {rng.choice(["anti", "aff", "pref"]): [rng.choice(term_pool)]} if rng.random() < 0.6 else {}
            if "pref" in kw:
                kw["pref"] = [{"weight": rng.randint(1, 5), "podAffinityTerm": kw["pref"][0]}]
            p = pod(name, ns, {"app": rng.choice(["web", "db"])}, f"n{rng.randrange(7)}", **kw)
            if rng.random() < 0.3:
                cache.assume_pod(PodInfo(p), p["spec"]["nodeName"])
            else:
                cache.add_pod(p)
            live[PodInfo(p).key] = p
        elif op < 0.7:
            key = rng.choice(sorted(live))
            p = live.pop(key)
            if cache.is_assumed(key):
                cache.forget_pod(key)
            else:
                cache.remove_pod(p)
        elif op < 0.85:
            i = rng.randrange(7)
            cache.add_node(node(f"n{i}", rng.choice(zones)))  # relabel (or add n6)
        elif op < 0.93:
            cache.remove_node(f"n{rng.randrange(7)}")
        else:
            ns = rng.choice(["a", "b"])
            cache.set_namespace({"metadata": {"name": ns, "labels": {"team": rng.choice(["a", "b"])}}})
        want = fresh(cache)
        got = cache.affinity_index
        for kind in KINDS:
            assert got.existing[kind] == want.existing[kind], (step, kind)
        for q in queries:
            assert got.matching_counts(q) == want.matching_counts(q), (step, q)
        for ns, sel in sels:  # PodTopologySpread's pods-per-node counts
            placed = {}
            for n in cache.nodes():
                c = sum(1 for pi in n.pods.values() if pi.namespace == ns and sel.matches(pi.labels))
                if c:
                    placed[n.name] = c
            assert cache.selector_counts.counts(ns, sel) == placed, (step, ns, sel)


# -- the plugin through the cache --------------------------------------------------------
def run_filter(cache: Cache, p: dict) -> dict[str, Status | None]:
    snap = cache.snapshot()
    plugin = InterPodAffinity()
    state = CycleState()
    pi = PodInfo(p)
    st = plugin.pre_filter(state, pi, snap)
    if st is not None:
        return {n.name: None for n in snap.nodes}
    return {n.name: plugin.filter(state, pi, n) for n in snap.nodes}


def reasons(out: dict) -> dict[str, str]:
    return {n: (s.reasons[0] if s else "") for n, s in sorted(out.items())}


def test_incoming_anti_affinity_with_namespace_selector_follows_namespace_labels():
    cache = Cache()
    cache.set_namespace({"metadata": {"name": "prod", "labels": {"env": "prod"}}})
    cache.set_namespace({"metadata": {"name": "dev", "labels": {"env": "dev"}}})
    cache.add_node(node("n1", "z1"))
    cache.add_node(node("n2", "z2"))
    cache.add_pod(pod("db", "dev", {"app": "db"}, "n1"))
    incoming = pod("new", "default", {"app": "web"},
                   anti=[term("zone", ns_sel={"matchLabels": {"env": "prod"}}, app="db")])
    assert reasons(run_filter(cache, incoming)) == {"n1": "", "n2": ""}
    cache.set_namespace({"metadata": {"name": "dev", "labels": {"env": "prod"}}})  # relabelled
    assert reasons(run_filter(cache, incoming)) == {"n1": ERR_ANTI_AFFINITY, "n2": ""}


def test_existing_anti_affinity_with_namespace_selector_uses_incoming_pods_namespace():
    cache = Cache()
    cache.set_namespace({"metadata": {"name": "prod", "labels": {"env": "prod"}}})
    cache.set_namespace({"metadata": {"name": "dev", "labels": {"env": "dev"}}})
    cache.add_node(node("n1", "z1"))
    cache.add_node(node("n2", "z2"))
    cache.add_pod(pod("guard", "dev", {"app": "guard"}, "n1",
                      anti=[term("zone", ns_sel={"matchLabels": {"env": "prod"}}, app="web")]))
    assert reasons(run_filter(cache, pod("w1", "prod", {"app": "web"}))) == \
        {"n1": ERR_EXISTING_ANTI_AFFINITY, "n2": ""}
    assert reasons(run_filter(cache, pod("w2", "dev", {"app": "web"}))) == {"n1": "", "n2": ""}


class RecordingBinder:
    name = "DefaultBinder"

    async def bind(self, state, pi, node_name):
        return Status()


async def test_anti_affinity_workload_spreads_one_pod_per_node():
    """scheduler_perf's SchedulingPodAntiAffinity in small: every pod repels every
    other on kubernetes.io/hostname, so n pods land on n distinct nodes and the
    (n+1)th pod on n nodes fits nowhere."""
    s = Scheduler(None, rng=random.Random(3), binder_override=RecordingBinder())
    for i in range(8):
        s.on_node_add(node(f"n{i}", f"z{i % 2}"))
    green = {"color": "green"}
    anti = [term("kubernetes.io/hostname", ns=["sched-0", "sched-1"], color="green")]
    placed = []
    for i in range(9):
        s.on_pod_add(pod(f"p{i}", f"sched-{i % 2}", green, anti=anti))
        qp = s.queue.pop_nowait()
        r = s.schedule_one(qp)
        placed.append(r.suggested_host if r else None)
    await s.wait_idle()
    assert sorted(placed[:8]) == [f"n{i}" for i in range(8)]
    assert placed[8] is None
