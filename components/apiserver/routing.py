"""Parse Kubernetes REST paths into a :class:`RequestInfo` (``staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go``).

Paths: ``/api/v1[/watch]/[namespaces/NS/]PLURAL[/NAME[/SUB]]`` and the same under
``/apis/GROUP/VERSION``; ``/api/v1/namespaces/NAME[/SUB]`` addresses namespaces themselves.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from aiohttp import web

from controlplane.api import resources as R


@dataclasses.dataclass
class RequestInfo:
    """What a resource path addresses. ``resource`` None means group-version discovery."""

    group: str
    version: str
    resource: Any = None
    namespace: str | None = None
    name: str | None = None
    subresource: str | None = None
    watch_path: bool = False

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


#: request storage key of the request's RequestInfo (None: not an API path we serve),
#: set once per request by the server's middleware (``WithRequestInfo`` in
#: ``endpoints/filters/requestinfo.go``)
REQUEST_INFO: Any = web.RequestKey("request_info", object) if hasattr(web, "RequestKey") else "request_info"


def _lookup(group: str, version: str, plural: str) -> Any:
    """The served resource (group, version, plural) in the registry, or None."""
    return R.REGISTRY.lookup(group, version, plural)


def parse(path: str) -> RequestInfo | None:
    """RequestInfo for ``path``, or None when it addresses nothing we serve."""
    segs = [s for s in path.split("/") if s]
    if len(segs) >= 2 and segs[0] == "api":
        group, version, rest = "", segs[1], segs[2:]
    elif len(segs) >= 3 and segs[0] == "apis":
        group, version, rest = segs[1], segs[2], segs[3:]
    else:
        return None
    info = RequestInfo(group, version)
    if rest and rest[0] == "watch":
        info.watch_path = True
        rest = rest[1:]
    if not rest:
        return info if not info.watch_path else None
    if rest[0] == "namespaces" and len(rest) >= 3:
        r = _lookup(group, version, rest[2])
        if r is not None and r.namespaced:
            info.namespace, info.resource = rest[1], r
            rest = rest[3:]
        else:
            r = _lookup(group, version, "namespaces")
            if r is None or len(rest) > 3 or rest[2] not in r.subresources:
                return None
            info.resource, info.name, info.subresource = r, rest[1], rest[2]
            return info
    else:
        r = _lookup(group, version, rest[0])
        if r is None:
            return None
        info.resource = r
        rest = rest[1:]
    if len(rest) > 2:
        return None
    if rest:
        info.name = rest[0]
    if len(rest) == 2:
        info.subresource = rest[1]
        if info.subresource not in info.resource.subresources:
            return None
    return info
