"""Create-only resources that are never stored: the review APIs, answered by a function.

A registry entry whose ``review`` is set (:attr:`controlplane.api.registry.Resource.stored`
is False) serves POST on its collection only, as the ``rest.Creater``-only storages of
``pkg/registry/authorization/*/rest.go`` and ``pkg/registry/authentication/*/rest.go``:
the body is validated by the kind's ``validate`` (422 Invalid, with the kind's causes; no
ObjectMeta name is required), then the entry's ``review(object, user)`` computes the
answer, returned with 201 Created; nothing is written to etcd and nothing can be listed,
watched or read (405). A review raising ValueError answers 400 BadRequest with its text.

The requesting user is the one the authentication filter stored
(:func:`components.apiserver.auth.request_user`: authenticated, or impersonated through the
``Impersonate-*`` headers, :mod:`components.apiserver.authentication.impersonation`), passed as
``{"username", "uid", "groups", "extra"}`` (empty ones left out). A review the apiserver answers
itself (TokenReview, with its authenticators) passes its own ``review`` function.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from components.apiserver import status as st


def check(resource: Any, namespace: str | None, obj: dict[str, Any]) -> None:
    """Validate ``obj`` (422). ``namespace``: the request's, for a namespaced review
    (LocalSubjectAccessReview): a body namespace other than it → 400, none → the request's."""
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


async def answer(resource: Any, namespace: str | None, obj: dict[str, Any], user: dict[str, Any],
                 review: Callable[[dict[str, Any], dict[str, Any]], Awaitable[dict[str, Any]]] | None = None
                 ) -> dict[str, Any]:
    """:func:`check` ``obj``, then compute the review's answer (400 on ValueError): with the
    coroutine ``review(obj, user)`` when given, else the entry's ``review`` function."""
    check(resource, namespace, obj)
    try:
        out: dict[str, Any] = await review(obj, user) if review is not None else resource.review(obj, user)
    except ValueError as e:
        raise st.bad_request(str(e)) from None
    return out
