"""The kinds admission needs, as pure functions: validation (pkg/apis/{scheduling,node,policy,
core}/validation), defaulting (SetDefaults_PriorityClass, SetDefaults_LimitRangeItem) and
Table rows (pkg/printers/internalversion/printers.go)."""

from __future__ import annotations

import copy

import pytest

from controlplane.api.defaults import apply_defaults
from controlplane.api.tables import table
from controlplane.api.validation import validate

NOW_TS = "2026-01-01T00:00:00Z"


def msgs(kind, obj, old=None):
    return [f"{c['field']}: {c['message']}" for c in validate(kind, obj, old)]


def pc(name="high", value=1000, **extra):
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name, "creationTimestamp": NOW_TS}, "value": value, **extra}


def test_priority_class_defaults_preemption_policy():
    obj = pc()
    apply_defaults("PriorityClass", obj)
    assert obj["preemptionPolicy"] == "PreemptLowerPriority"
    assert msgs("PriorityClass", obj) == []


@pytest.mark.parametrize("obj, want", [
    (pc(value=1000000001), ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]),
    (pc(name="system-x"), ["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for "
                           "system use only. error: system-x is not a known system priority class"]),
    (pc(name="system-node-critical", value=1), ["metadata.name: Forbidden: priority class names with 'system-' "
                                                "prefix are reserved for system use only. error: value of "
                                                "system-node-critical PriorityClass must be 2000001000"]),
    (pc(preemptionPolicy="Sometimes"), ['preemptionPolicy: Unsupported value: "Sometimes": supported values: '
                                        '"Never", "PreemptLowerPriority"']),
], ids=["above the user maximum", "reserved prefix", "system class with another value", "bad preemption policy"])
def test_priority_class_invalid(obj, want):
    assert msgs("PriorityClass", obj) == want


def test_priority_class_value_immutable():
    old = pc()
    new = copy.deepcopy(old)
    new["value"] = 5
    assert msgs("PriorityClass", new, old) == ["value: Forbidden: may not be changed in an update."]


@pytest.mark.parametrize("obj, want", [
    ({"handler": "runc"}, []),
    ({}, ["handler: Required value"]),
    ({"handler": "Bad_Handler"}, ['handler: Invalid value: "Bad_Handler": a lowercase RFC 1123 label must consist '
                                  "of lower case alphanumeric characters or '-', and must start and end with an "
                                  "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                                  "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]),
    ({"handler": "runc", "overhead": {"podFixed": {"cpu": "-1"}}},
     ['overhead.podFixed[cpu]: Invalid value: "-1": must be greater than or equal to 0']),
], ids=["valid", "no handler", "handler not a DNS label", "negative overhead"])
def test_runtime_class_validation(obj, want):
    rc = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "rc"}, **obj}
    assert msgs("RuntimeClass", rc) == want


def test_runtime_class_handler_immutable():
    old = {"metadata": {"name": "rc"}, "handler": "runc"}
    assert msgs("RuntimeClass", {"metadata": {"name": "rc"}, "handler": "kata"}, old) == \
        ['handler: Invalid value: "kata": field is immutable']


def pdb(**spec):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "default", "creationTimestamp": NOW_TS}, "spec": spec}


@pytest.mark.parametrize("spec, want", [
    ({"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}, []),
    ({"minAvailable": 1, "maxUnavailable": 1}, "spec: Invalid value"),
    ({"minAvailable": "120%"}, 'spec.minAvailable: Invalid value: "120%": must not be greater than 100%'),
    ({"maxUnavailable": -1}, "spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0"),
    ({"unhealthyPodEvictionPolicy": "Never"}, 'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never"'),
], ids=["valid", "both set", "above 100%", "negative", "bad eviction policy"])
def test_pdb_validation(spec, want):
    got = msgs("PodDisruptionBudget", pdb(**spec))
    if not want:
        assert got == []
    else:
        assert len(got) == 1 and got[0].startswith(want), got
    if spec.get("maxUnavailable") == 1 and spec.get("minAvailable") == 1:
        assert got[0].endswith("minAvailable and maxUnavailable cannot be both set")


def lr(*items):
    return {"apiVersion": "v1", "kind": "LimitRange",
            "metadata": {"name": "lr", "namespace": "default", "creationTimestamp": NOW_TS},
            "spec": {"limits": list(items)}}


def test_limit_range_item_defaults():
    obj = lr({"type": "Container", "max": {"cpu": "1"}, "min": {"memory": "64Mi"}})
    apply_defaults("LimitRange", obj)
    item = obj["spec"]["limits"][0]
    assert item["default"] == {"cpu": "1"}
    assert item["defaultRequest"] == {"cpu": "1", "memory": "64Mi"}


@pytest.mark.parametrize("item, want", [
    ({"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}},
     'spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1'),
    ({"type": "Container", "default": {"cpu": "2"}, "max": {"cpu": "1"}},
     'spec.limits[0].default[cpu]: Invalid value: "2": default value 2 is greater than max value 1'),
    ({"type": "Container", "default": {"cpu": "100m"}, "defaultRequest": {"cpu": "200m"}},
     'spec.limits[0].defaultRequest[cpu]: Invalid value: "200m": default request value 200m is greater than '
     "default limit value 100m"),
    ({"type": "Container", "maxLimitRequestRatio": {"cpu": "500m"}},
     'spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "500m": ratio 500m is less than 1'),
    ({"type": "Pod", "default": {"cpu": "1"}},
     "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"),
], ids=["min above max", "default above max", "default request above default", "ratio below one",
        "defaults on a Pod item"])
def test_limit_range_invalid(item, want):
    assert want in msgs("LimitRange", lr(item))


@pytest.mark.parametrize("hard, want", [
    ({"pods": "10", "requests.cpu": "2", "count/deployments.apps": "3"}, None),
    ({"pods": "-1"}, 'spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0'),
    ({"pods": "1500m"}, 'spec.hard[pods]: Invalid value: "1500m": must be an integer'),
    ({"bogus": "1"}, 'spec.hard[bogus]: Invalid value: "bogus": must be a standard resource for quota'),
], ids=["valid", "negative", "fractional count", "unknown resource"])
def test_resource_quota_validation(hard, want):
    q = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "default"},
         "spec": {"hard": hard}}
    assert msgs("ResourceQuota", q) == ([] if want is None else [want])


def rows(kind, obj):
    t = table(kind, [obj], "1", now=1767225600.0 + 60)
    return [c["name"] for c in t["columnDefinitions"]], t["rows"][0]["cells"]


def test_tables():
    assert rows("PriorityClass", pc(preemptionPolicy="Never")) == (
        ["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"], ["high", 1000, False, "60s", "Never"])
    assert rows("RuntimeClass", {"metadata": {"name": "kata", "creationTimestamp": NOW_TS}, "handler": "kata"}) == (
        ["Name", "Handler", "Age"], ["kata", "kata", "60s"])
    assert rows("PodDisruptionBudget", {**pdb(minAvailable=1), "status": {"disruptionsAllowed": 0}}) == (
        ["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"], ["web", "1", "N/A", 0, "60s"])
    assert rows("LimitRange", lr()) == (["Name", "Created At"], ["lr", NOW_TS])
    q = {"metadata": {"name": "q", "creationTimestamp": NOW_TS},
         "status": {"hard": {"pods": "10", "limits.cpu": "2", "requests.memory": "1Gi"},
                    "used": {"pods": "3", "requests.memory": "512Mi"}}}
    assert rows("ResourceQuota", q) == (["Name", "Age", "Request", "Limit"],
                                        ["q", "60s", "pods: 3/10, requests.memory: 512Mi/1Gi", "limits.cpu: 0/2"])
