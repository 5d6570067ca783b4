"""The kubelet's simulated volume manager: a pod whose claim is missing or unbound stays
Pending (ContainerCreating) with the kubelet's FailedMount event, starts once its claim is
Bound, and the node's volumesInUse / volumesAttached follow the pods (written on change only)."""

from __future__ import annotations

import copy

import pytest

from components.kubelet.pod_workers import PodWorkers
from components.kubelet.runtime import SimulatedRuntime
from components.kubelet.volumes import VolumeManager, unique_volume_name
from controlplane.api.resources import PODS, get
from controlplane.client.testing import FakeClient, FakeRecorder, FakeTracer

PVCS, PVS = get("persistentvolumeclaims"), get("persistentvolumes")


def task_pod():
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "task-pv-pod", "namespace": "default", "uid": "uid-pod", "resourceVersion": "5"},
            "spec": {"nodeName": "node01", "containers": [{"name": "task-pv-container", "image": "nginx",
                                                           "imagePullPolicy": "IfNotPresent"}],
                     "volumes": [{"name": "task-pv-storage",
                                  "persistentVolumeClaim": {"claimName": "task-pv-claim"}}]},
            "status": {"phase": "Pending"}}


def claim(phase="Bound"):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "task-pv-claim", "namespace": "default"},
            "spec": {"volumeName": "task-pv-volume"}, "status": {"phase": phase}}


def volume():
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "task-pv-volume"},
            "spec": {"hostPath": {"path": "/mnt/data"}}}


@pytest.fixture
async def env():
    client, rec = FakeClient(), FakeRecorder()
    changes: list[int] = []
    vm = VolumeManager(client, on_change=lambda: changes.append(1))
    rt = SimulatedRuntime("node01", "10.244.1.0/24", image_pull_seconds=0.0, container_start_seconds=0.0)
    w = PodWorkers(client, "node01", "192.168.0.101", rt, rec, FakeTracer(), volumes=vm)
    yield client, rec, vm, w, changes
    await w.stop()


async def sync(client, w, pod):
    w.update_pod(copy.deepcopy(pod))
    await w.wait_idle()
    return client.stored(PODS, pod["metadata"]["name"], "default")


@pytest.mark.parametrize("objs, error", [
    ([], 'error processing PVC default/task-pv-claim: failed to fetch PVC from API server: '
         'persistentvolumeclaims "task-pv-claim" not found'),
    ([(PVCS, claim("Pending"))], "error processing PVC default/task-pv-claim: PVC is not bound"),
    ([(PVCS, claim())], "error processing PVC default/task-pv-claim: failed to fetch PV task-pv-volume from API "
                        'server: persistentvolumes "task-pv-volume" not found'),
], ids=["claim missing", "claim unbound", "volume missing"])
async def test_pod_waits_with_failed_mount(env, objs, error):
    client, rec, vm, w, changes = env
    for res, o in objs:
        client.seed(res, o)
    client.seed(PODS, task_pod())
    pod = await sync(client, w, task_pod())
    assert pod["status"]["phase"] == "Pending"
    assert pod["status"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert [(e.type, e.reason, e.message) for e in rec.events] == [
        ("Warning", "FailedMount", "Unable to attach or mount volumes: unmounted volumes=[task-pv-storage], "
                                   f"unattached volumes=[], failed to process volumes=[task-pv-storage]: {error}")]
    assert "podIP" not in pod["status"] and changes == []


async def test_pod_starts_once_bound_and_node_reports_the_volume(env):
    client, rec, vm, w, changes = env
    client.seed(PODS, task_pod())
    await sync(client, w, task_pod())
    client.seed(PVCS, claim())
    client.seed(PVS, volume())
    pod = await sync(client, w, task_pod())
    assert pod["status"]["phase"] == "Running"
    assert vm.node_status() == {"volumesInUse": ["kubernetes.io/host-path/task-pv-volume"],
                                "volumesAttached": [{"name": "kubernetes.io/host-path/task-pv-volume",
                                                     "devicePath": ""}]}
    await sync(client, w, pod)
    assert changes == [1], "the node status is asked for once per change"
    w.remove_pod(pod)
    assert vm.node_status() == {"volumesInUse": None, "volumesAttached": None} and changes == [1, 1]


@pytest.mark.parametrize("spec, want", [
    ({"csi": {"driver": "hostpath.csi.k8s.io", "volumeHandle": "abc"}}, "kubernetes.io/csi/hostpath.csi.k8s.io^abc"),
    ({"hostPath": {"path": "/x"}}, "kubernetes.io/host-path/v"),
    ({"local": {"path": "/x"}}, "kubernetes.io/local-volume/v"),
], ids=["csi", "hostPath", "local"])
def test_unique_volume_name(spec, want):
    assert unique_volume_name({"metadata": {"name": "v"}, "spec": spec}) == want
