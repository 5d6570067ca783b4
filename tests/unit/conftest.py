"""Fixtures shared by the apiserver unit tests: a real etcd per test module
(``controlplane.storage.testing.EtcdProcess``, free ports; skipped where
/usr/bin/etcd is missing) and an in-process APIServer behind aiohttp's test
client. A module sets ``API_OPTIONS = {...}`` for APIServer keyword arguments
(e.g. ``bookmark_interval``)."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp.test_utils import TestClient, TestServer

from controlplane.storage import testing


@pytest.fixture(scope="module")
def etcd_url():
    if not testing.available():
        pytest.skip("needs /usr/bin/etcd")
    p = testing.EtcdProcess()
    url = asyncio.run(p.start())
    yield url
    asyncio.run(p.stop())


@pytest.fixture
async def api(request, etcd_url):
    from components.apiserver.server import APIServer

    server = APIServer(etcd_url, **getattr(request.module, "API_OPTIONS", {}))
    await server.start()
    client = TestClient(TestServer(server.app))
    await client.start_server()
    client.server_obj = server
    yield client
    await client.close()
    await server.stop()


@pytest.fixture
async def store():
    """A :class:`controlplane.storage.Store` on a fresh real etcd (one per test)."""
    from controlplane.storage import Store

    if not testing.available():
        pytest.skip("needs /usr/bin/etcd")
    async with testing.EtcdProcess() as url:
        s = Store(url)
        yield s
        await s.close()


#: lines a test module wants printed at the end of the run (e.g. the bad-input figure)
FIGURES: list[str] = []


def pytest_terminal_summary(terminalreporter):
    for line in FIGURES:
        terminalreporter.write_line(line)
