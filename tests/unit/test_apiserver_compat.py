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
