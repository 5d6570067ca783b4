"""Kubelet failures that look real, with real processes and the real kubectl.

One kubelet (node01) with short back-offs (image pulls 1 s doubling to 4 s) and a
``--root-dir`` over etcd, the apiserver, the controller-manager and the scheduler
(``running_node_cluster``, one for the module): a pull from an unresolvable registry ends in ImagePullBackOff with
the kubelet's events; the liveness-exec task of the Kubernetes docs (its timings
shortened) restarts the container; a failing readiness probe keeps READY 0/1; a
``kubectl delete`` with a preStop hook shows ``Killing`` and takes the hook's time; a status
another writer overwrote during a long init container is put back by the kubelet's status batch.
Then ``controlplane up`` stopped and started again keeps its pods running (RESTARTS 0,
same startedAt); started once more after a node's root dir was deleted (a reboot), that
node's pod is restarted (RESTARTS 1, SandboxChanged). Waits are ``kubectl wait`` or polls of kubectl with a deadline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time

import pytest

from tests.integration.conftest import KUBECTL, running_node_cluster, spawn, start_up, stop

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """One control plane and kubelet for the module's pod tests (each its own pod name)."""
    tmp = tmp_path_factory.mktemp("kubelet-failures")
    with running_node_cluster(str(tmp / "kc")) as node_cluster:
        k, out = spawn("kubelet", "--master", node_cluster.server, "--node-name", "node01",
                       "--lease-renew-seconds", "0.5", "--image-pull-backoff-seconds", "1",
                       "--image-pull-backoff-max-seconds", "4", "--root-dir", str(tmp / "kubelet"))
        node_cluster.procs.append(k)
        out.wait_for("kubelet.nodes_registered", 30)
        node_cluster.kubectl("wait", "node/node01", "--for=condition=Ready", "--timeout=30s")
        yield node_cluster


def until(fn, what: str, timeout: float = 60.0):
    """Poll ``fn`` (a kubectl read) until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        got = fn()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not seen in {timeout}s")
        time.sleep(0.3)  # between kubectl reads: there is no watch on a table's text


def events(env, pod: str) -> list[tuple[str, str]]:
    out = env.kubectl("get", "events", "--field-selector", f"involvedObject.name={pod}", "-o", "json")
    return [(e["reason"], e["message"]) for e in json.loads(out.stdout)["items"]]


def test_unresolvable_registry_gives_image_pull_backoff(env):
    env.kubectl("run", "bad", "--image=registry.invalid/app:v1", "--restart=Never")
    env.kubectl("wait", "pod/bad", "--timeout=60s",
                "--for=jsonpath={.status.containerStatuses[0].state.waiting.reason}=ImagePullBackOff")
    table = env.kubectl("get", "pod", "bad").stdout
    assert any(s in table for s in ("ImagePullBackOff", "ErrImagePull")), table

    def all_events():
        got = events(env, "bad")
        reasons = [r for r, _ in got]
        return got if reasons.count("Failed") >= 3 and "BackOff" in reasons else None

    got = until(all_events, "the image pull events")
    image = "registry.invalid/app:v1"
    assert ("Pulling", f'Pulling image "{image}"') in got
    failed = [m for r, m in got if r == "Failed"]
    assert any(m.startswith(f'Failed to pull image "{image}": rpc error: ') and "no such host" in m
               for m in failed), failed
    assert "Error: ErrImagePull" in failed and "Error: ImagePullBackOff" in failed
    assert ("BackOff", f'Back-off pulling image "{image}"') in got
    describe = env.kubectl("describe", "pod", "bad").stdout
    assert "ImagePullBackOff" in describe and f'Back-off pulling image "{image}"' in describe


LIVENESS_EXEC = """
apiVersion: v1
kind: Pod
metadata: {name: liveness-exec, labels: {test: liveness}}
spec:
  containers:
  - name: liveness
    image: registry.k8s.io/busybox
    args: [/bin/sh, -c, "touch /tmp/healthy; sleep 3; rm -f /tmp/healthy; sleep 600"]
    livenessProbe:
      exec: {command: [cat, /tmp/healthy]}
      initialDelaySeconds: 1
      periodSeconds: 1
"""


def test_liveness_exec_task_restarts_the_container(env):
    env.kubectl("apply", "-f", "-", input=LIVENESS_EXEC)
    env.kubectl("wait", "pod/liveness-exec", "--timeout=60s",
                "--for=jsonpath={.status.containerStatuses[0].restartCount}=1")
    row = env.kubectl("get", "pod", "liveness-exec", "--no-headers").stdout.split()
    assert row[0] == "liveness-exec" and row[3] == "1", row
    got = until(lambda: [e for e in events(env, "liveness-exec") if e[0] in ("Unhealthy", "Killing")],
                "the probe events")
    assert ("Unhealthy", "Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory") \
        in got
    assert ("Killing", "Container liveness failed liveness probe, will be restarted") in got
    pod = json.loads(env.kubectl("get", "pod", "liveness-exec", "-o", "json").stdout)
    last = pod["status"]["containerStatuses"][0]["lastState"]["terminated"]
    assert last["exitCode"] == 143 and last["reason"] == "Error"


READINESS = """
apiVersion: v1
kind: Pod
metadata: {name: never-ready}
spec:
  containers:
  - name: web
    image: nginx
    readinessProbe:
      exec: {command: [cat, /tmp/ready]}
      periodSeconds: 1
"""


def test_failing_readiness_probe_keeps_the_pod_unready(env):
    env.kubectl("apply", "-f", "-", input=READINESS)
    env.kubectl("wait", "pod/never-ready", "--for=jsonpath={.status.phase}=Running", "--timeout=60s")
    got = until(lambda: [m for r, m in events(env, "never-ready") if r == "Unhealthy"], "Unhealthy")
    assert got[0] == "Readiness probe failed: cat: can't open '/tmp/ready': No such file or directory"
    row = env.kubectl("get", "pod", "never-ready", "--no-headers").stdout.split()
    assert row[1] == "0/1" and row[2] == "Running", row
    pod = json.loads(env.kubectl("get", "pod", "never-ready", "-o", "json").stdout)
    conds = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
    assert conds["Ready"] == "False" and conds["ContainersReady"] == "False"
    assert pod["status"]["containerStatuses"][0]["ready"] is False


PRESTOP = """
apiVersion: v1
kind: Pod
metadata: {name: graceful}
spec:
  terminationGracePeriodSeconds: 30
  containers:
  - name: app
    image: nginx
    lifecycle:
      preStop:
        exec: {command: [sh, -c, "sleep 3"]}
"""


def test_delete_with_prestop_hook_takes_the_hooks_time(env):
    env.kubectl("apply", "-f", "-", input=PRESTOP)
    env.kubectl("wait", "pod/graceful", "--for=condition=Ready", "--timeout=60s")
    t0 = time.monotonic()
    env.kubectl("delete", "pod", "graceful", "--timeout=60s")
    took = time.monotonic() - t0
    assert 3.0 <= took < 15.0, took
    assert ("Killing", "Stopping container app") in events(env, "graceful")


LONG_INIT = """
apiVersion: v1
kind: Pod
metadata: {name: long-init}
spec:
  initContainers:
  - name: wait
    image: busybox
    command: [sh, -c, "sleep 3600"]
  containers:
  - name: app
    image: nginx
"""


def test_status_overwritten_during_a_long_init_is_put_back_by_the_status_batch(env):
    env.kubectl("apply", "-f", "-", input=LONG_INIT)
    env.kubectl("wait", "pod/long-init", "--timeout=60s",
                "--for=jsonpath={.status.initContainerStatuses[0].started}=true")
    # another writer replaces the conditions (a merge patch replaces the list); the pod's worker is
    # in the init container's run, so only the kubelet's status batch (10 s) can put them back
    out = env.kubectl("patch", "pod", "long-init", "--subresource=status", "--type=merge", "-o", "json", "-p",
                      json.dumps({"status": {"conditions": [{"type": "PodScheduled", "status": "True"}]}}))
    assert [c["type"] for c in json.loads(out.stdout)["status"]["conditions"]] == ["PodScheduled"]
    env.kubectl("wait", "pod/long-init", "--for=condition=Initialized=False", "--timeout=30s")
    pod = json.loads(env.kubectl("get", "pod", "long-init", "-o", "json").stdout)
    conds = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
    assert conds == {"PodReadyToStartContainers": "True", "Initialized": "False", "Ready": "False",
                     "ContainersReady": "False", "PodScheduled": "True"}, conds
    env.kubectl("delete", "pod", "long-init", "--timeout=60s")


POD = """
apiVersion: v1
kind: Pod
metadata: {name: survivor}
spec:
  containers:
  - name: c
    image: nginx
    readinessProbe:
      exec: {command: ["true"]}
      periodSeconds: 1
"""


def test_up_restarted_keeps_pods_running(tmp_path):
    proc, _, data_dir = start_up(str(tmp_path))
    kc = os.path.join(data_dir, "kubeconfig")

    def kubectl(*args: str, input: str | None = None) -> str:
        p = subprocess.run([KUBECTL, "--kubeconfig", kc, "--cache-dir", str(tmp_path / "kc"), *args],
                           input=input, capture_output=True, text=True, timeout=90)
        assert p.returncode == 0, p.stdout + p.stderr
        return p.stdout

    try:
        kubectl("apply", "-f", "-", input=POD)
        kubectl("wait", "pod/survivor", "--for=condition=Ready", "--timeout=60s")
        before = json.loads(kubectl("get", "pod", "survivor", "-o", "json"))["status"]["containerStatuses"][0]
    finally:
        stop(proc, timeout=60)
    assert os.path.exists(os.path.join(data_dir, "kubelet", "node01", "runtime-state.json"))
    proc, _, _ = start_up(str(tmp_path))
    try:
        kubectl("wait", "pod/survivor", "--for=condition=Ready", "--timeout=60s")
        after = json.loads(kubectl("get", "pod", "survivor", "-o", "json"))["status"]["containerStatuses"][0]
        assert after["restartCount"] == 0
        assert after["containerID"] == before["containerID"]
        assert after["state"]["running"]["startedAt"] == before["state"]["running"]["startedAt"]
        row = kubectl("get", "pod", "survivor", "--no-headers").split()
        assert row[1:4] == ["1/1", "Running", "0"], row
        node = json.loads(kubectl("get", "pod", "survivor", "-o", "json"))["spec"]["nodeName"]
    finally:
        stop(proc, timeout=60)
    # a node reboot: its root dir is gone, so are its containers
    shutil.rmtree(os.path.join(data_dir, "kubelet", node))
    proc, _, _ = start_up(str(tmp_path))
    try:
        kubectl("wait", "pod/survivor", "--timeout=60s",
                "--for=jsonpath={.status.containerStatuses[0].restartCount}=1")
        kubectl("wait", "pod/survivor", "--for=condition=Ready", "--timeout=60s")
        got = json.loads(kubectl("get", "events", "--field-selector", "involvedObject.name=survivor",
                                 "-o", "json"))["items"]
        assert ("SandboxChanged", "Pod sandbox changed, it will be killed and re-created.") in \
            [(e["reason"], e["message"]) for e in got]
    finally:
        stop(proc, timeout=60)
