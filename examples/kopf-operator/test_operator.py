"""The example operator (operator.py) tested end to end on the controlplane pytest plugin's
cluster: real apiserver, controllers, scheduler and kubelets; the real kubectl checks.

    pip install controlplane kopf kubernetes
    pytest examples/kopf-operator
"""

from __future__ import annotations

import json
import os

import pytest

kopf_testing = pytest.importorskip("kopf.testing")

HERE = os.path.dirname(os.path.abspath(__file__))
WEBSITE = """\
apiVersion: example.controlplane.io/v1
kind: WebSite
metadata:
  name: hello
spec:
  html: "<h1>hello</h1>"
  replicas: 2
"""


@pytest.fixture()
def operator(kubectl, kubeconfig, namespace, monkeypatch):
    """The CRD installed and the operator running (in this process, as KopfRunner does) for one test."""
    kubectl("apply", "-f", os.path.join(HERE, "crd.yaml"))
    kubectl("wait", "--for=condition=Established", "crd/websites.example.controlplane.io", "--timeout=30s")
    monkeypatch.setenv("KUBECONFIG", kubeconfig)
    args = ["run", "--standalone", "--namespace", namespace, os.path.join(HERE, "operator.py")]
    with kopf_testing.KopfRunner(args, timeout=60) as runner:
        yield runner
    assert runner.exception is None, runner.output
    assert runner.exit_code == 0, runner.output


def get(kubectl, namespace, *what):
    return json.loads(kubectl("-n", namespace, "get", *what, "-o", "json").stdout)


def test_website_gets_its_children_updates_sync_and_delete_collects_them(operator, kubectl, namespace):
    kubectl("-n", namespace, "apply", "-f", "-", input=WEBSITE)

    # on create: an owned ConfigMap and Deployment, Running pods, status written
    kubectl("-n", namespace, "wait", "--for=jsonpath={.status.readyReplicas}=2", "website/hello", "--timeout=60s")
    page = get(kubectl, namespace, "configmap", "hello-page")
    assert page["data"] == {"index.html": "<h1>hello</h1>"}
    deploy = get(kubectl, namespace, "deployment", "hello")
    website = get(kubectl, namespace, "website", "hello")
    assert [r["uid"] for r in deploy["metadata"]["ownerReferences"]] == [website["metadata"]["uid"]]
    assert website["status"]["create"] == {"deployment": "hello", "page": "hello-page"}

    # on update: the children follow the spec
    kubectl("-n", namespace, "patch", "website", "hello", "--type=merge",
            "-p", '{"spec": {"replicas": 3, "html": "<h1>bye</h1>"}}')
    kubectl("-n", namespace, "wait", "--for=jsonpath={.status.readyReplicas}=3", "website/hello", "--timeout=60s")
    assert get(kubectl, namespace, "configmap", "hello-page")["data"] == {"index.html": "<h1>bye</h1>"}

    # on delete: the garbage collector removes what the WebSite owned, pods included
    pods = [p["metadata"]["name"] for p in get(kubectl, namespace, "pods", "-l", "app.kubernetes.io/instance=hello")["items"]]
    kubectl("-n", namespace, "delete", "website", "hello", "--wait=true", "--timeout=60s")
    kubectl("-n", namespace, "wait", "--for=delete", "deployment/hello", "configmap/hello-page",
            *(f"pod/{p}" for p in pods), "--timeout=60s")
