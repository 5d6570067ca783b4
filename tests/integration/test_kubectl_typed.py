"""kubectl's typed-client commands, which send protobuf bodies, against the real apiserver process."""

from __future__ import annotations

import json

from tests.integration.test_kubectl_apiserver import cluster, kubectl, pytestmark  # noqa: F401


def ok(c, *args):
    r = kubectl(c, *args)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_create_typed_objects(cluster):
    assert ok(cluster, "create", "namespace", "typed").strip() == "namespace/typed created"
    assert ok(cluster, "create", "deployment", "web", "-n", "typed", "--image=nginx:1.25", "--replicas=2",
              "--port=8080").strip() == "deployment.apps/web created"
    assert ok(cluster, "create", "configmap", "cfg", "-n", "typed", "--from-literal=k=v").strip() == \
        "configmap/cfg created"
    assert ok(cluster, "create", "secret", "generic", "sec", "-n", "typed", "--from-literal=p=s3cret").strip() == \
        "secret/sec created"
    assert ok(cluster, "create", "serviceaccount", "bot", "-n", "typed").strip() == "serviceaccount/bot created"
    assert ok(cluster, "create", "service", "clusterip", "svc", "-n", "typed", "--tcp=80:8080").strip() == \
        "service/svc created"
    d = json.loads(ok(cluster, "get", "deploy", "web", "-n", "typed", "-o", "json"))
    assert d["spec"]["replicas"] == 2 and d["metadata"]["generation"] == 1
    c = d["spec"]["template"]["spec"]["containers"][0]
    assert c["image"] == "nginx:1.25" and c["ports"] == [{"containerPort": 8080, "protocol": "TCP"}]
    assert ok(cluster, "get", "cm", "cfg", "-n", "typed", "-o", "jsonpath={.data.k}") == "v"
    assert ok(cluster, "get", "secret", "sec", "-n", "typed", "-o", "jsonpath={.data.p}") == "czNjcmV0"
    svc = json.loads(ok(cluster, "get", "svc", "svc", "-n", "typed", "-o", "json"))
    assert svc["spec"]["ports"][0]["targetPort"] == 8080 and svc["spec"]["selector"] == {"app": "svc"}
    ns = json.loads(ok(cluster, "get", "ns", "typed", "-o", "json"))
    assert ns["spec"]["finalizers"] == ["kubernetes"] and ns["status"]["phase"] == "Active"


def test_create_typed_admission_kinds(cluster):
    ok(cluster, "create", "namespace", "typed-adm")
    assert ok(cluster, "create", "quota", "q", "-n", "typed-adm", "--hard=pods=2,requests.cpu=1").strip() == \
        "resourcequota/q created"
    assert ok(cluster, "create", "priorityclass", "typed-high", "--value=1000", "--description=high",
              "--preemption-policy=Never").strip() == "priorityclass.scheduling.k8s.io/typed-high created"
    assert ok(cluster, "create", "poddisruptionbudget", "web", "-n", "typed-adm", "--selector=app=web",
              "--min-available=50%").strip() == "poddisruptionbudget.policy/web created"
    q = json.loads(ok(cluster, "get", "quota", "q", "-n", "typed-adm", "-o", "json"))
    assert q["spec"]["hard"] == {"pods": "2", "requests.cpu": "1"}
    pc = json.loads(ok(cluster, "get", "pc", "typed-high", "-o", "json"))
    assert (pc["value"], pc["description"], pc["preemptionPolicy"]) == (1000, "high", "Never")
    pdb = json.loads(ok(cluster, "get", "pdb", "web", "-n", "typed-adm", "-o", "json"))
    assert pdb["spec"] == {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}


def test_typed_errors_are_statuses(cluster):
    ok(cluster, "create", "namespace", "dup")
    r = kubectl(cluster, "create", "namespace", "dup")
    assert r.returncode != 0 and 'namespaces "dup" already exists' in r.stderr
    r = kubectl(cluster, "create", "deployment", "Bad_Name", "--image=nginx")
    assert r.returncode != 0 and "invalid" in r.stderr.lower()
    # serviceaccounts/token is served since issue 13: a missing account is a NotFound Status
    r = kubectl(cluster, "create", "token", "default")
    assert r.returncode != 0 and 'serviceaccounts "default" not found' in r.stderr, r.stderr
    # a subresource this apiserver does not serve: a plain 404, not 405
    r = kubectl(cluster, "get", "--raw", "/api/v1/namespaces/default/serviceaccounts/default/nothing")
    assert r.returncode != 0 and "could not find the requested resource" in r.stderr, r.stderr


def test_namespace_delete_leaves_it_terminating_for_the_controller(cluster):
    ok(cluster, "create", "namespace", "gone")
    ok(cluster, "create", "configmap", "c", "-n", "gone", "--from-literal=a=b")
    r = kubectl(cluster, "delete", "namespace", "gone", "--wait=false")
    assert r.returncode == 0 and 'namespace "gone" deleted' in r.stdout, r.stderr
    # no controller-manager runs here: the namespace stays Terminating with its content
    assert ok(cluster, "get", "ns", "gone", "-o", "jsonpath={.status.phase}") == "Terminating"
    assert ok(cluster, "get", "cm", "c", "-n", "gone", "-o", "name") == "configmap/c\n"
    r = kubectl(cluster, "create", "configmap", "d", "-n", "gone", "--from-literal=a=b")
    assert r.returncode != 0 and "because it is being terminated" in r.stderr
