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
                         [--profile DIR [--py-spy PATH]] [--count-requests]

``--profile DIR`` samples every process with py-spy (``py-spy record --format raw``,
collapsed stacks) from the Deployment's submission to the last pod Running and writes
``DIR/<service>.txt`` plus ``DIR/<service>.top.txt`` (the top functions by self and
inclusive samples, ``bench/profile_top.py``).

``--idle SECONDS`` measures each process's CPU rate over SECONDS with nothing to do before the
submission and prints the CPU per pod also net of it (that rate times the run's duration): the
hollow nodes' leases cost CPU per second, so a run slowed by a loaded machine otherwise shows more
CPU per pod.

``--count-requests`` audits every API request (leases and events included, which
``controlplane up``'s policy leaves out; the audit log costs the apiserver CPU, so compare CPU
figures only between runs with the same setting) and, ``--settle`` seconds after the last pod
is Running, prints the requests per pod by (client, verb, resource) made since the submission,
the apiserver's etcd calls per pod by (operation, type) from its
``etcd_request_duration_seconds_count`` and the controller-manager's work-queue adds per pod
(``workqueue_adds_total`` by queue: the syncs asked for).

Figures only; never a test.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
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

#: ``--count-requests``' audit policy: every request but health checks and metrics, one line each
COUNT_POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/livez*", "/readyz*", "/version*", "/metrics", "/debug/pprof*", "/openapi/*"]
- level: Metadata
"""


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
                           say=lambda s: None, audit_policy_file=count_policy(args, data_dir))
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
        etcd_before = await etcd_calls(client) if args.count_requests else {}
        queues_before = await queue_adds(cluster) if args.count_requests else {}
        idle_rate: dict[str, float] = {}
        if args.idle > 0:  # what each process spends per second with nothing to do (leases, heartbeats)
            idle0 = {svc.name: cpu_seconds(svc.proc.pid) for svc in cluster.services if svc.proc}
            i0 = time.monotonic()
            await asyncio.sleep(args.idle)  # the idle window measured (a figure, not synchronisation)
            idle_rate = {svc.name: (cpu_seconds(svc.proc.pid) - idle0[svc.name]) / (time.monotonic() - i0)
                         for svc in cluster.services if svc.proc}
        wall0 = time.time()
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
        window = time.monotonic() - t0
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
        if idle_rate:
            print(f"  (net: less the idle rate measured over {args.idle:.0f} s before, times the run's {window:.1f} s)")
        n = max(len(running), 1)
        for svc in cluster.services:
            used = cpu_after.get(svc.name, 0.0) - cpu_before.get(svc.name, 0.0)
            net = (f"   net {(used - idle_rate[svc.name] * window) / n * 1000:6.2f} ms per pod "
                   f"(idle {idle_rate[svc.name] * 1000:5.1f} ms/s)" if svc.name in idle_rate else "")
            print(f"  {svc.name:<20} {used:7.2f} s   {used / n * 1000:6.2f} ms per pod{net}")
        used = sum(cpu_after.values()) - sum(cpu_before.values())
        net = (f"   net {(used - sum(idle_rate.values()) * window) / n * 1000:6.2f} ms per pod"
               if idle_rate else "")
        print(f"  {'all':<20} {used:7.2f} s   {used / n * 1000:6.2f} ms per pod{net}")
        print(f"  (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
        if args.count_requests:
            await asyncio.sleep(args.settle)  # let the trailing status updates and events land
            etcd_after = await etcd_calls(client)
            queues_after = await queue_adds(cluster)
            assert cluster.audit_log is not None
            print_requests(cluster.audit_log, wall0, n)
            print(f"\netcd calls by the apiserver per pod, by (operation, type), {args.settle:.0f} s after the last Running:")
            for key in sorted(etcd_after, key=lambda k: -(etcd_after[k] - etcd_before.get(k, 0))):
                d = etcd_after[key] - etcd_before.get(key, 0)
                if d:
                    print(f"  {d / n:8.3f}  {key[0]:<8} {key[1]}")
            print("\ncontroller-manager work-queue adds per pod, by queue:")
            for name in sorted(queues_after, key=lambda k: -(queues_after[k] - queues_before.get(k, 0))):
                d = queues_after[name] - queues_before.get(name, 0)
                if d:
                    print(f"  {d / n:8.3f}  {name}")
    finally:
        await client.close()
        await cluster.stop()


def count_policy(args: argparse.Namespace, data_dir: str) -> str | None:
    """With ``--count-requests``: :data:`COUNT_POLICY` written into ``data_dir``, its path."""
    if not args.count_requests:
        return None
    path = os.path.join(data_dir, "count-policy.yaml")
    with open(path, "w") as f:
        f.write(COUNT_POLICY)
    return path


async def etcd_calls(client: RestClient) -> dict[tuple[str, str], float]:
    """The apiserver's ``etcd_request_duration_seconds_count`` by (operation, type)."""
    async with client.session.get(client.server + "/metrics", **client.request_kwargs({})) as resp:
        text = await resp.text()
    out: dict[tuple[str, str], float] = {}
    for line in text.splitlines():
        if line.startswith("etcd_request_duration_seconds_count{"):
            labels = dict(kv.split("=", 1) for kv in line[line.index("{") + 1:line.rindex("}")].split(","))
            key = (labels["operation"].strip('"'), labels["type"].strip('"'))
            out[key] = out.get(key, 0) + float(line.rsplit(" ", 1)[1])
    return out


async def queue_adds(cluster: LocalCluster) -> dict[str, float]:
    """The controller-manager's ``workqueue_adds_total`` by queue name."""
    import aiohttp
    out: dict[str, float] = {}
    for ep in cluster.endpoints:
        if ep.job != "kube-controller-manager":
            continue
        async with aiohttp.ClientSession() as s, s.get(ep.url + "/metrics") as resp:
            text = await resp.text()
        for line in text.splitlines():
            if line.startswith("workqueue_adds_total{"):
                name = line.split('name="', 1)[1].split('"', 1)[0]
                out[name] = out.get(name, 0) + float(line.rsplit(" ", 1)[1])
    return out


def print_requests(audit_log: str, since: float, pods: int) -> None:
    """Requests per pod received at or after ``since`` (epoch seconds), from the audit log's
    ResponseComplete lines, by (client, verb, resource[/subresource]), most first."""
    from controlplane import apitime
    counts: collections.Counter[tuple[str, str, str]] = collections.Counter()
    with open(audit_log) as f:
        for line in f:
            ev = json.loads(line)
            if ev.get("stage") not in ("ResponseComplete", "Panic"):
                continue
            if apitime.parse_micro_time(ev["requestReceivedTimestamp"]) < since:
                continue
            ua = (ev.get("userAgent") or "unknown").split("/", 1)[0]
            ref = ev.get("objectRef") or {}
            res = ref.get("resource", ev.get("requestURI", "?").split("?", 1)[0])
            if ref.get("subresource"):
                res += "/" + ref["subresource"]
            counts[(ua, ev["verb"], res)] += 1
    print("\nAPI requests per pod by (client, verb, resource) since the submission:")
    for (ua, verb, res), c in counts.most_common():
        print(f"  {c / pods:8.3f}  {ua:<24} {verb:<8} {res}")
    print(f"  {sum(counts.values()) / pods:8.3f}  all")


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
    ap.add_argument("--count-requests", action="store_true",
                    help="audit every request; print requests per pod by client/verb/resource and etcd calls")
    ap.add_argument("--settle", type=float, default=5.0,
                    help="with --count-requests: seconds to wait after the last Running before counting")
    ap.add_argument("--idle", type=float, default=0.0,
                    help="seconds to measure each process's CPU with nothing to do before the submission; "
                         "the CPU figures then also print net of that rate (the leases and heartbeats of "
                         "the hollow nodes cost CPU per second, not per pod)")
    asyncio.run(main(ap.parse_args()))
