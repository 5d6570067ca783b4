"""controlplane/metrics.py: Go's text format, health checks, serving; the workqueue, RestClient and
scheduler families; the tracing configuration file and flags (controlplane/otel.py, service.py)."""

from __future__ import annotations

import socket

import aiohttp
import click
import click.testing
import pytest
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from controlplane import metrics as m
from controlplane import otel
from controlplane.client.workqueue import WorkQueue
from controlplane.service import tracing_options


@pytest.mark.parametrize("value, text", [
    pytest.param(1, "1", id="one"),
    pytest.param(1.0, "1", id="one as float"),
    pytest.param(0, "0", id="zero"),
    pytest.param(-3, "-3", id="negative integer"),
    pytest.param(0.005, "0.005", id="bucket bound"),
    pytest.param(2.5, "2.5", id="fraction"),
    pytest.param(12345.678, "12345.678", id="below 1e6"),
    pytest.param(1e6, "1e+06", id="1e6 in %e form"),
    pytest.param(1234567, "1.234567e+06", id="large counter"),
    pytest.param(0.0001, "0.0001", id="exponent -4 stays plain"),
    pytest.param(1e-05, "1e-05", id="exponent -5 in %e form"),
    pytest.param(float("inf"), "+Inf", id="+Inf"),
    pytest.param(float("-inf"), "-Inf", id="-Inf"),
    pytest.param(float("nan"), "NaN", id="NaN"),
])
def test_go_float_formats_as_strconv_g(value, text):
    assert m.go_float(value) == text


def test_exposition_is_gos_text_format_and_parses():
    reg = CollectorRegistry()
    c = m.Children(m.counter("demo_requests_total", "Requests.", ("verb", "code"), reg))
    c.get(("GET", "200")).inc()
    c.get(("GET", "200")).inc(2)
    h = m.histogram("demo_seconds", "Latency.", ("verb",), (0.1, 1), reg)
    h.labels("GET").observe(0.5)
    m.gauge("demo_quoted", 'a "quoted"\nhelp', ("v",), reg).labels('a"b\\c\nd').set(1)
    text = m.exposition(reg).decode()
    assert "# TYPE demo_requests_total counter\n" in text
    assert 'demo_requests_total{verb="GET",code="200"} 3\n' in text
    assert 'demo_seconds_bucket{verb="GET",le="0.1"} 0\n' in text
    assert 'demo_seconds_bucket{verb="GET",le="1"} 1\n' in text
    assert 'demo_seconds_bucket{verb="GET",le="+Inf"} 1\n' in text
    assert "_created" not in text
    assert 'demo_quoted{v="a\\"b\\\\c\\nd"} 1\n' in text
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    assert fams["demo_requests"].samples[0].value == 3
    assert fams["demo_quoted"].samples[0].labels == {"v": 'a"b\\c\nd'}


def test_exposition_writes_a_family_once():
    a, b = CollectorRegistry(), CollectorRegistry()
    m.gauge("same_name", "first", (), a).set(1)
    m.gauge("same_name", "second", (), b).set(2)
    text = m.exposition(a, b).decode()
    assert text.count("# TYPE same_name gauge") == 1 and "same_name 1\n" in text


def test_process_registry_has_build_info():
    fams = {f.name: f for f in text_string_to_metric_families(m.exposition(m.REGISTRY).decode())}
    (sample,) = fams["kubernetes_build_info"].samples
    assert sample.value == 1 and sample.labels["git_version"].startswith("v1.") and sample.labels["major"] == "1"


async def _client(app) -> TestClient:
    client = TestClient(TestServer(app))
    await client.start_server()
    return client


@pytest.mark.parametrize("path, status, body", [
    pytest.param("/healthz", 200, "ok", id="healthz ok"),
    pytest.param("/livez", 200, "ok", id="livez ok"),
    pytest.param("/readyz", 500, "[+]ping ok\n[+]alive ok\n[-]synced failed: reason withheld\nreadyz check failed\n",
                 id="readyz failing lists every check"),
    pytest.param("/readyz?exclude=synced", 200, "ok", id="readyz with the failing check excluded"),
    pytest.param("/healthz?verbose", 200, "[+]ping ok\n[+]alive ok\nhealthz check passed\n",
                 id="healthz verbose skips the readyz-only check"),
])
async def test_health_checks(path, status, body):
    health = m.HealthChecks()

    async def alive() -> bool:
        return True
    health.add("alive", alive)
    health.add("synced", lambda: False, readyz_only=True)
    client = await _client(m.make_app(health))
    try:
        r = await client.get(path)
        assert (r.status, await r.text()) == (status, body)
    finally:
        await client.close()


async def test_a_raising_check_fails():
    health = m.HealthChecks()

    def broken() -> bool:
        raise RuntimeError("boom")
    health.add("broken", broken)
    assert await health.run("/healthz") == [("ping", True), ("broken", False)]


async def test_metrics_route_answers_the_text_format():
    client = await _client(m.make_app())
    try:
        r = await client.get("/metrics")
        assert r.status == 200 and r.headers["Content-Type"] == m.CONTENT_TYPE
        assert "kubernetes_build_info{" in await r.text()
    finally:
        await client.close()


async def test_serve_port_zero_is_disabled():
    ep = await m.serve("test", "127.0.0.1", 0, m.make_app())
    assert ep.url is None
    await ep.stop()


async def test_serve_on_a_taken_port_runs_on_without_it(caplog):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        ep = await m.serve("test", "127.0.0.1", port, m.make_app())
        assert ep.url is None and "metrics.port_in_use" in caplog.text


async def test_serve_listens_and_stops():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ep = await m.serve("test", "127.0.0.1", port, m.make_app())
    try:
        assert ep.url == f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession() as session, session.get(ep.url + "/healthz") as r:
            assert await r.text() == "ok"
    finally:
        await ep.stop()
        await ep.stop()  # idempotent


def _value(name: str, labels: dict[str, str]) -> float:
    v = m.REGISTRY.get_sample_value(name, labels)
    return v or 0.0


async def test_named_workqueue_reports_client_go_metrics():
    name = {"name": "test-queue-metrics"}
    before = {k: _value(k, name) for k in ("workqueue_adds_total", "workqueue_retries_total",
                                          "workqueue_work_duration_seconds_count",
                                          "workqueue_queue_duration_seconds_count")}
    q: WorkQueue[str] = WorkQueue(name="test-queue-metrics")
    q.add("a")
    q.add("a")          # deduplicated: not an add
    q.add("b")
    assert _value("workqueue_depth", name) == 2
    key = await q.get()
    assert _value("workqueue_depth", name) == 1
    q.done(key)
    q.add_rate_limited("c")
    assert _value("workqueue_adds_total", name) - before["workqueue_adds_total"] == 2
    assert _value("workqueue_retries_total", name) - before["workqueue_retries_total"] == 1
    assert _value("workqueue_queue_duration_seconds_count", name) - \
        before["workqueue_queue_duration_seconds_count"] == 1
    assert _value("workqueue_work_duration_seconds_count", name) - \
        before["workqueue_work_duration_seconds_count"] == 1
    q.shutdown()


def test_unnamed_workqueue_reports_nothing():
    q: WorkQueue[str] = WorkQueue()
    q.add("x")
    assert m.REGISTRY.get_sample_value("workqueue_adds_total", {"name": ""}) is None


async def test_rest_client_counts_requests_by_code_method_and_host():
    from controlplane.client.rest import ApiError, RestClient

    async def ok(request):
        return aiohttp.web.json_response({"kind": "Status"})

    async def missing(request):
        return aiohttp.web.json_response({"kind": "Status", "code": 404, "reason": "NotFound"}, status=404)
    app = aiohttp.web.Application()
    app.router.add_get("/ok", ok)
    app.router.add_get("/missing", missing)
    server = TestServer(app)
    await server.start_server()
    host = f"127.0.0.1:{server.port}"
    try:
        async with RestClient(f"http://{host}", "scheduler") as client:
            await client.request("GET", "/ok")
            with pytest.raises(ApiError):
                await client.request("GET", "/missing")
    finally:
        await server.close()
    assert _value("rest_client_requests_total", {"code": "200", "method": "GET", "host": host}) == 1
    assert _value("rest_client_requests_total", {"code": "404", "method": "GET", "host": host}) == 1
    assert _value("rest_client_request_duration_seconds_count", {"verb": "GET", "host": host}) == 2


async def test_rest_client_counts_an_unanswered_request_as_error():
    from controlplane.client.rest import RestClient

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: the connection is refused
    host = f"127.0.0.1:{port}"
    async with RestClient(f"http://{host}") as client:
        with pytest.raises(aiohttp.ClientError):
            await client.request("GET", "/x")
    assert _value("rest_client_requests_total", {"code": "<error>", "method": "GET", "host": host}) == 1


def test_scheduler_samples_plugin_metrics_in_one_cycle_of_ten(monkeypatch):
    from components.scheduler import metrics as sm

    draws = iter([0.05, 0.099, 0.10, 0.5])
    monkeypatch.setattr(sm.random, "random", lambda: next(draws))
    assert [sm.sample_plugin_metrics() for _ in range(4)] == [True, True, False, False]


def test_scheduler_pending_pods_read_from_the_queue():
    from components.scheduler import metrics as sm

    sm.watch_queue(lambda: {"activeQ": 3, "backoffQ": 1, "unschedulable": 2, "gated": 4, "inFlight": 9})
    got = {q: _value("scheduler_pending_pods", {"queue": q}) for q in ("active", "backoff", "unschedulable", "gated")}
    assert got == {"active": 3, "backoff": 1, "unschedulable": 2, "gated": 4}


# ---------------------------------------------------------------- tracing configuration
@pytest.mark.parametrize("text, expected", [
    pytest.param("apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\n"
                 "endpoint: 127.0.0.1:4318\nsamplingRatePerMillion: 100\n", ("127.0.0.1:4318", 100), id="v1beta1"),
    pytest.param("apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\n",
                 ("localhost:4317", 0), id="defaults as Kubernetes"),
    pytest.param("apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\n"
                 "samplingRatePerMillion: 1000001\n", "must be between 0 and 1000000", id="rate too high"),
    pytest.param("apiVersion: v1\nkind: ConfigMap\n", "expected kind TracingConfiguration", id="wrong kind"),
    pytest.param("apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\n"
                 "samplingRatePerMillion: lots\n", "must be a string", id="rate not an integer"),
    pytest.param("{{{", "error parsing", id="malformed YAML"),
])
def test_load_tracing_configuration(tmp_path, text, expected):
    path = tmp_path / "tracing.yaml"
    path.write_text(text)
    if isinstance(expected, tuple):
        assert otel.load_tracing_configuration(str(path)) == expected
    else:
        with pytest.raises(ValueError, match=expected):
            otel.load_tracing_configuration(str(path))


def test_tracing_config_file_error_is_a_usage_error(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("kind: Nope\n")

    @click.command()
    @tracing_options("apiserver", config_file=True)
    def cmd() -> None:
        raise AssertionError("not reached")
    result = click.testing.CliRunner().invoke(cmd, ["--tracing-config-file", str(path)])
    assert result.exit_code == 2 and "--tracing-config-file" in result.output


def test_tracing_off_by_default_costs_nothing():
    """Without an endpoint nothing is configured: spans are no-ops, no header is added, nothing stamped."""

    @click.command()
    @tracing_options("scheduler")
    def cmd() -> None:
        assert not otel.enabled()
    assert click.testing.CliRunner().invoke(cmd, []).exit_code == 0
    with otel.span("x") as s:
        assert s is None
    headers: dict[str, str] = {}
    otel.inject(headers)
    obj: dict = {"metadata": {}}
    otel.stamp_traceparent(obj)
    assert headers == {} and obj == {"metadata": {}} and otel.current_traceparent() is None


@pytest.mark.parametrize("owner, child, expected", [
    pytest.param({"metadata": {"annotations": {otel.ANNOTATION: "00-aa-bb-01"}}}, {"metadata": {}},
                 {"metadata": {"annotations": {otel.ANNOTATION: "00-aa-bb-01"}}}, id="copied"),
    pytest.param({"metadata": {}}, {"metadata": {}}, {"metadata": {}}, id="owner without one"),
    pytest.param({"metadata": {"annotations": {otel.ANNOTATION: "00-aa-bb-01"}}},
                 {"metadata": {"annotations": {otel.ANNOTATION: "00-cc-dd-01"}}},
                 {"metadata": {"annotations": {otel.ANNOTATION: "00-cc-dd-01"}}}, id="child keeps its own"),
])
def test_copy_traceparent(monkeypatch, owner, child, expected):
    monkeypatch.setattr(otel, "_tracer", object())  # as if tracing were on
    otel.copy_traceparent(owner, child)
    assert child == expected


def test_traceparent_of():
    assert otel.traceparent_of(None) is None
    assert otel.traceparent_of({"metadata": {"annotations": {otel.ANNOTATION: ""}}}) is None
    assert otel.traceparent_of({"metadata": {"annotations": {otel.ANNOTATION: "00-a-b-01"}}}) == "00-a-b-01"


@pytest.mark.parametrize("leader, since_renewal, healthy", [
    pytest.param(False, 1000.0, True, id="not leading: healthy"),
    pytest.param(True, 5.0, True, id="leading, renewed recently"),
    pytest.param(True, 15.0 + 20.0, True, id="leading, at the limit"),
    pytest.param(True, 15.0 + 20.5, False, id="leading, renewal overdue"),
])
async def test_leader_election_health_check(leader, since_renewal, healthy):
    from controlplane.client.leaderelection import LeaderElector

    now = [100.0]
    le = LeaderElector(None, "kube-system", "x", "me", clock=lambda: now[0])
    le.observed_time = 100.0
    if leader:
        le.is_leader.set()
    now[0] += since_renewal
    assert le.healthy() is healthy


@pytest.mark.parametrize("method, path, name", [
    pytest.param("POST", "/api/v1/namespaces/default/pods", "POST /api/v1/namespaces/{:namespace}/pods",
                 id="namespaced collection"),
    pytest.param("PUT", "/api/v1/namespaces/default/pods/web/status",
                 "PUT /api/v1/namespaces/{:namespace}/pods/{:name}/status", id="subresource"),
    pytest.param("GET", "/apis/apps/v1/deployments", "GET /apis/apps/v1/deployments", id="group, all namespaces"),
    pytest.param("GET", "/api/v1/nodes/node01", "GET /api/v1/nodes/{:name}", id="cluster-scoped object"),
    pytest.param("GET", "/apis/apps/v1", "GET", id="discovery: the method alone"),
    pytest.param("GET", "/healthz", "GET", id="non-resource path: the method alone"),
])
def test_apiserver_span_names_follow_get_span_name_from_request_info(method, path, name):
    from components.apiserver import routing
    from components.apiserver.otel import span_name

    assert span_name(method, routing.parse(path)) == name


def test_scrape_config_one_job_per_component_kind():
    import yaml

    from controlplane.cli.cluster import MetricsEndpoint
    from controlplane.cli.prometheus import scrape_config

    doc = yaml.safe_load(scrape_config([
        MetricsEndpoint("apiserver", "apiserver", "http://127.0.0.1:6443", "http://127.0.0.1:6443/readyz"),
        MetricsEndpoint("kubelet", "kubelet-node01", "http://127.0.0.1:10255", "http://127.0.0.1:10248/healthz"),
        MetricsEndpoint("kubelet", "kubelet-node02", "http://127.0.0.1:40001", "http://127.0.0.1:40002/healthz"),
    ]))
    assert doc["global"]["scrape_interval"] == "15s"
    assert [(j["job_name"], [sc["targets"] for sc in j["static_configs"]]) for j in doc["scrape_configs"]] == [
        ("apiserver", [["127.0.0.1:6443"]]), ("kubelet", [["127.0.0.1:10255"], ["127.0.0.1:40001"]])]
    assert doc["scrape_configs"][1]["static_configs"][1]["labels"] == {"service": "kubelet-node02"}
