"""python-etcd3 (``etcd3`` 0.12.0) against an etcd3 server: the user-facing API, end to end.

Run with an interpreter that has ``etcd3==0.12.0`` and ``tenacity<7`` (NOT the project's one:
aetcd and etcd3 both register ``kv.proto`` in protobuf's registry, so they cannot share a process)::

    PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python /tmp/etcd3venv/bin/python scenario.py HOST:PORT

Each check prints ``ok <name>`` or ``FAIL <name>: <reason>``; the exit status is the number of
failures (0 = all passed). Covers put/get/get_prefix/delete, transactions, watch and
watch_prefix (iterator and callback), leases (grant/refresh/TTL/revoke/expiry) and locks.
"""

from __future__ import annotations

import sys
import threading
import traceback

import etcd3

CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


class Collected:
    """Watch events gathered by a callback (run on the client's watcher thread); ``wait(n)``
    blocks until ``n`` have arrived, AssertionError after ``timeout`` seconds."""

    def __init__(self):
        self.events = []
        self._cond = threading.Condition()

    def __call__(self, resp):
        with self._cond:
            self.events.extend(getattr(resp, "events", ()))
            self._cond.notify_all()

    def wait(self, n, timeout=10.0):
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.events) >= n, timeout):
                raise AssertionError("%d watch events not seen within %.0fs" % (n, timeout))


def wait_deleted(c, key, timeout=10.0):
    """Block until ``key`` (bytes or str) is deleted, seen as a DELETE watch event from the
    key's current revision on; returns at once if it is already gone."""
    value, meta = c.get(key)
    if value is None:
        return
    ev = c.watch_once(key, timeout=timeout, start_revision=meta.mod_revision + 1)
    assert isinstance(ev, etcd3.events.DeleteEvent), ev


@check
def put_get(c):
    c.put("/s/a", "1")
    value, meta = c.get("/s/a")
    assert value == b"1" and meta.key == b"/s/a" and meta.version == 1, (value, meta)
    assert meta.create_revision == meta.mod_revision
    c.put("/s/a", "2")
    value, meta = c.get("/s/a")
    assert value == b"2" and meta.version == 2
    assert c.get("/s/missing") == (None, None)
    prev = c.put("/s/a", "3", prev_kv=True)
    assert prev.prev_kv.value == b"2" and prev.header.revision == meta.mod_revision + 1


@check
def put_if_not_exists(c):
    assert c.put_if_not_exists("/s/once", "x") is True
    assert c.put_if_not_exists("/s/once", "y") is False
    assert c.get("/s/once")[0] == b"x"


@check
def get_prefix_and_range(c):
    for i in range(5):
        c.put("/p/%d" % i, "v%d" % i)
    c.put("/p0", "outside")
    got = [(v, m.key) for v, m in c.get_prefix("/p/")]
    assert got == [(b"v%d" % i, b"/p/%d" % i) for i in range(5)], got
    desc = [m.key for _, m in c.get_prefix("/p/", sort_order="descend")]
    assert desc == [b"/p/%d" % i for i in reversed(range(5))]
    keys_only = [(v, m.key) for v, m in c.get_prefix("/p/", keys_only=True)]
    assert all(v == b"" for v, _ in keys_only) and len(keys_only) == 5
    rng = [m.key for _, m in c.get_range("/p/1", "/p/3")]
    assert rng == [b"/p/1", b"/p/2"]
    assert len(list(c.get_all())) >= 6


@check
def delete(c):
    c.put("/d/a", "1")
    c.put("/d/b", "2")
    c.put("/d/c", "3")
    assert c.delete("/d/a") is True
    assert c.delete("/d/a") is False
    assert c.get("/d/a") == (None, None)
    resp = c.delete("/d/b", prev_kv=True, return_response=True)
    assert resp.deleted == 1 and resp.prev_kvs[0].value == b"2"
    resp = c.delete_prefix("/d/")
    assert resp.deleted == 1
    assert list(c.get_prefix("/d/")) == []


@check
def transactions(c):
    c.put("/t/k", "v1")
    ok, responses = c.transaction(
        compare=[c.transactions.value("/t/k") == "v1", c.transactions.version("/t/k") > 0],
        success=[c.transactions.put("/t/k", "v2"), c.transactions.get("/t/k")],
        failure=[c.transactions.put("/t/k", "never")])
    assert ok is True
    assert responses[1][0][0] == b"v2", responses
    ok, responses = c.transaction(
        compare=[c.transactions.value("/t/k") == "v1"],
        success=[c.transactions.put("/t/k", "never")],
        failure=[c.transactions.delete("/t/k")])
    assert ok is False and c.get("/t/k") == (None, None)
    # create-if-absent via create revision, and replace()
    ok, _ = c.transaction(compare=[c.transactions.create("/t/n") == 0],
                          success=[c.transactions.put("/t/n", "a")], failure=[])
    assert ok and c.replace("/t/n", "a", "b") is True and c.replace("/t/n", "a", "c") is False
    assert c.get("/t/n")[0] == b"b"
    # nested transaction (etcd >= 3.3)
    ok, responses = c.transaction(
        compare=[], success=[c.transactions.txn(compare=[c.transactions.value("/t/n") == "b"],
                                                success=[c.transactions.put("/t/nested", "yes")],
                                                failure=[])], failure=[])
    assert ok and c.get("/t/nested")[0] == b"yes"


@check
def watch_iterator(c):
    events, cancel = c.watch("/w/key")
    seen = []

    def consume():
        for ev in events:
            seen.append(ev)
            if len(seen) == 3:
                break

    t = threading.Thread(target=consume, daemon=True)
    t.start()  # c.watch() returned once the server confirmed the watch (created=true)
    c.put("/w/key", "1")
    c.put("/w/other", "x")
    c.put("/w/key", "2")
    c.delete("/w/key")
    t.join(10)
    cancel()
    assert [type(e).__name__ for e in seen] == ["PutEvent", "PutEvent", "DeleteEvent"], seen
    assert [e.value for e in seen[:2]] == [b"1", b"2"]


@check
def watch_prefix_from_revision(c):
    first = c.put("/wp/a", "1").header.revision
    c.put("/wp/b", "2")
    c.put("/wq/none", "x")
    events, cancel = c.watch_prefix("/wp/", start_revision=first)
    got = []
    for ev in events:
        got.append((ev.key, ev.value, ev.mod_revision))
        if len(got) == 2:
            break
    cancel()
    assert got == [(b"/wp/a", b"1", first), (b"/wp/b", b"2", first + 1)], got


@check
def watch_callback_and_cancel(c):
    seen = Collected()
    wid = c.add_watch_prefix_callback("/cb/", seen)
    c.put("/cb/1", "a")
    c.put("/cb/2", "b")
    seen.wait(2)
    c.cancel_watch(wid)
    assert [e.key for e in seen.events] == [b"/cb/1", b"/cb/2"]
    marker = Collected()
    c.add_watch_callback("/cbm", marker)
    c.put("/cb/3", "c")  # nothing arrives for a canceled watch: the stream is ordered, so
    c.put("/cbm", "m")   # once the marker's event is here, /cb/3's would have been too
    marker.wait(1)
    assert len(seen.events) == 2


@check
def watch_once(c):
    rev = c.put("/once/k", "v").header.revision
    ev = c.watch_once("/once/k", timeout=10, start_revision=rev)
    assert ev.value == b"v" and ev.mod_revision == rev
    try:
        c.watch_once("/once/never", timeout=0.3)
    except etcd3.exceptions.WatchTimedOut:
        pass
    else:
        raise AssertionError("watch_once did not time out")


@check
def leases(c):
    lease = c.lease(30)
    assert lease.ttl == 30 and 0 < lease.remaining_ttl <= 30
    c.put("/l/a", "1", lease=lease)
    c.put("/l/b", "2", lease=lease)
    assert sorted(lease.keys) == [b"/l/a", b"/l/b"]
    assert c.get("/l/a")[1].lease_id == lease.id
    refreshed = list(lease.refresh())
    assert refreshed[0].TTL == 30
    lease.revoke()
    assert c.get("/l/a") == (None, None) and c.get("/l/b") == (None, None)
    assert c.get_lease_info(lease.id).TTL == -1


@check
def lease_expiry(c):
    lease = c.lease(1)
    c.put("/l/exp", "bye", lease=lease)
    wait_deleted(c, "/l/exp")
    assert c.get("/l/exp") == (None, None)


@check
def locks(c):
    lock = c.lock("res", ttl=10)
    assert lock.acquire(timeout=5) and lock.is_acquired()
    other = c.lock("res", ttl=10)
    assert other.acquire(timeout=0.5) is False  # contended
    assert lock.release() is True and not lock.is_acquired()
    assert other.acquire(timeout=5)
    other.release()
    with c.lock("ctx", ttl=10) as held:
        assert held.is_acquired()
    # a lock whose lease expires frees itself
    short = c.lock("exp", ttl=1)
    assert short.acquire(timeout=5)
    wait_deleted(c, short.key)
    assert not short.is_acquired()
    # contention from another thread: the waiter gets it once the holder releases
    holder = c.lock("thr", ttl=10)
    holder.acquire()
    got = []
    t = threading.Thread(target=lambda: got.append(c.lock("thr", ttl=10).acquire(timeout=10)), daemon=True)
    t.start()
    holder.release()
    t.join(12)
    assert got == [True], got


@check
def cluster_and_status(c):
    members = list(c.members)
    assert len(members) == 1 and members[0].client_urls, members
    st = c.status()
    assert st.leader.id == members[0].id and st.version, st


@check
def compaction(c):
    r1 = c.put("/cmp/k", "1").header.revision
    c.put("/cmp/k", "2")
    c.compact(r1 + 1)
    try:
        list(c.watch("/cmp/k", start_revision=r1)[0])
    except etcd3.exceptions.RevisionCompactedError as e:
        assert e.compacted_revision == r1 + 1
    else:
        raise AssertionError("watch from a compacted revision was not refused")


def main() -> int:
    host, port = sys.argv[1].rsplit(":", 1)
    failures = 0
    with etcd3.client(host=host, port=int(port), timeout=10) as c:
        for fn in CHECKS:
            try:
                fn(c)
                print("ok", fn.__name__, flush=True)
            except Exception as e:  # report every failing check, not just the first
                failures += 1
                print("FAIL %s: %s: %s" % (fn.__name__, type(e).__name__, e), flush=True)
                traceback.print_exc(file=sys.stderr)
    return failures


if __name__ == "__main__":
    sys.exit(main())
