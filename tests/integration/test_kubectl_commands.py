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

import pytest

from controlplane.storage import testing
from tests.integration.conftest import KUBECTL, LineReader, start_apiserver, start_up, stop

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (testing.available() and os.path.exists(KUBECTL)),
                                 reason="needs /usr/bin/etcd and kubectl")]


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory):
    etcd = testing.EtcdProcess()
    url = asyncio.run(etcd.start())
    proc, out, server = start_apiserver(url)
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


MF = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: mf
  labels: {{app: mf}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: mf}}}}
  template:
    metadata: {{labels: {{app: mf}}}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
"""


def test_managed_fields_of_create_and_scale_then_apply_conflict(kubectl):
    """Update operations record managedFields (handlers/create.go managerOrUserAgent):
    ``kubectl create`` sends ``?fieldManager=kubectl-create``; ``kubectl scale`` sends none,
    so the User-Agent names it "kubectl", in an entry with subresource "scale" owning
    spec.replicas. ``get`` hides them unless ``--show-managed-fields``. A server-side apply
    (manager "kubectl", operation Apply: another identifier) of another replica count
    conflicts with that entry, worded as conflict.go printManager."""
    assert kubectl("create", "deployment", "mf", "--image=nginx:1.27", "--replicas=1").stdout == \
        "deployment.apps/mf created\n"
    assert kubectl("scale", "deployment", "mf", "--replicas=3").stdout == "deployment.apps/mf scaled\n"
    assert "managedFields" not in kubectl("get", "deploy", "mf", "-o", "yaml").stdout
    got = json.loads(kubectl("get", "deploy", "mf", "-o", "json", "--show-managed-fields").stdout)
    mf = {(e["manager"], e["operation"], e.get("subresource", "")): e for e in got["metadata"]["managedFields"]}
    assert set(mf) == {("kubectl-create", "Update", ""), ("kubectl", "Update", "scale")}
    assert mf["kubectl", "Update", "scale"]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert mf["kubectl", "Update", "scale"]["apiVersion"] == "apps/v1"
    create = mf["kubectl-create", "Update", ""]["fieldsV1"]
    assert "f:replicas" not in create["f:spec"]
    assert create["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']["f:image"] == {}
    yml = kubectl("get", "deploy", "mf", "-o", "yaml", "--show-managed-fields").stdout
    assert re.search(r"^  - apiVersion: apps/v1\n    fieldsType: FieldsV1\n", yml, re.M), yml
    assert re.search(r"^    manager: kubectl\n    operation: Update\n    subresource: scale\n", yml, re.M), yml

    p = kubectl("apply", "--server-side", "-f", "-", input=MF.format(replicas=2), check=False)
    assert p.returncode != 0
    assert ('Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using '
            'apps/v1: .spec.replicas') in p.stderr, p.stderr
    assert kubectl("get", "deploy", "mf", "-o", "jsonpath={.spec.replicas}").stdout == "3"
    # the replica count the scaler set: no conflict (co-owned)
    assert kubectl("apply", "--server-side", "-f", "-", input=MF.format(replicas=3)).stdout == \
        "deployment.apps/mf serverside-applied\n"
    got = json.loads(kubectl("get", "deploy", "mf", "-o", "json", "--show-managed-fields").stdout)
    assert [(e["manager"], e["operation"]) for e in got["metadata"]["managedFields"]][0] == ("kubectl", "Apply")
    assert {(e["manager"], e["operation"], e.get("subresource", "")) for e in got["metadata"]["managedFields"]} \
        == {("kubectl", "Apply", ""), ("kubectl-create", "Update", ""), ("kubectl", "Update", "scale")}


# ---------------------------------------------------------------------------------------------
# The rest of issue 4's command list against the whole control plane (`controlplane up`: etcd,
# apiserver, controller-manager, scheduler, two kubelets), so that rollouts, scaling, watches,
# describe and deletion act on pods that really get scheduled and run. Each assertion is a line
# a real v1.32 cluster prints for the same command.

WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {{app: web}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
"""

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels: {{app: {name}}}
spec:
  containers:
  - name: c
    image: nginx:1.27
    ports: [{{containerPort: 80}}]
"""


@pytest.fixture(scope="module")
def up(tmp_path_factory):
    """`controlplane up` on free ports (embedded etcd) and a runner of the real kubectl with its
    own cache dir; ``env`` adds variables (KUBE_EDITOR)."""
    tmp = str(tmp_path_factory.mktemp("up"))
    proc, out, data_dir = start_up(tmp)
    kubeconfig = os.path.join(data_dir, "kubeconfig")
    cache = os.path.join(tmp, "kube-cache")

    def run(*args: str, check: bool = True, input: str | None = None, env: dict | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess:
        p = subprocess.run([KUBECTL, "--kubeconfig", kubeconfig, "--cache-dir", cache, *args], input=input,
                           capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, **(env or {})})
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {p.returncode}\n{p.stdout}\n{p.stderr}")
        return p
    run.argv = [KUBECTL, "--kubeconfig", kubeconfig, "--cache-dir", cache]
    yield run
    stop(proc)


def editor(tmp_path, sed: str) -> dict:
    """A KUBE_EDITOR that rewrites the file kubectl hands it with ``sed -i <sed>``."""
    script = tmp_path / "edit.sh"
    script.write_text(f"#!/bin/sh\nexec sed -i '{sed}' \"$1\"\n")
    script.chmod(0o755)
    return {"KUBE_EDITOR": str(script), "EDITOR": str(script)}


def rolled_out(up, name: str) -> None:
    out = up("rollout", "status", f"deployment/{name}", "--timeout=60s").stdout
    assert out.splitlines()[-1] == f'deployment "{name}" successfully rolled out', out


def test_deployment_apply_rollout_scale_edit_describe(up, tmp_path):
    assert up("apply", "-f", "-", input=WEB.format(replicas=2)).stdout == "deployment.apps/web created\n"
    rolled_out(up, "web")
    assert up("apply", "-f", "-", input=WEB.format(replicas=3)).stdout == "deployment.apps/web configured\n"
    assert up("apply", "-f", "-", input=WEB.format(replicas=3)).stdout == "deployment.apps/web unchanged\n"
    rolled_out(up, "web")
    assert up("get", "deploy", "web", "-o", "jsonpath={.status.readyReplicas}").stdout == "3"

    assert up("scale", "deployment", "web", "--replicas=1").stdout == "deployment.apps/web scaled\n"
    up("wait", "--for=jsonpath={.status.replicas}=1", "deployment/web", "--timeout=30s")
    assert len(json.loads(up("get", "pods", "-l", "app=web", "-o", "json").stdout)["items"]) >= 1

    # edit: kubectl GETs, runs the editor on the YAML, then PATCHes the difference
    env = editor(tmp_path, "/^spec:/,/^status:/s/^  replicas: 1$/  replicas: 2/")
    assert up("edit", "deployment/web", env=env).stdout == "deployment.apps/web edited\n"
    assert up("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}").stdout == "2"
    # an invalid edit: kubectl reopens the editor with the error, then keeps a copy and gives up
    bad_env = {**editor(tmp_path, "/^spec:/,/^status:/s/^  replicas: .*$/  replicas: -1/"),
               "TMPDIR": str(tmp_path)}
    bad = up("edit", "deployment/web", env=bad_env, check=False)
    assert bad.returncode == 1
    lines = bad.stderr.splitlines()
    assert lines[0] == 'error: deployments.apps "web" is invalid', bad.stderr
    assert re.fullmatch(r'A copy of your changes has been stored to "(.+\.yaml)"', lines[1]), bad.stderr
    assert lines[2] == "error: Edit cancelled, no valid changes were saved."
    kept = open(re.fullmatch(r'.*"(.+)"', lines[1]).group(1)).read()
    assert "spec.replicas: Invalid value: -1: must be greater than or equal to 0" in kept, kept
    assert up("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}").stdout == "2"
    unchanged = up("edit", "deployment/web", env={"KUBE_EDITOR": "true"})
    assert unchanged.stdout == "" and unchanged.stderr.strip() == "Edit cancelled, no changes made."
    rolled_out(up, "web")

    # a new template: a second ReplicaSet, the rollout waits for the old pods to go
    assert up("set", "image", "deployment/web", "nginx=nginx:1.28").stdout == \
        "deployment.apps/web image updated\n"
    rolled_out(up, "web")
    history = up("rollout", "history", "deployment/web").stdout.split()
    assert history[:6] == ["deployment.apps/web", "REVISION", "CHANGE-CAUSE", "1", "<none>", "2"]
    images = up("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].spec.containers[0].image}").stdout
    assert up("wait", "--for=condition=Available", "deployment/web").stdout == \
        "deployment.apps/web condition met\n"

    desc = up("describe", "deployment", "web").stdout
    assert re.search(r"^Name:\s+web$", desc, re.M) and re.search(r"^Selector:\s+app=web$", desc, re.M)
    assert re.search(r"^Replicas:\s+2 desired \| 2 updated \| \d total \| \d available \| \d unavailable$",
                     desc, re.M), desc
    assert re.search(r"^StrategyType:\s+RollingUpdate$", desc, re.M)
    assert re.search(r"^    Image:\s+nginx:1\.28$", desc, re.M), desc
    assert re.search(r"^NewReplicaSet:\s+web-[a-z0-9]+ \(2/2 replicas created\)$", desc, re.M), desc
    assert re.search(r"Normal\s+ScalingReplicaSet\s+\S+\s+deployment-controller\s+"
                     r"Scaled up replica set web-[a-z0-9]+ from 0 to 2", desc), desc
    assert "Scaled down replica set" in desc
    assert set(images.split()) <= {"nginx:1.27", "nginx:1.28"}


def test_pod_patch_types_label_annotate(up):
    assert up("create", "-f", "-", input=POD.format(name="p1")).stdout == "pod/p1 created\n"
    # kubectl says "(no change)" when the object it read equals the patch's answer: the pod's own
    # writers (scheduler, kubelet) must be done first, or their writes count as a change
    up("wait", "--for=condition=Ready", "pod/p1", "--timeout=60s")
    merge = '{"metadata":{"labels":{"m":"1"}}}'
    assert up("patch", "pod", "p1", "--type", "merge", "-p", merge).stdout == "pod/p1 patched\n"
    assert up("patch", "pod", "p1", "--type", "merge", "-p", merge).stdout == "pod/p1 patched (no change)\n"
    # strategic merge (kubectl's default type) merges the containers list by name and keeps the
    # ports; a JSON merge patch replaces the list, which pod update validation forbids
    image = '{"spec":{"containers":[{"name":"c","image":"nginx:1.28"}]}}'
    bad = up("patch", "pod", "p1", "--type", "merge", "-p", image, check=False)
    assert bad.returncode != 0
    assert bad.stderr.startswith('The Pod "p1" is invalid: spec: Forbidden: pod updates may not change '
                                 'fields other than `spec.containers[*].image`'), bad.stderr
    assert up("patch", "pod", "p1", "--type", "strategic", "-p", image).stdout == "pod/p1 patched\n"
    assert up("patch", "pod", "p1", "-p", image).stdout == "pod/p1 patched (no change)\n"
    json_patch = '[{"op":"add","path":"/metadata/labels/j","value":"3"}]'
    assert up("patch", "pod", "p1", "--type", "json", "-p", json_patch).stdout == "pod/p1 patched\n"
    failed_test = up("patch", "pod", "p1", "--type", "json", "-p",
                     '[{"op":"test","path":"/metadata/labels/j","value":"4"}]', check=False)
    assert failed_test.returncode != 0
    assert failed_test.stderr.strip() == \
        "The request is invalid: the server rejected our request due to an error in our request"
    not_a_list = up("patch", "pod", "p1", "--type", "json", "-p", '{"op":"add"}', check=False)
    assert not_a_list.returncode != 0 and not_a_list.stderr.strip() == \
        "Error from server (BadRequest): json: cannot unmarshal object into Go value of type jsonpatch.Patch"
    assert up("get", "pod", "p1", "-o", "jsonpath={.spec.containers[0].image} "
              "{.spec.containers[0].ports[0].containerPort} {.metadata.labels}").stdout == \
        'nginx:1.28 80 {"app":"p1","j":"3","m":"1"}'

    assert up("label", "pod", "p1", "tier=web").stdout == "pod/p1 labeled\n"
    assert up("label", "pod", "p1", "tier=web").stdout == "pod/p1 not labeled\n"
    assert up("label", "pod", "p1", "tier-").stdout == "pod/p1 unlabeled\n"
    assert up("annotate", "pod", "p1", "note=a").stdout == "pod/p1 annotated\n"
    again = up("annotate", "pod", "p1", "note=b", check=False)
    assert again.returncode != 0 and again.stderr.strip() == \
        "error: --overwrite is false but found the following declared annotation(s): 'note' already has a value (a)"
    assert up("annotate", "pod", "p1", "note=b", "--overwrite").stdout == "pod/p1 annotated\n"
    assert up("get", "pod", "p1", "-o", "jsonpath={.metadata.annotations.note}").stdout == "b"
    assert up("annotate", "pod", "p1", "note-").stdout == "pod/p1 annotated\n"
    assert "note" not in json.loads(up("get", "pod", "p1", "-o", "json").stdout)["metadata"].get("annotations", {})


def test_get_output_formats(up):
    up("create", "-f", "-", input=POD.format(name="p2"))
    up("wait", "--for=condition=Ready", "pod/p2", "--timeout=30s")
    assert up("get", "pod", "p2", "-o", "name").stdout == "pod/p2\n"
    obj = json.loads(up("get", "pod", "p2", "-o", "json").stdout)
    assert obj["kind"] == "Pod" and obj["apiVersion"] == "v1" and obj["status"]["phase"] == "Running"
    node = obj["spec"]["nodeName"]
    assert node in ("node01", "node02")
    yml = up("get", "pod", "p2", "-o", "yaml").stdout
    assert yml.startswith("apiVersion: v1\nkind: Pod\nmetadata:\n")
    assert re.search(r"^  phase: Running$", yml, re.M) and f"nodeName: {node}" in yml
    lst = up("get", "pods", "-l", "app=p2", "-o", "yaml").stdout
    assert lst.startswith("apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n")
    assert lst.rstrip().endswith("kind: List\nmetadata:\n  resourceVersion: \"\"")
    assert up("get", "pod", "p2", "-o", "jsonpath={.status.phase} {.spec.containers[*].name}").stdout == \
        "Running c"
    cols = up("get", "pod", "p2", "-o",
              "custom-columns=NAME:.metadata.name,IMAGE:.spec.containers[0].image,NODE:.spec.nodeName").stdout
    assert [l.split() for l in cols.splitlines()] == [["NAME", "IMAGE", "NODE"], ["p2", "nginx:1.27", node]]
    row = up("get", "pod", "p2", "--no-headers").stdout.split()
    assert row[:4] == ["p2", "1/1", "Running", "0"]


def test_get_watch_streams_added_modified_deleted(up):
    proc = subprocess.Popen([*up.argv, "get", "pods", "-l", "run=w1", "-w", "--output-watch-events"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out = LineReader(proc, proc.stdout)
        up("run", "w1", "--image=nginx:1.27")
        assert out.wait_for("ADDED", 30).split()[:2] == ["ADDED", "w1"]
        assert out.lines[0].split() == ["EVENT", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
        assert out.wait_for("Running", 30).split()[:4] == ["MODIFIED", "w1", "1/1", "Running"]
        assert up("delete", "pod", "w1").stdout == 'pod "w1" deleted\n'
        assert out.wait_for("DELETED", 30).split()[:2] == ["DELETED", "w1"]
        # the pod went through termination (MODIFIED lines) before DELETED
        assert [l.split()[0] for l in out.lines[1:]][-1] == "DELETED"
    finally:
        stop(proc)


def test_describe_node_and_pod(up):
    up("create", "-f", "-", input=POD.format(name="p3"))
    up("wait", "--for=condition=Ready", "pod/p3", "--timeout=30s")
    node = up("get", "pod", "p3", "-o", "jsonpath={.spec.nodeName}").stdout
    desc = up("describe", "node", node).stdout
    assert re.search(rf"^Name:\s+{node}$", desc, re.M)
    assert re.search(rf"^\s+kubernetes\.io/hostname={node}$", desc, re.M)
    assert re.search(rf"^  HolderIdentity:\s+{node}$", desc, re.M)
    assert re.search(r"^  Ready\s+True\s+.*KubeletReady\s+kubelet is posting ready status$", desc, re.M), desc
    assert re.search(r"^  InternalIP:\s+\S+$", desc, re.M) and re.search(r"^  pods:\s+110$", desc, re.M)
    assert re.search(r"^Non-terminated Pods:\s+\(\d+ in total\)$", desc, re.M)
    assert re.search(r"^  default\s+p3\s+0 \(0%\)", desc, re.M), desc
    assert "Allocated resources:" in desc
    pod = up("describe", "pod", "p3").stdout
    assert re.search(rf"^Node:\s+{node}/\S+$", pod, re.M) and re.search(r"^Status:\s+Running$", pod, re.M)
    assert re.search(r"^    Port:\s+80/TCP$", pod, re.M), pod
    assert re.search(r"^  Ready\s+True\s*$", pod, re.M), pod
    missing = up("describe", "pod", "nope", check=False)
    assert missing.returncode != 0 and missing.stderr.strip() == 'Error from server (NotFound): pods "nope" not found'


def test_replace(up):
    assert up("create", "configmap", "cfg", "--from-literal=k=v1").stdout == "configmap/cfg created\n"
    current = up("get", "cm", "cfg", "-o", "yaml").stdout
    assert up("replace", "-f", "-", input=current.replace("k: v1", "k: v2")).stdout == "configmap/cfg replaced\n"
    assert up("get", "cm", "cfg", "-o", "jsonpath={.data.k}").stdout == "v2"
    # the same (now stale) resourceVersion again: 409 Conflict, as kubectl prints it
    stale = up("replace", "-f", "-", input=current.replace("k: v1", "k: v3"), check=False)
    assert stale.returncode != 0
    assert stale.stderr.strip() == ('Error from server (Conflict): error when replacing "STDIN": Operation cannot '
                                    'be fulfilled on configmaps "cfg": the object has been modified; please '
                                    'apply your changes to the latest version and try again')
    # --force deletes and re-creates
    forced = up("replace", "--force", "-f", "-", input=current.replace("k: v1", "k: v4")).stdout
    assert forced == 'configmap "cfg" deleted\nconfigmap/cfg replaced\n'
    assert up("get", "cm", "cfg", "-o", "jsonpath={.data.k}").stdout == "v4"
    absent = up("replace", "-f", "-", input=current.replace("name: cfg", "name: absent"), check=False)
    assert absent.returncode != 0 and 'configmaps "absent" not found' in absent.stderr


def test_delete_file_all_and_force(up, tmp_path):
    f = tmp_path / "p4.yaml"
    f.write_text(POD.format(name="p4"))
    up("create", "-f", str(f))
    up("wait", "--for=condition=Ready", "pod/p4", "--timeout=30s")
    # a running pod: graceful deletion, kubectl waits until the kubelet has stopped it
    assert up("delete", "-f", str(f)).stdout == 'pod "p4" deleted\n'
    gone = up("get", "pod", "p4", check=False)
    assert gone.returncode != 0 and gone.stderr.strip() == 'Error from server (NotFound): pods "p4" not found'

    up("create", "-f", str(f))
    up("wait", "--for=condition=Ready", "pod/p4", "--timeout=30s")
    forced = up("delete", "pod", "p4", "--grace-period=0", "--force")
    assert forced.stdout == 'pod "p4" force deleted\n'
    assert forced.stderr.strip() == ("Warning: Immediate deletion does not wait for confirmation that the running "
                                     "resource has been terminated. The resource may continue to run on the "
                                     "cluster indefinitely.")
    assert up("get", "pod", "p4", "--ignore-not-found").stdout == ""

    # --all with --force in a namespace of its own
    up("create", "namespace", "doomed")
    for name in ("f1", "f2"):
        up("run", name, "--image=nginx:1.27", "-n", "doomed")
    up("wait", "--for=condition=Ready", "pod", "--all", "-n", "doomed", "--timeout=30s")
    both = up("delete", "pods", "--all", "-n", "doomed", "--grace-period=0", "--force")
    assert sorted(both.stdout.splitlines()) == ['pod "f1" force deleted', 'pod "f2" force deleted']
    assert both.stderr.startswith("Warning: Immediate deletion does not wait for confirmation")
    assert up("get", "pods", "-n", "doomed", "-o", "name").stdout == ""

    for name in ("d1", "d2"):
        up("create", "configmap", name, "-n", "kube-system", "--from-literal=a=b")
    up("wait", "--for=create", "configmap/kube-root-ca.crt", "-n", "kube-system", "--timeout=30s")
    ca_uid = up("get", "cm", "kube-root-ca.crt", "-n", "kube-system", "-o", "jsonpath={.metadata.uid}").stdout
    out = up("delete", "configmap", "--all", "-n", "kube-system").stdout.splitlines()
    assert {'configmap "d1" deleted', 'configmap "d2" deleted', 'configmap "kube-root-ca.crt" deleted'} <= set(out)
    # all deleted; what is left is only the root-ca-cert-publisher's new kube-root-ca.crt, as on a real cluster
    left = up("get", "cm", "-n", "kube-system", "-o",
              "jsonpath={range .items[*]}{.metadata.name}/{.metadata.uid} {end}").stdout.split()
    assert all(n.startswith("kube-root-ca.crt/") and n != f"kube-root-ca.crt/{ca_uid}" for n in left), left
    missing = up("delete", "pod", "nope", check=False)
    assert missing.returncode != 0 and missing.stderr.strip() == 'Error from server (NotFound): pods "nope" not found'
    assert up("delete", "pod", "nope", "--ignore-not-found").stdout == ""


def test_delete_deployment_cascades_to_its_pods(up):
    up("create", "deployment", "gone", "--image=nginx:1.27", "--replicas=2")
    rolled_out(up, "gone")
    assert up("delete", "deployment", "gone").stdout == 'deployment.apps "gone" deleted\n'
    # the garbage collector removes the ReplicaSet, then its pods
    up("wait", "--for=delete", "pod", "-l", "app=gone", "--timeout=30s")
    assert up("get", "rs,pods", "-l", "app=gone", "-o", "name").stdout == ""


def test_api_resources_version_logs(up):
    res = up("api-resources").stdout.splitlines()
    assert res[0].split() == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    rows = {tuple(l.split()) for l in res[1:]}
    for row in [("pods", "po", "v1", "true", "Pod"), ("nodes", "no", "v1", "false", "Node"),
                ("deployments", "deploy", "apps/v1", "true", "Deployment"),
                ("bindings", "v1", "true", "Binding"), ("leases", "coordination.k8s.io/v1", "true", "Lease")]:
        assert row in rows, row
    wide = up("api-resources", "--api-group=apps", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND", "VERBS", "CATEGORIES"]
    assert "create,delete,deletecollection,get,list,patch,update,watch" in next(l for l in wide
                                                                                 if l.startswith("deployments"))
    assert up("api-resources", "--namespaced=false", "-o", "name").stdout.split()[:2] == ["namespaces", "nodes"]

    version = up("version").stdout
    assert re.search(r"^Server Version: v1\.32\.\d+$", version, re.M), version
    server = json.loads(up("version", "-o", "json").stdout)["serverVersion"]
    assert (server["major"], server["minor"], server["platform"]) == ("1", "32", "linux/amd64")

    up("create", "-f", "-", input=POD.format(name="p5"))
    up("wait", "--for=condition=Ready", "pod/p5", "--timeout=30s")
    log = up("logs", "p5").stdout
    assert log.startswith('container "c" started: image "nginx:1.27"'), log
    bad = up("logs", "p5", "-c", "nope", check=False)
    assert bad.returncode != 0 and bad.stderr.strip() == "error: container nope is not valid for pod p5"
