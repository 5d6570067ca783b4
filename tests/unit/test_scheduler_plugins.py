"""Per-plugin tables restating kube-scheduler's documented behaviour (plain dicts)."""

from __future__ import annotations

import pytest

from components.scheduler.cache import NodeInfo, Snapshot
from components.scheduler.framework import (
    SKIP,
    UNSCHEDULABLE,
    UNSCHEDULABLE_AND_UNRESOLVABLE,
    CycleState,
    Diagnosis,
    FitError,
    default_normalize_score,
    histogram,
    num_feasible_nodes_to_find,
)
from components.scheduler.plugins.imagelocality import ImageLocality
from components.scheduler.plugins.interpodaffinity import InterPodAffinity
from components.scheduler.plugins.nodeaffinity import NodeAffinity
from components.scheduler.plugins.nodeports import NodePorts
from components.scheduler.plugins.noderesources import NodeResourcesBalancedAllocation, NodeResourcesFit
from components.scheduler.plugins.nodeunschedulable import NodeUnschedulable
from components.scheduler.plugins.podtopologyspread import PodTopologySpread
from components.scheduler.plugins.tainttoleration import TaintToleration
from components.scheduler.podinfo import PodInfo, pod_requests


def mknode(name="n1", labels=None, cpu="4", memory="8Gi", pods="110", taints=None,
           unschedulable=False, images=None) -> dict:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": {"taints": taints or [], "unschedulable": unschedulable},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                       "images": images or []}}


def mkpod(name="p", labels=None, requests=None, ports=None, tolerations=None, affinity=None,
          init=None, overhead=None, node_name="", spread=None, image="nginx") -> dict:
    c = {"name": "c", "image": image}
    if requests:
        c["resources"] = {"requests": requests}
    if ports:
        c["ports"] = ports
    spec = {"containers": [c]}
    if init:
        spec["initContainers"] = init
    if overhead:
        spec["overhead"] = overhead
    if tolerations:
        spec["tolerations"] = tolerations
    if affinity:
        spec["affinity"] = affinity
    if node_name:
        spec["nodeName"] = node_name
    if spread:
        spec["topologySpreadConstraints"] = spread
    return {"metadata": {"name": name, "namespace": "default", "labels": labels or {}}, "spec": spec}


def ni(node, *pods) -> NodeInfo:
    n = NodeInfo(node)
    for p in pods:
        n.add_pod(PodInfo(p))
    return n


def run_filter(plugin, pod, nodes):
    snap = Snapshot(nodes, {n.name: n for n in nodes})
    state = CycleState()
    pi = PodInfo(pod)
    pre = getattr(plugin, "pre_filter", None)
    if pre:
        st = pre(state, pi, snap)
        if st is not None and st.code == SKIP:
            return [None for _ in nodes]
    return [plugin.filter(state, pi, n) for n in nodes]


def run_score(plugin, pod, nodes):
    snap = Snapshot(nodes, {n.name: n for n in nodes})
    state = CycleState()
    pi = PodInfo(pod)
    pre = getattr(plugin, "pre_score", None)
    if pre:
        st = pre(state, pi, nodes, snap)
        if st is not None and st.code == SKIP:
            return None
    scores = [plugin.score(state, pi, n) for n in nodes]
    norm = getattr(plugin, "normalize_score", None)
    if norm:
        norm(state, pi, scores)
    return scores


# ---------------------------------------------------------------- requests
@pytest.mark.parametrize("spec,cpu,mem", [
    ({"containers": [{"resources": {"requests": {"cpu": "100m", "memory": "1Gi"}}},
                     {"resources": {"requests": {"cpu": "200m"}}}]}, 300, 2**30),
    # init containers run one at a time: the max of them vs the sum of app containers
    ({"containers": [{"resources": {"requests": {"cpu": "100m"}}}],
      "initContainers": [{"resources": {"requests": {"cpu": "500m"}}},
                         {"resources": {"requests": {"cpu": "300m"}}}]}, 500, 0),
    # limits default requests; overhead adds
    ({"containers": [{"resources": {"limits": {"cpu": "1"}}}], "overhead": {"cpu": "250m"}}, 1250, 0),
    # a sidecar (restartPolicy Always) keeps running alongside later init and app containers
    ({"containers": [{"resources": {"requests": {"cpu": "100m"}}}],
      "initContainers": [{"restartPolicy": "Always", "resources": {"requests": {"cpu": "200m"}}},
                         {"resources": {"requests": {"cpu": "500m"}}}]}, 700, 0),
], ids=["app containers add up", "the largest init container wins over the app containers",
        "limits default requests and overhead adds", "a sidecar adds to later init and app containers"])
def test_pod_requests(spec, cpu, mem):
    r = pod_requests(spec)
    assert (r.milli_cpu, r.memory) == (cpu, mem)


def test_non_zero_requests_defaults():
    r = pod_requests({"containers": [{}, {"resources": {"requests": {"cpu": "1"}}}]}, non_zero=True)
    assert r.milli_cpu == 1100 and r.memory == 2 * 200 * 1024 * 1024


# ---------------------------------------------------------------- NodeResourcesFit
@pytest.mark.parametrize("requests,existing,node_kw,reasons", [
    ({"cpu": "1"}, [], {}, []),
    ({"cpu": "5"}, [], {}, ["Insufficient cpu"]),
    ({"cpu": "3"}, [{"cpu": "2"}], {}, ["Insufficient cpu"]),
    ({"cpu": "1", "memory": "9Gi"}, [], {}, ["Insufficient memory"]),
    ({"cpu": "5", "memory": "9Gi"}, [], {}, ["Insufficient cpu", "Insufficient memory"]),
    ({"example.com/gpu": "1"}, [], {}, ["Insufficient example.com/gpu"]),
    (None, [None], {"pods": "1"}, ["Too many pods"]),
    (None, [], {"cpu": "0"}, []),  # a pod requesting nothing fits anywhere with room for a pod
], ids=["fits", "more cpu than the node has", "more cpu than is left", "more memory than the node has",
        "cpu and memory both short", "no such extended resource", "no room for another pod",
        "a pod requesting nothing fits on a node without cpu"])
def test_node_resources_fit(requests, existing, node_kw, reasons):
    node = ni(mknode(**node_kw), *[mkpod(f"e{i}", requests=r, node_name="n1") for i, r in enumerate(existing)])
    st = run_filter(NodeResourcesFit(), mkpod(requests=requests), [node])[0]
    if not reasons:
        assert st is None
    else:
        assert st.code == UNSCHEDULABLE and st.reasons == reasons


def test_least_allocated_and_balanced_scores():
    # node1: 4 cpu / 8Gi empty; node2: 2 of 4 cpu used
    n1 = ni(mknode("n1"))
    n2 = ni(mknode("n2"), mkpod("e", requests={"cpu": "2", "memory": "0"}, node_name="n2"))
    p = mkpod(requests={"cpu": "1", "memory": "2Gi"})
    # LeastAllocated: n1 cpu (4000-1000)*100/4000=75, mem (8-2)/8=75 → 75;
    # n2 cpu (4000-3000)/4000=25, mem 75 → 50
    assert run_score(NodeResourcesFit(), p, [n1, n2]) == [75, 50]
    # Balanced: n1 fractions .25/.25 → 100; n2 .75/.25 → std .25 → 75
    assert run_score(NodeResourcesBalancedAllocation(), p, [n1, n2]) == [100, 75]
    # best-effort pods skip balanced allocation
    assert run_score(NodeResourcesBalancedAllocation(), mkpod(), [n1, n2]) is None


# ---------------------------------------------------------------- NodeUnschedulable / taints
def test_node_unschedulable():
    n = ni(mknode(unschedulable=True))
    st = run_filter(NodeUnschedulable(), mkpod(), [n])[0]
    assert st.code == UNSCHEDULABLE_AND_UNRESOLVABLE and st.reasons == ["node(s) were unschedulable"]
    tol = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]
    assert run_filter(NodeUnschedulable(), mkpod(tolerations=tol), [n])[0] is None


@pytest.mark.parametrize("taints,tolerations,reason", [
    ([{"key": "k", "value": "v", "effect": "NoSchedule"}], [], "node(s) had untolerated taint {k: v}"),
    ([{"key": "k", "value": "v", "effect": "NoSchedule"}],
     [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}], None),
    ([{"key": "k", "value": "v", "effect": "NoExecute"}], [{"key": "k", "operator": "Exists"}], None),
    ([{"key": "k", "value": "v", "effect": "NoSchedule"}], [{"operator": "Exists"}], None),
    ([{"key": "k", "value": "v", "effect": "NoSchedule"}], [{"key": "k", "value": "w"}],
     "node(s) had untolerated taint {k: v}"),
    ([{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}], [],
     "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"),
    ([{"key": "k", "value": "v", "effect": "PreferNoSchedule"}], [], None),
], ids=["NoSchedule without a toleration", "Equal toleration of key, value and effect",
        "Exists toleration of the key tolerates NoExecute", "Exists without a key tolerates every taint",
        "a toleration of another value", "the control-plane taint has an empty value",
        "PreferNoSchedule never filters"])
def test_taint_toleration_filter(taints, tolerations, reason):
    st = run_filter(TaintToleration(), mkpod(tolerations=tolerations), [ni(mknode(taints=taints))])[0]
    assert (st.reasons[0] if st else None) == reason


def test_taint_toleration_score_prefers_fewer_prefer_no_schedule():
    soft = {"key": "k", "value": "v", "effect": "PreferNoSchedule"}
    nodes = [ni(mknode("a")), ni(mknode("b", taints=[soft]))]
    assert run_score(TaintToleration(), mkpod(), nodes) == [100, 0]
    assert run_score(TaintToleration(), mkpod(tolerations=[{"key": "k", "operator": "Exists"}]),
                     nodes) == [100, 100]


# ---------------------------------------------------------------- NodeAffinity
def test_node_affinity_filter_and_score():
    nodes = [ni(mknode("a", {"zone": "z1", "disk": "ssd"})), ni(mknode("b", {"zone": "z2"}))]
    p = mkpod(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z9"]}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}})
    sts = run_filter(NodeAffinity(), p, nodes)
    assert sts[0].reasons == ["node(s) didn't match Pod's node affinity/selector"] and sts[1] is None
    pref = mkpod(affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}},
        {"weight": 3, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z2"]}]}}]}})
    assert run_score(NodeAffinity(), pref, nodes) == [100, 60]


# ---------------------------------------------------------------- NodePorts
@pytest.mark.parametrize("used,want,conflict", [
    ({"hostPort": 80}, {"hostPort": 80}, True),
    ({"hostPort": 80}, {"hostPort": 81}, False),
    ({"hostPort": 80, "protocol": "UDP"}, {"hostPort": 80}, False),
    ({"hostPort": 80, "hostIP": "10.0.0.1"}, {"hostPort": 80, "hostIP": "10.0.0.2"}, False),
    ({"hostPort": 80, "hostIP": "10.0.0.1"}, {"hostPort": 80}, True),
], ids=["same port", "another port", "same port, another protocol", "same port, another host IP",
        "same port, one host IP and the wildcard"])
def test_node_ports(used, want, conflict):
    n = ni(mknode(), mkpod("e", ports=[{"containerPort": 1, **used}], node_name="n1"))
    st = run_filter(NodePorts(), mkpod(ports=[{"containerPort": 1, **want}]), [n])[0]
    assert (st is not None) == conflict
    if conflict:
        assert st.reasons == ["node(s) didn't have free ports for the requested pod ports"]


# ---------------------------------------------------------------- InterPodAffinity
SEL_DB = {"matchLabels": {"app": "db"}}


def test_inter_pod_affinity_first_pod_of_self_matching_group():
    nodes = [ni(mknode("a", {"zone": "z1"})), ni(mknode("b"))]
    aff = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": SEL_DB, "topologyKey": "zone"}]}}
    # no db pod anywhere, the pod is a db pod itself: allowed where the topology key exists
    sts = run_filter(InterPodAffinity(), mkpod(labels={"app": "db"}, affinity=aff), nodes)
    assert sts[0] is None
    assert sts[1].code == UNSCHEDULABLE_AND_UNRESOLVABLE
    # not self-matching → nowhere
    sts = run_filter(InterPodAffinity(), mkpod(labels={"app": "web"}, affinity=aff), nodes)
    assert all(s is not None and s.reasons == ["node(s) didn't match pod affinity rules"] for s in sts)


def test_inter_pod_affinity_other_namespace_not_matched():
    db = mkpod("db", labels={"app": "db"}, node_name="a")
    db["metadata"]["namespace"] = "other"
    nodes = [ni(mknode("a", {"zone": "z1"}), db)]
    aff = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": SEL_DB, "topologyKey": "zone"}]}}
    assert run_filter(InterPodAffinity(), mkpod(affinity=aff), nodes)[0] is not None
    aff["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["namespaces"] = ["other"]
    assert run_filter(InterPodAffinity(), mkpod(affinity=aff), nodes)[0] is None


def test_existing_pods_anti_affinity_blocks_incoming():
    guard = mkpod("guard", node_name="a", affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"}]}})
    nodes = [ni(mknode("a", {"zone": "z1"}), guard), ni(mknode("b", {"zone": "z1"})),
             ni(mknode("c", {"zone": "z2"}))]
    sts = run_filter(InterPodAffinity(), mkpod(labels={"app": "web"}), nodes)
    assert [s.reasons[0] if s else None for s in sts] == [
        "node(s) didn't satisfy existing pods anti-affinity rules",
        "node(s) didn't satisfy existing pods anti-affinity rules", None]
    assert sts[0].code == UNSCHEDULABLE


def test_inter_pod_affinity_score_symmetry():
    # an existing pod prefers web pods near it: the incoming web pod scores its zone higher
    fan = mkpod("fan", node_name="a", affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                           "topologyKey": "zone"}}]}})
    nodes = [ni(mknode("a", {"zone": "z1"}), fan), ni(mknode("b", {"zone": "z1"})), ni(mknode("c", {"zone": "z2"}))]
    assert run_score(InterPodAffinity(), mkpod(labels={"app": "web"}), nodes) == [100, 100, 0]
    assert run_score(InterPodAffinity(), mkpod(labels={"app": "x"}), nodes) is None


# ---------------------------------------------------------------- PodTopologySpread
def test_pod_topology_spread_max_skew():
    web = lambda n, node: mkpod(n, labels={"app": "web"}, node_name=node)  # noqa: E731
    nodes = [ni(mknode("a", {"zone": "z1"}), web("w1", "a"), web("w2", "a")),
             ni(mknode("b", {"zone": "z2"}), web("w3", "b")), ni(mknode("c"))]
    spread = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    sts = run_filter(PodTopologySpread(), mkpod(labels={"app": "web"}, spread=spread), nodes)
    assert sts[0].reasons == ["node(s) didn't match pod topology spread constraints"]
    assert sts[1] is None
    assert sts[2].code == UNSCHEDULABLE_AND_UNRESOLVABLE


# ---------------------------------------------------------------- ImageLocality
def test_image_locality():
    gb = 1024 ** 3
    nodes = [ni(mknode("a", images=[{"names": ["docker.io/library/nginx:1.25", "nginx:1.25"], "sizeBytes": gb}])),
             ni(mknode("b"))]
    # 1 GiB present on half the nodes: 512 MiB spread-scaled → (512-23)/(1000-23)*100 = 50
    assert run_score(ImageLocality(), mkpod(image="nginx:1.25"), nodes) == [50, 0]
    # no node has the image: every node would score 0, so the plugin skips scoring
    assert run_score(ImageLocality(), mkpod(image="redis"), nodes) is None


# ---------------------------------------------------------------- framework helpers
def test_normalize_and_histogram_and_percentage():
    s = [0, 5, 10]
    default_normalize_score(s)
    assert s == [0, 50, 100]
    s = [0, 5, 10]
    default_normalize_score(s, reverse=True)
    assert s == [100, 50, 0]
    s = [0, 0]
    default_normalize_score(s, reverse=True)
    assert s == [100, 100]
    assert histogram([["Insufficient cpu"], ["Insufficient cpu"], ["Insufficient memory", "Insufficient cpu"]]) \
        == "1 Insufficient memory, 3 Insufficient cpu"
    assert num_feasible_nodes_to_find(0, 50) == 50
    assert num_feasible_nodes_to_find(0, 5000) == 500      # 50 - 5000/125 = 10 %
    assert num_feasible_nodes_to_find(0, 1000) == 420      # 42 %
    assert num_feasible_nodes_to_find(0, 200) == 100       # at least 100
    assert num_feasible_nodes_to_find(30, 1000) == 300


def test_fit_error_with_prefilter_message():
    d = Diagnosis(pre_filter_msg="something went wrong upstream",
                  post_filter_msg="preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
    assert str(FitError("ns/p", 3, d)) == ("0/3 nodes are available: something went wrong upstream. "
                                           "preemption: 0/3 nodes are available: 3 Preemption is not "
                                           "helpful for scheduling.")
