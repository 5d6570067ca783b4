"""Benchmark of apiserver scale-out: pod creates/s with 1 and with N apiservers on one etcd
(figures printed, never a test; issue 14 item 6, target >= 1.6x with 2 apiservers on 4 cores).

For each count in ``--apiservers`` (default ``1,2``), in one run: a fresh etcd (ours, or
``--etcd real``: Debian's ``/usr/bin/etcd``), that many ``controlplane apiserver`` processes on
one port with ``--permit-port-sharing`` (SO_REUSEPORT: the kernel spreads the load
generator's connections over them), then ``--pods`` pod creates from ``--clients`` concurrent
kept-alive connections, opened by ``--load-procs`` load-generator processes (one Python
process would be the bottleneck before two apiservers are). Prints creates/s, create p50/p99,
each apiserver's CPU seconds (how evenly the kernel spread the connections) and etcd's, then
the ratio to the single apiserver's rate, with the machine's core count and load: on fewer
cores than apiservers + etcd + load generators the ratio says how much CPU the processes got,
not how far the apiserver scales. ``--cpus LIST`` pins each apiserver to one of the listed
CPUs (``taskset``-style, ``os.sched_setaffinity``) and the rest elsewhere, to simulate cores.

Plain HTTP on loopback (``--insecure-http``): the cost measured is the apiserver's, not TLS.

    python bench/scaleout.py [--apiservers 1,2] [--pods 4000] [--clients 64] [--load-procs 2] [--etcd real]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench.apiserver import create_objects  # noqa: E402
from bench.common import cpu_seconds, start_service, stop_services  # noqa: E402
from controlplane.lifeline import child_kwargs  # noqa: E402
from tests.support.etcd import free_port  # noqa: E402

REAL_ETCD = "/usr/bin/etcd"


def pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "bench"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27",
                                     "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}


def load(args: tuple[str, list[str], int]) -> tuple[list[float], int]:
    """One load-generator process: create ``names`` through ``clients`` connections to
    ``base``; (latencies in s, errors)."""
    base, names, clients = args
    import aiohttp

    async def run() -> tuple[list[float], int]:
        conn = aiohttp.TCPConnector(limit=clients, force_close=False)
        async with aiohttp.ClientSession(connector=conn) as s:
            lat, _, errors = await create_objects(s, f"{base}/api/v1/namespaces/default/pods", names, pod, clients)
        return lat, errors
    return asyncio.run(run())


def pct(values: list[float], p: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))] if v else float("nan")


def pin(pid: int, cpus: set[int] | None) -> None:
    if cpus:
        try:
            os.sched_setaffinity(pid, cpus)
        except OSError:
            pass


def start_etcd(kind: str, tmp: str) -> tuple[subprocess.Popen, str]:
    if kind == "embedded":
        return start_service(["etcd", "--listen-client-urls", "http://127.0.0.1:0", "--data-dir",
                              os.path.join(tmp, "etcd")], os.path.join(tmp, "etcd.log"),
                             r"event=etcd\.ready listen=(\S+)", timeout=120)
    port, peer = free_port(), free_port()
    url, peer_url = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{peer}"
    log = open(os.path.join(tmp, "etcd.log"), "wb")
    p = subprocess.Popen([REAL_ETCD, "--name", "b", "--data-dir", os.path.join(tmp, "etcd"),
                          "--listen-client-urls", url, "--advertise-client-urls", url,
                          "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                          "--initial-cluster", f"b={peer_url}"], stdout=log, stderr=subprocess.STDOUT,
                         **child_kwargs())
    deadline = time.monotonic() + 30
    while b"ready to serve client requests" not in open(os.path.join(tmp, "etcd.log"), "rb").read():
        if time.monotonic() > deadline or p.poll() is not None:
            raise SystemExit(f"real etcd did not start: see {tmp}/etcd.log")
        time.sleep(0.1)  # benchmark setup: polling the log for the ready line
    return p, url


def run_one(n: int, args: argparse.Namespace, pool: multiprocessing.pool.Pool) -> dict:
    tmp = tempfile.mkdtemp(prefix=f"bench-scaleout-{n}-")
    procs: list[subprocess.Popen] = []
    try:
        etcd, etcd_url = start_etcd(args.etcd, tmp)
        procs.append(etcd)
        port = free_port()
        apis = []
        for i in range(n):
            p, url = start_service(["apiserver", "--etcd-servers", etcd_url, "--port", str(port),
                                    "--insecure-http", "--permit-port-sharing", "--compaction-interval", "0"],
                                   os.path.join(tmp, f"apiserver-{i}.log"), r"event=apiserver\.ready url=(\S+)",
                                   timeout=300)
            procs.append(p)
            apis.append(p)
            pin(p.pid, {args.cpus[i % len(args.cpus)]} if args.cpus else None)
        if args.cpus:
            rest = set(range(os.cpu_count() or 1)) - set(args.cpus) or None
            pin(etcd.pid, rest)
        base = f"http://127.0.0.1:{port}"
        names = [f"p{n}-{i}" for i in range(args.pods)]
        warm = [f"w{n}-{i}" for i in range(200)]
        k = args.load_procs
        pool.map(load, [(base, warm[j::k], max(1, args.clients // k)) for j in range(k)])
        cpu0 = [cpu_seconds(p.pid) for p in procs]
        t0 = time.perf_counter()
        results = pool.map(load, [(base, names[j::k], max(1, args.clients // k)) for j in range(k)])
        wall = time.perf_counter() - t0
        cpu = [cpu_seconds(p.pid) - c for p, c in zip(procs, cpu0)]
        lat = [x for r in results for x in r[0]]
        errors = sum(r[1] for r in results)
        return {"apiservers": n, "pods": args.pods, "creates_per_second": round(args.pods / wall, 1),
                "p50_ms": round(pct(lat, 50) * 1000, 1), "p99_ms": round(pct(lat, 99) * 1000, 1),
                "errors": errors, "etcd_cpu_s": round(cpu[0], 2),
                "apiserver_cpu_s": [round(c, 2) for c in cpu[1:]]}
    finally:
        stop_services(procs)
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apiservers", default="1,2", help="comma list of apiserver counts, run in turn")
    ap.add_argument("--pods", type=int, default=4000)
    ap.add_argument("--clients", type=int, default=64, help="concurrent connections in all")
    ap.add_argument("--load-procs", type=int, default=2, help="load-generator processes")
    ap.add_argument("--etcd", choices=["embedded", "real"], default="embedded")
    ap.add_argument("--cpus", default="", help="comma list of CPUs to pin the apiservers to (one each, in turn)")
    ap.add_argument("--json", default="", help="also write the results here")
    args = ap.parse_args()
    args.cpus = [int(c) for c in args.cpus.split(",") if c.strip()]
    if args.etcd == "real" and not os.path.exists(REAL_ETCD):
        raise SystemExit(f"--etcd real: {REAL_ETCD} not found (apt-get install etcd-server)")
    counts = [int(c) for c in args.apiservers.split(",") if c.strip()]
    print(f"machine: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{args.pods} pod creates, {args.clients} connections from {args.load_procs} processes, "
          f"{args.etcd} etcd", flush=True)
    rows = []
    with multiprocessing.get_context("spawn").Pool(args.load_procs) as pool:
        for n in counts:
            r = run_one(n, args, pool)
            rows.append(r)
            print(f"  {n} apiserver(s): {r['creates_per_second']:>7} creates/s  p50 {r['p50_ms']} ms  "
                  f"p99 {r['p99_ms']} ms  errors {r['errors']}  CPU s: apiservers {r['apiserver_cpu_s']} "
                  f"etcd {r['etcd_cpu_s']}", flush=True)
    base = next((r["creates_per_second"] for r in rows if r["apiservers"] == 1), None)
    if base:
        for r in rows:
            r["ratio_to_one"] = round(r["creates_per_second"] / base, 2)
        print("  ratio to 1 apiserver: " + ", ".join(f"{r['apiservers']}: {r['ratio_to_one']}x" for r in rows))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
