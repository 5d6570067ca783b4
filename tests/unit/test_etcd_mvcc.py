"""The MVCC store on its own: revisions, ranges, history, compaction (etcd mvcc semantics)."""

import pytest
from aetcd.rpc import rpc_pb2

from components.etcd import errors
from components.etcd.mvcc import Store


def put(st, key, value, lease=0):
    t = st.begin()
    t.put(key, value, lease)
    return st.end(t)


def rng(st, key, end=b"", **kw):
    return st.range(rpc_pb2.RangeRequest(key=key, range_end=end, **kw))


def test_first_write_is_revision_2_and_versions_count():
    st = Store()
    assert st.rev == 1
    put(st, b"a", b"1")
    put(st, b"a", b"2")
    kv = rng(st, b"a").kvs[0]
    assert (kv.create_revision, kv.mod_revision, kv.version, kv.value) == (2, 3, 2, b"2")


def test_delete_range_is_one_revision_and_recreate_resets_version():
    st = Store()
    for k in (b"p/a", b"p/b", b"q"):
        put(st, k, b"v")
    t = st.begin()
    assert len(t.delete_range(b"p/", b"p0")) == 2
    st.end(t)
    assert st.rev == 5
    put(st, b"p/a", b"again")
    kv = rng(st, b"p/a").kvs[0]
    assert (kv.create_revision, kv.version) == (6, 1)
    # history: at revision 4 both keys were live
    assert rng(st, b"p/", b"p0", revision=4).count == 2
    assert rng(st, b"p/", b"p0", revision=5).count == 0


def test_range_limit_count_sort_and_gte():
    st = Store()
    for i, k in enumerate([b"k3", b"k1", b"k2", b"z"]):
        put(st, k, str(9 - i).encode())
    r = rng(st, b"k", b"l", limit=2)
    assert [kv.key for kv in r.kvs] == [b"k1", b"k2"] and r.more and r.count == 3
    r = rng(st, b"k", b"l", sort_target=rpc_pb2.RangeRequest.VALUE, sort_order=rpc_pb2.RangeRequest.DESCEND)
    assert [kv.value for kv in r.kvs] == [b"9", b"8", b"7"]
    assert rng(st, b"k2", b"\0").count == 3  # k2, k3, z
    r = rng(st, b"k", b"l", count_only=True)
    assert r.count == 3 and len(r.kvs) == 0
    r = rng(st, b"k", b"l", keys_only=True)
    assert all(kv.value == b"" for kv in r.kvs) and len(r.kvs) == 3
    r = rng(st, b"k", b"l", min_mod_revision=3)
    assert sorted(kv.key for kv in r.kvs) == [b"k1", b"k2"]


def test_compaction_keeps_latest_and_rejects_older_reads():
    st = Store()
    put(st, b"a", b"1")  # 2
    put(st, b"a", b"2")  # 3
    put(st, b"b", b"1")  # 4
    t = st.begin()
    t.delete_range(b"b", b"")
    st.end(t)  # 5
    put(st, b"a", b"3")  # 6
    st.compact(5)
    with pytest.raises(errors.EtcdError) as e:
        rng(st, b"a", revision=4)
    assert e.value is errors.COMPACTED
    assert rng(st, b"a", revision=5).kvs[0].value == b"2"
    assert rng(st, b"b", revision=5).count == 0
    # events from the compaction revision on remain, except deletions AT it (etcd keyIndex.keep
    # drops a tombstone at the compaction revision: a watch from 5 sees no DELETE of b)
    assert [r for r, _ in st.log] == [6]
    assert b"b" not in st.hist
    with pytest.raises(errors.EtcdError):
        st.compact(5)
    with pytest.raises(errors.EtcdError) as e:
        rng(st, b"a", revision=99)
    assert e.value is errors.FUTURE_REV


def test_snapshot_round_trip_rebuilds_log():
    st = Store()
    put(st, b"a", b"1")
    put(st, b"b", b"1")
    put(st, b"a", b"2")
    st.compact(3)
    other = Store()
    other.load(st.rev, st.compact_rev, list(st.all_versions()))
    assert other.rev == 4 and other.keys == [b"a", b"b"]
    assert [r for r, _ in other.log] == [3, 4]
    kv, prev = other.log[-1][1][0]
    assert kv.value == b"2" and prev.value == b"1"
