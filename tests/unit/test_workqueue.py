import asyncio

import pytest

from controlplane.client.workqueue import ShutDown, WorkQueue


async def test_dedup_and_order():
    q = WorkQueue()
    for k in ["a", "b", "a", "c"]:
        q.add(k)
    got = [await q.get() for _ in range(3)]
    assert got == ["a", "b", "c"]


async def test_key_readded_while_processing_is_requeued_after_done():
    q = WorkQueue()
    q.add("a")
    k = await q.get()
    q.add("a")  # while processing
    assert len(q) == 0, "a processing key must not be handed to a second worker"
    q.done(k)
    assert await asyncio.wait_for(q.get(), 1) == "a"


async def test_rate_limited_backoff_grows_and_forget_resets():
    q = WorkQueue(base_delay=0.001)
    q.add_rate_limited("x")
    q.add_rate_limited("x")
    assert q.num_requeues("x") == 2
    assert await asyncio.wait_for(q.get(), 1) == "x"
    q.forget("x")
    assert q.num_requeues("x") == 0


async def test_shutdown_wakes_waiters():
    q = WorkQueue()
    waiter = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    q.shutdown()
    with pytest.raises(ShutDown):
        await asyncio.wait_for(waiter, 1)


async def test_burst_of_adds_wakes_each_waiting_worker_once():
    q = WorkQueue()
    workers = [asyncio.create_task(q.get()) for _ in range(3)]
    await asyncio.sleep(0)   # let every worker block in get()
    for i in range(1000):
        q.add(f"k{i}")
    got = await asyncio.wait_for(asyncio.gather(*workers), 1)
    assert got == ["k0", "k1", "k2"]
    assert len(q) == 997


async def test_woken_worker_cancelled_hands_the_key_to_another():
    q = WorkQueue()
    first = asyncio.create_task(q.get())
    second = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    q.add("a")            # wakes `first`...
    first.cancel()        # ...which is cancelled before it runs
    assert await asyncio.wait_for(second, 1) == "a"
    with pytest.raises(asyncio.CancelledError):
        await first
