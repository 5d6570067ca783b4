"""The scheduler with real processes and the real kubectl: preemption on full 1-CPU
nodes, ``controlplane explain pod``, and leader election between two schedulers (the
leader is killed, the other takes the Lease over and schedules).

Processes: our etcd (memory only), the apiserver, two kubelets (``--cpu 1``) and two
schedulers with ``--leader-elect`` and short lease timings. Readiness is read from
their output lines; waits are kubectl's own ``wait`` or line waits with timeouts.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import pytest

from tests.integration.conftest import KUBECTL, LineReader, spawn, start_apiserver, stop

pytestmark = pytest.mark.integration

LE = ["--leader-elect", "--leader-elect-lease-duration", "3s", "--leader-elect-renew-deadline", "2s",
      "--leader-elect-retry-period", "500ms"]


class Env:
    def __init__(self, tmp: str) -> None:
        self.start_base(tmp, cpu="1")
        self.schedulers: list[tuple[subprocess.Popen, LineReader]] = []
        for _ in range(2):
            s, out = spawn("scheduler", "--master", self.server, *LE)
            self.procs.append(s)
            self.schedulers.append((s, out))
        for _, out in self.schedulers:
            out.wait_for("scheduler.started", 30)

    def start_base(self, tmp: str, cpu: str) -> None:
        """etcd (memory only), the apiserver and two kubelets (node01, node02) of
        ``cpu`` cores each, as processes; readiness read from their logs."""
        self.tmp = tmp
        self.procs: list[subprocess.Popen] = []
        etcd, out = spawn("etcd", "--listen-client-urls", "http://127.0.0.1:0", "--data-dir", "")
        self.procs.append(etcd)
        etcd_url = re.search(r"listen=(\S+)", out.wait_for("etcd.ready", 30)).group(1)
        api, _, self.server = start_apiserver(etcd_url)
        self.procs.append(api)
        for i, n in enumerate(("node01", "node02"), start=1):
            # no controller-manager allocates podCIDRs here: each kubelet is given its own
            k, out = spawn("kubelet", "--master", self.server, "--node-name", n, "--cpu", cpu,
                           "--pod-cidr", f"10.244.{i}.0/24")
            self.procs.append(k)
            out.wait_for("kubelet.nodes_registered", 30)

    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run([KUBECTL, "--server", self.server, "--cache-dir", os.path.join(self.tmp, "kc"),
                            *args], input=input, capture_output=True, text=True, timeout=90)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {p.stdout}{p.stderr}")
        return p

    def explain(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "controlplane", "explain", "--master", self.server,
                               *args], capture_output=True, text=True, timeout=60)

    def leader(self) -> int:
        """Index of the scheduler whose output says it acquired the Lease (waits)."""
        holder = json.loads(self.kubectl("get", "lease", "-n", "kube-system", "kube-scheduler",
                                         "-o", "json").stdout)["spec"]["holderIdentity"]
        for i, (_, out) in enumerate(self.schedulers):
            if any("leaderelection.acquired" in line and holder in line for line in out.lines):
                return i
        raise AssertionError(f"no scheduler claims holder {holder}")


def pod_yaml(name: str, cpu: str, priority: int) -> str:
    """A pod of ``priority``: through the PriorityClass ``prio-<priority>`` (:func:`class_yaml`;
    the Priority admission plugin computes spec.priority from it), none for 0."""
    cls = f"  priorityClassName: prio-{priority}\n" if priority else ""
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n{cls}"
            f"  containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: {cpu}}}}}}}]\n")


def class_yaml(priority: int) -> str:
    return (f"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: prio-{priority}}}\n"
            f"value: {priority}\n")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    e = Env(str(tmp_path_factory.mktemp("sched-e2e")))
    # one of the two acquires the Lease
    for _, out in e.schedulers:
        try:
            out.wait_for("leaderelection.acquired", 1)
            break
        except TimeoutError:
            continue
    else:
        e.schedulers[0][1].wait_for("leaderelection.acquired", 20)
    yield e
    for p in reversed(e.procs):
        stop(p)


def test_preemption_evicts_the_lowest_priority_pod(env: Env):
    env.kubectl("apply", "-f", "-", input=class_yaml(5) + "---\n" + class_yaml(1000))
    env.kubectl("apply", "-f", "-", input=pod_yaml("low0", "900m", 0) + "---\n" + pod_yaml("low5", "900m", 5))
    env.kubectl("wait", "--for=condition=Ready", "pod/low0", "pod/low5", "--timeout=60s")
    env.kubectl("apply", "-f", "-", input=pod_yaml("high", "900m", 1000))
    env.kubectl("wait", "--for=condition=Ready", "pod/high", "--timeout=60s")
    high = json.loads(env.kubectl("get", "pod", "high", "-o", "json").stdout)
    names = env.kubectl("get", "pods", "-o", "name").stdout.split()
    assert "pod/low0" not in names and "pod/low5" in names
    low5 = json.loads(env.kubectl("get", "pod", "low5", "-o", "json").stdout)
    assert high["spec"]["nodeName"] != low5["spec"]["nodeName"]
    assert high["status"].get("nominatedNodeName") == high["spec"]["nodeName"]
    ev = env.kubectl("get", "events", "--field-selector", "reason=Preempted", "-o", "json").stdout
    msgs = [(i["involvedObject"]["name"], i["message"]) for i in json.loads(ev)["items"]]
    assert ("low0", f"Preempted by pod {high['metadata']['uid']} on node {high['spec']['nodeName']}") in msgs
    desc = env.kubectl("describe", "pod", "high").stdout
    assert "0/2 nodes are available: 2 Insufficient cpu." in desc


def test_explain_pod(env: Env):
    r = env.explain("pod", "high")
    assert r.returncode == 0, r.stderr
    assert "NodeResourcesFit" in r.stdout and "<= chosen" in r.stdout
    high = json.loads(env.kubectl("get", "pod", "high", "-o", "json").stdout)
    chosen = next(l for l in r.stdout.splitlines() if l.endswith("<= chosen"))
    assert chosen.split()[0] == high["spec"]["nodeName"]
    # a pod that cannot fit anywhere (nothing of lower priority to preempt)
    env.kubectl("apply", "-f", "-", input=pod_yaml("huge", "4", 0))
    for _, out in env.schedulers:
        if any("leaderelection.acquired" in l for l in out.lines):
            out.wait_for("default/huge", 30)
    r = subprocess.CompletedProcess([], 1)
    for _ in range(50):  # the step-9 record reaches the apiserver within its 20 ms batch window
        r = env.explain("pod", "huge")
        if r.returncode == 0:
            break
    assert r.returncode == 0, r.stderr
    assert "Insufficient cpu" in r.stdout and "No node was chosen." in r.stdout
    missing = env.explain("pod", "nope")
    assert missing.returncode == 1 and missing.stderr.strip().count("\n") == 0
    assert 'pods "nope" not found in namespace "default"' in missing.stderr   # the current object, by name
    env.kubectl("delete", "pod", "huge", "--wait=true")


def test_leader_killed_other_takes_over(env: Env):
    i = env.leader()
    old, _ = env.schedulers[i]
    other_proc, other_out = env.schedulers[1 - i]
    lease0 = json.loads(env.kubectl("get", "lease", "-n", "kube-system", "kube-scheduler",
                                    "-o", "json").stdout)["spec"]
    old.send_signal(signal.SIGKILL)  # no release: the other waits out the lease
    old.wait(10)
    other_out.wait_for("leaderelection.acquired", 30)
    lease = json.loads(env.kubectl("get", "lease", "-n", "kube-system", "kube-scheduler",
                                   "-o", "json").stdout)["spec"]
    assert lease["leaseTransitions"] == lease0["leaseTransitions"] + 1
    assert lease["holderIdentity"] != lease0["holderIdentity"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", lease["renewTime"])
    env.kubectl("delete", "pod", "high", "--wait=true")
    env.kubectl("apply", "-f", "-", input=pod_yaml("after", "500m", 0))
    env.kubectl("wait", "--for=condition=Ready", "pod/after", "--timeout=60s")


# --------------------------------------------------------------------------- profiles and gates
PROFILES = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: bin-packing-scheduler
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
"""


class ProfilesEnv(Env):
    """etcd, apiserver, two 4-CPU kubelets and one scheduler (no leader election) run
    with a two-profile ``--config``."""

    def __init__(self, tmp: str) -> None:  # noqa: D107 - replaces Env's process set
        self.start_base(tmp, cpu="4")
        cfg = os.path.join(tmp, "scheduler.yaml")
        with open(cfg, "w") as f:
            f.write(PROFILES)
        s, self.sched_out = spawn("scheduler", "--master", self.server, "--config", cfg)
        self.procs.append(s)
        self.sched_out.wait_for("scheduler.started", 30)


@pytest.fixture(scope="module")
def penv(tmp_path_factory):
    e = ProfilesEnv(str(tmp_path_factory.mktemp("sched-profiles")))
    yield e
    for p in reversed(e.procs):
        stop(p)


def named_pod(name: str, cpu: str, scheduler: str = "", extra: str = "", node: str = "") -> str:
    spec = f"  schedulerName: {scheduler}\n" if scheduler else ""
    spec += f"  nodeName: {node}\n" if node else ""
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n{spec}{extra}"
            f"  containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: {cpu}}}}}}}]\n")


def node_of(env: Env, pod: str) -> str:
    return json.loads(env.kubectl("get", "pod", pod, "-o", "json").stdout)["spec"].get("nodeName", "")


def test_bin_packing_profile_packs_onto_the_fuller_node(penv: ProfilesEnv):
    # node01 holds 2 of its 4 CPUs (placed directly, no scheduler)
    penv.kubectl("apply", "-f", "-", input=named_pod("filler", "2", node="node01"))
    penv.kubectl("wait", "--for=condition=Ready", "pod/filler", "--timeout=60s")
    penv.kubectl("apply", "-f", "-", input="---\n".join(
        named_pod(f"pack{i}", "500m", "bin-packing-scheduler") for i in range(3)))
    penv.kubectl("wait", "--for=condition=PodScheduled", "pod/pack0", "pod/pack1", "pod/pack2", "--timeout=60s")
    assert [node_of(penv, f"pack{i}") for i in range(3)] == ["node01"] * 3
    # the default profile (LeastAllocated) spreads onto the emptier node
    penv.kubectl("apply", "-f", "-", input=named_pod("spread", "500m"))
    penv.kubectl("wait", "--for=condition=PodScheduled", "pod/spread", "--timeout=60s")
    assert node_of(penv, "spread") == "node02"
    ev = json.loads(penv.kubectl("get", "events", "--field-selector",
                                 "involvedObject.name=pack0,reason=Scheduled", "-o", "json").stdout)["items"]
    assert [e["message"] for e in ev] == ["Successfully assigned default/pack0 to node01"]


def test_unknown_scheduler_name_stays_pending_without_events(penv: ProfilesEnv):
    penv.kubectl("apply", "-f", "-", input=named_pod("orphan", "100m", "no-such-scheduler"))
    # a pod created after it is scheduled: the scheduler has seen (and skipped) the orphan
    penv.kubectl("apply", "-f", "-", input=named_pod("witness", "100m"))
    penv.kubectl("wait", "--for=condition=PodScheduled", "pod/witness", "--timeout=60s")
    pod = json.loads(penv.kubectl("get", "pod", "orphan", "-o", "json").stdout)
    assert not pod["spec"].get("nodeName") and pod["status"].get("phase") == "Pending"
    assert not [c for c in pod["status"].get("conditions") or [] if c["type"] == "PodScheduled"]
    ev = json.loads(penv.kubectl("get", "events", "--field-selector", "involvedObject.name=orphan",
                                 "-o", "json").stdout)["items"]
    assert ev == []
    assert "Pending" in penv.kubectl("get", "pod", "orphan", "--no-headers").stdout


def test_gated_pod_waits_until_the_gate_is_removed(penv: ProfilesEnv):
    gates = "  schedulingGates: [{name: example.com/quota}]\n"
    penv.kubectl("apply", "-f", "-", input=named_pod("gated", "100m", extra=gates))
    penv.kubectl("wait", "--for=jsonpath={.status.conditions[0].reason}=SchedulingGated", "pod/gated",
                 "--timeout=60s")
    row = penv.kubectl("get", "pod", "gated", "--no-headers").stdout.split()
    assert row[2] == "SchedulingGated", row
    penv.sched_out.wait_for("default/gated", 30)   # the scheduler's queue.gated line
    assert any("queue.gated" in l and "default/gated" in l and "example.com/quota" in l
               for l in penv.sched_out.lines)
    assert not node_of(penv, "gated")
    p = penv.kubectl("patch", "pod", "gated", "--type=json",
                     "-p", '[{"op": "remove", "path": "/spec/schedulingGates"}]')
    assert p.stdout.strip() == "pod/gated patched"
    penv.kubectl("wait", "--for=condition=PodScheduled", "pod/gated", "--timeout=60s")
    assert node_of(penv, "gated") in ("node01", "node02")
