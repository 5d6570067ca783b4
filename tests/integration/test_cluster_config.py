"""``controlplane up --config cluster.yaml``: the declarative cluster config, with real processes
and the real kubectl — named nodes with labels, taints and allocatable, a hollow-node pool whose
labels are templates, the controllers chosen."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from controlplane.lifeline import child_kwargs
from tests.integration.conftest import KUBECTL, LineReader, free_port, stop

pytestmark = pytest.mark.integration

CONFIG = """\
apiVersion: controlplane.io/v1alpha1
kind: Cluster
nodes:
- name: big
  labels: {disktype: ssd}
  taints: [{key: dedicated, value: db, effect: NoSchedule}]
  capacity: {cpu: "16", memory: 64Gi, pods: "200"}
  allocatable: {cpu: 15500m, memory: 62Gi}
hollowNodePools:
- namePrefix: zone-
  count: 4
  labels: {topology.kubernetes.io/zone: "z{index%2}"}
  taints: [{key: pool, value: "p{index}", effect: PreferNoSchedule}]
controllerManager:
  controllers: ["*", "-cronjob"]
"""


def test_up_with_config_runs_the_nodes_it_declares(tmp_path):
    (tmp_path / "cluster.yaml").write_text(CONFIG)
    data_dir = tmp_path / "cp"
    proc = subprocess.Popen([sys.executable, "-m", "controlplane", "up", "--config", str(tmp_path / "cluster.yaml"),
                             "--data-dir", str(data_dir), "--port", str(free_port()), "--etcd-port", str(free_port())],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                            **child_kwargs())
    try:
        LineReader(proc, proc.stdout).wait_for("control plane is up", 90)
        out = subprocess.run([KUBECTL, "--kubeconfig", str(data_dir / "kubeconfig"), "--cache-dir",
                              str(tmp_path / "cache"), "get", "nodes", "-o", "json"],
                             capture_output=True, text=True, timeout=60, check=True).stdout
        nodes = {n["metadata"]["name"]: n for n in json.loads(out)["items"]}
        assert sorted(nodes) == ["big", "zone-0", "zone-1", "zone-2", "zone-3"]
        big = nodes["big"]
        assert big["metadata"]["labels"]["disktype"] == "ssd"
        assert big["spec"]["taints"] == [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]
        assert big["status"]["capacity"]["cpu"] == "16" and big["status"]["capacity"]["pods"] == "200"
        assert big["status"]["allocatable"]["cpu"] == "15500m"
        assert big["status"]["allocatable"]["memory"] == f"{62 * 2**20}Ki"
        zones = {n: nodes[n]["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes if n != "big"}
        assert zones == {"zone-0": "z0", "zone-1": "z1", "zone-2": "z0", "zone-3": "z1"}
        assert nodes["zone-3"]["spec"]["taints"] == [{"key": "pool", "value": "p3", "effect": "PreferNoSchedule"}]
        cm_log = open(os.path.join(data_dir, "logs", "controller-manager.log")).read()
        started = next(w.split("=", 1)[1] for w in cm_log.split() if w.startswith("controllers="))
        assert "job" in started.split(",") and "cronjob" not in started.split(",")
    finally:
        stop(proc)


def test_up_with_a_bad_config_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "cluster.yaml").write_text(CONFIG.replace("NoSchedule", "NeverSchedule"))
    p = subprocess.run([sys.executable, "-m", "controlplane", "up", "--config", str(tmp_path / "cluster.yaml"),
                        "--data-dir", str(tmp_path / "cp")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert "nodes[0].taints[0].effect: Unsupported value: \"NeverSchedule\"" in p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "cp").exists()
