"""The shape every controller shares: informer handlers enqueue keys into a
rate-limited work queue; workers pop keys and call :meth:`Controller.sync`;
a failed sync is retried with per-key exponential backoff, a successful one
resets it (client-go's ``processNextWorkItem`` pattern, e.g.
``pkg/controller/replicaset/replica_set.go`` worker / processNextWorkItem).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from controlplane.client.events import EventRecorder
from controlplane.client.factory import SharedInformers
from controlplane.client.informer import SharedIndexInformer
from controlplane.client.rest import ApiError
from controlplane.client.workqueue import ShutDown, WorkQueue
from controlplane.log import event

from .config import ControllerConfig

log = logging.getLogger("controller-manager")

#: retries of one key before it is dropped (until its next event) — maxRetries in the controllers
MAX_RETRIES = 15


@dataclass
class ControllerContext:
    """What the manager hands every controller.

    ``client``: RestClient-like (create/get/list/update/update_status/patch/delete);
    ``informers``: the shared informers; ``tracer``: a TraceEmitter (step records);
    ``recorder(component)``: an EventRecorder for that event source component;
    ``config``: time and threshold settings (:class:`ControllerConfig`);
    ``clock``: wall-clock seconds since the epoch (tests inject a fake one);
    ``metadata_informer(resource)``: builds a metadata-only informer for the garbage
    collector's monitors of resources no other controller watches (kube-controller-manager's
    ``ObjectOrMetadataInformerFactory``); None (the fakes): the monitors use ``informers``.
    """

    client: Any
    informers: SharedInformers[SharedIndexInformer]
    tracer: Any
    recorder_factory: Callable[[str], Any] | None = None
    config: ControllerConfig = field(default_factory=ControllerConfig)
    clock: Callable[[], float] = time.time
    metadata_informer: Callable[[Any], SharedIndexInformer] | None = None
    _recorders: dict[str, Any] = field(default_factory=dict)

    def recorder(self, component: str) -> Any:
        """The EventRecorder whose ``source.component`` is ``component``."""
        r = self._recorders.get(component)
        if r is None:
            make = self.recorder_factory or (lambda c: EventRecorder(self.client, c))
            r = self._recorders[component] = make(component)
        return r


class Controller:
    """Base class: subclasses set ``name`` and implement ``async sync(key)``."""

    name = "controller"
    workers = 5
    #: retries of one key before it is dropped until its next event
    max_retries = MAX_RETRIES
    #: failures logged at INFO, not WARNING (transient by nature)
    expected_errors: tuple[type[Exception], ...] = ()

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self.client = ctx.client
        self.informers = ctx.informers
        self.queue: WorkQueue[str] = WorkQueue(name=self.name)

    def enqueue(self, key: str) -> None:
        self.queue.add(key)

    async def sync(self, key: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    async def process_next(self) -> bool:
        """Handle one key; False once the queue is shut down."""
        try:
            key = await self.queue.get()
        except ShutDown:
            return False
        try:
            await self.sync(key)
            self.queue.forget(key)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a failed sync is retried, never fatal
            level = logging.INFO if (isinstance(e, ApiError) and e.code == 409) or \
                isinstance(e, self.expected_errors) else logging.WARNING
            if self.queue.num_requeues(key) < self.max_retries:
                event(log, "controller.sync_failed", level, controller=self.name, key=key,
                      error=str(e)[:300])
                self.queue.add_rate_limited(key)
            else:
                event(log, "controller.dropped", logging.WARNING, controller=self.name, key=key,
                      error=str(e)[:300])
                self.queue.forget(key)
        finally:
            self.queue.done(key)
        return True

    async def run(self, workers: int | None = None) -> None:
        """Run ``workers`` concurrent workers until cancelled or shut down."""
        async def worker() -> None:
            while await self.process_next():
                pass
        tasks = [asyncio.create_task(worker(), name=f"{self.name}-worker-{i}")
                 for i in range(workers or self.workers)]
        try:
            await asyncio.gather(*tasks)
        finally:
            self.queue.shutdown()
            for t in tasks:
                t.cancel()
