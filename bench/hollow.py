"""Hollow nodes' cost: N hollow nodes in one kubelet process against a real control plane.

1. ``LocalCluster`` (etcd, apiserver, controller-manager with node IPAM as ``controlplane up``
   configures it, scheduler) with one ordinary node (``node01``: the cluster waits for a node);
2. one ``controlplane kubelet --hollow-nodes N`` process (the admin's kubeconfig), optionally
   under cProfile (``--profile FILE``: pstats of the whole kubelet run, printed top 25 by
   cumulative time); the time from its start to every node Ready with a podCIDR, seen on a
   nodes watch;
3. idle: each process's CPU use over ``--idle-seconds`` (30) as % of one core, and its RSS.

    python bench/hollow.py --nodes 5000
    python bench/hollow.py --nodes 1000 --profile /tmp/hollow.prof
    python bench/hollow.py --nodes 5000 --profile-idle /tmp/idle --py-spy /tmp/pyspy/bin/py-spy

Targets (issue 14): 5,000 hollow nodes ready in ≤ 60 s, the kubelet idle at ≤ 25 % of one core
and ≤ 1 GiB RSS. Figures only; never a test. The machine's load average is printed with them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pstats
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench.common import ROOT, cpu_seconds  # noqa: E402
from bench.e2e import rss_bytes  # noqa: E402
from controlplane.api.resources import NODES  # noqa: E402
from controlplane.cli.cluster import LocalCluster  # noqa: E402
from controlplane.client.config import load_kubeconfig  # noqa: E402
from controlplane.client.informer import Informer  # noqa: E402
from controlplane.client.rest import RestClient  # noqa: E402
from controlplane.lifeline import child_kwargs  # noqa: E402


def _ready(node: dict) -> bool:
    return bool((node.get("spec") or {}).get("podCIDR")) and any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (node.get("status") or {}).get("conditions") or [])


async def run(args: argparse.Namespace) -> dict[str, Any]:
    data_dir = tempfile.mkdtemp(prefix=f"bench-hollow-{args.nodes}-")
    out: dict[str, Any] = {"nodes": args.nodes, "load_before": os.getloadavg()}
    cluster = LocalCluster(data_dir, apiserver_port=0, etcd_port=0, nodes=("node01",), hollow_nodes=0,
                           restart=False, parallel=True, say=lambda s: None)
    kubelet: subprocess.Popen | None = None
    client: RestClient | None = None
    try:
        await cluster.start()
        client = RestClient(load_kubeconfig(cluster.kubeconfig), "bench")
        ready: set[str] = set()
        all_ready = asyncio.Event()

        def seen(node: dict) -> None:
            name = (node.get("metadata") or {}).get("name") or ""
            if not name.startswith("hollow-"):
                return
            (ready.add if _ready(node) else ready.discard)(name)
            if len(ready) >= args.nodes:
                all_ready.set()
        inf = Informer(client, NODES)
        inf.add_handlers(seen, lambda old, new: seen(new), None)
        inf.start()
        await inf.wait_synced()
        cmd = [sys.executable, *(["-m", "cProfile", "-o", args.profile] if args.profile else []),
               "-m", "controlplane", "kubelet", "--kubeconfig", cluster.kubeconfig,
               "--hollow-nodes", str(args.nodes), "--no-trace", "--healthz-port", "0", "--read-only-port", "0"]
        log = open(os.path.join(data_dir, "kubelet.log"), "wb")
        t0 = time.monotonic()
        kubelet = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, **child_kwargs())
        proc = kubelet
        waits = [asyncio.ensure_future(all_ready.wait()), asyncio.ensure_future(asyncio.to_thread(proc.wait))]
        await asyncio.wait(waits, timeout=args.timeout, return_when=asyncio.FIRST_COMPLETED)
        for w in waits:
            w.cancel()
        if all_ready.is_set():
            out["ready_seconds"] = round(time.monotonic() - t0, 1)
        else:
            out["ready_seconds"] = None
            out["ready_nodes_at_end"] = len(ready)
            out["kubelet_exit"] = kubelet.poll()
        out["kubelet_cpu_seconds_to_ready"] = round(cpu_seconds(kubelet.pid), 1)
        await inf.stop()
        procs = {s.name: s.proc.pid for s in cluster.services if s.proc and s.name != "kubelet-node01"}
        procs["kubelet (hollow)"] = kubelet.pid
        cpu0 = {n: cpu_seconds(p) for n, p in procs.items()}
        spies = _spy_idle(args, procs)
        req0 = await _requests(client)
        t1 = time.monotonic()
        await asyncio.sleep(args.idle_seconds)   # the idle window being measured
        dt = time.monotonic() - t1
        req1 = await _requests(client)
        from bench.flow import stop_profilers
        stop_profilers(args, spies)
        out["idle_requests_per_second"] = {k: round((v - req0.get(k, 0)) / dt, 1)
                                           for k, v in sorted(req1.items()) if v - req0.get(k, 0) >= 1}
        out["idle_cpu_percent"] = {n: round(100 * (cpu_seconds(p) - cpu0[n]) / dt, 1) for n, p in procs.items()}
        out["rss_mib"] = {n: round(rss_bytes(p) / 2 ** 20) for n, p in procs.items()}
        out["load_after"] = os.getloadavg()
    finally:
        if kubelet is not None:
            kubelet.send_signal(signal.SIGTERM)   # a clean exit: cProfile writes its file
            try:
                kubelet.wait(60)
            except subprocess.TimeoutExpired:
                kubelet.kill()
        if client is not None:
            await client.close()
        await cluster.stop()
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    return out


async def _requests(client: RestClient) -> dict[str, float]:
    """The apiserver's ``apiserver_request_total`` summed by ``VERB resource[/subresource] code``
    (its /metrics, scraped with the admin client)."""
    from prometheus_client.parser import text_string_to_metric_families
    async with client.session.get(client.server + "/metrics", **client.request_kwargs({})) as r:
        text = await r.text()
    out: dict[str, float] = {}
    for fam in text_string_to_metric_families(text):
        if fam.name != "apiserver_request":
            continue
        for smp in fam.samples:
            if not smp.name.endswith("_total"):
                continue
            lb = smp.labels
            sub = f"/{lb['subresource']}" if lb.get("subresource") else ""
            key = f"{lb.get('verb')} {lb.get('resource')}{sub} {lb.get('code')}"
            out[key] = out.get(key, 0.0) + smp.value
    return out


def _spy_idle(args: argparse.Namespace, procs: dict[str, int]) -> list[tuple[str, subprocess.Popen]]:
    """With ``--profile-idle DIR``: one ``py-spy record`` per process over the idle window
    (collapsed stacks in ``DIR/<process>.txt``, summarised into ``DIR/<process>.top.txt`` by
    :func:`bench.flow.stop_profilers`)."""
    if not args.profile_idle:
        return []
    from bench.flow import spy_pids
    spy = args.py_spy or shutil.which("py-spy")
    if not spy:
        raise SystemExit("--profile-idle needs py-spy (pip install py-spy, or --py-spy PATH)")
    return spy_pids(spy, {name.split()[0]: pid for name, pid in procs.items()}, args.profile_idle)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--idle-seconds", type=float, default=30.0)
    ap.add_argument("--timeout", type=float, default=600.0, help="give up waiting for Ready after this")
    ap.add_argument("--profile", default=None, metavar="FILE", help="run the kubelet under cProfile, pstats to FILE")
    ap.add_argument("--profile-idle", default=None, metavar="DIR",
                    help="py-spy every process over the idle window, collapsed stacks into DIR")
    ap.add_argument("--py-spy", default=None, metavar="PATH", help="the py-spy binary (default: on PATH)")
    ap.add_argument("--keep", action="store_true", help="keep the data dir (logs)")
    ap.add_argument("--json", default=None, metavar="FILE")
    args = ap.parse_args()
    out = asyncio.run(run(args))
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    if args.profile and os.path.exists(args.profile):
        pstats.Stats(args.profile).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
