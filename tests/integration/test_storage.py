"""Storage with real processes (``controlplane up``) and the real kubectl: the Kubernetes task
"Configure a Pod to Use a PersistentVolume for Storage" (a hostPath PV bound to a claim of
class ``manual``, a pod using it, the volume Released when the claim goes), dynamic
provisioning through the default ``standard`` class (WaitForFirstConsumer: the claim waits
for a pod, then binds on the pod's node), and a pod whose Immediate claim nothing can
satisfy staying Pending with FailedScheduling. Waits use ``kubectl wait`` and watches."""

from __future__ import annotations

import json
import queue
import subprocess
import threading

import pytest

from tests.integration.conftest import KUBECTL, Cluster, stop, up_cluster

pytestmark = pytest.mark.integration

TASK_PV = """\
apiVersion: v1
kind: PersistentVolume
metadata:
  name: task-pv-volume
  labels:
    type: local
spec:
  storageClassName: manual
  capacity:
    storage: 10Gi
  accessModes:
    - ReadWriteOnce
  hostPath:
    path: "/mnt/data"
"""

TASK_PVC = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: task-pv-claim
spec:
  storageClassName: manual
  accessModes:
    - ReadWriteOnce
  resources:
    requests:
      storage: 3Gi
"""


def pod_yaml(name: str, claim: str) -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  volumes:
    - name: storage
      persistentVolumeClaim:
        claimName: {claim}
  containers:
    - name: c
      image: nginx
      volumeMounts:
        - mountPath: "/usr/share/nginx/html"
          name: storage
"""


def claim_yaml(name: str, extra: str = "") -> str:
    return (f"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}}}\nspec:\n"
            f"  accessModes: [ReadWriteOnce]\n  resources: {{requests: {{storage: 1Gi}}}}\n{extra}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = up_cluster(str(tmp_path_factory.mktemp("storage")))
    yield c
    stop(c.proc)


class Watch:
    """A watch (``kubectl get --raw <path>?watch=1``) read on a thread; :meth:`wait` blocks on
    its events."""

    def __init__(self, cluster: Cluster, path: str) -> None:
        self.proc = subprocess.Popen(
            [KUBECTL, "--kubeconfig", cluster.kubeconfig, "--cache-dir", cluster.cache_dir, "get", "--raw",
             f"{path}{'&' if '?' in path else '?'}watch=1&timeoutSeconds=300"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[dict] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in iter(self.proc.stdout.readline, b""):
            self.lines.put(raw.decode(errors="replace"))

    def wait(self, pred, timeout: float = 60.0) -> dict:
        """The first object (seen before or arriving) for which ``pred`` holds (AssertionError
        after ``timeout`` s)."""
        for obj in self.seen:
            if pred(obj):
                return obj
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"watch condition not met; seen: {self.seen[-10:]}") from None
            if not line.startswith("{"):
                continue
            obj = json.loads(line)["object"]
            self.seen.append(obj)
            if pred(obj):
                return obj

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


class EventWatch(Watch):
    """The events of one object in ``default``."""

    def __init__(self, cluster: Cluster, name: str) -> None:
        super().__init__(cluster, f"/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D{name}")

    def wait_reason(self, reason: str, timeout: float = 60.0) -> str:
        """The message of the first event with ``reason``."""
        return str(self.wait(lambda e: e.get("reason") == reason, timeout).get("message", ""))


def rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.strip().splitlines()]


def test_default_storage_class_is_standard(cluster):
    sc = cluster.get_json("sc", "standard")
    assert sc["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"] == "true"
    assert sc["volumeBindingMode"] == "WaitForFirstConsumer" and sc["reclaimPolicy"] == "Delete"
    assert rows(cluster.kubectl("get", "sc").stdout)[1][:3] == ["standard", "(default)", "controlplane.io/hostpath"]


def test_configure_a_pod_to_use_a_persistent_volume(cluster):
    assert cluster.kubectl("apply", "-f", "-", input=TASK_PV).stdout.strip() == \
        "persistentvolume/task-pv-volume created"
    cluster.kubectl("wait", "--for=jsonpath={.status.phase}=Available", "pv/task-pv-volume", "--timeout=60s")
    assert cluster.kubectl("apply", "-f", "-", input=TASK_PVC).stdout.strip() == \
        "persistentvolumeclaim/task-pv-claim created"
    cluster.kubectl("wait", "--for=jsonpath={.status.phase}=Bound", "pvc/task-pv-claim", "--timeout=60s")
    pv = rows(cluster.kubectl("get", "pv", "task-pv-volume").stdout)
    assert pv[1][:7] == ["task-pv-volume", "10Gi", "RWO", "Retain", "Bound", "default/task-pv-claim", "manual"]
    pvc = rows(cluster.kubectl("get", "pvc", "task-pv-claim").stdout)
    assert pvc[1][:6] == ["task-pv-claim", "Bound", "task-pv-volume", "10Gi", "RWO", "manual"]
    claim = cluster.get_json("pvc", "task-pv-claim")
    ann = {k: v for k, v in claim["metadata"]["annotations"].items() if k.startswith("pv.kubernetes.io/")}
    assert ann == {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}
    assert claim["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert cluster.get_json("pv", "task-pv-volume")["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]

    cluster.kubectl("apply", "-f", "-", input=pod_yaml("task-pv-pod", "task-pv-claim"))
    cluster.kubectl("wait", "--for=condition=Ready", "pod/task-pv-pod", "--timeout=90s")
    node = cluster.get_json("pod", "task-pv-pod")["spec"]["nodeName"]
    cluster.kubectl("wait", "--for=jsonpath={.status.volumesInUse[0]}=kubernetes.io/host-path/task-pv-volume",
                    f"node/{node}", "--timeout=60s")

    cluster.kubectl("delete", "pod", "task-pv-pod", "--timeout=60s")
    assert cluster.kubectl("delete", "pvc", "task-pv-claim", "--timeout=60s").stdout.strip() == \
        'persistentvolumeclaim "task-pv-claim" deleted'
    cluster.kubectl("wait", "--for=jsonpath={.status.phase}=Released", "pv/task-pv-volume", "--timeout=60s")
    assert rows(cluster.kubectl("get", "pv", "task-pv-volume").stdout)[1][4:6] == \
        ["Released", "default/task-pv-claim"]
    nodes = Watch(cluster, f"/api/v1/nodes?fieldSelector=metadata.name%3D{node}")
    try:
        nodes.wait(lambda n: not n["status"].get("volumesInUse") and not n["status"].get("volumesAttached"))
    finally:
        nodes.close()


def test_dynamic_provisioning_waits_for_the_first_consumer(cluster):
    events = EventWatch(cluster, "dyn-claim")
    try:
        cluster.kubectl("apply", "-f", "-", input=claim_yaml("dyn-claim"))
        assert events.wait_reason("WaitForFirstConsumer") == "waiting for first consumer to be created before binding"
        claim = cluster.get_json("pvc", "dyn-claim")
        assert claim["spec"]["storageClassName"] == "standard" and claim["status"]["phase"] == "Pending"
        cluster.kubectl("apply", "-f", "-", input=pod_yaml("dyn-pod", "dyn-claim"))
        cluster.kubectl("wait", "--for=jsonpath={.status.phase}=Bound", "pvc/dyn-claim", "--timeout=60s")
        cluster.kubectl("wait", "--for=condition=Ready", "pod/dyn-pod", "--timeout=90s")
        claim = cluster.get_json("pvc", "dyn-claim")
        node = cluster.get_json("pod", "dyn-pod")["spec"]["nodeName"]
        name = f"pvc-{claim['metadata']['uid']}"
        ann = claim["metadata"]["annotations"]
        assert claim["spec"]["volumeName"] == name
        assert ann["volume.kubernetes.io/selected-node"] == node
        assert ann["volume.kubernetes.io/storage-provisioner"] == "controlplane.io/hostpath"
        assert ann["volume.beta.kubernetes.io/storage-provisioner"] == "controlplane.io/hostpath"
        pv = cluster.get_json("pv", name)
        assert pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == "controlplane.io/hostpath"
        assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == \
            [node]
        assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
        assert events.wait_reason("ProvisioningSucceeded") == f"Successfully provisioned volume {name}"
        cluster.kubectl("delete", "pod", "dyn-pod", "--timeout=60s")
        cluster.kubectl("delete", "pvc", "dyn-claim", "--timeout=60s")
        cluster.kubectl("wait", "--for=delete", f"pv/{name}", "--timeout=60s")
    finally:
        events.close()


def test_unsatisfiable_immediate_claim_keeps_the_pod_pending(cluster):
    cls = ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: static-only}\n"
           "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: Immediate\n")
    cluster.kubectl("apply", "-f", "-", input=cls)
    cluster.kubectl("apply", "-f", "-", input=claim_yaml("stuck-claim", "  storageClassName: static-only\n"))
    events = EventWatch(cluster, "stuck-pod")
    try:
        cluster.kubectl("apply", "-f", "-", input=pod_yaml("stuck-pod", "stuck-claim"))
        msg = events.wait_reason("FailedScheduling")
        assert "pod has unbound immediate PersistentVolumeClaims" in msg, msg
        assert msg.startswith("0/") and "preemption: " in msg
    finally:
        events.close()
    pod = cluster.get_json("pod", "stuck-pod")
    assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
    assert cluster.get_json("pvc", "stuck-claim")["status"]["phase"] == "Pending"


def test_missing_claim_is_named_in_failed_scheduling(cluster):
    events = EventWatch(cluster, "orphan-pod")
    try:
        cluster.kubectl("apply", "-f", "-", input=pod_yaml("orphan-pod", "no-such-claim"))
        assert 'persistentvolumeclaim "no-such-claim" not found' in events.wait_reason("FailedScheduling")
    finally:
        events.close()


def test_kubelet_waits_for_a_claim_of_a_pod_bound_by_hand(cluster):
    node = cluster.get_json("nodes")["items"][0]["metadata"]["name"]
    manifest = pod_yaml("direct-pod", "late-claim").replace("spec:\n", f"spec:\n  nodeName: {node}\n", 1)
    events = EventWatch(cluster, "direct-pod")
    try:
        cluster.kubectl("apply", "-f", "-", input=manifest)
        msg = events.wait_reason("FailedMount")
        assert msg == ("Unable to attach or mount volumes: unmounted volumes=[storage], unattached volumes=[], "
                       "failed to process volumes=[storage]: error processing PVC default/late-claim: failed to "
                       'fetch PVC from API server: persistentvolumeclaims "late-claim" not found')
    finally:
        events.close()
    cluster.kubectl("wait", "--for=jsonpath={.status.containerStatuses[0].state.waiting.reason}=ContainerCreating",
                    "pod/direct-pod", "--timeout=60s")
    assert cluster.get_json("pod", "direct-pod")["status"]["phase"] == "Pending"
    cluster.kubectl("apply", "-f", "-", input=TASK_PV.replace("task-pv-volume", "late-volume")
                    .replace("manual", "by-hand"))
    cluster.kubectl("apply", "-f", "-", input=TASK_PVC.replace("task-pv-claim", "late-claim")
                    .replace("manual", "by-hand"))
    cluster.kubectl("wait", "--for=condition=Ready", "pod/direct-pod", "--timeout=90s")
    assert cluster.get_json("pvc", "late-claim")["spec"]["volumeName"] == "late-volume"
