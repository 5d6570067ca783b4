"""The PV controller (``persistentvolume-binder``) on the fake API client: the matching table
(capacity, access modes, class, volumeMode, selector, claimRef and volumeName pre-binding),
binding with Kubernetes' annotations and phases, simulated provisioning for Immediate and
WaitForFirstConsumer classes, reclaim policies, the default StorageClass, and the
pvc-protection / pv-protection controllers."""

from __future__ import annotations

import copy

import pytest

from components.controller_manager.testing import fake_context, settle
from components.controller_manager.volume import defaultclass, provisioner
from components.controller_manager.volume.persistentvolume import (
    PVCS,
    PVS,
    STORAGECLASSES,
    PersistentVolumeController,
)
from components.controller_manager.volume.protection import PVCProtectionController, PVProtectionController
from controlplane import volume as vol
from controlplane.api.resources import NODES, PODS


def pv(name, size="10Gi", modes=("ReadWriteOnce",), cls="manual", phase="Available", labels=None, **spec):
    obj = {"apiVersion": "v1", "kind": "PersistentVolume",
           "metadata": {"name": name, **({"labels": labels} if labels else {})},
           "spec": {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": cls,
                    "persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem",
                    "hostPath": {"path": f"/mnt/{name}"}, **spec},
           "status": {"phase": phase}}
    return obj


def pvc(name, size="3Gi", modes=("ReadWriteOnce",), cls="manual", ns="default", uid=None, **spec):
    obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": name, "namespace": ns, "uid": uid or f"uid-{name}"},
           "spec": {"accessModes": list(modes), "resources": {"requests": {"storage": size}}, **spec},
           "status": {"phase": "Pending"}}
    if cls is not None:
        obj["spec"]["storageClassName"] = cls
    return obj


def sc(name, provisioner_name="example.com/disk", mode="Immediate", **extra):
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner_name, "reclaimPolicy": "Delete", "volumeBindingMode": mode, **extra}


def node(name, **labels):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}}}


def setup(*objs):
    client, ctx, events = fake_context()
    # a default class exists, so the controller's start-up does not add one
    for o in objs:
        res = {"PersistentVolume": PVS, "PersistentVolumeClaim": PVCS, "StorageClass": STORAGECLASSES,
               "Node": NODES, "Pod": PODS}[o["kind"]]
        client.seed(res, o)
    ctrl = PersistentVolumeController(ctx)
    ctrl.resync()
    return client, events, ctrl


def reasons(events, name=None):
    return [(e.reason, e.message) for e in events if name is None or e.name == name]


# ----------------------------------------------------------------------------- matching

ZONE_A = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}]}}


@pytest.mark.parametrize("claim, volumes, node_obj, want", [
    (pvc("c"), [pv("big", "10Gi"), pv("small", "5Gi"), pv("tiny", "1Gi")], None, "small"),
    (pvc("c", "5Gi"), [pv("exact", "5Gi")], None, "exact"),
    (pvc("c", modes=("ReadWriteMany",)), [pv("rwo")], None, None),
    (pvc("c", modes=("ReadWriteOnce",)), [pv("both", modes=("ReadWriteOnce", "ReadOnlyMany"))], None, "both"),
    (pvc("c", cls="fast"), [pv("manual")], None, None),
    (pvc("c", cls=""), [pv("none", cls=""), pv("manual")], None, "none"),
    (pvc("c", volumeMode="Block"), [pv("fs")], None, None),
    (pvc("c", volumeMode="Block"), [pv("blk", volumeMode="Block")], None, "blk"),
    (pvc("c", selector={"matchLabels": {"tier": "db"}}), [pv("web", labels={"tier": "web"}),
                                                         pv("db", labels={"tier": "db"})], None, "db"),
    (pvc("c"), [pv("pending", phase="Pending"), pv("released", phase="Released")], None, None),
    (pvc("c"), [pv("other", claimRef={"namespace": "default", "name": "x"}), pv("free", "20Gi")], None, "free"),
    (pvc("c"), [pv("free", "5Gi"), pv("mine", "20Gi", phase="Pending",
                                      claimRef={"namespace": "default", "name": "c"})], None, "mine"),
    (pvc("c"), [pv("stale", claimRef={"namespace": "default", "name": "c", "uid": "old"})], None, None),
    (pvc("c", "20Gi"), [pv("mine", "10Gi", claimRef={"namespace": "default", "name": "c"})], None, None),
    (pvc("c"), [pv("za", nodeAffinity=ZONE_A)], node("n1", **{"topology.kubernetes.io/zone": "b"}), None),
    (pvc("c"), [pv("za", nodeAffinity=ZONE_A)], node("n1", **{"topology.kubernetes.io/zone": "a"}), "za"),
], ids=["smallest that fits", "exact size", "access mode missing", "access modes superset", "class differs",
        "no class matches no class", "volumeMode differs", "block volume", "label selector",
        "not Available", "pre-bound elsewhere skipped", "claimRef pre-binding wins", "claimRef of an older uid",
        "pre-bound but too small", "node affinity conflict", "node affinity fits"])
def test_find_matching_volume(claim, volumes, node_obj, want):
    got = vol.find_matching_volume(claim, volumes, node_obj)
    assert (got["metadata"]["name"] if got else None) == want


def test_delay_binding_only_takes_a_prebound_volume():
    claim = pvc("c")
    assert vol.find_matching_volume(claim, [pv("free")], delay_binding=True) is None
    pre = pv("pre", claimRef={"namespace": "default", "name": "c"})
    assert vol.find_matching_volume(claim, [pv("free"), pre], delay_binding=True)["metadata"]["name"] == "pre"


# ----------------------------------------------------------------------------- binding

async def test_binds_claim_to_smallest_volume_with_kubernetes_annotations():
    client, events, ctrl = setup(pv("task-pv-volume", "10Gi"), pv("huge", "100Gi"), pvc("task-pv-claim"))
    await settle(ctrl)
    c = client.stored(PVCS, "task-pv-claim", "default")
    v = client.stored(PVS, "task-pv-volume")
    assert c["spec"]["volumeName"] == "task-pv-volume"
    assert c["metadata"]["annotations"] == {vol.ANN_BIND_COMPLETED: "yes", vol.ANN_BOUND_BY_CONTROLLER: "yes"}
    assert c["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}}
    assert v["spec"]["claimRef"]["name"] == "task-pv-claim" and v["spec"]["claimRef"]["uid"] == "uid-task-pv-claim"
    assert v["spec"]["claimRef"]["kind"] == "PersistentVolumeClaim"
    assert v["metadata"]["annotations"] == {vol.ANN_BOUND_BY_CONTROLLER: "yes"}
    assert v["status"]["phase"] == "Bound"
    assert client.stored(PVS, "huge")["status"]["phase"] == "Available"


async def test_volume_name_prebinding_binds_without_bound_by_controller_on_claim():
    client, events, ctrl = setup(pv("small", "5Gi"), pv("wanted", "50Gi"), pvc("c", volumeName="wanted"))
    await settle(ctrl)
    c = client.stored(PVCS, "c", "default")
    assert c["spec"]["volumeName"] == "wanted" and c["status"]["phase"] == "Bound"
    assert vol.ANN_BOUND_BY_CONTROLLER not in c["metadata"]["annotations"]
    assert client.stored(PVS, "wanted")["metadata"]["annotations"][vol.ANN_BOUND_BY_CONTROLLER] == "yes"


async def test_claim_ref_prebinding_by_a_user_keeps_volume_unannotated():
    client, events, ctrl = setup(pv("v", claimRef={"namespace": "default", "name": "c"}, phase="Pending"), pvc("c"))
    await settle(ctrl)
    v = client.stored(PVS, "v")
    assert v["spec"]["claimRef"]["uid"] == "uid-c" and v["status"]["phase"] == "Bound"
    assert vol.ANN_BOUND_BY_CONTROLLER not in (v["metadata"].get("annotations") or {})


async def test_requested_volume_too_small_is_a_volume_mismatch():
    client, events, ctrl = setup(pv("v", "1Gi"), pvc("c", volumeName="v"))
    await settle(ctrl)
    assert client.stored(PVCS, "c", "default")["status"]["phase"] == "Pending"
    assert ("VolumeMismatch", 'Cannot bind to requested volume "v": requested PV is too small') in reasons(events)


async def test_no_volume_and_no_class_is_failed_binding():
    client, events, ctrl = setup(pvc("c", cls=""))
    await settle(ctrl)
    assert reasons(events, "c") == [("FailedBinding", "no persistent volumes available for this claim and no "
                                                      "storage class is set")]
    assert client.stored(PVCS, "c", "default")["status"] == {"phase": "Pending"}


async def test_claim_binds_once_a_volume_becomes_available():
    client, events, ctrl = setup(sc("manual", "kubernetes.io/no-provisioner"), pvc("c"))
    await settle(ctrl)
    assert client.stored(PVCS, "c", "default")["status"]["phase"] == "Pending"
    fresh = pv("late")
    fresh["status"] = {"phase": "Pending"}
    await client.create(PVS, fresh)
    await settle(ctrl)
    assert client.stored(PVS, "late")["status"]["phase"] == "Bound"
    assert client.stored(PVCS, "c", "default")["spec"]["volumeName"] == "late"


# ----------------------------------------------------------------------------- provisioning

async def test_immediate_class_provisions_at_once():
    client, events, ctrl = setup(sc("fast", mountOptions=["noatime"], parameters={"type": "ssd"}),
                                 pvc("c", "2Gi", cls="fast"))
    await settle(ctrl)
    c = client.stored(PVCS, "c", "default")
    name = "pvc-uid-c"
    v = client.stored(PVS, name)
    assert c["spec"]["volumeName"] == name and c["status"]["phase"] == "Bound"
    assert c["metadata"]["annotations"][vol.ANN_STORAGE_PROVISIONER] == "example.com/disk"
    assert c["metadata"]["annotations"][vol.ANN_BETA_STORAGE_PROVISIONER] == "example.com/disk"
    assert v["metadata"]["annotations"] == {vol.ANN_DYNAMICALLY_PROVISIONED: "example.com/disk"}
    assert v["spec"]["capacity"] == {"storage": "2Gi"} and v["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
    assert v["spec"]["mountOptions"] == ["noatime"] and v["spec"]["storageClassName"] == "fast"
    assert v["spec"]["csi"]["driver"] == "example.com/disk" and v["spec"]["csi"]["volumeAttributes"]["type"] == "ssd"
    assert v["status"]["phase"] == "Bound" and "nodeAffinity" not in v["spec"]
    got = reasons(events, "c")
    assert got[0] == ("ExternalProvisioning", "Waiting for a volume to be created either by the external "
                      "provisioner 'example.com/disk' or manually by the system administrator. If volume creation "
                      "is delayed, please verify that the provisioner is running and correctly registered.")
    assert ("Provisioning", 'External provisioner is provisioning volume for claim "default/c"') in got
    assert ("ProvisioningSucceeded", f"Successfully provisioned volume {name}") in got
    assert [e.component for e in events if e.reason == "ProvisioningSucceeded"] == ["example.com/disk"]


async def test_wait_for_first_consumer_waits_for_the_selected_node():
    client, events, ctrl = setup(sc("standard", provisioner.HOSTPATH_PROVISIONER, "WaitForFirstConsumer"),
                                 node("node-1"), pvc("www", cls="standard"))
    await settle(ctrl)
    assert client.all(PVS) == []
    assert reasons(events, "www") == [("WaitForFirstConsumer",
                                       "waiting for first consumer to be created before binding")]
    c = copy.deepcopy(client.stored(PVCS, "www", "default"))
    c["metadata"].setdefault("annotations", {})[vol.ANN_SELECTED_NODE] = "node-1"
    await client.update(PVCS, c)
    await settle(ctrl)
    v = client.stored(PVS, "pvc-uid-www")
    assert v["spec"]["hostPath"]["type"] == "DirectoryOrCreate"
    assert v["spec"]["nodeAffinity"] == {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}]}]}}
    assert client.stored(PVCS, "www", "default")["status"]["phase"] == "Bound"


def test_allowed_topologies_pin_the_volume_to_the_selected_nodes_zone():
    cls = sc("zonal", allowedTopologies=[{"matchLabelExpressions": [
        {"key": "topology.kubernetes.io/zone", "values": ["a", "b"]}]}])
    got = provisioner.node_affinity(cls, node("n1", **{"topology.kubernetes.io/zone": "b"}))
    assert got == {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b"]}]}]}}


async def test_missing_class_is_provisioning_failed():
    client, events, ctrl = setup(pvc("c", cls="gold"))
    await settle(ctrl)
    assert reasons(events, "c") == [("ProvisioningFailed", 'storageclass.storage.k8s.io "gold" not found')]


# ----------------------------------------------------------------------------- release and reclaim

async def bound_pair(policy="Retain", provisioned=False):
    v = pv("v")
    v["spec"]["persistentVolumeReclaimPolicy"] = policy
    if provisioned:
        v["metadata"]["annotations"] = {vol.ANN_DYNAMICALLY_PROVISIONED: "example.com/disk"}
    client, events, ctrl = setup(v, pvc("c"))
    await settle(ctrl)
    assert client.stored(PVS, "v")["status"]["phase"] == "Bound"
    await client.delete(PVCS, "c", "default")
    await settle(ctrl)
    return client, events


@pytest.mark.parametrize("policy, provisioned, want", [
    ("Retain", False, "Released"),
    ("Delete", True, None),
    ("Delete", False, "Failed"),
], ids=["retain keeps a released volume", "delete removes a provisioned volume", "delete without a deleter fails"])
async def test_claim_deleted_reclaims_per_policy(policy, provisioned, want):
    client, events = await bound_pair(policy, provisioned)
    got = [o for o in client.all(PVS)]
    assert (got[0]["status"]["phase"] if got else None) == want
    if want == "Failed":
        assert ("VolumeFailedDelete", 'error getting deleter volume plugin for volume "v": no deletable volume '
                "plugin matched") in reasons(events, "v")


async def test_bound_claim_whose_volume_is_gone_is_lost():
    client, events, ctrl = setup(pv("v"), pvc("c"))
    await settle(ctrl)
    await client.delete(PVS, "v")
    await settle(ctrl)
    assert client.stored(PVCS, "c", "default")["status"] == {"phase": "Lost"}
    assert ("ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!") in reasons(events)


# ----------------------------------------------------------------------------- default class

@pytest.mark.parametrize("existing, created", [
    ([], True),
    ([sc("mine", annotations=None) | {"metadata": {"name": "mine", "annotations": {
        "storageclass.kubernetes.io/is-default-class": "true"}}}], False),
    ([sc("standard")], False),
], ids=["none", "another default", "standard exists"])
async def test_default_class_written_once_at_start(existing, created):
    client, ctx, events = fake_context()
    assert await defaultclass.ensure_default_class(client, existing) is created
    if created:
        got = client.stored(STORAGECLASSES, "standard")
        assert got["metadata"]["annotations"] == {"storageclass.kubernetes.io/is-default-class": "true"}
        assert got["volumeBindingMode"] == "WaitForFirstConsumer"
        assert got["provisioner"] == provisioner.HOSTPATH_PROVISIONER


# ----------------------------------------------------------------------------- protection

def pod(name, claim, node_name="node-1", phase="Running"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "x"}],
                     "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]},
            "status": {"phase": phase}}


async def test_pvc_protection_adds_finalizer_and_removes_it_when_no_pod_uses_the_claim():
    client, ctx, events = fake_context()
    client.seed(PVCS, pvc("c"))
    client.seed(PODS, pod("user", "c"))
    ctrl = PVCProtectionController(ctx)
    ctrl.enqueue("default/c")
    await settle(ctrl)
    assert client.stored(PVCS, "c", "default")["metadata"]["finalizers"] == [vol.PVC_PROTECTION_FINALIZER]
    await client.delete(PVCS, "c", "default")
    await settle(ctrl)
    assert client.stored(PVCS, "c", "default")["metadata"]["deletionTimestamp"], "a running pod uses it"
    await client.delete(PODS, "user", "default")
    await settle(ctrl)
    assert client.all(PVCS) == []


async def test_pvc_protection_ignores_unscheduled_pods():
    client, ctx, events = fake_context()
    c = pvc("c")
    c["metadata"]["finalizers"] = [vol.PVC_PROTECTION_FINALIZER]
    client.seed(PVCS, c)
    client.seed(PODS, pod("waiting", "c", node_name=""))
    ctrl = PVCProtectionController(ctx)
    await client.delete(PVCS, "c", "default")
    await settle(ctrl)
    assert client.all(PVCS) == []


async def test_pv_protection_holds_a_bound_volume():
    client, ctx, events = fake_context()
    v = pv("v", phase="Bound")
    client.seed(PVS, v)
    ctrl = PVProtectionController(ctx)
    ctrl.enqueue("v")
    await settle(ctrl)
    assert client.stored(PVS, "v")["metadata"]["finalizers"] == [vol.PV_PROTECTION_FINALIZER]
    await client.delete(PVS, "v")
    await settle(ctrl)
    assert client.stored(PVS, "v")["metadata"]["deletionTimestamp"]
    cur = copy.deepcopy(client.stored(PVS, "v"))
    cur["status"]["phase"] = "Released"
    await client.update_status(PVS, cur)
    await settle(ctrl)
    assert client.all(PVS) == []
