"""The scheduling queue: ordering, backoff, event-driven moves (scheduling_queue.go)."""

from __future__ import annotations

import asyncio

from components.scheduler.queue import ACTIVE, BACKOFF, SchedulingQueue, is_pod_updated
from controlplane.client.testing import FakeClock


def pod(name: str, priority: int = 0, labels: dict | None = None) -> dict:
    return {"metadata": {"name": name, "namespace": "default", "labels": labels or {}},
            "spec": {"priority": priority, "containers": [{"name": "c"}]}}


EVENTS = {("Node", "Add"): {"NodeAffinity", "NodeResourcesFit"},
          ("Node", "UpdateNodeLabel"): {"NodeAffinity", "InterPodAffinity"},
          ("Pod", "Delete"): {"NodeResourcesFit"}}


def test_priority_then_arrival():
    clock = FakeClock(1000.0)
    q = SchedulingQueue(clock=clock, plugins_for_event=EVENTS)
    for name, prio in [("low1", 0), ("high", 100), ("low2", 0), ("mid", 10)]:
        q.add(pod(name, prio))
        clock.t += 1
    order = [q.pop_nowait().key for _ in range(4)]
    assert order == ["default/high", "default/mid", "default/low1", "default/low2"]
    assert q.pop_nowait() is None


def test_backoff_doubles_to_max():
    clock = FakeClock(1000.0)
    q = SchedulingQueue(clock=clock)
    q.add(pod("p"))
    qp = q.pop_nowait()
    durations = []
    for attempts in range(1, 7):
        qp.attempts = attempts
        durations.append(q.backoff_duration(qp))
    assert durations == [1, 2, 4, 8, 10, 10]


def test_unschedulable_moves_only_on_relevant_event():
    clock = FakeClock(1000.0)
    q = SchedulingQueue(clock=clock, plugins_for_event=EVENTS)
    q.add(pod("p"))
    qp = q.pop_nowait()
    cycle = q.scheduling_cycle
    qp.unschedulable_plugins = {"InterPodAffinity"}
    q.add_unschedulable_if_not_present(qp, cycle)
    assert "default/p" in q.unschedulable
    assert q.move_all_to_active_or_backoff("Pod", "Delete") == 0      # not interested
    assert q.move_all_to_active_or_backoff("Node", "UpdateNodeLabel") == 1
    assert qp.where == BACKOFF                                         # still backing off
    clock.t += 1.0
    q.flush_backoff_completed()
    assert qp.where == ACTIVE and q.pop_nowait() is qp


def test_move_request_during_cycle_goes_to_backoff():
    clock = FakeClock(1000.0)
    q = SchedulingQueue(clock=clock, plugins_for_event=EVENTS)
    q.add(pod("p"))
    qp = q.pop_nowait()
    cycle = q.scheduling_cycle
    q.move_all_to_active_or_backoff("Node", "Add")   # a node arrived while p was being scheduled
    qp.unschedulable_plugins = {"NodeAffinity"}
    q.add_unschedulable_if_not_present(qp, cycle)
    assert qp.where == BACKOFF and "default/p" not in q.unschedulable


def test_update_of_parked_pod_retries_but_status_only_does_not():
    clock = FakeClock(1000.0)
    q = SchedulingQueue(clock=clock)
    old = pod("p")
    q.add(old)
    qp = q.pop_nowait()
    qp.unschedulable_plugins = {"NodeAffinity"}
    q.add_unschedulable_if_not_present(qp, q.scheduling_cycle)
    status_only = {**old, "status": {"conditions": [{"type": "PodScheduled", "status": "False"}]},
                   "metadata": {**old["metadata"], "resourceVersion": "9",
                                "annotations": {"kube-scheduler-simulator.sigs.k8s.io/selected-node": ""}}}
    assert not is_pod_updated(old, status_only)
    q.update(status_only, old)
    assert "default/p" in q.unschedulable
    relabelled = {**old, "metadata": {**old["metadata"], "labels": {"x": "y"}}}
    q.update(relabelled, old)
    assert "default/p" not in q.unschedulable


def test_leftover_flush_and_delete():
    clock = FakeClock(1000.0)
    q = SchedulingQueue(clock=clock, max_in_unschedulable=300)
    q.add(pod("p"))
    qp = q.pop_nowait()
    qp.unschedulable_plugins = {"X"}
    q.add_unschedulable_if_not_present(qp, q.scheduling_cycle)
    clock.t += 299
    assert q.flush_unschedulable_left_over() == 0
    clock.t += 2
    assert q.flush_unschedulable_left_over() == 1
    q.delete(pod("p"))
    assert q.pop_nowait() is None and not q.pods


async def test_pop_waits_for_add():
    q = SchedulingQueue()
    waiter = asyncio.create_task(q.pop())
    await asyncio.sleep(0)
    assert not waiter.done()
    q.add(pod("p"))
    qp = await asyncio.wait_for(waiter, 2)
    assert qp.key == "default/p" and qp.attempts == 1


async def test_backoff_timer_reactivates_pod():
    q = SchedulingQueue(initial_backoff=0.05, max_backoff=0.1)
    q.add(pod("p"))
    qp = q.pop_nowait()
    q.add_unschedulable_if_not_present(qp, q.scheduling_cycle, error=True)
    assert qp.where == BACKOFF
    again = await asyncio.wait_for(q.pop(), 2)
    assert again is qp and qp.attempts == 2
