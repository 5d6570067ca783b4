"""The bootstrap RBAC policy: default ClusterRoles, ClusterRoleBindings, Roles and RoleBindings.

As ``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/`` (v1.32): ``policy.go`` (the
user-facing and system roles: cluster-admin, admin / edit / view aggregated from
``system:aggregate-to-*``, system:discovery, system:basic-user, system:public-info-viewer,
system:monitoring, system:node, system:node-proxier, system:kube-scheduler,
system:volume-scheduler, system:kube-controller-manager, system:kube-dns, system:auth-delegator
…), ``controller_policy.go`` (one ``system:controller:<name>`` role per controller, bound to
the ``kube-system/<name>`` ServiceAccount, for ``--use-service-account-credentials``) and
``namespace_policy.go`` (the leader-locking and authentication-reader Roles of
``kube-system`` / ``kube-public``). Every object carries the label
``kubernetes.io/bootstrapping: rbac-defaults`` and the annotation
``rbac.authorization.kubernetes.io/autoupdate: "true"``.

Beyond Kubernetes' names, :data:`CONTROLPLANE_ROLE` grants what our components need and
Kubernetes' roles do not: POSTing their step records to ``/debug/controlplane/trace``; and
:data:`CONTROLLER_MANAGER_ROLE` gives the controller-manager's own user every controller
role's rules (it has no per-controller ServiceAccount credentials).

:func:`reconcile` is ``ensureRBACPolicy`` (``pkg/registry/rbac/rest/storage_rbac.go``) with
``pkg/registry/rbac/reconciliation``: a missing object is created; an existing one whose
autoupdate annotation is not ``"false"`` gets the missing rules / aggregation selectors /
subjects, labels and annotations added (nothing removed); a binding whose roleRef changed is
recreated.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from components.apiserver.authorization.rules import covers

JSON = dict[str, Any]
RBAC = "rbac.authorization.k8s.io"
API_VERSION = f"{RBAC}/v1"
LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
ANNOTATIONS = {AUTOUPDATE: "true"}
SA_ROLE_PREFIX = "system:controller:"
#: our extra role (and binding) for the controlplane components' own endpoints
CONTROLPLANE_ROLE = "system:controlplane:components"
#: our extra role (and binding) giving ``system:kube-controller-manager`` every controller's
#: rules: our controller-manager runs every controller with its own credentials (Kubernetes'
#: ``--use-service-account-credentials=false``, where "the controller manager's own credential
#: must be granted all the relevant roles")
CONTROLLER_MANAGER_ROLE = "system:controlplane:kube-controller-manager-controllers"
#: the hollow-node process's user (``controlplane.pki.HOLLOW_USER``) and its binding to system:node
HOLLOW_NODES_USER = "system:hollow-nodes"
HOLLOW_NODES_BINDING = "system:controlplane:hollow-nodes"

READ = ("get", "list", "watch")
WRITE = ("create", "update", "patch", "delete", "deletecollection")
READ_WRITE = READ + WRITE
READ_UPDATE = ("get", "list", "watch", "update", "patch")

LEGACY, APPS, AUTHN, AUTHZ, AUTOSCALING, BATCH = "", "apps", "authentication.k8s.io", "authorization.k8s.io", \
    "autoscaling", "batch"
CERTS, COORD, DISCOVERY, EXT, POLICY, STORAGE = "certificates.k8s.io", "coordination.k8s.io", "discovery.k8s.io", \
    "extensions", "policy", "storage.k8s.io"
NETWORKING, EVENTS, ADMISSIONREG, FLOWCONTROL, NODE = "networking.k8s.io", "events.k8s.io", \
    "admissionregistration.k8s.io", "flowcontrol.apiserver.k8s.io", "node.k8s.io"

AUTHENTICATED, UNAUTHENTICATED, MASTERS, NODES = "system:authenticated", "system:unauthenticated", \
    "system:masters", "system:nodes"
KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER, KUBE_PROXY = "system:kube-controller-manager", "system:kube-scheduler", \
    "system:kube-proxy"
MONITORING_GROUP = "system:monitoring"
SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"


def rule(verbs: Sequence[str], groups: Sequence[str] = (), resources: Sequence[str] = (),
         names: Sequence[str] = (), urls: Sequence[str] = ()) -> JSON:
    """One PolicyRule (``rbacv1helpers.NewRule(...).Groups().Resources().Names().URLs()``)."""
    r: JSON = {"verbs": list(verbs)}
    if urls:
        r["nonResourceURLs"] = list(urls)
        return r
    r["apiGroups"] = list(groups)
    r["resources"] = list(resources)
    if names:
        r["resourceNames"] = list(names)
    return r


def events_rule() -> JSON:
    return rule(("create", "update", "patch"), (LEGACY, EVENTS), ("events",))


def _meta(name: str, namespace: str | None = None, labels: dict[str, str] | None = None) -> JSON:
    md: JSON = {"name": name}
    if namespace:
        md["namespace"] = namespace
    md["labels"] = {**(labels or {}), **LABELS}
    md["annotations"] = dict(ANNOTATIONS)
    return md


def cluster_role(name: str, rules: list[JSON], labels: dict[str, str] | None = None,
                 aggregate_from: str | None = None) -> JSON:
    obj: JSON = {"apiVersion": API_VERSION, "kind": "ClusterRole", "metadata": _meta(name, labels=labels)}
    if aggregate_from:
        obj["aggregationRule"] = {"clusterRoleSelectors": [
            {"matchLabels": {f"{RBAC}/aggregate-to-{aggregate_from}": "true"}}]}
        obj["rules"] = []
    else:
        obj["rules"] = rules
    return obj


def _subjects(users: Sequence[str] = (), groups: Sequence[str] = (),
              sas: Sequence[tuple[str, str]] = ()) -> list[JSON]:
    out: list[JSON] = [{"kind": "User", "apiGroup": RBAC, "name": u} for u in users]
    out += [{"kind": "Group", "apiGroup": RBAC, "name": g} for g in groups]
    out += [{"kind": "ServiceAccount", "name": n, "namespace": ns} for ns, n in sas]
    return out


def cluster_role_binding(role: str, users: Sequence[str] = (), groups: Sequence[str] = (),
                         sas: Sequence[tuple[str, str]] = (), name: str | None = None) -> JSON:
    obj: JSON = {"apiVersion": API_VERSION, "kind": "ClusterRoleBinding", "metadata": _meta(name or role),
                 "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role}}
    subjects = _subjects(users, groups, sas)
    if subjects:
        obj["subjects"] = subjects
    return obj


def node_rules() -> list[JSON]:
    """``NodeRules``: what a kubelet needs (also the Node authorizer's static rules)."""
    return [
        rule(("create",), (AUTHN,), ("tokenreviews",)),
        rule(("create",), (AUTHZ,), ("subjectaccessreviews", "localsubjectaccessreviews")),
        rule(READ, (LEGACY,), ("services",)),
        rule(("create", "get", "list", "watch"), (LEGACY,), ("nodes",)),
        rule(("update", "patch"), (LEGACY,), ("nodes/status",)),
        rule(("update", "patch"), (LEGACY,), ("nodes",)),
        rule(("create", "update", "patch"), (LEGACY, EVENTS), ("events",)),
        rule(READ, (LEGACY,), ("pods",)),
        rule(("create", "delete"), (LEGACY,), ("pods",)),
        rule(("update", "patch"), (LEGACY,), ("pods/status",)),
        rule(("create",), (LEGACY,), ("pods/eviction",)),
        rule(READ, (LEGACY,), ("secrets", "configmaps")),
        rule(("get",), (LEGACY,), ("persistentvolumeclaims", "persistentvolumes")),
        rule(("get",), (LEGACY,), ("endpoints",)),
        rule(("create", "get", "list", "watch"), (CERTS,), ("certificatesigningrequests",)),
        rule(("get", "create", "update", "patch", "delete"), (COORD,), ("leases",)),
        rule(("get",), (STORAGE,), ("volumeattachments",)),
        rule(("get", "update", "patch"), (LEGACY,), ("persistentvolumeclaims/status",)),
        rule(("create",), (LEGACY,), ("serviceaccounts/token",)),
        rule(("get", "watch", "list"), (STORAGE,), ("csidrivers",)),
        rule(("get", "create", "update", "patch", "delete"), (STORAGE,), ("csinodes",)),
        rule(READ, (NODE,), ("runtimeclasses",)),
    ]


def _agg(what: str) -> dict[str, str]:
    return {f"{RBAC}/aggregate-to-{what}": "true"}


def cluster_roles() -> list[JSON]:
    """``clusterRoles()`` of ``policy.go`` (and :data:`CONTROLPLANE_ROLE`)."""
    health = ("/livez", "/readyz", "/healthz")
    return [
        cluster_role("cluster-admin", [rule(("*",), ("*",), ("*",)), rule(("*",), urls=("*",))]),
        cluster_role("system:discovery", [rule(("get",), urls=health + (
            "/version", "/version/", "/openapi", "/openapi/*", "/api", "/api/*", "/apis", "/apis/*"))]),
        cluster_role("system:monitoring", [
            rule(("get",), urls=("/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz",
                                 "/livez/*", "/readyz/*", "/healthz/*"))]),
        cluster_role("system:basic-user", [
            rule(("create",), (AUTHZ,), ("selfsubjectaccessreviews", "selfsubjectrulesreviews")),
            rule(("create",), (AUTHN,), ("selfsubjectreviews",))]),
        cluster_role("system:public-info-viewer", [rule(("get",), urls=health + ("/version", "/version/"))]),
        cluster_role("admin", [], aggregate_from="admin"),
        cluster_role("edit", [], labels=_agg("admin"), aggregate_from="edit"),
        cluster_role("view", [], labels=_agg("edit"), aggregate_from="view"),
        cluster_role("system:aggregate-to-admin", [
            rule(("create",), (AUTHZ,), ("localsubjectaccessreviews",)),
            rule(READ_WRITE, (RBAC,), ("roles", "rolebindings"))], labels=_agg("admin")),
        cluster_role("system:aggregate-to-edit", [
            rule(READ, (LEGACY,), ("pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets",
                                   "services/proxy")),
            rule(("impersonate",), (LEGACY,), ("serviceaccounts",)),
            rule(WRITE, (LEGACY,), ("pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward")),
            rule(("create",), (LEGACY,), ("pods/eviction",)),
            rule(WRITE, (LEGACY,), ("replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
                                    "services", "services/proxy", "persistentvolumeclaims", "configmaps",
                                    "secrets", "events")),
            rule(("create",), (LEGACY,), ("serviceaccounts/token",)),
            rule(WRITE, (APPS,), ("statefulsets", "statefulsets/scale", "daemonsets", "deployments",
                                  "deployments/scale", "deployments/rollback", "replicasets",
                                  "replicasets/scale")),
            rule(WRITE, (AUTOSCALING,), ("horizontalpodautoscalers",)),
            rule(WRITE, (BATCH,), ("jobs", "cronjobs")),
            rule(WRITE, (EXT,), ("daemonsets", "deployments", "deployments/scale", "deployments/rollback",
                                 "ingresses", "replicasets", "replicasets/scale", "replicationcontrollers/scale",
                                 "networkpolicies")),
            rule(WRITE, (POLICY,), ("poddisruptionbudgets",)),
            rule(WRITE, (NETWORKING,), ("networkpolicies", "ingresses")),
            rule(READ_WRITE, (COORD,), ("leases",))], labels=_agg("edit")),
        cluster_role("system:aggregate-to-view", [
            rule(READ, (LEGACY,), ("pods", "replicationcontrollers", "replicationcontrollers/scale",
                                   "serviceaccounts", "services", "services/status", "endpoints",
                                   "persistentvolumeclaims", "persistentvolumeclaims/status", "configmaps")),
            rule(READ, (LEGACY,), ("limitranges", "resourcequotas", "bindings", "events", "pods/status",
                                   "resourcequotas/status", "namespaces/status", "replicationcontrollers/status",
                                   "pods/log")),
            rule(READ, (LEGACY,), ("namespaces",)),
            rule(READ, (DISCOVERY,), ("endpointslices",)),
            rule(READ, (APPS,), ("controllerrevisions", "statefulsets", "statefulsets/status", "statefulsets/scale",
                                 "daemonsets", "daemonsets/status", "deployments", "deployments/status",
                                 "deployments/scale", "replicasets", "replicasets/status", "replicasets/scale")),
            rule(READ, (AUTOSCALING,), ("horizontalpodautoscalers", "horizontalpodautoscalers/status")),
            rule(READ, (BATCH,), ("jobs", "cronjobs", "cronjobs/status", "jobs/status")),
            rule(READ, (EXT,), ("daemonsets", "daemonsets/status", "deployments", "deployments/scale",
                                "deployments/status", "ingresses", "ingresses/status", "replicasets",
                                "replicasets/scale", "replicasets/status", "replicationcontrollers/scale",
                                "networkpolicies")),
            rule(READ, (POLICY,), ("poddisruptionbudgets", "poddisruptionbudgets/status")),
            rule(READ, (NETWORKING,), ("networkpolicies", "ingresses", "ingresses/status"))], labels=_agg("view")),
        cluster_role("system:heapster", [rule(READ, (LEGACY,), ("events", "pods", "nodes", "namespaces")),
                                         rule(READ, (EXT,), ("deployments",))]),
        cluster_role("system:node", node_rules()),
        cluster_role("system:node-problem-detector", [rule(("get",), (LEGACY,), ("nodes",)),
                                                      rule(("patch",), (LEGACY,), ("nodes/status",)), events_rule()]),
        cluster_role("system:kubelet-api-admin", [
            rule(READ, (LEGACY,), ("nodes",)), rule(("proxy",), (LEGACY,), ("nodes",)),
            rule(("*",), (LEGACY,), ("nodes/proxy", "nodes/metrics", "nodes/stats", "nodes/log",
                                     "nodes/pods", "nodes/healthz", "nodes/configz"))]),
        cluster_role("system:node-bootstrapper", [
            rule(("create", "get", "list", "watch"), (CERTS,), ("certificatesigningrequests",))]),
        cluster_role("system:auth-delegator", [rule(("create",), (AUTHN,), ("tokenreviews",)),
                                               rule(("create",), (AUTHZ,), ("subjectaccessreviews",))]),
        cluster_role("system:kube-aggregator", [rule(READ, (LEGACY,), ("services", "endpoints"))]),
        cluster_role("system:kube-controller-manager", [
            events_rule(),
            rule(("create",), (COORD,), ("leases",)),
            rule(("get", "update"), (COORD,), ("leases",), names=("kube-controller-manager",)),
            rule(("create", "delete"), (LEGACY,), ("secrets", "serviceaccounts")),
            rule(("get",), (LEGACY,), ("namespaces", "secrets", "serviceaccounts", "configmaps")),
            rule(("update",), (LEGACY,), ("secrets", "serviceaccounts")),
            rule(("create",), (AUTHN,), ("tokenreviews",)),
            rule(("create",), (AUTHZ,), ("subjectaccessreviews",)),
            rule(("list", "watch"), ("*",), ("*",)),
            rule(("create",), (LEGACY,), ("serviceaccounts/token",))]),
        cluster_role("system:kube-dns", [rule(("list", "watch"), (LEGACY,), ("endpoints", "services"))]),
        cluster_role("system:persistent-volume-provisioner", [
            rule(("get", "list", "watch", "create", "delete"), (LEGACY,), ("persistentvolumes",)),
            rule(("get", "list", "watch", "update"), (LEGACY,), ("persistentvolumeclaims",)),
            rule(READ, (STORAGE,), ("storageclasses",)),
            rule(("watch",), (LEGACY,), ("events",)), events_rule()]),
        cluster_role("system:certificates.k8s.io:certificatesigningrequests:nodeclient", [
            rule(("create",), (CERTS,), ("certificatesigningrequests/nodeclient",))]),
        cluster_role("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", [
            rule(("create",), (CERTS,), ("certificatesigningrequests/selfnodeclient",))]),
        cluster_role("system:volume-scheduler", [
            rule(READ_UPDATE, (LEGACY,), ("persistentvolumes",)), rule(READ, (STORAGE,), ("storageclasses",)),
            rule(READ_UPDATE, (LEGACY,), ("persistentvolumeclaims",))]),
        cluster_role("system:certificates.k8s.io:legacy-unknown-approver", [
            rule(("approve",), (CERTS,), ("signers",), names=("kubernetes.io/legacy-unknown",))]),
        cluster_role("system:certificates.k8s.io:kubelet-serving-approver", [
            rule(("approve",), (CERTS,), ("signers",), names=("kubernetes.io/kubelet-serving",))]),
        cluster_role("system:certificates.k8s.io:kube-apiserver-client-approver", [
            rule(("approve",), (CERTS,), ("signers",), names=("kubernetes.io/kube-apiserver-client",))]),
        cluster_role("system:certificates.k8s.io:kube-apiserver-client-kubelet-approver", [
            rule(("approve",), (CERTS,), ("signers",), names=("kubernetes.io/kube-apiserver-client-kubelet",))]),
        cluster_role("system:service-account-issuer-discovery", [
            rule(("get",), urls=("/.well-known/openid-configuration", "/.well-known/openid-configuration/",
                                 "/openid/v1/jwks", "/openid/v1/jwks/"))]),
        cluster_role("system:node-proxier", [
            rule(("list", "watch"), (LEGACY,), ("services", "endpoints")),
            rule(READ, (LEGACY,), ("nodes",)), events_rule(),
            rule(("list", "watch"), (DISCOVERY,), ("endpointslices",))]),
        cluster_role("system:kube-scheduler", [
            events_rule(),
            rule(("create",), (COORD,), ("leases",)),
            rule(("get", "update"), (COORD,), ("leases",), names=("kube-scheduler",)),
            rule(READ, (LEGACY,), ("nodes",)),
            rule(("get", "list", "watch", "delete"), (LEGACY,), ("pods",)),
            rule(("create",), (LEGACY,), ("pods/binding", "bindings")),
            rule(("patch", "update"), (LEGACY,), ("pods/status",)),
            rule(READ, (LEGACY,), ("replicationcontrollers", "services")),
            rule(READ, (APPS, EXT), ("replicasets",)),
            rule(READ, (APPS,), ("statefulsets",)),
            rule(READ, (POLICY,), ("poddisruptionbudgets",)),
            rule(READ, (LEGACY,), ("persistentvolumeclaims", "persistentvolumes")),
            rule(("create",), (AUTHN,), ("tokenreviews",)),
            rule(("create",), (AUTHZ,), ("subjectaccessreviews",)),
            rule(READ, (STORAGE,), ("csinodes",)),
            rule(READ, (LEGACY,), ("namespaces",)),
            rule(READ, (STORAGE,), ("csidrivers",)),
            rule(READ, (STORAGE,), ("csistoragecapacities",))]),
        cluster_role(CONTROLPLANE_ROLE, [
            rule(("get", "post"), urls=("/debug/controlplane/trace", "/debug/controlplane/trace/*"))]),
        cluster_role(CONTROLLER_MANAGER_ROLE, _all_controller_rules() + [
            # the default StorageClass our PV controller writes at start (an add-on's job in
            # Kubernetes, e.g. kind's local-path provisioner manifest)
            rule(("get", "list", "watch", "create"), (STORAGE,), ("storageclasses",))]),
    ]


def _all_controller_rules() -> list[JSON]:
    out: list[JSON] = []
    for _, rules in _CONTROLLERS:
        for r in rules:
            if r not in out:
                out.append(copy.deepcopy(r))
    return out


def cluster_role_bindings() -> list[JSON]:
    """``clusterRoleBindings()`` of ``policy.go`` (and the binding of :data:`CONTROLPLANE_ROLE`
    to the controller-manager, the scheduler, the nodes and ``system:masters``)."""
    return [
        cluster_role_binding("cluster-admin", groups=(MASTERS,)),
        cluster_role_binding("system:monitoring", groups=(MONITORING_GROUP,)),
        cluster_role_binding("system:discovery", groups=(AUTHENTICATED,)),
        cluster_role_binding("system:basic-user", groups=(AUTHENTICATED,)),
        cluster_role_binding("system:public-info-viewer", groups=(AUTHENTICATED, UNAUTHENTICATED)),
        cluster_role_binding("system:node-proxier", users=(KUBE_PROXY,)),
        cluster_role_binding("system:kube-controller-manager", users=(KUBE_CONTROLLER_MANAGER,)),
        cluster_role_binding("system:kube-dns", sas=(("kube-system", "kube-dns"),)),
        cluster_role_binding("system:kube-scheduler", users=(KUBE_SCHEDULER,)),
        cluster_role_binding("system:volume-scheduler", users=(KUBE_SCHEDULER,)),
        # the deprecated binding of system:node to system:nodes, kept without subjects (the
        # Node authorizer grants nodes their rights)
        cluster_role_binding("system:node"),
        cluster_role_binding("system:service-account-issuer-discovery", groups=(SERVICE_ACCOUNTS_GROUP,)),
        cluster_role_binding(CONTROLPLANE_ROLE, users=(KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER),
                             groups=(NODES,)),
        cluster_role_binding(CONTROLLER_MANAGER_ROLE, users=(KUBE_CONTROLLER_MANAGER,)),
        # the one identity of a process of hollow nodes (controlplane.pki.HOLLOW_USER): it serves
        # many nodes through one client, so the Node authorizer (one node per user) cannot hold
        # it; it gets the kubelet's rules cluster-wide, as kubemark's hollow nodes do
        cluster_role_binding("system:node", users=(HOLLOW_NODES_USER,), name=HOLLOW_NODES_BINDING),
    ]


_CONTROLLERS: list[tuple[str, list[JSON]]] = [
    ("attachdetach-controller", [
        rule(("list", "watch"), (LEGACY,), ("persistentvolumes", "persistentvolumeclaims")),
        rule(READ, (LEGACY,), ("nodes",)), rule(("patch", "update"), (LEGACY,), ("nodes/status",)),
        rule(("list", "watch"), (LEGACY,), ("pods",)), events_rule(),
        rule(("get", "create", "delete", "list", "watch"), (STORAGE,), ("volumeattachments",)),
        rule(("get", "watch", "list"), (STORAGE,), ("csidrivers",)),
        rule(("get", "watch", "list"), (STORAGE,), ("csinodes",))]),
    ("clusterrole-aggregation-controller", [
        rule(("escalate", "get", "list", "watch", "update", "patch"), (RBAC,), ("clusterroles",))]),
    ("cronjob-controller", [
        rule(("get", "list", "watch", "update"), (BATCH,), ("cronjobs",)),
        rule(("get", "list", "watch", "create", "update", "delete", "patch"), (BATCH,), ("jobs",)),
        rule(("update",), (BATCH,), ("cronjobs/status",)), rule(("update",), (BATCH,), ("cronjobs/finalizers",)),
        rule(("list", "watch", "delete"), (LEGACY,), ("pods",)), events_rule()]),
    ("daemon-set-controller", [
        rule(READ, (EXT, APPS), ("daemonsets",)), rule(("update",), (EXT, APPS), ("daemonsets/status",)),
        rule(("update",), (EXT, APPS), ("daemonsets/finalizers",)), rule(("list", "watch"), (LEGACY,), ("nodes",)),
        rule(("list", "watch", "create", "delete", "patch"), (LEGACY,), ("pods",)),
        rule(("create",), (LEGACY,), ("pods/binding",)),
        rule(("get", "list", "watch", "create", "delete", "update", "patch"), (APPS,), ("controllerrevisions",)),
        events_rule()]),
    ("deployment-controller", [
        rule(("get", "list", "watch", "update"), (EXT, APPS), ("deployments",)),
        rule(("update",), (EXT, APPS), ("deployments/status",)),
        rule(("update",), (EXT, APPS), ("deployments/finalizers",)),
        rule(("get", "list", "watch", "create", "update", "patch", "delete"), (APPS, EXT), ("replicasets",)),
        rule(("get", "list", "watch", "update"), (LEGACY,), ("pods",)), events_rule()]),
    ("disruption-controller", [
        rule(READ, (EXT, APPS), ("deployments",)), rule(READ, (APPS, EXT), ("replicasets",)),
        rule(READ, (LEGACY,), ("replicationcontrollers",)), rule(READ, (POLICY,), ("poddisruptionbudgets",)),
        rule(READ, (APPS,), ("statefulsets",)), rule(("update",), (POLICY,), ("poddisruptionbudgets/status",)),
        rule(("patch", "update"), (LEGACY,), ("pods/status",)), rule(("get",), ("*",), ("*/scale",)),
        events_rule()]),
    ("endpoint-controller", [
        rule(READ, (LEGACY,), ("services", "pods")),
        rule(("get", "list", "watch", "create", "update", "delete"), (LEGACY,), ("endpoints",)),
        rule(("create",), (LEGACY,), ("endpoints/restricted",)), events_rule()]),
    ("endpointslice-controller", [
        rule(READ, (LEGACY,), ("services", "pods", "nodes")),
        rule(("update",), (LEGACY,), ("services/finalizers",)),
        rule(("get", "list", "watch", "create", "update", "delete"), (DISCOVERY,), ("endpointslices",)),
        events_rule()]),
    ("endpointslicemirroring-controller", [
        rule(READ, (LEGACY,), ("services", "endpoints")),
        rule(("update",), (LEGACY,), ("services/finalizers",)),
        rule(("update",), (LEGACY,), ("endpoints/finalizers",)),
        rule(("get", "list", "watch", "create", "update", "delete"), (DISCOVERY,), ("endpointslices",)),
        events_rule()]),
    ("expand-controller", [
        rule(READ_UPDATE, (LEGACY,), ("persistentvolumes",)),
        rule(("update", "patch"), (LEGACY,), ("persistentvolumeclaims/status",)),
        rule(READ, (LEGACY,), ("persistentvolumeclaims",)), events_rule(),
        rule(("get",), (LEGACY,), ("services",))]),
    ("ephemeral-volume-controller", [
        rule(READ, (LEGACY,), ("pods",)), rule(("update",), (LEGACY,), ("pods/finalizers",)),
        rule(("get", "list", "watch", "create"), (LEGACY,), ("persistentvolumeclaims",)), events_rule()]),
    ("generic-garbage-collector", [
        rule(("get", "list", "watch", "patch", "update", "delete"), ("*",), ("*",)), events_rule()]),
    ("horizontal-pod-autoscaler", [
        rule(READ, (AUTOSCALING,), ("horizontalpodautoscalers",)),
        rule(("update",), (AUTOSCALING,), ("horizontalpodautoscalers/status",)),
        rule(("get", "update"), ("*",), ("*/scale",)), rule(("list", "watch"), (LEGACY,), ("pods",)),
        rule(("list", "watch"), ("metrics.k8s.io",), ("pods",)),
        rule(READ, ("custom.metrics.k8s.io",), ("*",)), rule(READ, ("external.metrics.k8s.io",), ("*",)),
        events_rule()]),
    ("job-controller", [
        rule(READ_UPDATE, (BATCH,), ("jobs",)), rule(("update",), (BATCH,), ("jobs/status",)),
        rule(("update",), (BATCH,), ("jobs/finalizers",)),
        rule(("list", "watch", "create", "delete", "patch"), (LEGACY,), ("pods",)), events_rule()]),
    ("namespace-controller", [
        rule(("get", "list", "watch", "delete"), (LEGACY,), ("namespaces",)),
        rule(("update",), (LEGACY,), ("namespaces/finalize", "namespaces/status")),
        rule(("get", "list", "watch", "delete", "deletecollection"), ("*",), ("*",))]),
    ("node-controller", [
        rule(("get", "list", "watch", "update", "delete", "patch"), (LEGACY,), ("nodes",)),
        rule(("patch", "update"), (LEGACY,), ("nodes/status",)),
        rule(("patch", "update"), (LEGACY,), ("pods/status",)),
        rule(("list", "watch", "get", "delete"), (LEGACY,), ("pods",)), events_rule()]),
    ("persistent-volume-binder", [
        rule(("get", "list", "watch", "update", "create", "delete"), (LEGACY,), ("persistentvolumes",)),
        rule(("update",), (LEGACY,), ("persistentvolumes/status",)),
        rule(("get", "list", "watch", "update"), (LEGACY,), ("persistentvolumeclaims",)),
        rule(("update",), (LEGACY,), ("persistentvolumeclaims/status",)),
        rule(("list", "watch", "get", "create", "delete"), (LEGACY,), ("pods",)),
        rule(READ, (STORAGE,), ("storageclasses",)), rule(("list", "watch"), (LEGACY,), ("nodes",)),
        events_rule(), rule(("watch",), (LEGACY,), ("events",)), rule(("get",), (LEGACY,), ("services",))]),
    ("pod-garbage-collector", [
        rule(("list", "watch", "delete"), (LEGACY,), ("pods",)), rule(READ, (LEGACY,), ("nodes",)),
        rule(("patch",), (LEGACY,), ("pods/status",))]),
    ("replicaset-controller", [
        rule(("get", "list", "watch", "update"), (APPS, EXT), ("replicasets",)),
        rule(("update",), (APPS, EXT), ("replicasets/status",)),
        rule(("update",), (APPS, EXT), ("replicasets/finalizers",)),
        rule(("list", "watch", "patch", "create", "delete"), (LEGACY,), ("pods",)), events_rule()]),
    ("replication-controller", [
        rule(("get", "list", "watch", "update"), (LEGACY,), ("replicationcontrollers",)),
        rule(("update",), (LEGACY,), ("replicationcontrollers/status",)),
        rule(("update",), (LEGACY,), ("replicationcontrollers/finalizers",)),
        rule(("list", "watch", "patch", "create", "delete"), (LEGACY,), ("pods",)), events_rule()]),
    ("resourcequota-controller", [
        rule(("list", "watch"), ("*",), ("*",)), rule(("update",), (LEGACY,), ("resourcequotas/status",)),
        events_rule()]),
    ("route-controller", [
        rule(("list", "watch"), (LEGACY,), ("nodes",)), rule(("patch",), (LEGACY,), ("nodes/status",)),
        events_rule()]),
    ("service-account-controller", [rule(("create",), (LEGACY,), ("serviceaccounts",)), events_rule()]),
    ("service-controller", [
        rule(READ, (LEGACY,), ("services",)), rule(("patch", "update"), (LEGACY,), ("services/status",)),
        rule(("list", "watch"), (LEGACY,), ("nodes",)), events_rule()]),
    ("statefulset-controller", [
        rule(("list", "watch"), (LEGACY,), ("pods",)), rule(READ, (APPS,), ("statefulsets",)),
        rule(("update",), (APPS,), ("statefulsets/status",)), rule(("update",), (APPS,), ("statefulsets/finalizers",)),
        rule(("get", "create", "delete", "update", "patch"), (LEGACY,), ("pods",)),
        rule(("get", "create", "delete", "update", "patch", "list", "watch"), (APPS,), ("controllerrevisions",)),
        rule(("get", "create", "list", "watch"), (LEGACY,), ("persistentvolumeclaims",)),
        rule(("update", "delete"), (LEGACY,), ("persistentvolumeclaims",)),
        rule(("update",), (LEGACY,), ("pods/finalizers",)), events_rule()]),
    ("ttl-controller", [rule(("update", "patch", "list", "watch"), (LEGACY,), ("nodes",)), events_rule()]),
    ("certificate-controller", [
        rule(("get", "list", "watch", "delete"), (CERTS,), ("certificatesigningrequests",)),
        rule(("update",), (CERTS,), ("certificatesigningrequests/status", "certificatesigningrequests/approval")),
        rule(("approve",), (CERTS,), ("signers",), names=("kubernetes.io/kube-apiserver-client-kubelet",)),
        rule(("sign",), (CERTS,), ("signers",), names=(
            "kubernetes.io/legacy-unknown", "kubernetes.io/kube-apiserver-client",
            "kubernetes.io/kube-apiserver-client-kubelet", "kubernetes.io/kubelet-serving")),
        rule(("create",), (AUTHZ,), ("subjectaccessreviews",)), events_rule()]),
    ("pvc-protection-controller", [
        rule(("get", "list", "watch", "update"), (LEGACY,), ("persistentvolumeclaims",)),
        rule(("list", "watch", "get"), (LEGACY,), ("pods",)), events_rule()]),
    ("pv-protection-controller", [
        rule(("get", "list", "watch", "update"), (LEGACY,), ("persistentvolumes",)), events_rule()]),
    ("ttl-after-finished-controller", [rule(("get", "list", "watch", "delete"), (BATCH,), ("jobs",)),
                                       events_rule()]),
    ("root-ca-cert-publisher", [rule(("create", "update"), (LEGACY,), ("configmaps",)), events_rule()]),
    ("validatingadmissionpolicy-status-controller", [
        rule(READ, (ADMISSIONREG,), ("validatingadmissionpolicies",)),
        rule(("get", "patch", "update"), (ADMISSIONREG,), ("validatingadmissionpolicies/status",)),
        events_rule()]),
    ("legacy-service-account-token-cleaner", [
        rule(("get",), (LEGACY,), ("configmaps",), names=("kube-apiserver-legacy-service-account-token-tracking",)),
        rule(("patch", "delete"), (LEGACY,), ("secrets",))]),
]


def controller_roles() -> list[JSON]:
    """``ControllerRoles()``: ``system:controller:<name>`` per controller."""
    return [cluster_role(SA_ROLE_PREFIX + n, copy.deepcopy(rules)) for n, rules in _CONTROLLERS]


def controller_role_bindings() -> list[JSON]:
    """``ControllerRoleBindings()``: each role bound to the ``kube-system/<name>`` ServiceAccount."""
    return [cluster_role_binding(SA_ROLE_PREFIX + n, sas=(("kube-system", n),)) for n, _ in _CONTROLLERS]


def _role(name: str, namespace: str, rules: list[JSON]) -> JSON:
    return {"apiVersion": API_VERSION, "kind": "Role", "metadata": _meta(name, namespace), "rules": rules}


def _role_binding(role: str, namespace: str, users: Sequence[str] = (),
                  sas: Sequence[tuple[str, str]] = (), name: str | None = None) -> JSON:
    return {"apiVersion": API_VERSION, "kind": "RoleBinding", "metadata": _meta(name or role, namespace),
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": role}, "subjects": _subjects(users, (), sas)}


def namespace_roles() -> list[JSON]:
    """``NamespaceRoles()`` of ``namespace_policy.go``."""
    return [
        _role("extension-apiserver-authentication-reader", "kube-system", [
            rule(("get", "list", "watch"), (LEGACY,), ("configmaps",), names=("extension-apiserver-authentication",))]),
        _role("system::leader-locking-kube-controller-manager", "kube-system", [
            rule(("watch",), (LEGACY,), ("configmaps",)),
            rule(("get", "update"), (LEGACY,), ("configmaps",), names=("kube-controller-manager",))]),
        _role("system::leader-locking-kube-scheduler", "kube-system", [
            rule(("watch",), (LEGACY,), ("configmaps",)),
            rule(("get", "update"), (LEGACY,), ("configmaps",), names=("kube-scheduler",))]),
        _role("system:controller:bootstrap-signer", "kube-system", [rule(READ, (LEGACY,), ("secrets",))]),
        _role("system:controller:cloud-provider", "kube-system", [
            rule(("create", "get", "list", "watch"), (LEGACY,), ("configmaps",))]),
        _role("system:controller:token-cleaner", "kube-system", [
            rule(("delete", "get", "list", "watch"), (LEGACY,), ("secrets",)), events_rule()]),
        _role("system:controller:bootstrap-signer", "kube-public", [
            rule(READ, (LEGACY,), ("configmaps",)),
            rule(("update",), (LEGACY,), ("configmaps",), names=("cluster-info",)), events_rule()]),
    ]


def namespace_role_bindings() -> list[JSON]:
    """``NamespaceRoleBindings()`` of ``namespace_policy.go``."""
    return [
        _role_binding("system::leader-locking-kube-controller-manager", "kube-system",
                      users=(KUBE_CONTROLLER_MANAGER,), sas=(("kube-system", "kube-controller-manager"),)),
        _role_binding("system::leader-locking-kube-scheduler", "kube-system", users=(KUBE_SCHEDULER,),
                      sas=(("kube-system", "kube-scheduler"),)),
        _role_binding("system:controller:bootstrap-signer", "kube-system", sas=(("kube-system", "bootstrap-signer"),)),
        _role_binding("system:controller:cloud-provider", "kube-system", sas=(("kube-system", "cloud-provider"),)),
        _role_binding("system:controller:token-cleaner", "kube-system", sas=(("kube-system", "token-cleaner"),)),
        _role_binding("system:controller:bootstrap-signer", "kube-public", sas=(("kube-system", "bootstrap-signer"),)),
    ]


def policy() -> dict[str, list[JSON]]:
    """Every bootstrap object by plural: ``clusterroles``, ``clusterrolebindings``, ``roles``,
    ``rolebindings``."""
    return {"clusterroles": cluster_roles() + controller_roles(),
            "clusterrolebindings": cluster_role_bindings() + controller_role_bindings(),
            "roles": namespace_roles(), "rolebindings": namespace_role_bindings()}


# --------------------------------------------------------------------------- reconciliation


def _merge_metadata(expected: JSON, out: JSON) -> bool:
    """Merge ``expected``'s labels and annotations into ``out``'s (existing values win, as
    reconciliation's ``merge``); True when something was added."""
    md = out.setdefault("metadata", {})
    changed = False
    for f in ("labels", "annotations"):
        merged = {**(expected["metadata"].get(f) or {}), **(md.get(f) or {})}
        if merged != (md.get(f) or {}):
            md[f] = merged
            changed = True
    return changed


def reconcile_role(expected: JSON, existing: JSON) -> JSON | None:
    """``computeReconciledRole`` (union, nothing removed): the updated object, or None when
    ``existing`` already holds everything (or is protected: autoupdate ``"false"``)."""
    md = existing.get("metadata") or {}
    if (md.get("annotations") or {}).get(AUTOUPDATE) == "false":
        return None
    out = copy.deepcopy(existing)
    changed = _merge_metadata(expected, out)
    want_agg = expected.get("aggregationRule")
    have_agg = existing.get("aggregationRule")
    if want_agg is None and have_agg is not None:
        out.pop("aggregationRule", None)
        changed = True
    elif want_agg is not None:
        have_sel = list((have_agg or {}).get("clusterRoleSelectors") or [])
        missing_sel = [s for s in want_agg.get("clusterRoleSelectors") or [] if s not in have_sel]
        if missing_sel:
            out["aggregationRule"] = {"clusterRoleSelectors": have_sel + missing_sel}
            changed = True
    if want_agg is None:
        _, missing = covers(existing.get("rules") or [], expected.get("rules") or [])
        if missing:
            out["rules"] = list(existing.get("rules") or []) + missing
            changed = True
    return out if changed else None


def reconcile_binding(expected: JSON, existing: JSON) -> tuple[str, JSON] | None:
    """``computeReconciledRoleBinding``: ("update", object) with the missing subjects, labels
    and annotations added; ("recreate", expected+existing subjects) when the roleRef differs;
    None when nothing is missing or the binding is protected."""
    md = existing.get("metadata") or {}
    if (md.get("annotations") or {}).get(AUTOUPDATE) == "false":
        return None
    if existing.get("roleRef") != expected.get("roleRef"):
        out = copy.deepcopy(expected)
        subjects = list(existing.get("subjects") or [])
        subjects += [s for s in expected.get("subjects") or [] if s not in subjects]
        if subjects:
            out["subjects"] = subjects
        return "recreate", out
    out = copy.deepcopy(existing)
    changed = _merge_metadata(expected, out)
    have = list(existing.get("subjects") or [])
    missing = [s for s in expected.get("subjects") or [] if s not in have]
    if missing:
        out["subjects"] = have + missing
        changed = True
    return ("update", out) if changed else None
