"""NodeRestriction (``plugin/pkg/admission/noderestriction/admission.go``, v1.32), validating.

Only for nodes (a ``system:node:<name>`` user in ``system:nodes``, the running request's
user: :func:`components.apiserver.authorization.context.current_user`); the Node
authorizer lets them write nodes and pods broadly, this plugin narrows it to their own:

- pods: create only mirror pods (``kubernetes.io/config.mirror``) bound to itself, owned by
  its Node (one controller reference, no blockOwnerDeletion) and referencing no
  serviceaccount, secret, configmap or PVC; delete only pods bound to itself; status updates
  only of pods bound to itself, without label changes; evictions only of its pods;
- nodes: only its own Node (``node "node01" is not allowed to modify node "node02"``); no
  taint changes, no labels in ``node-restriction.kubernetes.io/`` nor other
  ``kubernetes.io`` / ``k8s.io`` labels but the kubelet's own;
- leases: only ``kube-node-lease/<its name>``; PVCs: status updates only.

Rejections are 403 ``<resource> "<name>" is forbidden: <reason>`` (``admission.NewForbidden``).
"""

from __future__ import annotations

from typing import Any

from components.apiserver.admission import CREATE, DELETE, UPDATE, Attributes, Plugin, forbidden
from components.apiserver.authorization.context import current_user
from components.apiserver.authorization.node import NODE_LEASE_NAMESPACE, node_identity, pod_references

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
NODE_RESTRICTION_NAMESPACE = "node-restriction.kubernetes.io"
#: labels a kubelet may set on its Node (``kubeletapis.IsKubeletLabel``)
KUBELET_LABELS = frozenset({
    "kubernetes.io/hostname", "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type", "kubernetes.io/os",
    "kubernetes.io/arch", "beta.kubernetes.io/os", "beta.kubernetes.io/arch"})
KUBELET_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")


def _label_namespace(label: str) -> str:
    return label.split("/", 1)[0] if "/" in label else ""


def _in_namespace(ns: str, root: str) -> bool:
    return ns == root or ns.endswith("." + root)


def is_kubelet_label(label: str) -> bool:
    ns = _label_namespace(label)
    return label in KUBELET_LABELS or any(_in_namespace(ns, k) for k in KUBELET_LABEL_NAMESPACES)


def forbidden_labels(new: dict[str, str] | None, old: dict[str, str] | None) -> list[str]:
    """``getForbiddenLabels(getModifiedLabels(new, old))``, sorted."""
    new, old = new or {}, old or {}
    modified = {k for k in set(new) | set(old) if new.get(k) != old.get(k) or (k in new) != (k in old)}
    out = set()
    for label in modified:
        ns = _label_namespace(label)
        if _in_namespace(ns, NODE_RESTRICTION_NAMESPACE):
            out.add(label)
        if (_in_namespace(ns, "kubernetes.io") or _in_namespace(ns, "k8s.io")) and not is_kubelet_label(label):
            out.add(label)
    return sorted(out)


def _labels(obj: dict[str, Any] | None) -> dict[str, str]:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


class NodeRestriction(Plugin):
    """See the module docstring."""

    name = "NodeRestriction"
    operations = frozenset({CREATE, UPDATE, DELETE})
    validating = True

    async def validate(self, a: Attributes) -> None:
        user = current_user()
        if user is None:
            return
        node, is_node = node_identity(user)
        if not is_node:
            return
        if not node:
            raise forbidden(a, f'could not determine node from user "{user.name}"')
        r = a.resource
        gr = (r.group, r.plural)
        if gr == ("", "pods"):
            if a.subresource == "":
                await self._pod(node, a)
            elif a.subresource == "status":
                self._pod_status(node, a)
            elif a.subresource == "eviction":
                await self._eviction(node, a)
            else:
                raise forbidden(a, f"unexpected subresource \"{a.subresource}\", only 'status' and 'eviction' "
                                   "are allowed")
        elif gr == ("", "nodes"):
            self._node(node, a)
        elif gr == ("", "persistentvolumeclaims"):
            if a.subresource != "status":
                raise forbidden(a, "may only update PVC status")
        elif gr == ("coordination.k8s.io", "leases"):
            self._lease(node, a)

    async def _pod(self, node: str, a: Attributes) -> None:
        if a.operation == CREATE:
            self._pod_create(node, a)
        elif a.operation == DELETE:
            pod = a.old_object or await self.ctx.lookup(a.resource, a.namespace, a.name) or {}
            if (pod.get("spec") or {}).get("nodeName") != node:
                raise forbidden(a, f'node "{node}" can only delete pods with spec.nodeName set to itself')
        else:
            raise forbidden(a, f'unexpected operation "{a.operation}", node "{node}" can only create and delete '
                               "mirror pods")

    def _pod_create(self, node: str, a: Attributes) -> None:
        pod = a.object or {}
        md, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        if MIRROR_POD_ANNOTATION not in (md.get("annotations") or {}):
            raise forbidden(a, f'pod does not have "{MIRROR_POD_ANNOTATION}" annotation, node "{node}" can only '
                               "create mirror pods")
        if spec.get("nodeName") != node:
            raise forbidden(a, f'node "{node}" can only create pods with spec.nodeName set to itself')
        owners = md.get("ownerReferences") or []
        if len(owners) > 1:
            raise forbidden(a, f'node "{node}" can only create pods with a single owner reference set to itself')
        if not owners:
            raise forbidden(a, f'node "{node}" can only create pods with an owner reference set to itself')
        o = owners[0]
        if o.get("apiVersion") != "v1" or o.get("kind") != "Node" or o.get("name") != node:
            raise forbidden(a, f'node "{node}" can only create pods with an owner reference set to itself')
        if not o.get("controller"):
            raise forbidden(a, f'node "{node}" can only create pods with a controller owner reference set to itself')
        if o.get("blockOwnerDeletion"):
            raise forbidden(a, f'node "{node}" must not set blockOwnerDeletion on an owner reference')
        if spec.get("serviceAccountName"):
            raise forbidden(a, f'node "{node}" can not create pods that reference a service account')
        refs = pod_references(pod)
        for kind, what in (("secret", "secrets"), ("configmap", "configmaps"), ("pvc", "persistentvolumeclaims")):
            if any(t == kind for t, _, _ in refs):
                raise forbidden(a, f'node "{node}" can not create pods that reference {what}')

    def _pod_status(self, node: str, a: Attributes) -> None:
        if a.operation != UPDATE:
            raise forbidden(a, f'unexpected operation "{a.operation}"')
        old = a.old_object or {}
        if (old.get("spec") or {}).get("nodeName") != node:
            raise forbidden(a, f'node "{node}" can only update pod status for pods with spec.nodeName set to itself')
        if _labels(old) != _labels(a.object):
            raise forbidden(a, f'node "{node}" cannot update labels through pod status')

    async def _eviction(self, node: str, a: Attributes) -> None:
        if a.operation != CREATE:
            raise forbidden(a, f"unexpected operation {a.operation}")
        name = a.name or ((a.object or {}).get("metadata") or {}).get("name") or ""
        if not name:
            raise forbidden(a, "could not determine pod from request data")
        pod = await self.ctx.lookup(a.resource, a.namespace, name) or {}
        if (pod.get("spec") or {}).get("nodeName") != node:
            raise forbidden(a, f"node {node} can only evict pods with spec.nodeName set to itself")

    def _node(self, node: str, a: Attributes) -> None:
        name = a.name or ((a.object or {}).get("metadata") or {}).get("name") or ""
        if name != node:
            raise forbidden(a, f'node "{node}" is not allowed to modify node "{name}"')
        new = a.object or {}
        if a.operation == CREATE:
            if (new.get("spec") or {}).get("configSource") is not None:
                raise forbidden(a, f'node "{node}" is not allowed to create pods with a non-nil configSource')
            bad = forbidden_labels(_labels(new), None)
            if bad:
                raise forbidden(a, f'node "{node}" is not allowed to set the following labels: {", ".join(bad)}')
        elif a.operation == UPDATE:
            old = a.old_object or {}
            nspec, ospec = new.get("spec") or {}, old.get("spec") or {}
            if nspec.get("configSource") is not None and nspec.get("configSource") != ospec.get("configSource"):
                raise forbidden(a, f'node "{node}" is not allowed to update configSource to a new non-nil '
                                   "configSource")
            if (nspec.get("taints") or []) != (ospec.get("taints") or []):
                raise forbidden(a, f'node "{node}" is not allowed to modify taints')
            bad = forbidden_labels(_labels(new), _labels(old))
            if bad:
                raise forbidden(a, f"is not allowed to modify labels: {', '.join(bad)}")

    def _lease(self, node: str, a: Attributes) -> None:
        if a.namespace != NODE_LEASE_NAMESPACE:
            raise forbidden(a, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace')
        name = ((a.object or {}).get("metadata") or {}).get("name") if a.operation == CREATE else a.name
        if name != node:
            raise forbidden(a, "can only access node lease with the same name as the requesting node")
