"""RBAC escalation prevention on writing Roles, ClusterRoles and their bindings.

As ``pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased/storage.go``
with ``pkg/registry/rbac/escalation_check.go`` and ``pkg/registry/rbac/validation/rule.go``
``ConfirmNoEscalation``. A create or update (whose rules, or roleRef, change) is allowed when

- the user is in ``system:masters`` (``EscalationAllowed``), or
- a role write: the authorizer allows the ``escalate`` verb on the role
  (``RoleEscalationAuthorized``); a binding write: the ``bind`` verb on the referenced role
  (``BindingAuthorized``), or
- the user already holds every rule being granted (``Covers`` of the user's rules in the
  object's namespace); an aggregationRule needs every permission (``*`` on ``*.*`` and ``*`` URLs).

Otherwise 403: ``clusterroles.rbac.authorization.k8s.io "x" is forbidden: user "jane"
(groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:``
followed by the missing rules, one per line, as ``CompactString``.
"""

from __future__ import annotations

from typing import Any

from components.apiserver import status as st
from components.apiserver.auth import MASTERS, Attributes, Authorizer, Decision, UserInfo
from components.apiserver.authorization.rbac import RBACIndex
from components.apiserver.authorization.rules import compact, compact_string, covers, go_quote_list

JSON = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"
ROLE_KINDS = {"Role": "roles", "ClusterRole": "clusterroles"}
BINDING_KINDS = {"RoleBinding", "ClusterRoleBinding"}
FULL_AUTHORITY = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, {"verbs": ["*"], "nonResourceURLs": ["*"]}]


def confirm_no_escalation(user: UserInfo, namespace: str, rules: list[JSON], index: RBACIndex) -> str | None:
    """``ConfirmNoEscalation``: None when ``user`` holds every rule of ``rules`` in
    ``namespace``, else the error text."""
    owned, errors = index.rules_for(user, namespace)
    ok, missing = covers(owned, rules)
    if ok:
        return None
    lines = sorted({compact_string(r) for r in compact(missing)})
    msg = (f'user "{user.name}" (groups={go_quote_list(user.groups)}) is attempting to grant RBAC permissions '
           "not currently held:\n" + "\n".join(lines))
    if errors:
        msg += "; resolution errors: [" + ", ".join(errors) + "]"
    return msg


def _allowed(authorizer: Authorizer, user: UserInfo, verb: str, resource: str, name: str, namespace: str) -> bool:
    a = Attributes(user, verb, True, namespace=namespace, api_group=GROUP, api_version="*", resource=resource,
                   name=name)
    return authorizer.authorize(a)[0] is Decision.ALLOW


def check(user: UserInfo | None, kind: str, obj: JSON, old: JSON | None, authorizer: Authorizer,
          index: RBACIndex, resource: Any) -> None:
    """Raise a 403 :class:`~components.apiserver.status.APIError` when writing ``obj`` (a
    ``kind`` object; ``old``: the stored one on update) would escalate ``user``'s privileges.
    ``user`` None (the apiserver's own writes) is always allowed."""
    if user is None or MASTERS in user.groups:
        return
    md = obj.get("metadata") or {}
    name, ns = md.get("name") or "", md.get("namespace") or ""
    if kind in ROLE_KINDS:
        if old is not None and old.get("rules") == obj.get("rules") \
                and old.get("aggregationRule") == obj.get("aggregationRule"):
            return
        if _allowed(authorizer, user, "escalate", ROLE_KINDS[kind], name, ns):
            return
        err = confirm_no_escalation(user, ns, list(obj.get("rules") or []), index)
        if err is not None:
            raise st.forbidden(resource, name, err)
        if kind == "ClusterRole" and obj.get("aggregationRule") is not None \
                and confirm_no_escalation(user, "", FULL_AUTHORITY, index) is not None:
            raise st.forbidden(resource, name, "must have cluster-admin privileges to use the aggregationRule")
        return
    if kind in BINDING_KINDS:
        ref = obj.get("roleRef") or {}
        if old is not None and (old.get("roleRef") or {}) == ref:
            return
        ref_kind, ref_name = ref.get("kind") or "", ref.get("name") or ""
        plural = ROLE_KINDS.get(ref_kind, "")
        if plural and _allowed(authorizer, user, "bind", plural, ref_name, ns):
            return
        try:
            rules = index.role_reference_rules(ref_kind, ref_name, ns)
        except LookupError as e:
            raise st.forbidden(resource, name, str(e).strip("'")) from None
        err = confirm_no_escalation(user, ns, list(rules), index)
        if err is not None:
            raise st.forbidden(resource, name, err)
