"""The ``apiextensions.k8s.io/v1`` group: CustomResourceDefinitions and the resources they define.

:data:`ENTRIES` declares ``customresourcedefinitions`` (cluster-scoped, short names ``crd`` /
``crds``, category ``api-extensions``, a ``status`` subresource) with its validation
(:func:`validate_crd`, ``apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go``),
defaulting (:func:`default_crd`, ``pkg/apis/apiextensions/v1/defaults.go``), strategy
(``pkg/registry/customresourcedefinition/strategy.go``: generation, status reset, storedVersions)
and printer (the default table convertor: Name, Created At).

:func:`custom_resources` turns an accepted CRD into one :class:`~controlplane.api.registry.Resource`
per served version, as the apiextensions-apiserver serves them
(``pkg/apiserver/customresource_handler.go`` crdInfo): names from ``status.acceptedNames``,
the printer from ``additionalPrinterColumns`` (``pkg/registry/customresource/tableconvertor``),
validation, defaulting and pruning by the version's structural schema
(:mod:`controlplane.api.structural`), the strategy of ``pkg/registry/customresource/strategy.go``
(generation on any change but metadata and status) and the ``scale`` subresource's paths
(:func:`scale_paths`). :func:`jsonpath` evaluates the simple JSONPath subset kubectl's
printer columns and the scale paths use.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from controlplane import apitime
from controlplane.api import listfields, printers, structural, validators
from controlplane.api.registry import JSON, KindSchema, Printer, Resource, Strategy
from controlplane.api.validators import ErrorList

GROUP = "apiextensions.k8s.io"
#: the finalizer the CRD finalizer controller removes once every instance is gone (crd_finalizer.go)
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"

_PRINTER_TYPES = ["integer", "number", "string", "boolean", "date"]
_PRINTER_FORMATS = ["int32", "int64", "float", "double", "byte", "date", "date-time", "password"]
_SCOPES = ["Cluster", "Namespaced"]
_CONVERSIONS = ["None", "Webhook"]


# --------------------------------------------------------------------------- JSONPath subset

_TOKEN = re.compile(r"""\.([A-Za-z0-9_\-$/]+)|\[(\d+)\]|\[['"]([^'"]+)['"]\]|\[\?\(@\.([A-Za-z0-9_.\-]+)\s*==\s*['"]([^'"]*)['"]\)\]|\[\*\]""")


def parse_jsonpath(path: str) -> list[tuple[str, Any]] | None:
    """The steps of a kubectl-style JSONPath (``.a.b[0]``, ``['a.b']``, ``[?(@.type=="Ready")]``,
    ``[*]``; optionally wrapped in ``{}``), or None when it is not of that subset."""
    p = path.strip()
    if p.startswith("{") and p.endswith("}"):
        p = p[1:-1]
    if not p.startswith((".", "[")):
        return None
    steps: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(p):
        m = _TOKEN.match(p, pos)
        if m is None:
            return None
        if m.group(1) is not None:
            steps.append(("key", m.group(1)))
        elif m.group(2) is not None:
            steps.append(("index", int(m.group(2))))
        elif m.group(3) is not None:
            steps.append(("key", m.group(3)))
        elif m.group(4) is not None:
            steps.append(("filter", (m.group(4).split("."), m.group(5))))
        else:
            steps.append(("all", None))
        pos = m.end()
    return steps


def jsonpath(obj: Any, path: str) -> list[Any]:
    """The values ``path`` (see :func:`parse_jsonpath`) selects in ``obj``; ``[]`` when none
    (or when the path is not of the subset)."""
    steps = parse_jsonpath(path)
    if steps is None:
        return []
    cur = [obj]
    for kind, arg in steps:
        nxt: list[Any] = []
        for v in cur:
            if kind == "key" and isinstance(v, dict) and arg in v:
                nxt.append(v[arg])
            elif kind == "index" and isinstance(v, list) and -len(v) <= arg < len(v):
                nxt.append(v[arg])
            elif kind == "all" and isinstance(v, list):
                nxt.extend(v)
            elif kind == "filter" and isinstance(v, list):
                keys, want = arg
                for item in v:
                    x: Any = item
                    for k in keys:
                        x = x.get(k) if isinstance(x, dict) else None
                    if x is not None and str(x) == want:
                        nxt.append(item)
        cur = nxt
    return cur


def _simple_path(path: object) -> bool:
    """``validateSimpleJSONPath``: ``.a.b`` fields only (no indexes, no filters)."""
    if not isinstance(path, str) or not path.startswith("."):
        return False
    steps = parse_jsonpath(path)
    return steps is not None and all(k == "key" for k, _ in steps)


# --------------------------------------------------------------------------- CRD defaulting

def default_crd(obj: JSON) -> None:
    """``pkg/apis/apiextensions/v1/defaults.go``: ``names.singular`` = lower-case kind,
    ``names.listKind`` = kind + ``List``, ``conversion.strategy: None``, a webhook's
    ``conversionReviewVersions: [v1]`` and service port 443."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str) and names["kind"]:
        if not names.get("singular"):
            names["singular"] = names["kind"].lower()
        if not names.get("listKind"):
            names["listKind"] = names["kind"] + "List"
    conv = spec.get("conversion")
    if conv is None:
        spec["conversion"] = {"strategy": "None"}
    elif isinstance(conv, dict):
        if conv.get("strategy") == "Webhook" and isinstance(conv.get("webhook"), dict):
            wh = conv["webhook"]
            wh.setdefault("conversionReviewVersions", ["v1"])
            svc = (wh.get("clientConfig") or {}).get("service") if isinstance(wh.get("clientConfig"), dict) else None
            if isinstance(svc, dict):
                svc.setdefault("port", 443)
    st = obj.get("status")
    if isinstance(st, dict):
        acc = st.setdefault("acceptedNames", {})
        if isinstance(acc, dict):
            acc.setdefault("plural", "")
            acc.setdefault("kind", "")


# --------------------------------------------------------------------------- CRD validation

def _obj(v: Any) -> JSON:
    """``v`` when it is a JSON object, else an empty one."""
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    """``v`` when it is a JSON array, else an empty one."""
    return v if isinstance(v, list) else []


def _join(errs: list[str]) -> str:
    return ",".join(errs)


def _validate_names(names: JSON, path: str, errs: ErrorList) -> None:
    """ValidateCustomResourceDefinitionNames."""
    for f in ("plural", "singular"):
        v = names.get(f)
        if isinstance(v, str) and v and validators.is_dns1035_label(v):
            errs.invalid(f"{path}.{f}", v, _join(validators.is_dns1035_label(v)))
    for f in ("kind", "listKind"):
        v = names.get(f)
        if isinstance(v, str) and v and validators.is_dns1035_label(v.lower()):
            errs.invalid(f"{path}.{f}", v, "may have mixed case, but should otherwise match: "
                         + _join(validators.is_dns1035_label(v.lower())))
    for i, s in enumerate(_list(names.get("shortNames"))):
        if not isinstance(s, str) or validators.is_dns1035_label(s):
            errs.invalid(f"{path}.shortNames[{i}]", s, _join(validators.is_dns1035_label(str(s))))
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        errs.invalid(f"{path}.listKind", names.get("listKind"), "kind and listKind may not be the same")
    for i, c in enumerate(_list(names.get("categories"))):
        if not isinstance(c, str) or validators.is_dns1035_label(c):
            errs.invalid(f"{path}.categories[{i}]", c, _join(validators.is_dns1035_label(str(c))))


def _validate_subresources(sub: Any, path: str, errs: ErrorList) -> None:
    """ValidateCustomResourceDefinitionSubresources: the scale paths."""
    if not isinstance(sub, dict):
        return
    scale = sub.get("scale")
    if not isinstance(scale, dict):
        return
    srp = scale.get("specReplicasPath")
    if not srp:
        errs.required(f"{path}.scale.specReplicasPath")
    elif not _simple_path(srp) or not str(srp).startswith(".spec."):
        errs.invalid(f"{path}.scale.specReplicasPath", srp, "should be a json path under .spec")
    strp = scale.get("statusReplicasPath")
    if not strp:
        errs.required(f"{path}.scale.statusReplicasPath")
    elif not _simple_path(strp) or not str(strp).startswith(".status."):
        errs.invalid(f"{path}.scale.statusReplicasPath", strp, "should be a json path under .status")
    lsp = scale.get("labelSelectorPath")
    if lsp and (not _simple_path(lsp) or not str(lsp).startswith((".spec.", ".status."))):
        errs.invalid(f"{path}.scale.labelSelectorPath", lsp, "should be a json path under either .spec or .status")


def _validate_printer_columns(cols: Any, path: str, errs: ErrorList) -> None:
    """ValidateCustomResourceColumnDefinition for each additionalPrinterColumns entry."""
    if not isinstance(cols, list):
        return
    for i, c in enumerate(cols):
        p = f"{path}[{i}]"
        if not isinstance(c, dict):
            errs.invalid(p, c, "must be an object")
            continue
        if not c.get("name"):
            errs.required(f"{p}.name")
        if not c.get("type"):
            errs.required(f"{p}.type", f"must be one of {', '.join(_PRINTER_TYPES)}")
        elif c["type"] not in _PRINTER_TYPES:
            errs.not_supported(f"{p}.type", c["type"], _PRINTER_TYPES)
        if c.get("format") and c["format"] not in _PRINTER_FORMATS:
            errs.not_supported(f"{p}.format", c["format"], _PRINTER_FORMATS)
        pr = c.get("priority")
        if isinstance(pr, int) and pr < 0:
            errs.invalid(f"{p}.priority", pr, "negative priorities are not allowed")
        jp = c.get("jsonPath")
        if not jp:
            errs.required(f"{p}.jsonPath")
        elif parse_jsonpath(str(jp)) is None:
            errs.invalid(f"{p}.jsonPath", jp, "must be a simple json path")


def _validate_conversion(conv: Any, path: str, errs: ErrorList) -> None:
    """ValidateCustomResourceConversion: strategy None or Webhook (with a webhook config)."""
    if not isinstance(conv, dict):
        return
    strat = conv.get("strategy")
    if strat not in _CONVERSIONS:
        errs.not_supported(f"{path}.strategy", strat, _CONVERSIONS)
        return
    if strat == "Webhook":
        wh = conv.get("webhook")
        if not isinstance(wh, dict) or not wh.get("clientConfig"):
            errs.required(f"{path}.webhook", "required when strategy is set to Webhook")
    elif conv.get("webhook") is not None:
        errs.forbidden(f"{path}.webhook", "should not be set when strategy is not set to Webhook")


def validate_crd(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateCustomResourceDefinition (create) / ValidateCustomResourceDefinitionUpdate
    of an ``apiextensions.k8s.io/v1`` CRD into ``errs``: the name is
    ``<spec.names.plural>.<spec.group>``; group a DNS subdomain with a dot; names DNS-1035
    labels (kind / listKind in mixed case), kind ≠ listKind; scope Cluster or Namespaced;
    versions non-empty, unique DNS-1035 names, exactly one ``storage: true``, each with an
    ``openAPIV3Schema`` (v1 requires one) checked by :func:`controlplane.api.structural.check_schema`;
    printer columns, scale paths, conversion strategy. On update group, names.plural
    (always) and scope, names.kind (once established) are immutable; storedVersions must
    appear in spec.versions."""
    spec = obj.get("spec")
    md = obj.get("metadata") or {}
    if not isinstance(spec, dict):
        errs.required("spec")
        return
    names = _obj(spec.get("names"))
    name = md.get("name", "")
    if name and name != f"{names.get('plural', '')}.{spec.get('group', '')}":
        errs.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group')
    group = spec.get("group")
    if not group:
        errs.required("spec.group")
    elif validators.is_dns1123_subdomain(str(group)):
        errs.invalid("spec.group", group, _join(validators.is_dns1123_subdomain(str(group))))
    elif len(str(group).split(".")) < 2:
        errs.invalid("spec.group", group, "should be a domain with at least one dot")
    scope = spec.get("scope")
    if not scope:
        errs.required("spec.scope")
    elif scope not in _SCOPES:
        errs.not_supported("spec.scope", scope, _SCOPES)
    versions = _list(spec.get("versions"))
    storage, seen, unique = 0, set(), True
    for i, v in enumerate(versions):
        p = f"spec.versions[{i}]"
        if not isinstance(v, dict):
            errs.invalid(p, v, "must be an object")
            continue
        if v.get("storage"):
            storage += 1
        vn = v.get("name")
        if vn in seen:
            unique = False
        seen.add(vn)
        if not isinstance(vn, str) or validators.is_dns1035_label(vn):
            errs.invalid(f"{p}.name", vn, _join(validators.is_dns1035_label(str(vn or ""))))
        schema = _obj(v.get("schema")).get("openAPIV3Schema")
        if schema is None:
            errs.required(f"{p}.schema.openAPIV3Schema", "schemas are required")
        elif not isinstance(schema, dict):
            errs.invalid(f"{p}.schema.openAPIV3Schema", schema, "must be an object")
        else:
            subs = v.get("subresources") if isinstance(v.get("subresources"), dict) else spec.get("subresources")
            status_sub = isinstance(subs, dict) and subs.get("status") is not None
            errs.extend(structural.check_schema(schema, f"{p}.schema.openAPIV3Schema", status_subresource=status_sub))
        _validate_subresources(v.get("subresources"), f"{p}.subresources", errs)
        _validate_printer_columns(v.get("additionalPrinterColumns"), f"{p}.additionalPrinterColumns", errs)
    if not unique:
        errs.invalid("spec.versions", versions, "must contain unique version names")
    if storage != 1:
        errs.invalid("spec.versions", versions, "must have exactly one version marked as storage version")
    for f in ("plural", "singular", "kind", "listKind"):
        if not names.get(f):
            errs.required(f"spec.names.{f}")
    _validate_names(names, "spec.names", errs)
    _validate_conversion(spec.get("conversion"), "spec.conversion", errs)
    if old is not None:
        ospec = _obj(old.get("spec"))
        onames = _obj(ospec.get("names"))
        if established(old):
            if spec.get("scope") != ospec.get("scope"):
                errs.invalid("spec.scope", spec.get("scope"), "field is immutable")
            if names.get("kind") != onames.get("kind"):
                errs.invalid("spec.names.kind", names.get("kind"), "field is immutable")
        if spec.get("group") != ospec.get("group"):
            errs.invalid("spec.group", spec.get("group"), "field is immutable")
        if names.get("plural") != onames.get("plural"):
            errs.invalid("spec.names.plural", names.get("plural"), "field is immutable")
        stored = _list(_obj(obj.get("status")).get("storedVersions"))
        vnames = {v.get("name") for v in versions if isinstance(v, dict)}
        for i, sv in enumerate(stored):
            if sv not in vnames:
                errs.invalid(f"status.storedVersions[{i}]", sv, "must appear in spec.versions")


# --------------------------------------------------------------------------- CRD strategy

def condition(crd: JSON, type_: str) -> JSON | None:
    """The status condition of ``type_`` (``Established``, ``NamesAccepted``, ``Terminating``), or None."""
    for c in ((crd.get("status") or {}).get("conditions") or []):
        if isinstance(c, dict) and c.get("type") == type_:
            return c
    return None


def established(crd: JSON) -> bool:
    """Whether the CRD's ``Established`` condition is True."""
    c = condition(crd, "Established")
    return c is not None and c.get("status") == "True"


def set_condition(crd: JSON, cond: JSON) -> None:
    """SetCRDCondition: replace the condition of that type (its lastTransitionTime kept when
    the status does not change) or append it."""
    conds = crd.setdefault("status", {}).setdefault("conditions", [])
    cond = {"type": cond["type"], "status": cond["status"], "lastTransitionTime": apitime.now(),
            "reason": cond.get("reason", ""), "message": cond.get("message", "")}
    for i, c in enumerate(conds):
        if c.get("type") == cond["type"]:
            if c.get("status") == cond["status"]:
                cond["lastTransitionTime"] = c.get("lastTransitionTime", cond["lastTransitionTime"])
            conds[i] = cond
            return
    conds.append(cond)


def _prepare_crd(obj: JSON) -> None:
    """``customresourcedefinition/strategy.go`` PrepareForCreate: status reset, storedVersions
    = the storage version, and the cleanup finalizer (crd_finalizer.go adds it on create; we
    add it here, in the same write)."""
    spec = _obj(obj.get("spec"))
    stored = [v.get("name") for v in _list(spec.get("versions")) if isinstance(v, dict) and v.get("storage")]
    obj["status"] = {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": stored}
    md = obj.setdefault("metadata", {})
    fins = md.setdefault("finalizers", [])
    if CLEANUP_FINALIZER not in fins:
        fins.append(CLEANUP_FINALIZER)


def crd_warnings(obj: JSON, old: JSON | None) -> list[str]:
    """WarningsOnCreate / WarningsOnUpdate of a CRD: what the schema check of each version
    says it cannot do here (e.g. CEL rules that are skipped), as :func:`controlplane.api.
    structural.check_schema` reports them."""
    out: list[str] = []
    spec = _obj(obj.get("spec"))
    for i, v in enumerate(_list(spec.get("versions"))):
        schema = _obj(_obj(v).get("schema")).get("openAPIV3Schema")
        if isinstance(schema, dict):
            for w in structural.check_schema(schema, f"spec.versions[{i}].schema.openAPIV3Schema").warnings:
                if w not in out:
                    out.append(w)
    return out


CRD_STRATEGY = Strategy(tracks_generation=True, prepare_create=_prepare_crd, warnings=crd_warnings)


def _crd_row(crd: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    md = crd.get("metadata") or {}
    return [md.get("name", ""), md.get("creationTimestamp")], None


#: the default table convertor (rest.NewDefaultTableConvertor): Name, Created At
CRD_PRINTER = Printer((printers.NAME_COL, {"name": "Created At", "type": "date", "format": "",
                                           "description": printers.AGE_DESCRIPTION, "priority": 0}), _crd_row)

def _s(desc: str, **props: JSON) -> JSON:
    """A string-typed OpenAPI property with ``desc`` (or an object with ``props``)."""
    if props:
        return {"type": "object", "description": desc, "properties": props}
    return {"type": "string", "description": desc}


def _arr(desc: str, items: JSON) -> JSON:
    return {"type": "array", "description": desc, "items": items}


_NAMES = _s(
    "CustomResourceDefinitionNames indicates the names to serve this CustomResourceDefinition",
    plural=_s("plural is the plural name of the resource to serve: /apis/<group>/<version>/.../<plural>. "
              "Must be all lowercase."),
    singular=_s("singular is the singular name of the resource. It must be all lowercase. Defaults to "
                "lowercased `kind`."),
    kind=_s("kind is the serialized kind of the resource. It is normally CamelCase and singular."),
    listKind=_s("listKind is the serialized kind of the list for this resource. Defaults to \"`kind`List\"."),
    shortNames=_arr("shortNames are short names for the resource, exposed in API discovery documents.",
                    _s("a short name")),
    categories=_arr("categories is a list of grouped resources this custom resource belongs to (e.g. 'all').",
                    _s("a category")))
_CONDITION = _s(
    "CustomResourceDefinitionCondition contains details for the current condition of this pod.",
    type=_s("type is the type of the condition. Types include Established, NamesAccepted and Terminating."),
    status=_s("status is the status of the condition. Can be True, False, Unknown."),
    lastTransitionTime=_s("lastTransitionTime last time the condition transitioned from one status to another."),
    reason=_s("reason is a unique, one-word, CamelCase reason for the condition's last transition."),
    message=_s("message is a human-readable message indicating details about last transition."))
_COLUMN = _s(
    "CustomResourceColumnDefinition specifies a column for server side printing.",
    name=_s("name is a human readable name for the column."),
    type=_s("type is an OpenAPI type definition for this column: integer, number, string, boolean or date."),
    format=_s("format is an optional OpenAPI type definition for this column."),
    description=_s("description is a human readable description of this column."),
    priority={"type": "integer", "description": "priority is an integer defining the relative importance of this "
              "column compared to others. Lower numbers are considered higher priority."},
    jsonPath=_s("jsonPath is a simple JSON path (i.e. with array notation) which is evaluated against each "
                "custom resource to produce the value for this column."))
_VERSION = _s(
    "CustomResourceDefinitionVersion describes a version for CRD.",
    name=_s("name is the version name, e.g. \"v1\", \"v2beta1\", etc."),
    served={"type": "boolean", "description": "served is a flag enabling/disabling this version from being "
            "served via REST APIs"},
    storage={"type": "boolean", "description": "storage indicates this version should be used when persisting "
             "custom resources to storage. There must be exactly one version with storage=true."},
    deprecated={"type": "boolean", "description": "deprecated indicates this version of the custom resource API "
                "is deprecated."},
    deprecationWarning=_s("deprecationWarning overrides the default warning returned to API clients."),
    schema=_s("schema describes the schema used for validation, pruning, and defaulting of this version of the "
              "custom resource.",
              openAPIV3Schema={"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                               "description": "openAPIV3Schema is the OpenAPI v3 schema to use for validation "
                               "and pruning."}),
    subresources=_s("subresources specify what subresources this version of the defined custom resource have.",
                    status={"type": "object", "description": "status indicates the custom resource should serve "
                            "a `/status` subresource."},
                    scale=_s("scale indicates the custom resource should serve a `/scale` subresource that "
                             "returns an `autoscaling/v1` Scale object.",
                             specReplicasPath=_s("specReplicasPath defines the JSON path inside of a custom "
                                                 "resource that corresponds to Scale `spec.replicas`."),
                             statusReplicasPath=_s("statusReplicasPath defines the JSON path inside of a custom "
                                                   "resource that corresponds to Scale `status.replicas`."),
                             labelSelectorPath=_s("labelSelectorPath defines the JSON path inside of a custom "
                                                  "resource that corresponds to Scale `status.selector`."))),
    additionalPrinterColumns=_arr("additionalPrinterColumns specifies additional columns returned in Table "
                                  "output.", _COLUMN),
    selectableFields=_arr("selectableFields specifies paths to fields that may be used as field selectors.",
                          _s("SelectableField specifies the JSON path of a field that may be used with field "
                             "selectors.", jsonPath=_s("jsonPath is a simple JSON path which is evaluated "
                                                       "against each custom resource to produce a field "
                                                       "selector value."))))
#: the CRD kind's OpenAPI v3 schema, nested (``apiextensions/v1`` types.go; what ``kubectl explain
#: crd.spec.names`` reads). Published only: bodies still decode by the kind's flat schema.
CRD_OPENAPI: JSON = _s(
    "CustomResourceDefinition represents a resource that should be exposed on the API server.  Its name MUST "
    "be in the format <.spec.name>.<.spec.group>.",
    spec=_s("spec describes how the user wants the resources to appear",
            group=_s("group is the API group of the defined custom resource. Must match the name of the "
                     "CustomResourceDefinition (in the form `<names.plural>.<group>`)."),
            names=_NAMES,
            scope=_s("scope indicates whether the defined custom resource is cluster- or namespace-scoped. "
                     "Allowed values are `Cluster` and `Namespaced`."),
            versions=_arr("versions is the list of all API versions of the defined custom resource.", _VERSION),
            conversion=_s("conversion defines conversion settings for the CRD.",
                          strategy=_s("strategy specifies how custom resources are converted between versions: "
                                      "None or Webhook."),
                          webhook={"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                                   "description": "webhook describes how to call the conversion webhook."}),
            preserveUnknownFields={"type": "boolean", "description": "preserveUnknownFields indicates that "
                                   "object fields which are not specified in the OpenAPI schema should be "
                                   "preserved when persisting to storage."}),
    status=_s("status indicates the actual state of the CustomResourceDefinition",
              conditions=_arr("conditions indicate state for particular aspects of a CustomResourceDefinition",
                              _CONDITION),
              acceptedNames=_NAMES,
              storedVersions=_arr("storedVersions lists all versions of CustomResources that were ever "
                                  "persisted.", _s("a version"))))


CUSTOMRESOURCEDEFINITIONS = Resource(
    GROUP, "v1", "customresourcedefinitions", "customresourcedefinition", "CustomResourceDefinition", False,
    ("crd", "crds"), ("status",), ("api-extensions",),
    printer=CRD_PRINTER,
    schema=KindSchema(
        "CustomResourceDefinition represents a resource that should be exposed on the API server.  Its name "
        "MUST be in the format <.spec.name>.<.spec.group>.", {
            "spec": ("object:v1.CustomResourceDefinitionSpec",
                     "spec describes how the user wants the resources to appear"),
            "status": ("object:v1.CustomResourceDefinitionStatus",
                       "status indicates the actual state of the CustomResourceDefinition")}),
    validate=validate_crd, default=default_crd,
    strategy=CRD_STRATEGY, openapi_schema=CRD_OPENAPI)

#: the group's entries, added to BUILTIN
ENTRIES: tuple[Resource, ...] = (CUSTOMRESOURCEDEFINITIONS,)


# --------------------------------------------------------------------------- custom resources

def version_schema(crd: JSON, version: str) -> JSON | None:
    """The ``openAPIV3Schema`` of ``version`` (None when absent)."""
    for v in ((crd.get("spec") or {}).get("versions") or []):
        if isinstance(v, dict) and v.get("name") == version:
            s = (v.get("schema") or {}).get("openAPIV3Schema")
            return s if isinstance(s, dict) else None
    return None


def storage_version(crd: JSON) -> str:
    """The version marked ``storage: true`` ('' when none)."""
    for v in ((crd.get("spec") or {}).get("versions") or []):
        if isinstance(v, dict) and v.get("storage"):
            return str(v.get("name", ""))
    return ""


def scale_paths(resource: Resource) -> JSON | None:
    """The ``subresources.scale`` of a custom resource's version (specReplicasPath,
    statusReplicasPath, labelSelectorPath), or None for a resource without one."""
    s = resource.extra.get("scale")
    return s if isinstance(s, dict) else None


def _path_steps(path: str) -> list[str]:
    return [s for s in path.split(".") if s]


def get_path(obj: JSON, path: str) -> Any:
    """The value at the simple JSON path ``path`` (``.spec.replicas``) of ``obj``, or None."""
    cur: Any = obj
    for s in _path_steps(path):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(s)
    return cur


def set_path(obj: JSON, path: str, value: Any) -> None:
    """Set the simple JSON path ``path`` of ``obj`` to ``value`` (intermediate objects created)."""
    steps = _path_steps(path)
    cur = obj
    for s in steps[:-1]:
        nxt = cur.get(s)
        if not isinstance(nxt, dict):
            nxt = cur[s] = {}
        cur = nxt
    cur[steps[-1]] = value


def custom_scale(resource: Resource, obj: JSON) -> JSON:
    """The autoscaling/v1 Scale of a custom resource (``pkg/registry/customresource/storage.go``
    scaleFromCustomResource): replicas from specReplicasPath / statusReplicasPath (0 when
    absent), the selector string from labelSelectorPath ('' when absent or unset)."""
    paths = scale_paths(resource) or {}
    md = obj.get("metadata") or {}

    def as_int(v: Any) -> int:
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0
    sel = get_path(obj, str(paths.get("labelSelectorPath") or "")) if paths.get("labelSelectorPath") else None
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: md[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                         if k in md},
            "spec": {"replicas": as_int(get_path(obj, str(paths.get("specReplicasPath", ""))))},
            "status": {"replicas": as_int(get_path(obj, str(paths.get("statusReplicasPath", "")))),
                       "selector": sel if isinstance(sel, str) else ""}}


def printer_cell(type_: str, value: Any, now: float) -> Any:
    """cellForJSONValue (tableconvertor.go): a JSONPath value as its column type's cell; None
    when it does not fit."""
    if value is None:
        return None
    if type_ == "integer":
        if isinstance(value, bool):
            return None
        if isinstance(value, (int, float)):
            return int(value)
        return None
    if type_ == "number":
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if type_ == "boolean":
        return value if isinstance(value, bool) else None
    if type_ == "date":
        if isinstance(value, str):
            t = apitime.time_or_none(value)
            return "<invalid>" if t is None else printers.human_duration(now - t)
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, separators=(",", ":"))


def _printer(columns: list[JSON]) -> Printer:
    """The Table of a custom resource version (``pkg/registry/customresource/tableconvertor``):
    Name, then each additionalPrinterColumn; a version without any gets ``Age``
    (``.metadata.creationTimestamp``, as customresource_handler.go adds)."""
    if not columns:
        columns = [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp",
                    "description": printers.AGE_DESCRIPTION}]
    defs = [printers.NAME_COL] + [
        {"name": c.get("name", ""), "type": c.get("type", "string"), "format": c.get("format", ""),
         "description": c.get("description", ""), "priority": int(c.get("priority") or 0)} for c in columns]
    paths = [(str(c.get("jsonPath", "")), str(c.get("type", "string"))) for c in columns]

    def row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
        cells: list[Any] = [(obj.get("metadata") or {}).get("name", "")]
        for path, type_ in paths:
            vals = jsonpath(obj, path)
            cells.append(printer_cell(type_, vals[0], now) if vals else None)
        return cells, None
    return Printer(tuple(defs), row)


def _generation_of(obj: JSON) -> Any:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _drop_status(obj: JSON) -> None:
    obj.pop("status", None)


#: ``pkg/registry/customresource/strategy.go``: generation 1 on create, +1 on any change
#: other than metadata and status
CR_STRATEGY = Strategy(tracks_generation=True, generation_of=_generation_of)
#: the same with a status subresource: a create cannot set status (PrepareForCreate)
CR_STATUS_STRATEGY = Strategy(tracks_generation=True, generation_of=_generation_of, prepare_create=_drop_status)


def _selectable(path: str) -> Any:
    def extract(obj: JSON) -> str:
        vals = jsonpath(obj, path)
        if not vals or vals[0] is None:
            return ""
        v = vals[0]
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v)
    return extract


_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(name: str) -> tuple[int, int, int, str]:
    """The sort key of a version by Kubernetes' version priority (``apimachinery/pkg/version``
    CompareKubeAwareVersionStrings): GA before beta before alpha, higher numbers first,
    other names last in alphabetical order. Discovery lists a CRD's versions so, the first
    being the group's preferred version."""
    m = _KUBE_VERSION.match(name)
    if m is None:
        return (3, 0, 0, name)
    rank = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (rank, -int(m.group(1)), -int(m.group(3) or 0), name)


def schema_list_fields(schema: Any, prefix: str = "", depth: int = 0) -> dict[str, listfields.ListField]:
    """The list fields of a structural schema by dotted path (list elements adding no
    segment, as :mod:`controlplane.api.listfields`): ``x-kubernetes-list-type`` ``map`` with
    its ``x-kubernetes-list-map-keys``, ``set``, ``atomic``; an array without one is atomic
    (structured-merge-diff's default for CRDs)."""
    out: dict[str, listfields.ListField] = {}
    if not isinstance(schema, dict) or depth > 32:
        return out
    for name, sub in _obj(schema.get("properties")).items():
        if not isinstance(sub, dict):
            continue
        path = f"{prefix}.{name}" if prefix else name
        if sub.get("type") == "array":
            lt = sub.get("x-kubernetes-list-type") or "atomic"
            keys = tuple(str(k) for k in _list(sub.get("x-kubernetes-list-map-keys")))
            out[path] = listfields.ListField(list_type=str(lt), map_keys=keys if lt == "map" else ())
            out.update(schema_list_fields(sub.get("items"), path, depth + 1))
        elif sub.get("type") == "object" or "properties" in sub:
            out.update(schema_list_fields(sub, path, depth + 1))
    return out


def custom_resources(crd: JSON) -> list[Resource]:
    """One Resource per served version of an accepted CRD, in version priority order (names from ``status.acceptedNames``;
    an entry's ``extra`` holds ``crd`` (its name), ``etcd_dir`` (``<group>/<plural>``, shared
    by the versions, as ``/registry/<group>/<plural>``), ``storage_version`` and ``scale``).
    Objects are validated, defaulted and pruned by the schema of their own apiVersion."""
    spec = crd.get("spec") or {}
    names = (crd.get("status") or {}).get("acceptedNames") or spec.get("names") or {}
    group = str(spec.get("group", ""))
    plural = str(names.get("plural") or "")
    kind = str(names.get("kind") or "")
    singular = str(names.get("singular") or kind.lower())
    sub_top = spec.get("subresources") if isinstance(spec.get("subresources"), dict) else None
    versions = sorted((v for v in _list(spec.get("versions")) if isinstance(v, dict)),
                      key=lambda v: version_priority(str(v.get("name"))))
    schemas = {str(v.get("name")): copy.deepcopy((v.get("schema") or {}).get("openAPIV3Schema") or {})
               for v in versions}
    storage = storage_version(crd)

    def schema_of(obj: JSON) -> JSON:
        av = str(obj.get("apiVersion") or "")
        return schemas.get(av.rsplit("/", 1)[-1]) or schemas.get(storage) or {}

    def validate(obj: JSON, old: JSON | None, errs: Any) -> None:
        errs.extend(structural.validate_custom_resource(schema_of(obj), obj, old, prior=list(errs)))

    def default(obj: JSON) -> None:
        structural.apply_defaults(schema_of(obj), obj)

    def prune(obj: JSON) -> list[str]:
        return list(structural.prune(schema_of(obj), obj))

    out: list[Resource] = []
    for v in versions:
        if not v.get("served"):
            continue
        vname = str(v.get("name"))
        subs = v.get("subresources") if isinstance(v.get("subresources"), dict) else sub_top
        subresources: tuple[str, ...] = ()
        scale = None
        if isinstance(subs, dict):
            if subs.get("status") is not None:
                subresources += ("status",)
            if isinstance(subs.get("scale"), dict):
                subresources += ("scale",)
                scale = dict(subs["scale"])
        fields = {str(f.get("jsonPath")): _selectable(str(f.get("jsonPath")))
                  for f in (v.get("selectableFields") or []) if isinstance(f, dict) and f.get("jsonPath")}
        fields = {k.lstrip("."): fn for k, fn in fields.items()}
        out.append(Resource(
            group, vname, plural, singular, kind, spec.get("scope") == "Namespaced",
            tuple(names.get("shortNames") or ()), subresources, tuple(names.get("categories") or ()),
            extra={"crd": (crd.get("metadata") or {}).get("name", ""), "etcd_dir": f"{group}/{plural}",
                   "lists_key": f"{group}/{vname}, Kind={kind}",
                   "storage_version": storage, "scale": scale, "list_kind": names.get("listKind") or kind + "List"},
            printer=_printer(list(v.get("additionalPrinterColumns") or [])),
            validate=validate, name_rule=validators.is_dns1123_subdomain, default=default,
            selectable_fields=fields, strategy=CR_STATUS_STRATEGY if "status" in subresources else CR_STRATEGY,
            openapi_schema=schemas.get(vname) or None, prune=prune))
    return out
