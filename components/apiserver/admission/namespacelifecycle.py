"""NamespaceLifecycle (``plugin/pkg/admission/namespace/lifecycle/admission.go``): content is
created only in a namespace that exists (404 NotFound of the namespace otherwise: the
watch cache first, then a live read, as the plugin's live lookup) and is not being
terminated (403 ``unable to create new content in namespace <ns> because it is being
terminated``). Validating; creates of namespaced resources only."""

from __future__ import annotations

from components.apiserver import status as st
from components.apiserver.admission import CREATE, Attributes, Plugin, forbidden
from controlplane.api import resources as R


class NamespaceLifecycle(Plugin):
    name = "NamespaceLifecycle"
    operations = frozenset({CREATE})
    validating = True

    async def validate(self, a: Attributes) -> None:
        if not a.resource.namespaced or not a.namespace:
            return
        ns = await self.ctx.lookup(R.NAMESPACES, None, a.namespace)
        if ns is None:
            raise st.not_found(R.NAMESPACES, a.namespace)
        if (ns.get("status") or {}).get("phase") == "Terminating" or (ns.get("metadata") or {}).get("deletionTimestamp"):
            raise forbidden(a, f"unable to create new content in namespace {a.namespace} because it is being "
                               "terminated")
