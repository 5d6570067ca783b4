"""The real kubectl (/usr/bin/kubectl, its own --cache-dir) against a CustomResourceDefinition on
`python -m controlplane apiserver`: apply, wait for Established, custom resources with printer
columns, explain, scale, merge patch, and delete of the CRD taking its resources and route."""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml

from controlplane.storage import testing
from tests.integration.conftest import apiserver_on_test_etcd

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
    with apiserver_on_test_etcd(tmp_path_factory.mktemp("crd")) as c:
        yield c


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
    r = kubectl(cluster, "apply", "-f", str(f))
    assert r.returncode == 0 and r.stdout.strip() == (
        "customresourcedefinition.apiextensions.k8s.io/widgets.example.com unchanged"), r.stdout + r.stderr
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

    r = kubectl(cluster, "describe", "widget", "good")
    assert r.returncode == 0, r.stderr
    assert "Name:         good" in r.stdout and "Kind:         Widget" in r.stdout, r.stdout
    r = kubectl(cluster, "apply", "--server-side", "-f", "-",
                stdin="apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: ssa\nspec:\n  size: 9\n")
    assert r.returncode == 0 and r.stdout.strip() == "widget.example.com/ssa serverside-applied", r.stderr
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


def test_python_client_sees_a_crd_at_once(cluster):
    """The official client: create a CRD, wait for Established through a watch, then the
    custom resource through CustomObjectsApi and the dynamic client (discovery)."""
    pytest.importorskip("kubernetes")
    from kubernetes import client, dynamic, watch
    from kubernetes.client.rest import ApiException

    from tests.support.tls import harness
    cfg = client.Configuration()
    cfg.host = cluster["url"]
    cfg.ssl_ca_cert, cfg.cert_file, cfg.key_file = harness().ca_file, harness().cert_file, harness().key_file
    with client.ApiClient(cfg) as api_client:
        ext = client.ApiextensionsV1Api(api_client)
        body = yaml.safe_load(CRD.replace("widgets", "gizmos").replace("widget", "gizmo").replace("Widget", "Gizmo")
                         .replace("[wd]", "[gz]"))
        ext.create_custom_resource_definition(body)
        w = watch.Watch()
        for ev in w.stream(ext.list_custom_resource_definition, field_selector="metadata.name=gizmos.example.com",
                           timeout_seconds=30):
            conds = (ev["object"].status.conditions or []) if ev["object"].status else []
            if any(c.type == "Established" and c.status == "True" for c in conds):
                w.stop()
        co = client.CustomObjectsApi(api_client)
        g = {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g1"}, "spec": {"size": 5}}
        created = co.create_namespaced_custom_object("example.com", "v1", "default", "gizmos", g)
        assert created["spec"] == {"size": 5, "color": "blue"}
        try:
            co.create_namespaced_custom_object("example.com", "v1", "default", "gizmos",
                                               {**g, "metadata": {"name": "g2"}, "spec": {"size": 500}})
            raise AssertionError("a size above the maximum was accepted")
        except ApiException as e:
            assert e.status == 422 and "spec.size: Invalid value: 500" in e.body
        dyn = dynamic.DynamicClient(api_client)
        gizmos = dyn.resources.get(api_version="example.com/v1", kind="Gizmo")
        assert [i.metadata.name for i in gizmos.get(namespace="default").items] == ["g1"]


def test_explain_of_the_crd_kind_itself_is_nested(cluster, tmp_path):
    """``kubectl explain crd.spec.names`` reads the CRD kind's nested OpenAPI schema
    (``apiextensions/v1`` CustomResourceDefinitionNames)."""
    out = subprocess.run(["/usr/bin/kubectl", "--kubeconfig", cluster["kubeconfig"], "--cache-dir",
                          str(tmp_path / "cache"), "explain", "crd.spec.names"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "KIND:       CustomResourceDefinition" in out.stdout
    for field in ("plural", "singular", "kind", "listKind", "shortNames", "categories"):
        assert f"  {field}\t" in out.stdout or f"  {field} " in out.stdout, out.stdout
