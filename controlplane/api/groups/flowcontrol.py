"""``flowcontrol.apiserver.k8s.io/v1``: FlowSchema and PriorityLevelConfiguration (Kubernetes v1.32).

Stored and validated. The apiserver classifies requests with its bootstrap configuration
(``components/apiserver/flowcontrol.py``) and writes that configuration as these objects
at start, as kube-apiserver's APF configuration controller does; objects written by
clients are stored but do not change how requests are classified.

Facts from ``pkg/apis/flowcontrol/validation/validation.go`` (ValidateFlowSchema:
matchingPrecedence 1-10000 (1 only for ``exempt``), a priority level reference, rules with
subjects of one kind and at least one resource or non-resource rule;
ValidatePriorityLevelConfiguration: type Exempt exactly for ``exempt``, else Limited with
the matching section, queuing bounds, lendable/borrowing percentages; the mandatory
objects' fixed specs are not enforced),
``pkg/apis/flowcontrol/v1/defaults.go`` (matchingPrecedence 1000, nominalConcurrencyShares
30, lendablePercent 0, queues 64, handSize 8, queueLengthLimit 50),
``pkg/registry/flowcontrol/*/strategy.go`` (generation tracked, ``status`` subresources,
status reset on create) and ``pkg/printers/internalversion/printers.go``
(printFlowSchema, printPriorityLevelConfiguration).
"""

from __future__ import annotations

from typing import Any

from controlplane.api import listfields
from controlplane.api.groups import columndocs
from controlplane.api.groups.common import (
    AGE_COL,
    NAME_COL,
    age,
    col,
    dig,
    go_strings,
    invalid_raw,
    name,
    objs,
    strs,
    sub,
)
from controlplane.api.registry import JSON, KindSchema, Printer, Resource, Strategy
from controlplane.api.validators import ErrorList, go_repr

GROUP = "flowcontrol.apiserver.k8s.io"
#: the annotation the bootstrap objects carry (the config controller keeps their spec)
AUTOUPDATE_ANNOTATION = "apf.kubernetes.io/autoupdate-spec"

_CONDITION = ("A condition of a flow-control object.", {
    "type": ("string", "Type of the condition (Dangling, ConcurrencyShared...)."),
    "status": ("string", "True, False or Unknown."),
    "lastTransitionTime": ("Time", "When the status last changed."),
    "reason": ("string", "Short CamelCase reason."),
    "message": ("string", "Human-readable detail."),
})
TYPES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "FlowSchemaSpec": ("Which requests a FlowSchema matches and the priority level they get.", {
        "priorityLevelConfiguration": ("PriorityLevelConfigurationReference", "The priority level. Required."),
        "matchingPrecedence": ("int32", "Lower values are tried first (1-10000, default 1000)."),
        "distinguisherMethod": ("FlowDistinguisherMethod", "How requests are split into flows; unset: one flow."),
        "rules": ("[]PolicyRulesWithSubjects", "The requests matched (any rule)."),
    }),
    "PriorityLevelConfigurationReference": ("A reference to a priority level.", {
        "name": ("string", "Name of the PriorityLevelConfiguration. Required."),
    }),
    "FlowDistinguisherMethod": ("How flows are told apart.", {
        "type": ("string", "ByUser or ByNamespace. Required."),
    }),
    "PolicyRulesWithSubjects": ("Subjects and the requests of theirs that match.", {
        "subjects": ("[]FlowcontrolSubject", "Users, groups or service accounts; at least one."),
        "resourceRules": ("[]ResourcePolicyRule", "Resource requests matched."),
        "nonResourceRules": ("[]NonResourcePolicyRule", "Non-resource requests matched."),
    }),
    "FlowcontrolSubject": ("A user, group or service account.", {
        "kind": ("string", "User, Group or ServiceAccount. Required."),
        "user": ("UserSubject", "The user (kind User)."),
        "group": ("GroupSubject", "The group (kind Group)."),
        "serviceAccount": ("ServiceAccountSubject", "The service account (kind ServiceAccount)."),
    }),
    "UserSubject": ("A user.", {"name": ("string", "User name; * for all.")}),
    "GroupSubject": ("A group.", {"name": ("string", "Group name; * for all.")}),
    "ServiceAccountSubject": ("A service account.", {
        "namespace": ("string", "Namespace of the account. Required."),
        "name": ("string", "Name of the account; * for all."),
    }),
    "ResourcePolicyRule": ("Resource requests matched by verb, group, resource and namespace.", {
        "verbs": ("[]string", "Verbs; * for all. Required."),
        "apiGroups": ("[]string", "API groups; * for all. Required."),
        "resources": ("[]string", "Resources (and subresources); * for all. Required."),
        "clusterScope": ("boolean", "Match requests on cluster-scoped resources."),
        "namespaces": ("[]string", "Namespaces; * for all."),
    }),
    "NonResourcePolicyRule": ("Non-resource requests matched by verb and URL.", {
        "verbs": ("[]string", "Verbs; * for all. Required."),
        "nonResourceURLs": ("[]string", "URL paths (a trailing * for prefixes). Required."),
    }),
    "FlowSchemaStatus": ("The observed state of a FlowSchema.", {
        "conditions": ("[]FlowSchemaCondition", "Dangling: whether the priority level exists."),
    }),
    "FlowSchemaCondition": _CONDITION,
    "PriorityLevelConfigurationSpec": ("The concurrency limits of a priority level.", {
        "type": ("string", "Exempt or Limited. Required."),
        "limited": ("LimitedPriorityLevelConfiguration", "Limits of a Limited level."),
        "exempt": ("ExemptPriorityLevelConfiguration", "Settings of an Exempt level."),
    }),
    "LimitedPriorityLevelConfiguration": ("The limits of a Limited priority level.", {
        "nominalConcurrencyShares": ("int32", "Share of the server's concurrency (default 30)."),
        "limitResponse": ("LimitResponse", "What happens to requests over the limit."),
        "lendablePercent": ("int32", "Percent of the seats other levels may borrow (0-100)."),
        "borrowingLimitPercent": ("int32", "Limit on seats borrowed from others, percent of the nominal."),
    }),
    "ExemptPriorityLevelConfiguration": ("The settings of an Exempt priority level.", {
        "nominalConcurrencyShares": ("int32", "Share of the server's concurrency (default 0)."),
        "lendablePercent": ("int32", "Percent of the seats other levels may borrow (0-100)."),
    }),
    "LimitResponse": ("What is done with requests over a level's limit.", {
        "type": ("string", "Queue or Reject. Required."),
        "queuing": ("QueuingConfiguration", "Queuing parameters (type Queue)."),
    }),
    "QueuingConfiguration": ("The fair queuing of a level.", {
        "queues": ("int32", "Number of queues (default 64)."),
        "handSize": ("int32", "Queues a flow is shuffle-sharded onto (default 8)."),
        "queueLengthLimit": ("int32", "Requests waiting per queue at most (default 50)."),
    }),
    "PriorityLevelConfigurationStatus": ("The observed state of a priority level.", {
        "conditions": ("[]PriorityLevelConfigurationCondition", "Conditions of the level."),
    }),
    "PriorityLevelConfigurationCondition": _CONDITION,
}

_MAP_TYPE = listfields.ListField("type", "merge", "map", ("type",))
_SET = listfields.ListField(None, "", "set")
listfields.declare(
    {"FlowSchema": {"spec": "FlowSchemaSpec", "status": "FlowSchemaStatus"},
     "PriorityLevelConfiguration": {"status": "PriorityLevelConfigurationStatus"}},
    {"FlowSchemaSpec": {"rules": listfields.ListField(list_type="atomic", elem="PolicyRulesWithSubjects")},
     "PolicyRulesWithSubjects": {"subjects": listfields.ATOMIC, "resourceRules": listfields.ListField(
         list_type="atomic", elem="ResourcePolicyRule"), "nonResourceRules": listfields.ListField(
         list_type="atomic", elem="NonResourcePolicyRule")},
     "ResourcePolicyRule": {"verbs": _SET, "apiGroups": _SET, "resources": _SET, "namespaces": _SET},
     "NonResourcePolicyRule": {"verbs": _SET, "nonResourceURLs": _SET},
     "FlowSchemaStatus": {"conditions": _MAP_TYPE},
     "PriorityLevelConfigurationStatus": {"conditions": _MAP_TYPE}})

# --------------------------------------------------------------------------- defaults


def default_flow_schema(obj: JSON) -> None:
    """SetDefaults_FlowSchemaSpec: matchingPrecedence 1000 when 0 or unset."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and not spec.get("matchingPrecedence"):
        spec["matchingPrecedence"] = 1000


def default_priority_level(obj: JSON) -> None:
    """SetDefaults_{Limited,Exempt}PriorityLevelConfiguration and SetDefaults_QueuingConfiguration."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    lim = spec.get("limited")
    if isinstance(lim, dict):
        if lim.get("nominalConcurrencyShares") is None:
            lim["nominalConcurrencyShares"] = 30
        lim.setdefault("lendablePercent", 0)
        q = dig(lim, "limitResponse", "queuing")
        if isinstance(q, dict):
            for f, v in (("queues", 64), ("handSize", 8), ("queueLengthLimit", 50)):
                if not q.get(f):
                    q[f] = v
    ex = spec.get("exempt")
    if isinstance(ex, dict):
        ex.setdefault("nominalConcurrencyShares", 0)
        ex.setdefault("lendablePercent", 0)

# --------------------------------------------------------------------------- validation


_SUBJECT_FIELDS = (("User", "user"), ("Group", "group"), ("ServiceAccount", "serviceAccount"))


def _validate_subject(s: JSON, path: str, errs: ErrorList) -> None:
    """ValidateFlowSchemaSubject: the member of the subject's kind required, the others forbidden."""
    kind = s.get("kind")
    own = dict(_SUBJECT_FIELDS).get(str(kind))
    if own is None:
        errs.not_supported(f"{path}.kind", kind or "", ["Group", "ServiceAccount", "User"])
        return
    member = s.get(own)
    if not isinstance(member, dict):
        errs.required(f"{path}.{own}", f"{own} is required when subject kind is '{kind}'")
    elif not member.get("name"):
        errs.required(f"{path}.{own}.name", "")
    if own == "serviceAccount" and isinstance(member, dict) and not member.get("namespace"):
        errs.required(f"{path}.serviceAccount.namespace", "must specify namespace for service account")
    for k, f in _SUBJECT_FIELDS:
        if f != own and s.get(f) is not None:
            errs.forbidden(f"{path}.{f}", f"{f} is forbidden when subject kind is not '{k}'")


def _validate_list(values: list[str], path: str, errs: ErrorList, required: str, what: str) -> None:
    if not values:
        errs.required(path, required)
    elif "*" in values and len(values) > 1:
        invalid_raw(errs, path, go_strings(values), f"if '*' is present, must not specify other {what}")


def validate_flow_schema(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateFlowSchema (ValidateFlowSchemaSpec)."""
    spec = sub(obj, "spec")
    mp = spec.get("matchingPrecedence")
    if isinstance(mp, int):
        if mp <= 0:
            errs.invalid("spec.matchingPrecedence", mp, "must be a positive value")
        if mp > 10000:
            errs.invalid("spec.matchingPrecedence", mp, "must not be greater than 10000")
        if mp == 1 and name(obj) != "exempt":
            errs.invalid("spec.matchingPrecedence", mp, "only the schema named 'exempt' may have matchingPrecedence 1")
    dm = spec.get("distinguisherMethod")
    if isinstance(dm, dict):
        t = dm.get("type")
        if t not in ("ByNamespace", "ByUser"):
            errs.append({"reason": "FieldValueNotSupported", "field": "spec.distinguisherMethod.type",
                         "message": f"Unsupported value: &flowcontrol.FlowDistinguisherMethod{{Type:{go_repr(t or '')}}}"
                                    ': supported values: "ByNamespace", "ByUser"'})
    if not sub(spec, "priorityLevelConfiguration").get("name"):
        errs.required("spec.priorityLevelConfiguration.name", "must reference a priority level")
    for i, rule in enumerate(objs(spec.get("rules"))):
        rp = f"spec.rules[{i}]"
        subjects = objs(rule.get("subjects"))
        if not subjects:
            errs.required(f"{rp}.subjects", "subjects must contain at least one value")
        for j, s in enumerate(subjects):
            _validate_subject(s, f"{rp}.subjects[{j}]", errs)
        rrules, nrules = objs(rule.get("resourceRules")), objs(rule.get("nonResourceRules"))
        if not rrules and not nrules:
            errs.required(rp, "at least one of resourceRules and nonResourceRules has to be non-empty")
        for j, r in enumerate(rrules):
            p = f"{rp}.resourceRules[{j}]"
            _validate_list(strs(r.get("verbs")), f"{p}.verbs", errs, "verbs must contain at least one value", "verbs")
            _validate_list(strs(r.get("apiGroups")), f"{p}.apiGroups", errs,
                           "resource rules must supply at least one api group", "api groups")
            _validate_list(strs(r.get("resources")), f"{p}.resources", errs,
                           "resource rules must supply at least one resource", "resources")
            if not r.get("clusterScope") and not strs(r.get("namespaces")):
                errs.required(f"{p}.namespaces", "resource rules that are not cluster scoped must supply at "
                                                 "least one namespace")
        for j, r in enumerate(nrules):
            p = f"{rp}.nonResourceRules[{j}]"
            _validate_list(strs(r.get("verbs")), f"{p}.verbs", errs, "verbs must contain at least one value", "verbs")
            _validate_list(strs(r.get("nonResourceURLs")), f"{p}.nonResourceURLs", errs,
                           "nonResourceURLs must contain at least one value", "non-resource URLs")


def _percent(v: object, path: str, errs: ErrorList) -> None:
    if isinstance(v, int) and not 0 <= v <= 100:
        errs.invalid(path, v, "must be between 0 and 100, inclusive")


def validate_priority_level(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidatePriorityLevelConfiguration (ValidatePriorityLevelConfigurationSpec)."""
    spec = sub(obj, "spec")
    t = spec.get("type")
    if (name(obj) == "exempt") != (t == "Exempt"):
        errs.invalid("spec.type", t or "", "type must be 'Exempt' if and only if name is 'exempt'")
    if t == "Limited":
        if spec.get("exempt") is not None:
            errs.forbidden("spec.exempt", "must be nil if the type is Limited")
        lim = spec.get("limited")
        if not isinstance(lim, dict):
            errs.required("spec.limited", "must not be empty when type is Limited")
            return
        ncs = lim.get("nominalConcurrencyShares")
        if isinstance(ncs, int) and ncs < 0:
            errs.invalid("spec.limited.nominalConcurrencyShares", ncs, "must be a non-negative integer")
        _percent(lim.get("lendablePercent"), "spec.limited.lendablePercent", errs)
        blp = lim.get("borrowingLimitPercent")
        if isinstance(blp, int) and blp < 0:
            errs.invalid("spec.limited.borrowingLimitPercent", blp, "if specified, must be a non-negative integer")
        lr = sub(lim, "limitResponse")
        lt = lr.get("type")
        if lt == "Queue":
            q = lr.get("queuing")
            if not isinstance(q, dict):
                errs.required("spec.limited.limitResponse.queuing", "must not be empty if limited.limitResponse.type is "
                                                                    "Limited")
                return
            qp = "spec.limited.limitResponse.queuing"
            queues, hand, qll = q.get("queues"), q.get("handSize"), q.get("queueLengthLimit")
            if isinstance(qll, int) and qll <= 0:
                errs.invalid(f"{qp}.queueLengthLimit", qll, "must be positive")
            if isinstance(queues, int) and queues <= 0:
                errs.invalid(f"{qp}.queues", queues, "must be positive")
            elif isinstance(queues, int) and queues > 512:
                errs.invalid(f"{qp}.queues", queues, "must not be greater than 512")
            if isinstance(hand, int) and hand <= 0:
                errs.invalid(f"{qp}.handSize", hand, "must be positive")
            elif isinstance(hand, int) and isinstance(queues, int) and hand > queues:
                errs.invalid(f"{qp}.handSize", hand, f"should not be greater than queues ({queues})")
        elif lt == "Reject":
            if lr.get("queuing") is not None:
                errs.forbidden("spec.limited.limitResponse.queuing", "must be nil if limited.limitResponse.type "
                                                                     "is not Limited")
        else:
            errs.not_supported("spec.limited.limitResponse.type", lt, ["Queue", "Reject"])
    elif t == "Exempt":
        if spec.get("limited") is not None:
            errs.forbidden("spec.limited", "must be nil if the type is not Limited")
        ex = sub(spec, "exempt")
        ncs = ex.get("nominalConcurrencyShares")
        if isinstance(ncs, int) and ncs < 0:
            errs.invalid("spec.exempt.nominalConcurrencyShares", ncs, "must be a non-negative integer")
        _percent(ex.get("lendablePercent"), "spec.exempt.lendablePercent", errs)
    elif not t:
        errs.required("spec.type", "")
    else:
        errs.not_supported("spec.type", t, ["Exempt", "Limited"])

# --------------------------------------------------------------------------- printers and strategies


def _flow_schema_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec = sub(obj, "spec")
    dm = spec.get("distinguisherMethod")
    method = str(dm.get("type", "")) if isinstance(dm, dict) else "<none>"
    missing = "?"
    for c in objs(sub(obj, "status").get("conditions")):
        if c.get("type") == "Dangling":
            missing = str(c.get("status", ""))
            break
    return [name(obj), sub(spec, "priorityLevelConfiguration").get("name", ""),
            int(spec.get("matchingPrecedence") or 0), method, age(obj, now), missing], None


def _priority_level_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec = sub(obj, "spec")
    ncs: Any = "<none>"
    queues: Any = "<none>"
    hand: Any = "<none>"
    qll: Any = "<none>"
    lim = spec.get("limited")
    if isinstance(lim, dict):
        ncs = int(lim.get("nominalConcurrencyShares") or 0)
        q = dig(lim, "limitResponse", "queuing")
        if isinstance(q, dict):
            queues, hand, qll = int(q.get("queues") or 0), int(q.get("handSize") or 0), int(q.get("queueLengthLimit") or 0)
    return [name(obj), spec.get("type", ""), ncs, queues, hand, qll, age(obj, now)], None


def flow_schema_order(obj: JSON) -> tuple[int, str]:
    """printFlowSchemaList's FlowSchemaSequence: by matchingPrecedence, then name."""
    return int(sub(obj, "spec").get("matchingPrecedence") or 0), name(obj)


FLOW_SCHEMA = Printer((
    NAME_COL,
    col("PriorityLevel", description=columndocs.doc("PriorityLevelConfigurationReference.name")),
    col("MatchingPrecedence", description=columndocs.doc("FlowSchemaSpec.matchingPrecedence")),
    col("DistinguisherMethod", description=columndocs.doc("FlowSchemaSpec.distinguisherMethod")),
    AGE_COL,
    col("MissingPL", description="references a broken or non-existent PriorityLevelConfiguration"),
), _flow_schema_row, flow_schema_order)
PRIORITY_LEVEL = Printer((
    NAME_COL,
    col("Type", description=columndocs.doc("PriorityLevelConfigurationSpec.type")),
    col("NominalConcurrencyShares", description=columndocs.doc(
        "LimitedPriorityLevelConfiguration.nominalConcurrencyShares")),
    col("Queues", description=columndocs.doc("QueuingConfiguration.queues")),
    col("HandSize", description=columndocs.doc("QueuingConfiguration.handSize")),
    col("QueueLengthLimit", description=columndocs.doc("QueuingConfiguration.queueLengthLimit")),
    AGE_COL,
), _priority_level_row)


def _prepare_create(obj: JSON) -> None:
    obj["status"] = {}


STRATEGY = Strategy(tracks_generation=True, prepare_create=_prepare_create)

ENTRIES: tuple[Resource, ...] = (
    Resource(GROUP, "v1", "flowschemas", "flowschema", "FlowSchema", False, (), ("status",),
             printer=FLOW_SCHEMA,
             schema=KindSchema("FlowSchema classifies requests into flows and gives them a priority level (API "
                               "Priority and Fairness). The apiserver writes its bootstrap schemas at start.", {
                                   "spec": ("FlowSchemaSpec", "The requests matched and their priority level."),
                                   "status": ("FlowSchemaStatus", "Observed state.")}, TYPES),
             validate=validate_flow_schema, default=default_flow_schema, strategy=STRATEGY),
    Resource(GROUP, "v1", "prioritylevelconfigurations", "prioritylevelconfiguration",
             "PriorityLevelConfiguration", False, (), ("status",),
             printer=PRIORITY_LEVEL,
             schema=KindSchema("PriorityLevelConfiguration is a priority level of API Priority and Fairness: its "
                               "share of the server's concurrency and its queuing.", {
                                   "spec": ("PriorityLevelConfigurationSpec", "The level's limits."),
                                   "status": ("PriorityLevelConfigurationStatus", "Observed state.")}, TYPES),
             validate=validate_priority_level, default=default_priority_level, strategy=STRATEGY),
)
