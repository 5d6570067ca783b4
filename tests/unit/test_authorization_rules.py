"""Authorization's pure parts: attributes from paths (requestinfo.go), the rule-matching
table (rbac.go RuleAllows), the indexed RBAC evaluator against a brute-force one on random
policies, coverage (escalation), the union, the bootstrap policy against Kubernetes' names,
the Node graph."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from components.apiserver.auth import Attributes, Decision, UserInfo
from components.apiserver.authorization import bootstrappolicy as bp
from components.apiserver.authorization.attributes import request_attributes
from components.apiserver.authorization.node import NodeAuthorizer, NodeGraph, pod_references
from components.apiserver.authorization.rbac import RBACAuthorizer, RBACIndex, describe_subject
from components.apiserver.authorization.rules import Rule, compact_string, covers
from components.apiserver.authorization.union import AlwaysDeny, PrivilegedGroups, Union, parse_modes

JANE = UserInfo("jane", groups=("system:authenticated",))


@pytest.mark.parametrize("method, path, query, want", [
    ("GET", "/api/v1/namespaces/default/pods", {}, ("list", True, "default", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/default/pods", {"watch": "true"}, ("watch", True, "default", "", "pods", "", "")),
    ("GET", "/api/v1/watch/namespaces/default/pods/x", {}, ("watch", True, "default", "", "pods", "", "x")),
    ("GET", "/api/v1/namespaces/default/pods/x/log", {}, ("get", True, "default", "", "pods", "log", "x")),
    ("DELETE", "/api/v1/namespaces/default/pods", {}, ("deletecollection", True, "default", "", "pods", "", "")),
    ("DELETE", "/api/v1/namespaces/default/pods/x", {}, ("delete", True, "default", "", "pods", "", "x")),
    ("POST", "/apis/apps/v1/namespaces/ns/deployments", {}, ("create", True, "ns", "apps", "deployments", "", "")),
    ("PATCH", "/api/v1/nodes/n1/status", {}, ("patch", True, "", "", "nodes", "status", "n1")),
    ("PUT", "/api/v1/namespaces/ns/finalize", {}, ("update", True, "ns", "", "namespaces", "finalize", "ns")),
    ("GET", "/api/v1/namespaces/ns", {}, ("get", True, "ns", "", "namespaces", "", "ns")),
    ("GET", "/api/v1/nodes", {"fieldSelector": "metadata.name=n1"}, ("list", True, "", "", "nodes", "", "n1")),
    ("GET", "/apis/widgets.example.com/v1/gadgets", {}, ("list", True, "", "widgets.example.com", "gadgets", "", "")),
    ("GET", "/healthz", {}, ("get", False, "", "", "", "", "")),
    ("GET", "/api", {}, ("get", False, "", "", "", "", "")),
    ("GET", "/api/v1", {}, ("get", False, "", "", "", "", "")),
    ("GET", "/apis/apps/v1", {}, ("get", False, "", "", "", "", "")),
    ("POST", "/debug/controlplane/trace", {}, ("post", False, "", "", "", "", "")),
], ids=["list", "watch-param", "watch-path", "subresource", "deletecollection", "delete", "create-group",
        "patch-status", "namespace-finalize", "namespace-get", "field-selector-name", "unserved-group",
        "healthz", "api-root", "core-version", "group-version", "trace-post"])
def test_request_attributes(method, path, query, want):
    a = request_attributes(JANE, method, path, query)
    assert (a.verb, a.resource_request, a.namespace, a.api_group, a.resource, a.subresource, a.name) == want
    if not a.resource_request:
        assert a.path == path


def _attrs(verb="get", group="", resource="pods", sub="", name="", path="", resource_request=True):
    return Attributes(JANE, verb, resource_request, api_group=group, resource=resource, subresource=sub,
                      name=name, path=path)


@pytest.mark.parametrize("rule, attrs, allowed", [
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, _attrs(), True),
    ({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, _attrs("delete", "apps", "deployments"), True),
    ({"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}, _attrs(), False),
    ({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods"]}, _attrs(), False),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, _attrs(sub="log"), False),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}, _attrs(sub="log"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["*/log"]}, _attrs(sub="log"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["*/status"]}, _attrs(sub="log"), False),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["*/log"]}, _attrs(), False),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}, _attrs(name="a"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}, _attrs(name="b"), False),
    ({"verbs": ["list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]},
     _attrs("list"), False),
    ({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}, _attrs(path="/healthz", resource_request=False), True),
    ({"verbs": ["get"], "nonResourceURLs": ["/healthz/*"]},
     _attrs(path="/healthz/etcd", resource_request=False), True),
    ({"verbs": ["get"], "nonResourceURLs": ["/healthz/*"]}, _attrs(path="/healthz", resource_request=False), False),
    ({"verbs": ["get"], "nonResourceURLs": ["*"]}, _attrs(path="/anything", resource_request=False), True),
    ({"verbs": ["get"], "apiGroups": ["*"], "resources": ["*"]}, _attrs(path="/x", resource_request=False), False),
    ({"verbs": ["get"], "nonResourceURLs": ["*"]}, _attrs(), False),
], ids=["exact", "all-wildcards", "verb-miss", "group-miss", "resource-not-subresource", "subresource",
        "star-subresource", "star-other-subresource", "star-subresource-on-resource", "name-hit", "name-miss",
        "names-on-list", "url-exact", "url-prefix", "url-prefix-not-root", "url-star", "resource-rule-on-url",
        "url-rule-on-resource"])
def test_rule_allows(rule, attrs, allowed):
    assert Rule.of(rule).allows(attrs) is allowed


# ------------------------------------------------------------------ indexed vs brute force

USERS = ["u1", "u2", "system:serviceaccount:ns1:sa"]
GROUPS = ["g1", "g2"]
NAMESPACES = ["ns1", "ns2"]
VERBS = ["get", "list", "create", "*"]
RESOURCES = ["pods", "pods/log", "secrets", "*", "*/log"]

rules_st = hs.lists(hs.fixed_dictionaries({
    "verbs": hs.lists(hs.sampled_from(VERBS), min_size=1, max_size=2),
    "apiGroups": hs.lists(hs.sampled_from(["", "apps", "*"]), min_size=1, max_size=2),
    "resources": hs.lists(hs.sampled_from(RESOURCES), min_size=1, max_size=2),
    "resourceNames": hs.lists(hs.sampled_from(["a", "b"]), max_size=1)}), max_size=3)
subject_st = hs.one_of(
    hs.sampled_from(USERS[:2]).map(lambda n: {"kind": "User", "name": n}),
    hs.sampled_from(GROUPS).map(lambda n: {"kind": "Group", "name": n}),
    hs.sampled_from(["", "ns1", "ns2"]).map(lambda ns: {"kind": "ServiceAccount", "name": "sa",
                                                         **({"namespace": ns} if ns else {})}))
role_names = ["r1", "r2", "r3"]


@hs.composite
def policies(draw):
    objs: dict[str, list[dict]] = {"ClusterRole": [], "Role": [], "ClusterRoleBinding": [], "RoleBinding": []}
    for n in draw(hs.lists(hs.sampled_from(role_names), unique=True)):
        objs["ClusterRole"].append({"metadata": {"name": n}, "rules": draw(rules_st)})
    for ns in NAMESPACES:
        for n in draw(hs.lists(hs.sampled_from(role_names), unique=True)):
            objs["Role"].append({"metadata": {"name": n, "namespace": ns}, "rules": draw(rules_st)})
    for i in range(draw(hs.integers(0, 3))):
        objs["ClusterRoleBinding"].append({
            "metadata": {"name": f"crb{i}"}, "roleRef": {"kind": "ClusterRole", "name": draw(hs.sampled_from(role_names))},
            "subjects": draw(hs.lists(subject_st, max_size=2))})
    for i in range(draw(hs.integers(0, 4))):
        ns = draw(hs.sampled_from(NAMESPACES))
        objs["RoleBinding"].append({
            "metadata": {"name": f"rb{i}", "namespace": ns},
            "roleRef": {"kind": draw(hs.sampled_from(["Role", "ClusterRole"])),
                        "name": draw(hs.sampled_from(role_names))},
            "subjects": draw(hs.lists(subject_st, max_size=2))})
    return objs


def brute_force(objs, a: Attributes) -> bool:
    """rule.go's VisitRulesFor + appliesTo, scanning every binding."""
    def applies(s, ns):
        if s["kind"] == "User":
            return s["name"] == a.user.name
        if s["kind"] == "Group":
            return s["name"] in a.user.groups
        sa_ns = s.get("namespace") or ns
        return bool(sa_ns) and a.user.name == f"system:serviceaccount:{sa_ns}:{s['name']}"

    def role_rules(kind, name, ns):
        for r in objs[kind]:
            if r["metadata"]["name"] == name and (r["metadata"].get("namespace") or "") == ns:
                return r["rules"]
        return []
    for b in objs["ClusterRoleBinding"]:
        if any(applies(s, "") for s in b["subjects"]):
            if any(Rule.of(r).allows(a) for r in role_rules("ClusterRole", b["roleRef"]["name"], "")):
                return True
    for b in objs["RoleBinding"]:
        ns = b["metadata"]["namespace"]
        if ns != a.namespace or not any(applies(s, ns) for s in b["subjects"]):
            continue
        kind = b["roleRef"]["kind"]
        if any(Rule.of(r).allows(a) for r in role_rules(kind, b["roleRef"]["name"], "" if kind == "ClusterRole" else ns)):
            return True
    return False


attrs_st = hs.builds(
    lambda u, g, verb, ns, group, res, name: Attributes(
        UserInfo(u, groups=tuple(g)), verb, True, namespace=ns, api_group=group,
        resource=res.split("/")[0], subresource=res.split("/")[1] if "/" in res else "", name=name),
    hs.sampled_from(USERS), hs.lists(hs.sampled_from(GROUPS), unique=True), hs.sampled_from(["get", "list", "create"]),
    hs.sampled_from(["", "ns1", "ns2"]), hs.sampled_from(["", "apps"]), hs.sampled_from(["pods", "pods/log", "secrets"]),
    hs.sampled_from(["", "a", "b"]))


@settings(max_examples=150, deadline=None)
@given(policies(), hs.lists(attrs_st, min_size=1, max_size=10))
def test_indexed_matches_brute_force(objs, attrs):
    idx = RBACIndex()
    for kind, items in objs.items():
        idx.replace(kind, items)
    authz = RBACAuthorizer(idx)
    for a in attrs:
        assert (authz.authorize(a)[0] is Decision.ALLOW) is brute_force(objs, a), a


@settings(max_examples=50, deadline=None)
@given(policies(), policies(), hs.lists(attrs_st, min_size=1, max_size=5))
def test_incremental_updates_match_rebuild(before, after, attrs):
    """Events applied one by one (deletes of what went, adds of what came) give the index a
    rebuild from the final state gives."""
    idx = RBACIndex()
    for kind, items in before.items():
        idx.replace(kind, items)
    authz = RBACAuthorizer(idx)
    for a in attrs:
        authz.authorize(a)  # memoized decisions must not survive the changes
    for kind in before:
        for o in before[kind]:
            idx.apply(kind, "DELETED", o)
        for o in after[kind]:
            idx.apply(kind, "ADDED", o)
    for a in attrs:
        assert (authz.authorize(a)[0] is Decision.ALLOW) is brute_force(after, a)


def test_reason_names_binding_and_subject():
    idx = RBACIndex()
    idx.replace("ClusterRole", [{"metadata": {"name": "view"}, "rules": [
        {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}])
    idx.replace("RoleBinding", [{"metadata": {"name": "rb", "namespace": "ns1"},
                                 "roleRef": {"kind": "ClusterRole", "name": "view"},
                                 "subjects": [{"kind": "ServiceAccount", "name": "sa"}]}])
    idx.replace("ClusterRoleBinding", [{"metadata": {"name": "gone"}, "roleRef": {"kind": "ClusterRole",
                                                                                "name": "missing"},
                                        "subjects": [{"kind": "User", "name": "u1"}]}])
    sa = UserInfo("system:serviceaccount:ns1:sa")
    d, reason = RBACAuthorizer(idx).authorize(Attributes(sa, "get", True, namespace="ns1", resource="pods"))
    assert (d, reason) == (Decision.ALLOW, 'RBAC: allowed by RoleBinding "rb/ns1" of ClusterRole "view" to '
                                           'ServiceAccount "sa/ns1"')
    d, reason = RBACAuthorizer(idx).authorize(Attributes(UserInfo("u1"), "get", True, resource="pods"))
    assert (d, reason) == (Decision.NO_OPINION, 'RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found')
    assert describe_subject({"kind": "Group", "name": "g"}, "") == 'Group "g"'


@pytest.mark.parametrize("owner, wanted, ok, missing", [
    ([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
     [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}], True, []),
    ([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}],
     [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}], False,
     [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]),
    ([{"verbs": ["get"], "apiGroups": [""], "resources": ["*/log"]}],
     [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}], True, []),
    ([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}],
     [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}], False,
     [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]),
    ([{"verbs": ["get"], "nonResourceURLs": ["/healthz/*"]}],
     [{"verbs": ["get"], "nonResourceURLs": ["/healthz/etcd"]}], True, []),
], ids=["star-covers", "verb-missing", "star-subresource", "names-do-not-cover-all", "url-prefix"])
def test_covers(owner, wanted, ok, missing):
    assert covers(owner, wanted) == (ok, missing)


def test_compact_string():
    assert compact_string({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["secrets"]}) == \
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}'
    assert compact_string({"verbs": ["get"], "nonResourceURLs": ["/x"]}) == '{NonResourceURLs:["/x"], Verbs:["get"]}'


# ------------------------------------------------------------------ union and modes


class Fixed:
    def __init__(self, d, r=""):
        self.d, self.r = d, r

    def authorize(self, a):
        return self.d, self.r


@pytest.mark.parametrize("chain, want", [
    ([Fixed(Decision.NO_OPINION, "a"), Fixed(Decision.ALLOW, "b")], (Decision.ALLOW, "b")),
    ([Fixed(Decision.DENY, "no"), Fixed(Decision.ALLOW)], (Decision.DENY, "no")),
    ([Fixed(Decision.NO_OPINION, "a"), Fixed(Decision.NO_OPINION, ""), Fixed(Decision.NO_OPINION, "c")],
     (Decision.NO_OPINION, "a\nc")),
    ([AlwaysDeny()], (Decision.NO_OPINION, "Everything is forbidden.")),
], ids=["first-allow", "deny-stops", "reasons-joined", "always-deny"])
def test_union(chain, want):
    assert Union(chain).authorize(_attrs()) == want


def test_privileged_group():
    a = Attributes(UserInfo("root", groups=("system:masters",)), "delete", True, resource="nodes")
    assert PrivilegedGroups("system:masters").authorize(a) == (Decision.ALLOW, "")
    assert PrivilegedGroups("system:masters").authorize(_attrs())[0] is Decision.NO_OPINION


@pytest.mark.parametrize("value, error", [
    ("Node,RBAC", None), ("AlwaysAllow", None), ("RBAC,Bogus", 'authorization-mode "Bogus" is not a valid mode'),
    ("RBAC,RBAC", 'authorization-mode "RBAC" has mode specified more than once'),
    ("", "at least one authorization-mode must be passed"),
], ids=["node-rbac", "always-allow", "unknown", "twice", "empty"])
def test_parse_modes(value, error):
    if error is None:
        assert parse_modes(value) == value.split(",")
    else:
        with pytest.raises(ValueError, match=error):
            parse_modes(value)


# ------------------------------------------------------------------ bootstrap policy

#: ClusterRoles of a v1.32 kube-apiserver (kubectl get clusterroles -l kubernetes.io/bootstrapping=rbac-defaults)
K8S_CLUSTER_ROLES = {
    "admin", "cluster-admin", "edit", "view", "system:aggregate-to-admin", "system:aggregate-to-edit",
    "system:aggregate-to-view", "system:auth-delegator", "system:basic-user",
    "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
    "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
    "system:certificates.k8s.io:kube-apiserver-client-approver",
    "system:certificates.k8s.io:kube-apiserver-client-kubelet-approver",
    "system:certificates.k8s.io:kubelet-serving-approver", "system:certificates.k8s.io:legacy-unknown-approver",
    "system:discovery", "system:heapster", "system:kube-aggregator", "system:kube-controller-manager",
    "system:kube-dns", "system:kube-scheduler", "system:kubelet-api-admin", "system:monitoring", "system:node",
    "system:node-bootstrapper", "system:node-problem-detector", "system:node-proxier",
    "system:persistent-volume-provisioner", "system:public-info-viewer", "system:service-account-issuer-discovery",
    "system:volume-scheduler",
    "system:controller:attachdetach-controller", "system:controller:certificate-controller",
    "system:controller:clusterrole-aggregation-controller", "system:controller:cronjob-controller",
    "system:controller:daemon-set-controller", "system:controller:deployment-controller",
    "system:controller:disruption-controller", "system:controller:endpoint-controller",
    "system:controller:endpointslice-controller", "system:controller:endpointslicemirroring-controller",
    "system:controller:ephemeral-volume-controller", "system:controller:expand-controller",
    "system:controller:generic-garbage-collector", "system:controller:horizontal-pod-autoscaler",
    "system:controller:job-controller", "system:controller:legacy-service-account-token-cleaner",
    "system:controller:namespace-controller", "system:controller:node-controller",
    "system:controller:persistent-volume-binder", "system:controller:pod-garbage-collector",
    "system:controller:pv-protection-controller", "system:controller:pvc-protection-controller",
    "system:controller:replicaset-controller", "system:controller:replication-controller",
    "system:controller:resourcequota-controller", "system:controller:root-ca-cert-publisher",
    "system:controller:route-controller", "system:controller:service-account-controller",
    "system:controller:service-controller", "system:controller:statefulset-controller",
    "system:controller:ttl-after-finished-controller", "system:controller:ttl-controller",
    "system:controller:validatingadmissionpolicy-status-controller",
}


def test_bootstrap_cluster_roles_are_kubernetes_names():
    names = {o["metadata"]["name"] for o in bp.policy()["clusterroles"]}
    assert names - {bp.CONTROLPLANE_ROLE, bp.CONTROLLER_MANAGER_ROLE} == K8S_CLUSTER_ROLES


def test_controller_manager_user_holds_every_controller_role():
    """Our controller-manager runs every controller as system:kube-controller-manager."""
    pol = bp.policy()
    idx = RBACIndex()
    idx.replace("ClusterRole", pol["clusterroles"])
    idx.replace("ClusterRoleBinding", pol["clusterrolebindings"])
    kcm = UserInfo("system:kube-controller-manager", groups=("system:authenticated",))
    owned, errors = idx.rules_for(kcm, "")
    assert errors == []
    for role in bp.controller_roles():
        assert covers(owned, role["rules"])[0], role["metadata"]["name"]


def test_bootstrap_metadata_and_bindings():
    pol = bp.policy()
    for objs in pol.values():
        for o in objs:
            assert o["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
            assert o["metadata"]["annotations"] == {"rbac.authorization.kubernetes.io/autoupdate": "true"}
    crbs = {o["metadata"]["name"]: o for o in pol["clusterrolebindings"]}
    assert crbs["cluster-admin"]["subjects"] == [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io",
                                                  "name": "system:masters"}]
    assert [s["name"] for s in crbs["system:public-info-viewer"]["subjects"]] == \
        ["system:authenticated", "system:unauthenticated"]
    assert crbs["system:controller:deployment-controller"]["subjects"] == [
        {"kind": "ServiceAccount", "name": "deployment-controller", "namespace": "kube-system"}]
    assert "subjects" not in crbs["system:node"]
    roles = {o["metadata"]["name"]: o for o in pol["clusterroles"]}
    assert roles["view"]["aggregationRule"] == {"clusterRoleSelectors": [
        {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}]}
    assert roles["view"]["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"] == "true"
    assert roles["system:aggregate-to-view"]["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"] \
        == "true"
    assert {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in pol["roles"]} >= {
        ("kube-system", "extension-apiserver-authentication-reader"),
        ("kube-system", "system::leader-locking-kube-scheduler"), ("kube-public", "system:controller:bootstrap-signer")}


def test_reconcile_adds_missing_and_respects_autoupdate_false():
    want = bp.cluster_role("r", [bp.rule(("get", "list"), ("",), ("pods",))])
    have = bp.cluster_role("r", [bp.rule(("get",), ("",), ("pods",))])
    have["metadata"]["labels"]["extra"] = "kept"
    out = bp.reconcile_role(want, have)
    assert out["rules"] == [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
                            {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]
    assert out["metadata"]["labels"]["extra"] == "kept"
    assert bp.reconcile_role(want, out) is None
    have["metadata"]["annotations"][bp.AUTOUPDATE] = "false"
    assert bp.reconcile_role(want, have) is None
    b_want = bp.cluster_role_binding("x", groups=("g1",))
    b_have = bp.cluster_role_binding("x", users=("u",))
    op, out = bp.reconcile_binding(b_want, b_have)
    assert op == "update" and [s["name"] for s in out["subjects"]] == ["u", "g1"]
    op, out = bp.reconcile_binding(b_want, {**b_have, "roleRef": {**b_have["roleRef"], "name": "other"}})
    assert op == "recreate" and out["roleRef"]["name"] == "x"


# ------------------------------------------------------------------ node graph


def _pod(name, node, **spec):
    return {"metadata": {"name": name, "namespace": "ns"},
            "spec": {"nodeName": node, "containers": [{"name": "c", **spec.pop("container", {})}], **spec}}


def test_pod_references():
    p = _pod("p", "n1", serviceAccountName="sa", imagePullSecrets=[{"name": "pull"}],
             volumes=[{"name": "v", "secret": {"secretName": "vs"}}, {"name": "c", "configMap": {"name": "cm"}},
                      {"name": "d", "persistentVolumeClaim": {"claimName": "claim"}}, {"name": "e", "ephemeral": {}},
                      {"name": "f", "projected": {"sources": [{"secret": {"name": "ps"}}]}}],
             container={"env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "envcm", "key": "k"}}}],
                        "envFrom": [{"secretRef": {"name": "efs"}}]})
    assert pod_references(p) == {("pod", "ns", "p"), ("serviceAccount", "ns", "sa"), ("secret", "ns", "pull"),
                                 ("secret", "ns", "vs"), ("configmap", "ns", "cm"), ("pvc", "ns", "claim"),
                                 ("pvc", "ns", "p-e"), ("secret", "ns", "ps"), ("configmap", "ns", "envcm"),
                                 ("secret", "ns", "efs")}


NODE = UserInfo("system:node:n1", groups=("system:nodes", "system:authenticated"))


@pytest.mark.parametrize("attrs, want", [
    (Attributes(NODE, "get", True, namespace="ns", resource="secrets", name="s1"), (Decision.ALLOW, "")),
    (Attributes(NODE, "get", True, namespace="ns", resource="secrets", name="s2"),
     (Decision.NO_OPINION, "no relationship found between node 'n1' and this object")),
    (Attributes(NODE, "list", True, namespace="ns", resource="secrets"), (Decision.NO_OPINION, "No Object name found")),
    (Attributes(NODE, "delete", True, namespace="ns", resource="secrets", name="s1"),
     (Decision.NO_OPINION, "can only read resources of this type")),
    (Attributes(NODE, "get", True, namespace="ns", resource="persistentvolumes", name="pv1"), (Decision.ALLOW, "")),
    (Attributes(NODE, "get", True, namespace="ns", resource="persistentvolumes", name="pv2"),
     (Decision.NO_OPINION, "no relationship found between node 'n1' and this object")),
    (Attributes(NODE, "update", True, namespace="kube-node-lease", api_group="coordination.k8s.io",
                resource="leases", name="n1"), (Decision.ALLOW, "")),
    (Attributes(NODE, "update", True, namespace="kube-node-lease", api_group="coordination.k8s.io",
                resource="leases", name="n2"),
     (Decision.NO_OPINION, "can only access node lease with the same name as the requesting node")),
    (Attributes(NODE, "get", True, resource="nodes", name="n2"),
     (Decision.NO_OPINION, "node 'n1' cannot read 'n2', only its own Node object")),
    (Attributes(NODE, "watch", True, resource="pods", field_selector=(("spec.nodeName", "=", "n1"),)),
     (Decision.ALLOW, "")),
    (Attributes(NODE, "create", True, namespace="ns", resource="events"), (Decision.ALLOW, "")),
    (Attributes(NODE, "delete", True, namespace="ns", resource="services", name="x"), (Decision.NO_OPINION, "")),
    (Attributes(UserInfo("system:node:n1"), "get", True, resource="nodes", name="n1"), (Decision.NO_OPINION, "")),
], ids=["own-secret", "other-secret", "secret-list-no-name", "secret-delete", "pv-through-pvc", "other-pv",
        "own-lease", "other-lease", "other-node", "own-pods-watch", "events-static-rule", "not-in-rules",
        "not-in-nodes-group"])
def test_node_authorizer(attrs, want):
    g = NodeGraph()
    g.apply("ADDED", _pod("p1", "n1", volumes=[{"name": "s", "secret": {"secretName": "s1"}},
                                              {"name": "d", "persistentVolumeClaim": {"claimName": "c1"}}]))
    g.apply("ADDED", _pod("p2", "n2", volumes=[{"name": "s", "secret": {"secretName": "s2"}}]))
    authz = NodeAuthorizer(g, bp.node_rules(), pvc_volume=lambda ns, n: {"c1": "pv1"}.get(n))
    assert authz.authorize(attrs) == want


def test_node_graph_follows_pod_moves_and_deletes():
    g = NodeGraph()
    p = _pod("p1", "n1", volumes=[{"name": "s", "secret": {"secretName": "s1"}}])
    g.apply("ADDED", p)
    g.apply("ADDED", _pod("p3", "n1", volumes=[{"name": "s", "secret": {"secretName": "s1"}}]))
    assert g.has_path("n1", ("secret", "ns", "s1"), lambda *_: None)
    g.apply("DELETED", p)
    assert g.has_path("n1", ("secret", "ns", "s1"), lambda *_: None)  # p3 still uses it
    g.apply("MODIFIED", _pod("p3", "n2", volumes=[{"name": "s", "secret": {"secretName": "s1"}}]))
    assert not g.has_path("n1", ("secret", "ns", "s1"), lambda *_: None)
    assert g.has_path("n2", ("secret", "ns", "s1"), lambda *_: None)


def test_memo_ignores_the_name_unless_a_rule_names_objects():
    """Deletes of many objects share one memoized decision; a rule with resourceNames on the
    same resource keeps the name in the key, so each name gets its own verdict."""
    idx = RBACIndex()
    idx.replace("ClusterRole", [
        {"metadata": {"name": "gc"}, "rules": [{"verbs": ["delete"], "apiGroups": [""], "resources": ["configmaps"]}]},
        {"metadata": {"name": "one"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"],
                                                 "resourceNames": ["a"]}]}])
    idx.replace("ClusterRoleBinding", [
        {"metadata": {"name": "gc"}, "roleRef": {"kind": "ClusterRole", "name": "gc"},
         "subjects": [{"kind": "User", "name": "jane"}]},
        {"metadata": {"name": "one"}, "roleRef": {"kind": "ClusterRole", "name": "one"},
         "subjects": [{"kind": "User", "name": "jane"}]}])
    authz = RBACAuthorizer(idx)

    def cm(verb: str, name: str) -> Attributes:
        return Attributes(JANE, verb, True, namespace="default", resource="configmaps", name=name,
                          path=f"/api/v1/namespaces/default/configmaps/{name}")
    for name in ("a", "b", "c"):
        assert authz.authorize(cm("delete", name)) == (Decision.ALLOW, 'RBAC: allowed by ClusterRoleBinding "gc" of '
                                                                       'ClusterRole "gc" to User "jane"')
    assert len(authz._memo) == 1
    assert authz.authorize(cm("get", "a"))[0] is Decision.ALLOW
    assert authz.authorize(cm("get", "b"))[0] is Decision.NO_OPINION
    assert authz.authorize(cm("get", "a"))[0] is Decision.ALLOW
    idx.apply("ClusterRole", "DELETED", {"metadata": {"name": "one"}})  # the named rule goes
    assert authz.authorize(cm("get", "a"))[0] is Decision.NO_OPINION
