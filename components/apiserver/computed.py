"""Read-only resources that are never stored: computed on each GET from the watch caches.

A registry entry with a ``compute`` function (:attr:`controlplane.api.registry.Resource.computed`;
the ``metrics.k8s.io`` NodeMetrics and PodMetrics of :mod:`controlplane.api.groups.metrics`)
serves ``get`` and ``list`` only, as the ``rest.Getter`` / ``rest.Lister`` storages of
metrics-server (``sigs.k8s.io/metrics-server/pkg/api/node.go``, ``pod.go``) that the
aggregator proxies to on a real cluster:

* ``GET`` of the collection (or ``/namespaces/<ns>/<plural>``): the entry's objects, with
  ``labelSelector`` and ``fieldSelector`` (``metadata.name`` / ``metadata.namespace``) applied;
  a selector that does not parse → 400; the list's ``metadata`` is empty (no resourceVersion:
  nothing is stored), or a Table when asked for one (the entry's printer);
* ``GET`` of an item: the object, or 404 ``<kind, lower case>.<group> "<name>" not found``
  (``"<namespace>/<name>"`` for a namespaced kind), as metrics-server answers
  (``nodemetrics.metrics.k8s.io "n1" not found``, ``podmetrics.metrics.k8s.io "default/web" not found``);
* anything else (a watch, a write, a subresource) → 405 MethodNotAllowed.

The ``compute`` function reads the current objects of stored resources through
:func:`source_lister` (the apiserver's watch caches: never etcd) and the time from
:data:`controlplane.apitime.clock`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import SimpleNamespace
from typing import Any

from aiohttp import web

from components.apiserver import negotiation as neg
from components.apiserver import semantics as sem
from components.apiserver import status as st
from components.apiserver.routing import RequestInfo
from controlplane import apitime
from controlplane.api.registry import SourceLister


def source_lister(caches: Mapping[str, Any]) -> SourceLister:
    """``plural`` (``pods``; ``plural.group`` for a group's resource, the watch cache's name)
    → the current objects of that watch cache (none while it is not started)."""
    def objects(plural: str) -> Iterable[dict[str, Any]]:
        cache = caches.get(plural)
        return list(cache.objects.values()) if cache is not None else []
    return objects


def serve(request: web.Request, info: RequestInfo, caches: Mapping[str, Any]) -> web.Response:
    """Answer one request for the computed resource ``info.resource`` (module docstring)."""
    resource = info.resource
    if request.method != "GET" or info.watch_path or info.subresource or \
            neg.parse_bool(request.query.get("watch")):
        raise st.method_not_allowed()
    compute = resource.compute
    assert compute is not None
    objects = compute(source_lister(caches), info.namespace if resource.namespaced else None, apitime.clock())
    if info.name is not None:
        for obj in objects:
            md = obj.get("metadata") or {}
            if md.get("name") == info.name and (not resource.namespaced or md.get("namespace") == info.namespace):
                return neg.object_response(request, resource, obj)
        name = f"{info.namespace}/{info.name}" if resource.namespaced else info.name
        raise st.not_found(SimpleNamespace(plural=resource.kind.lower(), group=resource.group), name)
    matches = neg.list_predicate(resource, request.query, info.namespace)
    items = [o for o in objects if matches(o)]
    if neg.wants_table(request):
        return neg.json_response(sem.table(resource.facts_key, items, "", include_object=neg.include_object(request)),
                                 content_type=neg.TABLE_CT)
    return neg.json_response({"kind": f"{resource.kind}List", "apiVersion": resource.api_version,
                              "metadata": {}, "items": items})
