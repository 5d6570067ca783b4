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


class GCFreezer:
    """Freeze after each full collection; unfreeze + collect every ``sweep_interval`` seconds.

    ``sweep_interval``: seconds between full sweeps (> 0; ValueError otherwise). ``start()``
    (inside a running event loop: it creates the sweep task) freezes at once, installs the
    callback and starts the sweep task; ``stop()`` undoes all three (on a freezer not started
    it does nothing, so what another freeze — the zygote's — froze stays frozen). ``freezes``
    counts the full collections whose survivors were frozen; ``started`` (an
    :class:`asyncio.Event`) is set by ``start()`` and cleared by ``stop()``. Logs ``gcpolicy.frozen`` at start and
    ``gcpolicy.sweep`` after each sweep (objects collected, objects frozen, milliseconds).
    """

    def __init__(self, sweep_interval: float = DEFAULT_SWEEP_INTERVAL) -> None:
        if not sweep_interval > 0:
            raise ValueError(f"sweep_interval must be > 0 seconds, not {sweep_interval!r}")
        self.sweep_interval = sweep_interval
        self.freezes = 0
        self.started = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def _after_gc(self, phase: str, info: dict[str, Any]) -> None:
        # called by CPython after a collection ends: survivors of a full one are long-lived
        if phase == "stop" and info.get("generation") == 2:
            gc.freeze()
            self.freezes += 1

    def start(self) -> None:
        gc.freeze()
        if self._after_gc not in gc.callbacks:
            gc.callbacks.append(self._after_gc)
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="gc-sweeper")
        self.started.set()
        event(log, "gcpolicy.frozen", frozen=gc.get_freeze_count(), sweep_interval=self.sweep_interval)

    async def stop(self) -> None:
        if not self.started.is_set():
            return
        if self._after_gc in gc.callbacks:
            gc.callbacks.remove(self._after_gc)
        await cancel_and_wait(self._task)
        self._task = None
        self.started.clear()
        gc.unfreeze()

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.sweep_interval)  # periodic timer
            t0 = time.perf_counter()
            gc.unfreeze()
            found = gc.collect()  # its callback freezes the survivors again
            event(log, "gcpolicy.sweep", collected=found, frozen=gc.get_freeze_count(),
                  ms=round((time.perf_counter() - t0) * 1000, 1))


def freezer(sweep_interval: float) -> GCFreezer | None:
    """A :class:`GCFreezer` sweeping every ``sweep_interval`` seconds, or None for 0 (or less):
    what a component's ``gc_sweep_interval`` argument turns into."""
    return GCFreezer(sweep_interval) if sweep_interval > 0 else None
