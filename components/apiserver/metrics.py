"""The apiserver's ``/metrics`` (Prometheus text format 0.0.4), on ``prometheus-client``.

Names and labels follow ``staging/src/k8s.io/apiserver/pkg/endpoints/metrics/metrics.go`` and
``pkg/storage`` / ``pkg/storage/cacher`` metrics:

* ``apiserver_request_total`` (counter) {verb, group, version, resource, subresource, scope, component, code}
* ``apiserver_request_duration_seconds`` (histogram, same labels but code; the real bucket bounds)
* ``apiserver_registered_watchers`` (gauge) {group, version, kind}, read from the watch caches at scrape
* ``apiserver_current_inflight_requests`` (gauge) {request_kind = readOnly | mutating}
* ``apiserver_storage_objects`` (gauge) {resource}: objects per resource (``group`` dotted: ``deployments.apps``),
  read from the watch caches at scrape (Kubernetes counts etcd keys every minute; the caches hold them all)
* ``apiserver_watch_events_total`` (counter) {group, version, kind}: events sent to watchers
* ``etcd_request_duration_seconds`` (histogram) {operation, type}: each storage call
  (``pkg/storage/etcd3/metrics/metrics.go``; ``type`` the resource's etcd directory)

Each :class:`Metrics` has its own registry (tests build several apiservers in one process); the
handler serves it beside the process's :data:`controlplane.metrics.REGISTRY` (``kubernetes_build_info``).
The request path costs one dict lookup per family and in-place increments
(:class:`controlplane.metrics.Children`).
"""

from __future__ import annotations

from typing import Any, Iterable

from prometheus_client import CollectorRegistry

from controlplane import metrics as m

#: histogram bounds of apiserver_request_duration_seconds (seconds), as metrics.go
BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30,
           45, 60)
#: etcd_request_duration_seconds' bounds (etcd3/metrics/metrics.go)
ETCD_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60)
REQUEST_LABELS = ("verb", "group", "version", "resource", "subresource", "scope", "component")
GVK = ("group", "version", "kind")


class Metrics:
    """The apiserver's families on one registry. ``observe(labels, code, seconds)`` per request,
    ``watch_events(resource, n)`` per fanned-out event; ``render(...)`` → exposition text."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self._requests = m.Children(m.counter(
            "apiserver_request_total", "Counter of apiserver requests broken out for each verb, dry run value, "
            "group, version, resource, scope, component, and HTTP response code.", REQUEST_LABELS + ("code",), r))
        self._durations = m.Children(m.histogram(
            "apiserver_request_duration_seconds", "Response latency distribution in seconds for each verb, dry "
            "run value, group, version, resource, subresource, scope and component.", REQUEST_LABELS, BUCKETS, r))
        self._watchers = m.gauge("apiserver_registered_watchers",
                                 "Number of currently registered watchers for a given resources", GVK, r)
        self._inflight = m.gauge("apiserver_current_inflight_requests", "Maximal number of currently used "
                                 "inflight request limit of this apiserver per request kind in last second.",
                                 ("request_kind",), r)
        self._objects = m.gauge("apiserver_storage_objects",
                                "Number of stored objects at the time of last check split by kind.", ("resource",), r)
        self._events = m.Children(m.counter("apiserver_watch_events_total",
                                            "Number of events sent in watch clients", GVK, r))
        self._etcd = m.Children(m.histogram(
            "etcd_request_duration_seconds", "Etcd request latency in seconds for each operation and object type.",
            ("operation", "type"), ETCD_BUCKETS, r))

    def etcd_request(self, operation: str, type_: str, seconds: float) -> None:
        """One storage call (``Store.observe``): ``operation`` create/get/list/update/delete."""
        self._etcd.get((operation, type_)).observe(seconds)

    def observe(self, labels: tuple[str, ...], code: int, seconds: float) -> None:
        """Count one request (``labels`` in :data:`REQUEST_LABELS` order) and its latency (seconds)."""
        self._requests.get(labels + (str(code),)).inc()
        self._durations.get(labels).observe(seconds)

    def watch_events(self, resource: Any, delivered: int) -> None:
        """``delivered`` watchers were sent one event of ``resource`` (a registry Resource)."""
        if delivered:
            self._events.get((resource.group, resource.version, resource.kind)).inc(delivered)

    def render(self, watchers: dict[tuple[str, str, str], int], inflight: dict[str, int],
               objects: Iterable[tuple[str, int]] = ()) -> str:
        """The exposition text; ``watchers`` maps (group, version, kind) → count, ``inflight``
        request kind → count, ``objects`` (resource, count) pairs."""
        self._watchers.clear()
        for key, n in sorted(watchers.items()):
            self._watchers.labels(*key).set(n)
        for kind in sorted(inflight):
            self._inflight.labels(kind).set(inflight[kind])
        self._objects.clear()
        for res, n in sorted(objects):
            self._objects.labels(res).set(n)
        return m.exposition(self.registry, m.REGISTRY).decode()
