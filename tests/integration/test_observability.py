"""Metrics, health and OpenTelemetry traces of a real ``controlplane up`` (real processes).

One cluster for the module (one node), every component sending spans to an in-process OTLP/HTTP
receiver (a tiny aiohttp server on its own thread decoding ``ExportTraceServiceRequest``). The
metrics of every component are scraped over HTTP and parsed with
``prometheus_client.parser.text_string_to_metric_families``.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import secrets
import ssl
import threading
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from prometheus_client.parser import text_string_to_metric_families

from controlplane.testing.cluster import ClusterHandle, ClusterSpec

pytestmark = pytest.mark.integration


class OTLPReceiver:
    """An OTLP/HTTP trace receiver (``POST /v1/traces``, protobuf) on 127.0.0.1: ``spans`` holds
    ``(service.name, Span)`` pairs; :meth:`wait_for` blocks until a predicate over them holds."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, Any]] = []
        self.cond = threading.Condition()
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="otlp-receiver")

    async def _export(self, request: web.Request) -> web.Response:
        req = ExportTraceServiceRequest()
        req.ParseFromString(await request.read())
        got = []
        for rs in req.resource_spans:
            service = next((a.value.string_value for a in rs.resource.attributes if a.key == "service.name"), "")
            for ss in rs.scope_spans:
                got.extend((service, s) for s in ss.spans)
        with self.cond:
            self.spans.extend(got)
            self.cond.notify_all()
        return web.Response(body=b"", content_type="application/x-protobuf")

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/traces", self._export)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def start(self) -> None:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)

    def wait_for(self, predicate: Callable[[list[tuple[str, Any]]], bool], timeout: float = 60) -> None:
        with self.cond:
            if not self.cond.wait_for(lambda: predicate(self.spans), timeout):
                names = sorted({(svc, s.name) for svc, s in self.spans})
                raise TimeoutError(f"spans not received in {timeout}s; have {names[:60]}")


@pytest.fixture(scope="module")
def receiver() -> Iterator[OTLPReceiver]:
    r = OTLPReceiver()
    r.start()
    yield r
    r.stop()


@pytest.fixture(scope="module")
def traced_cluster(tmp_path_factory, receiver) -> Iterator[ClusterHandle]:
    c = ClusterHandle(str(tmp_path_factory.mktemp("observability")),
                      ClusterSpec(nodes=("node01",), tracing_endpoint=f"127.0.0.1:{receiver.port}"))
    c.start()
    yield c
    c.stop()


def get(url: str, context: ssl.SSLContext | None = None) -> tuple[int, str, str]:
    """(status, content type, body) of a GET (an https one trusting ``context``'s CA)."""
    try:
        with urllib.request.urlopen(url, timeout=10, context=context) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


def scrape(cluster: ClusterHandle, job: str) -> dict[str, Any]:
    """Family name → family, parsed from the /metrics of the first endpoint of ``job``."""
    ep = next(e for e in cluster.endpoints if e.job == job)
    status, ctype, text = get(ep.url + "/metrics", cluster.ssl_context())
    assert status == 200 and ctype.startswith("text/plain; version=0.0.4"), (status, ctype)
    return {f.name: f for f in text_string_to_metric_families(text)}


def run_pod(cluster: ClusterHandle, name: str, headers: dict[str, str] | None = None) -> None:
    """Create a one-container pod in ``default`` (with extra request ``headers``) and wait until it runs."""
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    u = urllib.parse.urlsplit(cluster.server)
    conn = http.client.HTTPSConnection(u.hostname or "127.0.0.1", u.port, timeout=30, context=cluster.ssl_context())
    try:
        conn.request("POST", "/api/v1/namespaces/default/pods", body=json.dumps(body).encode(),
                     headers={"Content-Type": "application/json", **(headers or {})})
        r = conn.getresponse()
        assert r.status == 201, r.read()[:300]
        r.read()
    finally:
        conn.close()
    cluster.watch_until(f"/api/v1/namespaces/default/pods?fieldSelector=metadata.name={name}",
                        lambda pods: (pods.get(name, {}).get("status") or {}).get("phase") == "Running")


# (job, family name as the parser names it, a label set that must appear or None)
METRICS = [
    ("apiserver", "apiserver_request", {"verb", "group", "version", "resource", "subresource", "scope",
                                        "component", "code"}),
    ("apiserver", "apiserver_request_duration_seconds", None),
    ("apiserver", "apiserver_storage_objects", {"resource"}),
    ("apiserver", "apiserver_watch_events", {"group", "version", "kind"}),
    ("apiserver", "apiserver_registered_watchers", {"group", "version", "kind"}),
    ("apiserver", "etcd_request_duration_seconds", {"operation", "type", "le"}),
    ("apiserver", "kubernetes_build_info", {"major", "minor", "git_version"}),
    ("etcd", "etcd_disk_wal_fsync_duration_seconds", None),
    ("etcd", "grpc_server_handled", {"grpc_type", "grpc_service", "grpc_method", "grpc_code"}),
    ("etcd", "etcd_server_has_leader", None),
    ("kube-scheduler", "scheduler_pending_pods", {"queue"}),
    ("kube-scheduler", "scheduler_schedule_attempts", {"profile", "result"}),
    ("kube-scheduler", "scheduler_scheduling_attempt_duration_seconds", {"profile", "result", "le"}),
    ("kube-scheduler", "scheduler_plugin_execution_duration_seconds", None),
    ("kube-scheduler", "rest_client_requests", {"code", "method", "host"}),
    ("kube-scheduler", "rest_client_request_duration_seconds", {"verb", "host", "le"}),
    ("kube-controller-manager", "workqueue_depth", {"name"}),
    ("kube-controller-manager", "workqueue_adds", {"name"}),
    ("kube-controller-manager", "workqueue_queue_duration_seconds", {"name", "le"}),
    ("kube-controller-manager", "workqueue_work_duration_seconds", {"name", "le"}),
    ("kube-controller-manager", "workqueue_retries", {"name"}),
    ("kube-controller-manager", "rest_client_requests", {"code", "method", "host"}),
    ("kubelet", "kubelet_running_pods", None),
    ("kubelet", "kubelet_running_containers", {"container_state"}),
    ("kubelet", "kubelet_pod_start_sli_duration_seconds", {"le"}),
    ("kubelet", "rest_client_requests", {"code", "method", "host"}),
]


@pytest.fixture(scope="module")
def scheduled_once(traced_cluster) -> ClusterHandle:
    """The cluster after one pod was scheduled and started (so every family has a sample)."""
    run_pod(traced_cluster, "metrics-pod")
    return traced_cluster


@pytest.mark.parametrize("job, family, labels", [pytest.param(*m, id=f"{m[0]}-{m[1]}") for m in METRICS])
def test_metric_is_served(scheduled_once, job, family, labels):
    families = scrape(scheduled_once, job)
    assert family in families, sorted(families)
    if labels is not None:
        assert any(labels <= set(s.labels) for s in families[family].samples), families[family].samples[:3]


def test_schedule_attempts_count_the_scheduled_pod(traced_cluster):
    run_pod(traced_cluster, "counted-pod")
    fam = scrape(traced_cluster, "kube-scheduler")["scheduler_schedule_attempts"]
    scheduled = [s for s in fam.samples if s.name == "scheduler_schedule_attempts_total"
                 and s.labels == {"profile": "default-scheduler", "result": "scheduled"}]
    assert scheduled and scheduled[0].value >= 1
    pending = {s.labels["queue"] for s in scrape(traced_cluster, "kube-scheduler")["scheduler_pending_pods"].samples}
    assert pending == {"active", "backoff", "unschedulable", "gated"}
    running = scrape(traced_cluster, "kubelet")["kubelet_running_pods"].samples[0].value
    assert running >= 1


@pytest.mark.parametrize("job, path, body", [
    pytest.param("kube-scheduler", "/healthz", "ok", id="scheduler-healthz"),
    pytest.param("kube-scheduler", "/livez", "ok", id="scheduler-livez"),
    pytest.param("kube-scheduler", "/readyz?verbose", "[+]sched-handler-sync ok", id="scheduler-readyz-verbose"),
    pytest.param("kube-controller-manager", "/healthz?verbose", "[+]ping ok\nhealthz check passed",
                 id="controller-manager-healthz-verbose"),
    pytest.param("kube-controller-manager", "/readyz", "ok", id="controller-manager-readyz"),
    pytest.param("kubelet", "/healthz", "ok", id="kubelet-read-only-healthz"),
])
def test_health_endpoints(traced_cluster, job, path, body):
    ep = next(e for e in traced_cluster.endpoints if e.job == job)
    status, _, text = get(ep.url + path, traced_cluster.ssl_context())
    assert status == 200 and body in text, text


def test_kubelet_healthz_port_and_pods(traced_cluster):
    ep = next(e for e in traced_cluster.endpoints if e.job == "kubelet")
    assert get(ep.health) == (200, "text/plain; charset=utf-8", "ok")
    run_pod(traced_cluster, "listed-pod")
    status, ctype, text = get(ep.url + "/pods")
    pods = json.loads(text)
    assert status == 200 and pods["kind"] == "PodList"
    assert "listed-pod" in {p["metadata"]["name"] for p in pods["items"]}


def test_prometheus_scrape_config_names_every_endpoint(traced_cluster, tmp_path):
    from controlplane.cli.prometheus import write_scrape_config

    path = str(tmp_path / "prometheus.yml")
    write_scrape_config(path, traced_cluster.endpoints)
    import yaml
    doc = yaml.safe_load(open(path))
    jobs = {j["job_name"]: [t for sc in j["static_configs"] for t in sc["targets"]] for j in doc["scrape_configs"]}
    assert set(jobs) == {"etcd", "apiserver", "kube-scheduler", "kube-controller-manager", "kubelet"}
    for e in traced_cluster.endpoints:
        assert urllib.parse.urlsplit(e.url).netloc in jobs[e.job]
    schemes = {j["job_name"]: j["scheme"] for j in doc["scrape_configs"]}
    assert schemes["apiserver"] == "https" and schemes["kubelet"] == "http"  # the apiserver serves TLS only
    promtool = "/usr/bin/promtool"
    if os.path.exists(promtool):
        import subprocess
        out = subprocess.run([promtool, "check", "config", path], capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr


def test_one_pods_flow_is_one_trace_across_components(traced_cluster, receiver):
    """The client's traceparent → the apiserver's POST span → Create → (annotation) → the scheduler's
    scheduling_cycle → binding → the apiserver's binding POST; and → the kubelet's syncPod → its CRI
    spans and its status write, all in one trace with parents linked across processes."""
    trace_id, client_span = secrets.token_hex(16), secrets.token_hex(8)
    run_pod(traced_cluster, "traced-pod", {"traceparent": f"00-{trace_id}-{client_span}-01"})
    tid = bytes.fromhex(trace_id)

    def ours(spans: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
        return [(svc, s) for svc, s in spans if s.trace_id == tid]

    def complete(spans: list[tuple[str, Any]]) -> bool:
        names = {(svc, s.name) for svc, s in ours(spans)}
        return {("apiserver", "POST /api/v1/namespaces/{:namespace}/pods"), ("apiserver", "Create"),
                ("apiserver", "Create etcd3"), ("kube-scheduler", "scheduling_cycle"), ("kube-scheduler", "binding"),
                ("apiserver", "POST /api/v1/namespaces/{:namespace}/pods/{:name}/binding"),
                ("kubelet", "syncPod"), ("kubelet", "runtime.v1.RuntimeService/RunPodSandbox"),
                ("kubelet", "runtime.v1.RuntimeService/StartContainer")} <= names and any(
                    svc == "apiserver" and s.name.endswith("/pods/{:name}/status") for svc, s in ours(spans))
    receiver.wait_for(complete)
    spans = ours(receiver.spans)
    by_id = {s.span_id: (svc, s) for svc, s in spans}

    def one(service: str, name: str) -> Any:
        return next(s for svc, s in spans if svc == service and s.name == name)

    def parent(s: Any) -> tuple[str, str]:
        svc, p = by_id[s.parent_span_id]
        return svc, p.name

    root = one("apiserver", "POST /api/v1/namespaces/{:namespace}/pods")
    assert root.parent_span_id == bytes.fromhex(client_span)
    attrs = {a.key: a.value.string_value for a in root.attributes}
    assert attrs["http.method"] == "POST" and attrs["http.target"] == "/api/v1/namespaces/default/pods"
    assert attrs["audit-id"]
    assert parent(one("apiserver", "Create")) == ("apiserver", "POST /api/v1/namespaces/{:namespace}/pods")
    assert parent(one("apiserver", "Create etcd3")) == ("apiserver", "Create")
    # across the watch: the pod's annotation is the apiserver's Create span
    assert parent(one("kube-scheduler", "scheduling_cycle")) == ("apiserver", "Create")
    assert parent(one("kube-scheduler", "binding")) == ("kube-scheduler", "scheduling_cycle")
    assert parent(one("apiserver", "POST /api/v1/namespaces/{:namespace}/pods/{:name}/binding")) == \
        ("kube-scheduler", "binding")
    sync = [s for svc, s in spans if svc == "kubelet" and s.name == "syncPod"]
    assert all(parent(s) == ("apiserver", "Create") for s in sync)
    assert parent(one("kubelet", "runtime.v1.RuntimeService/RunPodSandbox")) == ("kubelet", "syncPod")
    status = [s for svc, s in spans if svc == "apiserver" and s.name.endswith("/pods/{:name}/status")]
    assert status and all(parent(s) == ("kubelet", "syncPod") for s in status)


def test_trace_perfetto_file_from_the_cluster(traced_cluster, tmp_path):
    """``controlplane trace -o perfetto FILE`` writes the step records as Chrome Trace Event JSON."""
    import subprocess
    import sys

    run_pod(traced_cluster, "perfetto-pod")
    path = tmp_path / "flow.json"
    out = subprocess.run([sys.executable, "-m", "controlplane", "trace", "--kubeconfig", traced_cluster.kubeconfig,
                          "--kind", "Pod", "--name", "perfetto-pod", "-o", "perfetto", str(path)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    doc = json.loads(path.read_text())
    steps = {e["args"]["step"] for e in doc["traceEvents"] if e["ph"] == "i"}
    assert {2, 3, 9, 12, 13} <= steps, steps


def test_a_deployments_pods_join_its_trace_through_the_controller_manager(traced_cluster, receiver):
    """Deployment POST → the controller-manager's ``Create ReplicaSet`` (a child of the Deployment's
    annotation) → the ReplicaSet's POST → ``Create Pod`` (a child of the ReplicaSet's) → the pod's
    POST → the scheduler and the kubelet: one trace."""
    trace_id = secrets.token_hex(16)
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "traced-web"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "traced-web"}},
                     "template": {"metadata": {"labels": {"app": "traced-web"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    u = urllib.parse.urlsplit(traced_cluster.server)
    conn = http.client.HTTPSConnection(u.hostname or "127.0.0.1", u.port, timeout=30,
                                       context=traced_cluster.ssl_context())
    try:
        conn.request("POST", "/apis/apps/v1/namespaces/default/deployments", body=json.dumps(body).encode(),
                     headers={"Content-Type": "application/json",
                              "traceparent": f"00-{trace_id}-{secrets.token_hex(8)}-01"})
        r = conn.getresponse()
        assert r.status == 201, r.read()[:300]
        r.read()
    finally:
        conn.close()
    traced_cluster.watch_until("/api/v1/namespaces/default/pods?labelSelector=app%3Dtraced-web",
                               lambda pods: any((p.get("status") or {}).get("phase") == "Running"
                                                for p in pods.values()))
    tid = bytes.fromhex(trace_id)

    def names(spans: list[tuple[str, Any]]) -> set[tuple[str, str]]:
        return {(svc, s.name) for svc, s in spans if s.trace_id == tid}
    want = {("apiserver", "POST /apis/apps/v1/namespaces/{:namespace}/deployments"),
            ("kube-controller-manager", "Create ReplicaSet"),
            ("apiserver", "POST /apis/apps/v1/namespaces/{:namespace}/replicasets"),
            ("kube-controller-manager", "Create Pod"), ("apiserver", "POST /api/v1/namespaces/{:namespace}/pods"),
            ("kube-scheduler", "scheduling_cycle"), ("kubelet", "syncPod")}
    receiver.wait_for(lambda spans: want <= names(spans))
    spans = [(svc, s) for svc, s in receiver.spans if s.trace_id == tid]
    by_id = {s.span_id: (svc, s) for svc, s in spans}

    def chain(service: str, name: str) -> list[tuple[str, str]]:
        """The span's ancestors within the trace, nearest first."""
        s = next(s for svc, s in spans if (svc, s.name) == (service, name))
        out = []
        while s.parent_span_id in by_id:
            svc, s = by_id[s.parent_span_id]
            out.append((svc, s.name))
        return out
    deployment_post = ("apiserver", "POST /apis/apps/v1/namespaces/{:namespace}/deployments")
    rs_post = ("apiserver", "POST /apis/apps/v1/namespaces/{:namespace}/replicasets")
    pod_post = ("apiserver", "POST /api/v1/namespaces/{:namespace}/pods")
    assert chain("kube-controller-manager", "Create ReplicaSet")[:2] == [("apiserver", "Create"), deployment_post]
    assert chain(*rs_post)[0] == ("kube-controller-manager", "Create ReplicaSet")
    assert chain("kube-controller-manager", "Create Pod")[:2] == [("apiserver", "Create"), rs_post]
    assert chain(*pod_post)[0] == ("kube-controller-manager", "Create Pod")
    assert chain("kubelet", "syncPod")[:2] == [("apiserver", "Create"), pod_post]
    assert chain("kubelet", "syncPod")[-1] == deployment_post
