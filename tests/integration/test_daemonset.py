"""The docs' "Perform a Rolling Update on a DaemonSet" with the real kubectl against a
3-node ``controlplane up``: one fluentd-elasticsearch pod per node, ``kubectl set image``,
``kubectl rollout status`` finishing, two revisions in ``kubectl rollout history`` and
``kubectl rollout undo`` bringing the first template back (as revision 3); a node joining
later gets its pod, a deleted node's pod goes (through the pod GC's orphan rule), and
``kubectl delete ds`` takes the pods and revisions with it (the garbage collector)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from controlplane import pki
from controlplane.lifeline import child_kwargs
from tests.integration.conftest import KUBECTL, LineReader, free_port, spawn, stop

pytestmark = pytest.mark.integration

MANIFEST = os.path.join(os.path.dirname(__file__), "manifests", "fluentd-elasticsearch.yaml")
NODES = ("node01", "node02", "node03")
OLD = "quay.io/fluentd_elasticsearch/fluentd:v2.5.2"
NEW = "quay.io/fluentd_elasticsearch/fluentd:v2.6.0"


class Up:
    def __init__(self, tmp: str) -> None:
        data_dir = os.path.join(tmp, "cp")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "controlplane", "up", "--data-dir", data_dir, "--port", str(free_port()),
             "--etcd-port", str(free_port()), "--nodes", ",".join(NODES)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, **child_kwargs())
        self.out = LineReader(self.proc, self.proc.stdout)
        self.out.wait_for("control plane is up", 120)
        self.data_dir = data_dir
        self.kubeconfig = os.path.join(data_dir, "kubeconfig")
        self.server = next(line for line in open(self.kubeconfig) if "server:" in line).split("server:")[1].strip()
        self.cache = os.path.join(tmp, "kube-cache")

    def kubectl(self, *args: str) -> str:
        p = subprocess.run([KUBECTL, "--kubeconfig", self.kubeconfig, "--cache-dir", self.cache, *args],
                           capture_output=True, text=True, timeout=150)
        assert p.returncode == 0, f"kubectl {' '.join(args)} failed:\n{p.stdout}{p.stderr}"
        return p.stdout


@pytest.fixture(scope="module")
def up(tmp_path_factory):
    u = Up(str(tmp_path_factory.mktemp("ds")))
    yield u
    stop(u.proc)


def pods(up: Up) -> list[list[str]]:
    """Rows of ``kubectl get pods -o wide`` for the DaemonSet's pods (Terminating ones left out)."""
    out = up.kubectl("get", "pods", "-n", "kube-system", "-l", "name=fluentd-elasticsearch", "-o", "wide")
    rows = [line.split() for line in out.splitlines()[1:]]
    return [r for r in rows if r[2] != "Terminating"]


def images(up: Up) -> list[str]:
    out = up.kubectl("get", "pods", "-n", "kube-system", "-l", "name=fluentd-elasticsearch", "-o",
                     "jsonpath={range .items[*]}{.spec.containers[0].image}{'\\n'}{end}")
    return sorted(out.split())


def test_one_pod_per_node(up: Up):
    assert "daemonset.apps/fluentd-elasticsearch created" in up.kubectl("apply", "-f", MANIFEST)
    out = up.kubectl("rollout", "status", "ds/fluentd-elasticsearch", "-n", "kube-system", "--timeout=120s")
    assert 'daemon set "fluentd-elasticsearch" successfully rolled out' in out
    rows = pods(up)
    assert sorted(r[6] for r in rows) == list(NODES)          # NODE column: one pod per node
    assert all(r[2] == "Running" and r[1] == "1/1" for r in rows)
    ds = up.kubectl("get", "ds", "fluentd-elasticsearch", "-n", "kube-system").splitlines()
    assert ds[0].split()[:6] == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE"]
    assert ds[1].split()[1:6] == ["3", "3", "3", "3", "3"]


def test_set_image_rolls_out_and_history_lists_two_revisions(up: Up):
    out = up.kubectl("set", "image", "ds/fluentd-elasticsearch", f"fluentd-elasticsearch={NEW}", "-n", "kube-system")
    assert "daemonset.apps/fluentd-elasticsearch image updated" in out
    out = up.kubectl("rollout", "status", "ds/fluentd-elasticsearch", "-n", "kube-system", "--timeout=150s")
    assert 'daemon set "fluentd-elasticsearch" successfully rolled out' in out
    assert images(up) == [NEW] * 3
    assert sorted(r[6] for r in pods(up)) == list(NODES)
    hist = up.kubectl("rollout", "history", "ds/fluentd-elasticsearch", "-n", "kube-system").splitlines()
    assert hist[0] == "daemonset.apps/fluentd-elasticsearch "
    assert hist[1].split() == ["REVISION", "CHANGE-CAUSE"]
    assert [line.split()[0] for line in hist[2:] if line.strip()] == ["1", "2"]
    rev1 = up.kubectl("rollout", "history", "ds/fluentd-elasticsearch", "-n", "kube-system", "--revision=1")
    assert OLD in rev1


def test_rollout_undo_restores_the_first_template(up: Up):
    out = up.kubectl("rollout", "undo", "ds/fluentd-elasticsearch", "-n", "kube-system")
    assert "daemonset.apps/fluentd-elasticsearch rolled back" in out
    up.kubectl("rollout", "status", "ds/fluentd-elasticsearch", "-n", "kube-system", "--timeout=150s")
    assert images(up) == [OLD] * 3
    hist = up.kubectl("rollout", "history", "ds/fluentd-elasticsearch", "-n", "kube-system").splitlines()
    assert [line.split()[0] for line in hist[2:] if line.strip()] == ["2", "3"]


def test_node_added_later_gets_its_pod_and_a_deleted_node_loses_it(up: Up):
    # a node joining later gets its identity from the cluster's CA, as ``kubeadm join`` does
    kc = os.path.join(up.data_dir, "kubelet-node04.conf")
    certs = pki.PKI(os.path.join(up.data_dir, "pki"))
    pki.write_kubeconfig(kc, pki.kubeconfig(up.server, user=pki.node_user("node04"), ca=certs.ca().cert,
                                            client=certs.kubelet("node04")))
    kubelet, out = spawn("kubelet", "--kubeconfig", kc, "--node-name", "node04")
    try:
        out.wait_for("kubelet.nodes_registered", 60)
        up.kubectl("wait", "--for=condition=Ready", "node/node04", "--timeout=60s")
        up.kubectl("rollout", "status", "ds/fluentd-elasticsearch", "-n", "kube-system", "--timeout=120s")
        rows = pods(up)
        assert sorted(r[6] for r in rows) == [*NODES, "node04"]
    finally:
        stop(kubelet)
    pod = next(r[0] for r in pods(up) if r[6] == "node04")
    up.kubectl("delete", "node", "node04")
    # the pod GC deletes pods of a vanished node after its 40 s quarantine (gc_controller.go)
    up.kubectl("wait", "--for=delete", f"pod/{pod}", "-n", "kube-system", "--timeout=120s")
    up.kubectl("wait", "--for=jsonpath={.status.desiredNumberScheduled}=3", "ds/fluentd-elasticsearch",
               "-n", "kube-system", "--timeout=60s")
    assert sorted(r[6] for r in pods(up)) == list(NODES)


def test_delete_daemonset_collects_pods_and_revisions(up: Up):
    assert 'daemonset.apps "fluentd-elasticsearch" deleted' in up.kubectl(
        "delete", "ds", "fluentd-elasticsearch", "-n", "kube-system")
    up.kubectl("wait", "--for=delete", "pod", "-l", "name=fluentd-elasticsearch", "-n", "kube-system",
               "--timeout=90s")
    up.kubectl("wait", "--for=delete", "controllerrevision", "-l", "name=fluentd-elasticsearch",
               "-n", "kube-system", "--timeout=60s")
    out = up.kubectl("get", "controllerrevisions", "-n", "kube-system", "-l", "name=fluentd-elasticsearch",
                     "-o", "name")
    assert out.strip() == ""
