"""Controller-manager benchmarks on a real control plane (``LocalCluster``: etcd, apiserver,
controller-manager, scheduler; no kubelet).

``gc``: the garbage collector's throughput. Creates one owner ConfigMap and N ConfigMaps
owned by it (over HTTP, ``--concurrency`` in flight), deletes the owner (background
propagation, kubectl's default) and watches the dependents go: prints the time from the
owner's deletion to the last dependent's DELETED event, objects collected per second, and the
CPU seconds of each process (kube-controller-manager's collector: the owner's delete event
queues every dependent, each one's owner lookup is answered by the absent-owner cache,
``pkg/controller/garbagecollector/garbagecollector.go`` attemptToDeleteItem; each dependent is
decided on the monitor's copy, so one DELETE per object, which the apiserver answers at the
watch cache's resourceVersion with one etcd txn).

    python bench/controllers.py gc --objects 10000 [--etcd-servers URL] [--profile DIR [--py-spy PATH]]

``deployment``: a Deployment of ``--replicas`` (10,000) on ``--nodes`` (1,000) hollow nodes: the
time from its submission until every pod exists (the ReplicaSet controller's creates, 500 per
burst as ``slowStartBatch``), is bound and is Running (``--until created|bound`` ends the run
earlier; ``--profile DIR`` samples the controller-manager alone with py-spy into
``DIR/controller-manager.txt`` and its summary ``.top.txt``; ``gc --profile DIR`` samples every
process, into ``DIR/create`` and ``DIR/collect``).

``rollout``: a rolling update of a ``--replicas`` (1,000) Deployment (maxSurge 25%,
maxUnavailable 25%, Kubernetes' defaults): its duration, and the surge / unavailable limits held
at every moment, checked on every pod event of a watch (pods of the Deployment that exist ≤
replicas + maxSurge; available ≥ replicas − maxUnavailable, with kubelet readiness as available).

``job``: a Job of ``--completions`` (1,000) with ``--parallelism`` (100): time to Complete and the
most pods ever active at once (must stay ≤ parallelism).

    python bench/controllers.py deployment --replicas 10000 --nodes 1000
    python bench/controllers.py rollout --replicas 1000 --nodes 100
    python bench/controllers.py job --completions 1000 --parallelism 100 --nodes 100

Figures only; never a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench.common import cpu_seconds  # noqa: E402
from bench.flow import start_profilers, stop_profilers  # noqa: E402
from controlplane.api.resources import get  # noqa: E402
from controlplane.cli.cluster import LocalCluster  # noqa: E402
from controlplane.client.config import load_kubeconfig  # noqa: E402
from controlplane.client.informer import Informer  # noqa: E402
from controlplane.client.rest import RestClient  # noqa: E402

CONFIGMAPS = get("configmaps")
PODS = get("pods")
DEPLOYMENTS = get("deployments", "apps")
JOBS = get("jobs", "batch")


async def _cluster(nodes: int, etcd_servers: str | None, prefix: str) -> tuple[LocalCluster, RestClient]:
    """A started cluster of ``nodes`` hollow nodes (pulls and starts instant) and an admin client."""
    cluster = LocalCluster(tempfile.mkdtemp(prefix=prefix), etcd_servers=etcd_servers, apiserver_port=0,
                           etcd_port=0, nodes=(), hollow_nodes=nodes, restart=False, parallel=True,
                           kubelet_args=("--image-pull-seconds", "0", "--container-start-seconds", "0",
                                         "--no-trace"), say=lambda s: None)
    t0 = time.monotonic()
    await cluster.start()
    print(f"cluster of {nodes} hollow nodes usable in {time.monotonic() - t0:.1f}s", flush=True)
    return cluster, RestClient(load_kubeconfig(cluster.kubeconfig), "bench")


def _profile(args: argparse.Namespace, cluster: LocalCluster) -> list:
    """With ``--profile DIR``: one ``py-spy record`` on the controller-manager (collapsed stacks in
    ``DIR/controller-manager.txt``, summarised by :func:`_profile_stop`); [] without it."""
    if not getattr(args, "profile", None):
        return []
    from bench.flow import start_profilers

    class _Only:   # start_profilers over the controller-manager alone (the others unperturbed)
        services = [s for s in cluster.services if s.name == "controller-manager"]
    return start_profilers(args, _Only)  # type: ignore[arg-type]


def _profile_stop(args: argparse.Namespace, spies: list) -> None:
    if spies:
        from bench.flow import stop_profilers
        stop_profilers(args, spies)
        print(f"profile: {args.profile}/controller-manager.top.txt")


def _cpu_report(cluster: LocalCluster, before: dict[str, float]) -> None:
    print("CPU seconds per process during the run:")
    for svc in cluster.services:
        after = cpu_seconds(svc.proc.pid) if svc.proc else 0.0
        print(f"  {svc.name:<20} {after - before.get(svc.name, 0.0):7.2f} s")
    print(f"  (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


def _deployment(name: str, replicas: int, image: str = "registry.k8s.io/pause:3.10") -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"bench": name}},
                     "template": {"metadata": {"labels": {"bench": name}}, "spec": {"containers": [
                         {"name": "c", "image": image, "resources": {"requests": {"cpu": "1m", "memory": "1Mi"}}}]}}}}


def _is_ready(pod: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


async def _wait(event: asyncio.Event, t0: float, timeout: float, progress: Any) -> bool:
    while not event.is_set():
        try:
            await asyncio.wait_for(event.wait(), 5)
        except asyncio.TimeoutError:
            pass
        print(f"  {time.monotonic() - t0:6.1f}s  {progress()}", flush=True)
        if time.monotonic() - t0 > timeout:
            print(f"timed out after {timeout:.0f}s")
            return False
    return True


async def bench_deployment(args: argparse.Namespace) -> None:
    """The ``deployment`` benchmark (module docstring)."""
    cluster, client = await _cluster(args.nodes, args.etcd_servers, "bench-deploy-")
    try:
        created: dict[str, float] = {}
        bound: dict[str, float] = {}
        running: dict[str, float] = {}
        done = asyncio.Event()

        def seen(pod: dict, *rest: dict) -> None:
            pod = rest[-1] if rest else pod
            now, name = time.monotonic(), pod["metadata"]["name"]
            created.setdefault(name, now)
            if pod["spec"].get("nodeName"):
                bound.setdefault(name, now)
            if (pod.get("status") or {}).get("phase") == "Running":
                running.setdefault(name, now)
            if len({"created": created, "bound": bound, "running": running}[args.until]) >= args.replicas:
                done.set()
        informer = Informer(client, PODS, namespace="default", label_selector="bench=big")
        informer.add_handlers(on_add=seen, on_update=seen)
        informer.start()
        await informer.wait_synced()
        before = {svc.name: cpu_seconds(svc.proc.pid) for svc in cluster.services if svc.proc}
        spies = _profile(args, cluster)
        t0 = time.monotonic()
        await client.create(DEPLOYMENTS, _deployment("big", args.replicas), "default")
        await _wait(done, t0, args.timeout, lambda: f"created {len(created)}  bound {len(bound)}  "
                                                    f"running {len(running)}/{args.replicas}")
        _profile_stop(args, spies)
        await informer.stop()
        for what, d in (("created", created), ("bound", bound), ("Running", running)):
            last = max(d.values()) - t0 if len(d) >= args.replicas else float("nan")
            if last != last:
                print(f"{len(d)}/{args.replicas} pods {what} when the run ended")
                continue
            print(f"all {args.replicas} pods {what:<8} after {last:7.2f} s")
        print(f"(target: {args.replicas} pods created in <= 10 s on 2 cores)")
        _cpu_report(cluster, before)
    finally:
        await client.close()
        await cluster.stop()


async def bench_rollout(args: argparse.Namespace) -> None:
    """The ``rollout`` benchmark (module docstring)."""
    cluster, client = await _cluster(args.nodes, args.etcd_servers, "bench-rollout-")
    try:
        n = args.replicas
        surge = -(-n * 25 // 100)          # maxSurge 25%, rounded up
        unavailable = n * 25 // 100        # maxUnavailable 25%, rounded down
        pods: dict[str, dict] = {}
        worst = {"exist": 0, "min_available": n}
        phase = {"rolling": False}
        done = asyncio.Event()
        image2 = "registry.k8s.io/pause:3.9"

        def check() -> None:
            if not phase["rolling"]:
                return
            live = [p for p in pods.values() if not p["metadata"].get("deletionTimestamp")]
            worst["exist"] = max(worst["exist"], len(live))
            worst["min_available"] = min(worst["min_available"], sum(1 for p in live if _is_ready(p)))
            new = [p for p in live if p["spec"]["containers"][0]["image"] == image2 and _is_ready(p)]
            if len(new) >= n and len(live) == n:
                done.set()

        def on(pod: dict, *rest: dict) -> None:
            pod = rest[-1] if rest else pod
            pods[pod["metadata"]["name"]] = pod
            check()

        def gone(pod: dict) -> None:
            pods.pop(pod["metadata"]["name"], None)
            check()
        informer = Informer(client, PODS, namespace="default", label_selector="bench=roll")
        informer.add_handlers(on_add=on, on_update=on, on_delete=gone)
        informer.start()
        await informer.wait_synced()
        first_ready = asyncio.Event()
        on_first = lambda: first_ready.set() if sum(1 for p in pods.values() if _is_ready(p)) >= n else None  # noqa: E731
        informer.add_handlers(on_add=lambda p: on_first(), on_update=lambda o, p: on_first())
        await client.create(DEPLOYMENTS, _deployment("roll", n), "default")
        await asyncio.wait_for(first_ready.wait(), args.timeout)   # the first rollout, from the watch
        print(f"{n} pods Ready; rolling to a new image (maxSurge {surge}, maxUnavailable {unavailable})")
        before = {svc.name: cpu_seconds(svc.proc.pid) for svc in cluster.services if svc.proc}
        phase["rolling"] = True
        t0 = time.monotonic()
        await client.patch(DEPLOYMENTS, "roll", {"spec": {"template": {"spec": {"containers": [
            {"name": "c", "image": image2}]}}}}, "default")
        await _wait(done, t0, args.timeout, lambda: f"pods {len(pods)}")
        took = time.monotonic() - t0
        await informer.stop()
        print(f"rolled {n} pods in {took:.2f} s = {n / took:.0f} pods/s")
        print(f"most pods at once {worst['exist']} (limit {n + surge}: "
              f"{'held' if worst['exist'] <= n + surge else 'EXCEEDED'}); fewest available "
              f"{worst['min_available']} (limit {n - unavailable}: "
              f"{'held' if worst['min_available'] >= n - unavailable else 'BROKEN'})")
        _cpu_report(cluster, before)
    finally:
        await client.close()
        await cluster.stop()


async def bench_job(args: argparse.Namespace) -> None:
    """The ``job`` benchmark (module docstring)."""
    cluster, client = await _cluster(args.nodes, args.etcd_servers, "bench-job-")
    try:
        active: set[str] = set()
        most = {"active": 0}
        jobs_done = asyncio.Event()

        def on_pod(pod: dict, *rest: dict) -> None:
            pod = rest[-1] if rest else pod
            name = pod["metadata"]["name"]
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed") or pod["metadata"].get(
                    "deletionTimestamp"):
                active.discard(name)
            else:
                active.add(name)
            most["active"] = max(most["active"], len(active))

        def on_job(job: dict, *rest: dict) -> None:
            job = rest[-1] if rest else job
            if any(c.get("type") == "Complete" and c.get("status") == "True"
                   for c in (job.get("status") or {}).get("conditions") or []):
                jobs_done.set()
        pods_inf = Informer(client, PODS, namespace="default", label_selector="batch.kubernetes.io/job-name=many")
        pods_inf.add_handlers(on_add=on_pod, on_update=on_pod, on_delete=lambda p: active.discard(p["metadata"]["name"]))
        jobs_inf = Informer(client, JOBS, namespace="default")
        jobs_inf.add_handlers(on_add=on_job, on_update=on_job)
        for inf in (pods_inf, jobs_inf):
            inf.start()
            await inf.wait_synced()
        before = {svc.name: cpu_seconds(svc.proc.pid) for svc in cluster.services if svc.proc}
        t0 = time.monotonic()
        await client.create(JOBS, {"apiVersion": "batch/v1", "kind": "Job",
                                   "metadata": {"name": "many", "namespace": "default"},
                                   "spec": {"completions": args.completions, "parallelism": args.parallelism,
                                            "template": {"spec": {"restartPolicy": "Never", "containers": [
                                                {"name": "c", "image": "busybox", "command": ["true"]}]}}}},
                            "default")

        def progress() -> str:
            job = jobs_inf.store.get("default/many") or {}
            return f"succeeded {(job.get('status') or {}).get('succeeded', 0)}/{args.completions}  active {len(active)}"
        await _wait(jobs_done, t0, args.timeout, progress)
        took = time.monotonic() - t0
        for inf in (pods_inf, jobs_inf):
            await inf.stop()
        print(f"{args.completions} completions in {took:.2f} s = {args.completions / took:.0f} pods/s; "
              f"most active at once {most['active']} (parallelism {args.parallelism}: "
              f"{'held' if most['active'] <= args.parallelism else 'EXCEEDED'})")
        _cpu_report(cluster, before)
    finally:
        await client.close()
        await cluster.stop()


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

        profile = args.profile
        spies = start_profilers(argparse.Namespace(**{**vars(args), "profile": os.path.join(profile, "create")}),
                                cluster) if profile else []
        cpu_before = {svc.name: cpu_seconds(svc.proc.pid) for svc in cluster.services if svc.proc}
        t0 = time.monotonic()
        await asyncio.gather(*(make(i) for i in range(args.objects)))
        await asyncio.wait_for(all_seen.wait(), args.timeout)
        print(f"created {args.objects} owned ConfigMaps in {time.monotonic() - t0:.1f}s; CPU: " + ", ".join(
            f"{svc.name} {cpu_seconds(svc.proc.pid) - cpu_before.get(svc.name, 0.0):.2f}s"
            for svc in cluster.services if svc.proc))
        if profile:
            stop_profilers(args, spies)
            spies = start_profilers(argparse.Namespace(**{**vars(args), "profile": os.path.join(profile, "collect")}),
                                    cluster)
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
        if profile:
            stop_profilers(args, spies)
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
    gc.add_argument("--profile", metavar="DIR", help="sample every process with py-spy into DIR/create and "
                    "DIR/collect (bench/flow.py's profilers)")
    dep = sub.add_parser("deployment", help="a 10,000-replica Deployment on 1,000 hollow nodes")
    dep.add_argument("--replicas", type=int, default=10000)
    dep.add_argument("--nodes", type=int, default=1000)
    dep.add_argument("--until", choices=("created", "bound", "running"), default="running",
                     help="end the run once every pod is created, bound or Running")
    roll = sub.add_parser("rollout", help="a rolling update of a 1,000-pod Deployment, limits checked")
    roll.add_argument("--replicas", type=int, default=1000)
    roll.add_argument("--nodes", type=int, default=100)
    job = sub.add_parser("job", help="a Job of 1,000 completions with parallelism 100")
    job.add_argument("--completions", type=int, default=1000)
    job.add_argument("--parallelism", type=int, default=100)
    job.add_argument("--nodes", type=int, default=100)
    for p in (dep, roll, job):
        p.add_argument("--etcd-servers", default=None)
        p.add_argument("--timeout", type=float, default=900)
    dep.add_argument("--profile", metavar="DIR", help="sample the controller-manager with py-spy into DIR")
    for p in (gc, dep):
        p.add_argument("--py-spy", metavar="PATH", help="the py-spy binary (default: on PATH)")
        p.add_argument("--profile-rate", type=int, default=100, help="py-spy samples per second")
    parsed = ap.parse_args()
    benches = {"gc": bench_gc, "deployment": bench_deployment, "rollout": bench_rollout, "job": bench_job}
    asyncio.run(benches[parsed.bench](parsed))
