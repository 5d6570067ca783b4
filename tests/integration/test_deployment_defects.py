"""Issue 12 item 9 (the Deployment defects) and the EndpointSlice controller of item 8, with
the real kubectl against ``controlplane up`` (embedded etcd): a scale during a rollout
converges, ``rollout undo`` scales the old ReplicaSet back up (history ``2, 3``), a paused
Deployment reads Progressing Unknown/DeploymentPaused, and ``kubectl get endpointslices``
shows the controller's slices."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.integration.conftest import KUBECTL, start_up, stop

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("defects"))
    proc, _out, data_dir = start_up(tmp)
    argv = [KUBECTL, "--kubeconfig", os.path.join(data_dir, "kubeconfig"), "--cache-dir",
            os.path.join(tmp, "kube-cache")]

    def run(*args: str, check: bool = True, timeout: float = 120) -> str:
        p = subprocess.run([*argv, *args], capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {p.returncode}\n{p.stdout}\n{p.stderr}")
        return p.stdout
    yield run
    stop(proc)


def rolled_out(kubectl, name: str) -> None:
    out = kubectl("rollout", "status", f"deployment/{name}", "--timeout=90s")
    assert out.splitlines()[-1] == f'deployment "{name}" successfully rolled out', out


def get(kubectl, *args: str) -> dict:
    return json.loads(kubectl("get", *args, "-o", "json"))


def test_scale_during_rollout_converges(kubectl):
    kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=2")
    rolled_out(kubectl, "web")
    # new pods take 5 s to become available: the rollout is still under way when scaled
    kubectl("patch", "deployment", "web", "-p", '{"spec":{"minReadySeconds":5}}')
    assert kubectl("set", "image", "deploy/web", "nginx=nginx:1.28") == "deployment.apps/web image updated\n"
    assert kubectl("scale", "deploy/web", "--replicas=3") == "deployment.apps/web scaled\n"
    rolled_out(kubectl, "web")
    row = kubectl("get", "deploy", "web", "--no-headers").split()
    assert row[1:4] == ["3/3", "3", "3"], row
    for rs in get(kubectl, "rs", "-l", "app=web")["items"]:
        if rs["spec"]["replicas"]:
            assert rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] == "3"
            assert rs["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28"


def test_rollout_undo_scales_the_old_replica_set_back(kubectl):
    before = {r["metadata"]["name"] for r in get(kubectl, "rs", "-l", "app=web")["items"]}
    assert len(before) == 2
    assert kubectl("rollout", "undo", "deploy/web") == "deployment.apps/web rolled back\n"
    rolled_out(kubectl, "web")
    rss = {r["metadata"]["name"]: r for r in get(kubectl, "rs", "-l", "app=web")["items"]}
    assert set(rss) == before, sorted(rss)
    live = [r for r in rss.values() if r["spec"]["replicas"]]
    assert len(live) == 1 and live[0]["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert live[0]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert live[0]["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    history = kubectl("rollout", "history", "deploy/web").split()
    assert history == ["deployment.apps/web", "REVISION", "CHANGE-CAUSE", "2", "<none>", "3", "<none>"], history


def test_paused_deployment_progressing_unknown(kubectl):
    assert kubectl("rollout", "pause", "deploy/web") == "deployment.apps/web paused\n"
    kubectl("wait", "--for=jsonpath={.status.conditions[?(@.type==\"Progressing\")].reason}=DeploymentPaused",
            "deploy/web", "--timeout=30s")
    cond = next(c for c in get(kubectl, "deploy", "web")["status"]["conditions"] if c["type"] == "Progressing")
    assert (cond["status"], cond["message"]) == ("Unknown", "Deployment is paused")
    assert kubectl("rollout", "resume", "deploy/web") == "deployment.apps/web resumed\n"
    kubectl("wait", "--for=jsonpath={.status.conditions[?(@.type==\"Progressing\")].reason}="
            "NewReplicaSetAvailable", "deploy/web", "--timeout=60s")


def test_endpointslices_beside_endpoints(kubectl):
    kubectl("patch", "deployment", "web", "--type=json", "-p",
            '[{"op":"add","path":"/spec/template/spec/containers/0/ports",'
            '"value":[{"containerPort":80,"name":"http"}]}]')
    rolled_out(kubectl, "web")
    assert kubectl("expose", "deploy/web", "--port=8080", "--target-port=http") == "service/web exposed\n"
    kubectl("wait", "--for=jsonpath={.subsets[0].addresses[2].ip}", "endpoints/web", "--timeout=60s")
    svc = get(kubectl, "svc", "web")
    pods = {p["status"]["podIP"]: p for p in get(kubectl, "pods", "-l", "app=web")["items"]
            if p["status"].get("podIP") and not p["metadata"].get("deletionTimestamp")}
    items = get(kubectl, "endpointslices", "-l", "kubernetes.io/service-name=web")["items"]
    assert len(items) == 1
    sl = items[0]
    assert sl["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] == "endpointslice-controller.k8s.io"
    assert sl["metadata"]["ownerReferences"][0]["uid"] == svc["metadata"]["uid"]
    assert sl["addressType"] == "IPv4"
    assert sl["ports"] == [{"name": "", "port": 80, "protocol": "TCP"}]
    ready = {e["addresses"][0] for e in sl["endpoints"] if e["conditions"]["ready"]}
    assert ready == set(pods), (ready, set(pods))
    for e in sl["endpoints"]:
        assert e["targetRef"]["kind"] == "Pod" and e["nodeName"]
    header, row = kubectl("get", "endpointslices", "-l", "kubernetes.io/service-name=web").splitlines()
    assert header.split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    cells = row.split()
    assert cells[0] == sl["metadata"]["name"] and cells[0].startswith("web-")
    assert cells[1:3] == ["IPv4", "80"]
    assert set(cells[3].split(",")) == ready
