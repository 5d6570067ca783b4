"""The DaemonSet controller (``pkg/controller/daemon``) against the in-memory fake API:
eligibility, the pod it creates, revisions, RollingUpdate limits, OnDelete, status."""

from __future__ import annotations

import copy

import pytest

from components.controller_manager import daemonset_util as du
from components.controller_manager.daemonset import (
    CONTROLLERREVISIONS,
    DAEMONSETS,
    DaemonSetController,
)
from components.controller_manager.testing import fake_context, settle
from controlplane.api.resources import NODES, PODS


def node(name, labels=None, taints=None):
    n = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}}, "spec": {}}
    if taints:
        n["spec"]["taints"] = taints
    return n


def ds(name="fluentd", image="fluentd:v1", strategy=None, **tpl_spec):
    labels = {"name": name}
    spec = {"containers": [{"name": "c", "image": image}], **tpl_spec}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": "kube-system"},
            "spec": {"selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)}, "spec": spec},
                     "updateStrategy": strategy or {"type": "RollingUpdate",
                                                    "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
                     "revisionHistoryLimit": 10}}


def setup(nodes=("n1", "n2", "n3"), **kw):
    client, ctx, events = fake_context()
    c = DaemonSetController(ctx)
    for n in nodes:
        client.seed(NODES, node(n) if isinstance(n, str) else n)
    return client, ctx, events, c


def live_pods(client):
    return [p for p in client.all(PODS) if not p["metadata"].get("deletionTimestamp")]


def pods_by_node(client):
    out: dict[str, list[dict]] = {}
    for p in live_pods(client):
        out.setdefault(du.target_node_name(p), []).append(p)
    return out


async def run_pods(client, ready=True):
    """A stand-in scheduler + kubelet: bind each pending daemon pod to the node of its affinity
    and mark it Running (and Ready)."""
    for p in live_pods(client):
        if p.get("status", {}).get("phase") == "Running":
            continue
        p["spec"]["nodeName"] = du.target_node_name(p)
        p = await client.update(PODS, p)
        p["status"] = {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True" if ready else "False",
             "lastTransitionTime": "2020-01-01T00:00:00Z"}]}
        await client.update_status(PODS, p)


def status(client, name="fluentd"):
    return client.stored(DAEMONSETS, name, "kube-system").get("status") or {}


async def set_image(client, image, name="fluentd"):
    cur = copy.deepcopy(client.stored(DAEMONSETS, name, "kube-system"))
    cur["spec"]["template"]["spec"]["containers"][0]["image"] = image
    await client.update(DAEMONSETS, cur)


# -- eligibility ---------------------------------------------------------------------------

NOT_READY_NOEXEC = {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}
CUSTOM_NOSCHED = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
CUSTOM_NOEXEC = {"key": "dedicated", "value": "gpu", "effect": "NoExecute"}
TOL_DEDICATED = [{"key": "dedicated", "operator": "Equal", "value": "gpu"}]
AFFINITY_ZONE_A = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}

ELIGIBILITY = [
    ("plain-node", node("n1"), {}, (True, True)),
    ("node-selector-matches", node("n1", {"disk": "ssd"}), {"nodeSelector": {"disk": "ssd"}}, (True, True)),
    ("node-selector-misses", node("n1", {"disk": "hdd"}), {"nodeSelector": {"disk": "ssd"}}, (False, False)),
    ("affinity-matches", node("n1", {"zone": "a"}), {"affinity": AFFINITY_ZONE_A}, (True, True)),
    ("affinity-misses", node("n1", {"zone": "b"}), {"affinity": AFFINITY_ZONE_A}, (False, False)),
    ("template-nodename-other", node("n1"), {"nodeName": "n2"}, (False, False)),
    ("template-nodename-same", node("n1"), {"nodeName": "n1"}, (True, True)),
    ("not-ready-tolerated-by-default", node("n1", taints=[NOT_READY_NOEXEC]), {}, (True, True)),
    ("unschedulable-tolerated-by-default",
     node("n1", taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]), {}, (True, True)),
    ("network-unavailable-untolerated",
     node("n1", taints=[{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]), {},
     (False, True)),
    ("network-unavailable-hostnetwork",
     node("n1", taints=[{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]),
     {"hostNetwork": True}, (True, True)),
    ("noschedule-untolerated-keeps-running", node("n1", taints=[CUSTOM_NOSCHED]), {}, (False, True)),
    ("noexecute-untolerated-evicts", node("n1", taints=[CUSTOM_NOEXEC]), {}, (False, False)),
    ("noschedule-tolerated", node("n1", taints=[CUSTOM_NOSCHED]), {"tolerations": TOL_DEDICATED}, (True, True)),
    ("noexecute-tolerated", node("n1", taints=[CUSTOM_NOEXEC]), {"tolerations": TOL_DEDICATED}, (True, True)),
    ("prefer-noschedule-ignored", node("n1", taints=[{"key": "x", "effect": "PreferNoSchedule"}]), {},
     (True, True)),
]


@pytest.mark.parametrize("n,tpl,want", [c[1:] for c in ELIGIBILITY], ids=[c[0] for c in ELIGIBILITY])
def test_node_should_run_daemon_pod(n, tpl, want):
    assert du.node_should_run_daemon_pod(n, ds(**tpl)) == want


REPLACE_AFFINITY = [
    ("none", None, {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}),
    ("pod-affinity-kept", {"podAffinity": {"x": 1}},
     {"podAffinity": {"x": 1}, "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
         "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}),
    ("required-terms-replaced", copy.deepcopy(AFFINITY_ZONE_A) | {}, {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}),
    ("preferred-kept", {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}]}},
     {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}],
                       "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                           {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}),
]


@pytest.mark.parametrize("aff,want", [c[1:] for c in REPLACE_AFFINITY], ids=[c[0] for c in REPLACE_AFFINITY])
def test_node_name_affinity(aff, want):
    assert du.node_name_affinity(aff, "n1") == want


def test_daemon_tolerations_added_once_replacing_matching_user_ones():
    # a user's not-ready toleration with tolerationSeconds is replaced (MatchToleration compares
    # key, operator, value and effect): daemon pods are never evicted for not-ready
    spec = {"tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 5}, {"key": "dedicated", "operator": "Exists"}],
            "hostNetwork": True}
    du.add_daemon_tolerations(spec)
    du.add_daemon_tolerations(spec)
    assert spec["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
        {"key": "dedicated", "operator": "Exists"},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"},
    ]


# -- the controller ---------------------------------------------------------------------------

async def test_one_pod_per_eligible_node_with_affinity_tolerations_and_labels():
    client, ctx, events, c = setup(nodes=("n1", "n2", node("n3", taints=[CUSTOM_NOSCHED])))
    d = client.seed(DAEMONSETS, ds())
    await settle(c)
    by_node = pods_by_node(client)
    assert sorted(by_node) == ["n1", "n2"] and all(len(v) == 1 for v in by_node.values())
    hist = client.all(CONTROLLERREVISIONS)
    assert len(hist) == 1 and hist[0]["revision"] == 1
    h = hist[0]["metadata"]["labels"][du.CONTROLLER_REVISION_HASH]
    assert hist[0]["metadata"]["name"] == f"fluentd-{h}"
    assert hist[0]["data"] == {"spec": {"template": {**d["spec"]["template"], "$patch": "replace"}}}
    for name, (p,) in by_node.items():
        md = p["metadata"]
        assert md["generateName"] == "fluentd-"
        assert md["labels"] == {"name": "fluentd", "controller-revision-hash": h, "pod-template-generation": "1"}
        assert md["ownerReferences"][0] | {} == {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "fluentd",
                                                  "uid": d["metadata"]["uid"], "controller": True,
                                                  "blockOwnerDeletion": True}
        assert "nodeName" not in p["spec"]
        assert p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}]}
        assert [t["key"] for t in p["spec"]["tolerations"]] == [
            "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "node.kubernetes.io/disk-pressure",
            "node.kubernetes.io/memory-pressure", "node.kubernetes.io/pid-pressure",
            "node.kubernetes.io/unschedulable"]
    assert sum(e[3] == "SuccessfulCreate" for e in events) == 2
    assert all(e[0] == "daemonset-controller" for e in events)
    assert status(client) == {"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberMisscheduled": 0,
                              "numberReady": 0, "updatedNumberScheduled": 2, "numberUnavailable": 2,
                              "observedGeneration": 1}
    await run_pods(client)
    await settle(c)
    assert status(client) == {"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberMisscheduled": 0,
                              "numberReady": 2, "numberAvailable": 2, "updatedNumberScheduled": 2,
                              "observedGeneration": 1}


async def test_node_added_later_gets_its_pod_and_untolerated_noexecute_removes_it():
    client, ctx, events, c = setup(nodes=("n1",))
    client.seed(DAEMONSETS, ds())
    await settle(c)
    await client.create(NODES, node("n2"))
    await settle(c)
    assert sorted(pods_by_node(client)) == ["n1", "n2"]
    await run_pods(client)
    await settle(c)
    n2 = copy.deepcopy(client.stored(NODES, "n2"))
    n2["spec"]["taints"] = [CUSTOM_NOSCHED]
    await client.update(NODES, n2)
    await settle(c)
    assert sorted(pods_by_node(client)) == ["n1", "n2"]          # NoSchedule: keeps running
    assert status(client)["numberMisscheduled"] == 1 and status(client)["desiredNumberScheduled"] == 1
    n2 = copy.deepcopy(client.stored(NODES, "n2"))
    n2["spec"]["taints"] = [CUSTOM_NOEXEC]
    await client.update(NODES, n2)
    await settle(c)
    assert sorted(pods_by_node(client)) == ["n1"]
    assert any(e[3] == "SuccessfulDelete" for e in events)


async def test_unscheduled_pod_of_deleted_node_is_deleted():
    client, ctx, _, c = setup(nodes=("n1", "n2"))
    client.seed(DAEMONSETS, ds())
    await settle(c)
    await client.delete(NODES, "n2")
    await client.update(DAEMONSETS, client.stored(DAEMONSETS, "fluentd", "kube-system"))   # any event
    await settle(c)
    assert sorted(pods_by_node(client)) == ["n1"]
    assert status(client)["desiredNumberScheduled"] == 1


async def test_selecting_all_is_refused_with_an_event():
    client, ctx, events, c = setup()
    d = ds()
    d["spec"]["selector"] = {}
    client.seed(DAEMONSETS, d)
    await settle(c)
    assert client.all(PODS) == []
    assert [e[3:5] for e in events] == [("SelectingAll", "This daemon set is selecting all pods. "
                                                        "A non-empty selector is required.")]


async def test_extra_and_failed_pods_are_deleted():
    client, ctx, events, c = setup(nodes=("n1",))
    client.seed(DAEMONSETS, ds())
    await settle(c)
    (p,) = live_pods(client)
    dup = copy.deepcopy(p)
    for k in ("name", "uid", "resourceVersion", "creationTimestamp"):
        dup["metadata"].pop(k, None)
    dup["metadata"].pop("generateName", None)
    dup["metadata"]["name"] = "zzz-extra"           # created later (or in the same second: name breaks the tie)
    await client.create(PODS, dup, "kube-system")
    await settle(c)
    assert [x["metadata"]["name"] for x in live_pods(client)] == [p["metadata"]["name"]]
    await run_pods(client)
    cur = copy.deepcopy(client.stored(PODS, p["metadata"]["name"], "kube-system"))
    cur["status"]["phase"] = "Failed"
    await client.update_status(PODS, cur)
    await settle(c)
    assert any(e[3] == "FailedDaemonPod" and "will try to kill it" in e[4] for e in events)
    (replacement,) = live_pods(client)
    assert replacement["metadata"]["name"] != p["metadata"]["name"]


async def test_rolling_update_respects_max_unavailable_and_writes_revision_2():
    client, ctx, events, c = setup()
    client.seed(DAEMONSETS, ds())
    await settle(c)
    await run_pods(client)
    await settle(c)
    old_hash = live_pods(client)[0]["metadata"]["labels"][du.CONTROLLER_REVISION_HASH]
    await set_image(client, "fluentd:v2")
    await settle(c)
    pods = live_pods(client)
    new = [p for p in pods if p["metadata"]["labels"][du.CONTROLLER_REVISION_HASH] != old_hash]
    assert len(pods) == 3 and len(new) == 1                 # one old pod replaced at a time
    assert new[0]["metadata"]["labels"]["pod-template-generation"] == "2"
    assert new[0]["spec"]["containers"][0]["image"] == "fluentd:v2"
    st = status(client)
    assert st["updatedNumberScheduled"] == 1 and st["numberAvailable"] == 2 and st["observedGeneration"] == 2
    for _ in range(3):
        await run_pods(client)
        await settle(c)
    pods = live_pods(client)
    assert len(pods) == 3 and all(p["spec"]["containers"][0]["image"] == "fluentd:v2" for p in pods)
    assert status(client) == {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberMisscheduled": 0,
                              "numberReady": 3, "numberAvailable": 3, "updatedNumberScheduled": 3,
                              "observedGeneration": 2}
    assert sorted(h["revision"] for h in client.all(CONTROLLERREVISIONS)) == [1, 2]


@pytest.mark.parametrize("max_unavailable,replaced", [(2, 2), ("100%", 3), ("34%", 2)],
                         ids=["two", "all-percent", "percent-rounds-up"])
async def test_rolling_update_max_unavailable_bounds_the_first_wave(max_unavailable, replaced):
    client, ctx, _, c = setup()
    client.seed(DAEMONSETS, ds(strategy={"type": "RollingUpdate",
                                         "rollingUpdate": {"maxUnavailable": max_unavailable, "maxSurge": 0}}))
    await settle(c)
    await run_pods(client)
    await settle(c)
    await set_image(client, "fluentd:v2")
    await settle(c)
    assert sum(p["spec"]["containers"][0]["image"] == "fluentd:v2" for p in live_pods(client)) == replaced


async def test_rolling_update_with_surge_creates_beside_old_pods():
    client, ctx, _, c = setup()
    client.seed(DAEMONSETS, ds(strategy={"type": "RollingUpdate",
                                         "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}))
    await settle(c)
    await run_pods(client)
    await settle(c)
    await set_image(client, "fluentd:v2")
    await settle(c)
    by_node = pods_by_node(client)
    assert sum(len(v) for v in by_node.values()) == 4             # one surge pod beside its old one
    assert sorted(len(v) for v in by_node.values()) == [1, 1, 2]
    await run_pods(client)
    await settle(c)                                                # new one available: old deleted
    by_node = pods_by_node(client)
    images = sorted(p["spec"]["containers"][0]["image"] for v in by_node.values() for p in v)
    assert images.count("fluentd:v2") == 2 and len(images) == 4   # the next node surged
    for _ in range(3):
        await run_pods(client)
        await settle(c)
    assert [p["spec"]["containers"][0]["image"] for p in live_pods(client)] == ["fluentd:v2"] * 3


async def test_on_delete_waits_for_the_user():
    client, ctx, _, c = setup()
    client.seed(DAEMONSETS, ds(strategy={"type": "OnDelete"}))
    await settle(c)
    await run_pods(client)
    await settle(c)
    await set_image(client, "fluentd:v2")
    await settle(c)
    assert all(p["spec"]["containers"][0]["image"] == "fluentd:v1" for p in live_pods(client))
    assert "updatedNumberScheduled" not in status(client)          # omitempty: 0
    victim = live_pods(client)[0]
    await client.delete(PODS, victim["metadata"]["name"], "kube-system")
    await settle(c)
    images = sorted(p["spec"]["containers"][0]["image"] for p in live_pods(client))
    assert images == ["fluentd:v1", "fluentd:v1", "fluentd:v2"]


async def test_undo_renumbers_the_matching_revision():
    client, ctx, _, c = setup(nodes=("n1",))
    client.seed(DAEMONSETS, ds())
    await settle(c)
    await set_image(client, "fluentd:v2")
    await settle(c)
    revs = {h["metadata"]["name"]: h["revision"] for h in client.all(CONTROLLERREVISIONS)}
    assert sorted(revs.values()) == [1, 2]
    first = min(revs, key=revs.__getitem__)
    await set_image(client, "fluentd:v1")                   # what rollout undo's patch restores
    await settle(c)
    revs = {h["metadata"]["name"]: h["revision"] for h in client.all(CONTROLLERREVISIONS)}
    assert revs[first] == 3 and sorted(revs.values()) == [2, 3]


async def test_history_beyond_the_limit_is_cleaned_up_but_live_hashes_kept():
    client, ctx, _, c = setup(nodes=("n1",))
    d = ds(strategy={"type": "OnDelete"})
    d["spec"]["revisionHistoryLimit"] = 1
    client.seed(DAEMONSETS, d)
    await settle(c)
    live_hash = live_pods(client)[0]["metadata"]["labels"][du.CONTROLLER_REVISION_HASH]
    for image in ("fluentd:v2", "fluentd:v3", "fluentd:v4"):
        await set_image(client, image)
        await settle(c)
    hashes = sorted(h["metadata"]["labels"][du.CONTROLLER_REVISION_HASH] for h in client.all(CONTROLLERREVISIONS))
    revs = sorted(h["revision"] for h in client.all(CONTROLLERREVISIONS))
    assert live_hash in hashes and revs == [1, 4]         # current (4) + the live pod's (1); 2, 3 deleted


async def test_orphan_pod_is_adopted_and_kept_under_on_delete():
    # under RollingUpdate the adopted pod (no controller-revision-hash) would be replaced
    client, ctx, _, c = setup(nodes=("n1",))
    d = ds(strategy={"type": "OnDelete"})
    client.seed(PODS, {"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": "stray", "namespace": "kube-system", "labels": {"name": "fluentd"}},
                       "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "fluentd:v1"}]}})
    d = client.seed(DAEMONSETS, d)
    await settle(c)
    (p,) = live_pods(client)
    assert p["metadata"]["name"] == "stray"
    assert p["metadata"]["ownerReferences"][0]["uid"] == d["metadata"]["uid"]
    assert "updatedNumberScheduled" not in status(client)


async def test_deleted_node_loses_its_pod_through_the_pod_gc():
    # the DaemonSet controller leaves pods bound to a vanished node to the pod GC's orphan
    # rule (gc_controller.go gcOrphaned), as Kubernetes does; its status then drops the node
    from components.controller_manager.podgc import PodGCController
    from controlplane.client.testing import FakeClock
    clock = FakeClock()
    client, ctx, _ = fake_context(clock=clock)
    c, gc = DaemonSetController(ctx), PodGCController(ctx)
    for n in ("n1", "n2"):
        client.seed(NODES, node(n))
    client.seed(DAEMONSETS, ds())
    await settle(c)
    await run_pods(client)
    await settle(c)
    await client.delete(NODES, "n2")
    await gc.gc()                                   # n2 seen missing: the quarantine starts
    clock.advance(ctx.config.pod_gc_quarantine + 1)
    assert (await gc.gc())["orphaned"] == 1
    await settle(c)
    assert sorted(pods_by_node(client)) == ["n1"]
    st = status(client)
    assert st["desiredNumberScheduled"] == 1 and st["currentNumberScheduled"] == 1


async def test_revision_name_collision_bumps_collision_count():
    client, ctx, _, c = setup(nodes=("n1",))
    d = client.seed(DAEMONSETS, ds())
    from components.controller_manager.deployment_util import compute_hash
    h = compute_hash(d["spec"]["template"], None)
    client.seed(CONTROLLERREVISIONS, {"apiVersion": "apps/v1", "kind": "ControllerRevision",
                                      "metadata": {"name": f"fluentd-{h}", "namespace": "kube-system",
                                                   "labels": {"other": "x"}},
                                      "data": {"spec": {"template": {"$patch": "replace"}}}, "revision": 1})
    await settle(c)
    assert status(client)["collisionCount"] == 1
    mine = [x for x in client.all(CONTROLLERREVISIONS) if x["metadata"]["name"] != f"fluentd-{h}"]
    assert len(mine) == 1 and mine[0]["metadata"]["name"] == f"fluentd-{compute_hash(d['spec']['template'], 1)}"
    assert len(live_pods(client)) == 1


async def test_deleting_the_daemonset_collects_its_pods_and_revisions():
    from components.controller_manager.garbagecollector import GarbageCollector
    client, ctx, _, c = setup(nodes=("n1", "n2"))
    gc = GarbageCollector(ctx)
    client.seed(DAEMONSETS, ds())
    await settle(c, gc)
    assert len(live_pods(client)) == 2 and len(client.all(CONTROLLERREVISIONS)) == 1
    await client.delete(DAEMONSETS, "fluentd", "kube-system", propagation_policy="Background")
    await settle(c, gc)
    assert client.all(PODS) == [] and client.all(CONTROLLERREVISIONS) == []


async def test_failed_pods_are_replaced_with_per_node_backoff():
    from controlplane.client.testing import FakeClock
    clock = FakeClock()
    client, ctx, events = fake_context(clock=clock)
    c = DaemonSetController(ctx)
    client.seed(NODES, node("n1"))
    client.seed(DAEMONSETS, ds())
    await settle(c)

    async def fail_current():
        await run_pods(client)
        (p,) = live_pods(client)
        cur = copy.deepcopy(client.stored(PODS, p["metadata"]["name"], "kube-system"))
        cur["status"]["phase"] = "Failed"
        await client.update_status(PODS, cur)
        await settle(c)
        return p["metadata"]["name"]

    first = await fail_current()                       # deleted at once (backoff starts at 1 s)
    assert first not in [p["metadata"]["name"] for p in live_pods(client)]
    second = await fail_current()                      # within 1 s of the last kill: kept for now
    assert [p["metadata"]["name"] for p in live_pods(client)] == [second]
    clock.advance(1.5)
    await c.sync("kube-system/fluentd")                # the add_after(backoff) retry
    await settle(c)
    assert second not in [p["metadata"]["name"] for p in live_pods(client)]
    assert sum(e[3] == "FailedDaemonPod" for e in events) == 2
