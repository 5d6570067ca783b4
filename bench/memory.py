"""Memory per stored pod in every process of a real control plane.

Starts ``LocalCluster`` (etcd, apiserver, controller-manager, scheduler, one kubelet process
running ``--nodes`` hollow nodes), lets it settle (``--settle-seconds``) and reads each process's RSS (``/proc/PID/status`` VmRSS): the baseline with
0 pods. Then one apps/v1 Deployment of ``--pods`` replicas, all Running (seen through a watch),
settled again, RSS again: ``(after - before) / pods`` is the bytes each process holds per stored pod
(with its Events, its ReplicaSet's share and the etcd history it left).

``--trees A,B`` runs the same measurement once per source tree (each in its own process with
``PYTHONPATH=tree``; e.g. an unpacked ``git archive`` of the base commit beside the working tree)
and prints them side by side: a before/after in one run, on the same machine load.

``--inprocess``: no cluster; the watch cache's and an informer's holding of ``--pods`` pods in this
process, each pod stored in the three versions a pod goes through (created, bound, Running, with
the managedFields of its three writers), decoded from JSON as the apiserver decodes etcd's values
and fed through ``WatchCache`` / ``Informer`` as their watches do: traced bytes per pod, with
and without structural sharing (:mod:`controlplane.compact`), side by side in one run.

``--tracemalloc apiserver`` (any subcommands) also traces allocations in those processes
(:mod:`controlplane.memprofile`, slow: use fewer pods) and prints the top allocation sites of
what the pods added, by line and by file.

    python bench/memory.py --nodes 100 --pods 5000
    python bench/memory.py --trees /tmp/memory-base,. --pods 5000 --json bench/memory.json
    python bench/memory.py --pods 2000 --tracemalloc apiserver
    python bench/memory.py --inprocess --pods 10000

Figures only; never a test. The machine's load average is printed with them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.environ.get("CP_BENCH_TREE") or os.path.join(os.path.dirname(__file__), ".."))

from controlplane.api.resources import DEPLOYMENTS, PODS  # noqa: E402
from controlplane.cli.cluster import LocalCluster  # noqa: E402
from controlplane.client.config import load_kubeconfig  # noqa: E402
from controlplane.client.informer import Informer  # noqa: E402
from controlplane.client.rest import RestClient  # noqa: E402

CONTAINER = {"name": "c", "image": "registry.k8s.io/pause:3.10",
             "resources": {"requests": {"cpu": "1m", "memory": "1Mi"}}}


def rss_bytes(pid: int) -> int:
    """Resident set size of a process (``/proc/PID/status`` VmRSS), 0 if gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


async def settle(seconds: float) -> None:
    """Let the last writes of a phase land before RSS is read (benchmark set-up: a fixed pause;
    the cluster never goes write-free, since every hollow node renews its Lease)."""
    await asyncio.sleep(seconds)


def snapshot(pid: int, name: str, directory: str, n: int) -> str:
    """Ask a traced process for its ``n``-th tracemalloc snapshot; returns its path."""
    from controlplane.memprofile import snapshot_path
    path = snapshot_path(directory, name, pid, n)
    os.kill(pid, signal.SIGUSR2)
    deadline = time.monotonic() + 120
    while not os.path.exists(path + ".done") and time.monotonic() < deadline:
        time.sleep(0.2)  # waiting for a file another process writes (benchmark only)
    return path


def top_sites(before: str, after: str, count: int) -> dict[str, list[tuple[str, int, int]]]:
    """The allocation sites that grew most from ``before`` to ``after``: by line and by file,
    ``(site, bytes, blocks)``."""
    import tracemalloc
    a, b = tracemalloc.Snapshot.load(before), tracemalloc.Snapshot.load(after)
    out: dict[str, list[tuple[str, int, int]]] = {}
    for key in ("lineno", "filename"):
        stats = b.compare_to(a, key)
        rows = []
        for s in stats[:count]:
            fr = s.traceback[0]
            site = f"{os.path.relpath(fr.filename) if 'controlplane' in fr.filename else fr.filename}" + \
                   (f":{fr.lineno}" if key == "lineno" else "")
            rows.append((site, s.size_diff, s.count_diff))
        out[key] = rows
    return out


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    """One cluster, one Deployment: the figures of the module docstring, as a dict."""
    data_dir = tempfile.mkdtemp(prefix="bench-memory-")
    snap_dir = os.path.join(data_dir, "tracemalloc")
    os.makedirs(snap_dir)
    traced = [s for s in args.tracemalloc.split(",") if s]
    if traced:
        os.environ["CONTROLPLANE_TRACEMALLOC"] = ",".join(traced)
        os.environ["CONTROLPLANE_TRACEMALLOC_DIR"] = snap_dir
    cluster = LocalCluster(data_dir, apiserver_port=0, etcd_port=0, nodes=(), hollow_nodes=args.nodes,
                           restart=False, parallel=True,
                           kubelet_args=("--image-pull-seconds", "0", "--container-start-seconds", "0",
                                         "--no-trace"), say=lambda s: None)
    out: dict[str, Any] = {"nodes": args.nodes, "pods": args.pods,
                           "tree": os.path.abspath(os.environ.get("CP_BENCH_TREE") or ".")}
    client: RestClient | None = None
    try:
        t0 = time.monotonic()
        await cluster.start()
        client = RestClient(load_kubeconfig(cluster.kubeconfig), "bench")
        out["start_seconds"] = round(time.monotonic() - t0, 1)
        print(f"  {args.nodes} hollow nodes usable in {out['start_seconds']}s", flush=True)
        procs = {s.name: s.proc.pid for s in cluster.services if s.proc}
        await settle(args.settle_seconds)
        before = {n: rss_bytes(p) for n, p in procs.items()}
        # a traced subcommand's processes: "kubelet" is the process "kubelet-hollow"
        subcommand = {n: "kubelet" if n.startswith("kubelet") else n for n in procs}
        snaps = {n: snapshot(procs[n], subcommand[n], snap_dir, 1) for n in procs if subcommand[n] in traced}

        running: set[str] = set()
        done = asyncio.Event()

        def seen(*objs: dict[str, Any]) -> None:
            pod = objs[-1]
            if (pod.get("status") or {}).get("phase") == "Running":
                running.add(pod["metadata"]["name"])
                if len(running) >= args.pods:
                    done.set()
        informer = Informer(client, PODS, namespace="default", label_selector="bench=memory")
        informer.add_handlers(on_add=seen, on_update=seen)
        informer.start()
        await informer.wait_synced()
        dep = {"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "memory", "namespace": "default"},
               "spec": {"replicas": args.pods, "selector": {"matchLabels": {"bench": "memory"}},
                        "template": {"metadata": {"labels": {"bench": "memory"}},
                                     "spec": {"containers": [CONTAINER]}}}}
        t1 = time.monotonic()
        await client.create(DEPLOYMENTS, dep, "default")
        while not done.is_set() and time.monotonic() - t1 < args.timeout:
            try:
                await asyncio.wait_for(done.wait(), 10)
            except asyncio.TimeoutError:
                print(f"    {time.monotonic() - t1:6.1f}s running {len(running)}/{args.pods}", flush=True)
        await informer.stop()
        out["running"] = len(running)
        out["running_seconds"] = round(time.monotonic() - t1, 1)
        print(f"  {len(running)}/{args.pods} Running after {out['running_seconds']}s", flush=True)
        await settle(args.settle_seconds)
        after = {n: rss_bytes(p) for n, p in procs.items()}
        n = max(len(running), 1)
        out["rss_before"] = before
        out["rss_after"] = after
        out["bytes_per_pod"] = {k: round((after[k] - before[k]) / n) for k in procs}
        out["bytes_per_pod"]["total"] = round((sum(after.values()) - sum(before.values())) / n)
        if traced:
            out["tracemalloc"] = {}
            for name, first in snaps.items():
                second = snapshot(procs[name], subcommand[name], snap_dir, 2)
                out["tracemalloc"][name] = top_sites(first, second, args.top)
    finally:
        if client is not None:
            await client.close()
        await cluster.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    out["load_average"] = os.getloadavg()
    return out


def _pod_versions(i: int, node: str) -> list[bytes]:
    """The JSON values etcd holds for pod ``i`` of one ReplicaSet: created, bound, Running."""
    import orjson
    name = f"web-7d4b9c-{i:05x}"
    t = "2026-12-01T23:40:00Z"
    mf_cm = {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": t,
             "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {
                 ".": {}, "f:app": {}, "f:pod-template-hash": {}}, "f:ownerReferences": {
                 ".": {}, 'k:{"uid":"rs-uid"}': {}}}, "f:spec": {"f:containers": {'k:{"name":"c"}': {
                     ".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:resources": {
                         ".": {}, "f:requests": {".": {}, "f:cpu": {}, "f:memory": {}}},
                     "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}},
                 "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {}, "f:schedulerName": {},
                 "f:securityContext": {}, "f:terminationGracePeriodSeconds": {}}}}
    pod: dict[str, Any] = {
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": name, "generateName": "web-7d4b9c-", "namespace": "default",
                     "uid": f"0b5c{i:08x}-1c2d-4e5f-8a9b-{i:012x}", "creationTimestamp": t,
                     "labels": {"app": "web", "pod-template-hash": "7d4b9c"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9c",
                                          "uid": "rs-uid", "controller": True, "blockOwnerDeletion": True}],
                     "managedFields": [mf_cm]},
        "spec": {"volumes": [{"name": f"kube-api-access-{i:05x}", "projected": {"sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                        "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}], "defaultMode": 420}}],
                 "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                 "resources": {"requests": {"cpu": "1m", "memory": "1Mi"}},
                                 "volumeMounts": [{"name": f"kube-api-access-{i:05x}", "readOnly": True,
                                                   "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
                                 "terminationMessagePath": "/dev/termination-log",
                                 "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
                 "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                 "serviceAccountName": "default", "serviceAccount": "default", "securityContext": {},
                 "schedulerName": "default-scheduler", "enableServiceLinks": True, "priority": 0,
                 "preemptionPolicy": "PreemptLowerPriority",
                 "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                  "effect": "NoExecute", "tolerationSeconds": 300},
                                 {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                  "effect": "NoExecute", "tolerationSeconds": 300}]},
        "status": {"phase": "Pending", "qosClass": "Burstable"}}
    out = [orjson.dumps(pod)]
    pod["spec"]["nodeName"] = node
    pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                                    "lastTransitionTime": t}]
    out.append(orjson.dumps(pod))
    conds = [{"type": c, "status": "True", "lastProbeTime": None, "lastTransitionTime": t}
             for c in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]
    pod["status"] = {"phase": "Running", "conditions": conds, "hostIP": "10.0.0.7", "hostIPs": [{"ip": "10.0.0.7"}],
                     "podIP": f"10.244.{i // 250}.{i % 250}", "podIPs": [{"ip": f"10.244.{i // 250}.{i % 250}"}],
                     "startTime": t, "qosClass": "Burstable",
                     "containerStatuses": [{"name": "c", "state": {"running": {"startedAt": t}}, "ready": True,
                                            "restartCount": 0, "image": "registry.k8s.io/pause:3.10",
                                            "imageID": "registry.k8s.io/pause@sha256:ee6521f2",
                                            "containerID": f"containerd://{i:064x}", "started": True}]}
    pod["metadata"]["managedFields"] = [mf_cm, {
        "manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": t, "fieldsType": "FieldsV1",
        "subresource": "status", "fieldsV1": {"f:status": {"f:conditions": {
            f'k:{{"type":"{c["type"]}"}}': {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {},
                                            "f:status": {}, "f:type": {}} for c in conds},
            "f:containerStatuses": {}, "f:hostIP": {}, "f:hostIPs": {}, "f:phase": {}, "f:podIP": {},
            "f:podIPs": {".": {}, 'k:{"ip":"10.244.0.1"}': {".": {}, "f:ip": {}}}, "f:startTime": {}}}}]
    out.append(orjson.dumps(pod))
    return out


def inprocess(pods: int) -> dict[str, Any]:
    """The ``--inprocess`` figures (module docstring): traced bytes per pod held by a watch cache
    (objects + its ring of 10,000 events) and by an informer's store, with and without sharing."""
    import contextlib
    import gc
    import tracemalloc
    import types
    from unittest import mock

    from components.apiserver.cache import WatchCache
    from controlplane.client import informer as informer_mod
    from controlplane.compact import Sharer
    from controlplane.storage.store import StoreEvent, decode

    values = [_pod_versions(i, f"hollow-{i % 100}") for i in range(pods)]
    # the order the apiserver sees: every pod created, then bound, then Running
    order = [(i, v) for v in range(3) for i in range(pods)]

    def cache_bytes() -> int:
        cache = WatchCache(store=None, resource=PODS)  # type: ignore[arg-type]
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        rev = 10
        for i, v in order:
            rev += 1
            kv = types.SimpleNamespace(value=values[i][v], mod_revision=rev, key=b"")
            key = f"/registry/pods/default/web-7d4b9c-{i:05x}"
            obj = decode(kv)
            prev = cache.objects.get(key)
            cache._apply(StoreEvent("MODIFIED" if prev else "ADDED", key, obj, prev, rev))
        gc.collect()
        used = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        del cache
        return used

    async def informer_bytes() -> int:
        import orjson

        class Client:
            async def list(self, *a: Any, **kw: Any) -> dict[str, Any]:
                return {"metadata": {"resourceVersion": "1"}, "items": []}

            async def watch(self, *a: Any, **kw: Any) -> Any:
                for i, v in order:
                    obj = orjson.loads(values[i][v])
                    yield ("MODIFIED" if v else "ADDED"), obj
        inf = informer_mod.Informer(Client(), PODS, transform=informer_mod.drop_managed_fields)  # type: ignore[arg-type]
        await inf._list()
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        await inf._watch()
        gc.collect()
        used = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        return used

    out: dict[str, Any] = {"pods": pods, "json_bytes_per_pod_version": [round(sum(len(v[k]) for v in values) / pods)
                                                                       for k in range(3)]}
    for label, patch in (("unshared", True), ("shared", False)):
        ctx = mock.patch.object(Sharer, "store", lambda self, new, prev: new) if patch else contextlib.nullcontext()
        with ctx:
            t0 = time.process_time()
            c = cache_bytes()
            t1 = time.process_time()
            i = asyncio.run(informer_bytes())
            t2 = time.process_time()
        out[label] = {"watch_cache_bytes_per_pod": round(c / pods), "informer_bytes_per_pod": round(i / pods),
                      "watch_cache_us_per_event": round((t1 - t0) / len(order) * 1e6, 1),
                      "informer_us_per_event": round((t2 - t1) / len(order) * 1e6, 1)}
    return out


def table(results: list[dict[str, Any]]) -> str:
    """Bytes per pod per process, one column per measured tree."""
    names = list(results[0]["bytes_per_pod"])
    head = ["process"] + [f"{os.path.basename(r['tree'].rstrip('/')) or r['tree']} B/pod" for r in results] + \
           [f"{os.path.basename(r['tree'].rstrip('/'))} RSS MiB" for r in results]
    rows = [head]
    for name in names:
        rows.append([name] + [str(r["bytes_per_pod"].get(name, "-")) for r in results] +
                    [f"{r['rss_after'].get(name, sum(r['rss_after'].values())) / 2**20:.0f}" for r in results])
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for r in results:
        lines.append(f"{r['tree']}: {r['running']}/{r['pods']} pods Running in {r['running_seconds']}s on "
                     f"{r['nodes']} hollow nodes (load {r['load_average'][0]:.1f})")
        for proc, sites in (r.get("tracemalloc") or {}).items():
            for key, rows_ in sites.items():
                lines.append(f"  {proc}: top allocation sites by {key} (bytes per pod, blocks per pod)")
                for site, size, blocks in rows_:
                    lines.append(f"    {size / r['running']:9.0f}  {blocks / r['running']:7.1f}  {site}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=100, help="hollow nodes")
    ap.add_argument("--pods", type=int, default=5000, help="replicas of the Deployment")
    ap.add_argument("--settle-seconds", type=float, default=15.0, help="pause before each RSS reading")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for all pods Running")
    ap.add_argument("--tracemalloc", default="", help="comma list of subcommands to trace (e.g. apiserver)")
    ap.add_argument("--top", type=int, default=20, help="allocation sites to print per traced process")
    ap.add_argument("--trees", default="", help="comma list of source trees to measure one after another")
    ap.add_argument("--inprocess", action="store_true", help="no cluster: the watch cache and an informer here")
    ap.add_argument("--json", default="", help="write every figure here as JSON")
    ap.add_argument("--single-json", default="", help=argparse.SUPPRESS)  # a child of --trees
    args = ap.parse_args()
    if args.inprocess:
        r = inprocess(args.pods)
        print(f"{args.pods} pods, 3 versions each (JSON {r['json_bytes_per_pod_version']} bytes), "
              f"traced bytes per pod (tracemalloc):")
        for label in ("unshared", "shared"):
            print(f"  {label:<9} watch cache {r[label]['watch_cache_bytes_per_pod']:7d} B/pod "
                  f"({r[label]['watch_cache_us_per_event']} us/event under tracemalloc)   "
                  f"informer {r[label]['informer_bytes_per_pod']:7d} B/pod "
                  f"({r[label]['informer_us_per_event']} us/event)")
        print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(r, f, indent=1)
        return
    if args.trees:
        results = []
        for tree in args.trees.split(","):
            tree = os.path.abspath(tree)
            print(f"tree {tree}:", flush=True)
            fd, path = tempfile.mkstemp(suffix=".json")
            os.close(fd)
            argv = [sys.executable, os.path.abspath(__file__), "--nodes", str(args.nodes), "--pods", str(args.pods),
                    "--settle-seconds", str(args.settle_seconds), "--timeout", str(args.timeout),
                    "--tracemalloc", args.tracemalloc, "--top", str(args.top), "--single-json", path]
            env = dict(os.environ, PYTHONPATH=tree, CP_BENCH_TREE=tree)
            subprocess.run(argv, env=env, cwd=tree, check=True)
            with open(path) as f:
                results.append(json.load(f))
            os.unlink(path)
    else:
        results = [asyncio.run(measure(args))]
        if args.single_json:
            with open(args.single_json, "w") as f:
                json.dump(results[0], f)
            return
    print()
    print(table(results))
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": {"cores": os.cpu_count(), "load_average": os.getloadavg()},
                       "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
