"""The real kubectl (/usr/bin/kubectl) on the client-compatibility regressions of issue 11
(item 4), against `python -m controlplane apiserver` on a real etcd."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import urllib.request

import pytest

from controlplane.storage import testing
from tests.integration.conftest import apiserver_on_test_etcd, urlopen
from tests.integration.test_kubectl_apiserver import kubectl

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (testing.available() and os.path.exists("/usr/bin/kubectl")),
                                 reason="needs /usr/bin/etcd and /usr/bin/kubectl")]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with apiserver_on_test_etcd(tmp_path_factory.mktemp("kcompat")) as c:
        yield c


EVENTS = """\
apiVersion: v1
kind: Event
metadata: {name: ev-late}
involvedObject: {kind: Pod, name: p1, namespace: default}
reason: Late
message: second
type: Normal
lastTimestamp: "2026-01-01T00:00:20Z"
firstTimestamp: "2026-01-01T00:00:20Z"
---
apiVersion: v1
kind: Event
metadata: {name: ev-early}
involvedObject: {kind: Pod, name: p1, namespace: default}
reason: Early
message: first
type: Normal
lastTimestamp: "2026-01-01T00:00:10Z"
firstTimestamp: "2026-01-01T00:00:10Z"
"""


def test_get_events_sort_by_last_timestamp(cluster):
    f = cluster["dir"] / "events.yaml"
    f.write_text(EVENTS)
    r = kubectl(cluster, "create", "-f", str(f))
    assert r.returncode == 0, r.stderr
    r = kubectl(cluster, "get", "events", "--sort-by=.lastTimestamp", "-o", "custom-columns=NAME:.metadata.name,"
                "REASON:.reason", "--no-headers")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["ev-early", "Early", "ev-late", "Late"]
    r = kubectl(cluster, "get", "events", "--sort-by=.lastTimestamp")
    assert r.returncode == 0, r.stderr
    assert "No resources found" not in r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert "Early" in lines[1] and "Late" in lines[2]




def _patch_status(c, ns, name, body):
    req = urllib.request.Request(f"{c['url']}/api/v1/namespaces/{ns}/pods/{name}/status",
                                 data=json.dumps(body).encode(), method="PATCH",
                                 headers={"Content-Type": "application/merge-patch+json"})
    with urlopen(req) as r:
        assert r.status == 200


def test_logs_follow_streams_until_the_container_terminates(cluster):
    f = cluster["dir"] / "logpod.yaml"
    f.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: logpod}\n"
                 "spec: {nodeName: n1, containers: [{name: c, image: nginx}]}\n")
    r = kubectl(cluster, "create", "-f", str(f))
    assert r.returncode == 0, r.stderr
    cs = {"name": "c", "ready": True, "restartCount": 0, "image": "nginx", "imageID": "",
          "containerID": "containerd://1", "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}
    _patch_status(cluster, "default", "logpod", {"status": {"phase": "Running", "containerStatuses": [cs]}})
    env = {**os.environ, "HOME": str(cluster["dir"])}
    proc = subprocess.Popen(["/usr/bin/kubectl", "--kubeconfig", cluster["kubeconfig"], "logs", "-f", "logpod"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = proc.stdout.readline()  # blocks until kubectl printed the first line
        assert first.startswith('container "c" started'), first + proc.stderr.read()
        assert proc.poll() is None  # still following
        cs["state"] = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": "2026-01-01T00:00:00Z",
                                      "finishedAt": "2026-01-01T00:00:09Z"}}
        _patch_status(cluster, "default", "logpod", {"status": {"phase": "Succeeded", "containerStatuses": [cs]}})
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out == 'container "c" terminated: exitCode 0, reason Completed\n'




FIELD_PATHS = json.loads((pathlib.Path(__file__).parent.parent / "data" / "openapi_field_paths_v1_32.json").read_text())


def explain_paths(text: str) -> set[str]:
    """The field paths of ``kubectl explain --recursive`` output (two spaces per level)."""
    out: set[str] = set()
    stack: list[str] = []
    in_fields = False
    for line in text.splitlines():
        if line.startswith("FIELDS:"):
            in_fields = True
            continue
        if not in_fields or not line.strip() or "\t" not in line:
            continue
        indent = (len(line) - len(line.lstrip(" "))) // 2 - 1
        name = line.strip().split("\t")[0]
        del stack[indent:]
        stack.append(name)
        out.add(".".join(stack))
    return out


@pytest.mark.parametrize("resource", sorted(FIELD_PATHS["kinds"]))
def test_explain_recursive_has_every_kubernetes_field(cluster, resource):
    gv, plural = resource.rsplit("/", 1)
    r = kubectl(cluster, "explain", plural, "--recursive", f"--api-version={gv}")
    assert r.returncode == 0, r.stderr
    missing = sorted(set(FIELD_PATHS["kinds"][resource]) - explain_paths(r.stdout))
    assert missing == []


@pytest.mark.parametrize("path,fields", [
    ("deployment.spec.strategy.rollingUpdate", ["maxSurge", "maxUnavailable"]),
    ("pod.spec.volumes.configMap", ["defaultMode", "items", "name", "optional"]),
    ("statefulset.status", ["availableReplicas", "collisionCount", "conditions", "currentReplicas"]),
], ids=["rollingUpdate", "configMap-volume", "statefulset-status"])
def test_explain_nested_field(cluster, path, fields):
    r = kubectl(cluster, "explain", path)
    assert r.returncode == 0, r.stderr
    assert "DESCRIPTION:" in r.stdout and "field does not exist" not in r.stderr
    listed = {line.strip().split("\t")[0] for line in r.stdout.split("FIELDS:", 1)[1].splitlines() if "\t" in line}
    assert set(fields) <= listed
    desc = r.stdout.split("DESCRIPTION:", 1)[1].split("FIELDS:", 1)[0].strip()
    assert desc


DEPLOY_WITH_UNKNOWN = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: unk}
spec:
  replicas: 1
  selector: {matchLabels: {app: unk}}
  template:
    metadata: {labels: {app: unk}}
    spec:
      containers: [{name: c, image: nginx}]
      volumes: [{name: v, configMap: {name: cm, bogus: 1}}]
"""


def test_unknown_fields_strict_apply_refused_and_dropped_otherwise(cluster):
    f = cluster["dir"] / "unk.yaml"
    f.write_text(DEPLOY_WITH_UNKNOWN)
    r = kubectl(cluster, "apply", "--server-side", "--validate=strict", "-f", str(f))
    assert r.returncode != 0
    assert ".spec.template.spec.volumes[0].configMap.bogus: field not declared in schema" in r.stderr
    r = kubectl(cluster, "create", "--validate=strict", "-f", str(f))
    assert r.returncode != 0 and 'strict decoding error: unknown field "spec.template.spec.volumes[0].configMap.bogus"' \
        in r.stderr
    r = kubectl(cluster, "create", "--validate=warn", "-f", str(f))
    assert r.returncode == 0, r.stderr
    assert 'unknown field "spec.template.spec.volumes[0].configMap.bogus"' in r.stderr
    r = kubectl(cluster, "patch", "deployment", "unk", "--type=merge", "-p", '{"status":{"x":1}}')
    assert r.returncode == 0 and 'unknown field "status.x"' in r.stderr
    r = kubectl(cluster, "label", "deployment", "unk", "a=b")
    assert r.returncode == 0 and "unknown field" not in r.stderr  # nothing unknown was stored
    r = kubectl(cluster, "get", "deployment", "unk", "-o", "json")
    obj = json.loads(r.stdout)
    assert "bogus" not in obj["spec"]["template"]["spec"]["volumes"][0]["configMap"]
    assert "x" not in obj.get("status", {})
