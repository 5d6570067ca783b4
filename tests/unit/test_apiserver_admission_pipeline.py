"""Admission through the in-process apiserver (registrystore's create/update/delete
pipeline), pods/eviction with PodDisruptionBudgets (pkg/registry/core/pod/storage/eviction.go)
and the system PriorityClasses (pkg/registry/scheduling/rest/storage_scheduling.go)."""

from __future__ import annotations

import pytest

from controlplane.storage import testing
from tests.support.apiserver import new_ns

pytestmark = pytest.mark.skipif(not testing.available(), reason="needs /usr/bin/etcd")

PC = "/apis/scheduling.k8s.io/v1/priorityclasses"


async def create(api, path, obj, status=201) -> dict:
    r = await api.post(path, json=obj)
    body = await r.json()
    assert r.status == status, body
    return body


def pod_obj(name, labels=None, **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}], **spec}}


async def running_pod(api, ns, name, labels=None) -> dict:
    """A pod bound to n1 whose status says Running and Ready (as its kubelet would write)."""
    p = await create(api, f"/api/v1/namespaces/{ns}/pods", pod_obj(name, labels))
    await create(api, f"/api/v1/namespaces/{ns}/pods/{name}/binding", {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": {"kind": "Node", "name": "n1"}})
    cur = await (await api.get(f"/api/v1/namespaces/{ns}/pods/{name}")).json()
    cur["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    r = await api.put(f"/api/v1/namespaces/{ns}/pods/{name}/status", json=cur)
    assert r.status == 200, await r.text()
    return p


async def pdb(api, ns, name, status=None, **spec) -> dict:
    obj = await create(api, f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}})
    assert obj["status"] == {"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0}
    assert obj["metadata"]["generation"] == 1
    if status is not None:
        obj["status"] = status
        r = await api.put(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/{name}/status", json=obj)
        assert r.status == 200, await r.text()
        obj = await r.json()
    return obj


def eviction(name):
    return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}


async def test_created_pod_passes_the_admission_chain(api):
    ns = await new_ns(api)
    p = await create(api, f"/api/v1/namespaces/{ns}/pods", pod_obj("a"))
    s = p["spec"]
    assert s["serviceAccountName"] == "default" and s["priority"] == 0
    assert s["preemptionPolicy"] == "PreemptLowerPriority"
    assert [t["key"] for t in s["tolerations"]] == ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]
    assert s["volumes"][0]["name"].startswith("kube-api-access-")
    assert s["containers"][0]["volumeMounts"][0]["mountPath"] == "/var/run/secrets/kubernetes.io/serviceaccount"
    # an update keeps them (the pod spec is immutable): labels only
    p["metadata"]["labels"] = {"x": "y"}
    r = await api.put(f"/api/v1/namespaces/{ns}/pods/a", json=p)
    assert r.status == 200, await r.text()
    assert (await r.json())["spec"]["volumes"] == s["volumes"]


async def test_qos_class_sees_limit_range_defaults(api):
    ns = await new_ns(api)
    await create(api, f"/api/v1/namespaces/{ns}/limitranges", {
        "apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr"},
        "spec": {"limits": [{"type": "Container", "default": {"cpu": "1", "memory": "1Gi"}}]}})
    p = await create(api, f"/api/v1/namespaces/{ns}/pods", pod_obj("a"))
    assert p["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "1", "memory": "1Gi"},
                                                       "requests": {"cpu": "1", "memory": "1Gi"}}
    assert p["status"]["qosClass"] == "Guaranteed"


async def test_missing_namespace_is_404_after_validation(api):
    r = await api.post("/api/v1/namespaces/nope-ns/pods", json=pod_obj("a"))
    assert r.status == 404 and (await r.json())["message"] == 'namespaces "nope-ns" not found'
    r = await api.post("/api/v1/namespaces/nope-ns/pods", json=pod_obj("a", containers=[{"name": "c"}]))
    assert r.status == 422   # validation comes first, as before admission moved into plugins


async def test_system_priority_classes_exist_and_are_not_deleted(api):
    body = await (await api.get(f"{PC}/system-cluster-critical")).json()
    assert (body["value"], body["preemptionPolicy"], body["globalDefault"]) == (2000000000, "PreemptLowerPriority",
                                                                               False)
    r = await api.delete(f"{PC}/system-node-critical")
    assert r.status == 403
    assert (await r.json())["message"] == ('priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: '
                                           "this is a system priority class and cannot be deleted")
    r = await api.post(PC, json={"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                 "metadata": {"name": "system-mine"}, "value": 5})
    assert r.status == 422
    assert "priority class names with 'system-' prefix are reserved for system use only" in (await r.json())["message"]


async def test_pod_priority_from_a_class_created_just_before(api):
    ns = await new_ns(api)
    await create(api, PC, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                           "metadata": {"name": f"p-{ns}"}, "value": 42})
    p = await create(api, f"/api/v1/namespaces/{ns}/pods", pod_obj("a", priorityClassName=f"p-{ns}"))
    assert p["spec"]["priority"] == 42
    await api.delete(f"{PC}/p-{ns}")


async def test_quota_status_charged_by_admission(api):
    ns = await new_ns(api)
    await create(api, f"/api/v1/namespaces/{ns}/resourcequotas", {
        "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"}, "spec": {"hard": {"pods": "1"}}})
    await create(api, f"/api/v1/namespaces/{ns}/pods", pod_obj("a"))
    q = await (await api.get(f"/api/v1/namespaces/{ns}/resourcequotas/q")).json()
    assert q["status"] == {"hard": {"pods": "1"}, "used": {"pods": "1"}}
    body = await create(api, f"/api/v1/namespaces/{ns}/pods", pod_obj("b"), status=403)
    assert body["message"] == ('pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, '
                               "limited: pods=1")


async def test_eviction_blocked_by_budget(api):
    ns = await new_ns(api)
    await running_pod(api, ns, "web-1", {"app": "web"})
    await pdb(api, ns, "web", {"observedGeneration": 1, "currentHealthy": 1, "desiredHealthy": 1,
                               "disruptionsAllowed": 0, "expectedPods": 1}, minAvailable=1)
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/web-1/eviction", json=eviction("web-1"))
    assert r.status == 429
    assert await r.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Cannot evict pod as it would violate the pod's disruption budget.", "reason": "TooManyRequests",
        "details": {"causes": [{"reason": "DisruptionBudget",
                                "message": "The disruption budget web needs 1 healthy pods and has 1 currently"}]},
        "code": 429}
    assert (await api.get(f"/api/v1/namespaces/{ns}/pods/web-1")).status == 200


async def test_eviction_consumes_a_disruption(api):
    ns = await new_ns(api)
    await running_pod(api, ns, "web-1", {"app": "web"})
    await pdb(api, ns, "web", {"observedGeneration": 1, "currentHealthy": 2, "desiredHealthy": 1,
                               "disruptionsAllowed": 1, "expectedPods": 2}, minAvailable=1)
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/web-1/eviction?dryRun=All", json=eviction("web-1"))
    assert r.status == 201
    st = (await (await api.get(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/web")).json())["status"]
    assert st["disruptionsAllowed"] == 1 and "disruptedPods" not in st    # dry run: nothing written
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/web-1/eviction", json=eviction("web-1"))
    assert r.status == 201
    st = (await (await api.get(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/web")).json())["status"]
    assert st["disruptionsAllowed"] == 0 and list(st["disruptedPods"]) == ["web-1"]
    assert [c["reason"] for c in st["conditions"]] == ["InsufficientPods"]


async def test_eviction_waits_for_the_budget_to_be_processed(api):
    ns = await new_ns(api)
    await running_pod(api, ns, "web-1", {"app": "web"})
    await pdb(api, ns, "web", minAvailable=1)
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/web-1/eviction", json=eviction("web-1"))
    body = await r.json()
    assert r.status == 429 and body["details"]["causes"][0]["message"] == \
        "The disruption budget web is still being processed by the server."


async def test_eviction_with_two_budgets_is_an_error(api):
    ns = await new_ns(api)
    await running_pod(api, ns, "web-1", {"app": "web"})
    await pdb(api, ns, "a", minAvailable=1)
    await pdb(api, ns, "b", maxUnavailable=1)
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/web-1/eviction", json=eviction("web-1"))
    assert r.status == 500
    assert (await r.json())["message"] == ("This pod has more than one PodDisruptionBudget, which the eviction "
                                           "subresource does not support.")


async def test_eviction_of_a_pending_pod_ignores_budgets(api):
    ns = await new_ns(api)
    await create(api, f"/api/v1/namespaces/{ns}/pods", pod_obj("web-1", {"app": "web"}))
    await pdb(api, ns, "web", minAvailable=1)
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/web-1/eviction", json=eviction("web-1"))
    assert r.status == 201
