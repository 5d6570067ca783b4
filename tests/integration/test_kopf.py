"""A kopf operator (its own CRD; a child ConfigMap adopted with an ownerReference; the
handler's result written into the custom resource's status by kopf) against
`python -m controlplane apiserver`, driven and checked with the real kubectl."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from controlplane.lifeline import child_kwargs
from controlplane.storage import testing
from tests.integration.conftest import apiserver_on_test_etcd

pytest.importorskip("kopf")

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (testing.available() and os.path.exists("/usr/bin/kubectl")),
                                 reason="needs /usr/bin/etcd and /usr/bin/kubectl")]

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.kopf.example.com
spec:
  group: kopf.example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, shortNames: [gd]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
"""

OPERATOR = """\
import kopf
import kubernetes


@kopf.on.create("kopf.example.com", "v1", "gadgets")
def created(spec, name, namespace, **_):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-child"},
          "data": {"size": str(spec.get("size", 0))}}
    kopf.adopt(cm)
    kubernetes.config.load_kube_config()
    kubernetes.client.CoreV1Api().create_namespaced_config_map(namespace, cm)
    return {"child": cm["metadata"]["name"]}
"""

GADGET = """\
apiVersion: kopf.example.com/v1
kind: Gadget
metadata:
  name: g1
spec:
  size: 4
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with apiserver_on_test_etcd(tmp_path_factory.mktemp("kopf")) as c:
        yield c


def kubectl(c, *args, stdin=None, timeout=60):
    env = {**os.environ, "HOME": str(c["dir"])}
    return subprocess.run(["/usr/bin/kubectl", "--kubeconfig", c["kubeconfig"], "--cache-dir",
                           str(c["dir"] / "cache"), *args], input=stdin, capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_kopf_operator_adopts_a_child_and_writes_status(cluster):
    r = kubectl(cluster, "apply", "-f", "-", stdin=CRD)
    assert r.returncode == 0, r.stderr
    r = kubectl(cluster, "wait", "--for", "condition=established", "--timeout=30s", "crd/gadgets.kopf.example.com")
    assert r.returncode == 0, r.stderr
    op = cluster["dir"] / "operator.py"
    op.write_text(OPERATOR)
    log = open(cluster["dir"] / "kopf.log", "w")
    kopf = subprocess.Popen([sys.executable, "-m", "kopf", "run", "--standalone", "--namespace", "default", str(op)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            **child_kwargs(env={**os.environ, "KUBECONFIG": cluster["kubeconfig"],
                                                "HOME": str(cluster["dir"])}))
    try:
        r = kubectl(cluster, "apply", "-f", "-", stdin=GADGET)
        assert r.returncode == 0 and r.stdout.strip() == "gadget.kopf.example.com/g1 created", r.stderr
        # kopf writes the handler's result into status (through the status subresource)
        r = kubectl(cluster, "wait", "--for", "jsonpath={.status.created.child}=g1-child", "--timeout=60s",
                    "gadget/g1", timeout=90)
        assert r.returncode == 0, r.stderr + (cluster["dir"] / "kopf.log").read_text()[-2000:]
        r = kubectl(cluster, "get", "configmap", "g1-child", "-o", "json")
        assert r.returncode == 0, r.stderr
        cm = json.loads(r.stdout)
        gadget = json.loads(kubectl(cluster, "get", "gd", "g1", "-o", "json").stdout)
        assert cm["data"] == {"size": "4"}
        assert cm["metadata"]["ownerReferences"] == [{
            "apiVersion": "kopf.example.com/v1", "kind": "Gadget", "name": "g1", "uid": gadget["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True}]
        assert "kopf.zalando.org/last-handled-configuration" in gadget["metadata"]["annotations"]
    finally:
        kopf.terminate()
        try:
            kopf.wait(timeout=20)
        except subprocess.TimeoutExpired:
            kopf.kill()
        log.close()
