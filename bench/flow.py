"""End-to-end benchmark of the pod creation flow through every process.

Starts a real control plane (``LocalCluster``: etcd, apiserver,
controller-manager, scheduler, one kubelet process running N hollow nodes),
creates a Deployment of R replicas over HTTP, and watches its pods: for each
pod the time from the Deployment's submission to the pod being created, bound
(spec.nodeName set) and Running, as seen on the pods watch. Prints throughput
and latency percentiles beside Kubernetes' pod startup SLO (p99 <= 5 s for
stateless pods, excluding image pulls; kubernetes/community
``sig-scalability/slos/pod_startup_latency.md``).

    python bench/flow.py --nodes 100 --pods 1000 [--etcd-servers URL] [--image-pull-seconds 0]
                         [--profile DIR [--py-spy PATH]]

``--profile DIR`` samples every process with py-spy (``py-spy record --format raw``,
collapsed stacks) from the Deployment's submission to the last pod Running and writes
``DIR/<service>.txt`` plus ``DIR/<service>.top.txt`` (the top functions by self and
inclusive samples, ``bench/profile_top.py``).

Figures only; never a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench.common import cpu_seconds  # noqa: E402
from controlplane.api.resources import DEPLOYMENTS, PODS  # noqa: E402
from controlplane.cli.cluster import LocalCluster  # noqa: E402
from controlplane.client.config import load_kubeconfig  # noqa: E402
from controlplane.client.informer import Informer  # noqa: E402
from controlplane.client.rest import RestClient  # noqa: E402


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


async def main(args: argparse.Namespace) -> None:
    data_dir = tempfile.mkdtemp(prefix="bench-flow-")
    t_start = time.monotonic()
    cluster = LocalCluster(data_dir, etcd_servers=args.etcd_servers, apiserver_port=0, etcd_port=0,
                           nodes=(), hollow_nodes=args.nodes, restart=False,
                           kubelet_args=("--image-pull-seconds", str(args.image_pull_seconds),
                                         "--container-start-seconds", str(args.container_start_seconds),
                                         "--no-trace") if not args.trace else
                                        ("--image-pull-seconds", str(args.image_pull_seconds),
                                         "--container-start-seconds", str(args.container_start_seconds)),
                           say=lambda s: None)
    client = RestClient(cluster.server, "bench")  # replaced once the cluster's kubeconfig exists
    try:
        await cluster.start()
        client = RestClient(load_kubeconfig(cluster.kubeconfig), "bench")  # the admin, over HTTPS
        print(f"cluster up with {args.nodes} hollow nodes in {time.monotonic() - t_start:.1f}s "
              f"(etcd: {'external ' + args.etcd_servers if args.etcd_servers else 'embedded'})")
        created: dict[str, float] = {}
        bound: dict[str, float] = {}
        running: dict[str, float] = {}
        done = asyncio.Event()

        def seen(pod: dict, *_: dict) -> None:
            pod = _[-1] if _ else pod  # on_update(old, new): take new
            now = time.monotonic()
            name = pod["metadata"]["name"]
            created.setdefault(name, now)
            if pod["spec"].get("nodeName"):
                bound.setdefault(name, now)
            if (pod.get("status") or {}).get("phase") == "Running":
                running.setdefault(name, now)
                if len(running) >= args.pods:
                    done.set()

        # an informer, not a bare watch: it resumes (or relists) if the
        # apiserver drops a watcher that falls behind, as Kubernetes' cacher does
        informer = Informer(client, PODS, namespace="default", label_selector="app=bench")
        informer.add_handlers(on_add=seen, on_update=seen)
        informer.start()
        await informer.wait_synced()
        dep = {"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "bench", "namespace": "default"},
               "spec": {"replicas": args.pods, "selector": {"matchLabels": {"app": "bench"}},
                        "template": {"metadata": {"labels": {"app": "bench"}},
                                     "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                                              "resources": {"requests": {"cpu": "10m",
                                                                                         "memory": "16Mi"}}}]}}}}
        spies = start_profilers(args, cluster) if args.profile else []
        cpu_before = {svc.name: cpu_seconds(svc.proc.pid) for svc in cluster.services if svc.proc}
        t0 = time.monotonic()
        await client.create(DEPLOYMENTS, dep, "default")
        last = 0
        while not done.is_set():
            try:
                await asyncio.wait_for(done.wait(), 5)
            except asyncio.TimeoutError:
                pass
            if len(running) != last:
                last = len(running)
                print(f"  {time.monotonic() - t0:6.1f}s  created {len(created)}  bound {len(bound)}  "
                      f"running {len(running)}/{args.pods}", flush=True)
            if time.monotonic() - t0 > args.timeout:
                print(f"timed out after {args.timeout}s")
                break
        cpu_after = {svc.name: cpu_seconds(svc.proc.pid) for svc in cluster.services if svc.proc}
        stop_profilers(args, spies)
        await informer.stop()
        total = max(running.values(), default=t0) - t0
        lat_run = [running[n] - t0 for n in running]
        lat_bind = [bound[n] - created[n] for n in bound if n in created]
        lat_start = [running[n] - bound[n] for n in running if n in bound]
        print()
        print(f"{'pods Running':<34} {len(running)}/{args.pods} in {total:.2f}s "
              f"= {len(running) / total if total else 0:.0f} pods/s end to end")
        print(f"{'created -> bound (scheduling)':<34} p50 {pct(lat_bind, 50) * 1000:7.1f} ms   "
              f"p99 {pct(lat_bind, 99) * 1000:7.1f} ms")
        print(f"{'bound -> Running (kubelet)':<34} p50 {pct(lat_start, 50) * 1000:7.1f} ms   "
              f"p99 {pct(lat_start, 99) * 1000:7.1f} ms   (simulated pull "
              f"{args.image_pull_seconds}s + start {args.container_start_seconds}s)")
        print(f"{'submission -> Running':<34} p50 {pct(lat_run, 50):7.2f} s    "
              f"p99 {pct(lat_run, 99):7.2f} s    (Kubernetes SLO: pod startup p99 <= 5 s)")
        print("\nCPU seconds per process during the run (where the time goes):")
        n = max(len(running), 1)
        for svc in cluster.services:
            used = cpu_after.get(svc.name, 0.0) - cpu_before.get(svc.name, 0.0)
            print(f"  {svc.name:<20} {used:7.2f} s   {used / n * 1000:6.2f} ms per pod")
        used = sum(cpu_after.values()) - sum(cpu_before.values())
        print(f"  {'all':<20} {used:7.2f} s   {used / n * 1000:6.2f} ms per pod")
        print(f"  (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    finally:
        await client.close()
        await cluster.stop()


def start_profilers(args: argparse.Namespace, cluster: LocalCluster) -> list[tuple[str, subprocess.Popen]]:
    """One ``py-spy record`` per service process, writing collapsed stacks to
    ``args.profile/<service>.txt`` until :func:`stop_profilers` interrupts it."""
    spy = args.py_spy or shutil.which("py-spy")
    if not spy:
        raise SystemExit("--profile needs py-spy (pip install py-spy, or --py-spy PATH)")
    return spy_pids(spy, {svc.name: svc.proc.pid for svc in cluster.services if svc.proc},
                    args.profile, args.profile_rate)


def spy_pids(spy: str, pids: dict[str, int], out_dir: str, rate: int = 100) -> list[tuple[str, subprocess.Popen]]:
    """Start ``py-spy record`` (binary ``spy``, ``rate`` samples/s, non-blocking) on each
    ``name -> pid``, collapsed stacks into ``out_dir/<name>.txt``; returns ``(file, process)``
    pairs for :func:`stop_profilers`."""
    os.makedirs(out_dir, exist_ok=True)
    spies = []
    for name, pid in pids.items():
        out = os.path.join(out_dir, f"{name}.txt")
        spies.append((out, subprocess.Popen(
            [spy, "record", "--pid", str(pid), "--format", "raw", "--rate", str(rate),
             "--nonblocking", "--output", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
    return spies


def stop_profilers(args: argparse.Namespace, spies: list[tuple[str, subprocess.Popen]]) -> None:
    """SIGINT every py-spy (it writes its file then) and summarise each file."""
    from bench.profile_top import summarise
    for _, p in spies:
        p.send_signal(signal.SIGINT)
    for out, p in spies:
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
        if os.path.exists(out):
            with open(out.removesuffix(".txt") + ".top.txt", "w") as f:
                f.write(summarise(out, 40))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--etcd-servers", default=None)
    ap.add_argument("--image-pull-seconds", type=float, default=0.0)
    ap.add_argument("--container-start-seconds", type=float, default=0.0)
    ap.add_argument("--trace", action="store_true", help="keep the kubelet's step records on")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--profile", metavar="DIR", help="sample every process with py-spy into DIR")
    ap.add_argument("--py-spy", metavar="PATH", help="the py-spy binary (default: on PATH)")
    ap.add_argument("--profile-rate", type=int, default=50, help="py-spy samples per second")
    asyncio.run(main(ap.parse_args()))
