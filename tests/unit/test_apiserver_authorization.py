"""The apiserver with ``--authorization-mode=Node,RBAC``: 403 Status messages, the bootstrap
policy, RBAC bindings taking effect through the watch caches, escalation prevention, access
reviews, NodeRestriction (``enable_admission_plugins`` NodeRestriction)."""

from __future__ import annotations

import os
import tempfile

import pytest
from multidict import CIMultiDict

from components.apiserver import admission
from components.apiserver.authentication.config import Options

#: a token-file user in system:masters: it may impersonate anyone (the tests act as others so)
_TOKENS = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
_TOKENS.write('root-token,root,u-0,"system:masters"\n')
_TOKENS.close()
ROOT = {"Authorization": "Bearer root-token"}

API_OPTIONS = {"authorization_modes": ["Node", "RBAC"],
               "admission_plugins": admission.enabled_plugins(["NodeRestriction"]),
               "authentication": Options(token_auth_file=_TOKENS.name)}

ADMIN = {**ROOT, "Impersonate-User": "admin", "Impersonate-Group": "system:masters"}
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def teardown_module() -> None:
    os.unlink(_TOKENS.name)


def as_user(name: str, *groups: str) -> CIMultiDict:
    """Headers acting as ``name`` in ``groups``: root impersonating them."""
    h = CIMultiDict([*ROOT.items(), ("Impersonate-User", name)])
    for g in groups:
        h.add("Impersonate-Group", g)
    return h


async def caught_up(api, *caches: str) -> None:
    """Wait until the watch caches (whose events feed the RBAC index and the Node graph) have
    applied every write made so far."""
    server = api.server_obj
    rev = await server.store.current_revision()
    for c in caches:
        assert await server.caches[c].wait_for_revision(rev)


RB_CACHES = ("roles.rbac.authorization.k8s.io", "rolebindings.rbac.authorization.k8s.io",
             "clusterroles.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io")


async def status_of(api, method: str, path: str, headers, **kw) -> int:
    r = await api.request(method, path, headers=headers, **kw)
    return r.status


@pytest.mark.parametrize("path, user, message, details", [
    ("/api/v1/namespaces/default/pods", "jane",
     'pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"',
     {"kind": "pods"}),
    ("/api/v1/pods", "jane",
     'pods is forbidden: User "jane" cannot list resource "pods" in API group "" at the cluster scope',
     {"kind": "pods"}),
    ("/api/v1/namespaces/default/pods/x", "jane",
     'pods "x" is forbidden: User "jane" cannot get resource "pods" in API group "" in the namespace "default"',
     {"name": "x", "kind": "pods"}),
    ("/api/v1/namespaces/default/pods/x/log", "jane",
     'pods "x" is forbidden: User "jane" cannot get resource "pods/log" in API group "" in the namespace '
     '"default"', {"name": "x", "kind": "pods"}),
    ("/apis/apps/v1/namespaces/default/deployments", "jane",
     'deployments.apps is forbidden: User "jane" cannot list resource "deployments" in API group "apps" in the '
     'namespace "default"', {"group": "apps", "kind": "deployments"}),
    ("/metrics", "jane", 'forbidden: User "jane" cannot get path "/metrics"', {}),
    ("/apis/nope.example.com/v1/widgets", "jane",
     'widgets.nope.example.com is forbidden: User "jane" cannot list resource "widgets" in API group '
     '"nope.example.com" at the cluster scope', {"group": "nope.example.com", "kind": "widgets"}),
], ids=["namespaced-list", "cluster-list", "named-get", "subresource", "group", "non-resource", "unserved"])
async def test_forbidden_messages(api, path, user, message, details):
    r = await api.get(path, headers=as_user(user))
    assert r.status == 403
    body = await r.json()
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": message, "reason": "Forbidden", "details": details, "code": 403}


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz", "/version"],
                         ids=["healthz", "livez", "readyz", "version"])
async def test_public_info_open_to_anonymous(api, path):
    assert (await api.get(path)).status == 200


async def test_masters_are_superusers(api):
    assert (await api.get("/api/v1/namespaces/default/pods", headers=ADMIN)).status == 200


async def test_bootstrap_policy_written(api):
    r = await api.get(RBAC + "/clusterroles/cluster-admin", headers=ADMIN)
    obj = await r.json()
    assert obj["rules"] == [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                            {"verbs": ["*"], "nonResourceURLs": ["*"]}]
    assert obj["metadata"]["labels"] == {"kubernetes.io/bootstrapping": "rbac-defaults"}
    assert obj["metadata"]["annotations"] == {"rbac.authorization.kubernetes.io/autoupdate": "true"}
    r = await api.get(RBAC + "/clusterrolebindings/cluster-admin", headers=ADMIN)
    assert (await r.json())["subjects"] == [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io",
                                             "name": "system:masters"}]


async def test_rolebinding_grants_then_revoked(api):
    sa = as_user("system:serviceaccount:default:bot", "system:serviceaccounts")
    assert await status_of(api, "GET", "/api/v1/namespaces/default/configmaps", sa) == 403
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "cm-reader"},
            "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]}]}
    assert (await api.post(RBAC + "/namespaces/default/roles", json=role, headers=ADMIN)).status == 201
    rb = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "bot-read"},
          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
          "subjects": [{"kind": "ServiceAccount", "name": "bot"}]}
    assert (await api.post(RBAC + "/namespaces/default/rolebindings", json=rb, headers=ADMIN)).status == 201
    await caught_up(api, *RB_CACHES)
    assert await status_of(api, "GET", "/api/v1/namespaces/default/configmaps", sa) == 200
    assert await status_of(api, "GET", "/api/v1/namespaces/kube-system/configmaps", sa) == 403
    assert await status_of(api, "DELETE", "/api/v1/namespaces/default/configmaps/x", sa) == 403
    assert (await api.delete(RBAC + "/namespaces/default/rolebindings/bot-read", headers=ADMIN)).status == 200
    await caught_up(api, *RB_CACHES)
    assert await status_of(api, "GET", "/api/v1/namespaces/default/configmaps", sa) == 403


async def test_escalation_refused_then_allowed_with_escalate(api):
    jane = as_user("jane")
    grant = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
             "metadata": {"name": "role-writer"},
             "rules": [{"verbs": ["create", "update"], "apiGroups": ["rbac.authorization.k8s.io"],
                        "resources": ["clusterroles"]}]}
    assert (await api.post(RBAC + "/clusterroles", json=grant, headers=ADMIN)).status == 201
    crb = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
           "metadata": {"name": "jane-writer"},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "role-writer"},
           "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "jane"}]}
    assert (await api.post(RBAC + "/clusterrolebindings", json=crb, headers=ADMIN)).status == 201
    await caught_up(api, *RB_CACHES)
    secret_reader = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                     "metadata": {"name": "secret-reader"},
                     "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["secrets"]}]}
    r = await api.post(RBAC + "/clusterroles", json=secret_reader, headers=jane)
    assert r.status == 403
    assert (await r.json())["message"] == (
        'clusterroles.rbac.authorization.k8s.io "secret-reader" is forbidden: user "jane" '
        '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}')
    # a role granting only what jane holds is fine
    own = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "own"},
           "rules": [{"verbs": ["create"], "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"]}]}
    assert (await api.post(RBAC + "/clusterroles", json=own, headers=jane)).status == 201
    # with the escalate verb anything goes
    esc = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "escalator"},
           "rules": [{"verbs": ["escalate"], "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"]}]}
    assert (await api.post(RBAC + "/clusterroles", json=esc, headers=ADMIN)).status == 201
    crb2 = {**crb, "metadata": {"name": "jane-escalator"},
            "roleRef": {**crb["roleRef"], "name": "escalator"}}
    assert (await api.post(RBAC + "/clusterrolebindings", json=crb2, headers=ADMIN)).status == 201
    await caught_up(api, *RB_CACHES)
    assert (await api.post(RBAC + "/clusterroles", json=secret_reader, headers=jane)).status == 201


async def test_binding_needs_bind_or_the_rules(api):
    bob = as_user("bob")
    crb = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
           "metadata": {"name": "bob-admin"},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
           "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "bob"}]}
    r = await api.post(RBAC + "/clusterrolebindings", json=crb, headers=bob)
    assert r.status == 403  # bob may not even create bindings
    writer = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
              "metadata": {"name": "binding-writer"},
              "rules": [{"verbs": ["create"], "apiGroups": ["rbac.authorization.k8s.io"],
                         "resources": ["clusterrolebindings"]}]}
    assert (await api.post(RBAC + "/clusterroles", json=writer, headers=ADMIN)).status == 201
    assert (await api.post(RBAC + "/clusterrolebindings", json={
        **crb, "metadata": {"name": "bob-writer"}, "roleRef": {**crb["roleRef"], "name": "binding-writer"}},
        headers=ADMIN)).status == 201
    await caught_up(api, *RB_CACHES)
    r = await api.post(RBAC + "/clusterrolebindings", json=crb, headers=bob)
    assert r.status == 403
    msg = (await r.json())["message"]
    assert msg.startswith('clusterrolebindings.rbac.authorization.k8s.io "bob-admin" is forbidden: user "bob" '
                          '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently '
                          'held:\n')
    assert "{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}" in msg
    binder = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "binder"},
              "rules": [{"verbs": ["bind"], "apiGroups": ["rbac.authorization.k8s.io"],
                         "resources": ["clusterroles"], "resourceNames": ["cluster-admin"]}]}
    assert (await api.post(RBAC + "/clusterroles", json=binder, headers=ADMIN)).status == 201
    assert (await api.post(RBAC + "/clusterrolebindings", json={
        **crb, "metadata": {"name": "bob-binder"}, "roleRef": {**crb["roleRef"], "name": "binder"}},
        headers=ADMIN)).status == 201
    await caught_up(api, *RB_CACHES)
    assert (await api.post(RBAC + "/clusterrolebindings", json=crb, headers=bob)).status == 201


AUTHZ = "/apis/authorization.k8s.io/v1"


@pytest.mark.parametrize("user, groups, attrs, allowed, reason", [
    ("admin", ["system:masters"], {"verb": "delete", "resource": "nodes"}, True, None),
    ("jane", [], {"verb": "list", "resource": "pods", "namespace": "default"}, False, None),
    ("x", ["system:authenticated"], {"verb": "create", "group": "authorization.k8s.io",
                                     "resource": "selfsubjectaccessreviews"}, True,
     'RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user" to Group '
     '"system:authenticated"'),
], ids=["masters", "nobody", "basic-user"])
async def test_subject_access_review(api, user, groups, attrs, allowed, reason):
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": user, "groups": groups, "resourceAttributes": attrs}}
    r = await api.post(AUTHZ + "/subjectaccessreviews", json=body, headers=ADMIN)
    assert r.status == 201
    status = (await r.json())["status"]
    assert status["allowed"] is allowed
    assert status.get("reason") == reason


async def test_self_subject_access_review_and_rules_review(api):
    ssar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"verb": "create", "resource": "pods", "namespace": "default"}}}
    r = await api.post(AUTHZ + "/selfsubjectaccessreviews", json=ssar, headers=as_user("jane"))
    assert (await r.json())["status"] == {"allowed": False}
    r = await api.post(AUTHZ + "/selfsubjectaccessreviews", json=ssar, headers=ADMIN)
    assert (await r.json())["status"]["allowed"] is True
    ssrr = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
            "spec": {"namespace": "default"}}
    r = await api.post(AUTHZ + "/selfsubjectrulesreviews", json=ssrr, headers=as_user("jane"))
    status = (await r.json())["status"]
    assert {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]} in status["resourceRules"]
    assert {"verbs": ["get"], "nonResourceURLs": ["/livez", "/readyz", "/healthz", "/version", "/version/"]} \
        in status["nonResourceRules"]
    assert status["incomplete"] is False


NODE01 = as_user("system:node:node01", "system:nodes")


async def _mk(api, path, obj):
    r = await api.post(path, json=obj, headers=ADMIN)
    assert r.status == 201, await r.text()


async def test_node_authorizer_and_noderestriction(api):
    for n in ("node01", "node02"):
        await _mk(api, "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}})
    for s in ("mine", "theirs"):
        await _mk(api, "/api/v1/namespaces/default/secrets",
                  {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": s}})
    for pod, node, secret in (("p1", "node01", "mine"), ("p2", "node02", "theirs")):
        await _mk(api, "/api/v1/namespaces/default/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}],
                     "volumes": [{"name": "s", "secret": {"secretName": secret}}]}})
    await caught_up(api, "pods")
    assert await status_of(api, "GET", "/api/v1/namespaces/default/secrets/mine", NODE01) == 200
    r = await api.get("/api/v1/namespaces/default/secrets/theirs", headers=NODE01)
    assert r.status == 403
    assert (await r.json())["message"] == (
        'secrets "theirs" is forbidden: User "system:node:node01" cannot get resource "secrets" in API group "" '
        "in the namespace \"default\": no relationship found between node 'node01' and this object")
    r = await api.get("/api/v1/nodes", headers=NODE01)
    assert (await r.json())["message"].endswith(": node 'node01' cannot read all nodes, only its own Node object")
    assert await status_of(api, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode01", NODE01) == 200
    assert await status_of(api, "GET", "/api/v1/pods", NODE01) == 403
    patch = {"metadata": {"labels": {"a": "b"}}}
    hdr = CIMultiDict(NODE01)
    hdr["Content-Type"] = "application/merge-patch+json"
    assert await status_of(api, "PATCH", "/api/v1/nodes/node01", hdr, json=patch) == 200
    r = await api.patch("/api/v1/nodes/node02", json=patch, headers=hdr)
    assert r.status == 403
    assert (await r.json())["message"] == ('nodes "node02" is forbidden: node "node01" is not allowed to modify '
                                           'node "node02"')
    r = await api.patch("/api/v1/nodes/node01", headers=hdr,
                        json={"metadata": {"labels": {"node-restriction.kubernetes.io/pool": "x"}}})
    assert r.status == 403
    assert (await r.json())["message"] == ('nodes "node01" is forbidden: is not allowed to modify labels: '
                                           'node-restriction.kubernetes.io/pool')
    r = await api.delete("/api/v1/namespaces/default/pods/p2", headers=NODE01)
    assert (await r.json())["message"] == ('pods "p2" is forbidden: node "node01" can only delete pods with '
                                           'spec.nodeName set to itself')
    # a pod bound to node01 that uses "theirs": the graph (and the remembered decision) follow
    await _mk(api, "/api/v1/namespaces/default/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p3"},
        "spec": {"nodeName": "node01", "containers": [{"name": "c", "image": "busybox",
                                                       "envFrom": [{"secretRef": {"name": "theirs"}}]}]}})
    await caught_up(api, "pods")
    assert await status_of(api, "GET", "/api/v1/namespaces/default/secrets/theirs", NODE01) == 200


async def test_bootstrap_policy_reconciled_on_start(api):
    """ensureRBACPolicy: a bootstrap role that lost a rule gets it back; one annotated
    autoupdate=false is left alone; a deleted binding is recreated."""
    path = RBAC + "/clusterroles/system:kube-dns"
    role = await (await api.get(path, headers=ADMIN)).json()
    want_rules = role["rules"]
    role["rules"] = []
    assert (await api.put(path, json=role, headers=ADMIN)).status == 200
    protected = await (await api.get(RBAC + "/clusterroles/system:heapster", headers=ADMIN)).json()
    protected["rules"] = []
    protected["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] = "false"
    assert (await api.put(RBAC + "/clusterroles/system:heapster", json=protected, headers=ADMIN)).status == 200
    assert (await api.delete(RBAC + "/clusterrolebindings/system:kube-dns", headers=ADMIN)).status == 200
    await api.server_obj.ensure_rbac_policy()
    # the missing rules come back broken down (reconciliation adds Covers' missing sub-rules)
    assert (await (await api.get(path, headers=ADMIN)).json())["rules"] == [
        {"apiGroups": [""], "resources": ["endpoints"], "verbs": ["list"]},
        {"apiGroups": [""], "resources": ["endpoints"], "verbs": ["watch"]},
        {"apiGroups": [""], "resources": ["services"], "verbs": ["list"]},
        {"apiGroups": [""], "resources": ["services"], "verbs": ["watch"]}]
    assert want_rules == [{"verbs": ["list", "watch"], "apiGroups": [""], "resources": ["endpoints", "services"]}]
    assert (await (await api.get(RBAC + "/clusterroles/system:heapster", headers=ADMIN)).json())["rules"] == []
    assert (await api.get(RBAC + "/clusterrolebindings/system:kube-dns", headers=ADMIN)).status == 200


async def test_impersonation_is_authorized_by_rbac(api):
    """The authentication filter's impersonation asks the configured authorizers: anonymous
    may not impersonate; root (system:masters) may."""
    r = await api.get("/api/v1/namespaces/default/pods", headers={"Impersonate-User": "jane"})
    assert r.status == 403
    assert (await r.json())["message"] == ('users "jane" is forbidden: User "system:anonymous" cannot impersonate '
                                           'resource "users" in API group "" at the cluster scope')
    assert (await api.get("/api/v1/namespaces/default/pods", headers=ADMIN)).status == 200
