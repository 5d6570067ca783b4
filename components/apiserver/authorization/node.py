"""The Node authorizer: what a kubelet (``system:node:<name>`` in ``system:nodes``) may do.

As ``plugin/pkg/auth/authorizer/node/node_authorizer.go`` (v1.32, AuthorizeNodeWithSelectors
on) over the graph of ``graph.go`` / ``graph_populator.go``: a node reaches the pods bound to
it (``spec.nodeName``) and, through them, the secrets, configmaps, PVCs (and the PVs they
are bound to) and the serviceaccount they reference. A node may

- read (get/list/watch one name) only the secrets and configmaps of that graph, get only its
  PVCs / PVs, update/patch the status of its PVCs, create tokens of its serviceaccounts;
- get/create/update/patch/delete Leases in ``kube-node-lease`` named after itself;
- get/list/watch only its own Node (create/update/patch and status writes are left to the
  NodeRestriction admission plugin);
- get pods of its graph, list/watch pods with ``fieldSelector=spec.nodeName=<node>``,
  create/delete (mirror) pods, update/patch pod status, create evictions (NodeRestriction
  checks the pod);
- everything else only per the static node rules (:func:`~.bootstrappolicy.node_rules`).

Denials are no opinion with Kubernetes' reasons (``no relationship found between node
'node01' and this object``), so RBAC still gets its say.

:class:`NodeGraph` is kept from the pods watch cache (:meth:`NodeGraph.apply` per event,
:meth:`NodeGraph.replace` on a (re)list); PVs are reached through the PVCs' ``volumeName``
read from the PVC cache at decision time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from components.apiserver.auth import NODES, Attributes, Decision, UserInfo
from components.apiserver.authorization.rules import Rule

JSON = dict[str, Any]
NODE_USER_PREFIX = "system:node:"
NODE_LEASE_NAMESPACE = "kube-node-lease"
#: vertex types
SECRET, CONFIGMAP, PVC, PV, SERVICEACCOUNT, POD = "secret", "configmap", "pvc", "pv", "serviceAccount", "pod"
Vertex = tuple[str, str, str]  # (type, namespace, name)


def node_identity(user: UserInfo) -> tuple[str, bool]:
    """``NodeIdentity``: (node name, is a node): a ``system:node:<name>`` user in ``system:nodes``."""
    if not user.name.startswith(NODE_USER_PREFIX) or NODES not in user.groups:
        return "", False
    return user.name[len(NODE_USER_PREFIX):], True


def _containers(spec: JSON) -> Iterable[JSON]:
    for f in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(f) or []:
            if isinstance(c, dict):
                yield c


def pod_references(pod: JSON) -> set[Vertex]:
    """Every object a pod references (``graph_populator.go`` AddPod → ``podutil.VisitPod*``):
    the pod, its serviceaccount, image-pull / volume / env secrets, configmaps, PVCs
    (an ephemeral volume's claim is ``<pod>-<volume>``)."""
    md = pod.get("metadata") or {}
    ns, name = md.get("namespace") or "", md.get("name") or ""
    spec = pod.get("spec") or {}
    out: set[Vertex] = {(POD, ns, name)}
    sa = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if sa:
        out.add((SERVICEACCOUNT, ns, sa))
    for s in spec.get("imagePullSecrets") or []:
        if isinstance(s, dict) and s.get("name"):
            out.add((SECRET, ns, s["name"]))
    for v in spec.get("volumes") or []:
        if not isinstance(v, dict):
            continue
        if (v.get("secret") or {}).get("secretName"):
            out.add((SECRET, ns, v["secret"]["secretName"]))
        if (v.get("configMap") or {}).get("name"):
            out.add((CONFIGMAP, ns, v["configMap"]["name"]))
        if (v.get("persistentVolumeClaim") or {}).get("claimName"):
            out.add((PVC, ns, v["persistentVolumeClaim"]["claimName"]))
        if v.get("ephemeral") is not None and v.get("name"):
            out.add((PVC, ns, f"{name}-{v['name']}"))
        for src in (v.get("projected") or {}).get("sources") or []:
            if (src.get("secret") or {}).get("name"):
                out.add((SECRET, ns, src["secret"]["name"]))
            if (src.get("configMap") or {}).get("name"):
                out.add((CONFIGMAP, ns, src["configMap"]["name"]))
        for plugin in ("azureFile", "cephfs", "cinder", "flexVolume", "rbd", "scaleIO", "storageos", "iscsi", "csi"):
            ref = (v.get(plugin) or {})
            sref = ref.get("secretRef") or ref.get("nodePublishSecretRef") or {}
            if isinstance(sref, dict) and sref.get("name"):
                out.add((SECRET, ns, sref["name"]))
            if plugin == "azureFile" and ref.get("secretName"):
                out.add((SECRET, ns, ref["secretName"]))
    for c in _containers(spec):
        for ef in c.get("envFrom") or []:
            if (ef.get("secretRef") or {}).get("name"):
                out.add((SECRET, ns, ef["secretRef"]["name"]))
            if (ef.get("configMapRef") or {}).get("name"):
                out.add((CONFIGMAP, ns, ef["configMapRef"]["name"]))
        for e in c.get("env") or []:
            vf = e.get("valueFrom") or {}
            if (vf.get("secretKeyRef") or {}).get("name"):
                out.add((SECRET, ns, vf["secretKeyRef"]["name"]))
            if (vf.get("configMapKeyRef") or {}).get("name"):
                out.add((CONFIGMAP, ns, vf["configMapKeyRef"]["name"]))
    return out


class NodeGraph:
    """Node → referenced objects, with a count per (node, object) (several pods may share one)."""

    def __init__(self) -> None:
        self.edges: dict[str, dict[Vertex, int]] = {}
        #: pod key → (node, its references), to undo on update / delete
        self.pods: dict[tuple[str, str], tuple[str, frozenset[Vertex]]] = {}
        self.generation = 0

    def _remove(self, key: tuple[str, str]) -> None:
        prev = self.pods.pop(key, None)
        if prev is None:
            return
        node, refs = prev
        counts = self.edges.get(node, {})
        for v in refs:
            n = counts.get(v, 0) - 1
            if n > 0:
                counts[v] = n
            else:
                counts.pop(v, None)
        if not counts:
            self.edges.pop(node, None)

    def apply(self, type_: str, pod: JSON) -> None:
        """One pods watch event."""
        md = pod.get("metadata") or {}
        key = (md.get("namespace") or "", md.get("name") or "")
        self.generation += 1
        self._remove(key)
        node = (pod.get("spec") or {}).get("nodeName")
        if type_ == "DELETED" or not node:
            return
        refs = frozenset(pod_references(pod))
        self.pods[key] = (node, refs)
        counts = self.edges.setdefault(node, {})
        for v in refs:
            counts[v] = counts.get(v, 0) + 1

    def replace(self, pods: Iterable[JSON]) -> None:
        """Every pod at once."""
        self.edges, self.pods = {}, {}
        for p in pods:
            self.apply("ADDED", p)

    def has_path(self, node: str, vertex: Vertex, pvc_volume: Callable[[str, str], str | None]) -> bool:
        """``hasPathFrom``: the node reaches ``vertex``; a PV through one of its PVCs bound to
        it (``pvc_volume(ns, name)``: the PVC's ``spec.volumeName``)."""
        counts = self.edges.get(node)
        if not counts:
            return False
        if vertex[0] == PV:
            return any(t == PVC and pvc_volume(ns, n) == vertex[2] for (t, ns, n) in counts)
        return vertex in counts


class NodeAuthorizer:
    """``--authorization-mode=Node`` on a :class:`NodeGraph`; ``node_rules``: the static
    rules of everything not subdivided; ``pvc_volume(ns, name)``: a PVC's bound PV name."""

    def __init__(self, graph: NodeGraph, node_rules: Iterable[JSON],
                 pvc_volume: Callable[[str, str], str | None] = lambda ns, n: None,
                 refresh: Callable[[], None] | None = None) -> None:
        self.graph = graph
        self.rules = tuple(Rule.of(r) for r in node_rules)
        self.pvc_volume = pvc_volume
        self.refresh = refresh

    def authorize(self, a: Attributes) -> tuple[Decision, str]:
        node, is_node = node_identity(a.user)
        if not is_node:
            return Decision.NO_OPINION, ""
        if not node:
            return Decision.NO_OPINION, f'unknown node for user "{a.user.name}"'
        if a.resource_request:
            gr = (a.api_group, a.resource)
            if gr == ("", "secrets"):
                return self._read_namespaced(node, SECRET, a)
            if gr == ("", "configmaps"):
                return self._read_namespaced(node, CONFIGMAP, a)
            if gr == ("", "persistentvolumeclaims"):
                if a.subresource == "status":
                    return self._status_update(node, PVC, a)
                return self._get(node, PVC, a)
            if gr == ("", "persistentvolumes"):
                return self._get(node, PV, a)
            if gr == ("", "serviceaccounts"):
                return self._create_token(node, a)
            if gr == ("coordination.k8s.io", "leases"):
                return self._lease(node, a)
            if gr == ("", "nodes"):
                return self._node(node, a)
            if gr == ("", "pods"):
                return self._pod(node, a)
        if any(r.allows(a) for r in self.rules):
            return Decision.ALLOW, ""
        return Decision.NO_OPINION, ""

    # ----------------------------------------------------------------- subdivisions
    def _authorize(self, node: str, vtype: str, a: Attributes) -> tuple[Decision, str]:
        if not a.name:
            return Decision.NO_OPINION, "No Object name found"
        if self.refresh is not None:
            self.refresh()
        if self.graph.has_path(node, (vtype, a.namespace, a.name), self.pvc_volume):
            return Decision.ALLOW, ""
        return Decision.NO_OPINION, f"no relationship found between node '{node}' and this object"

    def _status_update(self, node: str, vtype: str, a: Attributes) -> tuple[Decision, str]:
        if a.verb not in ("update", "patch"):
            return Decision.NO_OPINION, "can only get/update/patch this type"
        if a.subresource != "status":
            return Decision.NO_OPINION, "can only update status subresource"
        return self._authorize(node, vtype, a)

    def _get(self, node: str, vtype: str, a: Attributes) -> tuple[Decision, str]:
        if a.verb != "get":
            return Decision.NO_OPINION, "can only get individual resources of this type"
        if a.subresource:
            return Decision.NO_OPINION, "cannot get subresource"
        return self._authorize(node, vtype, a)

    def _read_namespaced(self, node: str, vtype: str, a: Attributes) -> tuple[Decision, str]:
        if a.verb not in ("get", "list", "watch"):
            return Decision.NO_OPINION, "can only read resources of this type"
        if a.subresource:
            return Decision.NO_OPINION, "cannot read subresource"
        if not a.namespace:
            return Decision.NO_OPINION, "can only read namespaced object of this type"
        return self._authorize(node, vtype, a)

    def _create_token(self, node: str, a: Attributes) -> tuple[Decision, str]:
        if a.verb != "create" or not a.name:
            return Decision.NO_OPINION, "can only create tokens for individual service accounts"
        if a.subresource != "token":
            return Decision.NO_OPINION, "can only create token subresource of serviceaccount"
        return self._authorize(node, SERVICEACCOUNT, a)

    def _lease(self, node: str, a: Attributes) -> tuple[Decision, str]:
        if a.verb not in ("get", "create", "update", "patch", "delete"):
            return Decision.NO_OPINION, "can only get, create, update, patch, or delete a node lease"
        if a.namespace != NODE_LEASE_NAMESPACE:
            return Decision.NO_OPINION, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace'
        if a.verb != "create" and a.name != node:
            return Decision.NO_OPINION, "can only access node lease with the same name as the requesting node"
        return Decision.ALLOW, ""

    def _node(self, node: str, a: Attributes) -> tuple[Decision, str]:
        if not a.subresource:
            if a.verb in ("create", "update", "patch"):
                return Decision.ALLOW, ""
            if a.verb in ("get", "list", "watch"):
                if a.name == node:
                    return Decision.ALLOW, ""
                if not a.name:
                    return Decision.NO_OPINION, f"node '{node}' cannot read all nodes, only its own Node object"
                return Decision.NO_OPINION, f"node '{node}' cannot read '{a.name}', only its own Node object"
        elif a.subresource == "status" and a.verb in ("update", "patch"):
            return Decision.ALLOW, ""
        return Decision.NO_OPINION, ""

    def _pod(self, node: str, a: Attributes) -> tuple[Decision, str]:
        if not a.subresource:
            if a.verb == "get":
                return self._get(node, POD, a)
            if a.verb in ("list", "watch"):
                if any(f == "spec.nodeName" and op == "=" and v == node for f, op, v in a.field_selector):
                    return Decision.ALLOW, ""
                if a.name:
                    return self._authorize(node, POD, a)
                return Decision.NO_OPINION, "can only list/watch pods with spec.nodeName field selector"
            if a.verb in ("create", "delete"):
                return Decision.ALLOW, ""
        elif a.subresource == "status":
            if a.verb in ("update", "patch"):
                return Decision.ALLOW, ""
        elif a.subresource == "eviction" and a.verb == "create":
            return Decision.ALLOW, ""
        return Decision.NO_OPINION, ""

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[JSON], list[JSON], bool, str]:
        """Nodes have no enumerable rules (``RulesFor``: incomplete)."""
        if node_identity(user)[1]:
            return [], [], True, "node authorizer does not support user rule resolution"
        return [], [], False, ""
