"""RuntimeClass (``plugin/pkg/admission/runtimeclass/admission.go``), pod creates.

Mutating: a pod naming ``spec.runtimeClassName`` gets the class's ``overhead.podFixed`` as
``spec.overhead`` (403 when the pod sets a different one) and its ``scheduling``: the
class's nodeSelector merged into the pod's (403 on a conflicting value) and its
tolerations appended unless already present. A class that does not exist → 403 ``pod
rejected: RuntimeClass "<x>" not found``.

Validating: a pod with ``spec.overhead`` needs a class that defines that overhead (403 ``pod
rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`` / ``pod
rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead``).
"""

from __future__ import annotations

from typing import Any

from components.apiserver.admission import CREATE, POD_ONLY, Attributes, Plugin, forbidden
from controlplane.api.groups import node


class RuntimeClass(Plugin):
    """The ``RuntimeClass`` admission plugin as this module's docstring describes it (its Kubernetes source, what it admits or refuses and with which Status)."""

    name = "RuntimeClass"
    operations = frozenset({CREATE})
    mutating = True
    validating = True
    #: pods only (``runtimeclass/admission.go`` Admit / Validate: ``shouldIgnore`` — a
    #: subresource, or a resource other than ``pods``)
    admit_resources = validate_resources = POD_ONLY

    async def _class(self, a: Attributes, spec: dict[str, Any]) -> dict[str, Any] | None:
        name = spec.get("runtimeClassName")
        if not name:
            return None
        rc = await self.ctx.lookup(node.RUNTIMECLASSES, None, name)
        if rc is None:
            raise forbidden(a, f'pod rejected: RuntimeClass "{name}" not found')
        return rc

    async def admit(self, a: Attributes) -> None:
        if not a.is_pod() or a.object is None or not isinstance(a.object.get("spec"), dict):
            return
        spec = a.object["spec"]
        rc = await self._class(a, spec)
        if rc is None:
            return
        fixed = (rc.get("overhead") or {}).get("podFixed")
        if fixed:
            if spec.get("overhead") and spec["overhead"] != fixed:
                raise forbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
            spec["overhead"] = dict(fixed)
        sched = rc.get("scheduling") or {}
        sel = sched.get("nodeSelector") or {}
        if sel:
            merged = dict(spec.get("nodeSelector") or {})
            for k, v in sel.items():
                if k in merged and merged[k] != v:
                    raise forbidden(a, f"conflict: runtimeClass.scheduling.nodeSelector[{k}] = {v}; "
                                       f"pod.spec.nodeSelector[{k}] = {merged[k]}")
                merged[k] = v
            spec["nodeSelector"] = merged
        tols = list(sched.get("tolerations") or [])
        if tols:
            have = spec.get("tolerations") if isinstance(spec.get("tolerations"), list) else []
            for t in tols:
                if t not in have:
                    have.append(dict(t))
            spec["tolerations"] = have

    async def validate(self, a: Attributes) -> None:
        if not a.is_pod() or a.object is None or not isinstance(a.object.get("spec"), dict):
            return
        spec = a.object["spec"]
        rc = await self._class(a, spec)
        if not spec.get("overhead"):
            return
        if rc is not None and rc.get("overhead") is not None:
            if (rc.get("overhead") or {}).get("podFixed") != spec["overhead"]:
                raise forbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
            return
        raise forbidden(a, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
