"""The embedded etcd's write path under WAL faults: a write is visible only once durable; a
failed WAL write (ENOSPC, EIO) is answered with an error, rolled back, and never reappears;
ENOSPC and the backend quota raise etcd's NOSPACE alarm; /health reports it."""

import asyncio
import contextlib
import errno
import json
import os

import pytest
from aetcd.rpc import rpc_pb2

from components.etcd import errors, wal
from components.etcd.core import Core
from components.etcd.server import _http_get

NOSPACE = rpc_pb2.NOSPACE
NOSPACE_MESSAGE = "etcdserver: mvcc: database space exceeded"


def _put_req(key: bytes, value: bytes = b"v", lease: int = 0) -> rpc_pb2.PutRequest:
    return rpc_pb2.PutRequest(key=key, value=value, lease=lease)


async def _commit(core: Core, call, *args):
    """Apply one request as the gRPC layer does and wait for its WAL group; returns the response."""
    resp = call(*args)
    fut = core.durable()
    if fut is not None:
        await fut
    return resp


def _live(core: Core) -> dict[bytes, bytes]:
    resp = core.range(rpc_pb2.RangeRequest(key=b"\0", range_end=b"\0"))
    return {kv.key: kv.value for kv in resp.kvs}


class FailingWal:
    """Wraps ``DataDir.write_sync``: fails the next writes with ``errno`` while ``failing``; a
    write can also be held until ``release`` is set (to look at the server mid-commit)."""

    def __init__(self, core: Core, monkeypatch, code: int = errno.ENOSPC) -> None:
        self.real = core.datadir.write_sync
        self.code = code
        self.failing = False
        self.hold: asyncio.Event | None = None
        self.loop = asyncio.get_running_loop()
        self.started = asyncio.Event()
        monkeypatch.setattr(core.datadir, "write_sync", self.write_sync)

    def write_sync(self, data: bytes) -> None:
        if self.hold is not None:
            self.loop.call_soon_threadsafe(self.started.set)
            asyncio.run_coroutine_threadsafe(self.hold.wait(), self.loop).result(10)
        if self.failing:
            raise OSError(self.code, os.strerror(self.code))
        self.real(data)


@pytest.fixture
async def core(tmp_path):
    c = Core(data_dir=str(tmp_path / "d"))
    c.recover()
    yield c
    with contextlib.suppress(errors.EtcdError):  # let a failing flusher settle first
        await c.flush()
    if c.datadir._fd is not None:
        c.datadir.close()


def _restart(core: Core) -> Core:
    """What a kill -9 and a new process see: the data dir as it is on disk."""
    core.datadir.unlock()
    again = Core(data_dir=core.datadir.path)
    again.recover()
    return again


async def test_pending_write_is_invisible_to_range_revision_and_watch_until_durable(core, monkeypatch):
    await _commit(core, core.put, _put_req(b"/a", b"1"))
    faults = FailingWal(core, monkeypatch)
    faults.hold = asyncio.Event()
    core.put(_put_req(b"/a", b"2"))
    fut = core.durable()
    await asyncio.wait_for(faults.started.wait(), 10)
    resp = core.range(rpc_pb2.RangeRequest(key=b"/a"))
    assert resp.kvs[0].value == b"1" and resp.header.revision == 2
    assert core.header().revision == 2 and core.hub.notified_rev == 2
    with pytest.raises(errors.EtcdError) as e:
        core.range(rpc_pb2.RangeRequest(key=b"/a", revision=3))
    assert e.value is errors.FUTURE_REV
    faults.hold.set()
    await asyncio.wait_for(fut, 10)
    resp = core.range(rpc_pb2.RangeRequest(key=b"/a"))
    assert resp.kvs[0].value == b"2" and resp.header.revision == 3


async def test_failed_wal_write_is_answered_rolled_back_and_its_revision_reused(core, monkeypatch):
    await _commit(core, core.put, _put_req(b"/kept", b"1"))
    faults = FailingWal(core, monkeypatch)
    faults.failing = True
    core.put(_put_req(b"/lost", b"x"))
    with pytest.raises(errors.EtcdError) as e:
        await core.durable()
    assert (e.value.code, e.value.message) == (errors.SC.RESOURCE_EXHAUSTED, NOSPACE_MESSAGE)
    assert _live(core) == {b"/kept": b"1"}
    with pytest.raises(errors.EtcdError):  # the alarm's own WAL record fails the same way
        await core.flush()
    assert core.store.rev == core.store.committed == 2 and core.applied_index == core.durable_index
    assert b"/lost" not in core.store.hist and b"/lost" not in core.store.keys
    assert list(core.alarms) == [(core.member_id, NOSPACE)]
    # the alarm holds further puts off, as etcd's capped applier does
    with pytest.raises(errors.EtcdError) as e:
        core.put(_put_req(b"/later"))
    assert e.value is errors.NO_SPACE
    faults.failing = False
    core.alarm(rpc_pb2.AlarmRequest(action=rpc_pb2.AlarmRequest.DEACTIVATE, memberID=core.member_id,
                                    alarm=NOSPACE))
    resp = await _commit(core, core.put, _put_req(b"/later", b"2"))
    assert resp.header.revision == 3  # the failed write's revision was never shown to anyone
    again = _restart(core)
    assert _live(again) == {b"/kept": b"1", b"/later": b"2"}
    assert again.store.rev == 3
    again.datadir.close()


async def test_a_failed_group_fails_every_write_validated_against_it(core, monkeypatch):
    lease = (await _commit(core, core.lease_grant, rpc_pb2.LeaseGrantRequest(TTL=60))).ID
    await _commit(core, core.put, _put_req(b"/x", b"0", lease))
    faults = FailingWal(core, monkeypatch)
    faults.failing = True
    faults.hold = asyncio.Event()
    core.put(_put_req(b"/new", b"1"))
    first = core.durable()
    await asyncio.wait_for(faults.started.wait(), 10)
    # behind the group in flight: a create-if-absent that sees /new (pending) and takes the
    # failure branch, a delete, a lease revoke and a grant — all validated against pending state
    create = rpc_pb2.TxnRequest(
        compare=[rpc_pb2.Compare(key=b"/new", target=rpc_pb2.Compare.CREATE, create_revision=0)],
        success=[rpc_pb2.RequestOp(request_put=_put_req(b"/new", b"other"))],
        failure=[rpc_pb2.RequestOp(request_range=rpc_pb2.RangeRequest(key=b"/new"))])
    txn = core.txn(create)
    assert not txn.succeeded and txn.responses[0].response_range.kvs[0].value == b"1"
    read_only = core.durable()
    core.delete_range(rpc_pb2.DeleteRangeRequest(key=b"/x"))
    core.lease_revoke(lease)
    core.lease_grant(rpc_pb2.LeaseGrantRequest(ID=77, TTL=60))
    behind = core.durable()
    faults.hold.set()
    for fut in (first, read_only, behind):
        with pytest.raises(errors.EtcdError):
            await fut
    assert _live(core) == {b"/x": b"0"}
    assert set(core.lessor.leases) == {lease} and core.lessor.leases[lease].keys == {b"/x"}
    assert core.store.rev == 2 and [r for r, _ in core.store.log] == [2]
    again = _restart(core)
    assert _live(again) == {b"/x": b"0"} and set(again.lessor.leases) == {lease}
    again.datadir.close()


async def test_failed_delete_leaves_the_key(core, monkeypatch):
    await _commit(core, core.put, _put_req(b"/d", b"1"))
    FailingWal(core, monkeypatch).failing = True
    core.delete_range(rpc_pb2.DeleteRangeRequest(key=b"/d"))
    with pytest.raises(errors.EtcdError):
        await core.durable()
    assert _live(core) == {b"/d": b"1"}


async def test_failed_compaction_is_not_applied(core, monkeypatch):
    for i in range(5):
        await _commit(core, core.put, _put_req(b"/c", b"%d" % i))
    FailingWal(core, monkeypatch).failing = True
    core.compact(rpc_pb2.CompactionRequest(revision=4))
    with pytest.raises(errors.EtcdError):
        await core.durable()
    assert core.store.compact_rev == 0
    assert core.range(rpc_pb2.RangeRequest(key=b"/c", revision=2)).kvs[0].value == b"0"


async def test_eio_stops_writes_until_restart_and_keeps_acknowledged_ones(core, monkeypatch):
    await _commit(core, core.put, _put_req(b"/ok", b"1"))
    FailingWal(core, monkeypatch, errno.EIO).failing = True
    core.put(_put_req(b"/bad"))
    with pytest.raises(errors.EtcdError) as e:
        await core.durable()
    assert e.value.code == errors.SC.UNAVAILABLE and "WAL write failed" in e.value.message
    with pytest.raises(errors.EtcdError) as e:
        core.put(_put_req(b"/bad2"))
    assert e.value.code == errors.SC.UNAVAILABLE
    assert _live(core) == {b"/ok": b"1"}
    body, status, _ = _http_get(core)("/health")
    assert status.startswith("503") and json.loads(body)["health"] == "false"
    again = _restart(core)
    assert _live(again) == {b"/ok": b"1"}
    again.datadir.close()


async def test_a_write_that_reached_the_file_before_failing_is_cut_off(core, monkeypatch):
    await _commit(core, core.put, _put_req(b"/ok", b"1"))
    real = os.fdatasync
    calls = []

    def failing_fdatasync(fd):
        calls.append(fd)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fdatasync", failing_fdatasync)
    core.put(_put_req(b"/torn", b"y" * 5000))  # its bytes are in the file when fdatasync fails
    with pytest.raises(errors.EtcdError):
        await core.durable()
    with contextlib.suppress(errors.EtcdError):  # the NOSPACE alarm's own record
        await core.flush()
    assert calls and core.datadir.damaged is None
    monkeypatch.setattr(os, "fdatasync", real)
    core.alarm(rpc_pb2.AlarmRequest(action=rpc_pb2.AlarmRequest.DEACTIVATE, memberID=core.member_id,
                                    alarm=NOSPACE))
    await _commit(core, core.put, _put_req(b"/after", b"2"))  # shorter than the cut record
    again = _restart(core)
    assert _live(again) == {b"/ok": b"1", b"/after": b"2"}
    assert getattr(again.datadir, "truncated", None) is None  # nothing torn was left behind
    again.datadir.close()


async def test_quota_backend_bytes_raises_the_nospace_alarm(tmp_path):
    core = Core(data_dir=str(tmp_path / "q"), quota_backend_bytes=4096)
    core.recover()
    await _commit(core, core.put, _put_req(b"/small", b"x" * 100))
    with pytest.raises(errors.EtcdError) as e:
        core.put(_put_req(b"/big", b"x" * 5000))
    assert e.value is errors.NO_SPACE
    assert list(core.alarms) == [(core.member_id, NOSPACE)]
    with pytest.raises(errors.EtcdError):  # a small put too, until disarmed
        core.put(_put_req(b"/tiny", b"x"))
    with pytest.raises(errors.EtcdError):
        core.lease_grant(rpc_pb2.LeaseGrantRequest(TTL=60))
    await _commit(core, core.delete_range, rpc_pb2.DeleteRangeRequest(key=b"/small"))  # deletes still work
    got = core.alarm(rpc_pb2.AlarmRequest(action=rpc_pb2.AlarmRequest.GET))
    assert [(a.memberID, a.alarm) for a in got.alarms] == [(core.member_id, NOSPACE)]
    core.alarm(rpc_pb2.AlarmRequest(action=rpc_pb2.AlarmRequest.DEACTIVATE, memberID=core.member_id,
                                    alarm=NOSPACE))
    await _commit(core, core.put, _put_req(b"/tiny", b"x"))
    core.datadir.close()


async def test_alarms_survive_a_restart_until_disarmed(tmp_path):
    d = str(tmp_path / "a")
    core = Core(data_dir=d, quota_backend_bytes=1000)
    core.recover()
    with pytest.raises(errors.EtcdError):
        core.put(_put_req(b"/big", b"x" * 2000))
    await core.flush()
    again = _restart(core)
    assert list(again.alarms) == [(again.member_id, NOSPACE)]
    await again.snapshot()  # kept by the snapshot too, once the WAL it was in is dropped
    third = _restart(again)
    assert list(third.alarms) == [(third.member_id, NOSPACE)]
    third.alarm(rpc_pb2.AlarmRequest(action=rpc_pb2.AlarmRequest.DEACTIVATE, memberID=third.member_id,
                                     alarm=NOSPACE))
    await third.flush()
    fourth = _restart(third)
    assert not fourth.alarms
    fourth.datadir.close()


def test_quota_zero_is_the_default_and_negative_is_no_quota():
    assert Core(quota_backend_bytes=0).quota_backend_bytes == 2 * 1024 ** 3
    core = Core(quota_backend_bytes=-1)
    core.put(_put_req(b"/k", b"x" * 10000))
    assert not core.alarms


def test_health_reports_the_alarm_as_etcd_3_5():
    core = Core()
    get = _http_get(core)
    body, status, _ = get("/health")
    assert status == "200 OK" and json.loads(body) == {"health": "true", "reason": ""}
    core.alarm(rpc_pb2.AlarmRequest(action=rpc_pb2.AlarmRequest.ACTIVATE, memberID=core.member_id,
                                    alarm=NOSPACE))
    body, status, _ = get("/health")
    assert status.startswith("503") and json.loads(body) == {"health": "false", "reason": "ALARM NOSPACE"}
    body, status, _ = get("/health?exclude=NOSPACE")
    assert status == "200 OK" and json.loads(body)["health"] == "true"


def test_a_second_server_on_the_data_dir_is_refused(tmp_path):
    d = str(tmp_path / "d")
    first = Core(data_dir=d)
    first.recover()
    second = Core(data_dir=d)
    with pytest.raises(wal.DataDirError, match="in use by another etcd .fileutil: file already locked"):
        second.recover()
    first.datadir.close()
    second.recover()  # free once the first one is gone
    second.datadir.close()


async def test_recovery_reads_a_wal_shorter_than_a_segment_and_cuts_a_torn_record(core):
    for i in range(20):
        await _commit(core, core.put, _put_req(b"/k/%d" % i, b"v%d" % i))
    path = core.datadir._wal_path(core.datadir.gen)
    end = core.datadir._off
    core.datadir.close()
    # a WAL cut short (never preallocated, e.g. a full disk) ending in half a record
    with open(path, "r+b") as f:
        f.truncate(end)
        f.seek(end)
        f.write(wal.encode_revision(22, [wal.KeyValue(key=b"/torn", value=b"z")])[:7])
    again = Core(data_dir=core.datadir.path)
    again.recover()
    assert len(_live(again)) == 20 and again.store.rev == 21
    assert again.datadir.truncated[1:] == (end, "short header")
    again.datadir.close()


async def test_lease_reads_wait_for_a_pending_grant(core, monkeypatch):
    faults = FailingWal(core, monkeypatch)
    faults.failing = True
    faults.hold = asyncio.Event()
    core.lease_grant(rpc_pb2.LeaseGrantRequest(ID=99, TTL=60))
    read = asyncio.ensure_future(core.settled())
    await asyncio.wait_for(faults.started.wait(), 10)
    assert not read.done()
    faults.hold.set()
    await asyncio.wait_for(read, 10)
    assert core.lease_ttl(rpc_pb2.LeaseTimeToLiveRequest(ID=99)).TTL == -1  # the grant never happened


async def test_keepalive_of_a_pending_grant_waits_and_answers_0_if_it_is_rolled_back(core, monkeypatch):
    """A LeaseKeepAlive for a lease whose grant has not reached the disk waits for its WAL group;
    the group fails, the grant is rolled back, and the keep-alive answers TTL 0 as for an
    unknown lease (etcd ``v3rpc/lease.go``); the lease is not brought back by it."""
    faults = FailingWal(core, monkeypatch)
    faults.failing = True
    faults.hold = asyncio.Event()
    core.lease_grant(rpc_pb2.LeaseGrantRequest(ID=7, TTL=60))
    renew = asyncio.ensure_future(core.lease_renew(7))
    await asyncio.wait_for(faults.started.wait(), 10)
    assert not renew.done()
    faults.hold.set()
    assert await asyncio.wait_for(renew, 10) == 0
    assert 7 not in core.lessor.leases


async def test_keepalive_of_a_pending_grant_renews_once_it_is_durable(core, monkeypatch):
    """The same keep-alive while the grant's WAL group is written successfully: answered with the
    granted TTL once the grant is durable (never before)."""
    faults = FailingWal(core, monkeypatch)
    faults.hold = asyncio.Event()
    core.lease_grant(rpc_pb2.LeaseGrantRequest(ID=8, TTL=60))
    renew = asyncio.ensure_future(core.lease_renew(8))
    await asyncio.wait_for(faults.started.wait(), 10)
    assert not renew.done()
    faults.hold.set()
    assert await asyncio.wait_for(renew, 10) == 60


async def test_keepalive_during_a_pending_revoke_that_is_rolled_back_renews(core, monkeypatch):
    """A keep-alive sent while a revoke waits for its WAL group: the revoke fails and is rolled
    back, so the lease still exists and the keep-alive renews it (not TTL 0)."""
    await _commit(core, core.lease_grant, rpc_pb2.LeaseGrantRequest(ID=9, TTL=60))
    faults = FailingWal(core, monkeypatch)
    faults.failing = True
    faults.hold = asyncio.Event()
    core.lease_revoke(9)
    renew = asyncio.ensure_future(core.lease_renew(9))
    await asyncio.wait_for(faults.started.wait(), 10)
    assert not renew.done()
    faults.hold.set()
    assert await asyncio.wait_for(renew, 10) == 60
    assert 9 in core.lessor.leases
