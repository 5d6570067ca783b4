"""Client-compatibility regressions (issue 11, item 4): what kube-apiserver v1.32 answers
and the in-process apiserver must answer the same way."""

from __future__ import annotations

import pytest

from tests.support.apiserver import new_ns


# ---------------------------------------------------------------- trailing slashes
@pytest.mark.parametrize("path,field", [("/version/", "gitVersion"), ("/api/", "versions"),
                                        ("/apis/", "groups"), ("/version", "gitVersion")],
                         ids=["version", "api", "apis", "version-no-slash"])
async def test_discovery_roots_with_trailing_slash(api, path, field):
    r = await api.get(path)
    assert r.status == 200
    assert field in await r.json()


async def test_kr8s_client_constructs(api):
    kr8s = pytest.importorskip("kr8s")
    client = await kr8s.asyncio.api(url=str(api.make_url("")).rstrip("/"))
    version = await client.version()
    assert version["major"] == "1"
    ns = await new_ns(api)
    pods = [p async for p in client.get("pods", namespace=ns)]
    assert pods == []


# ---------------------------------------------------------------- includeObject
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}


@pytest.mark.parametrize("include,want", [("Object", "ConfigMap"), ("Metadata", "PartialObjectMetadata"),
                                          ("", "PartialObjectMetadata"), ("None", None)],
                         ids=["object", "metadata", "default", "none"])
async def test_table_include_object(api, include, want):
    ns = await new_ns(api)
    r = await api.post(f"/api/v1/namespaces/{ns}/configmaps",
                       json={"metadata": {"name": "c"}, "data": {"k": "v"}})
    assert r.status == 201
    q = f"?includeObject={include}" if include else ""
    for path in (f"/api/v1/namespaces/{ns}/configmaps{q}", f"/api/v1/namespaces/{ns}/configmaps/c{q}"):
        t = await (await api.get(path, headers=TABLE)).json()
        row = t["rows"][0]
        if want is None:
            assert "object" not in row
        else:
            assert row["object"]["kind"] == want
        if want == "ConfigMap":
            assert row["object"]["data"] == {"k": "v"} and row["object"]["apiVersion"] == "v1"


async def test_table_include_object_bad_value(api):
    ns = await new_ns(api)
    r = await api.get(f"/api/v1/namespaces/{ns}/configmaps?includeObject=All", headers=TABLE)
    assert r.status == 400
    assert (await r.json())["message"] == 'unrecognized includeObject value: "All"'
