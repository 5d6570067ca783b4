"""Run python-etcd3 0.12.0's own test suite (82 tests) against a server, as a conformance harness.

    python -m tests.etcd3_client.run_suite [--real] [--embedded] [-k EXPR]

Starts the embedded etcd (with a data dir) and/or the real /usr/bin/etcd on free ports, runs
``tests/test_etcd3.py`` from the etcd3 sdist with the separate venv's interpreter
(``PYTHON_ETCD_HTTP_URL``, ``TEST_ETCD_VERSION=v3.4.23``, etcdctl on PATH) and prints the
pass/fail counts and the failing test ids per server. The suite deletes every key under ``/``
of the server it runs against; ``suite_plugin`` keeps it off localhost:2379.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from tests.etcd3_client import venv  # noqa: E402
from tests.support.etcd import start_embedded, start_real  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


async def run_suite(endpoint: str, extra: list[str] = (), timeout: float = 900) -> dict:
    """Run the suite against ``endpoint`` (host:port); returns {"passed": n, "failed": n,
    "skipped": n, "failures": [test ids], "output": tail}."""
    exe, src = venv.python(), venv.sdist_tests()
    env = dict(os.environ, **venv.ENV, PYTHON_ETCD_HTTP_URL=f"http://{endpoint}",
               TEST_ETCD_VERSION="v3.4.23", PYTHONPATH=HERE, ETCDCTL_API="3")
    env["PATH"] = "/usr/bin:" + env.get("PATH", "")
    proc = await asyncio.create_subprocess_exec(
        exe, "-m", "pytest", "-p", "suite_plugin", "-q", "-rfE", "-p", "no:cacheprovider", "-p", "no:warnings",
        "-o", "addopts=", "tests/test_etcd3.py", *extra,
        cwd=src, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    text = out.decode(errors="replace")
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped|error|errors)", text.splitlines()[-1] if text else "")}
    failures = re.findall(r"^(?:FAILED|ERROR) (\S+)", text, re.M)
    return {"passed": counts.get("passed", 0), "failed": counts.get("failed", 0) + counts.get("errors", 0)
            + counts.get("error", 0), "skipped": counts.get("skipped", 0), "failures": failures,
            "output": "\n".join(text.splitlines()[-40:])}


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--real", action="store_true", help="run against /usr/bin/etcd")
    ap.add_argument("--embedded", action="store_true", help="run against the embedded etcd (default)")
    ap.add_argument("-k", default=None, help="pytest -k expression")
    args = ap.parse_args()
    targets = (["embedded"] if args.embedded or not args.real else []) + (["real etcd"] if args.real else [])
    extra = ["-k", args.k] if args.k else []
    with tempfile.TemporaryDirectory() as tmp:
        for name in targets:
            p = await (start_real(os.path.join(tmp, "real")) if name == "real etcd"
                       else start_embedded("--data-dir", os.path.join(tmp, "emb")))
            try:
                r = await run_suite(p.endpoint, extra)
            finally:
                await p.stop()
            print(f"{name}: {r['passed']} passed, {r['failed']} failed, {r['skipped']} skipped")
            for f in r["failures"]:
                print(f"  failed: {f}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except venv.VenvError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
