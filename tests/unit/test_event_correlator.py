"""The EventRecorder's correlator, as client-go's ``tools/record/events_cache.go``:
aggregation of similar events (10 within 10 minutes), de-duplication into count
patches, and the per source + object spam filter (burst 25, one per 5 minutes)."""

from __future__ import annotations

import asyncio

from controlplane.client.events import AGGREGATE_PREFIX, EventCorrelator, EventRecorder
from controlplane.client.rest import ApiError


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class EventsClient:
    """Stores Events by name; records each call as (verb, name, body)."""

    def __init__(self) -> None:
        self.events: dict[str, dict] = {}
        self.calls: list[tuple[str, str, dict]] = []
        self.rv = 0

    async def create(self, res, obj, ns=None):
        name = obj["metadata"]["name"]
        self.calls.append(("create", name, obj))
        self.rv += 1
        self.events[name] = {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self.rv)}}
        return self.events[name]

    async def patch(self, res, name, patch, ns=None, *, patch_type="merge", subresource=None):
        self.calls.append(("patch", name, patch))
        if name not in self.events:
            raise ApiError(404, "NotFound", f'events "{name}" not found')
        self.rv += 1
        ev = self.events[name]
        self.events[name] = {**ev, **patch, "metadata": {**ev["metadata"], "resourceVersion": str(self.rv)}}
        return self.events[name]


def rs() -> dict:
    return {"kind": "ReplicaSet", "apiVersion": "apps/v1",
            "metadata": {"name": "web-1", "namespace": "default", "uid": "u-rs"}}


def recorder(clock: Clock | None = None) -> tuple[EventRecorder, EventsClient]:
    c = EventsClient()
    return EventRecorder(c, "replicaset-controller", correlator=EventCorrelator(clock or Clock())), c


async def record(rec: EventRecorder, *args: str) -> None:
    rec.event(rs(), *args)
    await asyncio.wait_for(rec.flush(), 5)


async def test_identical_event_is_a_count_patch_of_the_first():
    rec, c = recorder()
    await record(rec, "Normal", "SuccessfulDelete", "Deleted pod: a")
    await record(rec, "Normal", "SuccessfulDelete", "Deleted pod: a")
    assert [v for v, _, _ in c.calls] == ["create", "patch"]
    (ev,) = c.events.values()
    assert ev["count"] == 2 and ev["message"] == "Deleted pod: a"
    assert c.calls[1][2]["count"] == 2 and "lastTimestamp" in c.calls[1][2]


async def test_tenth_similar_event_is_combined_and_later_ones_patch_it():
    rec, c = recorder()
    for i in range(12):
        await record(rec, "Normal", "SuccessfulCreate", f"Created pod: p{i}")
    creates = [b for v, _, b in c.calls if v == "create"]
    assert [b["message"] for b in creates] == [f"Created pod: p{i}" for i in range(9)] + \
        [AGGREGATE_PREFIX + "Created pod: p9"]
    patches = [b for v, _, b in c.calls if v == "patch"]
    assert [p["count"] for p in patches] == [2, 3]
    assert patches[-1]["message"] == AGGREGATE_PREFIX + "Created pod: p11"
    assert len(c.events) == 10


async def test_similar_events_ten_minutes_apart_are_not_combined():
    clock = Clock()
    rec, c = recorder(clock)
    for i in range(12):
        clock.t += 601
        await record(rec, "Normal", "SuccessfulCreate", f"Created pod: p{i}")
    assert not any(b["message"].startswith(AGGREGATE_PREFIX) for _, _, b in c.calls)


async def test_spam_filter_allows_a_burst_of_25_per_object_then_one_per_five_minutes():
    clock = Clock()
    rec, c = recorder(clock)
    for i in range(30):
        await record(rec, "Normal", f"Reason{i}", "m")
    assert len(c.calls) == 25 and rec.filtered == 5
    clock.t += 300
    await record(rec, "Normal", "Again", "m")
    await record(rec, "Normal", "AgainTooSoon", "m")
    assert len(c.calls) == 26 and rec.filtered == 6


async def test_spam_filter_is_per_object():
    rec, c = recorder()
    for i in range(25):
        await record(rec, "Normal", f"Reason{i}", "m")
    other = {**rs(), "metadata": {**rs()["metadata"], "name": "web-2", "uid": "u-rs2"}}
    rec.event(other, "Normal", "Reason0", "m")
    await asyncio.wait_for(rec.flush(), 5)
    assert len(c.calls) == 26 and rec.filtered == 0


async def test_patch_of_a_deleted_event_creates_it_again():
    rec, c = recorder()
    await record(rec, "Warning", "FailedCreate", "quota")
    c.events.clear()
    await record(rec, "Warning", "FailedCreate", "quota")
    assert [v for v, _, _ in c.calls] == ["create", "patch", "create"]
    (ev,) = c.events.values()
    assert ev["count"] == 2 and "resourceVersion" not in c.calls[-1][2]["metadata"]


class GatedEventsClient(EventsClient):
    """Holds every create until :attr:`gate` is set (a create still in flight); the reasons of
    the creates sent so far in :attr:`sent`."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.sent: list[str] = []

    async def create(self, res, obj, ns=None):
        self.sent.append(obj["reason"])
        await self.gate.wait()
        return await super().create(res, obj, ns)


async def test_count_patch_waits_for_the_create_still_in_flight():
    c = GatedEventsClient()
    rec = EventRecorder(c, "replicaset-controller", correlator=EventCorrelator(Clock()))
    rec.event(rs(), "Normal", "SuccessfulDelete", "Deleted pod: a")
    rec.event(rs(), "Normal", "SuccessfulDelete", "Deleted pod: a")
    await asyncio.sleep(0)  # both writes started: the create waits at the gate, the patch behind it
    assert c.sent == ["SuccessfulDelete"] and c.calls == []
    c.gate.set()
    await asyncio.wait_for(rec.flush(), 5)
    assert [v for v, _, _ in c.calls] == ["create", "patch"]
    (ev,) = c.events.values()
    assert ev["count"] == 2


async def test_writes_of_different_events_do_not_wait_for_each_other():
    c = GatedEventsClient()
    rec = EventRecorder(c, "replicaset-controller", correlator=EventCorrelator(Clock()))
    rec.event(rs(), "Normal", "SuccessfulDelete", "Deleted pod: a")
    await asyncio.sleep(0)
    rec.event(rs(), "Normal", "SuccessfulDelete", "Deleted pod: a")  # a patch, behind the create
    rec.event(rs(), "Warning", "FailedCreate", "quota")  # a create of another event
    await asyncio.sleep(0)
    assert c.sent == ["SuccessfulDelete", "FailedCreate"]  # the other event's create is not held back
    c.gate.set()
    await asyncio.wait_for(rec.flush(), 5)
    assert sorted(v for v, _, _ in c.calls) == ["create", "create", "patch"]
    assert len(rec._in_flight) == 0


async def test_a_cancelled_waiting_write_passes_its_turn_on():
    c = GatedEventsClient()
    rec = EventRecorder(c, "replicaset-controller", correlator=EventCorrelator(Clock()))
    tasks: list[asyncio.Task] = []
    for _ in range(3):  # a create, then two count patches waiting behind it
        before = set(rec._tasks)
        rec.event(rs(), "Normal", "SuccessfulDelete", "Deleted pod: a")
        (task,) = rec._tasks - before
        tasks.append(task)
    await asyncio.sleep(0)
    tasks[1].cancel()  # the first patch, while it waits
    c.gate.set()
    await asyncio.wait_for(rec.flush(), 5)
    assert [v for v, _, _ in c.calls] == ["create", "patch"]
    assert c.events[c.calls[0][1]]["count"] == 3 and rec._in_flight == {}
