"""The StatefulSet controller on the fake API client: ordered and parallel creation, scale
down from the highest ordinal, claims and their retention ownerReferences, ControllerRevisions,
rolling updates (partition, maxUnavailable), OnDelete, failed pods recreated."""

from __future__ import annotations

import copy

import pytest

from components.controller_manager import statefulset_utils as su
from components.controller_manager.statefulset import (
    CONTROLLERREVISIONS,
    PERSISTENTVOLUMECLAIMS,
    STATEFULSETS,
    StatefulSetController,
)
from components.controller_manager.testing import fake_context, settle
from controlplane.api.resources import PODS


def statefulset(name="web", replicas=3, policy="OrderedReady", claims=True, strategy=None, retention=None):
    labels = {"app": "nginx"}
    obj = {"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": {"name": name, "namespace": "default"},
           "spec": {"replicas": replicas, "serviceName": "nginx", "podManagementPolicy": policy,
                    "selector": {"matchLabels": dict(labels)}, "revisionHistoryLimit": 10,
                    "updateStrategy": strategy or {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                    "persistentVolumeClaimRetentionPolicy": retention or {"whenDeleted": "Retain",
                                                                          "whenScaled": "Retain"},
                    "template": {"metadata": {"labels": dict(labels)},
                                 "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25",
                                                          "volumeMounts": [{"name": "www",
                                                                            "mountPath": "/usr/share/nginx/html"}]}]}}}}
    if claims:
        obj["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "www"},
                                                "spec": {"accessModes": ["ReadWriteOnce"],
                                                         "resources": {"requests": {"storage": "1Gi"}}}}]
    return obj


def setup():
    client, ctx, events = fake_context()
    return client, events, StatefulSetController(ctx)


def names(client, res=PODS):
    return sorted(o["metadata"]["name"] for o in client.all(res))


async def make_ready(client, *pod_names):
    """A stand-in kubelet for the named pods (all when none named): Running and Ready."""
    for p in client.all(PODS):
        if (pod_names and p["metadata"]["name"] not in pod_names) or p["metadata"].get("deletionTimestamp"):
            continue
        if p.get("status", {}).get("phase") == "Running":
            continue
        new = copy.deepcopy(p)
        new["spec"].setdefault("nodeName", "node01")
        new["status"] = {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": "2020-01-01T00:00:00Z"}]}
        await client.update_status(PODS, new)


async def converge(client, ctl, rounds=30):
    """Settle, mark every pod ready, until nothing changes."""
    for _ in range(rounds):
        await settle(ctl)
        before = client.rv
        await make_ready(client)
        await settle(ctl)
        if client.rv == before:
            return
    raise AssertionError("did not converge")


def sts_of(client, name="web"):
    return client.stored(STATEFULSETS, name, "default")


async def test_ordered_creation_waits_for_running_and_ready():
    client, events, ctl = setup()
    client.seed(STATEFULSETS, statefulset())
    await settle(ctl)
    assert names(client) == ["web-0"]
    await settle(ctl)
    assert names(client) == ["web-0"], "web-1 must wait for web-0 to be Running and Ready"
    await make_ready(client, "web-0")
    await settle(ctl)
    assert names(client) == ["web-0", "web-1"]
    await make_ready(client, "web-1")
    await settle(ctl)
    assert names(client) == ["web-0", "web-1", "web-2"]
    created = [a.name or a.object["metadata"]["name"] for a in client.actions("create", "pods")]
    assert created == ["web-0", "web-1", "web-2"]


async def test_pod_identity_labels_hostname_subdomain_and_volumes():
    client, events, ctl = setup()
    s = client.seed(STATEFULSETS, statefulset(replicas=1))
    await settle(ctl)
    pod = client.stored(PODS, "web-0", "default")
    labels = pod["metadata"]["labels"]
    rev = sts_of(client)["status"]["updateRevision"]
    assert labels == {"app": "nginx", su.POD_NAME_LABEL: "web-0", su.POD_INDEX_LABEL: "0", su.REVISION_LABEL: rev}
    assert pod["spec"]["hostname"] == "web-0" and pod["spec"]["subdomain"] == "nginx"
    assert pod["spec"]["volumes"] == [{"name": "www", "persistentVolumeClaim": {"claimName": "www-web-0"}}]
    ref = pod["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == ("StatefulSet", "web", s["metadata"]["uid"], True)


async def test_events_as_kubernetes_writes_them():
    client, events, ctl = setup()
    client.seed(STATEFULSETS, statefulset(replicas=1))
    await settle(ctl)
    got = [(e.component, e.reason, e.message) for e in events]
    assert got == [("statefulset-controller", "SuccessfulCreate", "create Claim www-web-0 Pod web-0 in StatefulSet web success"),
                   ("statefulset-controller", "SuccessfulCreate", "create Pod web-0 in StatefulSet web successful")]


async def test_claims_created_before_the_pod_with_selector_labels():
    client, events, ctl = setup()
    client.seed(STATEFULSETS, statefulset(replicas=2))
    await converge(client, ctl)
    assert names(client, PERSISTENTVOLUMECLAIMS) == ["www-web-0", "www-web-1"]
    claim = client.stored(PERSISTENTVOLUMECLAIMS, "www-web-0", "default")
    assert claim["metadata"]["labels"] == {"app": "nginx"}
    assert claim["spec"]["resources"] == {"requests": {"storage": "1Gi"}}
    assert "ownerReferences" not in claim["metadata"], "Retain/Retain leaves the claim unowned"
    order = [(a.resource, (a.object or {}).get("metadata", {}).get("name")) for a in client.actions("create")
             if a.resource in ("pods", "persistentvolumeclaims")]
    assert order == [("persistentvolumeclaims", "www-web-0"), ("pods", "web-0"),
                     ("persistentvolumeclaims", "www-web-1"), ("pods", "web-1")]


async def test_parallel_creates_all_pods_without_waiting():
    client, events, ctl = setup()
    client.seed(STATEFULSETS, statefulset(replicas=4, policy="Parallel"))
    await settle(ctl)
    assert names(client) == ["web-0", "web-1", "web-2", "web-3"]
    assert all(p["status"]["phase"] == "Pending" for p in client.all(PODS))


async def test_scale_down_from_the_highest_ordinal_one_at_a_time():
    client, events, ctl = setup()
    client.seed(STATEFULSETS, statefulset(replicas=5))
    await converge(client, ctl)
    assert names(client) == [f"web-{i}" for i in range(5)]
    # a finalizer holds web-4 in Terminating: OrderedReady must wait for it before web-3
    p4 = client.stored(PODS, "web-4", "default")
    p4["metadata"]["finalizers"] = ["test/hold"]
    s = sts_of(client)
    s["spec"]["replicas"] = 3
    await client.update(STATEFULSETS, copy.deepcopy(s))
    await settle(ctl)
    deleted = [a.name for a in client.actions("delete", "pods")]
    assert deleted == ["web-4"]
    assert client.stored(PODS, "web-4", "default")["metadata"].get("deletionTimestamp")
    assert "web-3" in names(client)
    held = copy.deepcopy(client.stored(PODS, "web-4", "default"))
    held["metadata"]["finalizers"] = []
    await client.update(PODS, held)              # the pod goes; web-3 is next
    await converge(client, ctl)
    assert [a.name for a in client.actions("delete", "pods")] == ["web-4", "web-3"]
    assert names(client) == ["web-0", "web-1", "web-2"]
    st = sts_of(client)["status"]
    assert (st["replicas"], st["readyReplicas"], st["availableReplicas"]) == (3, 3, 3)


async def test_scale_down_waits_for_unhealthy_pods_in_ordered_ready():
    client, events, ctl = setup()
    client.seed(STATEFULSETS, statefulset(replicas=3, claims=False))
    await converge(client, ctl)
    p0 = copy.deepcopy(client.stored(PODS, "web-0", "default"))
    p0["status"]["conditions"][0]["status"] = "False"
    await client.update_status(PODS, p0)
    s = sts_of(client)
    s["spec"]["replicas"] = 1
    await client.update(STATEFULSETS, copy.deepcopy(s))
    await settle(ctl)
    assert client.actions("delete", "pods") == [], "web-0 not ready blocks the scale down"


async def test_failed_pod_is_deleted_and_recreated():
    client, events, ctl = setup()
    client.seed(STATEFULSETS, statefulset(replicas=2, claims=False))
    await converge(client, ctl)
    old = copy.deepcopy(client.stored(PODS, "web-0", "default"))
    old["status"]["phase"] = "Failed"
    await client.update_status(PODS, old)
    await settle(ctl)
    new = client.stored(PODS, "web-0", "default")
    assert new["metadata"]["uid"] != old["metadata"]["uid"]
    assert [a.name for a in client.actions("delete", "pods")] == ["web-0"]


@pytest.mark.parametrize("retention, in_range_refs, scaled_refs", [
    pytest.param({"whenDeleted": "Retain", "whenScaled": "Retain"}, [], [], id="retain-retain"),
    pytest.param({"whenDeleted": "Delete", "whenScaled": "Retain"}, ["StatefulSet"], ["StatefulSet"],
                 id="delete-on-set-deletion"),
    pytest.param({"whenDeleted": "Retain", "whenScaled": "Delete"}, [], ["Pod"], id="delete-on-scale-down"),
    pytest.param({"whenDeleted": "Delete", "whenScaled": "Delete"}, ["StatefulSet"], ["Pod"], id="delete-delete"),
])
async def test_claim_retention_owner_references(retention, in_range_refs, scaled_refs):
    client, events, ctl = setup()
    client.seed(STATEFULSETS, statefulset(replicas=2, retention=retention))
    await converge(client, ctl)

    def refs(name):
        c = client.stored(PERSISTENTVOLUMECLAIMS, name, "default")
        return [r["kind"] for r in c["metadata"].get("ownerReferences") or []]

    assert refs("www-web-0") == in_range_refs and refs("www-web-1") == in_range_refs
    for r in client.stored(PERSISTENTVOLUMECLAIMS, "www-web-0", "default")["metadata"].get("ownerReferences") or []:
        assert r["controller"] is True and r["blockOwnerDeletion"] is True
    # hold web-1 in Terminating to see its claim's refs once it is condemned
    client.stored(PODS, "web-1", "default")["metadata"]["finalizers"] = ["test/hold"]
    s = sts_of(client)
    s["spec"]["replicas"] = 1
    await client.update(STATEFULSETS, copy.deepcopy(s))
    await settle(ctl)
    assert refs("www-web-1") == scaled_refs
    assert refs("www-web-0") == in_range_refs
    if scaled_refs == ["Pod"]:
        ref = client.stored(PERSISTENTVOLUMECLAIMS, "www-web-1", "default")["metadata"]["ownerReferences"][0]
        assert ref["uid"] == client.stored(PODS, "web-1", "default")["metadata"]["uid"]


async def test_controller_revision_created_with_hash_labels_and_data():
    client, events, ctl = setup()
    s = client.seed(STATEFULSETS, statefulset(replicas=1, claims=False))
    await settle(ctl)
    revs = client.all(CONTROLLERREVISIONS)
    assert len(revs) == 1
    rev = revs[0]
    h = rev["metadata"]["labels"][su.REVISION_LABEL]
    assert rev["metadata"]["name"] == f"web-{h}"
    assert rev["metadata"]["labels"] == {"app": "nginx", su.REVISION_LABEL: h}
    assert rev["revision"] == 1
    assert rev["data"]["spec"]["template"]["$patch"] == "replace"
    assert rev["data"]["spec"]["template"]["spec"] == s["spec"]["template"]["spec"]
    assert rev["metadata"]["ownerReferences"][0]["uid"] == s["metadata"]["uid"]
    st = sts_of(client)["status"]
    assert st["currentRevision"] == st["updateRevision"] == rev["metadata"]["name"]
    assert st["collisionCount"] == 0 and st["observedGeneration"] == 1


def test_revision_hash_is_fnv32_of_the_data_and_collision_count():
    data = su.revision_data(statefulset())
    raw = su.go_json(data)
    assert raw.startswith(b'{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,')
    assert su.hash_revision(data, 0) == su.safe_encode_string(str(su.fnv32(raw + b"0")))
    assert su.hash_revision(data, 0) != su.hash_revision(data, 1)
    assert su.fnv32(b"") == 0x811C9DC5 and su.fnv32(b"a") == 0x050C5D7E   # Go hash/fnv New32


async def image_update(client, ctl, image, **strategy):
    s = sts_of(client)
    s["spec"]["template"]["spec"]["containers"][0]["image"] = image
    if strategy:
        s["spec"]["updateStrategy"] = strategy
    await client.update(STATEFULSETS, copy.deepcopy(s))


async def test_rolling_update_with_partition_then_complete():
    client, events, ctl = setup()
    client.seed(STATEFULSETS, statefulset(replicas=3, claims=False))
    await converge(client, ctl)
    first = sts_of(client)["status"]["currentRevision"]
    await image_update(client, ctl, "nginx:1.26", type="RollingUpdate", rollingUpdate={"partition": 2})
    await converge(client, ctl)
    st = sts_of(client)["status"]
    assert st["currentRevision"] == first and st["updateRevision"] != first
    assert (st["currentReplicas"], st["updatedReplicas"]) == (2, 1)
    images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in client.all(PODS)}
    assert images == {"web-0": "nginx:1.25", "web-1": "nginx:1.25", "web-2": "nginx:1.26"}
    s = sts_of(client)
    s["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 0
    await client.update(STATEFULSETS, copy.deepcopy(s))
    await converge(client, ctl)
    assert [a.name for a in client.actions("delete", "pods")] == ["web-2", "web-1", "web-0"]
    st = sts_of(client)["status"]
    assert st["currentRevision"] == st["updateRevision"]
    assert (st["replicas"], st["currentReplicas"], st["updatedReplicas"], st["readyReplicas"]) == (3, 3, 3, 3)
    assert sorted(r["revision"] for r in client.all(CONTROLLERREVISIONS)) == [1, 2]


async def test_rollback_renumbers_the_equal_revision():
    client, events, ctl = setup()
    client.seed(STATEFULSETS, statefulset(replicas=1, claims=False))
    await converge(client, ctl)
    first = sts_of(client)["status"]["currentRevision"]
    await image_update(client, ctl, "nginx:1.26")
    await converge(client, ctl)
    await image_update(client, ctl, "nginx:1.25")
    await converge(client, ctl)
    revs = {r["metadata"]["name"]: r["revision"] for r in client.all(CONTROLLERREVISIONS)}
    assert len(revs) == 2 and revs[first] == 3
    assert sts_of(client)["status"]["updateRevision"] == first


async def test_rolling_update_with_max_unavailable_deletes_several():
    client, events, ctl = setup()
    client.seed(STATEFULSETS, statefulset(replicas=4, claims=False, policy="Parallel"))
    await converge(client, ctl)
    await image_update(client, ctl, "nginx:1.26", type="RollingUpdate",
                       rollingUpdate={"partition": 0, "maxUnavailable": 2})
    await settle(ctl)
    first = [a.name for a in client.actions("delete", "pods")]
    assert first == ["web-3", "web-2"]
    await converge(client, ctl)
    assert sorted(a.name for a in client.actions("delete", "pods")) == ["web-0", "web-1", "web-2", "web-3"]
    st = sts_of(client)["status"]
    assert st["currentRevision"] == st["updateRevision"] and st["updatedReplicas"] == 4


async def test_on_delete_changes_pods_only_when_deleted():
    client, events, ctl = setup()
    client.seed(STATEFULSETS, statefulset(replicas=2, claims=False, strategy={"type": "OnDelete"}))
    await converge(client, ctl)
    await image_update(client, ctl, "nginx:1.26")
    await converge(client, ctl)
    assert client.actions("delete", "pods") == []
    st = sts_of(client)["status"]
    assert "updatedReplicas" not in st, "a zero counter is omitted, as apps/v1 encodes it"
    assert st["currentReplicas"] == 2 and st["currentRevision"] != st["updateRevision"]
    await client.delete(PODS, "web-1", "default")
    await converge(client, ctl)
    assert client.stored(PODS, "web-1", "default")["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert client.stored(PODS, "web-0", "default")["spec"]["containers"][0]["image"] == "nginx:1.25"
    st = sts_of(client)["status"]
    assert (st["currentReplicas"], st["updatedReplicas"]) == (1, 1)


async def test_revision_history_limit_truncates_unused_revisions():
    client, events, ctl = setup()
    obj = statefulset(replicas=1, claims=False)
    obj["spec"]["revisionHistoryLimit"] = 1
    client.seed(STATEFULSETS, obj)
    await converge(client, ctl)
    for image in ("nginx:1.26", "nginx:1.27", "nginx:1.28"):
        await image_update(client, ctl, image)
        await converge(client, ctl)
    assert sorted(r["revision"] for r in client.all(CONTROLLERREVISIONS)) == [3, 4]


async def test_orphan_pod_with_matching_name_is_adopted():
    client, events, ctl = setup()
    s = client.seed(STATEFULSETS, statefulset(replicas=1, claims=False))
    client.seed(PODS, {"metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "nginx"}},
                       "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]},
                       "status": {"phase": "Pending"}})
    await settle(ctl)
    pod = client.stored(PODS, "web-0", "default")
    assert pod["metadata"]["ownerReferences"][0]["uid"] == s["metadata"]["uid"]
    assert client.actions("create", "pods") == []


@pytest.mark.parametrize("mount, valid", [
    pytest.param("www", True, id="mount-of-a-claim-template"),
    pytest.param("nope", False, id="mount-of-nothing"),
])
def test_validation_counts_claim_templates_as_volumes(mount, valid):
    from controlplane.api.defaults import apply_defaults
    from controlplane.api.validation import validate
    obj = statefulset()
    obj["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][0]["name"] = mount
    apply_defaults("StatefulSet", obj)
    causes = validate("StatefulSet", obj)
    if valid:
        assert causes == []
    else:
        assert [c["field"] for c in causes] == ["spec.template.spec.containers[0].volumeMounts[0].name"]
        assert "volumes" not in obj["spec"]["template"]["spec"], "the check does not change the object"


async def test_lost_identity_label_is_restored_with_an_update_event():
    client, events, ctl = setup()
    client.seed(STATEFULSETS, statefulset(replicas=1, claims=False))
    await converge(client, ctl)
    pod = copy.deepcopy(client.stored(PODS, "web-0", "default"))
    del pod["metadata"]["labels"][su.POD_NAME_LABEL]
    await client.update(PODS, pod)
    await settle(ctl)
    assert client.stored(PODS, "web-0", "default")["metadata"]["labels"][su.POD_NAME_LABEL] == "web-0"
    assert ("SuccessfulUpdate", "update Pod web-0 in StatefulSet web successful") in \
        [(e.reason, e.message) for e in events]


async def test_revision_name_collision_bumps_collision_count():
    client, events, ctl = setup()
    obj = statefulset(replicas=1, claims=False)
    taken = su.revision_name("web", su.hash_revision(su.revision_data(obj), 0))
    client.seed(CONTROLLERREVISIONS, {"metadata": {"name": taken, "namespace": "default", "labels": {"other": "x"}},
                                      "data": {"something": "else"}, "revision": 1})
    client.seed(STATEFULSETS, obj)
    await settle(ctl)
    st = sts_of(client)["status"]
    assert st["collisionCount"] == 1
    assert st["updateRevision"] == su.revision_name("web", su.hash_revision(su.revision_data(obj), 1))
    assert client.stored(CONTROLLERREVISIONS, st["updateRevision"], "default")["revision"] == 1
