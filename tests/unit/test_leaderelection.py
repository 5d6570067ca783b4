"""Leader election on a Lease against an in-memory fake apiserver with resourceVersion
conflicts: create, renew, expiry takeover (observed time), 409 on racing updates,
release on cancel, and losing leadership when renewals fail."""

from __future__ import annotations

import asyncio
import copy
import re

import pytest

from controlplane.api.resources import LEASES
from controlplane.apitime import format_micro_time
from controlplane.client.leaderelection import LeaderElector
from controlplane.client.rest import ApiError
from controlplane.client.testing import FakeClient, FakeClock

MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def spec(api: FakeClient) -> dict:
    """The stored kube-scheduler Lease's spec."""
    return api.stored(LEASES, "kube-scheduler", "kube-system")["spec"]


def down(api: FakeClient) -> None:
    """Every later get and update of a Lease answers 503 (create still works)."""
    err = ApiError(503, "ServiceUnavailable", "down")
    api.fail("get", "leases", err)
    api.fail("update", "leases", err)


def elector(api, ident, clock=None, **kw):
    kw.setdefault("lease_duration", 15)
    kw.setdefault("renew_deadline", 10)
    kw.setdefault("retry_period", 2)
    return LeaderElector(api, "kube-system", "kube-scheduler", ident,
                         clock=clock or FakeClock(1000.0), **kw)


async def test_create_renew_and_held_by_other():
    api, ca, cb = FakeClient(), FakeClock(1000.0), FakeClock(1000.0)
    a, b = elector(api, "a", ca), elector(api, "b", cb)
    assert await a.try_acquire_or_renew()
    s = spec(api)
    assert s["holderIdentity"] == "a" and s["leaseDurationSeconds"] == 15 and s["leaseTransitions"] == 0
    assert MICRO.match(s["acquireTime"]) and MICRO.match(s["renewTime"])
    acquired = s["acquireTime"]
    assert not await b.try_acquire_or_renew()
    assert b.get_leader() == "a"
    ca.t += 5
    assert await a.try_acquire_or_renew()  # renew keeps acquireTime and transitions
    assert spec(api)["acquireTime"] == acquired and spec(api)["leaseTransitions"] == 0
    # b saw a changed record at its own time: the lease is not expired for b
    cb.t += 14
    assert not await b.try_acquire_or_renew()


async def test_expired_lease_is_taken_over_with_a_transition():
    api, ca, cb = FakeClient(), FakeClock(1000.0), FakeClock(1000.0)
    a, b = elector(api, "a", ca), elector(api, "b", cb)
    assert await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()  # b observes a's record now
    cb.t += 15.5  # a has not renewed for longer than leaseDurationSeconds, by b's clock
    assert await b.try_acquire_or_renew()
    s = spec(api)
    assert s["holderIdentity"] == "b" and s["leaseTransitions"] == 1
    ca.t += 20
    assert not await a.try_acquire_or_renew()  # a sees b's fresh record: not expired for a


async def test_racing_updates_conflict():
    api, ca, cb = FakeClient(), FakeClock(1000.0), FakeClock(1000.0)
    a, b = elector(api, "a", ca), elector(api, "b", cb)
    assert await a.try_acquire_or_renew()
    lease = await api.get(LEASES, "kube-scheduler", "kube-system")
    assert await a.try_acquire_or_renew()  # moves the resourceVersion on
    lease["spec"]["holderIdentity"] = "b"
    with pytest.raises(ApiError) as e:
        await api.update(LEASES, lease)
    assert e.value.code == 409
    # an elector whose update hits 409 reports a failed round
    cb.t += 100
    stale = api.prepend_reactor("get", "leases", lambda action: (True, copy.deepcopy(lease)))
    assert not await b.try_acquire_or_renew()
    api.remove_reactor(stale)
    assert spec(api)["holderIdentity"] == "a"


def test_invalid_durations():
    with pytest.raises(ValueError):
        elector(FakeClient(), "a", lease_duration=10, renew_deadline=10)
    with pytest.raises(ValueError):
        elector(FakeClient(), "a", renew_deadline=2, retry_period=2)


async def test_run_release_on_cancel_hands_over_at_once():
    api = FakeClient()
    kw = dict(lease_duration=30, renew_deadline=1.0, retry_period=0.05)
    import time
    a = LeaderElector(api, "kube-system", "kube-scheduler", "a", **kw, clock=time.monotonic)
    b = LeaderElector(api, "kube-system", "kube-scheduler", "b", **kw, clock=time.monotonic)
    started = asyncio.Event()
    stopped = []

    async def lead_a():
        started.set()
        await asyncio.Event().wait()

    ta = asyncio.create_task(a.run(lead_a, lambda: stopped.append("a")))
    await asyncio.wait_for(started.wait(), 5)
    b_started = asyncio.Event()

    async def lead_b():
        b_started.set()
        await asyncio.Event().wait()

    tb = asyncio.create_task(b.run(lead_b))
    await asyncio.wait_for(a.is_leader.wait(), 5)
    assert not b.is_leader.is_set()
    ta.cancel()
    await asyncio.gather(ta, return_exceptions=True)
    assert stopped == ["a"]
    # released: b takes over without waiting 30 s for expiry
    await asyncio.wait_for(b_started.wait(), 5)
    assert spec(api)["holderIdentity"] == "b" and spec(api)["leaseTransitions"] == 1
    tb.cancel()
    await asyncio.gather(tb, return_exceptions=True)


async def test_leadership_lost_when_renewals_fail():
    api = FakeClient()
    import time
    a = LeaderElector(api, "kube-system", "kube-scheduler", "a", lease_duration=1.0,
                      renew_deadline=0.3, retry_period=0.05, clock=time.monotonic)
    cancelled = asyncio.Event()

    async def lead():
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    stopped = asyncio.Event()
    t = asyncio.create_task(a.run(lead, stopped.set))
    await asyncio.wait_for(a.is_leader.wait(), 5)
    down(api)
    await asyncio.wait_for(stopped.wait(), 5)
    assert cancelled.is_set() and a.lost.is_set()
    await asyncio.wait_for(t, 5)


def test_micro_time_shape():
    assert format_micro_time(1796000523.123456) == "2026-11-30T01:02:03.123456Z"
