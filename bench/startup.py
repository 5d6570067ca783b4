"""Benchmark: how long until a whole control plane is usable — the pytest plugin's fixture
start beside ``controlplane up``'s (issue 16: <= 1 s warm on the 2-core machine).

    python bench/startup.py [--rounds 3] [--nodes node01,node02] [--baseline /path/to/other/checkout]

* ``controlplane up``: from the command's start to its "control plane is up" line (etcd, then
  the apiserver, then the rest, one after another; nodes Ready).
* fixture, cold: a fresh interpreter's first :meth:`controlplane.testing.ClusterHandle.start`
  (what the ``cluster`` fixture does: every process at once; apiserver ready, nodes Ready,
  ``default`` ServiceAccount present), its imports included.
* fixture, warm: later starts in the same interpreter (what a second cluster of a session,
  e.g. a ``controlplane`` marker's, costs); the fixture forks every process from the session's
  zygote (:mod:`controlplane.cli.zygote`), started by the first cluster, so cold includes its imports.
* CPU: the seconds of CPU the cluster's processes had used when it was usable (summed over
  them; a warm start's, median) — the figure the machine's load does not stretch.
* ``--baseline DIR``: every figure also for the checkout at ``DIR`` (e.g. main, before a change),
  rounds alternated with this one's, so both see the same load.

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
import json, os, sys, tempfile, time
t0 = time.monotonic()
from controlplane.testing import ClusterHandle, ClusterSpec
nodes = tuple(sys.argv[1].split(","))
tick = os.sysconf("SC_CLK_TCK")
def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick
out, cpus = [], []
for i in range(int(sys.argv[2])):
    t = time.monotonic()
    h = ClusterHandle(tempfile.mkdtemp(prefix="cp-bench-") + "/cp", ClusterSpec(nodes=nodes))
    h.start()
    out.append(time.monotonic() - (t0 if i == 0 else t))
    cpus.append(sum(cpu(s.proc.pid) for s in h._cluster.services))
    h.stop()
print(json.dumps([out, cpus]))
"""


def env_for(checkout: str) -> dict[str, str]:
    """The environment running ``checkout``'s code (its root first on PYTHONPATH)."""
    return dict(os.environ, PYTHONPATH=os.path.abspath(checkout))


def time_up(nodes: str, checkout: str = ROOT) -> float:
    """Seconds from ``controlplane up``'s start to its "control plane is up" line."""
    with tempfile.TemporaryDirectory(prefix="cp-bench-") as tmp:
        t0 = time.monotonic()
        p = subprocess.Popen([sys.executable, "-m", "controlplane", "up", "--data-dir", os.path.join(tmp, "cp"),
                              "--port", "0", "--etcd-port", "0", "--nodes", nodes],
                             stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, cwd=checkout,
                             env=env_for(checkout))
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


def time_fixture(nodes: str, starts: int, checkout: str = ROOT) -> tuple[list[float], list[float]]:
    """([cold, warm, warm...] start seconds, the CPU seconds of each) of one fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", CHILD, nodes, str(starts)], capture_output=True, text=True,
                         cwd=checkout, env=env_for(checkout), timeout=600)
    if out.returncode != 0:
        raise SystemExit(f"fixture start failed: {out.stderr.strip().splitlines()[-1:]}")
    walls, cpus = json.loads(out.stdout.strip().splitlines()[-1])
    return walls, cpus


def show(label: str, values: list[float]) -> None:
    print(f"{label:<44} median {statistics.median(values):5.2f} s   min {min(values):5.2f}   "
          f"max {max(values):5.2f}   ({len(values)} runs)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--nodes", default="node01,node02")
    ap.add_argument("--baseline", default=None, metavar="DIR", help="another checkout to measure beside this one")
    args = ap.parse_args()
    trees = [("", ROOT)] + ([("baseline ", args.baseline)] if args.baseline else [])
    figures: dict[str, dict[str, list[float]]] = {label: {"up": [], "cold": [], "warm": [], "cpu": []}
                                                 for label, _ in trees}
    for _ in range(args.rounds):  # alternate, so load changes hit every figure alike
        for label, tree in trees:
            f = figures[label]
            f["up"].append(time_up(args.nodes, tree))
            walls, cpus = time_fixture(args.nodes, 3, tree)
            f["cold"].append(walls[0])
            f["warm"].extend(walls[1:])
            f["cpu"].extend(cpus[1:])
    print(f"startup to usable, nodes {args.nodes}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    for label, tree in trees:
        f = figures[label]
        if label:
            print(f"baseline: {os.path.abspath(tree)}")
        show(f"{label}controlplane up", f["up"])
        show(f"{label}fixture, cold (fresh interpreter)", f["cold"])
        show(f"{label}fixture, warm", f["warm"])
        show(f"{label}fixture, warm: processes' CPU s", f["cpu"])


if __name__ == "__main__":
    main()
