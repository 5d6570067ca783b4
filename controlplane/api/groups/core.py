"""Core ``v1`` kinds the admission plugins need: LimitRange (``limits``) and ResourceQuota
(``quota``, status subresource).

Facts from Kubernetes v1.32: ``staging/src/k8s.io/api/core/v1/types.go`` (LimitRangeSpec,
LimitRangeItem, ResourceQuotaSpec, ResourceQuotaStatus and their descriptions),
``pkg/apis/core/v1/defaults.go`` (SetDefaults_LimitRangeItem: for ``Container`` items the
default limit comes from max, the default request from the default limit, else from min),
``pkg/apis/core/validation/validation.go`` (ValidateLimitRange: min <= defaultRequest <=
default <= max, maxLimitRequestRatio >= 1, no defaults on ``Pod`` items;
ValidateResourceQuota: quota resource names, non-negative quantities, integers for
counted resources, scopes), ``pkg/registry/core/resourcequota/strategy.go`` (status reset
on create, kept on update) and ``pkg/printers/internalversion/printers.go``
(printLimitRange: NAME, CREATED AT; printResourceQuota: NAME, AGE, REQUEST, LIMIT).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from controlplane import apitime
from controlplane.api import printers, validators
from controlplane.api.quantity import format_quantity, parse_quantity
from controlplane.api.registry import JSON, KindSchema, Printer, Resource, Strategy

LIMIT_TYPES = ["Container", "PersistentVolumeClaim", "Pod"]
QUOTA_SCOPES = ["BestEffort", "CrossNamespacePodAffinity", "NotBestEffort", "NotTerminating",
                "PriorityClass", "Terminating"]
#: quota resources counted in whole objects (``IsIntegerResourceName`` + object counts)
INTEGER_QUOTA_RESOURCES = frozenset({"pods", "services", "replicationcontrollers", "resourcequotas", "secrets",
                                     "configmaps", "persistentvolumeclaims", "services.nodeports",
                                     "services.loadbalancers"})
#: the standard quota resource names (``pkg/apis/core/helper`` standardQuotaResources)
STANDARD_QUOTA_RESOURCES = INTEGER_QUOTA_RESOURCES | {
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage"}

_Q = "map[Quantity]"
TYPES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "LimitRangeSpec": ("LimitRangeSpec defines a min/max usage limit for resources that match on kind.", {
        "limits": ("[]LimitRangeItem", "Limits is the list of LimitRangeItem objects that are enforced."),
    }),
    "LimitRangeItem": ("LimitRangeItem defines a min/max usage limit for any resource that matches on kind.", {
        "type": ("string", "Type of resource that this limit applies to."),
        "max": (_Q, "Max usage constraints on this kind by resource name."),
        "min": (_Q, "Min usage constraints on this kind by resource name."),
        "default": (_Q, "Default resource requirement limit value by resource name if resource limit is "
                        "omitted."),
        "defaultRequest": (_Q, "DefaultRequest is the default resource requirement request value by resource "
                               "name if resource request is omitted."),
        "maxLimitRequestRatio": (_Q, "MaxLimitRequestRatio if specified, the named resource must have a request "
                                     "and limit that are both non-zero where limit divided by request is less "
                                     "than or equal to the enumerated value; this represents the max burst for "
                                     "the named resource."),
    }),
    "ResourceQuotaSpec": ("ResourceQuotaSpec defines the desired hard limits to enforce for Quota.", {
        "hard": (_Q, "hard is the set of desired hard limits for each named resource."),
        "scopes": ("[]string", "A collection of filters that must match each object tracked by a quota. If not "
                               "specified, the quota matches all objects."),
        "scopeSelector": ("ScopeSelector", "scopeSelector is also a collection of filters like scopes "
                                           "that must match each object tracked by a quota but "
                                           "expressed using ScopeSelectorOperator in combination with "
                                           "possible values."),
    }),
    "ScopeSelector": ("The scopes a quota tracks, as requirements that must all hold.", {
        "matchExpressions": ("[]ScopedResourceSelectorRequirement", "The requirements, each on one scope "
                                                                     "(all must match)."),
    }),
    "ScopedResourceSelectorRequirement": ("One requirement on a scope: its name, an operator and values.", {
        "scopeName": ("string", "The scope: Terminating, NotTerminating, BestEffort, NotBestEffort, "
                                "PriorityClass or CrossNamespacePodAffinity."),
        "operator": ("string", "How the scope relates to the values: In, NotIn, Exists or DoesNotExist."),
        "values": ("[]string", "The values: not empty for In and NotIn, empty for Exists and DoesNotExist."),
    }),
    "ResourceQuotaStatus": ("ResourceQuotaStatus defines the enforced hard limits and observed use.", {
        "hard": (_Q, "Hard is the set of enforced hard limits for each named resource."),
        "used": (_Q, "Used is the current observed total usage of the resource in the namespace."),
    }),
}


def canonical(q: object) -> str:
    """``Quantity.String()`` of ``q`` (binary suffixes kept for binary input). Raises ValueError."""
    return format_quantity(parse_quantity(q), binary=isinstance(q, str) and q.endswith("i"))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- LimitRange

def default_limit_range(obj: JSON) -> None:
    """SetDefaults_LimitRangeItem for every ``Container`` item of ``spec.limits``."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for item in spec.get("limits") or []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default: JSON = item["default"] if isinstance(item.get("default"), dict) else {}
        req: JSON = item["defaultRequest"] if isinstance(item.get("defaultRequest"), dict) else {}
        for k, v in (item.get("max") or {}).items():
            default.setdefault(k, v)
        for k, v in default.items():
            req.setdefault(k, v)
        for k, v in (item.get("min") or {}).items():
            req.setdefault(k, v)
        item["default"], item["defaultRequest"] = default, req


def _invalid_quantity(errs: validators.ErrorList, path: str, q: str, detail: str) -> None:
    errs.append({"reason": "FieldValueInvalid", "message": f"Invalid value: \"{q}\": {detail}", "field": path})


def validate_limit_range(obj: JSON, old: JSON | None, errs: validators.ErrorList) -> None:
    """ValidateLimitRange: each item's type, quantities and their order."""
    spec = obj.get("spec") or {}
    for i, item in enumerate((spec.get("limits") or []) if isinstance(spec, dict) else []):
        p = f"spec.limits[{i}]"
        if not isinstance(item, dict):
            errs.invalid(p, item, "must be an object")
            continue
        t = item.get("type")
        if not t:
            errs.required(f"{p}.type", "")
        vals: dict[str, dict[str, Fraction]] = {}
        text: dict[str, dict[str, str]] = {}
        for sec in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            vals[sec], text[sec] = {}, {}
            for k, q in (item.get(sec) or {}).items():
                try:
                    vals[sec][k], text[sec][k] = parse_quantity(q), canonical(q)
                except ValueError as e:
                    errs.invalid(f"{p}.{sec}[{k}]", q, str(e))
        if t == "Pod":
            for sec in ("default", "defaultRequest"):
                if item.get(sec):
                    errs.forbidden(f"{p}.{sec}", "may not be specified when `type` is 'Pod'")
        keys = {k for sec in vals.values() for k in sec}
        for k in sorted(keys):
            mn, mx = vals["min"].get(k), vals["max"].get(k)
            df, dr = vals["default"].get(k), vals["defaultRequest"].get(k)
            ratio = vals["maxLimitRequestRatio"].get(k)
            tx = {sec: text[sec].get(k, "") for sec in text}
            if mn is not None and mx is not None and mn > mx:
                _invalid_quantity(errs, f"{p}.min[{k}]", tx["min"],
                                  f"min value {tx['min']} is greater than max value {tx['max']}")
            if dr is not None:
                if mn is not None and mn > dr:
                    _invalid_quantity(errs, f"{p}.defaultRequest[{k}]", tx["defaultRequest"],
                                      f"min value {tx['min']} is greater than default request value "
                                      f"{tx['defaultRequest']}")
                if mx is not None and dr > mx:
                    _invalid_quantity(errs, f"{p}.defaultRequest[{k}]", tx["defaultRequest"],
                                      f"default request value {tx['defaultRequest']} is greater than max value "
                                      f"{tx['max']}")
                if df is not None and dr > df:
                    _invalid_quantity(errs, f"{p}.defaultRequest[{k}]", tx["defaultRequest"],
                                      f"default request value {tx['defaultRequest']} is greater than default "
                                      f"limit value {tx['default']}")
            if df is not None:
                if mn is not None and mn > df:
                    _invalid_quantity(errs, f"{p}.default[{k}]", tx["default"],
                                      f"min value {tx['min']} is greater than default value {tx['default']}")
                if mx is not None and df > mx:
                    _invalid_quantity(errs, f"{p}.default[{k}]", tx["default"],
                                      f"default value {tx['default']} is greater than max value {tx['max']}")
            if ratio is not None:
                if ratio < 1:
                    _invalid_quantity(errs, f"{p}.maxLimitRequestRatio[{k}]", tx["maxLimitRequestRatio"],
                                      f"ratio {tx['maxLimitRequestRatio']} is less than 1")
                elif mn is not None and mx is not None and mn > 0 and ratio > mx / mn:
                    _invalid_quantity(errs, f"{p}.maxLimitRequestRatio[{k}]", tx["maxLimitRequestRatio"],
                                      f"ratio {tx['maxLimitRequestRatio']} is greater than max/min = "
                                      f"{float(mx / mn):f}")


def _limit_range_row(lr: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    md = lr.get("metadata") or {}
    t = apitime.time_or_none(md.get("creationTimestamp"))
    return [md.get("name", ""), apitime.format_time(t) if t is not None else "<unknown>"], None


LIMITRANGE_PRINTER = Printer((printers.NAME_COL, {"name": "Created At", "type": "date", "format": "",
                                                  "description": printers.AGE_DESCRIPTION, "priority": 0}),
                             _limit_range_row)

LIMITRANGES = Resource(
    "", "v1", "limitranges", "limitrange", "LimitRange", True, ("limits",), printer=LIMITRANGE_PRINTER,
    schema=KindSchema("LimitRange sets resource usage limits for each kind of resource in a Namespace.", {
        "spec": ("LimitRangeSpec", "Spec defines the limits enforced.")}, types=TYPES),
    validate=validate_limit_range, default=default_limit_range)


# --------------------------------------------------------------------------- ResourceQuota

def _is_standard_quota_resource(name: str) -> bool:
    return (name in STANDARD_QUOTA_RESOURCES or name.startswith("count/") or name.startswith("hugepages-")
            or name.startswith("requests.hugepages-") or "/" in name)


def _validate_quota_list(hard: object, path: str, errs: validators.ErrorList) -> None:
    if hard is None:
        return
    if not isinstance(hard, dict):
        errs.invalid(path, hard, "must be a map of resource names to quantities")
        return
    for k, q in hard.items():
        p = f"{path}[{k}]"
        if not _is_standard_quota_resource(str(k)):
            errs.invalid(p, k, "must be a standard resource for quota")
        try:
            v = parse_quantity(q)
        except ValueError as e:
            errs.invalid(p, q, str(e))
            continue
        if v < 0:
            _invalid_quantity(errs, p, canonical(q), "must be greater than or equal to 0")
        elif (k in INTEGER_QUOTA_RESOURCES or str(k).startswith("count/")) and v.denominator != 1:
            _invalid_quantity(errs, p, canonical(q), "must be an integer")


def validate_resource_quota(obj: JSON, old: JSON | None, errs: validators.ErrorList) -> None:
    """ValidateResourceQuota: spec.hard, status.hard/used and the scopes."""
    spec = obj.get("spec") or {}
    if isinstance(spec, dict):
        _validate_quota_list(spec.get("hard"), "spec.hard", errs)
        for i, s in enumerate(spec.get("scopes") or []):
            if s not in QUOTA_SCOPES:
                errs.not_supported(f"spec.scopes[{i}]", s, QUOTA_SCOPES)
    status = obj.get("status") or {}
    if isinstance(status, dict):
        _validate_quota_list(status.get("hard"), "status.hard", errs)
        _validate_quota_list(status.get("used"), "status.used", errs)


def prepare_quota_create(obj: JSON) -> None:
    """PrepareForCreate: the status is the controller's (reset)."""
    obj.pop("status", None)


def _quota_row(q: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    md, st = q.get("metadata") or {}, q.get("status") or {}
    hard, used = st.get("hard") or {}, st.get("used") or {}
    req: list[str] = []
    lim: list[str] = []
    for r in sorted(hard):
        try:
            u = canonical(used[r]) if r in used else "0"
            h = canonical(hard[r])
        except ValueError:
            u, h = str(used.get(r, "0")), str(hard[r])
        (lim if r.split(".")[0] == "limits" and "." in r else req).append(f"{r}: {u}/{h}")
    return [md.get("name", ""), printers.since(md.get("creationTimestamp"), now), ", ".join(req),
            ", ".join(lim)], None


QUOTA_PRINTER = Printer((
    printers.NAME_COL, printers.AGE_COL,
    {"name": "Request", "type": "string", "format": "",
     "description": "Request represents a minimum amount of cpu/memory that a container may consume.",
     "priority": 0},
    {"name": "Limit", "type": "string", "format": "",
     "description": "Limits control the maximum amount of cpu/memory that a container may use independent of "
                    "contention on the node.", "priority": 0},
), _quota_row)

RESOURCEQUOTAS = Resource(
    "", "v1", "resourcequotas", "resourcequota", "ResourceQuota", True, ("quota",), ("status",),
    printer=QUOTA_PRINTER,
    schema=KindSchema("ResourceQuota sets aggregate quota restrictions enforced per namespace", {
        "spec": ("ResourceQuotaSpec", "Spec defines the desired quota."),
        "status": ("ResourceQuotaStatus", "Status defines the actual enforced quota and its current usage.")},
        types=TYPES),
    validate=validate_resource_quota, strategy=Strategy(prepare_create=prepare_quota_create))

#: this group's registry entries (core v1 kinds declared here, next to the admission they serve)
ENTRIES: tuple[Resource, ...] = (LIMITRANGES, RESOURCEQUOTAS)
