"""Priority (``plugin/pkg/admission/priority/admission.go``).

Mutating, pods: on create the priority comes from ``spec.priorityClassName`` (403 ``no
PriorityClass with name <x> was found``), else from the global default class (whose name
is then set), else 0; a pod that sends a different ``spec.priority`` or
``spec.preemptionPolicy`` than the class gives is refused (403). ``preemptionPolicy`` comes
from the class; with no class it is ``PreemptLowerPriority`` (what a pod carried here
before this plugin existed; kube-apiserver leaves it to the pod defaults). On update a pod
keeps its stored priority and preemption policy when the new object leaves them out.

Validating, PriorityClasses: only one may be ``globalDefault`` (403 ``PriorityClass <x> is
already marked as default. Only one default can exist``).
"""

from __future__ import annotations

from typing import Any

from components.apiserver.admission import CREATE, POD_ONLY, UPDATE, Attributes, Plugin, forbidden
from controlplane.api.groups import scheduling

DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"


def default_priority_class(classes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The global default class; with several (a race), the one of lowest value."""
    best = None
    for pc in classes:
        if pc.get("globalDefault") and (best is None or int(pc.get("value") or 0) < int(best.get("value") or 0)):
            best = pc
    return best


class Priority(Plugin):
    """The ``Priority`` admission plugin as this module's docstring describes it (its Kubernetes source, what it admits or refuses and with which Status)."""

    name = "Priority"
    operations = frozenset({CREATE, UPDATE})
    mutating = True
    validating = True
    #: ``priority/admission.go``: Admit acts on ``pods`` (no subresource), Validate on
    #: ``scheduling.k8s.io`` ``priorityclasses`` (its ``switch a.GetResource().GroupResource()``)
    admit_resources = POD_ONLY
    validate_resources = frozenset({(scheduling.GROUP, "priorityclasses", "")})

    def _classes(self) -> list[dict[str, Any]]:
        return self.ctx.list(scheduling.PRIORITYCLASSES)

    async def admit(self, a: Attributes) -> None:
        if not a.is_pod() or a.object is None or not isinstance(a.object.get("spec"), dict):
            return
        spec = a.object["spec"]
        if a.operation == UPDATE:
            old = (a.old_object or {}).get("spec") or {}
            for f in ("priority", "preemptionPolicy"):
                if spec.get(f) is None and old.get(f) is not None:
                    spec[f] = old[f]
            return
        name = spec.get("priorityClassName") or ""
        if not name:
            pc = default_priority_class(self._classes())
            if pc is not None:
                spec["priorityClassName"] = (pc.get("metadata") or {}).get("name", "")
        else:
            pc = await self.ctx.lookup(scheduling.PRIORITYCLASSES, None, name)
            if pc is None:
                raise forbidden(a, f"no PriorityClass with name {name} was found")
        value = int(pc.get("value") or 0) if pc is not None else 0
        if spec.get("priority") is not None and spec["priority"] != value:
            raise forbidden(a, f"the integer value of priority ({spec['priority']}) must not be provided in pod "
                               f"spec; priority admission controller computed {value} from the given "
                               "PriorityClass name")
        spec["priority"] = value
        policy = (pc or {}).get("preemptionPolicy")
        if policy:
            if spec.get("preemptionPolicy") and spec["preemptionPolicy"] != policy:
                raise forbidden(a, f"the string value of PreemptionPolicy ({spec['preemptionPolicy']}) must not "
                                   f"be provided in pod spec; priority admission controller computed {policy} "
                                   "from the given PriorityClass name")
            spec["preemptionPolicy"] = policy
        else:
            spec.setdefault("preemptionPolicy", DEFAULT_PREEMPTION_POLICY)

    async def validate(self, a: Attributes) -> None:
        if (a.resource.group, a.resource.plural) != (scheduling.GROUP, "priorityclasses"):
            return
        if a.subresource or a.object is None or not a.object.get("globalDefault"):
            return
        mine = (a.object.get("metadata") or {}).get("name")
        dpc = default_priority_class(self._classes())
        if dpc is None:
            return
        other = (dpc.get("metadata") or {}).get("name")
        if a.operation == CREATE or other != mine:
            raise forbidden(a, f"PriorityClass {other} is already marked as default. Only one default can exist")
