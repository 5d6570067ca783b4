"""Impersonation (``staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go``).

The headers ``Impersonate-User``, ``Impersonate-Group`` (repeatable), ``Impersonate-Uid`` and
``Impersonate-Extra-<key>`` (repeatable; the key lower-cased and percent-unescaped) become a
list of requests (:func:`requests_from_headers`, ``buildImpersonationRequests``); a user name
``system:serviceaccount:NS:NAME`` is a ServiceAccount. Groups, extras or a uid without a user
→ 500 ``Internal error occurred: requested [...] without impersonating a user``.

Each request is authorized for the requesting user (:func:`impersonate`): verb
``impersonate`` on ``users``, ``groups``, ``serviceaccounts`` (in the account's namespace),
``uids`` or ``userextras/<key>`` (the last two in group ``authentication.k8s.io``), with the
impersonated name; any decision but Allow → 403 with Kubernetes' words
(``users "x" is forbidden: User "y" cannot impersonate resource "users" in API group "" at the
cluster scope``, ``: <reason>`` when the authorizer gave one).

The new user: the named user; its groups are the ones asked for, or, for a service account
without groups asked, ``system:serviceaccounts`` and ``system:serviceaccounts:NS``; then
``system:authenticated`` is appended for a user other than ``system:anonymous`` unless
``system:authenticated`` or ``system:unauthenticated`` is already there, and
``system:unauthenticated`` for ``system:anonymous`` unless there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from types import SimpleNamespace
from typing import Any
from urllib.parse import unquote

from components.apiserver import status as st
from components.apiserver.auth import (
    ANONYMOUS,
    AUTHENTICATED,
    UNAUTHENTICATED,
    Attributes,
    Authorizer,
    Decision,
    UserInfo,
)
from components.apiserver.authentication.serviceaccount import group_names, make_username, split_username

USER_HEADER = "Impersonate-User"
GROUP_HEADER = "Impersonate-Group"
UID_HEADER = "Impersonate-Uid"
EXTRA_PREFIX = "impersonate-extra-"
AUTHN_GROUP = "authentication.k8s.io"


@dataclasses.dataclass(frozen=True)
class Request:
    """One thing to impersonate (``v1.ObjectReference`` there): ``kind`` User, ServiceAccount,
    Group, UserExtra (``field_path`` the extra key) or UID."""

    kind: str
    name: str
    namespace: str = ""
    api_version: str = ""
    field_path: str = ""

    def go(self) -> str:
        """Go's ``%v`` of the ObjectReference (Kind Namespace Name UID APIVersion ResourceVersion FieldPath)."""
        return "{" + " ".join((self.kind, self.namespace, self.name, "", self.api_version, "", self.field_path)) + "}"


def is_impersonating(headers: Iterable[str]) -> bool:
    """Whether any header name is an impersonation header (cheap pre-check)."""
    for h in headers:
        if h[:12].lower() == "impersonate-":
            return True
    return False


def requests_from_headers(headers: Any, getall: Callable[..., list[str]] | None = None) -> list[Request]:
    """``buildImpersonationRequests``: ``headers`` a case-insensitive mapping, ``getall(name,
    default)`` every value of a repeated header. Raises :class:`~components.apiserver.status.APIError`
    500 for groups / extras / uid without a user."""
    def all_of(name: str) -> list[str]:
        if getall is not None:
            return [str(v) for v in getall(name, [])]
        v = headers.get(name)
        return [v] if v is not None else []
    out: list[Request] = []
    user = headers.get(USER_HEADER) or ""
    if user:
        sa = split_username(user)
        out.append(Request("ServiceAccount", sa[1], sa[0]) if sa else Request("User", user))
    groups = all_of(GROUP_HEADER)
    out.extend(Request("Group", g) for g in groups)
    has_extra = False
    for h in dict.fromkeys(str(k).lower() for k in headers):  # each header name once
        if h.startswith(EXTRA_PREFIX):
            has_extra = True
            key = unquote(h[len(EXTRA_PREFIX):])
            out.extend(Request("UserExtra", v, api_version=f"{AUTHN_GROUP}/v1", field_path=key) for v in all_of(h))
    uid = headers.get(UID_HEADER) or ""
    if uid:
        out.append(Request("UID", uid, api_version=f"{AUTHN_GROUP}/v1"))
    if (groups or has_extra or uid) and not user:
        raise st.internal("requested [" + " ".join(r.go() for r in out) + "] without impersonating a user")
    return out


def forbidden_message(a: Attributes) -> str:
    """``responsewriters.forbiddenMessage`` (``&``, ``<``, ``>`` escaped as its sanitizer does)."""
    if not a.resource_request:
        msg = f'User "{a.user.name}" cannot {a.verb} path "{a.path}"'
    else:
        res = a.resource + (f"/{a.subresource}" if a.subresource else "")
        where = f'in the namespace "{a.namespace}"' if a.namespace else "at the cluster scope"
        msg = f'User "{a.user.name}" cannot {a.verb} resource "{res}" in API group "{a.api_group}" {where}'
    return msg.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def forbidden(a: Attributes, reason: str) -> st.APIError:
    """``responsewriters.Forbidden``: 403 ``<resource>[.<group>] "<name>" is forbidden: <message>[: <reason>]``."""
    msg = forbidden_message(a)
    return st.forbidden(SimpleNamespace(plural=a.resource, group=a.api_group), a.name,
                        f"{msg}: {reason}" if reason else msg)


def impersonate(requestor: UserInfo, requests: list[Request], authorizer: Authorizer,
                groups_specified: bool) -> UserInfo:
    """The impersonated user, every request authorized for ``requestor`` first (403 on the
    first that is not allowed). ``groups_specified``: an ``Impersonate-Group`` header was sent."""
    username, uid = "", ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for r in requests:
        version = r.api_version.split("/")[-1] if r.api_version else ""
        if r.kind == "ServiceAccount":
            resource, group, sub = "serviceaccounts", "", ""
            username = make_username(r.namespace, r.name)
            if not groups_specified:
                groups = list(group_names(r.namespace))
        elif r.kind == "User":
            resource, group, sub = "users", "", ""
            username = r.name
        elif r.kind == "Group":
            resource, group, sub = "groups", "", ""
            groups.append(r.name)
        elif r.kind == "UserExtra":
            resource, group, sub = "userextras", AUTHN_GROUP, r.field_path
            extra.setdefault(r.field_path, []).append(r.name)
        else:
            resource, group, sub = "uids", AUTHN_GROUP, ""
            uid = r.name
        attrs = Attributes(requestor, "impersonate", True, namespace=r.namespace, api_group=group,
                           api_version=version, resource=resource, subresource=sub, name=r.name)
        decision, reason = authorizer.authorize(attrs)
        if decision is not Decision.ALLOW:
            raise forbidden(attrs, reason)
    if username != ANONYMOUS:
        if AUTHENTICATED not in groups and UNAUTHENTICATED not in groups:
            groups.append(AUTHENTICATED)
    elif UNAUTHENTICATED not in groups:
        groups.append(UNAUTHENTICATED)
    return UserInfo(username, uid, tuple(groups), {k: tuple(v) for k, v in extra.items()})
