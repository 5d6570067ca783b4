"""The kubelet process's event client: a token bucket (``--event-qps`` / ``--event-burst``) whose
writes reserve their token on arrival and wait once for it, dropping writes beyond its queue."""

from __future__ import annotations

import asyncio

from components.kubelet.kubelet import EventClient


class Recorder:
    """A client that records the order of its creates."""

    def __init__(self) -> None:
        self.created: list[int] = []

    async def create(self, res: object, obj: int, ns: str | None = None) -> int:
        self.created.append(obj)
        return obj


async def test_burst_writes_go_at_once_and_later_ones_in_arrival_order():
    inner = Recorder()
    c = EventClient(inner, qps=1000.0, burst=3)
    done = await asyncio.gather(*(c.create("events", i) for i in range(10)))
    assert done == list(range(10))
    assert inner.created == list(range(10)), "first come, first served"
    assert c.dropped == 0 and c._waiting == 0


async def test_writes_beyond_the_queue_are_dropped_and_a_cancelled_wait_gives_its_token_back():
    inner = Recorder()
    c = EventClient(inner, qps=0.001, burst=2, queue_size=2)
    assert await c.create("events", 0) == 0 and await c.create("events", 1) == 1   # the burst
    waiting = [asyncio.ensure_future(c.create("events", i)) for i in (2, 3)]
    await asyncio.sleep(0)   # let both reach their wait (not a synchronisation on time)
    assert c._waiting == 2
    assert await c.create("events", 4) is None and c.dropped == 1, "the queue is full"
    tokens = c._tokens
    for w in waiting:
        w.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)
    assert c._waiting == 0 and c._tokens >= tokens + 2 - 1e-6
    assert inner.created == [0, 1]


async def test_no_limit_with_zero_qps():
    inner = Recorder()
    c = EventClient(inner, qps=0, burst=1)
    await asyncio.gather(*(c.create("events", i) for i in range(50)))
    assert len(inner.created) == 50
