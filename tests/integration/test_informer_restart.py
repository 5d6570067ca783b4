"""An informer (the reflector every component uses) across a kill -9 of the apiserver: it re-watches
the restarted apiserver, relists when its resourceVersion is too old for the new watch cache (the
changes made meanwhile through another apiserver), and ends with exactly the objects on the
server, having dispatched the changes it missed (issue 9)."""

from __future__ import annotations

import asyncio
import re
import signal

import pytest

from controlplane.api.resources import get
from controlplane.client.informer import Informer
from controlplane.client.rest import RestClient
from tests.integration.conftest import free_port, spawn, stop
from tests.support.tls import harness

pytestmark = pytest.mark.integration

CM = get("configmaps")


def cm(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": name}}


async def apiserver(etcd_url: str, port: int):
    proc, out = spawn("apiserver", "--etcd-servers", etcd_url, "--port", str(port))
    line = await asyncio.to_thread(out.wait_for, "event=apiserver.ready", 60)
    return proc, re.search(r"url=(\S+)", line).group(1)


class Changes:
    """Wakes waiters whenever one of the informer's handlers ran."""

    def __init__(self) -> None:
        self.cond = asyncio.Condition()
        self.log: list[tuple[str, str]] = []

    def handler(self, kind: str):
        def h(*objs):
            self.log.append((kind, objs[-1]["metadata"]["name"]))
            asyncio.get_running_loop().create_task(self._wake())
        return h

    async def _wake(self) -> None:
        async with self.cond:
            self.cond.notify_all()

    async def until(self, cond, what: str, timeout: float = 60) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not cond():
            if loop.time() > deadline:
                raise TimeoutError(what)
            async with self.cond:
                try:
                    await asyncio.wait_for(self.cond.wait(), deadline - loop.time())
                except asyncio.TimeoutError:
                    pass


async def test_informer_follows_an_apiserver_restart(tmp_path, caplog):
    caplog.set_level("INFO", logger="informer")
    etcd_url = f"http://127.0.0.1:{free_port()}"
    etcd, out = spawn("etcd", "--data-dir", str(tmp_path / "etcd"), "--listen-client-urls", etcd_url)
    await asyncio.to_thread(out.wait_for, "event=etcd.ready", 60)
    port = free_port()
    api, url = await apiserver(etcd_url, port)
    client = RestClient(harness().client_config(url), "test")
    inf = Informer(client, CM, namespace="default")
    changes = Changes()
    inf.add_handlers(changes.handler("add"), changes.handler("update"), changes.handler("delete"))
    try:
        for n in ("a", "b"):
            await client.create(CM, cm(n), "default")
        inf.start()
        await changes.until(lambda: {"default/a", "default/b"} <= set(inf.store), "first objects")

        api.send_signal(signal.SIGKILL)
        await asyncio.to_thread(api.wait, 20)
        # while the informer's apiserver is down, another one changes what it watches
        side, side_url = await apiserver(etcd_url, 0)
        other = RestClient(harness().client_config(side_url), "test")
        await other.delete(CM, "a", "default")
        await other.create(CM, cm("c"), "default")
        await other.close()
        stop(side)
        api, _ = await apiserver(etcd_url, port)  # same address: the informer's client reconnects
        await client.create(CM, cm("d"), "default")
        await changes.until(lambda: set(inf.store) == {"default/b", "default/c", "default/d"}, "after restart")
        final = await client.list(CM, "default")
        assert {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in final["items"]} == \
            {k.split("/")[1]: o["metadata"]["resourceVersion"] for k, o in inf.store.items()}
        assert {("delete", "a"), ("add", "c"), ("add", "d")} <= set(changes.log)
        assert "informer.relist" in [r.getMessage() for r in caplog.records]  # 410 from the new cache
    finally:
        await inf.stop()
        await client.close()
        stop(api)
        stop(etcd)
