"""Create-only resources that are never stored: the review APIs, answered by a function.

A registry entry whose ``review`` is set (:attr:`controlplane.api.registry.Resource.stored`
is False) serves POST on its collection only, as the ``rest.Creater``-only storages of
``pkg/registry/authorization/*/rest.go`` and ``pkg/registry/authentication/*/rest.go``:
the body is validated by the kind's ``validate`` (422 Invalid, with the kind's causes; no
ObjectMeta name is required), then the entry's ``review(object, user)`` computes the
answer, returned with 201 Created; nothing is written to etcd and nothing can be listed,
watched or read (405). A review raising ValueError answers 400 BadRequest with its text.

The requesting user (:func:`request_user`): no authenticator runs yet, so every request is
``system:anonymous`` in group ``system:unauthenticated``, unless it impersonates
(``Impersonate-User``, ``Impersonate-Group``, ``Impersonate-Uid``, ``Impersonate-Extra-<key>``
headers, ``staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go``): then the
named user, its groups and ``system:authenticated`` (added for a user other than
``system:anonymous``, as the impersonation filter does).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from components.apiserver import status as st

ANONYMOUS = "system:anonymous"
UNAUTHENTICATED = "system:unauthenticated"
AUTHENTICATED = "system:authenticated"


def request_user(headers: Mapping[str, str], header_values: Any = None) -> dict[str, Any]:
    """The user a request acts as: ``{"username", "groups", "uid", "extra"}``.

    ``headers``: the request headers (case-insensitive mapping); ``header_values(name)``:
    every value of a repeated header (aiohttp's ``headers.getall``), else one value each."""
    def all_of(name: str) -> list[str]:
        if header_values is not None:
            return [str(v) for v in header_values(name, [])]
        v = headers.get(name)
        return [v] if v else []

    user = headers.get("Impersonate-User") or ""
    if not user:
        return {"username": ANONYMOUS, "groups": [UNAUTHENTICATED], "uid": "", "extra": {}}
    groups = [g for g in all_of("Impersonate-Group") if g]
    if user != ANONYMOUS and AUTHENTICATED not in groups:
        groups.append(AUTHENTICATED)
    elif user == ANONYMOUS and UNAUTHENTICATED not in groups:
        groups.append(UNAUTHENTICATED)
    extra: dict[str, list[str]] = {}
    for k in dict.fromkeys(h.lower() for h in headers):  # each header name once
        if k.startswith("impersonate-extra-"):
            extra.setdefault(unquote(k[len("impersonate-extra-"):]), []).extend(all_of(k))
    return {"username": user, "groups": groups, "uid": headers.get("Impersonate-Uid") or "", "extra": extra}


def answer(resource: Any, namespace: str | None, obj: dict[str, Any], user: Any,
           review: Any = None) -> dict[str, Any]:
    """Validate ``obj`` (422) and compute the review's answer (400 on ValueError): with
    ``review(obj, user)`` when given (the configured authorizers' answer), else the entry's own.

    ``namespace``: the request's, for a namespaced review (LocalSubjectAccessReview): a body
    namespace other than it → 400, none → the request's."""
    md = obj.get("metadata")
    if not isinstance(md, dict):
        md = obj["metadata"] = {}
    if resource.namespaced:
        if md.get("namespace") and namespace and md["namespace"] != namespace:
            raise st.bad_request("the namespace of the provided object does not match the namespace sent on "
                                 "the request")
        if namespace:
            md["namespace"] = namespace
    if resource.validate is not None:
        errs = st.error_list()
        resource.validate(obj, None, errs)
        if errs:
            raise st.invalid_fields(resource.kind, resource.group, "", st.error_list(errs))
    try:
        out: dict[str, Any] = (review or resource.review)(obj, user)
    except ValueError as e:
        raise st.bad_request(str(e)) from None
    return out
