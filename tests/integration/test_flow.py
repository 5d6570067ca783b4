"""The main job end to end: seed 000's examples with the real kubectl against
``controlplane up`` (separate processes), on the embedded etcd and on a real
etcd, and the 13 steps recorded in order."""

from __future__ import annotations

import json
import os
import re
import signal

import pytest

from tests.integration.conftest import EXAMPLES, Cluster

pytestmark = pytest.mark.integration

MYAPP1 = os.path.join(EXAMPLES, "myapp1.yaml")
MYAPP = os.path.join(EXAMPLES, "myapp.yaml")


def pods_of(cluster: Cluster, selector: str) -> list[dict]:
    return cluster.get_json("pods", "-l", selector)["items"]


def flow_records(cluster: Cluster, kind: str, name: str) -> list[dict]:
    p = cluster.controlplane("trace", "--kubeconfig", cluster.kubeconfig, "--kind", kind,
                             "--name", name, "-o", "json")
    assert p.returncode == 0, p.stderr
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def test_label_nodes_as_seed_000(cluster: Cluster):
    out = cluster.kubectl("label", "nodes", "node01", "kgc=a").stdout
    assert "node/node01 labeled" in out
    cluster.kubectl("label", "nodes", "node02", "kgc=b")
    shown = cluster.kubectl("get", "nodes", "--show-labels").stdout
    lines = {l.split()[0]: l for l in shown.splitlines()[1:]}
    assert "kgc=a" in lines["node01"] and "kubernetes.io/hostname=node01" in lines["node01"]
    assert "beta.kubernetes.io/arch=amd64" in lines["node01"]
    assert "kgc=b" in lines["node02"]
    assert lines["node01"].split()[1] == "Ready"
    only_a = cluster.kubectl("get", "node", "-l", "kgc=a").stdout
    assert "node01" in only_a and "node02" not in only_a


def test_seed_000_node_selector_deployment_runs_on_node01(cluster: Cluster):
    cluster.kubectl("label", "nodes", "node01", "kgc=a", "--overwrite")
    cluster.kubectl("label", "nodes", "node02", "kgc=b", "--overwrite")
    out = cluster.kubectl("apply", "-f", MYAPP1).stdout
    assert "deployment.apps/myapp1 created" in out
    cluster.kubectl("rollout", "status", "deployment/myapp1", "--timeout=90s")
    pods = pods_of(cluster, "app=myapp1")
    assert len(pods) == 3
    for p in pods:
        assert p["spec"]["nodeName"] == "node01"
        assert p["status"]["phase"] == "Running"
        assert p["status"].get("podIP")
    wide = cluster.kubectl("get", "pods", "-o", "wide", "-l", "app=myapp1").stdout
    header, *rows = wide.splitlines()
    assert header.split()[:6] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP"]
    assert len(rows) == 3 and all("Running" in r and "node01" in r and "1/1" in r for r in rows)
    # re-applying the same manifest changes nothing
    assert "unchanged" in cluster.kubectl("apply", "-f", MYAPP1).stdout

    desc = cluster.kubectl("describe", "pod", pods[0]["metadata"]["name"]).stdout
    assert re.search(r"^Node:\s+node01/", desc, re.M), desc
    assert re.search(r"^Status:\s+Running", desc, re.M), desc
    assert re.search(r"^IP:\s+10\.", desc, re.M), desc
    for word in ("IP:", "Containers:", "Conditions:", "PodScheduled", "Events:"):
        assert word in desc, word
    for reason in ("Scheduled", "Pulled", "Created", "Started"):
        assert reason in desc, f"event {reason} missing from describe:\n{desc}"
    assert f"Successfully assigned default/{pods[0]['metadata']['name']} to node01" in desc


def test_thirteen_steps_recorded_in_order(cluster: Cluster):
    recs = flow_records(cluster, "Deployment", "myapp1")
    first: dict[int, float] = {}
    for r in recs:
        first.setdefault(r["step"], r["time"])
        first[r["step"]] = min(first[r["step"]], r["time"])
    missing = [s for s in range(2, 14) if s not in first]
    assert not missing, f"steps missing from the trace: {missing}"
    # Steps that race each other inside the apiserver (the write's ack and the
    # etcd watch event) form one group; groups must follow one another.
    groups = [[2], [3, 4], [5], [6], [7, 8], [9], [10], [11], [12], [13]]
    starts = [min(first[s] for s in g) for g in groups]
    assert starts == sorted(starts), list(zip(groups, starts))
    pods = {r["object"]["uid"] for r in recs if r["object"]["kind"] == "Pod" and r["object"]["uid"]}
    assert len(pods) >= 3
    for uid in pods:
        steps = {r["step"] for r in recs if r["object"]["uid"] == uid}
        assert {7, 8, 9, 10, 11, 12, 13} <= steps, (uid, sorted(steps))


def test_seed_000_node_name_skips_the_scheduler(cluster: Cluster):
    cluster.kubectl("apply", "-f", MYAPP)
    cluster.kubectl("rollout", "status", "deployment/myapp", "--timeout=90s")
    pods = pods_of(cluster, "app=myapp")
    assert len(pods) == 3 and all(p["spec"]["nodeName"] == "node01" for p in pods)
    events = cluster.get_json("events", "--field-selector",
                              f"involvedObject.name={pods[0]['metadata']['name']}")["items"]
    reasons = {e["reason"] for e in events}
    assert "Scheduled" not in reasons and "Started" in reasons
    steps = {r["step"] for r in flow_records(cluster, "Deployment", "myapp")}
    assert not steps & {9, 10, 11} and {12, 13} <= steps


def test_bad_input_gets_kubectl_errors_with_our_status(cluster: Cluster, tmp_path):
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n spec: [\n")
    p = cluster.kubectl("apply", "-f", str(bad_yaml), check=False)
    assert p.returncode != 0 and "error" in p.stderr.lower()
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("apiVersion: v1\nkind: Frobnicator\nmetadata:\n  name: x\n")
    p = cluster.kubectl("apply", "-f", str(unknown), check=False)
    assert p.returncode != 0 and "Frobnicator" in p.stderr
    invalid = tmp_path / "invalid.yaml"
    invalid.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad1\nspec:\n"
                       "  containers:\n  - name: c\n")
    p = cluster.kubectl("apply", "-f", str(invalid), check=False)
    assert p.returncode != 0
    assert 'The Pod "bad1" is invalid' in p.stderr and "spec.containers[0].image" in p.stderr
    # the cluster keeps serving and kept its objects
    assert len(pods_of(cluster, "app=myapp1")) == 3


def test_killed_process_is_reported_restarted_and_nothing_is_lost(cluster: Cluster):
    pid_line = next(l for l in cluster.out.lines if "started scheduler" in l)
    pid = int(pid_line.split("pid")[1].split()[0])
    os.kill(pid, signal.SIGKILL)
    cluster.out.wait_for("scheduler killed by signal 9", 30)
    cluster.out.wait_for("restarting scheduler", 30)
    # the restarted scheduler schedules a new pod, and earlier objects are intact
    cluster.kubectl("scale", "deployment/myapp1", "--replicas=4")
    cluster.kubectl("rollout", "status", "deployment/myapp1", "--timeout=90s")
    pods = pods_of(cluster, "app=myapp1")
    assert len(pods) == 4 and all(p["spec"]["nodeName"] == "node01" for p in pods)
