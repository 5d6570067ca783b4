"""The ``scheduling.k8s.io/v1`` group: PriorityClass (``pc``, cluster-scoped).

Facts from Kubernetes v1.32: ``staging/src/k8s.io/api/scheduling/v1/types.go`` (fields and
their descriptions), ``pkg/apis/scheduling/v1/defaults.go`` (SetDefaults_PriorityClass:
``preemptionPolicy: PreemptLowerPriority``), ``pkg/apis/scheduling/validation/validation.go``
(ValidatePriorityClass / ValidatePriorityClassUpdate), ``pkg/apis/scheduling/types.go``
(the system classes and HighestUserDefinablePriority), ``pkg/printers/internalversion/printers.go``
(printPriorityClass) and ``pkg/registry/scheduling/priorityclass/storage/storage.go`` (the
system classes cannot be deleted). The two system classes are created at apiserver start
(``pkg/registry/scheduling/rest/storage_scheduling.go`` AddSystemPriorityClasses), see
:data:`SYSTEM_PRIORITY_CLASSES`.
"""

from __future__ import annotations

from typing import Any

from controlplane.api import printers, validators
from controlplane.api.registry import JSON, KindSchema, Printer, Resource, Strategy

GROUP = "scheduling.k8s.io"
#: the highest value a user-defined PriorityClass may have (HighestUserDefinablePriority)
HIGHEST_USER_DEFINABLE_PRIORITY = 1000000000
#: names starting with it are reserved for the system classes (SystemPriorityClassPrefix)
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
#: the system classes: name → (value, description) (``pkg/apis/scheduling/types.go``
#: SystemNodeCritical / SystemClusterCritical, ``helpers.go`` systemPriorityClasses)
SYSTEM_PRIORITY_CLASSES: dict[str, tuple[int, str]] = {
    "system-node-critical": (2000001000, "Used for system critical pods that must not be moved from "
                                         "their current node."),
    "system-cluster-critical": (2000000000, "Used for system critical pods that must run in the cluster, "
                                            "but can be moved to another node if necessary."),
}
PREEMPTION_POLICIES = ["Never", "PreemptLowerPriority"]

VALUE_DESCRIPTION = ("value represents the integer value of this priority class. This is the actual priority "
                     "that pods receive when they have the name of this class in their pod spec.")
GLOBAL_DEFAULT_DESCRIPTION = (
    "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods "
    "that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if "
    "more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of "
    "such global default PriorityClasses will be used as the default priority.")
PREEMPTION_POLICY_DESCRIPTION = ("preemptionPolicy is the Policy for preempting pods with lower priority. One of "
                                 "Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.")


def system_priority_class(name: str) -> JSON:
    """The stored shape of system class ``name`` as the bootstrap creates it (no metadata
    beyond the name: the apiserver's create fills in uid and creationTimestamp)."""
    value, desc = SYSTEM_PRIORITY_CLASSES[name]
    return {"apiVersion": f"{GROUP}/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": False, "description": desc,
            "preemptionPolicy": "PreemptLowerPriority"}


def is_known_system_priority_class(name: str, value: object, global_default: object) -> str | None:
    """None when ``name`` is a system class with its value and not global default, else why
    not (``pkg/apis/scheduling/helpers.go`` IsKnownSystemPriorityClass)."""
    known = SYSTEM_PRIORITY_CLASSES.get(name)
    if known is None:
        return f"{name} is not a known system priority class"
    if value != known[0]:
        return f"value of {name} PriorityClass must be {known[0]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return None


def default_priority_class(obj: JSON) -> None:
    """SetDefaults_PriorityClass: ``preemptionPolicy: PreemptLowerPriority`` when unset."""
    if not obj.get("preemptionPolicy"):
        obj["preemptionPolicy"] = "PreemptLowerPriority"


def validate_priority_class(obj: JSON, old: JSON | None, errs: validators.ErrorList) -> None:
    """ValidatePriorityClass (reserved ``system-`` names, the user-definable maximum, the
    preemption policy) and, on update, ValidatePriorityClassUpdate (value and
    preemptionPolicy immutable)."""
    name = str((obj.get("metadata") or {}).get("name") or "")
    value = obj.get("value")
    if name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        why = is_known_system_priority_class(name, value, obj.get("globalDefault"))
        if why is not None:
            errs.forbidden("metadata.name", f"priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix "
                                            f"are reserved for system use only. error: {why}")
    elif isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.forbidden("value", f"maximum allowed value of a user defined priority is "
                                f"{HIGHEST_USER_DEFINABLE_PRIORITY}")
    pp = obj.get("preemptionPolicy")
    if pp is not None and pp not in PREEMPTION_POLICIES:
        errs.not_supported("preemptionPolicy", pp, PREEMPTION_POLICIES)
    if old is not None:
        if obj.get("value") != old.get("value"):
            errs.forbidden("value", "may not be changed in an update.")
        if obj.get("preemptionPolicy") != old.get("preemptionPolicy"):
            errs.invalid("preemptionPolicy", obj.get("preemptionPolicy"), "field is immutable")


def delete_forbidden(obj: JSON) -> str | None:
    """The system classes are not deleted (``priorityclass/storage/storage.go`` Delete)."""
    name = str((obj.get("metadata") or {}).get("name") or "")
    if is_known_system_priority_class(name, obj.get("value"), obj.get("globalDefault")) is None:
        return "this is a system priority class and cannot be deleted"
    return None


def _row(pc: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    return ([(pc.get("metadata") or {}).get("name", ""), int(pc.get("value") or 0),
             bool(pc.get("globalDefault")), printers.since((pc.get("metadata") or {}).get("creationTimestamp"), now),
             pc.get("preemptionPolicy") or ""], None)


PRINTER = Printer((
    printers.NAME_COL,
    {"name": "Value", "type": "integer", "format": "", "description": VALUE_DESCRIPTION, "priority": 0},
    {"name": "Global-Default", "type": "boolean", "format": "", "description": GLOBAL_DEFAULT_DESCRIPTION,
     "priority": 0},
    printers.AGE_COL,
    {"name": "PreemptionPolicy", "type": "string", "format": "", "description": PREEMPTION_POLICY_DESCRIPTION,
     "priority": 0},
), _row)

SCHEMA = KindSchema(
    "PriorityClass defines mapping from a priority class name to the priority integer value. The value can be "
    "any valid integer.", {
        "value": ("int32", VALUE_DESCRIPTION),
        "globalDefault": ("boolean", GLOBAL_DEFAULT_DESCRIPTION),
        "description": ("string", "description is an arbitrary string that usually provides guidelines on when "
                                  "this priority class should be used."),
        "preemptionPolicy": ("string", PREEMPTION_POLICY_DESCRIPTION),
    })

PRIORITYCLASSES = Resource(
    GROUP, "v1", "priorityclasses", "priorityclass", "PriorityClass", False, ("pc",),
    printer=PRINTER, schema=SCHEMA, validate=validate_priority_class, default=default_priority_class,
    strategy=Strategy(delete_forbidden=delete_forbidden))

#: this group's registry entries
ENTRIES: tuple[Resource, ...] = (PRIORITYCLASSES,)
