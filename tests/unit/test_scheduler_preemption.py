"""Preemption (DefaultPreemption PostFilter) on plain dicts with a fake client: victim
selection, node choice, the API calls made, the messages, and the nominator."""

from __future__ import annotations

import asyncio
import random

import pytest

from components.scheduler.podinfo import PodInfo
from components.scheduler.preemption import Candidate, num_candidates, pick_one_node_for_preemption
from components.scheduler.scheduler import Scheduler
from controlplane.client.testing import FakeClient, FakeRecorder
from tests.support.scheduler import deleted, status_patches, stored


def node(name: str, cpu: str = "2") -> dict:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod(name: str, cpu: str, priority: int = 0, node_name: str = "", start: str = "",
        **extra) -> dict:
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": "default", "uid": "u-" + name},
         "spec": {"containers": [{"name": "c", "image": "nginx",
                                  "resources": {"requests": {"cpu": cpu}}}],
                  "priority": priority, **extra.pop("spec", {})},
         "status": {}}
    if node_name:
        p["spec"]["nodeName"] = node_name
    if start:
        p["status"]["startTime"] = start
    p["status"].update(extra.pop("status", {}))
    p["metadata"].update(extra.pop("metadata", {}))
    return p


def make(nodes, bound=()):
    c, rec = FakeClient(), FakeRecorder()
    s = Scheduler(c, recorder=rec, rng=random.Random(0))
    for n in nodes:
        s.on_node_add(n)
    for p in bound:
        s.on_pod_add(stored(c, p))
    return s, c, rec


async def attempt(s: Scheduler, p: dict):
    s.on_pod_add(stored(s.client, p))
    res = s.schedule_one(s.queue.pop_nowait())
    await s.wait_idle()
    return res


# (bound pods, preemptor, expected nominated node, expected victims)
CASES = {
    "one victim frees the node": (
        [pod("low", "1500m", 0, "n1")], pod("high", "1", 100), "n1", ["low"]),
    "only lower priority pods are victims": (
        [pod("low", "1", 0, "n1"), pod("peer", "1", 100, "n1")], pod("high", "1", 100), "n1", ["low"]),
    "most important pods are reprieved first": (
        [pod("a", "500m", 1, "n1"), pod("b", "500m", 2, "n1"), pod("c", "1", 3, "n1")],
        pod("high", "1", 10), "n1", ["a", "b"]),
    "a pod that is enough alone is the only victim": (
        [pod("a", "500m", 1, "n1"), pod("big", "1500m", 1, "n1")], pod("high", "1500m", 10), "n1", ["big"]),
    "node whose highest victim priority is lowest": (
        [pod("x", "2", 5, "n1"), pod("y", "2", 1, "n2")], pod("high", "1", 10), "n2", ["y"]),
    "fewer victims (lower priority sum) wins": (
        [pod("x1", "1", 1, "n1"), pod("x2", "1", 1, "n1"), pod("y", "2", 1, "n2")],
        pod("high", "2", 10), "n2", ["y"]),
    "same victims: the node whose victim started latest": (
        [pod("old", "2", 1, "n1", start="2026-01-01T00:00:00Z"),
         pod("new", "2", 1, "n2", start="2026-06-01T00:00:00Z")], pod("high", "1", 10), "n2", ["new"]),
}


@pytest.mark.parametrize("name", list(CASES))
async def test_preemption_table(name):
    bound, preemptor, want_node, want_victims = CASES[name]
    s, c, rec = make([node("n1"), node("n2")] if any(p["spec"]["nodeName"] == "n2" for p in bound)
                     else [node("n1")], bound)
    res = await attempt(s, preemptor)
    assert res is None  # the pod itself is not bound in this cycle
    assert deleted(c) == want_victims
    nom = status_patches(c, "high")
    assert nom and nom[-1]["status"]["nominatedNodeName"] == want_node
    for v in want_victims:
        assert (v, "Normal", "Preempted", f"Preempted by pod u-high on node {want_node}") in [
            (e.name, e.type, e.reason, e.message) for e in rec.events]
        cond = status_patches(c, v)[0]["status"]["conditions"][0]
        assert (cond["type"], cond["status"], cond["reason"]) == ("DisruptionTarget", "True",
                                                                  "PreemptionByScheduler")
    assert s.nominated[want_node]["default/high"].name == "high"
    # the FailedScheduling message carries no "preemption:" part when preemption succeeded
    failed = [e.message for e in rec.events if e.reason == "FailedScheduling"]
    assert failed and "preemption:" not in failed[0]


async def test_message_when_removing_all_lower_priority_pods_does_not_help():
    s, c, rec = make([node("n1"), node("n2", cpu="8")],
                     [pod("low", "1", 0, "n1"), pod("peer", "7", 100, "n2")])
    await attempt(s, pod("high", "4", 100))
    msg = [e.message for e in rec.events if e.reason == "FailedScheduling"][0]
    assert msg == ("0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
                   "1 Insufficient cpu, 1 No preemption victims found for incoming pod.")
    assert deleted(c) == []


async def test_preemption_policy_never():
    s, c, rec = make([node("n1")], [pod("low", "2", 0, "n1")])
    await attempt(s, pod("high", "1", 100, spec={"preemptionPolicy": "Never"}))
    msg = [e.message for e in rec.events if e.reason == "FailedScheduling"][0]
    assert msg == ("0/1 nodes are available: 1 Insufficient cpu. "
                   "preemption: not eligible due to preemptionPolicy=Never.")
    assert deleted(c) == []


async def test_terminating_victim_on_nominated_node_blocks_more_preemption():
    terminating = pod("low", "2", 0, "n1", metadata={"deletionTimestamp": "2026-01-01T00:00:00Z"},
                      status={"conditions": [{"type": "DisruptionTarget", "status": "True",
                                              "reason": "PreemptionByScheduler"}]})
    s, c, rec = make([node("n1")], [terminating, pod("low2", "0", 0, "n1")])
    await attempt(s, pod("high", "1", 100, status={"nominatedNodeName": "n1"}))
    msg = [e.message for e in rec.events if e.reason == "FailedScheduling"][0]
    assert msg.endswith("preemption: not eligible due to a terminating pod on the nominated node.")
    assert deleted(c) == []


async def test_nominated_pod_reserves_room_for_lower_priority_pods_only():
    s, c, rec = make([node("n1")], [pod("used", "1", 1000, "n1")])
    s.on_pod_add(stored(c, pod("nom", "1", 100, status={"nominatedNodeName": "n1"})))
    s.queue.delete(pod("nom", "1", 100))  # only its nomination matters here
    assert "default/nom" in s.nominated["n1"]
    assert await attempt(s, pod("lower", "1", 10)) is None
    assert "Insufficient cpu" in [e.message for e in rec.events if e.reason == "FailedScheduling"][0]
    res = await attempt(s, pod("higher", "1", 500))
    assert res is not None and res.suggested_host == "n1"
    # a bound or deleted pod loses its nomination
    s.on_pod_delete(pod("nom", "1", 100))
    assert "n1" not in s.nominated


async def test_preemptor_schedules_once_victim_is_gone():
    s, c, rec = make([node("n1")], [pod("low", "2", 0, "n1")])
    high = pod("high", "1", 100)
    assert await attempt(s, high) is None
    s.on_pod_delete(pod("low", "2", 0, "n1"))  # the victim's DELETE event
    assert "default/high" not in s.queue.unschedulable
    qp = await asyncio.wait_for(s.queue.pop(), 5)  # out of backoffQ (1 s)
    assert qp.key == "default/high"
    res = s.schedule_one(qp)
    await s.wait_idle()
    assert res is not None and res.suggested_host == "n1"


def _pi(name, prio, start=""):
    return PodInfo(pod(name, "1", prio, "n", start=start))


@pytest.mark.parametrize("cands,want", [
    ([Candidate("a", [_pi("x", 5)]), Candidate("b", [])], "b"),
    ([Candidate("a", [_pi("x", 5)]), Candidate("b", [_pi("y", 3)])], "b"),
    ([Candidate("a", [_pi("x", 3), _pi("x2", 1)]), Candidate("b", [_pi("y", 3)])], "b"),
    ([Candidate("a", [_pi("x", 3, "2026-02-01T00:00:00Z")]),
      Candidate("b", [_pi("y", 3, "2026-01-01T00:00:00Z")])], "a"),
    ([Candidate("a", [_pi("x", 3)]), Candidate("b", [_pi("y", 3)])], "a"),
], ids=["a node without victims", "the lowest highest-priority victim", "the smallest sum of victim priorities",
        "the latest start of the highest-priority victims", "a tie picks the first node"])
def test_pick_one_node_for_preemption(cands, want):
    assert pick_one_node_for_preemption(cands) == want


@pytest.mark.parametrize("n,want", [(5, 5), (100, 100), (500, 100), (2000, 200)],
                         ids=["fewer than the minimum: all", "100: all", "500: 10% is below the minimum of 100",
                              "10% of 2000"])
def test_num_candidates(n, want):
    assert num_candidates(n) == want
