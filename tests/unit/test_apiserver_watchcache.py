"""Watch cache dispatch: a slow watcher is dropped, others unaffected; events shared and encoded once."""

import asyncio

from components.apiserver.cache import WatchCache
from components.apiserver.watch import event_line
from controlplane.api import codec
from controlplane.api import resources as R
from controlplane.storage import StoreEvent


def pod(name, rv, labels=None):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "resourceVersion": str(rv), "labels": labels or {}}}


def added(name, rv, labels=None):
    return StoreEvent("ADDED", f"/registry/pods/default/{name}", pod(name, rv, labels), None, rv)


async def test_slow_watcher_is_dropped_without_stalling_the_others():
    cache = WatchCache(None, R.PODS, queue_size=3)
    slow, _ = cache.watch(lambda o: True, 1)
    fast, _ = cache.watch(lambda o: True, 1)
    got = []
    for i in range(10):
        cache._apply(added(f"p{i}", 10 + i))
        evs = await asyncio.wait_for(fast.drain(1.0), 2)
        got += [e.object["metadata"]["name"] for e in evs]
    assert got == [f"p{i}" for i in range(10)]
    assert slow.closed and slow not in cache.watchers and fast in cache.watchers
    evs = await asyncio.wait_for(slow.drain(1.0), 2)
    assert [e.object["metadata"]["name"] for e in evs[:-1]] == ["p0", "p1", "p2"] and evs[-1] is None


async def test_one_shared_event_and_one_encoding_for_all_watchers():
    cache = WatchCache(None, R.PODS)
    ws = [cache.watch(lambda o: True, 1)[0] for _ in range(5)]
    cache._apply(added("a", 7))
    evs = [w.pending[0] for w in ws]
    assert all(e is evs[0] for e in evs)
    line = event_line(R.PODS, evs[0])
    assert event_line(R.PODS, evs[1]) is line
    doc = codec.loads(line)
    assert doc["type"] == "ADDED" and doc["object"]["metadata"]["name"] == "a"
    assert list(doc["object"])[:2] == ["apiVersion", "kind"] and line.endswith(b"\n")


async def test_selector_transitions_from_shared_events():
    cache = WatchCache(None, R.PODS)
    blue, _ = cache.watch(lambda o: o["metadata"]["labels"].get("c") == "blue", 1)
    everyone, _ = cache.watch(lambda o: True, 1)
    cache._apply(added("a", 5, {"c": "blue"}))
    cache._apply(StoreEvent("MODIFIED", "/registry/pods/default/a", pod("a", 6, {"c": "red"}),
                            pod("a", 5, {"c": "blue"}), 6))
    b = await blue.drain(1.0)
    e = await everyone.drain(1.0)
    assert [x.type for x in b] == ["ADDED", "DELETED"] and b[1].object["metadata"]["resourceVersion"] == "6"
    assert b[1].object["metadata"]["labels"] == {"c": "blue"}     # the last state it matched
    assert [x.type for x in e] == ["ADDED", "MODIFIED"]


async def test_drain_times_out_with_false():
    cache = WatchCache(None, R.PODS)
    w, _ = cache.watch(lambda o: True, 1)
    assert await w.drain(0.01) is False
    assert await w.next(0.01) is False
    loop = asyncio.get_running_loop()
    loop.call_soon(cache._apply, added("x", 3))
    evs = await asyncio.wait_for(w.drain(5), 6)
    assert [x.object["metadata"]["name"] for x in evs] == ["x"]
