"""Benchmark: how long until a whole control plane is usable — the pytest plugin's fixture
start beside ``controlplane up``'s (issue 16: <= 1 s warm on the 2-core machine).

    python bench/startup.py [--rounds 3] [--nodes node01,node02]

* ``controlplane up``: from the command's start to its "control plane is up" line (etcd, then
  the apiserver, then the rest, one after another; nodes Ready).
* fixture, cold: a fresh interpreter's first :meth:`controlplane.testing.ClusterHandle.start`
  (what the ``cluster`` fixture does: every process at once; apiserver ready, nodes Ready,
  ``default`` ServiceAccount present), its imports included.
* fixture, warm: later starts in the same interpreter (what a second cluster of a session,
  e.g. a ``controlplane`` marker's, costs).

Every figure is the median of ``--rounds`` rounds (the machine is shared); min and max beside.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

CHILD = """
import json, sys, tempfile, time
t0 = time.monotonic()
from controlplane.testing import ClusterHandle, ClusterSpec
nodes = tuple(sys.argv[1].split(","))
out = []
for i in range(int(sys.argv[2])):
    t = time.monotonic()
    h = ClusterHandle(tempfile.mkdtemp(prefix="cp-bench-") + "/cp", ClusterSpec(nodes=nodes))
    h.start()
    out.append(time.monotonic() - (t0 if i == 0 else t))
    h.stop()
print(json.dumps(out))
"""


def time_up(nodes: str) -> float:
    """Seconds from ``controlplane up``'s start to its "control plane is up" line."""
    with tempfile.TemporaryDirectory(prefix="cp-bench-") as tmp:
        t0 = time.monotonic()
        p = subprocess.Popen([sys.executable, "-m", "controlplane", "up", "--data-dir", os.path.join(tmp, "cp"),
                              "--port", "0", "--etcd-port", "0", "--nodes", nodes],
                             stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, cwd=ROOT)
        assert p.stderr is not None
        for line in p.stderr:
            if b"control plane is up" in line:
                took = time.monotonic() - t0
                break
        else:
            raise SystemExit(f"controlplane up exited with {p.wait()} before it was up")
        p.terminate()
        p.wait(30)
        return took


def time_fixture(nodes: str, starts: int) -> list[float]:
    """[cold, warm, warm...] start seconds of one fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", CHILD, nodes, str(starts)], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    if out.returncode != 0:
        raise SystemExit(f"fixture start failed: {out.stderr.strip().splitlines()[-1:]}")
    result: list[float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def show(label: str, values: list[float]) -> None:
    print(f"{label:<34} median {statistics.median(values):5.2f} s   min {min(values):5.2f}   "
          f"max {max(values):5.2f}   ({len(values)} runs)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--nodes", default="node01,node02")
    args = ap.parse_args()
    up, cold, warm = [], [], []
    for _ in range(args.rounds):  # alternate, so load changes hit every figure alike
        up.append(time_up(args.nodes))
        runs = time_fixture(args.nodes, 3)
        cold.append(runs[0])
        warm.extend(runs[1:])
    print(f"startup to usable, nodes {args.nodes}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    show("controlplane up", up)
    show("fixture, cold (fresh interpreter)", cold)
    show("fixture, warm", warm)


if __name__ == "__main__":
    main()
