"""Nodes in the same resource state (pod count, allocatable, requested and non-zero
requested) share one :class:`ResourceState`, and NodeResourcesFit's Filter and Score and
NodeResourcesBalancedAllocation's Score, computed once per state for many nodes, give
every node what the per-node Filter and Score give it (noderesources/fit.go Filter,
resource_allocation.go score, balanced_allocation.go)."""

from __future__ import annotations

import functools
import random

import pytest

from components.scheduler.cache import NodeInfo
from components.scheduler.framework import CycleState
from components.scheduler.plugins.noderesources import (
    NodeResourcesBalancedAllocation,
    NodeResourcesFit,
    PerResourceState,
)
from components.scheduler.podinfo import PodInfo


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", gpus: str = "") -> dict:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    if gpus:
        alloc["example.com/gpu"] = gpus
    return {"metadata": {"name": name}, "status": {"allocatable": alloc}}


def pod(name: str, cpu: str = "500m", memory: str = "1Gi", gpus: str = "", node_name: str = "") -> PodInfo:
    req = {"cpu": cpu, "memory": memory}
    if gpus:
        req["example.com/gpu"] = gpus
    return PodInfo({"metadata": {"name": name, "namespace": "default"},
                    "spec": {"nodeName": node_name, "containers": [{"name": "c", "resources": {"requests": req}}]}})


def test_nodes_in_the_same_state_share_it():
    a, b = NodeInfo(node("a")), NodeInfo(node("b"))
    assert a.resource_state() is b.resource_state()
    a.add_pod(pod("p", node_name="a"))
    assert a.res_state is None and a.resource_state() is not b.resource_state()
    b.add_pod(pod("q", node_name="b"))
    assert a.resource_state() is b.resource_state()


@pytest.mark.parametrize("change", ["add_pod", "remove_pod", "set_node"],
                         ids=["a pod added", "a pod removed", "the node updated"])
def test_a_change_forgets_the_state(change):
    n = NodeInfo(node("a"))
    n.add_pod(pod("p", node_name="a"))
    before = n.resource_state()
    if change == "add_pod":
        n.add_pod(pod("q", node_name="a"))
    elif change == "remove_pod":
        n.remove_pod("default/p")
    else:
        n.set_node(node("a", cpu="8"))
    assert n.res_state is None
    assert n.resource_state() is not before


Request = tuple[str, str, str] | None
#: pods on the nodes: (cpu, memory, gpus) requested; None = no requests at all
ZERO: Request = ("0", "0", "")
NONE: Request = None
DEFAULTS: Request = ("100m", "200Mi", "")
GPU: Request = ("0", "0", "1")
CPU: Request = ("1", "1Gi", "")
#: node recipes (cpu, pods, gpus, pods on it), pairs differing in one thing only: the pod
#: count alone, requested alone (no requests vs the non-zero defaults asked for), the
#: non-zero requests alone (no requests vs explicit zeros), GPUs alone
RECIPES: list[tuple[str, str, str, list[Request]]] = [
    ("4", "110", "", []), ("4", "2", "", [ZERO, ZERO]), ("4", "2", "", [ZERO]),
    ("4", "110", "", [NONE]), ("4", "110", "", [ZERO]), ("4", "110", "", [DEFAULTS]), ("4", "110", "2", [GPU]),
    ("4", "110", "2", [GPU, GPU]), ("1", "110", "", [CPU]), ("1", "110", "", [])]


@functools.lru_cache(maxsize=None)
def cluster(seed: int, distinct: bool) -> list[NodeInfo]:
    """Each recipe 5 times, shuffled (states repeat), or with every node its own
    allocatable memory (no state repeats). Built once per seed (the cases only read them)."""
    rng = random.Random(seed)
    recipes = RECIPES * 5
    rng.shuffle(recipes)
    out = []
    for i, (cpu, pods, gpus, on) in enumerate(recipes):
        n = NodeInfo(node(f"n{i}", cpu=cpu, memory=f"{8192 + i if distinct else 8192}Mi", pods=pods, gpus=gpus))
        for j, req in enumerate(on):
            name = f"p{i}-{j}"
            if req is None:
                n.add_pod(PodInfo({"metadata": {"name": name, "namespace": "default"},
                                   "spec": {"nodeName": n.name, "containers": [{"name": "c"}]}}))
            else:
                cpu_req, mem_req, gpu_req = req
                n.add_pod(pod(name, cpu_req, mem_req, gpu_req, node_name=n.name))
        out.append(n)
    return out


STRATEGIES = [None, {"type": "MostAllocated"},
              {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 3}, {"name": "example.com/gpu", "weight": 1}]},
              {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
                  "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}]


@pytest.mark.parametrize("strategy", STRATEGIES, ids=["LeastAllocated", "MostAllocated",
                                                      "MostAllocated with a GPU weight", "RequestedToCapacityRatio"])
@pytest.mark.parametrize("distinct", [False, True], ids=["states repeat", "every state distinct"])
@pytest.mark.parametrize("incoming", [pod("x"), pod("x", cpu="3", memory="7Gi"), pod("x", gpus="1")],
                         ids=["small pod", "big pod", "pod asking for a GPU"])
def test_many_nodes_at_once_as_one_by_one(strategy, distinct, incoming):
    fit = NodeResourcesFit({"scoringStrategy": strategy} if strategy else None)
    balanced = NodeResourcesBalancedAllocation()
    state = CycleState()
    for seed in range(2 * PerResourceState.SKIP + 2):  # past a skip of the lookups and back
        nodes = cluster(seed, distinct)
        verdicts = [fit.filter(state, incoming, n) for n in nodes]
        got = fit.filter_nodes(state, incoming, nodes)
        assert [(s.code, s.reasons) if s else None for s in got] == \
            [(s.code, s.reasons) if s else None for s in verdicts]
        assert fit.score_nodes(state, incoming, nodes) == [fit.score(state, incoming, n) for n in nodes]
        assert balanced.score_nodes(state, incoming, nodes) == [balanced.score(state, incoming, n) for n in nodes]
