"""The new API groups through the apiserver: Jobs' generated selector and status subresource,
the create-only reviews (never stored), and HorizontalPodAutoscalers served at v1 and v2 from one storage."""

from __future__ import annotations

import json

import pytest

from controlplane.api.groups import authorization
from controlplane.storage import testing
from tests.support.apiserver import new_ns, read_events

pytestmark = pytest.mark.skipif(not testing.available(), reason="needs /usr/bin/etcd")

MERGE = {"Content-Type": "application/merge-patch+json"}




def job(name="pi", **spec):
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}],
                                           "restartPolicy": "Never"}}, **spec}}


async def test_job_create_generates_selector_and_keeps_status(api):
    ns = await new_ns(api)
    r = await api.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json={**job(), "status": {"succeeded": 3}})
    assert r.status == 201, await r.text()
    j = await r.json()
    uid = j["metadata"]["uid"]
    assert j["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert j["spec"]["template"]["metadata"]["labels"]["job-name"] == "pi"
    assert j["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == uid
    assert j["metadata"]["generation"] == 1 and j["status"] == {} and j["spec"]["backoffLimit"] == 6
    # status is written through /status only; a spec change bumps the generation
    r = await api.patch(f"/apis/batch/v1/namespaces/{ns}/jobs/pi/status", json={"status": {"active": 1}},
                        headers=MERGE)
    assert r.status == 200 and (await r.json())["status"] == {"active": 1}
    r = await api.patch(f"/apis/batch/v1/namespaces/{ns}/jobs/pi", json={"spec": {"parallelism": 2},
                                                                         "status": {"active": 9}}, headers=MERGE)
    body = await r.json()
    assert r.status == 200 and body["status"] == {"active": 1} and body["metadata"]["generation"] == 2
    r = await api.patch(f"/apis/batch/v1/namespaces/{ns}/jobs/pi", json={"spec": {"completions": 4}},
                        headers=MERGE)
    assert r.status == 422 and "spec.completions: Invalid value: 4: field is immutable" in (await r.json())["message"]
    r = await api.get(f"/apis/batch/v1/namespaces/{ns}/jobs?fieldSelector=status.successful%3D0")
    assert [i["metadata"]["name"] for i in (await r.json())["items"]] == ["pi"]


async def test_job_with_restart_always_is_invalid(api):
    ns = await new_ns(api)
    bad = job()
    bad["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    r = await api.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json=bad)
    body = await r.json()
    assert r.status == 422 and body["details"]["group"] == "batch" and body["details"]["kind"] == "Job"
    assert body["message"] == ('Job.batch "pi" is invalid: spec.template.spec.restartPolicy: Unsupported value: '
                               '"Always": supported values: "OnFailure", "Never"')


async def test_cronjob_invalid_schedule(api):
    ns = await new_ns(api)
    cj = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
          "spec": {"schedule": "61 * * * *", "jobTemplate": job()["spec"] and {"spec": job()["spec"]}}}
    r = await api.post(f"/apis/batch/v1/namespaces/{ns}/cronjobs", json=cj)
    body = await r.json()
    assert r.status == 422 and body["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "message": 'Invalid value: "61 * * * *": end of range (61) above maximum '
                                                  "(59): 61", "field": "spec.schedule"}]


SSAR = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "create", "resource": "pods", "namespace": "default"}}}


async def test_access_reviews_are_answered_and_never_stored(api):
    r = await api.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json=SSAR)
    assert r.status == 201
    body = await r.json()
    assert body["status"] == {"allowed": True, "reason": authorization.ALLOW_REASON}
    assert body["spec"] == SSAR["spec"] and body["kind"] == "SelfSubjectAccessReview"
    for method in ("get", "delete"):
        r = await getattr(api, method)("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
        assert r.status == 405
    r = await api.get("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews/x")
    assert r.status == 405
    assert api.server_obj.cache_for(__import__("controlplane.api.resources", fromlist=["get"]).get(
        "selfsubjectaccessreviews", "authorization.k8s.io")) is None
    keys = await api.server_obj.store.list("/registry/selfsubjectaccessreviews/")
    assert keys.items == []


@pytest.mark.parametrize("path, body, status, message", [
    ("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
     {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {}}, 422,
     'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": '
     "exactly one of nonResourceAttributes or resourceAttributes must be specified"),
    ("/apis/authorization.k8s.io/v1/subjectaccessreviews",
     {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
      "spec": {"nonResourceAttributes": {"path": "/healthz", "verb": "get"}}}, 422,
     'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user '
     "or group must be specified"),
    ("/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews",
     {"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
      "spec": {"user": "u", "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "other"}}}, 422,
     'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid '
     'value: "other": must match metadata.namespace'),
    ("/apis/authentication.k8s.io/v1/tokenreviews",
     {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {}}, 400,
     "token is required for TokenReview in authentication.k8s.io"),
    ("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
     {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {}}, 400,
     "no namespace on request"),
], ids=["ssar-no-attributes", "sar-no-user", "lsar-namespace", "token-required", "rules-no-namespace"])
async def test_review_errors(api, path, body, status, message):
    r = await api.post(path, json=body)
    assert r.status == status
    assert (await r.json())["message"] == message


async def test_local_and_rules_and_token_reviews(api):
    r = await api.post("/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews", json={
        "apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
        "spec": {"user": "u", "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "default"}}})
    body = await r.json()
    assert r.status == 201 and body["status"]["allowed"] is True and body["metadata"]["namespace"] == "default"
    r = await api.post("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", json={
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": "default"}})
    assert (await r.json())["status"] == {
        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False}
    r = await api.post("/apis/authentication.k8s.io/v1/tokenreviews", json={
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "abc"}})
    # the token authenticators answer (issue 13): a token none of them knows is an invalid bearer token
    assert r.status == 201 and (await r.json())["status"] == {"user": {}, "error": "invalid bearer token"}


@pytest.mark.parametrize("headers, user", [
    ({}, {"username": "system:anonymous", "groups": ["system:unauthenticated"]}),
    ({"Impersonate-User": "alice"}, {"username": "alice", "groups": ["system:authenticated"]}),
    ({"Impersonate-User": "bob", "Impersonate-Group": "devs", "Impersonate-Uid": "42"},
     {"username": "bob", "uid": "42", "groups": ["devs", "system:authenticated"]}),
], ids=["anonymous", "impersonated", "impersonated-with-group"])
async def test_self_subject_review_answers_the_requesting_user(api, headers, user):
    r = await api.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", headers=headers, json={
        "apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview", "metadata": {"creationTimestamp": None}})
    assert r.status == 201
    assert (await r.json())["status"] == {"userInfo": user}


HPA_V1 = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
          "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                   "minReplicas": 2, "maxReplicas": 5, "targetCPUUtilizationPercentage": 70}}


async def test_hpa_one_storage_two_versions(api):
    ns = await new_ns(api)
    v1 = f"/apis/autoscaling/v1/namespaces/{ns}/horizontalpodautoscalers"
    v2 = f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers"
    w = await api.get(f"{v1}?watch=1&resourceVersion=0")
    r = await api.post(v1, json=HPA_V1)
    created = await r.json()
    assert r.status == 201 and created["apiVersion"] == "autoscaling/v1"
    assert created["spec"]["targetCPUUtilizationPercentage"] == 70 and "metrics" not in created["spec"]
    assert [m["apiVersion"] for m in created["metadata"]["managedFields"]] == ["autoscaling/v1"]
    assert created["status"] == {"currentReplicas": 0, "desiredReplicas": 0}
    [ev] = await read_events(w, 1)
    assert ev["type"] == "ADDED" and ev["object"]["apiVersion"] == "autoscaling/v1"
    assert ev["object"]["spec"]["targetCPUUtilizationPercentage"] == 70
    w.close()
    got = await (await api.get(f"{v2}/web")).json()
    assert got["status"] == {"currentMetrics": None, "desiredReplicas": 0}
    assert got["apiVersion"] == "autoscaling/v2" and got["spec"]["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]
    # a v2-only field, written at v2, survives in an annotation at v1 and comes back
    r = await api.patch(f"{v2}/web", headers=MERGE, json={"spec": {"behavior": {"scaleDown": {
        "stabilizationWindowSeconds": 30}}}})
    assert r.status == 200, await r.text()
    at_v1 = await (await api.get(f"{v1}/web")).json()
    ann = at_v1["metadata"]["annotations"]
    assert json.loads(ann["autoscaling.alpha.kubernetes.io/behavior"])["scaleDown"]["stabilizationWindowSeconds"] == 30
    at_v1["spec"]["maxReplicas"] = 8
    r = await api.put(f"{v1}/web", json=at_v1)
    assert r.status == 200, await r.text()
    got = await (await api.get(f"{v2}/web")).json()
    assert got["spec"]["maxReplicas"] == 8 and got["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 30
    assert "annotations" not in got["metadata"]
    r = await api.patch(f"{v1}/web", headers=MERGE, json={"spec": {"targetCPUUtilizationPercentage": 50}})
    assert r.status == 200 and (await r.json())["spec"]["targetCPUUtilizationPercentage"] == 50
    lst = await (await api.get(v1)).json()
    assert lst["apiVersion"] == "autoscaling/v1" and [i["apiVersion"] for i in lst["items"]] == ["autoscaling/v1"]
    table = await (await api.get(v1, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})).json()
    assert table["rows"][0]["cells"][:6] == ["web", "Deployment/web", "cpu: <unknown>/50%", "2", 8, 0]
    r = await api.post(v1, json={**HPA_V1, "spec": {**HPA_V1["spec"], "maxReplicas": 1}})
    assert r.status == 422 and (await r.json())["message"] == (
        'HorizontalPodAutoscaler.autoscaling "web" is invalid: spec.maxReplicas: Invalid value: 1: must be greater '
        "than or equal to `minReplicas`")
    r = await api.delete(f"{v1}/web")
    assert r.status == 200 and (await r.json())["apiVersion"] == "autoscaling/v1"
    assert (await api.get(f"{v2}/web")).status == 404


async def test_discovery_lists_both_hpa_versions(api):
    groups = (await (await api.get("/apis")).json())["groups"]
    [g] = [g for g in groups if g["name"] == "autoscaling"]
    assert [v["version"] for v in g["versions"]] == ["v2", "v1"] and g["preferredVersion"]["version"] == "v2"
    hashes = set()
    for v in ("v1", "v2"):
        rl = await (await api.get(f"/apis/autoscaling/{v}")).json()
        [hpa] = [e for e in rl["resources"] if e["name"] == "horizontalpodautoscalers"]
        hashes.add(hpa["storageVersionHash"])
        assert hpa["shortNames"] == ["hpa"] and hpa["categories"] == ["all"]
        assert any(e["name"] == "horizontalpodautoscalers/status" for e in rl["resources"])
    assert len(hashes) == 1  # one storage
    rl = await (await api.get("/apis/authorization.k8s.io/v1")).json()
    assert not any("storageVersionHash" in e for e in rl["resources"])  # never stored
    assert {e["name"]: e["verbs"] for e in rl["resources"]} == {
        "localsubjectaccessreviews": ["create"], "selfsubjectaccessreviews": ["create"],
        "selfsubjectrulesreviews": ["create"], "subjectaccessreviews": ["create"]}
