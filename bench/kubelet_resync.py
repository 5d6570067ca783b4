"""What the kubelet's periodic work costs per pod: the ``--sync-frequency`` resync and the
status batch (components/kubelet/pod_workers.py ``resync_due`` / ``sync_batch``), in process.

N running pods spread over hollow nodes' PodWorkers, on the unit tests' fake API client
(``controlplane/client/testing.py``) and a FakeClock; then, measured in CPU seconds of this
process (``time.process_time``):

1. one round of periodic resyncs with every pod due (each pod's sync finds nothing to do);
2. one status batch over every node with all pods in sync (what a 10 s tick costs);
3. one status batch retrying the pods whose last write was refused (409 once each).

Each line prints the CPU per pod and the API requests it made per pod.

    python bench/kubelet_resync.py --nodes 1000 --pods 5000

Figures only; never a test. The machine's load average is printed with them.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from components.kubelet.pod_workers import PodWorkers  # noqa: E402
from components.kubelet.runtime import SimulatedRuntime  # noqa: E402
from controlplane.api.resources import PODS  # noqa: E402
from controlplane.client.rest import ApiError  # noqa: E402
from controlplane.client.testing import FakeClient, FakeClock, FakeRecorder  # noqa: E402


def pod(i: int, node: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"uid-{i}", "resourceVersion": "1"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx:1.25"}]},
            "status": {"phase": "Pending"}}


async def idle(workers: list[PodWorkers]) -> None:
    for w in workers:
        await w.wait_idle(60.0)


async def main(args: argparse.Namespace) -> None:
    client, clock = FakeClient(), FakeClock()
    workers = []
    for n in range(args.nodes):
        rt = SimulatedRuntime(f"hollow-{n}", f"10.{n // 256}.{n % 256}.0/24", 0.0, 0.0, clock=clock)
        workers.append(PodWorkers(client, f"hollow-{n}", "192.168.0.1", rt, FakeRecorder(), sync_frequency=60.0))
    for i in range(args.pods):
        w = workers[i % args.nodes]
        client.seed(PODS, pod(i, w.node_name))
        w.update_pod(copy.deepcopy(client.stored(PODS, f"p{i}", "default")))
    await idle(workers)
    for i in range(args.pods):   # the informer delivers the kubelet's own writes back
        workers[i % args.nodes].update_pod(copy.deepcopy(client.stored(PODS, f"p{i}", "default")))
    await idle(workers)
    print(f"{args.pods} running pods on {args.nodes} nodes; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")

    def line(what: str, cpu: float, requests: int) -> None:
        print(f"  {what:<44} {cpu / args.pods * 1e6:8.1f} µs CPU per pod   "
              f"{requests / args.pods:.3f} requests per pod")

    clock.advance(90.0)   # every pod due (sync_frequency 60 s + at most 50% jitter)
    client.clear_actions()
    t = time.process_time()
    due = sum(w.resync_due() for w in workers)
    await idle(workers)
    line(f"periodic resync of every pod ({due} due)", time.process_time() - t, len(client.actions()))

    client.clear_actions()
    t = time.process_time()
    synced = [await w.sync_batch() for w in workers if w.unsynced()]
    line(f"status batch, all in sync ({len(synced)} nodes batched)", time.process_time() - t, len(client.actions()))

    # every pod's next write is refused once (409), then the batch retries them
    refused = client.fail("patch", "pods", ApiError(409, "Conflict", "conflict"), subresource="status")
    for i in range(args.pods):
        w = workers[i % args.nodes]
        w.runtime.exit_container(w.runtime.sandbox(f"uid-{i}").get("c", False), 1)
    clock.advance(90.0)
    for w in workers:
        w.resync_due()
    await idle(workers)
    client.remove_reactor(refused)
    client.clear_actions()
    t = time.process_time()
    synced = [await w.sync_batch() for w in workers if w.unsynced()]
    line(f"status batch retrying {sum(synced)} refused writes", time.process_time() - t, len(client.actions()))
    for w in workers:
        await w.stop()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=5000)
    asyncio.run(main(ap.parse_args()))
