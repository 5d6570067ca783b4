"""Conditional writes from a (possibly stale) cached copy: one round trip, same results as a read."""

import pytest

from controlplane.api import resources
from controlplane.storage import Conflict, KeyNotFound, object_key, testing

pytestmark = pytest.mark.skipif(not testing.available(), reason="needs /usr/bin/etcd")


def pod(name, uid="u1"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": uid},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def label(v):
    def mutate(o):
        o["metadata"].setdefault("labels", {})["v"] = v
        return o
    return mutate


async def test_current_cached_copy_writes_without_a_read(store):
    key = object_key(resources.PODS, "default", "a")
    cached = await store.create(key, pod("a"))
    snapshot = repr(cached)
    calls = []
    orig = store.etcd.range

    async def counting_range(*a, **kw):
        calls.append(a)
        return await orig(*a, **kw)
    store.etcd.range = counting_range
    out = await store.guaranteed_update(key, label("1"), cached=cached)
    assert calls == []                                   # the Txn alone
    assert out["metadata"]["labels"] == {"v": "1"}
    assert int(out["metadata"]["resourceVersion"]) > int(cached["metadata"]["resourceVersion"])
    assert repr(cached) == snapshot                      # the cache's copy is never modified


async def test_stale_cached_copy_retries_on_the_current_value(store):
    key = object_key(resources.PODS, "default", "a")
    stale = await store.create(key, pod("a"))
    await store.guaranteed_update(key, label("1"))
    seen = []

    def mutate(o):
        seen.append(dict(o["metadata"].get("labels") or {}))
        o["metadata"].setdefault("labels", {})["w"] = "x"
        return o
    out = await store.guaranteed_update(key, mutate, cached=stale)
    assert seen == [{}, {"v": "1"}]                      # tried on the stale copy, then on the Txn's read
    assert out["metadata"]["labels"] == {"v": "1", "w": "x"}
    assert (await store.get(key))["metadata"]["labels"] == {"v": "1", "w": "x"}


async def test_stale_copy_failing_a_precondition_is_rechecked(store):
    key = object_key(resources.PODS, "default", "a")
    stale = await store.create(key, pod("a", uid="old"))
    await store.delete(key)
    await store.create(key, pod("a", uid="new"))
    # the stale copy has another uid: re-read, the current object matches → written
    out = await store.guaranteed_update(key, label("2"), precondition_uid="new", cached=stale)
    assert out["metadata"]["uid"] == "new" and out["metadata"]["labels"] == {"v": "2"}
    # a precondition that fails on the current value too is a Conflict
    with pytest.raises(Conflict):
        await store.guaranteed_update(key, label("3"), precondition_uid="old", cached=stale)
    # a resourceVersion precondition is checked against the current value, not the stale one
    cur_rv = out["metadata"]["resourceVersion"]
    out2 = await store.guaranteed_update(key, label("4"), precondition_rv=cur_rv, cached=stale)
    assert out2["metadata"]["labels"] == {"v": "4"}
    with pytest.raises(Conflict, match="the object has been modified"):
        await store.guaranteed_update(key, label("5"), precondition_rv=cur_rv, cached=out, resource_plural="pods",
                                      name="a")


async def test_unchanged_on_a_stale_copy_still_writes_the_current_change(store):
    key = object_key(resources.PODS, "default", "a")
    stale = await store.create(key, pod("a"))
    await store.guaranteed_update(key, label("1"))
    rev_before = await store.current_revision()
    # mutate leaves the stale copy as it is ("no change") — but the current value differs:
    # the no-op is confirmed on the current value and returned without a write
    out = await store.guaranteed_update(key, lambda o: o, cached=stale)
    assert out["metadata"]["labels"] == {"v": "1"}
    assert await store.current_revision() == rev_before


async def test_delete_with_stale_or_missing_cached_copy(store):
    key = object_key(resources.PODS, "default", "a")
    stale = await store.create(key, pod("a"))
    cur = await store.guaranteed_update(key, label("1"))
    deleted = await store.delete(key, cached=stale)       # Txn fails, retried on the current value
    assert deleted["metadata"]["labels"] == {"v": "1"}
    assert deleted["metadata"]["resourceVersion"] == cur["metadata"]["resourceVersion"]
    with pytest.raises(KeyNotFound):
        await store.delete(key, cached=stale)
    with pytest.raises(KeyNotFound):
        await store.guaranteed_update(key, label("2"), cached=stale)
