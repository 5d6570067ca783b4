"""Every seed example as ``controlplane demo --scenario NAME`` on one cluster of real processes
(node01, node02, as the articles): exit 0 because the outcome is the article's, and the real
kubectl sees the pods where the runner said. Beside them, the tools telling the truth: a bare
Pod's demo ends when it runs, an unschedulable pod ends the demo at once, ``trace`` and
``explain`` follow the current object and refuse unknown names, ``explain`` says when the
scheduler was bypassed."""

from __future__ import annotations

import os
import re
import time

import pytest

from controlplane.cli import scenario as scenarios
from tests.integration.conftest import EXAMPLES, Cluster, start_up, stop

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def c(tmp_path_factory) -> Cluster:
    tmp = str(tmp_path_factory.mktemp("scenarios"))
    proc, out, data_dir = start_up(tmp)
    kc = os.path.join(data_dir, "kubeconfig")
    yield Cluster(data_dir, kc, "", proc, out, os.path.join(tmp, "kube-cache"), "embedded")
    stop(proc)


def demo(c: Cluster, *args: str, timeout: float = 180):
    return c.controlplane("demo", "--no-color", "--kubeconfig", c.kubeconfig, *args, timeout=timeout)


@pytest.mark.parametrize("sc", scenarios.load_all(), ids=lambda s: s.name)
def test_scenario_ends_as_the_article_says(c: Cluster, sc: scenarios.Scenario):
    p = demo(c, "--scenario", sc.name)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    assert p.stdout.rstrip().endswith("check(s) held).") and "✗" not in p.stdout
    assert "  kubectl get pods -o wide" in p.stdout
    assert "Why: " in p.stdout  # the explain table, or why there is none
    last = [st["expect"] for st in sc.steps if "expect" in st][-1]
    if "pod" not in last:
        return
    name = last["pod"]
    wide = c.kubectl("get", "pod", name, "-o", "wide").stdout
    if "pending" in last:
        assert re.search(r"\sPending\s", wide), wide
        desc = c.kubectl("describe", "pod", name).stdout
        assert "FailedScheduling" in desc and last["pending"] in desc
    else:
        assert re.search(r"\sRunning\s", wide), wide
    if "node" in last:
        assert re.search(rf"\s{last['node']}\s", wide), wide
    if "same_node_as" in last or "other_node_than" in last:
        other = last.get("same_node_as") or last.get("other_node_than")
        mine = c.get_json("pod", name)["spec"]["nodeName"]
        theirs = c.get_json("pod", other)["spec"]["nodeName"]
        assert (mine == theirs) == ("same_node_as" in last)


def test_bare_pod_demo_ends_when_the_pod_runs(c: Cluster, tmp_path):
    page = tmp_path / "flow.html"
    p = demo(c, "-f", os.path.join(EXAMPLES, "pod5.yaml"), "--timeout", "60", "--html", str(page))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "timed out" not in p.stderr and "Summary: 1 pod(s) Running" in p.stdout
    for n in (4, 5, 6, 7):
        assert re.search(rf"^\s+{n}\s+-\s+0\s+.*skipped: a bare Pod has no controller", p.stdout, re.M), n
    steps = {int(m) for m in re.findall(r"^\[\s*(\d+)\]", p.stdout, re.M)}
    assert {2, 3, 8, 9, 10, 11, 12, 13} <= steps and not steps & {5, 6, 7}
    html = page.read_text()
    assert "window.CPSeq" in html and '"name": "myapp10"' in html  # the sequence-diagram page of this flow


def test_unschedulable_pod_ends_the_demo_at_once(c: Cluster, tmp_path):
    f = tmp_path / "nowhere.yaml"
    f.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: nowhere\nspec:\n  nodeSelector:\n    kgc: z\n"
                 "  containers:\n  - name: c\n    image: nginx\n")
    t0 = time.monotonic()
    p = demo(c, "-f", str(f), "--timeout", "60")
    assert p.returncode == 1 and time.monotonic() - t0 < 30
    assert p.stderr.strip().splitlines() == [
        "Error: pod default/nowhere stays Pending: FailedScheduling: 0/2 nodes are available: 2 node(s) didn't "
        "match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful "
        "for scheduling."]
    assert "Pod nowhere cannot be scheduled" in p.stdout and "No node was chosen." in p.stdout
    assert re.search(r"node01\s+passed\s+passed\s+node\(s\) didn't match Pod's node affinity/selector", p.stdout)
    c.kubectl("delete", "pod", "nowhere", "--wait=true")


@pytest.mark.parametrize("args,message", [
    pytest.param(["explain", "pod", "nosuch"], 'pods "nosuch" not found in namespace "default"', id="explain"),
    pytest.param(["trace", "--kind", "Pod", "--name", "nosuch"], 'pods "nosuch" not found in namespace "default"',
                 id="trace"),
    pytest.param(["explain", "pod", "nosuch", "--all"], 'no scheduling record for any pod "nosuch"',
                 id="explain --all, never seen"),
])
def test_unknown_name_is_one_line_and_exit_1(c: Cluster, args, message):
    p = c.controlplane(*args, "--kubeconfig", c.kubeconfig)
    assert p.returncode == 1 and message in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


def test_trace_and_explain_follow_the_current_pod(c: Cluster):
    manifest = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: again\nspec:\n  nodeSelector:\n    kubernetes.io/"
                "hostname: {node}\n  containers:\n  - name: c\n    image: nginx\n")
    uids = []
    for node in ("node01", "node02"):
        c.kubectl("apply", "-f", "-", input=manifest.format(node=node))
        c.kubectl("wait", "--for=condition=Ready", "pod/again", "--timeout=60s")
        uids.append(c.get_json("pod", "again")["metadata"]["uid"])
        if node == "node01":
            c.kubectl("delete", "pod", "again", "--wait=true")
    now = c.controlplane("trace", "--kind", "Pod", "--name", "again", "--kubeconfig", c.kubeconfig, "-o", "json")
    assert now.returncode == 0, now.stderr
    assert {line.split('"uid": "')[1][:36] for line in now.stdout.splitlines()} == {uids[1]}
    history = c.controlplane("trace", "--kind", "Pod", "--name", "again", "--all", "--kubeconfig", c.kubeconfig,
                             "-o", "json")
    assert {line.split('"uid": "')[1][:36] for line in history.stdout.splitlines()} == set(uids)
    ex = c.controlplane("explain", "pod", "again", "--kubeconfig", c.kubeconfig)
    assert ex.returncode == 0 and uids[1] in ex.stdout and "picked node02" in ex.stdout
    ex_all = c.controlplane("explain", "pod", "again", "--all", "--kubeconfig", c.kubeconfig)
    assert ex_all.stdout.index(uids[0]) < ex_all.stdout.index(uids[1])
    c.kubectl("delete", "pod", "again", "--wait=true")


def test_explain_of_a_node_name_pod_says_the_scheduler_was_bypassed(c: Cluster):
    c.kubectl("apply", "-f", "-", input="apiVersion: v1\nkind: Pod\nmetadata:\n  name: pinned\nspec:\n"
              "  nodeName: node02\n  containers:\n  - name: c\n    image: nginx\n")
    p = c.controlplane("explain", "pod", "pinned", "--kubeconfig", c.kubeconfig)
    assert p.returncode == 0, p.stderr
    assert "spec.nodeName=node02 was set when it was created, so the scheduler was bypassed" in p.stdout
    c.kubectl("delete", "pod", "pinned", "--wait=true")
