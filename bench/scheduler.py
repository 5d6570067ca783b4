"""Scheduler throughput, in process, with a recording binder (no HTTP).

    python bench/scheduler.py [--nodes 5000] [--pods N] [--init-pods N]
                              [--workload basic|affinity|anti-affinity|topology-spreading|all]
                              [--node-images] [--profile]
    python bench/scheduler.py --e2e [--e2e-nodes 500] [--e2e-pods 2000] [--clients 32]

Each workload follows scheduler_perf's shape: ``--init-pods`` pods (namespace
sched-0) are scheduled first, untimed, then ``--pods`` pods (sched-1) are timed.
Workloads: basic (small requests), affinity (required node affinity on a zone
label), anti-affinity (SchedulingPodAntiAffinity: every pod ``color: green`` with
required anti-affinity to green pods on ``kubernetes.io/hostname``),
topology-spreading (TopologySpreading: 5000 plain init pods, then ``color: blue`` pods
with DoNotSchedule maxSkew 5 over three zones); and, beyond scheduler_perf's, deployment (basic pods owned
by a ReplicaSet, as every Deployment's are, so the PodTopologySpread system defaults score
every node: what `bench/controllers.py deployment` schedules). ``--node-images``: every node's
status lists the pause image the pods run, as a hollow kubelet's does (its runtime holds the
pause image from the start), so ImageLocality scores every node. Each line prints scheduler_perf's CI
floor (``threshold`` in test/integration/scheduler_perf/{misc,affinity,
topology_spreading}/performance-config.yaml) beside our figure, and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import start_service, stop_services  # noqa: E402
from components.scheduler.framework import Status  # noqa: E402
from components.scheduler.scheduler import Scheduler  # noqa: E402


class RecordingBinder:
    name = "DefaultBinder"

    def __init__(self) -> None:
        self.bound = 0

    async def bind(self, state, pi, node_name):
        self.bound += 1
        return Status()


POD_IMAGE = "registry.k8s.io/pause:3.10"


def node_images() -> list[dict]:
    """``status.images`` as a hollow kubelet reports it once it holds the pods' image
    (components/kubelet/runtime.py Runtime.node_images)."""
    from components.kubelet.runtime import image_id, image_size
    return [{"names": [image_id(POD_IMAGE), POD_IMAGE], "sizeBytes": image_size(POD_IMAGE)}]


def make_node(i: int, images: list[dict] | None = None) -> dict:
    """Node ``node-<i>`` of scheduler_perf's node template (32 cpu, 128Gi, 110 pods), its
    ``status.images`` set to ``images`` when given (``--node-images``)."""
    status: dict = {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}
    if images:
        status["images"] = images
    return {"metadata": {"name": f"node-{i}", "labels": {"kubernetes.io/hostname": f"node-{i}",
                                                         "zone": f"zone-{i % 10}",
                                                         # labelNodePrepareStrategy of TopologySpreading
                                                         "topology.kubernetes.io/zone": f"moon-{i % 3 + 1}"}},
            "status": status}


#: scheduler_perf's workloads at 5000 nodes (test/integration/scheduler_perf/
#: {misc,affinity}/performance-config.yaml): (init pods, measured pods, CI floor in pods/s).
#: SchedulingBasic/5000Nodes_10000Pods threshold 680; SchedulingNodeAffinity/
#: 5000Nodes_10000Pods 220 (init 5000); SchedulingPodAntiAffinity/5000Nodes_2000Pods 60
#: (init 1000 in sched-0, measured in sched-1, every pod "color: green" with required
#: anti-affinity to green pods of both namespaces on kubernetes.io/hostname). The
#: TopologySpreading/5000Nodes_5000Pods threshold 460 (topology_spreading/
#: performance-config.yaml: nodes labelled topology.kubernetes.io/zone moon-1..3, 5000
#: init pods from pod-default.yaml, measured pods "color: blue" with a DoNotSchedule
#: maxSkew 5 constraint on the zone, templates/pod-with-topology-spreading.yaml).
WORKLOADS = {"basic": (1000, 10000, 680), "affinity": (5000, 10000, 220),
             "anti-affinity": (1000, 2000, 60), "topology-spreading": (5000, 5000, 460)}
#: not scheduler_perf's: basic pods owned by a ReplicaSet (every Deployment's), so the
#: PodTopologySpread system defaults (hostname and zone, ScheduleAnyway) score every node
EXTRA_WORKLOADS = {"deployment": (1000, 10000, 0)}
#: the template of the init pods when it is not the measured pods' own
INIT_TEMPLATE = {"topology-spreading": "basic"}
FLOORS = {w: f for w, (_, _, f) in WORKLOADS.items()}


def make_pod(i: int, workload: str, namespace: str = "default") -> dict:
    spec: dict = {"containers": [{"name": "c", "image": POD_IMAGE,
                                  "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}}]}
    labels = {"app": f"app-{i % 100}"}
    if workload == "affinity":
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "zone", "operator": "In", "values": ["zone-1", "zone-2", "zone-3"]}]}]}}}
    elif workload == "anti-affinity":  # templates/pod-with-pod-anti-affinity.yaml
        labels = {"color": "green"}
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"color": "green"}}, "topologyKey": "kubernetes.io/hostname",
             "namespaces": ["sched-1", "sched-0"]}]}}
        spec["containers"][0]["resources"] = {"requests": {"cpu": "100m", "memory": "500Mi"},
                                              "limits": {"cpu": "100m", "memory": "500Mi"}}
    elif workload == "topology-spreading":  # templates/pod-with-topology-spreading.yaml
        labels = {"color": "blue"}
        spec["topologySpreadConstraints"] = [{"maxSkew": 5, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": {"color": "blue"}}}]
        spec["containers"][0]["resources"] = {"requests": {"cpu": "100m", "memory": "500Mi"},
                                              "limits": {"cpu": "100m", "memory": "500Mi"}}
    md: dict = {"name": f"pod-{i}", "namespace": namespace, "uid": f"u{namespace}{i}", "labels": labels}
    if workload == "deployment":  # a Deployment's pod: owned by its ReplicaSet
        md["labels"] = {"app": "web"}
        md["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                                  "uid": "rs-web", "controller": True}]
    return {"metadata": md, "spec": spec}


class Lister:
    """A lister over fixed objects (``list()``, ``get("ns/name")``), for the plugins' handle."""

    def __init__(self, objs: dict[str, dict]) -> None:
        self.objs = objs

    def list(self) -> list[dict]:
        return list(self.objs.values())

    def get(self, key: str) -> dict | None:
        return self.objs.get(key)


async def drain(s: Scheduler) -> int:
    scheduled = 0
    while True:
        qp = s.queue.pop_nowait()
        if qp is None:
            break
        if s.schedule_one(qp) is not None:
            scheduled += 1
        if scheduled % 256 == 0:
            await asyncio.sleep(0)
    await s.wait_idle()
    return scheduled


async def run(nodes: int, pods: int, workload: str, init_pods: int = 0,
              with_images: bool = False) -> tuple[float, int, float]:
    """Schedule ``init_pods`` (namespace sched-0, not timed) then ``pods`` (sched-1,
    timed); ``with_images``: the nodes list the pods' image. Returns (seconds, pods
    scheduled in the timed phase, CPU seconds of the timed phase)."""
    binder = RecordingBinder()
    s = Scheduler(None, record_results=False, rng=random.Random(1), binder_override=binder)
    if workload == "deployment":  # the ReplicaSet selecting the pods: system-default spreading applies
        s.listers["replicasets"] = Lister({
            f"{ns}/web": {"metadata": {"name": "web", "namespace": ns},
                          "spec": {"selector": {"matchLabels": {"app": "web"}}}} for ns in ("sched-0", "sched-1")})
        s.listers["services"] = Lister({})
    images = node_images() if with_images else None
    for i in range(nodes):
        s.on_node_add(make_node(i, images))
    for ns in ("sched-0", "sched-1"):
        s.on_namespace_add({"metadata": {"name": ns}})
    for i in range(init_pods):
        s.on_pod_add(make_pod(i, INIT_TEMPLATE.get(workload, workload), "sched-0"))
    init_done = await drain(s)
    for i in range(pods):
        s.on_pod_add(make_pod(i, workload, "sched-1"))
    t0, c0 = time.perf_counter(), time.process_time()
    scheduled = await drain(s)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert binder.bound == init_done + scheduled
    return dt, scheduled, cpu


# -- end to end through the apiserver ----------------------------------------------------
async def e2e(nodes: int, pods: int, clients: int, py_spy: str | None = None) -> dict:
    """Real processes: our etcd (memory only), the apiserver and the scheduler — no
    kubelets. Node objects and then pods are created over HTTP; a pods watch opened
    before the creates times each pod's first MODIFIED event with ``spec.nodeName``.
    Returns figures: create rate, bind rate first create → last bind, steady bind rate
    (10%..90% of the pods), scheduler CPU seconds."""
    import json
    import shutil
    import tempfile

    import aiohttp

    tmp = tempfile.mkdtemp(prefix="bench-scheduler-")
    procs = []
    try:
        etcd, etcd_url = start_service(["etcd", "--listen-client-urls", "http://127.0.0.1:0", "--data-dir", ""],
                                f"{tmp}/etcd.log", r"event=etcd\.ready listen=(\S+)")
        procs.append(etcd)
        api, base = start_service(["apiserver", "--etcd-servers", etcd_url, "--port", "0", "--insecure-http"],
                           f"{tmp}/apiserver.log", r"event=apiserver\.ready url=(\S+)")
        procs.append(api)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as s:
            async def post_all(url: str, bodies: list[dict]) -> float:
                it = iter(bodies)

                async def worker() -> None:
                    for b in it:
                        async with s.post(url, json=b) as r:
                            await r.read()
                            if r.status != 201:
                                raise SystemExit(f"POST {url}: {r.status} {(await r.text())[:200]}")
                t = time.perf_counter()
                await asyncio.gather(*(worker() for _ in range(clients)))
                return time.perf_counter() - t

            node_objs = []
            for i in range(nodes):
                n = make_node(i)
                node_objs.append({"apiVersion": "v1", "kind": "Node", **n})
            await post_all(f"{base}/api/v1/nodes", node_objs)
            async with s.get(f"{base}/api/v1/nodes?limit=1") as r:
                first = (await r.json())["items"][0]
            if not (first.get("status") or {}).get("allocatable"):  # status dropped on create
                it = iter(node_objs)

                async def patch_status() -> None:
                    for n in it:
                        name = n["metadata"]["name"]
                        async with s.patch(f"{base}/api/v1/nodes/{name}/status", json={"status": n["status"]},
                                           headers={"Content-Type": "application/merge-patch+json"}) as r:
                            await r.read()
                await asyncio.gather(*(patch_status() for _ in range(clients)))
            sched, _ = start_service(["scheduler", "--master", base], f"{tmp}/scheduler.log",
                              r"event=scheduler\.started.*nodes=(\d+)")
            procs.append(sched)
            async with s.get(f"{base}/api/v1/pods?limit=1") as r:
                rv = (await r.json())["metadata"]["resourceVersion"]
            bound_at: dict[str, float] = {}
            done = asyncio.Event()

            async def watch() -> None:
                url = f"{base}/api/v1/pods?watch=1&resourceVersion={rv}&allowWatchBookmarks=false"
                async with s.get(url, timeout=aiohttp.ClientTimeout(total=None)) as r:
                    async for line in r.content:
                        if not line.strip():
                            continue
                        ev = json.loads(line)
                        obj = ev.get("object") or {}
                        if ev.get("type") == "MODIFIED" and (obj.get("spec") or {}).get("nodeName"):
                            name = obj["metadata"]["name"]
                            if name not in bound_at:
                                bound_at[name] = time.perf_counter()
                                if len(bound_at) >= pods:
                                    done.set()
                                    return
            watcher = asyncio.create_task(watch())
            spy = None
            if py_spy:  # sample the scheduler process while it works (py-spy from PyPI)
                import subprocess
                spy = subprocess.Popen(["py-spy", "record", "--pid", str(sched.pid), "-o", py_spy,
                                        "--format", "raw" if py_spy.endswith(".txt") else "flamegraph"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            c0 = _cpu(sched.pid)
            t0 = time.perf_counter()
            create_wall = await post_all(f"{base}/api/v1/namespaces/default/pods",
                                         [{"apiVersion": "v1", "kind": "Pod", **make_pod(i, "basic")}
                                          for i in range(pods)])
            try:
                await asyncio.wait_for(done.wait(), timeout=max(120.0, pods / 5))
            except asyncio.TimeoutError:
                pass
            watcher.cancel()
            cpu = _cpu(sched.pid) - c0
            if spy is not None:
                import signal
                spy.send_signal(signal.SIGINT)
                spy.wait(30)
            times = sorted(bound_at.values())
            out = {"nodes": nodes, "pods": pods, "bound": len(times), "create_rate": pods / create_wall,
                   "bind_rate": len(times) / (times[-1] - t0) if times else 0.0,
                   "scheduler_cpu_s": cpu}
            if len(times) >= 10:
                lo, hi = times[len(times) // 10], times[len(times) * 9 // 10]
                out["steady_rate"] = (len(times) * 8 // 10) / (hi - lo) if hi > lo else float("inf")
            return out
    finally:
        stop_services(procs)
        shutil.rmtree(tmp, ignore_errors=True)


def _cpu(pid: int) -> float:
    """User+system CPU seconds of a process (from /proc)."""
    import os
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load() -> str:
    """The 1-minute load average (the 2 cores are shared)."""
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=0, help="measured pods (default: scheduler_perf's)")
    ap.add_argument("--init-pods", type=int, default=-1, help="pods scheduled before timing "
                    "(default: scheduler_perf's)")
    ap.add_argument("--workload", default="all", choices=[*WORKLOADS, *EXTRA_WORKLOADS, "all"],
                    help="all: scheduler_perf's four; deployment: ReplicaSet-owned basic pods")
    ap.add_argument("--node-images", action="store_true", help="the nodes' status lists the pods' "
                    "image (as hollow kubelets report it), so ImageLocality scores every node")
    ap.add_argument("--profile", action="store_true", help="print the top functions by cumulative time")
    ap.add_argument("--e2e", action="store_true", help="through real processes (etcd, apiserver, "
                    "scheduler; Node objects over HTTP, no kubelets): --e2e-nodes x --e2e-pods, "
                    "printed beside the in-process figure for the same shape")
    ap.add_argument("--e2e-nodes", type=int, default=500)
    ap.add_argument("--e2e-pods", type=int, default=2000)
    ap.add_argument("--py-spy", default=None, metavar="FILE", help="with --e2e: py-spy record the "
                    "scheduler process while it binds (FILE.svg flamegraph, FILE.txt collapsed stacks)")
    ap.add_argument("--clients", type=int, default=32, help="concurrent HTTP clients creating objects")
    a = ap.parse_args()
    if a.e2e:
        r = asyncio.run(e2e(a.e2e_nodes, a.e2e_pods, a.clients, a.py_spy))
        dt, n, _ = asyncio.run(run(a.e2e_nodes, a.e2e_pods, "basic", 0))
        print(f"e2e (HTTP)         nodes={r['nodes']} pods={r['pods']} bound={r['bound']} "
              f"create={r['create_rate']:.0f} pods/s bind={r['bind_rate']:.0f} pods/s "
              f"(first create -> last bind; steady 10-90% {r.get('steady_rate', 0):.0f} pods/s) "
              f"scheduler CPU {r['scheduler_cpu_s']:.1f}s load={load()}")
        print(f"in-process         nodes={a.e2e_nodes} pods={a.e2e_pods} scheduled={n} "
              f"throughput={n / dt:.0f} pods/s load={load()}")
        return
    workloads = list(FLOORS) if a.workload == "all" else [a.workload]
    for w in workloads:
        prof = cProfile.Profile() if a.profile else None
        if prof:
            prof.enable()
        init, measured, floor = {**WORKLOADS, **EXTRA_WORKLOADS}[w]
        init = init if a.init_pods < 0 else a.init_pods
        measured = a.pods or measured
        dt, n, cpu = asyncio.run(run(a.nodes, measured, w, init, a.node_images))
        if prof:
            prof.disable()
        print(f"{w:18s} nodes={a.nodes} init={init} pods={measured} scheduled={n} time={dt:.2f}s "
              f"throughput={n / dt:.0f} pods/s cpu={cpu * 1e6 / max(n, 1):.0f} us/pod "
              f"({f'scheduler_perf floor {floor}' if floor else 'no CI floor'}) "
              f"load={load()}")
        if prof:
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()
