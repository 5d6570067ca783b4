"""Authorization attributes from a request's method, path and query.

As ``staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go``
(``RequestInfoFactory.NewRequestInfo``) and ``filters/authorization.go``
(``GetAuthorizerAttributes``): derived from the path itself, not from the served
registry, so a request for a resource we do not serve is authorized before its 404.

- a path outside ``/api/<version>/…`` and ``/apis/<group>/<version>/…`` (``/healthz``,
  ``/api``, ``/apis/apps/v1``) is a non-resource request: verb = lower-case method, ``path``;
- else the verb comes from ``/watch/`` or ``/proxy/`` in the path, or the method (POST
  create, GET/HEAD get, PUT update, PATCH patch, DELETE delete); a get without a name is a
  list, or a watch with ``?watch=true``; a delete without a name a deletecollection;
  ``namespaces/<ns>/<resource>…`` scopes the request to ``<ns>`` (``namespaces/<ns>/status``
  and ``/finalize`` address the namespace's own subresources); a list's or watch's
  ``fieldSelector=metadata.name=<n>`` names the object.
"""

from __future__ import annotations

from collections.abc import Mapping

from components.apiserver.auth import Attributes, UserInfo
from controlplane.selectors import parse_field_selector

_METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch",
                 "DELETE": "delete"}
_SPECIAL_VERBS = ("proxy", "watch")
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


def _valid_path_segment(name: str) -> bool:
    """``path.IsValidPathSegmentName``: not ``.``/``..``, no ``/`` or ``%``."""
    return name not in (".", "..") and "/" not in name and "%" not in name


def request_attributes(user: UserInfo, method: str, path: str, query: Mapping[str, str]) -> Attributes:
    """The :class:`~components.apiserver.auth.Attributes` of one request (see the module
    docstring). ``query``: the URL's query parameters (``watch``, ``fieldSelector``)."""
    parts = [p for p in path.strip("/").split("/") if p] if path != "/" else []
    nonresource = Attributes(user, method.lower(), False, path=path)
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return nonresource
    group = ""
    rest = parts[1:]
    if parts[0] == "apis":
        if len(rest) < 3:
            return nonresource
        group, rest = rest[0], rest[1:]
    version, rest = rest[0], rest[1:]
    if rest[0] in _SPECIAL_VERBS:
        if len(rest) < 2:
            # "unable to determine kind and namespace from url": requestinfo.go fails the
            # request; authorize it as the non-resource path it is
            return nonresource
        verb, rest = rest[0], rest[1:]
    else:
        verb = _METHOD_VERBS.get(method.upper(), "")
    namespace = ""
    if rest[0] == "namespaces":
        if len(rest) > 1:
            namespace = rest[1]
            if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
                rest = rest[2:]
    resource = name = subresource = ""
    if len(rest) >= 3 and verb != "proxy":
        subresource = rest[2]
    if len(rest) >= 2:
        name = rest[1]
    resource = rest[0]
    selector: tuple[tuple[str, str, str], ...] = ()
    if not name and verb in ("get", "watch", "list"):
        if verb == "get":
            verb = "watch" if str(query.get("watch", "")).lower() in ("true", "1") else "list"
        try:
            selector = parse_field_selector(query.get("fieldSelector")).requirements
        except ValueError:
            selector = ()
        for f, op, v in selector:
            if f == "metadata.name" and op == "=" and _valid_path_segment(v):
                name = v
                break
    if not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(user, verb, True, namespace=namespace, api_group=group, api_version=version,
                      resource=resource, subresource=subresource, name=name, path=path,
                      field_selector=tuple(selector))
