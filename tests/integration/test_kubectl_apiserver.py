"""The real kubectl (/usr/bin/kubectl) against `python -m controlplane apiserver` on a real etcd."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import urllib.request

import pytest

from controlplane.storage import testing
from tests.integration.conftest import start_apiserver, stop, urlopen
from tests.support.tls import harness

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (testing.available() and os.path.exists("/usr/bin/kubectl")),
                                 reason="needs /usr/bin/etcd and /usr/bin/kubectl")]

MYAPP1 = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: myapp1
spec:
  replicas: 3
  selector:
    matchLabels:
      app: myapp1
  template:
    metadata:
      labels:
        app: myapp1
    spec:
      nodeSelector:
        kgc: a
      containers:
      - name: myapp1
        image: soscscs/myapp:v1
        ports:
        - containerPort: 80
"""

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: myapp01
  labels:
    app: myapp01
spec:
  containers:
  - name: with-node-affinity
    image: soscscs/myapp:v1
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    d = tmp_path_factory.mktemp("kc")
    etcd = testing.EtcdProcess()
    etcd_url = asyncio.run(etcd.start())
    proc, _, url = start_apiserver(etcd_url)
    kubeconfig = d / "kubeconfig"
    kubeconfig.write_text(harness().kubeconfig_text(url))  # the session CA and admin certificate
    yield {"url": url, "kubeconfig": str(kubeconfig), "dir": d, "proc": proc}
    stop(proc)
    asyncio.run(etcd.stop())


def kubectl(c, *args, stdin=None):
    env = {**os.environ, "HOME": str(c["dir"])}
    return subprocess.run(["/usr/bin/kubectl", "--kubeconfig", c["kubeconfig"], "--cache-dir",
                           str(c["dir"] / "cache"), *args], input=stdin, capture_output=True, text=True,
                          timeout=60, env=env)


def post(c, path, obj):
    req = urllib.request.Request(c["url"] + path, data=json.dumps(obj).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urlopen(req) as r:
        return json.loads(r.read())


def test_apply_deployment_and_reapply(cluster):
    f = cluster["dir"] / "myapp1.yaml"
    f.write_text(MYAPP1)
    r = kubectl(cluster, "apply", "-f", str(f))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "deployment.apps/myapp1 created"
    r = kubectl(cluster, "apply", "-f", str(f))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "deployment.apps/myapp1 unchanged"
    r = kubectl(cluster, "get", "deploy")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert "myapp1" in r.stdout
    # change replicas → PATCH (strategic merge) → "configured"
    f.write_text(MYAPP1.replace("replicas: 3", "replicas: 2"))
    r = kubectl(cluster, "apply", "-f", str(f))
    assert r.stdout.strip() == "deployment.apps/myapp1 configured", r.stderr
    r = kubectl(cluster, "get", "deploy", "myapp1", "-o", "jsonpath={.spec.replicas} {.metadata.generation}")
    assert r.stdout == "2 2", r.stderr


def test_node_labels(cluster):
    post(cluster, "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                    "metadata": {"name": "node01", "labels": {"kubernetes.io/hostname": "node01"}}})
    r = kubectl(cluster, "label", "nodes", "node01", "kgc=a")
    assert r.returncode == 0 and r.stdout.strip() == "node/node01 labeled", r.stderr
    r = kubectl(cluster, "get", "node", "-l", "kgc=a")
    assert r.returncode == 0 and "node01" in r.stdout, r.stderr
    assert r.stdout.split("\n")[0].split()[:5] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    r = kubectl(cluster, "label", "nodes", "node01", "kgc=b")
    assert r.returncode != 0 and "already has a value (a)" in r.stderr
    r = kubectl(cluster, "label", "nodes", "node01", "kgc=b", "--overwrite")
    assert r.returncode == 0 and "labeled" in r.stdout, r.stderr
    r = kubectl(cluster, "get", "nodes", "--show-labels")
    assert "kgc=b" in r.stdout and "kubernetes.io/hostname=node01" in r.stdout, r.stdout
    r = kubectl(cluster, "label", "nodes", "node01", "kgc-")
    assert r.returncode == 0 and r.stdout.strip() == "node/node01 unlabeled", r.stderr
    r = kubectl(cluster, "get", "node", "-l", "kgc=a")
    assert "No resources found" in r.stderr


def test_pod_get_describe_yaml_delete(cluster):
    f = cluster["dir"] / "pod.yaml"
    f.write_text(POD)
    r = kubectl(cluster, "apply", "-f", str(f))
    assert r.stdout.strip() == "pod/myapp01 created", r.stderr
    r = kubectl(cluster, "get", "pods", "-o", "wide")
    assert r.returncode == 0, r.stderr
    header = r.stdout.split("\n")[0].split()
    assert header[:5] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"] and "NODE" in header
    assert re.search(r"myapp01\s+0/1\s+Pending", r.stdout), r.stdout
    r = kubectl(cluster, "describe", "pod", "myapp01")
    assert r.returncode == 0, r.stderr
    assert re.search(r"Name:\s+myapp01", r.stdout) and re.search(r"Status:\s+Pending", r.stdout)
    r = kubectl(cluster, "get", "pod", "myapp01", "-o", "yaml")
    assert "kind: Pod" in r.stdout and "name: myapp01" in r.stdout and "resourceVersion:" in r.stdout
    r = kubectl(cluster, "create", "-f", str(f))
    assert r.returncode != 0 and 'Error from server (AlreadyExists)' in r.stderr
    r = kubectl(cluster, "delete", "pod", "myapp01")  # unbound pod: removed at once
    assert r.returncode == 0 and r.stdout.strip() == 'pod "myapp01" deleted', r.stderr
    r = kubectl(cluster, "get", "pod", "myapp01")
    assert r.returncode != 0 and 'pods "myapp01" not found' in r.stderr


def test_bad_manifests(cluster):
    bad = cluster["dir"] / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n   bad: [\n")
    r = kubectl(cluster, "apply", "-f", str(bad))
    assert r.returncode != 0 and "yaml" in r.stderr.lower()
    bad.write_text("apiVersion: v1\nkind: Frobnicator\nmetadata:\n  name: x\n")
    r = kubectl(cluster, "apply", "-f", str(bad))
    # kubectl looks an unknown kind up in /openapi/v3, then in /openapi/v2 (served without
    # definitions), then fails on the REST mapping as against a real cluster
    assert r.returncode != 0 and 'no matches for kind "Frobnicator" in version "v1"' in r.stderr, r.stderr
    r = kubectl(cluster, "apply", "--validate=false", "-f", str(bad))
    assert r.returncode != 0 and 'no matches for kind "Frobnicator" in version "v1"' in r.stderr, r.stderr
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n  - name: c\n"
                   "    image: nginx\n  bogus: 1\n")
    r = kubectl(cluster, "apply", "-f", str(bad))
    assert r.returncode != 0 and "unknown field" in r.stderr, r.stderr
