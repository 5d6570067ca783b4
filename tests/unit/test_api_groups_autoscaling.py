"""autoscaling/v2 and v1 HorizontalPodAutoscaler: defaults, validation, the table, v1 <-> v2 conversion."""

from __future__ import annotations

import json

import pytest

from controlplane.api import resources as R
from controlplane.api import tables
from controlplane.api.defaults import apply_defaults
from controlplane.api.groups import autoscaling as A
from controlplane.api.validation import validate

NOW = 1_700_000_000.0
T0 = "2023-11-14T22:13:20Z"
REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}


def hpa(**spec) -> dict:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "default", "creationTimestamp": T0},
            "spec": {"scaleTargetRef": REF, "maxReplicas": 5, **spec}}


def messages(o: dict) -> list[str]:
    return [f"{c['field']}: {c['message']}" for c in validate("HorizontalPodAutoscaler", o)]


def cpu(pct: int) -> dict:
    return {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                       "averageUtilization": pct}}}


def test_defaults():
    o = hpa()
    apply_defaults("HorizontalPodAutoscaler", o)
    assert o["spec"]["minReplicas"] == 1 and o["spec"]["metrics"] == [cpu(80)]
    assert validate("HorizontalPodAutoscaler", o) == []
    o = hpa(behavior={"scaleDown": {"stabilizationWindowSeconds": 60}})
    apply_defaults("HorizontalPodAutoscaler", o)
    assert o["spec"]["behavior"]["scaleUp"] == A.SCALE_UP_DEFAULT
    assert o["spec"]["behavior"]["scaleDown"] == {**A.SCALE_DOWN_DEFAULT, "stabilizationWindowSeconds": 60}


@pytest.mark.parametrize("spec, expect", [
    ({"minReplicas": 0}, "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"),
    ({"maxReplicas": 0}, "spec.maxReplicas: Invalid value: 0: must be greater than 0"),
    ({"minReplicas": 6}, "spec.maxReplicas: Invalid value: 5: must be greater than or equal to `minReplicas`"),
    ({"scaleTargetRef": {"name": "web"}}, "spec.scaleTargetRef.kind: Required value"),
    ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}]},
     "spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or "
     "a target utilization"),
    ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                             "averageUtilization": 0}}}]},
     "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"),
    ({"metrics": [{"type": "Pods"}]},
     "spec.metrics[0].pods: Required value: must populate information for the given metric source"),
    ({"metrics": [{"type": "Magic"}]}, 'spec.metrics[0].type: Unsupported value: "Magic": supported values: '
                                       '"ContainerResource", "External", "Object", "Pods", "Resource"'),
    ({"behavior": {"scaleUp": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 15}]}}},
     "spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero"),
], ids=["min-zero", "max-zero", "min-above-max", "ref-kind", "no-target-value", "zero-utilization",
        "missing-source", "unknown-type", "policy-value"])
def test_validation_causes(spec, expect):
    o = hpa(**spec)
    apply_defaults("HorizontalPodAutoscaler", o)
    assert expect in messages(o)


def test_table():
    o = hpa(minReplicas=2, metrics=[cpu(80), {"type": "Resource", "resource": {
        "name": "memory", "target": {"type": "AverageValue", "averageValue": "500Mi"}}},
        {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue",
                                                                         "averageValue": "10"}}}])
    o["status"] = {"currentReplicas": 3, "currentMetrics": [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 42}}}]}
    cols = tables.column_definitions("HorizontalPodAutoscaler")
    assert [c["name"] for c in cols] == ["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"]
    assert tables.table_row("HorizontalPodAutoscaler", o, NOW)["cells"] == [
        "web", "Deployment/web", "cpu: 42%/80%, memory: <unknown>/500Mi + 1 more...", "2", 5, 3, "0s"]
    assert A.format_metrics([], []) == "<none>"
    assert A.format_metrics([cpu(80)], []) == "cpu: <unknown>/80%"


def test_v1_to_v2_and_back():
    v1 = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
          "metadata": {"name": "web", "namespace": "default"},
          "spec": {"scaleTargetRef": REF, "minReplicas": 2, "maxReplicas": 5, "targetCPUUtilizationPercentage": 70},
          "status": {"currentReplicas": 2, "desiredReplicas": 2, "currentCPUUtilizationPercentage": 33}}
    v2 = A.v1_to_v2(v1)
    assert v2["apiVersion"] == "autoscaling/v2" and "annotations" not in v2["metadata"]
    assert v2["spec"] == {"scaleTargetRef": REF, "minReplicas": 2, "maxReplicas": 5, "metrics": [cpu(70)]}
    assert v2["status"]["currentMetrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "current": {"averageUtilization": 33}}}]
    assert A.v2_to_v1(v2) == {**v1, "metadata": {**v1["metadata"], "annotations": {
        A.CURRENT_METRICS_ANNOTATION: json.dumps([{"type": "Resource", "resource": {
            "name": "cpu", "currentAverageValue": "0", "currentAverageUtilization": 33}}], separators=(",", ":"))}}}


def test_v2_only_fields_survive_a_v1_round_trip_in_annotations():
    mem = {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue",
                                                                         "averageValue": "1Gi"}}}
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
                              "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}
    v2 = hpa(minReplicas=1, metrics=[cpu(80), mem], behavior=behavior)
    v2["status"] = {"currentReplicas": 1, "desiredReplicas": 1,
                    "conditions": [{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}]}
    v1 = A.v2_to_v1(v2)
    ann = v1["metadata"]["annotations"]
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 80 and "metrics" not in v1["spec"]
    assert json.loads(ann[A.METRICS_ANNOTATION]) == [{"type": "Resource", "resource": {
        "name": "memory", "targetAverageValue": "1Gi"}}]
    assert json.loads(ann[A.BEHAVIOR_ANNOTATION]) == behavior
    assert json.loads(ann[A.CONDITIONS_ANNOTATION]) == v2["status"]["conditions"]
    back = A.v1_to_v2(v1)
    assert sorted(json.dumps(m, sort_keys=True) for m in back["spec"]["metrics"]) == \
        sorted(json.dumps(m, sort_keys=True) for m in [cpu(80), mem])
    assert back["spec"]["behavior"] == behavior and back["status"]["conditions"] == v2["status"]["conditions"]
    assert "annotations" not in back["metadata"]


@pytest.mark.parametrize("metric", [
    {"type": "Pods", "pods": {"metric": {"name": "qps", "selector": {"matchLabels": {"a": "b"}}},
                              "target": {"type": "AverageValue", "averageValue": "10"}}},
    {"type": "Object", "object": {"describedObject": {"kind": "Ingress", "name": "main", "apiVersion": "v1"},
                                  "metric": {"name": "rps"}, "target": {"type": "Value", "value": "2k"}}},
    {"type": "External", "external": {"metric": {"name": "queue"},
                                      "target": {"type": "AverageValue", "averageValue": "30"}}},
    {"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "app", "target": {
        "type": "Utilization", "averageUtilization": 60}}},
], ids=["pods", "object", "external", "container-resource"])
def test_other_metric_types_round_trip(metric):
    assert A.v1_to_v2(A.v2_to_v1(hpa(metrics=[metric])))["spec"]["metrics"] == [metric]


def test_one_storage_two_versions():
    v2 = R.REGISTRY.lookup("autoscaling", "v2", "horizontalpodautoscalers")
    v1 = R.REGISTRY.lookup("autoscaling", "v1", "horizontalpodautoscalers")
    assert v1 is not None and v2 is not None
    assert not v2.converted and v1.converted and R.REGISTRY.storage_of(v1) is v2 and R.REGISTRY.storage_of(v2) is v2
    assert R.REGISTRY.of_kind("HorizontalPodAutoscaler") is v2  # the kind's facts are the storage version's
    assert v1.etcd_dir == v2.etcd_dir and v1.short_names == v2.short_names == ("hpa",)
    assert v1.categories == ("all",) and v1.status_subresource
