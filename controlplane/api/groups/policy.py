"""The ``policy/v1`` group: PodDisruptionBudget (``pdb``, namespaced, status subresource).

Facts from Kubernetes v1.32: ``staging/src/k8s.io/api/policy/v1/types.go`` (spec, status and
their descriptions), ``pkg/apis/policy/validation/validation.go``
(ValidatePodDisruptionBudgetSpec: minAvailable and maxUnavailable exclusive, each a
non-negative integer or a percentage up to 100%, the selector, unhealthyPodEvictionPolicy),
``pkg/registry/policy/poddisruptionbudget/strategy.go`` (PrepareForCreate: an empty status
and generation 1; generation bumped when spec changes; status written through ``/status``)
and ``pkg/printers/internalversion/printers.go`` (printPodDisruptionBudget). The
eviction subresource (:mod:`components.apiserver.eviction`) and the disruption controller
(``components/controller_manager/disruption.py``) read and write these objects.
"""

from __future__ import annotations

from typing import Any

from controlplane.api import printers, validators
from controlplane.api.registry import JSON, KindSchema, Printer, Resource, Strategy

GROUP = "policy"
UNHEALTHY_POD_EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]
#: the status a new PDB starts with (the Go struct's non-omitempty int32 fields)
EMPTY_STATUS: JSON = {"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0}

TYPES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "PodDisruptionBudgetSpec": ("PodDisruptionBudgetSpec is a description of a PodDisruptionBudget.", {
        "minAvailable": ("IntOrString", "An eviction is allowed if at least \"minAvailable\" pods selected by "
                                        "\"selector\" will still be available after the eviction, i.e. even in "
                                        "the absence of the evicted pod.  So for example you can prevent all "
                                        "voluntary evictions by specifying \"100%\"."),
        "maxUnavailable": ("IntOrString", "An eviction is allowed if at most \"maxUnavailable\" pods selected by "
                                          "\"selector\" are unavailable after the eviction, i.e. even in absence "
                                          "of the evicted pod. For example, one can prevent all voluntary "
                                          "evictions by specifying 0. This is a mutually exclusive setting with "
                                          "\"minAvailable\"."),
        "selector": ("LabelSelector", "Label query over pods whose evictions are managed by the disruption "
                                      "budget. A null selector will match no pods, while an empty ({}) selector "
                                      "will select all pods within the namespace."),
        "unhealthyPodEvictionPolicy": ("string", "UnhealthyPodEvictionPolicy defines the criteria for when "
                                                 "unhealthy pods should be considered for eviction. Valid "
                                                 "policies are IfHealthyBudget and AlwaysAllow."),
    }),
    "PodDisruptionBudgetStatus": ("PodDisruptionBudgetStatus represents information about the status of a "
                                  "PodDisruptionBudget. Status may trail the actual state of a system.", {
        "observedGeneration": ("int64", "Most recent generation observed when updating this PDB status."),
        "disruptedPods": ("map[string]", "DisruptedPods contains information about pods whose eviction was "
                                         "processed by the API server eviction subresource handler but has not "
                                         "yet been observed by the PodDisruptionBudget controller."),
        "disruptionsAllowed": ("int32", "Number of pod disruptions that are currently allowed."),
        "currentHealthy": ("int32", "current number of healthy pods"),
        "desiredHealthy": ("int32", "minimum desired number of healthy pods"),
        "expectedPods": ("int32", "total number of pods counted by this disruption budget"),
        "conditions": ("[]Condition", "Conditions contain conditions for PDB. The disruption controller sets "
                                      "the DisruptionAllowed condition."),
    }),
}


def validate_pdb(obj: JSON, old: JSON | None, errs: validators.ErrorList) -> None:
    """ValidatePodDisruptionBudget (spec; status fields non-negative)."""
    spec = obj.get("spec") or {}
    if not isinstance(spec, dict):
        errs.invalid("spec", spec, "must be an object")
        return
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set")
    for f in ("minAvailable", "maxUnavailable"):
        if spec.get(f) is not None:
            validators.validate_int_or_percent(spec[f], f"spec.{f}", errs)
    if spec.get("selector") is not None:
        validators.validate_label_selector(spec["selector"], "spec.selector", errs)
    pol = spec.get("unhealthyPodEvictionPolicy")
    if pol is not None and pol not in UNHEALTHY_POD_EVICTION_POLICIES:
        errs.not_supported("spec.unhealthyPodEvictionPolicy", pol, UNHEALTHY_POD_EVICTION_POLICIES)
    status = obj.get("status") or {}
    if isinstance(status, dict):
        for f in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
            v = status.get(f)
            if isinstance(v, int) and v < 0:
                errs.invalid(f"status.{f}", v, "must be greater than or equal to 0")


def prepare_create(obj: JSON) -> None:
    """PrepareForCreate: an empty status (generation 1 comes from ``tracks_generation``)."""
    obj["status"] = dict(EMPTY_STATUS)


def _int_or_na(v: object) -> object:
    return "N/A" if v is None else str(v)


def _row(pdb: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    md, spec, st = pdb.get("metadata") or {}, pdb.get("spec") or {}, pdb.get("status") or {}
    return [md.get("name", ""), _int_or_na(spec.get("minAvailable")), _int_or_na(spec.get("maxUnavailable")),
            int(st.get("disruptionsAllowed") or 0), printers.since(md.get("creationTimestamp"), now)], None


PRINTER = Printer((
    printers.NAME_COL,
    {"name": "Min Available", "type": "string", "format": "",
     "description": "The minimum number of pods that must be available.", "priority": 0},
    {"name": "Max Unavailable", "type": "string", "format": "",
     "description": "The maximum number of pods that may be unavailable.", "priority": 0},
    {"name": "Allowed Disruptions", "type": "integer", "format": "",
     "description": "Calculated number of pods that may be disrupted at this time.", "priority": 0},
    printers.AGE_COL,
), _row)

SCHEMA = KindSchema(
    "PodDisruptionBudget is an object to define the max disruption that can be caused to a collection of pods", {
        "spec": ("PodDisruptionBudgetSpec", "Specification of the desired behavior of the PodDisruptionBudget."),
        "status": ("PodDisruptionBudgetStatus", "Most recently observed status of the PodDisruptionBudget."),
    }, types=TYPES)

PODDISRUPTIONBUDGETS = Resource(
    GROUP, "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", True, ("pdb",),
    ("status",), printer=PRINTER, schema=SCHEMA, validate=validate_pdb,
    strategy=Strategy(tracks_generation=True, prepare_create=prepare_create))

#: this group's registry entries
ENTRIES: tuple[Resource, ...] = (PODDISRUPTIONBUDGETS,)
