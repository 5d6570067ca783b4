"""The kubelet's status batch and periodic pod resync (components/kubelet/pod_workers.py):
lost status writes retried, drift written back, pods in sync left alone. Driven by calling
PodWorkers.sync_batch / resync_due directly, on a FakeClock; no sleeps."""

from __future__ import annotations

import copy

import pytest

from components.kubelet.kubelet import Kubelet
from components.kubelet.node import NodeConfig
from components.kubelet.pod_workers import PodWorkers
from components.kubelet.runtime import SimulatedRuntime
from controlplane.api.resources import PODS
from controlplane.client.rest import ApiError
from controlplane.client.testing import FakeClient, FakeClock, FakeRecorder, FakeTracer


def make_pod(name="web", *, uid=None, init=None, restart="Always", command=None) -> dict:
    c: dict = {"name": "c", "image": "nginx:1.25", "imagePullPolicy": "IfNotPresent"}
    if command:
        c["command"] = command
    spec: dict = {"nodeName": "node01", "restartPolicy": restart, "containers": [c]}
    if init:
        spec["initContainers"] = init
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": uid or f"uid-{name}",
                         "resourceVersion": "5"},
            "spec": spec,
            "status": {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"}]}}


@pytest.fixture
def env():
    clock = FakeClock(1000.0)
    client = FakeClient()
    rt = SimulatedRuntime("node01", "10.244.1.0/24", image_pull_seconds=0.0, container_start_seconds=0.0,
                          clock=clock)
    w = PodWorkers(client, "node01", "192.168.0.101", rt, FakeRecorder(), FakeTracer(), sync_frequency=60.0)
    yield client, clock, rt, w


def live(client: FakeClient, name: str = "web") -> dict:
    return client.stored(PODS, name, "default")


def status_patches(client: FakeClient) -> list[dict]:
    return [a.patch["status"] for a in client.actions("patch", "pods")]


async def start(client: FakeClient, w: PodWorkers, pod: dict) -> dict:
    client.seed(PODS, pod)
    w.update_pod(copy.deepcopy(live(client, pod["metadata"]["name"])))
    await w.wait_idle()
    return live(client, pod["metadata"]["name"])


def phase(pod: dict) -> str:
    return pod["status"]["phase"]


async def test_status_write_answered_409_is_retried_by_the_batch_and_lands(env):
    client, clock, rt, w = env
    failing = client.fail("patch", "pods", ApiError(409, "Conflict", "the object has been modified"),
                          subresource="status")
    pod = await start(client, w, make_pod())
    assert status_patches(client) and phase(pod) == "Pending"   # every write was refused
    assert w.unsynced() == 1
    client.remove_reactor(failing)
    client.clear_actions()
    assert await w.sync_batch() == 1
    # syncPod: a GET of the pod, then the write against that fresh copy
    assert [a.verb for a in client.actions()] == ["get", "patch"]
    assert phase(live(client)) == "Running"
    assert w.unsynced() == 0
    client.clear_actions()
    assert await w.sync_batch() == 0 and client.actions() == []


async def test_status_write_failing_in_the_batch_stays_for_the_next_batch(env):
    client, clock, rt, w = env
    refused = client.fail("patch", "pods", ApiError(409, "Conflict", "conflict"), subresource="status")
    await start(client, w, make_pod())
    client.remove_reactor(refused)
    down = client.fail("patch", "pods", ApiError(500, "InternalError", "etcd is down"), subresource="status")
    assert await w.sync_batch() == 0
    assert w.unsynced() == 1
    client.remove_reactor(down)
    assert await w.sync_batch() == 1
    assert phase(live(client)) == "Running" and w.unsynced() == 0


async def test_status_write_failing_with_500_is_retried_by_the_worker_not_the_batch(env):
    client, clock, rt, w = env
    client.fail("patch", "pods", ApiError(500, "InternalError", "etcd is down"), times=1, subresource="status")
    client.seed(PODS, make_pod())
    w.update_pod(copy.deepcopy(live(client)))
    # the failed sync runs again (pod_workers' 1 s retry) and its write lands
    await client.wait_for(lambda: phase(live(client)) == "Running")
    await w.wait_idle()
    assert w.unsynced() == 0
    client.clear_actions()
    assert await w.sync_batch() == 0 and client.actions() == []


async def test_status_write_answered_404_drops_the_cached_status(env):
    client, clock, rt, w = env
    client.fail("patch", "pods", ApiError(404, "NotFound", 'pods "web" not found'), subresource="status")
    await start(client, w, make_pod())
    assert w.unsynced() == 1
    del client.objects[(PODS, "default/web")]     # gone from the apiserver, the informer not told yet
    client.clear_actions()
    assert await w.sync_batch() == 0
    assert [a.verb for a in client.actions()] == ["get"]
    assert w.unsynced() == 0
    client.clear_actions()
    assert await w.sync_batch() == 0 and client.actions() == []


async def test_pod_recreated_under_the_same_name_is_not_written_by_the_batch(env):
    client, clock, rt, w = env
    failing = client.fail("patch", "pods", ApiError(409, "Conflict", "Precondition failed: UID"),
                          subresource="status")
    await start(client, w, make_pod())
    client.remove_reactor(failing)
    del client.objects[(PODS, "default/web")]
    client.seed(PODS, make_pod(uid="uid-other"))
    client.clear_actions()
    assert await w.sync_batch() == 0
    assert [a.verb for a in client.actions()] == ["get"]     # no write to the other pod
    assert w.unsynced() == 0 and phase(live(client)) == "Pending"


async def test_status_overwritten_while_the_worker_is_busy_is_put_back_by_the_batch(env):
    client, clock, rt, w = env
    pod = make_pod(init=[{"name": "wait", "image": "busybox", "command": ["sh", "-c", "sleep 3600"]}])
    client.seed(PODS, pod)
    w.update_pod(copy.deepcopy(live(client)))
    await client.wait_for(lambda: "running" in (
        (live(client)["status"].get("initContainerStatuses") or [{}])[0].get("state") or {}))
    mine = copy.deepcopy(live(client)["status"])
    # another writer replaces the status (e.g. a client's PUT of /status)
    live(client)["status"] = {"phase": "Unknown", "conditions": []}
    client.bump(live(client))
    client.clear_actions()
    w.update_pod(copy.deepcopy(live(client)))     # the informer's MODIFIED; the worker is in the init run
    assert client.actions() == []
    assert await w.sync_batch() == 1
    assert [a.verb for a in client.actions()] == ["patch"]   # the informer's copy is compared: no GET
    back = live(client)["status"]
    assert back["phase"] == "Pending" and back["initContainerStatuses"] == mine["initContainerStatuses"]
    client.clear_actions()
    assert await w.sync_batch() == 0 and client.actions() == []
    await w.stop()


async def test_pods_in_sync_cause_no_request_in_the_batch(env):
    client, clock, rt, w = env
    for name in ("a", "b", "c"):
        await start(client, w, make_pod(name))
    # the informer delivers the kubelet's own writes back
    for name in ("a", "b", "c"):
        w.update_pod(copy.deepcopy(live(client, name)))
    await w.wait_idle()
    client.clear_actions()
    assert w.unsynced() == 0
    assert await w.sync_batch() == 0
    assert client.actions() == []


async def test_periodic_resync_looks_at_a_pod_again_after_sync_frequency(env):
    client, clock, rt, w = env
    await start(client, w, make_pod())
    assert w.resync_due() == 0
    # the container exited without the kubelet being told (a lost exit event)
    c = rt.sandbox("uid-web").get("c", False)
    rt.exit_container(c, 1)
    clock.advance(59.0)
    assert w.resync_due() == 0                    # not yet: sync_frequency is 60 s
    clock.advance(60.0 * 0.5 + 1.0)               # past the longest jitter
    assert w.resync_due() == 1
    await w.wait_idle()
    cs = live(client)["status"]["containerStatuses"][0]
    assert cs["restartCount"] == 1 and "running" in cs["state"]   # restarted (Always)
    assert w.resync_due() == 0                    # the next one is a sync_frequency away again
    await w.stop()


async def test_finished_pods_get_no_periodic_resync(env):
    client, clock, rt, w = env
    await start(client, w, make_pod(restart="Never", command=["sh", "-c", "exit 0"]))
    await client.wait_for(lambda: phase(live(client)) == "Succeeded")
    await w.wait_idle()
    client.clear_actions()
    clock.advance(1000.0)
    assert w.resync_due() == 0


async def test_sync_statuses_batches_only_the_nodes_out_of_sync():
    client = FakeClient()
    kubelet = Kubelet(client, [NodeConfig(name="hollow-0", index=100), NodeConfig(name="hollow-1", index=101)],
                      trace=False)
    clock = FakeClock()
    for name in ("hollow-0", "hollow-1"):
        rt = SimulatedRuntime(name, "10.244.1.0/24", 0.0, 0.0, clock=clock)
        kubelet.workers[name] = PodWorkers(client, name, "192.168.0.1", rt, FakeRecorder())
    failing = client.fail("patch", "pods", ApiError(409, "Conflict", "conflict"), subresource="status")
    w0 = kubelet.workers["hollow-0"]
    pod = make_pod()
    pod["spec"]["nodeName"] = "hollow-0"
    await start(client, w0, pod)
    client.remove_reactor(failing)
    assert await kubelet.sync_statuses() == 1
    assert phase(live(client)) == "Running"
    assert (w0.batch_gets, w0.batch_writes) == (1, 1)
    client.clear_actions()
    assert await kubelet.sync_statuses() == 0 and client.actions() == []
