"""The apiserver's etcd watch: one stream per attempt, trusted progress only, and a watch cache
that survives an etcd restart (issue 9, item 1). Runs on the embedded etcd, in process."""

from __future__ import annotations

import asyncio
import socket

import grpc
import pytest
from aetcd.rpc import rpc_pb2, rpc_pb2_grpc

from components.apiserver.cache import TooOldResourceVersion, WatchCache
from components.etcd.server import serve
from controlplane.api import resources
from controlplane.storage import Expired, Store, Unavailable, collection_prefix, object_key
from controlplane.storage.etcd import EtcdClient, progress_trustworthy

R = rpc_pb2
CM = resources.get("configmaps")


def cm(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": {"k": name}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RawWatch:
    """A raw Watch call on the embedded etcd: ``send`` requests, ``recv`` responses."""

    def __init__(self, stub) -> None:
        self.q: asyncio.Queue = asyncio.Queue()

        async def reqs():
            while True:
                r = await self.q.get()
                if r is None:
                    return
                yield r
        self.call = stub.Watch(reqs())

    def send(self, req) -> None:
        self.q.put_nowait(req)

    async def recv(self):
        return await asyncio.wait_for(self.call.read(), 10)

    def close(self) -> None:
        self.q.put_nowait(None)
        self.call.cancel()


@pytest.fixture
async def etcd(tmp_path):
    server = await serve(["http://127.0.0.1:0"], None)
    yield server
    await server.stop()


@pytest.fixture
async def raw(etcd):
    channel = grpc.aio.insecure_channel(etcd.endpoint)
    yield rpc_pb2_grpc.KVStub(channel), rpc_pb2_grpc.WatchStub(channel)
    await channel.close()


def test_progress_trustworthy_follows_kubernetes_version_rule():
    assert [progress_trustworthy(v) for v in
            ("3.4.23", "3.4.30", "3.4.31", "3.5.0", "3.5.12", "3.5.13", "3.6.0", "x")] == \
        [False, False, True, False, False, True, True, False]


async def test_embedded_etcd_answers_no_progress_on_a_stream_without_watchers(raw):
    kv, watch = raw
    await kv.Put(R.PutRequest(key=b"a", value=b"1"))
    w = RawWatch(watch)
    w.send(R.WatchRequest(progress_request=R.WatchProgressRequest()))
    w.send(R.WatchRequest(create_request=R.WatchCreateRequest(key=b"a")))
    first = await w.recv()  # responses are in order: no answer came for the empty stream
    assert first.created and first.watch_id != -1
    w.close()


async def test_embedded_etcd_answers_progress_after_the_unsynced_watchers_events(etcd, raw):
    kv, watch = raw
    for i in range(60):
        await kv.Put(R.PutRequest(key=b"k%02d" % i, value=b"v"))
    etcd.core.hub.max_queue = 2  # catch-up in many steps: the watcher stays unsynced a while
    w = RawWatch(watch)
    w.send(R.WatchRequest(create_request=R.WatchCreateRequest(key=b"k", range_end=b"l", start_revision=2)))
    assert (await w.recv()).created
    w.send(R.WatchRequest(progress_request=R.WatchProgressRequest()))
    revs = []
    while True:
        resp = await w.recv()
        if resp.watch_id == -1:
            break
        revs += [e.kv.mod_revision for e in resp.events]
    assert resp.header.revision == 61 and revs == list(range(2, 62))
    w.close()


async def test_each_attempt_has_its_own_request_stream(etcd):
    client = EtcdClient(etcd.endpoint)
    try:
        first = client.watch(b"/r/", b"/r0", 1)
        assert first.request_progress() is False  # no watcher yet: nothing could answer for it
        it = first.__aiter__()
        pending = asyncio.ensure_future(it.__anext__())
        await client.txn([], [R.RequestOp(request_put=R.PutRequest(key=b"/r/a", value=b"1"))])
        got = await asyncio.wait_for(pending, 10)
        assert got.events[0].kv.key == b"/r/a" and first.created
        first.close()
        assert first.request_progress() is False  # a closed stream sends nothing
        with pytest.raises((StopAsyncIteration, asyncio.CancelledError, Unavailable)):
            await asyncio.wait_for(it.__anext__(), 10)
        assert first._call.cancelled()  # the old call is gone, its request iterator ended
        assert first._requests.empty() or first._requests.get_nowait() is None
        second = client.watch(b"/r/", b"/r0", got.events[0].kv.mod_revision + 1)
        it2 = second.__aiter__()
        pending = asyncio.ensure_future(it2.__anext__())
        await client.txn([], [R.RequestOp(request_put=R.PutRequest(key=b"/r/b", value=b"2"))])
        got = await asyncio.wait_for(pending, 10)
        assert [e.kv.key for e in got.events] == [b"/r/b"]
        # the embedded etcd is trusted (3.5.13 semantics): a progress request is answered
        assert second.progress_ok and second.request_progress()
        progress = await asyncio.wait_for(it2.__anext__(), 10)
        assert progress.events == [] and progress.revision == got.events[0].kv.mod_revision
        second.close()
    finally:
        await client.close()


async def test_untrusted_servers_progress_answer_is_dropped(etcd):
    client = EtcdClient(etcd.endpoint)
    client._progress_ok = False  # as for etcd 3.4.23: its answers may run ahead of events
    put = lambda k: client.txn([], [R.RequestOp(request_put=R.PutRequest(key=k, value=b"1"))])  # noqa: E731
    try:
        stream = client.watch(b"/u/", b"/u0", (await client.range(b"/u/")).header.revision + 1)
        it = stream.__aiter__()
        pending = asyncio.ensure_future(it.__anext__())
        await put(b"/u/a")
        assert [e.kv.key for e in (await asyncio.wait_for(pending, 10)).events] == [b"/u/a"]
        assert stream.created and not stream.request_progress()  # not even sent
        stream._requests.put_nowait(R.WatchRequest(progress_request=R.WatchProgressRequest()))
        pending = asyncio.ensure_future(it.__anext__())
        await put(b"/u/b")
        got = await asyncio.wait_for(pending, 10)
        assert [e.kv.key for e in got.events] == [b"/u/b"]  # the answer before it was not yielded
        stream.close()
    finally:
        await client.close()


async def test_unchanged_proves_no_put_and_no_delete(etcd):
    store = Store(etcd.endpoint)
    try:
        prefix = collection_prefix(CM)
        a = await store.create(object_key(CM, "default", "a"), cm("a"))
        since = int(a["metadata"]["resourceVersion"])
        await store.create("/registry/other/x", cm("x"))
        assert await store.unchanged(prefix, since, 1) == since + 1
        await store.create(object_key(CM, "default", "b"), cm("b"))
        assert await store.unchanged(prefix, since, 1) == 0       # a put under the prefix
        since = await store.current_revision()
        await store.delete(object_key(CM, "default", "b"))
        assert await store.unchanged(prefix, since, 2) == 0       # a delete under the prefix
    finally:
        await store.close()


async def _wait_event(w, timeout: float = 15):
    ev = await w.next(timeout)
    assert ev not in (False, None), ev
    return ev


@pytest.mark.parametrize("trusted", [True, False], ids=["progress", "range-proof"])
async def test_wait_for_revision_on_an_idle_resource(etcd, trusted):
    store = Store(etcd.endpoint)
    if not trusted:
        store.etcd._progress_ok = False
    cache = WatchCache(store, CM)
    await cache.start()
    try:
        w, _ = cache.watch(lambda o: True, cache.revision)
        await store.create(object_key(CM, "default", "a"), cm("a"))
        await _wait_event(w)
        await store.create("/registry/other/x", cm("x"))  # etcd moves on, configmaps do not
        rev = await store.current_revision()
        assert await cache.wait_for_revision(rev, timeout=10)
        assert cache.revision == rev and not w.pending
    finally:
        await cache.stop()
        await store.close()


async def test_watch_cache_resumes_from_its_revision_after_etcd_restart(tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    data = str(tmp_path / "etcd")
    server = await serve([url], data)
    store = Store(url)
    cache = WatchCache(store, CM)
    await cache.start()
    try:
        w, start = cache.watch(lambda o: True, cache.revision)
        for n in ("a", "b"):
            await store.create(object_key(CM, "default", n), cm(n))
        seen = [await _wait_event(w), await _wait_event(w)]
        await server.stop()
        server = await serve([url], data)
        for n in ("c", "d"):
            for _ in range(200):
                try:
                    await store.create(object_key(CM, "default", n), cm(n))
                    break
                except Unavailable:
                    await asyncio.sleep(0.05)  # etcd's port is back; the channel reconnects
        seen += [await _wait_event(w), await _wait_event(w)]
        final = await store.list(collection_prefix(CM))
        assert [(e.object["metadata"]["name"], e.revision) for e in seen] == \
            [(o["metadata"]["name"], int(o["metadata"]["resourceVersion"])) for o in final.items]
        rev = await store.current_revision()
        assert await cache.wait_for_revision(rev, timeout=10)
        assert not w.closed
    finally:
        await cache.stop()
        await store.close()
        await server.stop()


async def test_watch_cache_relists_and_closes_watchers_when_its_revision_was_compacted(tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    data = str(tmp_path / "etcd")
    server = await serve([url], data)
    store = Store(url)
    cache = WatchCache(store, CM)
    await cache.start()
    try:
        w, _ = cache.watch(lambda o: True, cache.revision)
        await store.create(object_key(CM, "default", "a"), cm("a"))
        await _wait_event(w)
        old = cache.revision
        await server.stop()
        # while the cache cannot reach it, etcd (on another port) moves on and compacts
        other = await serve(["http://127.0.0.1:0"], data)
        side = Store(other.endpoint)
        for n in ("b", "c"):
            await side.create(object_key(CM, "default", n), cm(n))
        await side.compact(await side.current_revision())
        await side.close()
        await other.stop()
        server = await serve([url], data)
        assert await w.next(30) is None  # closed by the relist: the client re-watches
        assert await cache.wait_for_revision(old + 1, timeout=30)
        assert sorted(cache.objects) == [object_key(CM, "default", n) for n in "abc"]
        with pytest.raises(TooOldResourceVersion):
            cache.watch(lambda o: True, old)
    finally:
        await cache.stop()
        await store.close()
        await server.stop()


async def test_a_watch_from_a_lost_history_raises_expired(etcd):
    store = Store(etcd.endpoint)
    try:
        rev = await store.current_revision()
        with pytest.raises(Expired):
            async for _ in store.watch(collection_prefix(CM), rev + 10):
                pass
    finally:
        await store.close()


@pytest.mark.realetcd
async def test_real_etcd_3_4_progress_is_untrusted_and_the_cache_proves_itself_current(store):
    version = (await store.etcd.status()).version
    if progress_trustworthy(version):
        pytest.skip(f"etcd {version} answers progress requests correctly")
    assert not await store.etcd.progress_supported()  # Debian's etcd 3.4.23 (etcd issue 15220)
    cache = WatchCache(store, CM)
    await cache.start()
    try:
        w, _ = cache.watch(lambda o: True, cache.revision)
        await store.create(object_key(CM, "default", "a"), cm("a"))
        await _wait_event(w)
        await store.create("/registry/other/x", cm("x"))
        rev = await store.current_revision()
        assert await cache.wait_for_revision(rev, timeout=10) and cache.revision == rev
    finally:
        await cache.stop()
