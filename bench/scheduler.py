"""Scheduler throughput, in process, with a recording binder (no HTTP).

    python bench/scheduler.py [--nodes 5000] [--pods 10000]
                              [--workload basic|affinity|anti-affinity|topology-spreading|all]
                              [--profile]

Prints pods/s per workload. kube-scheduler's CI (scheduler_perf, SchedulingBasic
5000 nodes / 10000 pods) floors at about 680 pods/s. Workloads:
basic (pods with small requests), affinity (required node affinity on a zone label),
anti-affinity (required pod anti-affinity on hostname within small groups),
topology-spreading (DoNotSchedule maxSkew 1 on zone per app). Each line shows
scheduler_perf's floor for the matching test (test/integration/scheduler_perf
performance-config.yaml thresholds) beside our figure.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.scheduler.framework import Status  # noqa: E402
from components.scheduler.scheduler import Scheduler  # noqa: E402


class RecordingBinder:
    name = "DefaultBinder"

    def __init__(self) -> None:
        self.bound = 0

    async def bind(self, state, pi, node_name):
        self.bound += 1
        return Status()


def make_node(i: int) -> dict:
    return {"metadata": {"name": f"node-{i}", "labels": {"kubernetes.io/hostname": f"node-{i}",
                                                         "zone": f"zone-{i % 10}"}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}


#: pods/s floors of scheduler_perf's 5000-node tests (SchedulingBasic,
#: SchedulingNodeAffinity, SchedulingPodAntiAffinity, TopologySpreading; the last is approximate)
FLOORS = {"basic": 680, "affinity": 220, "anti-affinity": 60, "topology-spreading": 85}


def make_pod(i: int, workload: str) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                  "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}}]}
    labels = {"app": f"app-{i % 100}"}
    if workload == "affinity":
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "zone", "operator": "In", "values": ["zone-1", "zone-2", "zone-3"]}]}]}}}
    elif workload == "anti-affinity":
        labels = {"group": f"g-{i % 500}"}
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}]}}
    elif workload == "topology-spreading":
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "zone",
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": labels}}]
    return {"metadata": {"name": f"pod-{i}", "namespace": "default", "uid": f"u{i}", "labels": labels},
            "spec": spec}


async def run(nodes: int, pods: int, workload: str) -> tuple[float, int]:
    binder = RecordingBinder()
    s = Scheduler(None, record_results=False, rng=random.Random(1), binder_override=binder)
    for i in range(nodes):
        s.on_node_add(make_node(i))
    for i in range(pods):
        s.on_pod_add(make_pod(i, workload))
    t0 = time.perf_counter()
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
    dt = time.perf_counter() - t0
    assert binder.bound == scheduled
    return dt, scheduled


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--workload", default="all", choices=["basic", "affinity", "anti-affinity", "topology-spreading", "all"])
    ap.add_argument("--profile", action="store_true", help="print the top functions by cumulative time")
    a = ap.parse_args()
    workloads = list(FLOORS) if a.workload == "all" else [a.workload]
    for w in workloads:
        prof = cProfile.Profile() if a.profile else None
        if prof:
            prof.enable()
        dt, n = asyncio.run(run(a.nodes, a.pods, w))
        if prof:
            prof.disable()
        print(f"{w:14s} nodes={a.nodes} pods={a.pods} scheduled={n} time={dt:.2f}s "
              f"throughput={n / dt:.0f} pods/s (scheduler_perf floor {FLOORS[w]})")
        if prof:
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()
