"""Controller-manager benchmarks on a real control plane (``LocalCluster``: etcd, apiserver,
controller-manager, scheduler; no kubelet).

``gc``: the garbage collector's throughput. Creates one owner ConfigMap and N ConfigMaps
owned by it (over HTTP, ``--concurrency`` in flight), deletes the owner (background
propagation, kubectl's default) and watches the dependents go: prints the time from the
owner's deletion to the last dependent's DELETED event, objects collected per second, and the
CPU seconds of each process (kube-controller-manager's collector: the owner's delete event
queues every dependent, each one's owner lookup is answered by the absent-owner cache,
``pkg/controller/garbagecollector/garbagecollector.go`` attemptToDeleteItem).

    python bench/controllers.py gc --objects 10000 [--etcd-servers URL]

Figures only; never a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench.common import cpu_seconds  # noqa: E402
from controlplane.api.resources import get  # noqa: E402
from controlplane.cli.cluster import LocalCluster  # noqa: E402
from controlplane.client.config import load_kubeconfig  # noqa: E402
from controlplane.client.informer import Informer  # noqa: E402
from controlplane.client.rest import RestClient  # noqa: E402

CONFIGMAPS = get("configmaps")


async def bench_gc(args: argparse.Namespace) -> None:
    """The ``gc`` benchmark (module docstring)."""
    data_dir = tempfile.mkdtemp(prefix="bench-gc-")
    cluster = LocalCluster(data_dir, etcd_servers=args.etcd_servers, apiserver_port=0, etcd_port=0,
                           nodes=(), hollow_nodes=0, restart=False, say=lambda s: None)
    client = RestClient(cluster.server, "bench")  # replaced once the cluster's kubeconfig exists
    try:
        await cluster.start()
        client = RestClient(load_kubeconfig(cluster.kubeconfig), "bench")  # the admin, over HTTPS
        owner = await client.create(CONFIGMAPS, {"metadata": {"name": "gc-owner"}, "data": {"a": "b"}}, "default")
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "gc-owner", "uid": owner["metadata"]["uid"]}
        seen: set[str] = set()
        gone: set[str] = set()
        all_seen = asyncio.Event()
        all_gone = asyncio.Event()

        def added(obj: dict, *rest: dict) -> None:
            obj = rest[-1] if rest else obj
            if (obj["metadata"].get("labels") or {}).get("bench") == "gc":
                seen.add(obj["metadata"]["name"])
                if len(seen) >= args.objects:
                    all_seen.set()

        def deleted(obj: dict) -> None:
            name = obj["metadata"]["name"]
            if name in seen:
                gone.add(name)
                if len(gone) >= args.objects:
                    all_gone.set()

        informer = Informer(client, CONFIGMAPS, namespace="default")
        informer.add_handlers(on_add=added, on_update=added, on_delete=deleted)
        informer.start()
        await informer.wait_synced()
        sem = asyncio.Semaphore(args.concurrency)

        async def make(i: int) -> None:
            async with sem:
                await client.create(CONFIGMAPS, {"metadata": {
                    "name": f"gc-dep-{i:05d}", "labels": {"bench": "gc"}, "ownerReferences": [ref]},
                    "data": {"k": "v"}}, "default")

        t0 = time.monotonic()
        await asyncio.gather(*(make(i) for i in range(args.objects)))
        await asyncio.wait_for(all_seen.wait(), args.timeout)
        print(f"created {args.objects} owned ConfigMaps in {time.monotonic() - t0:.1f}s")
        cpu_before = {svc.name: cpu_seconds(svc.proc.pid) for svc in cluster.services if svc.proc}
        t1 = time.monotonic()
        await client.delete(CONFIGMAPS, "gc-owner", "default", propagation_policy="Background")
        last = -1
        while not all_gone.is_set():
            try:
                await asyncio.wait_for(all_gone.wait(), 5)
            except asyncio.TimeoutError:
                pass
            if len(gone) != last:
                last = len(gone)
                print(f"  {time.monotonic() - t1:6.1f}s  collected {len(gone)}/{args.objects}", flush=True)
            if time.monotonic() - t1 > args.timeout:
                print(f"timed out after {args.timeout}s")
                break
        took = time.monotonic() - t1
        await informer.stop()
        print(f"\n{'collected':<20} {len(gone)}/{args.objects} in {took:.2f}s = "
              f"{len(gone) / took if took else 0:.0f} objects/s")
        print("CPU seconds per process during the collection:")
        for svc in cluster.services:
            after = cpu_seconds(svc.proc.pid) if svc.proc else 0.0
            print(f"  {svc.name:<20} {after - cpu_before.get(svc.name, 0.0):7.2f} s")
        print(f"  (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    finally:
        await client.close()
        await cluster.stop()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="bench", required=True)
    gc = sub.add_parser("gc", help="garbage collection of N owned ConfigMaps after their owner goes")
    gc.add_argument("--objects", type=int, default=10000)
    gc.add_argument("--concurrency", type=int, default=50)
    gc.add_argument("--etcd-servers", default=None)
    gc.add_argument("--timeout", type=float, default=900)
    parsed = ap.parse_args()
    asyncio.run({"gc": bench_gc}[parsed.bench](parsed))
