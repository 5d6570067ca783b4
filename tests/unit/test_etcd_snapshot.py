"""Snapshots of the embedded etcd: taken in the background while writes go on, and recovery after
an unclean stop (snapshot + WAL replay) rebuilds exactly the store that was acknowledged."""

import asyncio
import json
import os

import pytest
from aetcd.rpc import rpc_pb2

from components.etcd import wal
from components.etcd.core import Core


def _state(core: Core):
    st = core.store
    return (st.rev, st.compact_rev, [(kv.key, kv.value, kv.mod_revision, kv.version, kv.create_revision)
                                     for kv in st.all_versions()])


async def _put(core: Core, key: bytes, value: bytes) -> None:
    core.put(rpc_pb2.PutRequest(key=key, value=value))
    fut = core.durable()
    if fut is not None:
        await fut


async def test_background_snapshots_and_recovery_after_unclean_stop(tmp_path):
    d = str(tmp_path / "d")
    core = Core(data_dir=d, snapshot_count=40)
    core.recover()
    snapshots = 0
    for i in range(400):
        await _put(core, b"/k/%d" % (i % 37), b"v%d" % i)
        if i % 90 == 89:
            core.compact(rpc_pb2.CompactionRequest(revision=core.store.rev - 20))
        if i % 7 == 0:
            core.delete_range(rpc_pb2.DeleteRangeRequest(key=b"/k/%d" % (i % 5)))
        if core._snap_task is not None:
            snapshots += 1
    await core.flush()
    if core._snap_task is not None:
        await core._snap_task
    assert snapshots > 0 and os.path.exists(os.path.join(d, "snapshot"))
    # older WAL generations were dropped once a snapshot covered them
    assert min(core.datadir._wal_gens()) >= 2
    want = _state(core)
    # no close(): like kill -9 after the last acknowledged write
    core.datadir.unlock()
    again = Core(data_dir=d)
    again.recover()
    assert _state(again) == want
    again.datadir.close()
    core.datadir.close()


async def test_writes_continue_while_a_snapshot_is_written(tmp_path, monkeypatch):
    d = str(tmp_path / "d")
    core = Core(data_dir=d)
    core.recover()
    for i in range(200):
        await _put(core, b"/a/%d" % i, b"x" * 100)
    started, release = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()
    real = wal.DataDir.write_snapshot_stream

    def slow_stream(self, header, chunks):
        loop.call_soon_threadsafe(started.set)
        asyncio.run_coroutine_threadsafe(release.wait(), loop).result(10)
        return real(self, header, chunks)

    monkeypatch.setattr(wal.DataDir, "write_snapshot_stream", slow_stream)
    snap = asyncio.ensure_future(core.snapshot())
    await asyncio.wait_for(started.wait(), 10)
    captured_rev = 201
    for i in range(50):  # commits go on (and are durable) while the snapshot thread is busy
        await asyncio.wait_for(_put(core, b"/b/%d" % i, b"y"), 5)
    core.compact(rpc_pb2.CompactionRequest(revision=210))
    release.set()
    await asyncio.wait_for(snap, 10)
    await core.flush()
    want = _state(core)
    core.datadir.unlock()
    again = Core(data_dir=d)
    again.recover()
    assert again.store.rev == captured_rev + 50
    assert _state(again) == want
    again.datadir.close()
    core.datadir.close()


def test_capture_serialises_the_store_as_of_its_revision():
    core = Core()
    for i in range(30):
        core.put(rpc_pb2.PutRequest(key=b"/c/%d" % (i % 7), value=b"%d" % i))
    want = rpc_pb2.RangeResponse(kvs=list(core.store.all_versions())).SerializeToString()
    cap = wal.SnapshotCapture(core.store)
    for i in range(10):  # later writes, new keys included, are not part of it
        core.put(rpc_pb2.PutRequest(key=b"/c/%d" % i, value=b"later"))
    assert b"".join(cap.chunks(batch=3)) == want


@pytest.mark.realetcd
@pytest.mark.skipif(not os.path.exists("/usr/bin/etcd") or not os.path.exists("/usr/bin/etcdctl"),
                    reason="needs /usr/bin/etcd and /usr/bin/etcdctl")
async def test_etcdctl_snapshot_save_status_restore_into_real_etcd(tmp_path):
    """Maintenance.Snapshot streams a bbolt db that etcdctl reads and a real etcd restores from."""
    import aetcd

    from components.etcd.server import serve
    from tests.support.etcd import Proc, free_port

    server = await serve(["http://127.0.0.1:0"], str(tmp_path / "emb"))
    try:
        async with aetcd.Client("127.0.0.1", server.port) as c:
            for i in range(120):
                await c.put(b"/s/%d" % (i % 40), b"v%d" % i)
            await c.delete(b"/s/3")
            lease = await c.lease(600)
            await c.put(b"/leased", b"x", lease=lease)
            await c.compact(50)
            want = {kv.key: (kv.value, kv.create_revision, kv.mod_revision, kv.version)
                    for kv in await c.get_prefix(b"/")}
        rev = server.core.store.rev
        db = str(tmp_path / "snap.db")
        r = await _etcdctl("--endpoints", server.endpoint, "snapshot", "save", db)
        assert r[0] == 0, r
    finally:
        await server.stop()
    code, out, err = await _etcdctl("-w", "json", "snapshot", "status", db)
    assert code == 0, err
    status = json.loads(out)
    assert status["revision"] == rev and status["totalKey"] > 40
    peer, port = free_port(), free_port()
    restored = str(tmp_path / "restored")
    code, _, err = await _etcdctl("snapshot", "restore", db, "--data-dir", restored, "--name", "default",
                                  "--initial-cluster", f"default=http://127.0.0.1:{peer}",
                                  "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}")
    assert code == 0, err
    url = f"http://127.0.0.1:{port}"
    proc = await asyncio.create_subprocess_exec(
        "/usr/bin/etcd", "--data-dir", restored, "--name", "default", "--listen-client-urls", url,
        "--advertise-client-urls", url, "--listen-peer-urls", f"http://127.0.0.1:{peer}",
        "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
        "--initial-cluster", f"default=http://127.0.0.1:{peer}",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    real = Proc(proc)
    try:
        await real.wait_ready(r"ready to serve client requests|serving insecure client requests")
        async with aetcd.Client("127.0.0.1", port) as c:
            got = {kv.key: (kv.value, kv.create_revision, kv.mod_revision, kv.version)
                   for kv in await c.get_prefix(b"/")}
            assert got == want
            assert (await c.get_lease_info(lease.id)).grantedTTL == 600
            assert (await c.put(b"/after", b"y")).header.revision == rev + 1
    finally:
        await real.stop()


async def _etcdctl(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        "/usr/bin/etcdctl", *args, env=dict(os.environ, ETCDCTL_API="3"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    return proc.returncode, out.decode(), err.decode()
