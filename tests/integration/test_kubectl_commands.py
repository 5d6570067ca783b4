"""The real kubectl against `python -m controlplane apiserver`: explain (OpenAPI v3 schemas),
expose (ClusterIP/NodePort allocation), logs (synthesized log, Status errors), get --raw
with resourceVersionMatch."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import re
import subprocess
import sys

import pytest

from controlplane.storage import testing
from tests.integration.conftest import KUBECTL, LineReader, stop

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (testing.available() and os.path.exists(KUBECTL)),
                                 reason="needs /usr/bin/etcd and kubectl")]


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory):
    etcd = testing.EtcdProcess()
    url = asyncio.run(etcd.start())
    proc = subprocess.Popen([sys.executable, "-m", "controlplane", "apiserver", "--etcd-servers", url,
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            cwd=os.path.join(os.path.dirname(__file__), "..", ".."))
    out = LineReader(proc, proc.stdout)
    server = out.wait_for("event=apiserver.ready", 60).split("url=")[1].split()[0]
    out.wait_for("event=apiserver.kubernetes_service", 30)
    cache = str(tmp_path_factory.mktemp("kube-cache"))

    def run(*args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
        p = subprocess.run([KUBECTL, "--server", server, "--cache-dir", cache, *args], input=input,
                           capture_output=True, text=True, timeout=60)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {p.returncode}\n{p.stdout}\n{p.stderr}")
        return p
    yield run
    stop(proc)
    asyncio.run(etcd.stop())


def test_explain(kubectl):
    out = kubectl("explain", "pods").stdout
    assert "KIND:       Pod" in out and "Pod is a group of containers" in out
    assert re.search(r"^  spec\t<PodSpec>", out, re.M) and re.search(r"^  status\t<PodStatus>", out, re.M)
    out = kubectl("explain", "pod.spec.containers").stdout
    assert "FIELD: containers <[]Container>" in out
    for field in ("image\t<string>", "resources\t<ResourceRequirements>", "env\t<[]EnvVar>"):
        assert field in out
    out = kubectl("explain", "deployment.spec.template.spec.containers.resources.requests").stdout
    assert "GROUP:      apps" in out and "FIELD: requests <map[string]string>" in out
    bad = kubectl("explain", "pod.spec.nope", check=False)
    assert bad.returncode != 0 and 'field "nope" does not exist' in bad.stderr


def test_expose_allocates_cluster_ip_and_node_port(kubectl):
    kubectl("create", "deployment", "web", "--image", "nginx:1.27")
    assert kubectl("expose", "deployment", "web", "--port", "80").stdout.strip() == "service/web exposed"
    kubectl("expose", "deployment", "web", "--port", "8080", "--name", "web-np", "--type", "NodePort")
    svcs = {s["metadata"]["name"]: s for s in json.loads(kubectl("get", "svc", "-o", "json").stdout)["items"]}
    assert svcs["kubernetes"]["spec"]["clusterIP"] == "10.96.0.1"
    ips = {svcs[n]["spec"]["clusterIP"] for n in ("web", "web-np")}
    assert len(ips) == 2 and all(ipaddress.ip_address(i) in ipaddress.ip_network("10.96.0.0/12") for i in ips)
    assert 30000 <= svcs["web-np"]["spec"]["ports"][0]["nodePort"] <= 32767
    assert svcs["web"]["spec"]["selector"] == {"app": "web"}
    # re-applying without a clusterIP keeps the allocated one
    manifest = json.loads(kubectl("get", "svc", "web", "-o", "json").stdout)
    manifest["spec"].pop("clusterIP")
    manifest["spec"].pop("clusterIPs")
    manifest["metadata"] = {"name": "web", "namespace": "default", "labels": {"app": "web", "tier": "x"}}
    kubectl("apply", "-f", "-", input=json.dumps(manifest))
    again = json.loads(kubectl("get", "svc", "web", "-o", "json").stdout)
    assert again["spec"]["clusterIP"] == svcs["web"]["spec"]["clusterIP"]
    assert again["metadata"]["labels"]["tier"] == "x"


def test_logs_of_a_pod_that_has_not_started(kubectl):
    kubectl("run", "lonely", "--image", "nginx:1.27")
    p = kubectl("logs", "lonely", check=False)
    assert p.returncode != 0
    assert 'container "lonely" in pod "lonely" is waiting to start: ContainerCreating' in p.stderr


def test_get_raw_resource_version_match(kubectl):
    lst = json.loads(kubectl("get", "--raw", "/api/v1/namespaces/default/pods").stdout)
    rv = lst["metadata"]["resourceVersion"]
    exact = json.loads(kubectl("get", "--raw", f"/api/v1/namespaces/default/pods?resourceVersion={rv}"
                                               "&resourceVersionMatch=Exact").stdout)
    assert exact["metadata"]["resourceVersion"] == rv
    bad = kubectl("get", "--raw", "/api/v1/pods?resourceVersionMatch=Exact", check=False)
    assert bad.returncode != 0 and "resourceVersionMatch is forbidden unless resourceVersion is provided" in bad.stderr


SSA = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ssa
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: ssa}}}}
  template:
    metadata: {{labels: {{app: ssa}}}}
    spec:
      containers:
      - name: c
        image: nginx:1.27
"""


def test_apply_server_side(kubectl):
    out = kubectl("apply", "--server-side", "-f", "-", input=SSA.format(replicas=2)).stdout
    assert out.strip() == "deployment.apps/ssa serverside-applied"
    kubectl("apply", "--server-side", "-f", "-", input=SSA.format(replicas=3))
    assert kubectl("get", "deploy", "ssa", "-o", "jsonpath={.spec.replicas}").stdout == "3"
    p = kubectl("apply", "--server-side", "--field-manager", "other", "-f", "-", input=SSA.format(replicas=5),
                check=False)
    assert p.returncode != 0
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas' in p.stderr
    kubectl("apply", "--server-side", "--field-manager", "other", "--force-conflicts", "-f", "-",
            input=SSA.format(replicas=5))
    got = json.loads(kubectl("get", "deploy", "ssa", "-o", "json", "--show-managed-fields").stdout)
    assert got["spec"]["replicas"] == 5
    assert {m["manager"] for m in got["metadata"]["managedFields"]} == {"kubectl", "other"}
