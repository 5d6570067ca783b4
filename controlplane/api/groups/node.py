"""The ``node.k8s.io/v1`` group: RuntimeClass (cluster-scoped).

Facts from Kubernetes v1.32: ``staging/src/k8s.io/api/node/v1/types.go`` (RuntimeClass,
Overhead, Scheduling), ``pkg/apis/node/validation/validation.go`` (ValidateRuntimeClass:
handler a DNS label, immutable; overhead quantities; scheduling nodeSelector labels and
tolerations), ``pkg/printers/internalversion/printers.go`` (printRuntimeClass: NAME,
HANDLER, AGE). The RuntimeClass admission plugin
(``plugin/pkg/admission/runtimeclass``) reads these objects.
"""

from __future__ import annotations

from typing import Any

from controlplane.api import printers, validators
from controlplane.api.quantity import parse_quantity
from controlplane.api.registry import JSON, KindSchema, Printer, Resource

GROUP = "node.k8s.io"

HANDLER_DESCRIPTION = (
    "handler specifies the underlying runtime and configuration that the CRI implementation will use to handle "
    "pods of this class. The possible values are specific to the node & CRI configuration.  It is assumed that "
    "all handlers are available on every node, and handlers of the same name are equivalent on every node. For "
    "example, a handler called \"runc\" might specify that the runc OCI runtime (using native Linux containers) "
    "will be used to run the containers in a pod. The Handler must be lowercase, conform to the DNS Label "
    "(RFC 1123) requirements, and is immutable.")

TYPES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "Overhead": ("Overhead structure represents the resource overhead associated with running a pod.", {
        "podFixed": ("map[Quantity]", "podFixed represents the fixed resource overhead associated with running "
                                      "a pod."),
    }),
    "Scheduling": ("Scheduling specifies the scheduling constraints for nodes supporting a RuntimeClass.", {
        "nodeSelector": ("map[string]", "nodeSelector lists labels that must be present on nodes that support "
                                        "this RuntimeClass. Pods using this RuntimeClass can only be scheduled "
                                        "to a node matched by this selector."),
        "tolerations": ("[]Toleration", "tolerations are appended (excluding duplicates) to pods running with "
                                        "this RuntimeClass during admission, effectively unioning the set of "
                                        "nodes tolerated by the pod and the RuntimeClass."),
    }),
}


def validate_runtime_class(obj: JSON, old: JSON | None, errs: validators.ErrorList) -> None:
    """ValidateRuntimeClass / ValidateRuntimeClassUpdate."""
    handler = obj.get("handler")
    if not handler:
        errs.required("handler", "")
    elif isinstance(handler, str):
        for m in validators.is_dns1123_label(handler):
            errs.invalid("handler", handler, m)
    overhead = obj.get("overhead")
    if isinstance(overhead, dict):
        for rname, q in (overhead.get("podFixed") or {}).items():
            path = f"overhead.podFixed[{rname}]"
            try:
                if parse_quantity(q) < 0:
                    errs.invalid(path, q, "must be greater than or equal to 0")
            except ValueError as e:
                errs.invalid(path, q, str(e))
    sched = obj.get("scheduling")
    if isinstance(sched, dict):
        validators.validate_labels(sched.get("nodeSelector"), "scheduling.nodeSelector", errs)
        validators.validate_tolerations(sched.get("tolerations"), "scheduling.tolerations", errs)
    if old is not None and old.get("handler") != obj.get("handler"):
        errs.invalid("handler", obj.get("handler"), "field is immutable")


def _row(rc: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    md = rc.get("metadata") or {}
    return [md.get("name", ""), rc.get("handler", ""), printers.since(md.get("creationTimestamp"), now)], None


PRINTER = Printer((printers.NAME_COL, {"name": "Handler", "type": "string", "format": "",
                                       "description": HANDLER_DESCRIPTION, "priority": 0}, printers.AGE_COL), _row)

SCHEMA = KindSchema(
    "RuntimeClass defines a class of container runtime supported in the cluster. The RuntimeClass is used to "
    "determine which container runtime is used to run all containers in a pod.", {
        "handler": ("string", HANDLER_DESCRIPTION),
        "overhead": ("Overhead", "overhead represents the resource overhead associated with running a pod for a "
                                 "given RuntimeClass."),
        "scheduling": ("Scheduling", "scheduling holds the scheduling constraints to ensure that pods running "
                                     "with this RuntimeClass are scheduled to nodes that support it."),
    }, types=TYPES)

RUNTIMECLASSES = Resource(GROUP, "v1", "runtimeclasses", "runtimeclass", "RuntimeClass", False,
                          printer=PRINTER, schema=SCHEMA, validate=validate_runtime_class)

#: this group's registry entries
ENTRIES: tuple[Resource, ...] = (RUNTIMECLASSES,)
