"""percentageOfNodesToScore, restating kube-scheduler: ``pkg/scheduler/schedule_one.go``
numFeasibleNodesToFind (all nodes below 100; 0 → adaptive ``50 - nodes/125`` with a 5%
floor; never fewer than 100 nodes; a profile's value, even 0, wins over the global
one) and findNodesThatPassFilters (the search starts where the previous cycle stopped:
``nextStartNodeIndex = (nextStartNodeIndex + processed) % nodes``), and the docs page
"Scheduler Performance Tuning" (kubernetes.io/docs/concepts/scheduling-eviction/
scheduler-perf-tuning/).
"""

from __future__ import annotations

import random

import pytest

from components.scheduler.config import ConfigError, parse_config
from components.scheduler.framework import Status, num_feasible_nodes_to_find
from components.scheduler.scheduler import Scheduler


@pytest.mark.parametrize("percentage, nodes, want", [
    (0, 50, 50),          # below 100 nodes: all of them
    (0, 99, 99),
    (0, 100, 100),        # adaptive 50% of 100 = 50 -> at least 100
    (0, 500, 230),        # 50 - 500/125 = 46%
    (0, 1000, 420),       # 42%
    (0, 5000, 500),       # 50 - 40 = 10%
    (0, 5625, 281),       # 50 - 45 = 5%
    (0, 6000, 300),       # 50 - 48 = 2% -> floor 5%
    (0, 20000, 1000),     # floor 5%
    (10, 5000, 500),
    (1, 5000, 100),       # 50 nodes -> at least 100
    (100, 5000, 5000),
    (30, 80, 80),
], ids=["adaptive, 50 nodes: all", "adaptive, 99 nodes: all", "adaptive, 100 nodes: at least 100",
        "adaptive, 500 nodes: 46%", "adaptive, 1000 nodes: 42%", "adaptive, 5000 nodes: 10%",
        "adaptive, 5625 nodes: 5%", "adaptive, 6000 nodes: floor 5%", "adaptive, 20000 nodes: floor 5%",
        "10% of 5000", "1% of 5000: at least 100", "100% of 5000", "30% of 80 nodes: all"])
def test_num_feasible_nodes_to_find(percentage, nodes, want):
    assert num_feasible_nodes_to_find(percentage, nodes) == want


@pytest.mark.parametrize("doc, want", [
    ({}, 0),
    ({"percentageOfNodesToScore": 40}, 40),
    ({"percentageOfNodesToScore": 40, "profiles": [{"percentageOfNodesToScore": 0}]}, 0),  # profile wins
    ({"percentageOfNodesToScore": 40, "profiles": [{"percentageOfNodesToScore": 70}]}, 70),
    ({"percentageOfNodesToScore": 40, "profiles": [{}]}, 40),
], ids=["unset: adaptive", "global", "the profile's 0 wins", "the profile's 70 wins",
        "a profile without one takes the global"])
def test_profile_percentage_overrides_global(doc, want):
    s = Scheduler(None, parse_config(doc))
    assert s.profiles["default-scheduler"].percentage_of_nodes_to_score == want


@pytest.mark.parametrize("doc, msg", [
    ({"percentageOfNodesToScore": 101}, "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"),
    ({"profiles": [{"percentageOfNodesToScore": -1}]}, "not in valid range [0-100]"),
    ({"profiles": [{"percentageOfNodesToScore": "x"}]}, "not an integer"),
], ids=["global above 100", "negative in a profile", "not a number in a profile"])
def test_percentage_validation(doc, msg):
    with pytest.raises(ConfigError) as e:
        parse_config(doc)
    assert msg in str(e.value)


class Binder:
    name = "DefaultBinder"

    async def bind(self, state, pi, node_name):
        return Status()


def node(i: int) -> dict:
    return {"metadata": {"name": f"n{i:03d}", "labels": {"kubernetes.io/hostname": f"n{i:03d}"}},
            "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "1000"}}}


def pod(i: int) -> dict:
    return {"metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                                     "resources": {"requests": {"cpu": "10m"}}}]}}


@pytest.mark.parametrize("pct, evaluated", [(0, 144), (50, 150), (10, 100), (100, 300)],
                         ids=["adaptive 48%", "50%", "10%: at least 100", "100%"])
async def test_round_robin_start_index(pct, evaluated):
    """300 nodes, all feasible (adaptive: 50 - 300/125 = 48%; 10% = 30 -> at least 100):
    each cycle evaluates ``evaluated`` nodes and the next
    cycle starts right after the last one, wrapping round."""
    s = Scheduler(None, parse_config({"percentageOfNodesToScore": pct}), rng=random.Random(1),
                  binder_override=Binder())
    for i in range(300):
        s.on_node_add(node(i))
    starts = []
    for i in range(4):
        starts.append(s.next_start_node_index)
        s.on_pod_add(pod(i))
        r = s.schedule_one(s.queue.pop_nowait())
        assert r.evaluated_nodes == evaluated and r.feasible_nodes == evaluated
    await s.wait_idle()
    assert starts == [(k * evaluated) % 300 for k in range(4)]
