"""The RBAC storage's escalation check, run where admission runs (not a named plugin).

Kubernetes wraps the Role / ClusterRole / RoleBinding / ClusterRoleBinding storages with
``pkg/registry/rbac/*/policybased`` (``Create`` / ``Update`` refuse a write that grants
permissions the user does not hold); here the same check
(:func:`components.apiserver.authorization.escalation.check`) is a validating step of the
chain for those four kinds, on the running request's user
(:func:`~components.apiserver.authorization.context.current_user`). It is always in the
chain (``--disable-admission-plugins`` cannot name it), as the policybased storage always is.
"""

from __future__ import annotations

from typing import Any

from components.apiserver.admission import CREATE, UPDATE, Attributes, Context, Plugin
from components.apiserver.auth import Authorizer
from components.apiserver.authorization import escalation
from components.apiserver.authorization.context import current_user
from components.apiserver.authorization.rbac import RBACIndex

KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")


class RBACPolicy(Plugin):
    """Refuses RBAC writes that escalate (see the module docstring); ``authorizer``: the
    apiserver's (``escalate`` / ``bind`` verbs), ``index``: the RBAC rules the user holds."""

    name = "rbac-policybased"
    operations = frozenset({CREATE, UPDATE})
    validating = True
    #: the four storages ``pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased`` wrap
    validate_resources = frozenset({(escalation.GROUP, plural, "")
                                    for plural in ("roles", "clusterroles", "rolebindings", "clusterrolebindings")})

    def __init__(self, ctx: Context, authorizer: Authorizer, index: RBACIndex,
                 before: Any = None) -> None:
        super().__init__(ctx)
        self.authorizer = authorizer
        self.index = index
        self.before = before

    async def validate(self, a: Attributes) -> None:
        r = a.resource
        if r.group != escalation.GROUP or r.kind not in KINDS or a.subresource or a.object is None:
            return
        if self.before is not None:
            self.before()
        escalation.check(current_user(), r.kind, a.object, a.old_object, self.authorizer, self.index, r)
