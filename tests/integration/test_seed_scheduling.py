"""Every scheduling example of seeds 000 and 001, with the real kubectl, on a
cluster shaped as in the articles (node01, node02), landing where the articles
say. The manifests are the articles' own (two typos that no YAML parser
accepts are fixed; see the files' comments)."""

from __future__ import annotations

import os
import re

import pytest

from tests.integration.conftest import EXAMPLES, Cluster, start_up, stop

pytestmark = pytest.mark.integration
M = EXAMPLES  # the articles' manifests ship with the scenarios (controlplane/examples)


@pytest.fixture(scope="module")
def c(tmp_path_factory) -> Cluster:
    tmp = str(tmp_path_factory.mktemp("seeds"))
    proc, out, data_dir = start_up(tmp)
    kc = os.path.join(data_dir, "kubeconfig")
    cl = Cluster(data_dir, kc, "", proc, out, os.path.join(tmp, "kube-cache"), "embedded")
    cl.kubectl("label", "nodes", "node01", "kgc=a", "--overwrite")
    cl.kubectl("label", "nodes", "node02", "kgc=b", "--overwrite")
    yield cl
    stop(proc)


def apply_and_wait(c: Cluster, manifest: str, pod: str) -> dict:
    c.kubectl("apply", "-f", os.path.join(M, manifest))
    c.kubectl("wait", "--for=condition=Ready", f"pod/{pod}", "--timeout=60s")
    return c.get_json("pod", pod)


def node_of(c: Cluster, pod: str) -> str:
    return c.get_json("pod", pod)["spec"]["nodeName"]


def delete_all(c: Cluster) -> None:
    c.kubectl("delete", "pod", "--all", "--wait=true", "--timeout=60s")


def test_hard_node_affinity_not_in_node02_lands_on_node01(c: Cluster):
    pod = apply_and_wait(c, "pod1.yaml", "affinity")
    assert pod["spec"]["nodeName"] == "node01"
    wide = c.kubectl("get", "pods", "-o", "wide").stdout
    assert "affinity" in wide and "node01" in wide and "Running" in wide
    delete_all(c)


def test_soft_node_affinity_to_missing_node03_still_schedules(c: Cluster):
    pod = apply_and_wait(c, "pod2.yaml", "affinity")
    assert pod["spec"]["nodeName"] in ("node01", "node02")
    delete_all(c)


def test_hard_and_soft_together_land_on_node01(c: Cluster):
    pod = apply_and_wait(c, "pod-hard-soft.yaml", "affinity")
    assert pod["spec"]["nodeName"] == "node01"
    delete_all(c)


def test_pod_affinity_anti_affinity_sequence(c: Cluster):
    first = apply_and_wait(c, "pod3.yaml", "myapp01")["spec"]["nodeName"]
    other = "node02" if first == "node01" else "node01"
    shown = c.kubectl("get", "pods", "--show-labels", "-o", "wide").stdout
    assert "app=myapp01" in shown

    # required pod affinity, topologyKey kgc: kgc=a and kgc=b are two domains,
    # so myapp02 must join myapp01's node
    assert apply_and_wait(c, "pod4.yaml", "myapp02")["spec"]["nodeName"] == first

    # preferred anti-affinity on kubernetes.io/hostname: away from myapp01
    assert apply_and_wait(c, "pod5.yaml", "myapp10")["spec"]["nodeName"] == other

    # both nodes kgc=a: one domain that holds myapp01, so required
    # anti-affinity on kgc leaves myapp20 Pending with kube-scheduler's message
    c.kubectl("label", "node", "node01", "kgc=a", "--overwrite")
    c.kubectl("label", "node", "node02", "kgc=a", "--overwrite")
    c.kubectl("apply", "-f", os.path.join(M, "pod6.yaml"))
    c.kubectl("wait", "--for=condition=PodScheduled=False", "pod/myapp20", "--timeout=60s")
    desc = c.kubectl("describe", "pod", "myapp20").stdout
    assert re.search(r"^Status:\s+Pending", desc, re.M), desc
    assert "FailedScheduling" in desc
    assert "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules" in desc

    # relabel the other node into its own domain: the pending pod goes there by itself
    c.kubectl("label", "node", other, "kgc=b", "--overwrite")
    c.kubectl("wait", "--for=condition=Ready", "pod/myapp20", "--timeout=60s")
    assert node_of(c, "myapp20") == other
    delete_all(c)
    c.kubectl("label", "nodes", "node01", "kgc=a", "--overwrite")
    c.kubectl("label", "nodes", "node02", "kgc=b", "--overwrite")


def test_pod_affinity_relabel_makes_both_nodes_one_domain(c: Cluster):
    first = apply_and_wait(c, "pod3.yaml", "myapp01")["spec"]["nodeName"]
    other = "node02" if first == "node01" else "node01"
    # seed 000: kubectl label node node01 kgc=b --overwrite — both nodes share a domain
    c.kubectl("label", "node", other, f"kgc={c.get_json('node', first)['metadata']['labels']['kgc']}",
              "--overwrite")
    # now a pod with required affinity may go to either node; cordon myapp01's
    # node to prove the other one is feasible
    c.kubectl("cordon", first)
    try:
        assert apply_and_wait(c, "pod4.yaml", "myapp02")["spec"]["nodeName"] == other
    finally:
        c.kubectl("uncordon", first)
    delete_all(c)
    c.kubectl("label", "nodes", "node01", "kgc=a", "--overwrite")
    c.kubectl("label", "nodes", "node02", "kgc=b", "--overwrite")


def test_seed_001_node_selector_env_role_dev(c: Cluster):
    c.kubectl("label", "nodes", "node01", "env_role=dev")
    c.kubectl("label", "nodes", "node02", "env_role=test")
    shown = c.kubectl("get", "nodes", "--show-labels").stdout
    assert "env_role=dev" in shown and "env_role=test" in shown
    out = c.kubectl("create", "-f", os.path.join(M, "nginx-seed001.yaml")).stdout
    assert out.strip() == "pod/nginx created"
    c.kubectl("wait", "--for=condition=Ready", "pod/nginx", "--timeout=60s")
    get = c.kubectl("get", "pod").stdout.splitlines()
    assert get[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    row = next(l for l in get if l.startswith("nginx "))
    assert row.split()[1:4] == ["1/1", "Running", "0"]
    desc = c.kubectl("describe", "pod", "nginx").stdout
    for text in ("Name:", "Namespace:", "default", "Node:", "node01", "Status:", "Running", "IP:",
                 "Containers:", "nginx:", "Container ID:", "Image:", "State:", "Ready:",
                 "Restart Count:", "Conditions:", "Initialized", "ContainersReady", "PodScheduled",
                 "QoS Class:", "BestEffort", "Node-Selectors:", "env_role=dev",
                 "node.kubernetes.io/not-ready:NoExecute op=Exists for 300s",
                 "node.kubernetes.io/unreachable:NoExecute op=Exists for 300s",
                 "Successfully assigned default/nginx to node01", "Pulled", "Created", "Started"):
        assert text in desc, f"{text!r} missing from kubectl describe:\n{desc}"
