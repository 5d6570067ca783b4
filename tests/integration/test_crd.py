"""The real kubectl (/usr/bin/kubectl, its own --cache-dir) against a CustomResourceDefinition on
`python -m controlplane apiserver`: apply, wait for Established, custom resources with printer
columns, explain, scale, merge patch, and delete of the CRD taking its resources and route."""

from __future__ import annotations

import asyncio
import os
import subprocess

import pytest

from controlplane.storage import testing
from tests.integration.conftest import start_apiserver, stop

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (testing.available() and os.path.exists("/usr/bin/kubectl")),
                                 reason="needs /usr/bin/etcd and /usr/bin/kubectl")]

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wd]
    categories: [all]
  versions:
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: Size
      type: integer
      jsonPath: .spec.size
    - name: Color
      type: string
      jsonPath: .spec.color
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: The widget's desired state.
            properties:
              size:
                type: integer
                description: How big the widget is.
                maximum: 100
              color:
                type: string
                default: blue
              replicas:
                type: integer
          status:
            type: object
            properties:
              replicas: {type: integer}
"""

WIDGETS = """\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: good
spec:
  size: 3
  replicas: 1
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: bad
spec:
  size: 200
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    d = tmp_path_factory.mktemp("crd")
    etcd = testing.EtcdProcess()
    etcd_url = asyncio.run(etcd.start())
    proc, _, url = start_apiserver(etcd_url)
    kubeconfig = d / "kubeconfig"
    kubeconfig.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "{url}"}}}}]
users: [{{name: u, user: {{}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u, namespace: default}}}}]
current-context: x
""")
    yield {"url": url, "kubeconfig": str(kubeconfig), "dir": d}
    stop(proc)
    asyncio.run(etcd.stop())


def kubectl(c, *args, stdin=None):
    env = {**os.environ, "HOME": str(c["dir"])}
    return subprocess.run(["/usr/bin/kubectl", "--kubeconfig", c["kubeconfig"], "--cache-dir",
                           str(c["dir"] / "cache"), *args], input=stdin, capture_output=True, text=True,
                          timeout=60, env=env)


def test_crd_lifecycle_with_kubectl(cluster):
    # a first discovery fills kubectl's cache before the CRD exists
    r = kubectl(cluster, "get", "pods")
    assert r.returncode == 0, r.stderr
    f = cluster["dir"] / "crd.yaml"
    f.write_text(CRD)
    r = kubectl(cluster, "apply", "-f", str(f))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created"
    r = kubectl(cluster, "wait", "--for", "condition=established", "--timeout=30s", "crd/widgets.example.com")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "customresourcedefinition.apiextensions.k8s.io/widgets.example.com condition met"
    r = kubectl(cluster, "get", "widgets")
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == "No resources found in default namespace."
    r = kubectl(cluster, "get", "crd")
    assert r.returncode == 0, r.stderr
    head, row = r.stdout.strip().split("\n")
    assert head.split() == ["NAME", "CREATED", "AT"] and row.split()[0] == "widgets.example.com"
    r = kubectl(cluster, "api-resources", "--api-group", "example.com")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().split("\n")[1].split() == ["widgets", "wd", "example.com/v1", "true", "Widget"]

    w = cluster["dir"] / "widgets.yaml"
    w.write_text(WIDGETS)
    r = kubectl(cluster, "apply", "-f", str(w))
    assert r.returncode != 0
    assert "widget.example.com/good created" in r.stdout
    assert 'The Widget "bad" is invalid: spec.size: Invalid value: 200' in r.stderr, r.stderr

    r = kubectl(cluster, "get", "widgets")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().split("\n")
    assert lines[0].split() == ["NAME", "SIZE", "COLOR", "AGE"]
    assert lines[1].split()[:3] == ["good", "3", "blue"]
    r = kubectl(cluster, "get", "wd", "good", "-o", "jsonpath={.apiVersion} {.spec.color}")
    assert r.stdout == "example.com/v1 blue", r.stderr
    r = kubectl(cluster, "get", "widgets.v1beta1.example.com", "good", "-o", "jsonpath={.apiVersion}")
    assert r.stdout == "example.com/v1beta1", r.stderr
    r = kubectl(cluster, "get", "all")
    assert r.returncode == 0 and "widget.example.com/good" in r.stdout, r.stdout + r.stderr

    r = kubectl(cluster, "explain", "widget.spec")
    assert r.returncode == 0, r.stderr
    assert "The widget's desired state." in r.stdout and "How big the widget is." in r.stdout, r.stdout

    r = kubectl(cluster, "scale", "widget", "good", "--replicas=4")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "widget.example.com/good scaled"
    r = kubectl(cluster, "get", "widget", "good", "-o", "jsonpath={.spec.replicas} {.metadata.generation}")
    assert r.stdout == "4 2", r.stderr

    r = kubectl(cluster, "patch", "widget", "good", "--type", "merge", "-p", '{"spec":{"size":7}}')
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "widget.example.com/good patched"
    r = kubectl(cluster, "patch", "widget", "good", "-p", '{"spec":{"size":8}}')
    assert r.returncode != 0
    assert r.stderr.strip() == (
        "error: application/strategic-merge-patch+json is not supported by example.com/v1, Kind=Widget: the body "
        "of the request was in an unknown format - accepted media types include: application/json-patch+json, "
        "application/merge-patch+json, application/apply-patch+yaml"), r.stderr

    r = kubectl(cluster, "delete", "crd", "widgets.example.com")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "customresourcedefinition.apiextensions.k8s.io \"widgets.example.com\" deleted"
    # kubectl's discovery cache (6 h) still names widgets: the list itself answers 404, as
    # kube-apiserver's does for a route that is gone
    r = kubectl(cluster, "get", "widgets")
    assert r.returncode != 0
    assert r.stderr.strip() == ('Error from server (NotFound): Unable to list "example.com/v1, Resource=widgets": '
                                "the server could not find the requested resource"), r.stderr
    # api-resources refreshes the cache (it invalidates it unless --cached): widgets is gone
    r = kubectl(cluster, "api-resources", "--api-group", "example.com", "-o", "name")
    assert r.returncode == 0 and r.stdout.strip() == "", r.stdout + r.stderr
    r = kubectl(cluster, "get", "widgets")
    assert r.returncode != 0
    assert r.stderr.strip() == 'error: the server doesn\'t have a resource type "widgets"', r.stderr
