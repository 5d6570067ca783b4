"""One end-to-end scale benchmark: clusters of hollow nodes, Deployments of many pods, the pod
startup SLO, CPU and memory per process, and the storage ceiling, in one run.

For each size ``NODESxPODS`` (default ``100x1000,1000x10000``) and each backend (``embedded``,
``real`` etcd from Debian's etcd-server when installed):

1. a real control plane (``LocalCluster``: etcd, apiserver, controller-manager, scheduler, one
   kubelet process running the hollow nodes) is started and its start time taken;
2. **burst**: one apps/v1 Deployment of PODS replicas; pods/s from its submission to all
   Running, and each pod's startup latency as Kubernetes' SLO defines it
   (``sig-scalability/slos/pod_startup_latency.md``: creation to Running observed through a
   watch; the creation instant is when our watch first sees the pod, because
   ``creationTimestamp`` has one-second resolution), p50 / p90 / p99;
3. **churn** (``--churn-seconds``, default 60; 0 skips): bare pods created at
   ``--churn-rate`` (20/s, the SLO's load) on top of the burst, each pod's startup latency and the
   client-side latency of its POST (mutating API p99; the API call latency SLO is 1 s);
4. each process's CPU seconds per pod (burst) and RSS growth per pod;
5. **storage ceiling**: etcd's own write rate measured through the apiserver's etcd client
   library (aetcd: concurrent puts of pod-sized values), divided by the etcd writes each pod cost
   in the burst (revision delta ÷ pods); our pods/s as a percentage of that ceiling.

Prints one table and writes every figure as JSON (``--json``, default ``bench/e2e.json``).

    python bench/e2e.py                                  # 100x1000 and 1000x10000, both backends
    python bench/e2e.py --sizes 100x1000 --churn-seconds 0 --backends embedded

Figures only; never a test. The machine's load average is printed with them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench.common import cpu_seconds, rss_bytes  # noqa: E402
from controlplane.api.resources import DEPLOYMENTS, PODS  # noqa: E402
from controlplane.cli.cluster import LocalCluster, free_port  # noqa: E402
from controlplane.client.config import load_kubeconfig  # noqa: E402
from controlplane.client.informer import Informer  # noqa: E402
from controlplane.client.rest import RestClient  # noqa: E402

ETCD_BINARY = "/usr/bin/etcd"
CONTAINER = {"name": "c", "image": "registry.k8s.io/pause:3.10",
             "resources": {"requests": {"cpu": "1m", "memory": "1Mi"}}}


def pct(values: list[float], p: float) -> float:
    """The ``p``-th percentile (nearest rank) of ``values``; nan when empty."""
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


class PodWatch:
    """First-seen, bound and Running instants of pods matching a label selector, from an
    informer (which resumes or relists if the apiserver drops a slow watcher)."""

    def __init__(self, client: RestClient, selector: str) -> None:
        self.seen: dict[str, float] = {}
        self.bound: dict[str, float] = {}
        self.running: dict[str, float] = {}
        self.want = 0
        self.done = asyncio.Event()
        self.informer = Informer(client, PODS, namespace="default", label_selector=selector)
        self.informer.add_handlers(on_add=self._on, on_update=lambda old, new: self._on(new))

    def _on(self, pod: dict[str, Any]) -> None:
        now = time.monotonic()
        name = pod["metadata"]["name"]
        self.seen.setdefault(name, now)
        if (pod.get("spec") or {}).get("nodeName"):
            self.bound.setdefault(name, now)
        if (pod.get("status") or {}).get("phase") == "Running":
            self.running.setdefault(name, now)
            if self.want and len(self.running) >= self.want:
                self.done.set()

    def startup(self) -> list[float]:
        """Per pod: first seen → Running, seconds."""
        return [self.running[n] - self.seen[n] for n in self.running if n in self.seen]

    async def __aenter__(self) -> "PodWatch":
        self.informer.start()
        await self.informer.wait_synced()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.informer.stop()


async def wait_progress(watch: PodWatch, t0: float, timeout: float, label: str) -> bool:
    """Wait until ``watch.want`` pods run, printing progress every 5 s; False on timeout."""
    last = -1
    while not watch.done.is_set():
        try:
            await asyncio.wait_for(watch.done.wait(), 5)
        except asyncio.TimeoutError:
            pass
        if len(watch.running) != last:
            last = len(watch.running)
            print(f"    {label} {time.monotonic() - t0:6.1f}s  seen {len(watch.seen)}  bound {len(watch.bound)}  "
                  f"running {len(watch.running)}/{watch.want}", flush=True)
        if time.monotonic() - t0 > timeout:
            print(f"    {label}: timed out after {timeout:.0f}s")
            return False
    return True


async def etcd_revision(url: str) -> int:
    import aetcd
    host, port = url.split("://")[-1].rsplit(":", 1)
    async with aetcd.Client(host=host, port=int(port)) as c:
        r = await c.get_prefix(b"/bench-revision-probe/", keys_only=True)   # an empty range: its header
        return int(r.header.revision)


async def etcd_write_rate(url: str, seconds: float, value_size: int, concurrency: int = 64) -> float:
    """Puts per second of ``value_size``-byte values under ``/bench-ceiling/`` with
    ``concurrency`` writers through one aetcd client, for ``seconds``; the keys are deleted after."""
    import aetcd
    host, port = url.split("://")[-1].rsplit(":", 1)
    value = b"x" * value_size
    count = 0
    async with aetcd.Client(host=host, port=int(port)) as c:
        deadline = time.monotonic() + seconds

        async def writer(i: int) -> None:
            nonlocal count
            n = 0
            while time.monotonic() < deadline:
                await c.put(f"/bench-ceiling/{i}/{n % 100}".encode(), value)
                n += 1
                count += 1
        t0 = time.monotonic()
        await asyncio.gather(*(writer(i) for i in range(concurrency)))
        elapsed = time.monotonic() - t0
        await c.delete_prefix(b"/bench-ceiling/")
    return count / elapsed if elapsed else 0.0


def start_real_etcd(data_dir: str) -> tuple[subprocess.Popen, str]:
    port, peer = free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    p = subprocess.Popen([ETCD_BINARY, "--data-dir", data_dir, "--listen-client-urls", url,
                          "--advertise-client-urls", url, "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                          "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                          "--initial-cluster", f"default=http://127.0.0.1:{peer}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p, url


async def run_one(nodes: int, pods: int, backend: str, args: argparse.Namespace) -> dict[str, Any]:
    """One size on one backend: every figure of the module docstring, as a dict."""
    data_dir = tempfile.mkdtemp(prefix=f"bench-e2e-{nodes}x{pods}-")
    etcd_proc = None
    etcd_servers = None
    if backend == "real":
        etcd_proc, etcd_servers = start_real_etcd(os.path.join(data_dir, "real-etcd"))
    out: dict[str, Any] = {"nodes": nodes, "pods": pods, "backend": backend}
    t_start = time.monotonic()
    cluster = LocalCluster(data_dir, etcd_servers=etcd_servers, apiserver_port=0, etcd_port=0, nodes=(),
                           hollow_nodes=nodes, restart=False, parallel=True,
                           kubelet_args=("--image-pull-seconds", "0", "--container-start-seconds", "0", "--no-trace"),
                           say=lambda s: None)
    client = RestClient(cluster.server, "bench")  # replaced once the cluster's kubeconfig exists
    try:
        await cluster.start()
        client = RestClient(load_kubeconfig(cluster.kubeconfig), "bench")  # the admin, over HTTPS
        out["start_seconds"] = round(time.monotonic() - t_start, 2)
        etcd_url = etcd_servers or f"http://127.0.0.1:{cluster.etcd_port}"
        print(f"  {nodes} hollow nodes on {backend} etcd: cluster usable in {out['start_seconds']}s", flush=True)

        # -- burst ------------------------------------------------------------------------
        procs = {s.name: s.proc.pid for s in cluster.services if s.proc}
        if etcd_proc is not None:
            procs["etcd (real)"] = etcd_proc.pid
        rss_before = {name: rss_bytes(pid) for name, pid in procs.items()}
        cpu_before = {name: cpu_seconds(pid) for name, pid in procs.items()}
        rev_before = await etcd_revision(etcd_url)
        async with PodWatch(client, "bench=burst") as watch:
            watch.want = pods
            dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "burst", "namespace": "default"},
                   "spec": {"replicas": pods, "selector": {"matchLabels": {"bench": "burst"}},
                            "template": {"metadata": {"labels": {"bench": "burst"}}, "spec": {"containers": [CONTAINER]}}}}
            t0 = time.monotonic()
            await client.create(DEPLOYMENTS, dep, "default")
            completed = await wait_progress(watch, t0, args.timeout, "burst")
            total = (max(watch.running.values()) - t0) if watch.running else float("nan")
            startup = watch.startup()
            created_all = max(watch.seen.values()) - t0 if watch.seen else float("nan")
            bound_all = max(watch.bound.values()) - t0 if watch.bound else float("nan")
        rev_after = await etcd_revision(etcd_url)
        ran = max(len(watch.running), 1)
        cpu = {name: round((cpu_seconds(pid) - cpu_before[name]) / ran * 1000, 2) for name, pid in procs.items()}
        rss = {name: round((rss_bytes(pid) - rss_before[name]) / ran) for name, pid in procs.items()}
        out["burst"] = {
            "completed": completed, "running": len(watch.running), "seconds": round(total, 2),
            "pods_per_second": round(len(watch.running) / total, 1) if total == total and total else 0.0,
            "all_created_seconds": round(created_all, 2), "all_bound_seconds": round(bound_all, 2),
            "startup_p50": round(pct(startup, 50), 3), "startup_p90": round(pct(startup, 90), 3),
            "startup_p99": round(pct(startup, 99), 3),
            "etcd_writes_per_pod": round((rev_after - rev_before) / max(len(watch.running), 1), 2),
            "cpu_ms_per_pod": cpu, "rss_bytes_per_pod": rss,
            "rss_total_bytes": {name: rss_bytes(pid) for name, pid in procs.items()},
        }

        # -- churn ------------------------------------------------------------------------
        if args.churn_seconds > 0:
            n = int(args.churn_seconds * args.churn_rate)
            post_latency: list[float] = []
            async with PodWatch(client, "bench=churn") as watch:
                watch.want = n
                t0 = time.monotonic()

                async def create(i: int) -> None:
                    pod = {"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": f"churn-{i}", "namespace": "default", "labels": {"bench": "churn"}},
                           "spec": {"containers": [CONTAINER]}}
                    t = time.monotonic()
                    await client.create(PODS, pod, "default")
                    post_latency.append(time.monotonic() - t)
                tasks = []
                for i in range(n):
                    # paced: pod i is sent at t0 + i / rate (the SLO's steady load)
                    await asyncio.sleep(max(0.0, t0 + i / args.churn_rate - time.monotonic()))
                    tasks.append(asyncio.ensure_future(create(i)))
                await asyncio.gather(*tasks)
                completed = await wait_progress(watch, t0, args.churn_seconds + args.timeout, "churn")
                startup = watch.startup()
            out["churn"] = {"completed": completed, "pods": n, "rate": args.churn_rate,
                            "startup_p50": round(pct(startup, 50), 3), "startup_p90": round(pct(startup, 90), 3),
                            "startup_p99": round(pct(startup, 99), 3),
                            "post_p50_ms": round(pct(post_latency, 50) * 1000, 1),
                            "post_p99_ms": round(pct(post_latency, 99) * 1000, 1)}

        # -- storage ceiling ---------------------------------------------------------------
        # one page of one pod (client.list would follow the continue token through every pod)
        pod = await client.request("GET", PODS.path("default"), params={"limit": 1})
        size = len(json.dumps((pod.get("items") or [{}])[0]))
        rate = await etcd_write_rate(etcd_url, args.ceiling_seconds, size)
        per_pod = out["burst"]["etcd_writes_per_pod"] or 1
        ceiling = rate / per_pod
        out["ceiling"] = {"etcd_puts_per_second": round(rate), "value_bytes": size,
                          "pods_per_second": round(ceiling, 1),
                          "ours_percent": round(100 * out["burst"]["pods_per_second"] / ceiling, 1) if ceiling else 0.0}
    finally:
        await client.close()
        await cluster.stop()
        if etcd_proc is not None:
            etcd_proc.terminate()
            etcd_proc.wait(10)
        shutil.rmtree(data_dir, ignore_errors=True)
    return out


def table(results: list[dict[str, Any]]) -> str:
    """The results as one plain-text table (a row per size and backend)."""
    head = ("size", "etcd", "start s", "pods/s", "all created s", "startup p50/p90/p99 s",
            "churn p99 s", "POST p99 ms", "writes/pod", "ceiling pods/s", "% of ceiling")
    rows = [head]
    for r in results:
        b, c, ch = r["burst"], r.get("ceiling", {}), r.get("churn", {})
        rows.append((f"{r['nodes']}x{r['pods']}", r["backend"], str(r["start_seconds"]), str(b["pods_per_second"]),
                     str(b["all_created_seconds"]), f"{b['startup_p50']}/{b['startup_p90']}/{b['startup_p99']}",
                     str(ch.get("startup_p99", "-")), str(ch.get("post_p99_ms", "-")), str(b["etcd_writes_per_pod"]),
                     str(c.get("pods_per_second", "-")), str(c.get("ours_percent", "-"))))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    per_process = []
    for r in results:
        b = r["burst"]
        per_process.append(f"{r['nodes']}x{r['pods']} {r['backend']}: CPU ms/pod " +
                           ", ".join(f"{k} {v}" for k, v in b["cpu_ms_per_pod"].items()) +
                           "; RSS bytes/pod " + ", ".join(f"{k} {v}" for k, v in b["rss_bytes_per_pod"].items()))
    return "\n".join(lines + [""] + per_process)


async def main(args: argparse.Namespace) -> None:
    sizes = []
    for term in args.sizes.split(","):
        n, _, p = term.partition("x")
        sizes.append((int(n), int(p)))
    backends = [b for b in args.backends.split(",") if b]
    if "real" in backends and not os.path.exists(ETCD_BINARY):
        print(f"real etcd: {ETCD_BINARY} not found (apt-get install etcd-server); embedded only")
        backends = [b for b in backends if b != "real"]
    results = []
    for nodes, pods in sizes:
        for backend in backends:
            print(f"{nodes} nodes x {pods} pods, {backend} etcd:", flush=True)
            results.append(await run_one(nodes, pods, backend, args))
    doc = {"machine": {"cores": os.cpu_count(), "load_average": os.getloadavg()}, "results": results}
    with open(args.json, "w") as f:
        json.dump(doc, f, indent=1)
    print()
    print(table(results))
    print(f"\n(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; JSON in {args.json})")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100x1000,1000x10000", help="comma list of NODESxPODS")
    ap.add_argument("--backends", default="embedded,real", help="embedded, real (Debian's etcd-server) or both")
    ap.add_argument("--churn-seconds", type=float, default=60.0, help="steady churn duration; 0 skips it")
    ap.add_argument("--churn-rate", type=float, default=20.0, help="pods per second during the churn")
    ap.add_argument("--ceiling-seconds", type=float, default=5.0, help="how long etcd's write rate is measured")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for all pods of a phase")
    ap.add_argument("--json", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "e2e.json"))
    asyncio.run(main(ap.parse_args()))
