"""Garbage-collector policy of the long-running processes: long-lived objects out of full GCs.

Every component keeps the cluster's state in memory as plain dicts and lists: the apiserver's
watch caches, the informer stores of the controller-manager, the scheduler and the kubelet (a
hollow-node kubelet holds the pods of all its nodes). They are acyclic JSON trees, freed by
reference counting, yet CPython's cyclic collector traverses every one of them on each full
(generation 2) collection: with 100,000 cached pods a ~0.5 s pause (10,000 pods: ~75 ms), and a
share of each client process's CPU that grows with the cluster. :class:`GCFreezer` moves the
survivors of every full collection into the permanent generation (:func:`gc.freeze`, from a
:data:`gc.callbacks` hook), so the next full collection only walks what was allocated since.
Objects frozen and later dropped are still freed by reference counting; cyclic garbage among them
(rare: the state of requests alive at a collection) waits for the full sweep every
``sweep_interval`` seconds (:func:`gc.unfreeze` + :func:`gc.collect`), the one long pause left.

This is the Python counterpart of what the Go components get from Go's concurrent collector,
which never stops the program to mark a cache (``runtime/mgc.go``); the CPython side is
:func:`gc.freeze` / :func:`gc.unfreeze` / :data:`gc.callbacks` (``Doc/library/gc.rst``,
``Modules/gcmodule.c``). Each process's command has ``--gc-sweep-interval`` (seconds; 0 leaves
CPython's collector as it is): see :func:`controlplane.service.gc_options`.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from typing import Any

from controlplane.aio import cancel_and_wait
from controlplane.log import event

log = logging.getLogger("gcpolicy")

#: the commands' default ``--gc-sweep-interval``, seconds
DEFAULT_SWEEP_INTERVAL = 600.0

#: the youngest generation's threshold the informer clients (controller-manager, scheduler,
#: kubelet) run with (CPython's default: 700). An informer replaces each stored object with the
#: newly decoded one, and freeing the old one lowers the young generation's count, so young
#: collections come seldom but find every new version alive and promote it: most of the work is
#: the middle and full collections these promotions bring. At 10,000 the flow benchmark
#: (bench/flow.py, 1,000 nodes, 5,000 pods) spent 0.04-0.17 ms less per pod in each client's
#: collections (2 runs against the freezer alone); the apiserver keeps the default, as its one
#: full collection a run then took 0.4-0.5 s of one request's latency.
CLIENT_YOUNG_THRESHOLD = 10_000


class GCFreezer:
    """Freeze after each full collection; unfreeze + collect every ``sweep_interval`` seconds.

    ``sweep_interval``: seconds between full sweeps (> 0; ValueError otherwise). ``start()``
    (inside a running event loop: it creates the sweep task) freezes at once, installs the
    callback and starts the sweep task; ``stop()`` undoes all three (on a freezer not started
    it does nothing, so what another freeze — the zygote's — froze stays frozen). ``freezes``
    counts the full collections whose survivors were frozen; ``started`` (an
    :class:`asyncio.Event`) is set by ``start()`` and cleared by ``stop()``.
    ``young_threshold``: the youngest generation's threshold while started
    (:func:`gc.set_threshold`, the older two kept; None: left as it is), restored by ``stop()``;
    ValueError unless > 0. Logs ``gcpolicy.frozen`` at start and ``gcpolicy.sweep`` after each
    sweep (objects collected, objects frozen, milliseconds).
    """

    def __init__(self, sweep_interval: float = DEFAULT_SWEEP_INTERVAL, young_threshold: int | None = None) -> None:
        if not sweep_interval > 0:
            raise ValueError(f"sweep_interval must be > 0 seconds, not {sweep_interval!r}")
        if young_threshold is not None and young_threshold <= 0:
            raise ValueError(f"young_threshold must be > 0, not {young_threshold!r}")
        self.sweep_interval = sweep_interval
        self.young_threshold = young_threshold
        self._thresholds: tuple[int, ...] | None = None
        self.freezes = 0
        self.started = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def _after_gc(self, phase: str, info: dict[str, Any]) -> None:
        # called by CPython after a collection ends: survivors of a full one are long-lived
        if phase == "stop" and info.get("generation") == 2:
            gc.freeze()
            self.freezes += 1

    def start(self) -> None:
        if self.young_threshold is not None and self._thresholds is None:
            self._thresholds = gc.get_threshold()
            gc.set_threshold(self.young_threshold, *self._thresholds[1:])
        gc.freeze()
        if self._after_gc not in gc.callbacks:
            gc.callbacks.append(self._after_gc)
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="gc-sweeper")
        self.started.set()
        event(log, "gcpolicy.frozen", frozen=gc.get_freeze_count(), sweep_interval=self.sweep_interval,
              thresholds=",".join(map(str, gc.get_threshold())))

    async def stop(self) -> None:
        if not self.started.is_set():
            return
        if self._after_gc in gc.callbacks:
            gc.callbacks.remove(self._after_gc)
        await cancel_and_wait(self._task)
        self._task = None
        self.started.clear()
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)
            self._thresholds = None
        gc.unfreeze()

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.sweep_interval)  # periodic timer
            t0 = time.perf_counter()
            gc.unfreeze()
            found = gc.collect()  # its callback freezes the survivors again
            event(log, "gcpolicy.sweep", collected=found, frozen=gc.get_freeze_count(),
                  ms=round((time.perf_counter() - t0) * 1000, 1))


def freezer(sweep_interval: float, young_threshold: int | None = None) -> GCFreezer | None:
    """A :class:`GCFreezer` sweeping every ``sweep_interval`` seconds (``young_threshold`` as
    there), or None for 0 (or less): what a component's ``gc_sweep_interval`` argument turns into."""
    return GCFreezer(sweep_interval, young_threshold) if sweep_interval > 0 else None
