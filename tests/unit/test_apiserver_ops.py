"""dryRun, fieldValidation, /metrics, /readyz, in-flight limits, bad-input contract, concurrency."""

from __future__ import annotations

import asyncio
import json

import pytest

from components.apiserver import status as st
from components.apiserver.listoptions import request_timeout
from tests.support.apiserver import new_ns
from tests.unit.test_apiserver import API_OPTIONS, pod, pytestmark  # noqa: F401


async def test_dry_run_writes_nothing(api):
    ns = await new_ns(api)
    base = f"/api/v1/namespaces/{ns}/pods"
    r = await api.post(base + "?dryRun=All", json=pod("d"))
    o = await r.json()
    assert r.status == 201 and o["metadata"]["uid"] and "resourceVersion" not in o["metadata"]
    assert (await api.get(base + "/d")).status == 404
    real = await (await api.post(base, json=pod("d"))).json()
    r = await api.post(base + "?dryRun=All", json=pod("d"))
    assert r.status == 409
    r = await api.patch(base + "/d?dryRun=All", data=json.dumps({"metadata": {"labels": {"x": "y"}}}),
                        headers={"Content-Type": "application/merge-patch+json"})
    o = await r.json()
    assert r.status == 200 and o["metadata"]["labels"] == {"x": "y"}
    assert o["metadata"]["resourceVersion"] == real["metadata"]["resourceVersion"]
    assert (await (await api.get(base + "/d")).json())["metadata"].get("labels") in (None, {})
    r = await api.delete(base + "/d?dryRun=All")
    assert r.status == 200 and (await api.get(base + "/d")).status == 200
    r = await api.post(base + "?dryRun=Some", json=pod("e"))
    assert r.status == 400 and "Invalid dry run value" in (await r.json())["message"]


async def test_field_validation_directives(api):
    ns = await new_ns(api)
    base = f"/api/v1/namespaces/{ns}/pods"
    bad = pod("w")
    bad["spec"]["bogus"] = 1
    r = await api.post(base + "?fieldValidation=Strict", json=bad)
    assert r.status == 400 and 'unknown field "spec.bogus"' in (await r.json())["message"]
    r = await api.post(base + "?fieldValidation=Warn", json=bad)
    assert r.status == 201 and r.headers.getall("Warning") == ['299 - "unknown field \\"spec.bogus\\""']
    bad["metadata"]["name"] = "w2"
    r = await api.post(base + "?fieldValidation=Ignore", json=bad)
    assert r.status == 201 and "Warning" not in r.headers
    r = await api.post(base + "?fieldValidation=Loud", json=bad)
    assert r.status == 400 and "fieldValidation" in (await r.json())["message"]


async def test_metrics_and_readyz(api):
    ns = await new_ns(api)
    await api.get(f"/api/v1/namespaces/{ns}/pods")
    r = await api.get("/metrics")
    text = await r.text()
    assert r.status == 200 and r.content_type == "text/plain"
    assert ('apiserver_request_total{verb="LIST",group="",version="v1",resource="pods",subresource="",'
            'scope="namespace",component="apiserver",code="200"} 1') in text
    assert 'apiserver_request_total{verb="POST",group="",version="v1",resource="namespaces"' in text
    assert "# TYPE apiserver_request_duration_seconds histogram" in text
    assert 'apiserver_request_duration_seconds_bucket{verb="LIST",group="",version="v1",resource="pods"' in text
    assert 'apiserver_registered_watchers{group="",version="v1",kind="Pod"} 0' in text
    r = await api.get("/readyz?verbose")
    t = await r.text()
    assert r.status == 200 and "[+]etcd ok" in t and t.strip().endswith("readyz check passed")
    assert await (await api.get("/readyz")).text() == "ok"


async def test_inflight_limit_answers_429(api):
    srv = api.server_obj
    srv.limits["mutating"], fc, srv.flowcontrol = 0, srv.flowcontrol, None  # max-inflight: APF off
    try:
        r = await api.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                       "metadata": {"name": "limited"}})
        body = await r.json()
        assert r.status == 429 and r.headers["Retry-After"] == "1" and body["reason"] == "TooManyRequests"
        assert (await api.get("/api/v1/namespaces")).status == 200  # read-only requests unaffected
    finally:
        srv.limits["mutating"], srv.flowcontrol = 200, fc


@pytest.mark.parametrize("value, expected", [
    pytest.param(None, 60.0, id="unset: the server's request timeout"),
    pytest.param("", 60.0, id="empty: the server's request timeout"),
    pytest.param("5s", 5.0, id="seconds"),
    pytest.param("500ms", 0.5, id="milliseconds"),
    pytest.param("1m30s", 60.0, id="compound above the maximum: capped"),
    pytest.param("0m30.5s", 30.5, id="compound with a fraction"),
    pytest.param("2m", 60.0, id="above the maximum: capped"),
    pytest.param("0", 60.0, id="zero: no timeout of the client's own"),
    pytest.param("-5s", 60.0, id="negative: no timeout of the client's own"),
])
def test_timeout_parameter(value, expected):
    assert request_timeout(value, 60.0) == expected


def test_timeout_parameter_1m30s_below_the_maximum():
    assert request_timeout("1m30s", 120.0) == 90.0


@pytest.mark.parametrize("value, go_error", [
    pytest.param("bad", 'time: invalid duration "bad"', id="not a duration"),
    pytest.param("5", 'time: missing unit in duration "5"', id="bare number"),
    pytest.param("5d", 'time: unknown unit "d" in duration "5d"', id="unknown unit"),
])
def test_bad_timeout_parameter_is_400(value, go_error):
    with pytest.raises(st.APIError) as e:
        request_timeout(value, 60.0)
    assert (e.value.code, e.value.reason) == (400, "BadRequest")
    assert e.value.message == f"invalid timeout specified in the request URL - {go_error}"


async def test_timeout_query_is_honoured_and_a_bad_one_is_400(api):
    # a list at a future resourceVersion waits ~3 s for the watch cache; a compound ?timeout=
    # (which the old parser ignored) ends it first with the request deadline's 504
    ns = await new_ns(api)
    base = f"/api/v1/namespaces/{ns}/pods?resourceVersion=999999999&resourceVersionMatch=NotOlderThan"
    r = await api.get(base + "&timeout=0m0.2s")
    body = await r.json()
    assert r.status == 504 and body["reason"] == "Timeout"
    assert body["message"].startswith("Timeout: request did not complete within requested timeout")
    r = await api.get(f"/api/v1/namespaces/{ns}/pods?timeout=1m30s")
    assert r.status == 200 and (await r.json())["kind"] == "PodList"
    r = await api.get(f"/api/v1/namespaces/{ns}/pods?timeout=1x")
    body = await r.json()
    assert r.status == 400 and body["reason"] == "BadRequest" and body["code"] == 400
    assert body["message"] == ('invalid timeout specified in the request URL - '
                               'time: unknown unit "x" in duration "1x"')
    r = await api.get(f"/api/v1/namespaces/{ns}/pods?watch=true&timeout=1x&timeoutSeconds=1")
    assert r.status == 200  # watches are long-running: no request deadline, no check


async def test_bad_input_is_4xx_status(api):
    ns = await new_ns(api)
    base = f"/api/v1/namespaces/{ns}/pods"
    cases = [
        (api.post(base, data=b"{not json", headers={"Content-Type": "application/json"}), 400),
        (api.post(base, data=b"a: [b", headers={"Content-Type": "application/yaml"}), 400),
        (api.post(base, json={"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"}}), 400),
        (api.post(base, json={**pod("x"), "metadata": {"name": "x", "namespace": "other"}}), 400),
        (api.post(base, data=b"x" * (3 * 1024 * 1024 + 10), headers={"Content-Type": "application/json"}), 413),
        (api.get(base + "?labelSelector=a%20in%20(b"), 400),
        (api.get(base + "?fieldSelector=spec.bogus=1"), 400),
        (api.get(base + "?resourceVersion=abc"), 400),
        (api.get(base + "/x?resourceVersion=-1"), 400),
        (api.post(base, data=b"\x00\x01", headers={"Content-Type": "application/vnd.kubernetes.protobuf"}), 400),
        (api.post(base, data=b"<x/>", headers={"Content-Type": "application/xml"}), 415),
    ]
    for req, code in cases:
        r = await req
        body = await r.json()
        assert r.status == code and body["kind"] == "Status" and body["code"] == code and body["message"], body
    assert (await api.get(base)).status == 200  # still serving


async def test_stale_concurrent_updates_exactly_one_wins(api):
    ns = await new_ns(api)
    p = await (await api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("c"))).json()

    async def update(i):
        body = json.loads(json.dumps(p))
        body["metadata"]["labels"] = {"i": str(i)}
        r = await api.put(f"/api/v1/namespaces/{ns}/pods/c", json=body)
        return r.status, (await r.json()).get("reason")
    results = await asyncio.gather(*(update(i) for i in range(50)))
    assert sorted(c for c, _ in results) == [200] + [409] * 49
    assert all(reason == "Conflict" for c, reason in results if c == 409)


async def test_concurrent_creates_get_distinct_uids(api):
    ns = await new_ns(api)

    async def create(i):
        r = await api.post(f"/api/v1/namespaces/{ns}/configmaps",
                           json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "cm-"}})
        assert r.status == 201
        return (await r.json())["metadata"]["uid"]
    uids = await asyncio.gather(*(create(i) for i in range(200)))
    assert len(set(uids)) == 200
    lst = await (await api.get(f"/api/v1/namespaces/{ns}/configmaps")).json()
    assert len(lst["items"]) == 200
