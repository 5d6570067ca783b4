"""The generic replica controller (ReplicaSet and ReplicationController) against
the in-memory fake API."""

from __future__ import annotations

from components.controller_manager.controller_utils import pods_to_delete, slow_start_batch
from components.controller_manager.expectations import Expectations
from components.controller_manager.replicaset import (
    REPLICASET_KIND,
    REPLICATIONCONTROLLER_KIND,
    ReplicaController,
    calculate_status,
)
from components.controller_manager.testing import fake_context, settle
from controlplane.api.resources import PODS, REPLICASETS, REPLICATIONCONTROLLERS


def make_ctx():
    return fake_context()


def rs(name="myapp-99655c7fd", replicas=3, labels=None):
    labels = labels or {"app": "myapp", "pod-template-hash": "99655c7fd"}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def pods_of(client):
    return client.all(PODS)


async def test_creates_missing_pods_with_owner_refs_and_events():
    client, ctx, events = make_ctx()
    c = ReplicaController(ctx, REPLICASET_KIND)
    owner = client.seed(REPLICASETS, rs())
    await settle(c)
    pods = pods_of(client)
    assert len(pods) == 3
    for p in pods:
        md = p["metadata"]
        assert md["name"].startswith("myapp-99655c7fd-") and len(md["name"]) == len("myapp-99655c7fd-") + 5
        assert md["labels"] == {"app": "myapp", "pod-template-hash": "99655c7fd"}
        assert md["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": "myapp-99655c7fd", "uid": owner["metadata"]["uid"],
                                          "controller": True, "blockOwnerDeletion": True}]
    creates = [e for e in events if e[3] == "SuccessfulCreate"]
    assert len(creates) == 3 and all(e[0] == "replicaset-controller" for e in creates)
    assert {e[4] for e in creates} == {f"Created pod: {p['metadata']['name']}" for p in pods}
    steps = [r[0] for r in ctx.tracer.records]
    assert steps.count(5) == 1 and steps.count(6) == 3
    status = client.all(REPLICASETS)[0]["status"]
    assert status["replicas"] == 3 and status["readyReplicas"] == 0 and status["observedGeneration"] == 1


async def test_status_counts_ready_and_available():
    client, ctx, _ = make_ctx()
    c = ReplicaController(ctx, REPLICASET_KIND)
    client.seed(REPLICASETS, rs(replicas=2))
    await settle(c)
    client.set_pods_ready()
    await settle(c)
    st = client.all(REPLICASETS)[0]["status"]
    assert st == {"replicas": 2, "fullyLabeledReplicas": 2, "readyReplicas": 2,
                  "availableReplicas": 2, "observedGeneration": 1}


async def test_scale_down_deletes_surplus_by_rank():
    client, ctx, events = make_ctx()
    c = ReplicaController(ctx, REPLICASET_KIND)
    client.seed(REPLICASETS, rs(replicas=3))
    await settle(c)
    client.set_pods_ready()
    await settle(c)
    # one more pod, still pending: it must be the one deleted when scaling to 3 again
    cur = client.all(REPLICASETS)[0]
    cur["spec"]["replicas"] = 4
    await client.update(REPLICASETS, cur)
    await settle(c)
    pending = [p["metadata"]["name"] for p in pods_of(client) if p["status"]["phase"] == "Pending"]
    assert len(pending) == 1 and len(pods_of(client)) == 4
    cur = client.all(REPLICASETS)[0]
    cur["spec"]["replicas"] = 3
    await client.update(REPLICASETS, cur)
    await settle(c)
    names = {p["metadata"]["name"] for p in pods_of(client)}
    assert len(names) == 3 and pending[0] not in names
    assert ("replicaset-controller", "myapp-99655c7fd", "Normal", "SuccessfulDelete",
            f"Deleted pod: {pending[0]}", None) in events


async def test_adopts_orphans_and_releases_non_matching():
    client, ctx, _ = make_ctx()
    c = ReplicaController(ctx, REPLICASET_KIND)
    labels = {"app": "myapp", "pod-template-hash": "99655c7fd"}
    client.seed(PODS, {"metadata": {"name": "orphan", "namespace": "default", "labels": labels},
                       "spec": {"containers": []}})
    owner = client.seed(REPLICASETS, rs(replicas=2))
    await settle(c)
    pods = {p["metadata"]["name"]: p for p in pods_of(client)}
    assert len(pods) == 2 and "orphan" in pods
    assert pods["orphan"]["metadata"]["ownerReferences"][0]["uid"] == owner["metadata"]["uid"]
    # relabel the adopted pod: it is released and replaced
    await client.patch(PODS, "orphan", {"metadata": {"labels": {"app": "other"}}}, "default")
    await settle(c)
    pods = {p["metadata"]["name"]: p for p in pods_of(client)}
    assert len(pods) == 3
    assert not pods["orphan"]["metadata"].get("ownerReferences")


async def test_replication_controller_uses_map_selector():
    client, ctx, events = make_ctx()
    c = ReplicaController(ctx, REPLICATIONCONTROLLER_KIND)
    client.seed(REPLICATIONCONTROLLERS, {
        "apiVersion": "v1", "kind": "ReplicationController",
        "metadata": {"name": "nginx", "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"app": "nginx"},
                 "template": {"metadata": {"labels": {"app": "nginx"}},
                              "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}})
    await settle(c)
    pods = pods_of(client)
    assert len(pods) == 2
    assert all(p["metadata"]["ownerReferences"][0]["kind"] == "ReplicationController" for p in pods)
    assert {e[0] for e in events} == {"replication-controller"}


async def test_failed_create_records_warning_and_requeues():
    from controlplane.client.rest import ApiError
    client, ctx, events = make_ctx()
    c = ReplicaController(ctx, REPLICASET_KIND)
    client.fail("create", "pods", ApiError(403, "Forbidden", 'pods "x" is forbidden: exceeded quota'))
    client.seed(REPLICASETS, rs(replicas=5))
    await c.process_next()
    # slow start: only the first batch of 1 was tried
    assert len(client.actions("create")) == 1
    assert events[-1][2:4] == ("Warning", "FailedCreate")
    assert c.queue.num_requeues("default/myapp-99655c7fd") == 1
    assert c.expectations.satisfied("default/myapp-99655c7fd")


async def test_expectations_prevent_double_creation():
    client, ctx, _ = make_ctx()
    c = ReplicaController(ctx, REPLICASET_KIND)
    e = c.expectations
    e.expect_creations("default/x", 2)
    assert not e.satisfied("default/x")
    e.creation_observed("default/x")
    e.creation_observed("default/x")
    assert e.satisfied("default/x")
    e.expect_deletions("default/x", ["default/a"])
    e.deletion_observed("default/x", "default/b")
    assert not e.satisfied("default/x")
    e.deletion_observed("default/x", "default/a")
    assert e.satisfied("default/x")
    exp = Expectations(timeout=10, clock=lambda: 100.0)
    exp.expect_creations("k", 1)
    exp._clock = lambda: 111.0
    assert exp.satisfied("k")


async def test_slow_start_batches():
    sizes = []
    calls = 0

    async def ok():
        nonlocal calls
        calls += 1
    assert await slow_start_batch(10, 1, ok) == (10, None)
    calls = 0

    async def fail_after_3():
        nonlocal calls
        calls += 1
        if calls > 3:
            raise RuntimeError("quota")
    n, err = await slow_start_batch(10, 1, fail_after_3)
    # batches 1, 2 succeed; batch of 4 has failures and stops
    assert calls == 7 and n == 3 and isinstance(err, RuntimeError)
    del sizes


def _pod(name, node="", phase="Pending", ready=False, created="2024-01-01T00:00:00Z", cost=None,
         restarts=0):
    p = {"metadata": {"name": name, "namespace": "d", "creationTimestamp": created},
         "spec": {"nodeName": node} if node else {},
         "status": {"phase": phase, "containerStatuses": [{"restartCount": restarts}]}}
    if ready:
        p["status"]["conditions"] = [{"type": "Ready", "status": "True",
                                      "lastTransitionTime": "2024-01-01T00:00:00Z"}]
    if cost is not None:
        p["metadata"]["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": str(cost)}
    return p


def test_deletion_ranking_order():
    pods = [
        _pod("ready", "n1", "Running", True),
        _pod("unscheduled"),
        _pod("pending", "n1", "Pending"),
        _pod("running-notready", "n1", "Running"),
        _pod("ready-costly", "n2", "Running", True, cost=100),
        _pod("ready-restarts", "n3", "Running", True, restarts=5),
    ]
    order = [p["metadata"]["name"] for p in pods_to_delete(pods, pods, len(pods), now=1.8e9)]
    assert order[:3] == ["unscheduled", "pending", "running-notready"]
    # ready pods: doubled-up node n1? n1 has 3 related pods so "ready" on n1 ranks before n3;
    # the pod with deletion cost 100 goes last
    assert order[3:] == ["ready", "ready-restarts", "ready-costly"]


def test_calculate_status_fully_labeled():
    obj = rs(replicas=2)
    obj["metadata"]["generation"] = 4
    p1 = _pod("a", "n", "Running", True)
    p1["metadata"]["labels"] = {"app": "myapp", "pod-template-hash": "99655c7fd"}
    p2 = _pod("b")
    p2["metadata"]["labels"] = {"app": "myapp"}
    st = calculate_status(obj, [p1, p2])
    assert st == {"replicas": 2, "fullyLabeledReplicas": 1, "readyReplicas": 1,
                  "availableReplicas": 1, "observedGeneration": 4}


def test_calculate_status_counts_as_the_pod_predicates_do():
    """calculate_status (replica_set_utils.go calculateStatus) counts one pass per pod;
    its counts equal those of the predicates themselves (pkg/api/v1/pod/util.go
    IsPodReady, IsPodAvailable): Ready False / absent / True, with and without
    minReadySeconds, a Ready condition without lastTransitionTime, partial labels."""
    from components.controller_manager.controller_utils import is_pod_available, is_pod_ready
    tpl = {"app": "myapp", "pod-template-hash": "99655c7fd"}
    now = 1_704_067_300.0   # 2024-01-01T00:01:40Z

    def pod(i, ready, since, labels):
        p = _pod(f"p{i}", "n", "Running")
        p["metadata"]["labels"] = labels
        if ready is not None:
            c = {"type": "Ready", "status": ready}
            if since:
                c["lastTransitionTime"] = since
            p["status"]["conditions"] = [{"type": "Initialized", "status": "True"}, c]
        return p
    pods = [pod(i, ready, since, labels) for i, (ready, since, labels) in enumerate([
        ("True", "2024-01-01T00:00:00Z", tpl), ("True", "2024-01-01T00:01:35Z", tpl),
        ("True", None, {"app": "myapp"}), ("False", "2024-01-01T00:00:00Z", tpl),
        (None, None, None), ("True", "2024-01-01T00:01:00Z", {**tpl, "extra": "1"}),
        ("True", "garbage", tpl)])]
    for mrs in (0, 10, 60, 1000):
        obj = rs(replicas=3, labels=tpl)
        obj["metadata"]["generation"] = 2
        obj["spec"]["minReadySeconds"] = mrs
        obj["status"] = {"conditions": [{"type": "ReplicaFailure", "status": "False"}]}
        st = calculate_status(obj, pods, now)
        assert st == {"conditions": [{"type": "ReplicaFailure", "status": "False"}],
                      "replicas": len(pods),
                      "fullyLabeledReplicas": sum(1 for p in pods
                                                  if all((p["metadata"]["labels"] or {}).get(k) == v
                                                         for k, v in tpl.items())),
                      "readyReplicas": sum(1 for p in pods if is_pod_ready(p)),
                      "availableReplicas": sum(1 for p in pods if is_pod_available(p, mrs, now)),
                      "observedGeneration": 2}, mrs
    assert [calculate_status({**rs(labels=tpl), "spec": {**rs(labels=tpl)["spec"], "minReadySeconds": m}},
                             pods, now)["availableReplicas"] for m in (0, 10, 60, 1000)] == [5, 2, 1, 0]


async def test_sync_follows_each_new_pod_object_and_owner_selector_change():
    """The replica controller's per-pod views (what syncReplicaSet reads of a pod:
    phase, deletion, controllerRef, labels, Ready) are reused only while the cache
    holds the very object they were made from: a pod replaced in the cache without
    an event (as a relist keeping its resourceVersion would) is read afresh, and a
    changed owner selector / template labels give new verdicts (replica_set.go
    syncReplicaSet, claimPods; replica_set_utils.go calculateStatus)."""
    import copy
    client, ctx, _ = make_ctx()
    c = ReplicaController(ctx, REPLICASET_KIND)
    client.seed(REPLICASETS, rs(replicas=3))
    await settle(c)
    client.set_pods_ready()
    await settle(c)
    assert client.all(REPLICASETS)[0]["status"]["readyReplicas"] == 3
    # a pod object swapped in the cache behind the handlers' back: not Ready any more
    store = c.pods.store
    k = next(iter(store))
    p = copy.deepcopy(store[k])
    p["status"]["conditions"][0]["status"] = "False"
    store[k] = p
    c.enqueue("default/myapp-99655c7fd")
    await settle(c)
    st = client.all(REPLICASETS)[0]["status"]
    assert (st["replicas"], st["readyReplicas"], st["availableReplicas"]) == (3, 2, 2)
    # the owner now selects another label and templates it: every pod is released,
    # three new ones are made, and only they count as fully labeled
    cur = client.all(REPLICASETS)[0]
    new_labels = {"app": "myapp", "track": "canary"}
    cur["spec"]["selector"] = {"matchLabels": dict(new_labels)}
    cur["spec"]["template"]["metadata"]["labels"] = dict(new_labels)
    await client.update(REPLICASETS, cur)
    await settle(c)
    pods = pods_of(client)
    owned = [q for q in pods if q["metadata"].get("ownerReferences")]
    assert len(pods) == 6 and len(owned) == 3
    assert all(q["metadata"]["labels"] == new_labels for q in owned)
    st = client.all(REPLICASETS)[0]["status"]
    assert (st["replicas"], st["fullyLabeledReplicas"], st["readyReplicas"]) == (3, 3, 0)
    assert set(c._views) == set(store)
    await client.delete(PODS, owned[0]["metadata"]["name"], "default")
    assert set(c._views) == set(store)          # no view outlives its pod
