"""PodTopologySpread, restating kube-scheduler and the docs page "Pod Topology Spread
Constraints" (kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/):
system default constraints (maxSkew 3 on hostname, 5 on zone, ScheduleAnyway, only
for pods selected by a Service/RC/RS/StatefulSet), ``minDomains``,
``nodeAffinityPolicy`` (default Honor), ``nodeTaintsPolicy`` (default Ignore),
``matchLabelKeys``, and the scoring formula of
``pkg/scheduler/framework/plugins/podtopologyspread/scoring.go``.
"""

from __future__ import annotations

import math

import pytest

from components.scheduler.cache import NodeInfo, Snapshot
from components.scheduler.config import ConfigError, parse_config
from components.scheduler.framework import SKIP, CycleState
from components.scheduler.plugins.podtopologyspread import (
    ERR_CONSTRAINTS,
    ERR_MISSING_LABEL,
    PodTopologySpread,
    default_selector,
)
from components.scheduler.podinfo import PodInfo


def mknode(name, zone=None, taints=None, extra=None):
    labels = {"kubernetes.io/hostname": name, **(extra or {})}
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    return {"metadata": {"name": name, "labels": labels}, "spec": {"taints": taints or []},
            "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"}}}


def mkpod(name, labels=None, node="", spread=None, owner=None, node_selector=None, ns="default"):
    md = {"name": name, "namespace": ns, "labels": labels or {}}
    if owner:
        md["ownerReferences"] = [owner]
    spec = {"containers": [{"name": "c", "image": "nginx"}]}
    if node:
        spec["nodeName"] = node
    if spread:
        spec["topologySpreadConstraints"] = spread
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"metadata": md, "spec": spec}


def cluster(layout: dict[str, tuple[dict, int]]):
    """name → (node dict, number of app=web pods on it)."""
    out = []
    for name, (node, n) in layout.items():
        ni = NodeInfo(node)
        for i in range(n):
            ni.add_pod(PodInfo(mkpod(f"{name}-w{i}", {"app": "web"}, name)))
        out.append(ni)
    return out


def spread(key="topology.kubernetes.io/zone", skew=1, when="DoNotSchedule", **kw):
    return [{"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when,
             "labelSelector": {"matchLabels": {"app": "web"}}, **kw}]


def filt(plugin, pod, nodes):
    snap = Snapshot(nodes, {n.name: n for n in nodes})
    state = CycleState()
    pi = PodInfo(pod)
    st = plugin.pre_filter(state, pi, snap)
    if st is not None and st.code == SKIP:
        return "skip"
    return {n.name: (plugin.filter(state, pi, n) or None) and plugin.filter(state, pi, n).reasons[0]
            for n in nodes}


def score(plugin, pod, nodes):
    snap = Snapshot(nodes, {n.name: n for n in nodes})
    state = CycleState()
    pi = PodInfo(pod)
    st = plugin.pre_score(state, pi, nodes, snap)
    if st is not None and st.code == SKIP:
        return "skip"
    raw = [plugin.score(state, pi, n) for n in nodes]
    assert plugin.score_nodes(state, pi, nodes) == raw, "the batch scores as one call per node does"
    plugin.normalize_score(state, pi, raw)
    return dict(zip((n.name for n in nodes), raw))


# -- Filter ------------------------------------------------------------------------------
@pytest.mark.parametrize("layout, kw, want", [
    # zone z1 has 2, z2 has 1: only z2 keeps the skew <= 1
    ({"a": ("z1", 2), "b": ("z2", 1)}, {}, {"a": ERR_CONSTRAINTS, "b": None}),
    # a node without the topology key: unresolvable
    ({"a": ("z1", 0), "c": (None, 0)}, {}, {"a": None, "c": ERR_MISSING_LABEL}),
    # minDomains 3 with 2 domains: the global minimum counts as 0, so z1 (1 pod) fails
    ({"a": ("z1", 1), "b": ("z2", 1)}, {"minDomains": 3}, {"a": ERR_CONSTRAINTS, "b": ERR_CONSTRAINTS}),
    ({"a": ("z1", 1), "b": ("z2", 1)}, {"minDomains": 2}, {"a": None, "b": None}),
], ids=["only the emptier zone keeps the skew", "a node without the topology key",
        "fewer domains than minDomains: the minimum is 0", "as many domains as minDomains"])
def test_filter_skew_and_min_domains(layout, kw, want):
    nodes = cluster({n: (mknode(n, z), c) for n, (z, c) in layout.items()})
    assert filt(PodTopologySpread(), mkpod("new", {"app": "web"}, spread=spread(**kw)), nodes) == want


@pytest.mark.parametrize("policy, want_a", [
    # Honor (default): node "x" (excluded by the nodeSelector) does not count, so z1's
    # 1 pod is the minimum... z1 vs z2 -> placing in z1 gives skew 2-1 = 1: fine
    ({}, None),
    ({"nodeAffinityPolicy": "Honor"}, None),
    # Ignore: zone z3 (node x, 0 pods) counts -> min 0 -> z1 has skew 2 > 1
    ({"nodeAffinityPolicy": "Ignore"}, ERR_CONSTRAINTS),
], ids=["Honor by default", "Honor", "Ignore counts the excluded node's zone"])
def test_node_affinity_policy(policy, want_a):
    nodes = cluster({"a": (mknode("a", "z1", extra={"pool": "p"}), 1),
                     "b": (mknode("b", "z2", extra={"pool": "p"}), 1),
                     "x": (mknode("x", "z3"), 0)})
    pod = mkpod("new", {"app": "web"}, spread=spread(**policy), node_selector={"pool": "p"})
    assert filt(PodTopologySpread(), pod, nodes)["a"] == want_a


@pytest.mark.parametrize("policy, want_a", [
    ({}, ERR_CONSTRAINTS),                           # Ignore (default): tainted z3 counts, min 0
    ({"nodeTaintsPolicy": "Ignore"}, ERR_CONSTRAINTS),
    ({"nodeTaintsPolicy": "Honor"}, None),           # z3's node is not tolerated: not counted
], ids=["Ignore by default", "Ignore counts the tainted node's zone", "Honor skips the untolerated node"])
def test_node_taints_policy(policy, want_a):
    nodes = cluster({"a": (mknode("a", "z1"), 1), "b": (mknode("b", "z2"), 1),
                     "t": (mknode("t", "z3", taints=[{"key": "k", "effect": "NoSchedule"}]), 0)})
    pod = mkpod("new", {"app": "web"}, spread=spread(**policy))
    assert filt(PodTopologySpread(), pod, nodes)["a"] == want_a


def test_match_label_keys_narrow_the_selector():
    """matchLabelKeys: only pods with the same value of the key (e.g. a revision) count."""
    a, b = NodeInfo(mknode("a", "z1")), NodeInfo(mknode("b", "z2"))
    for i in range(2):  # old revision pods in z1
        a.add_pod(PodInfo(mkpod(f"old{i}", {"app": "web", "rev": "1"}, "a")))
    c = spread(matchLabelKeys=["rev"])
    assert filt(PodTopologySpread(), mkpod("new", {"app": "web", "rev": "2"}, spread=c), [a, b]) == \
        {"a": None, "b": None}
    assert filt(PodTopologySpread(), mkpod("new", {"app": "web", "rev": "1"}, spread=c), [a, b]) == \
        {"a": ERR_CONSTRAINTS, "b": None}


# -- system defaults -----------------------------------------------------------------------
class Store:
    def __init__(self, *objs):
        self.objs = {f"{o['metadata'].get('namespace', 'default')}/{o['metadata']['name']}": o for o in objs}

    def get(self, key):
        return self.objs.get(key)

    def list(self):
        return self.objs.values()


class Handle:
    def __init__(self, **listers):
        self.listers = listers


SVC = {"metadata": {"name": "web", "namespace": "default"}, "spec": {"selector": {"app": "web"}}}
RS = {"metadata": {"name": "web-1", "namespace": "default"},
      "spec": {"selector": {"matchLabels": {"app": "web", "rev": "1"}}}}
OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "controller": True}


@pytest.mark.parametrize("listers, labels, owner, want", [
    ({}, {"app": "web"}, None, ""),                                          # nothing selects it
    ({"services": Store(SVC)}, {"app": "web"}, None, "app=web"),
    ({"services": Store(SVC)}, {"app": "db"}, None, ""),                     # service selects others
    ({"replicasets": Store(RS)}, {"app": "web", "rev": "1"}, OWNER, "app=web,rev=1"),
    ({"services": Store(SVC), "replicasets": Store(RS)}, {"app": "web", "rev": "1"}, OWNER,
     "app=web,app=web,rev=1"),
    ({"replicasets": Store()}, {"app": "web"}, OWNER, ""),                    # owner not found
], ids=["nothing selects the pod", "a service selects it", "the service selects other pods",
        "its owning replica set", "a service and the owner", "the owner is not found"])
def test_default_selector(listers, labels, owner, want):
    pi = PodInfo(mkpod("p", labels, owner=owner))
    assert str(default_selector(pi, listers)) == want


def test_system_defaults_apply_only_to_pods_with_a_selecting_owner():
    nodes = cluster({"a": (mknode("a", "z1"), 3), "b": (mknode("b", "z1"), 0), "c": (mknode("c", "z2"), 0)})
    plugin = PodTopologySpread(None, Handle(services=Store(SVC)))
    # no Service selects app=db: no default constraints, Score is skipped
    assert score(plugin, mkpod("x", {"app": "db"}), nodes) == "skip"
    # system defaults are ScheduleAnyway only: Filter is skipped
    assert filt(plugin, mkpod("x", {"app": "web"}), nodes) == "skip"
    got = score(plugin, mkpod("x", {"app": "web"}), nodes)
    # hostname: counts 3,0,0 with weight log(3+2); zone: z1=3, z2=0, weight log(2+2);
    # maxSkew-1 added per constraint (2 and 4)
    raw = {"a": round(3 * math.log(5) + 2 + 3 * math.log(4) + 4), "b": round(2 + 3 * math.log(4) + 4),
           "c": round(2 + 4)}
    hi, lo = max(raw.values()), min(raw.values())
    assert got == {n: 100 * (hi + lo - s) // hi for n, s in raw.items()}
    assert got["c"] == 100 and got["a"] < got["b"] < got["c"]


def test_system_defaults_do_not_ignore_nodes_without_zone():
    """With system defaults a node lacking the zone label still scores (it is only
    ignored when the constraints are the pod's own)."""
    nodes = cluster({"a": (mknode("a", "z1"), 2), "n": (mknode("n"), 0)})
    plugin = PodTopologySpread(None, Handle(services=Store(SVC)))
    got = score(plugin, mkpod("x", {"app": "web"}), nodes)
    assert got["n"] == 100 and got["a"] < 100
    own = mkpod("x", {"app": "web"}, spread=spread(when="ScheduleAnyway"))
    assert score(plugin, own, nodes)["n"] == 0   # own constraints: nodes without the key ignored


@pytest.mark.parametrize("args, msg", [
    ({"defaultingType": "Nope"}, "defaultingType: Unsupported value"),
    ({"defaultingType": "System", "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                                          "whenUnsatisfiable": "DoNotSchedule"}]},
     "must be empty"),
], ids=["unknown defaultingType", "System defaulting with constraints"])
def test_args_validation(args, msg):
    with pytest.raises(ConfigError) as e:
        parse_config({"profiles": [{"pluginConfig": [{"name": "PodTopologySpread", "args": args}]}]})
    assert msg in str(e.value)


def test_list_defaulting_uses_given_constraints():
    nodes = cluster({"a": (mknode("a", "z1"), 2), "b": (mknode("b", "z2"), 0)})
    plugin = PodTopologySpread({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}]},
        Handle(services=Store(SVC)))
    assert filt(plugin, mkpod("x", {"app": "web"}), nodes) == {"a": ERR_CONSTRAINTS, "b": None}
    assert filt(plugin, mkpod("x", {"app": "db"}), nodes) == "skip"


def test_domains_follow_node_relabels_through_the_cache():
    # the common case counts domains from a per-snapshot cache of label values: a
    # node moving to another zone must move its domain too
    from components.scheduler.cache import Cache
    cache = Cache()
    cache.add_node(mknode("a", "z1"))
    cache.add_node(mknode("b", "z2"))
    cache.add_pod(mkpod("w0", {"app": "web"}, "a"))
    plugin = PodTopologySpread()
    pi = PodInfo(mkpod("p", {"app": "web"}, spread=spread()))

    def verdicts():
        snap = cache.snapshot()
        state = CycleState()
        plugin.pre_filter(state, pi, snap)
        return {n.name: (plugin.filter(state, pi, n) or None) and plugin.filter(state, pi, n).reasons[0]
                for n in snap.nodes}

    assert cache.snapshot().domain_values(ZONE_KEY) == {"z1": 1, "z2": 1}
    assert verdicts() == {"a": ERR_CONSTRAINTS, "b": None}
    cache.update_node(mknode("b", "z1"))  # one zone left: z1 holds 1, the minimum is 1
    assert cache.snapshot().domain_values(ZONE_KEY) == {"z1": 2}
    assert verdicts() == {"a": None, "b": None}


ZONE_KEY = "topology.kubernetes.io/zone"
