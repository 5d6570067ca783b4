"""PreEnqueue and the SchedulingGates plugin: a pod with spec.schedulingGates never
enters activeQ (it waits, gated, among the unschedulable pods, moved by no cluster
event), and an update removing the gates queues it. Sources: schedulinggates/
scheduling_gates.go, backend/queue/scheduling_queue.go (moveToActiveQ, runPreEnqueuePlugins),
registry/core/pod/strategy.go (the SchedulingGated condition)."""

from __future__ import annotations

import copy

import pytest

from components.scheduler.config import parse_config
from components.scheduler.framework import UNSCHEDULABLE_AND_UNRESOLVABLE
from components.scheduler.plugins.schedulinggates import SchedulingGates
from components.scheduler.podinfo import PodInfo
from components.scheduler.queue import ACTIVE, GATED, UNSCHEDULABLE
from components.scheduler.scheduler import Scheduler
from controlplane.client.testing import FakeClock
from tests.unit.test_scheduler_wire import fake_client, node


def pod(name, gates=(), **spec):
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": "default", "uid": "u-" + name, "resourceVersion": "1"},
         "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}
    if gates:
        p["spec"]["schedulingGates"] = [{"name": g} for g in gates]
    return p


def ungate(p, keep=()):
    q = copy.deepcopy(p)
    q["metadata"]["resourceVersion"] = str(int(p["metadata"]["resourceVersion"]) + 1)
    if keep:
        q["spec"]["schedulingGates"] = [{"name": g} for g in keep]
    else:
        q["spec"].pop("schedulingGates", None)
    return q


@pytest.mark.parametrize("gates,message", [
    ((), None),
    (("example.com/a",), "waiting for scheduling gates: [example.com/a]"),
    (("a", "b"), "waiting for scheduling gates: [a b]"),
], ids=["no gates", "one gate", "two gates"])
def test_scheduling_gates_pre_enqueue(gates, message):
    st = SchedulingGates().pre_enqueue(PodInfo(pod("p", gates)))
    if message is None:
        assert st is None
    else:
        assert st.code == UNSCHEDULABLE_AND_UNRESOLVABLE and st.message() == message


def test_default_profile_has_scheduling_gates():
    s = Scheduler(None)
    fwk = s.profiles["default-scheduler"]
    assert [p.name for p in fwk.pre_enqueue_plugins] == ["SchedulingGates"]


def test_gated_pod_is_not_queued_until_gates_are_removed():
    clock = FakeClock(1000.0)
    s = Scheduler(None)
    s.queue.clock = clock
    s.on_node_add(node("node01"))
    g = pod("gated", ("a", "b"))
    s.on_pod_add(g)
    s.on_pod_add(pod("free"))
    qp = s.queue.pods["default/gated"]
    assert qp.gated and qp.where == UNSCHEDULABLE and qp.unschedulable_plugins == {"SchedulingGates"}
    assert qp.gating_message == "waiting for scheduling gates: [a b]"
    assert s.queue.pending()[GATED] == 1 and s.queue.pending()[UNSCHEDULABLE] == 0
    assert s.queue.pop_nowait().key == "default/free"
    assert s.queue.pop_nowait() is None
    # cluster events and the periodic flush leave gated pods alone
    s.on_node_add(node("node02"))
    assert s.queue.move_all_to_active_or_backoff("Pod", "Delete") == 0
    clock.t += 3600
    assert s.queue.flush_unschedulable_left_over() == 0
    assert s.queue.pop_nowait() is None
    # removing one gate of two: still gated, with the new message
    g2 = ungate(g, keep=("b",))
    s.on_pod_update(g, g2)
    assert qp.gated and qp.gating_message == "waiting for scheduling gates: [b]"
    assert s.queue.pop_nowait() is None
    # removing the last gate: activeQ straight away (no backoff: it was never tried)
    g3 = ungate(g2)
    s.on_pod_update(g2, g3)
    assert not qp.gated and qp.where == ACTIVE and not qp.unschedulable_plugins
    popped = s.queue.pop_nowait()
    assert popped.key == "default/gated" and popped.attempts == 1


def test_profile_without_scheduling_gates_queues_gated_pods():
    cfg = parse_config({"profiles": [{"schedulerName": "default-scheduler",
                                      "plugins": {"preEnqueue": {"disabled": [{"name": "SchedulingGates"}]}}}]})
    s = Scheduler(None, cfg)
    assert s.queue.pre_enqueue is None
    s.on_pod_add(pod("gated", ("a",)))
    assert s.queue.pop_nowait().key == "default/gated"


async def test_gated_pod_gets_scheduling_gated_condition_once():
    # the apiserver already wrote gated2's condition: nothing more to write
    p2 = pod("gated2", ("a",))
    p2["status"] = {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}
    c = fake_client(pod("gated", ("a",)), p2, pod("free"))
    s = Scheduler(c)
    s.on_pod_add(pod("gated", ("a",)))
    s.on_pod_add(p2)
    s.on_pod_add(pod("free"))
    await s.wait_idle()
    patches = c.actions("patch")
    assert len(patches) == 1
    act = patches[0]
    assert (act.resource, act.name, act.subresource, act.patch_type) == ("pods", "gated", "status", "strategic")
    cond = act.patch["status"]["conditions"][0]
    assert {k: cond[k] for k in ("type", "status", "reason", "message")} == {
        "type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
        "message": "Scheduling is blocked due to non-empty scheduling gates"}
