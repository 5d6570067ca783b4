"""Seed 000's scheduling examples, replayed on the framework with plain dicts (no HTTP).

Nodes node01/node02 labelled kgc=a / kgc=b (then relabelled as the article does);
each case asserts the node the article says the pod lands on, or the exact
FailedScheduling message and the queue move that later schedules the pod.
"""

from __future__ import annotations

import asyncio
import copy
import random

import pytest

from components.scheduler.scheduler import Scheduler
from controlplane.client.testing import FakeRecorder


def node(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(name: str, labels: dict | None = None, affinity: dict | None = None,
        node_selector: dict | None = None, node_name: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": name, "image": "soscscs/myapp:v1"}]}
    if affinity:
        spec["affinity"] = affinity
    if node_selector:
        spec["nodeSelector"] = node_selector
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                         "labels": labels or {"app": name}},
            "spec": spec}


class RecordingBinder:
    """A Bind plugin that records (pod, node) instead of POSTing."""

    name = "DefaultBinder"

    def __init__(self) -> None:
        self.bound: dict[str, str] = {}

    async def bind(self, state, pi, node_name):
        from components.scheduler.framework import Status
        self.bound[pi.key] = node_name
        return Status()


def events(rec: FakeRecorder) -> list[tuple[str, str, str, str]]:
    """``(object name, type, reason, message)`` of every event recorded."""
    return [(e.name, e.type, e.reason, e.message) for e in rec.events]


def make(nodes: list[dict], bound: list[dict] = (), seed: int = 0):
    binder = RecordingBinder()
    rec = FakeRecorder()
    s = Scheduler(None, recorder=rec, record_results=True, rng=random.Random(seed),
                  binder_override=binder)
    for n in nodes:
        s.on_node_add(n)
    for p in bound:
        s.on_pod_add(p)
    return s, binder, rec


async def schedule(s: Scheduler, p: dict) -> str | None:
    s.on_pod_add(p)
    qp = s.queue.pop_nowait()
    assert qp is not None
    res = s.schedule_one(qp)
    await s.wait_idle()
    return res.suggested_host if res else None


NODE_AFFINITY_NOTIN_NODE02 = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["node02"]}]}]}}}
PREFERRED_NODE03 = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 1, "preference": {"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node03"]}]}}]}}
PREFERRED_NODE01 = copy.deepcopy(PREFERRED_NODE03)
PREFERRED_NODE01["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["preference"][
    "matchExpressions"][0]["values"] = ["node01"]
HARD_AND_SOFT = {"nodeAffinity": {
    **NODE_AFFINITY_NOTIN_NODE02["nodeAffinity"],
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [
            {"key": "kgc", "operator": "In", "values": ["a"]}]}}]}}
POD_AFFINITY_MYAPP01_KGC = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["myapp01"]}]},
     "topologyKey": "kgc"}]}}
PREFERRED_ANTI_MYAPP01_HOST = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 100, "podAffinityTerm": {
        "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["myapp01"]}]},
        "topologyKey": "kubernetes.io/hostname"}}]}}
REQUIRED_ANTI_MYAPP01_KGC = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["myapp01"]}]},
     "topologyKey": "kgc"}]}}

MYAPP01_ON_NODE02 = pod("myapp01", node_name="node02")


#: (case name, kgc label of node01, of node02, bound pods, affinity, nodeSelector, expected hosts)
SEED_CASES = [
    ("nodeSelector kgc=a", "a", "b", [], None, {"kgc": "a"}, {"node01"}),
    ("nodeSelector kgc=b", "a", "b", [], None, {"kgc": "b"}, {"node02"}),
    ("required NotIn node02", "a", "b", [], NODE_AFFINITY_NOTIN_NODE02, None, {"node01"}),
    ("preferred In node03 (absent)", "a", "b", [], PREFERRED_NODE03, None, {"node01", "node02"}),
    ("preferred In node01", "a", "b", [], PREFERRED_NODE01, None, {"node01"}),
    ("required NotIn node02 + preferred kgc=a", "a", "b", [], HARD_AND_SOFT, None, {"node01"}),
    ("pod affinity to myapp01 by kgc, kgc=a/b", "a", "b", [MYAPP01_ON_NODE02],
     POD_AFFINITY_MYAPP01_KGC, None, {"node02"}),
    ("preferred anti-affinity to myapp01 by hostname", "a", "b", [MYAPP01_ON_NODE02],
     PREFERRED_ANTI_MYAPP01_HOST, None, {"node01"}),
    ("required anti-affinity to myapp01 by kgc, kgc=a/b", "a", "b", [MYAPP01_ON_NODE02],
     REQUIRED_ANTI_MYAPP01_KGC, None, {"node01"}),
]


@pytest.mark.parametrize("case,labels01,labels02,bound,affinity,node_selector,expect", SEED_CASES,
                         ids=[c[0] for c in SEED_CASES])
async def test_seed_placements(case, labels01, labels02, bound, affinity, node_selector, expect):
    for seed in range(8):  # tie-breaks are random: every draw must land as the article says
        s, binder, rec = make([node("node01", kgc=labels01), node("node02", kgc=labels02)], bound, seed)
        host = await schedule(s, pod("affinity", {"app": "node-affinity-pod"}, affinity, node_selector))
        assert host in expect, case
        assert binder.bound == {"default/affinity": host}
        assert events(rec) == [("affinity", "Normal", "Scheduled",
                               f"Successfully assigned default/affinity to {host}")]


async def test_preferred_absent_node_reaches_both_nodes():
    seen = set()
    for seed in range(32):
        s, _, _ = make([node("node01", kgc="a"), node("node02", kgc="b")], seed=seed)
        seen.add(await schedule(s, pod("affinity", affinity=PREFERRED_NODE03)))
    assert seen == {"node01", "node02"}


async def test_pod_affinity_both_nodes_once_same_domain():
    # after `kubectl label node node01 kgc=b --overwrite` both nodes are feasible
    # (node01 then wins on resources, as kube-scheduler's LeastAllocated would pick it)
    s, _, _ = make([node("node01", kgc="b"), node("node02", kgc="b")], [MYAPP01_ON_NODE02])
    s.on_pod_add(pod("myapp02", affinity=POD_AFFINITY_MYAPP01_KGC))
    res = s.schedule_one(s.queue.pop_nowait())
    await s.wait_idle()
    assert res.feasible_nodes == 2 and set(res.scores) == {"node01", "node02"}


async def test_nodeselector_unmatched_message():
    s, binder, rec = make([node("node01", kgc="a"), node("node02", kgc="b")])
    assert await schedule(s, pod("p", node_selector={"kgc": "c"})) is None
    assert binder.bound == {}
    assert events(rec) == [("p", "Warning", "FailedScheduling",
                           "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. "
                           "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")]


async def test_required_anti_affinity_pending_then_relabel_schedules():
    n1, n2 = node("node01", kgc="a"), node("node02", kgc="a")
    s, binder, rec = make([n1, n2], [MYAPP01_ON_NODE02])
    assert await schedule(s, pod("myapp20", affinity=REQUIRED_ANTI_MYAPP01_KGC)) is None
    assert events(rec)[-1] == ("myapp20", "Warning", "FailedScheduling",
                              "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. "
                              "preemption: 0/2 nodes are available: 2 No preemption victims found "
                              "for incoming pod.")
    assert "default/myapp20" in s.queue.unschedulable
    assert s.queue.unschedulable["default/myapp20"].unschedulable_plugins == {"InterPodAffinity"}
    # unrelated node change (a condition) does not move it
    n1b = copy.deepcopy(n1)
    n1b["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    s.on_node_update(n1, n1b)
    assert "default/myapp20" in s.queue.unschedulable
    # kubectl label node node01 kgc=b --overwrite
    n1c = copy.deepcopy(n1b)
    n1c["metadata"]["labels"]["kgc"] = "b"
    s.on_node_update(n1b, n1c)
    assert "default/myapp20" not in s.queue.unschedulable
    # it went to backoffQ (1 s); wait for the queue to hand it out, no sleeps
    qp = await asyncio.wait_for(s.queue.pop(), 5)
    res = s.schedule_one(qp)
    await s.wait_idle()
    assert res is not None and res.suggested_host == "node01"
    assert binder.bound["default/myapp20"] == "node01"


async def test_fit_error_histogram_sorted_and_explain_recorded():
    nodes = [node("n1"), node("n2"), node("n3")]
    nodes[0]["spec"] = {"unschedulable": True}
    nodes[1]["spec"] = {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}
    s, _, rec = make(nodes)
    big = pod("big")
    big["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "5"}}
    assert await schedule(s, big) is None
    assert rec.events[-1].message == (
        "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: gpu}, "
        "1 node(s) were unschedulable. preemption: 0/3 nodes are available: "
        "1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.")
    import json
    res = s.last_results["default/big"]
    fr = json.loads(res["kube-scheduler-simulator.sigs.k8s.io/filter-result"])
    assert fr["n1"]["NodeUnschedulable"] == "node(s) were unschedulable"
    assert fr["n3"]["NodeResourcesFit"] == "Insufficient cpu"
    assert fr["n3"]["TaintToleration"] == "passed"
