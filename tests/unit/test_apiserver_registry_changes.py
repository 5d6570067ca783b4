"""The apiserver follows controlplane.api.resources.REGISTRY at run time: a resource added
shows in discovery and OpenAPI and is servable (create/get/list/watch, from a watch cache
the server starts); removed, it is gone from discovery and answers 404."""

from __future__ import annotations

import json

import pytest

from components.apiserver.discovery import AGGREGATED_CT
from controlplane.api import resources as R
from tests.support.apiserver import new_ns

WIDGETS = R.Resource("example.com", "v1", "widgets", "widget", "Widget", True, ("wd",))


@pytest.fixture
def widgets():
    """WIDGETS added to REGISTRY for the test; the registry is restored afterwards."""
    before = list(R.REGISTRY)
    yield WIDGETS
    if R.REGISTRY.lookup(WIDGETS.group, WIDGETS.version, WIDGETS.plural) is not None:
        R.REGISTRY.remove(WIDGETS.group, WIDGETS.version, WIDGETS.plural)
    assert list(R.REGISTRY) == before


async def groups(api) -> list[str]:
    r = await api.get("/apis")
    return [g["name"] for g in (await r.json())["groups"]]


async def aggregated_groups(api) -> list[str]:
    r = await api.get("/apis", headers={"Accept": AGGREGATED_CT})
    return [g["metadata"]["name"] for g in (await r.json())["items"]]


async def test_resource_added_and_removed_at_run_time(api, widgets):
    ns = await new_ns(api)
    path = f"/apis/example.com/v1/namespaces/{ns}/widgets"
    assert "example.com" not in await groups(api) and "example.com" not in await aggregated_groups(api)
    assert (await api.get(path)).status == 404

    R.REGISTRY.add(widgets)
    await api.server_obj.resources_settled()
    assert "widgets.example.com" in api.server_obj.caches
    assert "example.com" in await groups(api) and "example.com" in await aggregated_groups(api)
    r = await api.get("/apis/example.com/v1")
    assert [x["name"] for x in (await r.json())["resources"]] == ["widgets"]
    root = await (await api.get("/openapi/v3")).json()
    assert "apis/example.com/v1" in root["paths"]
    assert (await api.get("/openapi/v3/apis/example.com/v1")).status == 200

    w = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}}
    r = await api.post(path, json=w)
    assert r.status == 201, await r.text()
    rv = (await r.json())["metadata"]["resourceVersion"]
    r = await api.get(f"{path}/w1")
    assert r.status == 200 and (await r.json())["kind"] == "Widget"
    r = await api.get(path, params={"resourceVersion": "0"})  # from the new watch cache
    body = await r.json()
    assert body["kind"] == "WidgetList" and [i["metadata"]["name"] for i in body["items"]] == ["w1"]
    r = await api.get(path, params={"watch": "true", "resourceVersion": "0", "timeoutSeconds": "5"})
    assert r.status == 200
    ev = json.loads(await r.content.readline())
    r.close()
    assert ev["type"] == "ADDED" and ev["object"]["metadata"]["name"] == "w1"
    assert ev["object"]["metadata"]["resourceVersion"] == rv

    R.REGISTRY.remove(widgets.group, widgets.version, widgets.plural)
    await api.server_obj.resources_settled()
    assert "example.com" not in await groups(api) and "example.com" not in await aggregated_groups(api)
    assert "apis/example.com/v1" not in (await (await api.get("/openapi/v3")).json())["paths"]
    for p in (path, f"{path}/w1", "/apis/example.com/v1"):
        r = await api.get(p)
        assert r.status == 404, p
        assert (await r.json())["reason"] == "NotFound"
    assert "widgets.example.com" not in api.server_obj.caches
