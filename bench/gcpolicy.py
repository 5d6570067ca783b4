"""What the cyclic GC costs a process that caches many objects, and what the GC policy saves.

Models a component's informer (``controlplane/client/informer.py``): a store of ``--objects``
pod-shaped JSON trees, then ``--events`` watch events, each a pod decoded from its JSON bytes
replacing the stored version (the old one freed by reference counting), a handler's short-lived
work (a key tuple, a shallow copy of the status, a list of container names) and, every
``--cycle-every`` events, one cyclic garbage object (what a finished asyncio task or a caught
exception leaves). The store keeps growing by one pod every ``--grow-every`` events, as a cache
does while pods are created. Each mode runs in its own interpreter:

* ``default``: CPython's collector as it is (thresholds 700, 10, 10);
* ``freeze``: :class:`controlplane.gcpolicy.GCFreezer` started once the store is filled;
* ``threshold:N`` / ``freeze+threshold:N``: the same with ``gc.set_threshold(N)``.

Prints, per mode: CPU seconds of the event loop (``time.process_time``), microseconds of CPU per
event, the CPU seconds spent inside collections (``gc.callbacks`` start/stop, ``time.thread_time``), the number of
collections per generation, and the longest collection in CPU ms.

    python bench/gcpolicy.py [--objects 20000] [--events 300000] [--modes default,freeze,...]

Figures only; never a test.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

DEFAULT_MODES = "default,freeze,threshold:10000,freeze+threshold:10000"


def pod(i: int, rv: int) -> dict:
    """A pod as an informer keeps it (managedFields dropped): ~90 containers, dicts and strings."""
    name = f"web-7d4b9c6f5-{i:06d}"
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"6c1b0f3e-{i:08d}", "resourceVersion": str(rv),
                     "generateName": "web-7d4b9c6f5-", "creationTimestamp": "2026-12-04T18:00:00Z",
                     "labels": {"app": "web", "pod-template-hash": "7d4b9c6f5"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9c6f5",
                                          "uid": "0a0b0c0d", "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"nodeName": f"hollow-{i % 1000}", "schedulerName": "default-scheduler",
                 "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                 "containers": [{"name": "c", "image": "nginx", "imagePullPolicy": "IfNotPresent",
                                 "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                                 "terminationMessagePath": "/dev/termination-log",
                                 "terminationMessagePolicy": "File"}],
                 "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                  "effect": "NoExecute", "tolerationSeconds": 300},
                                 {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                  "effect": "NoExecute", "tolerationSeconds": 300}]},
        "status": {"phase": "Running", "hostIP": "192.168.1.100", "podIP": f"10.64.{i % 250}.{i % 200 + 2}",
                   "conditions": [{"type": t, "status": "True", "lastTransitionTime": "2026-12-04T18:00:01Z"}
                                  for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
                   "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0, "image": "nginx",
                                          "imageID": "docker-pullable://nginx@sha256:0", "started": True,
                                          "containerID": f"containerd://{i:064x}",
                                          "state": {"running": {"startedAt": "2026-12-04T18:00:01Z"}}}]},
    }


class Cycle:
    def __init__(self) -> None:
        self.me = self


async def child(mode: str, objects: int, events: int, cycle_every: int, grow_every: int) -> dict:
    from controlplane.gcpolicy import GCFreezer
    store = {f"default/{i}": json.loads(json.dumps(pod(i, i))) for i in range(objects)}
    bodies = [json.dumps(pod(i, objects + i)).encode() for i in range(256)]
    freezer = None
    for part in mode.split("+"):
        if part.startswith("threshold:"):
            gc.set_threshold(int(part.split(":", 1)[1]))
        elif part == "freeze":
            freezer = GCFreezer(3600)
    gc.collect()
    if freezer is not None:
        freezer.start()
    spent = [0.0, 0.0]  # seconds in collections, the longest
    counts = [0, 0, 0]
    t_gc = [0.0]

    def timing(phase: str, info: dict) -> None:
        if phase == "start":
            t_gc[0] = time.thread_time()
        else:
            d = time.thread_time() - t_gc[0]
            spent[0] += d
            spent[1] = max(spent[1], d)
            counts[info["generation"]] += 1
    gc.callbacks.insert(0, timing)
    size = objects
    c0 = time.process_time()
    for e in range(events):
        obj = json.loads(bodies[e % 256])
        if e % grow_every == 0:
            size += 1
        key = f"default/{e % size}"
        old = store.get(key)
        store[key] = obj
        # the handler's short-lived work
        status = dict(obj["status"])
        names = [c["name"] for c in obj["spec"]["containers"]]
        _ = (key, old is None, status.get("phase"), names)
        if e % cycle_every == 0:
            Cycle()
    cpu = time.process_time() - c0
    gc.callbacks.remove(timing)
    if freezer is not None:
        await freezer.stop()
    return {"mode": mode, "cpu": cpu, "us_per_event": cpu / events * 1e6, "gc_s": spent[0],
            "max_ms": spent[1] * 1000, "collections": counts, "objects": len(store)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--objects", type=int, default=20000)
    ap.add_argument("--events", type=int, default=300000)
    ap.add_argument("--cycle-every", type=int, default=50)
    ap.add_argument("--grow-every", type=int, default=20)
    ap.add_argument("--modes", default=DEFAULT_MODES)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each mode, interleaved")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        out = asyncio.run(child(args.child, args.objects, args.events, args.cycle_every, args.grow_every))
        print(json.dumps(out))
        return
    print(f"{args.objects} cached objects, {args.events} events (load average {os.getloadavg()[0]:.1f})")
    print(f"{'mode':<26} {'cpu s':>7} {'us/event':>9} {'in GC s':>8} {'max ms':>7}  collections gen0/1/2")
    for _ in range(args.repeat):
        for mode in args.modes.split(","):
            r = subprocess.run([sys.executable, __file__, "--child", mode, "--objects", str(args.objects),
                                "--events", str(args.events), "--cycle-every", str(args.cycle_every),
                                "--grow-every", str(args.grow_every)], capture_output=True, text=True, check=True)
            d = json.loads(r.stdout.strip().splitlines()[-1])
            print(f"{d['mode']:<26} {d['cpu']:7.2f} {d['us_per_event']:9.2f} {d['gc_s']:8.3f} {d['max_ms']:7.1f}  "
                  + "/".join(map(str, d["collections"])))


if __name__ == "__main__":
    main()
