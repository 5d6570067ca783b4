"""``admissionregistration.k8s.io/v1``: MutatingWebhookConfiguration,
ValidatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding
(Kubernetes v1.32), **stored and validated only**.

This apiserver calls no admission webhook and evaluates no CEL policy: the objects are
kept as Kubernetes would keep them, and every create answers a ``Warning`` header saying
so (the strategy's WarningsOnCreate, :data:`WEBHOOKS_WARNING` / :data:`POLICIES_WARNING`).

Facts from ``pkg/apis/admissionregistration/validation/validation.go``
(ValidateMutatingWebhookConfiguration / ValidateValidatingWebhookConfiguration: webhook
names fully qualified and unique, clientConfig url xor service, rules, sideEffects and
admissionReviewVersions required, timeoutSeconds 1-30; ValidateValidatingAdmissionPolicy
and ...Binding), ``pkg/apis/admissionregistration/v1/defaults.go`` (failurePolicy Fail,
matchPolicy Equivalent, empty selectors, timeoutSeconds 10, reinvocationPolicy Never,
rule scope ``*``, service port 443), ``pkg/registry/admissionregistration/*/strategy.go``
(generation tracked; a policy's ``status`` subresource, status reset on create) and
``pkg/printers/internalversion/printers.go`` (printMutatingWebhook, printValidatingWebhook,
printValidatingAdmissionPolicy, printValidatingAdmissionPolicyBinding).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from controlplane.api import listfields, validators
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
from controlplane.api.groups.networking import format_label_selector
from controlplane.api.registry import JSON, KindSchema, Printer, Resource, Strategy
from controlplane.api.validators import ErrorList

GROUP = "admissionregistration.k8s.io"
WEBHOOKS_WARNING = ("admission webhooks are stored but not called by this apiserver "
                    "(controlplane serves admissionregistration.k8s.io objects without calling them)")
POLICIES_WARNING = ("validating admission policies are stored but not evaluated by this apiserver "
                    "(webhooks are stored but not called by this apiserver either)")
ACCEPTED_REVIEW_VERSIONS = ("v1", "v1beta1")

_SELECTOR = "LabelSelector"
TYPES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "MutatingWebhook": ("A webhook called to mutate matching requests (stored only here).", {
        "name": ("string", "Fully qualified name of the webhook (e.g. imagepolicy.kubernetes.io); unique."),
        "clientConfig": ("WebhookClientConfig", "How to reach the webhook."),
        "rules": ("[]RuleWithOperations", "Operations and resources the webhook applies to."),
        "failurePolicy": ("string", "Ignore or Fail (default): what a failed call does."),
        "matchPolicy": ("string", "Exact or Equivalent (default): matching of other versions of a resource."),
        "namespaceSelector": (_SELECTOR, "Namespaces whose objects are sent; empty: all."),
        "objectSelector": (_SELECTOR, "Objects sent, by their labels; empty: all."),
        "sideEffects": ("string", "None or NoneOnDryRun. Required."),
        "timeoutSeconds": ("int32", "Seconds before a call times out (1-30, default 10)."),
        "admissionReviewVersions": ("[]string", "AdmissionReview versions the webhook accepts, in order. Required."),
        "reinvocationPolicy": ("string", "Never (default) or IfNeeded."),
        "matchConditions": ("[]MatchCondition", "CEL conditions a request must meet to be sent."),
    }),
    "ValidatingWebhook": ("A webhook called to validate matching requests (stored only here).", {
        "name": ("string", "Fully qualified name of the webhook; unique."),
        "clientConfig": ("WebhookClientConfig", "How to reach the webhook."),
        "rules": ("[]RuleWithOperations", "Operations and resources the webhook applies to."),
        "failurePolicy": ("string", "Ignore or Fail (default)."),
        "matchPolicy": ("string", "Exact or Equivalent (default)."),
        "namespaceSelector": (_SELECTOR, "Namespaces whose objects are sent; empty: all."),
        "objectSelector": (_SELECTOR, "Objects sent, by their labels; empty: all."),
        "sideEffects": ("string", "None or NoneOnDryRun. Required."),
        "timeoutSeconds": ("int32", "Seconds before a call times out (1-30, default 10)."),
        "admissionReviewVersions": ("[]string", "AdmissionReview versions the webhook accepts. Required."),
        "matchConditions": ("[]MatchCondition", "CEL conditions a request must meet to be sent."),
    }),
    "WebhookClientConfig": ("How to reach a webhook: a URL or a Service (exactly one).", {
        "url": ("string", "https URL of the webhook."),
        "service": ("WebhookServiceReference", "A Service in the cluster."),
        "caBundle": ("bytes", "PEM CA bundle to verify the webhook's certificate."),
    }),
    "WebhookServiceReference": ("A Service serving a webhook.", {
        "namespace": ("string", "Namespace of the Service. Required."),
        "name": ("string", "Name of the Service. Required."),
        "path": ("string", "URL path requests are sent to."),
        "port": ("int32", "Port of the Service (443)."),
    }),
    "RuleWithOperations": ("Operations on resources a webhook applies to.", {
        "operations": ("[]string", "CREATE, UPDATE, DELETE, CONNECT or *."),
        "apiGroups": ("[]string", "API groups; * for all."),
        "apiVersions": ("[]string", "API versions; * for all."),
        "resources": ("[]string", "Resources (and subresources as pods/status); * for all."),
        "scope": ("string", "Cluster, Namespaced or * (default)."),
    }),
    "MatchCondition": ("A named CEL condition.", {
        "name": ("string", "Name of the condition (a qualified name)."),
        "expression": ("string", "CEL expression evaluating to a boolean."),
    }),
    "ValidatingAdmissionPolicySpec": ("A CEL validation policy (stored only here).", {
        "paramKind": ("ParamKind", "Kind of the parameter objects."),
        "matchConstraints": ("MatchResources", "Resources the policy validates. Required."),
        "validations": ("[]Validation", "CEL expressions that must all hold."),
        "failurePolicy": ("string", "Ignore or Fail (default)."),
        "auditAnnotations": ("[]AuditAnnotation", "Audit annotations to add."),
        "matchConditions": ("[]MatchCondition", "CEL conditions a request must meet to be validated."),
        "variables": ("[]Variable", "Named CEL expressions usable in the others."),
    }),
    "ParamKind": ("The kind of a policy's parameters.", {
        "apiVersion": ("string", "group/version of the kind."),
        "kind": ("string", "The kind."),
    }),
    "MatchResources": ("Which requests a policy or binding matches.", {
        "namespaceSelector": (_SELECTOR, "Namespaces matched; empty: all."),
        "objectSelector": (_SELECTOR, "Objects matched by labels; empty: all."),
        "resourceRules": ("[]NamedRuleWithOperations", "Operations and resources matched."),
        "excludeResourceRules": ("[]NamedRuleWithOperations", "Operations and resources excluded."),
        "matchPolicy": ("string", "Exact or Equivalent (default)."),
    }),
    "NamedRuleWithOperations": ("Operations on resources, optionally by name.", {
        "resourceNames": ("[]string", "Names matched; empty: all."),
        "operations": ("[]string", "CREATE, UPDATE, DELETE, CONNECT or *."),
        "apiGroups": ("[]string", "API groups; * for all."),
        "apiVersions": ("[]string", "API versions; * for all."),
        "resources": ("[]string", "Resources; * for all."),
        "scope": ("string", "Cluster, Namespaced or * (default)."),
    }),
    "Validation": ("A CEL validation expression.", {
        "expression": ("string", "CEL expression that must evaluate to true. Required."),
        "message": ("string", "Message when it fails."),
        "reason": ("string", "Reason of the failure (Unauthorized, Forbidden, Invalid, RequestEntityTooLarge)."),
        "messageExpression": ("string", "CEL expression giving the message."),
    }),
    "AuditAnnotation": ("An audit annotation computed by CEL.", {
        "key": ("string", "Key of the annotation."),
        "valueExpression": ("string", "CEL expression giving the value."),
    }),
    "Variable": ("A named CEL expression.", {
        "name": ("string", "Name of the variable."),
        "expression": ("string", "CEL expression of its value."),
    }),
    "ValidatingAdmissionPolicyStatus": ("The observed state of a policy.", {
        "observedGeneration": ("int64", "Generation checked last."),
        "typeChecking": ("TypeChecking", "Results of type checking the expressions."),
        "conditions": ("[]Condition", "Conditions of the policy."),
    }),
    "TypeChecking": ("Type-checking results.", {
        "expressionWarnings": ("[]ExpressionWarning", "Warnings per expression."),
    }),
    "ExpressionWarning": ("A type-checking warning.", {
        "fieldRef": ("string", "Path of the expression."),
        "warning": ("string", "The warning."),
    }),
    "ValidatingAdmissionPolicyBindingSpec": ("Binds a policy to resources and parameters (stored only here).", {
        "policyName": ("string", "Name of the ValidatingAdmissionPolicy. Required."),
        "paramRef": ("ParamRef", "The parameter object(s)."),
        "matchResources": ("MatchResources", "Narrows the resources the policy applies to."),
        "validationActions": ("[]string", "Deny, Warn and/or Audit. Required."),
    }),
    "ParamRef": ("Which parameter objects a binding uses.", {
        "name": ("string", "Name of the parameter object; exclusive with selector."),
        "namespace": ("string", "Namespace of the parameter objects."),
        "selector": (_SELECTOR, "Labels of the parameter objects."),
        "parameterNotFoundAction": ("string", "Allow or Deny when no parameter is found. Required."),
    }),
}

_NAME_MAP = listfields.ListField("name", "merge", "map", ("name",))
_WEBHOOK_STRUCT = {"rules": listfields.ATOMIC, "admissionReviewVersions": listfields.ATOMIC,
                   "matchConditions": _NAME_MAP}
listfields.declare(
    {"MutatingWebhookConfiguration": {"webhooks": listfields.ListField("name", "merge", "map", ("name",), (),
                                                                       "MutatingWebhook")},
     "ValidatingWebhookConfiguration": {"webhooks": listfields.ListField("name", "merge", "map", ("name",), (),
                                                                         "ValidatingWebhook")},
     "ValidatingAdmissionPolicy": {"spec": "ValidatingAdmissionPolicySpec",
                                   "status": "ValidatingAdmissionPolicyStatus"},
     "ValidatingAdmissionPolicyBinding": {"spec": "ValidatingAdmissionPolicyBindingSpec"}},
    {"MutatingWebhook": dict(_WEBHOOK_STRUCT), "ValidatingWebhook": dict(_WEBHOOK_STRUCT),
     "ValidatingAdmissionPolicySpec": {"validations": listfields.ATOMIC, "auditAnnotations": listfields.ATOMIC,
                                       "matchConditions": _NAME_MAP, "variables": listfields.ATOMIC},
     "ValidatingAdmissionPolicyStatus": {"conditions": listfields.ListField(None, "", "map", ("type",))},
     "ValidatingAdmissionPolicyBindingSpec": {"validationActions": listfields.ListField(None, "", "set")}})

# --------------------------------------------------------------------------- defaults


def _default_match_resources(mr: object) -> None:
    if isinstance(mr, dict):
        mr.setdefault("matchPolicy", "Equivalent")
        mr.setdefault("namespaceSelector", {})
        mr.setdefault("objectSelector", {})
        for key in ("resourceRules", "excludeResourceRules"):
            for r in objs(mr.get(key)):
                r.setdefault("scope", "*")


def _default_webhook(hook: JSON, mutating: bool) -> None:
    hook.setdefault("failurePolicy", "Fail")
    hook.setdefault("matchPolicy", "Equivalent")
    hook.setdefault("namespaceSelector", {})
    hook.setdefault("objectSelector", {})
    hook.setdefault("timeoutSeconds", 10)
    if mutating:
        hook.setdefault("reinvocationPolicy", "Never")
    for r in objs(hook.get("rules")):
        r.setdefault("scope", "*")
    svc = dig(hook, "clientConfig", "service")
    if isinstance(svc, dict):
        svc.setdefault("port", 443)


def default_mutating(obj: JSON) -> None:
    """SetDefaults_MutatingWebhook (+ SetDefaults_Rule, SetDefaults_ServiceReference)."""
    for h in objs(obj.get("webhooks")):
        _default_webhook(h, True)


def default_validating(obj: JSON) -> None:
    """SetDefaults_ValidatingWebhook (+ SetDefaults_Rule, SetDefaults_ServiceReference)."""
    for h in objs(obj.get("webhooks")):
        _default_webhook(h, False)


def default_policy(obj: JSON) -> None:
    """SetDefaults_ValidatingAdmissionPolicySpec: failurePolicy Fail; SetDefaults_MatchResources."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        spec.setdefault("failurePolicy", "Fail")
        _default_match_resources(spec.get("matchConstraints"))


def default_binding(obj: JSON) -> None:
    """SetDefaults_MatchResources of a binding's matchResources."""
    _default_match_resources(dig(obj, "spec", "matchResources"))

# --------------------------------------------------------------------------- validation


def is_fully_qualified_name(v: str, path: str, errs: ErrorList) -> None:
    """IsFullyQualifiedName: a DNS subdomain with at least three segments."""
    if not v:
        errs.required(path, "")
        return
    for m in validators.is_dns1123_subdomain(v):
        errs.invalid(path, v, m)
    if len(v.split(".")) < 3:
        errs.invalid(path, v, "should be a domain with at least three segments separated by dots")


def _validate_rule(rule: JSON, path: str, errs: ErrorList, operations: bool = True) -> None:
    for f in ("apiGroups", "apiVersions", "resources") + (("operations",) if operations else ()):
        if not strs(rule.get(f)):
            errs.required(f"{path}.{f}", "")
    for i, op in enumerate(strs(rule.get("operations"))):
        if op not in ("*", "CONNECT", "CREATE", "DELETE", "UPDATE"):
            errs.not_supported(f"{path}.operations[{i}]", op, ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"])
    scope = rule.get("scope")
    if scope is not None and scope not in ("*", "Cluster", "Namespaced"):
        errs.not_supported(f"{path}.scope", scope, ["*", "Cluster", "Namespaced"])


def _validate_client_config(cc: JSON, path: str, errs: ErrorList) -> None:
    url, svc = cc.get("url"), cc.get("service")
    if (url is None) == (svc is None):
        errs.required(path, "exactly one of url or service is required")
        return
    if url is not None:
        u = str(url)
        if not u.startswith("https://"):
            errs.invalid(f"{path}.url", u, "'https' is the only allowed URL scheme")
        if "#" in u:
            errs.invalid(f"{path}.url", u, "fragments are not permitted")
        if "?" in u:
            errs.invalid(f"{path}.url", u, "query parameters are not permitted")
        return
    s = sub(cc, "service")
    if not s.get("name"):
        errs.required(f"{path}.service.name", "service name is required")
    if not s.get("namespace"):
        errs.required(f"{path}.service.namespace", "service namespace is required")
    p = s.get("path")
    if p is not None and not str(p).startswith("/"):
        errs.invalid(f"{path}.service.path", p, "must start with a '/'")
    port = s.get("port")
    if isinstance(port, int) and not 1 <= port <= 65535:
        errs.invalid(f"{path}.service.port", port, "port is not valid: must be between 1 and 65535, inclusive")


def _validate_webhook(h: JSON, path: str, errs: ErrorList, mutating: bool) -> None:
    is_fully_qualified_name(str(h.get("name") or ""), f"{path}.name", errs)
    for i, r in enumerate(objs(h.get("rules"))):
        _validate_rule(r, f"{path}.rules[{i}]", errs)
    fp = h.get("failurePolicy")
    if fp is not None and fp not in ("Fail", "Ignore"):
        errs.not_supported(f"{path}.failurePolicy", fp, ["Fail", "Ignore"])
    mp = h.get("matchPolicy")
    if mp is not None and mp not in ("Equivalent", "Exact"):
        errs.not_supported(f"{path}.matchPolicy", mp, ["Equivalent", "Exact"])
    se = h.get("sideEffects")
    if se is None:
        errs.required(f"{path}.sideEffects", "must specify one of None, NoneOnDryRun")
    elif se not in ("None", "NoneOnDryRun"):
        errs.not_supported(f"{path}.sideEffects", se, ["None", "NoneOnDryRun"])
    versions = strs(h.get("admissionReviewVersions"))
    if not versions:
        errs.required(f"{path}.admissionReviewVersions", "must specify one of v1, v1beta1")
    elif not any(v in ACCEPTED_REVIEW_VERSIONS for v in versions):
        invalid_raw(errs, f"{path}.admissionReviewVersions", go_strings(versions),
                    "must include at least one of v1, v1beta1")
    to = h.get("timeoutSeconds")
    if isinstance(to, int) and not 1 <= to <= 30:
        errs.invalid(f"{path}.timeoutSeconds", to, "the timeout value must be between 1 and 30 seconds")
    if mutating:
        rp = h.get("reinvocationPolicy")
        if rp is not None and rp not in ("IfNeeded", "Never"):
            errs.not_supported(f"{path}.reinvocationPolicy", rp, ["IfNeeded", "Never"])
    validators.validate_label_selector(h.get("namespaceSelector"), f"{path}.namespaceSelector", errs)
    validators.validate_label_selector(h.get("objectSelector"), f"{path}.objectSelector", errs)
    _validate_client_config(sub(h, "clientConfig"), f"{path}.clientConfig", errs)
    _validate_match_conditions(objs(h.get("matchConditions")), f"{path}.matchConditions", errs)


def _validate_match_conditions(conds: list[JSON], path: str, errs: ErrorList) -> None:
    seen: set[str] = set()
    for i, c in enumerate(conds):
        n = str(c.get("name") or "")
        if not n:
            errs.required(f"{path}[{i}].name", "")
        else:
            for m in validators.is_qualified_name(n):
                errs.invalid(f"{path}[{i}].name", n, m)
        if n in seen:
            errs.duplicate(f"{path}[{i}].name", n)
        seen.add(n)
        if not c.get("expression"):
            errs.required(f"{path}[{i}].expression", "")


def _webhooks_validator(mutating: bool) -> Any:
    def validate(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
        seen: set[str] = set()
        for i, h in enumerate(objs(obj.get("webhooks"))):
            _validate_webhook(h, f"webhooks[{i}]", errs, mutating)
            n = str(h.get("name") or "")
            if n and n in seen:
                errs.duplicate(f"webhooks[{i}].name", n)
            seen.add(n)
    validate.__doc__ = ("Validate" + ("Mutating" if mutating else "Validating") +
                        "WebhookConfiguration: each webhook (name, rules, clientConfig, sideEffects, "
                        "admissionReviewVersions, timeoutSeconds, selectors); names unique.")
    return validate


validate_mutating = _webhooks_validator(True)
validate_validating = _webhooks_validator(False)


def validate_policy(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateValidatingAdmissionPolicy: matchConstraints with resourceRules, at least one
    validation or audit annotation, expressions present, paramKind complete."""
    spec = sub(obj, "spec")
    pk = spec.get("paramKind")
    if isinstance(pk, dict):
        if not pk.get("apiVersion"):
            errs.required("spec.paramKind.apiVersion", "")
        if not pk.get("kind"):
            errs.required("spec.paramKind.kind", "")
    mc = spec.get("matchConstraints")
    if mc is None:
        errs.required("spec.matchConstraints", "")
    elif isinstance(mc, dict):
        rules = objs(mc.get("resourceRules"))
        if not rules:
            errs.required("spec.matchConstraints.resourceRules", "")
        for i, r in enumerate(rules):
            _validate_rule(r, f"spec.matchConstraints.resourceRules[{i}]", errs)
    if not spec.get("validations") and not spec.get("auditAnnotations"):
        errs.required("spec.validations", "validations or auditAnnotations must contain at least one item")
    for i, v in enumerate(objs(spec.get("validations"))):
        if not str(v.get("expression") or "").strip():
            errs.required(f"spec.validations[{i}].expression", "")
    fp = spec.get("failurePolicy")
    if fp is not None and fp not in ("Fail", "Ignore"):
        errs.not_supported("spec.failurePolicy", fp, ["Fail", "Ignore"])
    _validate_match_conditions(objs(spec.get("matchConditions")), "spec.matchConditions", errs)


def validate_binding(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateValidatingAdmissionPolicyBinding: policyName, validationActions (Deny, Warn,
    Audit; unique; not Deny with Warn), paramRef (name xor selector, parameterNotFoundAction)."""
    spec = sub(obj, "spec")
    if not spec.get("policyName"):
        errs.required("spec.policyName", "")
    actions = strs(spec.get("validationActions"))
    if not actions:
        errs.required("spec.validationActions", "at least one validation action is required")
    seen: set[str] = set()
    for i, a in enumerate(actions):
        if a not in ("Audit", "Deny", "Warn"):
            errs.not_supported(f"spec.validationActions[{i}]", a, ["Audit", "Deny", "Warn"])
        if a in seen:
            errs.duplicate(f"spec.validationActions[{i}]", a)
        seen.add(a)
    if "Deny" in seen and "Warn" in seen:
        invalid_raw(errs, "spec.validationActions", go_strings(actions, "admissionregistration.ValidationAction"),
                    "validationActions must not contain both Deny and Warn "
                     "(repeating the same validation failure information in the API response and headers serves "
                     "no purpose)")
    pr = spec.get("paramRef")
    if isinstance(pr, dict):
        if pr.get("name") and pr.get("selector") is not None:
            errs.forbidden("spec.paramRef.name", "name and selector are mutually exclusive")
        if not pr.get("name") and pr.get("selector") is None:
            errs.required("spec.paramRef", "one of name or selector must be specified")
        act = pr.get("parameterNotFoundAction")
        if act is None:
            errs.required("spec.paramRef.parameterNotFoundAction", "")
        elif act not in ("Allow", "Deny"):
            errs.not_supported("spec.paramRef.parameterNotFoundAction", act, ["Allow", "Deny"])

# --------------------------------------------------------------------------- printers and strategies


def _webhooks_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    return [name(obj), len(objs(obj.get("webhooks"))), age(obj, now)], None


def _policy_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec = sub(obj, "spec")
    pk = spec.get("paramKind")
    param = f"{pk.get('apiVersion', '')}/{pk.get('kind', '')}" if isinstance(pk, dict) else "<unset>"
    return [name(obj), len(objs(spec.get("validations"))), param, age(obj, now)], None


def _binding_row(obj: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    spec = sub(obj, "spec")
    pr = spec.get("paramRef")
    param = "<unset>"
    if isinstance(pr, dict):
        if pr.get("name"):
            param = f"{pr['namespace']}/{pr['name']}" if pr.get("namespace") else f"*/{pr['name']}"
        elif isinstance(pr.get("selector"), dict):
            param = format_label_selector(pr["selector"])
    return [name(obj), spec.get("policyName", ""), param, age(obj, now)], None


_WEBHOOKS_COLUMNS = (NAME_COL, col("Webhooks", "integer", "Webhooks indicates the number of webhooks registered "
                                                          "in this configuration"), AGE_COL)
MUTATING = Printer(_WEBHOOKS_COLUMNS, _webhooks_row)
VALIDATING = Printer(_WEBHOOKS_COLUMNS, _webhooks_row)
POLICY = Printer((
    NAME_COL,
    col("Validations", "integer", "Validations indicates the number of validation rules defined in this configuration"),
    col("ParamKind", description="ParamKind specifies the kind of resources used to parameterize this policy"),
    AGE_COL), _policy_row)
BINDING = Printer((
    NAME_COL,
    col("PolicyName", description="PolicyName indicates the policy definition which the policy binding binded to"),
    col("ParamRef", description="ParamRef indicates the param resource which sets the configration param"),
    AGE_COL), _binding_row)


def _webhooks_warning(obj: JSON) -> list[str]:
    return [WEBHOOKS_WARNING]


def _policies_warning(obj: JSON) -> list[str]:
    return [POLICIES_WARNING]


def _prepare_policy_create(obj: JSON) -> None:
    obj["status"] = {}


def _on_create(fn: Callable[[JSON], list[str]]) -> Callable[[JSON, JSON | None], list[str]]:
    """WarningsOnCreate only (``old`` is None on a create): updates warn about nothing."""
    return lambda obj, old: fn(obj) if old is None else []


WEBHOOKS_STRATEGY = Strategy(tracks_generation=True, warnings=_on_create(_webhooks_warning))
POLICY_STRATEGY = Strategy(tracks_generation=True, prepare_create=_prepare_policy_create,
                           warnings=_on_create(_policies_warning))
BINDING_STRATEGY = Strategy(tracks_generation=True, warnings=_on_create(_policies_warning))

_CATEGORY = ("api-extensions",)
ENTRIES: tuple[Resource, ...] = (
    Resource(GROUP, "v1", "mutatingwebhookconfigurations", "mutatingwebhookconfiguration",
             "MutatingWebhookConfiguration", False, (), (), _CATEGORY,
             printer=MUTATING,
             schema=KindSchema("MutatingWebhookConfiguration lists admission webhooks that may change objects. "
                               "Stored and validated; this apiserver does not call webhooks.", {
                                   "webhooks": ("[]MutatingWebhook", "The webhooks (unique names).")}, TYPES),
             validate=validate_mutating, default=default_mutating, strategy=WEBHOOKS_STRATEGY),
    Resource(GROUP, "v1", "validatingwebhookconfigurations", "validatingwebhookconfiguration",
             "ValidatingWebhookConfiguration", False, (), (), _CATEGORY,
             printer=VALIDATING,
             schema=KindSchema("ValidatingWebhookConfiguration lists admission webhooks that may reject requests. "
                               "Stored and validated; this apiserver does not call webhooks.", {
                                   "webhooks": ("[]ValidatingWebhook", "The webhooks (unique names).")}, TYPES),
             validate=validate_validating, default=default_validating, strategy=WEBHOOKS_STRATEGY),
    Resource(GROUP, "v1", "validatingadmissionpolicies", "validatingadmissionpolicy", "ValidatingAdmissionPolicy",
             False, (), ("status",), _CATEGORY,
             printer=POLICY,
             schema=KindSchema("ValidatingAdmissionPolicy validates requests with CEL expressions. Stored and "
                               "validated; this apiserver does not evaluate it.", {
                                   "spec": ("ValidatingAdmissionPolicySpec", "The policy."),
                                   "status": ("ValidatingAdmissionPolicyStatus", "Type-checking results.")}, TYPES),
             validate=validate_policy, default=default_policy, strategy=POLICY_STRATEGY),
    Resource(GROUP, "v1", "validatingadmissionpolicybindings", "validatingadmissionpolicybinding",
             "ValidatingAdmissionPolicyBinding", False, (), (), _CATEGORY,
             printer=BINDING,
             schema=KindSchema("ValidatingAdmissionPolicyBinding binds a ValidatingAdmissionPolicy to resources "
                               "and parameters. Stored and validated only.", {
                                   "spec": ("ValidatingAdmissionPolicyBindingSpec", "The binding.")}, TYPES),
             validate=validate_binding, default=default_binding, strategy=BINDING_STRATEGY),
)
