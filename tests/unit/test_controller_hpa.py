"""The HorizontalPodAutoscaler: replica calculation (replica_calculator.py), behavior windows and
policies (hpa_behavior.py) and the controller's conditions, events and status (podautoscaler.py)
on the fake client and clock."""

from __future__ import annotations

import pytest

from components.controller_manager import hpa_behavior as hb
from components.controller_manager.config import ControllerConfig
from components.controller_manager.podautoscaler import HPAS, POD_METRICS, HorizontalPodAutoscalerController
from components.controller_manager.replica_calculator import (
    CalculationError,
    PodMetric,
    ReplicaCalculator,
    pod_metrics_info,
)
from components.controller_manager.testing import fake_context
from controlplane import apitime
from controlplane.api.resources import REGISTRY, get
from controlplane.client.rest import ApiError
from controlplane.client.testing import FakeClock

NOW = 1_700_000_000.0
LONG_AGO = apitime.format_time(NOW - 3600)
PODS = get("pods")
DEPLOYMENTS = get("deployments", "apps")


def pod(name, *, cpu="200m", phase="Running", ready="True", start=LONG_AGO, transition=LONG_AGO, deleted=False,
        labels=None, ns="default"):
    md = {"name": name, "namespace": ns, "labels": labels or {"app": "web"}}
    if deleted:
        md["deletionTimestamp"] = LONG_AGO
    st: dict = {"phase": phase}
    if start:
        st["startTime"] = start
    if ready is not None:
        st["conditions"] = [{"type": "Ready", "status": ready, "lastTransitionTime": transition}]
    res = {"requests": {"cpu": cpu}} if cpu else {}
    return {"metadata": md, "spec": {"containers": [{"name": "app", "image": "x", "resources": res}]}, "status": st}


def metric(milli, ts=NOW):
    return PodMetric(milli, ts, 15.0)


CALC = ReplicaCalculator()


@pytest.mark.parametrize("current, target, pods, metrics, expect", [
    (3, 50, [pod("a"), pod("b"), pod("c")], {"a": metric(300), "b": metric(300), "c": metric(300)}, (9, 150)),
    (2, 50, [pod("a"), pod("b")], {"a": metric(104), "b": metric(104)}, (2, 52)),
    (4, 50, [pod(n) for n in "abcd"], {n: metric(20) for n in "abcd"}, (1, 10)),
    (3, 50, [pod("a"), pod("b"), pod("c")], {"a": metric(0), "b": metric(0)}, (2, 0)),
    (3, 50, [pod("a"), pod("b"), pod("c")], {"a": metric(300), "b": metric(300)}, (6, 150)),
    (2, 50, [pod("a"), pod("b", ready="False")], {"a": metric(300), "b": metric(300)}, (3, 150)),
    (2, 50, [pod("a"), pod("b", phase="Pending")], {"a": metric(300)}, (3, 150)),
    (3, 50, [pod("a"), pod("b", ready="False"), pod("c")], {"a": metric(20), "b": metric(400), "c": metric(20)},
     (1, 10)),
    (3, 50, [pod("a"), pod("b", phase="Failed"), pod("c", deleted=True)],
     {"a": metric(300), "b": metric(0), "c": metric(0)}, (3, 150)),
    (2, 50, [pod("a"), pod("b")], {"a": metric(120)}, (2, 60)),
    (1, 50, [pod("a", start=apitime.format_time(NOW - 60), transition=apitime.format_time(NOW - 5)), pod("b")],
     {"a": metric(400), "b": metric(100)}, (1, 50)),
    (1, 50, [pod("a", start=apitime.format_time(NOW - 60), transition=apitime.format_time(NOW - 30)), pod("b")],
     {"a": metric(400), "b": metric(100)}, (5, 125)),
    (2, 150, [pod("a"), pod("b")], {"a": metric(20)}, (2, 10)),
], ids=["scale-up", "within-tolerance", "scale-down", "missing-pod-counts-as-request-on-scale-down",
        "missing-pod-counts-as-zero-on-scale-up", "unready-pod-counts-as-zero-on-scale-up",
        "pending-pod-is-unready", "unready-pod-left-out-on-scale-down", "failed-and-deleted-pods-ignored",
        "missing-pod-would-reverse-direction", "sampled-within-a-window-of-readiness-is-unready",
        "sampled-a-window-after-readiness-counts", "missing-pod-counts-as-target-above-100"])
def test_resource_replicas(current, target, pods, metrics, expect):
    replicas, utilization, _ = CALC.resource_replicas(current, target, "cpu", pods, metrics, NOW)
    assert (replicas, utilization) == expect


@pytest.mark.parametrize("pods, metrics, message", [
    ([], {"a": metric(1)}, "no pods returned by selector while calculating replica count"),
    ([pod("a", cpu=None)], {"a": metric(1)}, "missing request for cpu in container app of Pod a"),
    ([pod("a", ready="False")], {"a": metric(1)}, "did not receive metrics for targeted pods (pods might be unready)"),
    ([pod("a")], {"z": metric(1)}, "no metrics returned matched known pods"),
], ids=["no-pods", "missing-request", "only-unready-pods", "no-metric-of-a-known-pod"])
def test_resource_replicas_errors(pods, metrics, message):
    with pytest.raises(CalculationError) as e:
        CALC.resource_replicas(1, 50, "cpu", pods, metrics, NOW)
    assert str(e.value) == message


@pytest.mark.parametrize("current, target, metrics, expect", [
    (2, 100, {"a": metric(300), "b": metric(300)}, (6, 300)),
    (2, 100, {"a": metric(95), "b": metric(105)}, (2, 100)),
    (2, 100, {"a": metric(40)}, (2, 40)),
], ids=["scale-up", "within-tolerance", "missing-pod-counts-as-target-on-scale-down"])
def test_raw_resource_replicas(current, target, metrics, expect):
    assert CALC.raw_resource_replicas(current, target, "cpu", [pod("a"), pod("b")], metrics, NOW) == expect


def test_pod_metrics_info_sums_containers_and_skips_incomplete_pods():
    items = [{"metadata": {"name": "a"}, "timestamp": apitime.format_time(NOW), "window": "15s",
              "containers": [{"name": "x", "usage": {"cpu": "100m"}}, {"name": "y", "usage": {"cpu": "12345n"}}]},
             {"metadata": {"name": "b"}, "containers": [{"name": "x", "usage": {"memory": "1Ki"}}]},
             {"metadata": {"name": "c"}, "containers": []}]
    assert pod_metrics_info(items, "cpu") == {"a": PodMetric(101, NOW, 15.0)}


# --------------------------------------------------------------------------- behavior

UP = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
      "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100,
                                                                       "periodSeconds": 15}]}


def behavior(up=None, down=None):
    return {"scaleUp": up or dict(UP), "scaleDown": down or {
        "stabilizationWindowSeconds": 300, "selectPolicy": "Max",
        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}}


@pytest.mark.parametrize("current, desired, mn, mx, expect", [
    (1, 10, 1, 10, (4, ("True", "ScaleUpLimit"))),
    (3, 10, 1, 10, (6, ("True", "ScaleUpLimit"))),
    (5, 20, 1, 8, (8, ("True", "TooManyReplicas"))),
    (5, 0, 2, 10, (2, ("True", "TooFewReplicas"))),
    (5, 7, 1, 10, (7, ("False", "DesiredWithinRange"))),
], ids=["up-to-4-from-1", "up-to-double", "max", "min", "within-range"])
def test_normalize_without_behavior(current, desired, mn, mx, expect):
    h = hb.History()
    replicas, _, limited = hb.normalize(h, None, current, desired, mn, mx, 300, NOW)
    assert (replicas, limited[:2]) == expect


def test_downscale_stabilization_keeps_the_highest_recent_recommendation():
    h = hb.History(recommendations=[(5, NOW - 200)])
    replicas, able, _ = hb.normalize(h, None, 5, 2, 1, 10, 300, NOW)
    assert replicas == 5 and able == hb.DOWN_STABILIZED
    replicas, able, _ = hb.normalize(h, None, 5, 2, 1, 10, 300, NOW + 101)
    assert replicas == 2 and able == hb.READY, "the sample of 5 left the window"


@pytest.mark.parametrize("up, current, desired, events, expect", [
    (UP, 2, 20, [], (6, "ScaleUpLimit")),
    (UP, 10, 40, [], (20, "ScaleUpLimit")),
    ({**UP, "selectPolicy": "Min"}, 10, 40, [], (14, "ScaleUpLimit")),
    ({**UP, "selectPolicy": "Disabled"}, 10, 40, [], (10, "ScaleUpLimit")),
    ({**UP, "policies": [{"type": "Pods", "value": 2, "periodSeconds": 60}]}, 4, 10, [(2, NOW - 30)],
     (4, "ScaleUpLimit")),
    ({**UP, "policies": [{"type": "Pods", "value": 2, "periodSeconds": 60}]}, 4, 10, [(2, NOW - 61)],
     (6, "ScaleUpLimit")),
    (UP, 2, 3, [], (3, "DesiredWithinRange")),
], ids=["pods-policy-wins-max", "percent-policy-wins-max", "select-min", "select-disabled",
        "period-counts-recent-scale-ups", "period-forgets-older-ones", "within-policies"])
def test_scale_up_policies(up, current, desired, events, expect):
    h = hb.History(scale_up=[hb.ScaleEvent(c, t) for c, t in events])
    replicas, _, limited = hb.normalize(h, behavior(up), current, desired, 1, 100, 300, NOW)
    assert (replicas, limited[1]) == expect


@pytest.mark.parametrize("down, current, desired, expect", [
    ({"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
      "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}, 5, 1, (4, "ScaleDownLimit")),
    ({"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
      "policies": [{"type": "Percent", "value": 50, "periodSeconds": 60},
                   {"type": "Pods", "value": 1, "periodSeconds": 60}]}, 10, 1, (5, "ScaleDownLimit")),
    ({"stabilizationWindowSeconds": 0, "selectPolicy": "Min",
      "policies": [{"type": "Percent", "value": 50, "periodSeconds": 60},
                   {"type": "Pods", "value": 1, "periodSeconds": 60}]}, 10, 1, (9, "ScaleDownLimit")),
    ({"stabilizationWindowSeconds": 0, "selectPolicy": "Disabled", "policies": []}, 10, 1, (10, "ScaleDownLimit")),
], ids=["pods-policy", "select-max-takes-the-biggest-change", "select-min-takes-the-smallest", "disabled"])
def test_scale_down_policies(down, current, desired, expect):
    replicas, _, limited = hb.normalize(hb.History(), behavior(down=down), current, desired, 1, 100, 300, NOW)
    assert (replicas, limited[1]) == expect


def test_behavior_windows_hold_the_recommendation():
    h = hb.History(recommendations=[(8, NOW - 100), (3, NOW - 10)])
    down = {"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
    up = {**UP, "stabilizationWindowSeconds": 30}
    # scale-up wish 9, but within the up window the lowest recommendation was 3: stay at 5
    replicas, able, _ = hb.normalize(h, behavior(up, down), 5, 9, 1, 20, 300, NOW)
    assert replicas == 5 and able == hb.UP_STABILIZED
    # scale-down wish 1: the highest within the 60 s down window (3, then 9 just recorded) wins
    replicas, able, _ = hb.normalize(h, behavior(up, down), 5, 1, 1, 20, 300, NOW + 1)
    assert replicas == 5 and able == hb.DOWN_STABILIZED


def test_store_scale_event_only_with_a_behavior():
    h = hb.History()
    hb.store_scale_event(h, None, 1, 4, NOW)
    assert h.scale_up == []
    hb.store_scale_event(h, behavior(), 1, 4, NOW)
    hb.store_scale_event(h, behavior(), 4, 2, NOW)
    assert [e.change for e in h.scale_up] == [3] and [e.change for e in h.scale_down] == [2]


# --------------------------------------------------------------------------- the controller

def hpa(*, metrics=None, mn=1, mx=10, beh=None, name="web"):
    spec = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": mn, "maxReplicas": mx,
            "metrics": metrics or [{"type": "Resource", "resource": {"name": "cpu", "target": {
                "type": "Utilization", "averageUtilization": 50}}}]}
    if beh is not None:
        spec["behavior"] = beh
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec,
            "status": {"currentMetrics": None, "desiredReplicas": 0}}


def pod_metrics(name, cpu, ts=NOW):
    return {"apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
            "timestamp": apitime.format_time(ts), "window": "15s",
            "containers": [{"name": "app", "usage": {"cpu": cpu, "memory": "10Mi"}}]}


def seed_pods(client, n, cpu):
    """``n`` ready pods ``web-<i>`` and their PodMetrics, each using ``cpu``."""
    for i in range(n):
        client.seed(PODS, pod(f"web-{i}"))
        client.seed(POD_METRICS, pod_metrics(f"web-{i}", cpu))


def with_scale(client):
    """Answer GET/PUT of ``deployments/<name>/scale`` from the stored Deployments, as the apiserver does."""
    def react(action):
        if not action.path.endswith("/scale"):
            return False, None
        parts = action.path.split("/")
        ns, name = parts[parts.index("namespaces") + 1], parts[-2]
        try:
            dep = client.stored(DEPLOYMENTS, name, ns)
        except KeyError:
            raise ApiError(404, "NotFound", f'deployments.apps "{name}" not found') from None
        if action.options["method"] == "PUT":
            dep["spec"]["replicas"] = action.object["spec"]["replicas"]
        return True, {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": {"name": name, "namespace": ns},
                      "spec": {"replicas": dep["spec"]["replicas"]},
                      "status": {"replicas": dep["spec"]["replicas"], "selector": "app=web"}}
    client.prepend_reactor("request", "*", react)


@pytest.fixture
def env():
    clock = FakeClock(NOW)
    client, ctx, events = fake_context(ControllerConfig(horizontal_pod_autoscaler_sync_period=15.0), clock)
    with_scale(client)
    ctrl = HorizontalPodAutoscalerController(ctx)
    return client, ctrl, events, clock


def deployment(replicas):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}}}


def conditions(client, name="web"):
    st = client.stored(HPAS, name, "default")["status"]
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in st.get("conditions") or []}


async def test_scales_up_with_kubernetes_event_conditions_and_status(env):
    client, ctrl, events, clock = env
    client.seed(DEPLOYMENTS, deployment(1))
    client.seed(PODS, pod("web-1"))
    client.seed(POD_METRICS, pod_metrics("web-1", "1"))
    client.seed(HPAS, hpa())
    await ctrl.sync("default/web")
    assert client.stored(DEPLOYMENTS, "web", "default")["spec"]["replicas"] == 4
    assert [(e.type, e.reason, e.message) for e in events] == [
        ("Normal", "SuccessfulRescale", "New size: 4; reason: cpu resource utilization (percentage of request) "
                                        "above target")]
    assert events[0].component == "horizontal-pod-autoscaler"
    st = client.stored(HPAS, "web", "default")["status"]
    assert st["currentReplicas"] == 1 and st["desiredReplicas"] == 4
    assert st["lastScaleTime"] == apitime.format_time(NOW)
    assert st["currentMetrics"] == [{"type": "Resource", "resource": {"name": "cpu", "current": {
        "averageValue": "1", "averageUtilization": 500}}}]
    assert conditions(client) == {
        "AbleToScale": ("True", "SucceededRescale", "the HPA controller was able to update the target scale to 4"),
        "ScalingActive": ("True", "ValidMetricFound", "the HPA was able to successfully calculate a replica count "
                                                      "from cpu resource utilization (percentage of request)"),
        "ScalingLimited": ("True", "ScaleUpLimit", "the desired replica count is increasing faster than the "
                                                   "maximum scale rate")}


async def test_missing_metrics_fail_with_failed_get_resource_metric(env):
    client, ctrl, events, clock = env
    client.seed(DEPLOYMENTS, deployment(2))
    client.seed(PODS, pod("web-1"))
    client.seed(HPAS, hpa())
    await ctrl.sync("default/web")
    err = "failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from " \
          "resource metrics API"
    assert [(e.reason, e.message) for e in events] == [
        ("FailedGetResourceMetric", err),
        ("FailedComputeMetricsReplicas", f"invalid metrics (1 invalid out of 1), first error is: failed to get cpu "
                                         f"resource metric value: {err}")]
    assert conditions(client)["ScalingActive"] == (
        "False", "FailedGetResourceMetric", f"the HPA was unable to compute the replica count: {err}")
    st = client.stored(HPAS, "web", "default")["status"]
    assert st["currentReplicas"] == 2 and st["currentMetrics"] == [{"type": ""}]
    assert client.stored(DEPLOYMENTS, "web", "default")["spec"]["replicas"] == 2


async def test_scale_down_waits_for_the_stabilization_window(env):
    client, ctrl, events, clock = env
    client.seed(DEPLOYMENTS, deployment(4))
    seed_pods(client, 4, "10m")
    client.seed(HPAS, hpa())
    await ctrl.sync("default/web")
    assert client.stored(DEPLOYMENTS, "web", "default")["spec"]["replicas"] == 4
    assert conditions(client)["AbleToScale"][1] == "ScaleDownStabilized"
    assert events == []
    clock.advance(301)
    ctrl.hpas.deliver("MODIFIED", client.stored(HPAS, "web", "default"))
    await ctrl.sync("default/web")
    assert client.stored(DEPLOYMENTS, "web", "default")["spec"]["replicas"] == 1
    assert [e.message for e in events] == ["New size: 1; reason: All metrics below target"]
    assert conditions(client)["ScalingLimited"][1] == "DesiredWithinRange"


async def test_behavior_scale_down_window_and_pods_policy(env):
    client, ctrl, events, clock = env
    beh = behavior(down={"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                         "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]})
    client.seed(DEPLOYMENTS, deployment(4))
    seed_pods(client, 4, "10m")
    client.seed(HPAS, hpa(beh=beh))
    await ctrl.sync("default/web")
    assert client.stored(DEPLOYMENTS, "web", "default")["spec"]["replicas"] == 3
    assert conditions(client)["ScalingLimited"][1:] == (
        "ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate")
    clock.advance(30)
    ctrl.hpas.deliver("MODIFIED", client.stored(HPAS, "web", "default"))
    await ctrl.sync("default/web")
    assert client.stored(DEPLOYMENTS, "web", "default")["spec"]["replicas"] == 3, "1 pod per 60 s"


@pytest.mark.parametrize("replicas, mn, mx, expect, condition", [
    (0, 1, 10, 0, ("ScalingActive", ("False", "ScalingDisabled",
                                     "scaling is disabled since the replica count of the target is zero"))),
    (12, 1, 10, 10, None),
    (1, 3, 10, 3, None),
], ids=["zero-replicas-disable-scaling", "above-max", "below-min"])
async def test_replicas_out_of_range(env, replicas, mn, mx, expect, condition):
    client, ctrl, events, clock = env
    client.seed(DEPLOYMENTS, deployment(replicas))
    client.seed(HPAS, hpa(mn=mn, mx=mx))
    await ctrl.sync("default/web")
    assert client.stored(DEPLOYMENTS, "web", "default")["spec"]["replicas"] == expect
    if condition:
        assert conditions(client)[condition[0]] == condition[1]
    else:
        reason = "above Spec.MaxReplicas" if replicas > mx else "below Spec.MinReplicas"
        assert [e.message for e in events] == [f"New size: {expect}; reason: Current number of replicas {reason}"]


async def test_missing_target_is_failed_get_scale(env):
    client, ctrl, events, clock = env
    client.seed(HPAS, hpa())
    await ctrl.sync("default/web")
    assert [(e.reason, e.message) for e in events] == [("FailedGetScale", 'deployments.apps "web" not found')]
    assert conditions(client) == {"AbleToScale": (
        "False", "FailedGetScale",
        'the HPA controller was unable to get the target\'s current scale: deployments.apps "web" not found')}


async def test_average_value_target(env):
    client, ctrl, events, clock = env
    client.seed(DEPLOYMENTS, deployment(2))
    seed_pods(client, 2, "300m")
    client.seed(HPAS, hpa(metrics=[{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "AverageValue", "averageValue": "100m"}}}]))
    await ctrl.sync("default/web")
    assert client.stored(DEPLOYMENTS, "web", "default")["spec"]["replicas"] == 4
    assert events[0].message == "New size: 4; reason: cpu resource above target"
    st = client.stored(HPAS, "web", "default")["status"]
    assert st["currentMetrics"] == [{"type": "Resource", "resource": {"name": "cpu", "current": {
        "averageValue": "300m"}}}]


def test_registered_and_on_by_default():
    from components.controller_manager.manager import CONTROLLERS, select_controllers
    assert CONTROLLERS["horizontalpodautoscaling"] is HorizontalPodAutoscalerController
    assert "horizontalpodautoscaling" in select_controllers("*")
    assert REGISTRY.by_kind("PodMetrics", "metrics.k8s.io/v1beta1") is POD_METRICS


async def test_the_failed_metric_status_is_accepted_and_served_at_v1(api):
    """What the controller writes when a metric fails (a zero MetricStatus, ``{"type": ""}``, as
    Go's make([]MetricStatus, n) leaves it) is a valid status, and v1 still reads it."""
    from tests.support.apiserver import new_ns
    ns = await new_ns(api)
    body = hpa()
    body["metadata"]["namespace"] = ns
    r = await api.post(f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers", json=body)
    assert r.status == 201, await r.text()
    obj = await r.json()
    obj["status"] = {"currentReplicas": 2, "desiredReplicas": 0, "currentMetrics": [{"type": ""}], "conditions": [
        {"type": "ScalingActive", "status": "False", "lastTransitionTime": apitime.format_time(NOW),
         "reason": "FailedGetResourceMetric", "message": "the HPA was unable to compute the replica count: x"}]}
    r = await api.put(f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers/web/status", json=obj)
    assert r.status == 200, await r.text()
    assert (await r.json())["status"]["currentMetrics"] == [{"type": ""}]
    r = await api.get(f"/apis/autoscaling/v1/namespaces/{ns}/horizontalpodautoscalers/web")
    assert r.status == 200 and (await r.json())["status"]["currentReplicas"] == 2


@pytest.mark.parametrize("metric, reason, message", [
    ({"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1"}}},
     "FailedGetPodsMetric", "unable to get metric qps: unable to fetch metrics from custom metrics API: no custom "
                            "metrics API (custom.metrics.k8s.io) registered"),
    ({"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "1"}}},
     "FailedGetExternalMetric", "unable to get external metric default/queue/nil: unable to fetch metrics from "
                                "external metrics API: no external metrics API (external.metrics.k8s.io) registered"),
], ids=["pods-metric", "external-metric"])
async def test_custom_and_external_metrics_are_not_served(env, metric, reason, message):
    client, ctrl, events, clock = env
    client.seed(DEPLOYMENTS, deployment(2))
    seed_pods(client, 2, "100m")
    client.seed(HPAS, hpa(metrics=[metric]))
    await ctrl.sync("default/web")
    assert (events[0].reason, events[0].message) == (reason, message)
    assert conditions(client)["ScalingActive"] == (
        "False", reason, f"the HPA was unable to compute the replica count: {message}")
