"""Kubelet pod lifecycle on the simulated runtime, against an in-memory fake apiserver."""

from __future__ import annotations

import copy
import re

import pytest

from components.kubelet.pod_workers import PodWorkers
from components.kubelet.runtime import SimulatedRuntime
from controlplane.api.resources import PODS
from controlplane.client.testing import FakeClient, FakeRecorder, FakeTracer


def status_patches(client: FakeClient) -> list[dict]:
    """The ``status`` of every pod patch sent, oldest first."""
    return [a.patch["status"] for a in client.actions("patch", "pods")]


def deletes(client: FakeClient) -> list[tuple[str, dict]]:
    """``(name, {"grace": gracePeriodSeconds, "pre": preconditions})`` of every pod DELETE sent."""
    return [(a.name, {"grace": a.options.get("gracePeriodSeconds"), "pre": a.options.get("preconditions")})
            for a in client.actions("delete", "pods")]


def live(client: FakeClient, name: str) -> dict:
    """The stored pod (not a copy)."""
    return client.stored(PODS, name, "default")


def make_pod(name="web", *, containers=None, init=None, restart="Always", uid=None, status=None,
             annotations=None) -> dict:
    spec = {"nodeName": "node01", "restartPolicy": restart,
            "containers": containers or [{"name": "nginx", "image": "nginx:1.25",
                                          "imagePullPolicy": "IfNotPresent"}]}
    if init:
        spec["initContainers"] = init
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": uid or f"uid-{name}",
                         "resourceVersion": "5", "annotations": annotations or {}},
            "spec": spec,
            "status": status or {"phase": "Pending", "qosClass": "BestEffort", "conditions": [
                {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                 "lastTransitionTime": "2025-01-01T00:00:00Z"}]}}


@pytest.fixture
def env():
    client, rec, tr = FakeClient(), FakeRecorder(), FakeTracer()
    rt = SimulatedRuntime("node01", "10.244.1.0/24", image_pull_seconds=0.01, container_start_seconds=0.0)
    w = PodWorkers(client, "node01", "192.168.0.101", rt, rec, tr, backoff_base=0.05, backoff_max=0.2)
    yield client, rec, tr, rt, w
    # the kubelet writes a pod only through merge patches of its status
    assert all(a.subresource == "status" and a.patch_type == "merge" for a in client.actions("patch"))


async def start(env, pod):
    client, rec, tr, rt, w = env
    client.seed(PODS, pod)
    w.update_pod(copy.deepcopy(pod))
    await w.wait_idle()
    return live(client, pod["metadata"]["name"])


async def test_running_pod_status_events_and_trace(env):
    client, rec, tr, rt, w = env
    pod = await start(env, make_pod(containers=[
        {"name": "a", "image": "soscscs/myapp:v1", "imagePullPolicy": "IfNotPresent"},
        {"name": "b", "image": "nginx", "imagePullPolicy": "Always"}]))
    st = pod["status"]
    assert st["phase"] == "Running"
    assert st["hostIP"] == "192.168.0.101" and st["hostIPs"] == [{"ip": "192.168.0.101"}]
    assert st["podIP"] == "10.244.1.2" and st["podIPs"] == [{"ip": "10.244.1.2"}]
    assert st["startTime"] and st["qosClass"] == "BestEffort"
    conds = {c["type"]: c for c in st["conditions"]}
    assert [c["type"] for c in st["conditions"]] == [
        "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
    assert all(c["status"] == "True" for c in st["conditions"])
    assert conds["PodScheduled"]["lastTransitionTime"] == "2025-01-01T00:00:00Z"
    cs = {c["name"]: c for c in st["containerStatuses"]}
    assert cs["a"]["image"] == "docker.io/soscscs/myapp:v1"
    assert re.fullmatch(r"docker\.io/soscscs/myapp@sha256:[0-9a-f]{64}", cs["a"]["imageID"])
    assert re.fullmatch(r"containerd://[0-9a-f]{64}", cs["a"]["containerID"])
    assert cs["b"]["image"] == "docker.io/library/nginx:latest"
    for c in cs.values():
        assert c["ready"] and c["started"] and c["restartCount"] == 0
        assert c["state"]["running"]["startedAt"]
    # first status said ContainerCreating, then Running
    assert status_patches(client)[0]["phase"] == "Pending"
    assert status_patches(client)[0]["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert status_patches(client)[-1]["phase"] == "Running"
    msgs = [(r, m, fp) for *_, r, m, fp in rec.events]
    assert ("Pulling", 'Pulling image "soscscs/myapp:v1"', "spec.containers{a}") in msgs
    assert ("Created", "Created container: a", "spec.containers{a}") in msgs
    assert ("Started", "Started container b", "spec.containers{b}") in msgs
    pulled = [m for r, m, fp in msgs if r == "Pulled" and fp == "spec.containers{b}"]
    assert re.fullmatch(r'Successfully pulled image "nginx" in \d+ms \(\d+ms including waiting\)\. '
                        r"Image size: \d+ bytes\.", pulled[0])
    actions = [a for _, a, _ in tr.records]
    assert actions[0] == "pod bound to node01 received on watch"
    assert actions[1] == "sandbox created (pause container), IP 10.244.1.2"
    assert "image soscscs/myapp:v1 pulled" in actions
    assert "containers started: a, b" in actions
    assert actions[-1] == "status update sent: Running"
    assert all(step == 12 for step, _, _ in tr.records)


async def test_image_already_present_and_never(env):
    client, rec, tr, rt, w = env
    await start(env, make_pod("p1"))
    rec.events.clear()
    await start(env, make_pod("p2", containers=[
        {"name": "nginx", "image": "nginx:1.25", "imagePullPolicy": "IfNotPresent"},
        {"name": "x", "image": "absent:1", "imagePullPolicy": "Never"}]))
    msgs = [(r, m) for *_, r, m, _ in rec.events]
    assert ("Pulled", 'Container image "nginx:1.25" already present on machine') in msgs
    assert ("ErrImageNeverPull", 'Container image "absent:1" is not present with pull policy of Never') in msgs
    assert not any(r == "Pulling" for r, _ in msgs)
    st = live(client, "p2")["status"]
    x = next(c for c in st["containerStatuses"] if c["name"] == "x")
    assert x["state"]["waiting"]["reason"] == "ErrImageNeverPull"
    assert st["phase"] == "Pending"
    assert rt.sandbox("uid-p2").ip == "10.244.1.3"


async def test_init_containers_run_in_order_before_app_containers(env):
    client, rec, tr, rt, w = env
    init = [{"name": "init-a", "image": "busybox:1.36", "command": ["sh", "-c", "echo a"]},
            {"name": "init-b", "image": "busybox:1.36", "command": ["sh", "-c", "echo b"]}]
    pod = await start(env, make_pod(init=init))
    order = [(r, fp) for *_, r, _, fp in rec.events if r in ("Created", "Started")]
    assert order == [("Created", "spec.initContainers{init-a}"), ("Started", "spec.initContainers{init-a}"),
                     ("Created", "spec.initContainers{init-b}"), ("Started", "spec.initContainers{init-b}"),
                     ("Created", "spec.containers{nginx}"), ("Started", "spec.containers{nginx}")]
    st = pod["status"]
    assert st["phase"] == "Running"
    for ics in st["initContainerStatuses"]:
        t = ics["state"]["terminated"]
        assert t["exitCode"] == 0 and t["reason"] == "Completed" and ics["ready"] is False
    # an intermediate status showed initialisation in progress
    inits = [p for p in status_patches(client)
             if any(c["type"] == "Initialized" and c["status"] == "False" for c in p["conditions"])]
    assert inits and inits[0]["phase"] == "Pending"
    cond = next(c for c in inits[0]["conditions"] if c["type"] == "Initialized")
    assert cond["reason"] == "ContainersNotInitialized"
    assert cond["message"] == "containers with incomplete status: [init-a init-b]"
    assert inits[0]["containerStatuses"][0]["state"]["waiting"]["reason"] == "PodInitializing"
    actions = [a for _, a, _ in tr.records]
    assert actions.index("init container init-a completed") < actions.index("init container init-b completed") \
        < actions.index("containers started: nginx")


async def test_deletion_kills_reports_terminal_status_deletes_and_releases_ip(env):
    client, rec, tr, rt, w = env
    pod = await start(env, make_pod())
    assert rt.ipam.in_use() == 1
    doomed = copy.deepcopy(pod)
    doomed["metadata"]["deletionTimestamp"] = "2025-01-01T00:01:00Z"
    doomed["metadata"]["deletionGracePeriodSeconds"] = 30
    rec.events.clear()
    w.update_pod(doomed)
    await w.wait_idle()
    assert [(r, m, fp) for *_, r, m, fp in rec.events] == [
        ("Killing", "Stopping container nginx", "spec.containers{nginx}")]
    last = status_patches(client)[-1]
    assert last["phase"] == "Succeeded"
    assert last["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    assert deletes(client) == [("web", {"grace": 0, "pre": {"uid": "uid-web"}})]
    assert rt.sandbox("uid-web") is None and rt.ipam.in_use() == 0
    # a late MODIFIED for the deleted pod does not restart it
    w.update_pod(copy.deepcopy(doomed))
    await w.wait_idle()
    assert rt.sandbox("uid-web") is None


async def test_deletion_during_long_init_is_prompt(env):
    client, rec, tr, rt, w = env
    pod = make_pod(init=[{"name": "wait", "image": "busybox", "command": ["sh", "-c", "sleep 3600"]}])
    client.seed(PODS, pod)
    w.update_pod(copy.deepcopy(pod))
    # wait until the init container runs (its status says so)
    await client.wait_for(lambda: "running" in (
        (live(client, "web")["status"].get("initContainerStatuses") or [{}])[0].get("state") or {}))
    assert rt.sandbox("uid-web") and rt.sandbox("uid-web").init_containers
    doomed = copy.deepcopy(live(client, "web"))
    doomed["metadata"]["deletionTimestamp"] = "2025-01-01T00:01:00Z"
    w.update_pod(doomed)
    await w.wait_idle(timeout=3)
    assert deletes(client) and rt.ipam.in_use() == 0
    assert ("Killing", "Stopping container wait") in [(r, m) for *_, r, m, _ in rec.events]


@pytest.mark.parametrize("restart,code,phase", [("Never", 1, "Failed"), ("Never", 0, "Succeeded"),
                                                ("OnFailure", 0, "Succeeded")])
async def test_exiting_container_terminal_phase(env, restart, code, phase):
    client, rec, tr, rt, w = env
    pod = make_pod(restart=restart, containers=[{"name": "job", "image": "busybox",
                                                 "command": ["sh", "-c", f"exit {code}"]}])
    client.seed(PODS, pod)
    w.update_pod(copy.deepcopy(pod))
    # the exit fires from the runtime's timer; its status patch wakes the wait
    await client.wait_for(lambda: live(client, "web")["status"].get("phase") == phase)
    st = live(client, "web")["status"]
    assert st["phase"] == phase
    t = st["containerStatuses"][0]["state"]["terminated"]
    assert t["exitCode"] == code and t["reason"] == ("Completed" if code == 0 else "Error")
    ready = next(c for c in st["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "False"


async def test_always_restarts_then_crashloop_backoff(env):
    client, rec, tr, rt, w = env
    pod = make_pod(containers=[{"name": "crash", "image": "busybox", "command": ["false"]}])
    client.seed(PODS, pod)
    w.update_pod(copy.deepcopy(pod))
    def reasons_waiting() -> list:
        return [(cs.get("state") or {}).get("waiting", {}).get("reason")
                for p in status_patches(client) for cs in p.get("containerStatuses") or []]

    def backed_off_and_restarted_twice() -> bool:
        # timers drive exits and restarts; re-checked after each status patch
        cs = (live(client, "web")["status"].get("containerStatuses") or [{}])[0]
        return "CrashLoopBackOff" in reasons_waiting() and cs.get("restartCount", 0) >= 2

    await client.wait_for(backed_off_and_restarted_twice)
    cs = live(client, "web")["status"]["containerStatuses"][0]
    assert "CrashLoopBackOff" in reasons_waiting() and cs["restartCount"] >= 2
    assert cs["lastState"]["terminated"]["exitCode"] == 1
    assert live(client, "web")["status"]["phase"] == "Running"
    backoffs = [m for *_, r, m, _ in rec.events if r == "BackOff"]
    assert backoffs[0] == "Back-off restarting failed container crash in pod web_default(uid-web)"
    await w.stop()


async def test_adopts_running_pod_after_restart_without_restarting(env):
    client, rec, tr, rt, w = env
    pod = await start(env, make_pod())
    before = copy.deepcopy(pod["status"])
    # a fresh kubelet (new runtime and workers) sees the same pod
    rt2 = SimulatedRuntime("node01", "10.244.1.0/24", image_pull_seconds=0.01, container_start_seconds=0.0)
    rec2, tr2 = FakeRecorder(), FakeTracer()
    w2 = PodWorkers(client, "node01", "192.168.0.101", rt2, rec2, tr2)
    n = len(status_patches(client))
    w2.update_pod(copy.deepcopy(pod))
    await w2.wait_idle()
    assert rec2.events == []
    assert len(status_patches(client)) == n
    assert live(client, "web")["status"]["containerStatuses"] == before["containerStatuses"]
    assert rt2.sandbox("uid-web").ip == before["podIP"]
    assert rt2.ipam.allocate("other") != before["podIP"]
    assert any("adopted" in a for _, a, _ in tr2.records)


def _ready(pod: dict) -> dict:
    return next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")


async def test_readiness_marked_false_by_another_writer_is_written_back(env):
    client, rec, tr, rt, w = env
    pod = await start(env, make_pod())
    assert _ready(pod)["status"] == "True"
    # the node lifecycle controller's MarkPodsNotReady, seen through the informer
    _ready(pod).update(status="False", lastTransitionTime="2030-01-01T00:00:00Z")
    client.bump(pod)
    sent = len(status_patches(client))
    w.update_pod(copy.deepcopy(pod))
    await w.wait_idle()
    assert len(status_patches(client)) == sent + 1
    ready = _ready(live(client, "web"))
    assert ready["status"] == "True" and ready["lastTransitionTime"] != "2030-01-01T00:00:00Z"
    assert {c["type"]: c["status"] for c in live(client, "web")["status"]["conditions"]}["ContainersReady"] == "True"


async def test_informer_catching_up_with_own_writes_sends_nothing(env):
    client, rec, tr, rt, w = env
    first = make_pod()
    await start(env, first)
    sent = len(status_patches(client))
    w.update_pod(copy.deepcopy(first))                  # an older version than the last write
    await w.wait_idle()
    w.update_pod(copy.deepcopy(live(client, "web")))     # the version of the last write
    await w.wait_idle()
    assert len(status_patches(client)) == sent


async def test_status_read_back_without_empty_fields_sends_nothing(env):
    client, rec, tr, rt, w = env
    await start(env, make_pod())
    sent = len(status_patches(client))
    stored = copy.deepcopy(live(client, "web"))
    for c in stored["status"]["conditions"]:
        c.pop("lastProbeTime", None)                     # null: omitted on the wire
    for cs in stored["status"]["containerStatuses"]:
        cs.pop("lastState", None)                        # {}: omitted on the wire
    client.bump(stored)
    w.update_pod(stored)
    await w.wait_idle()
    assert len(status_patches(client)) == sent
