"""Aggregated discovery (apidiscovery.k8s.io/v2) on /api and /apis, content-negotiated."""

from aiohttp.test_utils import TestClient, TestServer

from components.apiserver.discovery import AGGREGATED_CT
from components.apiserver.server import APIServer

ACCEPT = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
          "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")


async def test_aggregated_discovery():
    server = APIServer("http://127.0.0.1:1")          # discovery needs no etcd
    client = TestClient(TestServer(server.app))
    await client.start_server()
    try:
        r = await client.get("/api", headers={"Accept": ACCEPT})
        assert r.headers["Content-Type"] == AGGREGATED_CT
        core = await r.json()
        assert core["kind"] == "APIGroupDiscoveryList" and core["apiVersion"] == "apidiscovery.k8s.io/v2"
        (group,) = core["items"]
        assert group["metadata"]["name"] == "" and group["versions"][0]["version"] == "v1"
        pods = next(x for x in group["versions"][0]["resources"] if x["resource"] == "pods")
        assert pods["responseKind"] == {"group": "", "version": "v1", "kind": "Pod"}
        assert pods["scope"] == "Namespaced" and pods["shortNames"] == ["po"] and "watch" in pods["verbs"]
        subs = {s["subresource"]: s for s in pods["subresources"]}
        assert subs["eviction"]["responseKind"] == {"group": "policy", "version": "v1", "kind": "Eviction"}
        assert subs["log"]["verbs"] == ["get"]
        r = await client.get("/apis", headers={"Accept": ACCEPT})
        groups = {g["metadata"]["name"]: g for g in (await r.json())["items"]}
        assert "apps" in groups and "" not in groups
        deps = next(x for x in groups["apps"]["versions"][0]["resources"] if x["resource"] == "deployments")
        assert {s["subresource"] for s in deps["subresources"]} == {"status", "scale"}
        r = await client.get("/api", headers={"Accept": "application/json"})   # legacy clients
        assert r.headers["Content-Type"] == "application/json" and (await r.json())["kind"] == "APIVersions"
    finally:
        await client.close()
