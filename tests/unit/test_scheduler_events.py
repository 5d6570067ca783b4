"""The scheduler's EventRecorder mode: a bounded queue written by a few writers (so a
burst of Scheduled events leaves the connection pool to the bindings); a full queue
drops events, as client-go's broadcaster (``watch.DropIfChannelFull``)."""

from __future__ import annotations

import asyncio

from controlplane.client.events import EventRecorder


class SlowClient:
    """Counts concurrent creates; each waits until the test opens the gate."""

    def __init__(self, target: int = 0) -> None:
        self.target = target
        self.reached = asyncio.Event()  # set once ``target`` creates are in flight
        self.in_flight = 0
        self.peak = 0
        self.created: list[str] = []
        self.gate = asyncio.Event()

    async def create(self, res, obj, ns=None):
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        if self.in_flight == self.target:
            self.reached.set()
        try:
            await self.gate.wait()
            self.created.append(obj["involvedObject"]["name"])
            return obj
        finally:
            self.in_flight -= 1


def pod(i: int) -> dict:
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"}}


async def test_bounded_writers_write_every_event_with_few_in_flight():
    c = SlowClient(target=3)
    rec = EventRecorder(c, "default-scheduler", max_in_flight=3, queue_size=100)
    for i in range(50):
        rec.event(pod(i), "Normal", "Scheduled", f"Successfully assigned default/p{i} to n1")
    await asyncio.wait_for(c.reached.wait(), 5)
    c.gate.set()
    await asyncio.wait_for(rec.flush(), 5)
    assert c.peak == 3
    assert sorted(c.created) == sorted(f"p{i}" for i in range(50))
    assert rec.dropped == 0


async def test_full_queue_drops_events():
    c = SlowClient()
    rec = EventRecorder(c, "default-scheduler", max_in_flight=1, queue_size=2)
    for i in range(10):
        rec.event(pod(i), "Normal", "Scheduled", "m")
    # one may be taken by the writer before the queue fills; the rest beyond 2 drop
    assert rec.dropped >= 7
    c.gate.set()
    await asyncio.wait_for(rec.flush(), 5)
    assert len(c.created) == 10 - rec.dropped

