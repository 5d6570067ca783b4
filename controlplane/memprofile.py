"""Heap snapshots of a running service, for memory benchmarks (``bench/memory.py``).

Kubernetes components serve Go's heap profile on ``/debug/pprof/heap`` (``--profiling``); the
Python counterpart is :mod:`tracemalloc`, which costs too much to leave on. So it is opt-in per
process: with ``CONTROLPLANE_TRACEMALLOC`` naming the subcommand (a comma list, e.g.
``apiserver,scheduler``) the process handles SIGUSR2: the first one starts tracing
(``CONTROLPLANE_TRACEMALLOC_FRAMES`` frames per allocation, default 1; so start-up runs at full
speed and the snapshots hold only what was allocated since), and every one writes a snapshot to
``$CONTROLPLANE_TRACEMALLOC_DIR/<subcommand>-<pid>-<n>.tracemalloc`` (``tracemalloc.Snapshot.dump``;
default directory: the system temp dir), with the ``.done`` file written after it so a reader
knows it is complete.
"""

from __future__ import annotations

import os
import signal
import tempfile
import tracemalloc
from types import FrameType

_name = [""]
_count = [0]


def maybe_start(subcommand: str) -> bool:
    """Install the SIGUSR2 handler (start tracing, dump a snapshot) when ``CONTROLPLANE_TRACEMALLOC``
    names ``subcommand``; returns whether it did."""
    wanted = {s.strip() for s in os.environ.get("CONTROLPLANE_TRACEMALLOC", "").split(",") if s.strip()}
    if subcommand not in wanted:
        return False
    _name[0] = subcommand
    signal.signal(signal.SIGUSR2, _dump)
    return True


def snapshot_path(directory: str, subcommand: str, pid: int, n: int) -> str:
    """Where the ``n``-th snapshot (from 1) of process ``pid`` is written."""
    return os.path.join(directory, f"{subcommand}-{pid}-{n}.tracemalloc")


def _dump(signum: int, frame: FrameType | None) -> None:
    if not tracemalloc.is_tracing():
        tracemalloc.start(int(os.environ.get("CONTROLPLANE_TRACEMALLOC_FRAMES", "1")))
    _count[0] += 1
    directory = os.environ.get("CONTROLPLANE_TRACEMALLOC_DIR") or tempfile.gettempdir()
    path = snapshot_path(directory, _name[0], os.getpid(), _count[0])
    tracemalloc.take_snapshot().dump(path)
    with open(path + ".done", "w"):
        pass
