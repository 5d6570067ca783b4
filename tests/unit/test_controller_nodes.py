"""Node lifecycle, taint eviction and pod GC controllers on the fake API, with an
injectable clock (no sleeps)."""

from __future__ import annotations

from components.controller_manager.config import ControllerConfig
from components.controller_manager.nodelifecycle import NodeLifecycleController
from components.controller_manager.podgc import PodGCController
from components.controller_manager.replicaset import REPLICASET_KIND, ReplicaController
from components.controller_manager.tainteviction import TaintEvictionController
from components.controller_manager.testing import fake_context, settle
from controlplane.api.resources import LEASES, NODES, PODS, REPLICASETS
from controlplane.client.testing import FakeClock

UNREACHABLE = "node.kubernetes.io/unreachable"
NOT_READY = "node.kubernetes.io/not-ready"


def grace_periods(client) -> list[tuple]:
    """``(resource, namespace, name, gracePeriodSeconds)`` of every DELETE sent."""
    return [(a.resource, a.namespace, a.name, a.options.get("gracePeriodSeconds")) for a in client.actions("delete")]


def env(**cfg):
    clock = FakeClock()
    client, ctx, events = fake_context(ControllerConfig(**cfg), clock)
    return client, ctx, events, clock


def node(name="node01", ready="True", heartbeat="2024-01-01T00:00:00Z", taints=None, **spec):
    conds = []
    if ready is not None:
        conds = [{"type": t, "status": s, "lastHeartbeatTime": heartbeat, "lastTransitionTime": heartbeat,
                  "reason": "Kubelet", "message": "ok"}
                 for t, s in (("MemoryPressure", "False"), ("DiskPressure", "False"),
                              ("PIDPressure", "False"), ("Ready", ready))]
    return {"metadata": {"name": name}, "spec": {**({"taints": taints} if taints else {}), **spec},
            "status": {"conditions": conds}}


def lease(name="node01", renew="2024-01-01T00:00:00.000000Z"):
    return {"metadata": {"name": name, "namespace": "kube-node-lease"},
            "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": renew}}


def pod(name, node_name="node01", tolerations=None, ready=True, **extra):
    p = {"metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
         "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "nginx"}],
                  **({"tolerations": tolerations} if tolerations else {})},
         "status": {"phase": "Running", "podIP": f"10.244.1.{len(name)}",
                    "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}
    p.update(extra)
    return p


def conds(client, name="node01"):
    return {c["type"]: c for c in client.objects[(NODES, name)]["status"]["conditions"]}


def taints(client, name="node01"):
    return {(t["key"], t["effect"]): t for t in client.objects[(NODES, name)]["spec"].get("taints") or []}


async def renew(client, name, renew_time):
    cur = await client.get(LEASES, name, "kube-node-lease")
    cur["spec"]["renewTime"] = renew_time
    await client.update(LEASES, cur)


# -- node lifecycle -----------------------------------------------------------------------
async def test_stale_node_becomes_unknown_tainted_and_its_pods_not_ready():
    client, ctx, events, clock = env()
    nlc = NodeLifecycleController(ctx)
    client.seed(NODES, node())
    client.seed(LEASES, lease())
    client.seed(PODS, pod("a"))
    client.seed(PODS, pod("b", node_name="node02"))
    await nlc.monitor_node_health()          # first sight: probe time = now
    await settle(nlc)
    clock.advance(30)
    await renew(client, "node01", "2024-01-01T00:00:30.000000Z")   # the lease keeps it alive
    await nlc.monitor_node_health()
    clock.advance(39)
    await nlc.monitor_node_health()
    await settle(nlc)
    assert conds(client)["Ready"]["status"] == "True" and taints(client) == {}
    clock.advance(2)                          # 41 s since the last renewal > 40 s grace
    await nlc.monitor_node_health()
    await settle(nlc)
    c = conds(client)
    for typ in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure"):
        assert c[typ]["status"] == "Unknown"
        assert c[typ]["reason"] == "NodeStatusUnknown"
        assert c[typ]["message"] == "Kubelet stopped posting node status."
    assert c["Ready"]["lastHeartbeatTime"] == "2024-01-01T00:00:00Z"   # kept: the kubelet's last one
    t = taints(client)
    assert set(t) == {(UNREACHABLE, "NoSchedule"), (UNREACHABLE, "NoExecute")}
    assert t[(UNREACHABLE, "NoExecute")].get("timeAdded") and "timeAdded" not in t[(UNREACHABLE, "NoSchedule")]
    assert ("node-controller", "node01", "Normal", "NodeNotReady", "Node node01 status is now: NodeNotReady", None) \
        in events
    ready = lambda n: next(x for x in client.objects[(PODS, f"default/{n}")]["status"]["conditions"]
                           if x["type"] == "Ready")["status"]
    assert ready("a") == "False" and ready("b") == "True"
    assert any("status" in a.patch for a in client.actions("patch", "nodes"))
    # a second pass changes nothing and records no second event
    n_calls, n_events = len(client.writes()), len(events)
    clock.advance(5)
    await nlc.monitor_node_health()
    await settle(nlc)
    assert len(client.writes()) == n_calls and len(events) == n_events


async def test_node_ready_again_loses_taints_and_not_ready_gets_not_ready_taints():
    client, ctx, events, clock = env(node_monitor_grace_period=4)
    nlc = NodeLifecycleController(ctx)
    client.seed(NODES, node(taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]))
    await nlc.monitor_node_health()
    clock.advance(5)
    await nlc.monitor_node_health()
    await settle(nlc)
    assert (UNREACHABLE, "NoExecute") in taints(client) and ("dedicated", "NoSchedule") in taints(client)
    # the kubelet comes back and posts Ready True with a new heartbeat
    st = node(heartbeat="2024-01-01T00:01:00Z")["status"]
    await client.patch(NODES, "node01", {"status": st}, subresource="status")
    await settle(nlc)
    assert set(taints(client)) == {("dedicated", "NoSchedule")}
    await nlc.monitor_node_health()
    await settle(nlc)
    assert conds(client)["Ready"]["status"] == "True"
    # the kubelet itself reports Ready False
    st = node(ready="False", heartbeat="2024-01-01T00:01:10Z")["status"]
    await client.patch(NODES, "node01", {"status": st}, subresource="status")
    await settle(nlc)
    assert set(taints(client)) == {("dedicated", "NoSchedule"), (NOT_READY, "NoSchedule"), (NOT_READY, "NoExecute")}


async def test_node_that_never_posted_ready_gets_startup_grace_and_cordon_taint():
    client, ctx, events, clock = env()
    nlc = NodeLifecycleController(ctx)
    client.seed(NODES, node(ready=None, unschedulable=True))
    await nlc.monitor_node_health()
    clock.advance(50)                  # > 40 s but < the 60 s startup grace
    await nlc.monitor_node_health()
    await settle(nlc)
    assert "Ready" not in {c["type"] for c in client.objects[(NODES, "node01")]["status"]["conditions"]}
    assert set(taints(client)) == {("node.kubernetes.io/unschedulable", "NoSchedule")}
    clock.advance(11)
    await nlc.monitor_node_health()
    await settle(nlc)
    c = conds(client)
    assert c["Ready"]["status"] == "Unknown" and c["Ready"]["reason"] == "NodeStatusNeverUpdated"
    assert (UNREACHABLE, "NoExecute") in taints(client)
    assert not [e for e in events if e[3] == "NodeNotReady"]   # Ready was never True


# -- taint eviction -------------------------------------------------------------------------
def tainted_node(key=UNREACHABLE):
    return node(ready="Unknown", taints=[{"key": key, "effect": "NoSchedule"},
                                         {"key": key, "effect": "NoExecute", "timeAdded": "2024-01-01T00:00:00Z"}])


def tol(seconds=None, key=UNREACHABLE):
    t = {"key": key, "operator": "Exists", "effect": "NoExecute"}
    if seconds is not None:
        t["tolerationSeconds"] = seconds
    return [t]


async def test_untolerated_pod_is_deleted_at_once_tolerating_ones_after_their_seconds():
    client, ctx, events, clock = env()
    te = TaintEvictionController(ctx)
    client.seed(NODES, node())
    client.seed(PODS, pod("now"))
    client.seed(PODS, pod("later", tolerations=tol(2)))
    client.seed(PODS, pod("default", tolerations=tol(300)))
    client.seed(PODS, pod("forever", tolerations=tol()))
    client.seed(PODS, pod("elsewhere", node_name="node02"))
    await settle(te)
    assert len(client.all(PODS)) == 5            # no taints yet
    await client.patch(NODES, "node01", {"spec": tainted_node()["spec"]})
    await settle(te)
    left = {p["metadata"]["name"] for p in client.all(PODS)}
    assert left == {"later", "default", "forever", "elsewhere"}
    assert ("taint-eviction-controller", "now", "Normal", "TaintManagerEviction",
            "Marking for deletion Pod default/now", None) in events
    status_update = next(a.object for a in client.actions("update") if a.subresource == "status" and a.name == "now")
    dt = next(c for c in status_update["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert dt["status"] == "True" and dt["reason"] == "DeletionByTaintManager"
    clock.advance(1.5)
    assert await te.fire_due() == 0
    clock.advance(1)
    assert await te.fire_due() == 1
    await settle(te)
    assert {p["metadata"]["name"] for p in client.all(PODS)} == {"default", "forever", "elsewhere"}
    clock.advance(297)                           # 299.5 s after the taint
    assert await te.fire_due() == 0
    clock.advance(1)
    assert await te.fire_due() == 1
    await settle(te)
    assert {p["metadata"]["name"] for p in client.all(PODS)} == {"forever", "elsewhere"}


async def test_scheduled_eviction_is_cancelled_when_the_taint_goes():
    client, ctx, events, clock = env()
    te = TaintEvictionController(ctx)
    client.seed(NODES, tainted_node())
    client.seed(PODS, pod("p", tolerations=tol(10)))
    await settle(te)
    assert "default/p" in te.scheduled
    await client.patch(NODES, "node01", {"spec": {"taints": None}})
    await settle(te)
    assert te.scheduled == {}
    assert ("taint-eviction-controller", "p", "Normal", "TaintManagerEviction",
            "Cancelling deletion of Pod default/p", None) in events
    clock.advance(20)
    assert await te.fire_due() == 0
    assert len(client.all(PODS)) == 1


async def test_evicted_replicaset_pods_are_recreated():
    client, ctx, events, clock = env()
    te = TaintEvictionController(ctx)
    rc = ReplicaController(ctx, REPLICASET_KIND)
    client.seed(NODES, node())
    client.seed(REPLICASETS, {"metadata": {"name": "web", "namespace": "default"},
                              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                                       "template": {"metadata": {"labels": {"app": "web"}},
                                                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    await settle(rc, te)
    client.set_pods_ready()                      # bound to node01
    first = {p["metadata"]["name"] for p in client.all(PODS)}
    await client.patch(NODES, "node01", {"spec": tainted_node()["spec"]})
    await settle(rc, te)
    now = {p["metadata"]["name"] for p in client.all(PODS)}
    assert len(now) == 2 and not (now & first)


# -- pod GC -----------------------------------------------------------------------------------
async def test_orphaned_pods_are_force_deleted_after_quarantine():
    client, ctx, events, clock = env()
    gc = PodGCController(ctx)
    client.seed(NODES, node("node01"))
    client.seed(PODS, pod("alive"))
    client.seed(PODS, pod("orphan", node_name="gone"))
    client.seed(PODS, pod("back", node_name="node03"))
    assert (await gc.gc())["orphaned"] == 0      # quarantined, not yet deleted
    clock.advance(30)
    client.seed(NODES, node("node03"))           # it comes back within the quarantine
    clock.advance(11)
    assert (await gc.gc())["orphaned"] == 1
    assert {p["metadata"]["name"] for p in client.all(PODS)} == {"alive", "back"}
    assert ("pods", "default", "orphan", 0) in grace_periods(client)
    upd = next(a.object for a in client.actions("update") if a.subresource == "status" and a.name == "orphan")
    assert upd["status"]["phase"] == "Failed"
    assert {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
            "message": "PodGC: node no longer exists"}.items() <= \
        next(c for c in upd["status"]["conditions"] if c["type"] == "DisruptionTarget").items()


async def test_terminated_pods_above_threshold_oldest_first_and_unscheduled_terminating():
    client, ctx, events, clock = env(terminated_pod_gc_threshold=2)
    gc = PodGCController(ctx)
    client.seed(NODES, node())
    for i in range(4):
        client.seed(PODS, pod(f"done{i}", status={"phase": "Succeeded"}))
        gc.pods.store[f"default/done{i}"]["metadata"]["creationTimestamp"] = f"2024-01-01T00:00:0{i}Z"
    client.seed(PODS, {"metadata": {"name": "stuck", "namespace": "default", "finalizers": ["x/y"]},
                       "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    await client.delete(PODS, "stuck", "default")   # terminating, never scheduled
    out = await gc.gc()
    assert out["terminated"] == 2 and out["unscheduled"] == 1
    names = {p["metadata"]["name"] for p in client.all(PODS)}
    assert {"done2", "done3"} <= names and not ({"done0", "done1"} & names)
    assert ("pods", "default", "stuck", 0) in grace_periods(client)


async def test_pod_reported_ready_on_an_unknown_node_is_marked_not_ready():
    client, ctx, events, clock = env()
    nlc = NodeLifecycleController(ctx)
    client.seed(NODES, node(ready="Unknown"))
    client.seed(NODES, node("node02"))
    client.seed(PODS, pod("late"))                       # e.g. a status written before the node went
    client.seed(PODS, pod("fine", node_name="node02"))
    await settle(nlc)
    st = {p["metadata"]["name"]: next(c["status"] for c in p["status"]["conditions"] if c["type"] == "Ready")
          for p in client.all(PODS)}
    assert st == {"late": "False", "fine": "True"}
    assert set(taints(client)) == {(UNREACHABLE, "NoSchedule"), (UNREACHABLE, "NoExecute")}
    assert taints(client, "node02") == {}


async def test_a_taint_patch_that_conflicts_is_retried_against_a_fresh_read_in_the_same_sync():
    """AddOrUpdateTaintOnNode's RetryOnConflict: the 409 is resolved within one sync (a GET, then
    the patch again), not by a chain of queue retries from the same stale cache."""
    from controlplane.client.testing import conflict
    client, ctx, events, clock = env(node_monitor_grace_period=4)
    nlc = NodeLifecycleController(ctx)
    nlc.taint_update_backoff = 0.0
    client.seed(NODES, node(ready="False"))
    client.fail("patch", "nodes", conflict(NODES, "node01"), times=2, subresource="")
    gets = len(client.actions("get"))
    await nlc._sync_taints("node01")
    assert set(taints(client)) == {(NOT_READY, "NoSchedule"), (NOT_READY, "NoExecute")}
    assert len([a for a in client.actions("patch") if a.resource == "nodes"]) == 3
    assert len(client.actions("get")) - gets == 2, "each retry reads the node fresh"


async def test_a_taint_patch_that_conflicts_five_times_raises_for_the_queue_to_retry():
    from controlplane.client.rest import ApiError
    from controlplane.client.testing import conflict
    client, ctx, events, clock = env()
    nlc = NodeLifecycleController(ctx)
    nlc.taint_update_backoff = 0.0
    client.seed(NODES, node(ready="False"))
    client.fail("patch", "nodes", conflict(NODES, "node01"), subresource="")
    try:
        await nlc._sync_taints("node01")
    except ApiError as e:
        assert e.code == 409
    else:
        raise AssertionError("five conflicts in a row must reach the queue")
    assert len([a for a in client.actions("patch") if a.resource == "nodes"]) == 5
