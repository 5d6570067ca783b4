"""A custom scheduler profile tested on a cluster declared in ``cluster.yaml`` (the controlplane
pytest plugin starts it once for the tests that ask for it): pods of the ``bin-packing`` profile
share one node, the default profile spreads them, and the tainted GPU node gets only pods that
tolerate its taint.

    pip install controlplane
    pytest examples/scheduler-profile
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.controlplane(config="cluster.yaml")


def pod(name: str, scheduler: str = "default-scheduler", tolerate_gpu: bool = False) -> dict:
    spec: dict = {"schedulerName": scheduler, "containers": [
        {"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}}]}
    if tolerate_gpu:
        spec["tolerations"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
        spec["nodeSelector"] = {"accelerator": "nvidia"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"example": "profiles"}},
            "spec": spec}


def placements(kubectl, namespace: str, names: list[str]) -> dict[str, str]:
    """Apply nothing; wait for ``names`` to be scheduled and return pod -> node."""
    kubectl("-n", namespace, "wait", "--for=condition=PodScheduled", *(f"pod/{n}" for n in names),
            "--timeout=60s")
    items = json.loads(kubectl("-n", namespace, "get", "pods", "-o", "json").stdout)["items"]
    return {p["metadata"]["name"]: p["spec"]["nodeName"] for p in items if p["metadata"]["name"] in names}


def apply(kubectl, namespace: str, pods: list[dict]) -> None:
    kubectl("-n", namespace, "apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))


def test_nodes_come_from_the_config(controlplane, kubectl):
    nodes = {n["metadata"]["name"]: n for n in json.loads(kubectl("get", "nodes", "-o", "json").stdout)["items"]}
    assert sorted(nodes) == ["gpu-1", "worker-1", "worker-2"]
    assert nodes["gpu-1"]["spec"]["taints"] == [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    assert nodes["gpu-1"]["metadata"]["labels"]["accelerator"] == "nvidia"
    assert nodes["worker-1"]["status"]["capacity"]["cpu"] == "4"


def test_bin_packing_profile_fills_one_node(controlplane, kubectl, namespace):
    names = [f"packed-{i}" for i in range(4)]
    for n in names:   # one at a time: each decision sees the previous pods
        apply(kubectl, namespace, [pod(n, "bin-packing")])
        placements(kubectl, namespace, [n])
    where = placements(kubectl, namespace, names)
    assert len(set(where.values())) == 1, where
    assert "gpu-1" not in where.values()


def test_default_profile_spreads_and_keeps_off_the_tainted_node(controlplane, kubectl, namespace):
    names = [f"spread-{i}" for i in range(4)]
    for n in names:
        apply(kubectl, namespace, [pod(n)])
        placements(kubectl, namespace, [n])
    where = placements(kubectl, namespace, names)
    assert sorted(where.values()) == ["worker-1", "worker-1", "worker-2", "worker-2"], where


def test_tolerating_pod_reaches_the_gpu_node(controlplane, kubectl, namespace):
    apply(kubectl, namespace, [pod("trainer", tolerate_gpu=True)])
    assert placements(kubectl, namespace, ["trainer"]) == {"trainer": "gpu-1"}
