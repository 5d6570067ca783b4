"""The embedded etcd's ``/metrics`` on ``prometheus-client`` (etcd serves them beside gRPC on the
client port: ``server/etcdserver/api/etcdhttp/metrics.go``).

* gauges read at scrape time from the :class:`~.core.Core`, with etcd's names
  (``server/etcdserver/metrics.go``, ``server/storage/mvcc/metrics.go``): ``etcd_server_has_leader``,
  ``etcd_server_is_leader``, ``etcd_server_proposals_committed_total``, ``..._applied_total``,
  ``etcd_mvcc_db_total_size_in_bytes``, ``etcd_debugging_mvcc_keys_total``, ``..._current_revision``,
  ``..._compact_revision``, ``..._watch_stream_total``, ``..._watcher_total``,
  ``etcd_server_version{server_version}``;
* ``etcd_disk_wal_fsync_duration_seconds`` (histogram; etcd's buckets 1 ms·2^i, i < 14), observed by
  the WAL thread after each fdatasync (``server/storage/wal/metrics.go``);
* ``grpc_server_handled_total{grpc_type, grpc_service, grpc_method, grpc_code}`` (counter), once per
  finished call, as go-grpc-prometheus' server interceptor (``grpc_code``: ``OK``, ``Unavailable``...).

One :class:`EtcdMetrics` per server (tests run several in a process).
"""

from __future__ import annotations

from typing import Any, Iterator

import grpc
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from controlplane import metrics as m

#: go-grpc-prometheus' grpc_code label: the Go names of the codes (codes.Code.String())
_GO_CODES = {c: "".join(p.capitalize() for p in c.name.split("_")) for c in grpc.StatusCode}
_GO_CODES[grpc.StatusCode.OK] = "OK"


class _CoreGauges(Collector):
    def __init__(self, core: Any, version: str) -> None:
        self.core = core
        self.version = version

    def collect(self) -> Iterator[GaugeMetricFamily]:
        core = self.core
        hub, store = core.hub, core.store
        rows = (
            ("etcd_server_has_leader", "Whether or not a leader exists. 1 is existence, 0 is not.", 1),
            ("etcd_server_is_leader", "Whether or not this member is a leader. 1 if is, 0 otherwise.", 1),
            ("etcd_server_proposals_committed_total", "The total number of consensus proposals committed.",
             core.durable_index),
            ("etcd_server_proposals_applied_total", "The total number of consensus proposals applied.",
             core.durable_index),
            ("etcd_mvcc_db_total_size_in_bytes", "Total size of the underlying database physically allocated "
             "in bytes.", store.size + 4096),
            ("etcd_debugging_mvcc_keys_total", "Total number of keys.",
             sum(1 for h in store.hist.values() if h[-1].create_revision)),
            ("etcd_debugging_mvcc_current_revision", "The current revision of store.", store.committed),
            ("etcd_debugging_mvcc_compact_revision", "The revision of the last compaction in store.",
             store.compact_rev),
            ("etcd_debugging_mvcc_watch_stream_total", "Total number of watch streams.", len(hub.streams)),
            ("etcd_debugging_mvcc_watcher_total", "Total number of watchers.",
             sum(len(st.watchers) for st in hub.streams)),
        )
        for name, help_, value in rows:
            yield GaugeMetricFamily(name, help_, value=value)
        v = GaugeMetricFamily("etcd_server_version", "Which version is running. 1 for 'server_version' label "
                              "with current version.", labels=("server_version",))
        v.add_metric((self.version,), 1)
        yield v


class EtcdMetrics:
    """The families of one etcd server on :attr:`registry`; :meth:`attach` wires the hooks."""

    def __init__(self, core: Any, version: str) -> None:
        self.registry = r = CollectorRegistry(auto_describe=True)
        r.register(_CoreGauges(core, version))
        self.fsync = m.histogram("etcd_disk_wal_fsync_duration_seconds",
                                 "The latency distributions of fsync called by WAL.", (),
                                 m.exponential_buckets(0.001, 2, 14), r)
        self.handled = m.Children(m.counter(
            "grpc_server_handled_total", "Total number of RPCs completed on the server, regardless of success "
            "or failure.", ("grpc_type", "grpc_service", "grpc_method", "grpc_code"), r))

    def on_handled(self, method: tuple[str, str, str], code: grpc.StatusCode) -> None:
        """Count one finished call of ``method`` (grpc_type, grpc_service, grpc_method)."""
        self.handled.get(method + (_GO_CODES[code],)).inc()

    def attach(self, core: Any, server: Any) -> None:
        """Observe ``core``'s WAL fsyncs and ``server``'s finished calls (our transport only)."""
        if core.datadir is not None:
            core.datadir.on_fsync = self.fsync.observe
        if hasattr(server, "on_handled"):
            server.on_handled = self.on_handled

    def text(self) -> bytes:
        """The exposition text (with the process's ``kubernetes_build_info``-free registry: etcd's own only)."""
        return m.exposition(self.registry)
