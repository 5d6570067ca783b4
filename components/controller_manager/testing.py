"""Controller-manager test helpers on the shared fake API client
(:mod:`controlplane.client.testing`): a ControllerContext on a fresh
:class:`~controlplane.client.testing.FakeClient` (:func:`fake_context`), and
:func:`settle` to run controllers' queues dry.
"""

from __future__ import annotations

import time
from typing import Any

from controlplane.client.testing import FakeClient, FakeRecorder, FakeTracer, RecordedEvent


def fake_context(config: Any = None, clock: Any = None) -> tuple[FakeClient, Any, list[RecordedEvent]]:
    """A fresh :class:`FakeClient` and a ControllerContext on it (a :class:`FakeTracer`, each
    controller's events appended to the returned list by a :class:`FakeRecorder` named after
    it; ``config``: a ControllerConfig, ``clock``: e.g. a FakeClock). Returns
    ``(client, ctx, events)``."""
    from .config import ControllerConfig
    from .controller import ControllerContext
    client = FakeClient(user_agent="kube-controller-manager/test")
    events: list[RecordedEvent] = []
    ctx = ControllerContext(client, client.informers, FakeTracer(),
                            recorder_factory=lambda c: FakeRecorder(c, events),
                            config=config or ControllerConfig(), clock=clock or time.time)
    return client, ctx, events


async def settle(*controllers: Any, rounds: int = 200) -> None:
    """Process the controllers' queued keys (``process_next``) until every queue is
    empty; AssertionError if they are still busy after ``rounds`` passes."""
    for _ in range(rounds):
        busy = [c for c in controllers if len(c.queue)]
        if not busy:
            return
        for c in busy:
            await c.process_next()
    raise AssertionError("controllers did not settle")
