"""The apiserver's OpenTelemetry spans (KEP-647), when tracing is configured (:mod:`controlplane.otel`).

:func:`middleware`, the outermost one, as ``staging/src/k8s.io/apiserver/pkg/endpoints/filters/
traces.go`` ``WithTracing`` (otelhttp): one SERVER span per request, a child of the request's W3C
``traceparent`` header, named ``getSpanNameFromRequestInfo``'s way — ``POST
/api/v1/namespaces/{:namespace}/pods``, ``PUT /apis/apps/v1/namespaces/{:namespace}/deployments/{:name}/status``;
the method alone for non-resource paths — with ``http.method``, ``http.target``, ``http.user_agent``,
``audit-id`` and ``http.status_code``. Under it the handler's span, as ``endpoints/handlers``
name theirs: ``Create`` (POST), ``Update`` (PUT), ``Patch`` (PATCH), ``Delete`` (DELETE); under that
the storage's (``Create etcd3``, ``GuaranteedUpdate etcd3``, ``Delete etcd3``, see
:mod:`controlplane.storage.store`). A created object keeps the traceparent of its handler span in
:data:`controlplane.otel.ANNOTATION` (:mod:`.registrystore`).
"""

from __future__ import annotations

import uuid
from typing import Any

from aiohttp import web

from components.apiserver import routing
from controlplane import otel

#: the handler span of each write verb (endpoints/handlers/{create,update,patch,delete}.go)
HANDLER_SPANS = {"POST": "Create", "PUT": "Update", "PATCH": "Patch", "DELETE": "Delete"}


def span_name(method: str, info: Any) -> str:
    """``getSpanNameFromRequestInfo``: the method and the path with ``{:namespace}`` / ``{:name}``."""
    if info is None or info.resource is None:
        return method
    name = "/api" if not info.group else f"/apis/{info.group}"
    name += f"/{info.version}"
    if info.namespace:
        name += "/namespaces/{:namespace}"
    name += f"/{info.resource.plural}"
    if info.name:
        name += "/{:name}"
    if info.subresource:
        name += f"/{info.subresource}"
    return f"{method} {name}"


@web.middleware
async def middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    """Trace one request (see the module docstring); a no-op pass-through when tracing is off."""
    if not otel.enabled():
        return await handler(request)
    api = request.path.startswith(("/api/", "/apis/"))
    info = routing.parse(request.path) if api else None
    attrs = {"http.method": request.method, "http.target": request.path_qs,
             "http.user_agent": request.headers.get("User-Agent", ""),
             "audit-id": request.headers.get("Audit-ID") or str(uuid.uuid4())}
    with otel.span(span_name(request.method, info), parent=request.headers.get("traceparent"),
                   attributes=attrs, server=True) as root:
        resource: Any = info.resource if info is not None else None
        verb = HANDLER_SPANS.get(request.method) if resource is not None else None
        try:
            if verb is None:
                resp = await handler(request)
            else:
                with otel.span(verb, attributes={"audit-id": attrs["audit-id"], "resource": resource.plural}):
                    resp = await handler(request)
        except web.HTTPException as e:
            if root is not None:
                root.set_attribute("http.status_code", e.status)
            raise
        if root is not None:
            root.set_attribute("http.status_code", resp.status)
        return resp


def middlewares() -> list[Any]:
    """``[middleware]`` when tracing is on in this process, else ``[]`` (no cost per request)."""
    return [middleware] if otel.enabled() else []
