"""Durability of the embedded etcd: acknowledged writes survive kill -9; bad data dirs fail clearly."""

import asyncio
import json
import os
import subprocess
import sys

import aetcd
import pytest

from .test_etcd_support import start_embedded

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
            from controlplane.etcd import wal
            from aetcd.rpc import rpc_pb2
            rec = wal.encode(wal.REC_GRANT, rpc_pb2.LeaseGrantRequest(ID=1, TTL=5))
            bad = bytearray(rec)
            bad[-1] ^= 0xFF
            (d / "wal-0000000000000001.log").write_bytes(wal.WAL_MAGIC + bytes(bad) + rec)
    r = run_cli("--data-dir", str(d))
    assert r.returncode == 1
    err_lines = [l for l in r.stderr.splitlines() if l.startswith("error:")]
    assert len(err_lines) == 1 and message in err_lines[0], r.stderr
    assert "Traceback" not in r.stderr


def test_torn_wal_tail_is_cut_not_fatal(tmp_path):
    from controlplane.etcd import wal
    from aetcd.rpc import rpc_pb2
    d = tmp_path / "d"
    d.mkdir()
    (d / "meta.json").write_text(json.dumps({"format": "controlplane-etcd", "version": 1}))
    rec = wal.encode(wal.REC_GRANT, rpc_pb2.LeaseGrantRequest(ID=1, TTL=5))
    (d / "wal-0000000000000001.log").write_bytes(wal.WAL_MAGIC + rec + rec[:5])
    dd = wal.DataDir(str(d))
    dd.open("default", 1, 1)
    assert [t for t, _ in dd.records()] == [wal.REC_GRANT]
    dd.close()
    assert (d / "wal-0000000000000001.log").stat().st_size == len(wal.WAL_MAGIC) + len(rec)


def test_bad_flag_values_are_clear_errors():
    r = run_cli("--auto-compaction-mode", "periodic", "--auto-compaction-retention", "soon")
    assert r.returncode == 1 and "invalid --auto-compaction-retention" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("--no-such-flag")
    assert r.returncode == 2 and "No such option" in r.stderr
