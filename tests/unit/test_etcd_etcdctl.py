"""The real etcdctl (ETCDCTL_API=3) against the embedded etcd, as a subprocess."""

import asyncio
import json
import os
import shutil

import pytest

from components.etcd.server import serve

pytestmark = pytest.mark.skipif(shutil.which("etcdctl") is None, reason="etcdctl not installed")


@pytest.fixture
async def ctl():
    server = await serve(["http://127.0.0.1:0"], None)

    async def run(*args, stdin: str | None = None, timeout: float = 10.0, check=True):
        proc = await asyncio.create_subprocess_exec(
            "etcdctl", f"--endpoints={server.endpoint}", *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "ETCDCTL_API": "3"})
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else None), timeout)
        except asyncio.TimeoutError:
            proc.kill()
            out, err = await proc.communicate()
        if check and proc.returncode not in (0, -9):
            raise AssertionError(f"etcdctl {args} failed: {err.decode()}")
        return proc.returncode, out.decode(), err.decode()

    run.server = server
    yield run
    await server.stop()


async def test_put_get_prefix_rev_limit_keys_only_json(ctl):
    assert (await ctl("put", "/a/1", "one"))[1] == "OK\n"
    await ctl("put", "/a/2", "two")
    await ctl("put", "/a/1", "uno")
    _, out, _ = await ctl("get", "--prefix", "/a/")
    assert out == "/a/1\nuno\n/a/2\ntwo\n"
    _, out, _ = await ctl("get", "/a/1", "--rev=2")
    assert out == "/a/1\none\n"
    _, out, _ = await ctl("get", "--prefix", "/a/", "--limit=1", "-w", "json")
    doc = json.loads(out)
    assert doc["count"] == 2 and doc["more"] is True and len(doc["kvs"]) == 1
    assert doc["header"]["revision"] == 4
    _, out, _ = await ctl("get", "--prefix", "/a/", "--keys-only")
    assert out.split() == ["/a/1", "/a/2"]
    _, out, _ = await ctl("del", "--prefix", "/a/")
    assert out == "2\n"


async def test_txn_from_stdin(ctl):
    await ctl("put", "k", "v1")
    script = 'value("k") = "v1"\n\nput k v2\nput other x\n\nput k failed\n\n'
    _, out, _ = await ctl("txn", stdin=script)
    assert out.splitlines() == ["SUCCESS", "", "OK", "", "OK"]
    _, out, _ = await ctl("get", "k", "--print-value-only")
    assert out == "v2\n"


async def test_watch_prefix_prev_kv_rev(ctl):
    await ctl("put", "/w/a", "1")
    await ctl("put", "/w/a", "2")
    await ctl("del", "/w/a")
    # watch from revision 2 replays history; etcdctl keeps watching: read 12 lines, then stop it
    proc = await asyncio.create_subprocess_exec(
        "etcdctl", f"--endpoints={ctl.server.endpoint}", "watch", "--prefix", "/w/", "--prev-kv", "--rev=2",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, env={**os.environ, "ETCDCTL_API": "3"})
    lines = []
    try:
        while len(lines) < 12:
            line = await asyncio.wait_for(proc.stdout.readline(), 10)
            if not line:
                break
            lines.append(line.decode().rstrip("\n"))
    finally:
        proc.kill()
        await proc.wait()
    assert lines == ["PUT", "/w/a", "1", "PUT", "/w/a", "1", "/w/a", "2",
                                "DELETE", "/w/a", "2", "/w/a"]


async def test_lease_lifecycle(ctl):
    _, out, _ = await ctl("lease", "grant", "100")
    lease_id = out.split()[1]
    assert out.strip().endswith("granted with TTL(100s)")
    await ctl("put", "lk", "v", f"--lease={lease_id}")
    _, out, _ = await ctl("lease", "keep-alive", "--once", lease_id)
    assert out.strip() == f"lease {lease_id} keepalived with TTL(100)"
    _, out, _ = await ctl("lease", "timetolive", lease_id, "--keys")
    assert f"lease {lease_id} granted with TTL(100s), remaining(" in out and "attached keys([lk])" in out
    _, out, _ = await ctl("lease", "revoke", lease_id)
    assert out.strip() == f"lease {lease_id} revoked"
    _, out, _ = await ctl("get", "lk")
    assert out == ""
    _, out, _ = await ctl("lease", "timetolive", lease_id)
    assert "already expired" in out


async def test_compaction_status_member_list(ctl):
    for v in "abc":
        await ctl("put", "c", v)
    _, out, _ = await ctl("compaction", "3")
    assert out.strip() == "compacted revision 3"
    rc, _, err = await ctl("get", "c", "--rev=2", check=False)
    assert rc != 0 and "required revision has been compacted" in err
    _, out, _ = await ctl("endpoint", "status", "-w", "json")
    status = json.loads(out)[0]["Status"]
    assert status["header"]["revision"] == 4 and status["leader"] == status["header"]["member_id"]
    _, out, _ = await ctl("member", "list", "-w", "json")
    members = json.loads(out)["members"]
    assert len(members) == 1 and members[0]["clientURLs"] == [f"http://{ctl.server.endpoint}"]
    _, out, err = await ctl("endpoint", "health")
    assert "is healthy" in out + err


async def test_quota_nospace_alarm_list_and_disarm(ctl):
    core = ctl.server.core
    core.quota_backend_bytes = 2000
    await ctl("put", "/small", "x")
    rc, _, err = await ctl("put", "/big", "x" * 3000, check=False)
    assert rc != 0 and "etcdserver: mvcc: database space exceeded" in err
    _, out, _ = await ctl("alarm", "list")
    assert out == f"memberID:{core.member_id} alarm:NOSPACE \n"  # as etcdctl prints a real etcd's
    rc, _, err = await ctl("put", "/tiny", "x", check=False)
    assert rc != 0 and "database space exceeded" in err  # held off by the alarm, however small
    assert (await ctl("del", "/small"))[1] == "1\n"  # deletes still work, to make room
    _, out, _ = await ctl("alarm", "disarm")
    assert out == f"memberID:{core.member_id} alarm:NOSPACE \n"
    assert (await ctl("alarm", "list"))[1] == ""
    assert (await ctl("put", "/tiny", "x"))[1] == "OK\n"
