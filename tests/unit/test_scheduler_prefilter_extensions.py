"""PreFilter extensions (AddPod / RemovePod), restating kube-scheduler's
``pkg/scheduler/framework/interface.go`` PreFilterExtensions and their two callers:
preemption's dry run removes the victims from a clone of the cycle state
(``preemption.go`` / ``default_preemption.go`` SelectVictimsOnNode), and filtering adds
the pods nominated to a node (``framework.go`` addNominatedPods). InterPodAffinity and
PodTopologySpread update their pre-computed counts; the original state and the cache's
indexes are left as they were.
"""

from __future__ import annotations

import random

import pytest

from components.scheduler.cache import NodeInfo, Snapshot
from components.scheduler.config import SchedulerConfig, build_framework
from components.scheduler.framework import CycleState
from components.scheduler.plugins.interpodaffinity import (
    ERR_ANTI_AFFINITY,
    ERR_EXISTING_ANTI_AFFINITY,
    InterPodAffinity,
)
from components.scheduler.plugins.podtopologyspread import ERR_CONSTRAINTS, PodTopologySpread
from components.scheduler.podinfo import PodInfo
from components.scheduler.scheduler import Scheduler
from controlplane.client.testing import FakeClient
from tests.support.scheduler import deleted, status_patches, stored

HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"


def node(name: str, zone: str = "", cpu: str = "2") -> dict:
    labels = {HOST: name}
    if zone:
        labels[ZONE] = zone
    return {"metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod(name: str, cpu: str = "100m", priority: int = 0, node_name: str = "", labels=None,
        anti=None, spread=None, nominated: str = "", ns: str = "default") -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}],
                  "priority": priority}
    if node_name:
        spec["nodeName"] = node_name
    if anti:  # required anti-affinity to pods with these labels, per hostname
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": anti}, "topologyKey": HOST}]}}
    if spread:  # DoNotSchedule maxSkew 1 over zones for pods with these labels
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": ZONE,
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": spread}}]
    status = {"nominatedNodeName": nominated} if nominated else {}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": "u-" + name, "labels": labels or {}},
            "spec": spec, "status": status}


# -- the plugins on their own ---------------------------------------------------------------
def _snapshot(nodes):
    return Snapshot(nodes, {n.name: n for n in nodes})


# (plugin, nodes: name -> (zone, [pods on it]), incoming pod, the pod to remove (on node "a"),
#  verdict on "a" before, verdict on "a" after the removal)
REMOVE_CASES = {
    "victim matching the pod's anti-affinity term": (
        InterPodAffinity, {"a": ("", [pod("v", labels={"color": "green"}, node_name="a")])},
        pod("p", anti={"color": "green"}), "v", ERR_ANTI_AFFINITY, None),
    "victim whose anti-affinity rejects the pod": (
        InterPodAffinity, {"a": ("", [pod("v", anti={"app": "web"}, node_name="a")])},
        pod("p", labels={"app": "web"}), "v", ERR_EXISTING_ANTI_AFFINITY, None),
    "victim not matching the term changes nothing": (
        InterPodAffinity, {"a": ("", [pod("v", labels={"color": "blue"}, node_name="a"),
                                      pod("g", labels={"color": "green"}, node_name="a")])},
        pod("p", anti={"color": "green"}), "v", ERR_ANTI_AFFINITY, ERR_ANTI_AFFINITY),
    "victim counted in the crowded zone": (
        PodTopologySpread, {"a": ("z1", [pod("v", labels={"app": "web"}, node_name="a")]),
                            "b": ("z2", [])},
        pod("p", labels={"app": "web"}, spread={"app": "web"}), "v", ERR_CONSTRAINTS, None),
    "victim in another namespace is not counted": (
        PodTopologySpread, {"a": ("z1", [pod("v", labels={"app": "web"}, node_name="a", ns="other"),
                                         pod("w", labels={"app": "web"}, node_name="a")]),
                            "b": ("z2", [])},
        pod("p", labels={"app": "web"}, spread={"app": "web"}), "v", ERR_CONSTRAINTS, ERR_CONSTRAINTS),
}


@pytest.mark.parametrize("name", list(REMOVE_CASES))
def test_remove_pod_updates_prefilter_state(name):
    cls, layout, incoming, victim, before, after = REMOVE_CASES[name]
    nodes = []
    for n, (zone, pods) in layout.items():
        ni = NodeInfo(node(n, zone))
        for p in pods:
            ni.add_pod(PodInfo(p))
        nodes.append(ni)
    snap = _snapshot(nodes)
    plugin = cls()
    pi = PodInfo(incoming)
    state = CycleState()
    assert plugin.pre_filter(state, pi, snap) is None
    a = nodes[0]

    def verdict(st):
        s = plugin.filter(st, pi, a)
        return s.reasons[0] if s is not None else None

    assert verdict(state) == before
    dry = state.clone()
    gone = a.remove_pod(f"{'other' if 'namespace' in name else 'default'}/{victim}")
    assert plugin.pre_filter_remove_pod(dry, pi, gone, a) is None
    assert verdict(dry) == after
    # the original state (and what it shares with the cache's indexes) is unchanged
    assert verdict(state) == before
    a.add_pod(gone)
    assert plugin.pre_filter_add_pod(dry, pi, gone, a) is None
    assert verdict(dry) == before
    fresh = CycleState()
    plugin.pre_filter(fresh, pi, snap)
    assert verdict(fresh) == before


# -- preemption through the scheduler --------------------------------------------------------
def make(nodes, bound=()):
    c = FakeClient()
    s = Scheduler(c, rng=random.Random(0))
    for n in nodes:
        s.on_node_add(n)
    for p in bound:
        s.on_pod_add(stored(c, p))
    return s, c


async def attempt(s: Scheduler, p: dict):
    s.on_pod_add(stored(s.client, p))
    res = s.schedule_one(s.queue.pop_nowait())
    await s.wait_idle()
    return res


def nominated_node(c: FakeClient, name: str) -> str | None:
    noms = [b["status"].get("nominatedNodeName") for b in status_patches(c, name)]
    return noms[-1] if noms else None


# (nodes, bound pods, preemptor, expected nominated node, expected victims)
PREEMPT_CASES = {
    # the only node holds a green pod the preemptor refuses to share a host with
    "removing a victim satisfies the pod's anti-affinity": (
        [node("n1")], [pod("green", priority=0, node_name="n1", labels={"color": "green"})],
        pod("high", priority=100, anti={"color": "green"}), "n1", ["green"]),
    # the victim's own anti-affinity rejects the preemptor's label
    "removing a victim lifts its anti-affinity": (
        [node("n1")], [pod("loner", priority=0, node_name="n1", anti={"app": "web"})],
        pod("high", priority=100, labels={"app": "web"}), "n1", ["loner"]),
    # zone z1 holds two web pods; z2's only node is full of a more important pod: the
    # skew can only be fixed by evicting the web pods of z1, the non-web pod is spared
    "removing victims fixes the spread": (
        [node("n1", "z1"), node("n2", "z2", cpu="1")],
        [pod("w1", priority=0, node_name="n1", labels={"app": "web"}),
         pod("w2", priority=0, node_name="n1", labels={"app": "web"}),
         pod("other", priority=0, node_name="n1"),
         pod("vip", cpu="1", priority=1000, node_name="n2")],
        pod("high", priority=100, labels={"app": "web"}, spread={"app": "web"}), "n1", ["w1", "w2"]),
}


@pytest.mark.parametrize("name", list(PREEMPT_CASES))
async def test_preemption_dry_run_removes_victims_from_prefilter_state(name):
    nodes, bound, preemptor, want_node, want_victims = PREEMPT_CASES[name]
    s, c = make(nodes, bound)
    before = {n.name: sorted(n.pods) for n in s.cache.snapshot().nodes}
    assert await attempt(s, preemptor) is None
    assert deleted(c) == want_victims
    assert nominated_node(c, "high") == want_node
    # the dry runs left the cache as it was (victims leave when their DELETE arrives)
    assert {n.name: sorted(n.pods) for n in s.cache.snapshot().nodes} == before


# -- nominated pods count while filtering ------------------------------------------------------
async def _nominate(s: Scheduler, p: dict) -> None:
    s.on_pod_add(stored(s.client, p))
    s.queue.delete(p)  # only its nomination matters here


@pytest.mark.parametrize("nominee_priority, want_feasible", [(10, ["n2"]), (0, ["n1", "n2"])],
                         ids=["an as important nominee counts", "a less important nominee does not count"])
async def test_nominated_pod_labels_count_for_spreading(nominee_priority, want_feasible):
    s, c = make([node("n1", "z1"), node("n2", "z2")])
    await _nominate(s, pod("nominee", priority=nominee_priority, labels={"app": "web"}, nominated="n1"))
    assert "default/nominee" in s.nominated["n1"]
    pi = PodInfo(pod("p", priority=10, labels={"app": "web"}, spread={"app": "web"}))
    fwk = s.profiles["default-scheduler"]
    state = CycleState(framework=fwk)
    feasible, diagnosis, _ = s.find_nodes_that_fit(fwk, state, pi, s.cache.snapshot())
    assert sorted(n.name for n in feasible) == want_feasible
    if want_feasible == ["n2"]:
        assert diagnosis.node_to_status["n1"].reasons == [ERR_CONSTRAINTS]
        res = await attempt(s, pod("p", priority=10, labels={"app": "web"}, spread={"app": "web"}))
        assert res is not None and res.suggested_host == "n2" and res.feasible_nodes == 1
    # the nominee is on no node of the cache afterwards
    assert all("default/nominee" not in n.pods for n in s.cache.snapshot().nodes)


@pytest.mark.parametrize("nominee, incoming, want_feasible", [
    # the pod's anti-affinity term matches the nominee's labels: n1 is out
    (pod("nominee", priority=10, labels={"app": "web"}, nominated="n1"),
     pod("p", priority=5, anti={"app": "web"}), 1),
    # the nominee's anti-affinity matches the pod (a bound pod's anti-affinity matching
    # it too, on the full n3, keeps InterPodAffinity's PreFilter from skipping): n1 is out
    (pod("nominee", priority=10, anti={"app": "web"}, nominated="n1"),
     pod("p", priority=5, labels={"app": "web"}), 1),
], ids=["the pod's anti-affinity matches the nominee", "the nominee's anti-affinity matches the pod"])
async def test_nominated_pod_counts_for_inter_pod_affinity(nominee, incoming, want_feasible):
    s, c = make([node("n1"), node("n2"), node("n3", cpu="0")],
                [pod("bound", cpu="0", node_name="n3", anti={"app": "web"})])
    await _nominate(s, nominee)
    res = await attempt(s, incoming)
    assert res is not None and res.suggested_host == "n2" and res.feasible_nodes == want_feasible


async def test_inter_pod_affinity_prefilter_skip_ignores_nominated_pods():
    # no required terms on the pod and no bound pod with anti-affinity: PreFilter says
    # Skip, so (as in kube-scheduler) the nominee's anti-affinity is not consulted
    s, c = make([node("n1"), node("n2")])
    await _nominate(s, pod("nominee", priority=10, anti={"app": "web"}, nominated="n1"))
    res = await attempt(s, pod("p", priority=5, labels={"app": "web"}))
    assert res is not None and res.feasible_nodes == 2


def test_extensions_skip_plugins_whose_prefilter_skipped():
    fwk = build_framework(SchedulerConfig().profiles[0], None, 0)
    nodes = [NodeInfo(node("a"))]
    snap = _snapshot(nodes)
    pi = PodInfo(pod("p"))
    state = CycleState(framework=fwk)
    assert fwk.run_pre_filter(state, pi, snap).is_success()
    assert {"InterPodAffinity", "PodTopologySpread"} <= state.skip_filter
    other = PodInfo(pod("o", node_name="a", anti={"x": "y"}))
    assert fwk.run_pre_filter_extension_add_pod(state, pi, other, nodes[0]).is_success()
    assert fwk.run_pre_filter_extension_remove_pod(state, pi, other, nodes[0]).is_success()


@pytest.mark.parametrize("nominee_priority, want_node, want_victims", [
    # a more important pod nominated to n1 keeps its room: evicting from n1 would not
    # help, so n2 (whose victim is more important than n1's) is chosen
    (100, "n2", ["mid"]),
    # a less important nominee does not count: n1 and its least important victim win
    (10, "n1", ["low"]),
], ids=["a more important nominee keeps its room", "a less important nominee does not count"])
async def test_preemption_dry_run_counts_nominated_pods(nominee_priority, want_node, want_victims):
    s, c = make([node("n1"), node("n2")],
                [pod("low", cpu="1", priority=0, node_name="n1"),
                 pod("mid", cpu="1", priority=5, node_name="n2")])
    await _nominate(s, pod("nominee", cpu="1", priority=nominee_priority, nominated="n1"))
    assert await attempt(s, pod("high", cpu="1500m", priority=50)) is None
    assert nominated_node(c, "high") == want_node
    assert deleted(c) == want_victims
