"""The batched Score paths (``score_nodes``, the normalisations) give what the per-node
``score`` gives, and a seeded workload through the whole framework places every pod
and scores every node as the per-node implementation did (figures recorded from it).

Sources: pkg/scheduler/framework/plugins/imagelocality/image_locality.go,
pkg/scheduler/framework/plugins/podtopologyspread/scoring.go,
pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go.
"""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from components.scheduler.cache import Cache, NodeInfo, Snapshot
from components.scheduler.framework import SKIP, CycleState, Status
from components.scheduler.plugins.imagelocality import ImageLocality
from components.scheduler.plugins.podtopologyspread import PodTopologySpread
from components.scheduler.plugins.tainttoleration import TaintToleration
from components.scheduler.podinfo import PodInfo
from components.scheduler.scheduler import Scheduler

MB = 1024 * 1024
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
RS_OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-web", "controller": True}


class Lister:
    """``list()`` / ``get("ns/name")`` over fixed objects (the default selector's listers)."""

    def __init__(self, objs: dict[str, dict]) -> None:
        self.objs = objs

    def list(self) -> list[dict]:
        return list(self.objs.values())

    def get(self, key: str) -> dict | None:
        return self.objs.get(key)


def listers() -> dict:
    return {"replicasets": Lister({"default/web": {"metadata": {"name": "web", "namespace": "default"},
                                                   "spec": {"selector": {"matchLabels": {"app": "web"}}}}}),
            "services": Lister({})}


class Handle:
    def __init__(self) -> None:
        self.listers = listers()


def node(i: int, zone: str | None = "z", host: bool = True, images: list | None = None,
         taints: list | None = None) -> dict:
    labels = {HOST: f"n{i}"} if host else {}
    if zone is not None:
        labels[ZONE] = zone
    return {"metadata": {"name": f"n{i}", "labels": labels}, "spec": {"taints": taints or []},
            "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "500"},
                       "images": images or []}}


def pod(name: str, labels: dict | None = None, images: tuple[str, ...] = ("pause:3.10",),
        init: tuple[str, ...] = (), owner: bool = True, spread: list | None = None,
        tolerations: list | None = None, node_name: str = "") -> dict:
    md: dict = {"name": name, "namespace": "default", "uid": f"u-{name}",
                "labels": labels if labels is not None else {"app": "web"}}
    if owner:
        md["ownerReferences"] = [RS_OWNER]
    spec: dict = {"containers": [{"name": f"c{j}", "image": im,
                                  "resources": {"requests": {"cpu": "10m", "memory": "10Mi"}}}
                                 for j, im in enumerate(images)]}
    if init:
        spec["initContainers"] = [{"name": f"i{j}", "image": im} for j, im in enumerate(init)]
    if spread:
        spec["topologySpreadConstraints"] = spread
    if tolerations:
        spec["tolerations"] = tolerations
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": md, "spec": spec}


def img(name: str, size: int) -> dict:
    return {"names": [name], "sizeBytes": size}


def infos(nodes: list[dict], placed: dict[int, int] | None = None) -> list[NodeInfo]:
    """NodeInfos with ``placed[i]`` app=web pods on node i."""
    out = []
    for i, n in enumerate(nodes):
        ni = NodeInfo(n)
        for k in range((placed or {}).get(i, 0)):
            ni.add_pod(PodInfo(pod(f"{ni.name}-w{k}", node_name=ni.name)))
        out.append(ni)
    return out


def per_node_and_batched(plugin, p: dict, all_nodes: list[NodeInfo], scored: list[NodeInfo]):
    """(score per node, score_nodes) for ``scored`` (the filtered nodes) out of
    ``all_nodes``, each normalised; None when PreScore skips."""
    snap = Snapshot(all_nodes, {n.name: n for n in all_nodes})
    pi = PodInfo(p)
    out = []
    for batched in (False, True):
        state = CycleState()
        st = plugin.pre_score(state, pi, scored, snap)
        if st is not None and st.code == SKIP:
            out.append(None)
            continue
        scores = plugin.score_nodes(state, pi, scored) if batched else [plugin.score(state, pi, n) for n in scored]
        norm = getattr(plugin, "normalize_score", None)
        if norm is not None:
            norm(state, pi, scores)
        out.append(scores)
    return out


# ---------------------------------------------------------------- ImageLocality
IMAGE_CASES = {
    "one image, one size on every node": (
        [node(i, images=[img("pause:3.10", 300 * MB)]) for i in range(4)], pod("p")),
    "one image, sizes differ, some nodes without it": (
        [node(0, images=[img("pause:3.10", 300 * MB)]), node(1, images=[img("pause:3.10", 800 * MB)]),
         node(2), node(3, images=[img("pause:3.10", 5 * MB)])], pod("p")),
    "below the minimum threshold everywhere": (
        [node(i, images=[img("pause:3.10", MB)]) for i in range(3)], pod("p")),
    "init and app containers, one image twice": (
        [node(0, images=[img("pause:3.10", 300 * MB), img("nginx:latest", 900 * MB)]),
         node(1, images=[img("nginx:latest", 900 * MB)]), node(2, images=[img("pause:3.10", 2000 * MB)]),
         node(3)], pod("p", images=("nginx", "pause:3.10"), init=("pause:3.10",))),
}


@pytest.mark.parametrize("case", list(IMAGE_CASES))
def test_image_locality_score_nodes_as_score(case):
    nodes, p = IMAGE_CASES[case]
    all_nodes = infos(nodes)
    one, many = per_node_and_batched(ImageLocality(), p, all_nodes, all_nodes[1:])
    assert one is not None and one == many


def test_cache_image_sizes_follow_nodes():
    """The snapshot's sizes per image (ImageLocality's one-score shortcut) follow node
    adds, image changes and removals, and the batched score stays the per-node one."""
    cache = Cache()
    for i in range(3):
        cache.add_node(node(i, images=[img("pause:3.10", 300 * MB)]))
    snap = cache.snapshot()
    assert snap.image_sizes == {"pause:3.10": {300 * MB: 3}}
    cache.update_node(node(1, images=[img("pause:3.10", 600 * MB)]))
    assert cache.snapshot().image_sizes == {"pause:3.10": {300 * MB: 2, 600 * MB: 1}}
    nodes = cache.snapshot().nodes
    pi = PodInfo(pod("p"))
    state = CycleState()
    ImageLocality().pre_score(state, pi, nodes, cache.snapshot())
    assert ImageLocality().score_nodes(state, pi, nodes) == [ImageLocality().score(state, pi, n) for n in nodes]
    cache.remove_node("n1")
    cache.remove_node("n0")
    cache.remove_node("n2")
    assert cache.snapshot().image_sizes == {} and cache.snapshot().image_node_counts == {}


# ---------------------------------------------------------------- PodTopologySpread
SPREAD_CASES = {
    "system defaults, three zones": (
        [node(i, zone=f"z{i % 3}") for i in range(9)], {0: 3, 1: 1, 4: 2, 8: 5}, pod("p")),
    "system defaults, nodes without a zone or a hostname": (
        [node(0, zone="z0"), node(1, zone=None), node(2, zone="z1", host=False), node(3, zone="z1"),
         node(4, zone=None, host=False)], {0: 2, 1: 4, 2: 1}, pod("p")),
    "system defaults, no matching pod anywhere": (
        [node(i, zone=f"z{i % 2}") for i in range(4)], {}, pod("p")),
    "own constraints: nodes lacking a key are ignored": (
        [node(0, zone="z0"), node(1, zone=None), node(2, zone="z1"), node(3, zone="z1")], {0: 1, 2: 3},
        pod("p", owner=False, spread=[
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": {"app": "web"}}},
            {"maxSkew": 2, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": {"app": "web"}}}])),
    "own constraint on the zone only, every node ignored but one": (
        [node(0, zone=None), node(1, zone="z1"), node(2, zone=None)], {1: 2},
        pod("p", owner=False, spread=[
            {"maxSkew": 3, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": {"app": "web"}}}])),
}


@pytest.mark.parametrize("case", list(SPREAD_CASES))
def test_topology_spread_score_nodes_as_score(case):
    nodes, placed, p = SPREAD_CASES[case]
    all_nodes = infos(nodes, placed)
    plugin = PodTopologySpread(handle=Handle())
    for scored in (all_nodes, all_nodes[1:]):
        one, many = per_node_and_batched(plugin, p, all_nodes, scored)
        assert one is not None and one == many


def test_topology_spread_score_nodes_on_other_nodes_than_pre_score():
    """score_nodes given another list than PreScore's reads the labels itself."""
    all_nodes = infos([node(i, zone=f"z{i % 3}") for i in range(6)], {0: 2, 3: 1})
    plugin = PodTopologySpread(handle=Handle())
    snap = Snapshot(all_nodes, {n.name: n for n in all_nodes})
    pi = PodInfo(pod("p"))
    state = CycleState()
    plugin.pre_score(state, pi, all_nodes, snap)
    part = all_nodes[2:5]
    assert plugin.score_nodes(state, pi, part) == [plugin.score(state, pi, n) for n in part]


@pytest.mark.parametrize("name,raw,want", [
    ("all zero", [0, 0, 0], [100, 100, 100]),
    ("spread", [3, 7, 5, 7], [100, 42, 71, 42]),
    ("ignored nodes score 0", [-1, 4, 2, -1], [0, 50, 100, 0]),
    ("only ignored nodes", [-1, -1], [0, 0]),
    ("empty", [], []),
])
def test_topology_spread_normalize(name, raw, want):
    scores = list(raw)
    PodTopologySpread().normalize_score(CycleState(), None, scores)
    assert scores == want


# ---------------------------------------------------------------- TaintToleration
def test_taint_toleration_score_nodes_as_score():
    prefer = {"key": "k", "value": "v", "effect": "PreferNoSchedule"}
    other = {"key": "o", "value": "", "effect": "PreferNoSchedule"}
    nodes = infos([node(0), node(1, taints=[prefer]), node(2, taints=[prefer, other]),
                   node(3, taints=[{"key": "k", "effect": "NoSchedule"}])])
    plugin = TaintToleration()
    for tols in (None, [{"key": "k", "operator": "Equal", "value": "v", "effect": "PreferNoSchedule"}],
                 [{"operator": "Exists"}]):
        one, many = per_node_and_batched(plugin, pod("p", tolerations=tols), nodes, nodes)
        assert one == many


# ---------------------------------------------------------------- the whole framework
class RecordingBinder:
    name = "DefaultBinder"

    async def bind(self, state, pi, node_name):
        return Status()


def workload() -> tuple[list[dict], list[dict]]:
    """40 nodes over three zones (two without a zone), the pause image at two sizes or
    absent, nginx on some, PreferNoSchedule taints on some; 150 pods: Deployment pods
    (system-default spreading), some with nginx and an init container, some with their
    own ScheduleAnyway constraints, some tolerating the taint."""
    rnd = random.Random(11)
    taint = {"key": "spot", "value": "yes", "effect": "PreferNoSchedule"}
    nodes = []
    for i in range(40):
        imgs = []
        r = rnd.random()
        if r < 0.6:
            imgs.append(img("registry.k8s.io/pause:3.10", 134813763))
        elif r < 0.8:
            imgs.append(img("registry.k8s.io/pause:3.10", 250 * MB))
        if rnd.random() < 0.3:
            imgs.append(img("docker.io/library/nginx:latest", 180 * MB))
        nodes.append(node(i, zone=None if i in (7, 23) else f"zone-{i % 3}", images=imgs,
                          taints=[taint] if i % 5 == 0 else None))
    pods = []
    for k in range(150):
        kind = k % 6
        if kind == 4:
            pods.append(pod(f"own-{k}", labels={"app": "web", "tier": "a"}, owner=False, spread=[
                {"maxSkew": 2, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
                 "labelSelector": {"matchLabels": {"tier": "a"}}}],
                images=("registry.k8s.io/pause:3.10",)))
        elif kind == 5:
            pods.append(pod(f"web-nginx-{k}", images=("nginx", "registry.k8s.io/pause:3.10"),
                            init=("registry.k8s.io/pause:3.10",),
                            tolerations=[{"key": "spot", "operator": "Exists"}]))
        else:
            pods.append(pod(f"web-{k}", images=("registry.k8s.io/pause:3.10",)))
    return nodes, pods


async def run_workload() -> list[tuple[str, str, str]]:
    """(pod, chosen node, sha256 of the scored nodes and their totals) per pod."""
    s = Scheduler(None, rng=random.Random(5), binder_override=RecordingBinder())
    s.listers.update(listers())
    nodes, pods = workload()
    for n in nodes:
        s.on_node_add(n)
    out = []
    for p in pods:
        s.on_pod_add(p)
        qp = s.queue.pop_nowait()
        res = s.schedule_one(qp)
        assert res is not None
        digest = hashlib.sha256(json.dumps([res.scored, res.totals]).encode()).hexdigest()[:12]
        out.append((p["metadata"]["name"], res.suggested_host, digest))
    await s.wait_idle()
    return out


#: recorded from the per-node implementation (ImageLocality.score, the one-loop
#: PodTopologySpread.score_nodes) before the batched paths
EXPECTED_DIGEST = "02ace415fbc9f0063f697226bde353b67e01c1a00d53cf1a54c84fc40ee5a81f"
EXPECTED_FIRST = [
    ("web-0", "n7", "1ed09ba6fb3f"), ("web-1", "n23", "8c3b0652e657"), ("web-2", "n29", "375692103f59"),
    ("web-3", "n9", "2a9c88e8094e"), ("own-4", "n22", "ee14b911fb56"), ("web-nginx-5", "n7", "1970946c3e77"),
    ("web-6", "n23", "370b67074e11"), ("web-7", "n4", "313ab2c847e8"), ("web-8", "n21", "9a24d519da38"),
    ("web-9", "n11", "21a6152904a1"), ("own-10", "n9", "f2880b871b1d"), ("web-nginx-11", "n7", "f6afcba8e9ea")]


async def test_seeded_workload_places_and_scores_as_before():
    got = await run_workload()
    assert got[:len(EXPECTED_FIRST)] == EXPECTED_FIRST
    assert hashlib.sha256(json.dumps(got).encode()).hexdigest() == EXPECTED_DIGEST
