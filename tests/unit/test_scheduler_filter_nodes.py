"""Filtering a chunk of nodes at a time (the plugins' ``filter_nodes``) decides exactly as
filtering node by node does, restating kube-scheduler's ``pkg/scheduler/schedule_one.go``
findNodesThatPassFilters: nodes are taken in order from ``nextStartNodeIndex``, each
node's verdict is the first rejecting plugin's (``framework.go`` RunFilterPlugins), the
search stops at the node where numFeasibleNodesToFind feasible nodes are found, the next
cycle starts right after it, and an unschedulable pod's diagnosis holds the verdict of
every node evaluated. Each case runs one workload through the scheduler twice — batched,
and with the batch turned off (the node-by-node reference) — and compares every cycle.
"""

from __future__ import annotations

import collections
import random

import pytest

from components.scheduler import metrics
from components.scheduler.config import parse_config
from components.scheduler.framework import ERROR, Framework, Status
from components.scheduler.schedule_one import ScheduleOne
from components.scheduler.scheduler import Scheduler

ZONE = "topology.kubernetes.io/zone"


class Binder:
    name = "DefaultBinder"

    async def bind(self, state, pi, node_name):
        return Status()


def node(i: int) -> dict:
    """300 nodes in 4 zones: every 7th unschedulable, every 5th tainted dedicated=gpu,
    every 3rd small (1 cpu, fills up)."""
    spec: dict = {}
    if i % 7 == 0:
        spec["unschedulable"] = True
    if i % 5 == 0:
        spec["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    cpu = "1" if i % 3 == 0 else "8"
    return {"metadata": {"name": f"n{i:03d}", "labels": {"kubernetes.io/hostname": f"n{i:03d}",
                                                        ZONE: f"zone-{i % 4}"}},
            "spec": spec, "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "20"}}}


def pod(i: int, kind: str) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "nginx",
                                  "resources": {"requests": {"cpu": "300m", "memory": "100Mi"}}}]}
    labels = {"app": kind}
    if kind == "affinity":  # half of the nodes match
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In",
                                                         "values": ["zone-1", "zone-2"]}]}]}}}
    elif kind == "tolerating":
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"},
                               {"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]
    elif kind == "nowhere":  # no node matches: a FitError with every node's verdict
        spec["nodeSelector"] = {ZONE: "zone-9"}
    elif kind == "big":  # only the 8-cpu nodes fit, until they fill up
        spec["containers"][0]["resources"]["requests"]["cpu"] = "3"
    elif kind == "spread":
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": {"app": "spread"}}}]
    elif kind == "anti":
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "anti"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    elif kind == "ports":
        spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    return {"metadata": {"name": f"p{i}-{kind}", "namespace": "default", "uid": f"u{i}{kind}", "labels": labels},
            "spec": spec}


async def run(kinds: list[str], pods: int, percentage: int, batched: bool, monkeypatch) -> list:
    """Every cycle's outcome: (pod, node or the failure message, evaluated, feasible, next
    start index, the diagnosis' (node, plugin, reasons) in order and its plugins)."""
    with monkeypatch.context() as m:
        if not batched:
            m.setattr(Framework, "filter_nodes_chain", lambda self, state: None)
        failures: list = []

        def handle_failure(self, fwk, state, qp, err, cycle, nominated_node=None):
            d = err.diagnosis
            failures.append((str(err), [(n, s.plugin, s.reasons) for n, s in d.node_to_status.items()],
                             sorted(d.unschedulable_plugins)))
            self.queue.done(qp.pod_info.key)

        m.setattr(ScheduleOne, "handle_failure", handle_failure)
        s = Scheduler(None, parse_config({"percentageOfNodesToScore": percentage}), rng=random.Random(7),
                      binder_override=Binder())
        for i in range(300):
            s.on_node_add(node(i))
        out = []
        for i in range(pods):
            s.on_pod_add(pod(i, kinds[i % len(kinds)]))
            qp = s.queue.pop_nowait()
            assert qp is not None
            r = s.schedule_one(qp)
            if r is None:
                out.append(failures[-1] + (s.next_start_node_index,))
            else:
                out.append((r.suggested_host, r.evaluated_nodes, r.feasible_nodes, s.next_start_node_index))
        await s.wait_idle()
    return out


@pytest.mark.parametrize("kinds, pods, percentage", [
    (["plain"], 200, 0),
    (["affinity"], 60, 0),
    (["affinity"], 60, 10),
    (["tolerating", "plain"], 120, 10),
    (["big"], 150, 10),
    (["nowhere", "plain"], 20, 0),
    (["spread", "anti", "plain"], 120, 0),
    (["ports", "affinity", "big", "tolerating"], 160, 30),
    (["plain", "big"], 120, 100),
], ids=["plain pods", "node affinity: half of the nodes", "node affinity at 10%", "tolerating taints and unschedulable",
        "big pods filling the nodes up", "no node matches: FitError", "spreading and anti-affinity",
        "mixed at 30%", "mixed at 100%"])
async def test_batched_filter_decides_as_node_by_node(kinds, pods, percentage, monkeypatch):
    batched = await run(kinds, pods, percentage, True, monkeypatch)
    reference = await run(kinds, pods, percentage, False, monkeypatch)
    assert batched == reference
    assert any(isinstance(r[0], str) and r[0].startswith("n") for r in batched)  # something was placed


class ErrorAt:
    """A Filter plugin failing with an error on one node."""

    name = "ErrorAt"

    def __init__(self, node_name: str) -> None:
        self.node_name = node_name

    def filter(self, state, pod, node):
        return Status(ERROR, "boom") if node.name == self.node_name else None

    def filter_nodes(self, state, pod, nodes):
        f = self.filter
        return [f(state, pod, n) for n in nodes]


@pytest.mark.parametrize("error_node, raises", [("n010", True), ("n250", False)],
                         ids=["an error before the search stops is raised",
                              "an error on a node past where the search stops is not seen"])
async def test_filter_error_only_on_evaluated_nodes(error_node, raises):
    s = Scheduler(None, parse_config({"percentageOfNodesToScore": 10}), rng=random.Random(1),
                  binder_override=Binder())
    for i in range(300):
        s.on_node_add({"metadata": {"name": f"n{i:03d}"},
                       "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "20"}}})
    fwk = s.profiles["default-scheduler"]
    fwk.filter_plugins.append(ErrorAt(error_node))
    s.on_pod_add(pod(0, "plain"))
    qp = s.queue.pop_nowait()
    assert qp is not None
    r = s.schedule_one(qp)  # 100 nodes wanted: n000..n099 evaluated
    await s.wait_idle()
    if raises:
        assert r is None and s.next_start_node_index == 0
    else:
        assert r is not None and r.evaluated_nodes == 100 and s.next_start_node_index == 100


async def filter_observations(batched: bool, monkeypatch) -> collections.Counter:
    """Every cycle sampled for plugin metrics: the Filter calls observed by (plugin, status)."""
    seen: collections.Counter = collections.Counter()
    with monkeypatch.context() as m:
        m.setattr(metrics, "sample_plugin_metrics", lambda: True)
        m.setattr(metrics, "plugin_call", lambda p, ep, st, sec: seen.update({(p, ep, st): 1}))
        m.setattr(metrics, "plugin_calls", lambda p, ep, st, sec, n: seen.update({(p, ep, st): n}))
        await run(["tolerating", "plain", "big", "nowhere"], 80, 10, batched, monkeypatch)
    return collections.Counter({k[::2]: v for k, v in seen.items() if k[1] == "Filter"})


async def test_sampled_cycles_observe_a_filter_call_per_node_with_its_status(monkeypatch):
    # every evaluated node's calls, as node by node; plus those of the last chunk's nodes past
    # where the search stopped (kube-scheduler's parallel workers also finish the nodes in flight)
    batched = await filter_observations(True, monkeypatch)
    reference = await filter_observations(False, monkeypatch)
    assert batched.keys() == reference.keys()
    assert all(batched[k] >= reference[k] for k in reference)
    assert batched[("NodeUnschedulable", "UnschedulableAndUnresolvable")] > 0
    assert batched[("NodeResourcesFit", "Success")] > 0
