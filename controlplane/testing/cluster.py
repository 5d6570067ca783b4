"""A whole control plane for a test session, driven from synchronous code.

:class:`ClusterHandle` runs :class:`controlplane.cli.cluster.LocalCluster` — the same
supervisor as ``controlplane up`` — on an event loop of its own, on a daemon thread, in
parallel-start mode: every service is a separate ``python -m controlplane ...`` process on
free ports, with its log in ``<data-dir>/logs/<name>.log``. The children are tied to this
process with a lifeline pipe (:mod:`controlplane.lifeline`), so they end with it however it
ends.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import http.client
import json
import os
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable, Coroutine, TypeVar

from controlplane import clusterconfig
from controlplane.cli import zygote
from controlplane.cli.cluster import LocalCluster

T = TypeVar("T")


@dataclass(frozen=True)
class ClusterSpec:
    """What a cluster runs: named nodes (one kubelet process each), hollow nodes (one kubelet
    process for all, ``hollow-0..N-1``) and an external etcd (comma list of URLs; None starts
    the embedded etcd in the data dir)."""

    nodes: tuple[str, ...] = ("node01", "node02")
    hollow_nodes: int = 0
    etcd_servers: str | None = None
    node_labels: tuple[tuple[str, str], ...] = field(default=())
    #: an OTLP/HTTP collector (``host:port``) every component sends its spans to (None: no tracing)
    tracing_endpoint: str | None = None
    #: absolute path of a declarative cluster config (:mod:`controlplane.clusterconfig`); when
    #: set, its nodes and pools replace ``nodes`` / ``hollow_nodes``
    config: str | None = None
    #: apiserver replicas sharing the one port (``controlplane up --apiservers``)
    apiservers: int = 1
    #: the etcd started when ``etcd_servers`` is None: ``embedded`` or ``real`` (``--etcd``)
    etcd: str = "embedded"
    #: members of that etcd cluster (``--etcd-members``; several only with ``etcd="real"``)
    etcd_members: int = 1
    #: fork the processes from the session's zygote (:func:`controlplane.cli.zygote.shared`: every
    #: service's modules imported once per session) instead of one ``python -m controlplane``
    #: interpreter start each; ignored where fork is unavailable
    fork_server: bool = True


class ClusterHandle:
    """A running control plane: ``server`` (URL), ``kubeconfig`` (path), ``data_dir``,
    ``node_names`` and ``log_paths`` (component name -> log file path).

    :meth:`start` blocks until the apiserver is ready, every node is Ready and the
    ``default`` ServiceAccount exists; raises RuntimeError (one line) when a service cannot
    start or is not ready within ``timeout`` seconds. :meth:`stop` stops every process
    (kubelets, scheduler, controller-manager, then apiserver, then etcd).
    """

    def __init__(self, data_dir: str, spec: ClusterSpec = ClusterSpec(),
                 say: Callable[[str], None] | None = None) -> None:
        self.spec = spec
        self.data_dir = os.path.abspath(data_dir)
        self.start_seconds = 0.0
        self._lines: list[str] = []
        self._zygote = spec.fork_server and zygote.available()
        self._cluster = LocalCluster(
            self.data_dir, etcd_servers=spec.etcd_servers, apiserver_port=0, etcd_port=0,
            nodes=spec.nodes, node_labels=dict(spec.node_labels), hollow_nodes=spec.hollow_nodes,
            say=say or self._lines.append, parallel=True, tracing_endpoint=spec.tracing_endpoint,
            config=clusterconfig.load(spec.config) if spec.config else None,
            apiservers=spec.apiservers, etcd=spec.etcd, etcd_members=spec.etcd_members)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="controlplane-cluster",
                                        daemon=True)
        self._supervisor: concurrent.futures.Future[None] | None = None

    # -- what tests use ----------------------------------------------------------
    @property
    def server(self) -> str:
        """The apiserver's URL, ``https://127.0.0.1:PORT``."""
        return self._cluster.server

    @property
    def ca_file(self) -> str:
        """The cluster CA (``<data-dir>/pki/ca.crt``): it signed the apiserver's serving certificate."""
        return self._cluster.pki.ca_file

    @property
    def admin_cert_files(self) -> tuple[str, str]:
        """``(certificate, key)`` paths of the admin's client certificate (``kubernetes-admin``,
        ``system:masters``; the one embedded in :attr:`kubeconfig`)."""
        return self._cluster.pki.path("admin"), self._cluster.pki.path("admin", "key")

    def ssl_context(self) -> ssl.SSLContext:
        """A client TLS context trusting :attr:`ca_file` and presenting the admin's certificate."""
        ctx = ssl.create_default_context(cafile=self.ca_file)
        ctx.load_cert_chain(*self.admin_cert_files)
        return ctx

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        u = urllib.parse.urlsplit(self.server)
        if u.scheme == "https":
            return http.client.HTTPSConnection(u.hostname or "127.0.0.1", u.port, timeout=timeout,
                                               context=self.ssl_context())
        return http.client.HTTPConnection(u.hostname or "127.0.0.1", u.port, timeout=timeout)

    @property
    def kubeconfig(self) -> str:
        """Path of the kubeconfig naming the apiserver (``<data-dir>/kubeconfig``)."""
        return self._cluster.kubeconfig

    @property
    def node_names(self) -> list[str]:
        """Every node's name: the named ones, then ``hollow-0..N-1``."""
        return self._cluster.node_names

    @property
    def endpoints(self) -> list[Any]:
        """Every process's :class:`controlplane.cli.cluster.MetricsEndpoint` (``job``, ``service``,
        ``url`` of its ``/metrics``, ``health``)."""
        return list(self._cluster.endpoints)

    @property
    def log_paths(self) -> dict[str, str]:
        """Component name (``etcd``, ``apiserver``, ``controller-manager``, ``scheduler``,
        ``kubelet-NODE``, ``kubelet-hollow``) -> path of its log file."""
        return {s.name: s.log_path for s in self._cluster.services}

    @property
    def running(self) -> list[str]:
        """Names of the components whose process is alive."""
        return [s.name for s in self._cluster.services if s.proc is not None and s.proc.returncode is None]

    def log_sizes(self) -> dict[str, int]:
        """Component name -> current size of its log in bytes (0 when absent)."""
        out = {}
        for name, path in self.log_paths.items():
            try:
                out[name] = os.path.getsize(path)
            except OSError:
                out[name] = 0
        return out

    def logs_since(self, offsets: dict[str, int], max_bytes: int = 20000) -> dict[str, str]:
        """Component name -> what its log gained after ``offsets`` (from :meth:`log_sizes`),
        at most the last ``max_bytes`` bytes of it, cut at a line start."""
        out = {}
        for name, path in self.log_paths.items():
            try:
                with open(path, "rb") as f:
                    f.seek(0, os.SEEK_END)
                    end = f.tell()
                    start = max(offsets.get(name, 0), end - max_bytes)
                    f.seek(start)
                    data = f.read()
            except OSError:
                continue
            if start > offsets.get(name, 0):
                data = data[data.find(b"\n") + 1:]
            out[name] = data.decode(errors="replace")
        return out

    def request(self, method: str, path: str, body: dict[str, Any] | None = None,
                timeout: float = 30) -> tuple[int, dict[str, Any]]:
        """One apiserver request: (HTTP status, decoded JSON body). OSError when unreachable."""
        conn = self._connection(timeout)
        try:
            data = json.dumps(body).encode() if body is not None else None
            conn.request(method, path, body=data, headers={"Content-Type": "application/json",
                                                           "Accept": "application/json"})
            r = conn.getresponse()
            raw = r.read()
            return r.status, (json.loads(raw) if raw else {})
        finally:
            conn.close()

    def watch_until(self, path: str, done: Callable[[dict[str, dict[str, Any]]], bool],
                    timeout: float = 60) -> None:
        """Watch a list path as a streaming list (``sendInitialEvents=true``: the current objects
        as ADDED events, then a BOOKMARK annotated ``k8s.io/initial-events-end``; KEP-3157,
        ``staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go``) and return once
        ``done(objects by name)`` holds — checked at that bookmark and after every later event.
        The stream is opened again when the apiserver ends it; TimeoutError after ``timeout`` s,
        RuntimeError when the apiserver refuses the watch."""
        deadline = time.monotonic() + timeout
        sep = "&" if "?" in path else "?"
        query = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"watch {path}: condition not met after {timeout:g}s")
            objects: dict[str, dict[str, Any]] = {}
            synced = False
            conn = self._connection(left)
            try:
                conn.request("GET", f"{path}{sep}{query}&timeoutSeconds={max(1, int(left))}")
                r = conn.getresponse()
                if r.status != 200:
                    raise RuntimeError(f"watch {path}: apiserver answered {r.status}: {r.read()[:200]!r}")
                for line in r:
                    if not line.strip():
                        continue
                    ev = json.loads(line)
                    obj = ev.get("object") or {}
                    meta = obj.get("metadata") or {}
                    if ev.get("type") == "BOOKMARK":
                        if (meta.get("annotations") or {}).get("k8s.io/initial-events-end") == "true":
                            synced = True
                    elif ev.get("type") == "DELETED":
                        objects.pop(meta.get("name", ""), None)
                    elif ev.get("type") in ("ADDED", "MODIFIED"):
                        objects[meta.get("name", "")] = obj
                    if synced and done(objects):
                        return
            except TimeoutError:
                raise TimeoutError(f"watch {path}: condition not met after {timeout:g}s") from None
            finally:
                conn.close()

    # -- lifecycle -----------------------------------------------------------------
    def _run(self, coro: Coroutine[Any, Any, T], timeout: float | None) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def start(self, timeout: float = 120) -> None:
        """Start every process in parallel and wait until the cluster is usable (see the class
        docstring); the start time in seconds is kept in ``start_seconds``."""
        t0 = time.monotonic()
        os.makedirs(self.data_dir, exist_ok=True)
        if self._zygote:
            self._cluster.zygote = zygote.shared()
        self._thread.start()
        try:
            self._run(asyncio.wait_for(self._cluster.start(), timeout), None)
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.monotonic() - t0
        self._supervisor = asyncio.run_coroutine_threadsafe(self._cluster.supervise(), self._loop)

    def stop(self) -> None:
        """Stop every process and the event loop thread; idempotent."""
        if not self._thread.is_alive():
            return
        if self._supervisor is not None:
            self._supervisor.cancel()
        try:
            self._run(self._cluster.stop(), 60)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
