"""``authorization.k8s.io/v1``: the access reviews, create-only and never stored (Kubernetes v1.32).

SubjectAccessReview, SelfSubjectAccessReview, LocalSubjectAccessReview and
SelfSubjectRulesReview are answered by the apiserver's authorizer
(``pkg/registry/authorization/*/rest.go``). The review functions here are the answers of
kube-apiserver's default ``--authorization-mode=AlwaysAllow``
(``staging/src/k8s.io/apiserver/pkg/authorization/authorizerfactory/builtin.go``): every
access review answers ``status.allowed: true`` with a reason saying that no authorization
is configured, and a rules review lists ``*`` for everything (AlwaysAllow's ``RulesFor``);
with any other mode the apiserver answers with its configured authorizers instead
(``components/apiserver/authorization/reviews.py``).

Validation: ``pkg/apis/authorization/validation/validation.go``
(ValidateSubjectAccessReviewSpec, ValidateSelfSubjectAccessReviewSpec, the metadata that
must be empty, the local review's namespace). Schema: ``staging/src/k8s.io/api/authorization/v1/types.go``.
"""

from __future__ import annotations

import copy

from controlplane.api import listfields
from controlplane.api.registry import JSON, KindSchema, Resource
from controlplane.api.validators import ErrorList

GROUP = "authorization.k8s.io"

#: the reason every access review gives while no authorizer is configured
ALLOW_REASON = ("no authorization is configured in this controlplane apiserver: every request is allowed "
                "(AlwaysAllow)")

TYPES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "ResourceAttributes": ("ResourceAttributes includes the authorization attributes available for resource "
                           "requests to the Authorizer interface", {
                               "namespace": ("string", "Namespace is the namespace of the action being requested."),
                               "verb": ("string", "Verb is a kubernetes resource API verb, like: get, list, watch, "
                                                  "create, update, delete, proxy.  \"*\" means all."),
                               "group": ("string", "Group is the API Group of the Resource.  \"*\" means all."),
                               "version": ("string", "Version is the API Version of the Resource.  \"*\" means all."),
                               "resource": ("string", "Resource is one of the existing resource types.  \"*\" "
                                                      "means all."),
                               "subresource": ("string", "Subresource is one of the existing resource types.  "
                                                         "\"\" means none."),
                               "name": ("string", "Name is the name of the resource being requested for a \"get\" "
                                                  "or deleted for a \"delete\". \"\" (empty) means all."),
                               "fieldSelector": ("FieldSelectorAttributes", "fieldSelector describes the "
                                                 "limitation on access based on field.  It can only limit access, "
                                                 "not broaden it."),
                               "labelSelector": ("LabelSelectorAttributes", "labelSelector describes the "
                                                 "limitation on access based on labels.  It can only limit access, "
                                                 "not broaden it."),
                           }),
    "FieldSelectorAttributes": ("FieldSelectorAttributes indicates a field limited access.", {
        "rawSelector": ("string", "rawSelector is the serialization of a field selector that would be included in a "
                                  "query parameter."),
        "requirements": ("[]FieldSelectorRequirement", "requirements is the parsed interpretation of a field "
                                                       "selector."),
    }),
    "FieldSelectorRequirement": ("FieldSelectorRequirement is a selector that contains values, a key, and an operator "
                                 "that relates the key and values.", {
                                     "key": ("string", "key is the field selector key that the requirement applies "
                                                       "to."),
                                     "operator": ("string", "operator represents a key's relationship to a set of "
                                                            "values. Valid operators are In, NotIn, Exists, "
                                                            "DoesNotExist."),
                                     "values": ("[]string", "values is an array of string values."),
                                 }),
    "LabelSelectorAttributes": ("LabelSelectorAttributes indicates a label limited access.", {
        "rawSelector": ("string", "rawSelector is the serialization of a field selector that would be included in a "
                                  "query parameter."),
        "requirements": ("[]LabelSelectorRequirement", "requirements is the parsed interpretation of a label "
                                                       "selector."),
    }),
    "NonResourceAttributes": ("NonResourceAttributes includes the authorization attributes available for "
                              "non-resource requests to the Authorizer interface", {
                                  "path": ("string", "Path is the URL path of the request"),
                                  "verb": ("string", "Verb is the standard HTTP verb"),
                              }),
    "SubjectAccessReviewSpec": ("SubjectAccessReviewSpec is a description of the access request.  Exactly one of "
                                "ResourceAuthorizationAttributes and NonResourceAuthorizationAttributes must be "
                                "set", {
                                    "resourceAttributes": ("ResourceAttributes", "ResourceAuthorizationAttributes "
                                                           "describes information for a resource access request"),
                                    "nonResourceAttributes": ("NonResourceAttributes", "NonResourceAttributes "
                                                              "describes information for a non-resource access "
                                                              "request"),
                                    "user": ("string", "User is the user you're testing for."),
                                    "groups": ("[]string", "Groups is the groups you're testing for."),
                                    "extra": ("object:map[string][]string", "Extra corresponds to the user.Info."
                                              "GetExtra() method from the authenticator."),
                                    "uid": ("string", "UID information about the requesting user."),
                                }),
    "SelfSubjectAccessReviewSpec": ("SelfSubjectAccessReviewSpec is a description of the access request.  "
                                    "Exactly one of ResourceAuthorizationAttributes and "
                                    "NonResourceAuthorizationAttributes must be set", {
                                        "resourceAttributes": ("ResourceAttributes", "ResourceAuthorizationAttributes"
                                                               " describes information for a resource access "
                                                               "request"),
                                        "nonResourceAttributes": ("NonResourceAttributes", "NonResourceAttributes "
                                                                  "describes information for a non-resource "
                                                                  "access request"),
                                    }),
    "SubjectAccessReviewStatus": ("SubjectAccessReviewStatus", {
        "allowed": ("boolean", "Allowed is required. True if the action would be allowed, false otherwise."),
        "denied": ("boolean", "Denied is optional. True if the action would be denied, otherwise false."),
        "reason": ("string", "Reason is optional.  It indicates why a request was allowed or denied."),
        "evaluationError": ("string", "EvaluationError is an indication that some error occurred during the "
                                      "authorization check."),
    }),
    "SelfSubjectRulesReviewSpec": ("SelfSubjectRulesReviewSpec defines the specification for "
                                   "SelfSubjectRulesReview.", {
                                       "namespace": ("string", "Namespace to evaluate rules for. Required."),
                                   }),
    "SubjectRulesReviewStatus": ("SubjectRulesReviewStatus contains the result of a rules check.", {
        "resourceRules": ("[]ResourceRule", "ResourceRules is the list of actions the subject is allowed to perform "
                                            "on resources."),
        "nonResourceRules": ("[]NonResourceRule", "NonResourceRules is the list of actions the subject is allowed "
                                                  "to perform on non-resources."),
        "incomplete": ("boolean", "Incomplete is true when the rules returned by this call are incomplete."),
        "evaluationError": ("string", "EvaluationError can appear in combination with Rules."),
    }),
    "ResourceRule": ("ResourceRule is the list of actions the subject is allowed to perform on resources.", {
        "verbs": ("[]string", "Verb is a list of kubernetes resource API verbs.  \"*\" means all."),
        "apiGroups": ("[]string", "APIGroups is the name of the APIGroup that contains the resources.  \"*\" "
                                  "means all."),
        "resources": ("[]string", "Resources is a list of resources this rule applies to.  \"*\" means all."),
        "resourceNames": ("[]string", "ResourceNames is an optional white list of names that the rule applies to."),
    }),
    "NonResourceRule": ("NonResourceRule holds information that describes a rule for the non-resource", {
        "verbs": ("[]string", "Verb is a list of kubernetes non-resource API verbs.  \"*\" means all."),
        "nonResourceURLs": ("[]string", "NonResourceURLs is a set of partial urls that a user should have access "
                                        "to."),
    }),
}

#: the list tags of ``authorization/v1/types.go``: every list ``+listType=atomic``
_A = listfields.ATOMIC
listfields.declare(structs={
    "FieldSelectorAttributes": {"requirements": _A},
    "FieldSelectorRequirement": {"values": _A},
    "LabelSelectorAttributes": {"requirements": _A},
    "SubjectAccessReviewSpec": {"groups": _A},
    "SubjectRulesReviewStatus": {"resourceRules": _A, "nonResourceRules": _A},
    "ResourceRule": {"verbs": _A, "apiGroups": _A, "resources": _A, "resourceNames": _A},
    "NonResourceRule": {"verbs": _A, "nonResourceURLs": _A},
})

_STATUS = ("SubjectAccessReviewStatus", "Status is filled in by the server and indicates whether the request is "
                                        "allowed or not")


def _schema(desc: str, spec_type: str) -> KindSchema:
    return KindSchema(desc, {"spec": (spec_type, "Spec holds information about the request being evaluated"),
                             "status": _STATUS}, TYPES)


SAR_SCHEMA = _schema("SubjectAccessReview checks whether or not a user or group can perform an action.",
                     "SubjectAccessReviewSpec")
SSAR_SCHEMA = _schema("SelfSubjectAccessReview checks whether or the current user can perform an action.  Not "
                      "filling in a spec.namespace means \"in all namespaces\".  Self is a special case, because "
                      "users should always be able to check whether they can perform an action",
                      "SelfSubjectAccessReviewSpec")
LSAR_SCHEMA = _schema("LocalSubjectAccessReview checks whether or not a user or group can perform an action in a "
                      "given namespace. Having a namespace scoped resource makes it much easier to grant "
                      "namespace scoped policy that includes permissions checking.", "SubjectAccessReviewSpec")
SSRR_SCHEMA = KindSchema(
    "SelfSubjectRulesReview enumerates the set of actions the current user can perform within a namespace.", {
        "spec": ("SelfSubjectRulesReviewSpec", "Spec holds information about the request being evaluated."),
        "status": ("SubjectRulesReviewStatus", "Status is filled in by the server and indicates the set of actions "
                                               "a user can perform."),
    }, TYPES)

# --------------------------------------------------------------------------- validation


def _meta_empty(obj: JSON, allow_namespace: bool = False) -> bool:
    md = obj.get("metadata") or {}
    return not any(v for k, v in md.items() if k != "managedFields" and not (allow_namespace and k == "namespace"))


def _validate_attributes(spec: JSON, errs: ErrorList) -> None:
    ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if ra is not None and nra is not None:
        errs.invalid("spec.nonResourceAttributes", nra, "cannot be specified in combination with resourceAttributes")
    if ra is None and nra is None:
        # a nil pointer prints as "null" in field errors (field.ErrorBody)
        errs.invalid("spec.resourceAttributes", "null",
                     "exactly one of nonResourceAttributes or resourceAttributes must be specified")


def validate_subject_access_review(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateSubjectAccessReview: exactly one of the attributes, a user or a group, empty metadata."""
    spec = obj.get("spec") or {}
    _validate_attributes(spec, errs)
    if not spec.get("user") and not spec.get("groups"):
        errs.invalid("spec.user", spec.get("user") or "", "at least one of user or group must be specified")
    if not _meta_empty(obj):
        errs.invalid("metadata", obj.get("metadata"), "must be empty")


def validate_self_subject_access_review(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateSelfSubjectAccessReview: exactly one of the attributes, empty metadata."""
    _validate_attributes(obj.get("spec") or {}, errs)
    if not _meta_empty(obj):
        errs.invalid("metadata", obj.get("metadata"), "must be empty")


def validate_local_subject_access_review(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateLocalSubjectAccessReview: as a SubjectAccessReview, metadata empty but for the
    namespace, the resource attributes' namespace that of the review, no non-resource attributes."""
    spec = obj.get("spec") or {}
    _validate_attributes(spec, errs)
    if not spec.get("user") and not spec.get("groups"):
        errs.invalid("spec.user", spec.get("user") or "", "at least one of user or group must be specified")
    if not _meta_empty(obj, allow_namespace=True):
        errs.invalid("metadata", obj.get("metadata"), "must be empty except for namespace")
    ns = (obj.get("metadata") or {}).get("namespace") or ""
    ra = spec.get("resourceAttributes")
    if isinstance(ra, dict) and (ra.get("namespace") or "") != ns:
        errs.invalid("spec.resourceAttributes.namespace", ra.get("namespace") or "", "must match metadata.namespace")
    if spec.get("nonResourceAttributes") is not None:
        errs.invalid("spec.nonResourceAttributes", spec["nonResourceAttributes"], "disallowed on this kind of request")


# --------------------------------------------------------------------------- the always-allow authorizer


def review_access(obj: JSON, user: JSON) -> JSON:
    """The answer to any access review: the review with ``status.allowed: true`` and
    :data:`ALLOW_REASON` (the always-allow authorizer). A self review's spec is not
    changed (Kubernetes checks it for the requesting ``user``)."""
    out = copy.deepcopy(obj)
    out["status"] = {"allowed": True, "reason": ALLOW_REASON}
    return out


def review_rules(obj: JSON, user: JSON) -> JSON:
    """The answer to a SelfSubjectRulesReview: every verb on every resource and non-resource
    URL (AlwaysAllow's ``RulesFor``), complete. Raises ValueError (400) without
    ``spec.namespace`` (``no namespace on request``)."""
    if not (obj.get("spec") or {}).get("namespace"):
        raise ValueError("no namespace on request")
    out = copy.deepcopy(obj)
    out["status"] = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                     "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                     "incomplete": False}
    return out


_CREATE = ("create",)

ENTRIES: tuple[Resource, ...] = (
    Resource(GROUP, "v1", "localsubjectaccessreviews", "localsubjectaccessreview", "LocalSubjectAccessReview",
             True, (), (), (), _CREATE, schema=LSAR_SCHEMA, validate=validate_local_subject_access_review,
             review=review_access),
    Resource(GROUP, "v1", "selfsubjectaccessreviews", "selfsubjectaccessreview", "SelfSubjectAccessReview",
             False, (), (), (), _CREATE, schema=SSAR_SCHEMA, validate=validate_self_subject_access_review,
             review=review_access),
    Resource(GROUP, "v1", "selfsubjectrulesreviews", "selfsubjectrulesreview", "SelfSubjectRulesReview",
             False, (), (), (), _CREATE, schema=SSRR_SCHEMA, review=review_rules),
    Resource(GROUP, "v1", "subjectaccessreviews", "subjectaccessreview", "SubjectAccessReview",
             False, (), (), (), _CREATE, schema=SAR_SCHEMA, validate=validate_subject_access_review,
             review=review_access),
)
