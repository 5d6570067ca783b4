"""The Kubernetes docs' "StatefulSet Basics" tutorial with the real kubectl against
``controlplane up``: ordered pod creation seen on a watch, the claims of
``volumeClaimTemplates``, scaling up and down from the highest ordinal, and a rolling
update after ``kubectl patch`` followed by ``kubectl rollout status``."""

from __future__ import annotations

import json
import subprocess
import threading
import time

import pytest

from tests.integration.conftest import KUBECTL, Cluster, stop, up_cluster

pytestmark = pytest.mark.integration

WEB_YAML = """\
apiVersion: v1
kind: Service
metadata:
  name: nginx
  labels:
    app: nginx
spec:
  ports:
  - port: 80
    name: web
  clusterIP: None
  selector:
    app: nginx
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: "nginx"
  replicas: 2
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: registry.k8s.io/nginx-slim:0.21
        ports:
        - containerPort: 80
          name: web
        volumeMounts:
        - name: www
          mountPath: /usr/share/nginx/html
  volumeClaimTemplates:
  - metadata:
      name: www
    spec:
      accessModes: [ "ReadWriteOnce" ]
      resources:
        requests:
          storage: 1Gi
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = up_cluster(str(tmp_path_factory.mktemp("sts")))
    yield c
    stop(c.proc)


class PodWatch:
    """``kubectl get --raw`` on a pod watch (one JSON event a line), read on a thread."""

    def __init__(self, cluster: Cluster) -> None:
        self.proc = subprocess.Popen(
            [KUBECTL, "--kubeconfig", cluster.kubeconfig, "--cache-dir", cluster.cache_dir, "get", "--raw",
             "/api/v1/namespaces/default/pods?watch=1&labelSelector=app%3Dnginx&timeoutSeconds=600"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.lines: list[str] = []
        self._cond = threading.Condition()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in iter(self.proc.stdout.readline, b""):
            with self._cond:
                self.lines.append(raw.decode(errors="replace").strip())
                self._cond.notify_all()

    def events(self) -> list[tuple[str, str, str, bool, bool]]:
        """``(type, name, phase, ready, terminating)`` of every event so far."""
        out = []
        for line in list(self.lines):
            if not line.startswith("{"):
                continue
            ev = json.loads(line)
            obj = ev["object"]
            st = obj.get("status") or {}
            ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in st.get("conditions") or [])
            out.append((ev["type"], obj["metadata"]["name"], st.get("phase", ""), ready,
                        bool(obj["metadata"].get("deletionTimestamp"))))
        return out

    def wait(self, pred, timeout: float = 120.0) -> list[tuple[str, str, str, bool, bool]]:
        """Block until ``pred(events)`` holds, on each new line of the watch."""
        deadline = time.monotonic() + timeout
        while True:
            evs = self.events()
            if pred(evs):
                return evs
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"watch condition not met; events: {evs[-20:]}")
            with self._cond:
                n = len(evs)
                self._cond.wait_for(lambda: len(self.events()) > n or self.proc.poll() is not None, left)
            if self.proc.poll() is not None and len(self.events()) == len(evs):
                raise AssertionError(f"the watch ended: {self.lines[-5:]}")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def running_ready(evs, name: str) -> bool:
    return any(n == name and t != "DELETED" and ph == "Running" and r and not term for t, n, ph, r, term in evs)


def first_index(evs, pred) -> int:
    return next(i for i, e in enumerate(evs) if pred(e))


@pytest.fixture(scope="module")
def web(cluster):
    w = PodWatch(cluster)
    out = cluster.kubectl("apply", "-f", "-", input=WEB_YAML).stdout
    assert "service/nginx created" in out and "statefulset.apps/web created" in out
    yield w
    w.close()


def test_pods_created_in_order(cluster, web):
    evs = web.wait(lambda e: running_ready(e, "web-1"))
    web0_running = first_index(evs, lambda e: e[1] == "web-0" and e[2] == "Running" and e[3])
    web1_added = first_index(evs, lambda e: e[1] == "web-1")
    assert evs[web1_added][0] == "ADDED"
    assert web0_running < web1_added, f"web-1 created before web-0 was Running and Ready: {evs}"
    pods = cluster.get_json("pods", "-l", "app=nginx")["items"]
    by_name = {p["metadata"]["name"]: p for p in pods}
    assert sorted(by_name) == ["web-0", "web-1"]
    p0 = by_name["web-0"]
    assert p0["spec"]["hostname"] == "web-0" and p0["spec"]["subdomain"] == "nginx"
    assert p0["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == "web-0"
    assert p0["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "0"
    events = cluster.kubectl("get", "events", "--field-selector", "involvedObject.name=web").stdout
    assert "create Pod web-0 in StatefulSet web successful" in events
    assert "create Claim www-web-0 Pod web-0 in StatefulSet web success" in events


def test_claims_for_each_pod(cluster, web):
    web.wait(lambda e: running_ready(e, "web-1"))
    out = cluster.kubectl("get", "pvc", "-l", "app=nginx").stdout.splitlines()
    assert out[0].split()[:2] == ["NAME", "STATUS"]
    assert sorted(line.split()[0] for line in out[1:]) == ["www-web-0", "www-web-1"]
    # provisioned through the default class, bound on each pod's node before the pod was bound
    assert {line.split()[1] for line in out[1:]} == {"Bound"}
    pods = {p["metadata"]["name"]: p for p in cluster.get_json("pods", "-l", "app=nginx")["items"]}
    for claim in cluster.get_json("pvc", "-l", "app=nginx")["items"]:
        pod = pods["web-" + claim["metadata"]["name"].rsplit("-", 1)[1]]
        assert claim["spec"]["storageClassName"] == "standard"
        assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == pod["spec"]["nodeName"]
        assert claim["spec"]["volumeName"] == f"pvc-{claim['metadata']['uid']}"


def test_scale_up_then_down_from_the_highest_ordinal(cluster, web):
    assert cluster.kubectl("scale", "sts", "web", "--replicas=5").stdout.strip() == "statefulset.apps/web scaled"
    evs = web.wait(lambda e: running_ready(e, "web-4"))
    order = [n for t, n, *_ in evs if t == "ADDED"]
    assert order[-3:] == ["web-2", "web-3", "web-4"]
    start = len(evs)
    assert cluster.kubectl("scale", "sts", "web", "--replicas=3").stdout.strip() == "statefulset.apps/web scaled"
    evs = web.wait(lambda e: sum(1 for x in e[start:] if x[0] == "DELETED") >= 2)[start:]
    deleted = [n for t, n, *_ in evs if t == "DELETED"]
    assert deleted == ["web-4", "web-3"]
    web4_gone = first_index(evs, lambda e: e[0] == "DELETED" and e[1] == "web-4")
    web3_terminating = first_index(evs, lambda e: e[1] == "web-3" and e[4])
    assert web4_gone < web3_terminating, "web-3 must wait until web-4 is gone"
    pvcs = cluster.kubectl("get", "pvc", "-l", "app=nginx", "-o", "name").stdout.split()
    assert len(pvcs) == 5, "Retain keeps the claims of the removed pods"


def test_rolling_update_after_patch(cluster, web):
    cluster.kubectl("rollout", "status", "sts/web", "--timeout=120s")
    before = cluster.get_json("sts", "web")["status"]["currentRevision"]
    out = cluster.kubectl("patch", "statefulset", "web", "--type=json", "-p",
                          '[{"op": "replace", "path": "/spec/template/spec/containers/0/image", '
                          '"value": "registry.k8s.io/nginx-slim:0.24"}]').stdout
    assert out.strip() == "statefulset.apps/web patched"
    out = cluster.kubectl("rollout", "status", "sts/web", "--timeout=180s").stdout
    assert "partitioned roll out complete: 3 new pods have been updated..." in out
    pods = cluster.get_json("pods", "-l", "app=nginx")["items"]
    assert sorted(p["metadata"]["name"] for p in pods) == ["web-0", "web-1", "web-2"]
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {"registry.k8s.io/nginx-slim:0.24"}
    st = cluster.get_json("sts", "web")["status"]
    assert st["currentRevision"] == st["updateRevision"] != before
    assert (st["replicas"], st["readyReplicas"], st["updatedReplicas"], st["currentReplicas"]) == (3, 3, 3, 3)
    revs = cluster.kubectl("get", "controllerrevisions", "-o", "name").stdout.split()
    assert len([r for r in revs if r.startswith("controllerrevision.apps/web-")]) == 2


def test_rollout_history_and_undo(cluster, web):
    out = cluster.kubectl("rollout", "history", "sts/web").stdout.split("\n")
    assert out[0] == "statefulset.apps/web "
    assert [line.split()[0] for line in out[2:] if line.strip()] == ["1", "2"]
    assert cluster.kubectl("rollout", "undo", "sts/web").stdout.strip() == "statefulset.apps/web rolled back"
    cluster.kubectl("rollout", "status", "sts/web", "--timeout=180s")
    pods = cluster.get_json("pods", "-l", "app=nginx")["items"]
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {"registry.k8s.io/nginx-slim:0.21"}
    revs = cluster.get_json("controllerrevisions")["items"]
    assert sorted(r["revision"] for r in revs) == [2, 3], "the rollback renumbers revision 1 as 3"
    row = cluster.kubectl("get", "sts", "web").stdout.splitlines()
    assert row[0].split() == ["NAME", "READY", "AGE"] and row[1].split()[:2] == ["web", "3/3"]
