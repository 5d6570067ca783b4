"""Durability of the embedded etcd: acknowledged writes survive kill -9; bad data dirs fail clearly."""

import asyncio
import json
import os
import subprocess
import sys

import aetcd
import pytest

from tests.support.etcd import start_embedded

pytestmark = pytest.mark.integration


async def test_acked_writes_survive_kill_9(tmp_path):
    data = str(tmp_path / "data")
    # small snapshot count so the crash also exercises snapshot + WAL rotation
    os.environ["CONTROLPLANE_ETCD_SNAPSHOT_COUNT"] = "300"
    try:
        p = await start_embedded("--data-dir", data)
    finally:
        del os.environ["CONTROLPLANE_ETCD_SNAPSHOT_COUNT"]
    host, port = p.endpoint.split(":")
    acked: dict[bytes, tuple[bytes, int]] = {}
    enough = asyncio.Event()
    async with aetcd.Client(host, int(port)) as c:
        lease = await c.lease(3600)

        async def writer(n):
            i = 0
            while True:
                key = b"/k/%d/%d" % (n, i % 20)
                value = b"%d" % i
                r = await c.put(key, value, lease=lease if i % 7 == 0 else None)
                acked[key] = (value, r.header.revision)
                i += 1
                if len(acked) >= 300 and i > 40:
                    enough.set()

        tasks = [asyncio.create_task(writer(n)) for n in range(32)]
        await asyncio.wait_for(enough.wait(), 30)
        await p.stop(sig_kill=True)  # writes still in flight
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    max_rev = max(rev for _, rev in acked.values())

    p = await start_embedded("--data-dir", data)
    host, port = p.endpoint.split(":")
    try:
        async with aetcd.Client(host, int(port)) as c:
            got = {kv.key: kv for kv in await c.get_prefix(b"/k/")}
            for key, (value, rev) in acked.items():
                assert key in got, key
                assert got[key].mod_revision >= rev  # this write or a later one
            st = await c.status()
            assert st.raft_index >= 0
            r = await c.put(b"/after", b"x")
            assert r.header.revision > max_rev
            assert (await c.get_lease_info(lease.id)).grantedTTL == 3600  # leases survive too
    finally:
        assert await p.stop() == 0


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "controlplane", "etcd",
                           "--listen-client-urls", "http://127.0.0.1:0", *args],
                          capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("setup, message", [
    ("foreign", "not a controlplane etcd data dir"),
    ("real", "holds a real etcd's data"),
    ("newer", "newer than this server's"),
    ("corrupt_wal", "corrupt WAL"),
])
def test_bad_data_dir_is_a_one_line_error(tmp_path, setup, message):
    d = tmp_path / "d"
    d.mkdir()
    if setup == "foreign":
        (d / "something.txt").write_text("hello")
    elif setup == "real":
        (d / "member").mkdir()
    else:
        (d / "meta.json").write_text(json.dumps({"format": "controlplane-etcd", "version": 1 if setup != "newer" else 9}))
        if setup == "corrupt_wal":
            from aetcd.rpc import rpc_pb2

            from components.etcd import wal
            rec = wal.encode(wal.REC_GRANT, rpc_pb2.LeaseGrantRequest(ID=1, TTL=5))
            bad = bytearray(rec)
            bad[-1] ^= 0xFF
            (d / "wal-0000000000000001.log").write_bytes(wal.WAL_MAGIC + bytes(bad) + rec)
    r = run_cli("--data-dir", str(d))
    assert r.returncode == 1
    err_lines = [l for l in r.stderr.splitlines() if l.startswith("error:")]
    assert len(err_lines) == 1 and message in err_lines[0], r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("tail", ["short", "zero_padded_torn", "stray_after_zeros"])
def test_torn_wal_tail_is_cut_not_fatal(tmp_path, tail):
    from aetcd.rpc import rpc_pb2

    from components.etcd import wal
    d = tmp_path / "d"
    d.mkdir()
    (d / "meta.json").write_text(json.dumps({"format": "controlplane-etcd", "version": 1}))
    rec = wal.encode(wal.REC_GRANT, rpc_pb2.LeaseGrantRequest(ID=1, TTL=5))
    rec2 = wal.encode(wal.REC_GRANT, rpc_pb2.LeaseGrantRequest(ID=2, TTL=5))
    torn = {"short": rec2[:5],
            "zero_padded_torn": rec2[:-3] + b"\0" * 100,  # part of the write landed, zeros after
            "stray_after_zeros": b"\0" * 512 + rec2}[tail]  # a later sector landed, an earlier not
    good = wal.WAL_MAGIC + rec
    (d / "wal-0000000000000001.log").write_bytes(good + torn)
    dd = wal.DataDir(str(d))
    dd.open("default", 1, 1)
    assert [(t, m.ID) for t, m in dd.records()] == [(wal.REC_GRANT, 1)]
    dd.write_sync(rec2)  # appends right after the last good record
    dd.close()
    data = (d / "wal-0000000000000001.log").read_bytes()
    assert data.startswith(good + rec2) and not data[len(good + rec2):].strip(b"\0")
    dd = wal.DataDir(str(d))
    dd.open("default", 1, 1)
    assert [m.ID for _, m in dd.records()] == [1, 2]
    dd.close()


def test_wal_is_preallocated_and_continues_in_the_next_segment(tmp_path, monkeypatch):
    from aetcd.rpc import rpc_pb2

    from components.etcd import wal
    monkeypatch.setattr(wal, "SEGMENT_BYTES", 4096)
    dd = wal.DataDir(str(tmp_path / "d"))
    dd.open("default", 1, 1)
    assert os.path.getsize(dd._wal_path(1)) == 4096
    recs = [wal.encode(wal.REC_GRANT, rpc_pb2.LeaseGrantRequest(ID=i, TTL=5 + i)) for i in range(1, 400)]
    for i in range(0, len(recs), 50):
        dd.write_sync(b"".join(recs[i:i + 50]))
    dd.close()
    assert dd.gen > 1  # segments were cut
    dd = wal.DataDir(str(tmp_path / "d"))
    dd.open("default", 1, 1)
    assert [m.ID for _, m in dd.records()] == list(range(1, 400))
    dd.close()


def test_encode_revision_matches_protobuf_encoding():
    from aetcd.rpc import kv_pb2, rpc_pb2

    from components.etcd import wal
    kvs = [kv_pb2.KeyValue(key=b"/k%d" % i, value=b"v" * (i * 70), create_revision=2, mod_revision=300 + i,
                           version=i + 1, lease=7) for i in range(4)] + [kv_pb2.KeyValue(key=b"/gone", mod_revision=301)]
    for rev in (2, 127, 128, 300, 2 ** 40):
        want = wal.encode(wal.REC_REVISION, rpc_pb2.RangeResponse(header=rpc_pb2.ResponseHeader(revision=rev), kvs=kvs))
        assert wal.encode_revision(rev, kvs) == want


def test_bad_flag_values_are_clear_errors():
    r = run_cli("--auto-compaction-mode", "periodic", "--auto-compaction-retention", "soon")
    assert r.returncode == 1 and "invalid --auto-compaction-retention" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("--no-such-flag")
    assert r.returncode == 2 and "No such option" in r.stderr


async def test_raft_index_never_goes_back_and_term_grows_on_restart(tmp_path):
    """Maintenance.Status after restarts (what ``etcdctl endpoint status`` shows): the raft index
    never decreases — with and without a snapshot in between, even though writes outnumber
    revisions (lease grants) — and each start is a new term (etcd elects itself again on restart)."""
    from components.etcd.server import serve

    d = str(tmp_path / "d")

    async def status(server):
        return server.core.applied_index, server.core.raft_term

    server = await serve(["http://127.0.0.1:0"], d)
    async with aetcd.Client("127.0.0.1", server.port) as c:
        for i in range(20):
            await c.put(b"k%d" % i, b"v")
        await c.lease(60)
        await c.lease(60)
    before = await status(server)
    assert before[0] >= 23 and before[1] == 2
    await server.stop()  # writes a snapshot
    server = await serve(["http://127.0.0.1:0"], d)
    after = await status(server)
    assert after[0] >= before[0] and after[1] == 3
    async with aetcd.Client("127.0.0.1", server.port) as c:
        await c.put(b"more", b"v")
        await c.lease(60)
        s = await c.status()
        assert s.raft_index >= after[0] + 2 and s.raft_term == 3
    idx = server.core.applied_index
    server.core.datadir.close()  # no snapshot: the next start replays the WAL (as after kill -9)
    for t in server._tasks:
        t.cancel()
    await server.grpc.stop(0)
    server = await serve(["http://127.0.0.1:0"], d)
    assert server.core.applied_index >= idx and server.core.raft_term == 4
    await server.stop()
