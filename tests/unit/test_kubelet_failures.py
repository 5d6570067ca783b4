"""The kubelet's failure machinery as pure parts and on the fake client: the command-line
rules (script.py), failing pulls and the image back-off (images.py), probe timings on a
FakeClock (prober.py), the runtime checkpoint (checkpoint.py), graceful termination."""

from __future__ import annotations

import asyncio
import copy
import json
import math

import pytest

from components.kubelet import images as img
from components.kubelet import prober
from components.kubelet.checkpoint import Checkpoint
from components.kubelet.kubelet import Kubelet, Timings
from components.kubelet.lifecycle import grace_period_seconds, hook_seconds, should_restart
from components.kubelet.node import NodeConfig
from components.kubelet.pod_workers import PodWorkers
from components.kubelet.runtime import SimulatedRuntime
from components.kubelet.script import parse_duration, run_against, timeline
from controlplane.api.resources import PODS
from controlplane.client.testing import FakeClient, FakeClock, FakeRecorder, FakeTracer

SH = ["sh", "-c"]


# -- command rules -------------------------------------------------------------
@pytest.mark.parametrize("argv,end,code", [
    (SH + ["sleep 20; exit 0"], 20.0, 0),
    (SH + ["sleep 2; exit 3"], 2.0, 3),
    (["/bin/sh", "-c", "sleep 1 && sleep 2 && exit 5"], 3.0, 5),
    (["bash", "-c", "false && sleep 9; exit 4"], 0.0, 4),
    (SH + ["false || sleep 2"], 2.0, 0),
    (SH + ["sleep 1; false"], 1.0, 1),
    (SH + ["true"], 0.0, 0),
    (["sleep", "1.5"], 1.5, 0),
    (SH + ["sleep 2m"], 120.0, 0),
    (SH + ["sleep 1 2"], 3.0, 0),
    (SH + ["echo start\nsleep 4\nexit 2"], 4.0, 2),
    (SH + ["exec sleep 7"], 7.0, 0),
    (SH + ["sh -c 'sleep 1; exit 6'"], 1.0, 6),
    (SH + ["FOO=1 sleep 2 # a comment"], 2.0, 0),
    (SH + ["sleep 100 & sleep 1"], 1.0, 0),
    (SH + ["sleep infinity"], None, 0),
    (SH + ["sleep 1; nginx -g 'daemon off;'"], None, 0),
    (SH + ["until false; do sleep 1; done"], None, 0),
    (SH + ["tail -f /dev/null"], None, 0),
    (["redis-server"], None, 0),
    (SH + ["echo 'unbalanced"], None, 0),
], ids=["sleep then exit 0", "sleep then exit 3", "&& chain", "&& skipped after false",
        "|| runs after false", "false last", "true", "sleep a fraction", "sleep with a unit",
        "sleep operands add up", "newlines separate", "exec", "nested sh -c",
        "an assignment and a comment", "a background job", "sleep infinity",
        "a server after a sleep", "a loop", "tail -f", "an unknown program", "broken quoting"])
def test_command_rules(argv, end, code):
    tl = timeline(argv)
    assert (tl.end, tl.code) == (end, code)


def test_liveness_exec_task_files_follow_the_script():
    tl = timeline(SH + ["touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"])
    assert tl.end == 630.0
    assert tl.file_exists("/tmp/healthy", 0) and tl.file_exists("/tmp/healthy", 29.9)
    assert not tl.file_exists("/tmp/healthy", 30)
    assert not tl.file_exists("/tmp/other", 0) and tl.file_exists("/etc/hosts", 0)
    probe, out = run_against(["cat", "/tmp/healthy"], tl, 31)
    assert probe.code == 1 and out == ["cat: can't open '/tmp/healthy': No such file or directory"]
    assert run_against(["cat", "/tmp/healthy"], tl, 10)[0].code == 0


@pytest.mark.parametrize("argv,ignores,stop", [
    (SH + ["trap '' TERM; sleep 100"], True, 143),
    (SH + ['trap "" SIGTERM; sleep 100'], True, 143),
    (SH + ["sleep 100"], False, 143),
    (["nginx"], False, 0),
    ([], False, 0),
], ids=["trap '' TERM", "trap \"\" SIGTERM", "a script honours SIGTERM", "a server exits 0",
        "the image's entrypoint exits 0"])
def test_sigterm_rules(argv, ignores, stop):
    tl = timeline(argv)
    assert tl.ignores_sigterm is ignores and tl.stop_code() == stop


def test_parse_duration():
    assert [parse_duration(w) for w in ("5", "1.5", "2m", "1h", "x")] == [5.0, 1.5, 120.0, 3600.0, None]
    assert math.isinf(parse_duration("infinity"))


# -- image pulls -----------------------------------------------------------------
@pytest.mark.parametrize("image,ann,fragment", [
    ("registry.invalid/app:v1", {}, "lookup registry.invalid: no such host"),
    ("quay.example/team/app", {}, 'Head "https://quay.example/v2/team/app/manifests/latest"'),
    ("nginx:doesnotexist", {}, "docker.io/library/nginx:doesnotexist: not found"),
    ("nginx", {"controlplane.io/image-pull": "fail"}, "pull access denied"),
    ("nginx", {"controlplane.io/image-pull.c": "fail"}, "pull access denied"),
    ("nginx", {"controlplane.io/image-pull.other": "fail"}, None),
    ("registry.k8s.io/pause:3.10", {}, None),
    ("localhost:5000/app", {}, None),
], ids=["an .invalid registry", "an .example registry", "tag doesnotexist", "the pod annotation",
        "the container's annotation", "another container's annotation", "a real registry", "localhost"])
def test_pull_error_rules(image, ann, fragment):
    err = img.pull_error(image, "c", ann)
    if fragment is None:
        assert err is None
    else:
        assert err is not None and err.startswith("rpc error: code = ") and fragment in err


def test_image_backoff_sequence_doubles_to_the_cap_and_expires():
    clock = FakeClock(100.0)
    b = img.Backoff(10.0, 300.0, clock)
    seq = []
    for _ in range(8):
        seq.append(b.next("k"))
        assert b.in_backoff("k")
        clock.advance(seq[-1] - 0.001)
        assert b.in_backoff("k")
        clock.advance(0.001)
        assert not b.in_backoff("k")
    assert seq == [10, 20, 40, 80, 160, 300, 300, 300]
    clock.advance(601)   # idle for more than twice the maximum: starts over
    assert b.next("k") == 10


def failing_env(clock):
    client, rec = FakeClient(), FakeRecorder()
    rt = SimulatedRuntime("node01", "10.244.1.0/24", image_pull_seconds=0.0, container_start_seconds=0.0,
                          clock=clock)
    w = PodWorkers(client, "node01", "192.168.0.101", rt, rec, FakeTracer(), image_backoff_base=10,
                   image_backoff_max=300)
    return client, rec, rt, w


def pod_of(name="web", containers=None, restart="Always", annotations=None, **spec):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": "5",
                         "annotations": annotations or {}},
            "spec": {"nodeName": "node01", "restartPolicy": restart, **spec,
                     "containers": containers or [{"name": "c", "image": "nginx"}]},
            "status": {"phase": "Pending"}}


async def sync(client, w, pod):
    """Seed ``pod`` (or take the stored one) and let its worker sync it once."""
    name = pod["metadata"]["name"]
    try:
        client.stored(PODS, name, "default")
    except KeyError:
        client.seed(PODS, pod)
    w.update_pod(copy.deepcopy(client.stored(PODS, name, "default")))
    await w.wait_idle()
    return client.stored(PODS, name, "default")


def waiting(pod):
    return pod["status"]["containerStatuses"][0]["state"].get("waiting") or {}


async def test_failed_pull_then_backoff_then_retry_with_the_events():
    clock = FakeClock(0.0)
    client, rec, rt, w = failing_env(clock)
    image = "registry.invalid/app:v1"
    pod = await sync(client, w, pod_of(containers=[{"name": "c", "image": image}]))
    assert waiting(pod)["reason"] == "ErrImagePull" and "no such host" in waiting(pod)["message"]
    pod = await sync(client, w, pod)                        # within the back-off
    assert waiting(pod) == {"reason": "ImagePullBackOff", "message": f'Back-off pulling image "{image}"'}
    assert pod["status"]["phase"] == "Pending"
    got = [(t, r, m) for *_, t, r, m, _ in rec.events]
    assert got[0] == ("Normal", "Pulling", f'Pulling image "{image}"')
    assert got[1][:2] == ("Warning", "Failed") and got[1][2].startswith(f'Failed to pull image "{image}": ')
    assert got[2:] == [("Warning", "Failed", "Error: ErrImagePull"),
                       ("Normal", "BackOff", f'Back-off pulling image "{image}"'),
                       ("Warning", "Failed", "Error: ImagePullBackOff")]
    n = len(rec.events)
    await sync(client, w, pod)                              # still backing off: reported once
    assert len(rec.events) == n
    clock.advance(10)                                       # the back-off is over: pull again
    await sync(client, w, pod)
    assert [e[3] for e in rec.events[n:]] == ["Pulling", "Failed", "Failed"]
    assert w.image_backoff.get(f"uid-web_{image}") == 20
    await w.stop()


async def test_never_pull_records_err_image_never_pull():
    client, rec, rt, w = failing_env(FakeClock())
    pod = await sync(client, w, pod_of(containers=[{"name": "c", "image": "absent:1", "imagePullPolicy": "Never"}]))
    assert waiting(pod)["reason"] == "ErrImageNeverPull"
    assert ("Failed", "Error: ErrImageNeverPull") in [(r, m) for *_, r, m, _ in rec.events]


async def test_pulled_images_reach_the_node_status_list():
    client, rec, rt, w = failing_env(FakeClock())
    await sync(client, w, pod_of(containers=[{"name": "c", "image": "soscscs/myapp:v1"}]))
    names = [n for i in rt.node_images() for n in i["names"]]
    assert "docker.io/soscscs/myapp:v1" in names and "registry.k8s.io/pause:3.10" in names


# -- probes on a FakeClock --------------------------------------------------------
def probe_run(container, files):
    def run(p, elapsed):
        return prober.run_probe(p, container, files, elapsed, "10.244.1.2")
    return run


def ticks(cp, run, until, step=0.5):
    """Tick a ContainerProbes every ``step`` s from 0 to ``until``: [(t, kind, ok)]."""
    out, t = [], 0.0
    while t <= until:
        out += [(t, p.kind, ok) for p, ok, _ in cp.tick(t, run)]
        t += step
    return out


def test_liveness_exec_task_fails_after_30s_and_asks_for_a_restart():
    c = {"name": "liveness", "args": ["/bin/sh", "-c", "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"],
         "livenessProbe": {"exec": {"command": ["cat", "/tmp/healthy"]}, "initialDelaySeconds": 5,
                           "periodSeconds": 5}}
    cp = prober.ContainerProbes.for_container(c, 0.0)
    got = ticks(cp, probe_run(c, timeline(c["args"])), 50)
    assert [(t, ok) for t, _, ok in got] == [(5, True), (10, True), (15, True), (20, True), (25, True),
                                             (30, False), (35, False), (40, False)]
    assert cp.failed() == "liveness" and cp.workers["liveness"].on_hold
    assert cp.due() is None   # on hold until the container is replaced


def test_readiness_thresholds_and_initial_delay():
    c = {"name": "web", "readinessProbe": {"httpGet": {"path": "/ready", "port": 80}, "initialDelaySeconds": 2,
                                           "periodSeconds": 1, "successThreshold": 2}}
    cp = prober.ContainerProbes.for_container(c, 0.0)
    assert not cp.ready                                     # readiness starts as Failure
    run = probe_run(c, timeline([]))
    cp.tick(0.0, run)
    cp.tick(1.0, run)
    assert not cp.ready                                     # within initialDelaySeconds: no probe
    cp.tick(2.0, run)
    assert not cp.ready                                     # one success of two
    cp.tick(3.0, run)
    assert cp.ready


def test_annotation_fails_an_http_probe_from_a_time_on():
    c = {"name": "web", "ports": [{"name": "http", "containerPort": 8080}],
         "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 1,
                           "failureThreshold": 2}}
    files = timeline([])
    probe = prober.probes_of(c)["liveness"]
    for ann in ({"controlplane.io/fail-probes": "/healthz"}, {"controlplane.io/fail-probes": "8080"},
                {"controlplane.io/fail-probes": "liveness"}):
        assert prober.run_probe(probe, c, files, 0, "10.0.0.1", ann) == \
            (False, "HTTP probe failed with statuscode: 500")
    late = {"controlplane.io/fail-probes": "/healthz@10"}
    assert prober.run_probe(probe, c, files, 9.9, "", late) == (True, "")
    assert prober.run_probe(probe, c, files, 10, "", late)[0] is False
    tcp = prober.Probe("readiness", {"tcpSocket": {"port": 6379}})
    assert prober.run_probe(tcp, c, files, 0, "10.0.0.1", {"controlplane.io/fail-probes": "6379"}) == \
        (False, "dial tcp 10.0.0.1:6379: connect: connection refused")


def test_startup_probe_gates_liveness_and_readiness():
    c = {"name": "slow", "command": SH + ["sleep 4; touch /tmp/started; sleep 600"],
         "startupProbe": {"exec": {"command": ["test", "-f", "/tmp/started"]}, "periodSeconds": 1,
                          "failureThreshold": 10},
         "livenessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 1},
         "readinessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 1}}
    cp = prober.ContainerProbes.for_container(c, 0.0)
    got = ticks(cp, probe_run(c, timeline(c["command"])), 5, step=1)
    assert [(t, k, ok) for t, k, ok in got if k == "startup"] == \
        [(0, "startup", False), (1, "startup", False), (2, "startup", False), (3, "startup", False),
         (4, "startup", True)]
    assert min(t for t, k, _ in got if k != "startup") == 4   # liveness and readiness wait for it
    assert cp.started and cp.ready and not cp.failed()


def test_exec_probe_timeout():
    p = prober.Probe("readiness", {"exec": {"command": ["sleep", "5"]}}, timeout=1)
    assert prober.run_probe(p, {}, timeline([]), 0) == (False, 'command "sleep 5" timed out')


async def test_probe_results_reach_the_status_and_liveness_restarts():
    clock = FakeClock(0.0)
    client, rec, rt, w = failing_env(clock)
    c = {"name": "app", "image": "busybox",
         "command": SH + ["touch /tmp/healthy; sleep 3; rm -f /tmp/healthy; sleep 600"],
         "readinessProbe": {"exec": {"command": ["cat", "/tmp/healthy"]}, "periodSeconds": 1},
         "livenessProbe": {"exec": {"command": ["cat", "/tmp/healthy"]}, "periodSeconds": 1,
                           "failureThreshold": 1}}
    await sync(client, w, pod_of(containers=[c]))
    w.run_probes("uid-web")
    await w.wait_idle()
    st = client.stored(PODS, "web", "default")["status"]
    assert st["containerStatuses"][0]["ready"] is True
    assert {x["type"]: x["status"] for x in st["conditions"]}["Ready"] == "True"
    clock.advance(3)
    w.run_probes("uid-web")
    await w.wait_idle()
    st = client.stored(PODS, "web", "default")["status"]
    cs = st["containerStatuses"][0]
    assert cs["restartCount"] == 1 and cs["lastState"]["terminated"]["exitCode"] == 143
    msgs = [(r, m) for *_, r, m, _ in rec.events]
    assert ("Unhealthy", "Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory") in msgs
    assert ("Unhealthy", "Readiness probe failed: cat: can't open '/tmp/healthy': No such file or directory") in msgs
    assert ("Killing", "Container app failed liveness probe, will be restarted") in msgs
    await w.stop()


# -- graceful termination ----------------------------------------------------------
@pytest.mark.parametrize("pod,probe,grace", [
    ({}, None, 30.0),
    ({"spec": {"terminationGracePeriodSeconds": 5}}, None, 5.0),
    ({"metadata": {"deletionGracePeriodSeconds": 2}, "spec": {"terminationGracePeriodSeconds": 5}}, None, 2.0),
    ({"spec": {"terminationGracePeriodSeconds": 5}}, {"terminationGracePeriodSeconds": 1}, 1.0),
], ids=["the default 30 s", "the spec's", "the deletion's", "the probe's"])
def test_grace_period_seconds(pod, probe, grace):
    assert grace_period_seconds(pod, probe) == grace


@pytest.mark.parametrize("policy,code,killed,restart", [
    ("Always", 0, "", True), ("OnFailure", 0, "", False), ("OnFailure", 1, "", True),
    ("OnFailure", 0, "liveness", True), ("Never", 143, "liveness", False), ("Never", 1, "", False),
], ids=["Always", "OnFailure after success", "OnFailure after a failure",
        "OnFailure after a liveness kill that exited 0", "Never after a liveness kill", "Never"])
def test_should_restart(policy, code, killed, restart):
    assert should_restart(policy, code, killed) is restart


@pytest.mark.parametrize("hook,seconds", [
    ({"exec": {"command": SH + ["sleep 5"]}}, 5.0),
    ({"exec": {"command": ["nginx", "-s", "quit"]}}, math.inf),
    ({"sleep": {"seconds": 3}}, 3.0),
    ({"httpGet": {"path": "/shutdown", "port": 80}}, 0.0),
], ids=["exec sleep 5", "an exec that never ends", "the sleep action", "httpGet"])
def test_hook_seconds(hook, seconds):
    c = SimulatedRuntime("n", "10.244.1.0/24").create_container(
        SimulatedRuntime("n", "10.244.1.0/24").run_pod_sandbox("u"), {"name": "c", "image": "nginx"}, False)
    assert hook_seconds(hook, c, 0.0) == seconds


async def test_prestop_hook_and_sigterm_ignored_until_the_grace_period():
    client, rec, rt, w = failing_env(FakeClock())
    spec_c = [{"name": "hook", "image": "nginx", "lifecycle": {"preStop": {"exec": {"command": SH + ["sleep 0.2"]}}}},
              {"name": "stubborn", "image": "busybox", "command": SH + ["trap '' TERM; sleep 600"]}]
    pod = await sync(client, w, pod_of(containers=spec_c))
    doomed = copy.deepcopy(pod)
    doomed["metadata"].update(deletionTimestamp="2025-01-01T00:01:00Z", deletionGracePeriodSeconds=0.3)
    rec.events.clear()
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await w.terminate_pod(doomed)
    took = loop.time() - t0
    assert 2.0 <= took < 3.0    # the stubborn one: at least 2 s after the hook-less grace (minimum)
    assert [(r, m) for *_, r, m, _ in rec.events] == [("Killing", "Stopping container hook"),
                                                       ("Killing", "Stopping container stubborn")]
    last = client.actions("patch", "pods")[-1].patch["status"]["containerStatuses"]
    codes = {c["name"]: c["state"]["terminated"]["exitCode"] for c in last}
    assert codes == {"hook": 0, "stubborn": 137}
    assert [a.options.get("gracePeriodSeconds") for a in client.actions("delete", "pods")] == [0]


# -- checkpoint --------------------------------------------------------------------
async def test_checkpoint_reload_keeps_containers_and_reconciles(tmp_path):
    api = FakeClient()
    nodes = [NodeConfig(name="node01", index=1, pod_cidr="10.244.1.0/24")]
    t = Timings(image_pull_seconds=0.0, container_start_seconds=0.0)
    k = Kubelet(api, nodes, t, trace=False, root_dir=str(tmp_path))
    await k._start_node(nodes[0], asyncio.Semaphore(1))
    keep, gone = pod_of("keep"), pod_of("gone")
    for p in (keep, gone):
        api.seed(PODS, p)
        k._on_add(copy.deepcopy(p))
    await k.workers["node01"].wait_idle()
    before = api.stored(PODS, "keep", "default")["status"]["containerStatuses"][0]
    await k.stop()
    doc = json.loads((tmp_path / "runtime-state.json").read_text())
    assert sorted(s["pod_uid"] for s in doc["nodes"]["node01"]["sandboxes"]) == ["uid-gone", "uid-keep"]
    await api.delete(PODS, "gone", "default", grace_period_seconds=0)

    k2 = Kubelet(api, nodes, t, trace=False, root_dir=str(tmp_path))
    assert k2.checkpoint is not None and k2.checkpoint.found
    await k2._start_node(nodes[0], asyncio.Semaphore(1))
    rt = k2.workers["node01"].runtime
    assert set(rt.sandboxes) == {"uid-gone", "uid-keep"}
    k2.informer.store = {"default/keep": api.stored(PODS, "keep", "default")}
    assert k2.reconcile() == 1 and set(rt.sandboxes) == {"uid-keep"}
    n = len(api.actions("patch", "pods"))
    k2._on_add(copy.deepcopy(api.stored(PODS, "keep", "default")))
    await k2.workers["node01"].wait_idle()
    after = api.stored(PODS, "keep", "default")["status"]["containerStatuses"][0]
    assert after == before and len(api.actions("patch", "pods")) == n   # nothing restarted, nothing to say
    await k2.stop()


@pytest.mark.parametrize("init,landed", [(False, False), (True, False), (False, True)],
                         ids=["app container, start not reported", "init container, start not reported",
                              "app container, start reported running"])
async def test_container_checkpointed_created_at_the_kill(tmp_path, monkeypatch, init, landed):
    """kill -9 after a checkpoint write that caught a container between CreateContainer and
    StartContainer. Start not reported: the apiserver has the sandbox's status
    (ContainerCreating, with the containerID) and the restarted kubelet starts the container
    again (ShouldContainerBeRestarted / computeInitContainerActions: a created container is
    always started), restartCount 1. Start reported: the start and its status write (Running,
    same containerID) landed before the kill, so the container is resumed as running, nothing
    restarted and nothing written. Either way the pod is Running and Ready instead of staying
    ContainerCreating (a fault scenario's pod never Ready after a kubelet kill)."""
    api = FakeClient()
    nodes = [NodeConfig(name="node01", index=1, pod_cidr="10.244.1.0/24")]
    k = Kubelet(api, nodes, Timings(image_pull_seconds=0.0, container_start_seconds=0.1),
                trace=False, root_dir=str(tmp_path / "before"))
    await k._start_node(nodes[0], asyncio.Semaphore(1))
    rt = k.workers["node01"].runtime
    entered, go = asyncio.Event(), asyncio.Event()
    real_start = rt.start_container

    async def start_container(c):   # StartContainer, held until the checkpoint is written
        entered.set()
        await go.wait()
        await real_start(c)

    monkeypatch.setattr(rt, "start_container", start_container)
    gated = "init" if init else "c"
    extra = {"initContainers": [{"name": "init", "image": "busybox", "command": SH + ["true"]}]} if init else {}
    api.seed(PODS, pod_of("p", **extra))
    k._on_add(copy.deepcopy(api.stored(PODS, "p", "default")))
    await entered.wait()
    assert k.checkpoint is not None
    k.checkpoint.flush()   # the last checkpoint write before the kill
    (tmp_path / "after").mkdir()
    (tmp_path / "after" / "runtime-state.json").write_bytes((tmp_path / "before" / "runtime-state.json").read_bytes())
    if landed:
        go.set()
        await k.workers["node01"].wait_idle()
    await k.stop()
    key = "initContainerStatuses" if init else "containerStatuses"
    before = api.stored(PODS, "p", "default")["status"]
    reported = before[key][0]
    assert reported["containerID"] and ("running" in reported["state"]) == landed
    writes = len(api.actions("patch", "pods"))

    k2 = Kubelet(api, nodes, Timings(image_pull_seconds=0.0, container_start_seconds=0.0),
                 trace=False, root_dir=str(tmp_path / "after"))
    await k2._start_node(nodes[0], asyncio.Semaphore(1))
    sb = k2.workers["node01"].runtime.sandbox("uid-p")
    c = sb.get(gated, init) if sb is not None else None
    assert c is not None and c.state == "created"
    k2._on_add(copy.deepcopy(api.stored(PODS, "p", "default")))
    await k2.workers["node01"].wait_idle()
    st = api.stored(PODS, "p", "default")["status"]
    assert st["phase"] == "Running"
    assert {c["type"]: c["status"] for c in st["conditions"]}["Ready"] == "True"
    again = st[key][0]
    if landed:
        assert st == before and len(api.actions("patch", "pods")) == writes
    else:
        assert again["containerID"] != reported["containerID"] and again["restartCount"] == 1
        assert (again["state"].get("terminated" if init else "running") or {}).get("startedAt")
    await k2.stop()


async def test_running_pod_the_checkpoint_missed_keeps_its_ip_when_a_new_pod_syncs_first(tmp_path):
    """The last checkpoint write came before a running pod's sandbox (kill -9 within the
    write interval): the restarted kubelet adopts it from its reported status. A new pod
    listed with it and synced first must not be given its IP, or the adoption fails and the
    running pod is handled as after a node reboot (new sandbox, new IP, restartCount 1)."""
    api = FakeClient()
    nodes = [NodeConfig(name="node01", index=1, pod_cidr="10.244.1.0/24")]
    t = Timings(image_pull_seconds=0.0, container_start_seconds=0.0)
    k = Kubelet(api, nodes, t, trace=False, root_dir=str(tmp_path / "before"))
    await k._start_node(nodes[0], asyncio.Semaphore(1))
    assert k.checkpoint is not None
    k.checkpoint.flush()   # the last write before the kill: no sandbox yet
    (tmp_path / "after").mkdir()
    (tmp_path / "after" / "runtime-state.json").write_bytes((tmp_path / "before" / "runtime-state.json").read_bytes())
    api.seed(PODS, pod_of("old"))
    k._on_add(copy.deepcopy(api.stored(PODS, "old", "default")))
    await k.workers["node01"].wait_idle()
    await k.stop()
    before = api.stored(PODS, "old", "default")["status"]
    assert before["phase"] == "Running"

    k2 = Kubelet(api, nodes, t, trace=False, root_dir=str(tmp_path / "after"))
    await k2._start_node(nodes[0], asyncio.Semaphore(1))
    api.seed(PODS, pod_of("new"))
    k2._on_add(copy.deepcopy(api.stored(PODS, "new", "default")))   # its worker runs first
    k2._on_add(copy.deepcopy(api.stored(PODS, "old", "default")))
    await k2.workers["node01"].wait_idle()
    after = api.stored(PODS, "old", "default")["status"]
    assert after["podIP"] == before["podIP"] and after["containerStatuses"] == before["containerStatuses"]
    assert api.stored(PODS, "new", "default")["status"]["podIP"] != before["podIP"]
    await k2.stop()


async def test_missing_checkpoint_is_a_reboot_that_restarts_containers(tmp_path):
    api = FakeClient()
    nodes = [NodeConfig(name="node01", index=1, pod_cidr="10.244.1.0/24")]
    t = Timings(image_pull_seconds=0.0, container_start_seconds=0.0)
    k = Kubelet(api, nodes, t, trace=False, root_dir=str(tmp_path / "a"))
    await k._start_node(nodes[0], asyncio.Semaphore(1))
    api.seed(PODS, pod_of("p"))
    k._on_add(copy.deepcopy(api.stored(PODS, "p", "default")))
    await k.workers["node01"].wait_idle()
    await k.stop()
    k2 = Kubelet(api, nodes, t, trace=False, root_dir=str(tmp_path / "b"))   # a wiped root dir
    await k2._start_node(nodes[0], asyncio.Semaphore(1))
    k2._on_add(copy.deepcopy(api.stored(PODS, "p", "default")))
    await k2.workers["node01"].wait_idle()
    cs = api.stored(PODS, "p", "default")["status"]["containerStatuses"][0]
    assert cs["restartCount"] == 1 and "running" in cs["state"]
    assert cs["lastState"]["terminated"]["exitCode"] == 255
    await k2.stop()


async def test_checkpoint_writes_are_batched(tmp_path):
    cp = Checkpoint(str(tmp_path), interval=60)
    assert cp.load() is False
    rt = SimulatedRuntime("n", "10.244.1.0/24")
    cp.attach("n", rt)
    for i in range(100):
        rt.run_pod_sandbox(f"uid-{i}")      # 100 changes ...
    assert cp.writes == 0
    cp.flush()                               # ... one write (the timer's, or the stop's)
    assert cp.writes == 1 and len(json.loads((tmp_path / "runtime-state.json").read_text())
                                  ["nodes"]["n"]["sandboxes"]) == 100
    assert json.loads((tmp_path / "runtime-state.json").read_text())["version"] == 1


async def test_checkpoint_reencodes_only_the_nodes_that_changed(tmp_path):
    cp = Checkpoint(str(tmp_path), interval=60)
    cp.load()
    a, b = SimulatedRuntime("a", "10.244.1.0/24"), SimulatedRuntime("b", "10.244.2.0/24")
    cp.attach("a", a)
    cp.attach("b", b)
    b.run_pod_sandbox("uid-b1")
    cp.flush()
    b.on_change = None                   # b changes unseen: its encoding is reused
    b.run_pod_sandbox("uid-b2")
    a.run_pod_sandbox("uid-a1")
    cp.flush()
    nodes = json.loads((tmp_path / "runtime-state.json").read_text())["nodes"]
    assert [s["pod_uid"] for s in nodes["a"]["sandboxes"]] == ["uid-a1"]
    assert [s["pod_uid"] for s in nodes["b"]["sandboxes"]] == ["uid-b1"]
