"""``rbac.authorization.k8s.io/v1``: Role, ClusterRole, RoleBinding, ClusterRoleBinding (Kubernetes v1.32).

Stored and validated only: nothing authorizes with them yet (the security issue). Sources:
``staging/src/k8s.io/api/rbac/v1/types.go`` (schema, descriptions);
``pkg/apis/rbac/v1/defaults.go`` (roleRef.apiGroup, subjects' apiGroup by kind);
``pkg/apis/rbac/validation/validation.go`` (ValidateRBACName = ``path.IsValidPathSegmentName``,
ValidatePolicyRule, ValidateRoleBindingSubject, roleRef rules and ``cannot change roleRef``
on update, the ClusterRole aggregationRule); Table columns
``pkg/printers/internalversion/printers.go`` (printRoleBinding, printClusterRoleBinding;
roles have no printer: the default table, NAME and CREATED AT). A ClusterRole's
``aggregationRule`` is stored; no controller aggregates rules into it.
"""

from __future__ import annotations

from typing import Any

from controlplane.api import listfields, validators
from controlplane.api.groups import common
from controlplane.api.registry import JSON, KindSchema, Printer, Resource
from controlplane.api.validators import ErrorList

GROUP = "rbac.authorization.k8s.io"
SUBJECT_KINDS = ["ServiceAccount", "User", "Group"]

TYPES: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "PolicyRule": ("PolicyRule holds information that describes a policy rule, but does not contain information "
                   "about who the rule applies to or which namespace the rule applies to.", {
                       "verbs": ("[]string", "Verbs is a list of Verbs that apply to ALL the ResourceKinds "
                                             "contained in this rule. '*' represents all verbs."),
                       "apiGroups": ("[]string", "APIGroups is the name of the APIGroup that contains the "
                                                 "resources. \"\" represents the core API group and \"*\" "
                                                 "represents all API groups."),
                       "resources": ("[]string", "Resources is a list of resources this rule applies to. '*' "
                                                 "represents all resources."),
                       "resourceNames": ("[]string", "ResourceNames is an optional white list of names that the "
                                                     "rule applies to.  An empty set means that everything is "
                                                     "allowed."),
                       "nonResourceURLs": ("[]string", "NonResourceURLs is a set of partial urls that a user "
                                                       "should have access to.  *s are allowed, but only as the "
                                                       "full, final step in the path."),
                   }),
    "AggregationRule": ("AggregationRule describes how to locate ClusterRoles to aggregate into the ClusterRole", {
        "clusterRoleSelectors": ("[]LabelSelector", "ClusterRoleSelectors holds a list of selectors which will be "
                                                    "used to find ClusterRoles and create the rules. If any of the "
                                                    "selectors match, then the ClusterRole's permissions will be "
                                                    "added"),
    }),
    "Subject": ("Subject contains a reference to the object or user identities a role binding applies to.", {
        "kind": ("string", "Kind of object being referenced. Values defined by this API group are \"User\", "
                           "\"Group\", and \"ServiceAccount\"."),
        "apiGroup": ("string", "APIGroup holds the API group of the referenced subject. Defaults to \"\" for "
                               "ServiceAccount subjects. Defaults to \"rbac.authorization.k8s.io\" for User and "
                               "Group subjects."),
        "name": ("string", "Name of the object being referenced."),
        "namespace": ("string", "Namespace of the referenced object.  If the object kind is non-namespace, such "
                                "as \"User\" or \"Group\", and this value is not empty the Authorizer should report "
                                "an error."),
    }),
    "RoleRef": ("RoleRef contains information that points to the role being used", {
        "apiGroup": ("string", "APIGroup is the group for the resource being referenced"),
        "kind": ("string", "Kind is the type of resource being referenced"),
        "name": ("string", "Name is the name of resource being referenced"),
    }),
}

#: the list tags of ``rbac/v1/types.go``: every list ``+listType=atomic``
_A = listfields.ATOMIC
listfields.declare(structs={
    "PolicyRule": {"verbs": _A, "apiGroups": _A, "resources": _A, "resourceNames": _A, "nonResourceURLs": _A},
    "AggregationRule": {"clusterRoleSelectors": _A},
}, kinds={"Role": {"rules": _A}, "ClusterRole": {"rules": _A, "aggregationRule": "AggregationRule"},
          "RoleBinding": {"subjects": _A}, "ClusterRoleBinding": {"subjects": _A}})

_RULES = ("[]PolicyRule", "Rules holds all the PolicyRules for this Role")
_SUBJECTS = ("[]Subject", "Subjects holds references to the objects the role applies to.")
ROLE_SCHEMA = KindSchema("Role is a namespaced, logical grouping of PolicyRules that can be referenced as a unit "
                         "by a RoleBinding.", {"rules": _RULES}, TYPES)
CLUSTERROLE_SCHEMA = KindSchema(
    "ClusterRole is a cluster level, logical grouping of PolicyRules that can be referenced as a unit by a "
    "RoleBinding or ClusterRoleBinding.", {
        "rules": ("[]PolicyRule", "Rules holds all the PolicyRules for this ClusterRole"),
        "aggregationRule": ("AggregationRule", "AggregationRule is an optional field that describes how to build "
                                               "the Rules for this ClusterRole. If AggregationRule is set, then the "
                                               "Rules are controller managed and direct changes to Rules will be "
                                               "stomped by the controller."),
    }, TYPES)
ROLEBINDING_SCHEMA = KindSchema(
    "RoleBinding references a role, but does not contain it.  It can reference a Role in the same namespace or a "
    "ClusterRole in the global namespace. It adds who information via Subjects and namespace information by "
    "which namespace it exists in.", {
        "subjects": _SUBJECTS,
        "roleRef": ("RoleRef", "RoleRef can reference a Role in the current namespace or a ClusterRole in the "
                               "global namespace. If the RoleRef cannot be resolved, the Authorizer must return an "
                               "error. This field is immutable."),
    }, TYPES)
CLUSTERROLEBINDING_SCHEMA = KindSchema(
    "ClusterRoleBinding references a ClusterRole, but not contain it.  It can reference a ClusterRole in the "
    "global namespace, and adds who information via Subject.", {
        "subjects": _SUBJECTS,
        "roleRef": ("RoleRef", "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef "
                               "cannot be resolved, the Authorizer must return an error. This field is immutable."),
    }, TYPES)

# --------------------------------------------------------------------------- printers


#: the ROLE column's descriptions: rbac/v1beta1's roleRef docs (printers.go takes them from there)
_ROLE_COL = {
    "roleBinding": "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. "
                   "If the RoleRef cannot be resolved, the Authorizer must return an error.",
    "clusterRoleBinding": "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot "
                          "be resolved, the Authorizer must return an error.",
}


def _binding_columns(what: str) -> tuple[JSON, ...]:
    return (common.NAME_COL,
            common.col("Role", description=_ROLE_COL[what]),
            common.AGE_COL,
            common.col("Users", description=f"Users in the {what}", priority=1),
            common.col("Groups", description=f"Groups in the {what}", priority=1),
            common.col("ServiceAccounts", description=f"ServiceAccounts in the {what}", priority=1))


def subjects_by_kind(subjects: list[Any], namespace: str = "") -> tuple[list[str], list[str], list[str]]:
    """``SubjectsStrings``: users, groups and service accounts (``namespace:name``) of a binding."""
    users: list[str] = []
    groups: list[str] = []
    sas: list[str] = []
    for s in subjects:
        if not isinstance(s, dict):
            continue
        k, n = s.get("kind"), str(s.get("name", ""))
        if k == "ServiceAccount":
            sas.append(f"{s.get('namespace') or namespace}:{n}" if (s.get("namespace") or namespace) else n)
        elif k == "User":
            users.append(n)
        elif k == "Group":
            groups.append(n)
    return users, groups, sas


def _binding_row(b: JSON, now: float) -> tuple[list[Any], list[JSON] | None]:
    ref = b.get("roleRef") or {}
    users, groups, sas = subjects_by_kind(b.get("subjects") or [])
    return [common.name(b), f"{ref.get('kind', '')}/{ref.get('name', '')}", common.age(b, now),
            ", ".join(users), ", ".join(groups), ", ".join(sas)], None


ROLEBINDING_PRINTER = Printer(_binding_columns("roleBinding"), _binding_row)
CLUSTERROLEBINDING_PRINTER = Printer(_binding_columns("clusterRoleBinding"), _binding_row)

# --------------------------------------------------------------------------- defaults


def _default_subjects(obj: JSON) -> None:
    for s in obj.get("subjects") or []:
        if isinstance(s, dict) and not s.get("apiGroup") and s.get("kind") in ("User", "Group"):
            s["apiGroup"] = GROUP


def default_binding(obj: JSON) -> None:
    """SetDefaults_RoleBinding / ClusterRoleBinding and SetDefaults_Subject: roleRef.apiGroup
    ``rbac.authorization.k8s.io``; User and Group subjects the same apiGroup."""
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = GROUP
    _default_subjects(obj)

# --------------------------------------------------------------------------- validation


def validate_policy_rule(rule: object, namespaced: bool, path: str, errs: ErrorList) -> None:
    """ValidatePolicyRule: verbs required; non-resource URLs only in cluster rules and never
    with resources; resource rules need apiGroups and resources."""
    if not isinstance(rule, dict):
        errs.invalid(path, rule, "must be an object")
        return
    if not rule.get("verbs"):
        errs.required(f"{path}.verbs", "verbs must contain at least one value")
    urls = rule.get("nonResourceURLs") or []
    if urls:
        if namespaced:
            errs.invalid(f"{path}.nonResourceURLs", urls, "namespaced rules cannot apply to non-resource URLs")
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            errs.invalid(f"{path}.nonResourceURLs", urls,
                         "rules cannot apply to both regular resources and non-resource URLs")
        return
    if not rule.get("apiGroups"):
        errs.required(f"{path}.apiGroups", "resource rules must supply at least one api group")
    if not rule.get("resources"):
        errs.required(f"{path}.resources", "resource rules must supply at least one resource")


def _validate_rules(obj: JSON, namespaced: bool, errs: ErrorList) -> None:
    for i, rule in enumerate(obj.get("rules") or []):
        validate_policy_rule(rule, namespaced, f"rules[{i}]", errs)


def validate_role(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateRole: every rule (namespaced: no non-resource URLs)."""
    _validate_rules(obj, True, errs)


def validate_cluster_role(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateClusterRole: every rule; an aggregationRule needs at least one valid clusterRoleSelector."""
    _validate_rules(obj, False, errs)
    agg = obj.get("aggregationRule")
    if agg is None:
        return
    sels = agg.get("clusterRoleSelectors") if isinstance(agg, dict) else None
    if not sels:
        errs.required("aggregationRule.clusterRoleSelectors",
                      "at least one clusterRoleSelector required if aggregationRule is non-nil")
        return
    for i, sel in enumerate(sels):
        validators.validate_label_selector(sel, f"aggregationRule.clusterRoleSelectors[{i}]", errs)


def validate_subject(s: object, namespaced: bool, path: str, errs: ErrorList) -> None:
    """ValidateRoleBindingSubject: name required; a ServiceAccount a valid name, apiGroup ``""``
    and (in a ClusterRoleBinding) a namespace; User and Group the RBAC apiGroup; no other kind."""
    if not isinstance(s, dict):
        errs.invalid(path, s, "must be an object")
        return
    nm = s.get("name") or ""
    if not nm:
        errs.required(f"{path}.name", "")
    kind, api_group = s.get("kind") or "", s.get("apiGroup") or ""
    if kind == "ServiceAccount":
        if nm:
            for m in validators.is_dns1123_subdomain(str(nm)):
                errs.invalid(f"{path}.name", nm, m)
        if api_group:
            errs.not_supported(f"{path}.apiGroup", api_group, [""])
        if not namespaced and not s.get("namespace"):
            errs.required(f"{path}.namespace", "")
    elif kind in ("User", "Group"):
        if api_group != GROUP:
            errs.not_supported(f"{path}.apiGroup", api_group, [GROUP])
    else:
        errs.not_supported(f"{path}.kind", kind, SUBJECT_KINDS)


def _validate_binding(obj: JSON, old: JSON | None, errs: ErrorList, namespaced: bool) -> None:
    ref = obj.get("roleRef")
    ref = ref if isinstance(ref, dict) else {}
    if ref.get("apiGroup") != GROUP:
        errs.not_supported("roleRef.apiGroup", ref.get("apiGroup") or "", [GROUP])
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    if ref.get("kind") not in kinds:
        errs.not_supported("roleRef.kind", ref.get("kind") or "", kinds)
    nm = ref.get("name") or ""
    if not nm:
        errs.required("roleRef.name", "")
    else:
        for m in common.is_valid_path_segment_name(str(nm)):
            errs.invalid("roleRef.name", nm, m)
    for i, s in enumerate(obj.get("subjects") or []):
        validate_subject(s, namespaced, f"subjects[{i}]", errs)
    if old is not None and (old.get("roleRef") or {}) != (obj.get("roleRef") or {}):
        errs.invalid("roleRef", obj.get("roleRef"), "cannot change roleRef")


def validate_role_binding(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateRoleBinding (+ Update): roleRef to a Role or ClusterRole, the subjects; roleRef immutable."""
    _validate_binding(obj, old, errs, True)


def validate_cluster_role_binding(obj: JSON, old: JSON | None, errs: ErrorList) -> None:
    """ValidateClusterRoleBinding (+ Update): roleRef to a ClusterRole, the subjects; roleRef immutable."""
    _validate_binding(obj, old, errs, False)


# --------------------------------------------------------------------------- entries

_NAME = common.is_valid_path_segment_name

ENTRIES: tuple[Resource, ...] = (
    Resource(GROUP, "v1", "clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", False,
             printer=CLUSTERROLEBINDING_PRINTER, schema=CLUSTERROLEBINDING_SCHEMA,
             validate=validate_cluster_role_binding, name_rule=_NAME, default=default_binding),
    Resource(GROUP, "v1", "clusterroles", "clusterrole", "ClusterRole", False,
             printer=common.DEFAULT_TABLE, schema=CLUSTERROLE_SCHEMA, validate=validate_cluster_role,
             name_rule=_NAME),
    Resource(GROUP, "v1", "rolebindings", "rolebinding", "RoleBinding", True,
             printer=ROLEBINDING_PRINTER, schema=ROLEBINDING_SCHEMA, validate=validate_role_binding,
             name_rule=_NAME, default=default_binding),
    Resource(GROUP, "v1", "roles", "role", "Role", True,
             printer=common.DEFAULT_TABLE, schema=ROLE_SCHEMA, validate=validate_role, name_rule=_NAME),
)
