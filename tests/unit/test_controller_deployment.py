"""Deployment controller and its arithmetic, against the in-memory fake API."""

from __future__ import annotations

import copy

import pytest

from components.controller_manager import deployment_util as du
from components.controller_manager.controller import ControllerContext
from components.controller_manager.deployment import DeploymentController
from components.controller_manager.replicaset import REPLICASET_KIND, ReplicaController
from controlplane.api.resources import DEPLOYMENTS, PODS, REPLICASETS
from controlplane.client.testing import FakeClient, FakeRecorder, FakeTracer


def deployment(name="myapp", replicas=3, image="nginx:1.25", strategy=None):
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                     "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
                     "strategy": strategy or {"type": "RollingUpdate",
                                              "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"containers": [{"name": "c", "image": image}]}}}}


def setup():
    client = FakeClient()
    events: list = []
    ctx = ControllerContext(client, client.informers, FakeTracer(),
                            recorder_factory=lambda c: FakeRecorder(c, events))
    return client, ctx, events, DeploymentController(ctx), ReplicaController(ctx, REPLICASET_KIND)


async def settle(client, *controllers, ready=True, rounds=60):
    """Run the controllers, marking pods ready in between, until nothing is queued."""
    for _ in range(rounds):
        busy = [c for c in controllers if len(c.queue)]
        if not busy:
            if ready:
                before = client.rv
                client.set_pods_ready()
                if client.rv != before:
                    continue
            return
        for c in busy:
            await c.process_next()
    raise AssertionError("did not settle")


async def test_create_deployment_end_to_end():
    client, ctx, events, dc, rc = setup()
    d = client.seed(DEPLOYMENTS, deployment())
    await settle(client, dc, rc)
    rss = client.all(REPLICASETS)
    assert len(rss) == 1
    rs = rss[0]
    h = du.compute_hash(d["spec"]["template"])
    assert rs["metadata"]["name"] == f"myapp-{h}"
    assert rs["metadata"]["labels"] == {"app": "myapp", "pod-template-hash": h}
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "myapp", "pod-template-hash": h}
    assert rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] == h
    ann = rs["metadata"]["annotations"]
    assert ann == {du.REVISION: "1", du.DESIRED_REPLICAS: "3", du.MAX_REPLICAS: "4"}
    assert rs["metadata"]["ownerReferences"][0]["uid"] == d["metadata"]["uid"]
    pods = client.all(PODS)
    assert len(pods) == 3 and all(p["metadata"]["name"].startswith(rs["metadata"]["name"] + "-") for p in pods)
    dep = client.all(DEPLOYMENTS)[0]
    assert dep["metadata"]["annotations"][du.REVISION] == "1"
    st = dep["status"]
    assert (st["replicas"], st["updatedReplicas"], st["readyReplicas"], st["availableReplicas"],
            st["observedGeneration"]) == (3, 3, 3, 3, 1)
    assert "unavailableReplicas" not in st
    conds = {c["type"]: c for c in st["conditions"]}
    assert conds["Available"]["reason"] == "MinimumReplicasAvailable"
    assert conds["Available"]["message"] == "Deployment has minimum availability."
    assert conds["Progressing"]["reason"] == "NewReplicaSetAvailable"
    assert conds["Progressing"]["message"] == f'ReplicaSet "myapp-{h}" has successfully progressed.'
    assert ("deployment-controller", "myapp", "Normal", "ScalingReplicaSet",
            f"Scaled up replica set myapp-{h} from 0 to 3", None) in events
    # trace: step 5 for the Deployment and the ReplicaSet, step 6 for the RS and each pod
    recs = ctx.tracer.records
    assert [r[1] for r in recs if r[0] == 5] == ["ADDED Deployment received on watch",
                                                 "ADDED ReplicaSet received on watch"]
    sixes = [r for r in recs if r[0] == 6]
    assert sixes[0][1] == f"deployment-controller created ReplicaSet myapp-{h} (replicas 3)"
    assert len(sixes) == 4 and all("replicaset-controller created pod" in r[1] for r in sixes[1:])


async def test_scale_up_and_down():
    client, ctx, events, dc, rc = setup()
    client.seed(DEPLOYMENTS, deployment(replicas=2))
    await settle(client, dc, rc)
    d = client.all(DEPLOYMENTS)[0]
    d["spec"]["replicas"] = 5
    await client.update(DEPLOYMENTS, d)
    await settle(client, dc, rc)
    rs = client.all(REPLICASETS)[0]
    assert rs["spec"]["replicas"] == 5 and len(client.all(PODS)) == 5
    assert rs["metadata"]["annotations"][du.DESIRED_REPLICAS] == "5"
    assert events[-1][3] != "FailedCreate"
    assert any(e[4] == f"Scaled up replica set {rs['metadata']['name']} from 2 to 5" for e in events)
    d = client.all(DEPLOYMENTS)[0]
    d["spec"]["replicas"] = 1
    await client.update(DEPLOYMENTS, d)
    await settle(client, dc, rc)
    assert len(client.all(PODS)) == 1
    assert any(e[4] == f"Scaled down replica set {rs['metadata']['name']} from 5 to 1" for e in events)
    assert client.all(DEPLOYMENTS)[0]["status"]["replicas"] == 1


async def test_rolling_update_replaces_template_and_keeps_history():
    client, ctx, events, dc, rc = setup()
    client.seed(DEPLOYMENTS, deployment(replicas=4))
    await settle(client, dc, rc)
    old_name = client.all(REPLICASETS)[0]["metadata"]["name"]
    d = client.all(DEPLOYMENTS)[0]
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    await client.update(DEPLOYMENTS, d)
    await settle(client, dc, rc)
    rss = {r["metadata"]["name"]: r for r in client.all(REPLICASETS)}
    assert len(rss) == 2
    new_name = next(n for n in rss if n != old_name)
    assert rss[old_name]["spec"]["replicas"] == 0 and rss[new_name]["spec"]["replicas"] == 4
    assert rss[new_name]["metadata"]["annotations"][du.REVISION] == "2"
    pods = client.all(PODS)
    assert len(pods) == 4 and all(p["spec"]["containers"][0]["image"] == "nginx:1.26" for p in pods)
    dep = client.all(DEPLOYMENTS)[0]
    assert dep["metadata"]["annotations"][du.REVISION] == "2"
    assert dep["status"]["updatedReplicas"] == 4 and dep["status"]["observedGeneration"] == 2
    # first step of the rollout: surge 1 new pod (25% of 4, rounded up)
    scaling = [e[4] for e in events if e[3] == "ScalingReplicaSet"]
    assert f"Scaled up replica set {new_name} from 0 to 1" in scaling
    assert f"Scaled down replica set {old_name} from 4 to 3" in scaling


async def test_recreate_scales_old_to_zero_first():
    client, ctx, events, dc, rc = setup()
    client.seed(DEPLOYMENTS, deployment(replicas=2, strategy={"type": "Recreate"}))
    await settle(client, dc, rc)
    old_name = client.all(REPLICASETS)[0]["metadata"]["name"]
    d = client.all(DEPLOYMENTS)[0]
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    await client.update(DEPLOYMENTS, d)
    await settle(client, dc, rc)
    scaling = [e[4] for e in events if e[3] == "ScalingReplicaSet"]
    down = scaling.index(f"Scaled down replica set {old_name} from 2 to 0")
    up = next(i for i, m in enumerate(scaling) if m.endswith("from 0 to 2") and old_name not in m)
    assert down < up
    assert all(p["spec"]["containers"][0]["image"] == "nginx:1.26" for p in client.all(PODS))


async def test_revision_history_limit_deletes_oldest():
    client, ctx, events, dc, rc = setup()
    dep = deployment(replicas=1)
    dep["spec"]["revisionHistoryLimit"] = 1
    client.seed(DEPLOYMENTS, dep)
    await settle(client, dc, rc)
    for tag in ("1.26", "1.27", "1.28"):
        d = client.all(DEPLOYMENTS)[0]
        d["spec"]["template"]["spec"]["containers"][0]["image"] = f"nginx:{tag}"
        await client.update(DEPLOYMENTS, d)
        await settle(client, dc, rc)
    revs = sorted(int(r["metadata"]["annotations"][du.REVISION]) for r in client.all(REPLICASETS))
    assert revs == [3, 4]


def test_hash_and_names():
    tpl = {"metadata": {"labels": {"app": "myapp"}}, "spec": {"containers": [{"name": "n", "image": "nginx"}]}}
    h = du.compute_hash(tpl)
    assert h == du.compute_hash(copy.deepcopy(tpl))
    assert 1 <= len(h) <= 10 and set(h) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert du.compute_hash(tpl, 1) != h
    assert du.fnv32a(b"") == 0x811C9DC5 and du.fnv32a(b"a") == 0xE40C292C
    assert du.safe_encode_string("0123456789") == "mnpqrstvwx"[:0] + "".join(
        "bcdfghjklmnpqrstvwxz2456789"[b % 27] for b in b"0123456789")
    labeled = copy.deepcopy(tpl)
    labeled["metadata"]["labels"]["pod-template-hash"] = h
    assert du.equal_ignore_hash(tpl, labeled)


@pytest.mark.parametrize("surge,unavail,desired,expect", [
    ("25%", "25%", 3, (1, 0)), ("25%", "25%", 10, (3, 2)), ("25%", "25%", 4, (1, 1)),
    (0, 0, 3, (0, 1)), (2, "50%", 5, (2, 2)), ("0%", "0%", 1, (0, 1)),
], ids=["25% of 3: surge rounds up, unavailable down", "25% of 10", "25% of 4", "both 0: one may be unavailable",
        "an absolute surge and a percentage", "both 0%: one may be unavailable"])
def test_resolve_fenceposts(surge, unavail, desired, expect):
    assert du.resolve_fenceposts(surge, unavail, desired) == expect


def _rs(name, replicas, available, created, rev=1):
    return {"metadata": {"name": name, "creationTimestamp": created, "annotations": {du.REVISION: str(rev)}},
            "spec": {"replicas": replicas}, "status": {"replicas": replicas, "availableReplicas": available}}


def test_rolling_arithmetic():
    d = deployment(replicas=10)
    old = _rs("old", 10, 10, "2024-01-01T00:00:00Z")
    new = _rs("new", 0, 0, "2024-01-02T00:00:00Z", 2)
    plan = du.reconcile_new_replica_set(d, [old, new], new)
    assert [(r["metadata"]["name"], a, b) for r, a, b in plan] == [("new", 0, 3)]   # surge 3
    plan = du.reconcile_old_replica_sets(d, [old, new], [old], new)
    # min available 8, new RS has 3 unavailable: 13 - 8 - 3 = 2 may go
    assert [(r["metadata"]["name"], a, b) for r, a, b in plan] == [("old", 10, 8)]


def test_proportional_scaling():
    d = deployment(replicas=20)   # was 10 when annotations were written: max-replicas 13
    a = _rs("a", 5, 5, "2024-01-01T00:00:00Z")
    b = _rs("b", 8, 0, "2024-01-02T00:00:00Z", 2)
    for r in (a, b):
        r["metadata"]["annotations"][du.MAX_REPLICAS] = "13"
        r["metadata"]["annotations"][du.DESIRED_REPLICAS] = "10"
    plan = du.proportional_scale(d, b, [a])
    sizes = {r["metadata"]["name"]: n for r, _, n in plan}
    assert sum(sizes.values()) == 25       # 20 + surge 5
    assert sizes == {"b": 15, "a": 10}


def test_status_unavailable_condition():
    d = deployment(replicas=4)
    rs = _rs("x", 4, 1, "2024-01-01T00:00:00Z")
    rs["status"]["readyReplicas"] = 1
    st = du.calculate_status(d, [rs], rs)
    assert st["unavailableReplicas"] == 3
    cond = du.get_condition(st, "Available")
    assert (cond["status"], cond["reason"]) == ("False", "MinimumReplicasUnavailable")


# -- issue 12 item 9: the Deployment defects ---------------------------------------------

def _active(client):
    return [r for r in client.all(REPLICASETS) if r["spec"]["replicas"] > 0]


async def test_scale_during_rollout_rewrites_every_active_replica_sets_annotations():
    """set image, then scale while the new pods are not ready: sync.go scale updates the
    annotations of every active RS, so the rollout is no longer a scaling event forever."""
    client, ctx, events, dc, rc = setup()
    client.seed(DEPLOYMENTS, deployment(replicas=2))
    await settle(client, dc, rc)
    d = client.all(DEPLOYMENTS)[0]
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    await client.update(DEPLOYMENTS, d)
    await settle(client, dc, rc, ready=False)     # the rollout waits for the new pod
    assert sorted(r["spec"]["replicas"] for r in _active(client)) == [1, 2]
    d = client.all(DEPLOYMENTS)[0]
    d["spec"]["replicas"] = 3
    await client.update(DEPLOYMENTS, d)
    await settle(client, dc, rc, ready=False)
    active = _active(client)
    assert sum(r["spec"]["replicas"] for r in active) == 4            # 3 + surge 1
    for rs in active:
        ann = rs["metadata"]["annotations"]
        assert (ann[du.DESIRED_REPLICAS], ann[du.MAX_REPLICAS]) == ("3", "4"), rs["metadata"]["name"]
    assert not dc._is_scaling_event(client.all(DEPLOYMENTS)[0], client.all(REPLICASETS))
    await settle(client, dc, rc)                   # pods become ready: the rollout completes
    dep = client.all(DEPLOYMENTS)[0]
    new = du.find_new_replica_set(dep, client.all(REPLICASETS))
    assert new is not None and new["spec"]["replicas"] == 3
    assert [r["metadata"]["name"] for r in _active(client)] == [new["metadata"]["name"]]
    st = dep["status"]
    assert (st["replicas"], st["updatedReplicas"], st["readyReplicas"], st["availableReplicas"]) == (3, 3, 3, 3)
    assert du.get_condition(st, "Progressing")["reason"] == "NewReplicaSetAvailable"


def test_proportional_scale_plans_every_active_rs_when_nothing_to_add():
    d = deployment(replicas=3)        # allowed 3 + 1 = 4, already 4: no size changes
    a = _rs("a", 3, 3, "2024-01-01T00:00:00Z")
    b = _rs("b", 1, 0, "2024-01-02T00:00:00Z", 2)
    for r in (a, b):
        r["metadata"]["annotations"].update({du.DESIRED_REPLICAS: "2", du.MAX_REPLICAS: "3"})
    plan = du.proportional_scale(d, b, [a])
    assert sorted((r["metadata"]["name"], old, new) for r, old, new in plan) == [("a", 3, 3), ("b", 1, 1)]


def _undo_template(rs: dict) -> dict:
    """What ``kubectl rollout undo`` patches into spec.template: the RS's template without the
    hash label, as Go encodes the PodTemplateSpec struct (creationTimestamp: null, resources: {})."""
    tpl = copy.deepcopy(rs["spec"]["template"])
    tpl["metadata"]["labels"].pop(du.POD_TEMPLATE_HASH)
    tpl["metadata"]["creationTimestamp"] = None
    for c in tpl["spec"]["containers"]:
        c["resources"] = {}
    return tpl


async def test_rollout_undo_scales_the_old_replica_set_back_up():
    client, ctx, events, dc, rc = setup()
    client.seed(DEPLOYMENTS, deployment(replicas=2))
    await settle(client, dc, rc)
    first = client.all(REPLICASETS)[0]
    d = client.all(DEPLOYMENTS)[0]
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    await client.update(DEPLOYMENTS, d)
    await settle(client, dc, rc)
    d = client.all(DEPLOYMENTS)[0]
    d["spec"]["template"] = _undo_template(first)
    await client.update(DEPLOYMENTS, d)
    await settle(client, dc, rc)
    rss = {r["metadata"]["name"]: r for r in client.all(REPLICASETS)}
    assert len(rss) == 2, sorted(rss)
    back = rss[first["metadata"]["name"]]
    assert back["spec"]["replicas"] == 2
    assert back["metadata"]["annotations"][du.REVISION] == "3"
    assert back["metadata"]["annotations"][du.REVISION_HISTORY] == "1"
    assert sorted(du.revision(r) for r in rss.values()) == [2, 3]
    assert client.all(DEPLOYMENTS)[0]["metadata"]["annotations"][du.REVISION] == "3"


@pytest.mark.parametrize("a,b,equal", [
    ({"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
     {"metadata": {"labels": {"app": "x"}, "creationTimestamp": None},
      "spec": {"containers": [{"name": "c", "image": "i", "resources": {}}]}}, True),
    ({"spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "0.5"}}}]}},
     {"spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "500m"}}}]}}, True),
    ({"spec": {"containers": [{"name": "c", "image": "i"}], "volumes": [{"name": "v", "emptyDir": {}}]}},
     {"spec": {"containers": [{"name": "c", "image": "i"}], "volumes": [{"name": "v", "downwardAPI": {}}]}},
     False),
    ({"spec": {"containers": [{"name": "c", "image": "i"}]}},
     {"spec": {"containers": [{"name": "c", "image": "j"}]}}, False),
], ids=["creationTimestamp null and resources {} are the zero values",
        "quantities compare by value", "pointer structs set to {} still differ", "another image differs"])
def test_equal_ignore_hash_and_hash_on_the_normalized_template(a, b, equal):
    assert du.equal_ignore_hash(a, b) is equal
    assert (du.compute_hash(a) == du.compute_hash(b)) is equal


def test_revision_history_annotation_appends_and_is_bounded():
    d = deployment()
    rs = {"metadata": {"annotations": {du.REVISION: "1"}}}
    assert du.set_new_replica_set_annotations(d, rs, 3, exists=True)
    assert rs["metadata"]["annotations"][du.REVISION_HISTORY] == "1"
    assert du.set_new_replica_set_annotations(d, rs, 5, exists=True)
    assert rs["metadata"]["annotations"][du.REVISION_HISTORY] == "1,3"
    assert not du.set_new_replica_set_annotations(d, rs, 5, exists=True)
    rs["metadata"]["annotations"][du.REVISION_HISTORY] = "1,3"
    du.set_new_replica_set_annotations(d, rs, 7, exists=True, limit=4)
    assert rs["metadata"]["annotations"][du.REVISION_HISTORY] == "3,5"


async def test_paused_deployment_progressing_unknown_then_resumed():
    client, ctx, events, dc, rc = setup()
    client.seed(DEPLOYMENTS, deployment(replicas=2))
    await settle(client, dc, rc)
    d = client.all(DEPLOYMENTS)[0]
    d["spec"]["paused"] = True
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    await client.update(DEPLOYMENTS, d)
    await settle(client, dc, rc)
    cond = du.get_condition(client.all(DEPLOYMENTS)[0]["status"], "Progressing")
    assert (cond["status"], cond["reason"], cond["message"]) == ("Unknown", "DeploymentPaused",
                                                                 "Deployment is paused")
    assert len(client.all(REPLICASETS)) == 1       # no rollout while paused
    d = client.all(DEPLOYMENTS)[0]
    d["spec"]["paused"] = False
    await client.update(DEPLOYMENTS, d)
    await dc.process_next()                        # the first sync after the resume
    cond = du.get_condition(client.all(DEPLOYMENTS)[0]["status"], "Progressing")
    assert cond["reason"] in ("DeploymentResumed", "NewReplicaSetCreated", "ReplicaSetUpdated")
    await settle(client, dc, rc)
    cond = du.get_condition(client.all(DEPLOYMENTS)[0]["status"], "Progressing")
    assert (cond["status"], cond["reason"]) == ("True", "NewReplicaSetAvailable")
    assert len(client.all(REPLICASETS)) == 2


@pytest.mark.parametrize("paused,reason,expect", [
    (True, "NewReplicaSetAvailable", ("Unknown", "DeploymentPaused")),
    (True, "DeploymentPaused", None),
    (False, "DeploymentPaused", ("Unknown", "DeploymentResumed")),
    (True, "ProgressDeadlineExceeded", None),
    (False, "NewReplicaSetAvailable", None),
], ids=["pausing", "already paused", "resuming", "timed out stays", "running"])
def test_paused_conditions(paused, reason, expect):
    d = deployment()
    d["spec"]["paused"] = paused
    d["status"] = {"conditions": [{"type": "Progressing", "status": "True", "reason": reason, "message": "m"}]}
    out = du.paused_conditions(d)
    if expect is None:
        assert out is None
    else:
        c = du.get_condition(out, "Progressing")
        assert (c["status"], c["reason"]) == expect


async def test_scale_and_new_template_at_once_resizes_the_old_replica_set_first():
    """isScalingEvent looks at the active RSs even when no new RS exists yet: the old RS takes
    the new size before the rollout starts (sync.go)."""
    client, ctx, events, dc, rc = setup()
    client.seed(DEPLOYMENTS, deployment(replicas=2))
    await settle(client, dc, rc)
    old_name = client.all(REPLICASETS)[0]["metadata"]["name"]
    d = client.all(DEPLOYMENTS)[0]
    d["spec"]["replicas"] = 4
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    await client.update(DEPLOYMENTS, d)
    await settle(client, dc, rc)
    scaling = [e[4] for e in events if e[3] == "ScalingReplicaSet"]
    first = scaling.index(f"Scaled up replica set {old_name} from 2 to 4")
    assert all(old_name in m for m in scaling[:first + 1])
    new = du.find_new_replica_set(client.all(DEPLOYMENTS)[0], client.all(REPLICASETS))
    assert new is not None and new["spec"]["replicas"] == 4
