"""python-etcd3 (``etcd3`` 0.12.0, the library users asked for) against the embedded etcd.

The client runs in a SEPARATE interpreter (a venv built by ``tests/etcd3_client/venv.py``):
python-etcd3 and aetcd cannot share a process. Skipped, with the reason, only when that venv
cannot be built (no package index). ``CP_ETCD3_SUITE=1`` also runs python-etcd3's own test
suite (82 tests, a few minutes) against the embedded server and, when installed, a real etcd.
"""

import asyncio
import os
import sys

import pytest

from components.etcd.server import serve
from tests.etcd3_client import run_suite, venv
from tests.support.etcd import start_real

pytestmark = pytest.mark.etcd3client

SCENARIO = os.path.join(os.path.dirname(venv.__file__), "scenario.py")


@pytest.fixture(scope="module")
def etcd3_python():
    try:
        return venv.python()
    except venv.VenvError as e:
        pytest.skip(f"python-etcd3 venv unavailable: {e}")


async def _scenario(exe: str, endpoint: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        exe, SCENARIO, endpoint, env=dict(os.environ, **venv.ENV),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    return proc.returncode, out.decode() + err.decode()[-3000:]


async def test_python_etcd3_scenario_against_embedded(etcd3_python, tmp_path):
    server = await serve(["http://127.0.0.1:0"], str(tmp_path / "data"))
    try:
        rc, out = await _scenario(etcd3_python, server.endpoint)
    finally:
        await server.stop()
    oks = [l for l in out.splitlines() if l.startswith("ok ")]
    assert rc == 0 and len(oks) >= 14, out
    for name in ("put_get", "get_prefix_and_range", "delete", "transactions", "watch_iterator",
                 "watch_prefix_from_revision", "watch_callback_and_cancel", "leases", "locks"):
        assert f"ok {name}" in oks, out


@pytest.mark.skipif(os.environ.get("CP_ETCD3_SUITE") != "1",
                    reason="python-etcd3's own suite takes minutes: set CP_ETCD3_SUITE=1")
async def test_python_etcd3_own_suite(etcd3_python, tmp_path):
    try:
        venv.sdist_tests()
    except venv.VenvError as e:
        pytest.skip(f"etcd3 sdist unavailable: {e}")
    server = await serve(["http://127.0.0.1:0"], str(tmp_path / "emb"))
    try:
        ours = await run_suite.run_suite(server.endpoint)
    finally:
        await server.stop()
    report = f"embedded: {ours['passed']} passed, failures: {ours['failures']}"
    if os.path.exists("/usr/bin/etcd"):
        real = await start_real(str(tmp_path / "real"))
        try:
            theirs = await run_suite.run_suite(real.endpoint)
        finally:
            await real.stop()
        report += f"\nreal etcd: {theirs['passed']} passed, failures: {theirs['failures']}"
        print(report, file=sys.stderr)
        # every test real etcd passes, ours passes too
        assert set(ours["failures"]) <= set(theirs["failures"]), report
    assert ours["passed"] >= 78, report  # 82 minus 3 that need a 3-member cluster, 1 that needs auth
