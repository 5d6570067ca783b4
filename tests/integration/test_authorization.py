"""The real kubectl against an apiserver started with ``--authorization-mode=Node,RBAC``
(and NodeRestriction), acting through impersonation (``--as``, ``--as-group``); test objects
are made as ``admin`` in ``system:masters``. kubectl sends no bearer token to a plain-HTTP
server, so the module first grants ``system:anonymous`` the ``impersonate`` verb (as ``root``,
a ``--token-auth-file`` user in ``system:masters``, over HTTP directly); a request without
``--as`` stays ``system:anonymous``."""

from __future__ import annotations

import json
import os

import pytest

from controlplane.storage import testing
from tests.integration.conftest import apiserver_on_test_etcd, kubectl_ok, kubectl_on, spawn, stop
from tests.support.tls import harness

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (testing.available() and os.path.exists("/usr/bin/kubectl")),
                                 reason="needs /usr/bin/etcd and /usr/bin/kubectl")]

ADMIN = ("--as=admin", "--as-group=system:masters")
SA_X = ("--as=system:serviceaccount:default:x",)
NODE01 = ("--as=system:node:node01", "--as-group=system:nodes")
ROOT_HEADERS = {"Authorization": "Bearer root-token"}
IMPERSONATOR = [
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "test-impersonator"},
     "rules": [{"verbs": ["impersonate"], "apiGroups": [""], "resources": ["users", "groups", "serviceaccounts"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
     "metadata": {"name": "test-anonymous-impersonates"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "test-impersonator"},
     "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "system:anonymous"}]}]


def root_post(c, path: str, obj: dict) -> dict:
    import urllib.request
    req = urllib.request.Request(c["url"] + path, method="POST", data=json.dumps(obj).encode(),
                                 headers={**ROOT_HEADERS, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30, context=harness().ssl_context(client_cert=False)) as r:
        out: dict = json.loads(r.read())
        return out


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    d = tmp_path_factory.mktemp("authz")
    (d / "tokens.csv").write_text('root-token,root,u-0,"system:masters"\n')
    with apiserver_on_test_etcd(d, "--authorization-mode", "Node,RBAC", "--enable-admission-plugins",
                                "NodeRestriction", "--token-auth-file", str(d / "tokens.csv")) as c:
        role, binding = IMPERSONATOR
        root_post(c, "/apis/rbac.authorization.k8s.io/v1/clusterroles", role)
        rv = root_post(c, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding)["metadata"][
            "resourceVersion"]
        caught_up(c, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", rv)
        yield c


kubectl, ok = kubectl_on, kubectl_ok


def admin(c, *args, input: str | None = None) -> str:
    return ok(c, *ADMIN, *args, input=input)


def watch_until(c, path: str, predicate, timeout: float = 60) -> dict:
    """Watch ``path`` (as root) until an event's object satisfies ``predicate``; returns it."""
    import urllib.request
    req = urllib.request.Request(f"{c['url']}{path}?watch=1&timeoutSeconds={int(timeout)}", headers=ROOT_HEADERS)
    with urllib.request.urlopen(req, timeout=timeout, context=harness().ssl_context(client_cert=False)) as resp:
        for line in resp:
            obj = json.loads(line)["object"]
            if predicate(obj):
                return obj
    raise AssertionError(f"{path}: the watch ended before the condition held")


def _view_rules(view: dict) -> list:
    return view.get("rules") or []


def caught_up(c, resource: str, rv: str) -> None:
    """A list served from the watch cache once it holds revision ``rv``
    (``resourceVersionMatch=NotOlderThan``, read as root): the RBAC index and the Node graph
    follow the same cache events, so what was written before is in effect after it."""
    import urllib.request
    req = urllib.request.Request(f"{c['url']}{resource}?resourceVersion={rv}&resourceVersionMatch=NotOlderThan&limit=1",
                                 headers=ROOT_HEADERS)
    with urllib.request.urlopen(req, timeout=30, context=harness().ssl_context(client_cert=False)) as r:
        assert r.status == 200


def test_serviceaccount_without_binding_is_forbidden(cluster):
    r = kubectl(cluster, *SA_X, "get", "pods")
    assert r.returncode == 1
    assert r.stderr.strip() == ('Error from server (Forbidden): pods is forbidden: User '
                                '"system:serviceaccount:default:x" cannot list resource "pods" in API group "" '
                                'in the namespace "default"')
    # an anonymous client (the CA, no credential): kubectl's session kubeconfig is the admin's
    anonymous = {**cluster, "kubeconfig": str(cluster["dir"] / "anonymous.kubeconfig")}
    (cluster["dir"] / "anonymous.kubeconfig").write_text(harness().kubeconfig_text(cluster["url"], client_cert=False))
    r = kubectl(anonymous, "get", "--raw", "/metrics")
    assert r.returncode == 1
    assert r.stderr.strip() == ('Error from server (Forbidden): forbidden: User "system:anonymous" cannot get path '
                                '"/metrics"')
    assert ok(anonymous, "get", "--raw", "/healthz") == "ok"  # system:public-info-viewer


def test_can_i(cluster):
    assert ok(cluster, *ADMIN, "auth", "can-i", "create", "pods").strip() == "yes"
    r = kubectl(cluster, *SA_X, "auth", "can-i", "create", "pods")
    assert r.returncode == 1 and r.stdout.strip() == "no"
    lines = ok(cluster, "auth", "can-i", "--list", *SA_X).splitlines()
    assert lines[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    rows = {tuple(line.split()) for line in lines[1:]}
    assert ("selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]") in rows
    assert ("[/healthz]", "[]", "[get]") in rows  # no Resources column: three fields
    assert ("[/apis/*]", "[]", "[get]") in rows  # system:discovery, bound to system:authenticated


def test_view_binding_lists_but_cannot_delete_after_aggregation(cluster):
    # the aggregation controller fills `view` from system:aggregate-to-view; its own identity
    # (system:serviceaccount:kube-system:clusterrole-aggregation-controller) needs authentication,
    # so the anonymous user it runs as here is bound to its role
    admin(cluster, "create", "clusterrolebinding", "anon-aggregator",
          "--clusterrole=system:controller:clusterrole-aggregation-controller", "--user=system:anonymous")
    cm, out = spawn("controller-manager", "--master", cluster["url"], "--controllers", "clusterrole-aggregation")
    try:
        out.wait_for("event=controller-manager.synced", 60)
        roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
        watch_until(cluster, roles, lambda v: v["metadata"]["name"] == "view" and bool(_view_rules(v)))
        viewer = ("--as=system:serviceaccount:default:viewer",)
        rb = json.loads(admin(cluster, "create", "rolebinding", "viewer", "--clusterrole=view",
                              "--serviceaccount=default:viewer", "-o", "json"))
        caught_up(cluster, "/apis/rbac.authorization.k8s.io/v1/rolebindings", rb["metadata"]["resourceVersion"])
        admin(cluster, "create", "configmap", "c1", "--from-literal=a=b")
        assert "c1" in ok(cluster, *viewer, "get", "configmaps")
        r = kubectl(cluster, *viewer, "delete", "configmap", "c1")
        assert r.returncode == 1
        assert r.stderr.strip() == ('Error from server (Forbidden): configmaps "c1" is forbidden: User '
                                    '"system:serviceaccount:default:viewer" cannot delete resource "configmaps" in '
                                    'API group "" in the namespace "default"')
        r = kubectl(cluster, *viewer, "get", "secrets")
        assert r.returncode == 1 and "cannot list resource \"secrets\"" in r.stderr

        # a CRD's rules join `view` through a ClusterRole labelled aggregate-to-view
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "widgets.example.com"},
               "spec": {"group": "example.com", "scope": "Namespaced",
                        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                        "versions": [{"name": "v1", "served": True, "storage": True,
                                      "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
        role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": "widgets-view",
                             "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
                "rules": [{"verbs": ["get", "list", "watch"], "apiGroups": ["example.com"],
                           "resources": ["widgets"]}]}
        for obj in (crd, role):
            admin(cluster, "create", "-f", "-", input=json.dumps(obj))
        admin(cluster, "wait", "crd/widgets.example.com", "--for=condition=Established", "--timeout=60s")
        view = watch_until(cluster, roles, lambda v: v["metadata"]["name"] == "view" and any(
            "example.com" in r.get("apiGroups", []) for r in _view_rules(v)))
        caught_up(cluster, "/apis/rbac.authorization.k8s.io/v1/clusterroles", view["metadata"]["resourceVersion"])
        assert ok(cluster, *viewer, "auth", "can-i", "list", "widgets.example.com").strip() == "yes"
        assert ok(cluster, *viewer, "get", "widgets").strip() == ""
    finally:
        stop(cm)


def test_node_cannot_patch_other_node_nor_read_unrelated_secret(cluster):
    for n in ("node01", "node02"):
        admin(cluster, "create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "Node",
                                                              "metadata": {"name": n}}))
    admin(cluster, "create", "secret", "generic", "mine", "--from-literal=a=b")
    admin(cluster, "create", "secret", "generic", "theirs", "--from-literal=a=b")
    last = ""
    for pod, node, secret in (("p1", "node01", "mine"), ("p2", "node02", "theirs")):
        obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod},
               "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}],
                        "volumes": [{"name": "s", "secret": {"secretName": secret}}]}}
        last = json.loads(admin(cluster, "create", "-o", "json", "-f", "-", input=json.dumps(obj)))[
            "metadata"]["resourceVersion"]
    caught_up(cluster, "/api/v1/pods", last)
    assert ok(cluster, *NODE01, "get", "secret", "mine", "-o", "name").strip() == "secret/mine"
    r = kubectl(cluster, *NODE01, "get", "secret", "theirs")
    assert r.returncode == 1
    assert r.stderr.strip() == ('Error from server (Forbidden): secrets "theirs" is forbidden: User '
                                '"system:node:node01" cannot get resource "secrets" in API group "" in the namespace '
                                "\"default\": no relationship found between node 'node01' and this object")
    patch = ("--type=merge", "-p", '{"metadata":{"labels":{"disk":"ssd"}}}')
    assert ok(cluster, *NODE01, "patch", "node", "node01", *patch).strip() == "node/node01 patched"
    r = kubectl(cluster, *NODE01, "patch", "node", "node02", *patch)
    assert r.returncode == 1  # kubectl reads the node first: the Node authorizer refuses that
    assert r.stderr.strip() == ('Error from server (Forbidden): nodes "node02" is forbidden: User "system:node:node01" '
                                'cannot get resource "nodes" in API group "" at the cluster scope: node \'node01\' '
                                "cannot read 'node02', only its own Node object")
    # the PATCH itself is authorized (nodes may patch nodes) and refused by NodeRestriction
    import urllib.error
    import urllib.request
    req = urllib.request.Request(f"{cluster['url']}/api/v1/nodes/node02", method="PATCH",
                                 data=b'{"metadata":{"labels":{"disk":"ssd"}}}',
                                 headers={**ROOT_HEADERS, "Content-Type": "application/merge-patch+json",
                                          "Impersonate-User": "system:node:node01",
                                          "Impersonate-Group": "system:nodes"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=30, context=harness().ssl_context(client_cert=False))
    assert e.value.code == 403
    assert json.loads(e.value.read())["message"] == ('nodes "node02" is forbidden: node "node01" is not allowed to '
                                                     'modify node "node02"')
    r = kubectl(cluster, *NODE01, "patch", "node", "node01", "--type=merge", "-p",
                '{"metadata":{"labels":{"node-restriction.kubernetes.io/pool":"a"}}}')
    assert r.returncode == 1
    assert r.stderr.strip() == ('Error from server (Forbidden): nodes "node01" is forbidden: is not allowed to '
                                'modify labels: node-restriction.kubernetes.io/pool')
