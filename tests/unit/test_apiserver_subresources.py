"""pods/eviction, pods/log (synthesized), dryRun on /scale and bindings."""

from __future__ import annotations

import pytest

from controlplane.storage import testing
from tests.support.apiserver import new_ns

pytestmark = pytest.mark.skipif(not testing.available(), reason="needs /usr/bin/etcd")


async def create_pod(api, ns, name, containers=("c",)) -> dict:
    r = await api.post(f"/api/v1/namespaces/{ns}/pods", json={
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": c, "image": "nginx:1.27"} for c in containers]}})
    assert r.status == 201, await r.text()
    return await r.json()


def eviction(name, ns, **delete_options):
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": ns}}
    if delete_options:
        body["deleteOptions"] = delete_options
    return body


async def test_eviction_deletes_the_pod(api):
    ns = await new_ns(api)
    await create_pod(api, ns, "a")
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/a/eviction?dryRun=All", json=eviction("a", ns))
    assert r.status == 201
    assert (await api.get(f"/api/v1/namespaces/{ns}/pods/a")).status == 200     # dry run: still there
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/a/eviction", json=eviction("a", ns))
    body = await r.json()
    assert r.status == 201 and body["kind"] == "Status" and body["status"] == "Success"
    assert (await api.get(f"/api/v1/namespaces/{ns}/pods/a")).status == 404    # unscheduled: no grace
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/a/eviction", json=eviction("a", ns))
    assert r.status == 404 and (await r.json())["reason"] == "NotFound"
    await create_pod(api, ns, "b")
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/b/eviction", json=eviction("other", ns))
    assert r.status == 400
    assert (await r.json())["message"] == "name in URL does not match name in Eviction object"
    r = await api.get(f"/api/v1/namespaces/{ns}/pods/b/eviction")
    assert r.status == 405


async def test_eviction_of_a_bound_pod_is_graceful(api):
    ns = await new_ns(api)
    await create_pod(api, ns, "a")
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/a/binding", json={
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"}, "target": {"kind": "Node", "name": "n1"}})
    assert r.status == 201
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/a/eviction", json=eviction("a", ns, gracePeriodSeconds=7))
    assert r.status == 201
    pod = await (await api.get(f"/api/v1/namespaces/{ns}/pods/a")).json()
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 7 and pod["metadata"]["deletionTimestamp"]


async def test_pod_log_is_synthesized_from_container_statuses(api):
    ns = await new_ns(api)
    pod = await create_pod(api, ns, "a")
    r = await api.get(f"/api/v1/namespaces/{ns}/pods/a/log")
    assert r.status == 400
    assert (await r.json())["message"] == 'container "c" in pod "a" is waiting to start: ContainerCreating'
    pod["spec"]["nodeName"] = "n1"
    pod["status"] = {"phase": "Running", "containerStatuses": [{
        "name": "c", "image": "nginx:1.27", "ready": True, "restartCount": 1, "containerID": "sim://abc",
        "state": {"running": {"startedAt": "2026-01-01T00:00:05Z"}},
        "lastState": {"terminated": {"exitCode": 137, "reason": "Error", "startedAt": "2026-01-01T00:00:00Z",
                                     "finishedAt": "2026-01-01T00:00:04Z"}}}]}
    r = await api.put(f"/api/v1/namespaces/{ns}/pods/a/status", json=pod)
    assert r.status == 200, await r.text()
    r = await api.get(f"/api/v1/namespaces/{ns}/pods/a/log?timestamps=true")
    text = await r.text()
    assert r.status == 200 and r.content_type == "text/plain"
    assert text.startswith('2026-01-01T00:00:05Z container "c" started: image "nginx:1.27", containerID "sim://abc"')
    r = await api.get(f"/api/v1/namespaces/{ns}/pods/a/log?previous=true")
    prev = (await r.text()).splitlines()
    assert prev[-1] == 'container "c" terminated: exitCode 137, reason Error'
    r = await api.get(f"/api/v1/namespaces/{ns}/pods/a/log?previous=true&tailLines=1")
    assert (await r.text()).splitlines() == prev[-1:]
    r = await api.get(f"/api/v1/namespaces/{ns}/pods/a/log?container=nope")
    assert r.status == 400 and (await r.json())["message"] == "container nope is not valid for pod a"
    await create_pod(api, ns, "two", containers=("x", "y"))
    r = await api.get(f"/api/v1/namespaces/{ns}/pods/two/log")
    assert (await r.json())["message"] == "a container name must be specified for pod two, choose one of: [x y]"


async def test_dry_run_scale_and_binding_do_not_write(api):
    ns = await new_ns(api)
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
                    "template": {"metadata": {"labels": {"app": "d"}},
                                 "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    assert (await api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=dep)).status == 201
    r = await api.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/d/scale?dryRun=All",
                        json={"spec": {"replicas": 5}}, headers={"Content-Type": "application/merge-patch+json"})
    assert r.status == 200 and (await r.json())["spec"]["replicas"] == 5        # what it would be
    got = await (await api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/d")).json()
    assert got["spec"]["replicas"] == 1                                           # not written
    await create_pod(api, ns, "p")
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/p/binding?dryRun=All", json={
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}})
    assert r.status == 201
    pod = await (await api.get(f"/api/v1/namespaces/{ns}/pods/p")).json()
    assert not pod["spec"].get("nodeName")


@pytest.mark.parametrize("sub", ["exec", "attach", "portforward"])
async def test_streaming_subresources_say_why_they_are_not_available(api, sub):
    """pods/exec, attach and portforward exist (discovery lists them, as Kubernetes does) but
    answer 400 BadRequest with a Status that says why — kubectl prints it as
    ``Error from server (BadRequest): pods/exec is not available …`` — and 404 for a missing pod."""
    ns = await new_ns(api)
    await create_pod(api, ns, "a")
    for method in (api.post, api.get):
        r = await method(f"/api/v1/namespaces/{ns}/pods/a/{sub}?command=ls&container=c")
        body = await r.json()
        assert r.status == 400 and body["kind"] == "Status" and body["reason"] == "BadRequest"
        assert body["message"].startswith(f"pods/{sub} is not available in controlplane: the container runtime is simulated")
    r = await api.post(f"/api/v1/namespaces/{ns}/pods/nope/{sub}")
    assert r.status == 404 and (await r.json())["reason"] == "NotFound"
    disc = await (await api.get("/api/v1")).json()
    assert f"pods/{sub}" in [x["name"] for x in disc["resources"]]
