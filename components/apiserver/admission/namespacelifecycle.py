"""NamespaceLifecycle (``plugin/pkg/admission/namespace/lifecycle/admission.go``): content is
created only in a namespace that exists (404 NotFound of the namespace otherwise: the
watch cache first, then a live read, as the plugin's live lookup) and is not being
terminated (403 ``unable to create new content in namespace <ns> because it is being
terminated``); the immortal namespaces ``default``, ``kube-system`` and ``kube-public`` are
not deleted (403 ``this namespace may not be deleted``). Validating; creates of namespaced
resources and deletions of namespaces."""

from __future__ import annotations

from typing import Any

from components.apiserver import status as st
from components.apiserver.admission import CREATE, DELETE, VALIDATE, Attributes, Plugin, forbidden
from controlplane.api import resources as R

#: namespaces that cannot be deleted (the plugin's immortalNamespaces)
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})


class NamespaceLifecycle(Plugin):
    """The ``NamespaceLifecycle`` admission plugin as this module's docstring describes it (its Kubernetes source, what it admits or refuses and with which Status)."""

    name = "NamespaceLifecycle"
    operations = frozenset({CREATE, DELETE})
    validating = True

    def applies(self, phase: str, resource: Any, subresource: str, operation: str) -> bool:
        """``lifecycle/admission.go`` Admit: a delete of a ``Namespace`` (the immortal ones),
        a create of anything namespaced (any subresource); nothing else."""
        if phase != VALIDATE or not self.handles(operation):
            return False
        if operation == DELETE:
            return bool(resource.kind == "Namespace" and not resource.group)
        return bool(resource.namespaced)

    async def validate(self, a: Attributes) -> None:
        if a.operation == DELETE:
            if a.resource.kind == "Namespace" and not a.resource.group and a.name in IMMORTAL_NAMESPACES:
                raise forbidden(a, "this namespace may not be deleted")
            return
        if not a.resource.namespaced or not a.namespace:
            return
        ns = await self.ctx.lookup(R.NAMESPACES, None, a.namespace)
        if ns is None:
            raise st.not_found(R.NAMESPACES, a.namespace)
        if (ns.get("status") or {}).get("phase") == "Terminating" or (ns.get("metadata") or {}).get("deletionTimestamp"):
            raise forbidden(a, f"unable to create new content in namespace {a.namespace} because it is being "
                               "terminated")
