"""Storage on a real etcd: create/get/list(limit, continue)/update/delete/watch/410."""

import asyncio

import pytest

from controlplane.api import resources
from controlplane.storage import (
    Conflict,
    Expired,
    KeyExists,
    KeyNotFound,
    StoreEvent,
    collection_prefix,
    object_key,
    testing,
)

pytestmark = pytest.mark.skipif(not testing.available(), reason="needs /usr/bin/etcd")


def pod(name, ns="default"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "uid": "u-" + name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def test_keys():
    assert object_key(resources.PODS, "default", "a") == "/registry/pods/default/a"
    assert object_key(resources.NODES, None, "n1") == "/registry/nodes/n1"
    assert collection_prefix(resources.PODS, "ns1") == "/registry/pods/ns1/"
    assert collection_prefix(resources.PODS) == "/registry/pods/"


async def test_create_get_conflicts(store):
    key = object_key(resources.PODS, "default", "a")
    created = await store.create(key, {**pod("a"), "metadata": {**pod("a")["metadata"], "resourceVersion": "999"}})
    rv = created["metadata"]["resourceVersion"]
    got = await store.get(key)
    assert got["metadata"]["resourceVersion"] == rv != "999"
    with pytest.raises(KeyExists):
        await store.create(key, pod("a"))
    with pytest.raises(KeyNotFound):
        await store.get(object_key(resources.PODS, "default", "nope"))

    def label(o):
        o["metadata"]["labels"] = {"x": "1"}
        return o
    upd = await store.guaranteed_update(key, label, precondition_rv=rv, resource_plural="pods", name="a")
    assert int(upd["metadata"]["resourceVersion"]) > int(rv)
    with pytest.raises(Conflict, match='Operation cannot be fulfilled on pods "a": the object has been modified'):
        await store.guaranteed_update(key, label, precondition_rv=rv, resource_plural="pods", name="a")
    # unchanged mutation does not write
    same = await store.guaranteed_update(key, label)
    assert same["metadata"]["resourceVersion"] == upd["metadata"]["resourceVersion"]
    with pytest.raises(Conflict):
        await store.delete(key, precondition_uid="other")
    deleted = await store.delete(key, precondition_uid="u-a")
    assert deleted["metadata"]["labels"] == {"x": "1"}
    with pytest.raises(KeyNotFound):
        await store.delete(key)


async def test_concurrent_guaranteed_update_retries(store):
    key = object_key(resources.PODS, "default", "c")
    await store.create(key, {**pod("c"), "n": 0})

    def inc(o):
        o["n"] += 1
        return o
    await asyncio.gather(*(store.guaranteed_update(key, inc) for _ in range(10)))
    assert (await store.get(key))["n"] == 10


async def test_list_pages_and_expired_continue(store):
    for i in range(5):
        await store.create(object_key(resources.PODS, "default", f"p{i}"), pod(f"p{i}"))
    await store.create(object_key(resources.PODS, "other", "q"), pod("q", "other"))
    full = await store.list(collection_prefix(resources.PODS, "default"))
    assert [o["metadata"]["name"] for o in full.items] == [f"p{i}" for i in range(5)]
    page1 = await store.list(collection_prefix(resources.PODS, "default"), limit=2)
    assert [o["metadata"]["name"] for o in page1.items] == ["p0", "p1"]
    assert page1.continue_token and page1.remaining == 3
    # a write between pages is not seen: the token pins the revision
    await store.create(object_key(resources.PODS, "default", "p3a"), pod("p3a"))
    page2 = await store.list(collection_prefix(resources.PODS, "default"), limit=10,
                             continue_token=page1.continue_token)
    assert [o["metadata"]["name"] for o in page2.items] == ["p2", "p3", "p4"]
    assert page2.continue_token == "" and page2.revision == page1.revision
    odd = await store.list(collection_prefix(resources.PODS), limit=2,
                           predicate=lambda o: o["metadata"]["name"] in ("p1", "p4", "q"))
    assert [o["metadata"]["name"] for o in odd.items] == ["p1", "p4"] and odd.continue_token
    await store.compact(await store.current_revision())
    with pytest.raises(Expired, match="continue parameter is too old"):
        await store.list(collection_prefix(resources.PODS, "default"), continue_token=page1.continue_token)
    with pytest.raises(ValueError):
        await store.list(collection_prefix(resources.PODS), continue_token="garbage")


async def test_watch_events_and_compaction(store):
    prefix = collection_prefix(resources.PODS)
    start = await store.current_revision() + 1
    key = object_key(resources.PODS, "default", "w")
    await store.create(key, pod("w"))
    await store.guaranteed_update(key, lambda o: {**o, "spec": {"nodeName": "n1"}})
    await store.delete(key)
    seen: list[StoreEvent] = []

    async def collect():
        async for ev in store.watch(prefix, start):
            if isinstance(ev, StoreEvent):
                seen.append(ev)
                if len(seen) == 3:
                    return
    await asyncio.wait_for(collect(), 10)
    assert [e.type for e in seen] == ["ADDED", "MODIFIED", "DELETED"]
    assert seen[1].prev["spec"] == {"containers": [{"name": "c", "image": "nginx"}]}
    assert seen[1].object["spec"] == {"nodeName": "n1"}
    assert seen[2].object["metadata"]["resourceVersion"] == str(seen[2].revision)
    await store.compact(await store.current_revision())
    with pytest.raises(Expired):
        async for _ in store.watch(prefix, start):
            pass
