"""NodeResourcesFit's scoring strategies (LeastAllocated, MostAllocated,
RequestedToCapacityRatio) and their args validation, as kube-scheduler documents
them: noderesources/{least_allocated,most_allocated,requested_to_capacity_ratio}.go,
helper/shape_score.go, apis/config/validation/validation_pluginargs.go."""

from __future__ import annotations

import pytest

from components.scheduler.config import ConfigError, build_framework, parse_config
from components.scheduler.plugins.noderesources import (
    NodeResourcesFit,
    broken_linear,
    requested_to_capacity_ratio_score,
)
from tests.unit.test_scheduler_plugins import mknode, mkpod, ni, run_score

RTCR = "RequestedToCapacityRatio"
PACK = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
SPREAD = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]


def fit(typ=None, resources=None, shape=None) -> NodeResourcesFit:
    if typ is None:
        return NodeResourcesFit()
    st: dict = {"type": typ}
    if resources is not None:
        st["resources"] = resources
    if shape is not None:
        st["requestedToCapacityRatio"] = {"shape": shape}
    return NodeResourcesFit({"scoringStrategy": st})


def nodes():
    # n1: 4 cpu / 8Gi, empty; n2: 2 of 4 cpu used (memory request explicitly 0)
    return [ni(mknode("n1")), ni(mknode("n2"), mkpod("e", requests={"cpu": "2", "memory": "0"}, node_name="n2"))]


POD = mkpod(requests={"cpu": "1", "memory": "2Gi"})   # 25% cpu, 25% memory of an empty node


@pytest.mark.parametrize("plugin,expected", [
    # LeastAllocated (default): n1 (75+75)/2; n2 cpu (4-3)/4=25, mem 75 → 50
    (fit(), [75, 50]),
    (fit("LeastAllocated"), [75, 50]),
    # MostAllocated: n1 (25+25)/2; n2 cpu 3/4=75, mem 25 → 50
    (fit("MostAllocated"), [25, 50]),
    # weights: cpu 3, memory 1 → n1 (75+25)/4=25, n2 (225+25)/4=62 (floored)
    (fit("MostAllocated", [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}]), [25, 62]),
    # weight 0 is defaulted to 1
    (fit("MostAllocated", [{"name": "cpu", "weight": 0}, {"name": "memory"}]), [25, 50]),
    # RequestedToCapacityRatio, shape 0→0, 100→10 (packing): utilization itself
    (fit(RTCR, shape=PACK), [25, 50]),
    # shape 0→10, 100→0 (spreading): 100 - utilization
    (fit(RTCR, shape=SPREAD), [75, 50]),
], ids=["LeastAllocated by default", "LeastAllocated", "MostAllocated", "MostAllocated with weights",
        "weight 0 defaults to 1", "RequestedToCapacityRatio packing shape",
        "RequestedToCapacityRatio spreading shape"])
def test_strategy_scores(plugin, expected):
    assert run_score(plugin, POD, nodes()) == expected


def test_most_allocated_counts_requests_over_capacity_as_full():
    n = ni(mknode("n1", cpu="1"))
    assert run_score(fit("MostAllocated", [{"name": "cpu", "weight": 1}]), mkpod(requests={"cpu": "2"}), [n]) == [100]


def test_requested_to_capacity_ratio_rounds_and_skips_zero_scores():
    n1 = ni(mknode("n1"))
    res = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 2}]
    p = mkpod(requests={"cpu": "1", "memory": "4Gi"})     # 25% cpu, 50% memory
    # (25*1 + 50*2) / 3 = 41.67: RequestedToCapacityRatio rounds, MostAllocated floors
    assert run_score(fit(RTCR, res, PACK), p, [n1]) == [42]
    assert run_score(fit("MostAllocated", res), p, [n1]) == [41]
    # an explicit 0 cpu request scores 0 on the packing shape and is left out of the mean
    p0 = mkpod(requests={"cpu": "0", "memory": "4Gi"})
    assert run_score(fit(RTCR, shape=PACK), p0, [n1]) == [50]
    assert run_score(fit("MostAllocated"), p0, [n1]) == [25]


def test_extended_resources_scored_only_when_requested():
    node = mknode("g1")
    node["status"]["allocatable"]["example.com/gpu"] = "4"
    res = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": "example.com/gpu", "weight": 2}]
    plugin = fit("MostAllocated", res)
    # no gpu request: only cpu and memory count → (25+25)/2
    assert run_score(plugin, POD, [ni(node)]) == [25]
    # 3 of 4 gpus: (25 + 25 + 75*2) / 4 = 50
    gpu = mkpod(requests={"cpu": "1", "memory": "2Gi", "example.com/gpu": "3"})
    assert run_score(plugin, gpu, [ni(node)]) == [50]


@pytest.mark.parametrize("p,score", [(0, 20), (10, 20), (30, 50), (50, 80), (70, 90), (90, 100), (100, 100)],
                         ids=["below the first point", "the first point", "between the first two",
                              "the second point", "between the last two", "the last point", "above the last point"])
def test_broken_linear_shape(p, score):
    # points (utilization, score 0..10) scaled ×10: (10,20) (50,80) (90,100)
    f = broken_linear([(10, 20), (50, 80), (90, 100)])
    assert f(p) == score


def test_shape_scores_over_capacity_at_full_utilization():
    s = requested_to_capacity_ratio_score([(0, 10), (100, 0)])
    assert s(5, 4) == 0 and s(0, 0) == 0 and s(1, 4) == 75


SUPPORTED = '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'


@pytest.mark.parametrize("strategy,message", [
    ({"type": "Foo"}, f'scoringStrategy.type: Unsupported value: "Foo": supported values: {SUPPORTED}'),
    ({"resources": []}, f'scoringStrategy.type: Unsupported value: "": supported values: {SUPPORTED}'),
    ({"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 101}]},
     "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]"),
    ({"type": "LeastAllocated", "resources": [{"name": "memory", "weight": -1}]},
     "scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of memory not in valid range (0, 100]"),
    ({"type": RTCR}, "scoringStrategy.requestedToCapacityRatio: Required value: "
                     "must be specified when type is RequestedToCapacityRatio"),
    ({"type": RTCR, "requestedToCapacityRatio": {"shape": []}},
     "scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be specified"),
    ({"type": RTCR, "requestedToCapacityRatio": {"shape": [{"utilization": 50, "score": 1},
                                                         {"utilization": 10, "score": 2}]}},
     "scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 10: "
     "values must be sorted in increasing order"),
    ({"type": RTCR, "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 11}]}},
     "scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid range [0, 10]"),
    ({"type": RTCR, "requestedToCapacityRatio": {"shape": [{"utilization": 101, "score": 1}]}},
     "scoringStrategy.requestedToCapacityRatio.shape[0].utilization: Invalid value: 101: not in valid range [0, 100]"),
    ({"type": "MostAllocated", "requestedToCapacityRatio": {"shape": PACK}},
     "scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio"),
    ({"type": "Foo", "resources": [{"name": "cpu", "weight": 200}]},
     f'[scoringStrategy.type: Unsupported value: "Foo": supported values: {SUPPORTED}, '
     "scoringStrategy.resources[0].weight: Invalid value: 200: resource weight of cpu not in valid range (0, 100]]"),
], ids=["unknown type", "missing type", "weight above 100", "negative weight",
        "RequestedToCapacityRatio without its args", "empty shape", "unsorted shape", "shape score above 10",
        "shape utilization above 100", "shape args with another type", "two errors in one list"])
def test_args_validation(strategy, message):
    with pytest.raises(ValueError) as ei:
        NodeResourcesFit({"scoringStrategy": strategy})
    assert str(ei.value) == message
    # through a KubeSchedulerConfiguration: one line naming the plugin's args
    doc = {"profiles": [{"schedulerName": "x", "pluginConfig": [{"name": "NodeResourcesFit",
                                                                  "args": {"scoringStrategy": strategy}}]}]}
    with pytest.raises(ConfigError) as ce:
        parse_config(doc)
    assert str(ce.value) == f"pluginConfig[NodeResourcesFit].args: {message}"


def test_profiles_select_their_strategy():
    cfg = parse_config({"profiles": [
        {"schedulerName": "default-scheduler"},
        {"schedulerName": "bin-packing-scheduler", "pluginConfig": [
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}}]},
    ]})
    fw = {p["schedulerName"]: build_framework(p, None) for p in cfg.profiles}
    assert fw["default-scheduler"].plugin("NodeResourcesFit").strategy == "LeastAllocated"
    assert fw["bin-packing-scheduler"].plugin("NodeResourcesFit").strategy == "MostAllocated"
    n = nodes()
    assert run_score(fw["bin-packing-scheduler"].plugin("NodeResourcesFit"), POD, n) == [25, 50]
    assert run_score(fw["default-scheduler"].plugin("NodeResourcesFit"), POD, n) == [75, 50]
