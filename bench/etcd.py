"""Benchmark: aetcd puts/s against the embedded etcd and a real etcd, side by side.

    python bench/etcd.py [--seconds 3] [--concurrency 64] [--data-dir]   (prints a table; not a test)

Each server runs in its own process on free ports; with ``--data-dir`` both fsync to a temp dir
(real etcd always does). Reference on this 2-core machine: aetcd 64 tasks -> etcd 3.4 ~7,000 puts/s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import aetcd  # noqa: E402

from tests.unit.test_etcd_support import start_embedded, start_real  # noqa: E402


async def puts_per_second(endpoint: str, tasks: int, seconds: float) -> float:
    host, port = endpoint.split(":")
    async with aetcd.Client(host, int(port)) as c:
        await c.put(b"/bench/warmup", b"x")
        count = 0
        deadline = time.monotonic() + seconds

        async def worker(n: int) -> None:
            nonlocal count
            i = 0
            value = b"v" * 256
            while time.monotonic() < deadline:
                await c.put(b"/bench/%d/%d" % (n, i % 100), value)
                i += 1
                count += 1

        t0 = time.monotonic()
        await asyncio.gather(*(worker(n) for n in range(tasks)))
        return count / (time.monotonic() - t0)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--data-dir", action="store_true", help="embedded server with a data dir (fsync)")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        emb_args = ["--data-dir", os.path.join(tmp, "emb")] if args.data_dir else []
        servers = [("embedded" + (" (data dir)" if args.data_dir else " (memory)"), lambda: start_embedded(*emb_args))]
        if shutil.which("etcd") or os.path.exists("/usr/bin/etcd"):
            servers.append(("real etcd", lambda: start_real(os.path.join(tmp, "real"))))
        for name, start in servers:
            p = await start()
            try:
                seq = await puts_per_second(p.endpoint, 1, args.seconds)
                conc = await puts_per_second(p.endpoint, args.concurrency, args.seconds)
            finally:
                await p.stop()
            rows.append((name, seq, conc))
    print(f"{'server':<24}{'sequential puts/s':>20}{f'{args.concurrency} tasks puts/s':>20}")
    for name, seq, conc in rows:
        print(f"{name:<24}{seq:>20,.0f}{conc:>20,.0f}")
    if len(rows) > 1:
        print(f"embedded / real (concurrent): {rows[0][2] / rows[-1][2]:.0%}")


if __name__ == "__main__":
    asyncio.run(main())
