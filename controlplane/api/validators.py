"""Validation rules of API objects, with Kubernetes' field paths and messages.

The rules themselves, below the registry: field errors (:class:`ErrorList`, one StatusCause
dict ``{"reason", "message", "field"}`` per error), name and label rules, ObjectMeta
(:func:`validate_object_meta`) and one validator per kind (``validate_pod``,
``validate_deployment``...; signature ``(obj, old_or_None, errs)``), which
:mod:`controlplane.api.builtin` attaches to the registry entries.
:func:`controlplane.api.validation.validate` runs them for a kind.

Messages follow ``staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go``
(``Required value``, ``Invalid value: "x": detail``, ``Unsupported value: "x": supported
values: ...``, ``Forbidden: detail``, ``Duplicate value: "x"``, ``Too long: must have at
most N bytes``); name/label rules and their wording follow
``staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go``; the per-kind rules
``pkg/apis/core/validation/validation.go`` (ValidatePod, ValidatePodSpec,
ValidatePodUpdate, ValidateReplicationController, ValidateNamespace, ValidateNode) and
``pkg/apis/apps/validation/validation.go`` (ValidateDeployment, ValidateReplicaSet).
"""

from __future__ import annotations

import copy
import json
import re
from fractions import Fraction
from typing import Any, TypeGuard

from controlplane.api.quantity import format_quantity, parse_quantity
from controlplane.api.registry import JSON, NameRule
from controlplane.labels import selector_from_dict

# --------------------------------------------------------------------------- name rules

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + r"(\." + DNS1123_LABEL_FMT + ")*"
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_VALUE_FMT = "(" + QUALIFIED_NAME_FMT + ")?"
ENV_VAR_NAME_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"

DNS1123_LABEL_ERR = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                     "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
                     f"regex used for validation is '{DNS1123_LABEL_FMT}')")
DNS1123_SUBDOMAIN_ERR = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                         "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
                         f"regex used for validation is '{DNS1123_SUBDOMAIN_FMT}')")
DNS1035_LABEL_ERR = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                     "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
                     f"'abc-123', regex used for validation is '{DNS1035_LABEL_FMT}')")
QUALIFIED_NAME_ERR = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                      "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                      f"validation is '{QUALIFIED_NAME_FMT}')")
LABEL_VALUE_ERR = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                   "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
                   f"'my_value',  or '12345', regex used for validation is '{LABEL_VALUE_FMT}')")
ENV_VAR_NAME_ERR = ("a valid environment variable name must consist of alphabetic characters, digits, '_', "
                    "'-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or "
                    f"'MyEnvName1', regex used for validation is '{ENV_VAR_NAME_FMT}')")

_DNS1123_LABEL = re.compile(f"^{DNS1123_LABEL_FMT}$")
_DNS1123_SUBDOMAIN = re.compile(f"^{DNS1123_SUBDOMAIN_FMT}$")
_DNS1035_LABEL = re.compile(f"^{DNS1035_LABEL_FMT}$")
_QUALIFIED_NAME = re.compile(f"^{QUALIFIED_NAME_FMT}$")
_LABEL_VALUE = re.compile(f"^{LABEL_VALUE_FMT}$")
_ENV_VAR_NAME = re.compile(f"^{ENV_VAR_NAME_FMT}$")
_PERCENT = re.compile(r"^[0-9]+%$")

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024


def _max_len_err(n: int) -> str:
    return f"must be no more than {n} characters"


def is_dns1123_label(v: str) -> list[str]:
    """Problems of ``v`` as an RFC 1123 label (IsDNS1123Label); empty when valid."""
    errs = []
    if len(v) > 63:
        errs.append(_max_len_err(63))
    if not _DNS1123_LABEL.match(v):
        errs.append(DNS1123_LABEL_ERR)
    return errs


def is_dns1123_subdomain(v: str) -> list[str]:
    """Problems of ``v`` as an RFC 1123 subdomain (IsDNS1123Subdomain); empty when valid."""
    errs = []
    if len(v) > 253:
        errs.append(_max_len_err(253))
    if not _DNS1123_SUBDOMAIN.match(v):
        errs.append(DNS1123_SUBDOMAIN_ERR)
    return errs


def is_dns1035_label(v: str) -> list[str]:
    """Problems of ``v`` as an RFC 1035 label (IsDNS1035Label; Service names)."""
    errs = []
    if len(v) > 63:
        errs.append(_max_len_err(63))
    if not _DNS1035_LABEL.match(v):
        errs.append(DNS1035_LABEL_ERR)
    return errs


def is_qualified_name(v: str) -> list[str]:
    """Problems of ``v`` as a qualified name ``[prefix/]name`` (label and annotation keys)."""
    parts = v.split("/")
    if len(parts) == 1:
        name = parts[0]
        prefix = None
    elif len(parts) == 2:
        prefix, name = parts
    else:
        return ["a qualified name " + QUALIFIED_NAME_ERR + " with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"]
    errs: list[str] = []
    if prefix is not None:
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len_err(63))
    if name and not _QUALIFIED_NAME.match(name):
        errs.append("name part " + QUALIFIED_NAME_ERR)
    return errs


def is_valid_label_value(v: str) -> list[str]:
    """Problems of ``v`` as a label value (empty is valid)."""
    errs = []
    if len(v) > 63:
        errs.append(_max_len_err(63))
    if not _LABEL_VALUE.match(v):
        errs.append(LABEL_VALUE_ERR)
    return errs


# --------------------------------------------------------------------------- errors

def go_repr(value: object) -> str:
    """A value as Go's ``%v``/``%q``/``%#v`` prints it inside field errors: strings
    quoted, numbers/bools bare, maps ``map[string]string{"a":"b"}`` with sorted keys."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        if all(isinstance(v, str) for v in value.values()):
            inner = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(value.items()))
            return "map[string]string{" + inner + "}"
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


class ErrorList(list[dict[str, Any]]):
    """Collects StatusCause dicts; one method per field.ErrorType constructor."""

    def _add(self, reason: str, path: str, body: str) -> None:
        self.append({"reason": reason, "message": body, "field": path})

    def required(self, path: str, detail: str = "") -> None:
        self._add("FieldValueRequired", path, "Required value" + (f": {detail}" if detail else ""))

    def invalid(self, path: str, value: object, detail: str = "") -> None:
        self._add("FieldValueInvalid", path, f"Invalid value: {go_repr(value)}" + (f": {detail}" if detail else ""))

    def not_supported(self, path: str, value: object, supported: list[str]) -> None:
        detail = "supported values: " + ", ".join(json.dumps(s) for s in supported) if supported else ""
        self._add("FieldValueNotSupported", path,
                  f"Unsupported value: {go_repr(value)}" + (f": {detail}" if detail else ""))

    def forbidden(self, path: str, detail: str = "") -> None:
        self._add("FieldValueForbidden", path, "Forbidden" + (f": {detail}" if detail else ""))

    def duplicate(self, path: str, value: object) -> None:
        self._add("FieldValueDuplicate", path, f"Duplicate value: {go_repr(value)}")

    def too_long(self, path: str, max_bytes: int) -> None:
        self._add("FieldValueTooLong", path, f"Too long: must have at most {max_bytes} bytes")

    def not_found(self, path: str, value: object) -> None:
        self._add("FieldValueNotFound", path, f"Not found: {go_repr(value)}")

    def type_invalid(self, path: str, value: object, detail: str) -> None:
        self._add("FieldValueTypeInvalid", path, f"Invalid value: {go_repr(value)}: {detail}")


# --------------------------------------------------------------------------- metadata

def validate_labels(labels: object, path: str, errs: ErrorList) -> None:
    """Label keys must be qualified names, values valid label values (ValidateLabels)."""
    if labels is None:
        return
    if not isinstance(labels, dict):
        errs.invalid(path, labels, "must be a map of string keys to string values")
        return
    for k, v in labels.items():
        for m in is_qualified_name(str(k)):
            errs.invalid(path, k, m)
        if not isinstance(v, str):
            errs.invalid(path, v, "label values must be strings")
            continue
        for m in is_valid_label_value(v):
            errs.invalid(path, v, m)


def validate_annotations(ann: object, path: str, errs: ErrorList) -> None:
    """Annotation keys must be qualified names (lower-cased check, as Kubernetes does);
    total size of keys + values at most 256 KiB (ValidateAnnotations)."""
    if ann is None:
        return
    if not isinstance(ann, dict):
        errs.invalid(path, ann, "must be a map of string keys to string values")
        return
    total = 0
    for k, v in ann.items():
        for m in is_qualified_name(str(k).lower()):
            errs.invalid(path, k, m)
        total += len(str(k)) + len(v if isinstance(v, str) else json.dumps(v))
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT)


def validate_object_meta(meta: object, errs: ErrorList, old_meta: dict[str, Any] | None = None, *,
                         namespaced: bool = True, name_rule: NameRule = is_dns1123_subdomain) -> None:
    """metadata.name / generateName / namespace / labels / annotations (ValidateObjectMeta).

    ``namespaced``: the kind's scope (a namespace required, or forbidden); ``name_rule``:
    the kind's name rule (the strategy's nameFn; RFC 1123 subdomain by default).
    ``old_meta`` (on update) makes name, namespace, uid and creationTimestamp immutable.
    """
    if not isinstance(meta, dict):
        errs.required("metadata", "")
        return
    rule = name_rule
    name = meta.get("name") or ""
    gen = meta.get("generateName") or ""
    if gen:
        masked = gen[:-1] if gen.endswith("-") else gen
        for m in rule(masked):
            errs.invalid("metadata.generateName", gen, m)
    if not name:
        if not gen:
            errs.required("metadata.name", "name or generateName is required")
    elif not isinstance(name, str):
        errs.invalid("metadata.name", name, "must be a string")
    else:
        for m in rule(name):
            errs.invalid("metadata.name", name, m)
    ns = meta.get("namespace") or ""
    if namespaced:
        if not ns:
            errs.required("metadata.namespace", "")
        else:
            for m in is_dns1123_label(ns):
                errs.invalid("metadata.namespace", ns, m)
    elif ns:
        errs.forbidden("metadata.namespace", "not allowed on this type")
    validate_labels(meta.get("labels"), "metadata.labels", errs)
    validate_annotations(meta.get("annotations"), "metadata.annotations", errs)
    if old_meta is not None:
        for f in ("name", "namespace", "uid", "creationTimestamp"):
            if f == "name" and not old_meta.get("name"):
                continue
            if old_meta.get(f) and meta.get(f) and meta.get(f) != old_meta.get(f):
                errs.invalid(f"metadata.{f}", meta.get(f), "field is immutable")


# --------------------------------------------------------------------------- pod spec

RESTART_POLICIES = ["Always", "OnFailure", "Never"]
DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
PROTOCOLS = ["SCTP", "TCP", "UDP"]
TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
TOLERATION_OPERATORS = ["Equal", "Exists"]
TERMINATION_MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"]
NODE_SELECTOR_OPERATORS = ["DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"]
LABEL_SELECTOR_OPERATORS = ["DoesNotExist", "Exists", "In", "NotIn"]
INT32_MAX = 2147483647


def _is_int(v: object) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def _validate_port_number(v: object, path: str, errs: ErrorList) -> None:
    if not _is_int(v) or not 1 <= v <= 65535:
        errs.invalid(path, v, "must be between 1 and 65535, inclusive")


def _canonical(q: object) -> str:
    """Quantity.String(): canonical text, binary suffixes kept for binary input."""
    return format_quantity(parse_quantity(q), binary=isinstance(q, str) and q.endswith("i"))  # type: ignore[arg-type]


def _validate_resources(res: object, path: str, errs: ErrorList) -> None:
    if res is None:
        return
    if not isinstance(res, dict):
        errs.invalid(path, res, "must be an object")
        return
    parsed: dict[str, dict[str, Fraction]] = {}
    for section in ("limits", "requests"):
        vals = res.get(section) or {}
        if not isinstance(vals, dict):
            errs.invalid(f"{path}.{section}", vals, "must be a map of resource names to quantities")
            continue
        parsed[section] = {}
        for rname, q in vals.items():
            p = f"{path}.{section}[{rname}]"
            try:
                qv = parse_quantity(q)
            except ValueError as e:
                errs.invalid(p, q, str(e))
                continue
            if qv < 0:
                errs.invalid(p, q, "must be greater than or equal to 0")
                continue
            parsed[section][rname] = qv
            if rname == "memory" or rname == "cpu" or "/" in rname or rname.startswith("hugepages-") \
                    or rname == "ephemeral-storage":
                continue
            errs.invalid(f"{path}.{section}[{rname}]", rname,
                         "must be a standard resource type or fully qualified")
    for rname, rq in parsed.get("requests", {}).items():
        lim = parsed.get("limits", {}).get(rname)
        if lim is not None and rq > lim:
            errs.invalid(f"{path}.requests", _canonical((res.get("requests") or {}).get(rname)),
                         f"must be less than or equal to {rname} limit of "
                         f"{_canonical((res.get('limits') or {}).get(rname))}")


def _validate_env(env: object, path: str, errs: ErrorList) -> None:
    if env is None:
        return
    if not isinstance(env, list):
        errs.invalid(path, env, "must be a list")
        return
    for i, e in enumerate(env):
        p = f"{path}[{i}]"
        if not isinstance(e, dict):
            errs.invalid(p, e, "must be an object")
            continue
        n = e.get("name") or ""
        if not n:
            errs.required(f"{p}.name", "")
        elif not _ENV_VAR_NAME.match(n) or n[0].isdigit():
            errs.invalid(f"{p}.name", n, ENV_VAR_NAME_ERR)


def _validate_container(c: object, path: str, errs: ErrorList, volumes: set[str], names: set[str]) -> None:
    if not isinstance(c, dict):
        errs.invalid(path, c, "must be an object")
        return
    name = c.get("name") or ""
    if not name:
        errs.required(f"{path}.name", "")
    else:
        for m in is_dns1123_label(str(name)):
            errs.invalid(f"{path}.name", name, m)
        if name in names:
            errs.duplicate(f"{path}.name", name)
        names.add(name)
    if not c.get("image"):
        errs.required(f"{path}.image", "")
    elif not isinstance(c["image"], str) or c["image"].strip() != c["image"]:
        errs.invalid(f"{path}.image", c["image"], "must not have leading or trailing whitespace")
    pp = c.get("imagePullPolicy")
    if pp is not None and pp not in PULL_POLICIES:
        errs.not_supported(f"{path}.imagePullPolicy", pp, PULL_POLICIES)
    tmp = c.get("terminationMessagePolicy")
    if tmp is not None and tmp not in TERMINATION_MESSAGE_POLICIES:
        errs.not_supported(f"{path}.terminationMessagePolicy", tmp, TERMINATION_MESSAGE_POLICIES)
    ports = c.get("ports") or []
    port_names: set[str] = set()
    if not isinstance(ports, list):
        errs.invalid(f"{path}.ports", ports, "must be a list")
        ports = []
    for i, p in enumerate(ports):
        pth = f"{path}.ports[{i}]"
        if not isinstance(p, dict):
            errs.invalid(pth, p, "must be an object")
            continue
        if p.get("containerPort") in (None, 0):
            errs.required(f"{pth}.containerPort", "")
        else:
            _validate_port_number(p.get("containerPort"), f"{pth}.containerPort", errs)
        if p.get("hostPort") not in (None, 0):
            _validate_port_number(p.get("hostPort"), f"{pth}.hostPort", errs)
        proto = p.get("protocol")
        if proto is not None and proto not in PROTOCOLS:
            errs.not_supported(f"{pth}.protocol", proto, PROTOCOLS)
        pn = p.get("name")
        if pn:
            if len(pn) > 15 or not re.match(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$", pn) or "--" in pn \
                    or not re.search("[a-z]", pn):
                errs.invalid(f"{pth}.name", pn, "must be no more than 15 characters, contain only lowercase "
                             "alphanumeric characters or '-', contain at least one letter, and not start or "
                             "end with '-' or contain '--'" if len(pn) <= 15 else _max_len_err(15))
            elif pn in port_names:
                errs.duplicate(f"{pth}.name", pn)
            port_names.add(pn)
    _validate_env(c.get("env"), f"{path}.env", errs)
    _validate_resources(c.get("resources"), f"{path}.resources", errs)
    for i, vm in enumerate(c.get("volumeMounts") or []):
        pth = f"{path}.volumeMounts[{i}]"
        if not isinstance(vm, dict):
            errs.invalid(pth, vm, "must be an object")
            continue
        if not vm.get("name"):
            errs.required(f"{pth}.name", "")
        elif vm["name"] not in volumes:
            errs.not_found(f"{pth}.name", vm["name"])
        if not vm.get("mountPath"):
            errs.required(f"{pth}.mountPath", "")


def _validate_node_selector_requirement(r: object, path: str, errs: ErrorList) -> None:
    if not isinstance(r, dict):
        errs.invalid(path, r, "must be an object")
        return
    op = r.get("operator")
    vals = r.get("values") or []
    if op in ("In", "NotIn"):
        if not vals:
            errs.required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
    elif op in ("Exists", "DoesNotExist"):
        if vals:
            errs.forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
    elif op in ("Gt", "Lt"):
        if len(vals) != 1:
            errs.required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'")
    else:
        errs.invalid(f"{path}.operator", op, "not a valid selector operator")
    for m in is_qualified_name(str(r.get("key", ""))):
        errs.invalid(f"{path}.key", r.get("key", ""), m)


def _validate_label_selector(sel: object, path: str, errs: ErrorList) -> None:
    """metav1.LabelSelector (ValidateLabelSelector)."""
    if sel is None:
        return
    if not isinstance(sel, dict):
        errs.invalid(path, sel, "must be an object")
        return
    validate_labels(sel.get("matchLabels"), f"{path}.matchLabels", errs)
    for i, r in enumerate(sel.get("matchExpressions") or []):
        p = f"{path}.matchExpressions[{i}]"
        if not isinstance(r, dict):
            errs.invalid(p, r, "must be an object")
            continue
        op = r.get("operator")
        vals = r.get("values") or []
        if op in ("In", "NotIn"):
            if not vals:
                errs.required(f"{p}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        elif op in ("Exists", "DoesNotExist"):
            if vals:
                errs.forbidden(f"{p}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        else:
            errs.invalid(f"{p}.operator", op, "not a valid selector operator")
        for m in is_qualified_name(str(r.get("key", ""))):
            errs.invalid(f"{p}.key", r.get("key", ""), m)


def validate_label_selector(sel: object, path: str, errs: ErrorList) -> None:
    """metav1.LabelSelector at ``path`` (``ValidateLabelSelector``, apimachinery
    ``pkg/apis/meta/v1/validation``): matchLabels as labels, matchExpressions' operators,
    values and keys; errors into ``errs``."""
    _validate_label_selector(sel, path, errs)


def _validate_affinity(aff: object, path: str, errs: ErrorList) -> None:
    if aff is None:
        return
    if not isinstance(aff, dict):
        errs.invalid(path, aff, "must be an object")
        return
    na = aff.get("nodeAffinity")
    if isinstance(na, dict):
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        rp = f"{path}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        if isinstance(req, dict):
            terms = req.get("nodeSelectorTerms") or []
            if not terms:
                errs.required(f"{rp}.nodeSelectorTerms", "must have at least one node selector term")
            for i, t in enumerate(terms):
                tp = f"{rp}.nodeSelectorTerms[{i}]"
                for j, r in enumerate((t or {}).get("matchExpressions") or []):
                    _validate_node_selector_requirement(r, f"{tp}.matchExpressions[{j}]", errs)
                for j, r in enumerate((t or {}).get("matchFields") or []):
                    fp = f"{tp}.matchFields[{j}]"
                    if isinstance(r, dict) and r.get("key") != "metadata.name":
                        errs.invalid(f"{fp}.key", r.get("key"), "not a valid field selector key")
                    elif isinstance(r, dict) and (r.get("operator") not in ("In", "NotIn")
                                                  or len(r.get("values") or []) != 1):
                        errs.invalid(f"{fp}.operator" if r.get("operator") not in ("In", "NotIn")
                                     else f"{fp}.values", r.get("operator"),
                                     "must be 'In' or 'NotIn' with exactly one value")
        pref = na.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        for i, p in enumerate(pref):
            pp = f"{path}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            w = (p or {}).get("weight")
            if not _is_int(w) or not 1 <= w <= 100:
                errs.invalid(f"{pp}.weight", w, "must be in the range 1-100")
            for j, r in enumerate(((p or {}).get("preference") or {}).get("matchExpressions") or []):
                _validate_node_selector_requirement(r, f"{pp}.preference.matchExpressions[{j}]", errs)
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = aff.get(kind)
        if not isinstance(pa, dict):
            continue
        for i, term in enumerate(pa.get("requiredDuringSchedulingIgnoredDuringExecution") or []):
            tp = f"{path}.{kind}.requiredDuringSchedulingIgnoredDuringExecution[{i}]"
            if not (term or {}).get("topologyKey"):
                errs.required(f"{tp}.topologyKey", "can not be empty")
            _validate_label_selector((term or {}).get("labelSelector"), f"{tp}.labelSelector", errs)
        for i, wt in enumerate(pa.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            tp = f"{path}.{kind}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            w = (wt or {}).get("weight")
            if not _is_int(w) or not 1 <= w <= 100:
                errs.invalid(f"{tp}.weight", w, "must be in the range 1-100")
            term = (wt or {}).get("podAffinityTerm") or {}
            if not term.get("topologyKey"):
                errs.required(f"{tp}.podAffinityTerm.topologyKey", "can not be empty")
            _validate_label_selector(term.get("labelSelector"), f"{tp}.podAffinityTerm.labelSelector", errs)


def _validate_tolerations(tols: object, path: str, errs: ErrorList) -> None:
    if tols is None:
        return
    if not isinstance(tols, list):
        errs.invalid(path, tols, "must be a list")
        return
    for i, t in enumerate(tols):
        p = f"{path}[{i}]"
        if not isinstance(t, dict):
            errs.invalid(p, t, "must be an object")
            continue
        key = t.get("key") or ""
        if key:
            for m in is_qualified_name(key):
                errs.invalid(f"{p}.key", key, m)
        op = t.get("operator") or "Equal"
        if not key and op != "Exists":
            errs.invalid(f"{p}.operator", op, "operator must be Exists when `key` is empty, which means \"match "
                         "all values and all keys\"")
        if op == "Exists" and t.get("value"):
            errs.invalid(f"{p}.operator", t.get("value"), "value must be empty when `operator` is 'Exists'")
        elif op not in TOLERATION_OPERATORS:
            errs.not_supported(f"{p}.operator", op, TOLERATION_OPERATORS)
        eff = t.get("effect")
        if eff:
            if eff not in TAINT_EFFECTS:
                errs.not_supported(f"{p}.effect", eff, TAINT_EFFECTS)
        if t.get("tolerationSeconds") is not None and eff != "NoExecute":
            errs.invalid(f"{p}.effect", eff, "effect must be 'NoExecute' when `tolerationSeconds` is set")


def validate_pod_spec(spec: object, path: str, errs: ErrorList) -> None:
    """Pod spec rules (ValidatePodSpec): containers required, unique DNS-1123 names across
    init and app containers, image required, ports, resources, restartPolicy, dnsPolicy,
    nodeSelector, affinity, tolerations, volumes, activeDeadlineSeconds."""
    if not isinstance(spec, dict):
        errs.required(path, "")
        return
    volumes: set[str] = set()
    for i, v in enumerate(spec.get("volumes") or []):
        vp = f"{path}.volumes[{i}]"
        vn = (v or {}).get("name") if isinstance(v, dict) else None
        if not vn:
            errs.required(f"{vp}.name", "")
            continue
        for m in is_dns1123_label(vn):
            errs.invalid(f"{vp}.name", vn, m)
        if vn in volumes:
            errs.duplicate(f"{vp}.name", vn)
        volumes.add(vn)
    names: set[str] = set()
    containers = spec.get("containers")
    if not containers:
        errs.required(f"{path}.containers", "")
    elif not isinstance(containers, list):
        errs.invalid(f"{path}.containers", containers, "must be a list")
        containers = []
    for i, c in enumerate(spec.get("initContainers") or []):
        _validate_container(c, f"{path}.initContainers[{i}]", errs, volumes, names)
    for i, c in enumerate(containers or []):
        _validate_container(c, f"{path}.containers[{i}]", errs, volumes, names)
    rp = spec.get("restartPolicy")
    if rp is not None and rp not in RESTART_POLICIES:
        errs.not_supported(f"{path}.restartPolicy", rp, RESTART_POLICIES)
    dp = spec.get("dnsPolicy")
    if dp is not None and dp not in DNS_POLICIES:
        errs.not_supported(f"{path}.dnsPolicy", dp, DNS_POLICIES)
    validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector", errs)
    nn = spec.get("nodeName")
    if nn:
        for m in is_dns1123_subdomain(str(nn)):
            errs.invalid(f"{path}.nodeName", nn, m)
    ads = spec.get("activeDeadlineSeconds")
    if ads is not None and (not _is_int(ads) or not 1 <= ads <= INT32_MAX):
        errs.invalid(f"{path}.activeDeadlineSeconds", ads, f"must be between 1 and {INT32_MAX}, inclusive")
    tgp = spec.get("terminationGracePeriodSeconds")
    if tgp is not None and not _is_int(tgp):
        errs.invalid(f"{path}.terminationGracePeriodSeconds", tgp, "must be an integer")
    _validate_affinity(spec.get("affinity"), f"{path}.affinity", errs)
    _validate_tolerations(spec.get("tolerations"), f"{path}.tolerations", errs)
    sa = spec.get("serviceAccountName")
    if sa:
        for m in is_dns1123_subdomain(str(sa)):
            errs.invalid(f"{path}.serviceAccountName", sa, m)
    prio = spec.get("priority")
    if prio is not None and not _is_int(prio):
        errs.invalid(f"{path}.priority", prio, "must be an integer")


POD_UPDATE_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
)


def _tolerations_only_added(old: list[Any], new: list[Any]) -> bool:
    """Every old toleration is still present (tolerationSeconds may only shrink)."""
    def key(t: dict[str, Any]) -> tuple[Any, ...]:
        return (t.get("key", ""), t.get("operator") or "Equal", t.get("value", ""), t.get("effect", ""))
    new_by_key: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for t in new or []:
        if isinstance(t, dict):
            new_by_key.setdefault(key(t), []).append(t)
    for t in old or []:
        if not isinstance(t, dict):
            continue
        cands = new_by_key.get(key(t))
        if not cands:
            return False
        ots = t.get("tolerationSeconds")
        if ots is not None and not any(c.get("tolerationSeconds") is not None
                                       and c["tolerationSeconds"] <= ots for c in cands):
            return False
    return True


def _validate_pod_update(new: dict[str, Any], old: dict[str, Any], errs: ErrorList) -> None:
    """ValidatePodUpdate: only images, activeDeadlineSeconds (set, or lowered),
    tolerations (additions), terminationGracePeriodSeconds (negative → 1) may change."""
    ns, os_ = copy.deepcopy(new.get("spec") or {}), copy.deepcopy(old.get("spec") or {})
    if not isinstance(ns, dict) or not isinstance(os_, dict):
        return
    for key in ("containers", "initContainers"):
        nl, ol = ns.get(key) or [], os_.get(key) or []
        if isinstance(nl, list) and isinstance(ol, list) and len(nl) == len(ol):
            for nc, oc in zip(nl, ol):
                if isinstance(nc, dict) and isinstance(oc, dict):
                    nc["image"] = oc.get("image")
    oads, nads = os_.get("activeDeadlineSeconds"), ns.get("activeDeadlineSeconds")
    if nads is not None and (oads is None or (_is_int(nads) and _is_int(oads) and nads <= oads)):
        ns["activeDeadlineSeconds"] = oads
    elif oads is not None and nads is None:
        errs.invalid("spec.activeDeadlineSeconds", None, "must not update from a positive integer to nil value")
        ns["activeDeadlineSeconds"] = oads
    if _tolerations_only_added(os_.get("tolerations") or [], ns.get("tolerations") or []):
        ns["tolerations"] = os_.get("tolerations")
    otg, ntg = os_.get("terminationGracePeriodSeconds"), ns.get("terminationGracePeriodSeconds")
    if _is_int(otg) and otg < 0 and ntg == 1:
        ns["terminationGracePeriodSeconds"] = otg
    # spec.nodeName may be set once (by a Binding); a PUT may carry the bound value.
    if not os_.get("nodeName") and ns.get("nodeName"):
        ns["nodeName"] = os_.get("nodeName")
    # scheduling gates may only be removed (KEP-3521; pkg/apis/core/validation
    # ValidatePodUpdate: "only deletion is allowed, but found new scheduling gate")
    ogates, ngates = os_.get("schedulingGates") or [], ns.get("schedulingGates") or []
    if isinstance(ogates, list) and isinstance(ngates, list):
        added = [g for g in ngates if g not in ogates]
        if added:
            name = added[0].get("name") if isinstance(added[0], dict) else added[0]
            errs.forbidden("spec.schedulingGates",
                           f"only deletion is allowed, but found new scheduling gate '{name}'")
        ns["schedulingGates"] = os_.get("schedulingGates")
    def norm(d: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in d.items() if v not in (None, [], {})}
    if norm(ns) != norm(os_):
        errs.forbidden("spec", POD_UPDATE_FORBIDDEN + "\n" + spec_diff(norm(os_), norm(ns), "core.PodSpec"))


def _go_field(name: str) -> str:
    """A JSON field name as its Go struct field is spelled (``nodeName`` → ``NodeName``)."""
    return name[:1].upper() + name[1:]


def _diff_value(v: Any) -> str:
    if v is None:
        return "nil"
    return json.dumps(v, separators=(", ", ": "), sort_keys=False)


def spec_diff(old: Any, new: Any, type_name: str) -> str:
    """A readable diff of two specs in the layout of go-cmp's ``cmp.Diff(old, new)``, which
    ``ValidatePodUpdate`` (``pkg/apis/core/validation/validation.go``) appends to its
    Forbidden message: the struct's fields in order, unchanged runs summarised as
    ``... // N identical fields``, a changed field as a ``-`` line (old value) and a ``+``
    line (new value), objects present on both sides walked field by field. Values are
    printed as JSON (``nil`` when absent); returns the lines joined by newlines."""
    lines: list[str] = [f"  {type_name}{{"]

    def walk(o: dict[str, Any], n: dict[str, Any], depth: int) -> None:
        ind = "\t" * depth
        same = 0

        def flush() -> None:
            nonlocal same
            if same:
                lines.append(f"  {ind}... // {same} identical field{'s' if same > 1 else ''}")
                same = 0
        keys = list(o) + [k for k in n if k not in o]
        for k in keys:
            ov, nv = o.get(k), n.get(k)
            if ov == nv:
                same += 1
                continue
            flush()
            f = _go_field(k)
            if isinstance(ov, dict) and isinstance(nv, dict):
                lines.append(f"  {ind}{f}: {{")
                walk(ov, nv, depth + 1)
                lines.append(f"  {ind}}},")
            elif isinstance(ov, list) and isinstance(nv, list) and len(ov) == len(nv) \
                    and all(isinstance(x, dict) for x in ov + nv):
                lines.append(f"  {ind}{f}: {{")
                for i, (a, b) in enumerate(zip(ov, nv)):
                    if a == b:
                        lines.append(f"  {ind}\t{{...}}, // [{i}] identical")
                        continue
                    lines.append(f"  {ind}\t{{")
                    walk(a, b, depth + 2)
                    lines.append(f"  {ind}\t}},")
                lines.append(f"  {ind}}},")
            else:
                lines.append(f"- {ind}{f}: {_diff_value(ov)},")
                lines.append(f"+ {ind}{f}: {_diff_value(nv)},")
        flush()
    walk(old if isinstance(old, dict) else {}, new if isinstance(new, dict) else {}, 1)
    lines.append("  }")
    return "\n".join(lines)


# --------------------------------------------------------------------------- per kind

def validate_pod(obj: dict[str, Any], old: dict[str, Any] | None, errs: ErrorList) -> None:
    """Pod create and update validation into ``errs`` (``pkg/apis/core/validation`` ValidatePodCreate / ValidatePodUpdate; ``old`` None on create)."""
    if old is not None and obj.get("spec") == old.get("spec"):
        # an update leaving the stored (validated) spec as it is — status and metadata
        # writes, the bulk of pod traffic: nothing in the spec to (re)check; the status
        # strategy resets the spec anyway (pkg/registry/core/pod/strategy.go podStatusStrategy)
        return
    validate_pod_spec(obj.get("spec"), "spec", errs)
    if old is not None:
        _validate_pod_update(obj, old, errs)


def _validate_template(spec: dict[str, Any], errs: ErrorList, restart_always: bool = True) -> dict[str, Any] | None:
    tpl = spec.get("template")
    if not isinstance(tpl, dict):
        errs.required("spec.template", "")
        return None
    tmeta = tpl.get("metadata") or {}
    if isinstance(tmeta, dict):
        validate_labels(tmeta.get("labels"), "spec.template.metadata.labels", errs)
        validate_annotations(tmeta.get("annotations"), "spec.template.metadata.annotations", errs)
    validate_pod_spec(tpl.get("spec"), "spec.template.spec", errs)
    rp = (tpl.get("spec") or {}).get("restartPolicy") if isinstance(tpl.get("spec"), dict) else None
    if restart_always and rp is not None and rp != "Always" and rp in RESTART_POLICIES:
        errs.not_supported("spec.template.spec.restartPolicy", rp, ["Always"])
    if isinstance((tpl.get("spec") or {}), dict) and (tpl.get("spec") or {}).get("activeDeadlineSeconds") is not None:
        errs.forbidden("spec.template.spec.activeDeadlineSeconds",
                       "activeDeadlineSeconds in ReplicaSet is not Supported")
    return tpl


def _validate_replicas(spec: dict[str, Any], errs: ErrorList) -> None:
    for f in ("replicas", "minReadySeconds", "revisionHistoryLimit"):
        v = spec.get(f)
        if v is None:
            continue
        if not _is_int(v):
            errs.invalid(f"spec.{f}", v, "must be an integer")
        elif v < 0:
            errs.invalid(f"spec.{f}", v, "must be greater than or equal to 0")


def _selector_matches_template(selector_dict: dict[str, Any], tpl: dict[str, Any], errs: ErrorList, empty_msg: str) -> None:
    try:
        sel = selector_from_dict(selector_dict)
    except ValueError:
        return  # reported by _validate_label_selector
    if sel.empty():
        errs.invalid("spec.selector", selector_dict, empty_msg)
        return
    labels = ((tpl.get("metadata") or {}).get("labels")) or {}
    if not sel.matches(labels):
        errs.invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`")


def _validate_int_or_percent(v: object, path: str, errs: ErrorList) -> None:
    if isinstance(v, str):
        if not _PERCENT.match(v):
            errs.invalid(path, v, "a valid percent string must be a numeric string followed by an ending '%' "
                         "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")
        elif int(v[:-1]) > 100:
            errs.invalid(path, v, "must not be greater than 100%")
    elif _is_int(v):
        if v < 0:
            errs.invalid(path, v, "must be greater than or equal to 0")
    elif v is not None:
        errs.invalid(path, v, "must be an integer or percentage (e.g '5%')")


def _is_zero(v: object) -> bool:
    return v in (0, "0%", None)


def validate_apps_workload(kind: str, obj: dict[str, Any], old: dict[str, Any] | None, errs: ErrorList) -> None:
    """Deployment / ReplicaSet / StatefulSet / DaemonSet (apps/v1 validation)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        errs.required("spec", "")
        return
    if kind != "DaemonSet":
        _validate_replicas(spec, errs)
    sel = spec.get("selector")
    if sel is None:
        errs.required("spec.selector", "")
    else:
        _validate_label_selector(sel, "spec.selector", errs)
    tpl = _validate_template(spec, errs)
    if sel is not None and isinstance(sel, dict) and tpl is not None:
        _selector_matches_template(sel, tpl, errs, f"empty selector is invalid for {kind.lower()}")
    if kind == "Deployment":
        strategy = spec.get("strategy") or {}
        st = strategy.get("type")
        if st is not None and st not in ("Recreate", "RollingUpdate"):
            errs.not_supported("spec.strategy.type", st, ["Recreate", "RollingUpdate"])
        ru = strategy.get("rollingUpdate")
        if st == "Recreate" and ru is not None:
            errs.forbidden("spec.strategy.rollingUpdate",
                           "may not be specified when strategy `type` is 'Recreate'")
        elif isinstance(ru, dict):
            _validate_int_or_percent(ru.get("maxUnavailable"), "spec.strategy.rollingUpdate.maxUnavailable", errs)
            _validate_int_or_percent(ru.get("maxSurge"), "spec.strategy.rollingUpdate.maxSurge", errs)
            if _is_zero(ru.get("maxUnavailable")) and _is_zero(ru.get("maxSurge")) \
                    and "maxUnavailable" in ru and "maxSurge" in ru:
                errs.invalid("spec.strategy.rollingUpdate.maxUnavailable", ru.get("maxUnavailable"),
                             "may not be 0 when `maxSurge` is 0")
        pds = spec.get("progressDeadlineSeconds")
        mrs = spec.get("minReadySeconds") or 0
        if _is_int(pds) and _is_int(mrs) and pds <= mrs:
            errs.invalid("spec.progressDeadlineSeconds", pds,
                         "must be greater than minReadySeconds")
    if old is not None and isinstance(old.get("spec"), dict) and kind in ("Deployment", "ReplicaSet",
                                                                          "StatefulSet", "DaemonSet"):
        old_sel = old["spec"].get("selector")
        if old_sel is not None and sel is not None and old_sel != sel:
            errs.invalid("spec.selector", sel, "field is immutable")


def validate_replication_controller(obj: dict[str, Any], old: dict[str, Any] | None, errs: ErrorList) -> None:
    """ValidateReplicationControllerSpec: selector (a map) required and non-empty,
    template required and matching, replicas >= 0, restartPolicy Always."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        errs.required("spec", "")
        return
    _validate_replicas(spec, errs)
    sel = spec.get("selector")
    if not sel:
        errs.required("spec.selector", "")
    else:
        validate_labels(sel, "spec.selector", errs)
    tpl = _validate_template(spec, errs)
    if sel and isinstance(sel, dict) and tpl is not None:
        labels = ((tpl.get("metadata") or {}).get("labels")) or {}
        if not all(labels.get(k) == v for k, v in sel.items()):
            errs.invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`")


def validate_node(obj: dict[str, Any], old: dict[str, Any] | None, errs: ErrorList) -> None:
    """Node validation into ``errs`` (ValidateNode / ValidateNodeUpdate; ``old`` None on create)."""
    spec = obj.get("spec") or {}
    if isinstance(spec, dict):
        for i, t in enumerate(spec.get("taints") or []):
            p = f"spec.taints[{i}]"
            if not isinstance(t, dict):
                errs.invalid(p, t, "must be an object")
                continue
            if not t.get("key"):
                errs.required(f"{p}.key", "")
            else:
                for m in is_qualified_name(t["key"]):
                    errs.invalid(f"{p}.key", t["key"], m)
            if t.get("value"):
                for m in is_valid_label_value(t["value"]):
                    errs.invalid(f"{p}.value", t["value"], m)
            if not t.get("effect"):
                errs.required(f"{p}.effect", "")
            elif t["effect"] not in TAINT_EFFECTS:
                errs.not_supported(f"{p}.effect", t["effect"], TAINT_EFFECTS)


def validate_service(obj: dict[str, Any], old: dict[str, Any] | None, errs: ErrorList) -> None:
    """Service validation into ``errs`` (ValidateService / ValidateServiceUpdate; ``old`` None on create)."""
    spec = obj.get("spec") or {}
    if not isinstance(spec, dict):
        return
    types = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
    t = spec.get("type")
    if t is not None and t not in types:
        errs.not_supported("spec.type", t, types)
    ports = spec.get("ports") or []
    if not ports and t != "ExternalName" and spec.get("clusterIP") != "None":
        errs.required("spec.ports", "")
    for i, p in enumerate(ports):
        if isinstance(p, dict):
            _validate_port_number(p.get("port"), f"spec.ports[{i}].port", errs)
            proto = p.get("protocol")
            if proto is not None and proto not in PROTOCOLS:
                errs.not_supported(f"spec.ports[{i}].protocol", proto, PROTOCOLS)


def validate_configmap_like(obj: dict[str, Any], old: dict[str, Any] | None, errs: ErrorList) -> None:
    """ConfigMap / Secret data keys and immutability into ``errs`` (ValidateConfigMap, ValidateSecret and their Update forms)."""
    for section in ("data", "binaryData", "stringData"):
        data = obj.get(section)
        if isinstance(data, dict):
            for k in data:
                if not re.match(r"^[-._a-zA-Z0-9]+$", k) or len(k) > 253:
                    errs.invalid(f"{section}[{k}]", k, "a valid config key must consist of alphanumeric "
                                 "characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or "
                                 "'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")


def validate_deployment(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateDeployment (``pkg/apis/apps/validation/validation.go``)."""
    validate_apps_workload("Deployment", obj, old, errs)


def validate_replicaset(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateReplicaSet (``pkg/apis/apps/validation/validation.go``)."""
    validate_apps_workload("ReplicaSet", obj, old, errs)


def validate_statefulset(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateStatefulSet (``pkg/apis/apps/validation/validation.go``). The pod template's
    volume mounts may name ``volumeClaimTemplates`` (the controller adds those volumes to
    each pod: ValidatePodTemplateSpecForStatefulSet does not check mounts against the
    template's own volumes), so the template is checked with a volume per claim template."""
    spec: Any = obj.get("spec")
    claims: Any = spec.get("volumeClaimTemplates") if isinstance(spec, dict) else None
    tpl: Any = spec.get("template") if isinstance(spec, dict) else None
    pod_spec: Any = tpl.get("spec") if isinstance(tpl, dict) else None
    if isinstance(claims, list) and claims and isinstance(pod_spec, dict):
        raw_vols = pod_spec.get("volumes")
        vols: list[Any] = raw_vols if isinstance(raw_vols, list) else []
        have = {v.get("name") for v in vols if isinstance(v, dict)}
        extra = []
        for c in claims:
            name = (c.get("metadata") or {}).get("name") if isinstance(c, dict) else None
            if isinstance(name, str) and name and name not in have:
                have.add(name)
                extra.append({"name": name, "persistentVolumeClaim": {"claimName": name}})
        if extra:
            obj = {**obj, "spec": {**spec, "template": {**tpl, "spec": {**pod_spec, "volumes": [*vols, *extra]}}}}
    validate_apps_workload("StatefulSet", obj, old, errs)


def validate_daemonset(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateDaemonSet (``pkg/apis/apps/validation/validation.go``)."""
    validate_apps_workload("DaemonSet", obj, old, errs)


# --------------------------------------------------------------------------- shared with the group modules

#: tolerations as ValidateTolerations checks them (RuntimeClass scheduling uses it too)
validate_tolerations = _validate_tolerations
#: an IntOrString that is a non-negative integer or a percentage (ValidatePositiveIntOrPercent)
validate_int_or_percent = _validate_int_or_percent
